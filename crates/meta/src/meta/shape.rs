//! mdtest's tree: how many directories, how they nest and are named, and which items each
//! holds, computed exactly as `mdtest.c` does (`mdtest_run`, `create_remove_directory_tree`,
//! `create_remove_items`, `mdtest_stat`).
//!
//! Directories are numbered as a heap: the root is 0 and the children of directory `k` are
//! `b·k+1 ..= b·k+b`, down to depth `z`. Directory `k` is named `BASE.k` and nests inside its
//! parent (`BASE.0/BASE.1/BASE.3/...`). Every directory holds `items_per_dir` items of each
//! task; the items of directory `k` are numbered `k·I .. k·I+I`.

use std::ffi::CString;

/// Most directories in one tree: beyond this the paths alone would take gigabytes.
const MAX_DIRS: u64 = 10_000_000;

/// The tree and the items in it, for one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Branching factor (`-b`).
    pub branch: u64,
    /// Depth (`-z`); 0 is the root alone.
    pub depth: u32,
    /// Directories in the tree (mdtest's `num_dirs_in_tree`).
    pub dirs: u64,
    /// Items each task puts in every directory (`-I`, or `-n / dirs`).
    pub items_per_dir: u64,
    /// Items per task: `items_per_dir × dirs` (mdtest rounds `-n` down to this).
    pub items: u64,
}

impl Shape {
    /// mdtest's arithmetic: with `-I`, `items = I × dirs`; with `-n`, `I = n / dirs` and
    /// `items = I × dirs`. The error says which value is wrong and what is accepted.
    pub fn new(branch: u64, depth: u32, items: Option<u64>, items_per_dir: Option<u64>) -> Result<Self, String> {
        if depth > 0 && branch == 0 {
            return Err(format!("branch=0 with depth={depth}: a tree deeper than its root needs branch of at least 1"));
        }
        let dirs = dir_count(branch, depth).filter(|&d| d <= MAX_DIRS).ok_or_else(|| {
            format!("branch={branch}, depth={depth}: the tree would have more than {MAX_DIRS} directories")
        })?;
        let items_per_dir = match (items, items_per_dir) {
            (Some(_), Some(_)) => {
                return Err("give items (mdtest -n) or items_per_dir (mdtest -I), not both: mdtest's loop over several test directories for -n with -I is not supported".into())
            }
            (_, Some(0)) => return Err("items_per_dir=0: expected at least 1 item per directory".into()),
            (Some(0), _) => return Err("items=0: expected at least 1 item per task".into()),
            (_, Some(per_dir)) => per_dir,
            (Some(n), None) if n < dirs => {
                return Err(format!(
                    "items={n} is fewer than the {dirs} directories of the tree (branch={branch}, depth={depth}): mdtest gives every directory items/{dirs} items, here none; give at least {dirs}"
                ))
            }
            (Some(n), None) => n / dirs,
            (None, None) => return Err("give items (mdtest -n) or items_per_dir (mdtest -I)".into()),
        };
        let items =
            items_per_dir.checked_mul(dirs).ok_or_else(|| format!("items_per_dir={items_per_dir} is too large"))?;
        Ok(Self { branch, depth, dirs, items_per_dir, items })
    }

    /// Depth of directory `k` (the root is at 0).
    pub fn level(&self, mut k: u64) -> u32 {
        let mut level = 0;
        while k > 0 {
            k = (k - 1) / self.branch;
            level += 1;
        }
        level
    }

    /// The children of directory `k`, none at the deepest level.
    pub fn children(&self, k: u64) -> std::ops::Range<u64> {
        if self.level(k) >= self.depth {
            return 0..0;
        }
        let first = self.branch * k + 1;
        first..first + self.branch
    }

    /// Directories in mdtest's creation order: depth first, each before its children
    /// (`create_remove_directory_tree`, `create_remove_items`).
    pub fn preorder(&self) -> Vec<u64> {
        let mut order = Vec::with_capacity(self.dirs as usize);
        let mut stack = vec![0u64];
        while let Some(k) = stack.pop() {
            order.push(k);
            stack.extend(self.children(k).rev());
        }
        order
    }

    /// Directory counts per level, root first.
    pub fn dirs_per_level(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.depth as usize + 1];
        for k in 0..self.dirs {
            counts[self.level(k) as usize] += 1;
        }
        counts
    }

    /// The tree's top directory, relative to the test directory: `BASE.0`.
    pub fn root(base: &str) -> String {
        format!("{base}.0")
    }

    /// The path of every directory relative to the test directory, indexed by number:
    /// `BASE.0`, `BASE.0/BASE.1`, ... (`base` is `mdtest_tree`, or `mdtest_tree.R` with `-u`).
    pub fn paths(&self, base: &str) -> Vec<CString> {
        let mut paths: Vec<String> = Vec::with_capacity(self.dirs as usize);
        for k in 0..self.dirs {
            let path = match k {
                0 => Self::root(base),
                _ => format!("{}/{base}.{k}", paths[((k - 1) / self.branch) as usize]),
            };
            paths.push(path);
        }
        // Names hold no NUL: they are built from the base name (checked) and numbers.
        paths.into_iter().filter_map(|p| CString::new(p).ok()).collect()
    }
}

/// mdtest's `num_dirs_in_tree`: 1, `z + 1` for `b = 1`, else `(b^(z+1) − 1) / (b − 1)`.
fn dir_count(branch: u64, depth: u32) -> Option<u64> {
    match (branch, depth) {
        (_, 0) | (0, _) => Some(1),
        (1, z) => Some(u64::from(z) + 1),
        (b, z) => Some((b.checked_pow(z + 1)? - 1) / (b - 1)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn shape(b: u64, z: u32, n: Option<u64>, i: Option<u64>) -> Shape {
        Shape::new(b, z, n, i).unwrap()
    }

    #[test]
    fn items_per_dir_fills_every_directory() {
        // mdtest -b 6 -I 8 -z 3: 1 + 6 + 36 + 216 directories, 8 items each.
        let s = shape(6, 3, None, Some(8));
        assert_eq!((s.dirs, s.items_per_dir, s.items), (259, 8, 259 * 8));
        assert_eq!(s.dirs_per_level(), vec![1, 6, 36, 216]);
    }

    #[test]
    fn items_are_divided_and_rounded_down_as_mdtest_does() {
        let s = shape(2, 2, Some(100), None);
        assert_eq!((s.dirs, s.items_per_dir, s.items), (7, 14, 98));
        let flat = shape(1, 0, Some(1000), None);
        assert_eq!((flat.dirs, flat.items_per_dir, flat.items), (1, 1000, 1000));
        let chain = shape(1, 4, Some(10), None);
        assert_eq!((chain.dirs, chain.items_per_dir, chain.items), (5, 2, 10));
        assert_eq!(chain.dirs_per_level(), vec![1; 5]);
        // A branching factor without depth changes nothing.
        assert_eq!(shape(5, 0, Some(10), None).dirs, 1);
    }

    #[test]
    fn directories_nest_and_are_created_depth_first() {
        let s = shape(2, 2, None, Some(1));
        assert_eq!(s.preorder(), vec![0, 1, 3, 4, 2, 5, 6]);
        let paths = s.paths("mdtest_tree");
        assert_eq!(paths[0].to_str().unwrap(), "mdtest_tree.0");
        assert_eq!(paths[4].to_str().unwrap(), "mdtest_tree.0/mdtest_tree.1/mdtest_tree.4");
        assert_eq!(paths[6].to_str().unwrap(), "mdtest_tree.0/mdtest_tree.2/mdtest_tree.6");
        assert_eq!(s.paths("mdtest_tree.3")[2].to_str().unwrap(), "mdtest_tree.3.0/mdtest_tree.3.2");
        assert_eq!(s.children(2), 5..7);
        assert!(s.children(5).is_empty());
    }

    #[test]
    fn impossible_shapes_are_refused() {
        assert!(Shape::new(0, 2, Some(10), None).unwrap_err().contains("branch=0"));
        assert!(Shape::new(1000, 9, Some(10), None).unwrap_err().contains("more than"));
        assert!(Shape::new(2, 2, Some(6), None).unwrap_err().contains("fewer than the 7"));
        assert!(Shape::new(1, 0, Some(5), Some(5)).unwrap_err().contains("not both"));
    }
}
