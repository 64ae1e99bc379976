//! PostMark 1.5's model, decision for decision, apart from the file system calls (which
//! [`FileOps`] makes): the pool of files, the table of twice as many slots that holds them, the
//! transactions and the order in which each draws its random numbers. Reproducing the order
//! exactly is what gives the same files, sizes and counts as PostMark for the same seed:
//!
//! 1. `2 × HIGH` draws fill the data every write copies from (printable bytes, 32 + RND(95)).
//! 2. The pool: `number` creations. A creation takes the next free slot of the table (or the
//!    first free one from the start once the end is reached; nothing when none is free), draws
//!    the subdirectory (only with more than one), numbers the file by the creations so far,
//!    then draws its size, LOW + RND(HIGH − LOW).
//! 3. Each transaction, unless no file is left (PostMark then stops: "out of files"): with
//!    `bias read` ≠ −1, one draw against the bias, then a file picked by drawing slots until one
//!    holds a file, read whole or appended to (RND(HIGH − size) + 1 bytes, nothing when the file
//!    has reached HIGH); then with `bias create` ≠ −1, one draw, and a creation or a deletion of
//!    a file picked the same way.
//! 4. The files left are deleted in slot order.

use super::options::PostmarkOptions;
use super::rng::PostmarkRng;

/// Where a file is: its number (1, 2, ... in order of creation) and its subdirectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileName {
    /// PostMark names files by the count of creations so far.
    pub number: u32,
    /// `sN/` when the files are spread over subdirectories.
    pub subdir: Option<u32>,
}

/// The file system calls behind the model's operations; each returns an error message naming
/// the file.
pub trait FileOps {
    /// Creates the file and writes `data` to it.
    fn create(&mut self, file: FileName, data: &[u8]) -> Result<(), String>;
    /// Reads the file's `size` bytes.
    fn read(&mut self, file: FileName, size: u32) -> Result<(), String>;
    /// Appends `data`.
    fn append(&mut self, file: FileName, data: &[u8]) -> Result<(), String>;
    /// Removes the file.
    fn delete(&mut self, file: FileName) -> Result<(), String>;
}

/// PostMark's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Files created, the pool's included.
    pub created: u64,
    /// Files read.
    pub read: u64,
    /// Files appended to.
    pub appended: u64,
    /// Files deleted, the final deletion's included.
    pub deleted: u64,
    /// Bytes read (whole files).
    pub bytes_read: u64,
    /// Bytes written (creations and appends).
    pub bytes_written: u64,
}

/// One slot of the table.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Current size; 0: free.
    size: u32,
    name: Option<FileName>,
}

/// What a transaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transaction {
    /// It ran.
    Done,
    /// No file was left: PostMark stops the transactions here.
    OutOfFiles,
}

/// A PostMark run's state.
#[derive(Debug)]
pub struct Model {
    low: u32,
    high: u32,
    subdirectories: u32,
    bias_read: i32,
    bias_create: i32,
    rng: PostmarkRng,
    /// The bytes every write copies from, from its start.
    source: Vec<u8>,
    table: Vec<Slot>,
    /// Where the search for a free slot starts.
    next_free: usize,
    /// The counters so far.
    pub counts: Counts,
    /// Bytes in the files that exist now.
    pub live_bytes: u64,
    /// Files that exist now.
    pub live_files: u64,
}

impl Model {
    /// Seeds the generator and fills the source data, as PostMark's `run` does first.
    pub fn new(o: &PostmarkOptions) -> Self {
        let mut rng = PostmarkRng::new(o.seed);
        let source = (0..2 * o.size_high as usize).map(|_| 32 + rng.below(95) as u8).collect();
        Self {
            low: o.size_low,
            high: o.size_high,
            subdirectories: o.subdirectories,
            bias_read: o.bias_read,
            bias_create: o.bias_create,
            rng,
            source,
            table: vec![Slot::default(); 2 * o.number as usize],
            next_free: 0,
            counts: Counts::default(),
            live_bytes: 0,
            live_files: 0,
        }
    }

    /// The data writes copy from (for tests).
    pub fn source(&self) -> &[u8] {
        &self.source
    }

    /// The next free slot: the one after the last taken while it is free, else the first free
    /// one from the start.
    fn free_slot(&mut self) -> Option<usize> {
        let i = match self.table.get(self.next_free) {
            Some(s) if s.size == 0 => self.next_free,
            _ => self.table.iter().position(|s| s.size == 0)?,
        };
        self.next_free = i + 1;
        Some(i)
    }

    /// A slot holding a file, drawn at random until one does (there is one: the caller checks).
    fn used_slot(&mut self) -> usize {
        let slots = self.table.len() as u32;
        loop {
            let i = self.rng.below(slots) as usize;
            if self.table[i].size != 0 {
                return i;
            }
        }
    }

    /// Creates a file in the next free slot; nothing when the table is full.
    pub fn create(&mut self, ops: &mut impl FileOps) -> Result<(), String> {
        let Some(i) = self.free_slot() else { return Ok(()) };
        let subdir = (self.subdirectories > 1).then(|| self.rng.below(self.subdirectories));
        self.counts.created += 1;
        let name = FileName { number: self.counts.created as u32, subdir };
        let size = self.low + self.rng.below(self.high - self.low);
        self.table[i] = Slot { size, name: Some(name) };
        self.live_files += 1;
        self.live_bytes += u64::from(size);
        ops.create(name, &self.source[..size as usize])?;
        self.counts.bytes_written += u64::from(size);
        Ok(())
    }

    /// Deletes the file in slot `i`, if there is one.
    fn delete(&mut self, i: usize, ops: &mut impl FileOps) -> Result<(), String> {
        let slot = self.table[i];
        let (size, Some(name)) = (slot.size, slot.name) else { return Ok(()) };
        if size == 0 {
            return Ok(());
        }
        ops.delete(name)?;
        self.table[i].size = 0;
        self.live_files -= 1;
        self.live_bytes -= u64::from(size);
        self.counts.deleted += 1;
        Ok(())
    }

    /// One transaction.
    pub fn transaction(&mut self, ops: &mut impl FileOps) -> Result<Transaction, String> {
        if self.counts.created == self.counts.deleted {
            return Ok(Transaction::OutOfFiles);
        }
        if self.bias_read != -1 {
            let read = (self.rng.below(10) as i32) < self.bias_read;
            let i = self.used_slot();
            let Slot { size, name } = self.table[i];
            let name = name.ok_or("postmark: a used slot without a name (a bug in fsarena)")?;
            if read {
                ops.read(name, size)?;
                self.counts.read += 1;
                self.counts.bytes_read += u64::from(size);
            } else if size < self.high {
                let block = self.rng.below(self.high - size) + 1;
                ops.append(name, &self.source[..block as usize])?;
                self.table[i].size += block;
                self.live_bytes += u64::from(block);
                self.counts.appended += 1;
                self.counts.bytes_written += u64::from(block);
            }
        }
        if self.bias_create != -1 {
            if (self.rng.below(10) as i32) < self.bias_create {
                self.create(ops)?;
            } else {
                let i = self.used_slot();
                self.delete(i, ops)?;
            }
        }
        Ok(Transaction::Done)
    }

    /// Deletes every file left, in slot order.
    pub fn delete_rest(&mut self, ops: &mut impl FileOps, stop: impl Fn() -> bool) -> Result<(), String> {
        for i in 0..self.table.len() {
            if i % 64 == 0 && stop() {
                return Ok(());
            }
            self.delete(i, ops)?;
        }
        Ok(())
    }

    /// The files that exist now (for removal after a failure or an interruption).
    pub fn remaining(&self) -> impl Iterator<Item = FileName> + '_ {
        self.table.iter().filter(|s| s.size != 0).filter_map(|s| s.name)
    }
}

/// File operations that do nothing: the model alone, to know a run's counts and its largest
/// moment before anything is created.
#[derive(Debug, Default)]
pub struct Dry;

impl FileOps for Dry {
    fn create(&mut self, _: FileName, _: &[u8]) -> Result<(), String> {
        Ok(())
    }
    fn read(&mut self, _: FileName, _: u32) -> Result<(), String> {
        Ok(())
    }
    fn append(&mut self, _: FileName, _: &[u8]) -> Result<(), String> {
        Ok(())
    }
    fn delete(&mut self, _: FileName) -> Result<(), String> {
        Ok(())
    }
}

/// What a whole run does, from the model alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forecast {
    /// The counters at the end.
    pub counts: Counts,
    /// Transactions run: fewer than asked when the pool ran out of files.
    pub transactions: u64,
    /// Most files at once.
    pub peak_files: u64,
    /// Most bytes in files at once.
    pub peak_bytes: u64,
}

/// Runs the model without files.
pub fn forecast(o: &PostmarkOptions) -> Forecast {
    let mut m = Model::new(o);
    let (mut peak_files, mut peak_bytes) = (0, 0);
    let mut track = |m: &Model| {
        peak_files = peak_files.max(m.live_files);
        peak_bytes = peak_bytes.max(m.live_bytes);
    };
    // Dry operations never fail.
    for _ in 0..o.number {
        let _ = m.create(&mut Dry);
    }
    track(&m);
    let mut transactions = 0;
    for _ in 0..o.transactions {
        match m.transaction(&mut Dry) {
            Ok(Transaction::Done) => transactions += 1,
            _ => break,
        }
        track(&m);
    }
    let _ = m.delete_rest(&mut Dry, || false);
    Forecast { counts: m.counts, transactions, peak_files, peak_bytes }
}

/// Roughly how many generator draws and table steps a forecast costs, to decide whether to
/// make one while parsing (it runs the whole model).
pub fn forecast_cost(o: &PostmarkOptions) -> u64 {
    2 * u64::from(o.size_high) + 4 * u64::from(o.number) + 8 * u64::from(o.transactions)
}
