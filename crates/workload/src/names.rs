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
    /// With [`NameBuf::mdtest`]: each name is formatted whole by the C library's snprintf into
    /// this mdtest-sized buffer, from the directory and the prefix (both NUL-terminated).
    printf: Option<Printf>,
}

/// mdtest's way of naming an item: `sprintf(curr_item, "%s/file.%s%llu", path, name, n)`,
/// here `snprintf(out, 4096, "%s%s%llu%s", "path/", "file.name", n, suffix)`.
#[derive(Debug, Clone)]
struct Printf {
    dir: Vec<u8>,
    base: Vec<u8>,
    out: Vec<u8>,
}

/// mdtest's `MAX_PATHLEN`, the size of its `curr_item`.
const MDTEST_PATHLEN: usize = 4096;

impl NameBuf {
    /// A buffer for names starting with `prefix`, which must be short (under 64 bytes) and
    /// hold no NUL; a longer prefix is cut.
    pub fn new(prefix: &str) -> Self {
        let base: Vec<u8> = prefix.bytes().filter(|&b| b != 0).take(64).collect();
        let mut buf = Vec::with_capacity(base.len() + TAIL);
        buf.extend_from_slice(&base);
        buf.resize(base.len() + TAIL, 0);
        Self { prefix_len: base.len(), base, buf, printf: None }
    }

    /// As [`NameBuf::new`], but each name is made as mdtest makes it for its path-based calls:
    /// one snprintf of the whole path per item (mdtest's sprintf, whose cost is part of its
    /// per-item time: with the name built digit by digit, fsarena's removal rates were
    /// 1.13-1.19x mdtest's on tmpfs).
    pub fn mdtest(prefix: &str) -> Self {
        let mut b = Self::new(prefix);
        let mut base = b.base.clone();
        base.push(0);
        b.printf = Some(Printf { dir: vec![0], base, out: vec![0; MDTEST_PATHLEN] });
        b
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
        if let Some(p) = &mut self.printf {
            // `dir/`, or nothing: one format, "%s%s%llu%s", serves both.
            p.dir.clear();
            p.dir.extend_from_slice(dir);
            if !dir.is_empty() {
                p.dir.push(b'/');
            }
            p.dir.push(0);
        }
    }

    /// The name for `n`.
    #[inline]
    pub fn name(&mut self, n: u64) -> &CStr {
        self.name_with(n, b"")
    }

    /// The name for `n` followed by `suffix` (at most 8 bytes).
    #[inline]
    pub fn name_with(&mut self, n: u64, suffix: &[u8]) -> &CStr {
        if self.printf.is_some() {
            return self.formatted(n, suffix);
        }
        self.built(n, suffix)
    }

    /// The name made by snprintf (see [`NameBuf::mdtest`]); one longer than mdtest's buffer
    /// is built as usual instead (the kernel refuses such a path anyway).
    fn formatted(&mut self, n: u64, suffix: &[u8]) -> &CStr {
        let mut tail = [0u8; 9];
        let cut = suffix.len().min(8);
        tail[..cut].copy_from_slice(&suffix[..cut]);
        let Some(p) = &mut self.printf else { return self.built(n, suffix) };
        // SAFETY: `out` is writable for its length and snprintf writes at most that many bytes
        // with the NUL; `dir`, `base` and `tail` are NUL-terminated (pushed, pushed, 9 bytes of
        // which at most 8 are copied); %llu takes the c_ulonglong.
        let written = unsafe {
            libc::snprintf(
                p.out.as_mut_ptr().cast(),
                p.out.len(),
                c"%s%s%llu%s".as_ptr(),
                p.dir.as_ptr(),
                p.base.as_ptr(),
                n as libc::c_ulonglong,
                tail.as_ptr(),
            )
        };
        match usize::try_from(written) {
            Ok(len) if len < MDTEST_PATHLEN => {
                let Some(p) = &self.printf else { return c"" };
                CStr::from_bytes_until_nul(&p.out[..=len]).unwrap_or_default()
            }
            _ => self.built(n, suffix),
        }
    }

    /// The name built in place: the number's digits after the directory and prefix.
    fn built(&mut self, n: u64, suffix: &[u8]) -> &CStr {
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

    #[test]
    fn mdtests_formatted_names_are_the_built_ones() {
        let (mut built, mut printed) = (NameBuf::new("file.mdtest.2."), NameBuf::mdtest("file.mdtest.2."));
        for dir in [c"", c"/mnt/t/test-dir.0-0/mdtest_tree.2.0", c"mdtest_tree.0/mdtest_tree.2"] {
            built.set_dir(dir);
            printed.set_dir(dir);
            for (n, suffix) in [(0, &b""[..]), (9, b""), (1234567, b"-XX"), (u64::MAX, b"-XX")] {
                let want = built.name_with(n, suffix).to_owned();
                assert_eq!(printed.name_with(n, suffix), want.as_c_str());
            }
        }
        // A directory past mdtest's buffer: the name is still whole, built as usual.
        let long = std::ffi::CString::new(vec![b'd'; MDTEST_PATHLEN]).unwrap();
        printed.set_dir(&long);
        assert_eq!(printed.name(5).to_bytes().len(), MDTEST_PATHLEN + 1 + 14 + 1);
    }
}
