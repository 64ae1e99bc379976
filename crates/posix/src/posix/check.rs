//! What a case says when the filesystem differs from the standard, and the small checks that
//! say it: a syscall expected to succeed, to fail with one errno, a value expected equal, the
//! timestamps expected to change or not.
//!
//! Every check names what it looked at (`rename a b`), so a failure reads as "expected
//! `rename a b: ENOTEMPTY`, actual `EEXIST`" without the case's source at hand.

use rustix::fs::{AtFlags, StatxFlags, CWD};
use rustix::io::Errno;
use std::fmt::Debug;
use std::path::Path;

pub use fsarena_workload::errno::{errno, name};

/// Why a case did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// The filesystem did something else than the standard says.
    Fail {
        /// What should have happened.
        expected: String,
        /// What happened.
        actual: String,
    },
    /// The filesystem cannot express the case: the reason (e.g. "ACLs are not enabled:
    /// setxattr system.posix_acl_access: EOPNOTSUPP").
    Unsupported(String),
}

/// A case's result: `Ok(())` is a pass.
pub type Check = Result<(), Miss>;

/// A failure of `what`: expected `expected`, actual `actual`.
pub fn fail(what: &str, expected: impl std::fmt::Display, actual: impl std::fmt::Display) -> Miss {
    Miss::Fail { expected: format!("{what}: {expected}"), actual: actual.to_string() }
}

/// The case cannot run on this filesystem, because `why`.
pub fn unsupported(why: impl Into<String>) -> Miss {
    Miss::Unsupported(why.into())
}

/// `what` must succeed: its value, or a failure naming the errno it returned. Use `?` on it.
pub fn ok<T>(what: &str, r: rustix::io::Result<T>) -> Result<T, Miss> {
    r.map_err(|e| fail(what, "success", name(e)))
}

/// `what` must fail with `want`.
pub fn err<T>(what: &str, r: rustix::io::Result<T>, want: Errno) -> Check {
    match r {
        Err(e) if e == want => Ok(()),
        Err(e) => Err(fail(what, name(want), name(e))),
        Ok(_) => Err(fail(what, name(want), "success")),
    }
}

/// `what` must fail with one of `wants` (where POSIX allows either, e.g. rmdir of a
/// non-empty directory: EEXIST or ENOTEMPTY).
pub fn err_any<T>(what: &str, r: rustix::io::Result<T>, wants: &[Errno]) -> Check {
    let expected = || wants.iter().map(|e| name(*e)).collect::<Vec<_>>().join(" or ");
    match r {
        Err(e) if wants.contains(&e) => Ok(()),
        Err(e) => Err(fail(what, expected(), name(e))),
        Ok(_) => Err(fail(what, expected(), "success")),
    }
}

/// `actual` must equal `expected`; both printed with `{:?}` (use [`Octal`] for modes).
pub fn eq<T: PartialEq + Debug>(what: &str, actual: T, expected: T) -> Check {
    if actual == expected {
        Ok(())
    } else {
        Err(fail(what, format!("{expected:?}"), format!("{actual:?}")))
    }
}

/// `cond` must hold: `expected` says what it means, `actual` what was seen instead.
pub fn ensure(what: &str, cond: bool, expected: &str, actual: impl FnOnce() -> String) -> Check {
    if cond {
        Ok(())
    } else {
        Err(fail(what, expected, actual()))
    }
}

/// A mode printed in octal (`0o4755`) in failures.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Octal(pub u32);

impl Debug for Octal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "0{:o}", self.0)
    }
}

/// What `statx` says of a path (not following a last symlink), the fields cases look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// File type and permission bits (`st_mode`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Hard links.
    pub nlink: u32,
    /// Bytes.
    pub size: u64,
    /// 512-byte blocks allocated.
    pub blocks: u64,
    /// Inode number.
    pub ino: u64,
    /// Device of the filesystem.
    pub dev: (u32, u32),
    /// Device a special file stands for.
    pub rdev: (u32, u32),
    /// The three timestamps.
    pub times: Times,
}

impl Stat {
    /// The permission bits and set-id/sticky bits (`mode & 07777`).
    pub fn perm(&self) -> Octal {
        Octal(self.mode & 0o7777)
    }

    /// The file type bits (`mode & S_IFMT`).
    pub fn kind(&self) -> u32 {
        self.mode & 0o170_000
    }
}

/// atime, mtime and ctime, in nanoseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    /// Last access.
    pub atime: i128,
    /// Last modification of the data.
    pub mtime: i128,
    /// Last change of the inode.
    pub ctime: i128,
}

/// statx of `path` (relative to the case's directory, the thread's working directory),
/// not following a last symlink.
pub fn stat(path: impl AsRef<Path>) -> Result<Stat, Miss> {
    let path = path.as_ref();
    let what = format!("stat {}", path.display());
    let x = ok(&what, rustix::fs::statx(CWD, path, AtFlags::SYMLINK_NOFOLLOW, StatxFlags::BASIC_STATS))?;
    Ok(of_statx(&x))
}

/// statx of the open descriptor `fd` (fstat); `what` names it in a failure.
pub fn fstat(fd: &std::os::fd::OwnedFd, what: &str) -> Result<Stat, Miss> {
    let x = ok(what, rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS))?;
    Ok(of_statx(&x))
}

/// The fields of `x` a case reads.
fn of_statx(x: &rustix::fs::Statx) -> Stat {
    let ns = |t: rustix::fs::StatxTimestamp| i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    Stat {
        mode: u32::from(x.stx_mode),
        uid: x.stx_uid,
        gid: x.stx_gid,
        nlink: x.stx_nlink,
        size: x.stx_size,
        blocks: x.stx_blocks,
        ino: x.stx_ino,
        dev: (x.stx_dev_major, x.stx_dev_minor),
        rdev: (x.stx_rdev_major, x.stx_rdev_minor),
        times: Times { atime: ns(x.stx_atime), mtime: ns(x.stx_mtime), ctime: ns(x.stx_ctime) },
    }
}

/// The timestamps of `path`.
pub fn times(path: impl AsRef<Path>) -> Result<Times, Miss> {
    stat(path).map(|s| s.times)
}

/// What a case expects of one timestamp across an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// POSIX marks it for update: it must be later than before.
    Changed,
    /// Not marked: it must be as before.
    Same,
    /// Not looked at (atime under relatime, a time the standard leaves open).
    Any,
}

/// The timestamps of `what` must have moved as `a`, `m`, `c` say between `before` and
/// `after` (the case called [`super::Ctx::tick`] between taking `before` and operating, so
/// that a change is visible whatever the filesystem's timestamp granularity).
pub fn moved(what: &str, before: Times, after: Times, a: Mark, m: Mark, c: Mark) -> Check {
    let one = |name: &str, b: i128, n: i128, mark: Mark| -> Check {
        let ok = match mark {
            Mark::Changed => n > b,
            Mark::Same => n == b,
            Mark::Any => true,
        };
        let expected = if mark == Mark::Changed { "updated" } else { "unchanged" };
        ensure(&format!("{what} {name}"), ok, expected, || {
            if n == b {
                "unchanged".into()
            } else {
                format!("moved by {} ns", n - b)
            }
        })
    };
    one("atime", before.atime, after.atime, a)?;
    one("mtime", before.mtime, after.mtime, m)?;
    one("ctime", before.ctime, after.ctime, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_name_the_errno_and_what_was_looked_at() {
        assert_eq!(
            err("rmdir d", Err::<(), _>(Errno::EXIST), Errno::NOTEMPTY),
            Err(fail("rmdir d", "ENOTEMPTY", "EEXIST"))
        );
        assert_eq!(err("rmdir d", Ok(()), Errno::NOTEMPTY), Err(fail("rmdir d", "ENOTEMPTY", "success")));
        assert_eq!(err("rmdir d", Err::<(), _>(Errno::NOTEMPTY), Errno::NOTEMPTY), Ok(()));
        assert_eq!(
            err_any("rmdir d", Err::<(), _>(Errno::BUSY), &[Errno::EXIST, Errno::NOTEMPTY]),
            Err(fail("rmdir d", "EEXIST or ENOTEMPTY", "EBUSY"))
        );
        assert_eq!(ok("open a", Err::<(), _>(Errno::ACCESS)), Err(fail("open a", "success", "EACCES")));
        assert_eq!(eq("mode of a", Octal(0o644), Octal(0o600)), Err(fail("mode of a", "0600", "0644")));
        assert_eq!(name(Errno::from_raw_os_error(4095)), "errno 4095");
    }

    #[test]
    fn timestamps_must_move_as_marked() {
        let b = Times { atime: 10, mtime: 10, ctime: 10 };
        let a = Times { atime: 10, mtime: 20, ctime: 20 };
        assert_eq!(moved("f", b, a, Mark::Same, Mark::Changed, Mark::Changed), Ok(()));
        assert_eq!(
            moved("f", b, a, Mark::Any, Mark::Same, Mark::Any),
            Err(fail("f mtime", "unchanged", "moved by 10 ns"))
        );
        assert_eq!(moved("f", b, b, Mark::Any, Mark::Any, Mark::Changed), Err(fail("f ctime", "updated", "unchanged")));
    }
}
