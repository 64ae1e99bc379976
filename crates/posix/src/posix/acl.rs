//! POSIX ACLs as Linux stores them in the `system.posix_acl_access` and
//! `system.posix_acl_default` extended attributes (acl(5), the kernel's posix_acl_xattr.h):
//! a little-endian version word (2), then one 8-byte entry per ACL entry: tag (16 bits),
//! permissions (16 bits), id (32 bits, all ones for the entries without one), sorted by tag
//! and then id. Hand-written because it is these few lines: the `acl` crates wrap libacl.

/// One ACL entry's kind (acl(5)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tag {
    /// The owner (ACL_USER_OBJ).
    UserObj,
    /// A named user (ACL_USER).
    User(u32),
    /// The owning group (ACL_GROUP_OBJ).
    GroupObj,
    /// A named group (ACL_GROUP).
    Group(u32),
    /// The upper bound of the group class (ACL_MASK).
    Mask,
    /// Everyone else (ACL_OTHER).
    Other,
}

impl Tag {
    fn code_and_id(self) -> (u16, u32) {
        const NONE: u32 = u32::MAX;
        match self {
            Tag::UserObj => (0x01, NONE),
            Tag::User(id) => (0x02, id),
            Tag::GroupObj => (0x04, NONE),
            Tag::Group(id) => (0x08, id),
            Tag::Mask => (0x10, NONE),
            Tag::Other => (0x20, NONE),
        }
    }
}

/// An access or default ACL: entries of (tag, rwx bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acl(pub Vec<(Tag, u16)>);

impl Acl {
    /// The minimal ACL equivalent to the permission bits of `mode`.
    pub fn from_mode(mode: u32) -> Acl {
        let bits = |shift: u32| ((mode >> shift) & 7) as u16;
        Acl(vec![(Tag::UserObj, bits(6)), (Tag::GroupObj, bits(3)), (Tag::Other, bits(0))])
    }

    /// The attribute's bytes, entries sorted as the kernel requires.
    pub fn to_xattr(&self) -> Vec<u8> {
        let mut entries: Vec<(u16, u32, u16)> = self
            .0
            .iter()
            .map(|(t, perm)| {
                let (code, id) = t.code_and_id();
                (code, id, *perm)
            })
            .collect();
        entries.sort_by_key(|(code, id, _)| (*code, *id));
        let mut out = 2u32.to_le_bytes().to_vec();
        for (code, id, perm) in entries {
            out.extend_from_slice(&code.to_le_bytes());
            out.extend_from_slice(&perm.to_le_bytes());
            out.extend_from_slice(&id.to_le_bytes());
        }
        out
    }

    /// Reads the attribute's bytes; `None` when they are not a version-2 ACL.
    pub fn from_xattr(b: &[u8]) -> Option<Acl> {
        if b.len() < 4 || !(b.len() - 4).is_multiple_of(8) || b[..4] != 2u32.to_le_bytes() {
            return None;
        }
        let mut out = Vec::new();
        for e in b[4..].chunks_exact(8) {
            let code = u16::from_le_bytes([e[0], e[1]]);
            let perm = u16::from_le_bytes([e[2], e[3]]);
            let id = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
            let tag = match code {
                0x01 => Tag::UserObj,
                0x02 => Tag::User(id),
                0x04 => Tag::GroupObj,
                0x08 => Tag::Group(id),
                0x10 => Tag::Mask,
                0x20 => Tag::Other,
                _ => return None,
            };
            out.push((tag, perm));
        }
        Some(Acl(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_encoded_sorted_and_read_back() {
        let acl =
            Acl(vec![(Tag::Other, 4), (Tag::User(1000), 6), (Tag::UserObj, 7), (Tag::Mask, 6), (Tag::GroupObj, 5)]);
        let b = acl.to_xattr();
        assert_eq!(b.len(), 4 + 5 * 8);
        assert_eq!(&b[..4], &[2, 0, 0, 0]);
        // UserObj first: tag 1, perm 7, id all ones.
        assert_eq!(&b[4..12], &[1, 0, 7, 0, 255, 255, 255, 255]);
        // Then the named user 1000 = 0x3e8.
        assert_eq!(&b[12..20], &[2, 0, 6, 0, 0xe8, 3, 0, 0]);
        let back = Acl::from_xattr(&b).unwrap();
        assert_eq!(back.0[0], (Tag::UserObj, 7));
        assert_eq!(back.0.last(), Some(&(Tag::Other, 4)));
        assert_eq!(Acl::from_xattr(&b[..7]), None);
        assert_eq!(Acl::from_mode(0o750).0, vec![(Tag::UserObj, 7), (Tag::GroupObj, 5), (Tag::Other, 0)]);
    }
}
