//! mknod(2) and mknodat(2): POSIX.1-2017 mknod() and the Linux man page. Creates a regular
//! file, FIFO, socket, or (privileged: CAP_MKNOD) a character or block device whose device
//! number statx reports back as `stx_rdev`; the mode is `mode & ~umask`, the owner the
//! effective ids, the new node's three times and the parent's mtime and ctime are marked for
//! update. An unprivileged user asking for a device gets EPERM; a type that is none of these
//! is EINVAL (S_IFDIR: EPERM on Linux: mkdir(2) makes directories).
//!
//! The device nodes made here are never opened: opening one reaches the driver.

use super::mkfifo::{born, clock_before, setgid_dir, S_IFIFO, S_IFREG};
use super::sys::{cstr, set_flag, sys, BAD_FD};
use super::{mkdir, symlink, too_long_name, too_long_path, touch, Case};
use crate::posix::check::{eq, err, err_any, moved, ok, stat, times, Check, Mark, Octal};
use crate::posix::ctx::{Ctx, U1};
use rustix::fs::{makedev, FileType, IFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

/// `S_IFCHR`.
const S_IFCHR: u32 = 0o020_000;
/// `S_IFBLK`.
const S_IFBLK: u32 = 0o060_000;
/// `S_IFSOCK`.
const S_IFSOCK: u32 = 0o140_000;

/// A device number no driver on a usual machine answers (major 240 is "local/experimental
/// use" in the kernel's devices.txt): the node is only looked at, never opened anyway.
const DEV: (u32, u32) = (240, 17);

/// `mknod p` of `kind` with `mode` and device `dev`.
fn mknod(p: &str, kind: FileType, mode: u32, dev: (u32, u32)) -> rustix::io::Result<()> {
    rustix::fs::mknodat(CWD, p, kind, Mode::from_raw_mode(mode), makedev(dev.0, dev.1))
}

/// Creates `p` of `kind` (mode 0644) and checks its type and mode.
fn created(p: &str, kind: FileType, bits: u32, dev: (u32, u32)) -> Check {
    ok(&format!("mknod {p} {kind:?} 0644"), mknod(p, kind, 0o644, dev))?;
    let s = stat(p)?;
    eq(&format!("file type of {p}"), Octal(s.kind()), Octal(bits))?;
    eq(&format!("mode of {p}"), s.perm(), Octal(0o644))?;
    eq(&format!("link count of {p}"), s.nlink, 1)
}

/// As uid 65534 in a directory open to all, `mknod d/n` of `kind`: EPERM expected
/// (mknod(2): creating a device needs CAP_MKNOD).
fn device_as_user(c: &Ctx<'_>, kind: FileType) -> Check {
    mkdir("d", 0o777)?;
    c.as_user(U1, || err(&format!("mknod d/n {kind:?} as uid 65534"), mknod("d/n", kind, 0o644, DEV), Errno::PERM))?;
    err("lstat d/n", rustix::fs::lstat("d/n"), Errno::NOENT)
}

/// The mknod family.
pub static CASES: &[Case] = &[
    Case {
        name: "mknod.regular_file.created",
        security: false,
        run: |_| {
            created("f", FileType::RegularFile, S_IFREG, (0, 0))?;
            eq("size of f", stat("f")?.size, 0)
        },
    },
    Case { name: "mknod.fifo.created", security: false, run: |_| created("p", FileType::Fifo, S_IFIFO, (0, 0)) },
    Case { name: "mknod.socket.created", security: false, run: |_| created("s", FileType::Socket, S_IFSOCK, (0, 0)) },
    Case {
        name: "mknod.char_device.created",
        security: false,
        run: |_| {
            created("c", FileType::CharacterDevice, S_IFCHR, DEV)?;
            eq("device number of c (statx rdev)", stat("c")?.rdev, DEV)
        },
    },
    Case {
        name: "mknod.block_device.created",
        security: false,
        run: |_| {
            created("b", FileType::BlockDevice, S_IFBLK, DEV)?;
            eq("device number of b (statx rdev)", stat("b")?.rdev, DEV)
        },
    },
    Case {
        name: "mknod.large_device_number.kept",
        security: false,
        run: |_| {
            // Linux device numbers are 12-bit major, 20-bit minor: both beyond the old 8/8.
            // A filesystem that stores fewer bits refuses the number (EINVAL) rather than
            // truncate it: xfs keeps the 32-bit SysV form (14-bit major, 18-bit minor, majors
            // below 512), so it fails this case; POSIX says nothing of device number ranges.
            let dev = (4000, 1_000_000);
            ok("mknod c char 4000:1000000", mknod("c", FileType::CharacterDevice, 0o600, dev))?;
            eq("device number of c (statx rdev)", stat("c")?.rdev, dev)
        },
    },
    Case {
        name: "mknod.mode_and_umask.masked",
        security: false,
        run: |_| {
            ok("mknod f regular 0777", mknod("f", FileType::RegularFile, 0o777, (0, 0)))?;
            eq("mode of f (umask 022)", stat("f")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "mknod.owner_root.created",
        security: false,
        run: |_| {
            ok("mknod c char", mknod("c", FileType::CharacterDevice, 0o600, DEV))?;
            let s = stat("c")?;
            eq("owner of c", (s.uid, s.gid), (0, 0))
        },
    },
    Case {
        name: "mknod.fifo_as_user.created",
        security: false,
        run: |c| {
            // Unprivileged users may create FIFOs, sockets and regular files (mknod(2), EPERM).
            mkdir("d", 0o777)?;
            c.as_user(U1, || ok("mknod d/p fifo as uid 65534", mknod("d/p", FileType::Fifo, 0o644, (0, 0))))?;
            let s = stat("d/p")?;
            eq("owner of d/p", (s.uid, s.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "mknod.regular_as_user.created",
        security: false,
        run: |c| {
            mkdir("d", 0o777)?;
            c.as_user(U1, || ok("mknod d/f regular as uid 65534", mknod("d/f", FileType::RegularFile, 0o644, (0, 0))))?;
            eq("owner of d/f", stat("d/f")?.uid, U1.uid)
        },
    },
    Case {
        name: "mknod.setgid_parent_group.inherited",
        security: false,
        run: |_| {
            setgid_dir()?;
            ok("mknod d/c char", mknod("d/c", FileType::CharacterDevice, 0o600, DEV))?;
            eq("group of d/c (d is set-group-ID, group 65533)", stat("d/c")?.gid, 65533)
        },
    },
    Case {
        name: "mknod.parent_times.updated",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            let before = times("d")?;
            c.tick();
            ok("mknod d/c char", mknod("d/c", FileType::CharacterDevice, 0o600, DEV))?;
            moved("parent d", before, times("d")?, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "mknod.new_node_times.updated",
        security: false,
        run: |c| {
            let before = times(".")?;
            c.tick();
            let now = clock_before();
            ok("mknod b block", mknod("b", FileType::BlockDevice, 0o600, DEV))?;
            born("new block device b", before, now, times("b")?)
        },
    },
    Case {
        name: "mknod.char_device_as_user.EPERM",
        security: true,
        run: |c| device_as_user(c, FileType::CharacterDevice),
    },
    Case {
        name: "mknod.block_device_as_user.EPERM",
        security: true,
        run: |c| device_as_user(c, FileType::BlockDevice),
    },
    Case {
        name: "mknod.directory_type.EPERM",
        security: false,
        run: |_| {
            // mknod(2): "EPERM ... the caller is not privileged"; Linux refuses S_IFDIR even to
            // root with EPERM (fs/namei.c may_mknod). POSIX calls any other type than FIFO
            // unspecified, so EINVAL is accepted too.
            err_any("mknod d S_IFDIR", mknod("d", FileType::Directory, 0o755, (0, 0)), &[Errno::PERM, Errno::INVAL])
        },
    },
    Case {
        name: "mknod.symlink_type.EINVAL",
        security: false,
        run: |_| {
            // mknod(2): EINVAL "mode requested creation of something other than a regular file,
            // device special file, FIFO or socket".
            err("mknod l S_IFLNK", mknod("l", FileType::Symlink, 0o777, (0, 0)), Errno::INVAL)
        },
    },
    Case {
        name: "mknod.all_type_bits.EINVAL",
        security: false,
        run: |_| {
            // FileType::Unknown is S_IFMT itself: every type bit set, no type at all.
            err("mknod x S_IFMT", mknod("x", FileType::Unknown, 0o644, (0, 0)), Errno::INVAL)
        },
    },
    Case {
        name: "mknod.mknodat_dirfd.created",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            let dir = super::sys::open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            let r = rustix::fs::mknodat(
                &dir,
                "c",
                FileType::CharacterDevice,
                Mode::from_raw_mode(0o600),
                makedev(DEV.0, DEV.1),
            );
            ok("mknodat (d) c char", r)?;
            eq("device number of d/c", stat("d/c")?.rdev, DEV)
        },
    },
    Case {
        name: "mknod.mknodat_file_fd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let file = super::sys::open("f", OFlags::RDONLY)?;
            let r = rustix::fs::mknodat(&file, "p", FileType::Fifo, Mode::from_raw_mode(0o644), 0);
            err("mknodat (fd of regular file f) p", r, Errno::NOTDIR)
        },
    },
    Case {
        name: "mknod.mknodat_bad_fd.EBADF",
        security: false,
        run: |_| {
            let p = cstr("p");
            // SAFETY: `p` is a NUL-terminated string alive across the call, which only reads it.
            let r = sys(unsafe { libc::mknodat(BAD_FD, p.as_ptr(), libc::S_IFIFO | 0o644, 0) }.into());
            err("mknodat (-1) p fifo", r, Errno::BADF)
        },
    },
    Case {
        name: "mknod.existing_file.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("mknod f (a regular file) char", mknod("f", FileType::CharacterDevice, 0o600, DEV), Errno::EXIST)
        },
    },
    Case {
        name: "mknod.existing_dir.EEXIST",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("mknod d (a directory) fifo", mknod("d", FileType::Fifo, 0o644, (0, 0)), Errno::EXIST)
        },
    },
    Case {
        name: "mknod.dangling_symlink.EEXIST",
        security: true,
        run: |_| {
            // mknod does not follow a last symlink: the link's target is not created.
            symlink("nothing", "l")?;
            err(
                "mknod l (a dangling symlink) regular",
                mknod("l", FileType::RegularFile, 0o644, (0, 0)),
                Errno::EXIST,
            )?;
            err("lstat nothing (the link's target)", rustix::fs::lstat("nothing"), Errno::NOENT)
        },
    },
    Case {
        name: "mknod.missing_parent.ENOENT",
        security: false,
        run: |_| err("mknod nothing/p fifo", mknod("nothing/p", FileType::Fifo, 0o644, (0, 0)), Errno::NOENT),
    },
    Case {
        name: "mknod.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("mknod f/p fifo", mknod("f/p", FileType::Fifo, 0o644, (0, 0)), Errno::NOTDIR)
        },
    },
    Case {
        name: "mknod.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("mknod PATH_MAX fifo", mknod(&too_long_path(), FileType::Fifo, 0o644, (0, 0)), Errno::NAMETOOLONG),
    },
    Case {
        name: "mknod.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("mknod l1/p fifo", mknod("l1/p", FileType::Fifo, 0o644, (0, 0)), Errno::LOOP)
        },
    },
    Case {
        name: "mknod.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o777)?;
            mkdir("d/e", 0o777)?;
            super::chmod("d", 0o666)?;
            c.as_user(U1, || {
                err(
                    "mknod d/e/p fifo as uid 65534 (d is 0666)",
                    mknod("d/e/p", FileType::Fifo, 0o644, (0, 0)),
                    Errno::ACCESS,
                )
            })
        },
    },
    Case {
        name: "mknod.no_write_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            c.as_user(U1, || {
                err(
                    "mknod d/p fifo as uid 65534 (d is root's 0755)",
                    mknod("d/p", FileType::Fifo, 0o644, (0, 0)),
                    Errno::ACCESS,
                )
            })
        },
    },
    Case {
        name: "mknod.immutable_parent.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            mkdir("d", 0o755)?;
            set_flag("d", IFlags::IMMUTABLE)?;
            err("mknod d/c char (d immutable)", mknod("d/c", FileType::CharacterDevice, 0o600, DEV), Errno::PERM)
        },
    },
    Case {
        name: "mknod.dot.EEXIST",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("mknod d/. fifo", mknod("d/.", FileType::Fifo, 0o644, (0, 0)), Errno::EXIST)
        },
    },
    Case {
        name: "mknod.socket_as_user.created",
        security: false,
        run: |c| {
            mkdir("d", 0o777)?;
            c.as_user(U1, || ok("mknod d/s socket as uid 65534", mknod("d/s", FileType::Socket, 0o644, (0, 0))))?;
            eq("file type of d/s", Octal(stat("d/s")?.kind()), Octal(S_IFSOCK))
        },
    },
    Case {
        name: "mknod.setgid_mode_non_member.cleared",
        security: true,
        run: |c| {
            // A file created in a set-group-ID directory takes the directory's group; a
            // creator outside that group (and without CAP_FSETID) does not get S_ISGID with
            // group execute (Linux 6.2+, fs/inode.c mode_strip_sgid, as for open(2)).
            setgid_dir()?;
            c.as_user(U1, || {
                ok("mknod d/f regular 02755 as uid 65534", mknod("d/f", FileType::RegularFile, 0o2755, (0, 0)))
            })?;
            eq("mode of d/f", stat("d/f")?.perm(), Octal(0o755))
        },
    },
    // Last: fuse2fs (1.47) answers a create of a name longer than NAME_MAX with ENOENT and
    // leaves the directory unreadable (EIO), so that later cases in it would not run.
    Case {
        name: "mknod.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| {
            err("mknod NAME_MAX+1 fifo", mknod(&too_long_name(c), FileType::Fifo, 0o644, (0, 0)), Errno::NAMETOOLONG)
        },
    },
];
