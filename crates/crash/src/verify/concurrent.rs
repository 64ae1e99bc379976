//! `verify:mode=concurrent`: integrity under concurrency, in fio's terms and with the `io`
//! workload's own verify (one block format in the project, not a second one). Three passes
//! over the same files:
//!
//! 1. `numjobs` jobs write their files at once with `verify=crc32c` (each block stamped with
//!    its offset and checksum), `verify_backlog` checking what was written during the run and
//!    the rest checked after it;
//! 2. the caches dropped, `verify_only=1`: every block of the files (a full pass writes
//!    them all) read back from the device;
//! 3. the target unmounted and mounted again, the same `verify_only` pass.
//!
//! A pass the run cannot make (caches kept with `--no-drop-caches`, a target fsarena does not
//! mount) is listed as unsupported with the reason, never silently dropped. A block that fails
//! is a finding (`mismatches`), not a failed run.

use fsarena_core::{Better, Measurement, Outcome, Spec, Verdict};
use fsarena_io::io::IoWorkload;
use fsarena_workload::{RunEnv, Workload, WorkloadError};
use std::time::Instant;

/// What `mode=concurrent` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcurrentConfig {
    /// Jobs writing at once (fio's numjobs).
    pub numjobs: u64,
    /// Bytes each job writes (fio's size).
    pub size: u64,
    /// Bytes a write (fio's bs).
    pub bs: u64,
    /// `randwrite` or `write`.
    pub rw: &'static str,
    /// fio's verify_backlog.
    pub verify_backlog: u64,
    /// fio's verify_fatal.
    pub verify_fatal: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// fio's ioengine.
    pub ioengine: String,
    /// fio's iodepth.
    pub iodepth: u64,
    /// fio's randseed.
    pub seed: u64,
}

/// The job name, hence the files' names (`verify-concurrent.N.0`).
const NAME: &str = "verify-concurrent";

impl ConcurrentConfig {
    /// The io workload spec of the write pass, or (`verify_only`) of a read-back pass.
    fn io_spec(&self, verify_only: bool) -> String {
        let mut spec = format!(
            "io:name={NAME},rw={},bs={},size={},numjobs={},ioengine={},iodepth={},direct={},randseed={},\
             verify=crc32c,verify_fatal={},group_reporting=1,keep=1",
            self.rw,
            self.bs,
            self.size,
            self.numjobs,
            self.ioengine,
            self.iodepth,
            u8::from(self.direct),
            self.seed,
            u8::from(self.verify_fatal),
        );
        // A full pass writes every block of each job's file (randwrite keeps fio's random map):
        // the read-back checks them all, with no state file on the filesystem under test
        // (which a faulty one could corrupt too).
        spec.push_str(",verify_state_save=0");
        if verify_only {
            spec.push_str(",verify_only=1");
        } else if self.verify_backlog > 0 {
            spec.push_str(&format!(",verify_backlog={}", self.verify_backlog));
        }
        spec
    }

    /// The io workload of a pass; its options are checked when the verify workload is made.
    pub fn io(&self, verify_only: bool) -> Result<IoWorkload, String> {
        let spec = Spec::parse(&self.io_spec(verify_only)).map_err(|e| e.to_string())?;
        IoWorkload::from_spec(&spec).map_err(|e| e.to_string())
    }
}

/// One pass's figures.
#[derive(Debug, Default)]
struct Pass {
    ops: u64,
    bytes: u64,
    verified: u64,
    bad: u64,
    first: Option<String>,
    ns: u64,
}

/// Runs one pass of `io`; a block that fails verify is a finding in the pass, any other error
/// ends the run.
fn pass(io: &IoWorkload, env: &RunEnv<'_>) -> Result<Pass, String> {
    let started = Instant::now();
    // keep=1 in the spec: the files stay for the next pass whatever the round says.
    let (ms, first) = match io.run(env) {
        Ok(ms) => (ms, None),
        Err(e) => {
            let bad = e.partial.iter().map(|m| m.counters.get("verify_errors").copied().unwrap_or(0)).sum::<u64>();
            if bad == 0 {
                return Err(e.message);
            }
            (e.partial, Some(e.message))
        }
    };
    let get = |name: &str| ms.iter().map(|m| m.counters.get(name).copied().unwrap_or(0)).sum::<u64>();
    Ok(Pass {
        ops: get("read_ios") + get("write_ios"),
        bytes: get("write_bytes"),
        verified: get("bytes_verified"),
        bad: get("verify_errors"),
        first,
        ns: started.elapsed().as_nanos() as u64,
    })
}

/// Runs the three passes in `env.root` and removes the files after.
pub fn run(cfg: &ConcurrentConfig, env: &RunEnv<'_>) -> Result<Measurement, WorkloadError> {
    let fail = |message: String| WorkloadError { message: format!("verify: {message}"), partial: Vec::new() };
    let writer = cfg.io(false).map_err(fail)?;
    let reader = cfg.io(true).map_err(fail)?;
    let started = Instant::now();
    let outcome = passes(cfg, &writer, &reader, env);
    // The files and the saved states: the write pass made them, it removes them.
    writer.remove_created(env.root);
    let passes = outcome.map_err(fail)?;
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let mut m = Measurement { complete: !env.stop.load(std::sync::atomic::Ordering::Relaxed), ..Default::default() };
    let total = |f: fn(&Pass) -> u64| passes.iter().filter_map(|(_, _, p)| p.as_ref().ok()).map(f).sum::<u64>();
    let (ops, verified, bad) = (total(|p| p.ops), total(|p| p.verified), total(|p| p.bad));
    m.push("ops", "ops", Better::Higher, ops as f64);
    m.push("ops_per_s", "ops/s", Better::Higher, ops as f64 / secs);
    m.push("bytes_verified", "bytes", Better::Higher, verified as f64);
    m.push("mismatches", "mismatches", Better::Lower, bad as f64);
    m.push("elapsed", "ns", Better::Lower, secs * 1e9);
    if let Some((_, _, Ok(w))) = passes.first() {
        m.push("write_bw", "bytes/s", Better::Higher, w.bytes as f64 / (w.ns as f64 / 1e9).max(1e-9));
    }
    for (name, n) in [("ops", ops), ("bytes_verified", verified), ("mismatches", bad)] {
        m.count(name, n);
    }
    m.count(fsarena_core::FINDINGS, bad);
    for (case, what, p) in &passes {
        let verdict = match p {
            Ok(p) if p.bad == 0 => Verdict { case: case.to_string(), outcome: Outcome::Pass, ..blank() },
            Ok(p) => {
                let first = p.first.clone().unwrap_or_default();
                (env.progress)(&format!("verify: {case}: {first}"));
                Verdict {
                    case: case.to_string(),
                    outcome: Outcome::Fail,
                    expected: what.to_string(),
                    actual: first,
                    ..blank()
                }
            }
            Err(why) => {
                (env.progress)(&format!("verify: {case}: not run: {why}"));
                Verdict { case: case.to_string(), outcome: Outcome::Unsupported, actual: why.clone(), ..blank() }
            }
        };
        m.verdicts.push(verdict);
    }
    Ok(m)
}

fn blank() -> Verdict {
    Verdict {
        case: String::new(),
        security: false,
        outcome: Outcome::Pass,
        expected: String::new(),
        actual: String::new(),
    }
}

/// (case, what it checks, the pass or why it could not run).
type Passes = Vec<(&'static str, &'static str, Result<Pass, String>)>;

fn passes(
    cfg: &ConcurrentConfig,
    writer: &IoWorkload,
    reader: &IoWorkload,
    env: &RunEnv<'_>,
) -> Result<Passes, String> {
    (env.progress)(&format!(
        "verify: concurrent, {} jobs writing {} bytes each ({}, bs={}), verify_backlog={}",
        cfg.numjobs, cfg.size, cfg.rw, cfg.bs, cfg.verify_backlog
    ));
    let written = pass(writer, env)?;
    // verify_fatal: the first bad block ends the run, as it ends fio's job.
    let over = |p: &Pass| (cfg.verify_fatal && p.bad > 0) || env.stop.load(std::sync::atomic::Ordering::Relaxed);
    let mut out: Passes = Vec::new();
    let done = over(&written);
    out.push(("verify.concurrent.written", "every block read back as written, during and after the run", Ok(written)));
    if done {
        return Ok(out);
    }
    // A drop the run cannot make is listed; a read-back that fails otherwise fails the run.
    let cold = match env.drop_caches.map(|drop| drop()) {
        None => Err("the caches are kept (--no-drop-caches or drop_caches = \"none\")".to_string()),
        Some(Err(why)) => Err(why),
        Some(Ok(())) => Ok(pass(reader, env)?),
    };
    let done = cold.as_ref().is_ok_and(over);
    out.push(("verify.concurrent.cold", "every block read back from the device after the caches were dropped", cold));
    if done {
        return Ok(out);
    }
    // A target this run cannot remount is listed; a remount that fails fails the run (the
    // target may be unmounted: not what the next workload expects).
    let remounted = match env.remount {
        None => Err("this kind of target cannot be remounted: only those fsarena mounts on a loop device".to_string()),
        Some(remount) => {
            remount()?;
            Ok(pass(reader, env)?)
        }
    };
    out.push((
        "verify.concurrent.remount",
        "every block read back after the target was unmounted and mounted again",
        remounted,
    ));
    Ok(out)
}
