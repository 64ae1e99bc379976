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

use super::{mkdir, symlink, touch, write_file, RustCase};
use crate::posix::check::{eq, err, moved, ok, stat, unsupported, Check, Mark, Miss};
use crate::posix::ctx::Ctx;
use crate::posix::table::counts_subdirs;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::OwnedFd;

/// The rename family, the plain call.
pub static CASES: &[RustCase] = &[
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase { name: "rename.dir_to_other_parent_link_counts.updated", security: false, run: dir_link_counts },
    RustCase {
        name: "rename.dir_trailing_slashes.renamed",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            // Trailing slashes are allowed on names that resolve to directories (XBD 4.13).
            ok("rename d/ e/", rustix::fs::rename("d/", "e/"))?;
            eq("type of e", stat("e")?.kind(), 0o040_000)
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

/// Everything `fd` reads from offset 0 (pread: the descriptor's offset is not moved).
pub(crate) fn read_all(fd: &OwnedFd) -> Result<Vec<u8>, Miss> {
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
