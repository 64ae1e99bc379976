//! The oracle: from the model at each mark and what each persistence call promised, what a
//! crash image must hold; and the check of a recovered image against it. Cumulative: what
//! the setup's `sync()` made durable is checked in every later state, except the objects the
//! operation changed since (they may be old, new or anything between until a promise covers
//! them again). Timestamps are never compared. Every read of the recovered state goes through
//! [`super::walk`]: beneath its root, no link followed, nothing blocking, reads capped at what
//! the workload wrote there (a daemon claiming gigabyte files costs nothing).
//!
//! Levels: **posix** — `fsync(f)`: f's content, size, mode, link count and xattrs;
//! `fdatasync(f)`: content and size; `msync(MS_SYNC)` of a range of f's shared mapping (ACE's
//! mmapwrite): those bytes, f at least that long; `fsync(dir)`: its entries; a renamed durable name: the
//! old or the new one exists, and only the new one once a mark covers the rename (sync, or
//! fsync of the renamed object). **linux** — what ext4, xfs and btrfs and Linux's calls do
//! beyond POSIX: a file fsynced keeps its name without an fsync of its directory (fdatasync
//! is not held to it: ext4 commits no rename for it); the set-up's and the sync point's
//! `syncfs()` or `sync()`: everything (POSIX's sync() only schedules; see [`check_chain`]).

#[cfg(test)]
use super::seq::Case;
use super::seq::{split, Changes, Kind, Model, Persist, Promise};
use super::walk;
use fsarena_target::beneath::{kind_words, HeldDir};
use rustix::fs::FileType;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What a file must hold.
#[derive(Debug, Clone, Default)]
struct FileExpect {
    data: Option<Vec<u8>>,
    meta: Option<(u32, u64, BTreeMap<String, Vec<u8>>)>,
    /// Bytes allocated at least ([`super::seq::Inode::min_allocated`]), with the data.
    allocated: Option<u64>,
    /// These bytes at this offset (an msync'd range), the file at least that long.
    range: Option<(u64, Vec<u8>)>,
}

/// An entry's expected kind and symlink target.
#[derive(Debug, Clone)]
struct EntryExpect {
    kind: Kind,
    target: String,
}

/// What a crash state must hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expect {
    /// `(dir, name)`: Some: exists as; None: must not exist.
    entries: BTreeMap<(String, String), Option<EntryExpect>>,
    /// Entries the operation changed and no promise covers: anything goes.
    flux: BTreeSet<(String, String)>,
    /// Directories whose other entries are all known.
    dirs: BTreeSet<String>,
    files: BTreeMap<String, FileExpect>,
    /// A rename not yet covered: one of the two paths exists.
    either: Vec<(String, String)>,
    /// Linux level: these paths exist and hold this.
    linux: Vec<(String, FileExpect)>,
}

/// One broken promise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// `posix`, `linux` or `strict`.
    pub level: &'static str,
    /// What was promised.
    pub promised: String,
    /// What the image holds.
    pub found: String,
}

/// Names a filesystem keeps in its root for itself.
const OWN_NAMES: &[&str] = &["lost+found"];

fn stable(path: &str, flux: &BTreeSet<(String, String)>) -> bool {
    let mut p = path.to_string();
    while !p.is_empty() {
        let (d, n) = split(&p);
        if flux.contains(&(d.clone(), n)) {
            return false;
        }
        p = d;
    }
    true
}

fn file_expect(m: &Model, ino: usize, data: bool, meta: bool) -> FileExpect {
    let i = &m.inodes[ino];
    FileExpect {
        data: data.then(|| i.data.clone()),
        meta: meta.then(|| (i.mode, m.nlink(ino), i.xattrs.clone())),
        allocated: i.min_allocated().filter(|_| data),
        range: None,
    }
}

impl Expect {
    /// Everything in `m`, less what `ch` changed.
    fn snapshot(m: &Model, ch: &Changes) -> Self {
        let mut e = Expect { flux: ch.entries.iter().cloned().collect(), ..Default::default() };
        for (path, &ino) in &m.names {
            let key = split(path);
            if !e.flux.contains(&key) {
                let i = &m.inodes[ino];
                e.entries.insert(key, Some(EntryExpect { kind: i.kind, target: i.target.clone() }));
            }
        }
        e.dirs = m.dirs().into_iter().collect();
        for (path, &ino) in &m.names {
            if m.inodes[ino].kind == Kind::File && stable(path, &e.flux) {
                let fe = file_expect(m, ino, !ch.data.contains(&ino), !ch.meta.contains(&ino));
                e.files.insert(path.clone(), fe);
            }
        }
        e
    }

    /// What `ch` changed (an operation run on `before`) made unknown: its entries in flux,
    /// the files under them and the changed files' data and metadata no longer expected.
    fn flux_changes(&mut self, ch: &Changes, before: &Model) {
        for key in &ch.entries {
            self.entries.remove(key);
            self.flux.insert(key.clone());
        }
        let flux = self.flux.clone();
        self.files.retain(|p, _| stable(p, &flux));
        let changed = |p: &str| before.names.get(p).is_some_and(|i| ch.data.contains(i) || ch.meta.contains(i));
        for (path, &ino) in &before.names {
            if let Some(fe) = self.files.get_mut(path) {
                if ch.data.contains(&ino) {
                    fe.data = None;
                    fe.allocated = None;
                    fe.range = None;
                }
                if ch.meta.contains(&ino) {
                    fe.meta = None;
                }
            }
        }
        self.linux.retain(|(p, _)| stable(p, &flux) && !changed(p));
    }

    /// Directory `dir`'s entries as in `m`, names gone from it since `before` absent.
    fn promise_dir(&mut self, dir: &str, m: &Model, before: &Model) {
        for (name, ino) in m.listing(dir) {
            let key = (dir.to_string(), name);
            self.flux.remove(&key);
            let i = &m.inodes[ino];
            self.entries.insert(key, Some(EntryExpect { kind: i.kind, target: i.target.clone() }));
        }
        for name in before.listing(dir).keys() {
            if !m.names.contains_key(&join(dir, name)) {
                let key = (dir.to_string(), name.clone());
                self.flux.remove(&key);
                self.entries.insert(key, None);
            }
        }
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// What a state must hold when the marks `marks` (0: the setup's sync, 1: the operation's
/// persistence call) must have been kept, for one operation: the chain of one.
#[cfg(test)]
pub(crate) fn expect(case: &Case, before: &Model, after: &Model, ch: &Changes, marks: &[u32]) -> Option<Expect> {
    expect_chain(&[(case.promise(), before, after, ch)], marks)
}

/// Marks a promise that only a syncfs() or sync() made: Linux's (see [`check_chain`]).
pub(crate) const BY_SYNC: &str = " (by syncfs)";

/// What [`BY_SYNC`] means, said once in a finding.
pub(crate) const BY_SYNC_RULE: &str = "(by syncfs): made durable by the set-up's or the sync point's syncfs() or sync() alone, Linux's promise: POSIX's sync() only schedules the writes, Linux's sync(2) waits for them";

/// Marks a promise about a file fsynced under a name no fsync of its directory covered:
/// Linux's (see [`check`]).
pub(crate) const BY_FSYNC_NAME: &str = " (fsynced under a new name)";

/// What [`BY_FSYNC_NAME`] means, said once in a finding.
pub(crate) const BY_FSYNC_NAME_RULE: &str = "(fsynced under a new name): an fsync of a file makes its name durable with it on ext4, xfs and btrfs, and CrashMonkey checks it; POSIX promises a new name only with an fsync of its directory";

/// Marks a promise about the blocks a fallocate with `KEEP_SIZE` allocated.
pub(crate) const BY_ALLOCATION: &str = " (fallocate KEEP_SIZE, persisted)";

/// What [`BY_ALLOCATION`] means, said once in a finding.
pub(crate) const BY_ALLOCATION_RULE: &str = "(fallocate KEEP_SIZE, persisted): fallocate(2) allocates the blocks past the end of the file and the persistence call after it makes them durable, so the crash state's st_blocks covers them (CrashMonkey's block-count check; btrfs once lost them after an fsync)";

/// Which calls a set of promises comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Made {
    /// Every call: fsync, fdatasync, fsync of a directory, and the set-up's and the sync
    /// point's syncfs() (or sync()).
    All,
    /// POSIX's own promises alone: fsync, fdatasync and fsync of a directory (and the set-up
    /// when it was made durable by them, on a FUSE filesystem).
    Posix { setup_by_fsync: bool },
}

/// Every broken promise of a chain at a state that must keep `marks`, each at the level of
/// the rule that makes it: **posix** when POSIX's fsync or fdatasync makes it, **linux**
/// when only the set-up's or the sync point's syncfs() or sync() does. syncfs(2) is Linux's
/// own call, and POSIX's sync() only schedules the writes ("the writing, although scheduled,
/// is not necessarily complete upon return from sync()"); Linux's sync(2) waits for them
/// ("sync() ... provides the same guarantees as fsync() called on every file"). Checked twice:
/// against every promise, and against POSIX's alone; a violation of the first that the
/// second does not find is Linux's.
pub(crate) fn check_chain(
    root: &Path,
    steps: &[(Promise, &Model, &Model, &Changes)],
    marks: &[u32],
    setup_by_fsync: bool,
) -> Vec<Violation> {
    let Some(all) = expect_made(steps, marks, Made::All) else { return Vec::new() };
    let posix_only = expect_made(steps, marks, Made::Posix { setup_by_fsync });
    let mut out: Vec<Violation> =
        posix_only.map(|e| check(root, &e)).unwrap_or_default().into_iter().filter(|v| v.level == "posix").collect();
    for v in check(root, &all) {
        if out.iter().any(|p| p.promised == v.promised && p.found == v.found) {
            continue;
        }
        if v.level == "posix" {
            let promised = format!("{}{BY_SYNC}", v.promised);
            out.push(Violation { level: "linux", promised, found: v.found });
        } else {
            out.push(v);
        }
    }
    out
}

/// What a chain of operations (seq2: `steps` = each case with its models before and after
/// and its changes) promises at a state that must keep `marks` (0: the setup, k: step k's
/// persistence call). Cumulative: the setup's snapshot, then for each promised step its
/// changes made unknown and its persistence call's promise applied; the changes of the steps
/// not yet promised stay unknown (old, new or anything between).
#[cfg(test)]
pub(crate) fn expect_chain(steps: &[(Promise, &Model, &Model, &Changes)], marks: &[u32]) -> Option<Expect> {
    expect_made(steps, marks, Made::All)
}

/// [`expect_chain`] with the promises of the calls `made` says.
fn expect_made(steps: &[(Promise, &Model, &Model, &Changes)], marks: &[u32], made: Made) -> Option<Expect> {
    if !marks.contains(&0) {
        return None;
    }
    let promised = marks.iter().copied().max().unwrap_or(0) as usize;
    let (_, setup, _, _) = steps.first()?;
    let mut e = match made {
        Made::All | Made::Posix { setup_by_fsync: true } => Expect::snapshot(setup, &Changes::default()),
        // The set-up made durable by syncfs(): nothing of it is POSIX's promise.
        Made::Posix { setup_by_fsync: false } => Expect::default(),
    };
    for (i, (case, before, after, ch)) in steps.iter().enumerate() {
        let durable_from =
            case.rename.clone().filter(|(from, _)| e.entries.get(&split(from)).is_some_and(Option::is_some));
        e.flux_changes(ch, before);
        if i < promised {
            e = promise(e, case, before, after, made, durable_from.is_some());
        } else if let Some((from, to)) = durable_from {
            // A rename of a durable name, not yet promised: the old or the new name.
            e.either.push((from, to));
        }
    }
    Some(e)
}

/// `e` (what was durable before the operation, its changes unknown) with the promise of
/// `case`'s persistence call applied; `durable_from`: the step renamed a durable name.
fn promise(mut e: Expect, case: &Promise, before: &Model, after: &Model, made: Made, durable_from: bool) -> Expect {
    if case.persist == Persist::Sync {
        return match made {
            Made::All => Expect::snapshot(after, &Changes::default()),
            Made::Posix { .. } => e,
        };
    }
    // An fsync of the renamed object itself covers the rename.
    let covered = case.persist == Persist::Fsync
        && case.rename.as_ref().is_some_and(|(_, to)| case.subject.as_deref() == Some(to.as_str()));
    match (case.persist, case.subject.as_deref()) {
        (Persist::FsyncParent, _) => e.promise_dir(&case.parent, after, before),
        (Persist::Fsync, Some(s)) if case.dir => e.promise_dir(s, after, before),
        (Persist::Fsync | Persist::Fdatasync, Some(s)) => {
            if let Some(&ino) = after.names.get(s) {
                let fe = file_expect(after, ino, true, case.persist == Persist::Fsync);
                if let Some((from, to)) = case.rename.as_ref().filter(|_| covered) {
                    // The rename's two names only: the step's other name operations (an
                    // ACE workload's directories made before it) are not covered.
                    let (from, to) = (split(from), split(to));
                    e.flux.retain(|k| *k != from && *k != to);
                }
                if stable(s, &e.flux) {
                    e.files.insert(s.to_string(), fe);
                } else if case.persist == Persist::Fsync {
                    // fdatasync promises the name nowhere: ext4 does not commit a rename
                    // for it (the data did not change), and no filesystem documents it.
                    e.linux.push((s.to_string(), fe));
                }
            }
        }
        (Persist::Msync, Some(s)) => {
            // Like fdatasync, for the range: no promise about the name.
            if let (Some(&ino), Some((at, len)), true) = (after.names.get(s), case.range, stable(s, &e.flux)) {
                let data = &after.inodes[ino].data;
                let end = ((at + len) as usize).min(data.len());
                let bytes = data.get(at as usize..end).unwrap_or_default().to_vec();
                e.files.entry(s.to_string()).or_default().range = Some((at, bytes));
            }
        }
        _ => {}
    }
    if let Some((from, to)) = &case.rename {
        if covered {
            for (path, m) in [(from, before), (to, after)] {
                let key = split(path);
                if path == from && after.names.contains_key(from.as_str()) {
                    // The old name made again since (or a rename between two names of one
                    // file, which does nothing): not promised gone.
                    continue;
                }
                e.flux.remove(&key);
                let entry = m
                    .names
                    .get(path.as_str())
                    .filter(|_| path == to)
                    .map(|&i| EntryExpect { kind: m.inodes[i].kind, target: m.inodes[i].target.clone() });
                e.entries.insert(key, entry);
            }
        } else if durable_from {
            // A rename of a durable name that no call covered: the old or the new name. (A
            // name made since the last promise may be lost with its rename, as ACE's new
            // files are.)
            e.either.push((from.clone(), to.clone()));
        }
    }
    e
}

fn describe(kind: Kind, target: &str) -> String {
    match kind {
        Kind::Symlink => format!("a symlink to {target}"),
        k => format!("a {}", k.name()),
    }
}

/// What a type is in the model's words; Err: no kind the model knows (a FIFO, a device, a
/// socket), in words.
fn kind_of(t: FileType, mode: u32) -> Result<Kind, &'static str> {
    match t {
        FileType::Directory => Ok(Kind::Dir),
        FileType::Symlink => Ok(Kind::Symlink),
        FileType::RegularFile => Ok(Kind::File),
        _ => Err(kind_words(mode)),
    }
}

/// Compares a file with what was promised; None when it holds it.
fn compare_file(root: &HeldDir, path: &str, fe: &FileExpect) -> Option<(String, String)> {
    let rel = Path::new(path);
    if let Some(data) = &fe.data {
        let found = match walk::read_capped(root, rel, data.len() as u64) {
            Ok(Ok(d)) => d,
            Ok(Err(claimed)) => return Some((format!("{path}: size {}", data.len()), format!("size {claimed}"))),
            Err(e) => return Some((format!("{path}: {} bytes", data.len()), format!("cannot read it: {e}"))),
        };
        if found.len() != data.len() {
            let size =
                if found.len() > data.len() { format!("more than {}", data.len()) } else { found.len().to_string() };
            return Some((format!("{path}: size {}", data.len()), format!("size {size}")));
        }
        if let Some(at) = found.iter().zip(data).position(|(a, b)| a != b) {
            let end = (at + 8).min(data.len());
            return Some((
                format!("{path}: bytes {at}.. {:02x?}", &data[at..end]),
                format!("{:02x?} (the first difference)", &found[at..end]),
            ));
        }
    }
    if let Some((at, bytes)) = &fe.range {
        let end = at + bytes.len() as u64;
        let found = match walk::read_range(root, rel, *at, bytes.len() as u64) {
            Ok(d) => d,
            Err(e) => return Some((format!("{path}: bytes {at}..{end} (msync)"), format!("cannot read it: {e}"))),
        };
        if found.len() < bytes.len() {
            let size = at + found.len() as u64;
            return Some((format!("{path}: bytes {at}..{end} (msync)"), format!("size {size}")));
        }
        if let Some(i) = found.iter().zip(bytes).position(|(a, b)| a != b) {
            let stop = (i + 8).min(bytes.len());
            return Some((
                format!("{path}: bytes {}.. {:02x?} (msync)", at + i as u64, &bytes[i..stop]),
                format!("{:02x?} (the first difference)", &found[i..stop]),
            ));
        }
    }
    if let Some((mode, nlink, xattrs)) = &fe.meta {
        let st = match walk::stat(root, rel) {
            Ok(m) => m,
            Err(e) => return Some((format!("{path}: mode {mode:o}"), format!("cannot stat it: {e}"))),
        };
        let found_mode = st.st_mode & 0o7777;
        if found_mode != *mode {
            return Some((format!("{path}: mode {mode:o}"), format!("mode {found_mode:o}")));
        }
        if st.st_nlink != *nlink {
            return Some((format!("{path}: {nlink} link(s)"), format!("{} link(s)", st.st_nlink)));
        }
        match walk::xattrs(root, rel) {
            Ok(found) if found != *xattrs => {
                let names = |x: &BTreeMap<String, Vec<u8>>| x.keys().cloned().collect::<Vec<_>>().join(", ");
                return Some((format!("{path}: xattrs [{}]", names(xattrs)), format!("xattrs [{}]", names(&found))));
            }
            Err(e) => return Some((format!("{path}: xattrs"), format!("cannot list them: {e}"))),
            Ok(_) => {}
        }
    }
    None
}

/// Checks the recovered filesystem at `root` against `e`.
pub(crate) fn check(root: &Path, e: &Expect) -> Vec<Violation> {
    let mut out = Vec::new();
    let root = match walk::open_root(root) {
        Ok(r) => r,
        Err(err) => {
            let promised = "the recovered state's root is a directory".to_string();
            return vec![Violation { level: "posix", promised, found: format!("cannot open it: {err}") }];
        }
    };
    let root = &root;
    let mut posix = |promised: String, found: String| out.push(Violation { level: "posix", promised, found });
    let stat = |p: &str| walk::stat(root, Path::new(p));
    let is = |p: &str, t: FileType| stat(p).is_ok_and(|s| walk::file_type(&s) == t);
    for ((dir, name), want) in &e.entries {
        if !is(dir, FileType::Directory) {
            // Its own entry, in its parent, says what is wrong.
            continue;
        }
        let path = join(dir, name);
        match (want, stat(&path)) {
            (None, Ok(m)) => posix(format!("{path} removed"), format!("{path} is {}", kind_words(m.st_mode))),
            (Some(w), Err(_)) => posix(format!("{path}: {}", describe(w.kind, &w.target)), format!("no {path}")),
            (Some(w), Ok(m)) => match kind_of(walk::file_type(&m), m.st_mode) {
                Err(other) => posix(format!("{path}: {}", describe(w.kind, &w.target)), format!("{path} is {other}")),
                Ok(kind) => {
                    let target = match kind {
                        Kind::Symlink => walk::read_link(root, Path::new(&path)).unwrap_or_default(),
                        _ => String::new(),
                    };
                    if kind != w.kind || target != w.target {
                        posix(format!("{path}: {}", describe(w.kind, &w.target)), describe(kind, &target));
                    }
                }
            },
            (None, Err(_)) => {}
        }
    }
    for dir in &e.dirs {
        let listed = match walk::list(root, Path::new(dir), walk::MAX_NAMES) {
            Ok(l) => l,
            Err(err) if is(dir, FileType::Directory) => {
                posix(format!("the entries of /{dir}"), format!("cannot list them: {err}"));
                continue;
            }
            Err(_) => continue,
        };
        for (name, _) in listed {
            let name = name.to_string_lossy().into_owned();
            let key = (dir.clone(), name.clone());
            if dir.is_empty() && OWN_NAMES.contains(&name.as_str()) {
                continue;
            }
            if !e.entries.contains_key(&key) && !e.flux.contains(&key) {
                posix(
                    format!("no {} in {}", name, if dir.is_empty() { "/" } else { dir }),
                    format!("{} exists", join(dir, &name)),
                );
            }
        }
    }
    for (path, fe) in &e.files {
        if is(path, FileType::RegularFile) {
            if let Some((promised, found)) = compare_file(root, path, fe) {
                posix(promised, found);
            }
        }
    }
    for (old, new) in &e.either {
        if stat(old).is_err() && stat(new).is_err() {
            posix(format!("{old} or {new} (a rename of a durable name)"), "neither".into());
        }
    }
    // The allocation a fallocate with KEEP_SIZE made, kept by a persistence call: Linux's
    // (fallocate(2) is not POSIX's posix_fallocate, and st_blocks is no promise of POSIX).
    for (path, fe) in e.files.iter().chain(e.linux.iter().map(|(p, f)| (p, f))) {
        let Some(min) = fe.allocated else { continue };
        if let Some(st) = stat(path).ok().filter(|s| walk::file_type(s) == FileType::RegularFile) {
            let have = st.st_blocks as u64 * 512;
            if have < min {
                out.push(Violation {
                    level: "linux",
                    promised: format!("{path}: at least {} KiB allocated{BY_ALLOCATION}", min / 1024),
                    found: format!("{} KiB allocated (st_blocks {})", have / 1024, st.st_blocks),
                });
            }
        }
    }
    for (path, fe) in &e.linux {
        let found = match stat(path) {
            Err(_) => Some((format!("{path}: fsynced, keeps its name"), format!("no {path}"))),
            Ok(_) => compare_file(root, path, fe),
        };
        if let Some((promised, found)) = found {
            out.push(Violation { level: "linux", promised: format!("{promised}{BY_FSYNC_NAME}"), found });
        }
    }
    out
}

/// The namespace under `root`: every path (relative) with its kind; the filesystem's own
/// names in the root left out. None when it cannot be walked (a name that is not a
/// directory, file or link; more than [`walk::MAX_NAMES`] names).
fn namespace(root: &HeldDir) -> Result<BTreeSet<(String, &'static str)>, String> {
    let mut out = BTreeSet::new();
    for dir in walk::directories(root).map_err(|e| e.to_string())? {
        let listed = walk::list(root, &dir, walk::MAX_NAMES).map_err(|e| e.to_string())?;
        for (name, t) in listed {
            let name = name.to_string_lossy().into_owned();
            if dir.as_os_str().is_empty() && OWN_NAMES.contains(&name.as_str()) {
                continue;
            }
            let path = join(&dir.to_string_lossy(), &name);
            let kind = kind_of(t, 0).map_err(|_| format!("{path} is not a file, directory or symlink"))?;
            out.insert((path, kind.name()));
        }
    }
    Ok(out)
}

fn model_namespace(m: &Model) -> BTreeSet<(String, &'static str)> {
    m.names.iter().map(|(p, &i)| (p.clone(), m.inodes[i].kind.name())).collect()
}

/// The **strict** level: the recovered namespace is the one after some prefix of the
/// operations — the setup's, one by one, or the operation's — never a mix. Whether
/// filesystems owe this is disputed: a miss is a finding, not a bug.
#[cfg(test)]
pub(crate) fn check_strict(root: &Path, before: &Model, after: &Model) -> Option<Violation> {
    check_strict_chain(root, &[before, after])
}

/// The strict level for a chain: `models` are the setup's, then after each operation.
pub(crate) fn check_strict_chain(root: &Path, models: &[&Model]) -> Option<Violation> {
    let (before, after) = (*models.first()?, *models.last()?);
    let found = match walk::open_root(root).map_err(|e| e.to_string()).and_then(|r| namespace(&r)) {
        Ok(f) => f,
        Err(why) => {
            let promised = "a namespace the strict level can compare".to_string();
            return Some(Violation { level: "strict", promised, found: why });
        }
    };
    if models.iter().any(|m| found == model_namespace(m)) {
        return None;
    }
    // The setup's own operations are a prefix too: its names were made in inode order.
    let made = |k: usize| -> BTreeSet<(String, &'static str)> {
        before.names.iter().filter(|(_, &i)| i < k).map(|(p, &i)| (p.clone(), before.inodes[i].kind.name())).collect()
    };
    if (0..before.inodes.len()).any(|k| made(k) == found) {
        return None;
    }
    let show = |s: &BTreeSet<(String, &'static str)>| s.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", ");
    Some(Violation {
        level: "strict",
        promised: format!(
            "the namespace before the operation [{}] or after it [{}]",
            show(&model_namespace(before)),
            show(&model_namespace(after))
        ),
        found: format!("[{}]", show(&found)),
    })
}
