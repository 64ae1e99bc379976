//! Runs a plan: for each target provision, run every workload, tear down; then export.
//! Teardown always happens, and what was measured before a failure is still reported.

use crate::plan::{Failure, Plan};
use anyhow::anyhow;
use fsarena_report::{ResultEntry, RunReport};
use fsarena_target::{ProvisionCtx, Workdir};
use fsarena_workload::{RunEnv, Workload};
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
        id: format!("{}-{}", started.as_secs(), std::process::id()),
        started_unix_ms: started.as_millis() as u64,
        environment: fsarena_target::environment::machine(),
        global_options: plan.workloads.iter().flat_map(|w| w.global_options.clone()).collect(),
        results: Vec::new(),
        plan: plan.text.clone(),
        complete: false,
    };
    let progress = |text: &str| eprintln!("fsarena: {text}");
    let workdir = Workdir::open(&plan.workdir).map_err(|e| Failure::Run(e.into()))?;
    let mut failure: Option<String> = None;
    let mut warned_root = false;
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
            if plan.drop_caches {
                if fsarena_target::sys::is_root() {
                    if let Err(e) = fsarena_target::sys::drop_caches() {
                        progress(&format!("warning: {e}"));
                    }
                } else if !warned_root {
                    warned_root = true;
                    progress("warning: not root, so the page cache is not dropped between workloads; results may come from the cache");
                }
            }
            let env = RunEnv { root: mounted.root(), stop: &stop, progress: &progress };
            let mut entry = ResultEntry {
                target_label: target.label().to_string(),
                target_kind: target.kind().to_string(),
                target_options: target.options(),
                target_info: mounted.info(),
                workload_kind: workload.kind().to_string(),
                workload_params: workload.params(),
                measurements: Vec::new(),
            };
            match workload.run(&env) {
                Ok(m) => entry.measurements.push(m),
                Err(e) => {
                    entry.measurements.extend(e.partial);
                    let mut message = format!("{}: {}", target.label(), e.message);
                    if let Some(log) = mounted.diagnostics() {
                        message.push_str(&format!("; FUSE daemon said: {log}"));
                    }
                    failure = Some(message);
                }
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
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let bytes = plan.format.exporter(terminal).serialize(&report);
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
            for job in &w.jobs {
                let o = &job.options;
                let _ = writeln!(
                    out,
                    "    io job {}: rw={:?} bs={:?} size={} numjobs={} ioengine={:?} direct={} runtime={} time_based={}",
                    o.name,
                    o.rw,
                    o.bs,
                    o.job_size(),
                    o.numjobs,
                    o.ioengine,
                    u8::from(o.direct),
                    o.runtime.map_or("none".to_string(), |r| format!("{}s", r.as_secs_f64())),
                    u8::from(o.time_based),
                );
            }
        }
    }
}

/// `fsarena targets`: every kind, available here or not, and why not.
pub fn list_targets() -> Result<ExitCode, Failure> {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{:<8}  {:<9}  why not", "kind", "available");
    for kind in fsarena_target::KINDS {
        let verdict = fsarena_target::requirements::check(&fsarena_target::kind_requirements(kind));
        let (yes, why) = match verdict {
            Ok(()) => ("yes", String::new()),
            Err(why) => ("no", why),
        };
        let _ = writeln!(out, "{kind:<8}  {yes:<9}  {why}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `fsarena cleanup`: undoes what killed runs recorded in `workdir`.
pub fn cleanup(workdir: &std::path::Path) -> Result<ExitCode, Failure> {
    let done = fsarena_target::cleanup(workdir).map_err(|e| Failure::Run(e.into()))?;
    if done.is_empty() {
        eprintln!("fsarena: nothing to clean up in {}", workdir.display());
    }
    for line in done {
        eprintln!("fsarena: {line}");
    }
    Ok(ExitCode::SUCCESS)
}
