//! The engine registry end to end: `ioengine=null` runs the whole pipeline (plan, threads,
//! queue, merge, fio-json, storing) on a `dir:` target without doing any I/O, so it needs no
//! disk, creates no file and could run without root; unbuilt engines are refused by name.

use crate::util::{json, run, stderr, Scratch};

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
        assert_eq!(job["sync"]["total_ios"], 16384 / 64 + 1, "{extra}");
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
        ("io_uring", "ioengine=io_uring is not supported yet"),
        ("libaio", "ioengine=libaio is not supported yet"),
        ("splice", "'splice' is not an I/O engine"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", &format!("io:ioengine={engine},size=1m")]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{engine}: {err}");
        assert!(err.contains(want) && err.contains("expected one of psync, sync, null"), "{engine}: {err}");
        assert!(dir.leftovers().is_empty());
    }
    // verify needs data: refused with null
    let out = run(&["run", "--target", &dir.spec(), "--workload", "io:ioengine=null,rw=write,verify=crc32c,size=1m"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs data on disk"), "{}", stderr(&out));
}
