//! The FUSE operations of the logging passthrough, each acting as [`super`] says: beneath the
//! backing directory's descriptor, no link followed, nothing blocking.

use super::{errno, raw, Passthrough, XattrAt, TTL, XATTR_MAX};
use crate::recorder::files::{lock, FileOp, PIECE};
use fuser::{
    FileType, Filesystem, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen,
    ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow,
};
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

impl Filesystem for Passthrough {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        match self.child(parent, name) {
            Ok(rel) => self.entry(&rel, reply),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match self.rel(ino).and_then(|rel| self.attr(&rel)) {
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
            let rel = self.rel(ino)?;
            if let Some(m) = mode {
                self.chmod(&rel, m & 0o7777)?;
            }
            if uid.is_some() || gid.is_some() {
                // Owners are not part of what a daemon's crash state is checked for: done,
                // not logged (the state is rebuilt as root).
                self.chown(&rel, uid, gid)?;
            }
            if let Some(s) = size {
                match fh.and_then(|h| self.files.get(&h)) {
                    Some(f) => f.set_len(s).map_err(|e| errno(&e))?,
                    None => self.open_regular(&rel, OFlags::WRONLY)?.set_len(s).map_err(|e| errno(&e))?,
                }
                self.log(FileOp::Truncate { id: ino, path: rel.clone(), size: s });
            }
            if atime.is_some() || mtime.is_some() {
                // Timestamps are never compared: set, not logged.
                self.set_times(&rel, atime, mtime)?;
            }
            self.attr(&rel)
        })();
        match r {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&mut self, _req: &Request<'_>, ino: u64, reply: ReplyData) {
        let r = self.rel(ino).and_then(|rel| {
            let (dir, name) = self.parent(&rel)?;
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
        // Regular files only: a daemon keeps data, not devices or FIFOs.
        if mode & libc::S_IFMT != libc::S_IFREG {
            return reply.error(libc::EPERM);
        }
        let r = self.child(parent, name).and_then(|rel| self.make_file(&rel, mode).map(|_| rel));
        match r {
            Ok(rel) => self.entry(&rel, reply),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, mode: u32, _umask: u32, reply: ReplyEntry) {
        let r = self.child(parent, name).and_then(|rel| {
            let (dir, last) = self.parent(&rel)?;
            rfs::mkdirat(&dir, &last, Mode::from_raw_mode(0o700)).map_err(raw)?;
            self.log(FileOp::Mkdir { path: rel.clone(), mode: mode & 0o7777 });
            let made = rfs::openat(&dir, &last, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW, Mode::empty());
            if let Ok(fd) = made {
                let _ = rfs::fchmod(&fd, Mode::from_raw_mode(mode & 0o7777));
            }
            Ok(rel)
        });
        match r {
            Ok(rel) => self.entry(&rel, reply),
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
        let r = self.child(parent, link_name).and_then(|rel| {
            let (dir, name) = self.parent(&rel)?;
            rfs::symlinkat(target, &dir, &name).map_err(raw)?;
            self.log(FileOp::Symlink { path: rel.clone(), target: target.to_path_buf() });
            Ok(rel)
        });
        match r {
            Ok(rel) => self.entry(&rel, reply),
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
        let r = self.child(parent, name).and_then(|from| {
            let to = self.child(newparent, newname)?;
            let (from_dir, from_name) = self.parent(&from)?;
            let (to_dir, to_name) = self.parent(&to)?;
            rfs::renameat(&from_dir, &from_name, &to_dir, &to_name).map_err(raw)?;
            self.log(FileOp::Rename { from: from.clone(), to: to.clone() });
            self.forget_path(&to);
            // Every known path at or below `from` moves below `to`.
            let moved: Vec<(PathBuf, u64)> =
                self.inos.iter().filter(|(p, _)| p.starts_with(&from)).map(|(p, i)| (p.clone(), *i)).collect();
            for (p, i) in moved {
                let Ok(rest) = p.strip_prefix(&from) else { continue };
                let new = if rest.as_os_str().is_empty() { to.clone() } else { to.join(rest) };
                self.inos.remove(&p);
                self.inos.insert(new.clone(), i);
                self.paths.insert(i, new);
            }
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn link(&mut self, _req: &Request<'_>, ino: u64, newparent: u64, newname: &OsStr, reply: ReplyEntry) {
        let r = self.rel(ino).and_then(|from| {
            let to = self.child(newparent, newname)?;
            let (from_dir, from_name) = self.parent(&from)?;
            let (to_dir, to_name) = self.parent(&to)?;
            // Without AT_SYMLINK_FOLLOW: a link is linked as itself.
            rfs::linkat(&from_dir, &from_name, &to_dir, &to_name, AtFlags::empty()).map_err(raw)?;
            self.log(FileOp::Link { from: from.clone(), to: to.clone() });
            Ok(from)
        });
        // The new name answers with the inode the kernel asked about.
        match r.and_then(|from| self.attr(&from)) {
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
        match self.rel(ino).and_then(|rel| self.open_regular(&rel, access)) {
            Ok(f) => {
                let fh = self.handle(f);
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
        let r = self.child(parent, name).and_then(|rel| self.make_file(&rel, mode).map(|f| (rel, f)));
        match r.and_then(|(rel, f)| Ok((self.attr(&rel)?, f))) {
            Ok((a, f)) => {
                let fh = self.handle(f);
                reply.created(&TTL, &a, 0, fh, 0);
            }
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        let Some(f) = self.files.get(&fh) else { return reply.error(libc::EBADF) };
        let mut buf = vec![0u8; size as usize];
        let mut done = 0;
        while done < buf.len() {
            match f.read_at(&mut buf[done..], offset.max(0) as u64 + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => return reply.error(errno(&e)),
            }
        }
        reply.data(&buf[..done]);
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
        let r = self.rel(ino).and_then(|rel| {
            lock(&self.log).room(data.len() as u64)?;
            let f = self.files.get(&fh).ok_or(libc::EBADF)?;
            f.write_all_at(data, offset).map_err(|e| errno(&e))?;
            lock(&self.log).log_write(ino, &rel, offset, data)
        });
        match r {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lock_owner: u64, reply: ReplyEmpty) {
        reply.ok();
    }

    fn release(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        _flags: i32,
        _lock_owner: Option<u64>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.files.remove(&fh);
        reply.ok();
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, fh: u64, _datasync: bool, reply: ReplyEmpty) {
        let r = self.rel(ino).and_then(|rel| {
            // Logged, not done: crash states are rebuilt from this log, never from the backing
            // files, so their durability plays no part; a real fsync here waited on the host's
            // disk with every other writer on it (seconds per case on a busy machine). The file
            // is still checked to be one this server serves.
            if !self.files.contains_key(&fh) {
                drop(self.open_data(&rel, OFlags::RDONLY, libc::EINVAL)?);
            }
            self.log(FileOp::Fsync { id: ino, path: rel });
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
        let rel = match self.rel(ino) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let listed = self
            .open_node(&rel, OFlags::DIRECTORY | OFlags::RDONLY)
            .and_then(|fd| rfs::Dir::new(fd).map_err(raw))
            .and_then(|dir| {
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
            let kind = match t {
                rfs::FileType::Directory => FileType::Directory,
                rfs::FileType::Symlink => FileType::Symlink,
                _ => FileType::RegularFile,
            };
            let child = self.ino_of(&rel.join(&name));
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
        let r = self.rel(ino).and_then(|rel| {
            // Logged, not done, as fsync above.
            drop(self.open_node(&rel, OFlags::DIRECTORY | OFlags::RDONLY)?);
            self.log(FileOp::FsyncDir { path: rel });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        match rfs::fstatvfs(self.root.fd()) {
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
            Err(e) => reply.error(raw(e)),
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
        let r = self.rel(ino).and_then(|rel| {
            let flags = rfs::XattrFlags::from_bits_truncate(flags as u32);
            match self.xattr_at(&rel)? {
                XattrAt::Fd(fd) => rfs::fsetxattr(fd, name, value, flags),
                XattrAt::Path(p, _dir) => rfs::lsetxattr(&p, name, value, flags),
            }
            .map_err(raw)?;
            self.log(FileOp::Xattr { path: rel, name: name.as_bytes().to_vec(), value: Some(value.to_vec()) });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn getxattr(&mut self, _req: &Request<'_>, ino: u64, name: &OsStr, size: u32, reply: ReplyXattr) {
        let r = self.rel(ino).and_then(|rel| {
            let mut buf = vec![0u8; XATTR_MAX];
            let n = match self.xattr_at(&rel)? {
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
        let r = self.rel(ino).and_then(|rel| {
            let mut buf = vec![0u8; XATTR_MAX];
            let n = match self.xattr_at(&rel)? {
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
        let r = self.rel(ino).and_then(|rel| {
            match self.xattr_at(&rel)? {
                XattrAt::Fd(fd) => rfs::fremovexattr(fd, name),
                XattrAt::Path(p, _dir) => rfs::lremovexattr(&p, name),
            }
            .map_err(raw)?;
            self.log(FileOp::Xattr { path: rel, name: name.as_bytes().to_vec(), value: None });
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
        let r = self.rel(ino).and_then(|rel| {
            let f = self.files.get(&fh).ok_or(libc::EBADF)?;
            let before = f.metadata().map_err(|e| errno(&e))?.len();
            // An allocation kept past the end is replayed into every crash state: it counts
            // against max_log like written data (a daemon allocating terabytes gets ENOSPC).
            let allocates = mode & libc::FALLOC_FL_KEEP_SIZE != 0 && mode & libc::FALLOC_FL_PUNCH_HOLE == 0;
            if allocates {
                lock(&self.log).room(len)?;
            }
            let flags = rfs::FallocateFlags::from_bits_truncate(mode as u32);
            rfs::fallocate(f.as_fd(), flags, off, len).map_err(raw)?;
            let after = f.metadata().map_err(|e| errno(&e))?.len();
            if mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0 {
                // Zeroed bytes are data, logged as writes of zeros (within the file).
                let end = (off + len).min(after);
                let mut at = off;
                while at < end {
                    let n = (PIECE - at % PIECE).min(end - at);
                    lock(&self.log).log_write(ino, &rel, at, &vec![0u8; n as usize])?;
                    at += n;
                }
            }
            if after != before {
                self.log(FileOp::Truncate { id: ino, path: rel.clone(), size: after });
            }
            if allocates {
                lock(&self.log).log_allocate(ino, &rel, off, len);
            }
            Ok(())
        });
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
