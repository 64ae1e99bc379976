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
use super::table::Step;
use rustix::fs::{Mode, OFlags, CWD};
use std::sync::OnceLock;

pub(crate) use rename::read_all;
pub(crate) use sys::{set_flag, sys_int, truncate_raw};

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
    pub run: Run,
}

/// How a case runs.
#[derive(Debug)]
pub enum Run {
    /// Coded in Rust: what a table cannot say.
    Rust(fn(&Ctx<'_>) -> Check),
    /// The steps of its table (see [`crate::posix::table`]).
    Table(Vec<Step>),
}

impl Case {
    /// The family: the name up to its first dot.
    pub fn family(&self) -> &'static str {
        self.name.split('.').next().unwrap_or(self.name)
    }

    /// Runs the case in its directory.
    pub fn check(&self, c: &Ctx<'_>) -> Check {
        match &self.run {
            Run::Rust(f) => f(c),
            Run::Table(steps) => super::table::run(c, steps),
        }
    }
}

/// A case coded in Rust, named by its family's table (`rust NAME`) at its place in the run.
#[derive(Debug)]
pub struct RustCase {
    /// `family.what.expectation`.
    pub name: &'static str,
    /// An access-control check, reported apart as well.
    pub security: bool,
    /// The check, run in the case's directory.
    pub run: fn(&Ctx<'_>) -> Check,
}

/// The tables, one a source file of cases, in run order within a family: the file's name,
/// its text, and its Rust cases.
pub const TABLES: &[(&str, &str, &[RustCase])] = &[
    ("acl.cases", include_str!("acl.cases"), acl::CASES),
    ("chmod.cases", include_str!("chmod.cases"), chmod::CASES),
    ("chown.cases", include_str!("chown.cases"), chown::CASES),
    ("fallocate.cases", include_str!("fallocate.cases"), fallocate::CASES),
    ("link.cases", include_str!("link.cases"), link::CASES),
    ("mkdir.cases", include_str!("mkdir.cases"), mkdir::CASES),
    ("mkfifo.cases", include_str!("mkfifo.cases"), mkfifo::CASES),
    ("mknod.cases", include_str!("mknod.cases"), mknod::CASES),
    ("open_access.cases", include_str!("open_access.cases"), open_access::CASES),
    ("open_special.cases", include_str!("open_special.cases"), open_special::CASES),
    ("open.cases", include_str!("open.cases"), open::CASES),
    ("rename.cases", include_str!("rename.cases"), rename::CASES),
    ("rename_at.cases", include_str!("rename_at.cases"), rename_at::CASES),
    ("rmdir.cases", include_str!("rmdir.cases"), rmdir::CASES),
    ("statx.cases", include_str!("statx.cases"), statx::CASES),
    ("symlink_readlink.cases", include_str!("symlink_readlink.cases"), symlink_readlink::CASES),
    ("symlink.cases", include_str!("symlink.cases"), symlink::CASES),
    ("utimensat.cases", include_str!("utimensat.cases"), utimensat::CASES),
    ("xattr.cases", include_str!("xattr.cases"), xattr::CASES),
    ("truncate.cases", include_str!("truncate.cases"), truncate::CASES),
    ("unlink.cases", include_str!("unlink.cases"), unlink::CASES),
];

/// Every case of every family, the tables parsed on first use (a table that does not parse
/// is a bug: the unit tests parse them all).
pub fn all() -> Vec<&'static Case> {
    static ALL: OnceLock<Vec<Case>> = OnceLock::new();
    ALL.get_or_init(|| {
        TABLES
            .iter()
            .flat_map(|(file, text, coded)| {
                super::table::build(file, text, coded).unwrap_or_else(|e| panic!("posix case table: {e}"))
            })
            .collect()
    })
    .iter()
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
