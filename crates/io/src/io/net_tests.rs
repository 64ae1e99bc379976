use super::*;

fn result() -> CloneResult {
    CloneResult::empty(4, None)
}

fn limits(bs: usize, size: u64) -> Limits {
    Limits { bs, size, time_based: false, deadline: None }
}

/// Runs the loop over a script of transfer results; returns the result and the (offset,
/// len, more) of every call.
fn run_script(limits: Limits, dir: usize, script: &[Moved]) -> (CloneResult, Vec<(usize, usize, bool)>) {
    let mut r = result();
    let mut calls = Vec::new();
    let mut next = script.iter();
    let stop = AtomicBool::new(false);
    let live = fsarena_workload::Live::new();
    pump(limits, dir, &stop, &live, &mut r, |offset, len, more| {
        calls.push((offset, len, more));
        Ok(*next.next().unwrap_or(&Moved::Bytes(len)))
    })
    .unwrap();
    (r, calls)
}

#[test]
fn whole_transfers_move_the_size_in_size_over_bs_ios() {
    let (r, calls) = run_script(limits(4096, 16 * 4096), WRITE, &[]);
    assert_eq!((r.bytes[WRITE], r.ios[WRITE], r.short_ios[WRITE]), (16 * 4096, 16, 0));
    assert_eq!(r.clat[WRITE].len(), 16);
    // MSG_MORE on every send but the last, as fio sets it.
    assert!(calls[..15].iter().all(|c| c.2) && !calls[15].2);
}

#[test]
fn a_short_transfer_is_an_io_whose_bytes_count_only_in_its_rest() {
    // fio 3.33 (backend.c io_queue_event, ioengines.c td_io_queue): the first 1000 bytes are
    // an I/O (total_ios, short_ios) with no bytes; the rest, 3096, is issued again as an I/O
    // of its own, counted in io_bytes and in the bytes issued, which reach the size after
    // 4096 + 3096 + 3·4096: five I/Os for four blocks' worth.
    let (r, calls) = run_script(limits(4096, 4 * 4096), READ, &[Moved::Bytes(1000)]);
    assert_eq!(calls, [(0, 4096, true), (1000, 3096, true), (0, 4096, true), (0, 4096, true), (0, 4096, true)]);
    assert_eq!(r.short_ios[READ], 1);
    assert_eq!(r.ios[READ], 5);
    assert_eq!(r.bytes[READ], 3096 + 3 * 4096);
    assert_eq!(r.clat[READ].len(), 4);
}

#[test]
fn a_rest_pending_when_the_size_is_issued_is_dropped() {
    // 3 whole blocks, then 100 bytes of the 4th: 3·4096 + 4096 issued = the size, so the rest
    // is never issued and the short block's bytes are never counted (fio's loop condition).
    let script = [Moved::Bytes(4096), Moved::Bytes(4096), Moved::Bytes(4096), Moved::Bytes(100)];
    let (r, calls) = run_script(limits(4096, 4 * 4096), READ, &script);
    assert_eq!(calls.len(), 4);
    assert_eq!((r.bytes[READ], r.ios[READ], r.short_ios[READ]), (3 * 4096, 4, 1));
}

#[test]
fn the_peer_closing_ends_the_job_without_counting_an_io() {
    let (r, calls) = run_script(limits(4096, 64 * 4096), READ, &[Moved::Bytes(4096), Moved::End]);
    assert_eq!(calls.len(), 2);
    assert_eq!((r.bytes[READ], r.ios[READ], r.short_ios[READ]), (4096, 1, 0));
}

#[test]
fn a_stop_ends_the_loop_before_its_next_io() {
    let mut r = result();
    let stop = AtomicBool::new(false);
    let mut n = 0;
    pump(limits(4096, 1 << 30), WRITE, &stop, &fsarena_workload::Live::new(), &mut r, |_, len, _| {
        n += 1;
        if n == 3 {
            stop.store(true, Ordering::SeqCst);
        }
        Ok(Moved::Bytes(len))
    })
    .unwrap();
    assert_eq!(r.ios[WRITE], 3);
}

#[test]
fn only_loopback_peers_are_accepted() {
    assert_eq!(loopback("localhost"), Some(Ipv4Addr::LOCALHOST));
    assert_eq!(loopback("127.0.0.5"), Some(Ipv4Addr::new(127, 0, 0, 5)));
    for far in ["10.0.0.1", "example.com", "0.0.0.0", "::1", ""] {
        assert_eq!(loopback(far), None, "{far}");
    }
}

#[test]
fn fio_close_message_is_its_udp_close_msg_in_little_endian() {
    let magic = 0x6c69_6e6b_u32.to_le_bytes();
    let cmd = 0x89_u32.to_le_bytes();
    assert_eq!(CLOSE_MESSAGE[..4], magic);
    assert_eq!(CLOSE_MESSAGE[4..], cmd);
}

fn net_job(text: &str) -> Vec<String> {
    let mut o = IoOptions { ioengine: fsarena_engine::EngineKind::Net, size: Some(1 << 20), ..IoOptions::default() };
    for line in text.split_whitespace() {
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        o.set_from_job_file(k, v).unwrap();
    }
    o.problems().into_iter().map(|p| p.to_string()).collect()
}

#[test]
fn net_jobs_are_checked_as_fio_checks_them_and_the_rest_is_refused() {
    assert_eq!(net_job("port=8888 listen rw=read"), Vec::<String>::new());
    assert_eq!(net_job("port=8888 hostname=localhost rw=write"), Vec::<String>::new());
    assert_eq!(net_job("protocol=unix hostname=/nonexistent/fsarena.sock rw=read"), Vec::<String>::new());
    let one = |text: &str, needle: &str| {
        let p = net_job(text);
        assert!(p.iter().any(|m| m.contains(needle)), "{text}: {p:?}");
    };
    one("listen rw=read", "needs port=");
    one("port=8888 rw=write", "neither listens nor names its peer");
    one("port=8888 hostname=10.1.2.3 rw=write", "hostname=10.1.2.3: fsarena's net engine connects on this host only");
    one("port=8888 listen hostname=localhost rw=read", "a TCP listener takes no hostname");
    one("port=8888 listen rw=randread", "network I/O is sequential");
    one("port=8888 listen rw=rw", "rw=rw is not supported by fsarena");
    one("protocol=unix port=1 hostname=/x.sock rw=read", "a unix socket has no port");
    one("protocol=unix listen hostname=/x.sock rw=read", "listen is for protocol=tcp only");
    one("protocol=unix rw=read", "needs hostname=");
    one("protocol=unix hostname=/ rw=read", "/ exists");
    one("port=65535 numjobs=2 listen rw=read", "past 65535");
    one("port=8888 listen rw=read thinktime=10", "ioengine=net with thinktime is not supported by fsarena");
    one("port=8888 listen rw=read verify=md5", "with verify is not supported by fsarena");
}

#[test]
fn udp_and_the_other_protocols_are_refused_by_name() {
    let mut o = IoOptions::default();
    let err = o.set_from_job_file("protocol", "udp").unwrap_err().to_string();
    assert!(err.contains("'udp' is fio's but not supported by fsarena"), "{err}");
    assert!(o.set_from_job_file("proto", "unix").is_ok());
    assert_eq!(o.net.protocol, Protocol::Unix);
}

#[test]
fn net_options_on_another_engine_are_refused() {
    let mut o = IoOptions { size: Some(1 << 20), ..IoOptions::default() };
    o.set_from_job_file("port", "8888").unwrap();
    let p: Vec<String> = o.problems().into_iter().map(|p| p.to_string()).collect();
    assert!(p.iter().any(|m| m.contains("are options of ioengine=net, not of ioengine=psync")), "{p:?}");
}

#[test]
fn a_listener_and_a_sender_move_the_size_over_a_unix_socket_and_leave_no_file() {
    let dir = std::env::temp_dir().join(format!("fsarena-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let job = |rw: super::super::options::Rw| {
        let mut o =
            IoOptions { ioengine: fsarena_engine::EngineKind::Net, size: Some(64 * 4096), rw, ..IoOptions::default() };
        o.net = NetOptions {
            protocol: Protocol::Unix,
            hostname: Some(path.display().to_string()),
            ..NetOptions::default()
        };
        o
    };
    let (receiver, sender) = (job(super::super::options::Rw::Read), job(super::super::options::Rw::Write));
    let listening = Endpoint::setup(&receiver, 0).unwrap();
    assert!(path.exists());
    let connecting = Endpoint::setup(&sender, 0).unwrap();
    let stop = AtomicBool::new(false);
    let (r, s) = std::thread::scope(|t| {
        let rh = t.spawn(|| {
            let mut r = result();
            run(listening, (&receiver, 1), &stop, &fsarena_workload::Live::new(), &mut r);
            r
        });
        let sh = t.spawn(|| {
            let mut r = result();
            run(connecting, (&sender, 2), &stop, &fsarena_workload::Live::new(), &mut r);
            r
        });
        (rh.join().unwrap(), sh.join().unwrap())
    });
    assert_eq!((s.bytes[WRITE], s.ios[WRITE], s.error.clone()), (64 * 4096, 64, None));
    assert_eq!((r.bytes[READ], r.ios[READ], r.short_ios[READ], r.error), (64 * 4096, 64, 0, None));
    assert!(!path.exists(), "the socket file is removed");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_receiver_drains_what_its_peer_still_sends_of_its_size_and_no_more() {
    use std::io::{Read, Write};
    let (mut peer, ours) = UnixStream::pair().unwrap();
    ours.set_read_timeout(Some(STOP_CHECK)).unwrap();
    peer.write_all(&[7u8; 10_000]).unwrap();
    let stop = AtomicBool::new(false);
    let mut buf = vec![0u8; 4096];
    drain(ours.as_fd(), &mut buf, 6_000, &stop);
    // What is past the size stays unread (and a close resets such a peer, as fio's does).
    let mut rest = Vec::new();
    ours.set_nonblocking(true).unwrap();
    let _ = (&ours).read_to_end(&mut rest);
    assert_eq!(rest.len(), 4_000);
    // Without a bound, it reads until the peer closes, well before its second is over.
    ours.set_nonblocking(false).unwrap();
    peer.write_all(&[7u8; 100]).unwrap();
    drop(peer);
    let t = Instant::now();
    drain(ours.as_fd(), &mut buf, u64::MAX, &stop);
    assert!(t.elapsed() < Duration::from_millis(500), "{:?}", t.elapsed());
}
