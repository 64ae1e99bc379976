//! bugfs: a tiny FUSE filesystem with planted bugs, for fsarena's own tests of its checkers
//! (`verify` and `crash`). Not part of fsarena: an example the tests build.
//!
//! `bugfs [--bugs=LIST] BACKING MOUNTPOINT`, in the foreground until unmounted, as a
//! `fuse:cmd='bugfs --bugs=flip_bit {work} {mnt}'` target runs it. The tree is a passthrough
//! onto BACKING: every directory and file is a real one there, under the same name, so a
//! file-level recorder of BACKING sees the name operations as they happen, and a restart on
//! BACKING serves what it holds (a crash state of it). Written file data
//! stays in memory (4 KiB pages) until fsync or flush (close) writes it to the backing file;
//! a truncate is applied to the backing file at once.
//!
//! Bugs (`--bugs=` comma-separated; none by default):
//! - `stale_truncate`: a truncate down only moves the size; the bytes past it stay, and come
//!   back when the file grows again (they must read as zeros);
//! - `flip_bit`: every READ answered flips the lowest bit of its first byte;
//! - `fsync_lies`: fsync answers success and writes nothing (flush on close still writes);
//! - `late_name`: fsync of a directory answers success and syncs nothing: a new name is
//!   persisted late (with whatever syncs its backing directory next);
//! - `torn_rename`: a file is renamed by removing the old name (made durable), then writing
//!   the data under the new one: a crash between keeps neither;
//! - `late_size`: fsync writes the file's data but not its size (sync_file_range, not fsync):
//!   the size change is persisted after its data, whenever the backing filesystem commits;
//! - `size_on_close`: fsync writes only the pages inside the size the file had when it was
//!   last closed (or made); what it grew by since, its pages and its size, reaches the backing
//!   file when the file is closed: a write and an fsync through the same descriptor lose it;
//! - `lost_blocks`: a fallocate with `FALLOC_FL_KEEP_SIZE` allocates in the backing file only
//!   when the file is closed (st_blocks counts them meanwhile), so an fsync after it does not
//!   make the blocks past the end durable: st_blocks drops after a crash, as btrfs's did.
//!
//! A fallocate with `KEEP_SIZE` is otherwise made on the backing file at once, and a file's
//! st_blocks is its backing file's (or its size's, if more).
//!
//! Hostile modes for fsarena's hostile tests (`--plant=`, `--lure=`, `--claim=`): see
//! [`hostile`].
//!
//! Why hand-written: the point is a filesystem that is wrong on purpose, and small enough to
//! see that it is wrong only where it is told to be.

#[path = "bugfs/hostile.rs"]
mod hostile;

use fuser::{
    FileAttr, FileType, Filesystem, MountOption, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
};
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

const PAGE: u64 = 4096;
/// The bugs `--bugs=` takes.
const BUGS: &str =
    "stale_truncate, flip_bit, fsync_lies, late_name, torn_rename, late_size, size_on_close, lost_blocks";
const TTL: Duration = Duration::ZERO;

/// The planted bugs that are switched on.
#[derive(Debug, Default, Clone, Copy)]
struct Bugs {
    stale_truncate: bool,
    flip_bit: bool,
    fsync_lies: bool,
    late_name: bool,
    torn_rename: bool,
    late_size: bool,
    size_on_close: bool,
    lost_blocks: bool,
}

/// One file or directory.
#[derive(Debug)]
struct Node {
    parent: u64,
    name: OsString,
    dir: bool,
    /// Files: the size the filesystem says (the backing file may be shorter).
    size: u64,
    /// Files: written pages not yet in the backing file.
    dirty: BTreeMap<u64, Vec<u8>>,
    /// Files: the backing file, open while the file is.
    file: Option<File>,
    opens: u32,
    /// Closed at least once since it was made (`--fifo-files`).
    closed: bool,
    /// Files: the size when last closed (or made, or found at start).
    closed_size: u64,
    /// Files: `KEEP_SIZE` allocations (offset, length) not yet made (`lost_blocks`).
    deferred: Vec<(u64, u64)>,
}

struct BugFs {
    backing: PathBuf,
    bugs: Bugs,
    hostile: hostile::Hostile,
    nodes: HashMap<u64, Node>,
    next: u64,
}

/// fallocate(KEEP_SIZE) of the backing file.
fn keep_size(file: &File, off: u64, len: u64) -> Result<(), i32> {
    rustix::fs::fallocate(file, rustix::fs::FallocateFlags::KEEP_SIZE, off, len).map_err(|e| e.raw_os_error())
}

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

impl BugFs {
    fn path(&self, ino: u64) -> PathBuf {
        let mut names = Vec::new();
        let mut at = ino;
        while at != fuser::FUSE_ROOT_ID {
            let Some(n) = self.nodes.get(&at) else { break };
            names.push(n.name.clone());
            at = n.parent;
        }
        let mut p = self.backing.clone();
        for n in names.iter().rev() {
            p.push(n);
        }
        p
    }

    /// How many levels below the root `ino` is (the root: 0).
    fn depth(&self, ino: u64) -> u32 {
        let (mut depth, mut at) = (0, ino);
        while at != fuser::FUSE_ROOT_ID {
            let Some(n) = self.nodes.get(&at) else { break };
            depth += 1;
            at = n.parent;
        }
        depth
    }

    fn child(&self, parent: u64, name: &OsStr) -> Option<u64> {
        self.nodes.iter().find(|(_, n)| n.parent == parent && n.name == name).map(|(i, _)| *i)
    }

    fn attr(&self, ino: u64) -> Result<FileAttr, i32> {
        let node = self.nodes.get(&ino).ok_or(libc::ENOENT)?;
        let md = std::fs::symlink_metadata(self.path(ino)).map_err(|e| errno(&e))?;
        let size = if node.dir { md.len() } else { self.hostile.claimed(node.size) };
        let t = |s: i64| SystemTime::UNIX_EPOCH + Duration::from_secs(s.max(0) as u64);
        Ok(FileAttr {
            ino,
            size,
            // A held-back allocation (`lost_blocks`) shows as allocated, as btrfs showed it.
            blocks: if node.dir {
                md.blocks()
            } else {
                size.div_ceil(512).max(md.blocks() + node.deferred.iter().map(|(_, l)| l.div_ceil(512)).sum::<u64>())
            },
            atime: t(md.atime()),
            mtime: t(md.mtime()),
            ctime: t(md.ctime()),
            crtime: t(md.ctime()),
            kind: self.hostile.kind(self.depth(ino), node.dir, node.closed && node.opens == 0),
            perm: (md.mode() & 0o7777) as u16,
            nlink: if node.dir { 2 } else { 1 },
            uid: md.uid(),
            gid: md.gid(),
            rdev: 0,
            blksize: PAGE as u32,
            flags: 0,
        })
    }

    fn add(&mut self, parent: u64, name: &OsStr, dir: bool) -> u64 {
        let ino = self.next;
        self.next += 1;
        self.nodes.insert(
            ino,
            Node {
                parent,
                name: name.to_owned(),
                dir,
                size: 0,
                dirty: BTreeMap::new(),
                file: None,
                opens: 0,
                closed: false,
                closed_size: 0,
                deferred: Vec::new(),
            },
        );
        ino
    }

    fn backing_file(&mut self, ino: u64) -> Result<&File, i32> {
        let path = self.path(ino);
        let node = self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?;
        if node.file.is_none() {
            node.file = Some(std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(|e| errno(&e))?);
        }
        node.file.as_ref().ok_or(libc::EIO)
    }

    /// Writes the dirty pages of `ino` to its backing file.
    fn writeback(&mut self, ino: u64) -> Result<(), i32> {
        self.writeback_upto(ino, u64::MAX)
    }

    /// Writes the dirty pages of `ino` to its backing file, only inside `limit` bytes (the
    /// rest stay dirty).
    fn writeback_upto(&mut self, ino: u64, limit: u64) -> Result<(), i32> {
        self.backing_file(ino)?;
        let node = self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?;
        let Some(file) = node.file.as_ref() else { return Err(libc::EIO) };
        let size = node.size.min(limit);
        let (inside, past): (BTreeMap<u64, Vec<u8>>, _) =
            std::mem::take(&mut node.dirty).into_iter().partition(|(page, _)| page * PAGE < size);
        node.dirty = past;
        for (page, data) in inside {
            let off = page * PAGE;
            let len = (size.saturating_sub(off)).min(PAGE) as usize;
            file.write_all_at(&data[..len], off).map_err(|e| errno(&e))?;
        }
        // Bytes past the size that an honest truncate dropped must not come back.
        let on_disk = file.metadata().map_err(|e| errno(&e))?.len();
        if on_disk < size {
            file.set_len(size).map_err(|e| errno(&e))?;
        }
        Ok(())
    }

    /// Makes the `KEEP_SIZE` allocations `lost_blocks` held back.
    fn allocate_deferred(&mut self, ino: u64) -> Result<(), i32> {
        let todo = std::mem::take(&mut self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?.deferred);
        for (off, len) in todo {
            keep_size(self.backing_file(ino)?, off, len)?;
        }
        Ok(())
    }

    /// The page `page` of `ino` as the filesystem holds it: dirty, else from the backing file.
    fn page(&mut self, ino: u64, page: u64) -> Result<Vec<u8>, i32> {
        if let Some(d) = self.nodes.get(&ino).and_then(|n| n.dirty.get(&page)) {
            return Ok(d.clone());
        }
        let file = self.backing_file(ino)?;
        let mut buf = vec![0u8; PAGE as usize];
        let mut done = 0;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], page * PAGE + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => return Err(errno(&e)),
            }
        }
        Ok(buf)
    }

    fn set_size(&mut self, ino: u64, size: u64) -> Result<(), i32> {
        let old = self.nodes.get(&ino).ok_or(libc::ENOENT)?.size;
        if size < old && !self.bugs.stale_truncate {
            // Drop what lies past the new end, in memory and in the backing file.
            let node = self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?;
            node.dirty.retain(|p, _| *p * PAGE < size);
            if let Some(last) = node.dirty.get_mut(&(size / PAGE)) {
                last[(size % PAGE) as usize..].fill(0);
            }
            self.backing_file(ino)?.set_len(size).map_err(|e| errno(&e))?;
        }
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.size = size;
        }
        Ok(())
    }

    fn write_at(&mut self, ino: u64, off: u64, data: &[u8]) -> Result<(), i32> {
        let mut at = off;
        let end = off + data.len() as u64;
        while at < end {
            let page = at / PAGE;
            let mut buf = self.page(ino, page)?;
            let from = (at % PAGE) as usize;
            let n = ((PAGE as usize) - from).min((end - at) as usize);
            buf[from..from + n].copy_from_slice(&data[(at - off) as usize..(at - off) as usize + n]);
            self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?.dirty.insert(page, buf);
            at += n as u64;
        }
        let node = self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?;
        node.size = node.size.max(end);
        Ok(())
    }

    fn read_at(&mut self, ino: u64, off: u64, len: u64) -> Result<Vec<u8>, i32> {
        let size = self.nodes.get(&ino).ok_or(libc::ENOENT)?.size;
        let end = (off + len).min(size);
        let mut out = Vec::new();
        let mut at = off;
        while at < end {
            let buf = self.page(ino, at / PAGE)?;
            let from = (at % PAGE) as usize;
            let n = ((PAGE as usize) - from).min((end - at) as usize);
            out.extend_from_slice(&buf[from..from + n]);
            at += n as u64;
        }
        Ok(out)
    }
}

impl Filesystem for BugFs {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if let Some(a) = self.hostile.lookup(parent, name) {
            return reply.entry(&TTL, &a, 0);
        }
        match self.child(parent, name).map(|i| self.attr(i)) {
            Some(Ok(a)) => reply.entry(&TTL, &a, 0),
            Some(Err(e)) => reply.error(e),
            None => reply.error(libc::ENOENT),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        if let Some(a) = self.hostile.attr(ino) {
            return reply.attr(&TTL, &a);
        }
        match self.attr(ino) {
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
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let path = self.path(ino);
        let r = (|| {
            if let Some(m) = mode {
                std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(m & 0o7777))
                    .map_err(|e| errno(&e))?;
            }
            if uid.is_some() || gid.is_some() {
                std::os::unix::fs::chown(&path, uid, gid).map_err(|e| errno(&e))?;
            }
            if let Some(s) = size {
                self.set_size(ino, s)?;
            }
            self.attr(ino)
        })();
        match r {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&mut self, _req: &Request<'_>, ino: u64, reply: ReplyData) {
        let dir = self.nodes.get(&ino).is_some_and(|n| n.dir);
        let depth = self.depth(ino);
        match self.hostile.readlink(ino).or_else(|| self.hostile.dir_link(depth).filter(|_| dir)) {
            Some(target) => reply.data(target),
            None => reply.error(libc::EINVAL),
        }
    }

    fn mkdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, mode: u32, _umask: u32, reply: ReplyEntry) {
        let path = self.path(parent).join(name);
        if let Err(e) = std::fs::create_dir(&path) {
            return reply.error(errno(&e));
        }
        let _ = std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode & 0o7777));
        let ino = self.add(parent, name, true);
        // The kernel takes only a directory as mkdir's answer: `--link-dirs` shows the link at
        // the next lookup.
        match self.attr(ino) {
            Ok(a) => reply.entry(&TTL, &FileAttr { kind: FileType::Directory, ..a }, 0),
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
        let path = self.path(parent).join(name);
        let ino = match self.child(parent, name) {
            Some(i) => i,
            None => {
                if let Err(e) = std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                    return reply.error(errno(&e));
                }
                let _ = std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode & 0o7777));
                self.add(parent, name, false)
            }
        };
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.opens += 1;
        }
        match self.attr(ino) {
            Ok(a) => reply.created(&TTL, &a, 0, 0, 0),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        let Some(ino) = self.child(parent, name) else { return reply.error(libc::ENOENT) };
        match std::fs::remove_file(self.path(ino)) {
            Ok(()) => {
                self.nodes.remove(&ino);
                reply.ok();
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn rmdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        let Some(ino) = self.child(parent, name) else { return reply.error(libc::ENOENT) };
        match std::fs::remove_dir(self.path(ino)) {
            Ok(()) => {
                self.nodes.remove(&ino);
                reply.ok();
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn rename(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        _flags: u32,
        reply: ReplyEmpty,
    ) {
        let Some(ino) = self.child(parent, name) else { return reply.error(libc::ENOENT) };
        let (from, to) = (self.path(parent).join(name), self.path(newparent).join(newname));
        let is_file = self.nodes.get(&ino).is_some_and(|n| !n.dir);
        let renamed = if self.bugs.torn_rename && is_file {
            // Remove, make that durable, then write the new name: not atomic.
            if let Err(e) = self.writeback(ino) {
                return reply.error(e);
            }
            if let Some(n) = self.nodes.get_mut(&ino) {
                n.file = None;
            }
            let parent_dir = self.path(parent);
            std::fs::read(&from).and_then(|data| {
                let mode = std::fs::metadata(&from)?.permissions();
                std::fs::remove_file(&from)?;
                File::open(&parent_dir)?.sync_all()?;
                std::fs::write(&to, &data)?;
                std::fs::set_permissions(&to, mode)
            })
        } else {
            std::fs::rename(from, to)
        };
        if let Err(e) = renamed {
            return reply.error(errno(&e));
        }
        if let Some(old) = self.child(newparent, newname) {
            self.nodes.remove(&old);
        }
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.parent = newparent;
            n.name = newname.to_owned();
        }
        reply.ok();
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        match self.nodes.get_mut(&ino) {
            Some(n) => {
                n.opens += 1;
                reply.opened(0, 0);
            }
            None => reply.error(libc::ENOENT),
        }
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        let held = self.nodes.get(&ino).map_or(0, |n| n.size);
        let offset = offset.max(0) as u64;
        match self.read_at(ino, offset, u64::from(size)).map(|d| self.hostile.pad(d, offset, u64::from(size), held)) {
            Ok(mut data) => {
                if self.hostile.short_reads {
                    data.clear();
                }
                if self.bugs.flip_bit {
                    if let Some(b) = data.first_mut() {
                        *b ^= 1;
                    }
                }
                reply.data(&data);
            }
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        match self.write_at(ino, offset.max(0) as u64, data) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _lock_owner: u64, reply: ReplyEmpty) {
        match self.writeback(ino) {
            Ok(()) => {
                if let Some(n) = self.nodes.get_mut(&ino) {
                    n.closed_size = n.size;
                }
                reply.ok()
            }
            Err(e) => reply.error(e),
        }
    }

    fn release(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        _flags: i32,
        _lock_owner: Option<u64>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let r = self.writeback(ino).and_then(|()| self.allocate_deferred(ino));
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.closed_size = n.size;
            n.opens = n.opens.saturating_sub(1);
            if n.opens == 0 {
                n.file = None;
                n.closed = true;
            }
        }
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        if self.bugs.fsync_lies {
            return reply.ok();
        }
        let late_size = self.bugs.late_size;
        let limit = match self.nodes.get(&ino) {
            Some(n) if self.bugs.size_on_close => n.closed_size,
            _ => u64::MAX,
        };
        let r = self.writeback_upto(ino, limit).and_then(|()| {
            let file = self.backing_file(ino)?;
            if late_size {
                use std::os::fd::AsRawFd;
                let flags =
                    libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;
                // SAFETY: an open descriptor; the whole file.
                if unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, flags) } != 0 {
                    return Err(errno(&std::io::Error::last_os_error()));
                }
                return Ok(());
            }
            file.sync_all().map_err(|e| errno(&e))
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        let mut entries: Vec<(u64, FileType, OsString)> = vec![
            (ino, FileType::Directory, ".".into()),
            (self.nodes.get(&ino).map_or(fuser::FUSE_ROOT_ID, |n| n.parent), FileType::Directory, "..".into()),
        ];
        let mut children: Vec<_> = self
            .nodes
            .iter()
            .filter(|(i, n)| n.parent == ino && **i != ino)
            .map(|(i, n)| (*i, if n.dir { FileType::Directory } else { FileType::RegularFile }, n.name.clone()))
            .collect();
        children.sort_by_key(|c| c.0);
        entries.extend(children);
        for (i, (child, kind, name)) in entries.into_iter().enumerate().skip(offset.max(0) as usize) {
            if reply.add(child, i as i64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        // late_name: the directory's entries become durable only when something else makes
        // them so (the next journal commit below).
        if self.bugs.late_name {
            return reply.ok();
        }
        match File::open(self.path(ino)).and_then(|d| d.sync_all()) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        match rustix::fs::statvfs(&self.backing) {
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
            Err(e) => reply.error(e.raw_os_error()),
        }
    }

    fn fallocate(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        length: i64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let (off, len) = (offset.max(0) as u64, length.max(0) as u64);
        let keep = mode & libc::FALLOC_FL_KEEP_SIZE != 0;
        let zeroing = mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0;
        if mode & !(libc::FALLOC_FL_KEEP_SIZE | libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0 {
            return reply.error(libc::EOPNOTSUPP);
        }
        let r = (|| {
            let size = self.nodes.get(&ino).ok_or(libc::ENOENT)?.size;
            if zeroing {
                let end = if keep { (off + len).min(size) } else { off + len };
                if end > off {
                    self.write_at(ino, off, &vec![0; (end - off) as usize])?;
                }
            } else if !keep && off + len > size {
                self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?.size = off + len;
            }
            if keep {
                if let Some(n) = self.nodes.get_mut(&ino) {
                    n.size = size;
                }
                if mode & libc::FALLOC_FL_PUNCH_HOLE == 0 && off + len > size {
                    if self.bugs.lost_blocks {
                        self.nodes.get_mut(&ino).ok_or(libc::ENOENT)?.deferred.push((off, len));
                    } else {
                        keep_size(self.backing_file(ino)?, off, len)?;
                    }
                }
            }
            Ok(())
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}

fn main() {
    let mut bugs = Bugs::default();
    let mut hostile = hostile::Hostile::default();
    let mut plants = Vec::new();
    let mut paths = Vec::new();
    for arg in std::env::args().skip(1) {
        if let Some(path) = arg.strip_prefix("--plant=") {
            plants.push(PathBuf::from(path));
        } else if let Some(path) = arg.strip_prefix("--lure=") {
            hostile.lure = Some(PathBuf::from(path));
        } else if let Some(bytes) = arg.strip_prefix("--claim=") {
            let Ok(n) = bytes.parse() else {
                eprintln!("bugfs: --claim={bytes}: expected a number of bytes");
                std::process::exit(2);
            };
            hostile.claim = Some(n);
        } else if arg == "--fifo-files" {
            hostile.fifo_files = true;
        } else if let Some(n) = arg.strip_prefix("--link-depth=") {
            let Ok(n) = n.parse() else {
                eprintln!("bugfs: --link-depth={n}: expected a number of levels");
                std::process::exit(2);
            };
            hostile.link_depth = n;
        } else if arg == "--short-reads" {
            hostile.short_reads = true;
        } else if let Some(path) = arg.strip_prefix("--link-dirs=") {
            hostile.link_dirs = Some(PathBuf::from(path));
        } else if let Some(list) = arg.strip_prefix("--bugs=") {
            for b in list.split(',').filter(|b| !b.is_empty()) {
                match b {
                    "stale_truncate" => bugs.stale_truncate = true,
                    "flip_bit" => bugs.flip_bit = true,
                    "fsync_lies" => bugs.fsync_lies = true,
                    "late_name" => bugs.late_name = true,
                    "torn_rename" => bugs.torn_rename = true,
                    "late_size" => bugs.late_size = true,
                    "size_on_close" => bugs.size_on_close = true,
                    "lost_blocks" => bugs.lost_blocks = true,
                    other => {
                        eprintln!("bugfs: unknown bug '{other}': expected {BUGS}");
                        std::process::exit(2);
                    }
                }
            }
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    let [backing, mnt] = paths.as_slice() else {
        eprintln!(
            "usage: bugfs [--bugs=LIST of {BUGS}] [--plant=PATH] [--lure=PATH] [--claim=BYTES] [--fifo-files] [--short-reads] [--link-dirs=PATH [--link-depth=N]] BACKING MOUNTPOINT"
        );
        std::process::exit(2);
    };
    hostile::plant(backing, &plants);
    let mut nodes = HashMap::new();
    nodes.insert(
        fuser::FUSE_ROOT_ID,
        Node {
            parent: fuser::FUSE_ROOT_ID,
            name: OsString::new(),
            dir: true,
            size: 0,
            dirty: BTreeMap::new(),
            file: None,
            opens: 0,
            closed: false,
            closed_size: 0,
            deferred: Vec::new(),
        },
    );
    // What BACKING holds already (a restart on a crash state) is the tree to serve.
    let mut next = 2;
    let mut dirs = vec![(fuser::FUSE_ROOT_ID, backing.clone())];
    while let Some((parent, dir)) = dirs.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(md) = std::fs::symlink_metadata(e.path()) else { continue };
            if !md.is_dir() && !md.is_file() {
                continue;
            }
            let ino = next;
            next += 1;
            let node = Node {
                parent,
                name: e.file_name(),
                dir: md.is_dir(),
                size: if md.is_dir() { 0 } else { md.len() },
                dirty: BTreeMap::new(),
                file: None,
                opens: 0,
                closed: true,
                closed_size: if md.is_dir() { 0 } else { md.len() },
                deferred: Vec::new(),
            };
            nodes.insert(ino, node);
            if md.is_dir() {
                dirs.push((ino, e.path()));
            }
        }
    }
    let fs = BugFs { backing: backing.clone(), bugs, hostile, nodes, next };
    let options = [MountOption::FSName("bugfs".into()), MountOption::AllowOther, MountOption::DefaultPermissions];
    if let Err(e) = fuser::mount2(fs, mnt, &options) {
        eprintln!("bugfs: mounting {}: {e}", mnt.display());
        std::process::exit(1);
    }
}
