//! The cases, one file per syscall family, and the setup helpers they share.
//!
//! A case is a name and a function of its [`Ctx`]: it runs in a fresh empty directory that is
//! its working directory (relative names), as root with umask 022, and returns a
//! [`Check`]. Names are `family.what.expectation`: the expectation is the errno for an error
//! case (`rename.dir_over_nonempty_dir.ENOTEMPTY`) and a word for a success case
//! (`rmdir.empty_dir.removed`). A case checks one behaviour, the one its name says (setup
//! that fails is a failure of the case, with the errno). Security cases (permissions, sticky
//! directories, set-id clearing, ACL enforcement, symlink following) set `security`.

use super::check::{Check, Miss};
use super::ctx::{broken, Ctx};
use rustix::fs::{Mode, OFlags, CWD};

mod acl;
mod chmod;
mod chown;
mod fallocate;
mod link;
mod mkdir;
mod mkfifo;
mod mknod;
mod open;
mod open_access;
mod open_special;
mod rename;
mod rename_at;
mod rmdir;
mod statx;
mod symlink;
mod symlink_readlink;
mod sys;
mod truncate;
mod unlink;
mod utimensat;
mod xattr;

/// The families, in the order runs and tables list them.
pub const FAMILIES: &[&str] = &[
    "chmod",
    "chown",
    "link",
    "mkdir",
    "mkfifo",
    "mknod",
    "open",
    "rename",
    "rmdir",
    "symlink",
    "truncate",
    "unlink",
    "utimensat",
    "fallocate",
    "xattr",
    "acl",
    "statx",
];

/// One named check.
#[derive(Debug)]
pub struct Case {
    /// `family.what.expectation`.
    pub name: &'static str,
    /// An access-control check, reported apart as well.
    pub security: bool,
    /// The check, run in the case's directory.
    pub run: fn(&Ctx<'_>) -> Check,
}

impl Case {
    /// The family: the name up to its first dot.
    pub fn family(&self) -> &'static str {
        self.name.split('.').next().unwrap_or(self.name)
    }
}

/// Every case of every family.
pub fn all() -> Vec<&'static Case> {
    [
        acl::CASES,
        chmod::CASES,
        chown::CASES,
        fallocate::CASES,
        link::CASES,
        mkdir::CASES,
        mkfifo::CASES,
        mknod::CASES,
        open_access::CASES,
        open_special::CASES,
        open::CASES,
        rename::CASES,
        rename_at::CASES,
        rmdir::CASES,
        statx::CASES,
        symlink_readlink::CASES,
        symlink::CASES,
        utimensat::CASES,
        xattr::CASES,
        truncate::CASES,
        unlink::CASES,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `mkdir p` with exactly `mode` (chmod after, so the umask does not matter).
pub fn mkdir(p: &str, mode: u32) -> Result<(), Miss> {
    rustix::fs::mkdir(p, Mode::from_raw_mode(mode)).map_err(|e| broken(&format!("mkdir {p}"), e))?;
    chmod(p, mode)
}

/// Creates the empty regular file `p` with exactly `mode`.
pub fn touch(p: &str, mode: u32) -> Result<(), Miss> {
    let flags = OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC;
    rustix::fs::open(p, flags, Mode::from_raw_mode(mode)).map_err(|e| broken(&format!("create {p}"), e))?;
    chmod(p, mode)
}

/// Creates the regular file `p` holding `data`, mode 0644.
pub fn write_file(p: &str, data: &[u8]) -> Result<(), Miss> {
    std::fs::write(p, data).map_err(|e| broken(&format!("write {p}"), io_errno(&e)))
}

/// `chmod p mode`.
pub fn chmod(p: &str, mode: u32) -> Result<(), Miss> {
    rustix::fs::chmod(p, Mode::from_raw_mode(mode)).map_err(|e| broken(&format!("chmod {p}"), e))
}

/// `chown p uid:gid` (not following a last symlink).
pub fn chown(p: &str, uid: u32, gid: u32) -> Result<(), Miss> {
    let (u, g) = (rustix::fs::Uid::from_raw(uid), rustix::fs::Gid::from_raw(gid));
    rustix::fs::chownat(CWD, p, Some(u), Some(g), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| broken(&format!("chown {p}"), e))
}

/// `symlink target p`.
pub fn symlink(target: &str, p: &str) -> Result<(), Miss> {
    rustix::fs::symlink(target, p).map_err(|e| broken(&format!("symlink {target} {p}"), e))
}

/// A name one byte longer than the filesystem takes (ENAMETOOLONG as a component).
pub fn too_long_name(ctx: &Ctx<'_>) -> String {
    "x".repeat(ctx.name_max() + 1)
}

/// A path of PATH_MAX (4096) bytes, every component short: too long as a whole.
pub fn too_long_path() -> String {
    let mut p = "d/".repeat(2048);
    p.truncate(4096);
    p
}

/// The errno inside a std I/O error (EIO when it has none).
pub fn io_errno(e: &std::io::Error) -> rustix::io::Errno {
    rustix::io::Errno::from_raw_os_error(e.raw_os_error().unwrap_or(5))
}
