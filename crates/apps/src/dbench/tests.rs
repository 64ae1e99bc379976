#![allow(clippy::unwrap_used)]

use super::*;
use std::path::PathBuf;

/// A scratch directory with a load file `text` in it and an empty work directory.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(text: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Relaxed);
        let dir = std::env::temp_dir().join(format!("fsarena-dbench-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(dir.join("work")).unwrap();
        std::fs::write(dir.join("load.txt"), text).unwrap();
        Self { dir }
    }

    fn spec(&self, rest: &str) -> Spec {
        Spec::parse(&format!("dbench:loadfile={},{rest}", self.dir.join("load.txt").display())).unwrap()
    }

    fn run(&self, rest: &str) -> Result<Measurement, WorkloadError> {
        let stop = AtomicBool::new(false);
        let w = DbenchWorkload::from_spec(&self.spec(rest)).unwrap();
        w.run(&RunEnv::quiet(&self.dir.join("work"), &stop)).map(fsarena_workload::one)
    }

    fn left(&self) -> usize {
        std::fs::read_dir(self.dir.join("work")).unwrap().count()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One pass: a tree made, a file written, read, locked, renamed, listed and removed.
const PASS: &str = r#"Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
Mkdir "\clients\client1" NT_STATUS_OK
NTCreateX "\clients\client1\dir" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\dir\A.DOC" 0x40 0x5 7 NT_STATUS_OK
WriteX 7 0 4096 4096 NT_STATUS_OK
WriteX 7 4096 100 100 NT_STATUS_OK
ReadX 7 0 4096 4096 NT_STATUS_OK
LockX 7 0 1 NT_STATUS_OK
UnlockX 7 0 1 NT_STATUS_OK
QUERY_FILE_INFORMATION 7 1004 NT_STATUS_OK
SET_FILE_INFORMATION 7 1004 NT_STATUS_OK
Flush 7 NT_STATUS_OK
Close 7 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\dir\a.doc" 1004 NT_STATUS_OK
QUERY_FS_INFORMATION 259 NT_STATUS_OK
FIND_FIRST "\clients\client1\dir\*" 260 100 1 NT_STATUS_OK
Rename "\clients\client1\dir\A.DOC" "\clients\client1\dir\B.DOC" NT_STATUS_OK
NTCreateX "\clients\client1\dir\A.DOC" 0x40 0x1 8 NT_STATUS_OBJECT_NAME_NOT_FOUND
Unlink "\clients\client1\dir\B.DOC" 0x6 NT_STATUS_OK
Unlink "\clients\client1\dir\B.DOC" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND
Rmdir "\clients\client1\dir" NT_STATUS_OK
"#;

#[test]
fn clients_replay_every_operation_and_leave_nothing() {
    let s = Scratch::new(PASS);
    let m = s.run("clients=3,runtime=300ms,warmup=0").unwrap();
    assert!(m.complete);
    let count = |op: &str| m.latency(op).map_or(0, |h| h.len());
    let passes = m.counters["passes"];
    assert!(passes >= 3, "{passes}");
    // Every line of a whole pass ran once per pass and client; the last pass may be partial.
    for (op, per_pass) in [("NTCreateX", 3), ("WriteX", 2), ("Unlink", 2), ("Find", 1), ("Rmdir", 1), ("Flush", 1)] {
        let n = count(op);
        assert!(n >= per_pass * passes && n <= per_pass * (passes + 3), "{op}: {n} for {passes} passes");
    }
    assert_eq!(m.counters["status_mismatches"], 0);
    assert_eq!(m.counters["clients"], 3);
    let throughput = m.metric("throughput").unwrap().value;
    assert!(throughput > 0.0);
    assert!(m.metric("max_latency").unwrap().value >= m.latency("WriteX").unwrap().max() as f64);
    assert_eq!(s.left(), 0, "files left");
}

#[test]
fn the_warmup_is_done_but_not_counted() {
    let s = Scratch::new(PASS);
    let m = s.run("runtime=100ms,warmup=500ms").unwrap();
    // A pass takes well under the warm-up on any filesystem: whole passes ran in it, and the
    // counted ones are fewer than all that ran.
    let counted = m.latency("Rmdir").map_or(0, |h| h.len());
    assert!(counted < m.counters["passes"], "{counted} counted of {}", m.counters["passes"]);
    assert_eq!(s.left(), 0);
}

#[test]
fn time_stamps_pace_the_replay_as_dbench_does() {
    // One write at once, one 0.5 s into the pass: within 0.75 s exactly two passes start
    // (at 0 and at 0.5 s); the second's timed write, started before the deadline, waits until
    // 1 s and runs, as dbench finishes a line it is waiting for; its Close does not.
    let text = "Mkdir \"\\clients\" NT_STATUS_OK\nMkdir \"\\clients\\client1\" NT_STATUS_OK\n\
                0.000 NTCreateX \"\\clients\\client1\\f\" 0x0 0x5 1 NT_STATUS_OK\n\
                0.000 WriteX 1 0 10 10 NT_STATUS_OK\n\
                0.500 WriteX 1 0 10 10 NT_STATUS_OK\n\
                0.500 Close 1 NT_STATUS_OK\n";
    let s = Scratch::new(text);
    let m = s.run("runtime=750ms,warmup=0").unwrap();
    assert_eq!(m.latency("WriteX").unwrap().len(), 4);
    assert_eq!(m.latency("Close").unwrap().len(), 1);
    assert_eq!(m.counters["passes"], 1);
    assert_eq!(s.left(), 0);
}

#[test]
fn a_fatal_status_mismatch_fails_the_run_with_file_and_line_and_cleans_up() {
    let s = Scratch::new(
        "Mkdir \"\\clients\" NT_STATUS_OK\nMkdir \"\\clients\\client1\" NT_STATUS_OK\n\
         Unlink \"\\clients\\client1\\missing\" 0 NT_STATUS_OK\n",
    );
    let e = s.run("clients=2,runtime=2s,warmup=0").unwrap_err();
    assert!(e.message.contains("load.txt:3: unlink") && e.message.contains("expected NT_STATUS_OK"), "{}", e.message);
    assert!(!e.partial[0].complete);
    assert_eq!(s.left(), 0);

    let s = Scratch::new("Close 5 NT_STATUS_OK\n");
    let e = s.run("runtime=1s,warmup=0").unwrap_err();
    assert!(e.message.contains("handle 5 was not found"), "{}", e.message);
}

#[test]
fn an_unexpected_ntcreatex_outcome_is_counted_not_fatal() {
    let s = Scratch::new(
        "Mkdir \"\\clients\" NT_STATUS_OK\n\
         NTCreateX \"\\clients\\nothere\" 0x0 0x1 3 NT_STATUS_OK\n\
         QUERY_FS_INFORMATION 1 NT_STATUS_OK\n",
    );
    let m = s.run("runtime=50ms,warmup=0").unwrap();
    assert!(m.counters["status_mismatches"] > 0);
    assert!(!m.latency("Qfsinfo").unwrap().is_empty());
    assert_eq!(s.left(), 0);
}

#[test]
fn options_and_refusals() {
    let s = Scratch::new(PASS);
    let w = DbenchWorkload::from_spec(&s.spec("nprocs=4,timelimit=60")).unwrap();
    assert_eq!((w.options.clients, w.warmup()), (4, 12 * SECOND), "dbench's warm-up: timelimit/5");
    assert_eq!(w.estimate(), Some(Duration::from_secs(72)));
    let fp = w.footprint();
    assert_eq!((fp.threads, fp.bytes_on_target), (4, 4 * 4196));
    assert!(w.describe()[0].contains("dbench -t 60 -c"), "{}", w.describe()[0]);
    assert_eq!(DbenchWorkload::from_spec(&s.spec("runtime=9")).unwrap().warmup(), SECOND);
    for (spec, want) in [
        ("dbench:loadfile=/nonexistent.txt", "cannot read loadfile= file /nonexistent.txt"),
        ("dbench:clients=0,loadfile=/x", "must be at least 1"),
        ("dbench:runtime=0,loadfile=/x", "must be longer than 0"),
        ("dbench:client=2", "did you mean 'clients'"),
    ] {
        let e = DbenchWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap_err();
        assert!(e.message.contains(want), "{spec}: {}", e.message);
    }
    let bad = Scratch::new("Close 1 NT_STATUS_OK\nOpenX \"\\a\" NT_STATUS_OK\n");
    let e = DbenchWorkload::from_spec(&bad.spec("clients=1")).unwrap_err();
    assert!(e.message.contains("load.txt:2: an unknown operation"), "{}", e.message);
    assert!(!e.message.contains("OpenX"), "the load file is never quoted: {}", e.message);
}

#[test]
fn the_table_and_the_defaults_agree() {
    fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
}
