//! open(2) and access control: POSIX.1-2017 open() and 4.5 (file access permissions), and the
//! Linux man page. Read access needs read permission, write access and O_TRUNC write
//! permission, every directory on the way search permission; exactly one class decides
//! (owner, else group, else other), so an owner without a bit is refused whatever the others
//! may. Root passes (CAP_DAC_OVERRIDE), but not the immutable and append-only attributes.
//! A write by anyone without CAP_FSETID clears S_ISUID (and S_ISGID with group execute); a
//! descriptor only does what its access mode allows.

use super::mkfifo::setgid_dir;
use super::open::{open, write_all};
use super::sys::read_file;
use super::sys::set_flag;
use super::{chown, mkdir, touch, write_file, Case};
use crate::posix::check::{eq, err, ok, stat, Check, Octal};
use crate::posix::ctx::{Ctx, User, U1};
use rustix::fs::{IFlags, OFlags};
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
pub static CASES: &[Case] = &[
    Case {
        name: "open.no_read_permission.EACCES",
        security: true,
        run: |c| {
            owned_file(0, 0, 0o640)?;
            refused(c, "f", OFlags::RDONLY, "f is root's 0640")
        },
    },
    Case {
        name: "open.no_write_permission.EACCES",
        security: true,
        run: |c| {
            owned_file(0, 0, 0o644)?;
            refused(c, "f", OFlags::WRONLY, "f is root's 0644")
        },
    },
    Case {
        name: "open.read_write_without_write.EACCES",
        security: true,
        run: |c| {
            owned_file(0, 0, 0o644)?;
            refused(c, "f", OFlags::RDWR, "f is root's 0644")
        },
    },
    Case {
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
    Case {
        name: "open.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            write_file("d/f", b"data")?;
            super::chmod("d/f", 0o666)?;
            super::chmod("d", 0o666)?;
            refused(c, "d/f", OFlags::RDONLY, "d is 0666: no search")
        },
    },
    Case {
        name: "open.create_no_write_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            refused(c, "d/f", OFlags::CREATE | OFlags::WRONLY, "d is root's 0755")?;
            err("lstat d/f", rustix::fs::lstat("d/f"), Errno::NOENT)
        },
    },
    Case {
        name: "open.owner_class_decides.EACCES",
        security: true,
        run: |c| {
            // 4.5.1: the owner class applies to the owner alone, even where group and other
            // would allow.
            owned_file(U1.uid, U1.gid, 0o077)?;
            refused(c, "f", OFlags::RDONLY, "f is uid 65534's, mode 0077")
        },
    },
    Case {
        name: "open.group_class_decides.EACCES",
        security: true,
        run: |c| {
            // A member of the file's group is judged by the group bits, not the other bits.
            owned_file(0, U1.gid, 0o604)?;
            refused(c, "f", OFlags::RDONLY, "f is root:65534, mode 0604")
        },
    },
    Case {
        name: "open.group_read.opened",
        security: true,
        run: |c| {
            owned_file(0, U1.gid, 0o040)?;
            allowed(c, U1, "f", OFlags::RDONLY, "f is root:65534, mode 0040")
        },
    },
    Case {
        name: "open.supplementary_group_read.opened",
        security: true,
        run: |c| {
            owned_file(0, 4242, 0o040)?;
            allowed(c, U1.with_groups(&[4242]), "f", OFlags::RDONLY, "in group 4242; f is root:4242, mode 0040")
        },
    },
    Case {
        name: "open.other_write.opened",
        security: true,
        run: |c| {
            owned_file(0, 0, 0o602)?;
            allowed(c, U1, "f", OFlags::WRONLY, "f is root's 0602")
        },
    },
    Case {
        name: "open.owner_without_bits.EACCES",
        security: true,
        run: |c| {
            owned_file(U1.uid, U1.gid, 0o000)?;
            refused(c, "f", OFlags::WRONLY, "f is uid 65534's, mode 0000")
        },
    },
    Case {
        name: "open.root_without_bits.opened",
        security: true,
        run: |_| {
            // Root overrides the permission bits of a regular file (CAP_DAC_OVERRIDE).
            owned_file(U1.uid, U1.gid, 0o000)?;
            ok("open f O_RDWR as root (f is 0000)", open("f", OFlags::RDWR, 0)).map(drop)
        },
    },
    Case {
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
    Case {
        name: "open.noatime_owner.opened",
        security: false,
        run: |c| {
            owned_file(U1.uid, U1.gid, 0o644)?;
            allowed(c, U1, "f", OFlags::RDONLY | OFlags::NOATIME, "f is its own")
        },
    },
    Case {
        name: "open.read_only_fd_write.EBADF",
        security: false,
        run: |_| {
            // POSIX write(): EBADF "not a valid file descriptor open for writing".
            write_file("f", b"data")?;
            let fd = ok("open f O_RDONLY", open("f", OFlags::RDONLY, 0))?;
            err("write (f, O_RDONLY)", rustix::io::write(&fd, b"x"), Errno::BADF)
        },
    },
    Case {
        name: "open.write_only_fd_read.EBADF",
        security: false,
        run: |_| {
            write_file("f", b"data")?;
            let fd = ok("open f O_WRONLY", open("f", OFlags::WRONLY, 0))?;
            let mut buf = [0u8; 4];
            err("read (f, O_WRONLY)", rustix::io::read(&fd, &mut buf[..]), Errno::BADF)
        },
    },
    Case {
        name: "open.path_fd_read.EBADF",
        security: false,
        run: |_| {
            // open(2), O_PATH: "read(2), write(2) ... fail with the error EBADF".
            write_file("f", b"data")?;
            let fd = ok("open f O_PATH", open("f", OFlags::PATH, 0))?;
            let mut buf = [0u8; 4];
            err("read (f, O_PATH)", rustix::io::read(&fd, &mut buf[..]), Errno::BADF)
        },
    },
    Case {
        name: "open.immutable_write.EPERM",
        security: true,
        run: |c| {
            // chattr(1) +i: the file "can not be opened in write mode", root included.
            c.need_flags()?;
            write_file("f", b"data")?;
            set_flag("f", IFlags::IMMUTABLE)?;
            err("open f O_WRONLY (immutable)", open("f", OFlags::WRONLY, 0), Errno::PERM)
        },
    },
    Case {
        name: "open.immutable_read.opened",
        security: false,
        run: |c| {
            c.need_flags()?;
            write_file("f", b"data")?;
            set_flag("f", IFlags::IMMUTABLE)?;
            ok("open f O_RDONLY (immutable)", open("f", OFlags::RDONLY, 0)).map(drop)
        },
    },
    Case {
        name: "open.immutable_dir_create.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            mkdir("d", 0o755)?;
            set_flag("d", IFlags::IMMUTABLE)?;
            err("open d/f O_CREAT (d immutable)", open("d/f", OFlags::CREATE | OFlags::WRONLY, 0o644), Errno::PERM)
        },
    },
    Case {
        name: "open.append_only_without_append.EPERM",
        security: true,
        run: |c| {
            // chattr(1) +a: "can only be opened in append mode for writing".
            c.need_flags()?;
            write_file("f", b"data")?;
            set_flag("f", IFlags::APPEND)?;
            err("open f O_WRONLY (append-only)", open("f", OFlags::WRONLY, 0), Errno::PERM)
        },
    },
    Case {
        name: "open.append_only_with_append.opened",
        security: false,
        run: |c| {
            c.need_flags()?;
            write_file("f", b"data")?;
            set_flag("f", IFlags::APPEND)?;
            let fd = ok("open f O_WRONLY|O_APPEND (append-only)", open("f", OFlags::WRONLY | OFlags::APPEND, 0))?;
            write_all("write f", &fd, b"+")?;
            eq("contents of f", read_file("f")?, b"data+".to_vec())
        },
    },
    Case {
        name: "open.append_only_trunc.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            write_file("f", b"data")?;
            set_flag("f", IFlags::APPEND)?;
            let r = open("f", OFlags::WRONLY | OFlags::APPEND | OFlags::TRUNC, 0);
            err("open f O_WRONLY|O_APPEND|O_TRUNC (append-only)", r, Errno::PERM)?;
            eq("contents of f", read_file("f")?, b"data".to_vec())
        },
    },
    Case {
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
    Case {
        name: "open.setuid_write_by_owner.cleared",
        security: true,
        run: |c| {
            // Being the owner does not keep the bits: only CAP_FSETID does.
            owned_file(U1.uid, U1.gid, 0o6755)?;
            write_then_mode(c, U1, 0o755)
        },
    },
    Case {
        name: "open.setuid_write_by_root.kept",
        security: false,
        run: |_| {
            owned_file(U1.uid, U1.gid, 0o6755)?;
            let fd = ok("open f O_WRONLY as root", open("f", OFlags::WRONLY, 0))?;
            write_all("write f", &fd, b"x")?;
            eq("mode of f after root's write", stat("f")?.perm(), Octal(0o6755))
        },
    },
    Case {
        name: "open.setuid_trunc_by_other.cleared",
        security: true,
        run: |c| {
            // Truncation through O_TRUNC is a write: the same rule.
            owned_file(0, 0, 0o6777)?;
            c.as_user(U1, || ok("open f O_WRONLY|O_TRUNC as uid 65534", open("f", OFlags::WRONLY | OFlags::TRUNC, 0)))?;
            eq("mode of f after the truncation", stat("f")?.perm(), Octal(0o777))
        },
    },
    Case {
        name: "open.create_existing_other_owner.opened",
        security: false,
        run: |c| {
            // O_CREAT on an existing file of another user only opens it (no new owner),
            // subject to the normal permission check.
            mkdir("d", 0o777)?;
            touch("d/f", 0o666)?;
            allowed(c, U1, "d/f", OFlags::CREATE | OFlags::WRONLY, "d/f is root's 0666")?;
            eq("owner of d/f", stat("d/f")?.uid, 0)
        },
    },
    Case {
        name: "open.create_setgid_mode_non_member.cleared",
        security: true,
        run: |c| {
            // In a set-group-ID directory the new file takes the directory's group; a creator
            // outside that group without CAP_FSETID does not get S_ISGID with group execute
            // (open(2) and inode(7), Linux 6.2+ fs/inode.c mode_strip_sgid).
            setgid_dir()?;
            c.as_user(U1, || {
                ok("open d/f O_CREAT 02755 as uid 65534", open("d/f", OFlags::CREATE | OFlags::WRONLY, 0o2755))
            })?;
            eq("mode of d/f (uid 65534 is not in group 65533)", stat("d/f")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "open.create_setgid_mode_member.kept",
        security: false,
        run: |c| {
            setgid_dir()?;
            c.as_user(U1.with_groups(&[65533]), || {
                ok(
                    "open d/f O_CREAT 02755 as uid 65534 in group 65533",
                    open("d/f", OFlags::CREATE | OFlags::WRONLY, 0o2755),
                )
            })?;
            eq("mode of d/f", stat("d/f")?.perm(), Octal(0o2755))
        },
    },
    Case {
        name: "open.append_only_dir_create.created",
        security: false,
        run: |c| {
            // chattr(1) +a on a directory: entries can be added, not removed.
            c.need_flags()?;
            mkdir("d", 0o755)?;
            set_flag("d", IFlags::APPEND)?;
            ok("open d/f O_CREAT (d append-only)", open("d/f", OFlags::CREATE | OFlags::WRONLY, 0o644)).map(drop)
        },
    },
];
