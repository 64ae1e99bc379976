//! The `filebench` workload: filebench's workload model language (`.f` files) and its
//! personalities, run by fsarena's threads and reported in filebench's own layout.
//!
//! `filebench:name=varmail` runs a built-in personality (written by fsarena from filebench's
//! documented defaults, suites/filebench/*.f); `filebench:file=my.f` runs a user's file
//! unchanged. Any other `KEY=VALUE` replaces the value the file's `set $KEY=` gives
//! (`nthreads=2,nfiles=200`); a key the file never sets is refused. The file is parsed and
//! checked whole before anything is created ([`model`]); a construct fsarena does not
//! support is refused with file, line and construct.
//!
//! Differences from filebench, by design: processes are threads (all share one address
//! space; `define process instances=N` starts N copies of its threads); every run creates its
//! filesets afresh under the run's directory (`path=` and `reuse` have no effect) and removes
//! them afterwards; finishoncount and finishonbytes end a run as a success in every mode.

mod control;
mod fileset;
mod flowops;
pub mod lang;
pub mod model;
mod run;
pub mod text;
pub mod vocabulary;

use fsarena_core::option::DefaultValue::Unset;
use fsarena_core::option::ValueKind::{Choice, File, Time};
use fsarena_core::{InputError, Measurement, Spec};
use fsarena_workload::options::{opt, OptionDef};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use model::{Model, SizeDist};
use std::time::Duration;

/// The built-in personalities: name and text.
pub static BUILTINS: &[(&str, &str)] = &[
    ("webserver", include_str!("../../../../suites/filebench/webserver.f")),
    ("fileserver", include_str!("../../../../suites/filebench/fileserver.f")),
    ("varmail", include_str!("../../../../suites/filebench/varmail.f")),
    ("webproxy", include_str!("../../../../suites/filebench/webproxy.f")),
    ("videoserver", include_str!("../../../../suites/filebench/videoserver.f")),
    ("oltp", include_str!("../../../../suites/filebench/oltp.f")),
    ("createfiles", include_str!("../../../../suites/filebench/createfiles.f")),
    ("makedirs", include_str!("../../../../suites/filebench/makedirs.f")),
    ("listdirs", include_str!("../../../../suites/filebench/listdirs.f")),
    ("removedirs", include_str!("../../../../suites/filebench/removedirs.f")),
    ("randomread", include_str!("../../../../suites/filebench/randomread.f")),
    ("randomwrite", include_str!("../../../../suites/filebench/randomwrite.f")),
    ("randomrw", include_str!("../../../../suites/filebench/randomrw.f")),
    ("singlestreamread", include_str!("../../../../suites/filebench/singlestreamread.f")),
    ("singlestreamwrite", include_str!("../../../../suites/filebench/singlestreamwrite.f")),
    ("filemicro_create", include_str!("../../../../suites/filebench/filemicro_create.f")),
    ("filemicro_createfiles", include_str!("../../../../suites/filebench/filemicro_createfiles.f")),
    ("filemicro_createrand", include_str!("../../../../suites/filebench/filemicro_createrand.f")),
    ("filemicro_delete", include_str!("../../../../suites/filebench/filemicro_delete.f")),
    ("filemicro_rread", include_str!("../../../../suites/filebench/filemicro_rread.f")),
    ("filemicro_rwrite", include_str!("../../../../suites/filebench/filemicro_rwrite.f")),
    ("filemicro_rwritedsync", include_str!("../../../../suites/filebench/filemicro_rwritedsync.f")),
    ("filemicro_rwritefsync", include_str!("../../../../suites/filebench/filemicro_rwritefsync.f")),
    ("filemicro_seqread", include_str!("../../../../suites/filebench/filemicro_seqread.f")),
    ("filemicro_seqwrite", include_str!("../../../../suites/filebench/filemicro_seqwrite.f")),
    ("filemicro_statfile", include_str!("../../../../suites/filebench/filemicro_statfile.f")),
    ("filemicro_writefsync", include_str!("../../../../suites/filebench/filemicro_writefsync.f")),
    ("blogbench", include_str!("../../../../suites/filebench/blogbench.f")),
];

/// The names of [`BUILTINS`].
const NAMES: &[&str] = &[
    "webserver",
    "fileserver",
    "varmail",
    "webproxy",
    "videoserver",
    "oltp",
    "createfiles",
    "makedirs",
    "listdirs",
    "removedirs",
    "randomread",
    "randomwrite",
    "randomrw",
    "singlestreamread",
    "singlestreamwrite",
    "filemicro_create",
    "filemicro_createfiles",
    "filemicro_createrand",
    "filemicro_delete",
    "filemicro_rread",
    "filemicro_rwrite",
    "filemicro_rwritedsync",
    "filemicro_rwritefsync",
    "filemicro_seqread",
    "filemicro_seqwrite",
    "filemicro_statfile",
    "filemicro_writefsync",
    "blogbench",
];

/// The run's time when neither the spec nor the file's `run N` gives one (filebench's).
const DEFAULT_RUNTIME_SECS: u64 = 60;

/// The workload's own keys; every other key sets a `$variable` of the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilebenchOptions {
    /// A built-in personality.
    pub name: Option<String>,
    /// A `.f` file.
    pub file: Option<String>,
    /// The run's time in nanoseconds.
    pub runtime: Option<u64>,
}

/// Largest workload model file (.f) read: filebench's own are a few KiB.
pub const MAX_MODEL_BYTES: u64 = 1 << 20;

/// A row of the filebench table.
macro_rules! fb {
    ($($rest:tt)*) => { opt!(FilebenchOptions, $($rest)*) };
}

/// Every key of the `filebench` workload (besides the file's `$variables`).
pub static OPTIONS: &[OptionDef<FilebenchOptions>] = &[
    fb!("name", Choice(NAMES), Unset, "a built-in personality, written by fsarena from filebench's defaults; any other KEY=VALUE sets the file's $KEY", |o, v| o.name = Some(match NAMES.iter().find(|n| **n == v.trim()) {
        Some(n) => (*n).to_string(),
        None => return Err(format!("not a built-in personality:{} accepted are {}", fsarena_core::did_you_mean(v, NAMES.iter().copied()), NAMES.join(", "))),
    })),
    fb!("file", File(MAX_MODEL_BYTES), Unset, "a filebench workload model file (.f), run unchanged", |o, v| o.file = Some(v.to_string())),
    fb!("runtime", Time, Unset, "how long the threads run; without it, the file's run N, else 60s", |o, v| o.runtime =
        Some(fsarena_core::units::parse_time(v, 1_000_000_000).map_err(|e| e.message)?.0)),
];

/// The `filebench` workload.
#[derive(Debug, Clone)]
pub struct FilebenchWorkload {
    model: Model,
    runtime: Duration,
    given: Vec<(String, String)>,
}

impl FilebenchWorkload {
    /// From `--workload filebench:name=varmail,nthreads=16,runtime=60s`: the file is read,
    /// parsed and checked whole; nothing is created.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut o = FilebenchOptions::default();
        let mut vars = Vec::new();
        for (k, v) in &spec.params {
            match fsarena_workload::options::find(OPTIONS, k) {
                Some(def) => def.apply(&mut o, k, v)?,
                None => vars.push((k.trim_start_matches('$').to_string(), v.clone())),
            }
        }
        let (file, text) = match (&o.name, &o.file) {
            (Some(n), None) => {
                let text = BUILTINS.iter().find(|(b, _)| b == n).map(|(_, t)| (*t).to_string()).unwrap_or_default();
                (format!("{n}.f"), text)
            }
            (None, Some(path)) => {
                let text = fsarena_workload::options::read_file(OPTIONS, "file", std::path::Path::new(path.trim()))?;
                (path.clone(), text)
            }
            (Some(_), Some(_)) => return Err(InputError::new("give name= or file=, not both")),
            (None, None) => {
                return Err(InputError::new(format!(
                    "filebench needs name= (a built-in personality: {}) or file= (a .f file)",
                    NAMES.join(", ")
                )))
            }
        };
        // A user's model file is named by its key wherever the spec came from (a job file,
        // the command line): `filebench: file=PATH:LINE: ...`.
        let keyed = |mut e: InputError| {
            if o.file.is_some() && !e.origin.is_empty() {
                e.origin = format!("filebench: file={}", e.origin);
            }
            e
        };
        let items = lang::parse(&file, &text).map_err(keyed)?;
        let model = model::build(&file, &items, &vars, o.file.is_none()).map_err(keyed)?;
        let threads = model.threads();
        if threads > fsarena_workload::footprint::MAX_THREADS {
            return Err(InputError::new(format!(
                "{file}: {threads} threads: at most {} (lower the instances or $nthreads)",
                fsarena_workload::footprint::MAX_THREADS
            )));
        }
        probe_aio(&model)?;
        let secs = model.run_secs.unwrap_or(DEFAULT_RUNTIME_SECS);
        let runtime = o.runtime.map_or(Duration::from_secs(secs), Duration::from_nanos);
        if runtime.is_zero() {
            return Err(InputError::new("runtime=0: expected a duration above 0, such as 60s"));
        }
        Ok(Self { model, runtime, given: spec.params.clone() })
    }

    /// The model, for tests and reports.
    pub fn model(&self) -> &Model {
        &self.model
    }
}

/// aiowrite runs on io_uring: each thread list's ring is tried once here, so that a kernel or
/// policy without io_uring is said before anything is created (exit 2), as io does.
fn probe_aio(model: &Model) -> Result<(), InputError> {
    use fsarena_engine::Engine;
    for t in model.processes.iter().flat_map(|p| &p.threads) {
        let Some(config) = flowops::aio::config(&t.flowops) else { continue };
        if let Err(why) = fsarena_engine::IoUring::probe(&config) {
            let line = t.flowops.iter().find(|f| f.kind == vocabulary::Kind::AioWrite).map_or(0, |f| f.line);
            return Err(InputError::new(format!("aiowrite runs on io_uring, which cannot be used here: {why}"))
                .at(format!("{}:{line}", model.file)));
        }
    }
    Ok(())
}

fn size_text(s: &SizeDist) -> String {
    match s {
        SizeDist::Fixed(n) => fsarena_core::units::format_iec(*n as f64),
        SizeDist::Gamma { mean, shape } => {
            format!("gamma(mean {}, shape {shape})", fsarena_core::units::format_iec(*mean))
        }
    }
}

impl Workload for FilebenchWorkload {
    fn kind(&self) -> &'static str {
        "filebench"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let m = &self.model;
        let mut bytes = 0f64;
        let mut files = 0u64;
        for f in &m.filesets {
            // A fileset can come to hold all of its entries (createfile fills the missing).
            bytes += f.size.mean() * f.entries as f64;
            let items = f.entries.max(f.leafdirs);
            files += items + items / f.dirwidth.max(1) + 1;
        }
        let mut buffers = 0u64;
        let mut fds = 0u64;
        for p in &m.processes {
            for t in &p.threads {
                let n = u64::from(p.instances) * u64::from(t.instances);
                // Each thread's I/O memory is its memsize when given (filled at its start, as
                // filebench's), plus a page (see flowops::place).
                let io = run::buffer_bytes(&t.flowops).max(t.memsize) + 4096;
                buffers += n * (io + flowops::aio::buffer_bytes(&t.flowops) + 4096);
                let mut slots: Vec<u32> = t.flowops.iter().map(|f| f.fd).collect();
                slots.sort_unstable();
                slots.dedup();
                fds += n * slots.len() as u64;
            }
        }
        Footprint {
            source: format!("filebench {}: {} thread(s), {} fileset(s)", m.file, m.threads(), m.filesets.len()),
            threads: m.threads() + 1,
            buffer_bytes: buffers + files * 64,
            bytes_on_target: bytes as u64,
            files,
            open_files: fds,
        }
    }

    fn describe(&self) -> Vec<String> {
        let m = &self.model;
        let mut out = vec![format!("filebench {} for {:?}, {} thread(s)", m.file, self.runtime, m.threads())];
        for f in &m.filesets {
            out.push(format!(
                "  fileset {}: {} {}, dirwidth {}, size {}, {}% preallocated",
                f.name,
                f.entries.max(f.leafdirs),
                if f.leafdirs > 0 { "leaf dirs" } else { "files" },
                f.dirwidth,
                size_text(&f.size),
                f.prealloc
            ));
        }
        for p in &m.processes {
            for t in &p.threads {
                let ops: Vec<&str> = t.flowops.iter().map(|f| f.name.as_str()).collect();
                let aio = match flowops::aio::depth(&t.flowops) {
                    0 => String::new(),
                    d => format!(" (aiowrite on io_uring, at most {d} in flight)"),
                };
                out.push(format!("  thread {} x{}: {}{aio}", t.name, p.instances * t.instances, ops.join(", ")));
            }
        }
        out
    }

    fn estimate(&self) -> Option<Duration> {
        Some(self.runtime)
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        run::run(&self.model, self.runtime, env)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
