//! `verify:mode=fsx`: fsx's single-file model (xfstests' ltp/fsx.c), written from its
//! semantics, not its code. One file of at most `file_length` bytes takes `numops` random
//! operations of at most `max_op_len` bytes each; an in-memory copy of what the file must hold
//! follows every operation, every read is compared with it and the size is checked after
//! every operation. The run stops at the first mismatch, as fsx does.
//!
//! Data as fsx writes it: operation number N puts `N mod 256` at even offsets and
//! `N mod 256` plus a seeded random byte at odd ones, so a wrong byte found at an even offset
//! names the operation (mod 256) that wrote it — the clue fsx prints, and the one that tells
//! stale data (an old write's bytes after a truncate) from a flipped bit.
//!
//! The log of operations is fsx's `.fsxops` format (`write 0x1000 0x200 0x3000`: name, offset,
//! length, the size before; ranges add the destination before the size; `skip` before an
//! operation that did nothing, `keep_size`, and `*` on the operations that touched the bad
//! offset), with a `#` header carrying the seed and sizes, and `replay=FILE` runs it again.

use fsarena_engine::AlignedBuf;
use rustix::fs::FallocateFlags;
use rustix::io::Errno;
use std::fmt::Write as _;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// One of fsx's operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    /// pread of a range inside the file.
    Read,
    /// pwrite of a range anywhere below `file_length`.
    Write,
    /// A read through a shared mapping.
    MapRead,
    /// A write through a shared mapping (the file extended first), msync'd.
    MapWrite,
    /// ftruncate to a random size below `file_length`.
    Truncate,
    /// fallocate, with or without KEEP_SIZE.
    Fallocate,
    /// fallocate PUNCH_HOLE inside the file.
    PunchHole,
    /// fallocate ZERO_RANGE, with or without KEEP_SIZE.
    ZeroRange,
    /// fallocate COLLAPSE_RANGE of whole blocks.
    CollapseRange,
    /// fallocate INSERT_RANGE of whole blocks.
    InsertRange,
    /// copy_file_range inside the file.
    CopyRange,
    /// FICLONERANGE inside the file.
    CloneRange,
    /// FIDEDUPERANGE inside the file (never changes the data).
    DedupeRange,
}

/// Every operation, in fsx's order.
pub const ALL: [Op; 13] = [
    Op::Read,
    Op::Write,
    Op::MapRead,
    Op::MapWrite,
    Op::Truncate,
    Op::Fallocate,
    Op::PunchHole,
    Op::ZeroRange,
    Op::CollapseRange,
    Op::InsertRange,
    Op::CopyRange,
    Op::CloneRange,
    Op::DedupeRange,
];

impl Op {
    /// fsx's name (`ops=` and the .fsxops file).
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::MapRead => "mapread",
            Op::MapWrite => "mapwrite",
            Op::Truncate => "truncate",
            Op::Fallocate => "fallocate",
            Op::PunchHole => "punch_hole",
            Op::ZeroRange => "zero_range",
            Op::CollapseRange => "collapse_range",
            Op::InsertRange => "insert_range",
            Op::CopyRange => "copy_range",
            Op::CloneRange => "clone_range",
            Op::DedupeRange => "dedupe_range",
        }
    }

    /// The operation called `name`.
    pub fn from_name(name: &str) -> Option<Op> {
        ALL.into_iter().find(|o| o.name() == name)
    }

    /// Operations with a destination: four numbers in the log.
    fn ranged(self) -> bool {
        matches!(self, Op::CopyRange | Op::CloneRange | Op::DedupeRange)
    }

    /// Operations that put new bytes at `offset..offset+len` (or at the destination).
    fn writes(self) -> bool {
        matches!(self, Op::Write | Op::MapWrite | Op::CopyRange | Op::CloneRange)
    }
}

/// What a run of fsx is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsxConfig {
    /// Operations to run (fsx `-N`); ignored when replaying.
    pub numops: u64,
    /// The random seed (fsx `-S`): the same seed on the same filesystem gives the same run.
    pub seed: u64,
    /// The file's largest size (fsx `-l`).
    pub file_length: u64,
    /// The largest operation (fsx `-o`).
    pub max_op_len: u64,
    /// O_DIRECT, reads and writes aligned to the file's block size (fsx `-Z` with `-r`/`-w`
    /// at the block size, as xfstests runs it).
    pub direct: bool,
    /// The operations to choose from, uniformly.
    pub ops: Vec<Op>,
}

/// One logged operation: fsx's log entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Which operation.
    pub op: Op,
    /// Offset (the source for ranges; 0 for truncate).
    pub offset: u64,
    /// Length (the new size for truncate).
    pub len: u64,
    /// The destination of a range operation.
    pub dest: u64,
    /// The file's size before it.
    pub old_size: u64,
    /// fallocate/zero_range with KEEP_SIZE.
    pub keep_size: bool,
    /// It did nothing (length 0, out of range, or refused by the filesystem).
    pub skipped: bool,
}

impl Entry {
    /// The byte range it changed, for "which operation touched this offset".
    fn touched(&self) -> Option<(u64, u64)> {
        if self.skipped {
            return None;
        }
        match self.op {
            Op::Read | Op::MapRead | Op::DedupeRange | Op::Fallocate => None,
            Op::Write | Op::MapWrite | Op::PunchHole | Op::ZeroRange => Some((self.offset, self.offset + self.len)),
            Op::CopyRange | Op::CloneRange => Some((self.dest, self.dest + self.len)),
            Op::Truncate => Some((self.len.min(self.old_size), self.len.max(self.old_size))),
            // Everything from the offset on moves.
            Op::CollapseRange | Op::InsertRange => Some((self.offset, u64::MAX)),
        }
    }

    /// Its line in the .fsxops file; `bad` marks it with `*` when it touched that offset.
    pub fn line(&self, bad: Option<u64>) -> String {
        let mut s = String::new();
        if self.skipped {
            s.push_str("skip ");
        }
        let _ = write!(s, "{} {:#x} {:#x}", self.op.name(), self.offset, self.len);
        if self.op.ranged() {
            let _ = write!(s, " {:#x}", self.dest);
        }
        let _ = write!(s, " {:#x}", self.old_size);
        if self.keep_size {
            s.push_str(" keep_size");
        }
        if let (Some(b), Some((from, to))) = (bad, self.touched()) {
            if (from..to).contains(&b) {
                s.push_str(" *");
            }
        }
        s
    }

    /// What it did, for people: `write 0x1000 thru 0x1fff (0x1000 bytes) EXTEND`.
    pub fn describe(&self) -> String {
        let end = (self.offset + self.len).saturating_sub(1);
        let what = match self.op {
            Op::Truncate => format!(
                "truncate {} from {:#x} to {:#x}",
                if self.len < self.old_size { "DOWN" } else { "UP" },
                self.old_size,
                self.len
            ),
            op if op.ranged() => format!(
                "{} {:#x} thru {end:#x} ({:#x} bytes) to {:#x} thru {:#x}",
                op.name(),
                self.offset,
                self.len,
                self.dest,
                (self.dest + self.len).saturating_sub(1)
            ),
            op => {
                let mut s = format!("{} {:#x} thru {end:#x} ({:#x} bytes)", op.name(), self.offset, self.len);
                if op.writes() && self.offset > self.old_size {
                    s.push_str(" HOLE");
                } else if op.writes() && self.offset + self.len > self.old_size {
                    s.push_str(" EXTEND");
                }
                if self.keep_size {
                    s.push_str(" keep_size");
                }
                s
            }
        };
        if self.skipped {
            format!("{what} SKIPPED")
        } else {
            what
        }
    }
}

/// A replay file: its header's settings (when it has them) and its operations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replay {
    /// `seed=` of the header.
    pub seed: Option<u64>,
    /// `file_length=` of the header.
    pub file_length: Option<u64>,
    /// `direct=` of the header.
    pub direct: Option<bool>,
    /// The operations, skipped ones included (they keep the numbering).
    pub entries: Vec<Entry>,
    /// The line of the file each operation is on, for errors (which never quote it).
    pub lines: Vec<usize>,
}

/// What an operation line is made of, for errors.
const REPLAY_LINE: &str = "expected OPERATION OFFSET LENGTH [DESTINATION] OLD_SIZE [keep_size]";

/// Parses a .fsxops file (fsx's own, or one fsarena wrote); the error names the line and what
/// was expected, and never quotes the file: the path may name any file, a secret one too.
pub fn parse_replay(text: &str) -> Result<Replay, String> {
    let mut r = Replay::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(header) = line.strip_prefix('#') {
            for word in header.split_whitespace() {
                let Some((k, v)) = word.split_once('=') else { continue };
                match k {
                    "seed" => r.seed = v.parse().ok(),
                    "file_length" => r.file_length = fsarena_workload::options::size(v).ok(),
                    "direct" => r.direct = fsarena_workload::options::boolean(v).ok(),
                    _ => {}
                }
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| format!("line {}: {why}", i + 1);
        let mut words = line.split_whitespace().peekable();
        let skipped = words.next_if_eq(&"skip").is_some();
        let name = words.next().ok_or_else(|| bad(&format!("no operation: {REPLAY_LINE}")))?;
        let op = Op::from_name(name).ok_or_else(|| {
            bad(&format!("not an fsx operation: expected one of {}", ALL.map(|o| o.name()).join(", ")))
        })?;
        let mut number = || -> Result<u64, String> {
            let w = words.next().ok_or_else(|| bad(&format!("too few numbers: {REPLAY_LINE}")))?;
            let parsed = match w.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => w.parse(),
            };
            parsed.map_err(|_| bad("a word where a number goes: expected a whole number, decimal or 0x hexadecimal"))
        };
        let offset = number()?;
        let len = number()?;
        let dest = if op.ranged() { number()? } else { 0 };
        let old_size = number()?;
        let mut e = Entry { op, offset, len, dest, old_size, keep_size: false, skipped };
        for w in words {
            match w {
                "keep_size" => e.keep_size = true,
                "*" | "close_open" => {}
                _ => return Err(bad("an unknown word after the numbers: expected keep_size, close_open or *")),
            }
        }
        r.entries.push(e);
        r.lines.push(i + 1);
    }
    Ok(r)
}

/// The first mismatch, with what fsx prints about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The file offset of the first wrong byte (the size found, for a size mismatch).
    pub offset: u64,
    /// One line: where, expected and found.
    pub summary: String,
    /// The whole report: the bad bytes, the likely writer, the last operations.
    pub report: String,
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Operations run (skipped ones not counted).
    pub ops: u64,
    /// Operations skipped (nothing to do, or refused).
    pub skipped: u64,
    /// Bytes read back and compared with the model.
    pub bytes_verified: u64,
    /// The first mismatch, where there was one (the run stops there).
    pub mismatch: Option<Mismatch>,
    /// Operations the filesystem refused, with the error: dropped from the run.
    pub refused: Vec<(Op, String)>,
    /// The whole log, in .fsxops lines (with the header), for the replay file.
    pub log: String,
    /// Stopped by the stop flag before the end.
    pub interrupted: bool,
    /// Operations and errors per second of the run.
    pub per_second: Vec<(u64, u64)>,
}

/// How many of the last operations a mismatch report lists.
const LAST_OPS: usize = 16;

/// The file and its model.
struct Fsx<'a> {
    cfg: &'a FsxConfig,
    file: std::rc::Rc<File>,
    rng: fastrand::Rng,
    /// fsx's `original_buf`: the seeded bytes added at odd offsets.
    original: Vec<u8>,
    /// fsx's `good_buf`: what the file must hold; zero past `size`.
    good: Vec<u8>,
    /// Which operation last set each byte of `good` (0: never written).
    writer: Vec<u32>,
    size: u64,
    /// Alignment of reads and writes (the block size with `direct`, else 1).
    bdy: u64,
    /// The file's block size: collapse, insert and clone work in whole blocks.
    block: u64,
    enabled: Vec<Op>,
    keep_size_ok: bool,
    log: Vec<Entry>,
    out: Outcome,
    buf: AlignedBuf,
}

/// Runs fsx on a new file at `path` (removed by the caller): `replay` runs those operations
/// instead of random ones. `tick` is called after each operation with the bytes verified.
pub fn run(
    cfg: &FsxConfig,
    path: &Path,
    replay: Option<&Replay>,
    stop: &AtomicBool,
    tick: &dyn Fn(u64),
) -> Result<Outcome, String> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true).create_new(true);
    if cfg.direct {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_DIRECT);
    }
    let file = opts.open(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
    let st = rustix::fs::fstat(&file).map_err(|e| format!("fstat {}: {e}", path.display()))?;
    let block = (st.st_blksize as u64).clamp(512, 1 << 20);
    let mut rng = fastrand::Rng::with_seed(cfg.seed);
    let len = cfg.file_length as usize;
    let original: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
    let mut f = Fsx {
        cfg,
        file: std::rc::Rc::new(file),
        rng,
        original,
        good: vec![0; len],
        writer: vec![0; len],
        size: 0,
        bdy: if cfg.direct { block } else { 1 },
        block,
        enabled: cfg.ops.clone(),
        keep_size_ok: true,
        log: Vec::new(),
        out: Outcome::default(),
        buf: AlignedBuf::new(cfg.max_op_len.max(block) as usize + block as usize, block as usize),
    };
    f.probe();
    let started = std::time::Instant::now();
    let mut second = (0u64, 0u64);
    let total = replay.map_or(cfg.numops, |r| r.entries.len() as u64);
    for n in 1..=total {
        if stop.load(Ordering::Relaxed) {
            f.out.interrupted = true;
            break;
        }
        let before = f.out.bytes_verified;
        let planned = replay.and_then(|r| r.entries.get(n as usize - 1).copied());
        let result = match planned {
            Some(e) if e.skipped => {
                f.log.push(e);
                Ok(())
            }
            Some(e) => f.apply(n, e),
            None if f.enabled.is_empty() => break,
            None => {
                let e = f.draw();
                f.apply(n, e)
            }
        };
        result?;
        if f.out.mismatch.is_none() {
            f.check_size(n)?;
        }
        let now = started.elapsed().as_secs();
        while second.0 < now {
            f.out.per_second.push((second.1, 0));
            second = (second.0 + 1, 0);
        }
        second.1 += 1;
        tick(f.out.bytes_verified - before);
        if f.out.mismatch.is_some() {
            break;
        }
    }
    if f.out.mismatch.is_none() && !f.out.interrupted {
        f.check_all(total + 1)?;
    }
    f.out.per_second.push((second.1, 0));
    f.out.skipped = f.log.iter().filter(|e| e.skipped).count() as u64;
    f.out.ops = f.log.len() as u64 - f.out.skipped;
    let bad = f.out.mismatch.as_ref().map(|m| m.offset);
    let mut log = format!(
        "# fsarena verify:mode=fsx seed={} file_length={} max_op_len={} direct={}\n",
        cfg.seed,
        cfg.file_length,
        cfg.max_op_len,
        u8::from(cfg.direct)
    );
    for e in &f.log {
        log.push_str(&e.line(bad));
        log.push('\n');
    }
    f.out.log = log;
    Ok(f.out)
}

/// True for the errors fsx takes as "the filesystem does not do this": the operation is
/// dropped from the run and listed, never a failure.
fn refusal(e: Errno) -> bool {
    [Errno::OPNOTSUPP, Errno::NOTTY, Errno::NOSYS, Errno::INVAL, Errno::XDEV].contains(&e)
}

/// `off` reduced below `size` (0 when `size` is 0): fsx's TRIM_OFF.
fn trim_off(off: u64, size: u64) -> u64 {
    if size == 0 {
        0
    } else {
        off % size
    }
}

impl Fsx<'_> {
    /// Drops the fallocate modes the filesystem refuses, as fsx tests them at its start: one
    /// byte at the end of the empty file, then truncated back.
    fn probe(&mut self) {
        let modes = [
            (Op::Fallocate, FallocateFlags::empty()),
            (Op::PunchHole, FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE),
            (Op::ZeroRange, FallocateFlags::ZERO_RANGE),
            (Op::CollapseRange, FallocateFlags::COLLAPSE_RANGE),
            (Op::InsertRange, FallocateFlags::INSERT_RANGE),
        ];
        if let Err(e) = rustix::fs::fallocate(&self.file, FallocateFlags::KEEP_SIZE, 0, 1) {
            if refusal(e) {
                self.keep_size_ok = false;
            }
        }
        for (op, mode) in modes {
            if !self.enabled.contains(&op) {
                continue;
            }
            // Collapse and insert refuse a range past the end with EINVAL even where they
            // work: only "not supported" drops them here; EINVAL later drops them too.
            match rustix::fs::fallocate(&self.file, mode, 0, 1) {
                Err(e) if e == Errno::OPNOTSUPP || e == Errno::NOSYS => self.refuse(op, e),
                _ => {}
            }
        }
        let _ = rustix::fs::ftruncate(&self.file, 0);
    }

    fn refuse(&mut self, op: Op, e: Errno) {
        self.enabled.retain(|o| *o != op);
        if !self.out.refused.iter().any(|(o, _)| *o == op) {
            self.out.refused.push((op, fsarena_workload::errno::name(e)));
        }
    }

    /// fsx's choice of the next operation and its arguments.
    fn draw(&mut self) -> Entry {
        let max = self.cfg.file_length;
        let op = self.enabled[self.rng.usize(..self.enabled.len())];
        let mut offset = self.rng.u64(..u64::from(u32::MAX));
        let mut len = self.rng.u64(..=self.cfg.max_op_len);
        let mut dest = 0;
        let mut keep_size = false;
        let size = self.size;
        let (bdy, block) = (self.bdy, self.block);
        match op {
            Op::Read | Op::MapRead | Op::PunchHole => {
                offset = trim_off(offset, size);
                len = len.min(size - offset);
            }
            Op::Write | Op::MapWrite | Op::Fallocate | Op::ZeroRange => {
                offset = trim_off(offset, max);
                len = len.min(max - offset);
                if matches!(op, Op::Fallocate | Op::ZeroRange) && self.keep_size_ok {
                    keep_size = self.rng.bool();
                }
            }
            Op::Truncate => {
                len = self.rng.u64(..max);
                offset = 0;
            }
            Op::CollapseRange => {
                let limit = size.saturating_sub(1);
                offset = trim_off(offset, limit);
                len = len.min(limit - offset);
                offset -= offset % block;
                len -= len % block;
            }
            Op::InsertRange => {
                offset = trim_off(offset, size);
                len = len.min(max - size);
                offset -= offset % block;
                len -= len % block;
            }
            Op::CopyRange | Op::CloneRange | Op::DedupeRange => {
                offset = trim_off(offset, size);
                len = len.min(size - offset);
                let align = if op == Op::CopyRange { bdy } else { block };
                offset -= offset % align;
                if op != Op::CopyRange || self.cfg.direct {
                    len -= len % align;
                }
                let end = if op == Op::DedupeRange { size } else { max };
                let mut tries = 0;
                loop {
                    tries += 1;
                    if tries > 30 {
                        len = 0;
                        break;
                    }
                    dest = trim_off(self.rng.u64(..u64::from(u32::MAX)), end);
                    dest -= dest % align;
                    if offset.abs_diff(dest) >= len && dest + len <= end {
                        break;
                    }
                }
            }
        }
        Entry { op, offset, len, dest, old_size: size, keep_size, skipped: false }
    }

    /// fsx's data for operation `n` at `offset..offset+len` into the model.
    fn generate(&mut self, n: u64, offset: u64, len: u64) {
        for o in offset as usize..(offset + len) as usize {
            let mut b = n as u8;
            if o % 2 == 1 {
                b = b.wrapping_add(self.original[o]);
            }
            self.good[o] = b;
            self.writer[o] = n as u32;
        }
    }

    /// The model after `len` bytes at `offset` became zero by operation `n`.
    fn zero(&mut self, n: u64, offset: u64, len: u64) {
        let (a, b) = (offset as usize, (offset + len).min(self.cfg.file_length) as usize);
        self.good[a..b].fill(0);
        self.writer[a..b].fill(n as u32);
    }

    /// The size changes to `new` by operation `n`; the model past it is zero again.
    fn resize(&mut self, n: u64, new: u64) {
        if new < self.size {
            self.zero(n, new, self.size - new);
        }
        self.size = new;
    }

    /// Runs one operation (drawn or replayed), logs it, checks what it read.
    fn apply(&mut self, n: u64, mut e: Entry) -> Result<(), String> {
        e.old_size = self.size;
        let max = self.cfg.file_length;
        let bdy = self.bdy;
        // fsx's own skips: nothing to do, or out of range.
        if matches!(e.op, Op::Read | Op::Write | Op::MapRead | Op::MapWrite) {
            e.offset -= e.offset % bdy;
            if self.cfg.direct && matches!(e.op, Op::Read | Op::Write) {
                e.len -= e.len % bdy;
            }
        }
        let nothing = match e.op {
            Op::Truncate => e.len > max,
            Op::Read | Op::MapRead => e.len == 0 || e.offset + e.len > self.size,
            Op::PunchHole => e.len == 0 || e.offset + e.len > self.size,
            Op::CollapseRange => e.len == 0 || e.offset + e.len >= self.size,
            Op::InsertRange => e.len == 0 || e.offset >= self.size || self.size + e.len > max,
            Op::CopyRange | Op::CloneRange | Op::DedupeRange => {
                e.len == 0 || e.offset + e.len > self.size || e.dest + e.len > max
            }
            _ => e.len == 0 || e.offset + e.len > max,
        };
        if nothing {
            e.skipped = true;
            self.log.push(e);
            return Ok(());
        }
        // A second handle on the file, so the model can change while it is borrowed.
        let file = std::rc::Rc::clone(&self.file);
        let fd = file.as_fd();
        let io = |what: &str, err: std::io::Error| format!("{what} at {:#x}: {err}", e.offset);
        let (off, len) = (e.offset, e.len);
        let r: Result<(), Errno> = match e.op {
            Op::Read => {
                let got = self.read(off, len).map_err(|err| io("read", err))?;
                self.log.push(e);
                return self.compare(n, off, &got);
            }
            Op::MapRead => {
                let got = map_read(fd, off, len).map_err(|err| io("mapread", err))?;
                self.log.push(e);
                return self.compare(n, off, &got);
            }
            Op::Write => {
                self.generate(n, off, len);
                let (a, b) = (off as usize, (off + len) as usize);
                let data = &mut self.buf.as_mut_slice()[..b - a];
                data.copy_from_slice(&self.good[a..b]);
                write_all(fd, data, off).map_err(|err| io("write", err))?;
                self.size = self.size.max(off + len);
                Ok(())
            }
            Op::MapWrite => {
                if off + len > self.size {
                    self.size = off + len;
                    rustix::fs::ftruncate(fd, self.size).map_err(|err| io("mapwrite's ftruncate", err.into()))?;
                }
                self.generate(n, off, len);
                map_write(fd, off, &self.good[off as usize..(off + len) as usize])
                    .map_err(|err| io("mapwrite", err))?;
                Ok(())
            }
            Op::Truncate => {
                rustix::fs::ftruncate(fd, len).map_err(|err| io("ftruncate", err.into()))?;
                self.resize(n, len);
                Ok(())
            }
            Op::Fallocate => {
                let mode = if e.keep_size { FallocateFlags::KEEP_SIZE } else { FallocateFlags::empty() };
                rustix::fs::fallocate(fd, mode, off, len).map(|()| {
                    if !e.keep_size && off + len > self.size {
                        self.size = off + len;
                    }
                })
            }
            Op::PunchHole => {
                rustix::fs::fallocate(fd, FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE, off, len)
                    .map(|()| self.zero(n, off, len))
            }
            Op::ZeroRange => {
                let mode = FallocateFlags::ZERO_RANGE
                    | if e.keep_size { FallocateFlags::KEEP_SIZE } else { FallocateFlags::empty() };
                rustix::fs::fallocate(fd, mode, off, len).map(|()| {
                    let end = if e.keep_size { (off + len).min(self.size) } else { off + len };
                    if end > off {
                        self.zero(n, off, end - off);
                    }
                    self.size = self.size.max(end);
                })
            }
            Op::CollapseRange => rustix::fs::fallocate(fd, FallocateFlags::COLLAPSE_RANGE, off, len).map(|()| {
                let (a, l, s) = (off as usize, len as usize, self.size as usize);
                self.good.copy_within(a + l..s, a);
                self.writer.copy_within(a + l..s, a);
                self.good[s - l..s].fill(0);
                self.size -= len;
            }),
            Op::InsertRange => rustix::fs::fallocate(fd, FallocateFlags::INSERT_RANGE, off, len).map(|()| {
                let (a, l, s) = (off as usize, len as usize, self.size as usize);
                self.good.copy_within(a..s, a + l);
                self.writer.copy_within(a..s, a + l);
                self.zero(n, off, len);
                self.size += len;
            }),
            Op::CopyRange => copy_range(fd, off, len, e.dest).map(|()| self.copy_model(off, len, e.dest)),
            Op::CloneRange => clone_range(fd, off, len, e.dest).map(|()| self.copy_model(off, len, e.dest)),
            Op::DedupeRange => dedupe_range(fd, off, len, e.dest),
        };
        match r {
            Ok(()) => self.log.push(e),
            Err(err) if refusal(err) => {
                self.refuse(e.op, err);
                e.skipped = true;
                self.log.push(e);
            }
            Err(err) => return Err(io(e.op.name(), err.into())),
        }
        Ok(())
    }

    /// The model after a copy or clone of `len` bytes from `src` to `dest`.
    fn copy_model(&mut self, src: u64, len: u64, dest: u64) {
        let (s, d, l) = (src as usize, dest as usize, len as usize);
        self.good.copy_within(s..s + l, d);
        self.writer.copy_within(s..s + l, d);
        self.size = self.size.max(dest + len);
    }

    /// pread of `len` bytes at `off` (aligned through the buffer for O_DIRECT).
    fn read(&mut self, off: u64, len: u64) -> std::io::Result<Vec<u8>> {
        let buf = &mut self.buf.as_mut_slice()[..len as usize];
        let mut done = 0;
        while done < buf.len() {
            let n = rustix::io::pread(&self.file, &mut buf[done..], off + done as u64)?;
            if n == 0 {
                return Err(std::io::Error::other(format!("short read: {done:#x} of {len:#x} bytes")));
            }
            done += n;
        }
        Ok(buf.to_vec())
    }

    /// The size after operation `n` against the model's.
    fn check_size(&mut self, n: u64) -> Result<(), String> {
        let st = rustix::fs::fstat(&self.file).map_err(|e| format!("fstat: {e}"))?;
        let found = st.st_size as u64;
        if found != self.size {
            let summary = format!(
                "file size {found:#x} ({found} bytes) after op {n}, expected {:#x} ({} bytes)",
                self.size, self.size
            );
            let report = format!("{summary}\n{}", self.last_ops(Some(found.min(self.size))));
            self.out.mismatch = Some(Mismatch { offset: found.min(self.size), summary, report });
        }
        Ok(())
    }

    /// The closing check: the whole file read back, as fsx's `-X` checks it.
    fn check_all(&mut self, n: u64) -> Result<(), String> {
        // What the filesystem holds, not what the page cache kept: written back, then the
        // cached pages dropped (a FUSE filesystem answers the reads that follow itself).
        rustix::fs::fsync(&*self.file).map_err(|e| format!("fsync before the closing check: {e}"))?;
        let _ = rustix::fs::fadvise(&*self.file, 0, None, rustix::fs::Advice::DontNeed);
        let mut off = 0;
        while off < self.size && self.out.mismatch.is_none() {
            let mut len = (self.size - off).min(self.cfg.max_op_len.max(self.block));
            if self.cfg.direct && !len.is_multiple_of(self.bdy) {
                if len > self.bdy {
                    len -= len % self.bdy;
                } else {
                    break;
                }
            }
            let got = self.read(off, len).map_err(|e| format!("closing read at {off:#x}: {e}"))?;
            self.compare(n, off, &got)?;
            off += len;
        }
        Ok(())
    }

    /// Compares `got`, read at `off` by operation `n`, with the model; the first difference
    /// is the run's mismatch.
    fn compare(&mut self, n: u64, off: u64, got: &[u8]) -> Result<(), String> {
        let want = &self.good[off as usize..off as usize + got.len()];
        if want == got {
            self.out.bytes_verified += got.len() as u64;
            return Ok(());
        }
        let first = want.iter().zip(got).position(|(a, b)| a != b).unwrap_or(0);
        let bad = off + first as u64;
        let mut report = format!(
            "READ BAD DATA: op {n} read {:#x} thru {:#x} ({:#x} bytes)\nOFFSET      GOOD  BAD   RANGE\n",
            off,
            off + got.len() as u64 - 1,
            got.len()
        );
        let mut shown = 0;
        let mut bad_bytes = 0;
        for (i, (w, g)) in want.iter().zip(got).enumerate() {
            if w != g {
                bad_bytes += 1;
                if shown < 16 {
                    let _ = writeln!(report, "{:#010x}  {w:#04x}  {g:#04x}  {:#x}", off + i as u64, i - first);
                    shown += 1;
                }
            }
        }
        let expected = want[first];
        let found = got[first];
        let _ = writeln!(report, "{bad_bytes} bad bytes in this read");
        // fsx's clue: the byte at an even offset is the number (mod 256) of the operation that
        // wrote it.
        let tag = (first..got.len())
            .find(|&i| want[i] != got[i] && (off + i as u64).is_multiple_of(2))
            .map_or(found, |i| got[i]);
        let culprit = self
            .log
            .iter()
            .enumerate()
            .rev()
            .find(|(i, e)| {
                (*i as u64 + 1) % 256 == u64::from(tag)
                    && e.op.writes()
                    && e.touched().is_some_and(|(a, b)| (a..b).contains(&bad))
            })
            .map(|(i, e)| (i + 1, *e));
        let expected_from = self.writer[bad as usize];
        let likely = match (tag, culprit) {
            (0, _) => "the bad data is zero: check the HOLE and EXTEND operations and the truncates".to_string(),
            (_, Some((i, e))) => {
                format!("operation #{i} (mod 256 = {tag}) most likely wrote the bad data: {}", e.describe())
            }
            (_, None) => {
                // Bytes an operation wrote elsewhere, moved here by a copy, clone, collapse
                // or insert since (or brought back by a bug).
                let elsewhere = self
                    .log
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(i, e)| (*i as u64 + 1) % 256 == u64::from(tag) && e.op.writes() && !e.skipped);
                match elsewhere {
                    Some((i, e)) => format!(
                        "the bad data looks like operation #{}'s (mod 256 = {tag}), which wrote elsewhere: {}",
                        i + 1,
                        e.describe()
                    ),
                    None => format!("operation # (mod 256) for the bad data may be {tag}: no logged write of it"),
                }
            }
        };
        let _ = writeln!(report, "{likely}");
        if expected_from > 0 {
            if let Some(e) = self.log.get(expected_from as usize - 1) {
                let _ = writeln!(
                    report,
                    "the good data at {bad:#x} comes from operation #{expected_from}: {}",
                    e.describe()
                );
            }
        }
        report.push_str(&self.last_ops(Some(bad)));
        let summary = format!(
            "offset {bad:#x}: expected {expected:#04x}, found {found:#04x} ({bad_bytes} bad bytes in op {n}'s read of {:#x} thru {:#x}); {likely}",
            off,
            off + got.len() as u64 - 1
        );
        self.out.mismatch = Some(Mismatch { offset: bad, summary, report });
        Ok(())
    }

    /// The last operations, `*` on those that touched `bad`.
    fn last_ops(&self, bad: Option<u64>) -> String {
        let from = self.log.len().saturating_sub(LAST_OPS);
        let mut s = format!("LOG DUMP (last {} of {} operations):\n", self.log.len() - from, self.log.len());
        for (i, e) in self.log.iter().enumerate().skip(from) {
            let star = match (bad, e.touched()) {
                (Some(b), Some((x, y))) if (x..y).contains(&b) => "  ***",
                _ => "",
            };
            let _ = writeln!(s, "{}({:3} mod 256): {}{star}", i + 1, (i + 1) % 256, e.describe());
        }
        s
    }
}

/// pwrite of all of `data` at `off`.
fn write_all(fd: std::os::fd::BorrowedFd<'_>, data: &[u8], off: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < data.len() {
        let n = rustix::io::pwrite(fd, &data[done..], off + done as u64)?;
        if n == 0 {
            return Err(std::io::Error::other("wrote 0 bytes"));
        }
        done += n;
    }
    Ok(())
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as u64
    } else {
        4096
    }
}

/// A shared mapping of `len` bytes from `off` (page-aligned below), unmapped on drop.
struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
    skip: usize,
}

impl Mapping {
    fn new(fd: std::os::fd::BorrowedFd<'_>, off: u64, len: u64, writable: bool) -> std::io::Result<Self> {
        let start = off - off % page_size();
        let skip = (off - start) as usize;
        let map_len = skip + len as usize;
        let prot = if writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
        // SAFETY: a fresh shared mapping of an open file inside its size; nothing else in this
        // process aliases it, and it is unmapped once, on drop.
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), map_len, prot, libc::MAP_SHARED, fd.as_raw_fd(), start as libc::off_t)
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self { ptr, len: map_len, skip })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from mmap.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// fsx's mapread: the bytes through a fresh mapping.
fn map_read(fd: std::os::fd::BorrowedFd<'_>, off: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let m = Mapping::new(fd, off, len, false)?;
    // SAFETY: the mapping covers skip..skip+len, inside the file's size.
    let bytes = unsafe { std::slice::from_raw_parts(m.ptr.cast::<u8>().add(m.skip), len as usize) };
    Ok(bytes.to_vec())
}

/// fsx's mapwrite: the bytes through a fresh writable mapping, msync'd.
fn map_write(fd: std::os::fd::BorrowedFd<'_>, off: u64, data: &[u8]) -> std::io::Result<()> {
    let m = Mapping::new(fd, off, data.len() as u64, true)?;
    // SAFETY: the mapping covers skip..skip+len, writable, inside the file's size.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), m.ptr.cast::<u8>().add(m.skip), data.len()) };
    // SAFETY: the whole mapping.
    if unsafe { libc::msync(m.ptr, m.len, libc::MS_SYNC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// copy_file_range inside the file, to the end (it may copy less per call).
fn copy_range(fd: std::os::fd::BorrowedFd<'_>, src: u64, len: u64, dest: u64) -> Result<(), Errno> {
    let (mut s, mut d) = (src, dest);
    while s < src + len {
        let left = (src + len - s) as usize;
        let n = rustix::fs::copy_file_range(fd, Some(&mut s), fd, Some(&mut d), left)?;
        if n == 0 {
            return Err(Errno::IO);
        }
    }
    Ok(())
}

/// `struct file_clone_range` of linux/fs.h.
#[repr(C)]
struct FileCloneRange {
    src_fd: i64,
    src_offset: u64,
    src_length: u64,
    dest_offset: u64,
}

/// `FICLONERANGE`: `_IOW(0x94, 13, struct file_clone_range)`.
const FICLONERANGE: libc::c_ulong = 0x4020_940d;
/// `FIDEDUPERANGE`: `_IOWR(0x94, 54, struct file_dedupe_range)`.
const FIDEDUPERANGE: libc::c_ulong = 0xc018_9436;

/// FICLONERANGE inside the file.
fn clone_range(fd: std::os::fd::BorrowedFd<'_>, src: u64, len: u64, dest: u64) -> Result<(), Errno> {
    let arg = FileCloneRange { src_fd: i64::from(fd.as_raw_fd()), src_offset: src, src_length: len, dest_offset: dest };
    // SAFETY: the ioctl reads a file_clone_range that lives across the call.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), FICLONERANGE, &arg) };
    if r < 0 {
        return Err(Errno::from_io_error(&std::io::Error::last_os_error()).unwrap_or(Errno::IO));
    }
    Ok(())
}

/// `struct file_dedupe_range` with its one `struct file_dedupe_range_info`.
#[repr(C)]
struct FileDedupeRange {
    src_offset: u64,
    src_length: u64,
    dest_count: u16,
    reserved1: u16,
    reserved2: u32,
    dest_fd: i64,
    dest_offset: u64,
    bytes_deduped: u64,
    status: i32,
    reserved: u32,
}

/// FIDEDUPERANGE inside the file: the data never changes (differing ranges are left alone).
fn dedupe_range(fd: std::os::fd::BorrowedFd<'_>, src: u64, len: u64, dest: u64) -> Result<(), Errno> {
    let mut arg = FileDedupeRange {
        src_offset: src,
        src_length: len,
        dest_count: 1,
        reserved1: 0,
        reserved2: 0,
        dest_fd: i64::from(fd.as_raw_fd()),
        dest_offset: dest,
        bytes_deduped: 0,
        status: 0,
        reserved: 0,
    };
    // SAFETY: the ioctl reads and writes a file_dedupe_range with one info record, alive
    // across the call.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), FIDEDUPERANGE, &mut arg) };
    if r < 0 {
        return Err(Errno::from_io_error(&std::io::Error::last_os_error()).unwrap_or(Errno::IO));
    }
    if arg.status < 0 {
        return Err(Errno::from_raw_os_error(-arg.status));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn cfg(ops: &[Op]) -> FsxConfig {
        FsxConfig {
            numops: 2000,
            seed: 7,
            file_length: 64 << 10,
            max_op_len: 8 << 10,
            direct: false,
            ops: ops.to_vec(),
        }
    }

    #[test]
    fn a_run_passes_on_a_sound_filesystem_and_replays_to_the_same_log() {
        let dir = tempfile_dir();
        let stop = AtomicBool::new(false);
        let c = cfg(&ALL);
        let a = run(&c, &dir.join("a"), None, &stop, &|_| {}).unwrap();
        assert!(a.mismatch.is_none(), "{:?}", a.mismatch);
        assert!(a.ops > 1000 && a.bytes_verified > 0, "{} {}", a.ops, a.bytes_verified);
        let b = run(&c, &dir.join("b"), None, &stop, &|_| {}).unwrap();
        assert_eq!(a.log, b.log, "the same seed gives the same run");
        let replay = parse_replay(&a.log).unwrap();
        assert_eq!(replay.seed, Some(7));
        assert_eq!(replay.entries.len() as u64, a.ops + a.skipped);
        let r = run(&c, &dir.join("c"), Some(&replay), &stop, &|_| {}).unwrap();
        assert_eq!(r.log, a.log, "a replay does what the log says");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn damage_behind_its_back_is_found_with_the_writer_named() {
        let dir = tempfile_dir();
        let stop = AtomicBool::new(false);
        let c = FsxConfig { numops: 3, ..cfg(&[Op::Write]) };
        let replay = parse_replay("# seed=7\nwrite 0x0 0x1000 0x0\nread 0x0 0x1000 0x1000\n").unwrap();
        let path = dir.join("f");
        let ok = run(&c, &path, Some(&replay), &stop, &|_| {}).unwrap();
        assert!(ok.mismatch.is_none());
        std::fs::remove_file(&path).unwrap();
        // The same again, with a bit flipped between the write and the read.
        let flip = std::cell::Cell::new(false);
        let r = run(&c, &path, Some(&replay), &stop, &|_| {
            if !flip.replace(true) {
                let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                std::os::unix::fs::FileExt::write_at(&f, &[0x41], 0x10).unwrap();
            }
        })
        .unwrap();
        let m = r.mismatch.unwrap();
        assert_eq!(m.offset, 0x10, "{}", m.report);
        assert!(m.summary.contains("expected 0x01, found 0x41"), "{}", m.summary);
        assert!(m.report.contains("LOG DUMP") && m.report.contains("write 0x0 thru 0xfff"), "{}", m.report);
        assert!(r.log.contains("write 0x0 0x1000 0x0 *"), "{}", r.log);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn replay_files_are_read_as_fsx_writes_them() {
        let r = parse_replay("# fsarena verify:mode=fsx seed=3 file_length=256k direct=1\nskip read 0x0 0x0 0x0\ncopy_range 0x0 0x10 0x100 0x200 *\nfallocate 0x0 0x10 0x0 keep_size\n").unwrap();
        assert_eq!((r.seed, r.file_length, r.direct), (Some(3), Some(256 << 10), Some(true)));
        assert!(r.entries[0].skipped);
        assert_eq!((r.entries[1].dest, r.entries[1].old_size), (0x100, 0x200));
        assert!(r.entries[2].keep_size);
        let e = parse_replay("frobnicate 0x0 0x1 0x0").unwrap_err();
        assert!(e.contains("line 1: not an fsx operation: expected one of read, write"), "{e}");
        assert!(!e.contains("frobnicate"), "the line is never quoted: {e}");
        let lines = [
            "# fsarena verify:mode=fsx seed=3 file_length=256k direct=1",
            "skip read 0x0 0x0 0x0",
            "copy_range 0x0 0x10 0x100 0x200 *",
            "fallocate 0x0 0x10 0x0 keep_size",
            "write 4096 512 12288 close_open",
        ];
        let errors = fsarena_workload::options::assert_never_quotes(&lines, |l| parse_replay(l).map(drop));
        assert!(errors > 15, "{errors}");
    }

    /// A scratch directory on the machine's disk (not tmpfs, where mmap and fallocate work
    /// but collapse does not).
    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("fsarena-verify-unit-{}-{}", std::process::id(), fastrand::u64(..)));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
