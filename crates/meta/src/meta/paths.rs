//! The whole path of one item for the stat and read phases with `calls=path`, made per item as
//! mdtest makes it (`mdtest_stat`, `mdtest_read`), so that the phase's rate holds what mdtest's
//! holds: both of its path-sized buffers cleared, the item's name formatted, one directory
//! level put in front at a time from the item's directory up to the tree's first level, then
//! the tree's own path in front of all, each step with the C library's sprintf and strcpy as
//! mdtest calls them. mdtest's stat of a cached tmpfs file costs about a microsecond, of which
//! this per-item work is a third: leaving it out made fsarena's stat rate twice mdtest's
//! (issue 30), and formatting with Rust's `write!` in its place left it 1.17-1.21x mdtest's on
//! an AMD EPYC VM (glibc's sprintf costs more a call). Creation and removal build their path with one format per
//! item in mdtest, as [`fsarena_workload::names::NameBuf`] does.

use std::ffi::CStr;

/// mdtest's `MAX_PATHLEN`: the size of each buffer it clears for every item.
const MAX_PATHLEN: usize = 4096;

/// `s` as a C string (cut at an inner NUL, which no name of fsarena's holds).
fn nul_terminated(s: &str) -> Vec<u8> {
    let mut v: Vec<u8> = s.bytes().take_while(|&b| b != 0).collect();
    v.push(0);
    v
}

/// One task's item paths in one tree (see the module's documentation).
#[derive(Debug)]
pub struct ItemPath {
    /// The path being built, NUL-terminated (the buffer is cleared before each).
    item: Vec<u8>,
    /// The second buffer each level is formatted into before it is copied back.
    temp: Vec<u8>,
    /// The tree's first directory, as a whole path (`/mnt/test-dir.0-0/mdtest_tree.0.0`).
    root: Vec<u8>,
    /// The tree's directory base name (`mdtest_tree.0`).
    tree_base: Vec<u8>,
    /// The item name's prefix (`file.mdtest.0.`).
    prefix: Vec<u8>,
    items_per_dir: u64,
    branch: u64,
}

impl ItemPath {
    /// Paths of items named `PREFIX<number>` in the tree whose first directory is `root`
    /// (whole path) and whose directories are named `TREE_BASE.<number>`.
    pub fn new(root: &CStr, tree_base: &str, prefix: &str, items_per_dir: u64, branch: u64) -> Self {
        Self {
            item: vec![0; MAX_PATHLEN],
            temp: vec![0; MAX_PATHLEN],
            root: root.to_bytes_with_nul().to_vec(),
            tree_base: nul_terminated(tree_base),
            prefix: nul_terminated(prefix),
            items_per_dir: items_per_dir.max(1),
            branch: branch.max(1),
        }
    }

    /// The whole path of item `n`; None when it would not fit in mdtest's buffer.
    pub fn build(&mut self, n: u64) -> Option<&CStr> {
        self.item.fill(0);
        self.temp.fill(0);
        // sprintf(item, "file.%s%llu", stat_name, n): the prefix holds "file." and stat_name.
        // SAFETY: `item` is writable for its length and snprintf writes at most that many
        // bytes, the NUL included; `prefix` is NUL-terminated; %llu takes the c_ulonglong.
        let len = unsafe {
            libc::snprintf(
                self.item.as_mut_ptr().cast(),
                self.item.len(),
                c"%s%llu".as_ptr(),
                self.prefix.as_ptr(),
                n as libc::c_ulonglong,
            )
        };
        fits(len, self.item.len())?;
        let mut dir = n / self.items_per_dir;
        if dir > 0 {
            self.in_front(dir)?;
            // Up to the tree's first level; its root is `root`.
            while dir > self.branch {
                dir = (dir - 1) / self.branch;
                self.in_front(dir)?;
            }
        }
        // sprintf(temp, "%s/%s", path, item); strcpy(item, temp).
        // SAFETY: as above; `root` and `item` are NUL-terminated (item was cleared, then
        // written by snprintf within its length), and `temp` does not overlap them.
        let whole = unsafe {
            libc::snprintf(
                self.temp.as_mut_ptr().cast(),
                self.temp.len(),
                c"%s/%s".as_ptr(),
                self.root.as_ptr(),
                self.item.as_ptr(),
            )
        };
        let whole = fits(whole, self.temp.len())?;
        self.copy_back();
        CStr::from_bytes_until_nul(&self.item[..=whole]).ok()
    }

    /// Puts `TREE_BASE.<dir>/` in front of the path: sprintf into the second buffer, then
    /// strcpy back, as mdtest does.
    fn in_front(&mut self, dir: u64) -> Option<()> {
        // SAFETY: as in `build`: bounded writes into `temp`, NUL-terminated `tree_base` and
        // `item`, no overlap.
        let n = unsafe {
            libc::snprintf(
                self.temp.as_mut_ptr().cast(),
                self.temp.len(),
                c"%s.%llu/%s".as_ptr(),
                self.tree_base.as_ptr(),
                dir as libc::c_ulonglong,
                self.item.as_ptr(),
            )
        };
        fits(n, self.temp.len())?;
        self.copy_back();
        Some(())
    }

    /// strcpy(item, temp).
    fn copy_back(&mut self) {
        // SAFETY: `temp` holds a NUL within its length (snprintf's), `item` is as long as
        // `temp`, and the two buffers are distinct.
        unsafe {
            libc::strcpy(self.item.as_mut_ptr().cast(), self.temp.as_ptr().cast());
        }
    }
}

/// snprintf's result as a length that fit in `size` bytes with its NUL, or None (mdtest's
/// sprintf would have run past its buffer).
fn fits(written: libc::c_int, size: usize) -> Option<usize> {
    usize::try_from(written).ok().filter(|&n| n < size)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::meta::shape::Shape;
    use std::ffi::CString;

    #[test]
    fn paths_are_the_trees_own() {
        // -b 2 -z 2 -I 3: 7 directories; item 20 is in directory 6 (depth 2, under 2).
        let shape = Shape::new(2, 2, None, Some(3)).unwrap();
        let tree = shape.paths("mdtest_tree.1");
        let root = CString::new("/mnt/t/test-dir.0-0/mdtest_tree.1.0").unwrap();
        let mut p = ItemPath::new(&root, "mdtest_tree.1", "file.mdtest.1.", 3, 2);
        for n in [0, 2, 3, 20] {
            let want = format!("/mnt/t/test-dir.0-0/{}/file.mdtest.1.{n}", tree[(n / 3) as usize].to_str().unwrap());
            assert_eq!(p.build(n).unwrap().to_str().unwrap(), want);
        }
        let long = CString::new(vec![b'a'; MAX_PATHLEN - 5]).unwrap();
        assert!(ItemPath::new(&long, "t", "file.", 1, 1).build(7).is_none(), "longer than mdtest's buffer");
    }
}
