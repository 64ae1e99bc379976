//! open(2) of what is not a plain named file: O_TMPFILE (an unnamed regular file, linked in
//! later through /proc/self/fd, or never with O_EXCL), FIFOs (O_NONBLOCK: a reader opens at
//! once, a writer without a reader gets ENXIO; O_TRUNC has no effect), sockets (ENXIO), and
//! openat2(2)'s RESOLVE_* confinement (no symlinks at all; nothing outside the directory).
//! POSIX.1-2017 open() and the Linux man pages; the rest of the family is in open.rs.

use super::mkfifo::S_IFREG;
use super::open::{open, write_all};
use super::sys::read_file;
use super::{io_errno, mkdir, symlink, touch, RustCase};
use crate::posix::check::{eq, err, ok, stat, Miss, Octal};
use crate::posix::ctx::maybe_unsupported;
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, CWD};
use rustix::io::Errno;
use std::os::fd::{AsRawFd, OwnedFd};

/// The file of an O_TMPFILE descriptor, opened in `.`; unsupported where the filesystem has
/// no O_TMPFILE (open(2): EOPNOTSUPP; ISDIR on kernels before 3.11).
fn tmpfile(extra: OFlags) -> Result<OwnedFd, Miss> {
    let r = open(".", OFlags::TMPFILE | OFlags::RDWR | extra, 0o600);
    let r = match r {
        Err(e) if e == Errno::ISDIR => return Err(crate::posix::check::unsupported("no O_TMPFILE (open: EISDIR)")),
        r => r,
    };
    ok("open . O_TMPFILE|O_RDWR 0600", maybe_unsupported("open . O_TMPFILE", r)?)
}

/// linkat(AT_FDCWD, "/proc/self/fd/N", AT_FDCWD, name, AT_SYMLINK_FOLLOW): gives the file of
/// `fd` a name (open(2), O_TMPFILE; no CAP_DAC_READ_SEARCH needed, unlike AT_EMPTY_PATH).
fn link_fd(fd: &OwnedFd, name: &str) -> rustix::io::Result<()> {
    let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rustix::fs::linkat(CWD, proc.as_str(), CWD, name, AtFlags::SYMLINK_FOLLOW)
}

/// openat2(dirfd, p, O_RDONLY|O_CLOEXEC, mode, resolve); unsupported before Linux 5.6.
fn openat2(
    dirfd: impl std::os::fd::AsFd,
    p: &str,
    mode: u32,
    resolve: ResolveFlags,
) -> Result<rustix::io::Result<OwnedFd>, Miss> {
    let r = rustix::fs::openat2(dirfd, p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::from_raw_mode(mode), resolve);
    maybe_unsupported("openat2", r)
}

/// `d` holding `d/e/f`, and `f` beside `d`; a descriptor of `d`.
fn confined_tree() -> Result<OwnedFd, Miss> {
    mkdir("d", 0o755)?;
    mkdir("d/e", 0o755)?;
    touch("d/e/f", 0o644)?;
    touch("f", 0o644)?;
    super::sys::open("d", OFlags::RDONLY | OFlags::DIRECTORY)
}

/// The open family: O_TMPFILE, FIFOs and sockets.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "open.tmpfile.unlinked",
        security: false,
        run: |_| {
            let before = ok("read .", std::fs::read_dir(".").map(|d| d.count()).map_err(|e| io_errno(&e)))?;
            let fd = tmpfile(OFlags::empty())?;
            let st = ok("fstat (O_TMPFILE)", rustix::fs::fstat(&fd))?;
            eq("link count of the O_TMPFILE file", st.st_nlink, 0)?;
            eq("file type", Octal(st.st_mode & 0o170_000), Octal(S_IFREG))?;
            eq("mode (0600 & ~022)", Octal(st.st_mode & 0o7777), Octal(0o600))?;
            let after = ok("read .", std::fs::read_dir(".").map(|d| d.count()).map_err(|e| io_errno(&e)))?;
            eq("entries in . (none added)", after, before)
        },
    },
    RustCase {
        name: "open.tmpfile_linkat.linked",
        security: false,
        run: |_| {
            let fd = tmpfile(OFlags::empty())?;
            write_all("write (O_TMPFILE)", &fd, b"kept")?;
            ok("linkat /proc/self/fd/N t AT_SYMLINK_FOLLOW", link_fd(&fd, "t"))?;
            eq("link count of t", stat("t")?.nlink, 1)?;
            eq("contents of t", read_file("t")?, b"kept".to_vec())
        },
    },
    RustCase {
        name: "open.tmpfile_excl_linkat.ENOENT",
        security: false,
        run: |_| {
            // open(2): only "If O_EXCL is not specified" can linkat(2) give the file a name;
            // with it, linkat answers ENOENT, as for any file with no links left.
            let fd = tmpfile(OFlags::EXCL)?;
            err("linkat /proc/self/fd/N t (O_TMPFILE|O_EXCL)", link_fd(&fd, "t"), Errno::NOENT)
        },
    },
    RustCase {
        name: "open.tmpfile_read_only.EINVAL",
        security: false,
        run: |_| {
            // open(2): EINVAL "O_TMPFILE was specified in flags, but neither O_WRONLY nor O_RDWR".
            err("open . O_TMPFILE|O_RDONLY", open(".", OFlags::TMPFILE | OFlags::RDONLY, 0o600), Errno::INVAL)
        },
    },
    RustCase {
        name: "open.tmpfile_on_file.ENOTDIR",
        security: false,
        run: |_| {
            // O_TMPFILE includes O_DIRECTORY: the path must name a directory.
            touch("f", 0o644)?;
            let r = open("f", OFlags::TMPFILE | OFlags::RDWR, 0o600);
            err("open f O_TMPFILE|O_RDWR", maybe_unsupported("open f O_TMPFILE", r)?, Errno::NOTDIR)
        },
    },
    RustCase {
        name: "open.openat2_no_symlinks_last.ELOOP",
        security: true,
        run: |_| {
            // openat2(2) RESOLVE_NO_SYMLINKS: "Disallow resolution of symbolic links during
            // path resolution" - ELOOP, the last component included.
            touch("f", 0o644)?;
            symlink("f", "l")?;
            err("openat2 l RESOLVE_NO_SYMLINKS (l -> f)", openat2(CWD, "l", 0, ResolveFlags::NO_SYMLINKS)?, Errno::LOOP)
        },
    },
    RustCase {
        name: "open.openat2_no_symlinks_component.ELOOP",
        security: true,
        run: |_| {
            let _d = confined_tree()?;
            symlink("d", "l")?;
            err(
                "openat2 l/e/f RESOLVE_NO_SYMLINKS (l -> d)",
                openat2(CWD, "l/e/f", 0, ResolveFlags::NO_SYMLINKS)?,
                Errno::LOOP,
            )
        },
    },
    RustCase {
        name: "open.openat2_beneath_inside.opened",
        security: false,
        run: |_| {
            // ".." that stays below the directory is allowed under RESOLVE_BENEATH.
            let d = confined_tree()?;
            ok("openat2 (d) e/../e/f RESOLVE_BENEATH", openat2(&d, "e/../e/f", 0, ResolveFlags::BENEATH)?).map(drop)
        },
    },
    RustCase {
        name: "open.openat2_beneath_dotdot.EXDEV",
        security: true,
        run: |_| {
            // openat2(2): RESOLVE_BENEATH refuses an escape through ".." with EXDEV.
            let d = confined_tree()?;
            err("openat2 (d) ../f RESOLVE_BENEATH", openat2(&d, "../f", 0, ResolveFlags::BENEATH)?, Errno::XDEV)
        },
    },
    RustCase {
        name: "open.openat2_beneath_absolute.EXDEV",
        security: true,
        run: |c| {
            let d = confined_tree()?;
            let p = c.path("d/e/f");
            let r = openat2(&d, &p.to_string_lossy(), 0, ResolveFlags::BENEATH)?;
            err("openat2 (d) /abs/d/e/f RESOLVE_BENEATH", r, Errno::XDEV)
        },
    },
    RustCase {
        name: "open.openat2_beneath_symlink_escape.EXDEV",
        security: true,
        run: |_| {
            // A symlink is resolved under the same rule: one pointing out is refused.
            let d = confined_tree()?;
            symlink("../f", "d/l")?;
            err("openat2 (d) l RESOLVE_BENEATH (l -> ../f)", openat2(&d, "l", 0, ResolveFlags::BENEATH)?, Errno::XDEV)
        },
    },
    RustCase {
        name: "open.openat2_in_root_absolute_symlink.opened",
        security: true,
        run: |_| {
            // RESOLVE_IN_ROOT: "/" is the directory itself, so an absolute symlink stays in.
            let d = confined_tree()?;
            symlink("/e/f", "d/l")?;
            let fd = ok("openat2 (d) l RESOLVE_IN_ROOT (l -> /e/f)", openat2(&d, "l", 0, ResolveFlags::IN_ROOT)?)?;
            let st = ok("fstat", rustix::fs::fstat(&fd))?;
            eq("inode opened (d/e/f's)", st.st_ino, stat("d/e/f")?.ino)
        },
    },
    RustCase {
        name: "open.openat2_mode_without_create.EINVAL",
        security: false,
        run: |_| {
            // openat2(2) is strict where open(2) ignores: EINVAL "mode is non-zero, but
            // how.flags does not contain O_CREAT or O_TMPFILE".
            touch("f", 0o644)?;
            err("openat2 f O_RDONLY mode 0644", openat2(CWD, "f", 0o644, ResolveFlags::empty())?, Errno::INVAL)
        },
    },
    RustCase {
        name: "open.openat2_unknown_resolve.EINVAL",
        security: false,
        run: |_| {
            // EINVAL "An unknown flag or invalid value was specified in how" (bit 40).
            touch("f", 0o644)?;
            let r = openat2(CWD, "f", 0, ResolveFlags::from_bits_retain(1 << 40))?;
            err("openat2 f resolve bit 40", r, Errno::INVAL)
        },
    },
];
