//! The recorder's FUSE server: one directory holding `image`, the recorded device, and one
//! crash image per slot (`state-K`), each a [`VirtualImage`] over the freshly made base image
//! (never written). Every WRITE to `image` is appended to the log (its data to the spill file)
//! before it is answered, and read back from there; FSYNC closes an epoch; FALLOCATE
//! punch/zero is logged as a zeroing write.
//! The kernel's loop driver turns every block-layer flush into an FSYNC on the image, in order
//! with the writes, so the log is the device's write history with its persistence points.
//!
//! Written against fuser's low-level `Filesystem` trait: the file is opened with
//! `FOPEN_DIRECT_IO` (no page cache between the loop device and the log) and the mount never
//! asks for `writeback_cache`. Speed (bench/record_overhead.sh, perf): the loop device does
//! direct I/O to the file, asynchronously (`FUSE_ASYNC_DIO`), so its next requests wait in the
//! FUSE queue while the server logs one, instead of the loop worker and the server taking
//! turns; WRITEs are up to 1 MiB (`MAX_WRITE`, not the default 128 KiB); and a written
//! sector costs a store into a [`SectorMap`], not a hash insert. The server still answers one
//! request at a time, in the order they were queued, so the log's order is the order the
//! writes were answered and a flush covers every write answered before it. FSYNC, FSYNCDIR, FALLOCATE and STATFS are implemented: an ENOSYS
//! answer to FSYNC would make the kernel stop sending flushes at all.

use super::log::Log;
use fuser::{
    consts::FOPEN_DIRECT_IO, FileAttr, FileType, Filesystem, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
};
use rustc_hash::FxHashMap as HashMap;
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

/// What the server and fsarena share: the images and the log.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The images' size, fixed.
    pub size: u64,
    /// The write history.
    pub log: Log,
    /// The freshly made filesystem every generated workload starts from, never written.
    pub base: File,
    /// The recorded device as it reads now: the base with every logged write over it, a
    /// copy-on-write view that a new generated workload starts again from the base.
    pub live: VirtualImage,
    /// One virtual crash image per slot.
    pub states: Vec<VirtualImage>,
}

/// An image without a copy: the base, with some sectors read from the spill file (the logged
/// writes that reached them) and some held here. The live image is one (every write so far),
/// and so is each crash image (the chosen writes, then what recovery writes: journal replay,
/// the sanity pass). Built by the server from its own log, so that nothing but a list of
/// entry numbers crosses the control socket.
#[derive(Debug, Default)]
pub(crate) struct VirtualImage {
    /// Sector → where its bytes are now: Some(offset in the spill file), None: zeroes.
    spilled: SectorMap,
    /// Sector → its bytes, when no one logged write has them all: a sector a write covered in
    /// part, or one recovery wrote.
    own: HashMap<u64, Box<[u8]>>,
}

/// Sector → Some(offset in the spill file) or None (zeroes), for the sectors that have one.
///
/// Two levels, not a hash map of sectors: a 1 MiB write sets 2,048 sectors, and a hash insert
/// for each was the server's largest cost of its own (perf, bench/record_overhead.sh); here a
/// sector is a store into a run of `RUN` entries, allocated when one of them is first set.
#[derive(Debug, Default)]
struct SectorMap {
    runs: HashMap<u64, Box<[u64]>>,
}

/// Sectors per run of the [`SectorMap`] (2 MiB of image, 32 KiB of table).
const RUN: u64 = 4096;
/// An entry with nothing: the sector is the base's (or held elsewhere).
const UNSET: u64 = 0;
/// An entry that reads as zeroes. Any other entry is its spill offset plus one.
const ZEROES: u64 = u64::MAX;

impl SectorMap {
    fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    fn get(&self, sector: u64) -> Option<Option<u64>> {
        match self.runs.get(&(sector / RUN))?[(sector % RUN) as usize] {
            UNSET => None,
            ZEROES => Some(None),
            at => Some(Some(at - 1)),
        }
    }

    /// Sets `count` sectors from `first` on: to the spill bytes that follow on from `at`, or
    /// to zeroes.
    fn set(&mut self, first: u64, count: u64, at: Option<u64>) {
        let mut s = first;
        while s < first + count {
            let run = self.runs.entry(s / RUN).or_insert_with(|| vec![UNSET; RUN as usize].into_boxed_slice());
            let stop = (first + count).min((s / RUN + 1) * RUN);
            for (i, entry) in run[(s % RUN) as usize..(stop - (s / RUN) * RUN) as usize].iter_mut().enumerate() {
                *entry = at.map_or(ZEROES, |at| at + (s - first + i as u64) * SECTOR + 1);
            }
            s = stop;
        }
    }

    fn remove(&mut self, sector: u64) {
        if let Some(run) = self.runs.get_mut(&(sector / RUN)) {
            run[(sector % RUN) as usize] = UNSET;
        }
    }
}

/// One of the server's images.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Which {
    /// The recorded device.
    Live,
    /// Crash image `slot`.
    State(usize),
}

impl Shared {
    fn image(&self, which: Which) -> &VirtualImage {
        match which {
            Which::Live => &self.live,
            Which::State(slot) => &self.states[slot],
        }
    }

    fn image_mut(&mut self, which: Which) -> &mut VirtualImage {
        match which {
            Which::Live => &mut self.live,
            Which::State(slot) => &mut self.states[slot],
        }
    }

    /// Composes crash image `slot`: the base plus, in log order, the writes `keep` names
    /// (entry numbers) and the first `torn.1` bytes of write `torn.0`; recovery starts on it
    /// with nothing of its own.
    pub(crate) fn compose(&mut self, slot: usize, keep: &[u64], torn: Option<(u64, u64)>) -> Result<(), i32> {
        let state = self.states.get_mut(slot).ok_or(libc::ENOENT)?;
        *state = VirtualImage::default();
        let entries = self.log.entries();
        let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
        let pieces = keep.iter().map(|&i| (i, None)).chain(torn.map(|(i, bytes)| (i, Some(bytes))));
        for (i, limit) in pieces {
            match entries.get(i as usize) {
                Some(super::log::Entry::Write { offset, len, spill }) => {
                    let len = limit.map_or(*len, |l| l.min(*len));
                    self.put(Which::State(slot), *offset, len, Some(*spill)).map_err(errno)?;
                }
                Some(super::log::Entry::Zero { offset, len }) => {
                    self.put(Which::State(slot), *offset, *len, None).map_err(errno)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Puts `len` bytes at `offset` into image `which`: the spill file's bytes from `spill`
    /// on, or zeroes. A sector they cover whole points at them; one they cover in part is
    /// read, changed and held.
    fn put(&mut self, which: Which, offset: u64, len: u64, spill: Option<u64>) -> std::io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        let end = offset + len;
        // The sectors covered whole, set in one go; the one or two covered in part, held.
        let (first, last) = (offset.div_ceil(SECTOR), end / SECTOR);
        if first < last {
            let image = self.image_mut(which);
            if !image.own.is_empty() {
                for s in first..last {
                    image.own.remove(&s);
                }
            }
            image.spilled.set(first, last - first, spill.map(|at| at + (first * SECTOR - offset)));
        }
        let mut part = |start: u64, stop: u64| -> std::io::Result<()> {
            let mut bytes = vec![0u8; (stop - start) as usize];
            if let Some(at) = spill {
                self.log.read_spill(&mut bytes, at + (start - offset))?;
            }
            self.hold(which, start, &bytes)
        };
        if first > last {
            // Within one sector.
            return part(offset, end);
        }
        if offset < first * SECTOR {
            part(offset, first * SECTOR)?;
        }
        if last * SECTOR < end {
            part(last * SECTOR, end)?;
        }
        Ok(())
    }

    /// Writes `data` at `offset` into image `which`'s own sectors (recovery's writes, never
    /// logged).
    fn hold(&mut self, which: Which, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let end = offset + data.len() as u64;
        let mut s = offset / SECTOR;
        while s * SECTOR < end {
            let (start, stop) = ((s * SECTOR).max(offset), ((s + 1) * SECTOR).min(end));
            let mut sector = vec![0u8; SECTOR as usize].into_boxed_slice();
            if stop - start < SECTOR {
                self.read(which, s * SECTOR, &mut sector)?;
            }
            let from = (start - s * SECTOR) as usize;
            sector[from..from + (stop - start) as usize]
                .copy_from_slice(&data[(start - offset) as usize..(stop - offset) as usize]);
            let image = self.image_mut(which);
            image.spilled.remove(s);
            image.own.insert(s, sector);
            s += 1;
        }
        Ok(())
    }

    /// `buf.len()` bytes of image `which` at `offset` (within the image): the base's bytes in
    /// one read, then the sectors the image takes from elsewhere put over them, a run of
    /// sectors whose bytes follow on in the spill file (one write's) in one read.
    fn read(&self, which: Which, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        read_or_zero(&self.base, buf, offset)?;
        let image = self.image(which);
        if image.spilled.is_empty() && image.own.is_empty() {
            return Ok(());
        }
        let end = offset + buf.len() as u64;
        let mut s = offset / SECTOR;
        while s * SECTOR < end {
            let start = (s * SECTOR).max(offset);
            let within = start - s * SECTOR;
            if let Some(bytes) = image.own.get(&s) {
                let stop = ((s + 1) * SECTOR).min(end);
                buf[(start - offset) as usize..(stop - offset) as usize]
                    .copy_from_slice(&bytes[within as usize..(within + stop - start) as usize]);
                s += 1;
                continue;
            }
            match image.spilled.get(s) {
                None => s += 1,
                Some(None) => {
                    let stop = ((s + 1) * SECTOR).min(end);
                    buf[(start - offset) as usize..(stop - offset) as usize].fill(0);
                    s += 1;
                }
                Some(Some(at)) => {
                    let mut next = s + 1;
                    while next * SECTOR < end
                        && !image.own.contains_key(&next)
                        && image.spilled.get(next) == Some(Some(at + (next - s) * SECTOR))
                    {
                        next += 1;
                    }
                    let stop = (next * SECTOR).min(end);
                    self.log.read_spill(&mut buf[(start - offset) as usize..(stop - offset) as usize], at + within)?;
                    s = next;
                }
            }
        }
        Ok(())
    }

    /// A write to image `which`: the live image's is logged first (a write the log could not
    /// keep is failed, never answered), then it points at the logged bytes; a crash image's
    /// (recovery's own) is held, never logged.
    fn write(&mut self, which: Which, offset: u64, data: &[u8]) -> std::io::Result<()> {
        match which {
            Which::Live => {
                let at = self.log.write(offset, data)?;
                self.put(which, offset, data.len() as u64, Some(at))
            }
            Which::State(_) => self.hold(which, offset, data),
        }
    }

    /// Zeroes `len` bytes at `offset` (discard, write-zeroes): logged for the live image.
    fn zero(&mut self, which: Which, offset: u64, len: u64) -> std::io::Result<()> {
        if let Which::Live = which {
            self.log.zero(offset, len);
        }
        self.put(which, offset, len, None)
    }

    /// A new generated workload: the log empty, the live image the base again.
    pub(crate) fn reset(&mut self) -> std::io::Result<()> {
        self.live = VirtualImage::default();
        self.log.reset()
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

/// The image an inode is: the recorded one, a crash image, or neither.
fn which(ino: u64, slots: usize) -> Option<Which> {
    match ino {
        IMAGE_INO => Some(Which::Live),
        _ => slot_of(ino, slots).map(Which::State),
    }
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

/// The largest WRITE the server asks for: the kernel allows up to `fs.fuse.max_pages_limit`
/// pages (256 by default, 1 MiB), and each request is one round trip through the server.
const MAX_WRITE: u32 = 1 << 20;

impl Filesystem for RecorderFs {
    fn init(&mut self, _req: &Request<'_>, config: &mut fuser::KernelConfig) -> Result<(), libc::c_int> {
        // More than the kernel allows is cut down to it; less than 1 MiB is not refused.
        let _ = config.set_max_write(MAX_WRITE);
        let _ = config.add_capabilities(fuser::consts::FUSE_ASYNC_DIO);
        Ok(())
    }

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
        let Some(image) = which(ino, shared.states.len()) else {
            reply.error(libc::EISDIR);
            return;
        };
        let offset = offset.max(0) as u64;
        let len = (size as u64).min(shared.size.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; len];
        match shared.read(image, offset, &mut buf) {
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
        let Some(image) = which(ino, shared.states.len()) else {
            reply.error(libc::EISDIR);
            return;
        };
        let offset = offset.max(0) as u64;
        if offset + data.len() as u64 > shared.size {
            reply.error(libc::ENOSPC);
            return;
        }
        match shared.write(image, offset, data) {
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
        let length = (offset + length).min(shared.size).saturating_sub(offset);
        let Some(image) = which(ino, shared.states.len()) else {
            reply.error(libc::EISDIR);
            return;
        };
        // Recovery's discard on a crash image: zeroes it holds. The device's: logged.
        match shared.zero(image, offset, length) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
        }
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
        // Tests run side by side: each file a name of its own.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("fsarena-vimg-{name}-{}-{n}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }

    fn shared(size: u64) -> Shared {
        Shared {
            size,
            log: Log::new(scratch("spill", b""), 1 << 20),
            base: scratch("base", &vec![b'b'; size as usize]),
            live: VirtualImage::default(),
            states: vec![VirtualImage::default()],
        }
    }

    /// The first byte of every sector of `which`.
    fn firsts(shared: &Shared, which: Which) -> Vec<u8> {
        let mut buf = vec![0u8; shared.size as usize];
        shared.read(which, 0, &mut buf).unwrap();
        buf.chunks(SECTOR as usize).map(|c| c[0]).collect()
    }

    /// Random writes and zeroings, aligned or not, some across a [`SectorMap`] run: the live
    /// image and a crash image of a random subset read as the same bytes written into a plain
    /// copy of the base would.
    #[test]
    fn virtual_images_read_as_a_plain_copy_written_the_same_way() {
        let size = 3 * RUN * SECTOR;
        for seed in 0..16u64 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut shared = shared(size);
            shared.log = Log::new(scratch("spill", b""), 64 << 20);
            let mut plain = vec![b'b'; size as usize];
            let mut ops = Vec::new();
            for n in 0..rng.usize(1..30) {
                let len = if rng.bool() { rng.u64(1..3 * SECTOR) } else { rng.u64(1..(RUN + 8) * SECTOR) };
                let offset = if rng.bool() { rng.u64(0..size - len) / SECTOR * SECTOR } else { rng.u64(0..size - len) };
                if rng.u8(0..5) == 0 {
                    shared.zero(Which::Live, offset, len).unwrap();
                    ops.push((offset, len, None));
                } else {
                    let data: Vec<u8> = (0..len).map(|i| (n as u64 * 31 + i % 251) as u8).collect();
                    shared.write(Which::Live, offset, &data).unwrap();
                    ops.push((offset, len, Some(data)));
                }
            }
            let mut kept = vec![b'b'; size as usize];
            let mut keep = Vec::new();
            for (i, (offset, len, data)) in ops.iter().enumerate() {
                let range = *offset as usize..(*offset + *len) as usize;
                let apply = |image: &mut Vec<u8>| match data {
                    Some(d) => image[range.clone()].copy_from_slice(d),
                    None => image[range.clone()].fill(0),
                };
                apply(&mut plain);
                if rng.bool() {
                    apply(&mut kept);
                    keep.push(i as u64);
                }
            }
            let mut live = vec![0u8; size as usize];
            shared.read(Which::Live, 0, &mut live).unwrap();
            assert!(live == plain, "seed {seed}: the live image differs");
            shared.compose(0, &keep, None).unwrap();
            let mut state = vec![0u8; size as usize];
            shared.read(Which::State(0), 0, &mut state).unwrap();
            assert!(state == kept, "seed {seed}: the crash image differs");
            // Read back in odd pieces too.
            let (at, len) = (rng.u64(0..size - 5000), rng.usize(1..5000));
            let mut piece = vec![0u8; len];
            shared.read(Which::Live, at, &mut piece).unwrap();
            assert!(piece[..] == plain[at as usize..at as usize + len], "seed {seed}: a piece differs");
        }
    }

    #[test]
    fn the_live_image_is_the_base_with_every_logged_write_and_starts_again_from_it() {
        let size = 8 * SECTOR;
        let mut shared = shared(size);
        shared.write(Which::Live, SECTOR, &vec![b'1'; 2 * SECTOR as usize]).unwrap();
        shared.zero(Which::Live, 4 * SECTOR, SECTOR).unwrap();
        // Not in whole sectors: the bytes around it stay the base's.
        shared.write(Which::Live, 6 * SECTOR - 3, b"xyzwv").unwrap();
        assert_eq!(firsts(&shared, Which::Live), b"b11b\0bwb");
        let mut at = [0u8; 7];
        shared.read(Which::Live, 6 * SECTOR - 4, &mut at).unwrap();
        assert_eq!(&at, b"bxyzwvb");
        // Every write and zeroing logged; the base untouched.
        assert_eq!(shared.log.entries().len(), 3);
        let mut base = vec![0u8; size as usize];
        shared.base.read_exact_at(&mut base, 0).unwrap();
        assert!(base.iter().all(|b| *b == b'b'));
        // A new generated workload: the base again, an empty log.
        shared.reset().unwrap();
        assert_eq!(firsts(&shared, Which::Live), b"bbbbbbbb");
        assert!(shared.log.entries().is_empty());
    }

    #[test]
    fn a_virtual_crash_image_is_the_base_with_the_chosen_writes_and_its_own_overlay() {
        let size = 8 * SECTOR;
        let mut shared = shared(size);
        shared.write(Which::Live, SECTOR, &vec![b'1'; 2 * SECTOR as usize]).unwrap(); // entry 0
        shared.log.flush(); // entry 1
        shared.write(Which::Live, 2 * SECTOR, &vec![b'2'; 2 * SECTOR as usize]).unwrap(); // entry 2
        shared.zero(Which::Live, 5 * SECTOR, SECTOR).unwrap(); // entry 3
                                                               // Both writes in log order (the second over the first's second sector), the zeroing.
        shared.compose(0, &[0, 2, 3], None).unwrap();
        assert_eq!(firsts(&shared, Which::State(0)), b"b122b\0bb");
        // The first write only, then the second torn after one sector.
        shared.compose(0, &[0], Some((2, SECTOR))).unwrap();
        assert_eq!(firsts(&shared, Which::State(0)), b"b12bbbbb");
        // Recovery's writes (here across a sector boundary) are held, not logged, and the
        // live image does not see them.
        shared.write(Which::State(0), SECTOR - 2, b"xyzw").unwrap();
        let mut at = [0u8; 4];
        shared.read(Which::State(0), SECTOR - 2, &mut at).unwrap();
        assert_eq!(&at, b"xyzw");
        assert_eq!(shared.log.entries().len(), 4);
        assert_eq!(firsts(&shared, Which::Live), b"b122b\0bb");
        // A new composition starts from nothing held.
        shared.compose(0, &[], None).unwrap();
        assert_eq!(firsts(&shared, Which::State(0)), b"bbbbbbbb");
        // A write not in whole sectors (a FUSE daemon's image file) is composed too, over
        // what the writes before it left there; torn inside a sector, its first bytes only.
        shared.write(Which::Live, 2 * SECTOR + 1, b"odd").unwrap(); // entry 4
        shared.compose(0, &[0, 4], None).unwrap();
        let mut at = [0u8; 6];
        shared.read(Which::State(0), 2 * SECTOR - 1, &mut at).unwrap();
        assert_eq!(&at, b"11odd1");
        shared.compose(0, &[0], Some((4, 2))).unwrap();
        shared.read(Which::State(0), 2 * SECTOR - 1, &mut at).unwrap();
        assert_eq!(&at, b"11od11");
        // No such slot.
        assert_eq!(shared.compose(1, &[], None), Err(libc::ENOENT));
    }
}
