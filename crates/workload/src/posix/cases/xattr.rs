//! Extended attributes: setxattr(2), getxattr(2), listxattr(2), removexattr(2) and their
//! l* (the link itself) and f* (an open descriptor) forms, xattr(7). Not in POSIX: the Linux
//! man pages are the reference. A value is stored and read back byte for byte;
//! `XATTR_CREATE`/`XATTR_REPLACE` refuse with EEXIST/ENODATA; a buffer too small is ERANGE
//! and an empty one asks for the size; setting or removing marks the ctime. `user.`
//! attributes follow the file's permission bits and exist only on regular files and
//! directories; `trusted.` ones are for CAP_SYS_ADMIN alone (invisible to others).

use super::{chmod, chown, mkdir, symlink, too_long_name, too_long_path, touch, Case};
use crate::posix::check::{ensure, eq, err, fail, moved, name, ok, times, Check, Mark, Miss};
use crate::posix::ctx::{Ctx, U1, U2};
use rustix::fs::{Mode, OFlags, XattrFlags};
use rustix::io::Errno;

/// A binary value: every byte value, NULs included.
fn binary() -> Vec<u8> {
    (0..=255u8).collect()
}

/// `getxattr p name` into a buffer of 64 KiB (XATTR_SIZE_MAX): the value.
fn get(p: &str, name: &str) -> rustix::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 65536];
    let n = rustix::fs::getxattr(p, name, &mut buf[..])?;
    buf.truncate(n);
    Ok(buf)
}

/// `lgetxattr p name` (the link itself).
fn lget(p: &str, name: &str) -> rustix::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 65536];
    let n = rustix::fs::lgetxattr(p, name, &mut buf[..])?;
    buf.truncate(n);
    Ok(buf)
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
pub static CASES: &[Case] = &[
    Case { name: "xattr.user_binary.roundtrip", security: false, run: |c| roundtrip(c, &binary()) },
    Case { name: "xattr.user_empty_value.roundtrip", security: false, run: |c| roundtrip(c, b"") },
    // The largest value the filesystem takes, up to XATTR_SIZE_MAX (64 KiB): ext4 without
    // ea_inode keeps values within one block (1 KiB on a small image), so the size is found
    // by halving; at least 256 bytes must fit.
    Case {
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
    Case {
        name: "xattr.value_over_size_max.E2BIG",
        security: false,
        run: |c| {
            c.need_xattr("user.v")?;
            touch("f", 0o644)?;
            err("setxattr f user.v (65537 bytes)", set("f", "user.v", &vec![1u8; 65537]), Errno::TOOBIG)
        },
    },
    Case {
        name: "xattr.replace_value.replaced",
        security: false,
        run: |c| {
            with_attr(c)?;
            ok("setxattr f user.a XATTR_REPLACE", rustix::fs::setxattr("f", "user.a", b"new", XattrFlags::REPLACE))?;
            eq("value of user.a", ok("getxattr f user.a", get("f", "user.a"))?, b"new".to_vec())
        },
    },
    Case {
        name: "xattr.create_existing.EEXIST",
        security: false,
        run: |c| {
            with_attr(c)?;
            err(
                "setxattr f user.a XATTR_CREATE",
                rustix::fs::setxattr("f", "user.a", b"x", XattrFlags::CREATE),
                Errno::EXIST,
            )
        },
    },
    Case {
        name: "xattr.replace_missing.ENODATA",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            err(
                "setxattr f user.a XATTR_REPLACE",
                rustix::fs::setxattr("f", "user.a", b"x", XattrFlags::REPLACE),
                Errno::NODATA,
            )
        },
    },
    Case {
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
    Case {
        name: "xattr.get_missing.ENODATA",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            err("getxattr f user.nothing", get("f", "user.nothing"), Errno::NODATA)
        },
    },
    Case {
        name: "xattr.small_buffer.ERANGE",
        security: false,
        run: |c| {
            with_attr(c)?;
            let mut buf = [0u8; 2];
            err("getxattr f user.a into 2 bytes", rustix::fs::getxattr("f", "user.a", &mut buf[..]), Errno::RANGE)
        },
    },
    Case {
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
    Case {
        name: "xattr.list.listed",
        security: false,
        run: |c| {
            with_attr(c)?;
            let l = ok("listxattr f", list("f"))?;
            ensure("listxattr f", l.iter().any(|n| n == "user.a"), "a list holding user.a", || format!("{l:?}"))
        },
    },
    Case {
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
    Case {
        name: "xattr.list_small_buffer.ERANGE",
        security: false,
        run: |c| {
            with_attr(c)?;
            let mut buf = [0u8; 3];
            err("listxattr f into 3 bytes", rustix::fs::listxattr("f", &mut buf[..]), Errno::RANGE)
        },
    },
    Case {
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
    Case {
        name: "xattr.remove_missing.ENODATA",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            err("removexattr f user.nothing", rustix::fs::removexattr("f", "user.nothing"), Errno::NODATA)
        },
    },
    Case {
        name: "xattr.set_ctime.updated",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            let before = times("f")?;
            c.tick();
            ok("setxattr f user.a", set("f", "user.a", b"v"))?;
            moved("f", before, times("f")?, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "xattr.remove_ctime.updated",
        security: false,
        run: |c| {
            with_attr(c)?;
            let before = times("f")?;
            c.tick();
            ok("removexattr f user.a", rustix::fs::removexattr("f", "user.a"))?;
            moved("f", before, times("f")?, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "xattr.directory_user.set",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            mkdir("d", 0o755)?;
            ok("setxattr d user.a", set("d", "user.a", b"dir"))?;
            eq("value of user.a on d", ok("getxattr d user.a", get("d", "user.a"))?, b"dir".to_vec())
        },
    },
    Case {
        name: "xattr.setxattr_follows.target_set",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            symlink("f", "l")?;
            ok("setxattr l user.a (following l)", set("l", "user.a", b"t"))?;
            eq("user.a on the target f", ok("getxattr f user.a", get("f", "user.a"))?, b"t".to_vec())
        },
    },
    // xattr(7): user. attributes are allowed only on regular files and directories; the
    // kernel refuses writes elsewhere with EPERM (and reads with ENODATA).
    Case {
        name: "xattr.lsetxattr_symlink_user.EPERM",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            symlink("f", "l")?;
            err("lsetxattr l user.a", rustix::fs::lsetxattr("l", "user.a", b"x", XattrFlags::empty()), Errno::PERM)
        },
    },
    Case {
        name: "xattr.lgetxattr_symlink_user.ENODATA",
        security: true,
        run: |c| {
            with_attr(c)?;
            symlink("f", "l")?;
            err("lgetxattr l user.a (set on the target only)", lget("l", "user.a"), Errno::NODATA)
        },
    },
    Case {
        name: "xattr.fifo_user.EPERM",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            ok(
                "mkfifo p",
                rustix::fs::mknodat(rustix::fs::CWD, "p", rustix::fs::FileType::Fifo, Mode::from_raw_mode(0o644), 0),
            )?;
            err("setxattr p user.a (a fifo)", set("p", "user.a", b"x"), Errno::PERM)
        },
    },
    Case {
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
    Case {
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
    Case {
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
    Case {
        name: "xattr.trusted.roundtrip",
        security: false,
        run: |c| {
            c.need_xattr("trusted.a")?;
            touch("f", 0o644)?;
            ok("setxattr f trusted.a", set("f", "trusted.a", b"root"))?;
            eq("value of trusted.a", ok("getxattr f trusted.a", get("f", "trusted.a"))?, b"root".to_vec())
        },
    },
    Case {
        name: "xattr.security.roundtrip",
        security: false,
        run: |c| {
            c.need_xattr("security.fsarena")?;
            touch("f", 0o644)?;
            ok("setxattr f security.fsarena", set("f", "security.fsarena", b"label"))?;
            eq(
                "value of security.fsarena",
                ok("getxattr f security.fsarena", get("f", "security.fsarena"))?,
                b"label".to_vec(),
            )
        },
    },
    // xattr(7): trusted. attributes are visible and writable only with CAP_SYS_ADMIN; the
    // kernel answers an unprivileged write with EPERM, a read with ENODATA, and leaves the
    // names out of listxattr. btrfs (6.x) lists them to anyone (btrfs_listxattr does not
    // filter by namespace): a finding, not a wrong case.
    Case {
        name: "xattr.trusted_set_as_user.EPERM",
        security: true,
        run: |c| {
            c.need_xattr("trusted.a")?;
            touch("f", 0o666)?;
            chown("f", U1.uid, U1.gid)?;
            err(
                "setxattr f trusted.a as its owner uid 65534",
                c.as_user(U1, || set("f", "trusted.a", b"x")),
                Errno::PERM,
            )
        },
    },
    Case {
        name: "xattr.trusted_get_as_user.ENODATA",
        security: true,
        run: |c| {
            c.need_xattr("trusted.a")?;
            touch("f", 0o644)?;
            ok("setxattr f trusted.a", set("f", "trusted.a", b"secret"))?;
            err("getxattr f trusted.a as uid 65534", c.as_user(U1, || get("f", "trusted.a")), Errno::NODATA)
        },
    },
    Case {
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
    Case {
        name: "xattr.user_set_as_owner.set",
        security: true,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            chown("f", U1.uid, U1.gid)?;
            ok("setxattr f user.a as its owner uid 65534", c.as_user(U1, || set("f", "user.a", b"mine")))
        },
    },
    Case {
        name: "xattr.user_set_without_write.EACCES",
        security: true,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            err(
                "setxattr f user.a as uid 65534 (f is root's 0644)",
                c.as_user(U1, || set("f", "user.a", b"x")),
                Errno::ACCESS,
            )
        },
    },
    Case {
        name: "xattr.user_set_as_writer.set",
        security: true,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o666)?;
            ok("setxattr f user.a as uid 65534 (f is root's 0666)", c.as_user(U1, || set("f", "user.a", b"x")))
        },
    },
    Case {
        name: "xattr.user_get_without_read.EACCES",
        security: true,
        run: |c| {
            with_attr(c)?;
            chmod("f", 0o600)?;
            err(
                "getxattr f user.a as uid 65534 (f is root's 0600)",
                c.as_user(U1, || get("f", "user.a")),
                Errno::ACCESS,
            )
        },
    },
    Case {
        name: "xattr.user_remove_without_write.EACCES",
        security: true,
        run: |c| {
            with_attr(c)?;
            err(
                "removexattr f user.a as uid 65534 (f is root's 0644)",
                c.as_user(U1, || rustix::fs::removexattr("f", "user.a")),
                Errno::ACCESS,
            )
        },
    },
    // xattr(7): on a sticky directory only the owner (or a privileged process) may set user.
    // attributes, whatever the permission bits say.
    Case {
        name: "xattr.sticky_dir_non_owner.EPERM",
        security: true,
        run: |c| {
            c.need_xattr("user.a")?;
            mkdir("d", 0o1777)?;
            chown("d", U2.uid, U2.gid)?;
            err(
                "setxattr d user.a as uid 65534 (d is uid 65533's, 01777)",
                c.as_user(U1, || set("d", "user.a", b"x")),
                Errno::PERM,
            )
        },
    },
    Case {
        name: "xattr.no_search_permission.EACCES",
        security: true,
        run: |c| {
            c.need_xattr("user.a")?;
            mkdir("d", 0o755)?;
            touch("d/f", 0o666)?;
            chmod("d", 0o644)?;
            err("getxattr d/f user.a as uid 65534 (d is 0644)", c.as_user(U1, || get("d/f", "user.a")), Errno::ACCESS)
        },
    },
    Case {
        name: "xattr.name_too_long.ERANGE",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            let long = format!("user.{}", "n".repeat(251));
            err("setxattr f (a 256-byte name)", set("f", &long, b"x"), Errno::RANGE)
        },
    },
    Case {
        name: "xattr.unknown_namespace.EOPNOTSUPP",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("setxattr f fsarena.a (no such namespace)", set("f", "fsarena.a", b"x"), Errno::OPNOTSUPP)
        },
    },
    Case {
        name: "xattr.missing.ENOENT",
        security: false,
        run: |_| err("getxattr nothing user.a", get("nothing", "user.a"), Errno::NOENT),
    },
    Case {
        name: "xattr.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("getxattr f/x user.a", get("f/x", "user.a"), Errno::NOTDIR)
        },
    },
    Case {
        name: "xattr.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("setxattr l1 user.a (l1 -> l2 -> l1)", set("l1", "user.a", b"x"), Errno::LOOP)
        },
    },
    Case {
        name: "xattr.path_name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("getxattr NAME_MAX+1 user.a", get(&too_long_name(c), "user.a"), Errno::NAMETOOLONG),
    },
    Case {
        name: "xattr.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("getxattr PATH_MAX user.a", get(&too_long_path(), "user.a"), Errno::NAMETOOLONG),
    },
    // xattr(7): security. attributes other than security.capability need CAP_SYS_ADMIN to
    // write (the capability LSM, cap_inode_setxattr), even for the owner.
    Case {
        name: "xattr.security_set_as_user.EPERM",
        security: true,
        run: |c| {
            c.need_xattr("security.fsarena")?;
            touch("f", 0o644)?;
            chown("f", U1.uid, U1.gid)?;
            let r = c.as_user(U1, || set("f", "security.fsarena", b"x"));
            err("setxattr f security.fsarena as its owner uid 65534", r, Errno::PERM)
        },
    },
    Case {
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
    Case {
        name: "xattr.parent_dir.unchanged",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            let before = times("d")?;
            c.tick();
            ok("setxattr d/f user.a", set("d/f", "user.a", b"v"))?;
            moved("parent d", before, times("d")?, Mark::Same, Mark::Same, Mark::Same)
        },
    },
    // An empty name is out of the 1..=255 range (the kernel: ERANGE).
    Case {
        name: "xattr.empty_name.ERANGE",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("setxattr f \"\"", set("f", "", b"x"), Errno::RANGE)
        },
    },
    // A namespace prefix with nothing after it names no attribute (the kernel's
    // xattr_resolve_name: EINVAL).
    Case {
        name: "xattr.prefix_only.EINVAL",
        security: false,
        run: |c| {
            c.need_xattr("user.a")?;
            touch("f", 0o644)?;
            err("setxattr f user.", set("f", "user.", b"x"), Errno::INVAL)
        },
    },
    Case {
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
