//! The FUSE operations of the passthrough, each acting as [`super`] says (beneath the backing
//! directory's descriptor, no link followed, nothing blocking) and calling its hooks.

use super::backing::XattrAt;
use super::{raw, Feature, Hooks, Inode, Passthrough, TTL, XATTR_MAX};
use crate::recorder::files::FileOp;
use fuser::{
    FileAttr, FileType, Filesystem, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow,
};
use rustix::fs::{self as rfs, AtFlags, OFlags};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

impl<H: Hooks> Passthrough<H> {
    /// The attributes answered for `rel`, as the hooks have them (`made`: see [`Hooks::attr`]);
    /// ENOENT for what they do not serve (by what the backing directory holds, not by the
    /// type they answer).
    fn answer(&mut self, rel: &Path, made: bool) -> Result<FileAttr, i32> {
        let a = self.backing.attr(rel)?;
        if !self.hooks.serves(a.kind) {
            return Err(libc::ENOENT);
        }
        Ok(self.hooks.attr(Inode { ino: a.ino, path: rel }, a, made))
    }

    fn entry(&mut self, rel: &Path, made: bool, reply: ReplyEntry) {
        match self.answer(rel, made) {
            Ok(a) => reply.entry(&TTL, &a, 0),
            Err(e) => reply.error(e),
        }
    }

    /// unlink, or rmdir when `dir`: done, then reported.
    fn remove(&mut self, parent: u64, name: &OsStr, dir: bool) -> Result<(), i32> {
        let rel = self.backing.child(parent, name)?;
        self.backing.remove(&rel, dir)?;
        self.hooks.done(if dir { FileOp::Rmdir { path: rel.clone() } } else { FileOp::Unlink { path: rel.clone() } });
        self.backing.forget_path(&rel);
        Ok(())
    }

    /// Creates the regular file `rel` with `mode`, reported; open for reading and writing.
    fn make_file(&mut self, rel: &Path, mode: u32) -> Result<std::fs::File, i32> {
        let f = self.backing.make_file(rel, mode)?;
        self.hooks.done(FileOp::Create { path: rel.to_path_buf(), mode: mode & 0o7777 });
        Ok(f)
    }

    /// ENOSYS unless the hooks serve `feature`.
    fn supported(&self, feature: Feature) -> Result<(), i32> {
        if !self.hooks.supports(feature) {
            return Err(libc::ENOSYS);
        }
        Ok(())
    }

    /// The path of `ino`, if the hooks serve `feature` (ENOSYS if not).
    fn path_for(&self, ino: u64, feature: Feature) -> Result<PathBuf, i32> {
        self.supported(feature)?;
        self.backing.path_of(ino)
    }
}

impl<H: Hooks> Filesystem for Passthrough<H> {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if let Some(a) = self.hooks.lookup(parent, name) {
            return reply.entry(&TTL, &a, 0);
        }
        match self.backing.child(parent, name) {
            Ok(rel) => self.entry(&rel, false, reply),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        if let Some(a) = self.hooks.getattr(ino) {
            return reply.attr(&TTL, &a);
        }
        match self.backing.path_of(ino).and_then(|rel| self.answer(&rel, false)) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let r = (|| {
            let rel = self.backing.path_of(ino)?;
            if let Some(m) = mode {
                self.backing.chmod(&rel, m & 0o7777)?;
                self.hooks.done(FileOp::Chmod { path: rel.clone(), mode: m & 0o7777 });
            }
            if uid.is_some() || gid.is_some() {
                // Owners are not part of what a daemon's crash state is checked for: done,
                // not reported (the state is rebuilt as root).
                self.backing.chown(&rel, uid, gid)?;
            }
            if let Some(s) = size {
                self.hooks.truncate(&self.backing, Inode { ino, path: &rel }, fh, s)?;
                self.hooks.done(FileOp::Truncate { id: ino, path: rel.clone(), size: s });
            }
            if atime.is_some() || mtime.is_some() {
                // Timestamps are never compared: set, not reported.
                self.backing.set_times(&rel, atime, mtime)?;
            }
            self.answer(&rel, false)
        })();
        match r {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&mut self, _req: &Request<'_>, ino: u64, reply: ReplyData) {
        if let Some(target) = self.hooks.readlink(&self.backing, ino) {
            return reply.data(&target);
        }
        let r = self.backing.path_of(ino).and_then(|rel| {
            let (dir, name) = self.backing.parent(&rel)?;
            rfs::readlinkat(&dir, &name, Vec::new()).map_err(raw)
        });
        match r {
            Ok(t) => reply.data(t.as_bytes()),
            Err(e) => reply.error(e),
        }
    }

    fn mknod(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        if let Err(e) = self.supported(Feature::Mknod) {
            return reply.error(e);
        }
        // Regular files only: a daemon keeps data, not devices or FIFOs.
        if mode & libc::S_IFMT != libc::S_IFREG {
            return reply.error(libc::EPERM);
        }
        let r = self.backing.child(parent, name).and_then(|rel| self.make_file(&rel, mode).map(|_| rel));
        match r {
            Ok(rel) => self.entry(&rel, true, reply),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, mode: u32, _umask: u32, reply: ReplyEntry) {
        let r = self.backing.child(parent, name).and_then(|rel| {
            self.backing.make_dir(&rel, mode)?;
            self.hooks.done(FileOp::Mkdir { path: rel.clone(), mode: mode & 0o7777 });
            Ok(rel)
        });
        match r {
            Ok(rel) => self.entry(&rel, true, reply),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        match self.remove(parent, name, false) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        match self.remove(parent, name, true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn symlink(&mut self, _req: &Request<'_>, parent: u64, link_name: &OsStr, target: &Path, reply: ReplyEntry) {
        let r = self.supported(Feature::Symlinks).and_then(|()| {
            let rel = self.backing.child(parent, link_name)?;
            let (dir, name) = self.backing.parent(&rel)?;
            rfs::symlinkat(target, &dir, &name).map_err(raw)?;
            self.hooks.done(FileOp::Symlink { path: rel.clone(), target: target.to_path_buf() });
            Ok(rel)
        });
        match r {
            Ok(rel) => self.entry(&rel, true, reply),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
        reply: ReplyEmpty,
    ) {
        // RENAME_NOREPLACE and RENAME_EXCHANGE are not passed through.
        if flags != 0 {
            return reply.error(libc::EINVAL);
        }
        let r = self.backing.child(parent, name).and_then(|from| {
            let to = self.backing.child(newparent, newname)?;
            self.hooks.rename(&self.backing, &from, &to)?;
            self.hooks.done(FileOp::Rename { from: from.clone(), to: to.clone() });
            self.backing.moved(&from, &to);
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn link(&mut self, _req: &Request<'_>, ino: u64, newparent: u64, newname: &OsStr, reply: ReplyEntry) {
        let r = self.path_for(ino, Feature::HardLinks).and_then(|from| {
            let to = self.backing.child(newparent, newname)?;
            let (from_dir, from_name) = self.backing.parent(&from)?;
            let (to_dir, to_name) = self.backing.parent(&to)?;
            // Without AT_SYMLINK_FOLLOW: a link is linked as itself.
            rfs::linkat(&from_dir, &from_name, &to_dir, &to_name, AtFlags::empty()).map_err(raw)?;
            self.hooks.done(FileOp::Link { from: from.clone(), to: to.clone() });
            Ok(from)
        });
        // The new name answers with the inode the kernel asked about.
        match r.and_then(|from| self.answer(&from, false)) {
            Ok(a) => reply.entry(&TTL, &a, 0),
            Err(e) => reply.error(e),
        }
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, flags: i32, reply: ReplyOpen) {
        let access = match flags & libc::O_ACCMODE {
            libc::O_WRONLY => OFlags::WRONLY,
            libc::O_RDWR => OFlags::RDWR,
            _ => OFlags::RDONLY,
        };
        let r = self.backing.path_of(ino).and_then(|rel| Ok((self.backing.open_regular(&rel, access)?, rel)));
        match r {
            Ok((f, rel)) => {
                let fh = self.backing.handle(f);
                self.hooks.opened(&self.backing, Inode { ino, path: &rel }, false);
                reply.opened(fh, 0);
            }
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let r = self.backing.child(parent, name).and_then(|rel| self.make_file(&rel, mode).map(|f| (rel, f)));
        match r.and_then(|(rel, f)| Ok((self.answer(&rel, true)?, f, rel))) {
            Ok((a, f, rel)) => {
                let fh = self.backing.handle(f);
                self.hooks.opened(&self.backing, Inode { ino: a.ino, path: &rel }, true);
                reply.created(&TTL, &a, 0, fh, 0);
            }
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        match self.hooks.read(&self.backing, ino, fh, offset.max(0) as u64, size) {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        let offset = offset.max(0) as u64;
        let r = self
            .backing
            .path_of(ino)
            .and_then(|rel| self.hooks.write(&self.backing, Inode { ino, path: &rel }, fh, offset, data));
        match r {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _lock_owner: u64, reply: ReplyEmpty) {
        match self.hooks.flush(&self.backing, ino) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn release(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        fh: u64,
        _flags: i32,
        _lock_owner: Option<u64>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let r = self.hooks.release(&self.backing, ino, fh);
        self.backing.close(fh);
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, fh: u64, datasync: bool, reply: ReplyEmpty) {
        let r = self.backing.path_of(ino).and_then(|rel| {
            self.hooks.fsync(&self.backing, Inode { ino, path: &rel }, fh, datasync)?;
            self.hooks.done(FileOp::Fsync { id: ino, path: rel });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn opendir(&mut self, _req: &Request<'_>, _ino: u64, _flags: i32, reply: ReplyOpen) {
        reply.opened(0, 0);
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        let rel = match self.backing.path_of(ino) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let listed = self.backing.open_dir(&rel).and_then(|fd| rfs::Dir::new(fd).map_err(raw)).and_then(|dir| {
            let mut names = Vec::new();
            for e in dir {
                let e = e.map_err(raw)?;
                let name = OsStr::from_bytes(e.file_name().to_bytes()).to_os_string();
                if name != "." && name != ".." {
                    names.push((name, e.file_type()));
                }
            }
            Ok(names)
        });
        let mut names = match listed {
            Ok(n) => n,
            Err(e) => return reply.error(e),
        };
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let mut entries: Vec<(u64, FileType, OsString)> =
            vec![(ino, FileType::Directory, ".".into()), (fuser::FUSE_ROOT_ID, FileType::Directory, "..".into())];
        for (name, t) in names {
            if t != rfs::FileType::Unknown && !self.hooks.serves(super::kind(t.as_raw_mode())) {
                continue;
            }
            let kind = match t {
                rfs::FileType::Directory => FileType::Directory,
                rfs::FileType::Symlink => FileType::Symlink,
                _ => FileType::RegularFile,
            };
            let child = self.backing.ino_of(&rel.join(&name));
            entries.push((child, kind, name));
        }
        for (i, (child, kind, name)) in entries.into_iter().enumerate().skip(offset.max(0) as usize) {
            if reply.add(child, i as i64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _flags: i32, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsyncdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        let r = self.backing.path_of(ino).and_then(|rel| {
            self.hooks.fsyncdir(&self.backing, Inode { ino, path: &rel })?;
            self.hooks.done(FileOp::FsyncDir { path: rel });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        match self.backing.statvfs() {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                s.f_bsize as u32,
                255,
                s.f_frsize as u32,
            ),
            Err(e) => reply.error(e),
        }
    }

    fn setxattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        let r = self.path_for(ino, Feature::Xattrs).and_then(|rel| {
            let flags = rfs::XattrFlags::from_bits_truncate(flags as u32);
            match self.backing.xattr_at(&rel)? {
                XattrAt::Fd(fd) => rfs::fsetxattr(fd, name, value, flags),
                XattrAt::Path(p, _dir) => rfs::lsetxattr(&p, name, value, flags),
            }
            .map_err(raw)?;
            self.hooks.done(FileOp::Xattr { path: rel, name: name.as_bytes().to_vec(), value: Some(value.to_vec()) });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn getxattr(&mut self, _req: &Request<'_>, ino: u64, name: &OsStr, size: u32, reply: ReplyXattr) {
        let r = self.path_for(ino, Feature::Xattrs).and_then(|rel| {
            let mut buf = vec![0u8; XATTR_MAX];
            let n = match self.backing.xattr_at(&rel)? {
                XattrAt::Fd(fd) => rfs::fgetxattr(fd, name, &mut buf[..]),
                XattrAt::Path(p, _dir) => rfs::lgetxattr(&p, name, &mut buf[..]),
            }
            .map_err(raw)?;
            buf.truncate(n);
            Ok(buf)
        });
        xattr_reply(r, size, reply);
    }

    fn listxattr(&mut self, _req: &Request<'_>, ino: u64, size: u32, reply: ReplyXattr) {
        let r = self.path_for(ino, Feature::Xattrs).and_then(|rel| {
            let mut buf = vec![0u8; XATTR_MAX];
            let n = match self.backing.xattr_at(&rel)? {
                XattrAt::Fd(fd) => rfs::flistxattr(fd, &mut buf[..]),
                XattrAt::Path(p, _dir) => rfs::llistxattr(&p, &mut buf[..]),
            }
            .map_err(raw)?;
            buf.truncate(n);
            Ok(buf)
        });
        xattr_reply(r, size, reply);
    }

    fn removexattr(&mut self, _req: &Request<'_>, ino: u64, name: &OsStr, reply: ReplyEmpty) {
        let r = self.path_for(ino, Feature::Xattrs).and_then(|rel| {
            match self.backing.xattr_at(&rel)? {
                XattrAt::Fd(fd) => rfs::fremovexattr(fd, name),
                XattrAt::Path(p, _dir) => rfs::lremovexattr(&p, name),
            }
            .map_err(raw)?;
            self.hooks.done(FileOp::Xattr { path: rel, name: name.as_bytes().to_vec(), value: None });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn access(&mut self, _req: &Request<'_>, _ino: u64, _mask: i32, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fallocate(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        fh: u64,
        offset: i64,
        length: i64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let (off, len) = (offset.max(0) as u64, length.max(0) as u64);
        let r = self
            .backing
            .path_of(ino)
            .and_then(|rel| self.hooks.fallocate(&self.backing, Inode { ino, path: &rel }, fh, off..off + len, mode));
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}

/// An xattr value or name list answered as FUSE asks: its size when `size` is 0, else the
/// bytes if they fit, else ERANGE.
fn xattr_reply(r: Result<Vec<u8>, i32>, size: u32, reply: ReplyXattr) {
    match r {
        Ok(v) if size == 0 => reply.size(v.len() as u32),
        Ok(v) if v.len() <= size as usize => reply.data(&v),
        Ok(_) => reply.error(libc::ERANGE),
        Err(e) => reply.error(e),
    }
}
