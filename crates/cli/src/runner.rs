//! Runs a plan: for each target provision, run every workload, tear down; then export.
//! Teardown always happens, and what was measured before a failure is still reported.

use crate::plan::{Failure, Plan};
use anyhow::anyhow;
use fsarena_report::{ResultEntry, RunReport};
use fsarena_target::{ProvisionCtx, Workdir};
use fsarena_workload::RunEnv;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Runs `plan` and prints its report; the exit code says how it went.
pub fn execute(plan: &Plan) -> Result<ExitCode, Failure> {
    if plan.dry_run {
        print_plan(plan);
        return Ok(ExitCode::SUCCESS);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let signal = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while stopping ends the process at once.
        signal_hook::flag::register_conditional_shutdown(sig, 1, Arc::clone(&stop))
            .map_err(|e| Failure::Run(e.into()))?;
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(|e| Failure::Run(e.into()))?;
        signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig as usize)
            .map_err(|e| Failure::Run(e.into()))?;
    }
    let started = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let mut report = RunReport {
        id: run_id(started, std::process::id()),
        started_unix_ms: started.as_millis() as u64,
        environment: fsarena_target::environment::machine(),
        global_options: plan.workloads.iter().flat_map(|w| w.global_options()).collect(),
        results: Vec::new(),
        plan: plan.text.clone(),
        complete: false,
    };
    let progress = |text: &str| eprintln!("fsarena: {text}");
    let mut store = crate::record::Recorder::open(plan, &report)?;
    let workdir = Workdir::open(&plan.workdir).map_err(|e| Failure::Run(e.into()))?;
    let mut failure: Option<String> = None;
    let mut cache = CacheControl { enabled: plan.drop_caches, warned: false };
    'targets: for (index, target) in plan.targets.iter().enumerate() {
        progress(&format!("provisioning {}", target.label()));
        let ctx = ProvisionCtx { workdir: &workdir, index };
        let mounted = match target.provision(&ctx) {
            Ok(m) => m,
            Err(e) => {
                failure = Some(format!("{}: {e}", target.label()));
                break;
            }
        };
        for workload in &plan.workloads {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let mut entry = ResultEntry {
                target_label: target.label().to_string(),
                target_kind: target.kind().to_string(),
                target_options: target.options(),
                target_info: mounted.info(),
                workload_kind: workload.kind().to_string(),
                workload_params: workload.params(),
                measurements: Vec::new(),
            };
            let position = report.results.len();
            let result_id = store.add_result(&report.id, position, &entry);
            let rounds = plan.warmup + plan.repeat;
            for round in 0..rounds {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let measured = round >= plan.warmup;
                let what = if measured {
                    format!("repetition {}/{}", round - plan.warmup + 1, plan.repeat)
                } else {
                    format!("warm-up {}/{} (discarded)", round + 1, plan.warmup)
                };
                progress(&format!("{} · {}: {what}", target.label(), workload.kind()));
                if measured {
                    cache.drop(&progress);
                }
                // The files stay between rounds (a read job's layout is reused) and go after
                // the last one.
                let env =
                    RunEnv { root: mounted.root(), stop: &stop, progress: &progress, keep_files: round + 1 < rounds };
                let outcome = workload.run(&env);
                let (measurement, error) = match outcome {
                    Ok(m) => (Some(m), None),
                    Err(e) => (e.partial, Some(e.message)),
                };
                if let (true, Some(m)) = (measured || error.is_some(), measurement) {
                    store.add_measurement(result_id, entry.measurements.len(), &m);
                    entry.measurements.push(m);
                }
                if let Some(message) = error {
                    let mut message = format!("{}: {message}", target.label());
                    if let Some(log) = mounted.diagnostics() {
                        message.push_str(&format!("; FUSE daemon said: {log}"));
                    }
                    failure = Some(message);
                    break;
                }
            }
            for warning in crate::warnings::unstable(&entry) {
                progress(&format!("warning: {warning}"));
            }
            report.results.push(entry);
            if failure.is_some() {
                break;
            }
        }
        let teardown = mounted.teardown();
        if let Err(e) = teardown {
            failure.get_or_insert(format!("teardown of {}: {e}", target.label()));
        }
        if failure.is_some() || stop.load(Ordering::Relaxed) {
            break 'targets;
        }
    }
    workdir.close();
    report.complete = failure.is_none() && signal.load(Ordering::Relaxed) == 0;
    store.finish(&report);
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let bytes = plan.format.exporter(terminal).serialize(&report);
    if let Some(path) = &plan.report {
        match crate::commands::write_report(std::slice::from_ref(&report), path) {
            Ok(()) => progress(&format!(
                "report written to {}",
                std::path::absolute(path).unwrap_or_else(|_| path.clone()).display()
            )),
            Err(e) => progress(&format!("warning: {e:#}")),
        }
    }
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error.
    let _ = out.write_all(&bytes).and_then(|()| out.flush());
    match signal.load(Ordering::Relaxed) {
        0 => {}
        sig => {
            eprintln!("fsarena: interrupted; the results above are incomplete and the test files were removed");
            return Ok(ExitCode::from(128 + sig as u8));
        }
    }
    match failure {
        Some(message) => Err(Failure::Run(anyhow!("{message}; the results above are incomplete"))),
        None => Ok(ExitCode::SUCCESS),
    }
}

fn print_plan(plan: &Plan) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "plan: {} target(s) × {} workload(s)", plan.targets.len(), plan.workloads.len());
    for t in &plan.targets {
        let _ = writeln!(out, "  target {} ({})", t.label(), t.kind());
        for w in &plan.workloads {
            for line in w.describe() {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
}

/// Sync and drop the page cache before each measured repetition, when root.
struct CacheControl {
    enabled: bool,
    warned: bool,
}

impl CacheControl {
    fn drop(&mut self, progress: &dyn Fn(&str)) {
        if !self.enabled {
            return;
        }
        if fsarena_target::sys::is_root() {
            if let Err(e) = fsarena_target::sys::drop_caches() {
                progress(&format!("warning: {e}"));
            }
        } else if !self.warned {
            self.warned = true;
            progress("warning: not root, so the page cache is not dropped before each repetition; results may come from the cache (run as root, or pass --no-drop-caches to silence this)");
        }
    }
}

/// A run id of 12 hex digits, different from the first digit on (so that a short prefix names
/// a run, as with git), mixed from the start time and the PID with splitmix64's finalizer.
fn run_id(started: std::time::Duration, pid: u32) -> String {
    let mut z = (started.as_nanos() as u64) ^ (u64::from(pid) << 40);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    format!("{:012x}", z >> 16)
}
