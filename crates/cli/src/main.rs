//! `fsarena`: benchmark filesystems and compare them side by side.
//!
//! The flow reads top to bottom: parse the command line, validate it into a plan (no side
//! effects), run the plan, export the report.

mod args;
mod plan;
mod runner;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let outcome = match cli.command {
        args::Command::Run(run) => plan::Plan::from_run_args(&run).and_then(|p| runner::execute(&p)),
        args::Command::Demo(demo) => plan::Plan::demo(&demo).and_then(|p| runner::execute(&p)),
        args::Command::Targets => runner::list_targets(),
        args::Command::Cleanup(c) => runner::cleanup(&c.workdir),
    };
    match outcome {
        Ok(code) => code,
        Err(plan::Failure::BadInput(e)) => {
            eprintln!("fsarena: {e}");
            ExitCode::from(2)
        }
        Err(plan::Failure::Run(e)) => {
            eprintln!("fsarena: {e:#}");
            ExitCode::from(1)
        }
    }
}
