//! The `tree` workload's options (fs_mark's ideas under readable names) and the tree they
//! describe, and `fsmark='-n 1000 -s 4096 -S 1 -L 3'`, which reads fs_mark's own flags into
//! the same options.

use fsarena_core::units::parse_size;
use fsarena_core::InputError;

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
    /// File sizes: one pass each, in the order given (`'100k,400k,1600k'`).
    pub file_sizes: Vec<(String, u64)>,
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
            file_sizes: vec![("4k".into(), 4096)],
            write_size: 16 << 10,
            fsync: FsyncMode::File,
            threads: 1,
            keep: false,
            loops: 1,
        }
    }
}

/// One option: its name and a line of help.
#[derive(Debug)]
pub struct OptionDef {
    /// The option's name.
    pub name: &'static str,
    /// One line of help, with the default.
    pub help: &'static str,
    set: fn(&mut TreeOptions, &str) -> Result<(), String>,
}

fn positive(v: &str) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(0) => Err(format!("'{v}' must be at least 1")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{v}' is not a whole number")),
    }
}

fn sizes(v: &str) -> Result<Vec<(String, u64)>, String> {
    let out: Result<Vec<_>, String> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| parse_size(s).map(|n| (s.to_ascii_lowercase(), n)).map_err(|e| e.message))
        .collect();
    match out? {
        list if list.is_empty() => Err(format!("'{v}' names no size: expected SIZE or a list such as '100k,400k'")),
        list => {
            let mut names: Vec<&str> = list.iter().map(|(s, _)| s.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            if names.len() != list.len() {
                return Err(format!("'{v}' names a size twice"));
            }
            Ok(list)
        }
    }
}

macro_rules! opt {
    ($name:literal, $help:literal, |$o:ident, $v:ident| $body:expr) => {
        OptionDef {
            name: $name,
            help: $help,
            set: |$o: &mut TreeOptions, $v: &str| {
                $body;
                Ok(())
            },
        }
    };
}

/// Every option of the `tree` workload.
pub static OPTIONS: &[OptionDef] = &[
    opt!("levels", "levels of directories below each thread's directory (default 1)", |o, v| o.levels = positive(v)?),
    opt!("dirs_per_level", "directories at each level; a level's directories sit in the first directory of the level above (default 20; fs_mark -D)", |o, v| o.dirs_per_level = positive(v)?),
    opt!("files_per_dir", "files in every directory (default 20; fs_mark -N)", |o, v| o.files_per_dir = positive(v)?),
    opt!("file_size", "bytes per file, or a list such as '100k,400k,1600k': one pass per size (default 4k; fs_mark -s)", |o, v| o.file_sizes = sizes(v)?),
    opt!("write_size", "bytes per write() (default 16k; fs_mark -w)", |o, v| o.write_size = match parse_size(v).map_err(|e| e.message)? {
        0 => return Err(format!("'{v}' must be larger than 0")),
        n => n,
    }),
    opt!("fsync", "none, file (fsync before close, fs_mark's default) or end (one syncfs per thread after its files) (default file)", |o, v| o.fsync = match v.trim() {
        "none" | "0" => FsyncMode::None,
        "file" | "1" => FsyncMode::File,
        "end" => FsyncMode::End,
        _ => return Err(format!("'{v}' is not a sync mode: expected none, file or end")),
    }),
    opt!("threads", "parallel threads, each with a tree of its own (default 1; fs_mark -t)", |o, v| o.threads = positive(v)?),
    opt!("keep", "keep the files after the run (fsarena's own; default 0)", |o, v| o.keep = boolean(v)?),
    opt!("loops", "creation loops, each adding files_per_dir new files to every directory and keeping them for the next; each loop is reported (files_created_loopN, fs_used_loopN); the files go after the last loop, their deletion timed over all loops (default 1; fs_mark -L)", |o, v| o.loops = positive(v)?),
];

fn boolean(v: &str) -> Result<bool, String> {
    match v.trim() {
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("'{v}' is not a boolean: expected 1 or 0")),
    }
}

/// Most levels: `d00/` per level, and the deepest path must fit PATH_MAX.
const MAX_LEVELS: u32 = 1000;

/// Most files one run may create, over all threads and loops.
const MAX_FILES: u64 = 100_000_000;

/// Most creation loops.
const MAX_LOOPS: u32 = 100_000;

impl TreeOptions {
    /// Sets `key` to `value`; the error names the key and what is accepted.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), InputError> {
        if key == "fsmark" {
            return super::fsmark::apply(self, value);
        }
        let def = OPTIONS.iter().find(|d| d.name == key).ok_or_else(|| {
            InputError::new(format!(
                "unknown tree option '{}':{} accepted options are {}, fsmark",
                crate::plain::cut(key),
                fsarena_core::did_you_mean(key, OPTIONS.iter().map(|d| d.name).chain(["fsmark"])),
                OPTIONS.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
            ))
        })?;
        (def.set)(self, value).map_err(|m| InputError::new(crate::plain::value_error(key, value, &m)))
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
        for (name, _) in &self.file_sizes {
            // Each size names a directory of a sweep (fsarena-tree/<size>).
            crate::plain::check_plain_name(name).map_err(|m| InputError::new(format!("file_size: {m}")))?;
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
    fn sizes_sweep_and_modes() {
        let o = with(&[("file_size", "100k,400k, 1600K"), ("fsync", "end"), ("levels", "5")]).unwrap();
        assert_eq!(o.file_sizes, vec![("100k".into(), 102_400), ("400k".into(), 409_600), ("1600k".into(), 1_638_400)]);
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
    fn bad_values_are_refused_by_name() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("levels", "0")], "levels=0"),
            (&[("fsync", "always")], "expected none, file or end"),
            (&[("file_size", "4q")], "not a size"),
            (&[("file_size", ",")], "names no size"),
            (&[("file_size", "4k,4k")], "twice"),
            (&[("depth", "3")], "unknown tree option 'depth'"),
            (&[("files_per_dir", "100000"), ("dirs_per_level", "1000"), ("levels", "10")], "at most"),
            (&[("levels", "100000"), ("dirs_per_level", "1"), ("files_per_dir", "1")], "PATH_MAX"),
            (&[("file_size", "4\tk")], "control character"),
            (&[("loops", "0")], "loops=0"),
            (&[("files_per_dir", "1000"), ("dirs_per_level", "1000"), ("loops", "200")], "× loops=200"),
        ];
        for (pairs, want) in cases {
            let err = with(pairs).unwrap_err().to_string();
            assert!(err.contains(want), "{pairs:?}: '{err}' lacks '{want}'");
        }
    }
}
