//! mkdir(2) and mkdirat(2): POSIX.1-2017 mkdir() and mkdirat(), and the Linux man page. A new
//! empty directory with the permission bits `mode & ~umask & 0777` (Linux also honours the
//! sticky bit), owned by the effective uid, of the effective gid or, under a set-group-ID
//! parent, of the parent's group and set-group-ID itself; its three timestamps and the
//! parent's mtime and ctime are marked for update and the parent gains a link (the new `..`).
//! Nothing that exists, a dangling symlink included, is replaced (EEXIST).

use super::sys::{cstr, sys, BAD_FD};
use super::RustCase;
use crate::posix::check::{eq, err, moved, ok, stat, unsupported, Mark, Times};
use rustix::fs::Mode;
use rustix::io::Errno;

/// `mkdir p mode`, the umask applying.
fn mkdir(p: &str, mode: u32) -> rustix::io::Result<()> {
    rustix::fs::mkdir(p, Mode::from_raw_mode(mode))
}

/// The file type bits of a directory.
const S_IFDIR: u32 = 0o040_000;

/// The mkdir family.
pub static CASES: &[RustCase] = &[
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
        name: "mkdir.mkdirat_bad_dirfd.EBADF",
        security: false,
        run: |_| {
            let p = cstr("d");
            // SAFETY: `p` is NUL-terminated and alive across the call, which only reads it.
            let r = sys(unsafe { libc::syscall(libc::SYS_mkdirat, BAD_FD, p.as_ptr(), 0o755) });
            err("mkdirat (-1) d", r, Errno::BADF)
        },
    },
    RustCase {
        name: "mkdir.name_max.created",
        security: false,
        run: |c| {
            let name = "x".repeat(c.name_max());
            ok("mkdir NAME_MAX", mkdir(name.as_str(), 0o755))?;
            eq("file type of the NAME_MAX directory", stat(name.as_str())?.kind(), S_IFDIR)
        },
    },
];
