//! fio's dedupe buffers (`dedupe_percentage`, `dedupe_mode`, `dedupe_working_set_percentage`,
//! `dedupe_global`), counted on the files as written: the share of 4 KiB blocks that repeat
//! others, where the repeats come from, whether two jobs share them, and fio 3.33's own files
//! of the same job file.

use crate::util::Bounded;
use crate::util::{require, run, stderr, SmallTmpfs};
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Blocks per job file: size=4m in blocks of 4 KiB.
const N: usize = 1024;

/// The hash of each 4 KiB block of `path`, in order: the test's own dedupe counter (64-bit
/// hashes: among a few thousand blocks a collision is some 1e-12 likely).
fn blocks(path: &Path) -> Vec<u64> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    data.chunks(4096)
        .map(|b| {
            let mut h = DefaultHasher::new();
            b.hash(&mut h);
            h.finish()
        })
        .collect()
}

/// Distinct blocks among `b`.
fn distinct(b: &[u64]) -> usize {
    b.iter().collect::<HashSet<_>>().len()
}

/// A job file of two write jobs, `a` and `b`, of 4 MiB each, with `options` added.
fn job_file(options: &str) -> String {
    format!("[global]\nioengine=psync\nrw=write\nbs=4k\nsize=4m\n{options}\n[a]\n[b]\n")
}

/// The file named `name` anywhere under `dir` (fsarena's run directory is inside its target).
fn find(dir: &Path, name: &str) -> PathBuf {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if e.file_name() == name {
                return p;
            }
        }
    }
    panic!("{name} is not under {}", dir.display())
}

/// The blocks of jobs `a` and `b` that fsarena writes for the job file `body` (kept with
/// fsarena's `keep=1`), on a tmpfs of its own.
fn ours(name: &str, body: &str) -> [Vec<u64>; 2] {
    let fs = SmallTmpfs::new(&format!("dedupe-{name}"), "32m");
    let file = fs.dir.path.join("job.fio");
    std::fs::write(&file, body.replacen("[global]\n", "[global]\nkeep=1\n", 1)).expect("job file");
    let target = fs.dir.path.join("target");
    std::fs::create_dir(&target).expect("target dir");
    let spec = format!("dir:path={}", target.display());
    let out = run(&["run", "--no-store", "--target", &spec, "--fio", file.to_str().expect("utf-8")]);
    assert!(out.status.success(), "fsarena failed on {name}: {}", stderr(&out));
    [blocks(&find(&target, "a.0.0")), blocks(&find(&target, "b.0.0"))]
}

/// The blocks of jobs `a` and `b` that fio 3.33 writes for the job file `body`.
fn fios(name: &str, body: &str) -> [Vec<u64>; 2] {
    let fs = SmallTmpfs::new(&format!("dedupe-fio-{name}"), "32m");
    let file = fs.dir.path.join("job.fio");
    std::fs::write(&file, body).expect("job file");
    let target = fs.dir.path.join("target");
    std::fs::create_dir(&target).expect("target dir");
    let out = Command::new(require("fio"))
        .current_dir(&fs.dir.path)
        .arg(format!("--directory={}", target.display()))
        .arg("--output=/dev/null")
        .arg(&file)
        .bounded_output()
        .expect("fio runs");
    assert!(out.status.success(), "fio failed on {name}: {}", String::from_utf8_lossy(&out.stderr));
    [blocks(&target.join("a.0.0")), blocks(&target.join("b.0.0"))]
}

/// True when `got` is within five standard deviations (and one block) of a binomial count of
/// `n` trials at `p`: a false alarm about once in 1.7 million runs.
fn binomial(got: usize, n: usize, p: f64) -> bool {
    let (n, got) = (n as f64, got as f64);
    (got - n * p).abs() <= 5.0 * (n * p * (1.0 - p)).sqrt() + 1.0
}

#[test]
fn dedupe_percentage_is_the_share_of_blocks_that_repeat_others() {
    // Each block is a repeat with probability dedupe_percentage/100: at 50, 1024 blocks
    // leave 512 ± 80 distinct (σ = 16).
    let [a, b] = ours("p50", &job_file("dedupe_percentage=50"));
    for (job, blocks) in [("a", &a), ("b", &b)] {
        assert_eq!(blocks.len(), N);
        assert!(binomial(distinct(blocks), N, 0.5), "job {job}: {} distinct of {N} at 50%", distinct(blocks));
    }
    let [a, b] = ours("p0", &job_file("dedupe_percentage=0"));
    assert_eq!(distinct(&[a, b].concat()), 2 * N, "at 0 every block of both jobs differs");
    let [a, b] = ours("p100", &job_file("dedupe_percentage=100"));
    assert_eq!((distinct(&a), distinct(&b), distinct(&[a, b].concat())), (1, 1, 2), "at 100 one block per job");
}

#[test]
fn a_global_working_set_is_shared_by_the_jobs_and_a_local_one_is_not() {
    let options = "dedupe_percentage=50\ndedupe_mode=working_set\ndedupe_working_set_percentage=10";
    // The working set: 10 % of 4 MiB, 102 blocks; the duplicates add at most those.
    let set = 4 * 1024 * 1024 / 10 / 4096;
    for global in [0, 1] {
        let [a, b] = ours(&format!("ws{global}"), &job_file(&format!("{options}\ndedupe_global={global}")));
        for (job, blocks) in [("a", &a), ("b", &b)] {
            let d = distinct(blocks);
            let unique = (N as f64 * 0.5 - 5.0 * 16.0) as usize;
            assert!(d >= unique && d <= N / 2 + 81 + set, "dedupe_global={global}, job {job}: {d} distinct of {N}");
        }
        let in_a: HashSet<_> = a.iter().collect();
        let shared = b.iter().filter(|h| in_a.contains(h)).count();
        if global == 1 {
            // Half of b's set is a's first blocks, which a writes too: about a quarter of b's
            // blocks (its duplicates drawn from that half).
            assert!(shared > N / 8, "dedupe_global=1: only {shared} of b's blocks are a's");
        } else {
            assert_eq!(shared, 0, "dedupe_global=0: the jobs share blocks");
        }
    }
}

#[test]
fn dedupe_blocks_are_fios_own() {
    // fio 3.33's streams, followed: the same blocks, in the same places, as fio writes (a
    // job that compresses without deduping refills its buffers from the same streams).
    for (name, options) in [
        ("repeat", "dedupe_percentage=50\nbuffer_compress_percentage=50"),
        ("compress", "buffer_compress_percentage=25"),
        // Each loop starts the streams over, as fio's randrepeat seeds them again.
        ("loops", "dedupe_percentage=40\nloops=2"),
        // A job that reads has its file laid out, by fio with the job's own writes.
        ("mixed", "rw=rw\ndedupe_percentage=50"),
        ("global", "dedupe_percentage=30\ndedupe_mode=working_set\ndedupe_global=1\ndedupe_working_set_percentage=20"),
    ] {
        let body = job_file(options);
        let (fio, ours) = (fios(name, &body), ours(name, &body));
        let counts =
            |f: &[Vec<u64>; 2]| [distinct(&f[0]), distinct(&f[1]), distinct(&[f[0].clone(), f[1].clone()].concat())];
        assert_eq!(counts(&ours), counts(&fio), "{name}: distinct blocks of a, b and both (fsarena, fio)");
        assert_eq!(ours, fio, "{name}: the blocks differ from fio's");
    }
}
