//! The recorder: a block device whose every write and flush fsarena sees, and the crash
//! images rebuilt from that history. It lives with the targets because it provisions like one
//! (images, a FUSE mount, loop devices, mounts, every one recorded in the state file before
//! anything else happens and undone on every exit path) and needs the same private helpers.
//!
//! How: mkfs once on a sparse base image, which is never written again. fsarena's own FUSE
//! server (a process fsarena forks, see [`process`] for why, and [`server`]) serves `image`, a
//! copy-on-write view of the base: each generated workload starts from the base again, and
//! every write lands in the log (its data in the spill file), which the view reads it back
//! from. A loop device on that file is the filesystem's device, so the loop driver's writes and
//! flushes arrive at the server in order and are logged. A crash image is the base plus a
//! chosen subset of the logged writes, composed by the server from its log as another virtual
//! file (`state-K` on its mount, see [`server::VirtualImage`], with a private overlay for
//! recovery's writes), never a copy; it is attached to its own loop device, mounted
//! (recovery), checked and unmounted, then left to the crash workload for the filesystem's
//! checker. A `fuse:` daemon's `{work}` is recorded at file level instead ([`files`],
//! [`FilesFs`]); the crash workload drives either level through [`Recorder`].

pub mod files;
pub mod log;
mod process;
mod recording;
mod server;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use crate::common::{ProvisionCtx, Provisioned};
use crate::state::Resource;
use crate::table::{filesystem, Filesystem};
use crate::{safefs, sys, Mounted, TargetError, Workdir};
pub use log::Entry;
use process::ServerProcess;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The filesystems the recorder records at block level.
pub const RECORDABLE: &[&str] = &["ext2", "ext3", "ext4", "xfs", "btrfs"];

/// How to make and mount the recorded filesystem.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// `ext4`, `xfs`, ... (one of [`RECORDABLE`]).
    pub fs: String,
    /// Image size in bytes.
    pub size: u64,
    /// Extra mkfs arguments (the target's `mkfs=`).
    pub mkfs: Vec<String>,
    /// Mount options of the recorded mount (the target's `mount=`): `barrier=0` is a way to
    /// lose promises, and the crash images are mounted without them.
    pub mount: String,
    /// Configure the loop device with 4 KiB logical blocks.
    pub sector_4k: bool,
    /// Bytes the spill file may hold.
    pub max_log: u64,
    /// Crash images checked at the same time, each on its own loop device.
    pub slots: usize,
    /// Mounted by fuse2fs on the image file instead of the kernel on a loop device: the
    /// image is the file a fuse2fs target keeps in its work directory, so the log is that
    /// file's writes and fsyncs (file level, for one file), and each crash image is mounted
    /// by fuse2fs too.
    pub fuse2fs: bool,
    /// A `fuse:` target's command (`{work}` and `{mnt}` not yet replaced): the daemon keeps
    /// its data in `{work}`, a directory of the recorded filesystem, and the workload runs on
    /// its mount; each crash image is recovered by the kernel and the daemon started again on
    /// it. File level by way of a journaling filesystem below the daemon: what the daemon
    /// made durable (its fsyncs) survives, what it only wrote may not.
    pub daemon: Option<String>,
    /// How long the daemon may take to mount.
    pub daemon_timeout: Duration,
}

/// Why a crash image was not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unchecked {
    /// The image did not mount, or fuse2fs did not mount it: a finding about the image.
    Unmountable(String),
    /// The `fuse:` daemon did not start or mount on the recovered state: the daemon's failure
    /// (its last output in the message), not a finding about the image.
    Daemon(String),
}

impl std::fmt::Display for Unchecked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unmountable(why) => write!(f, "unmountable: {why}"),
            Self::Daemon(why) => write!(f, "the FUSE command did not start on it: {why}"),
        }
    }
}

/// The two recorders behind one face: block level ([`RecordedFs`]) and file level
/// ([`FilesFs`]), as the `crash` workload drives them. A recorder records a generated
/// workload, builds the crash states it is told to from the log and mounts them for a check;
/// what a log means (its crash states, what a crash keeps, which checker judges a state) is
/// the crash workload's.
pub trait Recorder {
    /// One generated workload's log: the device's writes and flushes ([`Entry`]) at block
    /// level, the daemon's operations ([`files::FileOp`]) at file level; the marks in it.
    type Log;

    /// Facts for the report: how the recorded filesystem was made, the recorder.
    fn info(&self) -> Vec<(String, String)>;

    /// Crash states that can be checked at once, each in its own slot.
    fn slots(&self) -> usize;

    /// Starts a generated workload on a fresh filesystem or directory; returns the root it
    /// runs in.
    fn begin_case(&mut self) -> Result<PathBuf, TargetError>;

    /// Below a `fuse:` daemon: makes what it has written so far durable, whatever the
    /// daemon's own fsync does; nothing otherwise.
    fn sync_lower(&self) -> Result<(), TargetError>;

    /// Writes mark `n` into the log: the workload's persistence call `n` has returned.
    fn mark(&self, n: u32) -> Result<(), TargetError>;

    /// Ends the generated workload; returns its log.
    fn end_case(&mut self) -> Result<Self::Log, TargetError>;

    /// Builds crash state `slot` of `log`: the entries `keep` selects (indexes into it, in
    /// log order), then, for a torn write `(entry, bytes)`, that entry's first bytes only.
    /// Returns its path: an image (block level) or a directory (file level).
    fn build_state(
        &self,
        slot: usize,
        log: &Self::Log,
        keep: &[usize],
        torn: Option<(usize, u64)>,
    ) -> Result<PathBuf, TargetError>;

    /// Mounts crash state `state` in `slot` within `timeout` (recovery runs, or the daemon
    /// starts on it), calls `check` on its root, unmounts. `Ok(Err)`: the state could not be
    /// checked, a finding; `Err`: the recorder failed.
    fn check_state<R>(
        &self,
        slot: usize,
        state: &Path,
        timeout: Duration,
        check: impl FnOnce(&Path) -> R,
    ) -> Result<Result<R, Unchecked>, TargetError>;

    /// The output of the `fuse:` daemon last started on a crash state in `slot`, when a
    /// daemon runs on the states: to keep beside a state it failed on.
    fn daemon_log(&self, slot: usize) -> Option<PathBuf>;

    /// Stops what runs, unmounts, removes what was made.
    fn finish(self) -> Result<(), TargetError>;
}

/// A recorded filesystem, from `start` to `finish`.
#[derive(Debug)]
pub struct RecordedFs {
    fs: &'static Filesystem,
    options: RecordOptions,
    /// The directory with the base image and the spill file, its FUSE mount point and the
    /// mount points, all recorded.
    p: Provisioned,
    ledger: crate::state::LedgerHandle,
    dir: PathBuf,
    fuse_mnt: PathBuf,
    case_mnt: PathBuf,
    slot_mnts: Vec<PathBuf>,
    /// With a daemon: its mount point for the workload, then one per slot.
    daemon_mnts: Vec<PathBuf>,
    server: ServerProcess,
    /// The current generated workload's loop device and mount.
    case: Option<Provisioned>,
}

/// What `start` made: directory, FUSE, case and slot mount points, the daemon's mount
/// points.
type Made = (PathBuf, PathBuf, PathBuf, Vec<PathBuf>, Vec<PathBuf>);

fn err(what: &str, path: &Path, e: impl std::fmt::Display) -> TargetError {
    TargetError(format!("cannot {what} {}: {e}", path.display()))
}

impl RecordedFs {
    /// Makes the base filesystem, starts the FUSE server and mounts it. Everything made is in
    /// the state file; on failure it is undone.
    pub fn start(workdir: &Workdir, index: usize, options: RecordOptions) -> Result<Self, TargetError> {
        let fs = filesystem(&options.fs)
            .filter(|f| RECORDABLE.contains(&f.name))
            .ok_or_else(|| TargetError(format!("{} cannot be recorded: {}", options.fs, RECORDABLE.join(", "))))?;
        let ctx = ProvisionCtx { workdir, index, mount_base: None };
        if let Some(free) = sys::free_bytes(workdir.path()) {
            if free < options.max_log {
                return Err(TargetError(format!(
                    "max_log={} does not fit the {} free in {}: use a smaller max_log= or another --workdir",
                    options.max_log,
                    free,
                    workdir.path().display()
                )));
            }
        }
        let mut p = Provisioned::new(&ctx);
        let ledger = workdir.ledger();
        let mut made: Option<Made> = None;
        let mut server = None;
        let built = (|| {
            let dir = p.make_dir(ctx.path(&format!("crash-{index}")), true)?;
            let base = dir.join("base.img");
            let (base_file, _) = safefs::create_new_file(&base).map_err(|e| err("create", &base, e))?;
            base_file.set_len(options.size).map_err(|e| err("size", &base, e))?;
            let mut mkfs = options.mkfs.clone();
            // A filesystem block smaller than the device's logical block does not mount: a
            // small ext image defaults to 1 KiB blocks.
            if options.sector_4k && fs.name.starts_with("ext") && !mkfs.iter().any(|a| a.starts_with("-b")) {
                mkfs.splice(0..0, ["-b".to_string(), "4096".to_string()]);
            }
            crate::kinds::make_filesystem(&mut p, fs, &mkfs, &base)?;
            let spill_path = dir.join("spill.log");
            let (spill_file, _) = safefs::create_new_file(&spill_path).map_err(|e| err("create", &spill_path, e))?;
            let fuse_mnt = p.make_dir(ctx.path(&format!("crash-{index}-fuse")), false)?;
            let case_mnt = p.make_dir(ctx.path(&format!("crash-{index}-mnt")), false)?;
            let mut slot_mnts = Vec::new();
            let mut daemon_mnts = Vec::new();
            for s in 0..options.slots.max(1) {
                slot_mnts.push(p.make_dir(ctx.path(&format!("crash-{index}-s{s}")), false)?);
            }
            if options.daemon.is_some() {
                daemon_mnts.push(p.make_dir(ctx.path(&format!("crash-{index}-mnt-fuse")), false)?);
                for s in 0..options.slots.max(1) {
                    daemon_mnts.push(p.make_dir(ctx.path(&format!("crash-{index}-s{s}-fuse")), false)?);
                }
            }
            let base_ro = File::open(&base).map_err(|e| err("open", &base, e))?;
            let files = process::ServerFiles { spill: spill_file, base: base_ro, slots: options.slots.max(1) };
            let started =
                ServerProcess::start(files, options.size, options.max_log, &fuse_mnt, Duration::from_secs(30));
            // The server before its mount, so that a teardown unmounts first, then ends it.
            if let Ok(s) = &started {
                p.add(s.resource())?;
            }
            // Recorded whenever it is mounted, even if the server then said otherwise.
            if sys::mount_at(&fuse_mnt).is_some() {
                p.add_mount(&fuse_mnt, true)?;
            }
            let started = started
                .map_err(|e| TargetError(format!("cannot mount the recorder at {}: {e}", fuse_mnt.display())))?;
            p.fact(
                "recorder",
                format!(
                    "FUSE {} serving copy-on-write views of {} (process {})",
                    fuse_mnt.display(),
                    base.display(),
                    started.pid()
                ),
            );
            server = Some(started);
            made = Some((dir, fuse_mnt, case_mnt, slot_mnts, daemon_mnts));
            Ok(())
        })();
        let (Some((dir, fuse_mnt, case_mnt, slot_mnts, daemon_mnts)), Some(server)) =
            (made.filter(|_| built.is_ok()), server.take())
        else {
            let e = built.err().unwrap_or_else(|| TargetError("recorder: not started".into()));
            let undo = Box::new(p).teardown().err();
            if let Some(s) = server {
                s.stop();
            }
            return Err(match undo {
                Some(u) => TargetError(format!("{e}; and undoing it failed: {u}")),
                None => e,
            });
        };
        Ok(Self { fs, options, p, ledger, dir, fuse_mnt, case_mnt, slot_mnts, daemon_mnts, server, case: None })
    }

    /// Bytes in the spill file now.
    pub fn logged_bytes(&self) -> Result<u64, TargetError> {
        self.server.spill_len().map_err(TargetError)
    }

    /// The recorded filesystem (`ext4`, `xfs`, ...): what each crash image holds.
    pub fn fs(&self) -> &'static str {
        self.fs.name
    }
}

impl Recorder for RecordedFs {
    /// The device's writes, flushes and marks.
    type Log = Vec<Entry>;

    /// Facts for the report: mkfs, the recorder.
    fn info(&self) -> Vec<(String, String)> {
        self.p.info.clone()
    }

    /// Crash images that can be checked at once.
    fn slots(&self) -> usize {
        self.slot_mnts.len()
    }

    /// Starts a generated workload on a fresh copy of the base filesystem: resets the log,
    /// attaches a loop device to the recorded image and mounts it. Returns the mount point.
    fn begin_case(&mut self) -> Result<PathBuf, TargetError> {
        if self.case.is_some() {
            return Err(TargetError("recorder: a generated workload is running already".into()));
        }
        // No loop device is on the image now: its view goes back to the base at once.
        self.server.reset().map_err(TargetError)?;
        let mut case = Provisioned::with_ledger(self.ledger.clone());
        let image = self.fuse_mnt.join(server::IMAGE_NAME);
        let attached = if self.options.fuse2fs {
            let log = self.dir.join("fuse2fs-case.log");
            fuse2fs(&mut case, &image, &self.case_mnt, &self.options.mount, &log, Duration::from_secs(30))
        } else {
            attach(&mut case, &image, self.options.sector_4k)
                .and_then(|dev| crate::kinds::mount(&mut case, self.fs.name, &dev, &self.options.mount, &self.case_mnt))
        };
        // With a daemon: its `{work}` made durable at the level below (the kernel's own
        // filesystem: it honours fsync) before the daemon starts on it.
        let root = attached.and_then(|()| match (&self.options.daemon, self.daemon_mnts.first()) {
            (Some(cmd), Some(mnt)) => {
                let work = self.case_mnt.join("work");
                let made = std::fs::create_dir(&work)
                    .and_then(|()| File::open(&work)?.sync_all())
                    .and_then(|()| File::open(&self.case_mnt)?.sync_all());
                made.map_err(|e| err("create", &work, e))?;
                let log = self.dir.join("daemon-case.log");
                start_daemon(&mut case, cmd, &work, mnt, &log, self.options.daemon_timeout)?;
                Ok(mnt.clone())
            }
            _ => Ok(self.case_mnt.clone()),
        });
        match root {
            Ok(root) => {
                self.case = Some(case);
                Ok(root)
            }
            Err(e) => {
                let _ = Box::new(case).teardown();
                Err(e)
            }
        }
    }

    /// With a daemon: syncs the recorded filesystem below it (syncfs), so that what the daemon
    /// has written so far is durable whatever the daemon did; nothing otherwise.
    fn sync_lower(&self) -> Result<(), TargetError> {
        if self.options.daemon.is_none() {
            return Ok(());
        }
        let dir = File::open(&self.case_mnt).map_err(|e| err("open", &self.case_mnt, e))?;
        rustix::fs::syncfs(&dir).map_err(|e| err("sync", &self.case_mnt, e))
    }

    /// Writes mark `n` into the log: the workload's persistence call `n` has returned.
    fn mark(&self, n: u32) -> Result<(), TargetError> {
        self.server.mark(n).map_err(TargetError)
    }

    /// Ends the generated workload: unmounts, detaches, returns its log.
    fn end_case(&mut self) -> Result<Vec<Entry>, TargetError> {
        if let Some(case) = self.case.take() {
            Box::new(case).teardown()?;
        }
        self.server.entries().map_err(TargetError)
    }

    /// Builds crash image `slot`: the base plus the writes `keep` selects from the log
    /// (indexes into it, in log order), then, for a torn write, the first `bytes` of write
    /// `torn.0` only. A virtual image the server composes from its log (`state-SLOT` on the
    /// recorder's mount: the base's blocks shared, the chosen writes read from the spill file,
    /// recovery's writes kept apart); its path. The server holds the log: `log` is not read.
    fn build_state(
        &self,
        slot: usize,
        _log: &Vec<Entry>,
        keep: &[usize],
        torn: Option<(usize, u64)>,
    ) -> Result<PathBuf, TargetError> {
        self.server.compose(slot, keep, torn).map_err(TargetError)?;
        Ok(self.fuse_mnt.join(server::state_name(slot)))
    }

    /// Mounts crash image `image` in `slot` within `timeout` (recovery runs), calls `check`
    /// on its root (with a daemon: on the daemon's mount, started on the recovered `{work}`),
    /// unmounts. The image is left for its checker.
    fn check_state<R>(
        &self,
        slot: usize,
        image: &Path,
        timeout: Duration,
        check: impl FnOnce(&Path) -> R,
    ) -> Result<Result<R, Unchecked>, TargetError> {
        let mnt = self.slot_mnts.get(slot).ok_or_else(|| TargetError(format!("recorder: no slot {slot}")))?;
        let mut state = Provisioned::with_ledger(self.ledger.clone());
        let mounted = if self.options.fuse2fs {
            let log = self.dir.join(format!("fuse2fs-s{slot}.log"));
            fuse2fs(&mut state, image, mnt, "", &log, timeout).map_err(|e| Unchecked::Unmountable(e.to_string()))
        } else {
            let dev = match attach(&mut state, image, false) {
                Ok(d) => d,
                Err(e) => {
                    Box::new(state).teardown()?;
                    return Err(e);
                }
            };
            // xfs refuses a second filesystem with the same UUID (states checked side by side).
            let opts = if self.fs.name == "xfs" { "nouuid" } else { "" };
            mount_within(&mut state, self.fs.name, &dev, opts, mnt, timeout).map_err(Unchecked::Unmountable)
        };
        // With a daemon: started again on the recovered `{work}`, the check through its mount.
        let root = mounted.and_then(|()| match (&self.options.daemon, self.daemon_mnts.get(slot + 1)) {
            (Some(cmd), Some(dmnt)) => {
                start_daemon(&mut state, cmd, &mnt.join("work"), dmnt, &daemon_log(&self.dir, slot), timeout)
                    .map(|()| dmnt.clone())
                    .map_err(|e| Unchecked::Daemon(format!("on the recovered state: {e}")))
            }
            _ => Ok(mnt.clone()),
        });
        let checked = root.map(|root| check(&root));
        Box::new(state).teardown()?;
        Ok(checked)
    }

    /// The log of the `fuse:` daemon last started on a crash state in `slot` (its output),
    /// when there is a daemon: to keep beside a state it failed on.
    fn daemon_log(&self, slot: usize) -> Option<PathBuf> {
        self.options.daemon.as_ref().map(|_| daemon_log(&self.dir, slot))
    }

    /// Unmounts and detaches everything, stops the server, removes the images and the log.
    fn finish(mut self) -> Result<(), TargetError> {
        if let Some(case) = self.case.take() {
            Box::new(case).teardown()?;
        }
        // Unmounting ends the server; stopping it after a failed teardown ends its FUSE
        // connection, and `fsarena cleanup` undoes what is left, as after a kill.
        let undone = Box::new(self.p).teardown();
        self.server.stop();
        undone
    }
}

/// A `fuse:` target's daemon recorded at file level: its `{work}` is fsarena's logging
/// passthrough ([`files`]) onto a fresh directory per generated workload; a crash state is
/// that log replayed into a directory of its own, with the daemon started again on it.
#[derive(Debug)]
pub struct FilesFs {
    cmd: String,
    timeout: Duration,
    max_log: u64,
    p: Provisioned,
    ledger: crate::state::LedgerHandle,
    dir: PathBuf,
    work_mnt: PathBuf,
    /// The daemon's mount point for the workload, then one per slot.
    daemon_mnts: Vec<PathBuf>,
    case: Option<(Provisioned, files::FileRecorder)>,
}

impl FilesFs {
    /// Makes the directories and mount points (recorded); nothing is mounted yet.
    pub fn start(workdir: &Workdir, index: usize, options: &RecordOptions) -> Result<Self, TargetError> {
        let cmd = options.daemon.clone().ok_or_else(|| TargetError("file level needs a fuse: command".into()))?;
        let ctx = ProvisionCtx { workdir, index, mount_base: None };
        let mut p = Provisioned::new(&ctx);
        let ledger = workdir.ledger();
        let made = (|| {
            let dir = p.make_dir(ctx.path(&format!("crash-{index}")), true)?;
            let work_mnt = p.make_dir(ctx.path(&format!("crash-{index}-work")), false)?;
            let mut daemon_mnts = vec![p.make_dir(ctx.path(&format!("crash-{index}-mnt-fuse")), false)?];
            for s in 0..options.slots.max(1) {
                daemon_mnts.push(p.make_dir(ctx.path(&format!("crash-{index}-s{s}-fuse")), false)?);
            }
            Ok::<_, TargetError>((dir, work_mnt, daemon_mnts))
        })();
        let (dir, work_mnt, daemon_mnts) = match made {
            Ok(m) => m,
            Err(e) => {
                let _ = Box::new(p).teardown();
                return Err(e);
            }
        };
        p.fact(
            "recorder",
            format!(
                "file level: {{work}} is fsarena's logging FUSE passthrough at {} onto {}/live",
                work_mnt.display(),
                dir.display()
            ),
        );
        Ok(Self {
            cmd,
            timeout: options.daemon_timeout,
            max_log: options.max_log.min(files::FILE_LOG_MAX),
            p,
            ledger,
            dir,
            work_mnt,
            daemon_mnts,
            case: None,
        })
    }

    /// Bytes of data logged so far.
    pub fn logged_bytes(&self) -> u64 {
        self.case.as_ref().map_or(0, |(_, r)| r.logged_bytes())
    }
}

impl Recorder for FilesFs {
    /// The daemon's operations in `{work}`, and the marks.
    type Log = Vec<files::FileOp>;

    /// Facts for the report.
    fn info(&self) -> Vec<(String, String)> {
        self.p.info.clone()
    }

    /// Crash states checked at once.
    fn slots(&self) -> usize {
        self.daemon_mnts.len() - 1
    }

    /// Starts a generated workload: a fresh, empty `{work}` behind the passthrough, the daemon
    /// on it. Returns the daemon's mount point.
    fn begin_case(&mut self) -> Result<PathBuf, TargetError> {
        if self.case.is_some() {
            return Err(TargetError("recorder: a generated workload is running already".into()));
        }
        let live = self.dir.join("live");
        fresh_dir(&live)?;
        let mut case = Provisioned::with_ledger(self.ledger.clone());
        let rec = files::FileRecorder::start(&live, &self.work_mnt, self.max_log)?;
        let started = (|| {
            case.add_mount(&self.work_mnt, true)?;
            let log = self.dir.join("daemon-case.log");
            start_daemon(&mut case, &self.cmd, &self.work_mnt, &self.daemon_mnts[0], &log, self.timeout)
        })();
        match started {
            Ok(()) => {
                self.case = Some((case, rec));
                Ok(self.daemon_mnts[0].clone())
            }
            Err(e) => {
                let _ = Box::new(case).teardown();
                rec.stop();
                Err(e)
            }
        }
    }

    /// Writes mark `n` into the log.
    fn mark(&self, n: u32) -> Result<(), TargetError> {
        match &self.case {
            Some((_, rec)) => {
                rec.mark(n);
                Ok(())
            }
            None => Err(TargetError("recorder: no generated workload is running".into())),
        }
    }

    /// The set-up so far is durable, whatever the daemon's fsync did.
    fn sync_lower(&self) -> Result<(), TargetError> {
        match &self.case {
            Some((_, rec)) => {
                rec.barrier();
                Ok(())
            }
            None => Err(TargetError("recorder: no generated workload is running".into())),
        }
    }

    /// Ends the generated workload: stops the daemon, unmounts the passthrough, returns the log.
    fn end_case(&mut self) -> Result<Vec<files::FileOp>, TargetError> {
        let Some((case, rec)) = self.case.take() else { return Ok(Vec::new()) };
        let undone = Box::new(case).teardown();
        let ops = rec.take_ops();
        rec.stop();
        undone.map(|()| ops)
    }

    /// Builds crash state `slot`: the operations `keep` selects, replayed into a fresh
    /// directory. A write is logged in pieces, kept or lost whole: none is torn.
    fn build_state(
        &self,
        slot: usize,
        ops: &Vec<files::FileOp>,
        keep: &[usize],
        torn: Option<(usize, u64)>,
    ) -> Result<PathBuf, TargetError> {
        if torn.is_some() {
            return Err(TargetError("recorder: a torn write at file level".into()));
        }
        let path = self.dir.join(format!("state-{slot}"));
        fresh_dir(&path)?;
        files::build(ops, keep, &path).map_err(|e| err("build the crash state in", &path, e))?;
        Ok(path)
    }

    /// Starts the daemon on crash state `dir` in `slot` within `timeout`, calls `check` on its
    /// mount, stops it.
    fn check_state<R>(
        &self,
        slot: usize,
        dir: &Path,
        timeout: Duration,
        check: impl FnOnce(&Path) -> R,
    ) -> Result<Result<R, Unchecked>, TargetError> {
        let mnt = self.daemon_mnts.get(slot + 1).ok_or_else(|| TargetError(format!("recorder: no slot {slot}")))?;
        let mut state = Provisioned::with_ledger(self.ledger.clone());
        let checked = start_daemon(&mut state, &self.cmd, dir, mnt, &daemon_log(&self.dir, slot), timeout)
            .map(|()| check(mnt))
            .map_err(|e| Unchecked::Daemon(format!("on the crash state: {e}")));
        Box::new(state).teardown()?;
        Ok(checked)
    }

    /// The log of the daemon last started on a crash state in `slot` (its output).
    fn daemon_log(&self, slot: usize) -> Option<PathBuf> {
        Some(daemon_log(&self.dir, slot))
    }

    /// Stops what runs, unmounts, removes the directories.
    fn finish(mut self) -> Result<(), TargetError> {
        let ended = match self.case.take() {
            Some((case, rec)) => {
                let r = Box::new(case).teardown();
                rec.stop();
                r
            }
            None => Ok(()),
        };
        let undone = Box::new(self.p).teardown();
        ended.and(undone)
    }
}

/// `path` as a new empty directory (0700), whatever was there before (a crash state of the
/// last generated workload, inside the recorder's own directory).
fn fresh_dir(path: &Path) -> Result<(), TargetError> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(err("remove", path, e)),
    }
    std::fs::create_dir(path).map_err(|e| err("create", path, e))?;
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .map_err(|e| err("set the mode of", path, e))
}

/// Mounts `image` at `mnt` with fuse2fs in the foreground (its process and mount recorded),
/// its output in `log` (a file in the recorder's directory, which goes with it).
fn fuse2fs(
    p: &mut Provisioned,
    image: &Path,
    mnt: &Path,
    opts: &str,
    log: &Path,
    timeout: Duration,
) -> Result<(), TargetError> {
    let mut args = vec!["-f".to_string(), image.to_string_lossy().into_owned(), mnt.to_string_lossy().into_owned()];
    if !opts.is_empty() {
        args.extend(["-o".to_string(), opts.to_string()]);
    }
    let log = File::create(log).map_err(|e| err("create", log, e))?;
    crate::fuse::spawn_daemon(p, mnt, "fuse2fs", &args, log, (timeout, MOUNT_TIMEOUT))
}

/// Where the output of the daemon started on a crash state in `slot` goes, in the recorder's
/// directory `dir` (each state in the slot writes it anew).
fn daemon_log(dir: &Path, slot: usize) -> PathBuf {
    dir.join(format!("daemon-s{slot}.log"))
}

/// The `crash` option that sets how long a crash image may take to mount.
const MOUNT_TIMEOUT: &str = "crash's mount_timeout=";

/// Starts a `fuse:` command with `{work}` = `work` and `{mnt}` = `mnt` (its process and
/// mount recorded), its output in `log`.
fn start_daemon(
    p: &mut Provisioned,
    cmd: &str,
    work: &Path,
    mnt: &Path,
    log: &Path,
    timeout: Duration,
) -> Result<(), TargetError> {
    let line = crate::fuse::substitute(cmd, mnt, work);
    let log = File::create(log).map_err(|e| err("create", log, e))?;
    crate::fuse::spawn_daemon(p, mnt, "sh", &["-c".to_string(), line], log, (timeout, MOUNT_TIMEOUT))
}

/// Attaches a loop device to `image` (recorded right after); returns `/dev/loopN`. Direct
/// I/O: the loop driver then submits its requests asynchronously, several at a time, and the
/// images are the recorder's FUSE files, which no page cache stands in front of anyway.
fn attach(p: &mut Provisioned, image: &Path, sector_4k: bool) -> Result<String, TargetError> {
    let image_id = safefs::Identity::of_path(image).map_err(|e| err("stat", image, e))?;
    let image_s = image.to_string_lossy();
    let mut args = vec!["--find", "--show", "--direct-io=on"];
    if sector_4k {
        args.extend(["--sector-size", "4096"]);
    }
    args.push(&image_s);
    let dev = sys::run("losetup", &args)?;
    p.add(Resource::Loop { device: PathBuf::from(&dev), image: image.to_path_buf(), image_id })?;
    Ok(dev)
}

/// `mount -t fstype [-o opts] dev mnt`, given up after `timeout` (an `unmountable` state).
fn mount_within(
    p: &mut Provisioned,
    fstype: &str,
    dev: &str,
    opts: &str,
    mnt: &Path,
    timeout: Duration,
) -> Result<(), String> {
    let mut cmd = Command::new("mount");
    cmd.args(["-t", fstype]);
    if !opts.is_empty() {
        cmd.args(["-o", opts]);
    }
    cmd.arg(dev).arg(mnt).env("LC_ALL", "C").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run mount: {e}"))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if started.elapsed() < timeout => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    // Recorded whenever it is mounted, even after a timeout or a failing helper.
    if sys::mount_at(mnt).is_some() {
        p.add_mount(mnt, false).map_err(|e| e.0)?;
    }
    match status {
        Some(s) if s.success() => Ok(()),
        Some(s) => {
            let mut stderr = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
            }
            Err(format!("mount failed ({s}): {}", stderr.trim()))
        }
        None => Err(format!("mount did not finish within {timeout:?} ({MOUNT_TIMEOUT})")),
    }
}

/// A loop target with `record=1`: the filesystem on the recorder, for any workload, so that
/// what recording costs is measured by running the same workload with and without it.
#[derive(Debug)]
pub struct Recorded {
    rec: Option<RecordedFs>,
    root: PathBuf,
}

impl Recorded {
    /// Makes the filesystem on a recorder (the base image, the FUSE mount, the loop device
    /// and the mount, each in the state file) and mounts it.
    pub(crate) fn provision(
        ctx: &ProvisionCtx<'_>,
        fs: &str,
        common: &crate::common::CommonOptions,
    ) -> Result<Box<dyn Mounted>, TargetError> {
        let options = RecordOptions {
            fs: fs.to_string(),
            size: common.size,
            mkfs: common.mkfs.clone(),
            mount: common.mount.clone(),
            sector_4k: false,
            max_log: 2 << 30,
            slots: 1,
            fuse2fs: false,
            daemon: None,
            daemon_timeout: Duration::from_secs(30),
        };
        let mut rec = RecordedFs::start(ctx.workdir, ctx.index, options)?;
        match rec.begin_case() {
            Ok(root) => Ok(Box::new(Self { rec: Some(rec), root })),
            Err(e) => {
                let _ = rec.finish();
                Err(e)
            }
        }
    }
}

impl Mounted for Recorded {
    fn root(&self) -> &Path {
        &self.root
    }
    fn info(&self) -> Vec<(String, String)> {
        let mut info = self.rec.as_ref().map(RecordedFs::info).unwrap_or_default();
        info.push(("kind".into(), "recorded (record=1)".into()));
        info.push(("root".into(), self.root.display().to_string()));
        info
    }
    fn teardown(mut self: Box<Self>) -> Result<(), TargetError> {
        match self.rec.take() {
            Some(mut rec) => {
                let ended = rec.end_case().map(|_| ());
                let finished = rec.finish();
                ended.and(finished)
            }
            None => Ok(()),
        }
    }
}
