//! The `dbench` workload: N clients replaying a dbench load file against the filesystem, as
//! dbench 4's fileio backend does (`dbench -t RUNTIME -c LOADFILE N`), with dbench's figures:
//! throughput in MB/s (bytes read and written after the warm-up, over the measured time),
//! count, mean and maximum latency per operation, and max_latency.
//!
//! By default the load file is the one Debian's dbench package installs
//! (/usr/share/dbench/client.txt), so the mix is dbench's own; `loadfile=` takes a user's. It
//! is read and checked when the workload is parsed: a missing file or an unknown operation is
//! bad input (exit 2, file and line), before any target exists.
//!
//! Timing follows dbench 4: a run is a warm-up (`warmup`, by default a fifth of `runtime` in
//! whole seconds, as dbench's `timelimit / 5`) whose operations are done but not counted, then
//! `runtime` seconds measured. Lines start only before the end; a line with a time stamp
//! waits for its moment in the pass (so a timed load file replays at its recorded pace), one
//! without is replayed at once. Clients are threads (dbench forks a process per client);
//! each works in its own `clients/client<i>` because every `client1` in the file's paths
//! becomes the client's name.

mod client;
pub mod loadfile;
#[cfg(test)]
mod tests;
pub mod text;

use client::{Client, Clock, Settings, Tally};
use fsarena_core::option::DefaultValue::{Is, Unset};
use fsarena_core::option::ValueKind::{Bool, Count, File, Time};
use fsarena_core::units::parse_time;
use fsarena_core::{Better, InputError, Measurement, Spec};
use fsarena_workload::options::{boolean, opt, positive, OptionDef};
use fsarena_workload::{Finish, Footprint, RunEnv, Workload, WorkloadError};
use loadfile::{client_path, Kind, LoadFile, Shape};
use std::collections::BTreeSet;
use std::path::Path;

/// Names the end of a run removes at most: the clients' trees of a load file are far smaller
/// (dbench's client.txt makes a few thousand names per client), an endless tree is not.
const REMOVE_BUDGET: u64 = 1 << 22;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Where Debian's dbench package puts its load file.
pub const DEFAULT_LOADFILE: &str = "/usr/share/dbench/client.txt";
/// Largest load file read: Debian's client.txt is 25 MiB.
pub const MAX_LOADFILE_BYTES: u64 = 64 << 20;

const SECOND: u64 = 1_000_000_000;

/// The options of one dbench run, with dbench's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct DbenchOptions {
    /// Clients (dbench's NPROCS argument).
    pub clients: u32,
    /// Measured time in ns (`-t`, default 600 s).
    pub runtime: u64,
    /// Warm-up in ns; None: `runtime / 5` in whole seconds, as dbench.
    pub warmup: Option<u64>,
    /// The load file (`-c`).
    pub loadfile: String,
    /// `-s`: O_SYNC opens.
    pub sync: bool,
    /// `-S`: sync directories after Unlink, Rmdir and Rename.
    pub sync_dirs: bool,
    /// `-F`: fsync after every write.
    pub fsync: bool,
    /// `--no-resolve`: no case-insensitive directory scan for names not found.
    pub no_resolve: bool,
    /// Keep the clients' files (dbench's `--skip-cleanup`).
    pub keep: bool,
}

impl Default for DbenchOptions {
    fn default() -> Self {
        Self {
            clients: 1,
            runtime: 600 * SECOND,
            warmup: None,
            loadfile: DEFAULT_LOADFILE.to_string(),
            sync: false,
            sync_dirs: false,
            fsync: false,
            no_resolve: false,
            keep: false,
        }
    }
}

/// A row of the dbench table.
macro_rules! db {
    ($($rest:tt)*) => { opt!(DbenchOptions, $($rest)*) };
}

fn time(v: &str) -> Result<u64, String> {
    Ok(parse_time(v, SECOND).map_err(|e| e.message)?.0)
}

/// Every option of the `dbench` workload.
pub static OPTIONS: &[OptionDef<DbenchOptions>] = &[
    db!(
        "clients",
        Count,
        Is("1"),
        "clients replaying the load file at once, each in its own directory (dbench's NPROCS)",
        |o, v| o.clients = positive(v)?
    )
    .aka(&["nprocs"]),
    db!("runtime", Time, Is("600"), "measured time after the warm-up, as dbench's -t (e.g. 60, 60s, 2m)", |o, v| o
        .runtime =
        match time(v)? {
            0 => return Err(format!("'{v}' must be longer than 0")),
            t => t,
        })
    .aka(&["timelimit"])
    .flag('t'),
    db!(
        "warmup",
        Time,
        Unset,
        "warm-up whose operations are not counted; by default runtime/5 in whole seconds, as dbench",
        |o, v| o.warmup = Some(time(v)?)
    ),
    db!(
        "loadfile",
        File(MAX_LOADFILE_BYTES),
        Is(DEFAULT_LOADFILE),
        "dbench 4 load file (TIME OPERATION ARGS STATUS lines), read and checked before the run",
        |o, v| o.loadfile = v.trim().to_string()
    )
    .flag('c'),
    db!("sync", Bool, Is("0"), "open files O_SYNC, as dbench -s", |o, v| o.sync = boolean(v)?).flag('s'),
    db!("sync_dirs", Bool, Is("0"), "sync the directory after Unlink, Rmdir and Rename, as dbench -S", |o, v| o
        .sync_dirs =
        boolean(v)?)
    .flag('S'),
    db!("fsync", Bool, Is("0"), "fsync after every write, as dbench -F", |o, v| o.fsync = boolean(v)?).flag('F'),
    db!(
        "no_resolve",
        Bool,
        Is("0"),
        "skip the directory scan dbench makes for a name not found, as --no-resolve",
        |o, v| o.no_resolve = boolean(v)?
    ),
    db!("keep", Bool, Is("0"), "keep the clients' files after the run, as dbench --skip-cleanup", |o, v| o.keep =
        boolean(v)?)
    .aka(&["skip_cleanup"]),
];

/// The `dbench` workload.
#[derive(Debug, Clone)]
pub struct DbenchWorkload {
    options: DbenchOptions,
    file: LoadFile,
    /// What a pass puts on the target, found once (client.txt has 458,000 lines).
    shape: Shape,
    given: Vec<(String, String)>,
}

impl DbenchWorkload {
    /// From `--workload dbench:clients=4,runtime=60`; reads and checks the load file.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = DbenchOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("dbench", OPTIONS, &mut options, k, v)?;
        }
        let file = LoadFile::read(&options.loadfile).map_err(InputError::new)?;
        let shape = file.shape();
        Ok(Self { options, file, shape, given: spec.params.clone() })
    }

    /// The warm-up in ns.
    fn warmup(&self) -> u64 {
        self.options.warmup.unwrap_or(self.options.runtime / SECOND / 5 * SECOND)
    }

    fn settings(&self) -> Settings {
        let o = &self.options;
        Settings { sync_open: o.sync, sync_dirs: o.sync_dirs, fsync: o.fsync, no_resolve: o.no_resolve }
    }

    /// The first path components the clients' paths name, that did not exist before the run:
    /// what the run created at the top of the work directory, removed at the end.
    fn created_tops(&self, root: &Path) -> BTreeSet<String> {
        (0..self.options.clients as usize)
            .flat_map(|id| self.shape.top_level.iter().map(move |t| client_path(t, id)))
            .filter(|t| !t.is_empty() && t != "." && std::fs::symlink_metadata(root.join(t)).is_err())
            .collect()
    }
}

impl Workload for DbenchWorkload {
    fn kind(&self) -> &'static str {
        "dbench"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let shape = &self.shape;
        let n = u64::from(self.options.clients);
        Footprint {
            source: format!("dbench workload ({} clients, load file {})", n, self.file.path),
            threads: n,
            buffer_bytes: n.saturating_mul(shape.largest_io.saturating_mul(2)),
            bytes_on_target: n.saturating_mul(shape.bytes),
            files: n.saturating_mul(shape.paths),
            open_files: n.saturating_mul(shape.open_handles.max(1) + 2),
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        let mix = self.file.mix();
        let ops: Vec<String> = Kind::ALL
            .iter()
            .filter(|k| mix[k.index()] > 0)
            .map(|k| format!("{} {}", k.name(), mix[k.index()]))
            .collect();
        vec![format!(
            "dbench -t {} -c {} {} (warm-up {}s): {} lines a pass ({})",
            o.runtime as f64 / 1e9,
            self.file.path,
            o.clients,
            self.warmup() as f64 / 1e9,
            self.file.lines.len(),
            ops.join(", ")
        )]
    }

    fn estimate(&self) -> Option<Duration> {
        Some(Duration::from_nanos(self.warmup().saturating_add(self.options.runtime)))
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let tops = self.created_tops(env.root);
        let below = fsarena_workload::served::Below::hold(env.root).map_err(|e| WorkloadError {
            message: format!("cannot open {}: {e}", env.root.display()),
            partial: Vec::new(),
        })?;
        let failed = AtomicBool::new(false);
        let settings = self.settings();
        let gate = fsarena_workload::gate::StartGate::default();
        let start = Instant::now();
        let clock = Clock {
            warmup_end: start + Duration::from_nanos(self.warmup()),
            deadline: start + Duration::from_nanos(self.warmup().saturating_add(self.options.runtime)),
        };
        let results: Result<Vec<(Tally, Option<String>)>, String> = std::thread::scope(|s| {
            let bodies = (0..self.options.clients as usize).map(|id| {
                let (failed, file, below, note, stop, live) =
                    (&failed, &self.file, &below, env.progress, env.stop, env.live);
                let largest_io = self.shape.largest_io as usize;
                move || {
                    let mut client = Client::new(id, below, file, largest_io, settings, note);
                    let out = client.run(clock, stop, failed, live);
                    client.close_all();
                    out
                }
            });
            let handles = fsarena_workload::gate::spawn_gated(s, &gate, "dbench", bodies)?;
            Ok(handles.into_iter().filter_map(|h| h.join().ok().flatten()).collect())
        });
        // The measured time: to the deadline, or to Ctrl-C or a failure if earlier.
        let measured = Instant::now().min(clock.deadline).saturating_duration_since(clock.warmup_end);
        // Each pass rebuilds its tree (client.txt starts with a Deltree), so nothing is worth
        // keeping for the next repetition: only keep=1 keeps the files.
        if !self.options.keep {
            // Bounded and without following links: the target may serve an endless tree.
            for top in &tops {
                let mut budget = fsarena_workload::served::Budget::new(&env.root.join(top), REMOVE_BUDGET, 64);
                let _ = fsarena_workload::served::remove_tree(below.fd(), std::ffi::OsStr::new(top), &mut budget, 0);
            }
        }
        let results = results.map_err(|message| WorkloadError { message, partial: Vec::new() })?;
        let m = self.measurement(&results, measured);
        // The first client's error; any client's makes the measurement incomplete.
        m.finish(results.into_iter().find_map(|r| r.1), env.stop.load(Relaxed))
    }
}

impl DbenchWorkload {
    /// dbench's figures from the clients' tallies.
    fn measurement(&self, results: &[(Tally, Option<String>)], measured: Duration) -> Measurement {
        let mut m = Measurement::default();
        let bytes: u64 = results.iter().map(|r| r.0.bytes).sum();
        // dbench: bytes read and written after the warm-up, over the measured time.
        if !measured.is_zero() {
            m.push("throughput", "bytes/s", Better::Higher, bytes as f64 / measured.as_secs_f64());
        }
        let mut max_ns = 0u64;
        for kind in Kind::ALL {
            let mut h = fsarena_core::LatencyHistogram::new();
            for r in results {
                h.merge(&r.0.hists[kind.index()]);
            }
            max_ns = max_ns.max(h.max());
            m.add_latency(kind.name(), &h);
        }
        // dbench's max_latency: the longest operation, or the longest lag behind a timed
        // line's moment, whichever is worse.
        max_ns = results.iter().map(|r| r.0.max_lag_ns).fold(max_ns, u64::max);
        m.push("max_latency", "ns", Better::Lower, max_ns as f64);
        m.count("bytes", bytes);
        m.count("clients", u64::from(self.options.clients));
        m.count("passes", results.iter().map(|r| r.0.passes).sum());
        m.count("status_mismatches", results.iter().map(|r| r.0.mismatches).sum());
        if self.options.sync {
            m.count("sync_open", 1);
        }
        if self.options.sync_dirs {
            m.count("sync_dirs", 1);
        }
        m
    }
}
