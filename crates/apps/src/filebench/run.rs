//! A run of a model: the filesets created (untimed), every thread instance started at once,
//! its flowop list looped until the time is up (or a finish condition, or `set mode quit`),
//! then the figures of each flowop name summed over the threads, as filebench's
//! "Per-Operation Breakdown" and "IO Summary" report them, and the files removed.

use super::control::{Events, Sem, Wake};
use super::fileset::Fileset;
use super::flowops::{End, Live, Local, Shared, Step, Worker};
use super::model::Model;
use super::vocabulary::Kind;
use fsarena_core::{Better, Measurement, Series};
use fsarena_workload::{Finish, RunEnv, WorkloadError};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Result names: one slot per distinct flowop name, in definition order.
fn slots(model: &Model) -> Vec<(String, Kind)> {
    let mut out: Vec<(String, Kind)> = Vec::new();
    for f in model.flowops() {
        if !out.iter().any(|(n, _)| n == &f.name) {
            out.push((f.name.clone(), f.kind));
        }
    }
    out
}

/// The semblock flowops of a thread's list, one per name.
fn semblocks(flowops: &[super::vocabulary::Flowop]) -> Vec<&super::vocabulary::Flowop> {
    let mut out: Vec<&super::vocabulary::Flowop> = Vec::new();
    for f in flowops.iter().filter(|f| f.kind == Kind::SemBlock) {
        if !out.iter().any(|o| o.name == f.name) {
            out.push(f);
        }
    }
    out
}

/// The I/O buffer a thread needs: its largest iosize, 1 MiB for whole-file flowops without one.
pub fn buffer_bytes(flowops: &[super::vocabulary::Flowop]) -> u64 {
    flowops
        .iter()
        .map(|f| match f.kind {
            Kind::ReadWholeFile | Kind::WriteWholeFile if f.iosize == 0 => 1 << 20,
            // aiowrite writes from its ring's own buffers (aio::buffer_bytes).
            Kind::AioWrite => 0,
            _ => f.iosize,
        })
        .max()
        .unwrap_or(0)
        .max(4096)
}

/// The run's I/O per second: the shared counters read by the coordinator at each second.
#[derive(Debug, Default)]
struct PerSecond {
    /// Seconds into the run and (ops, bytes) at the last sample.
    last: (f64, u64, u64),
    ops: Vec<f64>,
    mib: Vec<f64>,
}

impl PerSecond {
    /// A sample of the totals `(ops, bytes)` at `at` seconds: a value per second passed.
    fn tick(&mut self, at: f64, ops: u64, bytes: u64) {
        if at >= (self.ops.len() + 1) as f64 {
            self.push(at, ops, bytes);
        }
    }

    /// The last sample, at the run's end: a partial second counts if it is over 10 ms.
    fn finish(&mut self, at: f64, ops: u64, bytes: u64) {
        if at - self.last.0 > 0.01 {
            self.push(at, ops, bytes);
        }
    }

    fn push(&mut self, at: f64, ops: u64, bytes: u64) {
        let (t, o, b) = self.last;
        // The rate over the time since the last sample: the coordinator wakes every 20 ms,
        // so a sample may come a little after the second.
        let secs = (at - t).max(1e-9);
        self.ops.push(ops.saturating_sub(o) as f64 / secs);
        self.mib.push(bytes.saturating_sub(b) as f64 / 1_048_576.0 / secs);
        self.last = (at, ops, bytes);
    }
}

/// The seeds of the layout's generators: file sizes, and which entries are preallocated.
const LAYOUT_SEEDS: (u64, u64) = (0x5_DEEC_E66D, 1);

/// The model's filesets as every run lays them out: the same sizes and the same preallocated
/// entries each time. filebench never seeds the generators its layout draws from (drand48 for
/// cvar-gamma sizes, rand() for preallocation), so each of its runs makes the same fileset;
/// sizes drawn anew each run would add their own run-to-run noise (the mean file size of 1000
/// gamma(1.5) draws varies by about 2.6%, and varmail's reads with it).
pub fn layout(model: &Model) -> Vec<Fileset> {
    let mut sizes = fastrand::Rng::with_seed(LAYOUT_SEEDS.0);
    let mut exists = fastrand::Rng::with_seed(LAYOUT_SEEDS.1);
    model.filesets.iter().map(|d| Fileset::layout(d, &mut sizes, &mut exists)).collect()
}

/// Runs `model` for `runtime` in `env.root`.
pub fn run(model: &Model, runtime: Duration, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
    let filesets = layout(model);
    let below = fsarena_workload::served::Below::hold(env.root).map_err(|e| WorkloadError {
        message: format!("filebench: cannot open {}: {e}", env.root.display()),
        partial: Vec::new(),
    })?;
    let remove_all = || filesets.iter().for_each(|f| f.remove(&below));
    // A kept repetition's files are replaced: every run starts from the layout.
    remove_all();
    let (bytes, files) = filesets.iter().map(Fileset::preallocated).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (env.progress)(&format!("filebench: creating {files} preallocated entries ({bytes} bytes), untimed"));
    for f in &filesets {
        if let Err(message) = f.create(&below, &|| env.stop.load(Relaxed)) {
            remove_all();
            return Err(WorkloadError {
                message: format!("filebench: fileset {}: {message}", f.def.name),
                partial: Vec::new(),
            });
        }
    }
    let names = slots(model);
    let slot = |n: &str| names.iter().position(|(m, _)| m == n);
    let live: Vec<Live> = names.iter().map(|_| Live::default()).collect();
    // As filebench's: each thread instance running a semblock has its own semaphore, and a
    // sempost posts to every instance of its target.
    let mut sems: HashMap<String, Vec<Sem>> = HashMap::new();
    for p in &model.processes {
        for t in &p.threads {
            for f in semblocks(&t.flowops) {
                let n = p.instances as usize * t.instances as usize;
                sems.entry(f.name.clone()).or_default().extend((0..n).map(|_| Sem::new(f.highwater)));
            }
        }
    }
    let mut blocks = HashMap::new();
    for f in model.flowops().filter(|f| f.kind == Kind::Block) {
        blocks.insert(f.name.clone(), Wake::default());
    }
    let events = (model.eventrate > 0.0).then(|| Events::new(model.eventrate));
    let end = AtomicBool::new(false);
    let start = Instant::now();
    let shared = Shared {
        filesets: &filesets,
        root: env.root,
        below: &below,
        live: &live,
        io_ops: Default::default(),
        io_bytes: Default::default(),
        io_rw: Default::default(),
        events: events.as_ref(),
        sems: &sems,
        blocks: &blocks,
        end: &end,
        deadline: start + runtime,
        mode: model.mode,
    };
    let mut bodies = Vec::new();
    // Per semblock name, the semaphores given out so far.
    let mut taken: HashMap<&str, usize> = HashMap::new();
    for p in &model.processes {
        for _ in 0..p.instances {
            for t in &p.threads {
                let steps: Vec<Step<'_>> = t
                    .flowops
                    .iter()
                    .map(|op| Step {
                        op,
                        slot: slot(&op.name).unwrap_or(0),
                        target: op.target.as_deref().and_then(&slot),
                        sem: 0,
                    })
                    .collect();
                let buffer = (buffer_bytes(&t.flowops) as usize, t.memsize as usize);
                for _ in 0..t.instances {
                    let mut mine = steps.clone();
                    for f in semblocks(&t.flowops) {
                        let next = taken.entry(f.name.as_str()).or_insert(0usize);
                        for s in mine.iter_mut().filter(|s| s.op.kind == Kind::SemBlock && s.op.name == f.name) {
                            s.sem = *next;
                        }
                        *next += 1;
                    }
                    bodies.push((mine, buffer));
                }
            }
        }
    }
    let finished = AtomicUsize::new(0);
    let total = bodies.len();
    let gate = fsarena_workload::gate::StartGate::default();
    let (elapsed, results, series) = std::thread::scope(|s| {
        let shared = &shared;
        let finished = &finished;
        let n = names.len();
        let threads = bodies.into_iter().enumerate().map(|(k, (steps, buffer))| {
            move || {
                let mut w = Worker::new(shared, steps, n, buffer.0, buffer.1, k as u64 ^ 0x9e37_79b9);
                let why = w.run();
                if !matches!(why, End::Idle | End::Over) {
                    shared.end.store(true, Relaxed);
                }
                finished.fetch_add(1, Relaxed);
                (why, w.figures)
            }
        });
        let handles = match fsarena_workload::gate::spawn_gated(s, &gate, "filebench", threads) {
            Ok(h) => h,
            Err(e) => return (Duration::ZERO, vec![(End::Failed(e), Vec::new())], PerSecond::default()),
        };
        if let Some(ev) = shared.events {
            s.spawn(move || ev.generate(&|| shared.over()));
        }
        let mut shown = (0, 0);
        let mut series = PerSecond::default();
        while !shared.over() && finished.load(Relaxed) < total {
            if env.stop.load(Relaxed) {
                shared.end.store(true, Relaxed);
            }
            std::thread::sleep(Duration::from_millis(20));
            let now = (shared.io_ops.load(Relaxed), shared.io_bytes.load(Relaxed));
            env.live.add(now.0 - shown.0, now.1 - shown.1);
            shown = now;
            series.tick(start.elapsed().as_secs_f64().min(runtime.as_secs_f64()), now.0, now.1);
        }
        let elapsed = start.elapsed().min(runtime);
        shared.end.store(true, Relaxed);
        let results: Vec<(End, Vec<Local>)> = handles.into_iter().filter_map(|h| h.join().ok().flatten()).collect();
        series.finish(elapsed.as_secs_f64(), shared.io_ops.load(Relaxed), shared.io_bytes.load(Relaxed));
        (elapsed, results, series)
    });
    let mut error = None;
    let mut merged: Vec<Local> = names.iter().map(|_| Local::default()).collect();
    for (why, figures) in &results {
        if let (None, End::Failed(m) | End::NoFile(m)) = (&error, why) {
            error = Some(m.clone());
        }
        for (into, from) in merged.iter_mut().zip(figures) {
            into.ops += from.ops;
            into.bytes += from.bytes;
            into.hist.merge(&from.hist);
        }
    }
    if results.len() < total && error.is_none() {
        error = Some("filebench: a thread panicked".into());
    }
    let mut m = measurement(&names, &merged, elapsed);
    m.add_series("ops_per_s", Series::per_second("ops/s", series.ops));
    m.add_series("mb_per_s", Series::per_second("MiB/s", series.mib));
    // Always removed: the next repetition lays its filesets out afresh anyway.
    remove_all();
    let stopped = env.stop.load(Relaxed);
    m.finish(error, stopped)
}

/// The figures filebench prints, as metrics, counters and histograms.
fn measurement(names: &[(String, Kind)], figures: &[Local], elapsed: Duration) -> Measurement {
    let mut m = Measurement::default();
    let (mut ops, mut reads, mut writes, mut bytes, mut lat) = (0u64, 0u64, 0u64, 0u64, 0f64);
    for (i, ((name, kind), f)) in names.iter().zip(figures).enumerate() {
        m.add_latency(name, &f.hist);
        m.count(&format!("flowop.{name}.ops"), f.ops);
        m.count(&format!("flowop.{name}.bytes"), f.bytes);
        // Where it stands in the file: the breakdown lists flowops as filebench does.
        m.count(&format!("flowop.{name}.order"), i as u64);
        if kind.is_io() {
            ops += f.ops;
            bytes += f.bytes;
            lat += f.hist.mean() * f.hist.len() as f64;
            reads += if kind.reads() { f.ops } else { 0 };
            writes += if kind.writes() { f.ops } else { 0 };
        }
    }
    let secs = elapsed.as_secs_f64().max(1e-9);
    m.push("ops_per_s", "ops/s", Better::Higher, ops as f64 / secs);
    m.push("mb_per_s", "MiB/s", Better::Higher, bytes as f64 / 1_048_576.0 / secs);
    m.push("rd_per_s", "ops/s", Better::Higher, reads as f64 / secs);
    m.push("wr_per_s", "ops/s", Better::Higher, writes as f64 / secs);
    m.push("ms_per_op", "ms", Better::Lower, if ops > 0 { lat / ops as f64 / 1e6 } else { 0.0 });
    m.push("elapsed", "ns", Better::Lower, elapsed.as_nanos() as f64);
    m.count("io.ops", ops);
    m.count("io.reads", reads);
    m.count("io.writes", writes);
    m.count("io.bytes", bytes);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsarena_core::LatencyHistogram;

    #[test]
    fn summary_counts_io_flowops_only_and_keeps_the_order() {
        let names = vec![
            ("openfile1".to_string(), Kind::OpenFile),
            ("readfile1".into(), Kind::ReadWholeFile),
            ("limit".into(), Kind::OpsLimit),
        ];
        let f = |ops: u64, bytes: u64| Local { ops, bytes, hist: LatencyHistogram::of((0..ops).map(|_| 2_000_000)) };
        let m = measurement(&names, &[f(10, 0), f(10, 10 << 20), f(5, 0)], Duration::from_secs(2));
        assert_eq!(m.counters["io.ops"], 20);
        assert_eq!(m.counters["io.reads"], 10);
        assert_eq!(m.counters["flowop.readfile1.order"], 1);
        assert_eq!(m.metric("ops_per_s").map(|x| x.value), Some(10.0));
        assert_eq!(m.metric("mb_per_s").map(|x| x.value), Some(5.0));
        assert_eq!(m.metric("rd_per_s").map(|x| x.value), Some(5.0));
        assert!((m.metric("ms_per_op").map_or(0.0, |x| x.value) - 2.0).abs() < 0.01);
        assert_eq!(m.latency("limit").map(|h| h.len()), Some(5));
    }
}
