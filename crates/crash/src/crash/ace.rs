//! CrashMonkey's workload generator ACE (`ace/ace.py` of utsaslab/crashmonkey), rebuilt:
//! `ops=b3-seq1` and `ops=b3-seq2` are the workloads `ace.py -l 1` and `-l 2` write, one for
//! one, in j-lang, the language its workloads are written in (`--dry-run --workload
//! crash:ops=b3-seq1,list=jlang` prints them so; bench/vs_ace.sh compares them with ACE's).
//! Written from ACE's rules, not translated from its code:
//!
//! - **Operations** (ACE's `OperationSet`): creat, mkdir, falloc, write, dwrite, mmapwrite,
//!   link, unlink, remove, rename, fsetxattr, removexattr, truncate.
//! - **Files**: `foo` and `A/foo` as the first file, `bar`, `A/bar` and `A/C/bar` as the
//!   second; directories `A`, `B` and `A/C`; `test` is the root of the workload.
//! - **Parameters**: fallocate in 5 modes (`FALLOC_FL_ZERO_RANGE`, with `KEEP_SIZE`,
//!   `PUNCH_HOLE|KEEP_SIZE`, `KEEP_SIZE`, 0) × 3 ranges (append 32 KiB at the end,
//!   `overlap_unaligned_start` 0+5000, `overlap_extend` size−2000+5000); write the same 3;
//!   O_DIRECT and mmap writes append 32 KiB or overlap the first 8 KiB; truncate to 0 or 2500.
//! - **Persistence**: after each operation, fsync of a file or directory the workload uses,
//!   a sibling or a parent of one, or sync; between operations also none. mmapwrite persists
//!   itself (msync of 8 KiB), and ACE writes it once per persistence option all the same.
//! - **Dependencies**: nothing exists when a workload starts; each operation is preceded by
//!   what it needs (its directories made, its file created and opened, a first write before
//!   an overwrite, an xattr before its removal, the target name removed before a link), and
//!   ends with every descriptor closed. A file is written and synced through the descriptor
//!   that opened it, as ACE does.
//!
//! ACE numbers its workloads in the order Python iterates a set of file names, which changes
//! with the interpreter's hash seed; fsarena names each by what it does instead, in ACE's
//! j-lang names (`Afoo` is `A/foo`): `falloc.Afoo.zero_range_keep_size.append.fsync_A`.

use super::seq::{fallocate, pattern, split, Changes, Kind, Model};
use std::collections::BTreeMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// ACE's names: its j-lang name and the path under the workload's root (`test` is the root).
const NAMES: &[(&str, &str)] = &[
    ("test", ""),
    ("A", "A"),
    ("AC", "A/C"),
    ("B", "B"),
    ("foo", "foo"),
    ("bar", "bar"),
    ("Afoo", "A/foo"),
    ("Abar", "A/bar"),
    ("Bfoo", "B/foo"),
    ("Bbar", "B/bar"),
    ("ACfoo", "A/C/foo"),
    ("ACbar", "A/C/bar"),
];

/// The first file of an operation (ACE's `FileOptions`).
const FIRST: &[&str] = &["foo", "Afoo"];
/// The second (`SecondFileOptions`, with `A/C/bar` as ace.py adds it).
const SECOND: &[&str] = &["bar", "Abar", "ACbar"];
/// Directories an operation makes or renames (`DirOptions`, `SecondDirOptions`).
const DIRS: &[&str] = &["A"];
const SECOND_DIRS: &[&str] = &["B", "AC"];

/// The path of an ACE name under the workload's root.
pub(crate) fn path(name: &str) -> &'static str {
    NAMES.iter().find(|(n, _)| *n == name).map_or("", |(_, p)| p)
}

fn is_dir(name: &str) -> bool {
    matches!(name, "test" | "A" | "B" | "AC")
}

/// A name ACE opens (and creates) before it uses it; `Bfoo`, `ACfoo` and the like are not
/// in its lists, and ACE's workloads use them without opening them.
fn is_listed_file(name: &str) -> bool {
    FIRST.contains(&name) || SECOND.contains(&name)
}

fn sibling(name: &str) -> &'static str {
    match name {
        "foo" => "bar",
        "bar" => "foo",
        "Afoo" => "Abar",
        "Abar" => "Afoo",
        "Bfoo" => "Bbar",
        "Bbar" => "Bfoo",
        "ACfoo" => "ACbar",
        "ACbar" => "ACfoo",
        "A" => "B",
        "B" => "A",
        "AC" => "AC",
        _ => "test",
    }
}

fn parent(name: &str) -> &'static str {
    match name {
        "Afoo" | "Abar" | "AC" => "A",
        "Bfoo" | "Bbar" => "B",
        "ACfoo" | "ACbar" => "AC",
        _ => "test",
    }
}

/// A fallocate mode, as ACE writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    ZeroRange,
    ZeroRangeKeepSize,
    PunchHoleKeepSize,
    KeepSize,
    Plain,
}

const MODES: [Mode; 5] =
    [Mode::ZeroRange, Mode::ZeroRangeKeepSize, Mode::PunchHoleKeepSize, Mode::KeepSize, Mode::Plain];

impl Mode {
    fn flags(self) -> libc::c_int {
        match self {
            Mode::ZeroRange => libc::FALLOC_FL_ZERO_RANGE,
            Mode::ZeroRangeKeepSize => libc::FALLOC_FL_ZERO_RANGE | libc::FALLOC_FL_KEEP_SIZE,
            Mode::PunchHoleKeepSize => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            Mode::KeepSize => libc::FALLOC_FL_KEEP_SIZE,
            Mode::Plain => 0,
        }
    }

    fn jlang(self) -> &'static str {
        match self {
            Mode::ZeroRange => "FALLOC_FL_ZERO_RANGE",
            Mode::ZeroRangeKeepSize => "FALLOC_FL_ZERO_RANGE|FALLOC_FL_KEEP_SIZE",
            Mode::PunchHoleKeepSize => "FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE",
            Mode::KeepSize => "FALLOC_FL_KEEP_SIZE",
            Mode::Plain => "0",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Mode::ZeroRange => "zero_range",
            Mode::ZeroRangeKeepSize => "zero_range_keep_size",
            Mode::PunchHoleKeepSize => "punch_hole_keep_size",
            Mode::KeepSize => "keep_size",
            Mode::Plain => "0",
        }
    }

    fn keeps_size(self) -> bool {
        self != Mode::ZeroRange && self != Mode::Plain
    }
}

/// Where a write or fallocate lands (ACE's `WriteOptions` and `dWriteOptions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Range {
    /// 32 KiB at the file's end.
    Append,
    /// 5000 bytes at 0.
    OverlapUnalignedStart,
    /// 5000 bytes from 2000 before the end.
    OverlapExtend,
    /// 8 KiB at 0 (O_DIRECT and mmap writes).
    OverlapStart,
}

const RANGES: [Range; 3] = [Range::Append, Range::OverlapUnalignedStart, Range::OverlapExtend];
const D_RANGES: [Range; 2] = [Range::Append, Range::OverlapStart];

impl Range {
    fn word(self) -> &'static str {
        match self {
            Range::Append => "append",
            Range::OverlapUnalignedStart => "overlap_unaligned_start",
            Range::OverlapExtend => "overlap_extend",
            Range::OverlapStart => "overlap_start",
        }
    }
}

/// One core operation with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Core {
    Creat(&'static str),
    Mkdir(&'static str),
    Falloc(&'static str, Mode, Range),
    Write(&'static str, Range),
    DWrite(&'static str, Range),
    MmapWrite(&'static str, Range),
    Link(&'static str, &'static str),
    Unlink(&'static str),
    Remove(&'static str),
    Rename(&'static str, &'static str),
    Fsetxattr(&'static str),
    Removexattr(&'static str),
    /// To 0 (`aligned`) or 2500.
    Truncate(&'static str, bool),
}

impl Core {
    /// The names it uses.
    fn names(&self) -> Vec<&'static str> {
        match *self {
            Core::Creat(f)
            | Core::Mkdir(f)
            | Core::Falloc(f, ..)
            | Core::Write(f, _)
            | Core::DWrite(f, _)
            | Core::MmapWrite(f, _)
            | Core::Unlink(f)
            | Core::Remove(f)
            | Core::Fsetxattr(f)
            | Core::Removexattr(f)
            | Core::Truncate(f, _) => vec![f],
            Core::Link(a, b) | Core::Rename(a, b) => vec![a, b],
        }
    }

    fn word(&self) -> String {
        match *self {
            Core::Creat(f) => format!("creat.{f}"),
            Core::Mkdir(d) => format!("mkdir.{d}"),
            Core::Falloc(f, m, r) => format!("falloc.{f}.{}.{}", m.word(), r.word()),
            Core::Write(f, r) => format!("write.{f}.{}", r.word()),
            Core::DWrite(f, r) => format!("dwrite.{f}.{}", r.word()),
            Core::MmapWrite(f, r) => format!("mmapwrite.{f}.{}", r.word()),
            Core::Link(a, b) => format!("link.{a}.{b}"),
            Core::Unlink(f) => format!("unlink.{f}"),
            Core::Remove(f) => format!("remove.{f}"),
            Core::Rename(a, b) => format!("rename.{a}.{b}"),
            Core::Fsetxattr(f) => format!("fsetxattr.{f}"),
            Core::Removexattr(f) => format!("removexattr.{f}"),
            Core::Truncate(f, aligned) => format!("truncate.{f}.{}", if aligned { "aligned" } else { "unaligned" }),
        }
    }

    /// It persists itself (msync), so no persistence call follows it.
    fn persists_itself(&self) -> bool {
        matches!(self, Core::MmapWrite(..))
    }
}

/// Every parameter choice of each operation, in ACE's order (`buildTuple`).
fn parameters() -> Vec<Vec<Core>> {
    let pairs = |firsts: Vec<&'static str>, seconds: &[&'static str]| -> Vec<(&'static str, &'static str)> {
        firsts.iter().flat_map(|&a| seconds.iter().map(move |&b| (a, b))).filter(|(a, b)| a != b).collect()
    };
    let files = || FIRST.iter().chain(SECOND).copied().collect::<Vec<_>>();
    let dirs = || DIRS.iter().chain(SECOND_DIRS).copied().collect::<Vec<_>>();
    let per_file = |f: &dyn Fn(&'static str) -> Vec<Core>| FIRST.iter().flat_map(|&n| f(n)).collect::<Vec<_>>();
    vec![
        FIRST.iter().map(|&f| Core::Creat(f)).collect(),
        DIRS.iter().map(|&d| Core::Mkdir(d)).collect(),
        per_file(&|f| MODES.iter().flat_map(|&m| RANGES.iter().map(move |&r| Core::Falloc(f, m, r))).collect()),
        per_file(&|f| RANGES.iter().map(|&r| Core::Write(f, r)).collect()),
        per_file(&|f| D_RANGES.iter().map(|&r| Core::DWrite(f, r)).collect()),
        per_file(&|f| D_RANGES.iter().map(|&r| Core::MmapWrite(f, r)).collect()),
        pairs(files(), SECOND).into_iter().map(|(a, b)| Core::Link(a, b)).collect(),
        files().into_iter().map(Core::Unlink).collect(),
        files().into_iter().map(Core::Remove).collect(),
        pairs(files(), SECOND).into_iter().chain(pairs(dirs(), SECOND_DIRS)).map(|(a, b)| Core::Rename(a, b)).collect(),
        FIRST.iter().map(|&f| Core::Fsetxattr(f)).collect(),
        FIRST.iter().map(|&f| Core::Removexattr(f)).collect(),
        per_file(&|f| vec![Core::Truncate(f, true), Core::Truncate(f, false)]),
    ]
}

/// The persistence call after a core operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    Fsync(&'static str),
    Sync,
    /// Nothing (between operations only).
    None,
}

impl After {
    fn word(self) -> String {
        match self {
            After::Fsync(n) => format!("fsync_{n}"),
            After::Sync => "sync".into(),
            After::None => "none".into(),
        }
    }
}

/// One line of a j-lang workload: what CrashMonkey's generated test does, step by step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Mkdir(&'static str),
    /// `open NAME O_RDWR|O_CREAT 0777`.
    Open(&'static str),
    /// `opendir NAME 0777`: open(O_DIRECTORY).
    OpenDir(&'static str),
    Close(&'static str),
    Write(&'static str, i64, u64),
    /// Closes the descriptor, writes through a new one opened O_DIRECT|O_SYNC, closes it.
    DWrite(&'static str, i64, u64),
    /// fallocate mode 0 to cover the range, writes it through a shared mapping, msync of its
    /// first 8 KiB.
    MmapWrite(&'static str, i64, u64),
    Falloc(&'static str, Mode, i64, u64),
    Truncate(&'static str, u64),
    Link(&'static str, &'static str),
    Unlink(&'static str),
    Remove(&'static str),
    Rename(&'static str, &'static str),
    Rmdir(&'static str),
    /// `user.xattr1` = `val1`, through the descriptor.
    Fsetxattr(&'static str),
    /// `user.xattr1`, by path.
    Removexattr(&'static str),
    Fsync(&'static str),
    Sync,
    None,
    /// A persistence point; the last one is 1.
    Checkpoint(bool),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Step::Mkdir(n) => write!(f, "mkdir {n} 0777"),
            Step::Open(n) => write!(f, "open {n} O_RDWR|O_CREAT 0777"),
            Step::OpenDir(n) => write!(f, "opendir {n} 0777"),
            Step::Close(n) => write!(f, "close {n}"),
            Step::Write(n, o, l) => write!(f, "write {n} {o} {l}"),
            Step::DWrite(n, o, l) => write!(f, "dwrite {n} {o} {l}"),
            Step::MmapWrite(n, o, l) => write!(f, "mmapwrite {n} {o} {l}"),
            Step::Falloc(n, m, o, l) => write!(f, "falloc {n} {} {o} {l}", m.jlang()),
            Step::Truncate(n, l) => write!(f, "truncate {n} {l}"),
            Step::Link(a, b) => write!(f, "link {a} {b}"),
            Step::Unlink(n) => write!(f, "unlink {n}"),
            Step::Remove(n) => write!(f, "remove {n}"),
            Step::Rename(a, b) => write!(f, "rename {a} {b}"),
            Step::Rmdir(n) => write!(f, "rmdir {n}"),
            Step::Fsetxattr(n) => write!(f, "fsetxattr {n}"),
            Step::Removexattr(n) => write!(f, "removexattr {n}"),
            Step::Fsync(n) => write!(f, "fsync {n}"),
            Step::Sync => write!(f, "sync"),
            Step::None => write!(f, "none"),
            Step::Checkpoint(last) => write!(f, "checkpoint {}", u8::from(last)),
        }
    }
}

/// One generated workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Workload {
    pub name: String,
    pub steps: Vec<Step>,
}

/// What the dependency pass knows: which names exist and whether they are open, in the
/// order they appeared, and which files have been written.
#[derive(Default)]
struct Deps {
    files: Vec<(&'static str, bool)>,
    dirs: Vec<(&'static str, bool)>,
    written: Vec<&'static str>,
    out: Vec<Step>,
}

fn get(v: &[(&'static str, bool)], n: &str) -> Option<bool> {
    v.iter().find(|(k, _)| *k == n).map(|(_, o)| *o)
}

fn set(v: &mut Vec<(&'static str, bool)>, n: &'static str, open: bool) {
    match v.iter_mut().find(|(k, _)| *k == n) {
        Some(e) => e.1 = open,
        None => v.push((n, open)),
    }
}

fn pop(v: &mut Vec<(&'static str, bool)>, n: &str) {
    v.retain(|(k, _)| *k != n);
}

impl Deps {
    fn new() -> Self {
        Self { dirs: vec![("test", false)], ..Default::default() }
    }

    fn mkdir(&mut self, d: &'static str) {
        self.out.push(Step::Mkdir(d));
        set(&mut self.dirs, d, false);
    }

    fn open(&mut self, n: &'static str) {
        if is_dir(n) {
            self.out.push(Step::OpenDir(n));
            set(&mut self.dirs, n, true);
        } else {
            self.out.push(Step::Open(n));
            set(&mut self.files, n, true);
        }
    }

    fn close(&mut self, n: &'static str) {
        self.out.push(Step::Close(n));
        if is_dir(n) {
            set(&mut self.dirs, n, false);
        } else {
            set(&mut self.files, n, false);
        }
    }

    fn unlink(&mut self, n: &'static str) {
        self.out.push(Step::Unlink(n));
        pop(&mut self.files, n);
    }

    /// The directories above `n` (A or B, or A/C and A), made if missing.
    fn parents(&mut self, n: &'static str) {
        let p = parent(n);
        if (p == "A" || p == "B") && get(&self.dirs, p).is_none() {
            self.mkdir(p);
        }
        if p == "AC" && get(&self.dirs, p).is_none() {
            if get(&self.dirs, "A").is_none() {
                self.mkdir("A");
            }
            self.mkdir("AC");
        }
    }

    /// `n` exists and is open: a directory made and opened, a listed file opened (created).
    fn exists(&mut self, n: &'static str) {
        if is_dir(n) {
            if get(&self.dirs, n).is_none() {
                self.mkdir(n);
            }
            if get(&self.dirs, n) == Some(false) {
                self.open(n);
            }
        }
        if is_listed_file(n) && get(&self.files, n) != Some(true) {
            self.open(n);
        }
    }

    fn closed(&mut self, n: &'static str) {
        if get(&self.files, n) == Some(true) || get(&self.dirs, n) == Some(true) {
            self.close(n);
        }
    }

    /// A file that has never been written gets a first append.
    fn has_data(&mut self, n: &'static str) {
        if !self.written.contains(&n) {
            self.out.push(Step::Write(n, 0, 0));
            self.written.push(n);
        }
    }

    /// Makes room for `mkdir d`: removes what is in `d` and `d` itself.
    fn clear_dir(&mut self, d: &'static str) {
        if d == "test" || get(&self.dirs, d).is_none() {
            return;
        }
        let remove_file = |s: &mut Self, f: &'static str| match get(&s.files, f) {
            Some(true) => {
                s.close(f);
                s.unlink(f);
            }
            Some(false) => s.unlink(f),
            None => {}
        };
        match d {
            "A" => {
                remove_file(self, "Afoo");
                remove_file(self, "Abar");
                if get(&self.dirs, "AC") == Some(true) {
                    self.close("AC");
                }
                if get(&self.dirs, "AC").is_some() {
                    remove_file(self, "ACfoo");
                    remove_file(self, "ACbar");
                    self.out.push(Step::Rmdir("AC"));
                    pop(&mut self.dirs, "AC");
                }
            }
            "B" => {
                remove_file(self, "Bfoo");
                remove_file(self, "Bbar");
            }
            "AC" => {
                remove_file(self, "ACfoo");
                remove_file(self, "ACbar");
            }
            _ => {}
        }
        self.out.push(Step::Rmdir(d));
        pop(&mut self.dirs, d);
    }

    /// Core operation `c` with what it needs before it.
    fn core(&mut self, c: Core) {
        match c {
            Core::Creat(f) => {
                self.parents(f);
                if get(&self.files, f).is_some() {
                    self.unlink(f);
                }
                self.out.push(Step::Open(f));
                set(&mut self.files, f, true);
            }
            Core::Mkdir(d) => {
                self.clear_dir(d);
                self.mkdir(d);
            }
            Core::Falloc(f, m, r) => {
                self.parents(f);
                self.exists(f);
                self.has_data(f);
                self.out.push(Step::Falloc(f, m, r as i64, 0));
            }
            Core::Write(f, r) | Core::DWrite(f, r) | Core::MmapWrite(f, r) => {
                self.parents(f);
                self.exists(f);
                // ACE's own rule: an append needs nothing; an overwrite a first write. Its
                // mmapwrite entry carries the checkpoint flag, and ACE then reads its
                // parameters one level off: every mmapwrite gets the first write.
                if r == Range::Append && !matches!(c, Core::MmapWrite(..)) {
                    if !self.written.contains(&f) {
                        self.written.push(f);
                    }
                } else {
                    self.has_data(f);
                }
                self.out.push(match c {
                    Core::Write(..) => Step::Write(f, r as i64, 1),
                    Core::DWrite(..) => Step::DWrite(f, r as i64, 1),
                    _ => Step::MmapWrite(f, r as i64, 1),
                });
                if matches!(c, Core::DWrite(..)) && is_listed_file(f) {
                    set(&mut self.files, f, false);
                }
            }
            Core::Link(a, b) => {
                self.parents(a);
                self.parents(b);
                self.exists(a);
                if get(&self.files, b) == Some(true) {
                    self.close(b);
                }
                if get(&self.files, b) == Some(false) {
                    self.unlink(b);
                }
                self.out.push(Step::Link(a, b));
                set(&mut self.files, b, false);
            }
            Core::Rename(a, b) => {
                self.parents(a);
                self.parents(b);
                self.exists(a);
                self.closed(a);
                if get(&self.files, b) == Some(true) {
                    self.close(b);
                }
                self.out.push(Step::Rename(a, b));
                if is_dir(a) {
                    pop(&mut self.dirs, a);
                    set(&mut self.dirs, b, false);
                } else {
                    pop(&mut self.files, a);
                    set(&mut self.files, b, false);
                }
            }
            Core::Unlink(f) | Core::Remove(f) => {
                self.parents(f);
                self.exists(f);
                self.closed(f);
                self.out.push(if matches!(c, Core::Unlink(_)) { Step::Unlink(f) } else { Step::Remove(f) });
                pop(&mut self.files, f);
            }
            Core::Fsetxattr(f) => {
                self.parents(f);
                self.exists(f);
                self.out.push(Step::Fsetxattr(f));
            }
            Core::Removexattr(f) => {
                self.parents(f);
                self.exists(f);
                if get(&self.files, f) == Some(true) {
                    self.out.push(Step::Fsetxattr(f));
                }
                self.out.push(Step::Removexattr(f));
            }
            Core::Truncate(f, aligned) => {
                self.parents(f);
                self.exists(f);
                self.has_data(f);
                self.out.push(Step::Truncate(f, if aligned { 0 } else { 2500 }));
            }
        }
    }

    fn persist(&mut self, s: After, last: bool) {
        match s {
            After::Fsync(n) => {
                self.parents(n);
                self.exists(n);
                self.out.push(Step::Fsync(n));
                self.out.push(Step::Checkpoint(last));
            }
            After::Sync => {
                self.out.push(Step::Sync);
                self.out.push(Step::Checkpoint(last));
            }
            After::None => self.out.push(Step::None),
        }
    }

    /// Closes what is open, files then directories, and fills in the offsets and lengths.
    fn finish(mut self) -> Vec<Step> {
        for (n, open) in self.files.clone() {
            if open {
                self.out.push(Step::Close(n));
            }
        }
        for (n, open) in self.dirs.clone() {
            if open {
                self.out.push(Step::Close(n));
            }
        }
        sizes(self.out)
    }
}

/// The offsets and lengths of the writes, from the file sizes as ACE tracks them (writes and
/// fallocates carry their [`Range`] as the offset and 0 or 1 as the length until here). As in
/// ACE, an extending overwrite after a truncate to 0 starts at -2000: the step fails (EINVAL)
/// as ACE's test does.
fn sizes(steps: Vec<Step>) -> Vec<Step> {
    let mut size: BTreeMap<&str, i64> = BTreeMap::new();
    let range =
        |r: i64| [Range::Append, Range::OverlapUnalignedStart, Range::OverlapExtend, Range::OverlapStart][r as usize];
    steps
        .into_iter()
        .map(|s| match s {
            Step::Write(f, r, _) | Step::DWrite(f, r, _) | Step::MmapWrite(f, r, _) => {
                let len = size.entry(f).or_insert(0);
                let (off, n) = match range(r) {
                    Range::Append => {
                        let off = *len;
                        *len += 32768;
                        (off, 32768)
                    }
                    Range::OverlapUnalignedStart => (0, 5000),
                    Range::OverlapExtend => (*len - 2000, 5000),
                    Range::OverlapStart => (0, 8192),
                };
                match s {
                    Step::Write(..) => Step::Write(f, off, n),
                    Step::DWrite(..) => Step::DWrite(f, off, n),
                    _ => Step::MmapWrite(f, off, n),
                }
            }
            Step::Falloc(f, m, r, _) => {
                let len = size.entry(f).or_insert(0);
                let (off, n) = match range(r) {
                    Range::Append => {
                        let off = *len;
                        *len += 32768;
                        (off, 32768)
                    }
                    Range::OverlapExtend => {
                        let off = *len - 2000;
                        *len += 3000;
                        (off, 5000)
                    }
                    _ => (0, 5000),
                };
                Step::Falloc(f, m, off, n)
            }
            Step::Truncate(f, l) => {
                if l == 0 {
                    size.insert(f, 0);
                }
                s
            }
            s => s,
        })
        .collect()
}

/// ACE's files a persistence call may sync for a workload using `used`: those, their
/// siblings and their parents, in [`NAMES`] order.
fn related(used: &[&'static str]) -> Vec<&'static str> {
    let mut all: Vec<&'static str> = Vec::new();
    for &n in used {
        all.extend([n, sibling(n), parent(n)]);
    }
    NAMES.iter().map(|(n, _)| *n).filter(|n| all.contains(n)).collect()
}

/// The workloads of ACE's sequence length `len` (1 or 2), in its order: operations, then
/// parameters, then persistence calls.
pub(crate) fn generate(len: usize) -> Vec<Workload> {
    let params = parameters();
    let mut skeletons: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..len {
        skeletons =
            skeletons.into_iter().flat_map(|s| (0..params.len()).map(move |o| [s.clone(), vec![o]].concat())).collect();
    }
    let mut out = Vec::new();
    for skeleton in skeletons {
        let mut choices: Vec<Vec<Core>> = vec![Vec::new()];
        for &o in &skeleton {
            choices = choices
                .into_iter()
                .flat_map(|c| params[o].iter().map(move |p| [c.clone(), vec![*p]].concat()))
                .collect();
        }
        for cores in choices {
            let used: Vec<&'static str> = cores.iter().flat_map(Core::names).collect();
            let files = related(&used);
            let last_options: Vec<After> = files.iter().map(|&n| After::Fsync(n)).chain([After::Sync]).collect();
            let other_options: Vec<After> = last_options.iter().copied().chain([After::None]).collect();
            let mut syncs: Vec<Vec<After>> = vec![Vec::new()];
            for i in 0..len {
                let options = if i + 1 == len { &last_options } else { &other_options };
                syncs = syncs
                    .into_iter()
                    .flat_map(|s| options.iter().map(move |o| [s.clone(), vec![*o]].concat()))
                    .collect();
            }
            let mut seen: BTreeMap<String, usize> = BTreeMap::new();
            for sync in syncs {
                let mut d = Deps::new();
                let mut words = Vec::new();
                for (i, (&c, &s)) in cores.iter().zip(&sync).enumerate() {
                    let last = i + 1 == len;
                    d.core(c);
                    if c.persists_itself() {
                        d.out.push(Step::Checkpoint(last));
                        words.push(format!("{}.msync", c.word()));
                    } else {
                        d.persist(s, last);
                        words.push(format!("{}.{}", c.word(), s.word()));
                    }
                }
                // ACE writes an mmapwrite workload once per persistence option it then does
                // not use: the copies are numbered.
                let mut name = words.join("+");
                let n = seen.entry(name.clone()).or_insert(0);
                *n += 1;
                if *n > 1 {
                    name = format!("{name}.{n}");
                }
                out.push(Workload { name, steps: d.finish() });
            }
        }
    }
    out
}

/// The data the workload writes at `off` of file `name`: never zero, differs per file.
fn data(name: &str, off: u64, len: u64) -> Vec<u8> {
    let seed = NAMES.iter().position(|(n, _)| *n == name).unwrap_or(0) as u64 + 11;
    let whole = pattern((off + len) as usize, seed);
    whole[off as usize..].to_vec()
}

/// How the persistence calls reach the file: through the descriptor the workload opened
/// (`same`, as ACE does) or through a new one opened for the call (`new`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Descriptor {
    Same,
    New,
}

/// What one part of a workload (up to a checkpoint) did: the model before and after it, what
/// it changed, and what its persistence call promises.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub promise: super::seq::Promise,
    pub before: Model,
    pub after: Model,
    pub changes: Changes,
}

/// What running a workload made.
#[derive(Debug, Default)]
pub(crate) struct Ran {
    /// One per checkpoint.
    pub parts: Vec<Part>,
    /// The namespace after every step that changed it, for the strict level.
    pub models: Vec<Model>,
}

/// An error of step `step` (its j-lang line).
#[derive(Debug)]
pub(crate) struct StepError {
    pub step: String,
    pub error: io::Error,
}

/// Runs `w` under `root` and on a model, calling `mark(k)` at its k-th checkpoint.
pub(crate) fn run(
    root: &Path,
    w: &Workload,
    descriptor: Descriptor,
    global_sync: bool,
    mark: &mut dyn FnMut(u32) -> io::Result<()>,
) -> Result<Ran, StepError> {
    let mut open: BTreeMap<&str, File> = BTreeMap::new();
    // A name opened again keeps its old descriptor open until the workload ends, as in
    // CrashMonkey's generated test (it reassigns the variable).
    let mut leaked: Vec<File> = Vec::new();
    let mut m = Model::default();
    let mut ran = Ran { models: vec![m.clone()], ..Default::default() };
    let mut before = m.clone();
    let mut ch = Changes::default();
    let mut promise = super::seq::Promise::none();
    let at = |n: &str| root.join(path(n));
    for &step in &w.steps {
        let fail = |error: io::Error| StepError { step: step.to_string(), error };
        let names_before = m.names.len();
        let renamed = matches!(step, Step::Rename(..));
        let data_path = match step {
            Step::Write(f, ..)
            | Step::DWrite(f, ..)
            | Step::MmapWrite(f, ..)
            | Step::Falloc(f, ..)
            | Step::Truncate(f, _) => Some(path(f)),
            _ => None,
        };
        let size_before = data_path.map_or(0, |p| m.size(p) as u64);
        match step {
            Step::Mkdir(d) => {
                std::fs::DirBuilder::new().mode(0o777).create(at(d)).map_err(fail)?;
                let mode = std::fs::symlink_metadata(at(d)).map_err(fail)?.mode() & 0o7777;
                m.add(path(d), Kind::Dir, Vec::new(), mode);
                ch.entries.push(split(path(d)));
            }
            Step::Open(f) => {
                let fresh = !m.names.contains_key(path(f));
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o777)
                    .open(at(f))
                    .map_err(fail)?;
                if fresh {
                    let mode = file.metadata().map_err(fail)?.mode() & 0o7777;
                    m.add(path(f), Kind::File, Vec::new(), mode);
                    ch.entries.push(split(path(f)));
                }
                if let Some(old) = open.insert(f, file) {
                    leaked.push(old);
                }
            }
            Step::OpenDir(d) => {
                let file = OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(at(d)).map_err(fail)?;
                if let Some(old) = open.insert(d, file) {
                    leaked.push(old);
                }
            }
            Step::Close(n) => {
                open.remove(n).ok_or_else(|| fail(io::Error::from_raw_os_error(libc::EBADF)))?;
            }
            Step::Write(f, off, len) => {
                let off = u64::try_from(off).map_err(|_| fail(io::Error::from_raw_os_error(libc::EINVAL)))?;
                let file = open.get(f).ok_or_else(|| fail(io::Error::from_raw_os_error(libc::EBADF)))?;
                let d = data(f, off, len);
                file.write_all_at(&d, off).map_err(fail)?;
                m.write(path(f), off as usize, &d);
                ch.data.push(m.ino(path(f)));
            }
            Step::DWrite(f, off, len) => {
                let off = u64::try_from(off).map_err(|_| fail(io::Error::from_raw_os_error(libc::EINVAL)))?;
                open.remove(f);
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(libc::O_DIRECT | libc::O_SYNC)
                    .open(at(f))
                    .map_err(fail)?;
                let d = data(f, off, len);
                let mut buf = vec![0u8; len as usize + 4096];
                let skew = buf.as_ptr().align_offset(4096);
                buf[skew..skew + len as usize].copy_from_slice(&d);
                file.write_all_at(&buf[skew..skew + len as usize], off).map_err(fail)?;
                m.write(path(f), off as usize, &d);
                ch.data.push(m.ino(path(f)));
            }
            Step::MmapWrite(f, off, len) => {
                let off = u64::try_from(off).map_err(|_| fail(io::Error::from_raw_os_error(libc::EINVAL)))?;
                let file = open.get(f).ok_or_else(|| fail(io::Error::from_raw_os_error(libc::EBADF)))?;
                fallocate(file, 0, off, len).map_err(fail)?;
                m.extend(path(f), (off + len) as usize);
                let d = data(f, off, len);
                mmap_write(file, off, &d).map_err(fail)?;
                m.write(path(f), off as usize, &d);
                ch.data.push(m.ino(path(f)));
                promise = super::seq::Promise::msync(path(f), off, MSYNC_LEN.min(len));
            }
            Step::Falloc(f, mode, off, len) => {
                let off = u64::try_from(off).map_err(|_| fail(io::Error::from_raw_os_error(libc::EINVAL)))?;
                let file = open.get(f).ok_or_else(|| fail(io::Error::from_raw_os_error(libc::EBADF)))?;
                fallocate(file, mode.flags(), off, len).map_err(fail)?;
                let end = (off + len) as usize;
                let size = m.size(path(f));
                if !mode.keeps_size() {
                    m.extend(path(f), end);
                }
                if matches!(mode, Mode::ZeroRange | Mode::ZeroRangeKeepSize | Mode::PunchHoleKeepSize) {
                    let stop = end.min(if mode.keeps_size() { size } else { end });
                    if stop > off as usize {
                        m.write(path(f), off as usize, &vec![0u8; stop - off as usize]);
                    }
                }
                ch.data.push(m.ino(path(f)));
            }
            Step::Truncate(f, len) => {
                File::options().write(true).open(at(f)).and_then(|h| h.set_len(len)).map_err(fail)?;
                m.truncate(path(f), len as usize);
                ch.data.push(m.ino(path(f)));
            }
            Step::Link(a, b) => {
                std::fs::hard_link(at(a), at(b)).map_err(fail)?;
                let ino = m.ino(path(a));
                m.names.insert(path(b).to_string(), ino);
                ch.entries.push(split(path(b)));
                ch.meta.push(ino);
            }
            Step::Unlink(f) | Step::Remove(f) => {
                std::fs::remove_file(at(f)).map_err(fail)?;
                ch.meta.push(m.ino(path(f)));
                m.names.remove(path(f));
                ch.entries.push(split(path(f)));
            }
            Step::Rmdir(d) => {
                std::fs::remove_dir(at(d)).map_err(fail)?;
                m.names.remove(path(d));
                ch.entries.push(split(path(d)));
            }
            Step::Rename(a, b) => {
                std::fs::rename(at(a), at(b)).map_err(fail)?;
                if let Some(&old) = m.names.get(path(b)) {
                    ch.meta.push(old);
                }
                m.rename(path(a), path(b));
                ch.entries.push(split(path(a)));
                ch.entries.push(split(path(b)));
                promise.rename = Some((path(a).to_string(), path(b).to_string()));
            }
            Step::Fsetxattr(f) => {
                let file = open.get(f).ok_or_else(|| fail(io::Error::from_raw_os_error(libc::EBADF)))?;
                rustix::fs::fsetxattr(file, "user.xattr1", b"val1", rustix::fs::XattrFlags::empty())
                    .map_err(|e| fail(e.into()))?;
                if let Some(i) = m.file(path(f)) {
                    i.xattrs.insert("user.xattr1".into(), b"val1".to_vec());
                }
                ch.meta.push(m.ino(path(f)));
            }
            Step::Removexattr(f) => {
                rustix::fs::lremovexattr(at(f), "user.xattr1").map_err(|e| fail(e.into()))?;
                if let Some(i) = m.file(path(f)) {
                    i.xattrs.remove("user.xattr1");
                }
                ch.meta.push(m.ino(path(f)));
            }
            Step::Fsync(n) => {
                let fresh;
                let file = match descriptor {
                    Descriptor::Same => open.get(n),
                    Descriptor::New => {
                        let mut o = OpenOptions::new();
                        o.read(true);
                        if is_dir(n) {
                            o.custom_flags(libc::O_DIRECTORY);
                        } else {
                            o.write(true);
                        }
                        fresh = o.open(at(n)).map_err(fail)?;
                        Some(&fresh)
                    }
                };
                // ACE syncs names it never opened (A/C/foo, B/foo): its test fails there.
                let file = file.ok_or_else(|| fail(io::Error::from_raw_os_error(libc::EBADF)))?;
                file.sync_all().map_err(fail)?;
                if !is_dir(n) {
                    note_allocated(&mut m, root, Some((path(n), file)));
                }
                let rename = promise.rename.take();
                promise = super::seq::Promise::fsync(path(n), is_dir(n));
                promise.rename = rename;
            }
            Step::Sync => {
                if global_sync {
                    // SAFETY: no arguments.
                    unsafe { libc::sync() };
                } else {
                    super::seq::sync_fs(root).map_err(fail)?;
                }
                note_allocated(&mut m, root, None);
                let rename = promise.rename.take();
                promise = super::seq::Promise::sync();
                promise.rename = rename;
            }
            Step::None => {}
            Step::Checkpoint(_) => {
                mark(ran.parts.len() as u32 + 1).map_err(fail)?;
                ran.parts.push(Part {
                    promise: std::mem::replace(&mut promise, super::seq::Promise::none()),
                    before: std::mem::replace(&mut before, m.clone()),
                    after: m.clone(),
                    changes: std::mem::take(&mut ch),
                });
            }
        }
        if let Some(p) = data_path {
            track_prealloc(&mut m, p, step, size_before);
        }
        if m.names.len() != names_before || renamed {
            ran.models.push(m.clone());
        }
    }
    drop(open);
    drop(leaked);
    Ok(ran)
}

/// The model's record of what a fallocate or truncate did to the blocks past the end of the
/// file (see [`super::seq::Inode::prealloc`]), after `m`'s data was updated for it.
fn track_prealloc(m: &mut Model, path: &str, step: Step, size_before: u64) {
    let Some(i) = m.file(path) else { return };
    let size = i.data.len() as u64;
    match step {
        Step::Falloc(_, Mode::KeepSize | Mode::ZeroRangeKeepSize, off, len) => {
            let off = off.max(0) as u64;
            let first = off.max(size_before).div_ceil(1024);
            i.prealloc.extend(first..(off + len) / 1024);
        }
        Step::Falloc(_, Mode::PunchHoleKeepSize, off, len) => {
            let off = off.max(0) as u64;
            let (first, end) = (off.div_ceil(1024), (off + len) / 1024);
            i.prealloc.retain(|k| *k < first || *k >= end);
        }
        _ => {}
    }
    // Blocks now inside the file (it grew over them) count with its data; a truncate frees
    // those past its new end.
    i.prealloc.retain(|k| *k >= size.div_ceil(1024));
    if matches!(step, Step::Truncate(..)) {
        i.prealloc.clear();
    }
}

/// Records what each file with blocks past its end shows allocated now, at a persistence
/// call: `file` alone (its descriptor), or every such file (a sync).
fn note_allocated(m: &mut Model, root: &Path, file: Option<(&str, &File)>) {
    let paths: Vec<String> = match file {
        Some((p, _)) => vec![p.to_string()],
        None => m.names.iter().filter(|(_, &i)| !m.inodes[i].prealloc.is_empty()).map(|(p, _)| p.clone()).collect(),
    };
    for p in paths {
        let blocks = match file {
            Some((_, f)) => f.metadata().map(|md| md.blocks()),
            None => std::fs::symlink_metadata(root.join(&p)).map(|md| md.blocks()),
        };
        if let (Some(i), Ok(b)) = (m.file(&p), blocks) {
            if !i.prealloc.is_empty() {
                i.allocated = b * 512;
            }
        }
    }
}

/// CrashMonkey's mmapwrite: the file mapped shared from 0 to the range's end, the range
/// written, then msync(MS_SYNC) of the range's first 8 KiB.
fn mmap_write(file: &File, off: u64, data: &[u8]) -> io::Result<()> {
    let off = off as usize;
    super::seq::map_write(file, off + data.len(), off, data, off..off + (MSYNC_LEN as usize).min(data.len()))
}

/// The bytes ACE's mmapwrite syncs, from the start of its range.
const MSYNC_LEN: u64 = 8192;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn lines(w: &Workload) -> String {
        w.steps.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    }

    fn find<'a>(all: &'a [Workload], name: &str) -> &'a Workload {
        all.iter().find(|w| w.name == name).unwrap_or_else(|| panic!("no workload {name}"))
    }

    #[test]
    fn seq1_has_aces_count_and_its_workloads_step_for_step() {
        let all = generate(1);
        // `python3 ace.py -l 1 -n False -d False` at utsaslab/crashmonkey's head writes 435.
        assert_eq!(all.len(), 435);
        let names: std::collections::BTreeSet<&str> = all.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names.len(), 435, "names are unique");
        // As ACE writes them (its j-lang `# run` sections).
        for (name, jlang) in [
            ("creat.foo.fsync_bar", "open foo O_RDWR|O_CREAT 0777; open bar O_RDWR|O_CREAT 0777; fsync bar; checkpoint 1; close foo; close bar"),
            ("mkdir.A.fsync_B", "mkdir A 0777; mkdir B 0777; opendir B 0777; fsync B; checkpoint 1; close B"),
            ("falloc.foo.zero_range.overlap_extend.fsync_test", "open foo O_RDWR|O_CREAT 0777; write foo 0 32768; falloc foo FALLOC_FL_ZERO_RANGE 30768 5000; opendir test 0777; fsync test; checkpoint 1; close foo; close test"),
            ("falloc.Afoo.0.append.sync", "mkdir A 0777; open Afoo O_RDWR|O_CREAT 0777; write Afoo 0 32768; falloc Afoo 0 32768 32768; sync; checkpoint 1; close Afoo"),
            ("dwrite.foo.overlap_start.fsync_foo", "open foo O_RDWR|O_CREAT 0777; write foo 0 32768; dwrite foo 0 8192; open foo O_RDWR|O_CREAT 0777; fsync foo; checkpoint 1; close foo"),
            ("mmapwrite.foo.append.msync.4", "open foo O_RDWR|O_CREAT 0777; write foo 0 32768; mmapwrite foo 32768 32768; checkpoint 1; close foo"),
            ("link.Afoo.ACbar.fsync_ACfoo", "mkdir A 0777; mkdir AC 0777; open Afoo O_RDWR|O_CREAT 0777; link Afoo ACbar; fsync ACfoo; checkpoint 1; close Afoo"),
            ("unlink.ACbar.fsync_ACbar", "mkdir A 0777; mkdir AC 0777; open ACbar O_RDWR|O_CREAT 0777; close ACbar; unlink ACbar; open ACbar O_RDWR|O_CREAT 0777; fsync ACbar; checkpoint 1; close ACbar"),
            ("rename.A.B.fsync_A", "mkdir A 0777; opendir A 0777; close A; rename A B; mkdir A 0777; opendir A 0777; fsync A; checkpoint 1; close A"),
            ("removexattr.Afoo.fsync_Abar", "mkdir A 0777; open Afoo O_RDWR|O_CREAT 0777; fsetxattr Afoo; removexattr Afoo; open Abar O_RDWR|O_CREAT 0777; fsync Abar; checkpoint 1; close Afoo; close Abar"),
            ("truncate.foo.unaligned.fsync_bar", "open foo O_RDWR|O_CREAT 0777; write foo 0 32768; truncate foo 2500; open bar O_RDWR|O_CREAT 0777; fsync bar; checkpoint 1; close foo; close bar"),
        ] {
            assert_eq!(lines(find(&all, name)), jlang, "{name}");
        }
        // Per operation, as ACE's log counts them.
        let count = |op: &str| all.iter().filter(|w| w.name.starts_with(&format!("{op}."))).count();
        assert_eq!(
            [
                "creat",
                "mkdir",
                "falloc",
                "write",
                "dwrite",
                "mmapwrite",
                "link",
                "unlink",
                "remove",
                "rename",
                "fsetxattr",
                "removexattr",
                "truncate"
            ]
            .map(count),
            [8, 4, 120, 24, 16, 16, 78, 20, 20, 97, 8, 8, 16]
        );
    }

    /// Runs workload `name` of seq-1 in a new directory, unrecorded.
    fn ran(name: &str) -> (std::path::PathBuf, Ran) {
        let dir = std::env::temp_dir().join(format!("fsarena-ace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let all = generate(1);
        let r = run(&dir, find(&all, name), Descriptor::Same, false, &mut |_| Ok(())).unwrap();
        (dir, r)
    }

    fn violations(dir: &Path, r: &Ran) -> Vec<super::super::oracle::Violation> {
        let chain: Vec<_> = r.parts.iter().map(|p| (p.promise.clone(), &p.before, &p.after, &p.changes)).collect();
        super::super::oracle::check_chain(dir, &chain, &[0, 1], false)
    }

    #[test]
    fn blocks_a_keep_size_fallocate_made_are_promised_with_the_fsync() {
        let (dir, r) = ran("falloc.foo.keep_size.append.fsync_foo");
        let foo = &r.parts[0].after.inodes[r.parts[0].after.ino("foo")];
        assert_eq!((foo.data.len(), foo.prealloc.len()), (32768, 32), "32 KiB past the end");
        assert_eq!(violations(&dir, &r), Vec::new());
        // The same bytes without the allocation past the end: the blocks are lost.
        let data = std::fs::read(dir.join("foo")).unwrap();
        std::fs::remove_file(dir.join("foo")).unwrap();
        std::fs::write(dir.join("foo"), &data).unwrap();
        std::fs::set_permissions(dir.join("foo"), std::os::unix::fs::PermissionsExt::from_mode(foo.mode)).unwrap();
        let v = violations(&dir, &r);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].level, "linux");
        assert!(v[0].promised.starts_with("foo: at least 64 KiB allocated"), "{v:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_new_file_renamed_and_lost_with_its_name_breaks_no_promise_of_a_sibling_fsync() {
        // open foo, close, rename foo A/bar, then fsync of bar (a new file made for it): foo
        // was never durable, so neither foo nor A/bar is promised.
        let (dir, r) = ran("rename.foo.Abar.fsync_bar");
        assert_eq!(violations(&dir, &r), Vec::new());
        std::fs::remove_file(dir.join("A/bar")).unwrap();
        assert_eq!(violations(&dir, &r), Vec::new());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_rename_between_two_names_of_one_file_does_nothing_and_a_name_made_again_stays() {
        // link A/bar bar, then rename bar A/bar: rename(2) does nothing, both names stay.
        let dir = std::env::temp_dir().join(format!("fsarena-ace-seq2-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let all = generate(2);
        let w = find(&all, "link.Abar.bar.none+rename.bar.Abar.sync");
        let r = run(&dir, w, Descriptor::Same, false, &mut |_| Ok(())).unwrap();
        let m = &r.parts[0].after;
        assert_eq!(m.names.get("bar"), m.names.get("A/bar"));
        assert_eq!(m.nlink(m.ino("bar")), 2);
        assert_eq!(violations(&dir, &r), Vec::new());
        std::fs::remove_dir_all(&dir).unwrap();
        // rename A/foo A/bar, then A/foo made again and fsync of A/bar: A/foo is not
        // promised gone.
        std::fs::create_dir_all(&dir).unwrap();
        let w = find(&all, "rename.Afoo.Abar.none+falloc.Afoo.zero_range_keep_size.overlap_unaligned_start.fsync_Abar");
        let r = run(&dir, w, Descriptor::Same, false, &mut |_| Ok(())).unwrap();
        assert_eq!(violations(&dir, &r), Vec::new());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_msync_promises_the_range_it_synced_of_a_durable_file_and_nothing_past_it() {
        let dir = std::env::temp_dir().join(format!("fsarena-ace-msync-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let all = generate(2);
        // creat foo, sync, then 32 KiB written, and 32 KiB appended through a mapping, the
        // first 8 KiB of those msync'd.
        let w = find(&all, "creat.foo.sync+mmapwrite.foo.append.msync");
        let r = run(&dir, w, Descriptor::Same, false, &mut |_| Ok(())).unwrap();
        assert_eq!(r.parts[1].promise.range, Some((32768, 8192)));
        let check = || {
            let chain: Vec<_> = r.parts.iter().map(|p| (p.promise.clone(), &p.before, &p.after, &p.changes)).collect();
            super::super::oracle::check_chain(&dir, &chain, &[0, 1, 2], false)
        };
        assert_eq!(check(), Vec::new());
        let foo = dir.join("foo");
        let f = std::fs::OpenOptions::new().write(true).open(&foo).unwrap();
        // Past the synced range: nothing promised.
        f.write_all_at(b"x", 32768 + 8192).unwrap();
        f.write_all_at(b"x", 0).unwrap();
        assert_eq!(check(), Vec::new());
        // Inside it: the promise broken, Linux's, as foo itself is durable by the sync alone.
        f.write_all_at(b"x", 32768 + 8191).unwrap();
        let v = check();
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].level, "linux");
        assert!(v[0].promised.starts_with("foo: bytes 40959.. ") && v[0].promised.contains("(msync)"), "{v:?}");
        // Cut short.
        f.set_len(36864).unwrap();
        let v = check();
        assert_eq!((v.len(), v[0].found.as_str()), (1, "size 36864"), "{v:?}");
        std::fs::remove_dir_all(&dir).unwrap();
        // A file made in the run: its name is not promised, nor its bytes.
        std::fs::create_dir_all(&dir).unwrap();
        let (dir, r) = ran("mmapwrite.foo.append.msync");
        std::fs::remove_file(dir.join("foo")).unwrap();
        assert_eq!(violations(&dir, &r), Vec::new());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn seq2_pairs_every_operation_with_a_persistence_call_or_none_between() {
        let all = generate(2);
        let w = find(&all, "write.foo.append.none+link.foo.bar.fsync_foo");
        assert_eq!(
            lines(w),
            "open foo O_RDWR|O_CREAT 0777; write foo 0 32768; none; link foo bar; fsync foo; checkpoint 1; close foo"
        );
        let w = find(&all, "write.foo.append.sync+falloc.foo.zero_range_keep_size.append.fsync_foo");
        assert_eq!(
            lines(w),
            "open foo O_RDWR|O_CREAT 0777; write foo 0 32768; sync; checkpoint 0; falloc foo FALLOC_FL_ZERO_RANGE|FALLOC_FL_KEEP_SIZE 32768 32768; fsync foo; checkpoint 1; close foo"
        );
        assert!(all.len() > 100_000, "{}", all.len());
    }
}
