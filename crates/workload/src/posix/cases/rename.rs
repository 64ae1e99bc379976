//! rename(2): POSIX.1-2017 rename() and the Linux man page rename(2), the plain call. A file or
//! directory gets a new name, in the same or another directory of the same filesystem,
//! atomically replacing what the new name held when the kinds agree: the replaced file loses
//! a link (an open descriptor still reaches it), a directory moved to another parent gets its
//! `..` updated, both parents' mtime and ctime are marked for update. Two links of one inode:
//! success, nothing changes. The errors: a directory over a non-empty one, kinds that do not
//! agree, a directory into itself, `.`/`..` as last component, EXDEV, and the path errors.
//!
//! renameat, renameat2 (RENAME_NOREPLACE, RENAME_EXCHANGE), permissions, sticky directories
//! and the immutable/append-only attributes are in rename_at.rs.

use super::{chown, mkdir, symlink, too_long_name, too_long_path, touch, write_file, Case};
use crate::posix::check::{eq, err, err_any, moved, ok, stat, unsupported, Check, Mark, Miss, Stat};
use crate::posix::ctx::{Ctx, U2};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::OwnedFd;

/// The rename family, the plain call.
pub static CASES: &[Case] = &[
    Case {
        name: "rename.file_to_new_name.renamed",
        security: false,
        run: |_| {
            write_file("a", b"data")?;
            super::chmod("a", 0o640)?;
            chown("a", U2.uid, U2.gid)?;
            let before = stat("a")?;
            ok("rename a b", rustix::fs::rename("a", "b"))?;
            err("stat a after rename", rustix::fs::stat("a"), Errno::NOENT)?;
            let after = stat("b")?;
            eq("inode of b", after.ino, before.ino)?;
            eq("mode of b", after.perm(), before.perm())?;
            eq("owner of b", (after.uid, after.gid), (before.uid, before.gid))?;
            eq("size of b", after.size, before.size)?;
            eq("link count of b", after.nlink, 1)
        },
    },
    Case {
        name: "rename.file_in_same_dir_parent_times.updated",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("d/a", 0o644)?;
            let before = stat("d")?;
            c.tick();
            ok("rename d/a d/b", rustix::fs::rename("d/a", "d/b"))?;
            let after = stat("d")?;
            eq("link count of d", after.nlink, before.nlink)?;
            // POSIX: "shall mark for update the last data modification and last file status
            // change timestamps of the parent directory of each file".
            moved("parent d", before.times, after.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "rename.file_across_dirs_parent_times.updated",
        security: false,
        run: |c| {
            mkdir("s", 0o755)?;
            mkdir("t", 0o755)?;
            touch("s/a", 0o644)?;
            let (s, t) = (stat("s")?, stat("t")?);
            c.tick();
            ok("rename s/a t/a", rustix::fs::rename("s/a", "t/a"))?;
            moved("old parent s", s.times, stat("s")?.times, Mark::Any, Mark::Changed, Mark::Changed)?;
            moved("new parent t", t.times, stat("t")?.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "rename.moved_file_ctime.updated",
        security: false,
        run: |c| {
            write_file("a", b"data")?;
            let before = stat("a")?;
            c.tick();
            ok("rename a b", rustix::fs::rename("a", "b"))?;
            // POSIX leaves the renamed file's ctime open ("some implementations mark for update
            // the last file status change timestamp of renamed files and some do not"); Linux's
            // native filesystems (tmpfs, ext4, btrfs, xfs) update it: Linux's choice is expected.
            // Its data did not change: mtime stays.
            moved("renamed file b", before.times, stat("b")?.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "rename.file_over_file.replaced",
        security: false,
        run: |_| {
            write_file("a", b"new")?;
            write_file("b", b"old")?;
            let a = stat("a")?;
            ok("rename a b", rustix::fs::rename("a", "b"))?;
            err("stat a after rename", rustix::fs::stat("a"), Errno::NOENT)?;
            let b = stat("b")?;
            eq("inode of b", b.ino, a.ino)?;
            eq("size of b", b.size, 3)
        },
    },
    Case {
        name: "rename.replaced_file_link_count.decremented",
        security: false,
        run: |c| {
            touch("a", 0o644)?;
            write_file("b", b"old")?;
            ok("link b keep", rustix::fs::link("b", "keep"))?;
            let before = stat("keep")?;
            c.tick();
            ok("rename a b", rustix::fs::rename("a", "b"))?;
            let after = stat("keep")?;
            eq("link count of the replaced file", after.nlink, before.nlink - 1)?;
            // Losing a link changes its status, as unlink would: Linux updates the ctime.
            moved("replaced file (as keep)", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "rename.replaced_file_open_fd.readable",
        security: false,
        run: |_| {
            touch("a", 0o644)?;
            write_file("b", b"still here")?;
            let fd = ok("open b", rustix::fs::open("b", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
            ok("rename a b", rustix::fs::rename("a", "b"))?;
            // POSIX: "If the link named by the new argument exists and the file's link count
            // becomes 0 when it is removed and no process has the file open, the space ... shall
            // be freed"; open, it stays readable.
            eq("link count of the replaced file (fstat)", ok("fstat", rustix::fs::fstat(&fd))?.st_nlink, 0)?;
            eq("data read through the open descriptor", read_all(&fd)?, b"still here".to_vec())
        },
    },
    Case {
        name: "rename.dir_to_new_name.renamed",
        security: false,
        run: |_| {
            mkdir("d", 0o750)?;
            write_file("d/f", b"x")?;
            let before = stat("d")?;
            ok("rename d e", rustix::fs::rename("d", "e"))?;
            err("stat d after rename", rustix::fs::stat("d"), Errno::NOENT)?;
            let after = stat("e")?;
            eq("inode of e", after.ino, before.ino)?;
            eq("mode of e", after.perm(), before.perm())?;
            eq("size of e/f", stat("e/f")?.size, 1)
        },
    },
    Case {
        name: "rename.dir_over_empty_dir.replaced",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            mkdir("e", 0o755)?;
            let (d, parent) = (stat("d")?, stat(".")?);
            ok("rename d e", rustix::fs::rename("d", "e"))?;
            eq("inode of e", stat("e")?.ino, d.ino)?;
            stat("e/f")?;
            // The replaced directory's `..` no longer links the parent, where the filesystem
            // counts subdirectories at all (see `counts_subdirs`).
            if counts_subdirs(&parent) {
                eq("link count of the parent", stat(".")?.nlink, parent.nlink - 1)?;
            }
            Ok(())
        },
    },
    Case {
        name: "rename.dir_over_nonempty_dir.ENOTEMPTY",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            mkdir("e", 0o755)?;
            touch("e/f", 0o644)?;
            // POSIX: EEXIST or ENOTEMPTY; Linux returns ENOTEMPTY (rename(2)): both accepted.
            err_any("rename d e (e holds a file)", rustix::fs::rename("d", "e"), &[Errno::NOTEMPTY, Errno::EXIST])?;
            stat("e/f").map(drop)
        },
    },
    Case {
        name: "rename.dir_over_file.ENOTDIR",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("f", 0o644)?;
            err("rename d f (a regular file)", rustix::fs::rename("d", "f"), Errno::NOTDIR)
        },
    },
    Case {
        name: "rename.file_over_dir.EISDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            mkdir("d", 0o755)?;
            err("rename f d (a directory)", rustix::fs::rename("f", "d"), Errno::ISDIR)
        },
    },
    Case {
        name: "rename.dir_into_own_subdir.EINVAL",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            mkdir("d/e", 0o755)?;
            err("rename d d/e/x", rustix::fs::rename("d", "d/e/x"), Errno::INVAL)
        },
    },
    Case {
        name: "rename.dir_into_itself.EINVAL",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("rename d d/x", rustix::fs::rename("d", "d/x"), Errno::INVAL)
        },
    },
    Case {
        name: "rename.links_of_same_file.unchanged",
        security: false,
        run: |c| {
            write_file("a", b"x")?;
            ok("link a b", rustix::fs::link("a", "b"))?;
            let (a, parent) = (stat("a")?, stat(".")?);
            c.tick();
            // POSIX: "If the old argument and the new argument resolve to ... the same existing
            // file, rename() shall return successfully and perform no other action."
            ok("rename a b (two links of one file)", rustix::fs::rename("a", "b"))?;
            eq("stat a after rename", stat("a")?, a)?;
            eq("link count of b", stat("b")?.nlink, 2)?;
            moved("parent", parent.times, stat(".")?.times, Mark::Any, Mark::Same, Mark::Same)
        },
    },
    Case {
        name: "rename.old_dot.EINVAL",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            // POSIX: EINVAL for a last component `.` or `..`; Linux refuses before looking at the
            // filesystem, with EBUSY (namei.c, do_renameat2: the last component is not a normal
            // name): both accepted.
            err_any("rename d/. e", rustix::fs::rename("d/.", "e"), &[Errno::INVAL, Errno::BUSY])
        },
    },
    Case {
        name: "rename.old_dotdot.EINVAL",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            mkdir("d/e", 0o755)?;
            err_any("rename d/e/.. x", rustix::fs::rename("d/e/..", "x"), &[Errno::INVAL, Errno::BUSY])
        },
    },
    Case {
        name: "rename.new_dot.EINVAL",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            mkdir("e", 0o755)?;
            err_any("rename d e/.", rustix::fs::rename("d", "e/."), &[Errno::INVAL, Errno::BUSY])
        },
    },
    Case {
        name: "rename.across_mounts.EXDEV",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let other = c.other_mount()?.join("fsarena-posix-never-created");
            // The kernel compares the mounts before it looks for or creates anything there.
            err("rename f to another mount", rustix::fs::rename("f", &other), Errno::XDEV)?;
            stat("f").map(drop)
        },
    },
    Case {
        name: "rename.missing_source.ENOENT",
        security: false,
        run: |_| err("rename nothing b", rustix::fs::rename("nothing", "b"), Errno::NOENT),
    },
    Case {
        name: "rename.missing_target_dir.ENOENT",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("rename f nothing/f", rustix::fs::rename("f", "nothing/f"), Errno::NOENT)
        },
    },
    Case {
        name: "rename.empty_source.ENOENT",
        security: false,
        run: |_| err("rename \"\" b", rustix::fs::rename("", "b"), Errno::NOENT),
    },
    Case {
        name: "rename.empty_target.ENOENT",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("rename f \"\"", rustix::fs::rename("f", ""), Errno::NOENT)
        },
    },
    Case {
        name: "rename.source_prefix_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("rename f/x y", rustix::fs::rename("f/x", "y"), Errno::NOTDIR)
        },
    },
    Case {
        name: "rename.target_prefix_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            touch("g", 0o644)?;
            err("rename g f/x", rustix::fs::rename("g", "f/x"), Errno::NOTDIR)
        },
    },
    Case {
        name: "rename.file_to_trailing_slash.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // A trailing slash asks for a directory (POSIX XBD 4.13): a file cannot get that name.
            err("rename f g/", rustix::fs::rename("f", "g/"), Errno::NOTDIR)
        },
    },
    Case {
        name: "rename.source_name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("rename NAME_MAX+1 b", rustix::fs::rename(too_long_name(c).as_str(), "b"), Errno::NAMETOOLONG),
    },
    Case {
        name: "rename.target_name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            err("rename f NAME_MAX+1", rustix::fs::rename("f", too_long_name(c).as_str()), Errno::NAMETOOLONG)
        },
    },
    Case {
        name: "rename.source_path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("rename PATH_MAX b", rustix::fs::rename(too_long_path().as_str(), "b"), Errno::NAMETOOLONG),
    },
    Case {
        name: "rename.target_path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("rename f PATH_MAX", rustix::fs::rename("f", too_long_path().as_str()), Errno::NAMETOOLONG)
        },
    },
    Case {
        name: "rename.source_symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("rename l1/f g", rustix::fs::rename("l1/f", "g"), Errno::LOOP)
        },
    },
    Case {
        name: "rename.target_symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            touch("f", 0o644)?;
            err("rename f l1/f", rustix::fs::rename("f", "l1/f"), Errno::LOOP)
        },
    },
    Case {
        name: "rename.symlink_itself.renamed",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            let f = stat("f")?;
            ok("rename l m", rustix::fs::rename("l", "m"))?;
            // The link is renamed, not the file it names.
            eq("link m", ok("readlink m", rustix::fs::readlink("m", Vec::new()))?.into_bytes(), b"f".to_vec())?;
            eq("stat f", stat("f")?.ino, f.ino)
        },
    },
    Case {
        name: "rename.over_symlink.replaced",
        security: true,
        run: |_| {
            write_file("t", b"target")?;
            symlink("t", "l")?;
            write_file("f", b"new")?;
            let f = stat("f")?;
            ok("rename f l", rustix::fs::rename("f", "l"))?;
            // The symlink is replaced; its target is not written through.
            let l = stat("l")?;
            eq("inode at l", l.ino, f.ino)?;
            eq("type at l", l.kind(), 0o100_000)?;
            eq("size of the old target t", stat("t")?.size, 6)
        },
    },
    Case {
        name: "rename.dir_to_other_parent_dotdot.updated",
        security: false,
        run: |_| {
            mkdir("s", 0o755)?;
            mkdir("t", 0o755)?;
            mkdir("s/d", 0o755)?;
            ok("rename s/d t/d", rustix::fs::rename("s/d", "t/d"))?;
            eq("inode of t/d/.. (the new parent's)", stat("t/d/..")?.ino, stat("t")?.ino)
        },
    },
    Case { name: "rename.dir_to_other_parent_link_counts.updated", security: false, run: dir_link_counts },
    Case {
        name: "rename.dir_across_dirs_parent_times.updated",
        security: false,
        run: |c| {
            mkdir("s", 0o755)?;
            mkdir("t", 0o755)?;
            mkdir("s/d", 0o755)?;
            let (s, t) = (stat("s")?, stat("t")?);
            c.tick();
            ok("rename s/d t/d", rustix::fs::rename("s/d", "t/d"))?;
            moved("old parent s", s.times, stat("s")?.times, Mark::Any, Mark::Changed, Mark::Changed)?;
            moved("new parent t", t.times, stat("t")?.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "rename.dir_trailing_slashes.renamed",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            // Trailing slashes are allowed on names that resolve to directories (XBD 4.13).
            ok("rename d/ e/", rustix::fs::rename("d/", "e/"))?;
            eq("type of e", stat("e")?.kind(), 0o040_000)
        },
    },
    Case {
        name: "rename.through_symlinked_dir.renamed",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            symlink("d", "l")?;
            // Symlinks in the path prefix are followed; only a last component is not.
            ok("rename l/f l/g", rustix::fs::rename("l/f", "l/g"))?;
            stat("d/g").map(drop)
        },
    },
    Case {
        name: "rename.sticky_dir_by_root.renamed",
        security: true,
        run: |_| {
            mkdir("d", 0o1777)?;
            touch("d/f", 0o644)?;
            chown("d/f", U2.uid, U2.gid)?;
            // Root (CAP_FOWNER) is exempt from the sticky restriction.
            ok("rename d/f d/g as root", rustix::fs::rename("d/f", "d/g"))
        },
    },
    Case {
        name: "rename.moved_dir_ctime.updated",
        security: false,
        run: |c| {
            mkdir("s", 0o755)?;
            mkdir("t", 0o755)?;
            mkdir("s/d", 0o755)?;
            let before = stat("s/d")?;
            c.tick();
            ok("rename s/d t/d", rustix::fs::rename("s/d", "t/d"))?;
            // As for a file, POSIX leaves the moved object's ctime open and Linux's native
            // filesystems update it (its `..` changed too): Linux's expected.
            moved("moved directory", before.times, stat("t/d")?.times, Mark::Any, Mark::Any, Mark::Changed)
        },
    },
    Case {
        name: "rename.file_with_trailing_slash.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("rename f/ g", rustix::fs::rename("f/", "g"), Errno::NOTDIR)?;
            stat("f").map(drop)
        },
    },
];

/// A directory moved from `s` to `t`: its `..` moves along, so `s` loses a link and `t`
/// gains one; the directory's own count stays.
fn dir_link_counts(_: &Ctx<'_>) -> Check {
    mkdir("s", 0o755)?;
    mkdir("t", 0o755)?;
    mkdir("s/d", 0o755)?;
    let (s, t, d) = (stat("s")?, stat("t")?, stat("s/d")?);
    if !counts_subdirs(&s) {
        return Err(unsupported(
            "directories' link counts do not count their subdirectories here (always 1, as btrfs)",
        ));
    }
    ok("rename s/d t/d", rustix::fs::rename("s/d", "t/d"))?;
    eq("link count of the old parent s", stat("s")?.nlink, s.nlink - 1)?;
    eq("link count of the new parent t", stat("t")?.nlink, t.nlink + 1)?;
    eq("link count of the moved directory", stat("t/d")?.nlink, d.nlink)
}

/// Whether directory `d` (holding a subdirectory) has the traditional link count, 2 plus one
/// per subdirectory. POSIX does not require it (st_nlink of a directory is left to the
/// implementation; btrfs always says 1), so cases check link-count changes of directories
/// only where they are counted.
pub(super) fn counts_subdirs(d: &Stat) -> bool {
    d.nlink >= 2
}

/// Everything `fd` reads from offset 0 (pread: the descriptor's offset is not moved).
pub(super) fn read_all(fd: &OwnedFd) -> Result<Vec<u8>, Miss> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = ok("pread", rustix::io::pread(fd, &mut buf, out.len() as u64))?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}
