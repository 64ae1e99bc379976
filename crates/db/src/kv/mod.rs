//! The `kv` workload: db_bench's benchmarks (fillseq, readrandom, ...) with its option names,
//! defaults and figures, on RocksDB itself (cargo feature `rocksdb`, the system's librocksdb)
//! or on fjall (pure Rust, always built), in a database under the target's root.
//!
//! The RocksDB study (../shared/studies, 003) ran db_bench's fillseq, readseq and readrandom
//! with values of 16 B to 16 KiB, 1 and 8 threads, buffered and direct reads, on BlueFS and
//! XFS; `value_size` and `threads` sweep as fio's `numjobs` does. Each benchmark is one part
//! of the result, with db_bench's figures: ops/sec, micros/op, MB/s, and a latency histogram.
//!
//! As db_bench: benchmarks run in the order given on one database; fillseq and fillrandom
//! start from a fresh one; every thread does `num` operations (fillseq's threads each write
//! keys 0..num); ops/sec is all threads' operations over the wall time from the first start
//! to the last finish, micros/op the threads' summed time per operation; readwhilewriting
//! adds one writer thread whose writes are not in the figures.

mod bench;
pub mod engine;
pub mod gen;
pub mod options;
#[cfg(feature = "rocksdb")]
mod rocks;
#[cfg(test)]
mod tests;
pub mod text;

pub use options::{Benchmark, EngineKind, KvOptions, OPTIONS};

use fsarena_core::{Better, InputError, LatencyHistogram, Measurement, Spec};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use std::path::Path;
use std::sync::atomic::Ordering;

/// The directory of the database under the target's root.
const DB_DIR: &str = "kv-db";

/// The `kv` workload.
#[derive(Debug, Clone)]
pub struct KvWorkload {
    options: KvOptions,
    engine: EngineKind,
    given: Vec<(String, String)>,
}

impl KvWorkload {
    /// From `--workload kv:benchmarks=fillseq,readrandom,num=100000,value_size=4096`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = KvOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("kv", OPTIONS, &mut options, k, v)?;
        }
        let engine = options.engine.unwrap_or(EngineKind::default_engine());
        options::check(&options, engine).map_err(InputError::new)?;
        Ok(Self { options, engine, given: spec.params.clone() })
    }

    /// The options as parsed.
    pub fn options(&self) -> &KvOptions {
        &self.options
    }

    /// The engine that runs.
    pub fn engine(&self) -> EngineKind {
        self.engine
    }

    /// Part names: the benchmark's name, `name.2` for its second run in the list, ...
    fn part_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for b in &self.options.benchmarks {
            let seen = self.options.benchmarks.iter().take(out.len()).filter(|x| *x == b).count();
            out.push(if seen == 0 { b.name().to_string() } else { format!("{}.{}", b.name(), seen + 1) });
        }
        out
    }

    /// The seed base: the given one, or one from the clock (db_bench's seed=0).
    fn seed(&self) -> u64 {
        match self.options.seed {
            0 => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64 | 1),
            s => s,
        }
    }
}

/// db_bench's figures of one benchmark as a measurement.
fn measurement(o: &KvOptions, bench: Benchmark, out: &bench::Outcome, seed: u64) -> Measurement {
    let mut m = Measurement { complete: true, ..Measurement::default() };
    let ops: u64 = out.threads.iter().map(|t| t.ops).sum();
    let sum = |f: fn(&bench::ThreadStats) -> u64| out.threads.iter().map(f).sum::<u64>();
    let start = out.threads.iter().map(|t| t.start).min();
    let finish = out.threads.iter().map(|t| t.finish).max();
    let span = match (start, finish) {
        (Some(s), Some(f)) => f.duration_since(s).as_secs_f64(),
        _ => 0.0,
    };
    let busy: f64 = out.threads.iter().map(|t| t.finish.duration_since(t.start).as_secs_f64()).sum();
    // db_bench counts at least one operation, so a benchmark that did none still divides.
    let done = ops.max(1) as f64;
    if span > 0.0 {
        m.push("ops_per_s", "ops/s", Better::Higher, done / span);
        m.push("micros_per_op", "µs", Better::Lower, busy * 1e6 / done);
        let bytes = sum(|t| t.bytes);
        if bytes > 0 {
            m.push("mb_per_s", "MB/s", Better::Higher, bytes as f64 / 1_048_576.0 / span);
        }
        m.push("elapsed", "ns", Better::Lower, span * 1e9);
    }
    let mut hist = LatencyHistogram::new();
    for t in &out.threads {
        hist.merge(&t.hist);
    }
    if !hist.is_empty() {
        m.push(&format!("{}_lat_p99", bench.op()), "ns", Better::Lower, hist.percentile(99.0) as f64);
        m.add_latency(bench.op(), &hist);
    }
    m.count("ops", ops);
    m.count("keys_written", sum(|t| t.written));
    m.count("keys_read", sum(|t| t.read));
    m.count("keys_found", sum(|t| t.found));
    m.count("keys_deleted", sum(|t| t.deleted));
    m.count("background_writes", out.background_writes);
    m.count("threads", u64::from(o.threads));
    m.count("seed", seed);
    m
}

/// Removes the database directory, if any.
fn remove_db(dir: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("kv: removing {}: {e}", dir.display())),
        _ => Ok(()),
    }
}

impl Workload for KvWorkload {
    fn kind(&self) -> &'static str {
        "kv"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        let entry = o.key_size + o.value_size;
        // Every benchmark writes within keys 0..num (fillseq: 0..writes), whatever the threads
        // and the duration: the tables hold at most that many entries, counted twice for
        // compaction's copies, plus the logs of the two memtables (the one filling, the one
        // flushing: max_write_buffer_number=2).
        let writes =
            o.benchmarks.iter().any(|b| matches!(b, Benchmark::FillSeq | Benchmark::FillRandom | Benchmark::Overwrite));
        // fillseq with writes > num goes past key num-1.
        let keys = o.num.max(o.writes.unwrap_or(0));
        let tables = if writes { keys.saturating_mul(entry).saturating_mul(2) } else { 0 };
        let bytes = tables.saturating_add(o.write_buffer_size.saturating_mul(2));
        Footprint {
            source: format!("kv workload (num={}, value_size={}, threads={})", o.num, o.value_size, o.threads),
            // The benchmark's threads, readwhilewriting's writer, the engine's flush and
            // compaction threads.
            threads: u64::from(o.threads) + 1 + 4,
            buffer_bytes: o
                .cache_size
                .saturating_add(o.write_buffer_size.saturating_mul(2))
                .saturating_add((u64::from(o.threads) + 1).saturating_mul(o.value_size.max(1 << 20) + 100)),
            bytes_on_target: bytes,
            files: bytes / (32 << 20) + 16,
            open_files: bytes / (32 << 20) + 16,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        self.part_names()
            .into_iter()
            .map(|name| {
                format!(
                    "kv {name} on {}: num={} key_size={} value_size={} threads={}",
                    self.engine.name(),
                    o.num,
                    o.key_size,
                    o.value_size,
                    o.threads
                )
            })
            .collect()
    }

    fn parts(&self) -> Vec<String> {
        self.part_names()
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let o = &self.options;
        let dir = env.root.join(DB_DIR);
        let seed = self.seed();
        let mut done = Vec::new();
        let mut error = None;
        let mut store: Option<Box<dyn engine::Engine>> = None;
        for (i, bench) in o.benchmarks.iter().enumerate() {
            if env.stop.load(Ordering::Relaxed) {
                break;
            }
            if bench.fresh() {
                // db_bench destroys the database before a fill.
                store = None;
                if let Err(e) = remove_db(&dir) {
                    error = Some(e);
                    break;
                }
            }
            if store.is_none() {
                match engine::open(self.engine, &dir, o) {
                    Ok(s) => store = Some(s),
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            let Some(s) = store.as_deref() else { break };
            (env.progress)(&format!("kv: {} ({})", bench.name(), self.engine.name()));
            let bench_seed = seed.wrapping_add(1000 * i as u64);
            let out = bench::run(s, o, *bench, bench_seed, env.stop, env.live);
            let mut m = measurement(o, *bench, &out, seed);
            m.complete = out.error.is_none() && !env.stop.load(Ordering::Relaxed);
            done.push(m);
            if out.error.is_some() {
                error = out.error;
                break;
            }
        }
        drop(store);
        let failed = error.is_some() || env.stop.load(Ordering::Relaxed);
        if !o.keep && (failed || !env.keep_files) {
            if let Err(e) = remove_db(&dir) {
                error = error.or(Some(e));
            }
        }
        match error {
            Some(message) => Err(WorkloadError { message, partial: done }),
            None => Ok(done),
        }
    }
}
