//! Where a case runs: its own fresh directory (the working directory of its thread), its own
//! umask, and, when it asks, other users' credentials.
//!
//! Credentials and umask are switched per thread, not per process: Linux keeps them per task
//! (glibc's setuid() broadcasts to every thread; the raw setresuid/setgroups syscalls, through
//! rustix, change only the calling one), and `unshare(CLONE_FS)` gives a thread its own umask
//! and working directory. A case in a thread of its own is therefore exactly what a forked
//! child is for the kernel's permission checks (an unprivileged euid loses the capabilities,
//! so DAC, sticky and ACL checks are real), without forking a multi-threaded process.

use super::check::{fail, ok, unsupported, Check, Miss};
use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags, CWD};
use rustix::io::Errno;
use rustix::thread::{Gid, Uid};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// The unprivileged users cases act as (pjdfstest's choice: the top of the 16-bit id space,
/// below 65535, unlikely to own anything on the machine).
pub const U1: User = User { uid: 65534, gid: 65534, groups: &[] };
/// A second unprivileged user, in a group of its own.
pub const U2: User = User { uid: 65533, gid: 65533, groups: &[] };

/// Credentials for [`Ctx::as_user`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct User {
    /// Real, effective, saved and filesystem uid.
    pub uid: u32,
    /// Real, effective, saved and filesystem gid.
    pub gid: u32,
    /// Supplementary groups.
    pub groups: &'static [u32],
}

impl User {
    /// The same user with supplementary `groups`.
    pub const fn with_groups(self, groups: &'static [u32]) -> User {
        User { groups, ..self }
    }

    /// The same user with primary group `gid`.
    pub const fn with_gid(self, gid: u32) -> User {
        User { gid, ..self }
    }
}

/// What the runner learns of the filesystem once, on the first case that asks.
#[derive(Debug, Default)]
pub struct Probes {
    granularity: OnceLock<Duration>,
    acl: OnceLock<Result<(), String>>,
    flags: OnceLock<Result<(), String>>,
    xattr: [OnceLock<Result<(), String>>; 3],
    other_mount: OnceLock<Option<PathBuf>>,
}

impl Probes {
    /// How many cases run at once on the filesystem under `root`: one (in order, as written)
    /// where timestamps are finer than a second; eight where they are whole seconds (fuse2fs),
    /// since there every case that checks a time change waits for the next second, and one
    /// after the other they took about a minute. Cases share nothing but the probes: each has
    /// its own directory, thread, credentials, umask and working directory.
    pub fn lanes(&self, root: &Path) -> usize {
        let g = *self.granularity.get_or_init(|| granularity(root));
        if g >= Duration::from_secs(1) {
            8
        } else {
            1
        }
    }
}

/// One case's surroundings.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The case's directory, absolute; also the working directory of the case's thread, so
    /// cases use relative names (`"a"`, `"d/b"`).
    pub dir: PathBuf,
    /// Learnt once per run.
    pub(super) probes: &'a Probes,
}

impl Ctx<'_> {
    /// `name` under the case's directory, absolute (for messages and for calls made from
    /// another directory).
    pub fn path(&self, name: impl AsRef<Path>) -> PathBuf {
        self.dir.join(name)
    }

    /// Runs `f` as `user` (uid, gid and groups switched for one thread; umask and working
    /// directory are the case's), and returns what it returns. A panic in `f` is the case's.
    pub fn as_user<T: Send>(&self, user: User, f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| {
            let h = s.spawn(move || {
                switch(user);
                f()
            });
            match h.join() {
                Ok(v) => v,
                Err(p) => std::panic::resume_unwind(p),
            }
        })
    }

    /// Waits until an operation made now gives timestamps later than any taken before: until
    /// the kernel's coarse clock has passed the fine clock's time now, or the next second on a
    /// filesystem that keeps whole seconds (ext2/ext3 with 128-byte inodes, some FUSE
    /// filesystems).
    pub fn tick(&self) {
        let g = *self.probes.granularity.get_or_init(|| granularity(&self.dir));
        // From the fine clock: a timestamp taken before may be fine-grained (multigrain
        // timestamps, Linux 6.13+, stamp a queried inode from the fine clock), so up to a
        // tick later than the coarse clock read now.
        let start = fine_now();
        let step = Duration::from_micros(500);
        loop {
            std::thread::sleep(step);
            let now = coarse_now();
            let passed = if g >= Duration::from_secs(1) { now.as_secs() > start.as_secs() } else { now > start };
            if passed {
                break;
            }
        }
    }

    /// The longest name the filesystem takes (`statvfs`'s f_namemax, 255 on most).
    pub fn name_max(&self) -> usize {
        rustix::fs::statvfs(&self.dir).map_or(255, |s| s.f_namemax as usize)
    }

    /// Ok when POSIX ACLs can be set here (`system.posix_acl_access`), else unsupported with
    /// the reason. Use `ctx.need_acl()?` first in an ACL case.
    pub fn need_acl(&self) -> Check {
        probe(&self.probes.acl, || {
            let f = probe_file(&self.dir, "acl")?;
            // user::rw-, group::r--, other::r--: the minimal ACL, equal to mode 0644.
            let acl = super::acl::Acl::from_mode(0o644).to_xattr();
            let r = rustix::fs::setxattr(&f, "system.posix_acl_access", &acl, rustix::fs::XattrFlags::empty());
            let _ = std::fs::remove_file(&f);
            r.map_err(|e| {
                format!(
                    "POSIX ACLs are off or not implemented (setxattr system.posix_acl_access: {})",
                    super::check::name(e)
                )
            })
        })
    }

    /// Ok when the extended attribute namespace of `name` (`user.`, `trusted.`,
    /// `security.`) can be written here, else unsupported with the reason.
    pub fn need_xattr(&self, name: &str) -> Check {
        let (slot, ns) = match name.split('.').next() {
            Some("user") => (0, "user"),
            Some("trusted") => (1, "trusted"),
            _ => (2, "security"),
        };
        probe(&self.probes.xattr[slot], || {
            let f = probe_file(&self.dir, "xattr")?;
            let attr = format!("{ns}.fsarena_probe");
            let r = rustix::fs::setxattr(&f, attr.as_str(), b"1", rustix::fs::XattrFlags::empty());
            let _ = std::fs::remove_file(&f);
            r.map_err(|e| {
                format!("{ns}. extended attributes cannot be set (setxattr {attr}: {})", super::check::name(e))
            })
        })
    }

    /// Ok when the immutable and append-only attributes (FS_IOC_SETFLAGS, chattr +i/+a)
    /// exist here, else unsupported with the reason.
    pub fn need_flags(&self) -> Check {
        probe(&self.probes.flags, || {
            let f = probe_file(&self.dir, "flags")?;
            let r = (|| {
                let fd = rustix::fs::open(&f, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
                let flags = rustix::fs::ioctl_getflags(&fd)?;
                rustix::fs::ioctl_setflags(&fd, flags | rustix::fs::IFlags::APPEND)?;
                rustix::fs::ioctl_setflags(&fd, flags)
            })();
            let _ = std::fs::remove_file(&f);
            r.map_err(|e| format!("no immutable/append-only attributes (FS_IOC_SETFLAGS: {})", super::check::name(e)))
        })
    }

    /// A directory on another mount than the target, for EXDEV: nothing is created there (the
    /// kernel refuses a link or rename across mounts before looking further); `None` when
    /// none is found.
    pub fn other_mount(&self) -> Result<PathBuf, Miss> {
        self.probes
            .other_mount
            .get_or_init(|| {
                let here = rustix::fs::stat(&self.dir).ok()?.st_dev;
                ["/dev/shm", "/run", "/proc", "/sys", "/tmp", "/"]
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| rustix::fs::stat(p).is_ok_and(|s| s.st_dev != here && s.st_mode & 0o170_000 == 0o040_000))
            })
            .clone()
            .ok_or_else(|| unsupported("no directory on another mount to cross"))
    }
}

/// Switches the calling thread to `user`: groups first, then gid, then uid (after which it
/// could not change the others).
fn switch(user: User) {
    let groups: Vec<Gid> = user.groups.iter().map(|g| Gid::from_raw(*g)).collect();
    let (uid, gid) = (Uid::from_raw(user.uid), Gid::from_raw(user.gid));
    let r = rustix::thread::set_thread_groups(&groups)
        .and_then(|()| rustix::thread::set_thread_res_gid(gid, gid, gid))
        .and_then(|()| rustix::thread::set_thread_res_uid(uid, uid, uid));
    if let Err(e) = r {
        // Caught as the case's failure by the runner.
        panic!("switching to uid {} gid {}: {}", user.uid, user.gid, super::check::name(e));
    }
}

/// A probe's cached result as a check.
fn probe(slot: &OnceLock<Result<(), String>>, f: impl FnOnce() -> Result<(), String>) -> Check {
    slot.get_or_init(f).clone().map_err(Miss::Unsupported)
}

/// A fresh empty file for a probe, in `dir`.
fn probe_file(dir: &Path, what: &str) -> Result<PathBuf, String> {
    let f = dir.join(format!(".fsarena-probe-{what}"));
    rustix::fs::open(&f, OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC, Mode::from_raw_mode(0o644))
        .map(drop)
        .map_err(|e| format!("creating a probe file: {}", super::check::name(e)))?;
    Ok(f)
}

/// CLOCK_REALTIME: no timestamp taken before can be later.
fn fine_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// CLOCK_REALTIME_COARSE: the clock the kernel stamps inodes with (unless it was queried
/// since its last change: see [`Ctx::tick`]).
fn coarse_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The timestamp granularity of the filesystem under `dir`: one second when files created
/// over a few clock ticks all have whole-second ctimes, else finer (one coarse clock tick).
fn granularity(dir: &Path) -> Duration {
    let mut whole = true;
    for i in 0..3 {
        let f = dir.join(format!(".fsarena-probe-time{i}"));
        let made = rustix::fs::open(&f, OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC, Mode::from_raw_mode(0o644));
        if made.is_ok() {
            if let Ok(x) = rustix::fs::statx(CWD, &f, AtFlags::empty(), StatxFlags::CTIME) {
                whole &= x.stx_ctime.tv_nsec == 0;
            }
        }
        let _ = std::fs::remove_file(&f);
        std::thread::sleep(Duration::from_millis(3));
    }
    if whole {
        Duration::from_secs(1)
    } else {
        Duration::from_nanos(1)
    }
}

/// For cases: a failure when `r` is not the errno the setup needed to see absent (e.g. a
/// feature probe); re-exported for convenience.
pub fn setup<T>(what: &str, r: rustix::io::Result<T>) -> Result<T, Miss> {
    ok(what, r)
}

/// EOPNOTSUPP/ENOTSUP/ENOTTY from a call the filesystem may not implement: unsupported with
/// that reason; any other result is `r` as it was.
pub fn maybe_unsupported<T>(what: &str, r: rustix::io::Result<T>) -> Result<rustix::io::Result<T>, Miss> {
    match r {
        Err(e) if e == Errno::OPNOTSUPP || e == Errno::NOTTY || e == Errno::NOSYS => {
            Err(unsupported(format!("{what}: {}", super::check::name(e))))
        }
        r => Ok(r),
    }
}

/// A failure for a case whose setup the filesystem refused: `what` and the errno.
pub fn broken(what: &str, e: Errno) -> Miss {
    fail(what, "success", super::check::name(e))
}
