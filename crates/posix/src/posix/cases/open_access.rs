//! open(2) and access control: POSIX.1-2017 open() and 4.5 (file access permissions), and the
//! Linux man page. Read access needs read permission, write access and O_TRUNC write
//! permission, every directory on the way search permission; exactly one class decides
//! (owner, else group, else other), so an owner without a bit is refused whatever the others
//! may. Root passes (CAP_DAC_OVERRIDE), but not the immutable and append-only attributes.
//! A write by anyone without CAP_FSETID clears S_ISUID (and S_ISGID with group execute); a
//! descriptor only does what its access mode allows.

use super::open::{open, write_all};
use super::sys::read_file;
use super::{chown, write_file, RustCase};
use crate::posix::check::{eq, err, ok, stat, Check, Octal};
use crate::posix::ctx::{Ctx, User, U1};
use rustix::fs::OFlags;
use rustix::io::Errno;

/// The flags of `open` as C spells them (`O_RDONLY|O_TRUNC`), for failure messages.
fn spelled(flags: OFlags) -> String {
    let access = if flags.contains(OFlags::RDWR) {
        "O_RDWR"
    } else if flags.contains(OFlags::WRONLY) {
        "O_WRONLY"
    } else {
        "O_RDONLY"
    };
    let named = [
        (OFlags::CREATE, "O_CREAT"),
        (OFlags::TRUNC, "O_TRUNC"),
        (OFlags::APPEND, "O_APPEND"),
        (OFlags::NOATIME, "O_NOATIME"),
    ];
    named.iter().filter(|(f, _)| flags.contains(*f)).fold(access.to_string(), |s, (_, n)| format!("{s}|{n}"))
}

/// As uid 65534 (gid 65534), `open p flags` must fail with EACCES.
fn refused(c: &Ctx<'_>, p: &str, flags: OFlags, why: &str) -> Check {
    let what = format!("open {p} {} as uid 65534 ({why})", spelled(flags));
    c.as_user(U1, || err(&what, open(p, flags, 0o644), Errno::ACCESS))
}

/// As `user`, `open p flags` must succeed.
fn allowed(c: &Ctx<'_>, user: User, p: &str, flags: OFlags, why: &str) -> Check {
    let what = format!("open {p} {} as uid {} ({why})", spelled(flags), user.uid);
    c.as_user(user, || ok(&what, open(p, flags, 0o644)).map(drop))
}

/// File `f` with data, owned by `uid:gid`, mode `mode` (set-id bits set after the chown, which
/// would clear them).
fn owned_file(uid: u32, gid: u32, mode: u32) -> Check {
    write_file("f", b"data")?;
    chown("f", uid, gid)?;
    super::chmod("f", mode)
}

/// As `user`, open `f` for writing and write one byte; then `f`'s mode must be `want`.
fn write_then_mode(c: &Ctx<'_>, user: User, want: u32) -> Check {
    c.as_user(user, || {
        let fd = ok(&format!("open f O_WRONLY as uid {}", user.uid), open("f", OFlags::WRONLY, 0))?;
        write_all("write f", &fd, b"x")
    })?;
    eq("mode of f after the write", stat("f")?.perm(), Octal(want))
}

/// The open family: permissions, attributes, set-id clearing, access modes.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "open.trunc_without_write.EACCES",
        security: true,
        run: |c| {
            // POSIX leaves O_RDONLY|O_TRUNC undefined; Linux treats O_TRUNC as a write and asks
            // for write permission (fs/open.c build_open_flags: MAY_WRITE), and the data stays.
            owned_file(0, 0, 0o644)?;
            refused(c, "f", OFlags::RDONLY | OFlags::TRUNC, "f is root's 0644")?;
            eq("contents of f", read_file("f")?, b"data".to_vec())
        },
    },
    RustCase {
        name: "open.noatime_not_owner.EPERM",
        security: true,
        run: |c| {
            // open(2): EPERM "O_NOATIME ... the effective user ID of the caller did not match
            // the owner of the file and the caller was not privileged" - even with read access.
            owned_file(0, 0, 0o644)?;
            c.as_user(U1, || {
                err(
                    "open f O_RDONLY|O_NOATIME as uid 65534 (f is root's 0644)",
                    open("f", OFlags::RDONLY | OFlags::NOATIME, 0),
                    Errno::PERM,
                )
            })
        },
    },
    RustCase {
        name: "open.noatime_owner.opened",
        security: false,
        run: |c| {
            owned_file(U1.uid, U1.gid, 0o644)?;
            allowed(c, U1, "f", OFlags::RDONLY | OFlags::NOATIME, "f is its own")
        },
    },
    RustCase {
        name: "open.setuid_write_by_other.cleared",
        security: true,
        run: |c| {
            // POSIX write(): "the S_ISUID and S_ISGID bits ... may be cleared"; Linux clears
            // S_ISUID on any write by a caller without CAP_FSETID, and S_ISGID when group
            // execute is set (fs/attr.c setattr_should_drop_suidgid).
            owned_file(0, 0, 0o6777)?;
            write_then_mode(c, U1, 0o777)
        },
    },
    RustCase {
        name: "open.setuid_write_by_owner.cleared",
        security: true,
        run: |c| {
            // Being the owner does not keep the bits: only CAP_FSETID does.
            owned_file(U1.uid, U1.gid, 0o6755)?;
            write_then_mode(c, U1, 0o755)
        },
    },
];
