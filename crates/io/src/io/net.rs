//! fio's `net` engine (`ioengine=net`, fio's `engines/net.c`) on this host: a job that
//! listens receives, a job that names its peer with `hostname=` sends, over TCP on the
//! loopback or over a unix socket.
//!
//! What fio 3.33 does, and this does the same way:
//! - the listening job binds in its setup and accepts when it opens its "file" (the
//!   connection); the sending job connects after its `startdelay`. Here every listener binds
//!   before the stage's start barrier, so a sender never finds no listener, whatever its
//!   `startdelay`. A listener's runtime starts once its peer is connected (fio resets the
//!   job's statistics then);
//! - each read is one recv(2) of bs bytes, each write one send(2), with MSG_MORE while the
//!   bytes done and this one stay below the job's size;
//! - a short transfer is an I/O (total_ios, short_ios) whose bytes do not count: fio issues
//!   the rest again as another I/O and counts only that last piece's bytes (its requeue of
//!   the io_u); the job stops issuing once the bytes issued, those rests included, reach its
//!   size. On TCP a receiver's reads are short wherever the segments happen to end, so its
//!   figures differ from run to run, in fio as here;
//! - a receive of nothing (the peer closed) or of fio's 8-byte close message ends the job
//!   without error; a TCP job sends that message when it closes, as fio does. A receiver
//!   that stops at its size with bytes of it still to come reads and drops them before it
//!   closes ([`drain`]), where fio closes at once and may reset its sender.
//!
//! Where this differs from fio, on purpose:
//! - TCP listens on 127.0.0.1 and connects to `localhost` or 127.x.x.x only (fio listens on
//!   every interface), so nothing off this host takes part in a run;
//! - the listener sets SO_REUSEADDR but not SO_REUSEPORT: a port another program holds is an
//!   error, not a port shared with it;
//! - a unix socket path that exists already is refused before the run (fio unlinks whatever
//!   is there); the socket file this job bound is removed when the job ends (fio leaves it);
//! - fio sends its close message on unix sockets too, where the call fails (EISCONN) and both
//!   jobs report error 106 though every byte moved; here it is sent on TCP only;
//! - a sender whose peer closed ends with EPIPE as its error (fio dies of SIGPIPE);
//! - a listener waits for its peer until the run is stopped or its runtime is over (fio waits
//!   for ever);
//! - a listener stops listening once it has accepted (fio listens until its job ends): a second
//!   sender is refused, or, queued before that, reset when the listener closes; in fio the
//!   backlog takes it and resets it when the receiver ends (it dies of SIGPIPE). Either way
//!   the second sender fails, and the first is the job's only connection, as in fio.
//!
//! fio names the job's "file" after `hostname=` ("net" for a listener without one); nothing
//! is laid out or opened for it in the target (the engine is diskless).

use super::job::{fill_buffer, CloneResult, READ, WRITE};
use super::options::IoOptions;
use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// fio's `protocol=`: the ones built here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// TCP over IPv4 (fio's default), on the loopback here.
    #[default]
    Tcp,
    /// A unix stream socket; `hostname=` is its path.
    Unix,
}

impl Protocol {
    /// `protocol=VALUE` (alias `proto`).
    pub fn parse(v: &str) -> Result<Self, String> {
        match v {
            "tcp" => Ok(Self::Tcp),
            "unix" => Ok(Self::Unix),
            "tcpv6" | "udp" | "udpv6" | "vsock" => {
                Err(format!("'{v}' is fio's but not supported by fsarena (only this host's TCP and unix sockets are): expected tcp or unix"))
            }
            _ => Err(format!("'{v}' is not a protocol: expected tcp or unix")),
        }
    }
}

/// fio's net engine options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetOptions {
    /// `hostname=`: the peer to connect to (tcp), or the socket's path (unix).
    pub hostname: Option<String>,
    /// `port=`: the TCP port (0: not given); clone k uses port + k, as in fio.
    pub port: u32,
    /// `protocol=`.
    pub protocol: Protocol,
    /// `listen`: this TCP job accepts the connection (and so receives).
    pub listen: bool,
    /// `nodelay=`: TCP_NODELAY on the connection.
    pub nodelay: bool,
    /// `window_size=`: SO_RCVBUF of a receiver and SO_SNDBUF of a sender (0: the system's).
    pub window_size: u32,
    /// `mss=`: TCP_MAXSEG (0: the system's).
    pub mss: u32,
}

impl NetOptions {
    /// Whether the job accepts rather than connects: a TCP job with `listen`, and the reading
    /// job of a unix socket (fio makes the reader listen on any protocol but TCP).
    pub fn listens(&self, reads: bool) -> bool {
        match self.protocol {
            Protocol::Tcp => self.listen,
            Protocol::Unix => reads,
        }
    }
}

/// fio's close message (`struct udp_close_msg`: "link" magic, then FIO_LINK_CLOSE), each
/// 32-bit word little-endian.
const CLOSE_MESSAGE: [u8; 8] = [0x6b, 0x6e, 0x69, 0x6c, 0x89, 0, 0, 0];

/// How often a blocked accept, receive or send looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// Why a net job file cannot run, one message per problem (options.rs `validate`).
pub(super) fn problems(o: &IoOptions, e: &mut impl FnMut(String)) {
    let n = &o.net;
    let rw = o.rw;
    let rw_name = rw.fio_name();
    if rw.is_random() {
        e(format!("ioengine=net: rw={rw_name}: network I/O is sequential (fio refuses a random one too): expected read or write"));
    } else if rw.reads() && rw.writes() {
        e(format!(
            "ioengine=net with rw={rw_name} is not supported by fsarena: expected read (receive) or write (send)"
        ));
    }
    match n.protocol {
        Protocol::Tcp => {
            if n.port == 0 {
                e("ioengine=net protocol=tcp needs port= (1 to 65535)".into());
            } else if u64::from(n.port) + u64::from(o.clones().max(1)) - 1 > 65535 {
                e(format!(
                    "port={}: its {} clones would use ports past 65535 (clone k uses port+k)",
                    n.port,
                    o.clones()
                ));
            }
            match (&n.hostname, n.listen) {
                (Some(h), true) => e(format!(
                    "hostname={h} with listen: a TCP listener takes no hostname (fio refuses it too); remove one of them"
                )),
                (None, false) => e(format!(
                    "ioengine=net: job '{}' neither listens nor names its peer: give listen (to receive) or hostname=localhost (to send)",
                    o.name
                )),
                (Some(h), false) if loopback(h).is_none() => e(format!(
                    "hostname={h}: fsarena's net engine connects on this host only: expected localhost or a 127.x.x.x address"
                )),
                _ => {}
            }
        }
        Protocol::Unix => {
            if n.port != 0 {
                e(format!("port={}: a unix socket has no port (fio refuses it too); remove port=", n.port));
            }
            if n.listen {
                e("listen is for protocol=tcp only (fio refuses it too): with protocol=unix the reading job listens"
                    .into());
            }
            if o.clones() > 1 {
                e(format!(
                    "ioengine=net protocol=unix with numjobs={} is not supported by fsarena: every clone would bind the same path",
                    o.clones()
                ));
            }
            match &n.hostname {
                None => e("ioengine=net protocol=unix needs hostname= (the socket's path, e.g. hostname=/tmp/fio.sock)".into()),
                Some(h) if h.is_empty() || h.len() > 107 => {
                    e(format!("hostname={h}: a unix socket path is 1 to 107 bytes"));
                }
                Some(h) if n.listens(rw.reads()) && std::fs::symlink_metadata(h).is_ok() => e(format!(
                    "hostname={h} exists: fsarena binds a new socket there and never removes what it did not create (fio would unlink it); remove it or name another path"
                )),
                _ => {}
            }
        }
    }
    // The net loop (`run`) is fio's plain sequential loop; what it does not do is refused
    // rather than ignored.
    let unsupported = [
        (o.sizes_drawn(), "bsrange or bssplit"),
        (o.nrfiles != 1, "nrfiles other than 1"),
        (o.filename.is_some(), "filename= (the socket is named by hostname=)"),
        (o.offset != 0 || o.offset_increment != 0, "offset"),
        (o.io_size.is_some(), "io_size"),
        (o.number_ios != 0, "number_ios"),
        (o.loops > 1, "loops"),
        (o.rate != [0; 2] || o.rate_iops != [0; 2] || o.ratemin != [0; 2], "rate, rate_iops or ratemin"),
        (o.thinktime.0 != 0, "thinktime"),
        (o.ramp_time.0 != 0, "ramp_time"),
        (o.verify, "verify"),
        (o.fsync != 0 || o.fdatasync != 0 || o.end_fsync, "fsync, fdatasync or end_fsync"),
        (o.ss_dur.0 != 0, "steady state (ss_dur)"),
        (o.flow != 0, "flow"),
        (o.offload, "io_submit_mode=offload"),
        (
            o.outputs.write_bw_log.is_some()
                || o.outputs.write_lat_log.is_some()
                || o.outputs.write_iops_log.is_some()
                || o.outputs.write_hist_log.is_some(),
            "write_*_log",
        ),
    ];
    for (_, what) in unsupported.iter().filter(|u| u.0) {
        e(format!("ioengine=net with {what} is not supported by fsarena"));
    }
}

/// The IPv4 loopback address `host` names, if it names one without asking a resolver:
/// `localhost` (what fio's getaddrinfo gives for it on Linux) or a 127.x.x.x literal.
pub fn loopback(host: &str) -> Option<Ipv4Addr> {
    if host.eq_ignore_ascii_case("localhost") {
        return Some(Ipv4Addr::LOCALHOST);
    }
    host.parse::<Ipv4Addr>().ok().filter(Ipv4Addr::is_loopback)
}

/// A unix socket file this job bound: removed when the job ends, if it is still that inode.
/// Both the check and the removal go through the directory it was bound in, opened right after
/// the bind: a directory along the path swapped for a link meanwhile cannot turn the removal
/// onto another file.
#[derive(Debug)]
pub(super) struct SocketFile {
    dir: Option<rustix::fd::OwnedFd>,
    name: std::ffi::OsString,
    id: Option<(u64, u64)>,
}

impl SocketFile {
    fn bound(path: &std::path::Path) -> Self {
        use rustix::fs::{AtFlags, Mode, OFlags};
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => std::path::Path::new("."),
        };
        let name = path.file_name().map(std::ffi::OsStr::to_os_string).unwrap_or_default();
        let dir = rustix::fs::open(parent, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).ok();
        let id = dir
            .as_ref()
            .and_then(|d| rustix::fs::statat(d, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW).ok())
            .map(|m| (m.st_dev, m.st_ino));
        Self { dir, name, id }
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        use rustix::fs::AtFlags;
        let Some(dir) = &self.dir else { return };
        if let Ok(m) = rustix::fs::statat(dir, self.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            if self.id == Some((m.st_dev, m.st_ino)) {
                let _ = rustix::fs::unlinkat(dir, self.name.as_os_str(), AtFlags::empty());
            }
        }
    }
}

/// A listening socket, ready before the stage starts.
#[derive(Debug)]
pub(super) enum Listener {
    /// On 127.0.0.1.
    Tcp(TcpListener),
    /// On a path, whose file goes with the listener.
    Unix {
        /// The socket.
        listener: UnixListener,
        /// Held only to remove the file when the listener goes.
        _file: SocketFile,
    },
}

/// One job clone's end of the connection before it is made: bound (listeners) or addressed.
#[derive(Debug)]
pub(super) enum Endpoint {
    /// Accepts one connection when the job starts.
    Listen(Listener),
    /// Connects to a TCP port on the loopback.
    Tcp(SocketAddrV4),
    /// Connects to a unix socket.
    Unix(PathBuf),
}

/// An error of the job: errno and message.
type JobError = (i32, String);

fn job_error(what: &str, e: &std::io::Error) -> JobError {
    (e.raw_os_error().unwrap_or(libc::EIO), format!("net: {what}: {e}"))
}

impl Endpoint {
    /// The clone's endpoint: a listener binds now, as fio's binds in its setup, so that it is
    /// listening before any job of the stage starts (the caller then waits at the barrier).
    pub(super) fn setup(o: &IoOptions, clone: u32) -> Result<Self, JobError> {
        let n = &o.net;
        let host = n.hostname.clone().unwrap_or_default();
        let port = u16::try_from(n.port + clone).unwrap_or(0);
        match (n.protocol, n.listens(o.rw.reads())) {
            (Protocol::Tcp, true) => {
                // std sets SO_REUSEADDR before binding, so a port in TIME_WAIT from an earlier run
                // is bound again, as fio does.
                let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
                    .map_err(|e| job_error(&format!("cannot listen on 127.0.0.1:{port}"), &e))?;
                l.set_nonblocking(true).map_err(|e| job_error("listener", &e))?;
                tune(l.as_fd(), n, true).map_err(|e| job_error("listener options", &e))?;
                Ok(Self::Listen(Listener::Tcp(l)))
            }
            (Protocol::Unix, true) => {
                let l = UnixListener::bind(&host).map_err(|e| job_error(&format!("cannot bind {host}"), &e))?;
                let file = SocketFile::bound(std::path::Path::new(&host));
                l.set_nonblocking(true).map_err(|e| job_error("listener", &e))?;
                Ok(Self::Listen(Listener::Unix { listener: l, _file: file }))
            }
            (Protocol::Tcp, false) => {
                Ok(Self::Tcp(SocketAddrV4::new(loopback(&host).unwrap_or(Ipv4Addr::LOCALHOST), port)))
            }
            (Protocol::Unix, false) => Ok(Self::Unix(PathBuf::from(host))),
        }
    }

    /// Makes the connection: accepts one (waiting until `stop` or `deadline`: `None` then) or
    /// connects. The socket file of a unix listener is removed when this returns, as nothing
    /// else connects to it.
    fn open(self, o: &IoOptions, stop: &AtomicBool, deadline: Option<Instant>) -> Result<Option<OwnedFd>, JobError> {
        let n = &o.net;
        let fd: OwnedFd = match self {
            Self::Listen(l) => {
                let fd = match &l {
                    Listener::Tcp(t) => t.as_fd(),
                    Listener::Unix { listener, .. } => listener.as_fd(),
                };
                loop {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(None);
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Err((libc::ETIMEDOUT, "net: no peer connected within the job's runtime".into()));
                    }
                    let accepted = match &l {
                        Listener::Tcp(t) => t.accept().map(|(s, _)| OwnedFd::from(s)),
                        Listener::Unix { listener, .. } => listener.accept().map(|(s, _)| OwnedFd::from(s)),
                    };
                    match accepted {
                        Ok(s) => break s,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => wait_readable(fd),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(job_error("accept", &e)),
                    }
                }
            }
            Self::Tcp(addr) => OwnedFd::from(
                TcpStream::connect(addr).map_err(|e| job_error(&format!("cannot connect to {addr}"), &e))?,
            ),
            Self::Unix(path) => OwnedFd::from(
                UnixStream::connect(&path)
                    .map_err(|e| job_error(&format!("cannot connect to {}", path.display()), &e))?,
            ),
        };
        // The accepted socket is blocking (accept(2) does not pass O_NONBLOCK on); the
        // timeouts only let a blocked call look at the stop flag.
        rustix::net::sockopt::set_socket_timeout(&fd, rustix::net::sockopt::Timeout::Recv, Some(STOP_CHECK))
            .and_then(|()| {
                rustix::net::sockopt::set_socket_timeout(&fd, rustix::net::sockopt::Timeout::Send, Some(STOP_CHECK))
            })
            .map_err(|e| job_error("socket timeouts", &e.into()))?;
        if n.protocol == Protocol::Tcp {
            tune(fd.as_fd(), n, n.listens(o.rw.reads())).map_err(|e| job_error("socket options", &e))?;
        }
        Ok(Some(fd))
    }
}

/// Waits until `fd` is readable or [`STOP_CHECK`] has passed.
fn wait_readable(fd: BorrowedFd<'_>) {
    let mut p = [rustix::event::PollFd::new(&fd, rustix::event::PollFlags::IN)];
    let timeout = rustix::time::Timespec { tv_sec: 0, tv_nsec: STOP_CHECK.as_nanos() as i64 };
    let _ = rustix::event::poll(&mut p, Some(&timeout));
}

/// fio's socket options on a TCP socket: TCP_NODELAY, the window (receive buffer of a
/// receiver, send buffer of a sender) and TCP_MAXSEG.
fn tune(fd: BorrowedFd<'_>, n: &NetOptions, receives: bool) -> std::io::Result<()> {
    use rustix::net::sockopt;
    if n.nodelay {
        sockopt::set_tcp_nodelay(fd, true)?;
    }
    if n.window_size > 0 {
        let w = n.window_size as usize;
        if receives {
            sockopt::set_socket_recv_buffer_size(fd, w)?;
        } else {
            sockopt::set_socket_send_buffer_size(fd, w)?;
        }
    }
    if n.mss > 0 {
        set_mss(fd, n.mss)?;
    }
    Ok(())
}

/// TCP_MAXSEG, which rustix does not offer.
fn set_mss(fd: BorrowedFd<'_>, mss: u32) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let value = mss as libc::c_int;
    // SAFETY: `fd` is an open socket for the call, and the option value is a live c_int whose
    // size is passed with it.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            std::ptr::addr_of!(value).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// What one transfer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Moved {
    /// Bytes moved (fewer than asked: a short transfer).
    Bytes(usize),
    /// The peer closed, or sent fio's close message: the job ends.
    End,
    /// The run was stopped while the call waited.
    Stopped,
}

/// One recv(2) as fio's net engine makes it: blocking, no flags; a timeout (ours, to look at
/// `stop`) is waited through.
fn receive(fd: BorrowedFd<'_>, buf: &mut [u8], stop: &AtomicBool) -> Result<Moved, Errno> {
    loop {
        match rustix::net::recv(fd, &mut *buf, RecvFlags::empty()) {
            Ok((0, _)) => return Ok(Moved::End),
            Ok((n, _)) if n == CLOSE_MESSAGE.len() && buf[..n] == CLOSE_MESSAGE => return Ok(Moved::End),
            Ok((n, _)) => return Ok(Moved::Bytes(n)),
            Err(Errno::AGAIN | Errno::INTR) if !stop.load(Ordering::Relaxed) => {}
            Err(Errno::AGAIN | Errno::INTR) => return Ok(Moved::Stopped),
            Err(e) => return Err(e),
        }
    }
}

/// One send(2) of all of `buf`, as fio's blocking send: our timeout (to look at `stop`) cuts
/// it into pieces that are sent on, so it is short only when the run was stopped.
fn send(fd: BorrowedFd<'_>, buf: &[u8], more: bool, stop: &AtomicBool) -> Result<Moved, Errno> {
    let flags = if more { SendFlags::MORE | SendFlags::NOSIGNAL } else { SendFlags::NOSIGNAL };
    let mut sent = 0;
    while sent < buf.len() {
        match rustix::net::send(fd, &buf[sent..], flags) {
            Ok(n) => sent += n,
            Err(Errno::AGAIN | Errno::INTR) if !stop.load(Ordering::Relaxed) => {}
            Err(Errno::AGAIN | Errno::INTR) if sent == 0 => return Ok(Moved::Stopped),
            Err(Errno::AGAIN | Errno::INTR) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(Moved::Bytes(sent))
}

/// After its loop, a receiver reads on and drops what its peer still sends of the size: the
/// rests fio's accounting left unread (module documentation), and the close message. Closing
/// with them unread would reset a sender still sending its last blocks (fio's sender then dies
/// of SIGPIPE, depending on timing). At most `left` bytes, for at most a second, or until the
/// peer closes: a peer that sends more than this job's size, or sends on for over a second
/// after its runtime, is still reset, as by fio.
fn drain(fd: BorrowedFd<'_>, buf: &mut [u8], mut left: u64, stop: &AtomicBool) {
    let until = Instant::now() + Duration::from_secs(1);
    while left > 0 && Instant::now() < until && !stop.load(Ordering::Relaxed) {
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        match rustix::net::recv(fd, &mut buf[..n], RecvFlags::empty()) {
            Ok((0, _)) => break,
            Ok((n, _)) => left = left.saturating_sub(n as u64),
            Err(Errno::AGAIN | Errno::INTR) => {}
            Err(_) => break,
        }
    }
}

/// When the loop stops issuing.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// The job's block size.
    pub bs: usize,
    /// The job's size: issuing stops once the bytes issued reach it (unless time-based).
    pub size: u64,
    /// `time_based`: only the deadline (or the peer) ends the job.
    pub time_based: bool,
    /// The runtime's end, if the job has one.
    pub deadline: Option<Instant>,
}

/// fio's I/O loop for the net engine, in direction `dir`, with `transfer(offset, len, more)`
/// moving `len` bytes from `offset` of the buffer (`more`: MSG_MORE). Each transfer is one
/// I/O; a short one issues its rest again (module documentation). Returns the error that
/// ended it, if one did.
pub(super) fn pump(
    limits: Limits,
    dir: usize,
    stop: &AtomicBool,
    live: &fsarena_workload::Live,
    r: &mut CloneResult,
    mut transfer: impl FnMut(usize, usize, bool) -> Result<Moved, Errno>,
) -> Result<(), Errno> {
    let start = Instant::now();
    let mut issued = 0u64;
    // The rest of a short transfer, issued next: (offset in the buffer, length).
    let mut rest: Option<(usize, usize)> = None;
    let outcome = loop {
        if stop.load(Ordering::Relaxed) || limits.deadline.is_some_and(|d| Instant::now() >= d) {
            break Ok(());
        }
        // As fio: checked before every issue, a pending rest included.
        if !limits.time_based && issued >= limits.size {
            break Ok(());
        }
        let (offset, len) = rest.unwrap_or((0, limits.bs));
        let more = r.bytes[dir] + (len as u64) < limits.size;
        let t = Instant::now();
        let n = match transfer(offset, len, more) {
            Ok(Moved::Bytes(n)) => n,
            Ok(Moved::End | Moved::Stopped) => break Ok(()),
            Err(e) => break Err(e),
        };
        issued += len as u64;
        r.ios[dir] += 1;
        if n < len {
            r.short_ios[dir] += 1;
            rest = Some((offset + n, len - n));
            continue;
        }
        rest = None;
        let now = Instant::now();
        r.clat[dir].record(now.duration_since(t).as_nanos() as u64);
        r.bytes[dir] += n as u64;
        r.series[dir].add(now.duration_since(start).as_nanos() as u64, n as u64);
        live.add(1, n as u64);
    };
    r.runtime_ns = start.elapsed().as_nanos() as u64;
    outcome
}

/// Runs a net job clone: connect (or accept), move the job's bytes, close.
pub(super) fn run(
    endpoint: Endpoint,
    (o, thread_number): (&IoOptions, u32),
    stop: &AtomicBool,
    live: &fsarena_workload::Live,
    r: &mut CloneResult,
) {
    let runtime = o.runtime.map(|t| Duration::from_nanos(t.0));
    let fd = match endpoint.open(o, stop, runtime.map(|t| Instant::now() + t)) {
        Ok(Some(fd)) => fd,
        Ok(None) => return,
        Err(e) => {
            r.error = Some(e);
            return;
        }
    };
    let dir = if o.rw.reads() { READ } else { WRITE };
    let bs = o.bs[dir] as usize;
    let mut buf = vec![0u8; bs];
    if dir == WRITE {
        fill_buffer(&mut buf, o.buffer_compress_percentage, o.randseed ^ u64::from(thread_number));
        if let Some(pattern) = &o.buffer_pattern {
            super::options::fill_pattern(&mut buf, pattern);
        }
    }
    // A listener's clock starts with its connection, as fio resets its job's then.
    let limits = Limits {
        bs,
        size: o.size.unwrap_or(0),
        time_based: o.time_based,
        deadline: runtime.map(|t| Instant::now() + t),
    };
    let socket = fd.as_fd();
    // Every byte received, short pieces included: what the peer sent of the size.
    let mut moved = 0u64;
    let outcome = pump(limits, dir, stop, live, r, |offset, len, more| {
        let piece = &mut buf[offset..offset + len];
        let m = if dir == READ { receive(socket, piece, stop) } else { send(socket, piece, more, stop) };
        if let Ok(Moved::Bytes(n)) = m {
            moved += n as u64;
        }
        m
    });
    if dir == READ && outcome.is_ok() {
        let message = if o.net.protocol == Protocol::Tcp { CLOSE_MESSAGE.len() as u64 } else { 0 };
        // A job its runtime ended has no size to go by: its sender, timed alike, is about to
        // stop too, so what comes until it closes is dropped.
        let timed_out = limits.time_based || limits.deadline.is_some_and(|d| Instant::now() >= d);
        let left = if timed_out { u64::MAX } else { limits.size.saturating_sub(moved) + message };
        drain(socket, &mut buf, left, stop);
    }
    if let Err(e) = outcome {
        let what = if dir == READ { "recv" } else { "send" };
        let done = r.bytes[dir];
        let why = if e == Errno::PIPE || e == Errno::CONNRESET { " (the peer closed the connection)" } else { "" };
        r.error = Some((e.raw_os_error(), format!("net: {what} after {done} bytes: {}{why}", std::io::Error::from(e))));
    }
    if o.net.protocol == Protocol::Tcp {
        // fio's close message, which a fio receiver needs to end; errors do not matter here
        // (fio counts one, but on TCP the call succeeds while the socket is open).
        let _ = rustix::net::send(socket, &CLOSE_MESSAGE, SendFlags::NOSIGNAL | SendFlags::DONTWAIT);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "net_tests.rs"]
mod tests;
