//! The `postmark` workload: PostMark 1.5 (Katcher, NetApp, 1997–2005), the small-file
//! benchmark of mail, news and web servers, as users of Debian's `postmark` 1.53 know it — its
//! `set` commands and defaults (options.rs), its model and random numbers, reproduced so that
//! the same seed gives the same files and counts as PostMark (model.rs, rng.rs), its calls
//! (io.rs), and its report's figures (the text layout is crates/report's postmark_text.rs).
//!
//! A run, as PostMark's `run`: the generator is seeded and the source data made (untimed), the
//! subdirectories made (untimed); then timed, the pool of `number` files is created, the
//! `transactions` run, and the files left are deleted; the subdirectories go last, untimed.
//! PostMark times with `time()`, in whole seconds of at least 1; fsarena in nanoseconds, so its
//! rates are PostMark's without the rounding (and defined for runs under a second).
//!
//! Before anything is created the whole run is forecast from the model alone (no files; a few
//! milliseconds for default sizes), which gives the largest number of files and bytes at once
//! for the checks against the target, and refuses a run that PostMark would stop "out of
//! files". A run too large to forecast quickly is checked against an upper bound instead.

mod io;
pub mod model;
pub mod options;
pub mod rng;
#[cfg(test)]
mod tests;
pub mod text;

use fsarena_core::{Better, InputError, Measurement, Spec};
use fsarena_stats::LatencyHistogram;
use fsarena_workload::{Finish, Footprint, RunEnv, Workload, WorkloadError};
use model::{Forecast, Model, Transaction};
use options::PostmarkOptions;
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub use options::OPTIONS;

/// The largest [`model::forecast_cost`] forecast while parsing: about a tenth of a second.
const FORECAST_LIMIT: u64 = 50_000_000;

/// The directory of a run's files, under the workload's root.
const RUN_DIR: &str = "postmark";

/// The `postmark` workload.
#[derive(Debug, Clone)]
pub struct PostmarkWorkload {
    options: PostmarkOptions,
    /// What the run will do, when it was quick to know.
    forecast: Option<Forecast>,
    given: Vec<(String, String)>,
}

impl PostmarkWorkload {
    /// From `--workload postmark:number=1000,transactions=5000` or
    /// `postmark:postmark='set number 1000; set transactions 5000'`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = PostmarkOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("postmark", OPTIONS, &mut options, k, v)?;
        }
        let forecast = (model::forecast_cost(&options) <= FORECAST_LIMIT).then(|| model::forecast(&options));
        if let Some(f) = forecast {
            if f.transactions < u64::from(options.transactions) {
                return Err(InputError::new(format!(
                    "transactions={}: with number={} and seed {} the pool runs out of files after {} transactions, where \
                     PostMark stops (\"out of files!\") and reports nothing: increase number or decrease transactions",
                    options.transactions, options.number, options.seed, f.transactions
                )));
            }
        }
        Ok(Self { options, forecast, given: spec.params.clone() })
    }

    /// The options a run uses.
    pub fn options(&self) -> &PostmarkOptions {
        &self.options
    }
}

impl Workload for PostmarkWorkload {
    fn kind(&self) -> &'static str {
        "postmark"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        let (files, bytes) = match self.forecast {
            // An append may grow a file just before a deletion in the same transaction.
            Some(f) => (f.peak_files, f.peak_bytes + u64::from(o.size_high)),
            None => {
                let most = (2 * u64::from(o.number)).min(u64::from(o.number) + u64::from(o.transactions));
                (most, most * u64::from(o.size_high))
            }
        };
        let subdirs = if o.subdirectories > 1 { u64::from(o.subdirectories) } else { 0 };
        Footprint {
            source: format!(
                "postmark workload (number={}, transactions={}, size {} {})",
                o.number, o.transactions, o.size_low, o.size_high
            ),
            threads: 1,
            // The source data, the table, the read buffer and the stream's buffer.
            buffer_bytes: 2 * u64::from(o.size_high) + 32 * u64::from(o.number) + u64::from(o.read_block) + 8192,
            bytes_on_target: bytes,
            files: files + subdirs + 1,
            open_files: 1 + subdirs,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        let mut lines = vec![format!(
            "postmark: {} files of {} to {} bytes, {} transactions (bias read {}, bias create {}), blocks read {} write {}, {}, {} subdirectories, seed {}",
            o.number,
            o.size_low,
            o.size_high,
            o.transactions,
            o.bias_read,
            o.bias_create,
            o.read_block,
            o.write_block,
            if o.buffering { "buffered" } else { "unbuffered" },
            if o.subdirectories > 1 { o.subdirectories } else { 0 },
            o.seed
        )];
        if let Some(f) = self.forecast {
            let c = f.counts;
            lines.push(format!(
                "  forecast: {} created, {} read, {} appended, {} deleted; {} bytes read, {} written; at most {} files, {} bytes",
                c.created, c.read, c.appended, c.deleted, c.bytes_read, c.bytes_written, f.peak_files, f.peak_bytes
            ));
        }
        lines
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let fail = |message: String| WorkloadError { message, partial: Vec::new() };
        let o = &self.options;
        let root = rustix::fs::open(env.root, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| fail(format!("open {}: {e}", env.root.display())))?;
        let dir = make_dir(&root, RUN_DIR).map_err(fail)?;
        let mut subdirs = Vec::new();
        let mut made = Ok(());
        if o.subdirectories > 1 {
            for i in 0..o.subdirectories {
                match make_dir(&dir, &format!("s{i}")) {
                    Ok(fd) => subdirs.push(fd),
                    Err(e) => {
                        made = Err(e);
                        break;
                    }
                }
            }
        }
        let mut model = Model::new(o);
        let outcome = made.map(|()| self.timed(env, &mut model, dir.as_fd(), &subdirs));
        // After a failure or an interruption, the files left; then the directories.
        for file in model.remaining().collect::<Vec<_>>() {
            let d = file.subdir.and_then(|s| subdirs.get(s as usize)).map_or(dir.as_fd(), |d| d.as_fd());
            let _ = io::unlink(d, file);
        }
        drop(subdirs);
        // Every name the run may have made, also one whose opening failed after its mkdir.
        for i in 0..if o.subdirectories > 1 { o.subdirectories } else { 0 } {
            let _ = rustix::fs::unlinkat(&dir, format!("s{i}"), rustix::fs::AtFlags::REMOVEDIR);
        }
        drop(dir);
        let _ = rustix::fs::unlinkat(&root, RUN_DIR, rustix::fs::AtFlags::REMOVEDIR);
        let (m, error, cut_short) = outcome.map_err(fail)?;
        m.finish(error, cut_short)
    }
}

/// Makes directory `name` in `parent` (0700, new) and opens it.
fn make_dir(parent: &OwnedFd, name: &str) -> Result<OwnedFd, String> {
    rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o700)).map_err(|e| format!("mkdir {name}: {e}"))?;
    rustix::fs::openat(
        parent,
        name,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("open {name}: {e}"))
}

/// When each timed step ended, and what it had counted by then.
#[derive(Debug, Default)]
struct Timeline {
    creation: Duration,
    transactions: Duration,
    deletion: Duration,
    /// Transactions run.
    done: u64,
    /// Files created by the pool step.
    created_alone: u64,
    /// Files deleted by the end of the transactions.
    deleted_mixed: u64,
}

impl PostmarkWorkload {
    /// The three timed steps: the measurement, the error that stopped them if one did, and
    /// whether they were cut short (stopped, or transactions left undone).
    fn timed(
        &self,
        env: &RunEnv<'_>,
        model: &mut Model,
        dir: rustix::fd::BorrowedFd<'_>,
        subdirs: &[OwnedFd],
    ) -> (Measurement, Option<String>, bool) {
        let o = &self.options;
        let mut ops = io::RealOps::new(dir, subdirs, o.buffering, o.read_block, o.write_block);
        let stopped = || env.stop.load(Ordering::Relaxed);
        let mut t = Timeline::default();
        let mut tx_latency = LatencyHistogram::new();
        let mut error = None;
        (env.progress)("postmark: creating files");
        let start = Instant::now();
        for _ in 0..o.number {
            if stopped() {
                break;
            }
            let before = model.counts.bytes_written;
            if let Err(e) = model.create(&mut ops) {
                error = Some(e);
                break;
            }
            env.live.add(1, model.counts.bytes_written - before);
        }
        t.created_alone = model.counts.created;
        let t_start = Instant::now();
        if error.is_none() {
            (env.progress)("postmark: performing transactions");
            let mut last = t_start;
            for _ in 0..o.transactions {
                if stopped() {
                    break;
                }
                let moved = model.counts.bytes_written + model.counts.bytes_read;
                match model.transaction(&mut ops) {
                    Ok(Transaction::Done) => t.done += 1,
                    Ok(Transaction::OutOfFiles) => {
                        error = Some(format!(
                            "out of files after {} transactions, where PostMark stops and reports nothing: increase number or decrease transactions",
                            t.done
                        ));
                        break;
                    }
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
                let now = Instant::now();
                tx_latency.record(now.duration_since(last).as_nanos().min(u128::from(u64::MAX)) as u64);
                last = now;
                env.live.add(1, model.counts.bytes_written + model.counts.bytes_read - moved);
            }
        }
        let t_end = Instant::now();
        t.deleted_mixed = model.counts.deleted;
        if error.is_none() {
            (env.progress)("postmark: deleting files");
            // Interrupted, the rest still goes (below, untimed).
            if let Err(e) = model.delete_rest(&mut ops, stopped) {
                error = Some(e);
            }
        }
        let end = Instant::now();
        t.creation = t_start - start;
        t.transactions = t_end - t_start;
        t.deletion = end - t_end;
        let mut m = measurement(model, &t);
        for (op, h) in [
            ("create", &ops.latency.create),
            ("read", &ops.latency.read),
            ("append", &ops.latency.append),
            ("delete", &ops.latency.delete),
            ("transaction", &tx_latency),
        ] {
            m.add_latency(op, h);
        }
        if !tx_latency.is_empty() {
            m.push("transaction_lat_p50", "ns", Better::Lower, tx_latency.percentile(50.0) as f64);
            m.push("transaction_lat_p99", "ns", Better::Lower, tx_latency.percentile(99.0) as f64);
        }
        // Every transaction asked for done, or the run was cut short.
        let cut_short = stopped() || t.done != u64::from(o.transactions);
        (m, error, cut_short)
    }
}

/// PostMark's figures: each count over the time PostMark divides it by (files created and
/// deleted, and data, over the whole run; what happens in transactions over their time), the
/// times, and the counts themselves as counters.
fn measurement(model: &Model, t: &Timeline) -> Measurement {
    let c = model.counts;
    let elapsed = t.creation + t.transactions + t.deletion;
    let rate = |n: u64, d: Duration| (d.as_nanos() > 0).then(|| n as f64 / d.as_secs_f64());
    let mut m = Measurement::default();
    let created_mixed = c.created - t.created_alone;
    let deleted_alone = c.deleted - t.deleted_mixed;
    for (name, unit, value) in [
        ("transactions", "ops/s", rate(t.done, t.transactions)),
        ("files_created", "files/s", rate(c.created, elapsed)),
        ("creation_alone", "files/s", rate(t.created_alone, t.creation)),
        ("creation_mixed", "files/s", rate(created_mixed, t.transactions)),
        ("files_read", "files/s", rate(c.read, t.transactions)),
        ("files_appended", "files/s", rate(c.appended, t.transactions)),
        ("files_deleted", "files/s", rate(c.deleted, elapsed)),
        ("deletion_alone", "files/s", rate(deleted_alone, t.deletion)),
        ("deletion_mixed", "files/s", rate(t.deleted_mixed, t.transactions)),
        ("read_bw", "bytes/s", rate(c.bytes_read, elapsed)),
        ("write_bw", "bytes/s", rate(c.bytes_written, elapsed)),
    ] {
        if let Some(v) = value {
            m.push(name, unit, Better::Higher, v);
        }
    }
    for (name, d) in [
        ("elapsed", elapsed),
        ("creation_time", t.creation),
        ("transaction_time", t.transactions),
        ("deletion_time", t.deletion),
    ] {
        m.push(name, "ns", Better::Lower, d.as_nanos() as f64);
    }
    for (name, n) in [
        ("transactions", t.done),
        ("files_created", c.created),
        ("files_created_alone", t.created_alone),
        ("files_read", c.read),
        ("files_appended", c.appended),
        ("files_deleted", c.deleted),
        ("files_deleted_alone", deleted_alone),
        ("bytes_read", c.bytes_read),
        ("bytes_written", c.bytes_written),
    ] {
        m.count(name, n);
    }
    m
}
