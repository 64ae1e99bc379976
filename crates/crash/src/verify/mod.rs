//! The `verify` workload: data integrity, every byte checked, in fsx's terms
//! (`mode=fsx`, the default; see fsx.rs), or filling the filesystem to ENOSPC and back
//! (`mode=fill`; see fill.rs).
//!
//! Results: `ops`, `ops_per_s`, `bytes_verified` and `mismatches` (0 is the pass); a
//! mismatch is a finding, not a failed run: it is stored with the run as a failed verdict
//! (`verify.fsx.data`) carrying the offset, the expected and found bytes and the likely writer,
//! its full report goes to stderr, and the log of operations is written as a replay file
//! (`opsfile=`), runnable again with `replay=FILE`. The counter `findings` (see
//! [`fsarena_core::FINDINGS`]) carries the mismatches for `run --strict-checks`.

pub mod concurrent;
pub mod fill;
pub mod fsx;

use fsarena_core::option::DefaultValue::{Derived, Is, Unset};
use fsarena_core::option::ListSyntax;
use fsarena_core::option::ValueKind::{Bool, Choice, Count, File, Size, Text, Time};
use fsarena_core::{Better, InputError, Measurement, Outcome, Spec, Verdict};
use fsarena_workload::options::{opt, OptionDef};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use fsx::{Entry, FsxConfig, Op, Replay};
use std::path::PathBuf;
use std::time::Instant;

/// The options of one `verify` run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyOptions {
    /// `fsx` or `fill`.
    pub mode: &'static str,
    /// fsx's `-N`.
    pub numops: u64,
    /// fsx's `-S`.
    pub seed: u64,
    /// fsx's `-l`.
    pub file_length: u64,
    /// fsx's `-o`.
    pub max_op_len: u64,
    /// fsx's `-Z`.
    pub direct: bool,
    /// The operations chosen from; all by default.
    pub ops: Vec<Op>,
    /// A .fsxops file to run instead of random operations.
    pub replay: Option<PathBuf>,
    /// Where the log of operations goes when a mismatch is found.
    pub opsfile: Option<PathBuf>,
    /// fill: bytes a write.
    pub bs: u64,
    /// fill: bytes a file at most.
    pub filesize: u64,
    /// fill: cycles until `runtime` has passed.
    pub time_based: bool,
    /// fill: how long a time_based run lasts, in ns.
    pub runtime: u64,
    /// concurrent: jobs writing at once.
    pub numjobs: u64,
    /// concurrent: bytes each job writes.
    pub size: u64,
    /// concurrent: `randwrite` or `write`.
    pub rw: &'static str,
    /// concurrent: fio's verify_backlog.
    pub verify_backlog: u64,
    /// concurrent: fio's verify_fatal.
    pub verify_fatal: bool,
    /// concurrent: fio's ioengine.
    pub ioengine: String,
    /// concurrent: fio's iodepth.
    pub iodepth: u64,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            mode: "fsx",
            numops: 10_000,
            seed: 1,
            file_length: 256 << 10,
            max_op_len: 64 << 10,
            direct: false,
            ops: fsx::ALL.to_vec(),
            replay: None,
            opsfile: None,
            bs: 1 << 20,
            filesize: 64 << 20,
            time_based: false,
            runtime: 0,
            numjobs: 4,
            size: 64 << 20,
            rw: "randwrite",
            verify_backlog: 1024,
            verify_fatal: false,
            ioengine: "psync".into(),
            iodepth: 1,
        }
    }
}

impl VerifyOptions {
    /// What `mode=concurrent` runs.
    fn concurrent(&self) -> concurrent::ConcurrentConfig {
        concurrent::ConcurrentConfig {
            numjobs: self.numjobs,
            size: self.size,
            bs: self.bs,
            rw: self.rw,
            verify_backlog: self.verify_backlog,
            verify_fatal: self.verify_fatal,
            direct: self.direct,
            ioengine: self.ioengine.clone(),
            iodepth: self.iodepth,
            seed: self.seed,
        }
    }
}

/// Memory one logged fsx operation costs: its entry (40 bytes) and its line of the .fsxops
/// text written at the end (up to 70 bytes), rounded up.
const LOG_BYTES_PER_OP: u64 = 128;

/// Largest replay file (.fsxops) read: about 40 bytes an operation, so over a million
/// operations, far more than any mismatch needs to be replayed.
pub const MAX_REPLAY_BYTES: u64 = 64 << 20;

/// A row of the verify table.
macro_rules! vf {
    ($($rest:tt)*) => { opt!(VerifyOptions, $($rest)*) };
}

/// Every option of the `verify` workload.
pub static OPTIONS: &[OptionDef<VerifyOptions>] = &[
    vf!("mode", Choice(&["fsx", "fill", "concurrent"]), Is("fsx"), "fsx: fsx's single-file model, every read and the size checked against a copy in memory; fill: the filesystem filled to ENOSPC in files of checked blocks, read back, half of it freed and filled again, read back, emptied (never on a dir: target); concurrent: numjobs io jobs writing with verify=crc32c and verify_backlog, then every block read back with verify_only after the caches are dropped and again after a remount", |o, v| o.mode = match v.trim() {
        "fsx" => "fsx",
        "fill" => "fill",
        "concurrent" => "concurrent",
        _ => return Err(format!("'{v}' is not a verify mode: expected fsx, fill or concurrent")),
    }),
    vf!("numops", Count, Is("10000"), "operations to run (fsx's -N; fsx runs forever without it)", |o, v| o.numops = nonzero(v)?).flag('N'),
    vf!("seed", Count, Is("1"), "the random seed (fsx's -S): the same seed on the same filesystem gives the same operations", |o, v| o.seed = fsarena_workload::options::whole(v)?).flag('S'),
    vf!("file_length", Size, Is("256k"), "the file's largest size (fsx's -l)", |o, v| o.file_length = fsarena_workload::options::nonzero_size(v)?).flag('l'),
    vf!("max_op_len", Size, Is("64k"), "the largest operation (fsx's -o)", |o, v| o.max_op_len = fsarena_workload::options::nonzero_size(v)?).flag('o'),
    vf!("direct", Bool, Is("0"), "O_DIRECT, reads and writes aligned to the file's block size (fsx's -Z, with -r and -w at the block size)", |o, v| o.direct = fsarena_workload::options::boolean(v)?).flag('Z'),
    vf!("ops", Text, Derived("all"), "the operations to choose from, uniformly, separated by | (or commas, quoted: ops='read,write'): read, write, mapread, mapwrite, truncate, fallocate, punch_hole, zero_range, collapse_range, insert_range, copy_range, clone_range, dedupe_range; those the filesystem refuses are dropped and listed", |o, v| o.ops = ops(v)?)
        .list(ListSyntax::None),
    vf!("replay", File(MAX_REPLAY_BYTES), Unset, "run the operations of this .fsxops file (fsx's --replay-ops; one verify wrote at a mismatch, its seed and file_length from its header)", |o, v| o.replay = Some(PathBuf::from(v.trim()))),
    vf!("bs", Size, Derived("1m (fill), 4k (concurrent)"), "fill and concurrent: bytes a write, a multiple of 4k (fio's bs)", |o, v| o.bs = unit_multiple(v)?),
    vf!("numjobs", Count, Is("4"), "concurrent: jobs writing at once, each its own file (fio's numjobs)", |o, v| o.numjobs = nonzero(v)?),
    vf!("size", Size, Is("64m"), "concurrent: bytes each job writes (fio's size)", |o, v| o.size = unit_multiple(v)?),
    vf!("rw", Choice(&["randwrite", "write"]), Is("randwrite"), "concurrent: the jobs' pattern (fio's rw)", |o, v| o.rw = match v.trim() {
        "randwrite" => "randwrite",
        "write" => "write",
        _ => return Err(format!("'{v}' is not a pattern of mode=concurrent: expected randwrite or write")),
    }),
    vf!("verify_backlog", Count, Is("1024"), "concurrent: check the written blocks after every N writes, during the run (fio's verify_backlog; 0: after it)", |o, v| o.verify_backlog = fsarena_workload::options::whole(v)?),
    vf!("verify_fatal", Bool, Is("0"), "concurrent: stop at the first bad block (fio's verify_fatal; 0: check all, count them)", |o, v| o.verify_fatal = fsarena_workload::options::boolean(v)?),
    vf!("ioengine", Text, Is("psync"), "concurrent: the jobs' I/O engine (fio's ioengine)", |o, v| o.ioengine = v.trim().to_string()),
    vf!("iodepth", Count, Is("1"), "concurrent: I/Os in flight per job (fio's iodepth)", |o, v| o.iodepth = nonzero(v)?),
    vf!("filesize", Size, Is("64m"), "fill: bytes a file at most, a multiple of 4k (fio's filesize)", |o, v| o.filesize = unit_multiple(v)?),
    vf!("time_based", Bool, Is("0"), "fill: repeat the cycle until runtime has passed (fio's time_based), with a per-second series of operations and errors", |o, v| o.time_based = fsarena_workload::options::boolean(v)?),
    vf!("runtime", Time, Is("0"), "fill: how long a time_based run lasts (fio's runtime)", |o, v| o.runtime = fsarena_core::units::parse_time(v, 1_000_000_000).map_err(|e| e.to_string())?.0),
    vf!("opsfile", Text, Derived("WORKDIR/RUNID-verify-SEED.fsxops"), "where the log of operations is written when a mismatch is found (fsx's .fsxops), 0600; by default in the run's work directory", |o, v| o.opsfile = Some(PathBuf::from(v.trim()))),
];

/// A size that is a non-zero multiple of fill's 4 KiB unit.
fn unit_multiple(v: &str) -> Result<u64, String> {
    let n = fsarena_workload::options::nonzero_size(v)?;
    if n % fill::UNIT != 0 {
        return Err(format!("'{v}' is not a multiple of 4k (the unit every byte is checked in)"));
    }
    Ok(n)
}

/// The modes each mode-specific option belongs to.
const MODE_KEYS: &[(&str, &[&str])] = &[
    ("bs", &["fill", "concurrent"]),
    ("filesize", &["fill"]),
    ("time_based", &["fill"]),
    ("runtime", &["fill"]),
    ("numops", &["fsx"]),
    ("file_length", &["fsx"]),
    ("max_op_len", &["fsx"]),
    ("direct", &["fsx", "concurrent"]),
    ("ops", &["fsx"]),
    ("replay", &["fsx"]),
    ("opsfile", &["fsx"]),
    ("numjobs", &["concurrent"]),
    ("size", &["concurrent"]),
    ("rw", &["concurrent"]),
    ("verify_backlog", &["concurrent"]),
    ("verify_fatal", &["concurrent"]),
    ("ioengine", &["concurrent"]),
    ("iodepth", &["concurrent"]),
];

/// The target kinds `mode=fill` fills: those fsarena makes, never a `dir:` (somebody's own
/// filesystem, which filling to ENOSPC would harm).
const FILL_KINDS: &[&str] =
    &["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "nilfs2", "tmpfs", "fuse2fs", "fuse", "device", "glusterfs"];

/// A count of at least 1.
fn nonzero(v: &str) -> Result<u64, String> {
    match fsarena_workload::options::count(v)? {
        0 => Err(format!("'{v}' must be at least 1")),
        n => Ok(n),
    }
}

/// The comma-separated operation list.
fn ops(v: &str) -> Result<Vec<Op>, String> {
    let mut out = Vec::new();
    for name in v.split([',', '|']).map(str::trim).filter(|n| !n.is_empty()) {
        if name == "all" {
            out.extend(fsx::ALL);
            continue;
        }
        let op = Op::from_name(name).ok_or_else(|| {
            format!(
                "'{}' is not an fsx operation:{} expected {}",
                fsarena_workload::plain::cut(name),
                fsarena_core::did_you_mean(name, fsx::ALL.iter().map(|o| o.name())),
                fsx::ALL.map(|o| o.name()).join(", ")
            )
        })?;
        out.push(op);
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err("no operation named: expected a comma-separated list such as read,write,truncate".into());
    }
    Ok(out)
}

/// The `verify` workload.
#[derive(Debug, Clone)]
pub struct VerifyWorkload {
    options: VerifyOptions,
    replay: Option<Replay>,
    given: Vec<(String, String)>,
}

impl VerifyWorkload {
    /// From `--workload verify:numops=100000,seed=42`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut o = VerifyOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("verify", OPTIONS, &mut o, k, v)?;
        }
        for (k, _) in &spec.params {
            if let Some((_, modes)) = MODE_KEYS.iter().find(|(key, modes)| key == k && !modes.contains(&o.mode)) {
                return Err(InputError::new(format!(
                    "verify: {k}= is not an option of mode={}: it is one of mode={}",
                    o.mode,
                    modes.join(" and mode=")
                )));
            }
        }
        if o.mode == "concurrent" {
            if !spec.params.iter().any(|(k, _)| k == "bs") {
                o.bs = 4096;
            }
            if o.size < o.bs {
                return Err(InputError::new(format!("verify: size={} is smaller than bs={}", o.size, o.bs)));
            }
            // The io workload checks the rest (the engine, its depth) as it checks its own.
            o.concurrent().io(false).map_err(|e| InputError::new(format!("verify: mode=concurrent: {e}")))?;
        }
        if o.time_based && o.runtime == 0 {
            return Err(InputError::new("verify: time_based=1 needs runtime=, e.g. runtime=60s"));
        }
        if o.max_op_len > o.file_length {
            return Err(InputError::new(format!(
                "verify: max_op_len={} is larger than file_length={}: an operation must fit the file",
                o.max_op_len, o.file_length
            )));
        }
        let replay = match &o.replay {
            None => None,
            Some(path) => {
                let text = fsarena_workload::options::read_file(OPTIONS, "replay", path)?;
                let r = fsx::parse_replay(&text)
                    .map_err(|e| InputError::new(format!("verify: replay={}: {e}", path.display())))?;
                // The header's settings make the same data: they win over the defaults.
                if let Some(s) = r.seed {
                    o.seed = s;
                }
                if let Some(l) = r.file_length {
                    o.file_length = l;
                }
                if let Some(d) = r.direct {
                    o.direct = d;
                }
                let past = |e: &Entry| {
                    !e.skipped && e.op != Op::Truncate && e.offset.max(e.dest).saturating_add(e.len) > o.file_length
                };
                if let Some(i) = r.entries.iter().position(past) {
                    return Err(InputError::new(format!(
                        "verify: replay={}: line {}: the operation reaches past file_length={}: expected operations within the file",
                        path.display(),
                        r.lines.get(i).copied().unwrap_or(0),
                        o.file_length
                    )));
                }
                Some(r)
            }
        };
        // After the replay's header, which may set it.
        if o.file_length > 1 << 30 {
            return Err(InputError::new(format!(
                "verify: file_length={}: at most 1g (the model is kept in memory)",
                o.file_length
            )));
        }
        Ok(Self { options: o, replay, given: spec.params.clone() })
    }

    /// `mode=concurrent`'s passes.
    fn concurrent(&self) -> concurrent::ConcurrentConfig {
        self.options.concurrent()
    }

    fn config(&self) -> FsxConfig {
        let o = &self.options;
        FsxConfig {
            numops: o.numops,
            seed: o.seed,
            file_length: o.file_length,
            max_op_len: o.max_op_len,
            direct: o.direct,
            ops: o.ops.clone(),
        }
    }

    /// Saves the log of operations of a mismatch and says where, or why not. By default in
    /// the run's own work directory (0700, root's), named with the run's id: never a shared
    /// temporary directory, where anyone could plant a link at a predictable name. Where the
    /// user names the file, a regular file there is replaced; a link, a FIFO or a device is
    /// not (see [`fsarena_target::safefs::create_private`]).
    fn save_log(&self, env: &RunEnv<'_>, log: &[u8]) -> String {
        use std::io::Write;
        let (path, replace) = match (&self.options.opsfile, &env.target) {
            (Some(path), _) => (path.clone(), true),
            (None, Some(t)) => {
                let name = format!("{}-verify-{}.fsxops", t.workdir.run_id(), self.options.seed);
                (t.workdir.path().join(name), false)
            }
            (None, None) => return "the log of operations was not saved: no work directory; give opsfile=".into(),
        };
        let shown = fsarena_core::printable(&path.to_string_lossy()).into_owned();
        let written = fsarena_target::safefs::create_private(&path, replace)
            .and_then(|mut f| f.write_all(log).and_then(|()| f.sync_all()));
        match written {
            Ok(()) => format!("log of operations saved to {shown}; replay with --workload verify:replay={shown}"),
            Err(e) => format!("the log of operations could not be saved to {shown}: {e}"),
        }
    }
}

impl VerifyWorkload {
    /// `mode=fill`.
    fn run_fill(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let o = &self.options;
        let cfg = fill::FillConfig {
            bs: o.bs,
            file_size: o.filesize,
            seed: o.seed,
            runtime: o.time_based.then(|| std::time::Duration::from_nanos(o.runtime)),
        };
        (env.progress)(&format!("verify: {}", self.describe().join("")));
        let started = Instant::now();
        let tick = |bytes| env.live.add(1, bytes);
        let out = fill::run(&cfg, env.root, env.stop, &tick, env.drop_caches)
            .map_err(|message| WorkloadError { message: format!("verify: {message}"), partial: Vec::new() })?;
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        let mut m = Measurement { complete: !out.interrupted, ..Measurement::default() };
        let (up, down) = (Better::Higher, Better::Lower);
        for (name, unit, better, value) in [
            ("ops", "ops", up, out.ops as f64),
            ("ops_per_s", "ops/s", up, out.ops as f64 / secs),
            ("bytes_verified", "bytes", up, out.bytes_verified as f64),
            ("mismatches", "mismatches", down, out.mismatches as f64),
            ("errors", "errors", down, out.errors as f64),
            ("fill_bytes", "bytes", up, out.fill_bytes as f64),
            ("cycles", "cycles", up, out.cycles as f64),
            ("elapsed", "ns", down, secs * 1e9),
        ] {
            m.push(name, unit, better, value);
        }
        for (name, n) in [
            ("ops", out.ops),
            ("bytes_written", out.bytes_written),
            ("bytes_verified", out.bytes_verified),
            ("mismatches", out.mismatches),
            ("errors", out.errors),
        ] {
            m.count(name, n);
        }
        m.count(fsarena_core::FINDINGS, out.mismatches + out.errors);
        for (name, unit, pick) in [("ops_per_s", "ops/s", 0), ("errors_per_s", "errors/s", 1)] {
            let values = out.per_second.iter().map(|p| if pick == 0 { p.0 } else { p.1 } as f64).collect();
            m.series
                .insert(name.into(), fsarena_core::Series { interval_ns: 1_000_000_000, unit: unit.into(), values });
        }
        for (case, what, first) in [
            ("verify.fill.data", "every 4 KiB unit read back as written", &out.first_mismatch),
            ("verify.fill.io", "every write, read and fsync succeeds or says the filesystem is full", &out.first_error),
        ] {
            let outcome = if first.is_some() { Outcome::Fail } else { Outcome::Pass };
            if let Some(first) = first {
                (env.progress)(&format!("verify: {case}: {first}"));
            }
            m.verdicts.push(Verdict {
                case: case.into(),
                security: false,
                outcome,
                expected: if first.is_some() { what.into() } else { String::new() },
                actual: first.clone().unwrap_or_default(),
            });
        }
        Ok(vec![m])
    }
}

impl Workload for VerifyWorkload {
    fn kind(&self) -> &'static str {
        "verify"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        if o.mode == "concurrent" {
            return Footprint {
                source: format!("verify concurrent ({} jobs of {} bytes)", o.numjobs, o.size),
                threads: o.numjobs,
                buffer_bytes: o.numjobs.saturating_mul(o.bs.saturating_mul(o.iodepth).saturating_add(1 << 20)),
                bytes_on_target: o.numjobs.saturating_mul(o.size),
                files: o.numjobs,
                open_files: o.numjobs,
            };
        }
        if o.mode == "fill" {
            return Footprint {
                source: format!("verify fill (bs={})", o.bs),
                threads: 1,
                buffer_bytes: o.bs,
                // It fills whatever is free: nothing to check beforehand.
                bytes_on_target: 0,
                files: 0,
                open_files: 1,
            };
        }
        Footprint {
            source: format!("verify workload (file_length={})", o.file_length),
            threads: 1,
            // The model, who wrote each byte (4 bytes a byte), the seeded bytes, the buffer,
            // and the log: every operation is kept, as an entry and then as a line of the
            // .fsxops text, so numops is bounded by memory like any buffer.
            buffer_bytes: (o.file_length * 6 + o.max_op_len).saturating_add(
                self.replay.as_ref().map_or(o.numops, |r| r.entries.len() as u64).saturating_mul(LOG_BYTES_PER_OP),
            ),
            bytes_on_target: o.file_length,
            files: 1,
            open_files: 1,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        if o.mode == "concurrent" {
            return vec![format!(
                "verify concurrent: {} jobs writing {} bytes each ({}, bs={}, ioengine={}, iodepth={}{}) with verify=crc32c, verify_backlog={}, verify_fatal={}; every block read back with verify_only after the caches are dropped, and again after the target is remounted",
                o.numjobs, o.size, o.rw, o.bs, o.ioengine, o.iodepth, if o.direct { ", direct" } else { "" }, o.verify_backlog, u8::from(o.verify_fatal)
            )];
        }
        if o.mode == "fill" {
            return vec![format!(
                "verify fill: files of at most {} bytes written in {}-byte blocks until ENOSPC, each fsynced, every 4 KiB read back and checked; every other file removed and the space filled again, checked again, everything removed{}",
                o.filesize,
                o.bs,
                if o.time_based { format!("; repeated for {:?}", std::time::Duration::from_nanos(o.runtime)) } else { String::new() }
            )];
        }
        let what = match &self.replay {
            Some(r) => format!(
                "{} operations replayed from {}",
                r.entries.len(),
                o.replay.as_deref().unwrap_or_else(|| "".as_ref()).display()
            ),
            None => format!(
                "{} operations of {} (seed {})",
                o.numops,
                o.ops.iter().map(|op| op.name()).collect::<Vec<_>>().join(","),
                o.seed
            ),
        };
        vec![format!(
            "verify fsx: one file of at most {} bytes, operations up to {} bytes{}; {what}",
            o.file_length,
            o.max_op_len,
            if o.direct { ", O_DIRECT" } else { "" }
        )]
    }

    fn deterministic(&self) -> bool {
        // The operations are the seed's; their timing is not: repetitions measure speed too.
        false
    }

    fn target_kinds(&self) -> Option<&'static [&'static str]> {
        (self.options.mode == "fill").then_some(FILL_KINDS)
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        if self.options.mode == "fill" {
            return self.run_fill(env);
        }
        if self.options.mode == "concurrent" {
            return concurrent::run(&self.concurrent(), env).map(|m| vec![m]);
        }
        let path = env.root.join("verify.fsx");
        (env.progress)(&format!("verify: fsx, {}", self.describe().join("")));
        let started = Instant::now();
        let tick = |bytes| env.live.add(1, bytes);
        let result = fsx::run(&self.config(), &path, self.replay.as_ref(), env.stop, &tick);
        let elapsed = started.elapsed();
        let removed = std::fs::remove_file(&path);
        let out = match result {
            Ok(out) => out,
            Err(message) => {
                return Err(WorkloadError { message: format!("verify: {message}"), partial: Vec::new() });
            }
        };
        if let Err(e) = removed {
            return Err(WorkloadError {
                message: format!("verify: removing {}: {e}", path.display()),
                partial: Vec::new(),
            });
        }
        let mut m = Measurement { complete: !out.interrupted, ..Measurement::default() };
        let mismatches = u64::from(out.mismatch.is_some());
        let secs = elapsed.as_secs_f64().max(1e-9);
        m.push("ops", "ops", Better::Higher, out.ops as f64);
        m.push("ops_per_s", "ops/s", Better::Higher, out.ops as f64 / secs);
        m.push("bytes_verified", "bytes", Better::Higher, out.bytes_verified as f64);
        m.push("mismatches", "mismatches", Better::Lower, mismatches as f64);
        m.push("elapsed", "ns", Better::Lower, elapsed.as_secs_f64() * 1e9);
        m.count("ops", out.ops);
        m.count("skipped", out.skipped);
        m.count("bytes_verified", out.bytes_verified);
        m.count("mismatches", mismatches);
        m.count(fsarena_core::FINDINGS, mismatches);
        m.series.insert(
            "ops_per_s".into(),
            fsarena_core::Series {
                interval_ns: 1_000_000_000,
                unit: "ops/s".into(),
                values: out.per_second.iter().map(|(n, _)| *n as f64).collect(),
            },
        );
        for (op, why) in &out.refused {
            m.verdicts.push(Verdict {
                case: format!("verify.fsx.{}", op.name()),
                security: false,
                outcome: Outcome::Unsupported,
                expected: String::new(),
                actual: format!("refused with {why}: dropped from the run"),
            });
        }
        if !out.refused.is_empty() {
            (env.progress)(&format!(
                "verify: the filesystem refuses {}: dropped",
                out.refused.iter().map(|(o, why)| format!("{} ({why})", o.name())).collect::<Vec<_>>().join(", ")
            ));
        }
        match &out.mismatch {
            None => m.verdicts.push(Verdict {
                case: "verify.fsx.data".into(),
                security: false,
                outcome: Outcome::Pass,
                expected: String::new(),
                actual: String::new(),
            }),
            Some(mm) => {
                let saved = self.save_log(env, out.log.as_bytes());
                // One progress line each: a note is one line.
                (env.progress)(&format!("verify: MISMATCH {}", mm.summary));
                for line in mm.report.lines() {
                    (env.progress)(&format!("verify:   {line}"));
                }
                (env.progress)(&format!("verify: {saved}"));
                m.verdicts.push(Verdict {
                    case: "verify.fsx.data".into(),
                    security: false,
                    outcome: Outcome::Fail,
                    expected: "every read and the size as the model says".into(),
                    actual: format!("{}; {saved}", mm.summary),
                });
            }
        }
        Ok(vec![m])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_table_agrees_with_the_defaults() {
        fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let parse = |t: &str| VerifyWorkload::from_spec(&Spec::parse(t).unwrap()).err().unwrap().to_string();
        assert!(parse("verify:ops=read|wrte").contains("'wrte' is not an fsx operation: did you mean 'write'?"));
        assert!(parse("verify:numops=0").contains("at least 1"));
        assert!(parse("verify:file_length=4k,max_op_len=64k").contains("larger than file_length"));
        assert!(parse("verify:mode=fil").contains("expected fsx, fill or concurrent"));
        assert!(parse("verify:mode=fill,numops=5").contains("numops= is not an option of mode=fill"));
        assert!(parse("verify:bs=8k").contains("bs= is not an option of mode=fsx"));
        assert!(parse("verify:mode=fill,bs=6k").contains("multiple of 4k"));
        assert!(parse("verify:mode=fill,time_based=1").contains("needs runtime="));
        assert!(parse("verify:replay=/nonexistent/x.fsxops").contains("replay= file /nonexistent/x.fsxops"));
        let w = VerifyWorkload::from_spec(&Spec::parse("verify:ops='write,read|write'").unwrap()).unwrap();
        assert_eq!(w.options.ops, vec![Op::Read, Op::Write]);
    }
}
