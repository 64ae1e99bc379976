//! Unit tests of the `kv` workload: options, refusals, and small runs on fjall in a temporary
//! directory.

#![allow(clippy::unwrap_used)]

use super::*;
use std::sync::atomic::AtomicBool;

fn workload(spec: &str) -> Result<KvWorkload, InputError> {
    KvWorkload::from_spec(&Spec::parse(spec).unwrap())
}

fn run(spec: &str) -> Vec<Measurement> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("fsarena-kv-test-{}-{n}", std::process::id()));
    std::fs::create_dir(&dir).unwrap();
    let stop = AtomicBool::new(false);
    let out = workload(spec).unwrap().run(&RunEnv::quiet(&dir, &stop)).unwrap();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "files left");
    std::fs::remove_dir(&dir).unwrap();
    out
}

#[test]
fn db_bench_defaults_and_names() {
    let w = workload("kv:engine=fjall").unwrap();
    let o = w.options();
    assert_eq!((o.num, o.value_size, o.key_size, o.threads), (1_000_000, 100, 16, 1));
    assert_eq!(o.cache_size, 8 << 20);
    assert_eq!(w.parts(), ["fillseq", "readrandom"]);
    let w = workload("kv:engine=fjall,benchmarks='fillseq,readrandom,readrandom',value_size=4k,threads=8").unwrap();
    assert_eq!(w.parts(), ["fillseq", "readrandom", "readrandom.2"]);
    assert_eq!((w.options().value_size, w.options().threads), (4096, 8));
    assert_eq!(w.describe()[0], "kv fillseq on fjall: num=1000000 key_size=16 value_size=4096 threads=8");
}

#[test]
fn the_footprint_counts_num_keys_whatever_the_threads() {
    let f = workload("kv:engine=fjall,num=1000,value_size=1000,threads=8").unwrap().footprint();
    assert_eq!(f.bytes_on_target, 1000 * 1016 * 2 + 2 * (64 << 20));
    assert_eq!(f.threads, 8 + 1 + 4);
    let r = workload("kv:engine=fjall,benchmarks=readrandom").unwrap().footprint();
    assert_eq!(r.bytes_on_target, 2 * (64 << 20), "a read-only list writes no tables");
}

#[test]
fn bad_input_is_refused_by_name() {
    for (spec, want) in [
        (
            "kv:benchmarks='fillseq,readrandm'",
            "'readrandm' is not a benchmark fsarena's kv runs: did you mean 'readrandom'?",
        ),
        ("kv:value_size=0", "must be larger than 0"),
        ("kv:num=0", "must be at least 1"),
        ("kv:threads=0", "must be at least 1"),
        ("kv:engine=leveldb", "not an engine"),
        ("kv:compression_type=bzip2", "not a compression"),
        ("kv:compression_ratio=2", "not a ratio"),
        ("kv:valu_size=1", "did you mean 'value_size'"),
        ("kv:engine=fjall,use_direct_reads=1", "needs engine=rocksdb"),
        ("kv:engine=fjall,disable_wal=1", "needs engine=rocksdb"),
        ("kv:engine=fjall,compression_type=zstd", "needs engine=rocksdb"),
    ] {
        let e = workload(spec).unwrap_err();
        assert!(e.message.contains(want), "{spec}: {}", e.message);
    }
    #[cfg(not(feature = "rocksdb"))]
    {
        let e = workload("kv:engine=rocksdb").unwrap_err();
        assert!(e.message.contains("--features rocksdb"), "{}", e.message);
        assert_eq!(EngineKind::default_engine(), EngineKind::Fjall);
    }
}

#[test]
fn the_table_and_the_defaults_agree() {
    fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
}

#[test]
fn benchmarks_count_what_db_bench_counts() {
    let ms = run(
        "kv:engine=fjall,benchmarks='fillseq,readseq,readrandom,seekrandom,overwrite,deleterandom',num=2000,seed=7",
    );
    assert_eq!(ms.len(), 6);
    let c = |m: &Measurement, k: &str| m.counters[k];
    assert_eq!(c(&ms[0], "keys_written"), 2000);
    assert_eq!(ms[0].latency("write").unwrap().len(), 2000);
    // 16-byte key + 100-byte value per write.
    assert!(ms[0].metric("mb_per_s").unwrap().value > 0.0);
    assert_eq!((c(&ms[1], "keys_read"), c(&ms[1], "ops")), (2000, 2000));
    assert_eq!((c(&ms[2], "keys_read"), c(&ms[2], "keys_found")), (2000, 2000), "every key exists");
    assert_eq!(c(&ms[3], "keys_found"), 2000, "every seek lands on its key");
    assert_eq!(c(&ms[4], "keys_written"), 2000);
    assert_eq!(c(&ms[5], "keys_deleted"), 2000);
    assert!(ms.iter().all(|m| m.complete && m.metric("ops_per_s").unwrap().value > 0.0));
    let ms = run("kv:engine=fjall,benchmarks='fillseq,readseq',num=500,histogram=0");
    assert!(ms[0].latency("write").is_none() && ms[1].latency("read").is_none(), "no clock per operation");
    assert_eq!((ms[0].counters["keys_written"], ms[1].counters["keys_read"]), (500, 500));
}

#[test]
fn threads_each_do_num_and_readwhilewriting_reports_its_readers() {
    let ms = run("kv:engine=fjall,benchmarks='fillrandom,readwhilewriting',num=1000,threads=3,seed=1");
    assert_eq!(ms[0].counters["keys_written"], 3000);
    assert_eq!(ms[1].counters["keys_read"], 3000);
    assert_eq!(ms[1].counters["keys_written"], 0, "the writer is not in the figures");
    assert!(ms[1].counters["keys_found"] < 3000, "fillrandom repeats keys, so some are missing");
}

#[test]
fn reads_writes_and_deletes_count_as_db_bench_and_duration_rules_the_random_ones() {
    let ms = run("kv:engine=fjall,benchmarks='fillseq,readseq,readrandom,seekrandom,deleterandom',num=1000,writes=1500,reads=300,deletes=40,seed=3");
    assert_eq!(ms[0].counters["keys_written"], 1500, "fillseq writes keys 0..writes");
    assert_eq!(ms[1].counters["keys_read"], 300);
    assert_eq!((ms[2].counters["keys_read"], ms[2].counters["keys_found"]), (300, 300), "keys drawn in 0..num");
    assert_eq!(ms[3].counters["keys_read"], 300);
    assert_eq!(ms[4].counters["keys_deleted"], 40);
    // writes=0 and -1 both mean num, as db_bench's `writes_ == 0 ? num_ : writes_`.
    for w in ["0", "-1"] {
        let ms = run(&format!("kv:engine=fjall,benchmarks=fillrandom,num=700,writes={w}"));
        assert_eq!(ms[0].counters["keys_written"], 700, "writes={w}");
    }
    // duration: readrandom runs past its count for a whole second; fillseq ignores it.
    let ms = run("kv:engine=fjall,benchmarks='fillseq,readrandom',num=200,duration=1,seed=1");
    assert_eq!(ms[0].counters["keys_written"], 200, "fillseq is not timed by duration");
    let reads = ms[1].counters["keys_read"];
    assert!(reads > 200 && reads % 1000 == 999, "read until the second passed, checked every 1000: {reads}");
    assert!(ms[1].metric("elapsed").unwrap().value >= 1e9);
}

#[test]
fn reads_writes_and_duration_refuse_what_is_not_a_number() {
    for bad in ["reads=x", "writes=1.5", "deletes=2k", "duration=-1"] {
        let e = workload(&format!("kv:{bad}")).unwrap_err().to_string();
        assert!(e.contains("not a whole number"), "{bad}: {e}");
    }
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_runs_the_same_benchmarks_and_counts() {
    assert_eq!(EngineKind::default_engine(), EngineKind::Rocksdb);
    for compression in ["none", "snappy", "lz4", "zstd"] {
        let spec = format!(
            "kv:engine=rocksdb,benchmarks='fillseq,readseq,readrandom',num=2000,compression_type={compression}"
        );
        let ms = run(&spec);
        assert_eq!(ms[0].counters["keys_written"], 2000, "{compression}");
        assert_eq!(ms[1].counters["keys_read"], 2000, "{compression}");
        assert_eq!(ms[2].counters["keys_found"], 2000, "{compression}");
    }
}
