//! bugfs: a tiny FUSE filesystem with planted bugs, for fsarena's own tests of its checkers
//! (`verify` and `crash`). Not part of fsarena: an example the tests build.
//!
//! `bugfs [--bugs=LIST] BACKING MOUNTPOINT`, in the foreground until unmounted, as a
//! `fuse:cmd='bugfs --bugs=flip_bit {work} {mnt}'` target runs it. The tree is fsarena's own
//! passthrough ([`fsarena_target::passthrough`], the one its file recorder logs through) onto
//! BACKING: every directory and file is a real one there, under the same name, so a file-level
//! recorder of BACKING sees the name operations as they happen, and a restart on BACKING
//! serves what it holds (a crash state of it). bugfs serves directories and regular files
//! only (no links, device nodes or xattrs). What it adds are hooks ([`BugFs`]): written file
//! data stays in memory (4 KiB pages) until fsync or flush (close) writes it to the backing
//! file; a truncate is applied to the backing file at once.
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
//! Why the page cache is bugfs's own: the point is a filesystem that is wrong on purpose, and
//! small enough to see that it is wrong only where it is told to be; the passthrough below it
//! is the honest one fsarena records daemons with.

#[path = "bugfs/hostile.rs"]
mod hostile;

use fsarena_target::beneath::HeldDir;
use fsarena_target::passthrough::{Backing, Feature, Hooks, Inode, Passthrough};
use fuser::{FileAttr, FileType, MountOption};
use rustix::fs::OFlags;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::ops::Range;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};

const PAGE: u64 = 4096;
/// The bugs `--bugs=` takes.
const BUGS: &str =
    "stale_truncate, flip_bit, fsync_lies, late_name, torn_rename, late_size, size_on_close, lost_blocks";

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

/// A regular file as bugfs holds it, by inode number.
#[derive(Debug)]
struct Node {
    /// The size the filesystem says (the backing file may be shorter).
    size: u64,
    /// Written pages not yet in the backing file.
    dirty: BTreeMap<u64, Vec<u8>>,
    /// The backing file, open while the file is.
    file: Option<File>,
    opens: u32,
    /// Closed at least once since it was made (`--fifo-files`).
    closed: bool,
    /// The size when last closed (or made, or found).
    closed_size: u64,
    /// `KEEP_SIZE` allocations (offset, length) not yet made (`lost_blocks`).
    deferred: Vec<(u64, u64)>,
}

impl Node {
    /// A file of `size` bytes: found in BACKING (`closed`: a restart on a crash state serves
    /// what it holds), or just made.
    fn new(size: u64, closed: bool) -> Self {
        Self { size, dirty: BTreeMap::new(), file: None, opens: 0, closed, closed_size: size, deferred: Vec::new() }
    }
}

/// The passthrough's hooks: the page cache, the bugs and the hostile modes.
#[derive(Debug)]
struct BugFs {
    bugs: Bugs,
    hostile: hostile::Hostile,
    nodes: HashMap<u64, Node>,
}

/// fallocate(KEEP_SIZE) of the backing file.
fn keep_size(file: &File, off: u64, len: u64) -> Result<(), i32> {
    rustix::fs::fallocate(file, rustix::fs::FallocateFlags::KEEP_SIZE, off, len).map_err(|e| e.raw_os_error())
}

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

impl BugFs {
    /// The file `ino`, found in BACKING the first time it is asked for.
    fn node(&mut self, backing: &Backing, ino: u64) -> Result<&mut Node, i32> {
        match self.nodes.entry(ino) {
            Entry::Occupied(n) => Ok(n.into_mut()),
            Entry::Vacant(n) => {
                let file = backing.open_regular(&backing.path_of(ino)?, OFlags::RDONLY)?;
                let size = file.metadata().map_err(|e| errno(&e))?.len();
                Ok(n.insert(Node::new(size, true)))
            }
        }
    }

    fn backing_file(&mut self, backing: &Backing, ino: u64) -> Result<&File, i32> {
        let node = self.node(backing, ino)?;
        if node.file.is_none() {
            node.file = Some(backing.open_regular(&backing.path_of(ino)?, OFlags::RDWR)?);
        }
        node.file.as_ref().ok_or(libc::EIO)
    }

    /// Writes the dirty pages of `ino` to its backing file.
    fn writeback(&mut self, backing: &Backing, ino: u64) -> Result<(), i32> {
        self.writeback_upto(backing, ino, u64::MAX)
    }

    /// Writes the dirty pages of `ino` to its backing file, only inside `limit` bytes (the
    /// rest stay dirty).
    fn writeback_upto(&mut self, backing: &Backing, ino: u64, limit: u64) -> Result<(), i32> {
        self.backing_file(backing, ino)?;
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
    fn allocate_deferred(&mut self, backing: &Backing, ino: u64) -> Result<(), i32> {
        let todo = std::mem::take(&mut self.node(backing, ino)?.deferred);
        for (off, len) in todo {
            keep_size(self.backing_file(backing, ino)?, off, len)?;
        }
        Ok(())
    }

    /// The page `page` of `ino` as the filesystem holds it: dirty, else from the backing file.
    fn page(&mut self, backing: &Backing, ino: u64, page: u64) -> Result<Vec<u8>, i32> {
        if let Some(d) = self.nodes.get(&ino).and_then(|n| n.dirty.get(&page)) {
            return Ok(d.clone());
        }
        let file = self.backing_file(backing, ino)?;
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

    fn set_size(&mut self, backing: &Backing, ino: u64, size: u64) -> Result<(), i32> {
        let stale = self.bugs.stale_truncate;
        let node = self.node(backing, ino)?;
        if size < node.size && !stale {
            // Drop what lies past the new end, in memory and in the backing file.
            node.dirty.retain(|p, _| *p * PAGE < size);
            if let Some(last) = node.dirty.get_mut(&(size / PAGE)) {
                last[(size % PAGE) as usize..].fill(0);
            }
            self.backing_file(backing, ino)?.set_len(size).map_err(|e| errno(&e))?;
        }
        self.node(backing, ino)?.size = size;
        Ok(())
    }

    fn write_at(&mut self, backing: &Backing, ino: u64, off: u64, data: &[u8]) -> Result<(), i32> {
        let mut at = off;
        let end = off + data.len() as u64;
        while at < end {
            let page = at / PAGE;
            let mut buf = self.page(backing, ino, page)?;
            let from = (at % PAGE) as usize;
            let n = ((PAGE as usize) - from).min((end - at) as usize);
            buf[from..from + n].copy_from_slice(&data[(at - off) as usize..(at - off) as usize + n]);
            self.node(backing, ino)?.dirty.insert(page, buf);
            at += n as u64;
        }
        let node = self.node(backing, ino)?;
        node.size = node.size.max(end);
        Ok(())
    }

    fn read_at(&mut self, backing: &Backing, ino: u64, off: u64, len: u64) -> Result<Vec<u8>, i32> {
        let size = self.node(backing, ino)?.size;
        let end = (off + len).min(size);
        let mut out = Vec::new();
        let mut at = off;
        while at < end {
            let buf = self.page(backing, ino, at / PAGE)?;
            let from = (at % PAGE) as usize;
            let n = ((PAGE as usize) - from).min((end - at) as usize);
            out.extend_from_slice(&buf[from..from + n]);
            at += n as u64;
        }
        Ok(out)
    }

    /// `torn_rename`: the file `from` removed, made durable, then written under `to`.
    fn torn_rename(&mut self, backing: &Backing, from: &Path, to: &Path) -> Result<(), i32> {
        if let Some(ino) = backing.ino_at(from) {
            self.writeback(backing, ino)?;
            if let Some(n) = self.nodes.get_mut(&ino) {
                n.file = None;
            }
        }
        let mut data = Vec::new();
        let mut old = backing.open_regular(from, OFlags::RDONLY)?;
        old.read_to_end(&mut data).map_err(|e| errno(&e))?;
        let mode = old.metadata().map_err(|e| errno(&e))?.permissions().mode();
        drop(old);
        backing.remove(from, false)?;
        backing.fsync_dir(from.parent().unwrap_or(Path::new("")))?;
        let mut new = match backing.make_file(to, mode) {
            Err(libc::EEXIST) => {
                let f = backing.open_regular(to, OFlags::WRONLY)?;
                f.set_len(0).map_err(|e| errno(&e))?;
                f.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(|e| errno(&e))?;
                f
            }
            made => made?,
        };
        new.write_all(&data).map_err(|e| errno(&e))
    }
}

impl Hooks for BugFs {
    fn supports(&self, _feature: Feature) -> bool {
        false
    }

    fn serves(&self, kind: FileType) -> bool {
        matches!(kind, FileType::Directory | FileType::RegularFile)
    }

    fn lookup(&mut self, parent: u64, name: &OsStr) -> Option<FileAttr> {
        self.hostile.lookup(parent, name)
    }

    fn getattr(&mut self, ino: u64) -> Option<FileAttr> {
        self.hostile.attr(ino)
    }

    fn readlink(&mut self, backing: &Backing, ino: u64) -> Option<Vec<u8>> {
        if let Some(target) = self.hostile.readlink(ino) {
            return Some(target.to_vec());
        }
        let rel = backing.path_of(ino).ok()?;
        let dir = backing.kind(&rel).ok()? == FileType::Directory;
        self.hostile.dir_link(depth(&rel)).filter(|_| dir).map(<[u8]>::to_vec)
    }

    fn attr(&mut self, node: Inode<'_>, attr: FileAttr, made: bool) -> FileAttr {
        let depth = depth(node.path);
        match attr.kind {
            // The kernel takes only a directory as mkdir's answer: `--link-dirs` shows the
            // link at the next lookup.
            FileType::Directory if !made => FileAttr { kind: self.hostile.kind(depth, true, false), ..attr },
            FileType::RegularFile => {
                let n = self.nodes.entry(node.ino).or_insert_with(|| Node::new(attr.size, true));
                let size = self.hostile.claimed(n.size);
                let idle = n.closed && n.opens == 0 && !made;
                // A held-back allocation (`lost_blocks`) shows as allocated, as btrfs showed it.
                let held = n.deferred.iter().map(|(_, l)| l.div_ceil(512)).sum::<u64>();
                let blocks = size.div_ceil(512).max(attr.blocks + held);
                FileAttr { size, blocks, kind: self.hostile.kind(depth, false, idle), ..attr }
            }
            _ => attr,
        }
    }

    fn opened(&mut self, backing: &Backing, node: Inode<'_>, created: bool) {
        if created {
            self.nodes.insert(node.ino, Node::new(0, false));
        }
        if let Ok(n) = self.node(backing, node.ino) {
            n.opens += 1;
        }
    }

    fn read(&mut self, backing: &Backing, ino: u64, _fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, i32> {
        let held = self.nodes.get(&ino).map_or(0, |n| n.size);
        let mut data = self.read_at(backing, ino, offset, u64::from(size))?;
        data = self.hostile.pad(data, offset, u64::from(size), held);
        if self.hostile.short_reads {
            data.clear();
        }
        if self.bugs.flip_bit {
            if let Some(b) = data.first_mut() {
                *b ^= 1;
            }
        }
        Ok(data)
    }

    fn write(&mut self, backing: &Backing, node: Inode<'_>, _fh: u64, offset: u64, data: &[u8]) -> Result<(), i32> {
        self.write_at(backing, node.ino, offset, data)
    }

    fn truncate(&mut self, backing: &Backing, node: Inode<'_>, _fh: Option<u64>, size: u64) -> Result<(), i32> {
        self.set_size(backing, node.ino, size)
    }

    fn fallocate(
        &mut self,
        backing: &Backing,
        node: Inode<'_>,
        _fh: u64,
        range: Range<u64>,
        mode: i32,
    ) -> Result<(), i32> {
        let (ino, off, len) = (node.ino, range.start, range.end - range.start);
        let keep = mode & libc::FALLOC_FL_KEEP_SIZE != 0;
        let zeroing = mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0;
        if mode & !(libc::FALLOC_FL_KEEP_SIZE | libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0 {
            return Err(libc::EOPNOTSUPP);
        }
        let size = self.node(backing, ino)?.size;
        if zeroing {
            let end = if keep { (off + len).min(size) } else { off + len };
            if end > off {
                self.write_at(backing, ino, off, &vec![0; (end - off) as usize])?;
            }
        } else if !keep && off + len > size {
            self.node(backing, ino)?.size = off + len;
        }
        if keep {
            self.node(backing, ino)?.size = size;
            if mode & libc::FALLOC_FL_PUNCH_HOLE == 0 && off + len > size {
                if self.bugs.lost_blocks {
                    self.node(backing, ino)?.deferred.push((off, len));
                } else {
                    keep_size(self.backing_file(backing, ino)?, off, len)?;
                }
            }
        }
        Ok(())
    }

    fn flush(&mut self, backing: &Backing, ino: u64) -> Result<(), i32> {
        self.writeback(backing, ino)?;
        let n = self.node(backing, ino)?;
        n.closed_size = n.size;
        Ok(())
    }

    fn release(&mut self, backing: &Backing, ino: u64, _fh: u64) -> Result<(), i32> {
        let r = self.writeback(backing, ino).and_then(|()| self.allocate_deferred(backing, ino));
        if let Some(n) = self.nodes.get_mut(&ino) {
            n.closed_size = n.size;
            n.opens = n.opens.saturating_sub(1);
            if n.opens == 0 {
                n.file = None;
                n.closed = true;
                // Removed meanwhile: nothing will ask for it again.
                if backing.path_of(ino).is_err() {
                    self.nodes.remove(&ino);
                }
            }
        }
        r
    }

    fn fsync(&mut self, backing: &Backing, node: Inode<'_>, _fh: u64, _datasync: bool) -> Result<(), i32> {
        if self.bugs.fsync_lies {
            return Ok(());
        }
        let limit = if self.bugs.size_on_close { self.node(backing, node.ino)?.closed_size } else { u64::MAX };
        self.writeback_upto(backing, node.ino, limit)?;
        let late_size = self.bugs.late_size;
        let file = self.backing_file(backing, node.ino)?;
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
    }

    fn fsyncdir(&mut self, backing: &Backing, node: Inode<'_>) -> Result<(), i32> {
        // late_name: the directory's entries become durable only when something else makes
        // them so (the next journal commit below).
        if self.bugs.late_name {
            return Ok(());
        }
        backing.fsync_dir(node.path)
    }

    fn rename(&mut self, backing: &Backing, from: &Path, to: &Path) -> Result<(), i32> {
        if self.bugs.torn_rename && backing.kind(from) == Ok(FileType::RegularFile) {
            // Remove, make that durable, then write the new name: not atomic.
            return self.torn_rename(backing, from, to);
        }
        backing.rename(from, to)
    }
}

/// How many levels below the root `rel` is (the root: 0).
fn depth(rel: &Path) -> u32 {
    rel.components().count() as u32
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
    let root = HeldDir::open(backing).unwrap_or_else(|e| {
        eprintln!("bugfs: opening {}: {e}", backing.display());
        std::process::exit(1);
    });
    // What BACKING holds already (a restart on a crash state) is the tree served.
    let fs = Passthrough::new(root, BugFs { bugs, hostile, nodes: HashMap::new() });
    let options = [MountOption::FSName("bugfs".into()), MountOption::AllowOther, MountOption::DefaultPermissions];
    if let Err(e) = fuser::mount2(fs, mnt, &options) {
        eprintln!("bugfs: mounting {}: {e}", mnt.display());
        std::process::exit(1);
    }
}
