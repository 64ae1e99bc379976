//! `fsarena`: benchmark filesystems and compare them side by side.
//!
//! The flow reads top to bottom: parse the command line, validate it into a plan (no side
//! effects), run the plan, export the report. The binary (main.rs) is [`main_with`] on the
//! process's arguments; tests call it in-process, without root, on a `dir:` target with the
//! `null` engine or small real jobs.

mod args;
mod commands;
mod demo;
mod experiment;
mod fault;
mod figures;
mod help;
mod hold;
mod man;
#[cfg(feature = "mpi")]
mod mpi;
mod output;
mod plan;
mod progress;
mod ranks;
mod record;
mod report_file;
mod runner;
mod suite;
mod tenants;
mod warnings;

use crate::output::say;
use clap::Parser;
use std::process::ExitCode;

/// The command line as given, for the stored plan (`plan_text`).
static ARGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Runs `fsarena` with `args` (the first is the program's name, as in `std::env::args_os`)
/// and returns its exit code: 0 success, 1 a failure during the run, 2 bad input.
pub fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let _ = ARGS.set(args.iter().map(|a| a.to_string_lossy().into_owned()).collect());
    // Every rank of an MPI job finds the same bad input: rank 0 alone says it, also in a
    // build without MPI and before MPI starts.
    let silent = args.iter().any(|a| a == "--mpi") && ranks::launcher_rank().is_some_and(|r| r != 0);
    let cli = match args::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if silent => return ExitCode::from(if e.use_stderr() { 2 } else { 0 }),
        Err(e) => return usage_error(&e),
    };
    let outcome = match cli.command {
        args::Command::Run(run) => run_plan(&run),
        args::Command::Demo(demo) => demo::run(&demo),
        args::Command::Suite(s) => suite::command(&s),
        args::Command::Results(r) => commands::results(&r),
        args::Command::Compare(c) => commands::compare(&c),
        args::Command::Report(r) => commands::report(&r),
        args::Command::Targets => commands::list_targets(),
        args::Command::Cleanup(c) => commands::cleanup(&c.workdir),
        args::Command::Up(u) => hold::up(&u),
        args::Command::Down(d) => hold::down(&d),
        args::Command::Completions { shell } => man::completions(shell),
        args::Command::Man(m) => man::man(&m),
        args::Command::Help(h) => help::help(&h),
    };
    match outcome {
        Ok(code) => code,
        Err(plan::Failure::BadInput(_)) if silent => ExitCode::from(2),
        Err(plan::Failure::BadInput(e)) => {
            say_bad_input(&e);
            ExitCode::from(2)
        }
        Err(plan::Failure::Run(e)) => {
            // One line, and inert: the message carries labels, paths and tools' output.
            say!("fsarena: {}", fsarena_core::printable(&format!("{e:#}")));
            ExitCode::from(1)
        }
    }
}

/// Bad input, on stderr: a job file's problems come one per line, each said as fsarena's.
fn say_bad_input(e: &impl std::fmt::Display) {
    for line in e.to_string().lines() {
        say!("fsarena: {line}");
    }
}

/// `fsarena run`: validate, then run, on this process alone or, with `--mpi`, on every rank
/// of the MPI job (which ends when the ranks are dropped, after the run).
fn run_plan(run: &args::RunArgs) -> Result<ExitCode, plan::Failure> {
    let ranks = ranks::open(run.plan.mpi)?;
    match plan::Plan::from_run_args(run) {
        Ok(plan) => runner::execute(&plan, run.plan.progress.mode(), ranks.as_ref()),
        // Every rank validated the same plan and found the same fault: rank 0 says it, while
        // every rank is still in the job (a rank that ended first with exit 2 would have
        // mpirun end rank 0 before it said why), then they all leave.
        Err(plan::Failure::BadInput(e)) if ranks.size() > 1 => {
            if ranks.rank() == 0 {
                say_bad_input(&e);
            }
            ranks.barrier();
            Ok(ExitCode::from(2))
        }
        Err(e) => Err(e),
    }
}

/// `--help` and `--version` print as clap renders them; any other command-line error is bad
/// input, said on one line like every other (clap's own rendering spans a usage block and a
/// hint): the error, and the values accepted where clap lists them.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
    }
    let rendered = e.render().to_string();
    let parts: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect();
    say!("fsarena: {}", fsarena_core::printable(&parts.join("; ")));
    ExitCode::from(2)
}
