//! fio's deduplicable write buffers (`dedupe_percentage`, `dedupe_mode`,
//! `dedupe_working_set_percentage`, `dedupe_global`), drawn from fio's own streams so that
//! the same blocks repeat, and with the same bytes, as under fio 3.33.
//!
//! fio fills every write buffer afresh when a job dedupes or compresses (its
//! `refill_buffers`), in chunks
//! of 512 bytes (`buffer_compress_chunk`'s default), each chunk from the next seed of a
//! buffer stream; `buffer_compress_percentage` zeroes the tail of every chunk. A buffer is a
//! duplicate or not as a whole: for each one, a draw of 1..=100 at or below
//! `dedupe_percentage` makes it replay a stream that an earlier (or a later) unique buffer
//! takes as well:
//! - `repeat` replays the job's stream from where it stands, without advancing it: the
//!   duplicate holds the bytes the job's next unique buffer will hold.
//! - `working_set` replays the stream from where one of its first `W` buffers began, `W`
//!   being `dedupe_working_set_percentage` of `size` in blocks of the smallest write,
//!   drawn uniformly. With `dedupe_global` the working set is cut into as many runs as the
//!   file has jobs, the run `k` being the first buffers of the `k`-th job after this one:
//!   every job draws from the same blocks, and the jobs' duplicates are shared.
//!
//! So among `N` written blocks about `N × (100 − dedupe_percentage) / 100` are unique, and
//! the duplicates add those working-set blocks that no unique write took. The buffers fio
//! fills once when it sets its I/O units up (`iodepth` of them) take their turn of every
//! stream first, as they do in fio.

use super::fiorand::{FioRand, Seeds, Stream};
use super::options::IoOptions;

/// fio's `buffer_compress_chunk` default: the unit a buffer is filled in.
const CHUNK: u64 = 512;
/// fio's `CONFIG_SEED_BUCKETS` as its default build (Debian's) sets it: how many words a
/// buffer's fill interleaves.
const SEED_BUCKETS: usize = 4;
/// The multipliers of the interleaved words (fio's primes, of which it uses the first four).
const PRIMES: [u64; SEED_BUCKETS] = [1, 2, 3, 5];
/// fio's `GOLDEN_RATIO_64`, the multiplicative hash that steps each word.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// One job's seeds and generator width, from which its buffer stream starts: what a clone
/// needs of every job of the file for `dedupe_global`.
#[derive(Debug, Clone)]
pub struct BufferSeeds {
    seeds: Seeds,
    use64: bool,
}

impl BufferSeeds {
    /// The seeds of the clone numbered `thread_number` (fio's, from 1) of a job with `o`.
    pub fn of(o: &IoOptions, thread_number: u32) -> Self {
        Self { seeds: Seeds::new(o.fio_seed(), u64::from(thread_number), o.fixed_block_seed()), use64: o.tausworthe64 }
    }

    /// The buffer stream as the job starts it.
    fn buffer_stream(&self) -> FioRand {
        self.seeds.stream(Stream::Buffer, self.use64)
    }
}

impl IoOptions {
    /// Blocks in the dedupe working set (fio's `num_unique_pages`): the share of `size` in
    /// blocks of the smallest write.
    pub fn dedupe_working_set_pages(&self) -> u64 {
        let size = self.size.unwrap_or(0);
        size.saturating_mul(u64::from(self.dedupe_working_set_percentage)) / 100 / self.min_bs_of(super::job::WRITE)
    }

    /// Why the dedupe options cannot run together, as fio refuses them (and a working set of
    /// no block to draw from, which fio would index past its end).
    pub(super) fn dedupe_problem(&self) -> Option<String> {
        if self.dedupe_percentage == 0 || !self.dedupe_working_set {
            return None;
        }
        let (pct, ws) = (self.dedupe_percentage, self.dedupe_working_set_percentage);
        if self.size.is_none() {
            Some("dedupe_mode=working_set needs size=: the working set is a share of it".into())
        } else if self.nrfiles != 1 {
            Some(format!("dedupe_mode=working_set works on one file per job, as in fio: nrfiles={}", self.nrfiles))
        } else if pct + ws > 100 {
            Some(format!(
                "dedupe_percentage={pct} with dedupe_working_set_percentage={ws}: together at most 100 (the working set's blocks are unique ones)"
            ))
        } else if pct < 100 && self.dedupe_working_set_pages() == 0 {
            // At 100 every buffer is the one block, and the working set is never drawn from.
            Some(format!(
                "dedupe_working_set_percentage={ws} of size={} holds no block of {} bytes: raise either",
                self.size.unwrap_or(0),
                self.min_bs_of(super::job::WRITE)
            ))
        } else {
            None
        }
    }
}

/// fio's `__get_next_seed` on a 64-bit build: the product of two draws.
fn next_seed(r: &mut FioRand) -> u64 {
    let a = r.next();
    a.wrapping_mul(r.next())
}

/// The least of two sizes that are not zero (fio's `min_not_zero`).
fn min_not_zero(a: u64, b: u64) -> u64 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

/// The working set of a clone (fio's `init_dedupe_working_set_seeds`): where the buffer
/// stream stands at the start of each of its first `pages` buffers, each buffer taking
/// `advances` seeds. With `global`, every `pages / jobs` entries the stream restarts as the
/// next job (in `all`, by thread number) starts its own.
fn working_set(all: &[BufferSeeds], own: usize, pages: u64, advances: u64, global: bool) -> Vec<FioRand> {
    let jobs = all.len().max(1);
    let per_job = (pages / jobs as u64).max(1);
    let mut at = all[own].buffer_stream();
    let mut job = own;
    let mut out = Vec::with_capacity(pages as usize);
    out.push(at.clone());
    for i in 1..pages {
        for _ in 0..advances {
            next_seed(&mut at);
        }
        if global && i % per_job == 0 {
            job = (job + 1) % jobs;
            at = all[job].buffer_stream();
        }
        out.push(at.clone());
    }
    out
}

/// A clone's write buffers under `dedupe_percentage` or a `buffer_compress_percentage`
/// below 100, refilled for every write (fio's `fill_io_buffer` with `get_buf_state` and
/// `save_buf_state`).
#[derive(Debug, Clone)]
pub struct BufferFill {
    percentage: u32,
    /// The working set, under `dedupe_mode=working_set`; `None` under `repeat`.
    working_set: Option<Vec<FioRand>>,
    /// The job's buffer stream (fio's `buf_state`).
    stream: FioRand,
    /// Where the stream stood after the last unique buffer (fio's `buf_state_prev`).
    prev: FioRand,
    /// The draws that make a buffer a duplicate (fio's `dedupe_state`).
    dedupe: FioRand,
    /// The draws of a working-set entry (fio's `dedupe_working_set_index_state`).
    index: FioRand,
    /// Zeroed share of each chunk: fio turns 100 into zeroed buffers that a dedupe job
    /// then fills at random all the same, so 100 counts as 0 here.
    compress: u32,
    /// The smallest write: chunks are never larger.
    min_write: u64,
    /// What fills a chunk's compressible share instead of zeros (`buffer_pattern`).
    pattern: Option<Vec<u8>>,
    /// The clone's seeds, for a new loop to start its streams over.
    seeds: BufferSeeds,
}

impl BufferFill {
    /// The buffers of the clone numbered `thread_number` of a job with `o`, when it dedupes;
    /// `all` holds every clone's seeds of the file by thread number (one entry is enough
    /// without `dedupe_global`).
    pub fn new(o: &IoOptions, thread_number: u32, all: &[BufferSeeds]) -> Option<Self> {
        // fio refills every write when a job dedupes or compresses partly (and lays a file
        // out with such writes); a fully compressible job's buffers are zeros, filled once.
        if o.dedupe_percentage == 0 && !(1..100).contains(&o.buffer_compress_percentage) {
            return None;
        }
        let own_index = thread_number as usize - 1;
        let own = all.get(own_index).cloned().unwrap_or_else(|| BufferSeeds::of(o, thread_number));
        let min_write = o.min_bs_of(super::job::WRITE);
        let working_set = o.dedupe_working_set.then(|| {
            let pages = o.dedupe_working_set_pages().max(1);
            let advances = min_write / min_not_zero(min_write, CHUNK);
            match all.get(own_index) {
                Some(_) => working_set(all, own_index, pages, advances, o.dedupe_global),
                None => working_set(std::slice::from_ref(&own), 0, pages, advances, false),
            }
        });
        let stream = own.buffer_stream();
        Some(Self {
            percentage: o.dedupe_percentage,
            working_set,
            prev: stream.clone(),
            stream,
            dedupe: own.seeds.stream(Stream::Dedupe, false),
            index: own.seeds.stream(Stream::DedupeWorkingSetIndex, own.use64),
            compress: if o.buffer_compress_percentage == 100 { 0 } else { o.buffer_compress_percentage },
            min_write,
            pattern: o.buffer_pattern.clone(),
            seeds: own,
        })
    }

    /// A new loop of a size-based job under `randrepeat` (fio's `clear_io_state`): the
    /// streams start over from their seeds (not past the I/O units' first fill, which is not
    /// made again); the working set stays.
    pub fn new_loop(&mut self) {
        self.stream = self.seeds.buffer_stream();
        self.prev = self.stream.clone();
        self.dedupe = self.seeds.seeds.stream(Stream::Dedupe, false);
        self.index = self.seeds.seeds.stream(Stream::DedupeWorkingSetIndex, self.seeds.use64);
    }

    /// The stream a buffer replays when it is a duplicate, `None` when it takes the job's own
    /// (fio's `get_buf_state`).
    fn pick(&mut self) -> Option<FioRand> {
        match self.percentage {
            0 => return None,
            100 => {
                self.prev = self.stream.clone();
                return None;
            }
            _ => {}
        }
        if self.dedupe.between(1, 100) > u64::from(self.percentage) {
            return None;
        }
        Some(match &self.working_set {
            None => self.prev.clone(),
            Some(set) => set[self.index.between(0, set.len() as u64 - 1) as usize].clone(),
        })
    }

    /// Fills one write buffer.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut replay = self.pick();
        let mut min_write = self.min_write;
        let mut at = 0usize;
        while at < buf.len() {
            let left = (buf.len() - at) as u64;
            min_write = min_write.min(left);
            let len = min_not_zero(min_write, CHUNK) as usize;
            let seed = next_seed(replay.as_mut().unwrap_or(&mut self.stream));
            fill_chunk(&mut buf[at..at + len], seed, self.compress, self.pattern.as_deref());
            at += len;
            if self.percentage == 100 {
                // Every chunk of every buffer from the same seed: one block in all.
                self.stream = self.prev.clone();
            } else if replay.is_none() {
                self.prev = self.stream.clone();
            }
        }
    }

    /// Fills a run of `buf` as fio lays a file out: one write buffer per `block` bytes (the
    /// largest write), the last one shorter when `buf` ends first.
    pub fn fill_layout(&mut self, buf: &mut [u8], block: usize) {
        for piece in buf.chunks_mut(block.max(1)) {
            self.fill(piece);
        }
    }

    /// Fills and drops `count` buffers of `len` bytes: the I/O units fio fills once when it
    /// sets them up, each taking its turn of the streams.
    pub fn skip(&mut self, count: u32, len: usize) {
        let mut scratch = vec![0u8; len];
        for _ in 0..count {
            self.fill(&mut scratch);
        }
    }
}

/// One chunk: its first `100 − compress` % at random from `seed`, the rest zeros or the
/// pattern (fio's `__fill_random_buf_percentage` over a single segment).
fn fill_chunk(chunk: &mut [u8], seed: u64, compress: u32, pattern: Option<&[u8]>) {
    let random = (chunk.len() as u64 * u64::from(100 - compress.min(100)) / 100) as usize;
    let (head, tail) = chunk.split_at_mut(random);
    fill_random(head, seed);
    match pattern {
        Some(p) if !p.is_empty() => super::options::fill_pattern(tail, p),
        _ => tail.fill(0),
    }
}

/// fio's `__fill_random_buf`: words from `SEED_BUCKETS` interleaved multiplicative-hash
/// sequences, then the words left over from the first sequence alone, then the bytes left
/// over from its next value (all native-endian, as fio stores them).
fn fill_random(buf: &mut [u8], seed: u64) {
    let mut s: [u64; SEED_BUCKETS] = std::array::from_fn(|p| seed.wrapping_mul(PRIMES[p]));
    let mut groups = buf.chunks_exact_mut(8 * SEED_BUCKETS);
    for group in &mut groups {
        for (word, sp) in group.chunks_exact_mut(8).zip(s.iter_mut()) {
            word.copy_from_slice(&sp.to_ne_bytes());
            *sp = sp.wrapping_mul(GOLDEN_RATIO_64);
        }
    }
    let mut next = s[0];
    let mut words = groups.into_remainder().chunks_exact_mut(8);
    for word in &mut words {
        word.copy_from_slice(&next.to_ne_bytes());
        next = next.wrapping_mul(GOLDEN_RATIO_64);
    }
    let rest = words.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&next.to_ne_bytes()[..n]);
}

#[cfg(test)]
#[path = "dedupe_tests.rs"]
mod tests;
