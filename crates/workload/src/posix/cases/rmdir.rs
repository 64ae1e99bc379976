//! rmdir(2): POSIX.1-2017 rmdir() and the Linux man page. Removes an empty directory: the
//! parent loses a link and its mtime and ctime are marked for update; `.` as the last
//! component is EINVAL, a non-empty directory EEXIST or ENOTEMPTY (Linux: ENOTEMPTY), and the
//! path errors every path-taking call shares.

use super::{chown, mkdir, symlink, too_long_name, too_long_path, touch, Case};
use crate::posix::check::{eq, err, err_any, moved, ok, stat, Mark};
use crate::posix::ctx::{U1, U2};
use rustix::io::Errno;

/// The rmdir family.
pub static CASES: &[Case] = &[
    Case {
        name: "rmdir.empty_dir.removed",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            mkdir("d/e", 0o755)?;
            let before = stat("d")?;
            c.tick();
            ok("rmdir d/e", rustix::fs::rmdir("d/e"))?;
            err("stat d/e after rmdir", rustix::fs::stat("d/e"), Errno::NOENT)?;
            let after = stat("d")?;
            // POSIX leaves a directory's link count to the filesystem; the Unix tradition (ext4,
            // xfs, tmpfs) counts each subdirectory's `..`, btrfs keeps every directory at 1.
            if before.nlink > 1 {
                eq("link count of the parent", after.nlink, before.nlink - 1)?;
            }
            moved("parent d", before.times, after.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "rmdir.nonempty_dir.ENOTEMPTY",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            err_any("rmdir d (holding a file)", rustix::fs::rmdir("d"), &[Errno::NOTEMPTY, Errno::EXIST])
        },
    },
    Case {
        name: "rmdir.regular_file.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("rmdir f", rustix::fs::rmdir("f"), Errno::NOTDIR)
        },
    },
    Case {
        name: "rmdir.symlink_to_dir.ENOTDIR",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            symlink("d", "l")?;
            err("rmdir l (a symlink to a directory)", rustix::fs::rmdir("l"), Errno::NOTDIR)
        },
    },
    Case {
        name: "rmdir.missing.ENOENT",
        security: false,
        run: |_| err("rmdir nothing", rustix::fs::rmdir("nothing"), Errno::NOENT),
    },
    Case {
        name: "rmdir.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("rmdir f/d", rustix::fs::rmdir("f/d"), Errno::NOTDIR)
        },
    },
    Case {
        name: "rmdir.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("rmdir NAME_MAX+1", rustix::fs::rmdir(too_long_name(c).as_str()), Errno::NAMETOOLONG),
    },
    Case {
        name: "rmdir.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("rmdir PATH_MAX", rustix::fs::rmdir(too_long_path().as_str()), Errno::NAMETOOLONG),
    },
    Case {
        name: "rmdir.dot.EINVAL",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("rmdir d/.", rustix::fs::rmdir("d/."), Errno::INVAL)
        },
    },
    Case {
        name: "rmdir.dotdot.ENOTEMPTY",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            mkdir("d/e", 0o755)?;
            err_any("rmdir d/e/..", rustix::fs::rmdir("d/e/.."), &[Errno::NOTEMPTY, Errno::EXIST])
        },
    },
    Case {
        name: "rmdir.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("rmdir l1/d", rustix::fs::rmdir("l1/d"), Errno::LOOP)
        },
    },
    Case {
        name: "rmdir.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            mkdir("d/e", 0o755)?;
            chown("d/e", U1.uid, U1.gid)?;
            super::chmod("d", 0o666)?;
            c.as_user(U1, || err("rmdir d/e as uid 65534 (d is 0666)", rustix::fs::rmdir("d/e"), Errno::ACCESS))
        },
    },
    Case {
        name: "rmdir.no_write_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            mkdir("d/e", 0o755)?;
            chown("d/e", U1.uid, U1.gid)?;
            c.as_user(U1, || err("rmdir d/e as uid 65534 (d is root's 0755)", rustix::fs::rmdir("d/e"), Errno::ACCESS))
        },
    },
    Case {
        name: "rmdir.sticky_dir_others_entry.EPERM",
        security: true,
        run: |c| {
            mkdir("d", 0o1777)?;
            mkdir("d/e", 0o755)?;
            chown("d/e", U2.uid, U2.gid)?;
            c.as_user(U1, || {
                err_any(
                    "rmdir d/e as uid 65534 (d sticky, e of uid 65533)",
                    rustix::fs::rmdir("d/e"),
                    &[Errno::PERM, Errno::ACCESS],
                )
            })
        },
    },
    Case {
        name: "rmdir.sticky_dir_own_entry.removed",
        security: true,
        run: |c| {
            mkdir("d", 0o1777)?;
            mkdir("d/e", 0o755)?;
            chown("d/e", U1.uid, U1.gid)?;
            c.as_user(U1, || ok("rmdir d/e as its owner in a sticky directory", rustix::fs::rmdir("d/e")))
        },
    },
];
