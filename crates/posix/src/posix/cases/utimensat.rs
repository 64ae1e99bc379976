//! utimensat(2) and futimens(2): POSIX.1-2017 futimens()/utimensat() and the Linux man page.
//! Sets a file's atime and mtime to given values (kept to the filesystem's precision), to
//! the current time (`UTIME_NOW`) or leaves one alone (`UTIME_OMIT`); the ctime is marked for
//! update whenever anything is set. Explicit times need ownership (EPERM), `UTIME_NOW` for
//! both needs ownership or write permission (EACCES); `AT_SYMLINK_NOFOLLOW` acts on the link
//! itself. futimens is the same call on an open descriptor (`utimensat(fd, NULL, ..)`).

use super::{touch, RustCase};
use crate::posix::check::{ensure, eq, err, ok, times, Check, Miss};
use crate::posix::ctx::broken;
use rustix::fs::{AtFlags, Mode, OFlags, Timespec, Timestamps, CWD, UTIME_NOW};
use rustix::io::Errno;

/// An explicit time with a sub-second part every filesystem keeping nanoseconds must keep.
const T1: (i64, i64) = (1_000_000_000, 123_456_789);
/// A second explicit time, distinct from [`T1`].
const T2: (i64, i64) = (1_100_000_000, 987_654_321);

/// Timestamps for atime `a` and mtime `m` (seconds, nanoseconds or UTIME_NOW/UTIME_OMIT).
fn ts(a: (i64, i64), m: (i64, i64)) -> Timestamps {
    Timestamps {
        last_access: Timespec { tv_sec: a.0, tv_nsec: a.1 },
        last_modification: Timespec { tv_sec: m.0, tv_nsec: m.1 },
    }
}

/// Nanoseconds since the epoch of a (seconds, nanoseconds) pair.
fn ns(t: (i64, i64)) -> i128 {
    i128::from(t.0) * 1_000_000_000 + i128::from(t.1)
}

/// `utimensat(AT_FDCWD, p, times, flags)`.
fn utimens(p: &str, t: &Timestamps, flags: AtFlags) -> rustix::io::Result<()> {
    rustix::fs::utimensat(CWD, p, t, flags)
}

/// Setup: gives `p` old explicit times, so a later UTIME_NOW visibly moves them.
fn age(p: &str) -> Result<(), Miss> {
    utimens(p, &ts(T1, T1), AtFlags::SYMLINK_NOFOLLOW).map_err(|e| broken(&format!("utimensat {p} (setup)"), e))
}

/// Explicit times on `f` read back exactly (`T1`, `T2`): the whole part, and the sub-second
/// part when `subsec`.
fn explicit_roundtrip(subsec: bool) -> Check {
    touch("f", 0o644)?;
    ok("utimensat f", utimens("f", &ts(T1, T2), AtFlags::empty()))?;
    let t = times("f")?;
    if subsec {
        eq("atime of f (ns)", t.atime, ns(T1))?;
        eq("mtime of f (ns)", t.mtime, ns(T2))
    } else {
        eq("atime of f (s)", t.atime.div_euclid(1_000_000_000), i128::from(T1.0))?;
        eq("mtime of f (s)", t.mtime.div_euclid(1_000_000_000), i128::from(T2.0))
    }
}

/// The utimensat family (futimens included).
pub static CASES: &[RustCase] = &[
    RustCase { name: "utimensat.explicit_times.set", security: false, run: |_| explicit_roundtrip(false) },
    RustCase {
        name: "utimensat.empty_path_fd.set",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = ok("open f", rustix::fs::open("f", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
            ok("utimensat(fd, \"\", AT_EMPTY_PATH)", rustix::fs::utimensat(&fd, "", &ts(T1, T2), AtFlags::EMPTY_PATH))?;
            eq("mtime of f", times("f")?.mtime, ns(T2))
        },
    },
    RustCase {
        name: "utimensat.bad_flag.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("utimensat f AT_REMOVEDIR", utimens("f", &ts(T1, T2), AtFlags::REMOVEDIR), Errno::INVAL)
        },
    },
    // UTIME_NOW is "the current time" (utimensat(2)): not earlier than a clock reading
    // taken before the call (compared in whole seconds, whatever the precision kept).
    RustCase {
        name: "utimensat.utime_now.current_time",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            age("f")?;
            let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse).tv_sec;
            ok("utimensat f UTIME_NOW", utimens("f", &ts((0, UTIME_NOW), (0, UTIME_NOW)), AtFlags::empty()))?;
            let t = times("f")?;
            let floor = i128::from(now) * 1_000_000_000;
            ensure("atime and mtime of f", t.atime >= floor && t.mtime >= floor, &format!("not before {now} s"), || {
                format!("atime {} ns, mtime {} ns", t.atime, t.mtime)
            })
        },
    },
    // Times outside 1970..2038 (signed 32-bit seconds) need a filesystem with wider
    // timestamps (ext4 with 256-byte inodes, xfs with bigtime, btrfs, tmpfs); the kernel
    // clamps a time the filesystem cannot hold to its range, silently: a finding.
    RustCase {
        name: "utimensat.after_2038.kept",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let late = (4_000_000_000, 500);
            ok("utimensat f (year 2096)", utimens("f", &ts(late, late), AtFlags::empty()))?;
            eq("mtime of f (s)", times("f")?.mtime.div_euclid(1_000_000_000), i128::from(late.0))
        },
    },
    RustCase {
        name: "utimensat.before_1970.kept",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let early = (-1_000_000_000, 0);
            ok("utimensat f (year 1938)", utimens("f", &ts(early, early), AtFlags::empty()))?;
            eq("mtime of f (s)", times("f")?.mtime.div_euclid(1_000_000_000), i128::from(early.0))
        },
    },
];
