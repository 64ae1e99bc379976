//! The `meta` workload's options: mdtest's meanings under readable names, defined once, and
//! `mdtest='-b 6 -I 8 -z 3 -u'`, which reads mdtest's own flags into the same options.

use super::shape::Shape;
use fsarena_core::option::DefaultValue::{Derived, Is, Unset};
use fsarena_core::option::ValueKind::{self, Bool, Choice, CommandLine, Count, Size};
use fsarena_core::InputError;
use fsarena_workload::options::{boolean, count, opt, small, OptionDef};

/// Every option as given (before the phases and the tree shape are resolved).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaOptions {
    /// mdtest `-n`: items (files and directories) per task.
    pub items: Option<u64>,
    /// mdtest `-I`: items per directory of the tree.
    pub items_per_dir: Option<u64>,
    /// mdtest `-b`: branching factor of the tree (default 1).
    pub branch: Option<u64>,
    /// mdtest `-z`: depth of the tree (default 0: one directory).
    pub depth: Option<u32>,
    /// Parallel tasks (mdtest's MPI ranks), each a thread (default 1).
    pub tasks: Option<u32>,
    /// mdtest `-u`: a tree of its own for every task.
    pub unique_dir: Option<bool>,
    /// All tasks in one tree (mdtest's default); the opposite of `unique_dir`.
    pub shared: Option<bool>,
    /// mdtest `-F`: files only.
    pub files_only: bool,
    /// mdtest `-D`: directories only.
    pub dirs_only: bool,
    /// mdtest `-w`: bytes written to each file after it is created.
    pub write_bytes: u64,
    /// mdtest `-e`: bytes read from each file in the read phase.
    pub read_bytes: u64,
    /// mdtest `-y`: fsync each file after writing it.
    pub sync: bool,
    /// mdtest `-C`: only the creation phases.
    pub create_only: bool,
    /// mdtest `-T`: only the stat phases.
    pub stat_only: bool,
    /// mdtest `-E`: only the read phase.
    pub read_only: bool,
    /// mdtest `-r`: only the removal phases.
    pub remove_only: bool,
    /// mdtest `-U`: the directory rename phase (on by default when no phase is selected).
    pub rename: bool,
    /// Keep the tree after the run (fsarena's own).
    pub keep: bool,
    /// How each call names its item (default `path`, as mdtest).
    pub calls: Option<Calls>,
    /// When the page cache is dropped inside a run (default `build`).
    pub drop_caches: Option<DropCaches>,
}

/// How each call names its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// mdtest's calls: every call resolves the item's whole path from the root
    /// (`/mnt/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.0.5`), walking every
    /// component each time.
    Path,
    /// Calls relative to an open descriptor of the item's directory, with a one-component
    /// name: no path walk per call, so stat and open cost less than mdtest's.
    Fd,
}

impl Calls {
    /// The value as given in `calls=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Calls::Path => "path",
            Calls::Fd => "fd",
        }
    }
}

/// When a run drops the page cache, dentries and inodes itself (as root, unless the run
/// passes `--no-drop-caches`; the runner drops before every measured repetition anyway).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCaches {
    /// Never inside the run: a tree built untimed in this repetition is measured hot.
    Never,
    /// After the untimed build of a run without creation phases, so that the first
    /// repetition is as cold as the later ones that reuse the tree (the default).
    Build,
    /// Also before every timed phase: every phase starts cold, as mdtest users do with
    /// `--run-cmd-before-phase` and `echo 3 > /proc/sys/vm/drop_caches`.
    Phase,
}

impl DropCaches {
    /// The value as given in `drop_caches=`.
    pub fn as_str(self) -> &'static str {
        match self {
            DropCaches::Never => "none",
            DropCaches::Build => "build",
            DropCaches::Phase => "phase",
        }
    }
}

/// Which of mdtest's phases run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phases {
    /// Tree, directory and file creation.
    pub create: bool,
    /// Directory and file stat.
    pub stat: bool,
    /// File read.
    pub read: bool,
    /// Directory rename.
    pub rename: bool,
    /// Directory, file and tree removal.
    pub remove: bool,
}

/// The options resolved: what a run does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaParams {
    /// The tree and the items in it, per task.
    pub shape: Shape,
    /// Parallel tasks.
    pub tasks: u32,
    /// Every task builds and uses its own tree (`-u`).
    pub unique_dir: bool,
    /// Run the directory tests.
    pub dirs: bool,
    /// Run the file tests.
    pub files: bool,
    /// Bytes written per file.
    pub write_bytes: u64,
    /// Bytes read per file.
    pub read_bytes: u64,
    /// fsync after the write.
    pub sync: bool,
    /// The phases that run.
    pub phases: Phases,
    /// Keep the tree after the run.
    pub keep: bool,
    /// How each call names its item.
    pub calls: Calls,
    /// When the run drops the page cache itself.
    pub drop_caches: DropCaches,
}

/// Items per task when neither `items` nor `items_per_dir` is given.
pub const DEFAULT_ITEMS: u64 = 1000;

/// Most parallel tasks accepted.
const MAX_TASKS: u32 = 4096;

/// A row of the meta table.
macro_rules! meta {
    ($($rest:tt)*) => { opt!(MetaOptions, $($rest)*) };
}

/// Every option of the `meta` workload, with the mdtest flag each stands for; `mdtest=` reads
/// those flags into the same rows.
pub static OPTIONS: &[OptionDef<MetaOptions>] = &[
    meta!("items", Count, Is("1000"), "items (files and directories) per task, spread over the tree", |o, v| o
        .items =
        Some(count(v)?))
    .flag('n')
    .unit("items"),
    meta!(
        "items_per_dir",
        Count,
        Derived("items spread over the tree"),
        "items per tree directory (give items or this, not both)",
        |o, v| o.items_per_dir = Some(count(v)?)
    )
    .flag('I')
    .unit("items"),
    meta!("branch", Count, Is("1"), "branching factor of the tree", |o, v| o.branch = Some(u64::from(small(v)?)))
        .flag('b'),
    meta!("depth", Count, Is("0"), "depth of the tree (0: one directory)", |o, v| o.depth = Some(small(v)?)).flag('z'),
    meta!("tasks", Count, Is("1"), "parallel tasks, each a thread (mdtest's MPI ranks)", |o, v| o.tasks =
        Some(small(v)?))
    .unit("threads"),
    meta!("unique_dir", Bool, Is("0"), "a tree of its own for every task", |o, v| o.unique_dir = Some(boolean(v)?))
        .flag('u'),
    meta!("shared", Bool, Is("1"), "all tasks in one tree: mdtest's default, the opposite of unique_dir", |o, v| o
        .shared =
        Some(boolean(v)?)),
    meta!("files_only", Bool, Is("0"), "files only", |o, v| o.files_only = boolean(v)?).flag('F'),
    meta!("dirs_only", Bool, Is("0"), "directories only", |o, v| o.dirs_only = boolean(v)?).flag('D'),
    meta!("write_bytes", Size, Is("0"), "bytes written to each file after it is created", |o, v| o.write_bytes =
        count(v)?)
    .flag('w'),
    meta!("read_bytes", Size, Is("0"), "bytes read from each file (0: open and close)", |o, v| o.read_bytes =
        count(v)?)
    .flag('e'),
    meta!("sync", Bool, Is("0"), "fsync each file after writing it", |o, v| o.sync = boolean(v)?).flag('y'),
    meta!("create_only", Bool, Is("0"), "only the creation phases", |o, v| o.create_only = boolean(v)?).flag('C'),
    meta!("stat_only", Bool, Is("0"), "only the stat phases", |o, v| o.stat_only = boolean(v)?).flag('T'),
    meta!("read_only", Bool, Is("0"), "only the file read phase", |o, v| o.read_only = boolean(v)?).flag('E'),
    meta!("remove_only", Bool, Is("0"), "only the removal phases", |o, v| o.remove_only = boolean(v)?).flag('r'),
    meta!(
        "rename",
        Bool,
        Derived("1 when no phase is selected, else 0"),
        "the directory rename phase",
        |o, v| o.rename = boolean(v)?
    )
    .flag('U'),
    meta!("keep", Bool, Is("0"), "keep the tree after the run (fsarena's own)", |o, v| o.keep = boolean(v)?),
    meta!(
        "calls",
        Choice(&["path", "fd"]),
        Is("path"),
        "path: every call resolves the item's whole path from the root, as mdtest; fd: calls relative to the item's open directory, no path walk (fsarena's own)",
        |o, v| o.calls = Some(match v.trim() {
            "path" => Calls::Path,
            "fd" => Calls::Fd,
            _ => return Err(format!("'{v}' is not a call mode: expected path or fd")),
        })
    ),
    meta!(
        "drop_caches",
        Choice(&["build", "phase", "none"]),
        Is("build"),
        "build: drop the page cache after an untimed build, so stat and read phases start cold in every repetition; phase: also before every timed phase; none: never inside the run, hot (needs root)",
        |o, v| o.drop_caches = Some(match v.trim() {
            "none" | "0" => DropCaches::Never,
            "build" => DropCaches::Build,
            "phase" => DropCaches::Phase,
            _ => return Err(format!("'{v}' is not a cache policy: expected build, phase or none")),
        })
    ),
    meta!(
        "mdtest",
        CommandLine,
        Unset,
        "mdtest's own flags (-b 6 -I 8 -z 3 -u), each read into the key with that flag; keys after it override it",
        |o, v| o.apply_mdtest(v).map_err(|e| e.message)?
    ),
];

/// mdtest flags that fsarena knows but does not support, with what to do instead.
const UNSUPPORTED: &[(char, &str)] = &[
    ('d', "the test directory: give it as --target dir:path=..."),
    ('i', "iterations: use --repeat N"),
    ('L', "items at the leaf level only"),
    ('R', "random stat order"),
    ('N', "the task stride for stat, read and removal"),
    ('S', "a shared file"),
    ('c', "collective creates"),
    ('k', "mknod instead of open"),
    ('W', "the stonewall timer"),
    ('x', "the stonewall status file"),
    ('B', "no barriers between phases"),
    ('Y', "sync after each phase"),
    ('t', "timing the unique directory's creation"),
    ('p', "a pre-iteration delay"),
    ('f', "first task count of a sweep: give tasks=N (one run per task count)"),
    ('l', "last task count of a sweep: give tasks=N (one run per task count)"),
    ('s', "task count stride of a sweep: give tasks=N (one run per task count)"),
    ('P', "printing rate and time"),
    ('Z', "printing time instead of rate"),
    ('X', "verifying the data read"),
    ('G', "the buffer offset"),
];

/// The flags `mdtest=` accepts, for messages.
fn accepted_flags() -> String {
    let mut flags: Vec<String> = OPTIONS.iter().filter_map(|d| d.flag).map(|c| format!("-{c}")).collect();
    flags.extend(["-a POSIX".to_string(), "-v".into(), "-V N".into()]);
    flags.join(" ")
}

impl MetaOptions {
    /// Sets `key` to `value`; the error names the key and what is accepted.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), InputError> {
        fsarena_workload::options::set("meta", OPTIONS, self, key, value)
    }

    /// Reads an mdtest command line (`-b 6 -I 8 -z 3 -u`, optionally starting with `mdtest`)
    /// into the options. A flag that changes what mdtest measures and is not supported here
    /// is refused, naming it: ignoring it would make the comparison wrong.
    pub fn apply_mdtest(&mut self, line: &str) -> Result<(), InputError> {
        let err = |m: String| InputError::new(format!("mdtest='{line}': {m}"));
        let mut words = line.split_whitespace().peekable();
        if words.peek() == Some(&"mdtest") {
            words.next();
        }
        while let Some(word) = words.next() {
            let Some(flags) = word.strip_prefix('-').filter(|f| !f.is_empty() && !f.starts_with('-')) else {
                let what = if word.starts_with("--") { "mdtest option" } else { "word" };
                return Err(err(format!("unknown {what} '{word}': accepted flags are {}", accepted_flags())));
            };
            for (at, flag) in flags.char_indices() {
                let def = OPTIONS.iter().find(|d| d.flag == Some(flag));
                let takes_value = match (def, flag) {
                    (Some(d), _) => !is_flag(d),
                    (None, 'a' | 'V') => true,
                    (None, 'v') => false,
                    (None, f) => match UNSUPPORTED.iter().find(|u| u.0 == f) {
                        Some((_, what)) => return Err(err(format!("-{f} ({what}) is not supported"))),
                        None => {
                            return Err(err(format!(
                                "unknown mdtest flag -{f}: accepted flags are {}",
                                accepted_flags()
                            )))
                        }
                    },
                };
                if !takes_value {
                    if let Some(d) = def {
                        d.write(self, "1").map_err(|m| err(format!("-{flag}: {m}")))?;
                    }
                    continue;
                }
                // A value: the rest of this word (`-b6`, `-b=6`) or the next word.
                let rest = &flags[at + flag.len_utf8()..];
                let value = match rest.strip_prefix('=').unwrap_or(rest) {
                    "" => words.next().ok_or_else(|| err(format!("-{flag} needs a value")))?,
                    attached => attached,
                };
                match (def, flag) {
                    (Some(d), _) => d.write(self, value).map_err(|m| err(format!("-{flag} {value}: {m}")))?,
                    (None, 'a') if value.eq_ignore_ascii_case("POSIX") => {}
                    (None, 'a') => return Err(err(format!("-a {value}: only the POSIX API is supported"))),
                    _ => {} // -V N: verbosity changes nothing measured
                }
                break;
            }
        }
        Ok(())
    }

    /// Checks the options together and resolves the tree and the phases, as mdtest does.
    pub fn resolve(&self) -> Result<MetaParams, InputError> {
        let e = |m: String| Err(InputError::new(m));
        let tasks = self.tasks.unwrap_or(1);
        if tasks == 0 || tasks > MAX_TASKS {
            return e(format!("tasks={tasks}: expected 1 to {MAX_TASKS}"));
        }
        let unique_dir = match (self.unique_dir, self.shared) {
            (Some(u), Some(s)) if u == s => {
                return e(format!(
                    "unique_dir={} and shared={} contradict each other: give one of them",
                    u8::from(u),
                    u8::from(s)
                ))
            }
            (Some(u), _) => u,
            (None, Some(s)) => !s,
            (None, None) => false,
        };
        let items = match (self.items, self.items_per_dir) {
            (None, None) => Some(DEFAULT_ITEMS),
            (items, _) => items,
        };
        let shape = Shape::new(self.branch.unwrap_or(1), self.depth.unwrap_or(0), items, self.items_per_dir)
            .map_err(InputError::new)?;
        // mdtest: neither -F nor -D means both.
        let (dirs, files) =
            if self.files_only || self.dirs_only { (self.dirs_only, self.files_only) } else { (true, true) };
        let selected = self.create_only || self.stat_only || self.read_only || self.remove_only;
        // mdtest 4: with no phase selected every phase runs, rename included (mdtest.c
        // 1903-1904); with a selection, rename runs only with -U.
        let phases = if selected {
            Phases {
                create: self.create_only,
                stat: self.stat_only,
                read: self.read_only,
                rename: self.rename,
                remove: self.remove_only,
            }
        } else {
            Phases { create: true, stat: true, read: true, rename: true, remove: true }
        };
        if files && phases.create && phases.read && self.read_bytes > self.write_bytes {
            return e(format!(
                "read_bytes={} is larger than write_bytes={}: a file holds only what was written (mdtest: read bytes must be smaller than write bytes)",
                self.read_bytes, self.write_bytes
            ));
        }
        Ok(MetaParams {
            shape,
            tasks,
            unique_dir,
            dirs,
            files,
            write_bytes: self.write_bytes,
            read_bytes: self.read_bytes,
            sync: self.sync,
            phases,
            keep: self.keep,
            calls: self.calls.unwrap_or(Calls::Path),
            drop_caches: self.drop_caches.unwrap_or(DropCaches::Build),
        })
    }
}

/// True for options set by a bare mdtest flag (no value): the switches.
fn is_flag(def: &OptionDef<MetaOptions>) -> bool {
    def.value == ValueKind::Bool
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn keys(pairs: &[(&str, &str)]) -> Result<MetaParams, InputError> {
        let mut o = MetaOptions::default();
        for (k, v) in pairs {
            o.set(k, v)?;
        }
        o.resolve()
    }

    fn mdtest(line: &str) -> Result<MetaParams, InputError> {
        keys(&[("mdtest", line)])
    }

    #[test]
    fn mdtest_strings_equal_the_keys() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("-b 6 -I 8 -z 3 -u", &[("branch", "6"), ("items_per_dir", "8"), ("depth", "3"), ("unique_dir", "1")]),
            ("-n 1000 -u", &[("items", "1000"), ("unique_dir", "1")]),
            (
                "mdtest -n 100 -F -C -w 4096 -y",
                &[("items", "100"), ("files_only", "1"), ("create_only", "1"), ("write_bytes", "4096"), ("sync", "1")],
            ),
            (
                "-n 2k -D -T -E -r -U -e 0",
                &[
                    ("items", "2048"),
                    ("dirs_only", "1"),
                    ("stat_only", "1"),
                    ("read_only", "1"),
                    ("remove_only", "1"),
                    ("rename", "1"),
                ],
            ),
            (
                "-b2 -z=2 -n 70 -uF -a POSIX -v -V 3",
                &[("branch", "2"), ("depth", "2"), ("items", "70"), ("unique_dir", "1"), ("files_only", "1")],
            ),
            ("-n 10 -w 8 -e 8", &[("items", "10"), ("write_bytes", "8"), ("read_bytes", "8")]),
        ];
        for (line, pairs) in cases {
            assert_eq!(mdtest(line).unwrap(), keys(pairs).unwrap(), "mdtest='{line}'");
        }
    }

    #[test]
    fn phase_selection_follows_mdtest() {
        let all = mdtest("-n 10").unwrap().phases;
        assert_eq!(all, Phases { create: true, stat: true, read: true, rename: true, remove: true });
        let c = mdtest("-n 10 -C").unwrap().phases;
        assert_eq!(c, Phases { create: true, stat: false, read: false, rename: false, remove: false });
        let cu = mdtest("-n 10 -C -U").unwrap().phases;
        assert!(cu.create && cu.rename && !cu.remove);
        let p = mdtest("-n 10").unwrap();
        assert!(p.dirs && p.files && !p.unique_dir && p.tasks == 1);
        let both = mdtest("-n 10 -F -D").unwrap();
        assert!(both.dirs && both.files);
    }

    #[test]
    fn calls_default_to_mdtests_paths_and_caches_drop_after_the_build() {
        let p = keys(&[]).unwrap();
        assert_eq!((p.calls, p.drop_caches), (Calls::Path, DropCaches::Build));
        let p = keys(&[("calls", "fd"), ("drop_caches", "phase")]).unwrap();
        assert_eq!((p.calls, p.drop_caches), (Calls::Fd, DropCaches::Phase));
        assert_eq!(keys(&[("drop_caches", "none")]).unwrap().drop_caches, DropCaches::Never);
    }

    #[test]
    fn shared_is_the_opposite_of_unique_dir() {
        assert!(!keys(&[("shared", "1")]).unwrap().unique_dir);
        assert!(keys(&[("shared", "0")]).unwrap().unique_dir);
        assert!(keys(&[("unique_dir", "1"), ("shared", "0")]).unwrap().unique_dir);
        let err = keys(&[("unique_dir", "1"), ("shared", "1")]).unwrap_err().to_string();
        assert!(err.contains("contradict"), "{err}");
    }

    #[test]
    fn bad_values_and_flags_are_refused_by_name() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("mdtest", "-n 10 -Q")], "unknown mdtest flag -Q"),
            (&[("mdtest", "-n 10 -R")], "-R (random stat order) is not supported"),
            (&[("mdtest", "-i 3 -n 10")], "use --repeat N"),
            (&[("mdtest", "-n")], "-n needs a value"),
            (&[("mdtest", "-n ten")], "-n ten"),
            (&[("mdtest", "-n 10 --random-seed 3")], "unknown mdtest option '--random-seed'"),
            (&[("mdtest", "-a MPIIO -n 10")], "only the POSIX API"),
            (&[("colour", "red")], "unknown meta option 'colour'"),
            (&[("items", "10"), ("items_per_dir", "5")], "not both"),
            (&[("tasks", "0")], "tasks=0"),
            (&[("files_only", "maybe")], "not a boolean"),
            (&[("items", "3"), ("branch", "2"), ("depth", "2")], "fewer than the 7 directories"),
            (&[("write_bytes", "8"), ("read_bytes", "16")], "larger than write_bytes"),
            (&[("items", "0")], "items=0"),
            (&[("calls", "relative")], "expected path or fd"),
            (&[("drop_caches", "always")], "expected build, phase or none"),
        ];
        for (pairs, want) in cases {
            let err = keys(pairs).unwrap_err().to_string();
            assert!(err.contains(want), "{pairs:?}: '{err}' lacks '{want}'");
        }
    }

    #[test]
    fn the_table_agrees_with_default_and_flags_are_unique() {
        fsarena_workload::options::check_table(OPTIONS, |o: &MetaOptions| o.resolve().map_err(|e| e.to_string()))
            .unwrap();
        let mut flags: Vec<char> = OPTIONS.iter().filter_map(|d| d.flag).collect();
        let n = flags.len();
        flags.sort_unstable();
        flags.dedup();
        assert_eq!(flags.len(), n);
        assert!(UNSUPPORTED.iter().all(|u| !flags.contains(&u.0)));
        // The bare mdtest switches are exactly the flagged booleans.
        let switches: String =
            OPTIONS.iter().filter(|d| d.flag.is_some() && is_flag(d)).filter_map(|d| d.flag).collect();
        assert_eq!(switches, "uFDyCTErU");
    }
}
