//! symlink(2), symlinkat(2), readlink(2) and readlinkat(2): POSIX.1-2017 symlink() and
//! readlink(), and the Linux man pages. A symlink keeps its target string byte for byte,
//! whatever it names (nothing is resolved at creation); lstat reports its size as the
//! target's length and, on Linux, mode 0777; the new link's times and the parent's mtime and
//! ctime are marked for update. The security cases check that the AT_SYMLINK_NOFOLLOW forms
//! act on the link, never on what it names. readlink and readlinkat are in
//! symlink_readlink.rs.

use super::mkfifo::{born, clock_before, S_IFLNK};
use super::sys::{cstr, sys, BAD_FD};
use super::{symlink, touch, RustCase};
use crate::posix::check::{eq, err, fail, ok, stat, times, unsupported, Check, Octal};
use rustix::fs::{AtFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

/// `symlink target p`, as the case calls it.
fn ln(target: &str, p: &str) -> rustix::io::Result<()> {
    rustix::fs::symlinkat(target, CWD, p)
}

/// The bytes of link `p` (readlink with a buffer large enough).
pub(super) fn readlink(p: &str) -> rustix::io::Result<Vec<u8>> {
    rustix::fs::readlinkat(CWD, p, Vec::new()).map(|s| s.into_bytes())
}

/// A target of `len` bytes made of short components (`t/t/...`), so that only its length
/// matters.
fn target_of(len: usize) -> String {
    let mut t = "t/".repeat(len / 2 + 1);
    t.truncate(len);
    t
}

/// `symlink target l`, then the link must hold exactly `target` and lstat's size be its
/// length.
fn kept(target: &str) -> Check {
    ok(&format!("symlink ({} bytes) l", target.len()), ln(target, "l"))?;
    round_trip(target)
}

/// readlink l must give back `target`, and lstat's size be its length.
fn round_trip(target: &str) -> Check {
    let got = ok("readlink l", readlink("l"))?;
    if got != target.as_bytes() {
        return Err(fail("readlink l", format!("{target:?}"), format!("{:?}", String::from_utf8_lossy(&got))));
    }
    eq("lstat size of l (the target's length)", stat("l")?.size, target.len() as u64)
}

/// A chain `c1 -> c2 -> ... -> cN -> f` of `n` symlinks ending at the regular file `f`.
fn chain(n: usize) -> Check {
    touch("f", 0o644)?;
    for i in 1..=n {
        let next = if i == n { "f".to_string() } else { format!("c{}", i + 1) };
        symlink(&next, &format!("c{i}"))?;
    }
    Ok(())
}

/// The symlink family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "symlink.new_link_times.updated",
        security: false,
        run: |c| {
            let before = times(".")?;
            c.tick();
            let now = clock_before();
            ok("symlink f l", ln("f", "l"))?;
            born("new symlink l", before, now, times("l")?)
        },
    },
    RustCase {
        name: "symlink.target_bytes.kept",
        security: false,
        run: |_| {
            // Slashes, dots, spaces and a trailing slash are content, not normalised.
            kept("..//a/./b c/../\t~$x//")
        },
    },
    RustCase {
        name: "symlink.target_posix_max.kept",
        security: false,
        run: |_| {
            // _POSIX_SYMLINK_MAX (255): every conforming filesystem keeps a target this long.
            kept(&target_of(255))
        },
    },
    RustCase {
        name: "symlink.target_path_max_minus_one.kept",
        security: false,
        run: |_| {
            // PATH_MAX - 1 bytes, the longest a path argument can be. POSIX lets a filesystem's
            // {SYMLINK_MAX} be smaller (ENAMETOOLONG): that is a limit, not a fault, e.g. ext4
            // keeps at most one block.
            let t = target_of(4095);
            match ln(&t, "l") {
                Err(e) if e == Errno::NAMETOOLONG => {
                    Err(unsupported("the filesystem's SYMLINK_MAX is below 4095 (symlink: ENAMETOOLONG)"))
                }
                r => ok("symlink (4095 bytes) l", r),
            }?;
            round_trip(&t)
        },
    },
    RustCase {
        name: "symlink.target_path_max.ENAMETOOLONG",
        security: false,
        run: |_| {
            // 4096 bytes and the NUL do not fit PATH_MAX: refused before any filesystem sees it.
            err("symlink (4096 bytes) l", ln(&target_of(4096), "l"), Errno::NAMETOOLONG)
        },
    },
    RustCase {
        name: "symlink.symlinkat_bad_fd.EBADF",
        security: false,
        run: |_| {
            let (t, p) = (cstr("x"), cstr("l"));
            // SAFETY: `t` and `p` are NUL-terminated strings alive across the call, which only
            // reads them.
            err(
                "symlinkat x (-1) l",
                sys(unsafe { libc::symlinkat(t.as_ptr(), BAD_FD, p.as_ptr()) }.into()),
                Errno::BADF,
            )
        },
    },
    RustCase {
        name: "symlink.statx_nofollow.link_itself",
        security: true,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            let target = stat("f")?;
            let link = rustix::fs::statx(CWD, "l", AtFlags::SYMLINK_NOFOLLOW, rustix::fs::StatxFlags::BASIC_STATS);
            let link = ok("statx l AT_SYMLINK_NOFOLLOW", link)?;
            eq("statx l AT_SYMLINK_NOFOLLOW: file type", Octal(u32::from(link.stx_mode) & 0o170_000), Octal(S_IFLNK))?;
            ensure_other_inode(link.stx_ino, target.ino)
        },
    },
    RustCase {
        name: "symlink.chain_over_linux_max.ELOOP",
        security: false,
        run: |_| {
            // path_resolution(7): Linux follows at most 40 symlinks in one lookup.
            chain(41)?;
            err(
                "open c1 (41 links to f)",
                rustix::fs::open("c1", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()),
                Errno::LOOP,
            )
        },
    },
];

/// A symlink is an inode of its own: not the target's.
fn ensure_other_inode(link: u64, target: u64) -> Check {
    crate::posix::check::ensure("inode of l (AT_SYMLINK_NOFOLLOW)", link != target, "the link's own inode", || {
        format!("the target's inode {target}")
    })
}
