//! `fsarena`: benchmark filesystems and compare them side by side.
//!
//! The flow reads top to bottom: parse the command line, validate it into a plan (no side
//! effects), run the plan, export the report. The binary (main.rs) is [`main_with`] on the
//! process's arguments; tests call it in-process, without root, on a `dir:` target with the
//! `null` engine or small real jobs.

mod args;
mod channel;
mod cluster;
mod commands;
mod demo;
mod experiment;
mod failure;
mod fault;
mod help;
mod hold;
mod launch;
mod man;
#[cfg(feature = "mpi")]
mod mpi;
mod offer;
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
    // How each kind presents its results, from the registry the report crate cannot see.
    fsarena_report::set_presenters(fsarena_kinds::WORKLOAD_KINDS.iter().map(|k| (k.name, k.present)).collect());
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
    let code = match outcome {
        Ok(code) => code,
        Err(failure::Failure::BadInput(_)) if silent => ExitCode::from(2),
        Err(failure::Failure::BadInput(e)) => {
            say_bad_input(&e);
            ExitCode::from(2)
        }
        Err(failure::Failure::Run(e)) => {
            // One line, and inert: the message carries labels, paths and tools' output.
            say!("fsarena: {}", fsarena_core::printable(&format!("{e:#}")));
            ExitCode::from(1)
        }
    };
    // A rank of a job fsarena launched tells the launcher how it ended.
    channel::done(&code);
    code
}

/// Bad input, on stderr: a job file's problems come one per line, each said as fsarena's.
fn say_bad_input(e: &impl std::fmt::Display) {
    for line in e.to_string().lines() {
        say!("fsarena: {line}");
    }
}

/// `fsarena run`: validate, then run, on this process alone or, with `--mpi`, on every rank
/// of the MPI job (which ends when the ranks are dropped, after the run).
fn run_plan(run: &args::RunArgs) -> Result<ExitCode, failure::Failure> {
    if run.plan.hostfile.is_some() {
        return launch::launch(&run.plan, None, || plan::Plan::from_run_args(run));
    }
    let ranks = cluster::open(run.plan.mpi)?;
    execute_agreed(plan::Plan::from_run_args(run), run.plan.progress.mode(), ranks.as_ref())
}

/// Runs `planned` once every rank has validated its plan. Under MPI the ranks first agree:
/// a plan refused on any rank (the same fault everywhere, or one host's own: a `dir:` path
/// missing there) is refused on all, before anything is created, and none enters the run's
/// collectives while another waits elsewhere. Rank 0 says a fault it found itself; a fault
/// only other ranks found, the first rank of each such host says, naming itself and its
/// host. They say it while every rank is still in the job (one that ended first would have
/// mpirun end the others before they said why), then all leave with 2 (bad input) or 1.
pub(crate) fn execute_agreed(
    planned: Result<plan::Plan, failure::Failure>,
    mode: progress::Mode,
    ranks: &dyn ranks::Ranks,
) -> Result<ExitCode, failure::Failure> {
    // Alone, nothing to agree on (and no collective to make).
    if ranks.size() <= 1 || !ranks.any(planned.is_err()) {
        return runner::execute(&planned?, mode, ranks);
    }
    let rank = ranks.rank();
    let zero_refused = ranks.any(rank == 0 && planned.is_err());
    let run_failure = ranks.any(matches!(planned, Err(failure::Failure::Run(_))));
    let said = match &planned {
        Err(failure::Failure::BadInput(e)) => Some(e.to_string()),
        Err(failure::Failure::Run(e)) => Some(format!("{e:#}")),
        Ok(_) => None,
    };
    match said {
        Some(text) if rank == 0 => say_bad_input(&text),
        // One line a host: its first rank's (Open MPI numbers each host's ranks from 0).
        Some(text) if !zero_refused && std::env::var("OMPI_COMM_WORLD_LOCAL_RANK").map_or(true, |r| r == "0") => {
            let host = ranks::host_name();
            for line in text.lines() {
                say!("fsarena: rank {rank} on {host}: {line}");
            }
        }
        _ => {}
    }
    ranks.barrier();
    Ok(ExitCode::from(if run_failure { 1 } else { 2 }))
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    /// The top-level module each `crate::NAME` (or `use crate::{NAME, ...}`) in `text` names.
    fn named_modules(text: &str) -> BTreeSet<String> {
        let word = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
        let mut out = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            match rest.strip_prefix('{') {
                Some(group) => {
                    let group = group.split('}').next().unwrap_or_default();
                    out.extend(group.split(',').map(|p| word(p.trim())).filter(|w| !w.is_empty()));
                }
                None => {
                    out.insert(word(rest));
                }
            }
        }
        out
    }

    /// The cli's modules form layers: reading the crate from the top (lib.rs), no module
    /// reaches back to one that reaches it. A module's files (experiment/figures.rs) are one
    /// module.
    #[test]
    fn the_modules_import_each_other_in_no_circle() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut files = vec![src.clone()];
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            let relative = path.strip_prefix(&src).unwrap();
            let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
            let module = first.trim_end_matches(".rs").to_string();
            if ["lib", "main"].contains(&module.as_str()) {
                continue;
            }
            let named = named_modules(&std::fs::read_to_string(&path).unwrap());
            graph.entry(module.clone()).or_default().extend(named.into_iter().filter(|m| *m != module));
        }
        assert!(graph.len() > 10 && graph["runner"].contains("plan"), "{graph:?}");
        // Depth-first, with the path so far: a module met again on it closes a circle.
        fn visit(
            m: &str,
            graph: &BTreeMap<String, BTreeSet<String>>,
            path: &mut Vec<String>,
            done: &mut BTreeSet<String>,
        ) -> Result<(), String> {
            if let Some(at) = path.iter().position(|p| p == m) {
                return Err(format!("{} -> {m}", path[at..].join(" -> ")));
            }
            if !done.insert(m.to_string()) {
                return Ok(());
            }
            path.push(m.to_string());
            for next in graph.get(m).into_iter().flatten() {
                visit(next, graph, path, done)?;
            }
            path.pop();
            Ok(())
        }
        let mut done = BTreeSet::new();
        for m in graph.keys() {
            // Each root gets its own walk (done marks modules whose walks found no circle).
            visit(m, &graph, &mut Vec::new(), &mut done).unwrap_or_else(|c| panic!("an import circle: {c}"));
        }
    }
}
