//! The same size-based job through real fio and through fsarena moves the same bytes in the
//! same number of I/Os.

use crate::util::{json, require, run, Scratch};
use std::process::Command;

/// (read bytes, read ios, write bytes, write ios) summed over the jobs of a fio-shaped JSON.
fn totals(v: &serde_json::Value) -> [u64; 4] {
    let mut t = [0u64; 4];
    for job in v["jobs"].as_array().expect("jobs[]") {
        for (i, dir) in ["read", "write"].iter().enumerate() {
            t[2 * i] += job[dir]["io_bytes"].as_u64().expect("io_bytes");
            t[2 * i + 1] += job[dir]["total_ios"].as_u64().expect("total_ios");
        }
    }
    t
}

fn fio_json(dir: &Scratch, args: &[String]) -> serde_json::Value {
    let fio = require("fio");
    let out = Command::new(fio)
        .arg("--name=xcheck")
        .arg(format!("--directory={}", dir.path.display()))
        .args(args.iter().map(|a| format!("--{a}")))
        .arg("--output-format=json")
        .output()
        .expect("fio runs");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    json(&out)
}

fn check(rw: &str, numjobs: u32) {
    let dir = Scratch::new(&format!("xcheck-{rw}-{numjobs}"));
    let opts: Vec<String> = [
        "rw=".to_string() + rw,
        "bs=4k".into(),
        "size=8m".into(),
        format!("numjobs={numjobs}"),
        "ioengine=psync".into(),
    ]
    .into();
    let fio = totals(&fio_json(&dir, &opts));
    let spec = format!("io:name=xcheck,{}", opts.join(","));
    let out = run(&["run", "--target", &dir.spec(), "--workload", &spec, "--output-format", "fio-json"]);
    assert!(out.status.success(), "fsarena failed: {}", crate::util::stderr(&out));
    let ours = totals(&json(&out));
    let size = 8u64 << 20;
    if rw == "randrw" || rw == "rw" {
        // The read/write split is drawn at random by each tool; the totals are exact.
        assert_eq!(ours[0] + ours[2], fio[0] + fio[2], "{rw} numjobs={numjobs}: bytes, fsarena {ours:?} fio {fio:?}");
        assert_eq!(ours[1] + ours[3], fio[1] + fio[3], "{rw} numjobs={numjobs}: ios, fsarena {ours:?} fio {fio:?}");
        let half = size * u64::from(numjobs) / 2;
        assert!(ours[0].abs_diff(half) < half / 10, "read share far from rwmixread=50: {ours:?}");
    } else {
        assert_eq!(ours, fio, "{rw} numjobs={numjobs}: [read bytes, read ios, write bytes, write ios]");
    }
    assert_eq!(ours[0] + ours[2], size * u64::from(numjobs));
}

#[test]
fn read_matches_fio() {
    check("read", 1);
    check("read", 2);
}

#[test]
fn write_matches_fio() {
    check("write", 1);
    check("write", 2);
}

#[test]
fn randread_matches_fio() {
    check("randread", 1);
    check("randread", 2);
}

#[test]
fn randwrite_matches_fio() {
    check("randwrite", 1);
    check("randwrite", 2);
}

#[test]
fn randrw_matches_fio() {
    check("randrw", 1);
    check("randrw", 2);
}

#[test]
fn sequential_rw_matches_fio() {
    check("rw", 1);
    check("rw", 2);
}
