//! What one thread does: its flowop list in a loop, each flowop with filebench's semantics
//! (`flowop_library.c`), timed as filebench times it (from just before the system call to
//! just after; a pick of a file and an untimed re-open are outside).

use super::control::{Events, Sem, Wake};
use super::fileset::{Fileset, Want};
use super::model::Mode;
use super::vocabulary::{Flowop, Kind};
use fsarena_core::LatencyHistogram;
use fsarena_workload::phase::OpTimer;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode as Perm, OFlags, SeekFrom};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Live totals of one flowop name over all threads (for limits and finishoncount).
#[derive(Debug, Default)]
pub struct Live {
    /// Operations.
    pub ops: AtomicU64,
    /// Bytes.
    pub bytes: AtomicU64,
}

/// `act` on the directory holding `rel` (reached below `below` with no link followed) and
/// `rel`'s last name: filebench's calls by path, made where the target cannot redirect them.
fn by_name(
    below: &fsarena_workload::served::Below,
    rel: &Path,
    act: impl FnOnce(BorrowedFd<'_>, &std::ffi::OsStr) -> rustix::io::Result<()>,
) -> std::io::Result<()> {
    let (dir, name) = below.parent(rel)?;
    Ok(act(dir.as_fd(), name)?)
}

/// What every thread shares.
#[derive(Debug)]
pub struct Shared<'a> {
    /// The filesets.
    pub filesets: &'a [Fileset],
    /// Where they are.
    pub root: &'a Path,
    /// `root`, held: every file and directory is reached below it with no link followed.
    pub below: &'a fsarena_workload::served::Below,
    /// Per flowop name (slot), live.
    pub live: &'a [Live],
    /// I/O flowops over all threads: ops, bytes, reads + writes.
    pub io_ops: AtomicU64,
    /// Bytes of the I/O flowops.
    pub io_bytes: AtomicU64,
    /// Reads and writes.
    pub io_rw: AtomicU64,
    /// The event generator, when `eventgen` set a rate.
    pub events: Option<&'a Events>,
    /// Semaphores by semblock name: one per thread instance running it.
    pub sems: &'a HashMap<String, Vec<Sem>>,
    /// Block flowops by name.
    pub blocks: &'a HashMap<String, Wake>,
    /// The run is over (time, done, failure or Ctrl-C): every thread returns.
    pub end: &'a AtomicBool,
    /// When the run's time is up.
    pub deadline: Instant,
    /// `set mode quit`.
    pub mode: Mode,
}

impl Shared<'_> {
    /// True once the run is over.
    pub fn over(&self) -> bool {
        self.end.load(Relaxed) || Instant::now() >= self.deadline
    }
}

/// One flowop name's figures on one thread.
#[derive(Debug, Default, Clone)]
pub struct Local {
    /// Operations.
    pub ops: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Latencies.
    pub hist: LatencyHistogram,
}

/// Why a thread stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Time is up, or another thread ended the run.
    Over,
    /// A finishoncount/finishonbytes was reached, or (firstdone) a fileset ran out.
    Done,
    /// `set mode quit alldone`: this thread found no file to work on and stops; the others go on.
    Idle,
    /// A flowop found no file (or directory) to work on; the message says which.
    NoFile(String),
    /// A system call failed.
    Failed(String),
}

/// A flowop with its result slot and its target's.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// The flowop.
    pub op: &'a Flowop,
    /// Its slot in [`Shared::live`] and the thread's figures.
    pub slot: usize,
    /// The slot of its `target=` flowop.
    pub target: Option<usize>,
    /// A semblock's: which of its name's semaphores is this thread's.
    pub sem: usize,
}

/// aiowrite and aiowait on io_uring; a child module, so that it works on the thread's state.
#[path = "aio.rs"]
pub(super) mod aio;

#[derive(Debug)]
struct OpenFile {
    /// Shared with the asynchronous writes in flight on it, which keep it open.
    fd: Rc<OwnedFd>,
    set: usize,
    entry: usize,
}

/// Where in a thread's memory an I/O of `len` bytes goes, as filebench places it
/// (flowoplib_iobufsetup):
/// - with a `memsize`, at a random offset in [0, memsize - len], a multiple of len (of len +
///   the alignment with directio, then aligned), so that a run's copies spread over that
///   memory as filebench's do; without one, at the start (filebench's private buffer of the
///   flowop, reused);
/// - past [`MALLOC_SKEW`] for buffered I/O: filebench's memory comes from malloc, 16 bytes past
///   a page. The kernel's copies to and from such an address cost more than to a page-aligned
///   one: webserver on tmpfs, 2 vCPUs, ran 0.4M ops/s from page + 16 and 0.5-0.6M from page +
///   0, filebench itself 0.37M.
///
/// The buffer holds `memsize` (or the largest I/O) plus a page.
fn place(rng: &mut fastrand::Rng, memsize: usize, directio: bool, len: usize) -> std::ops::Range<usize> {
    let skew = if directio { 0 } else { MALLOC_SKEW };
    let round = len + if directio { BUF_ALIGN } else { 0 };
    if memsize == 0 || round == 0 || round > memsize {
        return skew..skew + len;
    }
    // fb_random64(memsize, round): floor(u * (memsize - round)), rounded down to round.
    let span = (memsize - round) as f64;
    let mut at = (rng.f64() * span) as usize / round * round;
    if directio {
        at = at.next_multiple_of(BUF_ALIGN);
    }
    skew + at..skew + at + len
}

/// One thread's state.
pub struct Worker<'a> {
    sh: &'a Shared<'a>,
    steps: Vec<Step<'a>>,
    fds: HashMap<u32, OpenFile>,
    buf: fsarena_engine::AlignedBuf,
    /// The thread's `memsize` (0: none): `buf` is that large and each I/O lands at a random
    /// place in it ([`Worker::place`]).
    memsize: usize,
    rng: fastrand::Rng,
    /// Per slot, this thread's figures.
    pub figures: Vec<Local>,
    /// Per step, a limit's last reading and bucket (filebench's fo_tputlast, fo_tputbucket).
    limits: Vec<(u64, i64)>,
    /// The io_uring ring of aiowrite, once the thread has issued one.
    aio: Option<aio::Aio>,
}

impl std::fmt::Debug for Worker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("steps", &self.steps.len())
            .field("open", &self.fds.len())
            .finish_non_exhaustive()
    }
}

type Outcome = Result<(), End>;

/// The I/O buffer's alignment (O_DIRECT's, on any block size up to a page).
const BUF_ALIGN: usize = 4096;

/// Where buffered I/O starts past a page boundary: glibc's malloc returns a large block 16
/// bytes past a page (its chunk header), and filebench's I/O memory comes from malloc.
const MALLOC_SKEW: usize = 16;

/// The fileset a checked flowop picks from (the model guarantees one).
fn set_of(op: &Flowop) -> usize {
    op.fileset.unwrap_or(0)
}

impl<'a> Worker<'a> {
    /// A thread running `steps`, with an I/O buffer of `buffer` bytes, or of the thread's
    /// `memsize` when that is given (filled at once, as filebench memsets it, so that no I/O
    /// meets a page never touched).
    pub fn new(
        sh: &'a Shared<'a>,
        steps: Vec<Step<'a>>,
        slots: usize,
        buffer: usize,
        memsize: usize,
        seed: u64,
    ) -> Self {
        let n = steps.len();
        // A page more than asked: room for MALLOC_SKEW.
        let mut buf = fsarena_engine::AlignedBuf::new(buffer.max(memsize).max(BUF_ALIGN) + BUF_ALIGN, BUF_ALIGN);
        if memsize > 0 {
            buf.as_mut_slice().fill(0);
        }
        Worker {
            sh,
            steps,
            fds: HashMap::new(),
            buf,
            memsize,
            rng: fastrand::Rng::with_seed(seed),
            figures: vec![Local::default(); slots],
            limits: vec![(0, 0); n],
            aio: None,
        }
    }

    /// Runs the list in a loop until the run is over; closes what it left open.
    pub fn run(&mut self) -> End {
        let mut end = 'run: loop {
            for i in 0..self.steps.len() {
                let step = self.steps[i];
                for _ in 0..step.op.iters {
                    if self.sh.over() {
                        break 'run End::Over;
                    }
                    if let Err(e) = self.exec(i, step) {
                        break 'run e;
                    }
                }
            }
        };
        if let Err(e) = self.drain_aio() {
            if matches!(end, End::Over | End::Done | End::Idle) {
                end = End::Failed(e);
            }
        }
        for (_, f) in self.fds.drain() {
            self.sh.filesets[f.set].closed(f.entry);
        }
        end
    }

    fn record(&mut self, step: Step<'_>, t0: OpTimer, bytes: u64) {
        let ns = t0.ns();
        let f = &mut self.figures[step.slot];
        f.ops += 1;
        f.bytes += bytes;
        f.hist.record(ns);
        let live = &self.sh.live[step.slot];
        live.ops.fetch_add(1, Relaxed);
        live.bytes.fetch_add(bytes, Relaxed);
        if step.op.kind.is_io() {
            self.sh.io_ops.fetch_add(1, Relaxed);
            self.sh.io_bytes.fetch_add(bytes, Relaxed);
            if step.op.kind.reads() || step.op.kind.writes() {
                self.sh.io_rw.fetch_add(1, Relaxed);
            }
        }
    }

    fn fail(op: &Flowop, what: &str, e: impl std::fmt::Display) -> End {
        End::Failed(format!("flowop {} ({} at line {}): {what}: {e}", op.name, op.kind.word(), op.line))
    }

    /// A pick found nothing: filebench's NORSC, whose meaning depends on the mode.
    fn none_left(&self, op: &Flowop, want: Want) -> End {
        if self.sh.over() {
            return End::Over;
        }
        match self.sh.mode {
            Mode::FirstDone => End::Done,
            Mode::AllDone => End::Idle,
            Mode::Timeout => End::NoFile(format!(
                "flowop {} found no {} entry in fileset '{}': reduce the runtime, add entries ($nfiles), or set mode quit firstdone",
                op.name,
                if want == Want::Exists { "existing" } else { "missing" },
                op.fileset_name.as_deref().unwrap_or("?")
            )),
        }
    }

    fn flags(&self, op: &Flowop, set: usize) -> OFlags {
        let mut f = OFlags::CLOEXEC | OFlags::NOFOLLOW;
        f |= if self.sh.filesets[set].def.readonly { OFlags::RDONLY } else { OFlags::RDWR };
        if op.dsync {
            f |= fsarena_engine::O_DSYNC;
        }
        if op.directio {
            f |= OFlags::DIRECT;
        }
        f
    }

    /// Opens a file of the flowop's fileset into slot `fd`, timed when `step` is given.
    fn open(&mut self, step: Step<'_>, fd: u32, create: bool, timed: bool) -> Outcome {
        let op = step.op;
        if self.fds.contains_key(&fd) {
            return Err(Self::fail(op, "open", format!("fd {fd} is already open (closefile it first)")));
        }
        let Some(set) = op.fileset else {
            return Err(Self::fail(op, "open", format!("fd {fd} is not open and the flowop names no fileset")));
        };
        let sh = self.sh;
        let fs = &sh.filesets[set];
        let want = if create { Want::Missing } else { Want::Exists };
        let Some(entry) = fs.pick(want, &|| self.sh.over()) else { return Err(self.none_left(op, want)) };
        let (path, _) = fs.entry(entry);
        let path = self.sh.root.join(path);
        let mut flags = self.flags(op, set);
        if create {
            flags |= OFlags::CREATE | OFlags::TRUNC;
        }
        let t0 = OpTimer::start();
        // No link followed, O_NONBLOCK (a FIFO served in a file's place cannot block).
        let opened = self.sh.below.open(&path, flags, 0o666);
        match opened {
            Ok(file) => {
                // filebench marks the entry idle again inside the timed open
                // (fileset_openfile's fileset_unbusy, under the fileset's lock).
                fs.release(entry, true, 1);
                if timed {
                    self.record(step, t0, 0);
                }
                self.fds.insert(fd, OpenFile { fd: Rc::new(file), set, entry });
                Ok(())
            }
            Err(e) => {
                fs.release(entry, !create, 0);
                Err(Self::fail(op, &format!("open {}", path.display()), e))
            }
        }
    }

    /// The open file of slot `fd`, opening one of the flowop's fileset if the slot is empty
    /// (filebench's `flowoplib_filesetup`), or the next one with `opennext`.
    fn file(&mut self, step: Step<'_>, fd: u32) -> Result<&OpenFile, End> {
        if step.op.opennext {
            if let Some(f) = self.fds.remove(&fd) {
                self.sh.filesets[f.set].closed(f.entry);
            }
        }
        if !self.fds.contains_key(&fd) {
            self.open(step, fd, false, false)?;
        }
        self.fds.get(&fd).ok_or(End::Over)
    }

    fn exec(&mut self, i: usize, step: Step<'_>) -> Outcome {
        let op = step.op;
        match op.kind {
            Kind::OpenFile => self.open(step, op.fd, false, true),
            Kind::CreateFile => self.open(step, op.fd, true, true),
            Kind::CloseFile => {
                let f = self
                    .fds
                    .remove(&op.fd)
                    .ok_or_else(|| Self::fail(op, "close", format!("fd {} is not open", op.fd)))?;
                // As filebench's closefile: the entry is taken (busy) for the close, the
                // close alone is timed, and the entry is given back after it.
                let fs = &self.sh.filesets[f.set];
                if !fs.hold(f.entry, &|| self.sh.over()) {
                    drop(f.fd);
                    fs.closed(f.entry);
                    return Err(End::Over);
                }
                let t0 = OpTimer::start();
                drop(f.fd);
                self.record(step, t0, 0);
                fs.unhold(f.entry, -1);
                Ok(())
            }
            Kind::DeleteFile | Kind::StatFile | Kind::MakeDir | Kind::RemoveDir => self.entry_op(step),
            Kind::Fsync => {
                let f =
                    self.fds.get(&op.fd).ok_or_else(|| Self::fail(op, "fsync", format!("fd {} is not open", op.fd)))?;
                let t0 = OpTimer::start();
                rustix::fs::fsync(&f.fd).map_err(|e| Self::fail(op, "fsync", e))?;
                self.record(step, t0, 0);
                Ok(())
            }
            Kind::FsyncSet => {
                let t0 = OpTimer::start();
                for f in self.fds.values().filter(|f| Some(f.set) == op.fileset) {
                    rustix::fs::fsync(&f.fd).map_err(|e| Self::fail(op, "fsync", e))?;
                }
                self.record(step, t0, 0);
                Ok(())
            }
            Kind::ListDir => {
                let set = op.fileset.unwrap_or(0);
                let Some(dir) = self.sh.filesets[set].next_dir() else { return Err(self.none_left(op, Want::Exists)) };
                let path = self.sh.root.join(dir);
                let cap = self.sh.filesets[set].names();
                let t0 = OpTimer::start();
                let mut bytes = 0;
                let listed = self.sh.below.open(&path, OFlags::RDONLY | OFlags::DIRECTORY, 0).and_then(|d| {
                    // At most the fileset's names: a directory listed without end is an error.
                    fsarena_workload::served::for_each_name(d.as_fd(), &path, cap, |name| {
                        bytes += name.to_bytes().len() as u64;
                        true
                    })
                });
                listed.map_err(|e| Self::fail(op, &format!("list {}", path.display()), e))?;
                self.record(step, t0, bytes);
                Ok(())
            }
            Kind::Read | Kind::Write | Kind::AppendFile | Kind::AppendFileRand => self.io(step),
            Kind::ReadWholeFile | Kind::WriteWholeFile => self.whole(step),
            Kind::AioWrite => self.aiowrite(step),
            Kind::AioWait => self.aiowait(step),
            _ => super::control::exec(self, i, step),
        }
    }

    /// deletefile, statfile, makedir, removedir: on a picked entry, by path.
    fn entry_op(&mut self, step: Step<'_>) -> Outcome {
        let op = step.op;
        let sh = self.sh;
        // With fd=N on an open slot, filebench stats (fstat) or deletes that slot's file.
        if let (Kind::StatFile | Kind::DeleteFile, Some(f)) = (op.kind, self.fds.get(&op.fd).filter(|_| op.fd > 0)) {
            let (set, entry) = (f.set, f.entry);
            if op.kind == Kind::StatFile {
                let t0 = OpTimer::start();
                rustix::fs::fstat(&f.fd).map_err(|e| Self::fail(op, "fstat", e))?;
                self.record(step, t0, 0);
                return Ok(());
            }
            // As filebench's deletefile on a descriptor: the file is taken (busy) first, left
            // alone while another thread also has it open, and after the unlink no longer
            // exists nor counts as open anywhere (fileset_unbusy(..., -open count)).
            let fs = &sh.filesets[set];
            if !fs.hold(entry, &|| self.sh.over()) {
                return Err(End::Over);
            }
            let open = fs.open_count(entry);
            if open > 1 {
                fs.unhold(entry, 0);
                return Ok(());
            }
            let rel = fs.entry(entry).0;
            let path = sh.root.join(&rel);
            let t0 = OpTimer::start();
            let done = by_name(sh.below, &rel, |d, n| rustix::fs::unlinkat(d, n, AtFlags::empty()));
            if let Err(e) = done {
                fs.unhold(entry, 0);
                return Err(Self::fail(op, &path.display().to_string(), e));
            }
            self.record(step, t0, 0);
            fs.release(entry, false, -(open as i32));
            return Ok(());
        }
        let fs = &sh.filesets[set_of(op)];
        let want = if op.kind == Kind::MakeDir { Want::Missing } else { Want::Exists };
        let Some(entry) = fs.pick(want, &|| self.sh.over()) else { return Err(self.none_left(op, want)) };
        // filebench does not delete a file another thread has open: the pass is skipped.
        if op.kind == Kind::DeleteFile && fs.open_count(entry) > 0 {
            fs.release(entry, true, 0);
            return Ok(());
        }
        let rel = fs.entry(entry).0;
        let path = self.sh.root.join(&rel);
        let below = self.sh.below;
        let t0 = OpTimer::start();
        let (done, exists) = match op.kind {
            Kind::DeleteFile => (by_name(below, &rel, |d, n| rustix::fs::unlinkat(d, n, AtFlags::empty())), false),
            Kind::StatFile => {
                (by_name(below, &rel, |d, n| rustix::fs::statat(d, n, AtFlags::SYMLINK_NOFOLLOW).map(drop)), true)
            }
            Kind::MakeDir => (by_name(below, &rel, |d, n| rustix::fs::mkdirat(d, n, Perm::from_raw_mode(0o755))), true),
            _ => (by_name(below, &rel, |d, n| rustix::fs::unlinkat(d, n, AtFlags::REMOVEDIR)), false),
        };
        match done {
            Ok(()) => {
                self.record(step, t0, 0);
                fs.release(entry, exists, 0);
                Ok(())
            }
            Err(e) => {
                fs.release(entry, want == Want::Exists, 0);
                Err(Self::fail(op, &path.display().to_string(), e))
            }
        }
    }

    /// read, write, appendfile, appendfilerand: one I/O of iosize (appendfilerand: a random
    /// size up to it), at a random offset within the working set or where the last ended.
    fn io(&mut self, step: Step<'_>) -> Outcome {
        let op = step.op;
        let mut len = op.iosize;
        if op.kind == Kind::AppendFileRand {
            // fb_random64(iosize, round 1): floor(u * (iosize - 1)), u in [0, 1].
            len = self.rng.u64(0..op.iosize.saturating_sub(1).max(1));
            if len == 0 {
                // filebench counts a zero-length append as an operation of no bytes.
                self.record(step, OpTimer::start(), 0);
                return Ok(());
            }
        }
        let len = len.min(self.room() as u64) as usize;
        let (set, entry) = {
            let f = self.file(step, op.fd)?;
            (f.set, f.entry)
        };
        let size = self.sh.filesets[set].entry(entry).1;
        let wss = if op.workingset > 0 { op.workingset } else { size };
        let offset = if op.random && matches!(op.kind, Kind::Read | Kind::Write) {
            Some(self.random_offset(op, wss, len as u64)?)
        } else {
            None
        };
        let mem = self.place(op, len);
        let Some(f) = self.fds.get(&op.fd) else { return Err(End::Over) };
        let t0 = OpTimer::start();
        let done = match (op.kind, offset) {
            (Kind::Read, Some(at)) => rustix::io::pread(&f.fd, &mut self.buf.as_mut_slice()[mem], at),
            (Kind::Read, None) => rustix::io::read(&f.fd, &mut self.buf.as_mut_slice()[mem]),
            (Kind::Write, Some(at)) => rustix::io::pwrite(&f.fd, &self.buf.as_slice()[mem], at),
            (Kind::Write, None) => rustix::io::write(&f.fd, &self.buf.as_slice()[mem]),
            _ => rustix::fs::seek(&f.fd, SeekFrom::End(0))
                .and_then(|_| rustix::io::write(&f.fd, &self.buf.as_slice()[mem])),
        };
        let n = done.map_err(|e| Self::fail(op, op.kind.word(), e))?;
        if n == 0 && op.kind == Kind::Read && offset.is_none() {
            // At the end of the file a sequential reader starts again from the beginning.
            rustix::fs::seek(&f.fd, SeekFrom::Start(0)).map_err(|e| Self::fail(op, "seek", e))?;
        }
        self.record(step, t0, n as u64);
        Ok(())
    }

    /// The most one I/O moves: the buffer less the page kept for [`MALLOC_SKEW`].
    fn room(&self) -> usize {
        self.buf.as_slice().len() - BUF_ALIGN
    }

    /// Where in the thread's memory an I/O of `len` bytes goes: [`place`].
    fn place(&mut self, op: &Flowop, len: usize) -> std::ops::Range<usize> {
        place(&mut self.rng, self.memsize, op.directio, len)
    }

    /// A random offset for `len` bytes within the first `wss` bytes, a multiple of `len`.
    fn random_offset(&mut self, op: &Flowop, wss: u64, len: u64) -> Result<u64, End> {
        if len > wss {
            return Err(Self::fail(op, "random I/O", format!("the file ({wss} bytes) is smaller than iosize ({len})")));
        }
        Ok(self.rng.u64(0..=(wss - len) / len) * len)
    }

    /// readwholefile and writewholefile, one operation each, as filebench's: readwholefile
    /// seeks to the start and reads iosize pieces until end of file; writewholefile writes the
    /// size of srcfd's file (or of its own) in iosize pieces from the descriptor's position.
    fn whole(&mut self, step: Step<'_>) -> Outcome {
        let op = step.op;
        let (set, entry) = {
            let f = self.file(step, op.fd)?;
            (f.set, f.entry)
        };
        let mut size = self.sh.filesets[set].entry(entry).1;
        if let Some(src) = op.srcfd.and_then(|s| self.fds.get(&s)) {
            size = self.sh.filesets[src.set].entry(src.entry).1;
        }
        let cap = self.room() as u64;
        let piece = (if op.iosize == 0 { cap } else { op.iosize.min(cap) }) as usize;
        let mem = self.place(op, piece);
        let Some(f) = self.fds.get(&op.fd) else { return Err(End::Over) };
        let t0 = OpTimer::start();
        let mut bytes = 0u64;
        if op.kind == Kind::ReadWholeFile {
            // filebench's calls: a seek to the start, then reads until end of file.
            rustix::fs::seek(&f.fd, SeekFrom::Start(0)).map_err(|e| Self::fail(op, "seek", e))?;
            loop {
                let n = rustix::io::read(&f.fd, &mut self.buf.as_mut_slice()[mem.clone()])
                    .map_err(|e| Self::fail(op, "read", e))?;
                if n == 0 {
                    break;
                }
                bytes += n as u64;
            }
        } else {
            // filebench's loop, from the descriptor's position: the next piece's size is
            // taken from the offset before the step, so a file that is not a multiple of
            // iosize gets one piece more than it needs (10k in 4k pieces: 4k, 4k, 4k).
            let piece = piece as u64;
            let (mut seek, mut wsize) = (0u64, size.min(piece));
            while seek < size {
                let n = rustix::io::write(&f.fd, &self.buf.as_slice()[mem.start..mem.start + wsize as usize])
                    .map_err(|e| Self::fail(op, "write", e))?;
                if n as u64 != wsize {
                    return Err(Self::fail(op, "write", format!("{n} of {wsize} bytes written")));
                }
                bytes += wsize;
                wsize = (size - seek).min(piece);
                seek += wsize;
            }
        }
        self.record(step, t0, bytes);
        Ok(())
    }

    /// For the control flowops: the shared state.
    pub(super) fn shared(&self) -> &'a Shared<'a> {
        self.sh
    }

    /// For the control flowops: records an operation of `step` that started at `t0`.
    pub(super) fn done(&mut self, step: Step<'_>, t0: OpTimer) {
        self.record(step, t0, 0);
    }

    /// For the limits: step `i`'s last reading and bucket.
    pub(super) fn limit(&mut self, i: usize) -> &mut (u64, i64) {
        &mut self.limits[i]
    }

    /// Sleeps up to `d`, returning early when the run is over.
    pub(super) fn sleep(&self, d: Duration) {
        let until = Instant::now() + d;
        while !self.sh.over() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_lands_in_memsize_at_multiples_of_its_size_16_bytes_past_a_page_as_filebenchs() {
        let mut rng = fastrand::Rng::with_seed(3);
        let (memsize, len) = (10 << 20, 1 << 20);
        let mut starts = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let r = place(&mut rng, memsize, false, len);
            assert_eq!(r.len(), len);
            assert_eq!((r.start - MALLOC_SKEW) % len, 0, "{r:?}");
            assert!(r.end <= memsize + MALLOC_SKEW, "{r:?}");
            starts.insert(r.start);
        }
        // floor(u * 9 MiB) / 1 MiB: the nine slots 0..9 MiB, never the tenth (9 MiB would end
        // past memsize).
        assert_eq!(starts.len(), 9, "{starts:?}");
        // appendfilerand's sizes are not multiples of a page: still 16 bytes past a multiple.
        let r = place(&mut rng, memsize, false, 12_345);
        assert_eq!((r.start - MALLOC_SKEW) % 12_345, 0);
    }

    #[test]
    fn without_memsize_io_reuses_one_place_and_directio_stays_aligned() {
        let mut rng = fastrand::Rng::with_seed(5);
        assert_eq!(place(&mut rng, 0, false, 8192), MALLOC_SKEW..MALLOC_SKEW + 8192);
        assert_eq!(place(&mut rng, 0, true, 8192), 0..8192);
        for _ in 0..500 {
            let r = place(&mut rng, 10 << 20, true, 8192);
            assert_eq!(r.start % BUF_ALIGN, 0, "{r:?}");
            assert!(r.end <= 10 << 20, "{r:?}");
        }
        // An I/O as large as memsize (whole-file reads of iosize 0) starts at the beginning.
        assert_eq!(place(&mut rng, 1 << 20, false, 1 << 20), MALLOC_SKEW..MALLOC_SKEW + (1 << 20));
    }
}
