//! File-level recording, for a `fuse:` target's daemon: the directory it keeps its data in
//! (`{work}` in its command) is served by fsarena as a logging passthrough onto a plain
//! directory of the work directory. Every name operation (create, mkdir, symlink, link,
//! rename, unlink, rmdir), metadata change (mode, owner, xattrs), data write, truncate,
//! fsync/fdatasync and fsyncdir the daemon makes there is logged in order, then done on the
//! backing directory and answered (an fsync is only logged: no state is ever read back from
//! the backing files, so their durability plays no part). A crash state at point p is rebuilt
//! from that log into a fresh directory, and the daemon is started again on it.
//!
//! Writes are logged in pieces that do not cross a 4 KiB boundary, so that a crash state can
//! lose any part of a file's unsynced data at that granularity by leaving pieces out.
//! `sync()` and `syncfs()` never reach a FUSE daemon, so they log nothing.
//!
//! The server is a thread of fsarena (fuser's background session), not a process of its own
//! as the block recorder's: nothing here waits on a loop device, and every FUSE wait is
//! killable, so a SIGKILLed fsarena always exits and its end closes the connection.
//! Hand-written because the point is the log: no passthrough crate logs its operations. The
//! passthrough itself, and why it never follows a link the daemon made: [`crate::passthrough`];
//! what the recorder adds to it: [`super::recording`].

use crate::TargetError;
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The granularity at which unsynced data may be lost.
pub const PIECE: u64 = 4096;

/// Bytes of data the file-level log holds at most, whatever `max_log=` says: it is kept in
/// memory, and a daemon may write as much as it likes into `{work}` (ENOSPC past this).
pub const FILE_LOG_MAX: u64 = 256 << 20;

/// One logged operation. Paths are relative to the recorded directory, as they were when the
/// operation was made; `id` names the file across renames (for "its last fsync").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// A new regular file.
    Create { path: PathBuf, mode: u32 },
    /// A new directory.
    Mkdir { path: PathBuf, mode: u32 },
    /// A new symbolic link.
    Symlink { path: PathBuf, target: PathBuf },
    /// A new hard link `to` of `from`.
    Link { from: PathBuf, to: PathBuf },
    /// `from` renamed over `to`.
    Rename { from: PathBuf, to: PathBuf },
    /// A name removed.
    Unlink { path: PathBuf },
    /// A directory removed.
    Rmdir { path: PathBuf },
    /// Mode bits changed.
    Chmod { path: PathBuf, mode: u32 },
    /// An extended attribute set (`value`) or removed (None).
    Xattr { path: PathBuf, name: Vec<u8>, value: Option<Vec<u8>> },
    /// Data written (within one 4 KiB piece).
    Write { id: u64, path: PathBuf, offset: u64, data: Vec<u8> },
    /// Size set (truncate, or an extending fallocate).
    Truncate { id: u64, path: PathBuf, size: u64 },
    /// Blocks allocated without a size change (fallocate with `FALLOC_FL_KEEP_SIZE`): data
    /// in that an fsync makes them durable, as a crash state must show in its block count.
    Allocate { id: u64, path: PathBuf, offset: u64, len: u64 },
    /// fsync (or fdatasync) of a file: its data and size are durable.
    Fsync { id: u64, path: PathBuf },
    /// fsync of a directory: its entries are durable.
    FsyncDir { path: PathBuf },
    /// The workload's mark `n`, after its persistence call `n` returned.
    Mark(u32),
    /// Everything before is durable: the set-up of a generated workload, made durable by
    /// fsarena whatever the daemon's own fsync does (the operation's persistence call is
    /// what is tested).
    Barrier,
}

impl FileOp {
    /// Data: lost at a crash unless its file was fsynced after it.
    pub fn is_data(&self) -> bool {
        matches!(self, Self::Write { .. } | Self::Truncate { .. } | Self::Allocate { .. })
    }

    /// A persistence point.
    pub fn is_persist(&self) -> bool {
        matches!(self, Self::Fsync { .. } | Self::FsyncDir { .. })
    }

    /// A name or metadata operation: kept at every later crash point (in order) with
    /// `names=kept`; with `names=lossy` (the default) only once a later fsync covers it.
    pub fn is_name(&self) -> bool {
        !self.is_data() && !self.is_persist() && !matches!(self, Self::Mark(_) | Self::Barrier)
    }

    /// The name a name operation makes (a new file, directory or link; a rename's new name).
    pub fn subject(&self) -> Option<&Path> {
        match self {
            Self::Create { path, .. } | Self::Mkdir { path, .. } | Self::Symlink { path, .. } => Some(path),
            Self::Link { to, .. } | Self::Rename { to, .. } => Some(to),
            _ => None,
        }
    }

    /// The existing object whose own metadata a name operation changes: a mode or xattr
    /// change's file, a new hard link's target (its link count).
    pub fn object(&self) -> Option<&Path> {
        match self {
            Self::Chmod { path, .. } | Self::Xattr { path, .. } => Some(path),
            Self::Link { from, .. } => Some(from),
            _ => None,
        }
    }

    /// The paths it names.
    pub fn paths(&self) -> Vec<&Path> {
        match self {
            Self::Create { path, .. }
            | Self::Mkdir { path, .. }
            | Self::Symlink { path, .. }
            | Self::Unlink { path }
            | Self::Rmdir { path }
            | Self::Chmod { path, .. }
            | Self::Xattr { path, .. }
            | Self::Write { path, .. }
            | Self::Truncate { path, .. }
            | Self::Allocate { path, .. } => vec![path],
            Self::Link { from, to } | Self::Rename { from, to } => vec![from, to],
            Self::Fsync { .. } | Self::FsyncDir { .. } | Self::Mark(_) | Self::Barrier => Vec::new(),
        }
    }

    /// The directories whose entries a name operation changes.
    pub fn dirs(&self) -> Vec<PathBuf> {
        let parent = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
        match self {
            Self::Create { path, .. }
            | Self::Mkdir { path, .. }
            | Self::Symlink { path, .. }
            | Self::Unlink { path }
            | Self::Rmdir { path } => vec![parent(path)],
            Self::Link { to, .. } => vec![parent(to)],
            Self::Rename { from, to } => vec![parent(from), parent(to)],
            _ => Vec::new(),
        }
    }
}

/// The log, shared by the server thread and fsarena.
#[derive(Debug, Default)]
pub struct FileLog {
    ops: Vec<FileOp>,
    bytes: u64,
    max: u64,
}

/// The log as the server thread and fsarena share it.
pub(super) type Shared = Arc<Mutex<FileLog>>;

/// The log, whatever a panicking holder left.
pub(super) fn lock(log: &Mutex<FileLog>) -> std::sync::MutexGuard<'_, FileLog> {
    log.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl FileLog {
    /// Appends an operation done.
    pub(super) fn push(&mut self, op: FileOp) {
        self.ops.push(op);
    }

    /// Whether `len` more bytes of data fit `max_log` (ENOSPC if not): asked before a write is
    /// done, so that every write done is logged.
    pub(super) fn room(&self, len: u64) -> Result<(), i32> {
        if self.bytes + len > self.max {
            return Err(libc::ENOSPC);
        }
        Ok(())
    }

    /// Logs a `KEEP_SIZE` allocation done, its length counted as data ([`Self::room`] was
    /// asked before it).
    pub(super) fn log_allocate(&mut self, id: u64, path: &Path, offset: u64, len: u64) {
        self.bytes += len;
        self.ops.push(FileOp::Allocate { id, path: path.to_path_buf(), offset, len });
    }

    /// Logs a write done, in pieces within 4 KiB boundaries; refused (ENOSPC) past `max_log`.
    pub(super) fn log_write(&mut self, id: u64, path: &Path, offset: u64, data: &[u8]) -> Result<(), i32> {
        self.room(data.len() as u64)?;
        self.bytes += data.len() as u64;
        let mut at = 0usize;
        while at < data.len() {
            let off = offset + at as u64;
            let n = ((PIECE - off % PIECE) as usize).min(data.len() - at);
            self.ops.push(FileOp::Write { id, path: path.to_path_buf(), offset: off, data: data[at..at + n].to_vec() });
            at += n;
        }
        Ok(())
    }
}

/// A running logging passthrough: `mnt` serves `backing`.
pub struct FileRecorder {
    log: Shared,
    session: Option<fuser::BackgroundSession>,
}

impl std::fmt::Debug for FileRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileRecorder").finish_non_exhaustive()
    }
}

impl FileRecorder {
    /// Mounts the passthrough of `backing` at `mnt` (`allow_other`: the daemon may run as
    /// another user); the log may hold `max_log` bytes of data.
    pub fn start(backing: &Path, mnt: &Path, max_log: u64) -> Result<Self, TargetError> {
        let log: Shared = Arc::new(Mutex::new(FileLog { max: max_log, ..FileLog::default() }));
        let root = crate::beneath::HeldDir::open(backing)
            .map_err(|e| TargetError(format!("cannot open the file recorder's directory: {e}")))?;
        let fs = crate::passthrough::Passthrough::new(root, super::recording::Recording { log: log.clone() });
        let options = [
            fuser::MountOption::FSName("fsarena-file-recorder".into()),
            fuser::MountOption::RW,
            fuser::MountOption::AllowOther,
            fuser::MountOption::DefaultPermissions,
        ];
        let session = fuser::spawn_mount2(fs, mnt, &options)
            .map_err(|e| TargetError(format!("cannot mount the file recorder at {}: {e}", mnt.display())))?;
        Ok(Self { log, session: Some(session) })
    }

    /// Writes mark `n` into the log.
    pub fn mark(&self, n: u32) {
        lock(&self.log).ops.push(FileOp::Mark(n));
    }

    /// Everything logged so far is durable (see [`FileOp::Barrier`]).
    pub fn barrier(&self) {
        lock(&self.log).ops.push(FileOp::Barrier);
    }

    /// The log so far, taken (not copied: it holds every byte the daemon wrote).
    pub fn take_ops(&self) -> Vec<FileOp> {
        std::mem::take(&mut lock(&self.log).ops)
    }

    /// Bytes of data logged.
    pub fn logged_bytes(&self) -> u64 {
        lock(&self.log).bytes
    }

    /// Unmounts (the caller has stopped the daemon).
    pub fn stop(mut self) {
        if let Some(s) = self.session.take() {
            s.join();
        }
    }
}

impl Drop for FileRecorder {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            s.join();
        }
    }
}

/// Rebuilds a crash state in the empty directory `dest`: the operations `keep` selects from
/// `ops` (indexes, in log order), each done as it was logged. An operation that no longer
/// applies (its name was dropped with `names=lossy`, or its directory is gone) is skipped.
pub fn build(ops: &[FileOp], keep: &[usize], dest: &Path) -> std::io::Result<()> {
    use std::io::ErrorKind::{AlreadyExists, NotFound};
    let moot = |e: &std::io::Error| {
        matches!(e.kind(), NotFound | AlreadyExists)
            || matches!(e.raw_os_error(), Some(libc::ENOTEMPTY | libc::ENOTDIR | libc::EISDIR | libc::ENODATA))
    };
    let at = |p: &Path| dest.join(p);
    for &i in keep {
        let Some(op) = ops.get(i) else { continue };
        // Safety: fsarena runs as root, and a daemon's log may name a path through a
        // symbolic link it made (or one a dropped operation would have replaced): nothing is
        // done through a link, so nothing is made or written outside `dest`.
        if !op.paths().iter().all(|p| beneath(dest, p, !matches!(op, FileOp::Rename { .. } | FileOp::Unlink { .. }))) {
            continue;
        }
        let done = match op {
            FileOp::Create { path, mode } => File::options()
                .write(true)
                .create_new(true)
                .open(at(path))
                .and_then(|f| f.set_permissions(std::fs::Permissions::from_mode(*mode))),
            FileOp::Mkdir { path, mode } => std::fs::create_dir(at(path))
                .and_then(|()| std::fs::set_permissions(at(path), std::fs::Permissions::from_mode(*mode))),
            FileOp::Symlink { path, target } => std::os::unix::fs::symlink(target, at(path)),
            FileOp::Link { from, to } => std::fs::hard_link(at(from), at(to)),
            FileOp::Rename { from, to } => std::fs::rename(at(from), at(to)),
            FileOp::Unlink { path } => std::fs::remove_file(at(path)),
            FileOp::Rmdir { path } => std::fs::remove_dir(at(path)),
            FileOp::Chmod { path, mode } => std::fs::set_permissions(at(path), std::fs::Permissions::from_mode(*mode)),
            FileOp::Xattr { path, name, value } => {
                let name = OsStr::from_bytes(name);
                match value {
                    Some(v) => rustix::fs::lsetxattr(at(path), name, v, rustix::fs::XattrFlags::empty()),
                    None => rustix::fs::lremovexattr(at(path), name),
                }
                .map_err(std::io::Error::from)
            }
            FileOp::Write { path, offset, data, .. } => {
                File::options().write(true).open(at(path)).and_then(|f| f.write_all_at(data, *offset))
            }
            FileOp::Truncate { path, size, .. } => {
                File::options().write(true).open(at(path)).and_then(|f| f.set_len(*size))
            }
            FileOp::Allocate { path, offset, len, .. } => File::options().write(true).open(at(path)).and_then(|f| {
                rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::KEEP_SIZE, *offset, *len)
                    .map_err(std::io::Error::from)
            }),
            FileOp::Fsync { .. } | FileOp::FsyncDir { .. } | FileOp::Mark(_) | FileOp::Barrier => Ok(()),
        };
        match done {
            Err(e) if !moot(&e) => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Whether `rel` below `dest` is reached through no symbolic link: no component is `..` or
/// absolute, no directory on the way is a link, and (unless `link_ok`: a rename or unlink
/// acts on the link itself) the last component is not one either.
fn beneath(dest: &Path, rel: &Path, last_no_link: bool) -> bool {
    use std::path::Component;
    let parts: Vec<Component<'_>> = rel.components().collect();
    if parts.iter().any(|c| !matches!(c, Component::Normal(_))) {
        return false;
    }
    let mut at = dest.to_path_buf();
    for (k, c) in parts.iter().enumerate() {
        at.push(c);
        let last = k + 1 == parts.len();
        if last && !last_no_link {
            break;
        }
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return false;
        }
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn w(id: u64, path: &str, offset: u64, byte: u8) -> FileOp {
        FileOp::Write { id, path: path.into(), offset, data: vec![byte; 4] }
    }

    #[test]
    fn a_crash_state_is_rebuilt_from_what_it_keeps() {
        let ops = vec![
            FileOp::Create { path: "a".into(), mode: 0o640 },
            w(2, "a", 0, b'x'),
            FileOp::Mkdir { path: "d".into(), mode: 0o750 },
            w(2, "a", 4, b'y'),
            FileOp::Create { path: "d/c".into(), mode: 0o600 },
            FileOp::Fsync { id: 2, path: "a".into() },
        ];
        // Built: what was kept, each operation as it was logged.
        let dir = tempfile::tempdir().unwrap();
        build(&ops, &[0, 1, 2, 3, 5], dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("a")).unwrap(), b"xxxxyyyy");
        let mode = |p: &str| std::fs::metadata(dir.path().join(p)).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode("a"), mode("d")), (0o640, 0o750));
        assert!(!dir.path().join("d/c").exists());
        // What no longer applies without what was left out is moot: a write to a name never
        // made, a name in a directory never made.
        let dir = tempfile::tempdir().unwrap();
        build(&ops, &[1, 4], dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_rebuilt_state_never_reaches_through_a_link() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), b"keep").unwrap();
        let ops = vec![
            FileOp::Symlink { path: "d".into(), target: outside.path().to_path_buf() },
            FileOp::Symlink { path: "l".into(), target: outside.path().join("victim") },
            FileOp::Create { path: "d/new".into(), mode: 0o644 },
            FileOp::Mkdir { path: "d/dir".into(), mode: 0o755 },
            w(5, "l", 0, b'x'),
            FileOp::Truncate { id: 5, path: "l".into(), size: 0 },
            FileOp::Chmod { path: "l".into(), mode: 0o777 },
            FileOp::Write { id: 6, path: "../escape".into(), offset: 0, data: vec![1] },
            FileOp::Rename { from: "l".into(), to: "m".into() },
        ];
        let dir = tempfile::tempdir().unwrap();
        build(&ops, &(0..ops.len()).collect::<Vec<_>>(), dir.path()).unwrap();
        assert_eq!(std::fs::read(outside.path().join("victim")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
        assert!(!dir.path().parent().unwrap().join("escape").exists());
        // The link itself may be renamed: it is the link that moves.
        assert!(std::fs::symlink_metadata(dir.path().join("m")).unwrap().file_type().is_symlink());
    }
}
