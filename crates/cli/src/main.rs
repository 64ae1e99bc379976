//! `fsarena`: benchmark filesystems and compare them side by side.
//!
//! The flow reads top to bottom: parse the command line, validate it into a plan (no side
//! effects), run the plan, export the report.

mod args;
mod commands;
mod plan;
mod record;
mod runner;
mod warnings;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let outcome = match cli.command {
        args::Command::Run(run) => plan::Plan::from_run_args(&run).and_then(|p| runner::execute(&p)),
        args::Command::Demo(demo) => plan::Plan::demo(&demo).and_then(|p| runner::execute(&p)),
        args::Command::Results(r) => commands::results(&r),
        args::Command::Compare(c) => commands::compare(&c),
        args::Command::Report(r) => commands::report(&r),
        args::Command::Targets => commands::list_targets(),
        args::Command::Cleanup(c) => commands::cleanup(&c.workdir),
        args::Command::Completions { shell } => commands::completions(shell),
        args::Command::Man => commands::man(),
    };
    match outcome {
        Ok(code) => code,
        Err(plan::Failure::BadInput(e)) => {
            eprintln!("fsarena: {e}");
            ExitCode::from(2)
        }
        Err(plan::Failure::Run(e)) => {
            // One line, and inert: the message carries labels, paths and tools' output.
            eprintln!("fsarena: {}", fsarena_core::printable(&format!("{e:#}")));
            ExitCode::from(1)
        }
    }
}
