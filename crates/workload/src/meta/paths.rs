//! The whole path of one item for the stat and read phases with `calls=path`, made per item as
//! mdtest makes it (`mdtest_stat`, `mdtest_read`), so that the phase's rate holds what mdtest's
//! holds: both of its path-sized buffers cleared, the item's name formatted, one directory
//! level put in front at a time from the item's directory up to the tree's first level, then
//! the tree's own path in front of all. mdtest's stat of a cached tmpfs file costs about a
//! microsecond, of which this per-item work is a third: leaving it out made fsarena's stat
//! rate twice mdtest's (issue 30). Creation and removal build their path with one format per
//! item in mdtest, as [`crate::names::NameBuf`] does.

use std::ffi::CStr;
use std::io::Write;

/// mdtest's `MAX_PATHLEN`: the size of each buffer it clears for every item.
const MAX_PATHLEN: usize = 4096;

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
            root: root.to_bytes().to_vec(),
            tree_base: tree_base.as_bytes().to_vec(),
            prefix: prefix.as_bytes().to_vec(),
            items_per_dir: items_per_dir.max(1),
            branch: branch.max(1),
        }
    }

    /// The whole path of item `n`; None when it would not fit in mdtest's buffer.
    pub fn build(&mut self, n: u64) -> Option<&CStr> {
        self.item.fill(0);
        self.temp.fill(0);
        let mut len = put(&mut self.item, |w| {
            w.write_all(&self.prefix)?;
            write!(w, "{n}")
        })?;
        let mut dir = n / self.items_per_dir;
        if dir > 0 {
            len = self.in_front(dir, len)?;
            // Up to the tree's first level; its root is `root`.
            while dir > self.branch {
                dir = (dir - 1) / self.branch;
                len = self.in_front(dir, len)?;
            }
        }
        let (item, root) = (&self.item[..len], &self.root);
        let whole = put(&mut self.temp, |w| {
            w.write_all(root)?;
            w.write_all(b"/")?;
            w.write_all(item)
        })?;
        self.item[..whole].copy_from_slice(&self.temp[..whole]);
        self.item[whole] = 0;
        CStr::from_bytes_until_nul(&self.item[..=whole]).ok()
    }

    /// Puts `TREE_BASE.<dir>/` in front of the first `len` bytes of the path: formatted into
    /// the second buffer, then copied back, as mdtest does. The new length.
    fn in_front(&mut self, dir: u64, len: usize) -> Option<usize> {
        let (item, base) = (&self.item[..len], &self.tree_base);
        let n = put(&mut self.temp, |w| {
            w.write_all(base)?;
            write!(w, ".{dir}/")?;
            w.write_all(item)
        })?;
        self.item[..n].copy_from_slice(&self.temp[..n]);
        self.item[n] = 0;
        Some(n)
    }
}

/// Writes into `buf` from its start, leaving room for a NUL; the length written, or None
/// when it does not fit.
fn put(buf: &mut [u8], write: impl FnOnce(&mut &mut [u8]) -> std::io::Result<()>) -> Option<usize> {
    let room = buf.len().checked_sub(1)?;
    let mut w: &mut [u8] = &mut buf[..room];
    write(&mut w).ok()?;
    Some(room - w.len())
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
