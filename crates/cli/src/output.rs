//! Every line fsarena writes for people and every report it prints goes through here, never
//! through the print macros, which panic when the stream is closed (`fsarena run ... 2>&1 |
//! head`): a panic would skip teardown and leave every mount behind.
//!
//! A write that fails marks its stream lost, and nothing more is tried on it. During a run
//! (while a [`Watch`] is held) a lost stream is an interrupt, as Ctrl-C is: the runner's stop
//! flag is set, the workloads stop, teardown runs, the results so far are stored marked
//! incomplete, and the run exits 141, which is 128 + SIGPIPE: what a shell reports for a
//! process a broken pipe ended. The watch also polls both streams, so that a pipe whose
//! reader is gone is noticed within [`POLL`] even while nothing is written (`-q`, a long
//! step).
//!
//! Outside a run (`results list | head`) a closed pipe is the reader having read enough:
//! the command goes on quietly and its exit code is unchanged, as ripgrep's.
//!
//! The streams are the process's, so this state is too: one run at a time per process (as
//! the binary does; in-process tests that run plans side by side share it).

use crate::failure::Failure;
use fsarena_core::printable;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The signal number a lost stream is reported as: SIGPIPE.
pub const SIGPIPE: usize = libc::SIGPIPE as usize;

/// How often a run polls its output streams for a reader that is gone.
const POLL: Duration = Duration::from_millis(200);

/// Bits of [`LOST`].
const STDOUT: u8 = 1;
const STDERR: u8 = 2;

/// The streams lost so far.
static LOST: AtomicU8 = AtomicU8::new(0);

/// The run's interrupt, while a [`Watch`] is held: its stop flag and its signal number.
static RUN: Mutex<Option<(Arc<AtomicBool>, Arc<AtomicUsize>)>> = Mutex::new(None);

/// Marks `stream` lost and, during a run, interrupts it.
fn lose(stream: u8) {
    LOST.fetch_or(stream, Ordering::SeqCst);
    if let Some((stop, signal)) = RUN.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
        // A signal that came first keeps its number.
        let _ = signal.compare_exchange(0, SIGPIPE, Ordering::SeqCst, Ordering::SeqCst);
        stop.store(true, Ordering::SeqCst);
    }
}

/// Which stream was lost first in words, if any: `standard output`, `standard error`.
pub fn lost() -> Option<&'static str> {
    match LOST.load(Ordering::SeqCst) {
        0 => None,
        bits if bits & STDERR != 0 => Some("standard error"),
        _ => Some("standard output"),
    }
}

/// Writes `line` and a newline to stderr in one write; false when it could not (the stream
/// is then lost).
pub fn err_line(line: &str) -> bool {
    if LOST.load(Ordering::SeqCst) & STDERR != 0 {
        return false;
    }
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    let mut err = std::io::stderr().lock();
    match err.write_all(text.as_bytes()) {
        Ok(()) => true,
        Err(_) => {
            lose(STDERR);
            false
        }
    }
}

/// Writes `bytes` to stdout and flushes; an error marks the stream lost.
pub fn out(bytes: &[u8]) -> std::io::Result<()> {
    if LOST.load(Ordering::SeqCst) & STDOUT != 0 {
        return Err(std::io::ErrorKind::BrokenPipe.into());
    }
    let mut out = std::io::stdout().lock();
    let written = out.write_all(bytes).and_then(|()| out.flush());
    if written.is_err() {
        lose(STDOUT);
    }
    written
}

/// `eprintln!` that never panics: one line to stderr through [`err_line`].
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = $crate::output::err_line(&format!($($arg)*));
    }};
}
pub(crate) use say;

/// A run's watch on its output: while held, a lost stream sets `stop` and `signal` (to
/// [`SIGPIPE`]), and both streams are polled for a reader that is gone.
#[derive(Debug)]
pub struct Watch {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Starts watching the output for a run interrupted by `stop` and `signal`.
pub fn watch(stop: &Arc<AtomicBool>, signal: &Arc<AtomicUsize>) -> Watch {
    *RUN.lock().unwrap_or_else(PoisonError::into_inner) = Some((Arc::clone(stop), Arc::clone(signal)));
    // Lost before the run began (a reader that was gone already): the run stops at once.
    if LOST.load(Ordering::SeqCst) != 0 {
        lose(0);
    }
    let done = Arc::new(AtomicBool::new(false));
    let watching = Arc::clone(&done);
    let thread = std::thread::Builder::new()
        .name("output".into())
        .spawn(move || {
            while !watching.load(Ordering::SeqCst) {
                for (fd, stream) in [(1, STDOUT), (2, STDERR)] {
                    if LOST.load(Ordering::SeqCst) & stream == 0 && reader_gone(fd) {
                        lose(stream);
                    }
                }
                std::thread::sleep(POLL);
            }
        })
        .ok();
    Watch { done, thread }
}

impl Drop for Watch {
    fn drop(&mut self) {
        *RUN.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.done.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// True when `fd` is the writing end of a pipe or socket whose reader is gone: poll reports
/// POLLERR (a pipe) or POLLHUP (a socket, a terminal hung up) without being asked. A regular
/// file, a terminal or /dev/null report neither; a closed descriptor (`>&-`) is not a reader
/// gone (writes to it fail with EBADF, which the standard library takes as success).
fn reader_gone(fd: i32) -> bool {
    use rustix::event::{poll, PollFd, PollFlags};
    // SAFETY: fds 1 and 2 stay open for the whole process (nothing closes them).
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let mut fds = [PollFd::new(&fd, PollFlags::empty())];
    match poll(&mut fds, Some(&rustix::time::Timespec { tv_sec: 0, tv_nsec: 0 })) {
        Ok(n) if n > 0 => fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP),
        _ => false,
    }
}

/// Writes `bytes` to stdout. A closed pipe (`| head`) is not an error; any other failure
/// (`> /dev/full`) is, so that output that was lost never exits 0. During a run either stops
/// it (see [`crate::output`]).
pub fn print(bytes: &[u8]) -> Result<(), Failure> {
    match out(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Run(anyhow::anyhow!("cannot write the output to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// Writes `bytes` to the new file `path` for a report, a chart or an export: 0600, a link or
/// anything but a regular file at the name refused (see
/// [`fsarena_target::safefs::create_private`]); a regular file the user named is replaced.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut file = fsarena_target::safefs::create_private(path, true)
        .with_context(|| format!("cannot write {}", printable(&path.to_string_lossy())))?;
    file.write_all(bytes).with_context(|| format!("cannot write {}", printable(&path.to_string_lossy())))
}
