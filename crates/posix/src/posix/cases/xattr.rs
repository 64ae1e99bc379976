//! Extended attributes: setxattr(2), getxattr(2), listxattr(2), removexattr(2) and their
//! l* (the link itself) and f* (an open descriptor) forms, xattr(7). Not in POSIX: the Linux
//! man pages are the reference. A value is stored and read back byte for byte;
//! `XATTR_CREATE`/`XATTR_REPLACE` refuse with EEXIST/ENODATA; a buffer too small is ERANGE
//! and an empty one asks for the size; setting or removing marks the ctime. `user.`
//! attributes follow the file's permission bits and exist only on regular files and
//! directories; `trusted.` ones are for CAP_SYS_ADMIN alone (invisible to others).

use super::{symlink, touch, RustCase};
use crate::posix::check::{ensure, eq, err, fail, name, ok, Check, Miss};
use crate::posix::ctx::{Ctx, U1};
use rustix::fs::{Mode, OFlags, XattrFlags};
use rustix::io::Errno;

/// A binary value: every byte value, NULs included.
fn binary() -> Vec<u8> {
    (0..=255u8).collect()
}

/// `getxattr p name` into a buffer of 64 KiB (XATTR_SIZE_MAX): the value.
fn get(p: &str, name: &str) -> rustix::io::Result<Vec<u8>> {
    crate::posix::table::getxattr(p, name, true)
}

/// `lgetxattr p name` (the link itself).
fn lget(p: &str, name: &str) -> rustix::io::Result<Vec<u8>> {
    crate::posix::table::getxattr(p, name, false)
}

/// `setxattr p name value` with no flags.
fn set(p: &str, name: &str, value: &[u8]) -> rustix::io::Result<()> {
    rustix::fs::setxattr(p, name, value, XattrFlags::empty())
}

/// `listxattr p`: the names, split at their NULs.
fn list(p: &str) -> rustix::io::Result<Vec<String>> {
    let mut buf = vec![0u8; 65536];
    let n = rustix::fs::listxattr(p, &mut buf[..])?;
    Ok(names(&buf[..n]))
}

/// The names in a listxattr buffer.
fn names(b: &[u8]) -> Vec<String> {
    b.split(|c| *c == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
}

/// Creates `f` (0644) holding `user.a` = "value".
fn with_attr(c: &Ctx<'_>) -> Result<(), Miss> {
    c.need_xattr("user.a")?;
    touch("f", 0o644)?;
    ok("setxattr f user.a", set("f", "user.a", b"value"))
}

/// `value` set as `user.v` on a new file must read back equal.
fn roundtrip(c: &Ctx<'_>, value: &[u8]) -> Check {
    c.need_xattr("user.v")?;
    touch("f", 0o644)?;
    ok(&format!("setxattr f user.v ({} bytes)", value.len()), set("f", "user.v", value))?;
    let back = ok("getxattr f user.v", get("f", "user.v"))?;
    ensure("value of user.v", back == value, &format!("the {} bytes set", value.len()), || {
        format!("{} bytes, differing", back.len())
    })
}

/// The xattr family.
pub static CASES: &[RustCase] = &[
    RustCase { name: "xattr.user_binary.roundtrip", security: false, run: |c| roundtrip(c, &binary()) },
    RustCase { name: "xattr.user_empty_value.roundtrip", security: false, run: |c| roundtrip(c, b"") },
    // The largest value the filesystem takes, up to XATTR_SIZE_MAX (64 KiB): ext4 without
    // ea_inode keeps values within one block (1 KiB on a small image), so the size is found
    // by halving; at least 256 bytes must fit.
    RustCase {
        name: "xattr.user_large_value.roundtrip",
        security: false,
        run: |c| {
            c.need_xattr("user.v")?;
            touch("f", 0o644)?;
            let mut size = 65536usize;
            loop {
                let value: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
                match set("f", "user.v", &value) {
                    Ok(()) => {
                        let back = ok("getxattr f user.v", get("f", "user.v"))?;
                        return ensure(
                            "large value of user.v",
                            back == value,
                            &format!("the {size} bytes set"),
                            || format!("{} bytes, differing", back.len()),
                        );
                    }
                    Err(e) if size > 256 && [Errno::NOSPC, Errno::RANGE, Errno::TOOBIG].contains(&e) => size /= 2,
                    Err(e) => return Err(fail(&format!("setxattr f user.v ({size} bytes)"), "success", name(e))),
                }
            }
        },
    },
    RustCase {
        name: "xattr.value_over_size_max.E2BIG",
        security: false,
        run: |c| {
            c.need_xattr("user.v")?;
            touch("f", 0o644)?;
            err("setxattr f user.v (65537 bytes)", set("f", "user.v", &vec![1u8; 65537]), Errno::TOOBIG)
        },
    },
    RustCase {
        name: "xattr.bad_flags.EINVAL",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            err(
                "setxattr f user.a flags=4",
                rustix::fs::setxattr("f", "user.a", b"x", XattrFlags::from_bits_retain(4)),
                Errno::INVAL,
            )
        },
    },
    RustCase {
        name: "xattr.small_buffer.ERANGE",
        security: false,
        run: |c| {
            with_attr(c)?;
            let mut buf = [0u8; 2];
            err("getxattr f user.a into 2 bytes", rustix::fs::getxattr("f", "user.a", &mut buf[..]), Errno::RANGE)
        },
    },
    RustCase {
        name: "xattr.size_query.returned",
        security: false,
        run: |c| {
            with_attr(c)?;
            eq(
                "getxattr f user.a with size 0",
                ok("getxattr f user.a (size)", rustix::fs::getxattr_query("f", "user.a"))?,
                5,
            )
        },
    },
    RustCase {
        name: "xattr.list.listed",
        security: false,
        run: |c| {
            with_attr(c)?;
            let l = ok("listxattr f", list("f"))?;
            ensure("listxattr f", l.iter().any(|n| n == "user.a"), "a list holding user.a", || format!("{l:?}"))
        },
    },
    RustCase {
        name: "xattr.list_size_query.returned",
        security: false,
        run: |c| {
            with_attr(c)?;
            let n = ok("listxattr f (size)", rustix::fs::listxattr_query("f"))?;
            let l = ok("listxattr f", list("f"))?;
            let want: usize = l.iter().map(|s| s.len() + 1).sum();
            eq("listxattr f with size 0", n, want)
        },
    },
    RustCase {
        name: "xattr.list_small_buffer.ERANGE",
        security: false,
        run: |c| {
            with_attr(c)?;
            let mut buf = [0u8; 3];
            err("listxattr f into 3 bytes", rustix::fs::listxattr("f", &mut buf[..]), Errno::RANGE)
        },
    },
    RustCase {
        name: "xattr.remove.removed",
        security: false,
        run: |c| {
            with_attr(c)?;
            ok("removexattr f user.a", rustix::fs::removexattr("f", "user.a"))?;
            err("getxattr f user.a after removexattr", get("f", "user.a"), Errno::NODATA)?;
            let l = ok("listxattr f", list("f"))?;
            ensure("listxattr f after removexattr", !l.iter().any(|n| n == "user.a"), "no user.a", || format!("{l:?}"))
        },
    },
    RustCase {
        name: "xattr.lsetxattr_symlink_trusted.set",
        security: false,
        run: |c| {
            c.need_xattr("trusted.a")?;
            touch("f", 0o644)?;
            symlink("f", "l")?;
            ok("lsetxattr l trusted.a", rustix::fs::lsetxattr("l", "trusted.a", b"link", XattrFlags::empty()))?;
            eq("trusted.a on l", ok("lgetxattr l trusted.a", lget("l", "trusted.a"))?, b"link".to_vec())?;
            err("getxattr f trusted.a (the target)", get("f", "trusted.a"), Errno::NODATA)
        },
    },
    RustCase {
        name: "xattr.fd_forms.roundtrip",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            let fd = ok("open f", rustix::fs::open("f", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
            ok("fsetxattr f user.a", rustix::fs::fsetxattr(&fd, "user.a", b"fd", XattrFlags::empty()))?;
            let mut buf = [0u8; 16];
            let n = ok("fgetxattr f user.a", rustix::fs::fgetxattr(&fd, "user.a", &mut buf[..]))?;
            eq("value of user.a", &buf[..n], &b"fd"[..])?;
            let mut lb = vec![0u8; 4096];
            let n = ok("flistxattr f", rustix::fs::flistxattr(&fd, &mut lb[..]))?;
            let l = names(&lb[..n]);
            ensure("flistxattr f", l.iter().any(|x| x == "user.a"), "a list holding user.a", || format!("{l:?}"))?;
            ok("fremovexattr f user.a", rustix::fs::fremovexattr(&fd, "user.a"))?;
            err("getxattr f user.a after fremovexattr", get("f", "user.a"), Errno::NODATA)
        },
    },
    // An O_PATH descriptor carries no file operations: the f* forms refuse it (open(2)).
    RustCase {
        name: "xattr.fsetxattr_path_fd.EBADF",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            let fd = ok("open f O_PATH", rustix::fs::open("f", OFlags::PATH | OFlags::CLOEXEC, Mode::empty()))?;
            err(
                "fsetxattr on an O_PATH fd",
                rustix::fs::fsetxattr(&fd, "user.a", b"x", XattrFlags::empty()),
                Errno::BADF,
            )
        },
    },
    RustCase {
        name: "xattr.trusted_list_as_user.hidden",
        security: true,
        run: |c| {
            c.need_xattr("trusted.a")?;
            touch("f", 0o644)?;
            ok("setxattr f trusted.a", set("f", "trusted.a", b"secret"))?;
            let l = ok("listxattr f as uid 65534", c.as_user(U1, || list("f")))?;
            ensure(
                "listxattr f as uid 65534",
                !l.iter().any(|n| n.starts_with("trusted.")),
                "no trusted. names",
                || format!("{l:?}"),
            )
        },
    },
    RustCase {
        name: "xattr.name_too_long.ERANGE",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            let long = format!("user.{}", "n".repeat(251));
            err("setxattr f (a 256-byte name)", set("f", &long, b"x"), Errno::RANGE)
        },
    },
    RustCase {
        name: "xattr.link_forms.roundtrip",
        security: false,
        run: |c| {
            c.need_xattr("trusted.a")?;
            touch("f", 0o644)?;
            symlink("f", "l")?;
            ok("lsetxattr l trusted.a", rustix::fs::lsetxattr("l", "trusted.a", b"link", XattrFlags::empty()))?;
            let mut buf = vec![0u8; 4096];
            let n = ok("llistxattr l", rustix::fs::llistxattr("l", &mut buf[..]))?;
            let l = names(&buf[..n]);
            ensure("llistxattr l", l.iter().any(|x| x == "trusted.a"), "a list holding trusted.a", || {
                format!("{l:?}")
            })?;
            ok("lremovexattr l trusted.a", rustix::fs::lremovexattr("l", "trusted.a"))?;
            err("lgetxattr l trusted.a after lremovexattr", lget("l", "trusted.a"), Errno::NODATA)
        },
    },
    // An empty name is out of the 1..=255 range (the kernel: ERANGE).
    RustCase {
        name: "xattr.empty_name.ERANGE",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("setxattr f \"\"", set("f", "", b"x"), Errno::RANGE)
        },
    },
    RustCase {
        name: "xattr.device_user.EPERM",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            let dev = rustix::fs::makedev(1, 3);
            let r = rustix::fs::mknodat(
                rustix::fs::CWD,
                "c",
                rustix::fs::FileType::CharacterDevice,
                Mode::from_raw_mode(0o644),
                dev,
            );
            ok("mknod c 1 3", r)?;
            err("setxattr c user.a (a character device)", set("c", "user.a", b"x"), Errno::PERM)
        },
    },
];
