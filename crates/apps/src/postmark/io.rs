//! The file system calls of PostMark's operations, made as PostMark 1.53 makes them on glibc,
//! so that a file system sees the same calls from fsarena as from PostMark:
//!
//! - buffered (PostMark's default, `fopen`/`fwrite`/`fread`/`fclose`): a create opens with
//!   `O_WRONLY|O_CREAT|O_TRUNC` (mode 0666), an append with `O_WRONLY|O_CREAT|O_APPEND` and a
//!   seek to the end (glibc's `fopen(.., "a")`), a read with `O_RDONLY`; the first transfer
//!   asks the file's `st_blksize` (glibc's `fstat` when it allocates the stream's buffer) and
//!   the buffer is that size when below `BUFSIZ` (8192), else `BUFSIZ`. Writes and reads go
//!   through it as glibc's `_IO_file_xsputn` and `_IO_file_xsgetn` move them: whole buffers,
//!   and a request of a buffer or more straight through in whole buffers.
//! - unbuffered (`set buffering false`): `open`, one `write` or `read` per block of the block
//!   size and one for the remainder — also when it is 0 bytes, as PostMark calls it — and
//!   `close`; a create opens with `O_RDWR|O_CREAT` (0644), an append with `O_RDWR|O_APPEND`.
//!
//! Differences, both for safety, none for the calls' cost: files are opened relative to the
//! run's directory (or its subdirectory's) descriptor with `O_NOFOLLOW|O_CLOEXEC`, and a create
//! adds `O_EXCL`: the run's directory is its own and new, a file already there is an error.

use super::model::{FileName, FileOps};
use fsarena_stats::LatencyHistogram;
use fsarena_workload::phase::OpTimer;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags, SeekFrom};

/// glibc's `BUFSIZ`: the largest stream buffer it allocates from `st_blksize`.
const BUFSIZ: usize = 8192;

/// The latency of each kind of operation.
#[derive(Debug, Default)]
pub struct OpLatency {
    /// Creations (open, writes, close).
    pub create: LatencyHistogram,
    /// Whole-file reads (open, reads, close).
    pub read: LatencyHistogram,
    /// Appends (open, writes, close).
    pub append: LatencyHistogram,
    /// Deletions (unlink).
    pub delete: LatencyHistogram,
}

/// The real operations, in the run's directory.
#[derive(Debug)]
pub struct RealOps<'a> {
    root: BorrowedFd<'a>,
    /// `s0`, `s1`, ... when the files are spread over subdirectories.
    subdirs: &'a [OwnedFd],
    buffered: bool,
    read_block: usize,
    write_block: usize,
    /// PostMark's read buffer, one read block.
    read_buffer: Vec<u8>,
    stream: Stream,
    /// Latencies per operation kind.
    pub latency: OpLatency,
}

impl<'a> RealOps<'a> {
    /// Operations under `root` (and its `subdirs`) with the run's block sizes.
    pub fn new(
        root: BorrowedFd<'a>,
        subdirs: &'a [OwnedFd],
        buffered: bool,
        read_block: u32,
        write_block: u32,
    ) -> Self {
        Self {
            root,
            subdirs,
            buffered,
            read_block: read_block as usize,
            write_block: write_block as usize,
            read_buffer: vec![0; read_block as usize],
            stream: Stream::default(),
            latency: OpLatency::default(),
        }
    }

    /// The directory holding `file`.
    fn dir(&self, file: FileName) -> BorrowedFd<'_> {
        match file.subdir.and_then(|s| self.subdirs.get(s as usize)) {
            Some(d) => d.as_fd(),
            None => self.root,
        }
    }

    /// Opens `file` in its directory: never through a link at its name, and `O_NONBLOCK`, so
    /// that a FIFO the target serves in a file's place cannot block the open (reads and
    /// writes of a regular file ignore the flag).
    fn open(&self, file: FileName, flags: OFlags, mode: u32) -> Result<OwnedFd, String> {
        let name = file_name(file.number);
        let flags = flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        rustix::fs::openat(self.dir(file), &name, flags, Mode::from_raw_mode(mode))
            .map_err(|e| format!("open {}: {e}", display(file)))
    }

    /// Writes `data` in write blocks, then the remainder, and closes.
    fn write_file(&mut self, fd: OwnedFd, file: FileName, data: &[u8]) -> Result<(), String> {
        let blocks = data.chunks_exact(self.write_block);
        let rest = blocks.remainder();
        let fail = |e: rustix::io::Errno| format!("write {}: {e}", display(file));
        if self.buffered {
            self.stream.open();
            for block in blocks.chain([rest]) {
                self.stream.write(&fd, block).map_err(fail)?;
            }
            self.stream.flush(&fd).map_err(fail)?;
        } else {
            for block in blocks.chain([rest]) {
                write_all(&fd, block).map_err(fail)?;
            }
        }
        drop(fd);
        Ok(())
    }
}

impl FileOps for RealOps<'_> {
    fn create(&mut self, file: FileName, data: &[u8]) -> Result<(), String> {
        let start = OpTimer::start();
        let (flags, mode) = if self.buffered {
            (OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::EXCL, 0o666)
        } else {
            (OFlags::RDWR | OFlags::CREATE | OFlags::EXCL, 0o644)
        };
        let fd = self.open(file, flags, mode)?;
        self.write_file(fd, file, data)?;
        start.record(&mut self.latency.create);
        Ok(())
    }

    fn read(&mut self, file: FileName, size: u32) -> Result<(), String> {
        let start = OpTimer::start();
        let fd = self.open(file, OFlags::RDONLY, 0)?;
        let fail = |e: rustix::io::Errno| format!("read {}: {e}", display(file));
        let size = size as usize;
        let (blocks, rest) = (size / self.read_block, size % self.read_block);
        let lengths = std::iter::repeat_n(self.read_block, blocks).chain([rest]);
        if self.buffered {
            self.stream.open();
            for n in lengths {
                self.stream.read(&fd, &mut self.read_buffer[..n]).map_err(fail)?;
            }
        } else {
            for n in lengths {
                // PostMark reads each block once, whatever comes back.
                rustix::io::read(&fd, &mut self.read_buffer[..n]).map_err(fail)?;
            }
        }
        drop(fd);
        start.record(&mut self.latency.read);
        Ok(())
    }

    fn append(&mut self, file: FileName, data: &[u8]) -> Result<(), String> {
        let start = OpTimer::start();
        let fd = if self.buffered {
            let fd = self.open(file, OFlags::WRONLY | OFlags::CREATE | OFlags::APPEND, 0o666)?;
            // glibc's fopen(.., "a") finds the end at once.
            rustix::fs::seek(&fd, SeekFrom::End(0)).map_err(|e| format!("seek {}: {e}", display(file)))?;
            fd
        } else {
            self.open(file, OFlags::RDWR | OFlags::APPEND, 0)?
        };
        self.write_file(fd, file, data)?;
        start.record(&mut self.latency.append);
        Ok(())
    }

    fn delete(&mut self, file: FileName) -> Result<(), String> {
        let start = OpTimer::start();
        unlink(self.dir(file), file)?;
        start.record(&mut self.latency.delete);
        Ok(())
    }
}

/// Removes `file` from `dir`.
pub fn unlink(dir: BorrowedFd<'_>, file: FileName) -> Result<(), String> {
    rustix::fs::unlinkat(dir, file_name(file.number), rustix::fs::AtFlags::empty())
        .map_err(|e| format!("unlink {}: {e}", display(file)))
}

/// The file's name in its directory: its number, as PostMark names it.
fn file_name(number: u32) -> String {
    number.to_string()
}

/// The file as PostMark would name its path, for messages.
fn display(file: FileName) -> String {
    match file.subdir {
        Some(s) => format!("s{s}/{}", file.number),
        None => file.number.to_string(),
    }
}

/// Writes all of `data` (a regular file takes it whole unless the file system is full).
fn write_all(fd: &OwnedFd, mut data: &[u8]) -> Result<(), rustix::io::Errno> {
    if data.is_empty() {
        // PostMark's remainder write of 0 bytes is a call too.
        rustix::io::write(fd, data)?;
    }
    while !data.is_empty() {
        let n = rustix::io::write(fd, data)?;
        if n == 0 {
            return Err(rustix::io::Errno::NOSPC);
        }
        data = &data[n..];
    }
    Ok(())
}

/// One stdio stream's buffer, as glibc keeps it for a `FILE`, reused from file to file.
#[derive(Debug, Default)]
struct Stream {
    buf: Vec<u8>,
    /// The buffer's size for the open file; 0 until its first transfer allocates it.
    size: usize,
    /// Write: bytes waiting; read: the next byte to hand out.
    pos: usize,
    /// Read: bytes in the buffer.
    end: usize,
}

impl Stream {
    /// A new stream: no buffer yet.
    fn open(&mut self) {
        (self.size, self.pos, self.end) = (0, 0, 0);
    }

    /// glibc's `_IO_file_doallocate`: `st_blksize` when it is positive and below `BUFSIZ`.
    fn allocate(&mut self, fd: &OwnedFd) -> Result<(), rustix::io::Errno> {
        let blksize = rustix::fs::fstat(fd)?.st_blksize;
        self.size = if blksize > 0 && (blksize as usize) < BUFSIZ { blksize as usize } else { BUFSIZ };
        if self.buf.len() < self.size {
            self.buf.resize(self.size, 0);
        }
        Ok(())
    }

    /// `fwrite`: into the buffer while it has room; when full, out it goes, and what is left
    /// goes straight through in whole buffers, the rest into the buffer.
    fn write(&mut self, fd: &OwnedFd, mut data: &[u8]) -> Result<(), rustix::io::Errno> {
        if data.is_empty() {
            return Ok(());
        }
        if self.size > 0 {
            let n = data.len().min(self.size - self.pos);
            self.buf[self.pos..self.pos + n].copy_from_slice(&data[..n]);
            self.pos += n;
            data = &data[n..];
            if data.is_empty() {
                return Ok(());
            }
            self.flush(fd)?;
        } else {
            self.allocate(fd)?;
        }
        let direct = data.len() - data.len() % self.size;
        if direct > 0 {
            write_all(fd, &data[..direct])?;
        }
        let rest = &data[direct..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.pos = rest.len();
        Ok(())
    }

    /// Writes out what waits in the buffer (`fflush`, and `fclose` before closing).
    fn flush(&mut self, fd: &OwnedFd) -> Result<(), rustix::io::Errno> {
        if self.pos > 0 {
            write_all(fd, &self.buf[..self.pos])?;
            self.pos = 0;
        }
        Ok(())
    }

    /// `fread`: from the buffer; a request smaller than a buffer refills it with one read of
    /// a whole buffer, a larger one reads whole buffers straight into `out`. Stops at the end
    /// of the file.
    fn read(&mut self, fd: &OwnedFd, out: &mut [u8]) -> Result<(), rustix::io::Errno> {
        if out.is_empty() {
            return Ok(());
        }
        if self.size == 0 {
            self.allocate(fd)?;
        }
        let mut done = 0;
        while done < out.len() {
            let want = out.len() - done;
            let have = self.end - self.pos;
            if want <= have {
                out[done..].copy_from_slice(&self.buf[self.pos..self.pos + want]);
                self.pos += want;
                return Ok(());
            }
            out[done..done + have].copy_from_slice(&self.buf[self.pos..self.end]);
            done += have;
            (self.pos, self.end) = (0, 0);
            let want = out.len() - done;
            if want < self.size {
                let n = rustix::io::read(fd, &mut self.buf[..self.size])?;
                if n == 0 {
                    return Ok(());
                }
                self.end = n;
            } else {
                let n = rustix::io::read(fd, &mut out[done..done + want - want % self.size])?;
                if n == 0 {
                    return Ok(());
                }
                done += n;
            }
        }
        Ok(())
    }
}
