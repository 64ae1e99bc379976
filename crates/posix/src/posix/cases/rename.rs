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

use super::{mkdir, touch, write_file, RustCase};
use crate::posix::check::{eq, err, moved, ok, stat, unsupported, Check, Mark, Miss};
use crate::posix::ctx::Ctx;
use crate::posix::table::counts_subdirs;
use rustix::io::Errno;
use std::os::fd::OwnedFd;

/// The rename family, the plain call.
pub static CASES: &[RustCase] = &[
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
    RustCase { name: "rename.dir_to_other_parent_link_counts.updated", security: false, run: dir_link_counts },
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
