//! The `dbench` workload end to end: dbench's own load file on tmpfs and ext4, dbench's table
//! in the output, nothing left behind, bad load files refused before anything exists, and the
//! same per-operation counts as Debian's dbench for a load file whose run is bounded.

use crate::util::Bounded;
use crate::util::{require, run, stderr, stdout, Scratch};
use std::collections::BTreeMap;
use std::process::Command;

/// dbench's operation table from a tool's output: name -> count, one map per table.
fn tables(text: &str) -> Vec<BTreeMap<String, u64>> {
    let mut out = Vec::new();
    let mut current: Option<BTreeMap<String, u64>> = None;
    for line in text.lines() {
        if line.starts_with(" Operation ") {
            current = Some(BTreeMap::new());
            continue;
        }
        let Some(table) = current.as_mut() else { continue };
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [name, count, _, _] if count.parse::<u64>().is_ok() => {
                table.insert(name.to_string(), count.parse().unwrap_or(0));
            }
            [dashes] if dashes.starts_with('-') => {}
            _ => out.extend(current.take()),
        }
    }
    out.extend(current);
    out
}

/// The operations client.txt uses, by dbench's table names.
fn client_txt_ops() -> Vec<&'static str> {
    let text = std::fs::read_to_string("/usr/share/dbench/client.txt").expect("client.txt");
    [
        ("NTCreateX", "NTCreateX"),
        ("Close", "Close"),
        ("Rename", "Rename"),
        ("Unlink", "Unlink"),
        ("Deltree", "Deltree"),
        ("Rmdir", "Rmdir"),
        ("Mkdir", "Mkdir"),
        ("QUERY_PATH_INFORMATION", "Qpathinfo"),
        ("QUERY_FILE_INFORMATION", "Qfileinfo"),
        ("QUERY_FS_INFORMATION", "Qfsinfo"),
        ("SET_FILE_INFORMATION", "Sfileinfo"),
        ("FIND_FIRST", "Find"),
        ("WriteX", "WriteX"),
        ("ReadX", "ReadX"),
        ("LockX", "LockX"),
        ("UnlockX", "UnlockX"),
        ("Flush", "Flush"),
    ]
    .into_iter()
    .filter(|(word, _)| text.lines().any(|l| l.split_whitespace().any(|w| w == *word)))
    .map(|(_, name)| name)
    .collect()
}

#[test]
fn client_txt_runs_on_tmpfs_and_ext4_with_dbenchs_table() {
    require("dbench");
    let out = run(&[
        "run",
        "--target",
        "tmpfs:size=256m",
        "--target",
        "ext4:size=512m",
        "--workload",
        "dbench:clients=2,runtime=3s",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let found = tables(&text);
    assert_eq!(found.len(), 2, "one table per target: {text}");
    let ops = client_txt_ops();
    assert!(ops.len() >= 10, "{ops:?}");
    for table in &found {
        for op in &ops {
            assert!(table.get(*op).copied().unwrap_or(0) > 0, "{op} missing in {table:?}\n{text}");
        }
    }
    assert_eq!(text.matches(" Operation      Count    AvgLat    MaxLat\n").count(), 2, "{text}");
    let throughput: Vec<&str> = text.lines().filter(|l| l.starts_with("Throughput ")).collect();
    assert_eq!(throughput.len(), 2, "{text}");
    for line in throughput {
        assert!(line.contains(" MB/sec  2 clients  2 procs  max_latency="), "{line}");
    }
}

#[test]
fn nothing_is_left_behind() {
    require("dbench");
    let dir = Scratch::new("dbench-clean");
    let out = run(&["run", "--target", &dir.spec(), "--workload", "dbench:clients=2,runtime=1s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Throughput "), "{}", stdout(&out));
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn bad_load_files_exit_2_before_anything_is_created() {
    let dir = Scratch::new("dbench-bad");
    let files = Scratch::new("dbench-bad-files");
    let bad = files.path.join("bad.txt");
    std::fs::write(&bad, "Close 1 NT_STATUS_OK\nOpenX \"\\a\" NT_STATUS_OK\n").expect("write");
    let missing = files.path.join("missing.txt");
    for (workload, want) in [
        (format!("dbench:loadfile={}", bad.display()), format!("loadfile={}:2: an unknown operation", bad.display())),
        (format!("dbench:loadfile={}", missing.display()), format!("cannot read loadfile= file {}", missing.display())),
        ("dbench:clients=0".to_string(), "must be at least 1".to_string()),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", &workload]);
        assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        assert!(stderr(&out).contains(&want), "{workload}: {}", stderr(&out));
        assert!(dir.leftovers().is_empty());
    }
}

/// Every operation, `repeats` times, then a cheap line due 4 s into the pass. dbench 4 has no
/// option to replay a file once, but with `-t 2` its warm-up is 0 s (timelimit/5 in whole
/// seconds) and it checks its time limit only between lines: each client runs the pass once,
/// waits for the last line, runs it and stops. fsarena's replay does the same, so the counts
/// are exact on both sides.
fn bounded_load_file(repeats: usize) -> String {
    let mut text = String::from("Deltree \"\\clients\\client1\" NT_STATUS_OK\nMkdir \"\\clients\" NT_STATUS_OK\n");
    text.push_str("Mkdir \"\\clients\\client1\" NT_STATUS_OK\n");
    for i in 0..repeats {
        let h = 100 + i;
        let f = format!("\\clients\\client1\\f{i}.txt");
        let g = format!("\\clients\\client1\\g{i}.txt");
        let d = format!("\\clients\\client1\\d{i}");
        text.push_str(&format!(
            "NTCreateX \"{f}\" 0x0 0x5 {h} NT_STATUS_OK\n\
             WriteX {h} 0 65536 65536 NT_STATUS_OK\n\
             ReadX {h} 0 4096 4096 NT_STATUS_OK\n\
             LockX {h} 0 10 NT_STATUS_OK\n\
             UnlockX {h} 0 10 NT_STATUS_OK\n\
             QUERY_FILE_INFORMATION {h} 1004 NT_STATUS_OK\n\
             SET_FILE_INFORMATION {h} 1004 NT_STATUS_OK\n\
             Flush {h} NT_STATUS_OK\n\
             Close {h} NT_STATUS_OK\n\
             QUERY_PATH_INFORMATION \"{f}\" 1004 NT_STATUS_OK\n\
             FIND_FIRST \"\\clients\\client1\\*\" 260 100 1 NT_STATUS_OK\n\
             Rename \"{f}\" \"{g}\" NT_STATUS_OK\n\
             Unlink \"{g}\" 0x6 NT_STATUS_OK\n\
             Unlink \"{g}\" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND\n\
             Mkdir \"{d}\" NT_STATUS_OK\n\
             Rmdir \"{d}\" NT_STATUS_OK\n"
        ));
    }
    text.push_str("4.000 QUERY_FS_INFORMATION 259 NT_STATUS_OK\n");
    text
}

#[test]
fn counts_match_debians_dbench_for_a_bounded_load_file() {
    let dbench = require("dbench");
    let files = Scratch::new("dbench-same-files");
    let load = files.path.join("bounded.txt");
    std::fs::write(&load, bounded_load_file(5)).expect("write");
    let theirs_dir = Scratch::new("dbench-same-theirs");
    let theirs = Command::new(dbench)
        .args(["-t", "2", "-c"])
        .arg(&load)
        .arg("-D")
        .arg(&theirs_dir.path)
        .arg("2")
        .bounded_output()
        .expect("dbench runs");
    assert!(theirs.status.success(), "dbench: {}", stdout(&theirs));
    let ours_dir = Scratch::new("dbench-same-ours");
    let ours = run(&[
        "run",
        "--target",
        &ours_dir.spec(),
        "--workload",
        &format!("dbench:clients=2,runtime=2,loadfile={}", load.display()),
    ]);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let (theirs, ours) = (tables(&stdout(&theirs)), tables(&stdout(&ours)));
    assert_eq!(theirs.len(), 1, "{theirs:?}");
    assert_eq!(ours, theirs, "per-operation counts differ");
    // 5 repeats x 2 clients.
    assert_eq!(ours[0]["WriteX"], 10);
    assert_eq!(ours[0]["Unlink"], 20);
    assert_eq!(ours[0]["Qfsinfo"], 2);
    assert!(ours_dir.leftovers().is_empty(), "left: {:?}", ours_dir.leftovers());
}
