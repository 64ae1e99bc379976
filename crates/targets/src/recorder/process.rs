//! The recorder's FUSE server as a process of its own, and how fsarena talks to it.
//!
//! Why a process and not a thread of fsarena: a thread of fsarena blocked on I/O that the
//! recorder answers (a write to the recorded filesystem waits for the loop device, which waits
//! for the FUSE server) keeps a SIGKILLed fsarena from exiting, and with it the FUSE
//! connection, which belongs to the whole process: the server thread is dead, nothing
//! answers, and the process stays in uninterruptible sleep for ever. A server process is not
//! killed with fsarena: it answers until fsarena has gone, then sees the end of its control
//! socket and exits, which closes the FUSE connection (any request still queued fails);
//! `fsarena cleanup` then undoes the recorded mounts and loop devices as after any kill.
//! fsarena never holds the FUSE device, so a dead server always ends the connection. Like
//! every process fsarena starts, it runs in a tree of its own ([`crate::contain`]: a cgroup,
//! a process group), recorded in the state file before its mount: a teardown unmounts, then
//! ends whatever of the tree is left; so does `fsarena cleanup`, should it not have gone.
//!
//! Fork, not re-exec: the server needs no more than its two files (the base, the spill file), its mount point and the
//! socket, and the same binary in a test harness has no subcommand to exec. The child closes
//! every other descriptor first (the work directory's lock, other runs' pipes), ignores the
//! terminal's SIGINT (fsarena decides when to stop, by unmounting), then builds everything it
//! uses after the fork: the log, the FUSE session (mounted by the child, so the FUSE device is
//! never in fsarena), the control thread.
//!
//! The control socket carries one request at a time, each answered before the next:
//! `M` + mark (u32) → `k`; `R` (reset the log, the live image the base again) → status (u32, 0 or an errno); `E` → count (u64)
//! and the entries (25 bytes each); `L` → the spill file's length (u64); `S` + slot (u32), torn
//! entry and bytes (u64 each, entry u64::MAX for none), count (u64) and the kept entries' numbers
//! (u64 each) → status (u32): crash image `state-SLOT` composed from the log. At start the child
//! sends a status byte (0 mounted, 1 + length-prefixed message not).

use super::log::{Entry, Log};
use super::server::{lock, RecorderFs, Shared};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The server process, from fsarena's side.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    pid: libc::pid_t,
    /// Its tree (a cgroup of its own where the machine allows), recorded by the caller so
    /// that a teardown or `fsarena cleanup` ends it whatever it does.
    tree: crate::contain::Tree,
    ctl: Mutex<Option<UnixStream>>,
}

fn gone(e: impl std::fmt::Display) -> String {
    format!("the recorder's FUSE server stopped answering: {e}")
}

impl ServerProcess {
    /// Forks the server: it mounts `mnt`, serving a copy-on-write view of `files.base` as its
    /// image and logging to `files.spill`. Returns once it has mounted (or said why not), within `timeout`.
    pub(crate) fn start(
        files: ServerFiles,
        size: u64,
        max_log: u64,
        mnt: &Path,
        timeout: Duration,
    ) -> Result<Self, String> {
        let (mut ours, theirs) = UnixStream::pair().map_err(|e| format!("cannot make a socket pair: {e}"))?;
        let prepared = crate::contain::prepare_fork();
        // SAFETY: the child runs `child_main` only (see the module documentation).
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            prepared.enter();
            crate::sys::close_all_but([files.spill.as_raw_fd(), files.base.as_raw_fd(), theirs.as_raw_fd()]);
            child_main(files, size, max_log, mnt, theirs);
        }
        if pid < 0 {
            prepared.abandon();
            return Err(format!("cannot start the recorder's FUSE server: {}", std::io::Error::last_os_error()));
        }
        let tree = prepared.started(pid as u32);
        // The child's ends are the child's: closed here, the socket ends with the child.
        drop((files, theirs));
        let server = Self { pid, tree, ctl: Mutex::new(None) };
        let started = (|| {
            ours.set_read_timeout(Some(timeout)).map_err(gone)?;
            let mut status = [0u8; 1];
            ours.read_exact(&mut status).map_err(|_| "the recorder's FUSE server did not start".to_string())?;
            if status[0] != 0 {
                let mut len = [0u8; 4];
                ours.read_exact(&mut len).map_err(gone)?;
                let mut msg = vec![0u8; u32::from_le_bytes(len) as usize];
                ours.read_exact(&mut msg).map_err(gone)?;
                return Err(String::from_utf8_lossy(&msg).into_owned());
            }
            ours.set_read_timeout(None).map_err(gone)
        })();
        *server.ctl.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(ours);
        match started {
            Ok(()) => Ok(server),
            Err(e) => {
                server.stop();
                Err(e)
            }
        }
    }

    /// The server's PID (for the report).
    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The server's tree, as the state file records it.
    pub(crate) fn resource(&self) -> crate::state::Resource {
        let t = &self.tree;
        crate::state::Resource::Process { pid: t.leader, start_time: t.start_time, cgroup: t.cgroup.clone() }
    }

    /// One request and its answer, `answer` bytes long.
    fn ask(&self, request: &[u8], answer: usize) -> Result<Vec<u8>, String> {
        let mut ctl = self.ctl.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let ctl = ctl.as_mut().ok_or_else(|| gone("stopped"))?;
        ctl.write_all(request).map_err(gone)?;
        let mut buf = vec![0u8; answer];
        ctl.read_exact(&mut buf).map_err(gone)?;
        Ok(buf)
    }

    /// Writes mark `n` into the log, after every write answered so far.
    pub(crate) fn mark(&self, n: u32) -> Result<(), String> {
        let mut req = vec![b'M'];
        req.extend_from_slice(&n.to_le_bytes());
        self.ask(&req, 1).map(|_| ())
    }

    /// Empties the log and the spill file.
    pub(crate) fn reset(&self) -> Result<(), String> {
        let status = u32::from_le_bytes(self.ask(b"R", 4)?.try_into().unwrap_or_default());
        if status != 0 {
            return Err(format!("cannot reset the spill file: {}", std::io::Error::from_raw_os_error(status as i32)));
        }
        Ok(())
    }

    /// Composes crash image `state-SLOT` from the log: the base, the writes `keep` names, the
    /// first `torn.1` bytes of write `torn.0`.
    pub(crate) fn compose(&self, slot: usize, keep: &[usize], torn: Option<(usize, u64)>) -> Result<(), String> {
        let mut req = vec![b'S'];
        req.extend_from_slice(&(slot as u32).to_le_bytes());
        let (ti, tb) = torn.map_or((u64::MAX, 0), |(i, b)| (i as u64, b));
        req.extend_from_slice(&ti.to_le_bytes());
        req.extend_from_slice(&tb.to_le_bytes());
        req.extend_from_slice(&(keep.len() as u64).to_le_bytes());
        for &i in keep {
            req.extend_from_slice(&(i as u64).to_le_bytes());
        }
        let status = u32::from_le_bytes(self.ask(&req, 4)?.try_into().unwrap_or_default());
        match status {
            0 => Ok(()),
            errno => Err(format!(
                "the recorder could not compose crash image {slot}: {}",
                std::io::Error::from_raw_os_error(errno as i32)
            )),
        }
    }

    /// Bytes in the spill file.
    pub(crate) fn spill_len(&self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.ask(b"L", 8)?.try_into().unwrap_or_default()))
    }

    /// The log so far.
    pub(crate) fn entries(&self) -> Result<Vec<Entry>, String> {
        let mut ctl = self.ctl.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let ctl = ctl.as_mut().ok_or_else(|| gone("stopped"))?;
        ctl.write_all(b"E").map_err(gone)?;
        let mut count = [0u8; 8];
        ctl.read_exact(&mut count).map_err(gone)?;
        let count = u64::from_le_bytes(count) as usize;
        let mut body = vec![0u8; count.saturating_mul(ENTRY_BYTES)];
        ctl.read_exact(&mut body).map_err(gone)?;
        body.chunks_exact(ENTRY_BYTES).map(decode).collect()
    }

    /// Closes the control socket (the server exits when it sees its end, if it has not
    /// already: unmounting ends it too) and waits for the process.
    pub(crate) fn stop(&self) {
        self.ctl.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let mut status = 0;
        // SAFETY: waits for the child this process forked, once.
        while unsafe { libc::waitpid(self.pid, &mut status, 0) } < 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
        self.tree.remove_cgroup();
    }
}

/// The files the server process serves from: the spill file and the base.
#[derive(Debug)]
pub(crate) struct ServerFiles {
    /// Where logged writes' data goes.
    pub spill: File,
    /// The freshly made filesystem crash images are composed on.
    pub base: File,
    /// Crash images served at once.
    pub slots: usize,
}

/// An entry on the wire: a tag and three u64.
const ENTRY_BYTES: usize = 25;

fn encode(e: &Entry, out: &mut Vec<u8>) {
    let (tag, a, b, c) = match *e {
        Entry::Write { offset, len, spill } => (0u8, offset, len, spill),
        Entry::Zero { offset, len } => (1, offset, len, 0),
        Entry::Flush => (2, 0, 0, 0),
        Entry::Mark(n) => (3, u64::from(n), 0, 0),
    };
    out.push(tag);
    for v in [a, b, c] {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn decode(b: &[u8]) -> Result<Entry, String> {
    let word = |i: usize| u64::from_le_bytes(b[1 + 8 * i..9 + 8 * i].try_into().unwrap_or_default());
    Ok(match b[0] {
        0 => Entry::Write { offset: word(0), len: word(1), spill: word(2) },
        1 => Entry::Zero { offset: word(0), len: word(1) },
        2 => Entry::Flush,
        3 => Entry::Mark(word(0) as u32),
        t => return Err(gone(format!("unknown log entry {t}"))),
    })
}

/// The server's whole life after the fork; never returns.
fn child_main(files: ServerFiles, size: u64, max_log: u64, mnt: &Path, mut ctl: UnixStream) -> ! {
    crate::sys::reset_signals_after_fork();
    // Marks the serving thread an I/O flusher: its memory allocations must not wait for
    // writeback of the very device it serves. PR_SET_IO_FLUSHER (Linux 5.6) is not in the libc
    // crate's table yet. It needs CAP_SYS_RESOURCE, which a container's root may lack: then
    // the server runs without it (a small image under memory pressure is the only risk).
    const PR_SET_IO_FLUSHER: libc::c_int = 57;
    // SAFETY: prctl with integer arguments only.
    let _ = unsafe { libc::prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) };
    let ServerFiles { spill, base, slots } = files;
    let states = (0..slots).map(|_| Default::default()).collect();
    let live = Default::default();
    let shared = Arc::new(Mutex::new(Shared { size, log: Log::new(spill, max_log), base, live, states }));
    let options = [fuser::MountOption::FSName("fsarena-recorder".into()), fuser::MountOption::RW];
    let mut session = match fuser::Session::new(RecorderFs { shared: shared.clone() }, mnt, &options) {
        Ok(s) => s,
        Err(e) => {
            let msg = e.to_string();
            let mut out = vec![1u8];
            out.extend_from_slice(&(msg.len() as u32).to_le_bytes());
            out.extend_from_slice(msg.as_bytes());
            let _ = ctl.write_all(&out);
            // SAFETY: _exit ends the child without running the parent's destructors.
            unsafe { libc::_exit(1) }
        }
    };
    if ctl.write_all(&[0]).is_err() {
        // fsarena has gone already: dropping the session unmounts.
        drop(session);
        // SAFETY: as above.
        unsafe { libc::_exit(1) }
    }
    let answering = std::thread::Builder::new().name("fsarena-recorder-ctl".into()).spawn(move || {
        let _ = answer(&shared, &mut ctl);
        // fsarena has gone (or stopped the server): the FUSE connection closes with this
        // process; the mount stays recorded for fsarena's teardown or `fsarena cleanup`.
        // SAFETY: as above.
        unsafe { libc::_exit(0) }
    });
    if answering.is_ok() {
        // Until unmounted.
        let _ = session.run();
    }
    // SAFETY: as above.
    unsafe { libc::_exit(0) }
}

/// Answers fsarena's requests until its end of the socket closes.
fn answer(shared: &Mutex<Shared>, ctl: &mut UnixStream) -> std::io::Result<()> {
    loop {
        let mut op = [0u8; 1];
        ctl.read_exact(&mut op)?;
        match op[0] {
            b'M' => {
                let mut n = [0u8; 4];
                ctl.read_exact(&mut n)?;
                lock(shared).log.mark(u32::from_le_bytes(n));
                ctl.write_all(b"k")?;
            }
            b'R' => {
                let status = match lock(shared).reset() {
                    Ok(()) => 0u32,
                    Err(e) => e.raw_os_error().unwrap_or(libc::EIO) as u32,
                };
                ctl.write_all(&status.to_le_bytes())?;
            }
            b'L' => {
                let len = lock(shared).log.spill_len();
                ctl.write_all(&len.to_le_bytes())?;
            }
            b'S' => {
                let mut head = [0u8; 28];
                ctl.read_exact(&mut head)?;
                let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap_or_default());
                let slot = u32::from_le_bytes(head[0..4].try_into().unwrap_or_default()) as usize;
                let (ti, tb, count) = (word(4), word(12), word(20));
                // A request fsarena built: the count is its own list's length.
                let mut body = vec![0u8; (count as usize).saturating_mul(8)];
                ctl.read_exact(&mut body)?;
                let keep: Vec<u64> =
                    body.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect();
                let torn = (ti != u64::MAX).then_some((ti, tb));
                let status = match lock(shared).compose(slot, &keep, torn) {
                    Ok(()) => 0u32,
                    Err(e) => e as u32,
                };
                ctl.write_all(&status.to_le_bytes())?;
            }
            b'E' => {
                let entries = lock(shared).log.entries();
                let mut out = Vec::with_capacity(8 + entries.len() * ENTRY_BYTES);
                out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
                for e in &entries {
                    encode(e, &mut out);
                }
                ctl.write_all(&out)?;
            }
            _ => return Err(std::io::Error::from_raw_os_error(libc::EPROTO)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn entries_cross_the_socket_whole() {
        let all = [
            Entry::Write { offset: 1 << 40, len: 4096, spill: 123_456_789 },
            Entry::Zero { offset: 7, len: u64::MAX },
            Entry::Flush,
            Entry::Mark(u32::MAX),
        ];
        let mut out = Vec::new();
        for e in &all {
            encode(e, &mut out);
        }
        let back: Vec<Entry> = out.chunks_exact(ENTRY_BYTES).map(|b| decode(b).unwrap()).collect();
        assert_eq!(back, all);
        let mut bad = out[..ENTRY_BYTES].to_vec();
        bad[0] = 9;
        assert!(decode(&bad).unwrap_err().contains("unknown log entry 9"));
    }
}
