//! mkdir(2) and mkdirat(2): POSIX.1-2017 mkdir() and mkdirat(), and the Linux man page. A new
//! empty directory with the permission bits `mode & ~umask & 0777` (Linux also honours the
//! sticky bit), owned by the effective uid, of the effective gid or, under a set-group-ID
//! parent, of the parent's group and set-group-ID itself; its three timestamps and the
//! parent's mtime and ctime are marked for update and the parent gains a link (the new `..`).
//! Nothing that exists, a dangling symlink included, is replaced (EEXIST).

use super::sys::{cstr, open, set_flag, sys, BAD_FD};
use super::{chmod, chown, mkdir as setup_dir, symlink, too_long_name, too_long_path, touch, Case};
use crate::posix::check::{eq, err, moved, ok, stat, unsupported, Mark, Octal, Times};
use crate::posix::ctx::{U1, U2};
use rustix::fs::{IFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

/// `mkdir p mode`, the umask applying.
fn mkdir(p: &str, mode: u32) -> rustix::io::Result<()> {
    rustix::fs::mkdir(p, Mode::from_raw_mode(mode))
}

/// Sets the case's umask (its thread has its own: see ctx.rs).
fn umask(mask: u32) {
    rustix::process::umask(Mode::from_raw_mode(mask));
}

/// The file type bits of a directory.
const S_IFDIR: u32 = 0o040_000;

/// The mkdir family.
pub static CASES: &[Case] = &[
    Case {
        name: "mkdir.new_dir.created",
        security: false,
        run: |c| {
            let parent = stat(".")?;
            c.tick();
            ok("mkdir d 0777", mkdir("d", 0o777))?;
            let d = stat("d")?;
            eq("file type of d", d.kind(), S_IFDIR)?;
            // mkdir(2): "(mode & ~umask & 0777)", the umask 022 here.
            eq("mode of d", d.perm(), Octal(0o755))?;
            eq("owner and group of d", (d.uid, d.gid), (0, 0))?;
            let after = stat(".")?;
            // POSIX mkdir(): "shall mark for update the last data modification and last file
            // status change timestamps of the parent directory".
            moved("the parent", parent.times, after.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "mkdir.link_counts.updated",
        security: false,
        run: |_| {
            let parent = stat(".")?.nlink;
            ok("mkdir d 0755", mkdir("d", 0o755))?;
            let (d, after) = (stat("d")?.nlink, stat(".")?.nlink);
            // POSIX leaves directory link counts open; the Unix count is 2 for a new directory
            // (its name and its `.`) and one more on the parent (the new `..`). A filesystem
            // that does not count subdirectories reports 1 for every directory (btrfs; find(1)
            // and fts rely on that convention): it cannot express this case.
            if d == 1 && parent == 1 && after == 1 {
                return Err(unsupported("directories report link count 1 (subdirectories are not counted)"));
            }
            eq("link counts of d and of the parent", (d, after), (2, parent + 1))
        },
    },
    Case {
        name: "mkdir.new_dir_times.updated",
        security: false,
        run: |c| {
            let t = stat(".")?.times;
            let latest = t.atime.max(t.mtime).max(t.ctime);
            let before = Times { atime: latest, mtime: latest, ctime: latest };
            c.tick();
            ok("mkdir d 0755", mkdir("d", 0o755))?;
            // POSIX mkdir(): "shall mark for update the last data access, last data modification,
            // and last file status change timestamps of the directory": all three are now.
            moved("the new d", before, stat("d")?.times, Mark::Changed, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "mkdir.new_dir.empty",
        security: false,
        run: |_| {
            ok("mkdir d 0755", mkdir("d", 0o755))?;
            let names: Vec<String> = std::fs::read_dir("d")
                .map_err(|e| crate::posix::ctx::broken("readdir d", super::io_errno(&e)))?
                .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect();
            eq("entries of d besides . and ..", names, Vec::<String>::new())?;
            eq("inode of d/..", stat("d/..")?.ino, stat(".")?.ino)
        },
    },
    Case {
        name: "mkdir.umask.applied",
        security: false,
        run: |_| {
            umask(0o027);
            ok("mkdir d 0777 under umask 027", mkdir("d", 0o777))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o750))
        },
    },
    Case {
        name: "mkdir.umask_zero.applied",
        security: false,
        run: |_| {
            umask(0);
            ok("mkdir d 0777 under umask 0", mkdir("d", 0o777))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o777))
        },
    },
    Case {
        name: "mkdir.mode_narrower_than_umask.applied",
        security: false,
        run: |_| {
            umask(0o022);
            ok("mkdir d 0500 under umask 022", mkdir("d", 0o500))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o500))
        },
    },
    Case {
        name: "mkdir.sticky_in_mode.kept",
        security: false,
        run: |_| {
            umask(0);
            // mkdir(2) NOTES: "Under Linux, apart from the permission bits, the S_ISVTX mode bit
            // is also honored."
            ok("mkdir d 01777 under umask 0", mkdir("d", 0o1777))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o1777))
        },
    },
    Case {
        name: "mkdir.setuid_in_mode.cleared",
        security: true,
        run: |_| {
            umask(0);
            // Only the permission bits and S_ISVTX are taken from mode on Linux.
            ok("mkdir d 04755 under umask 0", mkdir("d", 0o4755))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "mkdir.setgid_in_mode.cleared",
        security: false,
        run: |_| {
            umask(0);
            // S_ISGID comes from a set-group-ID parent only, not from mode (Linux).
            ok("mkdir d 02755 under umask 0", mkdir("d", 0o2755))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "mkdir.as_user.created",
        security: true,
        run: |c| {
            setup_dir("w", 0o777)?;
            // mkdir(2): "owned by the effective user ID of the process ... otherwise it will be
            // owned by the effective group ID of the process".
            c.as_user(U1, || ok("mkdir w/d as uid 65534", mkdir("w/d", 0o755)))?;
            let d = stat("w/d")?;
            eq("owner and group of w/d", (d.uid, d.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "mkdir.setgid_parent.inherited",
        security: true,
        run: |c| {
            setup_dir("w", 0o777)?;
            chown("w", U2.uid, U2.gid)?;
            chmod("w", 0o2777)?;
            // "If the directory containing the file has the set-group-ID bit set ... the new
            // directory will inherit the group ownership from its parent" and "If the parent
            // directory has the set-group-ID bit set, then so will the newly created directory."
            // The caller need not be in that group.
            c.as_user(U1, || ok("mkdir w/d as uid 65534 (w of group 65533, 02777)", mkdir("w/d", 0o755)))?;
            let d = stat("w/d")?;
            eq("owner and group of w/d", (d.uid, d.gid), (U1.uid, U2.gid))?;
            eq("mode of w/d", d.perm(), Octal(0o2755))
        },
    },
    Case {
        name: "mkdir.sticky_parent.created",
        security: true,
        run: |c| {
            setup_dir("w", 0o1777)?;
            // The sticky bit restricts removing and renaming, not creating.
            c.as_user(U1, || ok("mkdir w/d as uid 65534 (w is 01777)", mkdir("w/d", 0o755)))?;
            eq("owner of w/d", stat("w/d")?.uid, U1.uid)
        },
    },
    Case {
        name: "mkdir.trailing_slash.created",
        security: false,
        run: |_| {
            ok("mkdir d/ 0755", mkdir("d/", 0o755))?;
            eq("file type of d", stat("d")?.kind(), S_IFDIR)
        },
    },
    Case {
        name: "mkdir.mkdirat_dirfd.created",
        security: false,
        run: |_| {
            setup_dir("w", 0o755)?;
            let dfd = open("w", OFlags::RDONLY | OFlags::DIRECTORY)?;
            ok("mkdirat (w) d 0755", rustix::fs::mkdirat(&dfd, "d", Mode::from_raw_mode(0o755)))?;
            eq("file type of w/d", stat("w/d")?.kind(), S_IFDIR)?;
            err("stat d (not in the working directory)", rustix::fs::stat("d"), Errno::NOENT)
        },
    },
    Case {
        name: "mkdir.mkdirat_absolute_path.created",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            // An absolute path ignores dirfd, even one that is no directory.
            let fd = open("f", OFlags::RDONLY)?;
            let abs = c.path("d");
            ok("mkdirat (a file) /abs/d 0755", rustix::fs::mkdirat(&fd, &abs, Mode::from_raw_mode(0o755)))?;
            eq("file type of d", stat("d")?.kind(), S_IFDIR)
        },
    },
    Case {
        name: "mkdir.mkdirat_cwd.created",
        security: false,
        run: |_| {
            ok("mkdirat AT_FDCWD d 0755", rustix::fs::mkdirat(CWD, "d", Mode::from_raw_mode(0o755)))?;
            eq("file type of d", stat("d")?.kind(), S_IFDIR)
        },
    },
    Case {
        name: "mkdir.mkdirat_bad_dirfd.EBADF",
        security: false,
        run: |_| {
            let p = cstr("d");
            // SAFETY: `p` is NUL-terminated and alive across the call, which only reads it.
            let r = sys(unsafe { libc::syscall(libc::SYS_mkdirat, BAD_FD, p.as_ptr(), 0o755) });
            err("mkdirat (-1) d", r, Errno::BADF)
        },
    },
    Case {
        name: "mkdir.mkdirat_file_dirfd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            err("mkdirat (a file) d", rustix::fs::mkdirat(&fd, "d", Mode::from_raw_mode(0o755)), Errno::NOTDIR)
        },
    },
    Case {
        name: "mkdir.mkdirat_removed_dirfd.ENOENT",
        security: false,
        run: |_| {
            setup_dir("w", 0o755)?;
            let dfd = open("w", OFlags::RDONLY | OFlags::DIRECTORY)?;
            ok("rmdir w", rustix::fs::rmdir("w"))?;
            // No entry can be added to a removed directory: ENOENT, as linkat(2) words it for
            // its dirfds ("a relative pathname and newdirfd refers to a directory that has been
            // deleted").
            err("mkdirat (w, removed) d", rustix::fs::mkdirat(&dfd, "d", Mode::from_raw_mode(0o755)), Errno::NOENT)
        },
    },
    Case {
        name: "mkdir.existing_dir.EEXIST",
        security: false,
        run: |_| {
            setup_dir("d", 0o700)?;
            err("mkdir d (a directory)", mkdir("d", 0o755), Errno::EXIST)?;
            eq("mode of d", stat("d")?.perm(), Octal(0o700))
        },
    },
    Case {
        name: "mkdir.existing_file.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("mkdir f (a file)", mkdir("f", 0o755), Errno::EXIST)
        },
    },
    Case {
        name: "mkdir.dangling_symlink.EEXIST",
        security: true,
        run: |_| {
            symlink("nothing", "l")?;
            // POSIX mkdir(): EEXIST "The named file exists", a symlink included: the last
            // component is not followed, nothing is made at its target.
            err("mkdir l (l -> nothing)", mkdir("l", 0o755), Errno::EXIST)?;
            err("stat nothing", rustix::fs::stat("nothing"), Errno::NOENT)
        },
    },
    Case {
        name: "mkdir.symlink_to_dir.EEXIST",
        security: false,
        run: |_| {
            setup_dir("d", 0o755)?;
            symlink("d", "l")?;
            err("mkdir l (l -> d)", mkdir("l", 0o755), Errno::EXIST)
        },
    },
    Case {
        name: "mkdir.dot.EEXIST",
        security: false,
        run: |_| {
            setup_dir("d", 0o755)?;
            err("mkdir d/.", mkdir("d/.", 0o755), Errno::EXIST)
        },
    },
    Case {
        name: "mkdir.dotdot.EEXIST",
        security: false,
        run: |_| {
            setup_dir("d", 0o755)?;
            err("mkdir d/..", mkdir("d/..", 0o755), Errno::EXIST)
        },
    },
    Case {
        name: "mkdir.missing_parent.ENOENT",
        security: false,
        run: |_| err("mkdir nothing/d", mkdir("nothing/d", 0o755), Errno::NOENT),
    },
    Case {
        name: "mkdir.dangling_symlink_component.ENOENT",
        security: false,
        run: |_| {
            symlink("nothing", "l")?;
            err("mkdir l/d (l -> nothing)", mkdir("l/d", 0o755), Errno::NOENT)
        },
    },
    Case {
        name: "mkdir.empty_path.ENOENT",
        security: false,
        run: |_| err("mkdir \"\"", mkdir("", 0o755), Errno::NOENT),
    },
    Case {
        name: "mkdir.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("mkdir f/d", mkdir("f/d", 0o755), Errno::NOTDIR)
        },
    },
    Case {
        name: "mkdir.no_write_permission.EACCES",
        security: true,
        run: |c| {
            setup_dir("w", 0o755)?;
            c.as_user(U1, || err("mkdir w/d as uid 65534 (w is root's 0755)", mkdir("w/d", 0o755), Errno::ACCESS))?;
            err("stat w/d", rustix::fs::stat("w/d"), Errno::NOENT)
        },
    },
    Case {
        name: "mkdir.no_search_permission.EACCES",
        security: true,
        run: |c| {
            setup_dir("w", 0o776)?;
            c.as_user(U1, || err("mkdir w/d as uid 65534 (w is 0776)", mkdir("w/d", 0o755), Errno::ACCESS))
        },
    },
    Case {
        name: "mkdir.no_search_on_ancestor.EACCES",
        security: true,
        run: |c| {
            setup_dir("a", 0o755)?;
            setup_dir("a/w", 0o777)?;
            chmod("a", 0o754)?;
            c.as_user(U1, || err("mkdir a/w/d as uid 65534 (a is 0754)", mkdir("a/w/d", 0o755), Errno::ACCESS))
        },
    },
    Case {
        name: "mkdir.group_permission.created",
        security: true,
        run: |c| {
            setup_dir("w", 0o775)?;
            chown("w", 0, U2.gid)?;
            // Write and search through the group class: a supplementary group counts.
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || ok("mkdir w/d as uid 65534 in group 65533 (w root:65533 0775)", mkdir("w/d", 0o755)))
        },
    },
    Case {
        name: "mkdir.owner_without_write.EACCES",
        security: true,
        run: |c| {
            setup_dir("w", 0o577)?;
            chown("w", U1.uid, U1.gid)?;
            // The owner class applies to the owner alone, even when the others may write.
            c.as_user(U1, || err("mkdir w/d as the owner of w (0577)", mkdir("w/d", 0o755), Errno::ACCESS))
        },
    },
    Case {
        name: "mkdir.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("mkdir l1/d (l1 -> l2 -> l1)", mkdir("l1/d", 0o755), Errno::LOOP)
        },
    },
    Case {
        name: "mkdir.name_max.created",
        security: false,
        run: |c| {
            let name = "x".repeat(c.name_max());
            ok("mkdir NAME_MAX", mkdir(name.as_str(), 0o755))?;
            eq("file type of the NAME_MAX directory", stat(name.as_str())?.kind(), S_IFDIR)
        },
    },
    Case {
        name: "mkdir.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("mkdir PATH_MAX", mkdir(too_long_path().as_str(), 0o755), Errno::NAMETOOLONG),
    },
    Case {
        name: "mkdir.immutable_parent.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            setup_dir("w", 0o755)?;
            set_flag("w", IFlags::IMMUTABLE)?;
            err("mkdir w/d (w immutable)", mkdir("w/d", 0o755), Errno::PERM)
        },
    },
    Case {
        name: "mkdir.append_only_parent.created",
        security: false,
        run: |c| {
            c.need_flags()?;
            setup_dir("w", 0o755)?;
            set_flag("w", IFlags::APPEND)?;
            // ioctl_iflags(2) speaks of files (O_APPEND opens only); on a directory Linux refuses
            // removing and renaming entries (the VFS's may_delete), not adding them.
            ok("mkdir w/d (w append-only)", mkdir("w/d", 0o755))
        },
    },
    Case {
        name: "mkdir.mkdirat_opath_dirfd.created",
        security: false,
        run: |_| {
            setup_dir("w", 0o755)?;
            // An O_PATH descriptor of a directory serves as dirfd.
            let dfd = open("w", OFlags::PATH | OFlags::DIRECTORY)?;
            ok("mkdirat (w, O_PATH) d 0755", rustix::fs::mkdirat(&dfd, "d", Mode::from_raw_mode(0o755)))?;
            eq("file type of w/d", stat("w/d")?.kind(), S_IFDIR)
        },
    },
    Case {
        name: "mkdir.setgid_parent_root.inherited",
        security: false,
        run: |_| {
            setup_dir("w", 0o755)?;
            chown("w", U1.uid, U2.gid)?;
            chmod("w", 0o2755)?;
            // The group comes from the set-group-ID parent for root as for anyone.
            ok("mkdir w/d (w of group 65533, 02755)", mkdir("w/d", 0o755))?;
            let d = stat("w/d")?;
            eq("owner and group of w/d", (d.uid, d.gid), (0, U2.gid))?;
            eq("mode of w/d", d.perm(), Octal(0o2755))
        },
    },
    Case {
        name: "mkdir.umask_as_user.applied",
        security: true,
        run: |c| {
            setup_dir("w", 0o777)?;
            umask(0o077);
            // The umask is the process's (here the case's), whoever creates.
            c.as_user(U1, || ok("mkdir w/d 0777 as uid 65534 under umask 077", mkdir("w/d", 0o777)))?;
            eq("mode of w/d", stat("w/d")?.perm(), Octal(0o700))
        },
    },
    Case {
        name: "mkdir.mkdirat_dirfd_search_checked.EACCES",
        security: true,
        run: |c| {
            setup_dir("w", 0o777)?;
            setup_dir("w/x", 0o777)?;
            let dfd = open("w", OFlags::RDONLY | OFlags::DIRECTORY)?;
            chmod("w", 0o700)?;
            // An open descriptor is no key: search permission on its directory is checked when
            // a path is looked up from it, with the caller's credentials of now.
            c.as_user(U1, || {
                let r = rustix::fs::mkdirat(&dfd, "x/d", Mode::from_raw_mode(0o755));
                err("mkdirat (w, opened by root; now 0700) x/d as uid 65534", r, Errno::ACCESS)
            })
        },
    },
    Case {
        name: "mkdir.existing_file_trailing_slash.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // The trailing slash is allowed for mkdir; the name exists (as a file).
            err("mkdir f/ (f a file)", mkdir("f/", 0o755), Errno::EXIST)
        },
    },
    Case {
        name: "mkdir.group_without_write.EACCES",
        security: true,
        run: |c| {
            setup_dir("w", 0o757)?;
            chown("w", 0, U2.gid)?;
            // The group class applies to a member, even when the others may write.
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || {
                err("mkdir w/d as uid 65534 in group 65533 (w root:65533 0757)", mkdir("w/d", 0o755), Errno::ACCESS)
            })
        },
    },
    // Last of the family: fuse2fs 1.47 answers it ENOENT and leaves a directory that reads
    // EIO, which stops the run on that target (the case's directory cannot go).
    Case {
        name: "mkdir.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("mkdir NAME_MAX+1", mkdir(too_long_name(c).as_str(), 0o755), Errno::NAMETOOLONG),
    },
];
