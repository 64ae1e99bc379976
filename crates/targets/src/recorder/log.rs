//! The write log: the device's writes in the order they were answered, their data in a spill
//! file, with the flushes (persistence points) and the workload's marks between them.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// One event in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `len` bytes written at `offset`; the data is at `spill` in the spill file.
    Write {
        /// Device offset.
        offset: u64,
        /// Bytes.
        len: u64,
        /// Where the data is in the spill file.
        spill: u64,
    },
    /// `len` bytes zeroed at `offset` (discard, write-zeroes).
    Zero {
        /// Device offset.
        offset: u64,
        /// Bytes.
        len: u64,
    },
    /// A flush: everything before it is on stable storage.
    Flush,
    /// The workload's mark `n`, written after its persistence call `n` returned.
    Mark(u32),
}

/// The log of one generated workload.
#[derive(Debug)]
pub(crate) struct Log {
    entries: Vec<Entry>,
    spill: File,
    spill_len: u64,
    /// `max_log=`: bytes the spill file may hold.
    max: u64,
}

impl Log {
    pub(crate) fn new(spill: File, max: u64) -> Self {
        Self { entries: Vec::new(), spill, spill_len: 0, max }
    }

    /// Forgets everything (a new generated workload starts).
    pub(crate) fn reset(&mut self) -> io::Result<()> {
        self.entries.clear();
        self.spill_len = 0;
        self.spill.set_len(0)
    }

    /// Logs a write and says where its data is in the spill file; fails (and the write with
    /// it) when the spill file would pass `max`.
    pub(crate) fn write(&mut self, offset: u64, data: &[u8]) -> io::Result<u64> {
        let len = data.len() as u64;
        if self.spill_len + len > self.max {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let at = self.spill_len;
        self.spill.write_all_at(data, at)?;
        self.entries.push(Entry::Write { offset, len, spill: at });
        self.spill_len += len;
        Ok(at)
    }

    pub(crate) fn zero(&mut self, offset: u64, len: u64) {
        self.entries.push(Entry::Zero { offset, len });
    }

    pub(crate) fn flush(&mut self) {
        // Two flushes with nothing between them are one persistence point.
        if self.entries.last() != Some(&Entry::Flush) {
            self.entries.push(Entry::Flush);
        }
    }

    pub(crate) fn mark(&mut self, n: u32) {
        self.entries.push(Entry::Mark(n));
    }

    pub(crate) fn entries(&self) -> Vec<Entry> {
        self.entries.clone()
    }

    pub(crate) fn spill_len(&self) -> u64 {
        self.spill_len
    }

    /// Reads logged data: `out.len()` bytes at `at` in the spill file.
    pub(crate) fn read_spill(&self, out: &mut [u8], at: u64) -> io::Result<()> {
        self.spill.read_exact_at(out, at)
    }
}
