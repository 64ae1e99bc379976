//! SIGBUS, the one fault a tenant can raise in fsarena at will: a workload that maps a file
//! (io's `mmap` engine, verify's mapread and mapwrite) gets SIGBUS when it touches a page past
//! the file's end, and the file can shrink under the mapping without fsarena doing anything: a
//! FUSE daemon answers a read short (the kernel then cuts the file there), another process
//! truncates it. The default action ends the process on the spot, with every mount, loop
//! device and daemon left behind.
//!
//! During a run the handler below instead parks the thread that faulted (it never returns to
//! the instruction that would fault again) and wakes a thread of fsarena's, which tears down
//! at once as a second Ctrl-C does and exits 128 + SIGBUS. The handler makes one `write` to a
//! pipe and then waits in `pause`, both async-signal-safe. A process forked for a job
//! ([`fsarena_target::sys::reset_signals_after_fork`]) goes back to the default action: it
//! dies, and fsarena sees a job killed by a signal.

use crate::output::say;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

/// The pipe's writing end, for the handler (-1 until [`watch`] made it).
static PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_sigbus(_: libc::c_int) {
    let fd = PIPE.load(Ordering::SeqCst);
    // SAFETY: write and pause are async-signal-safe; the buffer is a static byte.
    unsafe {
        if fd >= 0 {
            libc::write(fd, b"B".as_ptr().cast(), 1);
        }
        // This thread never goes back to the access that faulted: it waits here while the
        // teardown runs, and the process exits from there.
        loop {
            libc::pause();
        }
    }
}

/// Installs the handler for the run whose emergency teardown `emergency` holds (set once the
/// work directory is open); `progress` is cleared before the lines are said.
pub fn watch(
    emergency: &Arc<OnceLock<fsarena_target::Emergency>>,
    progress: &crate::progress::Progress,
) -> std::io::Result<()> {
    if PIPE.load(Ordering::SeqCst) >= 0 {
        return Ok(()); // one per process: a second run in-process shares it
    }
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    PIPE.store(std::os::fd::IntoRawFd::into_raw_fd(write), Ordering::SeqCst);
    let (emergency, progress) = (Arc::clone(emergency), progress.clone());
    std::thread::Builder::new().name("faults".into()).spawn(move || {
        let mut byte = [0u8; 1];
        if !matches!(rustix::io::read(&read, &mut byte), Ok(1)) {
            return;
        }
        progress.finish();
        say!("fsarena: a workload touched a memory-mapped file past its end (SIGBUS: the file shrank under it, as a FUSE daemon's short read or another process's truncate makes it): tearing down now");
        let code = 128 + libc::SIGBUS;
        match emergency.get() {
            None => std::process::exit(code),
            Some(e) => e.tear_down_then(|done, error, kept| {
                say_teardown(done, error, kept);
                std::process::exit(code)
            }),
        }
    })?;
    // SAFETY: the handler only writes to a pipe and pauses; sa_mask and flags are plain data.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// What an emergency teardown did, what stopped it, and the state file it kept.
pub(crate) fn say_teardown(
    done: &[String],
    error: Option<&fsarena_target::TargetError>,
    kept: Option<&std::path::Path>,
) {
    for line in done {
        say!("fsarena: {}", fsarena_core::printable(line));
    }
    if let Some(error) = error {
        say!("fsarena: {error}");
    }
    if let Some(state) = kept {
        say!(
            "fsarena: kept {}: run `fsarena cleanup` once nothing holds the mount",
            fsarena_core::printable(&state.to_string_lossy())
        );
    }
}
