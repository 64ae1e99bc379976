//! The work directory: fsarena's own, trusted place for images, mount points, logs and state
//! files. It is used only when nobody but its owner (root) can change it or any directory
//! above it, because every later step (creating images, `cleanup` reading state files) relies
//! on that. One run at a time holds its lock; each run has a random id that names its state
//! file and everything it creates.

use crate::safefs::{self, Identity};
use crate::state::{Ledger, LedgerHandle, Resource};
use crate::TargetError;
use fsarena_core::{printable, InputError};
use rustix::fs::{self as rfs, FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// The name of the lock file inside the work directory.
pub(crate) const LOCK: &str = ".lock";
/// The name prefix of a held run's marker (`held-RUNID`, see [`Workdir::hold`]).
pub(crate) const HELD_PREFIX: &str = "held-";

/// A run's unique id: 64 random bits as 16 lowercase hex digits. It names the state file and
/// everything the run creates, so a later run (even one with the same PID in another PID
/// namespace) never collides with a killed run's leftovers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunId(String);

impl RunId {
    /// A fresh id from the kernel's random generator.
    pub fn generate() -> Result<Self, TargetError> {
        let mut bytes = [0u8; 8];
        let mut filled = 0;
        while filled < bytes.len() {
            filled += rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty())
                .map_err(|e| TargetError(format!("cannot draw a random run id: {e}")))?;
        }
        Ok(Self(format!("{:016x}", u64::from_le_bytes(bytes))))
    }

    /// `text` if it has the shape of a run id.
    pub fn parse(text: &str) -> Option<Self> {
        (text.len() == 16 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
            .then(|| Self(text.to_string()))
    }

    /// The 16 hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// What is accepted, appended to every refusal.
fn accepted() -> String {
    format!(
        "a work directory must be a real directory owned by uid {uid} and writable by nobody else, \
         below directories owned by root or uid {uid} that others cannot write to (unless sticky, like /var/tmp)",
        uid = euid()
    )
}

fn refuse(shown: &Path, why: String) -> InputError {
    InputError::new(format!("{why}; {}", accepted())).at(format!("--workdir {}", shown.display()))
}

/// `path` made absolute against the current directory, with `.` and `..` resolved. A `..` is
/// resolved by dropping the previous component only after checking that it is not a symlink
/// (for a symlink, the kernel's `..` would go elsewhere).
fn absolute(path: &Path) -> Result<PathBuf, InputError> {
    if path.as_os_str().is_empty() {
        return Err(InputError::new(format!("an empty path: {}", accepted())).at("--workdir"));
    }
    let joined = std::path::absolute(path).map_err(|e| {
        InputError::new(format!("cannot make it absolute: {e}")).at(format!("--workdir {}", path.display()))
    })?;
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                if std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(refuse(path, format!("{} is a symlink", out.display())));
                }
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Ok(out)
}

fn check_ancestor(shown: &Path, dir: &Path, meta: &std::fs::Metadata) -> Result<(), InputError> {
    let mode = meta.permissions().mode();
    if meta.file_type().is_symlink() {
        return Err(refuse(shown, format!("{} is a symlink", dir.display())));
    }
    if !meta.is_dir() {
        return Err(refuse(shown, format!("{} is not a directory", dir.display())));
    }
    if meta.uid() != 0 && meta.uid() != euid() {
        return Err(refuse(shown, format!("{} is owned by uid {}", dir.display(), meta.uid())));
    }
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(refuse(
            shown,
            format!("{} is writable by others (mode {:04o}) and not sticky", dir.display(), mode & 0o7777),
        ));
    }
    Ok(())
}

fn check_final(shown: &Path, dir: &Path, meta: &std::fs::Metadata) -> Result<(), InputError> {
    let mode = meta.permissions().mode();
    if meta.file_type().is_symlink() {
        return Err(refuse(shown, format!("{} is a symlink", dir.display())));
    }
    if !meta.is_dir() {
        return Err(refuse(shown, format!("{} is not a directory", dir.display())));
    }
    if meta.uid() != euid() {
        return Err(refuse(shown, format!("{} is owned by uid {}, not uid {}", dir.display(), meta.uid(), euid())));
    }
    if mode & 0o022 != 0 {
        return Err(refuse(
            shown,
            format!("{} is writable by group or others (mode {:04o})", dir.display(), mode & 0o7777),
        ));
    }
    Ok(())
}

/// Where runs keep what a server's account must reach: `RUN_BASE/RUNID`.
pub const RUN_BASE: &str = "/run/fsarena";

/// The directory of run `run` under [`RUN_BASE`].
pub fn run_dir_of(run: &RunId) -> PathBuf {
    Path::new(RUN_BASE).join(run.as_str())
}

/// The work directory of one run: locked for the run's lifetime, with its state file.
#[derive(Debug)]
pub struct Workdir {
    path: PathBuf,
    run_id: RunId,
    lock: LockFile,
    ledger: LedgerHandle,
    /// The run's cgroup, recorded (None where cgroups cannot be made here).
    scope: Option<crate::contain::Cgroup>,
}

impl Workdir {
    /// Checks `path` as a work directory, without side effects, and returns it absolute (a
    /// relative path is taken against the current directory). A missing directory is fine
    /// when its nearest existing ancestor passes.
    pub fn check(path: &Path) -> Result<PathBuf, InputError> {
        let abs = absolute(path)?;
        let mut dir = PathBuf::new();
        let last = abs.components().count();
        for (i, c) in abs.components().enumerate() {
            dir.push(c);
            match std::fs::symlink_metadata(&dir) {
                Ok(meta) if i + 1 == last => check_final(path, &dir, &meta)?,
                Ok(meta) => check_ancestor(path, &dir, &meta)?,
                // Missing: fsarena creates it, and everything below, root-owned and 0700.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(refuse(path, format!("cannot inspect {}: {e}", dir.display()))),
            }
        }
        Ok(abs)
    }

    /// The nearest existing directory at or above `path` (where a missing work directory
    /// would be created), for free-space checks.
    pub fn nearest_existing(path: &Path) -> PathBuf {
        let mut p = path.to_path_buf();
        while !p.exists() && p.pop() {}
        p
    }

    /// Creates `path` if missing (0700, with missing parents), checks it, locks it and starts
    /// this run's state file, `state-RUNID.jsonl`.
    pub fn open(path: &Path, run_id: &RunId) -> Result<Self, TargetError> {
        let to_error = |e: InputError| TargetError(e.to_string());
        let abs = Self::check(path).map_err(to_error)?;
        let mut dir = PathBuf::new();
        for c in abs.components() {
            dir.push(c);
            if std::fs::symlink_metadata(&dir).is_err() {
                match safefs::create_new_dir(&dir, 0o700) {
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(TargetError(format!("cannot create work directory {}: {e}", dir.display()))),
                }
            }
        }
        // Again now that it exists: someone may have created it first.
        Self::check(&abs).map_err(to_error)?;
        let lock = LockFile::acquire(&abs)?;
        let state_path = abs.join(format!("state-{run_id}.jsonl"));
        let (mut state, _) = safefs::create_new_file(&state_path)
            .map_err(|e| TargetError(format!("cannot create {}: {e}", state_path.display())))?;
        let header = crate::state::Header {
            fsarena_state: crate::state::STATE_VERSION,
            run: run_id.to_string(),
            workdir: abs.clone(),
            lock: lock.created.then_some(lock.id),
        };
        let mut line = serde_json::to_string(&header).map_err(|e| TargetError(e.to_string()))?;
        line.push('\n');
        if let Err(e) = state.write_all(line.as_bytes()).and_then(|()| state.sync_data()) {
            let _ = std::fs::remove_file(&state_path);
            return Err(TargetError(format!("cannot write {}: {e}", state_path.display())));
        }
        let ledger = LedgerHandle::new(Ledger::new(state, state_path));
        // Every process the run starts goes into a cgroup inside the run's own.
        let scope = crate::contain::open_run_scope(&run_id.to_string());
        if let Some(c) = &scope {
            let r = Resource::Cgroup { path: c.path.clone(), id: c.id };
            if let Err(e) = ledger.record(&r) {
                crate::contain::close_run_scope(c);
                let _ = std::fs::remove_dir(&c.path);
                return Err(e);
            }
        }
        Ok(Self { path: abs, run_id: run_id.clone(), lock, ledger, scope })
    }

    /// The directory, absolute.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// This run's id.
    pub fn run_id(&self) -> &RunId {
        &self.run_id
    }

    /// Writes down durably `resource`, which fsarena has just created.
    pub fn record(&self, resource: &Resource) -> Result<(), TargetError> {
        self.ledger.record(resource)
    }

    pub(crate) fn ledger(&self) -> LedgerHandle {
        self.ledger.clone()
    }

    /// Creates this run's directory under /run/fsarena (0711, root's; /run/fsarena too, 0711,
    /// when missing), each recorded: where targets hosting a server are mounted and servers
    /// keep their sockets, reachable by the servers' accounts (the work directory is 0700).
    /// Undone with [`Workdir::undo`] after the targets in it are torn down.
    pub fn open_run_dir(&self) -> Result<(PathBuf, Vec<Resource>), TargetError> {
        let mut made = Vec::new();
        let base = Path::new(RUN_BASE);
        let run_dir = run_dir_of(&self.run_id);
        for (dir, shared) in [(base, true), (run_dir.as_path(), false)] {
            match safefs::create_new_dir(dir, 0o711) {
                Ok(id) => {
                    let r = Resource::Dir { path: dir.to_path_buf(), id, recursive: false };
                    if let Err(e) = self.record(&r) {
                        let _ = std::fs::remove_dir(dir);
                        let _ = self.undo(&made, crate::UndoMode::Teardown);
                        return Err(e);
                    }
                    made.push(r);
                }
                // /run/fsarena is shared by concurrent runs: one that is there is used, when
                // it is a root-owned directory others cannot write to.
                Err(e) if shared && e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let meta = std::fs::symlink_metadata(dir)
                        .map_err(|e| TargetError(format!("cannot inspect {}: {e}", dir.display())))?;
                    if !meta.is_dir() || meta.uid() != 0 || meta.mode() & 0o022 != 0 {
                        return Err(TargetError(format!(
                            "{} is not a root-owned directory closed to writes by others: remove it or fix its mode",
                            dir.display()
                        )));
                    }
                }
                Err(e) => {
                    let _ = self.undo(&made, crate::UndoMode::Teardown);
                    return Err(TargetError(format!("cannot create {}: {e}", dir.display())));
                }
            }
        }
        Ok((run_dir, made))
    }

    /// Undoes those of `resources` (recorded with [`Workdir::record`]) still outstanding,
    /// newest first; the first failure stops it and is returned.
    pub fn undo(&self, resources: &[Resource], mode: crate::UndoMode) -> Result<Vec<String>, TargetError> {
        let report = self.ledger.undo(resources, mode);
        match report.error {
            Some(e) => Err(e),
            None => Ok(report.done),
        }
    }

    /// A handle for the signal handler: tears down everything still recorded, at once.
    pub fn emergency(&self) -> Emergency {
        Emergency { ledger: self.ledger.clone(), lock_path: self.lock.path.clone(), lock_id: self.lock.owned_id() }
    }

    /// Drops the lock as a SIGKILL would: the state file and everything recorded stay.
    #[cfg(test)]
    pub(crate) fn simulate_kill(self) {
        if let Some(c) = &self.scope {
            crate::contain::close_run_scope(c);
        }
        drop(self.lock.file);
        std::mem::forget(self.ledger);
    }

    /// Keeps everything recorded in place for `fsarena down` (`fsarena up --detach`): marks
    /// the run held with a `held-RUNID` file beside its state file, which `fsarena cleanup`
    /// then leaves alone, and releases the lock without undoing anything. Returns the state
    /// file.
    pub fn hold(self) -> Result<PathBuf, TargetError> {
        if let Some(c) = &self.scope {
            crate::contain::close_run_scope(c);
        }
        let marker = self.path.join(format!("{HELD_PREFIX}{}", self.run_id));
        safefs::create_new_file(&marker)
            .and_then(|(f, _)| f.sync_all())
            .map_err(|e| TargetError(format!("cannot create {}: {e}", marker.display())))?;
        let state = self.path.join(format!("state-{}.jsonl", self.run_id));
        self.lock.release(&[]);
        Ok(state)
    }

    /// Ends the run. When everything recorded was undone, the state file and the lock go
    /// (the directory stays) and this returns None. Otherwise the state file is kept for
    /// `fsarena cleanup` and its path returned.
    pub fn close(self) -> Option<PathBuf> {
        // Whatever a workload left running in the run's cgroup ends with the run.
        if let Some(c) = &self.scope {
            crate::contain::close_run_scope(c);
            let _ = self.ledger.undo(&[Resource::Cgroup { path: c.path.clone(), id: c.id }], crate::UndoMode::Teardown);
        }
        let kept = self.ledger.finish();
        self.lock.release(&[]);
        kept
    }
}

/// Lets a signal handler tear down a run from another thread (see [`Workdir::emergency`]).
#[derive(Debug, Clone)]
pub struct Emergency {
    ledger: LedgerHandle,
    lock_path: PathBuf,
    lock_id: Option<Identity>,
}

impl Emergency {
    /// Undoes everything still recorded, newest first, without waiting for busy mounts held
    /// only by this process (they are detached lazily: the process is about to exit, which
    /// frees them). Then calls `then` with what was done and the state file, if it had to be
    /// kept, while still holding the record: so nothing can be created and recorded after
    /// this teardown (`then` is expected to exit the process).
    pub fn tear_down_then<R>(&self, then: impl FnOnce(&[String], Option<&TargetError>, Option<&Path>) -> R) -> R {
        self.ledger.tear_down_then(|done, error, kept| {
            if kept.is_none() {
                if let Some(id) = self.lock_id {
                    if Identity::of_path(&self.lock_path).ok() == Some(id) {
                        let _ = std::fs::remove_file(&self.lock_path);
                    }
                }
            }
            then(done, error, kept)
        })
    }
}

/// The work directory's `.lock`, held with `flock` for the lifetime of a run or cleanup.
#[derive(Debug)]
pub(crate) struct LockFile {
    file: File,
    path: PathBuf,
    /// The inode locked.
    pub(crate) id: Identity,
    /// This process created it, so it may remove it.
    pub(crate) created: bool,
}

impl LockFile {
    /// Locks `dir/.lock`, creating it if missing. A lock file someone else made is used but
    /// never removed (see [`LockFile::release`]).
    pub(crate) fn acquire(dir: &Path) -> Result<Self, TargetError> {
        let path = dir.join(LOCK);
        let shown = || printable(&path.to_string_lossy()).into_owned();
        // A run that removed its lock file between our open and our flock leaves us holding
        // an unlinked inode: then try again with the new file.
        for _ in 0..10 {
            let mode = Mode::from_raw_mode(0o600);
            let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
            let (fd, created) = match rfs::open(&path, flags | OFlags::CREATE | OFlags::EXCL, mode) {
                Ok(fd) => (fd, true),
                Err(Errno::EXIST) => match rfs::open(&path, flags, mode) {
                    Ok(fd) => (fd, false),
                    Err(Errno::NOENT) => continue,
                    Err(e) => return Err(TargetError(format!("cannot open {}: {e}", shown()))),
                },
                Err(e) => return Err(TargetError(format!("cannot open {}: {e}", shown()))),
            };
            let st = rfs::fstat(&fd).map_err(|e| TargetError(format!("cannot inspect {}: {e}", shown())))?;
            if rfs::FileType::from_raw_mode(st.st_mode) != rfs::FileType::RegularFile {
                return Err(TargetError(format!("{} is not a regular file; remove it", shown())));
            }
            match rfs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {}
                Err(Errno::WOULDBLOCK) => {
                    return Err(TargetError(format!(
                        "another fsarena run (or cleanup) is using the work directory {}; wait for it or use --workdir",
                        printable(&dir.to_string_lossy())
                    )))
                }
                Err(e) => return Err(TargetError(format!("cannot lock {}: {e}", shown()))),
            }
            let id = Identity::of_fd(&fd).map_err(|e| TargetError(e.to_string()))?;
            if Identity::of_path(&path).ok() == Some(id) {
                return Ok(Self { file: File::from(fd), path, id, created });
            }
        }
        Err(TargetError(format!("{} keeps changing; is another program removing it?", shown())))
    }

    /// The identity of the lock file, if this process created it.
    pub(crate) fn owned_id(&self) -> Option<Identity> {
        self.created.then_some(self.id)
    }

    /// Unlocks. The lock file is removed only if it is still the inode locked and this
    /// process created it, or a killed run created it (`recorded`: the lock files its state
    /// file names); a lock file someone else put there stays.
    pub(crate) fn release(self, recorded: &[Identity]) {
        if (self.created || recorded.contains(&self.id)) && Identity::of_path(&self.path).ok() == Some(self.id) {
            // Removed while still locked, so no other process can take the old inode for the lock.
            let _ = std::fs::remove_file(&self.path);
        }
        drop(self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = PathBuf::from(format!("/var/tmp/fsarena-h1-wd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn run_ids_are_random_and_parse_back() {
        let a = RunId::generate().unwrap();
        let b = RunId::generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(RunId::parse(a.as_str()), Some(a.clone()));
        assert_eq!(a.as_str().len(), 16);
        for bad in ["", "123", "../../etc/passwd", "ABCDEF0123456789", "0123456789abcdeg", "0123456789abcdef0"] {
            assert!(RunId::parse(bad).is_none(), "{bad}");
        }
        assert_ne!(a.as_str(), format!("{:016x}", std::process::id()));
    }

    #[test]
    fn a_missing_workdir_is_created_0700_and_relative_paths_become_absolute() {
        let root = scratch("create");
        let work = root.join("a/b/work");
        assert_eq!(Workdir::check(&work).unwrap(), work);
        assert!(!root.exists(), "check has no side effects");
        let wd = Workdir::open(&work, &RunId::generate().unwrap()).unwrap();
        for p in [root.join("a"), root.join("a/b"), work.clone()] {
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777, 0o700, "{}", p.display());
        }
        assert!(wd.close().is_none());
        let names: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
        assert!(names.is_empty(), "a finished run leaves nothing: {names:?}");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(Workdir::check(Path::new("some/rel/../dir")).unwrap(), cwd.join("some/dir"));
        assert_eq!(Workdir::check(&root.join("a/./b/../b/work")).unwrap(), work);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn untrusted_work_directories_are_refused_saying_why() {
        let root = scratch("refuse");
        std::fs::create_dir_all(&root).unwrap();
        chmod(&root, 0o755);
        let real = root.join("real");
        std::fs::create_dir(&real).unwrap();
        chmod(&real, 0o700);
        let link = root.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let expect = |p: &Path, what: &str| {
            let e = Workdir::check(p).expect_err(&p.display().to_string()).to_string();
            assert!(e.contains(what) && e.starts_with("--workdir "), "{p:?}: {e}");
            assert!(!e.contains('\n'));
        };
        expect(&link, "is a symlink");
        expect(&link.join("below"), "is a symlink");
        expect(&link.join("../real"), "is a symlink");
        let file = root.join("file");
        std::fs::write(&file, b"x").unwrap();
        expect(&file, "is not a directory");
        let open = root.join("open");
        std::fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        expect(&open, "writable by group or others (mode 0777)");
        expect(&open.join("below"), "writable by others (mode 0777) and not sticky");
        chmod(&open, 0o1777);
        assert!(Workdir::check(&open.join("below")).is_ok(), "a sticky directory like /var/tmp is fine above");
        expect(&open, "writable by group or others (mode 1777)");
        chmod(&open, 0o770);
        expect(&open, "writable by group or others (mode 0770)");
        let theirs = root.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        chmod(&theirs, 0o700);
        if euid() == 0 {
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            expect(&theirs, "owned by uid 65534");
            expect(&theirs.join("below"), "owned by uid 65534");
            assert!(Workdir::open(&theirs, &RunId::generate().unwrap()).is_err());
            assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0, "nothing created in a refused directory");
        }
        assert!(Workdir::check(&real).is_ok());
        assert!(Workdir::check(Path::new("")).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn one_run_at_a_time_and_a_foreign_lock_file_stays() {
        let root = scratch("lock");
        let wd = Workdir::open(&root, &RunId::generate().unwrap()).unwrap();
        let second = Workdir::open(&root, &RunId::generate().unwrap());
        assert!(second.expect_err("a second run is refused").0.contains("another fsarena run"));
        assert!(wd.close().is_none());
        assert!(!root.join(LOCK).exists());
        // A lock file fsarena did not create is used, and left where it was.
        std::fs::write(root.join(LOCK), b"someone else's").unwrap();
        let wd = Workdir::open(&root, &RunId::generate().unwrap()).unwrap();
        assert!(wd.close().is_none());
        assert_eq!(std::fs::read(root.join(LOCK)).unwrap(), b"someone else's");
        // A planted symlink as the lock file: refused, its target untouched.
        std::fs::remove_file(root.join(LOCK)).unwrap();
        let victim = root.with_extension("victim");
        std::fs::write(&victim, b"v").unwrap();
        std::os::unix::fs::symlink(&victim, root.join(LOCK)).unwrap();
        assert!(Workdir::open(&root, &RunId::generate().unwrap()).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"v");
        std::fs::remove_file(&victim).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }
}
