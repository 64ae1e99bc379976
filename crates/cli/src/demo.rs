//! `fsarena demo`: the five studies in miniature. Every built-in suite at `smoke` scale, each
//! row repeated (`--repeat`, 3) so that the Findings have intervals, on what this machine can
//! provision; each suite stored as its own run (`demo-NAME`, tag `demo`) and all of them in
//! one report. Each suite's `[scale.smoke]` states its `budget`; the demo says how long each
//! took against it, and their sum is the demo's promise (a test holds the budgets to it).

use crate::args::{DemoArgs, SuiteCommand};
use crate::failure::Failure;
use crate::output::say;
use crate::plan::Plan;
use crate::suite::{smoke_budget, Suite, SUITES};
use fsarena_core::InputError;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// What the demo's suites may take together, run time after the build: the sum of their
/// smoke budgets must stay within it.
pub const DEMO_BUDGET: Duration = Duration::from_secs(240);

/// The plan of `suite` as the demo runs it: `suite run NAME --scale smoke` with the demo's
/// repetitions, name, tag, database and work directory.
fn plan(suite: &Suite, args: &DemoArgs) -> Result<Plan, Failure> {
    let (repeat, warmup) = (args.repeat.to_string(), args.warmup.to_string());
    let name = format!("demo-{}", suite.name);
    let mut argv: Vec<std::ffi::OsString> = [
        "fsarena", "suite", "run", suite.name, "--scale", "smoke", "--repeat", &repeat, "--warmup", &warmup, "--name",
        &name, "--tag", "demo",
    ]
    .iter()
    .map(std::ffi::OsString::from)
    .collect();
    argv.extend(["--db".into(), args.db.path().into_os_string()]);
    argv.extend(["--workdir".into(), args.workdir.path.clone().into_os_string()]);
    if args.progress.quiet {
        argv.push("--quiet".into());
    }
    if args.progress.log {
        argv.push("--log".into());
    }
    let cli = <crate::args::Cli as clap::Parser>::try_parse_from(argv)
        .map_err(|e| Failure::Run(anyhow::anyhow!("demo: {e}")))?;
    match cli.command {
        crate::args::Command::Suite(SuiteCommand::Run(a)) => crate::suite::plan(&a, suite),
        _ => Err(Failure::Run(anyhow::anyhow!("demo: unexpected command line"))),
    }
}

/// `fsarena demo`.
pub fn run(args: &DemoArgs) -> Result<ExitCode, Failure> {
    if args.repeat == 0 {
        return Err(InputError::new("--repeat 0: expected at least 1 measured repetition").into());
    }
    let out = &args.output;
    crate::report_file::check(out, &[crate::report_file::ReportFile::Html])?;
    // The work directory is every suite's: one that cannot be used is bad input for the demo,
    // said once, not a reason to skip each suite.
    fsarena_target::Workdir::check(&args.workdir.path)?;
    let suites: Vec<&Suite> = if args.suites.is_empty() {
        SUITES.iter().collect()
    } else {
        let wanted = args.suites.iter().map(|n| crate::suite::find(n)).collect::<Result<Vec<_>, _>>()?;
        SUITES.iter().filter(|s| wanted.iter().any(|w| w.name == s.name)).collect()
    };
    // Every plan before anything runs: bad input stops here; a suite this machine cannot run
    // at all (client-scaling without GlusterFS) is skipped and said.
    let mut plans = Vec::new();
    for suite in suites {
        let budget = smoke_budget(suite)?;
        match plan(suite, args) {
            Ok(p) => plans.push((suite, p, budget)),
            Err(Failure::BadInput(e)) => say!("fsarena: demo skips suite {}: {e}", suite.name),
            Err(e) => return Err(e),
        }
    }
    if plans.is_empty() {
        return Err(InputError::new("the demo found no suite it can run here: see `fsarena suite show NAME`").into());
    }
    let budget: Duration = plans.iter().map(|(_, _, b)| *b).sum();
    say!(
        "fsarena: demo: {} suite(s) at smoke scale, every row {} time(s), within {} s together (their budgets; the demo's are at most {} s)",
        plans.len(),
        args.repeat,
        budget.as_secs(),
        DEMO_BUDGET.as_secs()
    );
    let mut code = ExitCode::SUCCESS;
    let mut timings = Vec::new();
    for (suite, plan, budget) in &plans {
        say!("fsarena: demo: suite {} (study {}), budget {} s", suite.name, suite.study, budget.as_secs());
        let started = Instant::now();
        let ran = crate::runner::execute(plan, args.progress.mode(), &crate::ranks::Alone);
        let took = started.elapsed();
        say!("fsarena: demo: suite {} took {:.0} s (budget {} s)", suite.name, took.as_secs_f64(), budget.as_secs());
        // Output lost (a closed pipe) interrupted that suite: the demo stops with it.
        if crate::output::lost().is_some() {
            return ran;
        }
        match ran {
            Ok(c) if c == ExitCode::SUCCESS => {}
            Ok(c) => code = c,
            Err(Failure::Run(e)) => {
                say!("fsarena: demo: suite {}: {}", suite.name, fsarena_core::printable(&format!("{e:#}")));
                code = ExitCode::from(1);
            }
            Err(e) => return Err(e),
        }
        timings.push((*suite, took, *budget));
    }
    let total: Duration = timings.iter().map(|(_, t, _)| *t).sum();
    // The report: each suite's stored run, in the studies' order.
    let store =
        fsarena_store::Store::open_read_only(&args.db.path()).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
    let mut runs = Vec::new();
    for (suite, took, budget) in &timings {
        let id = store.resolve(&format!("demo-{}", suite.name)).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
        let run = store.load(&id).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
        let note = format!(
            "study {}, suite {} at smoke scale: {:.0} s here (budget {} s); run {} · fsarena suite run {} --scale quick for the study's shape",
            suite.study,
            suite.path(),
            took.as_secs_f64(),
            budget.as_secs(),
            run.handle(),
            suite.name
        );
        runs.push((format!("{} · {}", suite.name, crate::suite::description(suite)), note, run));
    }
    let parts: Vec<fsarena_report::Part<'_>> = runs
        .iter()
        .map(|(heading, note, run)| fsarena_report::Part { heading: heading.clone(), note: note.clone(), run })
        .collect();
    let intro = format!(
        "The five studies in miniature: {} suite(s) at smoke scale, every row {} time(s), {:.0} s of run time (budget {} s). Smoke scale shows each study's shape and its Findings, not its verdict: run a suite at --scale quick or full for that.",
        timings.len(),
        args.repeat,
        total.as_secs_f64(),
        budget.as_secs()
    );
    let html = fsarena_report::html_parts("fsarena demo", &intro, &parts);
    crate::output::write_private(out, html.as_bytes()).map_err(Failure::Run)?;
    say!(
        "fsarena: demo: {:.0} s of run time for {} suite(s) (budget {} s); report written to {}",
        total.as_secs_f64(),
        timings.len(),
        budget.as_secs(),
        fsarena_core::printable(&out.display().to_string())
    );
    Ok(code)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_states_a_smoke_budget_and_they_fit_the_demo() {
        let budgets: Vec<Duration> = SUITES.iter().map(|s| smoke_budget(s).unwrap()).collect();
        assert!(budgets.iter().all(|b| *b > Duration::ZERO), "{budgets:?}");
        let sum: Duration = budgets.iter().sum();
        assert!(sum <= DEMO_BUDGET, "the suites' smoke budgets add up to {sum:?}, over the demo's {DEMO_BUDGET:?}");
    }
}
