//! Item names built in place: a fixed prefix, a decimal number and a NUL, in a buffer that is
//! reused for every operation, so that the hot loops allocate nothing.

use std::ffi::CStr;

/// Longest prefix plus number plus suffix a [`NameBuf`] holds.
const CAPACITY: usize = 96;

/// `PREFIX<number>[SUFFIX]\0` in a reusable buffer.
#[derive(Debug, Clone)]
pub struct NameBuf {
    buf: [u8; CAPACITY],
    prefix_len: usize,
}

impl NameBuf {
    /// A buffer for names starting with `prefix`, which must be short (under 64 bytes) and
    /// hold no NUL; a longer prefix is cut.
    pub fn new(prefix: &str) -> Self {
        let mut buf = [0u8; CAPACITY];
        let bytes: Vec<u8> = prefix.bytes().filter(|&b| b != 0).take(64).collect();
        buf[..bytes.len()].copy_from_slice(&bytes);
        Self { buf, prefix_len: bytes.len() }
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
        // The prefix holds no NUL (filtered in `new`), digits and suffix none either; the
        // fallback is never taken.
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
}
