//! statx(2): the Linux man page (not in POSIX; its fields extend POSIX stat()'s). The
//! returned mask says which fields hold values (at least STATX_BASIC_STATS on a local
//! filesystem), the fields agree with fstat, btime is there where the filesystem records
//! it, `AT_SYMLINK_NOFOLLOW` describes the link, `AT_EMPTY_PATH` the descriptor, and
//! stx_attributes shows the immutable and append-only flags; bad flags and reserved mask
//! bits are EINVAL, and the path errors every path-taking call shares.

use super::{chmod, mkdir, symlink, too_long_name, too_long_path, touch, write_file, RustCase};
use crate::posix::check::{ensure, eq, err, moved, ok, times, unsupported, Check, Mark, Miss, Octal};
use crate::posix::ctx::{Ctx, U1};
use rustix::fs::{AtFlags, IFlags, Mode, OFlags, Statx, StatxAttributes, StatxFlags, CWD};
use rustix::io::Errno;

/// `statx(AT_FDCWD, p, flags, mask)`.
fn sx(p: &str, flags: AtFlags, mask: StatxFlags) -> rustix::io::Result<Statx> {
    rustix::fs::statx(CWD, p, flags, mask)
}

/// statx of `p` asking for everything, following a last symlink (must succeed).
fn all(p: &str) -> Result<Statx, Miss> {
    ok(&format!("statx {p}"), sx(p, AtFlags::empty(), StatxFlags::ALL))
}

/// Sets the inode flag `flag` on `p`, then requires stx_attributes to show `attr`.
fn attr_shown(c: &Ctx<'_>, flag: IFlags, attr: StatxAttributes, what: &str) -> Check {
    c.need_flags()?;
    touch("f", 0o644)?;
    let fd = ok("open f", rustix::fs::open("f", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
    let old = ok("FS_IOC_GETFLAGS f", rustix::fs::ioctl_getflags(&fd))?;
    ok(&format!("FS_IOC_SETFLAGS f +{what}"), rustix::fs::ioctl_setflags(&fd, old | flag))?;
    let x = all("f")?;
    ensure(&format!("stx_attributes_mask of f ({what})"), x.stx_attributes_mask.contains(attr), "supported", || {
        format!("{:?}", x.stx_attributes_mask)
    })?;
    ensure(&format!("stx_attributes of f ({what})"), x.stx_attributes.contains(attr), "set", || {
        format!("{:?}", x.stx_attributes)
    })
}

/// The statx family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "statx.basic_stats.returned",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let x = ok("statx f", sx("f", AtFlags::empty(), StatxFlags::BASIC_STATS))?;
            let mask = StatxFlags::from_bits_retain(x.stx_mask);
            ensure("stx_mask of f", mask.contains(StatxFlags::BASIC_STATS), "STATX_BASIC_STATS", || format!("{mask:?}"))
        },
    },
    RustCase {
        name: "statx.blksize.positive",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let x = all("f")?;
            ensure("stx_blksize of f", x.stx_blksize > 0, "> 0", || x.stx_blksize.to_string())
        },
    },
    RustCase {
        name: "statx.fields.match_fstat",
        security: false,
        run: |_| {
            write_file("f", &[7u8; 5000])?;
            let x = all("f")?;
            let fd = ok("open f", rustix::fs::open("f", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
            let s = ok("fstat f", rustix::fs::fstat(&fd))?;
            eq("stx_size", x.stx_size, s.st_size as u64)?;
            eq("stx_size of 5000 bytes written", x.stx_size, 5000)?;
            eq("stx_nlink", u64::from(x.stx_nlink), s.st_nlink as u64)?;
            eq("stx_mode", Octal(u32::from(x.stx_mode)), Octal(s.st_mode))?;
            eq("stx_uid", x.stx_uid, s.st_uid)?;
            eq("stx_gid", x.stx_gid, s.st_gid)?;
            eq("stx_ino", x.stx_ino, s.st_ino)?;
            eq("stx_blocks", x.stx_blocks, s.st_blocks as u64)
        },
    },
    RustCase {
        name: "statx.mode_and_owner.set",
        security: false,
        run: |_| {
            touch("f", 0o640)?;
            super::chown("f", U1.uid, U1.gid)?;
            let x = all("f")?;
            eq("stx_mode of f", Octal(u32::from(x.stx_mode)), Octal(0o100_640))?;
            eq("stx_uid, stx_gid of f", (x.stx_uid, x.stx_gid), (U1.uid, U1.gid))
        },
    },
    // statx(2): STATX_BTIME is in the returned mask when the filesystem records a birth
    // time; it cannot be later than the ctime.
    RustCase {
        name: "statx.btime.present",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let x = all("f")?;
            if StatxFlags::from_bits_retain(x.stx_mask) & StatxFlags::BTIME != StatxFlags::BTIME {
                return Err(unsupported("no birth time: STATX_BTIME not in the returned mask"));
            }
            let ns = |t: rustix::fs::StatxTimestamp| i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
            let (b, ct) = (ns(x.stx_btime), ns(x.stx_ctime));
            ensure("stx_btime of f", b > 0 && b <= ct, "set, not after the ctime", || format!("btime {b}, ctime {ct}"))
        },
    },
    RustCase {
        name: "statx.btime_after_write.unchanged",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let x = all("f")?;
            if StatxFlags::from_bits_retain(x.stx_mask) & StatxFlags::BTIME != StatxFlags::BTIME {
                return Err(unsupported("no birth time: STATX_BTIME not in the returned mask"));
            }
            c.tick();
            write_file("f", b"later")?;
            let y = all("f")?;
            eq(
                "stx_btime of f after a write",
                (y.stx_btime.tv_sec, y.stx_btime.tv_nsec),
                (x.stx_btime.tv_sec, x.stx_btime.tv_nsec),
            )
        },
    },
    RustCase {
        name: "statx.mnt_id.returned",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            mkdir("d", 0o755)?;
            let (x, y) = (all("f")?, all("d")?);
            let mask = StatxFlags::from_bits_retain(x.stx_mask);
            ensure("stx_mask of f", mask.contains(StatxFlags::MNT_ID), "STATX_MNT_ID", || format!("{mask:?}"))?;
            eq("stx_mnt_id of f and d (one mount)", x.stx_mnt_id, y.stx_mnt_id)
        },
    },
    RustCase {
        name: "statx.directory.type",
        security: false,
        run: |_| {
            mkdir("d", 0o750)?;
            eq("stx_mode of d", Octal(u32::from(all("d")?.stx_mode)), Octal(0o040_750))
        },
    },
    RustCase {
        name: "statx.char_device.rdev",
        security: false,
        run: |_| {
            let dev = rustix::fs::makedev(1, 3);
            ok(
                "mknod c 1 3",
                rustix::fs::mknodat(CWD, "c", rustix::fs::FileType::CharacterDevice, Mode::from_raw_mode(0o600), dev),
            )?;
            let x = all("c")?;
            eq("stx_rdev of c", (x.stx_rdev_major, x.stx_rdev_minor), (1, 3))?;
            eq("file type of c", u32::from(x.stx_mode) & 0o170_000, 0o020_000)
        },
    },
    RustCase {
        name: "statx.hard_link.nlink",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            ok("link f g", rustix::fs::link("f", "g"))?;
            let (x, y) = (all("f")?, all("g")?);
            eq("stx_nlink of f", x.stx_nlink, 2)?;
            eq("stx_ino of f and g", x.stx_ino, y.stx_ino)
        },
    },
    RustCase {
        name: "statx.symlink_nofollow.link",
        security: true,
        run: |_| {
            write_file("f", b"hello")?;
            symlink("f", "l")?;
            let x = ok("statx l AT_SYMLINK_NOFOLLOW", sx("l", AtFlags::SYMLINK_NOFOLLOW, StatxFlags::BASIC_STATS))?;
            eq("file type of l", u32::from(x.stx_mode) & 0o170_000, 0o120_000)?;
            eq("stx_size of l (its target's length)", x.stx_size, 1)
        },
    },
    RustCase {
        name: "statx.symlink_followed.target",
        security: false,
        run: |_| {
            write_file("f", b"hello")?;
            symlink("f", "l")?;
            let (x, f) = (all("l")?, all("f")?);
            eq("stx_ino through l", x.stx_ino, f.stx_ino)?;
            eq("stx_size through l", x.stx_size, 5)
        },
    },
    RustCase {
        name: "statx.empty_path_fd.described",
        security: false,
        run: |_| {
            write_file("f", b"hello")?;
            let fd = ok("open f O_PATH", rustix::fs::open("f", OFlags::PATH | OFlags::CLOEXEC, Mode::empty()))?;
            let x = ok(
                "statx(fd, \"\", AT_EMPTY_PATH)",
                rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS),
            )?;
            eq("stx_ino through the fd", x.stx_ino, all("f")?.stx_ino)
        },
    },
    RustCase {
        name: "statx.dirfd_relative.described",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            write_file("d/f", b"abc")?;
            let d = ok(
                "open d",
                rustix::fs::open("d", OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()),
            )?;
            let x = ok("statx(d, f)", rustix::fs::statx(&d, "f", AtFlags::empty(), StatxFlags::BASIC_STATS))?;
            eq("stx_size of d/f", x.stx_size, 3)
        },
    },
    RustCase {
        name: "statx.dirfd_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = ok("open f", rustix::fs::open("f", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
            err(
                "statx(regular file fd, x)",
                rustix::fs::statx(&fd, "x", AtFlags::empty(), StatxFlags::BASIC_STATS),
                Errno::NOTDIR,
            )
        },
    },
    RustCase {
        name: "statx.immutable_attr.shown",
        security: false,
        run: |c| attr_shown(c, IFlags::IMMUTABLE, StatxAttributes::IMMUTABLE, "immutable"),
    },
    RustCase {
        name: "statx.append_attr.shown",
        security: false,
        run: |c| attr_shown(c, IFlags::APPEND, StatxAttributes::APPEND, "append-only"),
    },
    RustCase {
        name: "statx.reserved_mask.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err(
                "statx f STATX__RESERVED",
                sx("f", AtFlags::empty(), StatxFlags::from_bits_retain(0x8000_0000)),
                Errno::INVAL,
            )
        },
    },
    RustCase {
        name: "statx.bad_flag.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("statx f AT_REMOVEDIR", sx("f", AtFlags::REMOVEDIR, StatxFlags::BASIC_STATS), Errno::INVAL)
        },
    },
    // statx(2): AT_STATX_FORCE_SYNC and AT_STATX_DONT_SYNC together make no sense.
    RustCase {
        name: "statx.both_sync_types.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let flags = AtFlags::STATX_FORCE_SYNC | AtFlags::STATX_DONT_SYNC;
            err("statx f FORCE_SYNC|DONT_SYNC", sx("f", flags, StatxFlags::BASIC_STATS), Errno::INVAL)
        },
    },
    RustCase {
        name: "statx.missing.ENOENT",
        security: false,
        run: |_| err("statx nothing", sx("nothing", AtFlags::empty(), StatxFlags::BASIC_STATS), Errno::NOENT),
    },
    RustCase {
        name: "statx.empty_path.ENOENT",
        security: false,
        run: |_| {
            err("statx \"\" without AT_EMPTY_PATH", sx("", AtFlags::empty(), StatxFlags::BASIC_STATS), Errno::NOENT)
        },
    },
    RustCase {
        name: "statx.dangling_symlink.ENOENT",
        security: false,
        run: |_| {
            symlink("nothing", "l")?;
            err("statx l (following, dangling)", sx("l", AtFlags::empty(), StatxFlags::BASIC_STATS), Errno::NOENT)
        },
    },
    RustCase {
        name: "statx.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("statx f/x", sx("f/x", AtFlags::empty(), StatxFlags::BASIC_STATS), Errno::NOTDIR)
        },
    },
    RustCase {
        name: "statx.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("statx l1 (l1 -> l2 -> l1)", sx("l1", AtFlags::empty(), StatxFlags::BASIC_STATS), Errno::LOOP)
        },
    },
    RustCase {
        name: "statx.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| {
            err(
                "statx NAME_MAX+1",
                sx(&too_long_name(c), AtFlags::empty(), StatxFlags::BASIC_STATS),
                Errno::NAMETOOLONG,
            )
        },
    },
    RustCase {
        name: "statx.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| {
            err("statx PATH_MAX", sx(&too_long_path(), AtFlags::empty(), StatxFlags::BASIC_STATS), Errno::NAMETOOLONG)
        },
    },
    RustCase {
        name: "statx.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            chmod("d", 0o644)?;
            err(
                "statx d/f as uid 65534 (d is 0644)",
                c.as_user(U1, || sx("d/f", AtFlags::empty(), StatxFlags::BASIC_STATS).map(drop)),
                Errno::ACCESS,
            )
        },
    },
    // Stat needs no permission on the file itself, only search on the way (statx(2)).
    RustCase {
        name: "statx.unreadable_file.described",
        security: false,
        run: |c| {
            touch("f", 0o000)?;
            ok(
                "statx f as uid 65534 (f is 0000)",
                c.as_user(U1, || sx("f", AtFlags::empty(), StatxFlags::BASIC_STATS).map(drop)),
            )
        },
    },
    // Looking at a file is not an access to its data or a change (POSIX stat()): no time
    // is marked.
    RustCase {
        name: "statx.call.times_unchanged",
        security: false,
        run: |c| {
            write_file("f", b"data")?;
            let before = times("f")?;
            c.tick();
            all("f")?;
            let after = times("f")?;
            moved("f", before, after, Mark::Same, Mark::Same, Mark::Same)
        },
    },
];
