//! The `kv` workload end to end: db_bench's fillseq, readseq and readrandom on tmpfs and ext4
//! with fjall, db_bench's summary lines in the output and the key counts db_bench would give,
//! nothing left behind, bad input refused before anything exists; and with RocksDB built in
//! (`--features rocksdb`), the same on RocksDB.

use crate::util::{run, stderr, stdout, Scratch};

/// db_bench's summary line of `name`, split into its words.
fn summary<'a>(text: &'a str, name: &str) -> Vec<Vec<&'a str>> {
    text.lines().filter(|l| l.starts_with(&format!("{name:<12} : "))).map(|l| l.split_whitespace().collect()).collect()
}

fn fill_and_read(engine: &str) {
    let out = run(&[
        "run",
        "--target",
        "tmpfs:size=256m",
        "--target",
        "ext4:size=512m",
        "--workload",
        &format!("kv:engine={engine},benchmarks='fillseq,readseq,readrandom',num=20000"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for name in ["fillseq", "readseq", "readrandom"] {
        let lines = summary(&text, name);
        assert_eq!(lines.len(), 2, "{name}: one line per target:\n{text}");
        for words in lines {
            // name : X micros/op N ops/sec X seconds N operations; X MB/s [...]
            assert_eq!(words[3], "micros/op", "{words:?}");
            assert_eq!(words[5], "ops/sec", "{words:?}");
            assert!(words[4].parse::<u64>().unwrap_or(0) > 0, "{words:?}");
            assert_eq!(&words[8..10], &["20000", "operations;"], "{name}: every key counted: {words:?}");
            assert_eq!(words[11], "MB/s", "{words:?}");
            if name == "readrandom" {
                assert_eq!(&words[12..], &["(20000", "of", "20000", "found)"], "every key exists: {words:?}");
            }
        }
    }
    assert_eq!(text.matches("Microseconds per read:").count(), 4, "{text}");
}

#[test]
fn fjall_fills_and_reads_on_tmpfs_and_ext4_as_db_bench_counts() {
    fill_and_read("fjall");
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_fills_and_reads_on_tmpfs_and_ext4_as_db_bench_counts() {
    fill_and_read("rocksdb");
}

#[test]
fn nothing_is_left_behind_and_bad_input_exits_2_first() {
    let dir = Scratch::new("kv-clean");
    let out = run(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "kv:engine=fjall,benchmarks='fillrandom,deleterandom',num=500",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("deleterandom : "), "{}", stdout(&out));
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
    for (workload, want) in [
        ("kv:benchmarks='fillseq,compact'", "'compact' is not a benchmark fsarena's kv runs"),
        ("kv:value_size=0", "must be larger than 0"),
        ("kv:engine=fjall,use_direct_reads=1", "needs engine=rocksdb"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", workload]);
        assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{workload}: {}", stderr(&out));
        assert!(dir.leftovers().is_empty());
    }
    #[cfg(not(feature = "rocksdb"))]
    {
        let out = run(&["run", "--target", &dir.spec(), "--workload", "kv:engine=rocksdb"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("--features rocksdb"), "{}", stderr(&out));
    }
}
