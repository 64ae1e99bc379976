//! The engine registry end to end: `ioengine=null` runs the whole pipeline (plan, threads,
//! queue, merge, fio-json, storing) on a `dir:` target without doing any I/O, so it needs no
//! disk, creates no file and could run without root; unbuilt engines are refused by name.
//! The asynchronous engines (`io_uring` on tmpfs, `libaio` with O_DIRECT on a loop-backed
//! ext4) move the same bytes, I/Os and syncs as fio on the same job, at every queue depth.

use crate::util::Bounded;
use crate::util::{json, require, run, stderr, Scratch};
use std::process::Command;

fn fio_json(dir: &Scratch, workload: &str) -> serde_json::Value {
    let out = run(&["run", "--target", &dir.spec(), "--workload", workload, "--output-format", "fio-json"]);
    assert!(out.status.success(), "{workload} failed: {}", stderr(&out));
    json(&out)
}

#[test]
fn null_engine_runs_the_pipeline_without_io() {
    let dir = Scratch::under("/var/tmp", "engine-null");
    // Size-based: exactly the job's bytes, at every queue depth; no file laid out.
    for extra in ["", ",iodepth=32,iodepth_batch_submit=8,iodepth_batch_complete_min=4"] {
        let v =
            fio_json(&dir, &format!("io:name=n,ioengine=null,rw=randwrite,bs=4k,size=64m,fsync=64,end_fsync=1{extra}"));
        let job = &v["jobs"][0];
        assert_eq!(job["write"]["total_ios"], 16384, "{extra}: {job}");
        assert_eq!(job["write"]["io_bytes"], 64 << 20);
        // As fio: no sync after the last write (the pass ends first), end_fsync not counted.
        assert_eq!(job["sync"]["total_ios"], 16384 / 64 - 1, "{extra}");
        assert_eq!(job["error"], 0);
        assert!(dir.leftovers().is_empty(), "ioengine=null left {:?}", dir.leftovers());
        let progress = stderr(&run(&["run", "--target", &dir.spec(), "--workload", "io:ioengine=null,size=1m"]));
        assert!(!progress.contains("laying out"), "null lays nothing out: {progress}");
    }
    // Time-based: a 1 TiB job that moves no data, so nothing on the target has to hold it.
    let v = fio_json(&dir, "io:ioengine=null,rw=randread,bs=4k,size=1t,runtime=300ms,time_based=1,iodepth=16");
    let read = &v["jobs"][0]["read"];
    assert!(read["total_ios"].as_u64().unwrap() > 10_000, "{read}");
    assert!(read["runtime"].as_u64().unwrap() >= 300, "{read}");
    assert!(dir.leftovers().is_empty());
}

#[test]
fn engines_that_are_not_built_or_do_not_exist_are_refused_with_the_list() {
    let dir = Scratch::new("engine-refused");
    for (engine, want) in [
        ("splice", "ioengine=splice is fio's but not supported by fsarena"),
        ("libaoi", "'libaoi' is not an I/O engine"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", &format!("io:ioengine={engine},size=1m")]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{engine}: {err}");
        assert!(
            err.contains(want) && err.contains("expected one of psync, sync, null, io_uring, libaio, mmap, posixaio"),
            "{engine}: {err}"
        );
        assert!(dir.leftovers().is_empty());
    }
    // io_uring options that cannot work are refused at plan time, before any file exists.
    let out = run(&["run", "--target", &dir.spec(), "--workload", "io:ioengine=io_uring,hipri=1,size=1m"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("hipri=1 needs direct=1"), "{}", stderr(&out));
    assert!(dir.leftovers().is_empty());
    // verify needs data: refused with null
    let out = run(&["run", "--target", &dir.spec(), "--workload", "io:ioengine=null,rw=write,verify=crc32c,size=1m"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs data on disk"), "{}", stderr(&out));
}

/// An ext4 on a loop device, mounted for one test (needs root), so O_DIRECT works.
struct Ext4Loop {
    dir: Scratch,
    image: std::path::PathBuf,
}

impl Ext4Loop {
    fn new(name: &str) -> Self {
        let dir = Scratch::under("/tmp", name);
        let image = std::path::PathBuf::from(format!("/var/tmp/fsarena-test-{name}-{}.img", std::process::id()));
        let f = std::fs::File::create(&image).expect("image");
        f.set_len(256 << 20).expect("image size");
        let ok = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image).status().expect("mkfs.ext4 runs");
        assert!(ok.success(), "mkfs.ext4 failed");
        let ok = Command::new("mount").args(["-o", "loop"]).arg(&image).arg(&dir.path).status().expect("mount");
        assert!(ok.success(), "mounting a loop ext4 failed: these tests run as root");
        Self { dir, image }
    }
}

impl Drop for Ext4Loop {
    fn drop(&mut self) {
        // umount detaches the loop device mount -o loop attached (autoclear).
        let _ = Command::new("umount").arg(&self.dir.path).status();
        let _ = std::fs::remove_file(&self.image);
    }
}

/// (read bytes, read ios, write bytes, write ios, syncs) of the one job of a fio-shaped JSON.
fn counts(v: &serde_json::Value) -> [u64; 5] {
    let job = &v["jobs"][0];
    let n = |d: &str, k: &str| job[d][k].as_u64().unwrap_or_else(|| panic!("{d}.{k} in {job}"));
    [
        n("read", "io_bytes"),
        n("read", "total_ios"),
        n("write", "io_bytes"),
        n("write", "total_ios"),
        n("sync", "total_ios"),
    ]
}

fn real_fio(dir: &Scratch, opts: &[String]) -> serde_json::Value {
    // fio writes verify state files into its working directory: a scratch one of its own.
    let cwd = Scratch::new(&format!("{}-cwd", dir.path.file_name().unwrap().to_string_lossy()));
    let out = Command::new(require("fio"))
        .current_dir(&cwd.path)
        .arg("--name=eng")
        .arg(format!("--directory={}", dir.path.display()))
        .args(opts.iter().map(|a| format!("--{a}")))
        .arg("--output-format=json")
        .bounded_output()
        .expect("fio runs");
    assert!(out.status.success(), "fio {opts:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    // fio prints notes before the JSON on stdout (a synchronous engine at iodepth > 1).
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).expect("fio's JSON")
}

/// Every rw × iodepth 1/8/32 on `engine` moves what fio moves on the same job.
fn same_as_fio(dir: &Scratch, engine: &str, extra: &[&str]) {
    for rw in ["read", "write", "randread", "randwrite", "randrw"] {
        for depth in [1, 8, 32] {
            let mut opts: Vec<String> =
                vec![format!("ioengine={engine}"), format!("rw={rw}"), "bs=4k".into(), "size=4m".into()];
            opts.push(format!("iodepth={depth}"));
            opts.extend(extra.iter().map(|s| s.to_string()));
            if rw.contains("write") {
                opts.push("fsync=16".into());
            }
            let fio = counts(&real_fio(dir, &opts));
            let spec = format!("io:name=eng,{}", opts.join(","));
            let mut ours = counts(&fio_json(dir, &spec));
            let what = format!("{engine} rw={rw} iodepth={depth} {extra:?}: [rb, rios, wb, wios, syncs]");
            if (engine == "io_uring" || engine == "posixaio") && depth > 1 {
                // fio queues a sync and, until one completes, issues another before each
                // write (io_u.c sets last_was_sync only at completion): its count varies from
                // run to run (489-498 syncs for 1,024 writes at fsync=16, iodepth=8).
                ours[4] = fio[4];
            }
            if rw == "randrw" {
                // Each tool draws the read/write split itself: totals are exact.
                assert_eq!(ours[0] + ours[2], fio[0] + fio[2], "{what} fsarena {ours:?} fio {fio:?}");
                assert_eq!(ours[1] + ours[3], fio[1] + fio[3], "{what} fsarena {ours:?} fio {fio:?}");
            } else {
                assert_eq!(ours, fio, "{what}");
            }
            assert_eq!(ours[0] + ours[2], 4 << 20, "{what}");
        }
    }
}

#[test]
fn io_uring_moves_what_fio_moves_at_every_depth() {
    let dir = Scratch::new("engine-uring");
    same_as_fio(&dir, "io_uring", &[]);
    same_as_fio(&dir, "io_uring", &["iodepth_batch_submit=8", "iodepth_batch_complete_min=4", "fixedbufs=1"]);
    same_as_fio(&dir, "io_uring", &["registerfiles=1", "sqthread_poll=1", "nonvectored=0"]);
}

#[test]
fn mmap_and_posixaio_move_what_fio_moves_at_every_depth() {
    let dir = Scratch::new("engine-mmap-posixaio");
    same_as_fio(&dir, "mmap", &[]);
    same_as_fio(&dir, "posixaio", &[]);
}

#[test]
fn libaio_with_direct_io_moves_what_fio_moves_at_every_depth() {
    let ext4 = Ext4Loop::new("engine-libaio");
    same_as_fio(&ext4.dir, "libaio", &["direct=1"]);
    let out = run(&["run", "--target", &ext4.dir.spec(), "--workload", "io:ioengine=libaio,direct=1,size=1m"]);
    assert!(!stderr(&out).contains("non-buffered"), "no warning with direct=1: {}", stderr(&out));
}

#[test]
fn libaio_buffered_warns_once_as_fio_documents() {
    let dir = Scratch::new("engine-libaio-buffered");
    let w = "io:ioengine=libaio,iodepth=8,rw=randread,size=1m,numjobs=2";
    let out = run(&["run", "--target", &dir.spec(), "--workload", w, "--output-format", "fio-json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("queued behavior with non-buffered I/O").count(), 1, "{err}");
    assert_eq!(json(&out)["jobs"][0]["read"]["io_bytes"], 1 << 20);
}
