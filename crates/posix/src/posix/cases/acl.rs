//! POSIX ACLs, acl(5) (POSIX.1e draft 17 as Linux implements it), set and read through the
//! `system.posix_acl_access` and `system.posix_acl_default` extended attributes. An access
//! ACL is kept as set; its mask is the group bits of the mode (and chmod sets the mask); the
//! kernel enforces it (owner entry, then named users, then the groups, each named entry
//! limited by the mask, else other); a directory's default ACL becomes the access ACL of
//! what is created in it, the umask ignored; only the owner may set an ACL.

use super::{chmod, chown, mkdir, touch, RustCase};
use crate::posix::acl::{Acl, Tag};
use crate::posix::check::{ensure, eq, err, fail, ok, stat, Check, Miss, Octal};
use crate::posix::ctx::{Ctx, U1};
use rustix::fs::{Mode, OFlags, XattrFlags};
use rustix::io::Errno;

/// The access ACL attribute.
const ACCESS: &str = "system.posix_acl_access";
/// The default ACL attribute (directories).
const DEFAULT: &str = "system.posix_acl_default";
/// A group no user of the machine is expected to be in, for named group entries.
const G: u32 = 4242;

/// `setxattr p attr acl`.
fn set(p: &str, attr: &str, acl: &Acl) -> rustix::io::Result<()> {
    rustix::fs::setxattr(p, attr, &acl.to_xattr(), XattrFlags::empty())
}

/// Sets `acl` as `attr` of `p` (setup: must succeed).
fn set_ok(p: &str, attr: &str, acl: &Acl) -> Check {
    ok(&format!("setxattr {p} {attr}"), set(p, attr, acl))
}

/// The ACL stored as `attr` of `p`.
fn get(p: &str, attr: &str) -> Result<Acl, Miss> {
    let mut buf = vec![0u8; 4096];
    let n = ok(&format!("getxattr {p} {attr}"), rustix::fs::getxattr(p, attr, &mut buf[..]))?;
    Acl::from_xattr(&buf[..n]).ok_or_else(|| fail(&format!("{attr} of {p}"), "a version-2 ACL", format!("{n} bytes")))
}

/// The ACL's entries in the kernel's order (tag, then id), for comparing with a read-back.
fn sorted(acl: &Acl) -> Acl {
    let mut e = acl.0.clone();
    e.sort_by_key(|(t, _)| *t);
    Acl(e)
}

/// The permission of `tag` in `acl`, if it has that entry.
fn perm(acl: &Acl, tag: Tag) -> Option<u16> {
    acl.0.iter().find(|(t, _)| *t == tag).map(|(_, p)| *p)
}

/// An ACL of root's file `f`: owner rw-, uid 65534 `named`, group ---, mask `mask`, other
/// `other`.
fn named_user(named: u16, mask: u16, other: u16) -> Acl {
    Acl(vec![(Tag::UserObj, 6), (Tag::User(U1.uid), named), (Tag::GroupObj, 0), (Tag::Mask, mask), (Tag::Other, other)])
}

/// Root's file `f` (mode 0600) with `acl`.
fn file_with(c: &Ctx<'_>, acl: &Acl) -> Check {
    c.need_acl()?;
    touch("f", 0o600)?;
    set_ok("f", ACCESS, acl)
}

/// A directory `d` with `default` as its default ACL.
fn dir_with_default(c: &Ctx<'_>, default: &Acl) -> Check {
    c.need_acl()?;
    mkdir("d", 0o755)?;
    set_ok("d", DEFAULT, default)
}

/// A default ACL granting uid 65534 everything.
fn default_named() -> Acl {
    Acl(vec![(Tag::UserObj, 7), (Tag::User(U1.uid), 7), (Tag::GroupObj, 5), (Tag::Mask, 7), (Tag::Other, 5)])
}

/// `acl` must fail to be set on a fresh file with EINVAL (acl(5)'s validity rules).
fn invalid(c: &Ctx<'_>, what: &str, bytes: &[u8]) -> Check {
    c.need_acl()?;
    touch("f", 0o644)?;
    err(
        &format!("setxattr f {ACCESS} ({what})"),
        rustix::fs::setxattr("f", ACCESS, bytes, XattrFlags::empty()),
        Errno::INVAL,
    )
}

/// The acl family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "acl.access_acl.roundtrip",
        security: false,
        run: |c| {
            let acl = Acl(vec![
                (Tag::UserObj, 7),
                (Tag::User(U1.uid), 6),
                (Tag::GroupObj, 5),
                (Tag::Group(G), 4),
                (Tag::Mask, 6),
                (Tag::Other, 4),
            ]);
            file_with(c, &acl)?;
            eq("access ACL of f", get("f", ACCESS)?, sorted(&acl))
        },
    },
    // acl(5): chmod of the group bits sets the mask when there is one, the named and group
    // entries stay as they were.
    RustCase {
        name: "acl.chmod.mask_changed",
        security: false,
        run: |c| {
            file_with(c, &named_user(6, 6, 0))?;
            chmod("f", 0o640)?;
            let acl = get("f", ACCESS)?;
            eq("mask of f after chmod 0640", perm(&acl, Tag::Mask), Some(4))?;
            eq("uid 65534's entry after chmod 0640", perm(&acl, Tag::User(U1.uid)), Some(6))
        },
    },
    RustCase {
        name: "acl.remove_access.removed",
        security: false,
        run: |c| {
            file_with(c, &named_user(6, 6, 0))?;
            ok("removexattr f system.posix_acl_access", rustix::fs::removexattr("f", ACCESS))?;
            err(
                "getxattr f system.posix_acl_access",
                rustix::fs::getxattr("f", ACCESS, &mut [0u8; 256][..]),
                Errno::NODATA,
            )
        },
    },
    RustCase {
        name: "acl.default_acl.roundtrip",
        security: false,
        run: |c| {
            dir_with_default(c, &default_named())?;
            eq("default ACL of d", get("d", DEFAULT)?, sorted(&default_named()))
        },
    },
    // acl(5) object creation: the new file's access ACL is the default ACL, with the
    // entries of the group class limited by the mode the creating call asked for.
    RustCase {
        name: "acl.default_file.inherited",
        security: false,
        run: |c| {
            dir_with_default(c, &default_named())?;
            ok(
                "create d/f 0640",
                rustix::fs::open("d/f", OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC, Mode::from_raw_mode(0o640)),
            )?;
            let acl = get("d/f", ACCESS)?;
            eq("uid 65534's entry in d/f", perm(&acl, Tag::User(U1.uid)), Some(7))?;
            eq("mask of d/f (0640's group bits)", perm(&acl, Tag::Mask), Some(4))?;
            eq("mode of d/f", stat("d/f")?.perm(), Octal(0o640))
        },
    },
    RustCase {
        name: "acl.default_dir.inherited",
        security: false,
        run: |c| {
            dir_with_default(c, &default_named())?;
            ok("mkdir d/e", rustix::fs::mkdir("d/e", Mode::from_raw_mode(0o777)))?;
            eq("default ACL of d/e", get("d/e", DEFAULT)?, sorted(&default_named()))?;
            eq("uid 65534's entry in d/e", perm(&get("d/e", ACCESS)?, Tag::User(U1.uid)), Some(7))
        },
    },
    RustCase {
        name: "acl.named_without_mask.EINVAL",
        security: false,
        run: |c| {
            let acl = Acl(vec![(Tag::UserObj, 6), (Tag::User(U1.uid), 6), (Tag::GroupObj, 4), (Tag::Other, 4)]);
            invalid(c, "a named user, no mask", &acl.to_xattr())
        },
    },
    RustCase {
        name: "acl.missing_owner_entry.EINVAL",
        security: false,
        run: |c| invalid(c, "no user:: entry", &Acl(vec![(Tag::GroupObj, 4), (Tag::Other, 4)]).to_xattr()),
    },
    // The entries must come in tag order (acl(5) lists them so; the kernel's
    // posix_acl_valid walks them as a state machine): other before owner is refused. (A
    // duplicate named entry, which acl(5) also calls invalid, is not checked by Linux.)
    RustCase {
        name: "acl.unordered_entries.EINVAL",
        security: false,
        run: |c| {
            let mut b = 2u32.to_le_bytes().to_vec();
            for (tag, perm) in [(0x20u16, 4u16), (0x01, 6), (0x04, 4)] {
                b.extend_from_slice(&tag.to_le_bytes());
                b.extend_from_slice(&perm.to_le_bytes());
                b.extend_from_slice(&u32::MAX.to_le_bytes());
            }
            invalid(c, "other::, user::, group:: in that order", &b)
        },
    },
    RustCase {
        name: "acl.truncated_entry.EINVAL",
        security: false,
        run: |c| {
            let mut b = Acl::from_mode(0o644).to_xattr();
            b.truncate(b.len() - 3);
            invalid(c, "a truncated entry", &b)
        },
    },
    RustCase {
        name: "acl.unknown_tag.EINVAL",
        security: false,
        run: |c| {
            let mut b = Acl::from_mode(0o644).to_xattr();
            b.extend_from_slice(&[0x40, 0, 4, 0, 255, 255, 255, 255]);
            invalid(c, "tag 0x40", &b)
        },
    },
    // Setting an ACL rewrites the mode like chmod: the owner, not in the file's group and
    // without CAP_FSETID, loses the set-group-ID bit (chmod(2), posix_acl_update_mode).
    RustCase {
        name: "acl.setgid_non_member.cleared",
        security: true,
        run: |c| {
            c.need_acl()?;
            touch("f", 0o644)?;
            chown("f", U1.uid, 0)?;
            chmod("f", 0o2775)?;
            ok(
                "setxattr f system.posix_acl_access as its owner",
                c.as_user(U1, || set("f", ACCESS, &Acl::from_mode(0o775))),
            )?;
            let m = stat("f")?.perm();
            ensure("mode of f", m.0 & 0o2000 == 0, "set-group-ID cleared", || format!("{m:?}"))
        },
    },
    RustCase {
        name: "acl.no_acl.ENODATA",
        security: false,
        run: |c| {
            c.need_acl()?;
            touch("f", 0o644)?;
            err(
                "getxattr f system.posix_acl_access (none set)",
                rustix::fs::getxattr("f", ACCESS, &mut [0u8; 256][..]),
                Errno::NODATA,
            )
        },
    },
    RustCase {
        name: "acl.remove_default.removed",
        security: false,
        run: |c| {
            dir_with_default(c, &default_named())?;
            ok("removexattr d system.posix_acl_default", rustix::fs::removexattr("d", DEFAULT))?;
            ok(
                "create d/f 0644",
                rustix::fs::open("d/f", OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC, Mode::from_raw_mode(0o644)),
            )?;
            err(
                "getxattr d/f system.posix_acl_access (nothing to inherit)",
                rustix::fs::getxattr("d/f", ACCESS, &mut [0u8; 256][..]),
                Errno::NODATA,
            )
        },
    },
    // Symlinks carry no ACL (their permissions are not checked): the kernel has no ACL
    // operation for them and answers EOPNOTSUPP.
    RustCase {
        name: "acl.symlink.EOPNOTSUPP",
        security: false,
        run: |c| {
            c.need_acl()?;
            touch("f", 0o644)?;
            super::symlink("f", "l")?;
            let acl = named_user(6, 6, 4).to_xattr();
            let r = rustix::fs::lsetxattr("l", ACCESS, &acl, XattrFlags::empty());
            err("lsetxattr l system.posix_acl_access", r, Errno::OPNOTSUPP)
        },
    },
];
