//! chown(2), fchown(2), lchown(2), fchownat(2): POSIX.1-2017 chown(), fchown(), lchown(),
//! fchownat() and the Linux man page. Root may change the owner; the owner may change the
//! group to one of its own groups (EPERM otherwise); -1 leaves an id as it is; the ctime is
//! marked for update. Changing the owner or group of an executable regular file clears its
//! set-user-ID bit and its set-group-ID bit when it is group-executable, for root too on
//! Linux ("since Linux 2.2.13, root is treated like other users"); a set-group-ID bit without
//! group-execute (mandatory locking) and a directory's set-id bits are kept. `chown` follows
//! a last symlink, `lchown` and AT_SYMLINK_NOFOLLOW do not.

use super::sys::{cstr, open, set_flag, sys, BAD_FD};
use super::{chown as setown, mkdir, symlink, too_long_name, too_long_path, touch, Case};
use crate::posix::check::{eq, err, moved, ok, stat, Mark, Octal};
use crate::posix::ctx::{U1, U2};
use rustix::fs::{AtFlags, Gid, IFlags, OFlags, Uid, CWD};
use rustix::io::Errno;
use std::os::fd::AsRawFd;

/// An id argument: `None` is -1, "leave it as it is".
fn id(v: Option<u32>) -> u32 {
    v.unwrap_or(u32::MAX)
}

/// `chown p uid gid`, following a last symlink.
fn chown(p: &str, uid: Option<u32>, gid: Option<u32>) -> rustix::io::Result<()> {
    rustix::fs::chown(p, uid.map(Uid::from_raw), gid.map(Gid::from_raw))
}

/// `lchown p uid gid` (through libc: rustix has it only as fchownat).
fn lchown(p: &str, uid: Option<u32>, gid: Option<u32>) -> rustix::io::Result<()> {
    let c = cstr(p);
    // SAFETY: `c` is NUL-terminated and alive across the call, which only reads it.
    sys(unsafe { libc::lchown(c.as_ptr(), id(uid), id(gid)) }.into())
}

/// `fchownat(dirfd, p, uid, gid, flags)` through the raw syscall, for descriptors and flags
/// rustix does not let through.
fn fchownat_raw(dirfd: libc::c_int, p: &str, uid: u32, gid: u32, flags: libc::c_int) -> rustix::io::Result<()> {
    let c = cstr(p);
    // SAFETY: `c` is NUL-terminated and alive across the call, which only reads it.
    sys(unsafe { libc::syscall(libc::SYS_fchownat, dirfd, c.as_ptr(), uid, gid, flags) })
}

/// The chown family.
pub static CASES: &[Case] = &[
    Case {
        name: "chown.owner_and_group.updated",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let before = stat("f")?;
            c.tick();
            ok("chown f 65534:65533", chown("f", Some(U1.uid), Some(U2.gid)))?;
            let after = stat("f")?;
            eq("owner of f", after.uid, U1.uid)?;
            eq("group of f", after.gid, U2.gid)?;
            eq("mode of f", after.perm(), Octal(0o644))?;
            // POSIX chown(): "shall mark for update the last file status change timestamp".
            moved("f", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "chown.directory.updated",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            let before = stat("d")?;
            c.tick();
            ok("chown d 65534:65534", chown("d", Some(U1.uid), Some(U1.gid)))?;
            let after = stat("d")?;
            eq("owner and group of d", (after.uid, after.gid), (U1.uid, U1.gid))?;
            moved("d", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "chown.parent_times.unchanged",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            let before = stat("d")?;
            c.tick();
            ok("chown d/f 65534:65534", chown("d/f", Some(U1.uid), Some(U1.gid)))?;
            moved("parent d", before.times, stat("d")?.times, Mark::Any, Mark::Same, Mark::Same)
        },
    },
    Case {
        name: "chown.owner_minus_one.unchanged",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            ok("chown f -1:65533", chown("f", None, Some(U2.gid)))?;
            let st = stat("f")?;
            eq("owner and group of f", (st.uid, st.gid), (U1.uid, U2.gid))
        },
    },
    Case {
        name: "chown.group_minus_one.unchanged",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            ok("chown f 65533:-1", chown("f", Some(U2.uid), None))?;
            let st = stat("f")?;
            eq("owner and group of f", (st.uid, st.gid), (U2.uid, U1.gid))
        },
    },
    Case {
        name: "chown.both_minus_one.unchanged",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U2.gid)?;
            ok("chown f -1:-1", chown("f", None, None))?;
            let st = stat("f")?;
            eq("owner and group of f", (st.uid, st.gid), (U1.uid, U2.gid))
        },
    },
    Case {
        name: "chown.follows_symlink.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            ok("chown l 65534:65534 (l -> f)", chown("l", Some(U1.uid), Some(U1.gid)))?;
            let (f, l) = (stat("f")?, stat("l")?);
            eq("owner of the target f", (f.uid, f.gid), (U1.uid, U1.gid))?;
            eq("owner of the symlink l", (l.uid, l.gid), (0, 0))
        },
    },
    Case {
        name: "chown.lchown_symlink.updated",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            let before = stat("l")?;
            c.tick();
            ok("lchown l 65534:65534 (l -> f)", lchown("l", Some(U1.uid), Some(U1.gid)))?;
            let (f, l) = (stat("f")?, stat("l")?);
            eq("owner of the symlink l", (l.uid, l.gid), (U1.uid, U1.gid))?;
            eq("owner of the target f", (f.uid, f.gid), (0, 0))?;
            moved("symlink l", before.times, l.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "chown.lchown_dangling_symlink.updated",
        security: false,
        run: |_| {
            symlink("nothing", "l")?;
            ok("lchown l 65534:65534 (l -> nothing)", lchown("l", Some(U1.uid), Some(U1.gid)))?;
            let l = stat("l")?;
            eq("owner of the symlink l", (l.uid, l.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "chown.fchownat_nofollow.updated",
        security: true,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            let (u, g) = (Some(Uid::from_raw(U1.uid)), Some(Gid::from_raw(U1.gid)));
            ok(
                "fchownat l 65534:65534 AT_SYMLINK_NOFOLLOW",
                rustix::fs::chownat(CWD, "l", u, g, AtFlags::SYMLINK_NOFOLLOW),
            )?;
            let (f, l) = (stat("f")?, stat("l")?);
            eq("owner of the symlink l", (l.uid, l.gid), (U1.uid, U1.gid))?;
            eq("owner of the target f", (f.uid, f.gid), (0, 0))
        },
    },
    Case {
        name: "chown.fchownat_dirfd.updated",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            let dfd = open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            let (u, g) = (Some(Uid::from_raw(U1.uid)), Some(Gid::from_raw(U1.gid)));
            ok("fchownat (d) f 65534:65534", rustix::fs::chownat(&dfd, "f", u, g, AtFlags::empty()))?;
            let st = stat("d/f")?;
            eq("owner of d/f", (st.uid, st.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "chown.fchownat_empty_path.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // AT_EMPTY_PATH: operate on dirfd itself, here an O_PATH descriptor of f.
            let fd = open("f", OFlags::PATH)?;
            let r = fchownat_raw(fd.as_raw_fd(), "", U1.uid, U1.gid, libc::AT_EMPTY_PATH);
            ok("fchownat (f, O_PATH) \"\" 65534:65534 AT_EMPTY_PATH", r)?;
            let st = stat("f")?;
            eq("owner of f", (st.uid, st.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "chown.fchownat_bad_flag.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // fchownat(2): "EINVAL (fchownat()) Invalid flag specified in flags."
            err(
                "fchownat f AT_REMOVEDIR",
                fchownat_raw(libc::AT_FDCWD, "f", U1.uid, U1.gid, libc::AT_REMOVEDIR),
                Errno::INVAL,
            )
        },
    },
    Case {
        name: "chown.fchownat_bad_dirfd.EBADF",
        security: false,
        run: |_| err("fchownat (-1) f", fchownat_raw(BAD_FD, "f", U1.uid, U1.gid, 0), Errno::BADF),
    },
    Case {
        name: "chown.fchownat_file_dirfd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            let (u, g) = (Some(Uid::from_raw(U1.uid)), Some(Gid::from_raw(U1.gid)));
            err("fchownat (a file) x", rustix::fs::chownat(&fd, "x", u, g, AtFlags::empty()), Errno::NOTDIR)
        },
    },
    Case {
        name: "chown.fchown.updated",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let before = stat("f")?;
            // fchown needs no write access to the open file.
            let fd = open("f", OFlags::RDONLY)?;
            c.tick();
            let (u, g) = (Some(Uid::from_raw(U1.uid)), Some(Gid::from_raw(U2.gid)));
            ok("fchown (f, O_RDONLY) 65534:65533", rustix::fs::fchown(&fd, u, g))?;
            let after = stat("f")?;
            eq("owner and group of f", (after.uid, after.gid), (U1.uid, U2.gid))?;
            moved("f", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "chown.fchown_bad_fd.EBADF",
        security: false,
        run: |_| {
            // SAFETY: fchown takes a plain number; -1 is no descriptor.
            err("fchown -1", sys(unsafe { libc::fchown(BAD_FD, U1.uid, U1.gid) }.into()), Errno::BADF)
        },
    },
    Case {
        name: "chown.fchown_opath_fd.EBADF",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // open(2): on an O_PATH descriptor fchown(2) fails with EBADF.
            let fd = open("f", OFlags::PATH)?;
            let (u, g) = (Some(Uid::from_raw(U1.uid)), Some(Gid::from_raw(U1.gid)));
            err("fchown (f, O_PATH)", rustix::fs::fchown(&fd, u, g), Errno::BADF)
        },
    },
    Case {
        name: "chown.owner_by_non_root.EPERM",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            // chown(2): "Only a privileged process (Linux: one with the CAP_CHOWN capability) may
            // change the owner of a file"; giving a file away is refused too.
            c.as_user(U1, || {
                err("chown f 65533:-1 as its owner uid 65534", chown("f", Some(U2.uid), None), Errno::PERM)
            })?;
            eq("owner of f", stat("f")?.uid, U1.uid)
        },
    },
    Case {
        name: "chown.fchown_by_non_root.EPERM",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            let fd = open("f", OFlags::RDONLY)?;
            let u = Some(Uid::from_raw(U2.uid));
            c.as_user(U1, || {
                err("fchown (f) 65533:-1 as its owner uid 65534", rustix::fs::fchown(&fd, u, None), Errno::PERM)
            })
        },
    },
    Case {
        name: "chown.same_owner_by_owner.unchanged",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            // Linux lets the owner "change" the owner to itself.
            c.as_user(U1, || ok("chown f 65534:65534 as uid 65534", chown("f", Some(U1.uid), Some(U1.gid))))?;
            let st = stat("f")?;
            eq("owner and group of f", (st.uid, st.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "chown.group_by_owner_member.updated",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            // "The owner of a file may change the group of the file to any group of which that
            // owner is a member."
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || ok("chown f -1:65533 as its owner, in group 65533", chown("f", None, Some(U2.gid))))?;
            eq("group of f", stat("f")?.gid, U2.gid)
        },
    },
    Case {
        name: "chown.group_by_owner_nonmember.EPERM",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            c.as_user(U1, || {
                err("chown f -1:65533 as its owner, not in group 65533", chown("f", None, Some(U2.gid)), Errno::PERM)
            })?;
            eq("group of f", stat("f")?.gid, U1.gid)
        },
    },
    Case {
        name: "chown.group_by_non_owner.EPERM",
        security: true,
        run: |c| {
            touch("f", 0o666)?;
            setown("f", U2.uid, U2.gid)?;
            // A member of the new group, with write permission, but not the owner.
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || {
                err("chown f -1:65534 as uid 65534 (f of uid 65533)", chown("f", None, Some(U1.gid)), Errno::PERM)
            })
        },
    },
    Case {
        name: "chown.setid_exec_by_owner.cleared",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            super::chmod("f", 0o6755)?;
            // chown(2): "When the owner or group of an executable file is changed by an
            // unprivileged user, the S_ISUID and S_ISGID mode bits are cleared."
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || ok("chown f -1:65533 as its owner", chown("f", None, Some(U2.gid))))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "chown.setid_exec_fchown_by_owner.cleared",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            super::chmod("f", 0o6755)?;
            let fd = open("f", OFlags::RDONLY)?;
            let g = Some(Gid::from_raw(U2.gid));
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || ok("fchown (f) -1:65533 as its owner", rustix::fs::fchown(&fd, None, g)))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "chown.setid_exec_by_root.cleared",
        security: true,
        run: |_| {
            touch("f", 0o644)?;
            super::chmod("f", 0o6755)?;
            // chown(2): POSIX leaves root open; "since Linux 2.2.13, root is treated like other
            // users".
            ok("chown f 65534:65534", chown("f", Some(U1.uid), Some(U1.gid)))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "chown.setgid_not_group_exec.kept",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            super::chmod("f", 0o2644)?;
            // chown(2): "In case of a non-group-executable file ... the S_ISGID bit indicates
            // mandatory locking, and is not cleared by a chown()."
            ok("chown f 65534:65534", chown("f", Some(U1.uid), Some(U1.gid)))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o2644))
        },
    },
    Case {
        name: "chown.dir_setgid.kept",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            super::chmod("d", 0o2755)?;
            // The set-id bits of a directory mean inheritance, not privilege: chown keeps them.
            ok("chown d 65534:65534", chown("d", Some(U1.uid), Some(U1.gid)))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o2755))
        },
    },
    Case {
        name: "chown.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            setown("d/f", U1.uid, U1.gid)?;
            super::chmod("d", 0o666)?;
            c.as_user(U1, || {
                err("chown d/f -1:65534 as its owner (d is 0666)", chown("d/f", None, Some(U1.gid)), Errno::ACCESS)
            })
        },
    },
    Case {
        name: "chown.missing.ENOENT",
        security: false,
        run: |_| err("chown nothing", chown("nothing", Some(U1.uid), None), Errno::NOENT),
    },
    Case {
        name: "chown.dangling_symlink.ENOENT",
        security: false,
        run: |_| {
            symlink("nothing", "l")?;
            err("chown l (l -> nothing)", chown("l", Some(U1.uid), None), Errno::NOENT)
        },
    },
    Case {
        name: "chown.empty_path.ENOENT",
        security: false,
        run: |_| err("chown \"\"", chown("", Some(U1.uid), None), Errno::NOENT),
    },
    Case {
        name: "chown.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("chown f/x", chown("f/x", Some(U1.uid), None), Errno::NOTDIR)
        },
    },
    Case {
        name: "chown.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("chown NAME_MAX+1", chown(too_long_name(c).as_str(), Some(U1.uid), None), Errno::NAMETOOLONG),
    },
    Case {
        name: "chown.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("chown PATH_MAX", chown(too_long_path().as_str(), Some(U1.uid), None), Errno::NAMETOOLONG),
    },
    Case {
        name: "chown.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("chown l1 (l1 -> l2 -> l1)", chown("l1", Some(U1.uid), None), Errno::LOOP)
        },
    },
    Case {
        name: "chown.lchown_symlink_loop_component.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            // lchown does not follow the last component; a loop before it still is one.
            err("lchown l1/x", lchown("l1/x", Some(U1.uid), None), Errno::LOOP)
        },
    },
    Case {
        name: "chown.immutable.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            set_flag("f", IFlags::IMMUTABLE)?;
            // chown(2): "EPERM The file is marked immutable or append-only."
            err("chown f 65534:65534 (immutable)", chown("f", Some(U1.uid), Some(U1.gid)), Errno::PERM)?;
            eq("owner of f", stat("f")?.uid, 0)
        },
    },
    Case {
        name: "chown.append_only.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            set_flag("f", IFlags::APPEND)?;
            err("chown f 65534:65534 (append-only)", chown("f", Some(U1.uid), Some(U1.gid)), Errno::PERM)
        },
    },
    Case {
        name: "chown.fchownat_nofollow_dangling.updated",
        security: true,
        run: |_| {
            symlink("nothing", "l")?;
            let (u, g) = (Some(Uid::from_raw(U1.uid)), Some(Gid::from_raw(U1.gid)));
            let r = rustix::fs::chownat(CWD, "l", u, g, AtFlags::SYMLINK_NOFOLLOW);
            ok("fchownat l AT_SYMLINK_NOFOLLOW (l -> nothing)", r)?;
            let l = stat("l")?;
            eq("owner of the symlink l", (l.uid, l.gid), (U1.uid, U1.gid))?;
            err("stat nothing", rustix::fs::stat("nothing"), Errno::NOENT)
        },
    },
    Case {
        name: "chown.fchownat_empty_path_no_flag.ENOENT",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            let (u, g) = (Some(Uid::from_raw(U1.uid)), Some(Gid::from_raw(U1.gid)));
            // Without AT_EMPTY_PATH an empty path names nothing, whatever dirfd is.
            err("fchownat (f) \"\" 0", rustix::fs::chownat(&fd, "", u, g, AtFlags::empty()), Errno::NOENT)
        },
    },
    Case {
        name: "chown.dir_setgid_by_owner.kept",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            setown("d", U1.uid, U1.gid)?;
            super::chmod("d", 0o2775)?;
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || ok("chown d -1:65533 as its owner", chown("d", None, Some(U2.gid))))?;
            let d = stat("d")?;
            eq("group of d", d.gid, U2.gid)?;
            eq("mode of d", d.perm(), Octal(0o2775))
        },
    },
    Case {
        name: "chown.lchown_no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            symlink("x", "d/l")?;
            setown("d/l", U1.uid, U1.gid)?;
            super::chmod("d", 0o666)?;
            c.as_user(U1, || {
                err("lchown d/l as its owner (d is 0666)", lchown("d/l", None, Some(U1.gid)), Errno::ACCESS)
            })
        },
    },
    Case {
        name: "chown.large_ids.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // uid_t and gid_t are 32 bits on Linux: any id but -1 may be given by root.
            let (u, g) = (3_000_000_000, 4_000_000_000);
            ok("chown f 3000000000:4000000000", chown("f", Some(u), Some(g)))?;
            let st = stat("f")?;
            eq("owner and group of f", (st.uid, st.gid), (u, g))
        },
    },
    Case {
        name: "chown.nofollow_intermediate_symlink.updated",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            symlink("d", "l")?;
            // AT_SYMLINK_NOFOLLOW is about the last component only: l in l/f is followed.
            let (u, g) = (Some(Uid::from_raw(U1.uid)), Some(Gid::from_raw(U1.gid)));
            ok(
                "fchownat l/f AT_SYMLINK_NOFOLLOW (l -> d)",
                rustix::fs::chownat(CWD, "l/f", u, g, AtFlags::SYMLINK_NOFOLLOW),
            )?;
            let f = stat("d/f")?;
            eq("owner of d/f", (f.uid, f.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "chown.group_by_owner_primary_gid.updated",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            // The effective group id counts as one of the owner's groups.
            let u = U1.with_gid(65533);
            c.as_user(u, || ok("chown f -1:65533 as its owner, of gid 65533", chown("f", None, Some(U2.gid))))?;
            eq("group of f", stat("f")?.gid, U2.gid)
        },
    },
];
