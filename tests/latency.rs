//! slat, clat and lat as fio defines them, end to end: queued engines (`io_uring` on tmpfs,
//! `libaio` with O_DIRECT on a provisioned ext4) time every I/O's submission, synchronous ones
//! (`psync`) record no slat and a lat equal to their clat; each direction's keys are fio's own
//! for the same job.

use crate::util::Bounded;
use crate::util::{json, require, run, stderr, Scratch};
use std::process::Command;

fn fio_json(target: &str, workload: &str) -> serde_json::Value {
    let out = run(&["run", "--target", target, "--workload", workload, "--output-format", "fio-json"]);
    assert!(out.status.success(), "{workload} failed: {}", stderr(&out));
    json(&out)
}

/// `(min, mean, N)` of `dir[key]`.
fn stats(dir: &serde_json::Value, key: &str) -> (u64, f64, u64) {
    let l = &dir[key];
    (l["min"].as_u64().unwrap(), l["mean"].as_f64().unwrap(), l["N"].as_u64().unwrap())
}

/// Every I/O of every direction that ran has a slat, a clat and a lat, lat = slat + clat.
fn assert_queued(v: &serde_json::Value, what: &str) {
    let job = &v["jobs"][0];
    for d in ["read", "write"] {
        let dir = &job[d];
        let n = dir["total_ios"].as_u64().unwrap();
        if n == 0 {
            continue;
        }
        let (slat, clat, lat) = (stats(dir, "slat_ns"), stats(dir, "clat_ns"), stats(dir, "lat_ns"));
        assert_eq!((slat.2, clat.2, lat.2), (n, n, n), "{what} {d}: {dir}");
        assert!(lat.1 >= clat.1 && lat.1 >= slat.1, "{what} {d}: {dir}");
        assert!(lat.0 >= slat.0 && lat.0 >= clat.0, "{what} {d}: {dir}");
        assert!(slat.0 > 0, "{what} {d}: a submission takes time: {dir}");
    }
}

#[test]
fn queued_engines_record_slat_and_lat_for_every_io() {
    let dir = Scratch::new("lat-uring");
    let v = fio_json(&dir.spec(), "io:name=q,ioengine=io_uring,iodepth=8,rw=randrw,bs=4k,size=4m");
    assert_queued(&v, "io_uring");
    let v = fio_json("ext4:size=256m", "io:name=q,ioengine=libaio,direct=1,iodepth=8,rw=randread,bs=4k,size=4m");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 1024);
    assert_queued(&v, "libaio");
}

#[test]
fn psync_records_no_slat_and_its_lat_is_its_clat() {
    let dir = Scratch::new("lat-psync");
    let v = fio_json(&dir.spec(), "io:name=s,rw=randrw,bs=4k,size=1m");
    for d in ["read", "write"] {
        let r = &v["jobs"][0][d];
        assert_eq!(stats(r, "slat_ns").2, 0, "{r}");
        assert_eq!(stats(r, "lat_ns"), stats(r, "clat_ns"), "{r}");
        assert_eq!(stats(r, "clat_ns").2, r["total_ios"].as_u64().unwrap());
    }
    let text = crate::util::stdout(&run(&["run", "--target", &dir.spec(), "--workload", "io:name=s,size=1m"]));
    assert!(!text.contains("slat (") && text.contains("     lat ("), "{text}");
}

#[test]
fn a_directions_latency_keys_are_fios() {
    let dir = Scratch::new("lat-keys");
    let opts = ["ioengine=io_uring", "iodepth=8", "rw=randread", "bs=4k", "size=1m"];
    let ours = fio_json(&dir.spec(), &format!("io:name=k,{}", opts.join(",")));
    // fio in a scratch working directory of its own, on a directory of its own.
    let (cwd, data) = (Scratch::new("lat-keys-cwd"), Scratch::new("lat-keys-fio"));
    let out = Command::new(require("fio"))
        .current_dir(&cwd.path)
        .arg("--name=k")
        .arg(format!("--directory={}", data.path.display()))
        .args(opts.iter().map(|o| format!("--{o}")))
        .arg("--output-format=json")
        .bounded_output()
        .expect("fio runs");
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let fio: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).expect("fio's JSON");
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let (a, b) = (&ours["jobs"][0]["read"], &fio["jobs"][0]["read"]);
    assert_eq!(keys(a), keys(b));
    for k in ["slat_ns", "clat_ns", "lat_ns"] {
        assert_eq!(keys(&a[k]), keys(&b[k]), "{k}");
        assert_eq!(a[k]["N"], b[k]["N"], "{k}: the same 256 I/Os, each timed");
    }
}
