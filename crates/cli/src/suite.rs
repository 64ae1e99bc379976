//! `fsarena suite`: the five studies as built-in suites. A suite is an experiment file of
//! `suites/` (the format `fsarena run exp.toml` takes), embedded in the binary so that it
//! runs anywhere, and readable there as a starting point for one's own.

use crate::args::{SuiteCommand, SuiteRunArgs};
use crate::experiment::Scale;
use crate::plan::{Failure, Plan};
use fsarena_core::InputError;
use std::process::ExitCode;

/// A built-in suite.
#[derive(Debug)]
pub struct Suite {
    /// What `suite run` takes.
    pub name: &'static str,
    /// The study it repeats (a file of the studies this tool grew from).
    pub study: &'static str,
    /// The experiment file.
    pub text: &'static str,
}

impl Suite {
    /// Its file in the repository.
    pub fn path(&self) -> String {
        format!("suites/{}.toml", self.name)
    }
}

/// Every built-in suite, in the studies' order.
pub static SUITES: &[Suite] = &[
    Suite { name: "dbfs", study: "000", text: include_str!("../../../suites/dbfs.toml") },
    Suite { name: "trading", study: "001", text: include_str!("../../../suites/trading.toml") },
    Suite { name: "client-scaling", study: "002", text: include_str!("../../../suites/client-scaling.toml") },
    Suite { name: "kv", study: "003", text: include_str!("../../../suites/kv.toml") },
    Suite { name: "roundup", study: "004", text: include_str!("../../../suites/roundup.toml") },
];

/// The suite called `name`, or bad input listing them.
pub fn find(name: &str) -> Result<&'static Suite, InputError> {
    SUITES.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = SUITES.iter().map(|s| s.name).collect();
        InputError::new(format!(
            "no suite '{}':{} the suites are {}",
            fsarena_workload::plain::cut(name),
            fsarena_core::did_you_mean(name, names.iter().copied()),
            names.join(", ")
        ))
    })
}

/// `fsarena suite list | show | run`.
pub fn command(command: &SuiteCommand) -> Result<ExitCode, Failure> {
    match command {
        SuiteCommand::List => {
            crate::commands::print(list_text().as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        SuiteCommand::Show { name, workdir } => {
            let suite = find(name)?;
            crate::commands::print(show_text(suite, &workdir.path).as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        SuiteCommand::Run(args) => run(args),
    }
}

/// `suite run`: as `run` (under MPI on every rank), the plan from the suite.
fn run(args: &SuiteRunArgs) -> Result<ExitCode, Failure> {
    let suite = find(&args.suite)?;
    let ranks = crate::ranks::open(args.plan.mpi)?;
    match Plan::from_suite(args, suite) {
        Ok(plan) => crate::runner::execute(&plan, args.plan.progress.mode(), ranks.as_ref()),
        Err(Failure::BadInput(_)) if ranks.rank() != 0 => Ok(ExitCode::from(2)),
        Err(e) => Err(e),
    }
}

/// The suite's description: the file's `description = "..."` line.
pub fn description(suite: &Suite) -> String {
    crate::experiment::parse(suite.text, &suite.path()).ok().and_then(|j| j.description).unwrap_or_default()
}

/// `suite list`: one line per suite.
fn list_text() -> String {
    let mut out = String::new();
    for s in SUITES {
        let rows = crate::experiment::parse(s.text, &s.path()).map_or(0, |j| j.workload.len());
        out.push_str(&format!("{:<15} study {}  {:>2} rows  {}\n", s.name, s.study, rows, description(s)));
    }
    out.push_str(
        "\nfsarena suite show NAME prints a suite's file and its plan at each scale; fsarena suite run NAME runs it.\n",
    );
    out
}

/// The plan of `suite` at `scale`, as `suite run NAME --scale S --dry-run` would build it.
pub fn plan_at(suite: &Suite, scale: Scale, workdir: &std::path::Path) -> Result<Plan, Failure> {
    let argv = ["fsarena", "suite", "run", suite.name, "--dry-run", "--scale", scale.name(), "--workdir"];
    let argv = argv.iter().map(std::ffi::OsString::from).chain([workdir.as_os_str().to_owned()]);
    let cli =
        <crate::args::Cli as clap::Parser>::try_parse_from(argv).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
    match cli.command {
        crate::args::Command::Suite(SuiteCommand::Run(args)) => Plan::from_suite(&args, suite),
        _ => Err(Failure::Run(anyhow::anyhow!("suite show: unexpected command line"))),
    }
}

/// The suite's figures and tables, in the study's order, each with the claims about the rows
/// it draws from, as TOML comments.
fn figures_text(suite: &Suite) -> String {
    let origin = suite.path();
    let parsed = crate::experiment::parse(suite.text, &origin).and_then(|job| {
        let rows = crate::experiment::rows(&job, Scale::Full, &origin)?;
        Ok((crate::figures::figures(&job, &rows, &origin)?, crate::experiment::claims(&job, &rows, &origin)?))
    });
    let (figures, claims) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => return format!("\n# the study's figures and tables: {e}\n"),
    };
    let mut out = format!("\n# the study's figures and tables, in its order ({})\n", figures.len());
    for f in &figures {
        out.push_str(&format!("#   {}: {} [{}]\n", f.id, f.caption, f.kind.name()));
        let facet = f.facet.as_ref().map(|k| format!(" · facet {k}")).unwrap_or_default();
        out.push_str(&format!(
            "#     rows {} · x {} · series {}{facet} · metric {}\n",
            f.rows.join(", "),
            f.x,
            f.series,
            f.metric_text()
        ));
        for c in claims.iter().filter(|c| c.row.as_ref().is_some_and(|r| f.rows.contains(r))) {
            out.push_str(&format!("#     claim: {} ({})\n", c.text, c.metric));
        }
    }
    out
}

/// `suite show`: the file, then the plan at each scale with its estimated duration, as TOML
/// comments: the whole output is the suite's file, ready to copy (`suite show kv > my.toml`).
fn show_text(suite: &Suite, workdir: &std::path::Path) -> String {
    let mut out = format!("# {} (study {})\n{}", suite.path(), suite.study, suite.text);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&figures_text(suite));
    for scale in Scale::ALL {
        out.push_str(&format!("\n# plan at --scale {}\n", scale.name()));
        if scale == Scale::Smoke {
            if let Ok(budget) = crate::demo::smoke_budget(suite) {
                out.push_str(&format!(
                    "#   budget: {} s of run time (fsarena demo runs every suite at smoke)\n",
                    budget.as_secs()
                ));
            }
        }
        let listing = match plan_at(suite, scale, workdir) {
            Ok(plan) => crate::runner::plan_listing(&plan),
            Err(Failure::BadInput(e)) => format!("cannot run here: {e}\n"),
            Err(Failure::Run(e)) => format!("cannot run here: {e:#}\n"),
        };
        for line in listing.lines() {
            out.push_str(&format!("#   {line}\n"));
        }
    }
    out
}
