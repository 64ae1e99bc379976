//! The recorder's FUSE server: one directory holding `image`, backed by a file in the work
//! directory, and one virtual crash image per slot (`state-K`, see [`VirtualImage`]). Every WRITE is appended to the log (its data to the spill file) before
//! it is answered; FSYNC closes an epoch; FALLOCATE punch/zero is logged as a zeroing write.
//! The kernel's loop driver turns every block-layer flush into an FSYNC on the image, in order
//! with the writes, so the log is the device's write history with its persistence points.
//!
//! Written against fuser's low-level `Filesystem` trait: the file is opened with
//! `FOPEN_DIRECT_IO` (no page cache between the loop device and the log) and the mount never
//! asks for `writeback_cache`. FSYNC, FSYNCDIR, FALLOCATE and STATFS are implemented: an ENOSYS
//! answer to FSYNC would make the kernel stop sending flushes at all.

use super::log::Log;
use fuser::{
    consts::FOPEN_DIRECT_IO, FileAttr, FileType, Filesystem, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
};
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The inode of the recorded image; the crash images follow it (`state-K` is `IMAGE_INO + 1 + K`).
const IMAGE_INO: u64 = 2;
/// The unit a crash image is composed in: the loop device's smallest logical block.
pub(crate) const SECTOR: u64 = 512;
/// Its name.
pub(crate) const IMAGE_NAME: &str = "image";
/// How long the kernel may cache attributes and names: the file never changes size.
const TTL: Duration = Duration::from_secs(3600);

/// What the server and fsarena share: the backing file and the log.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The image's bytes (replaced per generated workload while no loop device uses it).
    pub backing: File,
    /// Its size, fixed.
    pub size: u64,
    /// The write history.
    pub log: Log,
    /// The freshly made filesystem every generated workload starts from.
    pub base: File,
    /// One virtual crash image per slot.
    pub states: Vec<VirtualImage>,
}

/// A crash image without a copy: the base image, with the sectors of the chosen logged writes
/// read from the spill file instead, and a private overlay that takes what recovery writes
/// (journal replay, the sanity pass). Built by the server from its own log, so that nothing
/// but a list of entry numbers crosses the control socket.
#[derive(Debug, Default)]
pub(crate) struct VirtualImage {
    /// Sector → where its bytes are now: Some(offset in the spill file), None: zeroes.
    chosen: std::collections::HashMap<u64, Option<u64>>,
    /// Sector → what recovery wrote there.
    overlay: std::collections::HashMap<u64, Box<[u8]>>,
}

impl Shared {
    /// Composes crash image `slot`: the base plus, in log order, the writes `keep` names
    /// (entry numbers) and the first `torn.1` bytes of write `torn.0`. EINVAL when a write is
    /// not in whole sectors (the caller then builds a copy).
    pub(crate) fn compose(&mut self, slot: usize, keep: &[u64], torn: Option<(u64, u64)>) -> Result<(), i32> {
        let entries = self.log.entries();
        let mut chosen = std::collections::HashMap::new();
        let whole = |x: u64| x.is_multiple_of(SECTOR);
        let mut apply = |i: u64, limit: Option<u64>| -> Result<(), i32> {
            match entries.get(i as usize) {
                Some(super::log::Entry::Write { offset, len, spill }) => {
                    let len = limit.map_or(*len, |l| l.min(*len));
                    if !whole(*offset) || !whole(len) {
                        return Err(libc::EINVAL);
                    }
                    for k in 0..len / SECTOR {
                        chosen.insert(offset / SECTOR + k, Some(spill + k * SECTOR));
                    }
                }
                Some(super::log::Entry::Zero { offset, len }) => {
                    if !whole(*offset) || !whole(*len) {
                        return Err(libc::EINVAL);
                    }
                    for k in 0..len / SECTOR {
                        chosen.insert(offset / SECTOR + k, None);
                    }
                }
                _ => {}
            }
            Ok(())
        };
        for &i in keep {
            apply(i, None)?;
        }
        if let Some((i, bytes)) = torn {
            apply(i, Some(bytes))?;
        }
        let state = self.states.get_mut(slot).ok_or(libc::ENOENT)?;
        *state = VirtualImage { chosen, overlay: std::collections::HashMap::new() };
        Ok(())
    }

    /// Sector `s` of crash image `slot` as it reads now.
    fn state_sector(&self, slot: usize, s: u64, out: &mut [u8]) -> std::io::Result<()> {
        let state = &self.states[slot];
        if let Some(bytes) = state.overlay.get(&s) {
            out.copy_from_slice(bytes);
            return Ok(());
        }
        match state.chosen.get(&s) {
            Some(Some(at)) => self.log.read_spill(out, *at),
            Some(None) => {
                out.fill(0);
                Ok(())
            }
            None => read_or_zero(&self.base, out, s * SECTOR),
        }
    }

    /// `buf.len()` bytes of crash image `slot` at `offset` (within the image): the base's
    /// bytes in one read, then the sectors the image takes from elsewhere put over them.
    fn read_state(&self, slot: usize, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        read_or_zero(&self.base, buf, offset)?;
        let state = &self.states[slot];
        if state.chosen.is_empty() && state.overlay.is_empty() {
            return Ok(());
        }
        let mut sector = [0u8; SECTOR as usize];
        let end = offset + buf.len() as u64;
        let mut s = offset / SECTOR;
        while s * SECTOR < end {
            if state.overlay.contains_key(&s) || state.chosen.contains_key(&s) {
                let (start, stop) = ((s * SECTOR).max(offset), ((s + 1) * SECTOR).min(end));
                self.state_sector(slot, s, &mut sector)?;
                let from = (start - s * SECTOR) as usize;
                buf[(start - offset) as usize..(stop - offset) as usize]
                    .copy_from_slice(&sector[from..from + (stop - start) as usize]);
            }
            s += 1;
        }
        Ok(())
    }

    /// Writes `data` into crash image `slot`'s overlay at `offset`.
    fn write_state(&mut self, slot: usize, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let end = offset + data.len() as u64;
        let mut s = offset / SECTOR;
        while s * SECTOR < end {
            let (start, stop) = ((s * SECTOR).max(offset), ((s + 1) * SECTOR).min(end));
            let mut sector = vec![0u8; SECTOR as usize].into_boxed_slice();
            if stop - start < SECTOR {
                self.state_sector(slot, s, &mut sector)?;
            }
            let from = (start - s * SECTOR) as usize;
            sector[from..from + (stop - start) as usize]
                .copy_from_slice(&data[(start - offset) as usize..(stop - offset) as usize]);
            self.states[slot].overlay.insert(s, sector);
            s += 1;
        }
        Ok(())
    }
}

/// Reads `out.len()` bytes at `offset`; what lies past the end of the file reads as zeroes.
fn read_or_zero(file: &File, out: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < out.len() {
        match file.read_at(&mut out[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out[done..].fill(0);
    Ok(())
}

/// The slot of a crash image's inode.
fn slot_of(ino: u64, slots: usize) -> Option<usize> {
    let k = ino.checked_sub(IMAGE_INO + 1)? as usize;
    (k < slots).then_some(k)
}

/// The name of crash image `slot` in the recorder's directory.
pub(crate) fn state_name(slot: usize) -> String {
    format!("state-{slot}")
}

/// The handle both sides lock.
pub(crate) type SharedHandle = Arc<Mutex<Shared>>;

pub(crate) fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panic in one thread must not stop teardown or logging in another: every change to
    // the shared state is a single push or write.
    shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The FUSE filesystem.
#[derive(Debug)]
pub(crate) struct RecorderFs {
    pub shared: SharedHandle,
}

fn attr(ino: u64, size: u64) -> FileAttr {
    let dir = ino == fuser::FUSE_ROOT_ID;
    FileAttr {
        ino,
        size: if dir { 0 } else { size },
        blocks: if dir { 0 } else { size.div_ceil(512) },
        atime: UNIX_EPOCH,
        mtime: UNIX_EPOCH,
        ctime: UNIX_EPOCH,
        crtime: UNIX_EPOCH,
        kind: if dir { FileType::Directory } else { FileType::RegularFile },
        perm: if dir { 0o700 } else { 0o600 },
        nlink: if dir { 2 } else { 1 },
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

impl RecorderFs {
    fn size(&self) -> u64 {
        lock(&self.shared).size
    }
}

impl Filesystem for RecorderFs {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let slots = lock(&self.shared).states.len();
        if parent == fuser::FUSE_ROOT_ID && name == IMAGE_NAME {
            reply.entry(&TTL, &attr(IMAGE_INO, self.size()), 0);
        } else if let Some(k) = (0..slots).find(|k| parent == fuser::FUSE_ROOT_ID && name == state_name(*k).as_str()) {
            reply.entry(&TTL, &attr(IMAGE_INO + 1 + k as u64, self.size()), 0);
        } else {
            reply.error(libc::ENOENT);
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        let slots = lock(&self.shared).states.len();
        match ino {
            fuser::FUSE_ROOT_ID | IMAGE_INO => reply.attr(&TTL, &attr(ino, self.size())),
            _ if slot_of(ino, slots).is_some() => reply.attr(&TTL, &attr(ino, self.size())),
            _ => reply.error(libc::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
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
        // The device has a fixed size: a truncate to another size is refused, the rest (times
        // a loop device's open may touch) is accepted and ignored.
        if size.is_some_and(|s| s != self.size()) {
            reply.error(libc::EPERM);
        } else {
            reply.attr(&TTL, &attr(ino, self.size()));
        }
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        // Crash images too: each composition replaces a state's bytes under the same inode,
        // so no page cache may stand between it and the loop device or the checker.
        if ino == IMAGE_INO || slot_of(ino, lock(&self.shared).states.len()).is_some() {
            reply.opened(0, FOPEN_DIRECT_IO);
        } else {
            reply.error(libc::EISDIR);
        }
    }

    #[allow(clippy::too_many_arguments)]
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
        let shared = lock(&self.shared);
        let offset = offset.max(0) as u64;
        let len = (size as u64).min(shared.size.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; len];
        let read = match slot_of(ino, shared.states.len()) {
            Some(slot) => shared.read_state(slot, offset, &mut buf),
            None => shared.backing.read_exact_at(&mut buf, offset),
        };
        match read {
            Ok(()) => reply.data(&buf),
            Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }

    #[allow(clippy::too_many_arguments)]
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
        let mut shared = lock(&self.shared);
        let offset = offset.max(0) as u64;
        if offset + data.len() as u64 > shared.size {
            reply.error(libc::ENOSPC);
            return;
        }
        // A crash image: recovery's own writes go to its overlay, never to the log.
        if let Some(slot) = slot_of(ino, shared.states.len()) {
            match shared.write_state(slot, offset, data) {
                Ok(()) => reply.written(data.len() as u32),
                Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
            }
            return;
        }
        // Logged first: a write the log could not keep is failed, never answered.
        if let Err(e) = shared.log.write(offset, data) {
            reply.error(e.raw_os_error().unwrap_or(libc::EIO));
            return;
        }
        match shared.backing.write_all_at(data, offset) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lock_owner: u64, reply: ReplyEmpty) {
        // close(2), not a persistence point.
        reply.ok();
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        // Covers exactly the writes answered before it arrived: the server answers one
        // request at a time, so that is everything logged so far. A crash image's flush
        // changes nothing: it is not recorded.
        let mut shared = lock(&self.shared);
        if slot_of(ino, shared.states.len()).is_none() {
            shared.log.flush();
        }
        reply.ok();
    }

    fn fsyncdir(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        lock(&self.shared).log.flush();
        reply.ok();
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
        let mut shared = lock(&self.shared);
        let (offset, length) = (offset.max(0) as u64, length.max(0) as u64);
        let zeroing = mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0;
        if !zeroing {
            // A plain allocation of a fixed-size device changes no byte.
            reply.ok();
            return;
        }
        let end = (offset + length).min(shared.size);
        let length = end.saturating_sub(offset);
        if let Some(slot) = slot_of(ino, shared.states.len()) {
            // Recovery's discard on a crash image: zeroes in its overlay.
            let zeros = vec![0u8; length as usize];
            match shared.write_state(slot, offset, &zeros) {
                Ok(()) => reply.ok(),
                Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
            }
            return;
        }
        shared.log.zero(offset, length);
        // Zeroes written through, so the live image reads as the device would.
        let zeros = vec![0u8; 1 << 16];
        let mut at = offset;
        while at < end {
            let n = (end - at).min(zeros.len() as u64) as usize;
            if let Err(e) = shared.backing.write_all_at(&zeros[..n], at) {
                reply.error(e.raw_os_error().unwrap_or(libc::EIO));
                return;
            }
            at += n as u64;
        }
        reply.ok();
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        let blocks = self.size() / 4096;
        reply.statfs(blocks, 0, 0, 2, 0, 4096, 255, 4096);
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        if ino != fuser::FUSE_ROOT_ID {
            reply.error(libc::ENOTDIR);
            return;
        }
        let mut entries = vec![
            (fuser::FUSE_ROOT_ID, FileType::Directory, ".".to_string()),
            (fuser::FUSE_ROOT_ID, FileType::Directory, "..".to_string()),
            (IMAGE_INO, FileType::RegularFile, IMAGE_NAME.to_string()),
        ];
        for k in 0..lock(&self.shared).states.len() {
            entries.push((IMAGE_INO + 1 + k as u64, FileType::RegularFile, state_name(k)));
        }
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset.max(0) as usize) {
            if reply.add(*ino, (i + 1) as i64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn scratch(name: &str, bytes: &[u8]) -> File {
        let path = std::env::temp_dir().join(format!("fsarena-vimg-{name}-{}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }

    #[test]
    fn a_virtual_crash_image_is_the_base_with_the_chosen_writes_and_its_own_overlay() {
        let size = 8 * SECTOR;
        let base = scratch("base", &vec![b'b'; size as usize]);
        let mut shared = Shared {
            backing: scratch("live", &vec![0; size as usize]),
            size,
            log: Log::new(scratch("spill", b""), 1 << 20),
            base,
            states: vec![VirtualImage::default()],
        };
        shared.log.write(SECTOR, &vec![b'1'; 2 * SECTOR as usize]).unwrap(); // entry 0
        shared.log.flush(); // entry 1
        shared.log.write(2 * SECTOR, &vec![b'2'; 2 * SECTOR as usize]).unwrap(); // entry 2
        shared.log.zero(5 * SECTOR, SECTOR); // entry 3
        let image = |shared: &Shared| {
            let mut buf = vec![0u8; size as usize];
            shared.read_state(0, 0, &mut buf).unwrap();
            buf.chunks(SECTOR as usize).map(|c| c[0]).collect::<Vec<u8>>()
        };
        // Both writes in log order (the second over the first's second sector), the zeroing.
        shared.compose(0, &[0, 2, 3], None).unwrap();
        assert_eq!(image(&shared), b"b122b\0bb");
        // The first write only, then the second torn after one sector.
        shared.compose(0, &[0], Some((2, SECTOR))).unwrap();
        assert_eq!(image(&shared), b"b12bbbbb");
        // Recovery's writes (here across a sector boundary) go to the overlay, not the log.
        shared.write_state(0, SECTOR - 2, b"xyzw").unwrap();
        let mut at = [0u8; 4];
        shared.read_state(0, SECTOR - 2, &mut at).unwrap();
        assert_eq!(&at, b"xyzw");
        assert_eq!(shared.log.entries().len(), 4);
        // A new composition starts from a clean overlay.
        shared.compose(0, &[], None).unwrap();
        assert_eq!(image(&shared), b"bbbbbbbb");
        // A write not in whole sectors cannot be composed: the caller copies instead.
        shared.log.write(100, b"odd").unwrap(); // entry 4
        assert_eq!(shared.compose(0, &[4], None), Err(libc::EINVAL));
    }
}
