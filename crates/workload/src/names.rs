//! Item names built in place: an optional directory path, a fixed prefix, a decimal number
//! and a NUL, in a buffer that is reused for every operation, so that the hot loops allocate
//! nothing.

use std::ffi::CStr;

/// Room kept after the prefix: 20 digits, an 8-byte suffix and the NUL.
const TAIL: usize = 32;

/// `[DIR/]PREFIX<number>[SUFFIX]\0` in a reusable buffer.
#[derive(Debug, Clone)]
pub struct NameBuf {
    /// The item prefix (`file.mdtest.3.`), without a directory.
    base: Vec<u8>,
    /// The directory part, the prefix, then the number being built.
    buf: Vec<u8>,
    /// Bytes of `buf` before the number.
    prefix_len: usize,
}

impl NameBuf {
    /// A buffer for names starting with `prefix`, which must be short (under 64 bytes) and
    /// hold no NUL; a longer prefix is cut.
    pub fn new(prefix: &str) -> Self {
        let base: Vec<u8> = prefix.bytes().filter(|&b| b != 0).take(64).collect();
        let mut buf = Vec::with_capacity(base.len() + TAIL);
        buf.extend_from_slice(&base);
        buf.resize(base.len() + TAIL, 0);
        Self { prefix_len: base.len(), base, buf }
    }

    /// Puts `dir/` in front of every next name (mdtest's path-based calls resolve the item's
    /// whole path each time); an empty `dir` puts nothing. Allocates
    /// only when the directory is longer than any before.
    pub fn set_dir(&mut self, dir: &CStr) {
        let dir = dir.to_bytes();
        self.buf.clear();
        if !dir.is_empty() {
            self.buf.extend_from_slice(dir);
            self.buf.push(b'/');
        }
        self.buf.extend_from_slice(&self.base);
        self.prefix_len = self.buf.len();
        self.buf.resize(self.prefix_len + TAIL, 0);
    }

    /// The name for `n`.
    #[inline]
    pub fn name(&mut self, n: u64) -> &CStr {
        self.name_with(n, b"")
    }

    /// The name for `n` followed by `suffix` (at most 8 bytes).
    #[inline]
    pub fn name_with(&mut self, n: u64, suffix: &[u8]) -> &CStr {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut v = n;
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let suffix = &suffix[..suffix.len().min(8)];
        let mut end = self.prefix_len;
        let number = &digits[i..];
        self.buf[end..end + number.len()].copy_from_slice(number);
        end += number.len();
        self.buf[end..end + suffix.len()].copy_from_slice(suffix);
        end += suffix.len();
        self.buf[end] = 0;
        // The prefix and directory hold no NUL (filtered in `new`; a CStr has none), digits
        // and suffix none either; the fallback is never taken.
        CStr::from_bytes_until_nul(&self.buf[..=end]).unwrap_or_default()
    }

    /// The name for `n` as a string, for error messages.
    pub fn display(&mut self, n: u64) -> String {
        self.name(n).to_string_lossy().into_owned()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefix_number_suffix() {
        let mut b = NameBuf::new("file.mdtest.3.");
        assert_eq!(b.name(0).to_str().unwrap(), "file.mdtest.3.0");
        assert_eq!(b.name(1234567).to_str().unwrap(), "file.mdtest.3.1234567");
        assert_eq!(b.name(7).to_str().unwrap(), "file.mdtest.3.7");
        assert_eq!(b.name_with(12, b"-XX").to_str().unwrap(), "file.mdtest.3.12-XX");
        assert_eq!(b.name(u64::MAX).to_str().unwrap(), format!("file.mdtest.3.{}", u64::MAX));
        assert_eq!(b.display(5), "file.mdtest.3.5");
    }

    #[test]
    fn a_directory_goes_in_front_until_it_is_cleared() {
        let mut b = NameBuf::new("dir.mdtest.0.");
        b.set_dir(c"mdtest_tree.0/mdtest_tree.2/mdtest_tree.6");
        assert_eq!(b.name(61).to_str().unwrap(), "mdtest_tree.0/mdtest_tree.2/mdtest_tree.6/dir.mdtest.0.61");
        assert_eq!(b.name_with(u64::MAX, b"-XX").to_str().unwrap().len(), 42 + 13 + 20 + 3);
        b.set_dir(c"mdtest_tree.0");
        assert_eq!(b.name(3).to_str().unwrap(), "mdtest_tree.0/dir.mdtest.0.3");
        b.set_dir(c"");
        assert_eq!(b.name(3).to_str().unwrap(), "dir.mdtest.0.3");
    }
}
