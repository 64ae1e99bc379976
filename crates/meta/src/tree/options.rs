//! The `tree` workload's options (fs_mark's ideas under readable names) and the tree they
//! describe, and `fsmark='-n 1000 -s 4096 -S 1 -L 3'`, which reads fs_mark's own flags into
//! the same options.

use fsarena_core::option::DefaultValue::{Is, Unset};
use fsarena_core::option::ValueKind::{Bool, Choice, CommandLine, Count, Size};
use fsarena_core::units::parse_size;
use fsarena_core::InputError;
use fsarena_workload::options::{boolean, nonzero_size, opt, positive, OptionDef};

/// When files are made durable (fs_mark's `-S`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncMode {
    /// No sync (fs_mark `-S 0`).
    None,
    /// fsync every file before closing it (fs_mark `-S 1`, its default).
    File,
    /// One syncfs per thread after all its files are written (fs_mark `-S 2`: sync, then
    /// one fsync), timed as part of the creation phase.
    End,
}

/// Every option of the `tree` workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeOptions {
    /// Levels of directories below each thread's directory.
    pub levels: u32,
    /// Directories at each level.
    pub dirs_per_level: u32,
    /// Files in every directory.
    pub files_per_dir: u32,
    /// Bytes per file (fs_mark's `-s`); a list of sizes is a sweep of the plan, one run each.
    pub file_size: u64,
    /// Bytes per write() (fs_mark's `-w`).
    pub write_size: u64,
    /// When files are synced.
    pub fsync: FsyncMode,
    /// Parallel threads, each with a tree of its own (fs_mark's `-t`).
    pub threads: u32,
    /// Keep the files after the run (fsarena's own).
    pub keep: bool,
    /// Creation loops over the same tree, the files of each kept for the next (fs_mark's
    /// `-L`): how a filesystem ages as it fills.
    pub loops: u32,
}

impl Default for TreeOptions {
    fn default() -> Self {
        Self {
            levels: 1,
            dirs_per_level: 20,
            files_per_dir: 20,
            file_size: 4096,
            write_size: 16 << 10,
            fsync: FsyncMode::File,
            threads: 1,
            keep: false,
            loops: 1,
        }
    }
}

/// One file size. A list is a sweep, which the plan expands into one run per size before a
/// run is made (`file_size='100k,400k'` is two results); one run makes files of one size.
fn one_size(v: &str) -> Result<u64, String> {
    if v.contains(',') || v.contains('|') {
        return Err(format!("'{v}' is a list: a run makes files of one size; give the list in a --workload spec or a TOML array to sweep it"));
    }
    parse_size(v.trim()).map_err(|e| e.message)
}

/// A row of the tree table.
macro_rules! tree {
    ($($rest:tt)*) => { opt!(TreeOptions, $($rest)*) };
}

/// Every option of the `tree` workload, with the fs_mark flag each stands for where one does;
/// `fsmark=` reads fs_mark's flags (see tree/fsmark.rs, where `-n`, `-D` and `-N` are mapped).
pub static OPTIONS: &[OptionDef<TreeOptions>] = &[
    tree!("levels", Count, Is("1"), "levels of directories below each thread's directory", |o, v| o.levels =
        positive(v)?),
    tree!(
        "dirs_per_level",
        Count,
        Is("20"),
        "directories at each level; a level's directories sit in the first directory of the level above (fs_mark -D)",
        |o, v| o.dirs_per_level = positive(v)?
    ),
    tree!("files_per_dir", Count, Is("20"), "files in every directory (fs_mark -N)", |o, v| o.files_per_dir =
        positive(v)?)
    .unit("files"),
    tree!("file_size", Size, Is("4k"), "bytes per file; a list such as '100k,400k,1600k' sweeps it", |o, v| o
        .file_size =
        one_size(v)?)
    .flag('s'),
    tree!("write_size", Size, Is("16k"), "bytes per write()", |o, v| o.write_size = nonzero_size(v)?).flag('w'),
    tree!(
        "fsync",
        Choice(&["none", "file", "end"]),
        Is("file"),
        "none; file: fsync before close (fs_mark's default); end: one syncfs per thread after its files",
        |o, v| o.fsync = match v.trim() {
            "none" | "0" => FsyncMode::None,
            "file" | "1" => FsyncMode::File,
            "end" => FsyncMode::End,
            _ => return Err(format!("'{v}' is not a sync mode: expected none, file or end")),
        }
    )
    .flag('S'),
    tree!("threads", Count, Is("1"), "parallel threads, each with a tree of its own", |o, v| o.threads = positive(v)?)
        .flag('t')
        .unit("threads"),
    tree!("keep", Bool, Is("0"), "keep the files after the run (fsarena's own)", |o, v| o.keep = boolean(v)?).flag('k'),
    tree!(
        "loops",
        Count,
        Is("1"),
        "creation loops, each adding files_per_dir new files to every directory and keeping them for the next; each loop is reported; the files go after the last loop, their deletion timed over all loops",
        |o, v| o.loops = positive(v)?
    )
    .flag('L'),
    tree!(
        "fsmark",
        CommandLine,
        Unset,
        "fs_mark 3.3's flags (-n 1000 -s 4096 -S 1 -L 3), from fs_mark's defaults; keys after it override it",
        |o, v| super::fsmark::apply(o, v).map_err(|e| e.message)?
    ),
];

/// Most levels: `d00/` per level, and the deepest path must fit PATH_MAX.
const MAX_LEVELS: u32 = 1000;

/// Most files one run may create, over all threads and loops.
const MAX_FILES: u64 = 100_000_000;

/// Most creation loops.
const MAX_LOOPS: u32 = 100_000;

impl TreeOptions {
    /// Sets `key` to `value`; the error names the key and what is accepted.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), InputError> {
        fsarena_workload::options::set("tree", OPTIONS, self, key, value)
    }

    /// Checks the options together.
    pub fn validate(&self) -> Result<(), InputError> {
        let files = self.dirs() * u64::from(self.files_per_dir) * u64::from(self.threads);
        if files > MAX_FILES {
            return Err(InputError::new(format!(
                "levels={} × dirs_per_level={} × files_per_dir={} × threads={} is {files} files: at most {MAX_FILES} are accepted",
                self.levels, self.dirs_per_level, self.files_per_dir, self.threads
            )));
        }
        if self.levels > MAX_LEVELS {
            return Err(InputError::new(format!(
                "levels={}: at most {MAX_LEVELS} are accepted (the deepest directory's path must stay under PATH_MAX, 4096 bytes)",
                self.levels
            )));
        }
        if self.threads > 4096 {
            return Err(InputError::new(format!("threads={}: expected 1 to 4096", self.threads)));
        }
        if self.loops > MAX_LOOPS {
            return Err(InputError::new(format!("loops={}: expected 1 to {MAX_LOOPS}", self.loops)));
        }
        if files.saturating_mul(u64::from(self.loops)) > MAX_FILES {
            return Err(InputError::new(format!(
                "{files} files × loops={} is more than the {MAX_FILES} files one run may create",
                self.loops
            )));
        }
        Ok(())
    }

    /// Directories per thread.
    pub fn dirs(&self) -> u64 {
        u64::from(self.levels) * u64::from(self.dirs_per_level)
    }

    /// The directories of one thread's tree, relative to its directory, parents first:
    /// level 1 is `d00 .. dNN`; level `l` sits in the first directory of level `l − 1`
    /// (`d00/d00/d07` is the eighth directory of level 3).
    pub fn dir_paths(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.dirs() as usize);
        for level in 1..=self.levels {
            let parent = "d00/".repeat(level as usize - 1);
            out.extend((0..self.dirs_per_level).map(|j| format!("{parent}d{j:02}")));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// Options from `key=value` pairs, checked as a spec's are.
    pub(crate) fn with(pairs: &[(&str, &str)]) -> Result<TreeOptions, InputError> {
        let mut o = TreeOptions::default();
        for (k, v) in pairs {
            o.set(k, v)?;
        }
        o.validate()?;
        Ok(o)
    }

    #[test]
    fn one_size_and_modes() {
        let o = with(&[("file_size", " 1600K"), ("fsync", "end"), ("levels", "5")]).unwrap();
        assert_eq!(o.file_size, 1_638_400);
        assert_eq!(o.fsync, FsyncMode::End);
        assert_eq!(o.dirs(), 100);
        let paths = o.dir_paths();
        assert_eq!(paths.len(), 100);
        assert_eq!(paths[0], "d00");
        assert_eq!(paths[19], "d19");
        assert_eq!(paths[20], "d00/d00");
        assert_eq!(paths[99], "d00/d00/d00/d00/d19");
    }

    #[test]
    fn the_table_agrees_with_default() {
        fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("levels", "0")], "levels=0"),
            (&[("fsync", "always")], "expected none, file or end"),
            (&[("file_size", "4q")], "not a size"),
            (&[("file_size", "100k,400k")], "is a list: a run makes files of one size"),
            (&[("file_size", "4k|8k")], "is a list"),
            (&[("depth", "3")], "unknown tree option 'depth'"),
            (&[("files_per_dir", "100000"), ("dirs_per_level", "1000"), ("levels", "10")], "at most"),
            (&[("levels", "100000"), ("dirs_per_level", "1"), ("files_per_dir", "1")], "PATH_MAX"),
            (&[("loops", "0")], "loops=0"),
            (&[("files_per_dir", "1000"), ("dirs_per_level", "1000"), ("loops", "200")], "× loops=200"),
        ];
        for (pairs, want) in cases {
            let err = with(pairs).unwrap_err().to_string();
            assert!(err.contains(want), "{pairs:?}: '{err}' lacks '{want}'");
        }
    }
}
