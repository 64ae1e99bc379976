//! `fsarena suite`: the five studies as built-in suites. A suite is an experiment file of
//! `suites/` (the format `fsarena run exp.toml` takes), embedded in the binary so that it
//! runs anywhere, and readable there as a starting point for one's own.

use crate::args::{SuiteCommand, SuiteRunArgs};
use crate::experiment::Scale;
use crate::failure::Failure;
use crate::plan::{JobFile, Plan};
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
            crate::output::print(list_text().as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        SuiteCommand::Show { name, workdir } => {
            let suite = find(name)?;
            crate::output::print(show_text(suite, &workdir.path).as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        SuiteCommand::Run(args) => run(args),
    }
}

/// `suite run`: as `run` (under MPI on every rank), the plan from the suite.
fn run(args: &SuiteRunArgs) -> Result<ExitCode, Failure> {
    let suite = find(&args.suite)?;
    // The study's clients are hosts, its processes numjobs=: one rank a host unless said.
    if args.plan.hostfile.is_some() {
        return crate::launch::launch(&args.plan, Some(1), || plan(args, suite));
    }
    let ranks = crate::cluster::open(args.plan.mpi)?;
    crate::execute_agreed(plan(args, suite), args.plan.progress.mode(), ranks.as_ref())
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

/// The plan of `suite` run with `args` (`fsarena suite run`): quick unless --scale says.
pub fn plan(args: &SuiteRunArgs, suite: &Suite) -> Result<Plan, Failure> {
    let job = JobFile { origin: suite.path(), text: suite.text.to_string(), path: None, suite: Some(suite.name) };
    Plan::build(&args.plan, Some(job), Scale::Quick)
}

/// The plan of `suite` at `scale`, as `suite run NAME --scale S --dry-run` would build it.
pub fn plan_at(suite: &Suite, scale: Scale, workdir: &std::path::Path) -> Result<Plan, Failure> {
    let argv = ["fsarena", "suite", "run", suite.name, "--dry-run", "--scale", scale.name(), "--workdir"];
    let argv = argv.iter().map(std::ffi::OsString::from).chain([workdir.as_os_str().to_owned()]);
    let cli =
        <crate::args::Cli as clap::Parser>::try_parse_from(argv).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
    match cli.command {
        crate::args::Command::Suite(SuiteCommand::Run(args)) => plan(&args, suite),
        _ => Err(Failure::Run(anyhow::anyhow!("suite show: unexpected command line"))),
    }
}

/// The suite's figures and tables, in the study's order, each with the claims about the rows
/// it draws from, as TOML comments.
fn figures_text(suite: &Suite) -> String {
    let origin = suite.path();
    let parsed = crate::experiment::parse(suite.text, &origin).and_then(|job| {
        let rows = crate::experiment::rows(&job, Scale::Full, &origin)?;
        Ok((
            crate::experiment::figures::figures(&job, &rows, &origin)?,
            crate::experiment::claims(&job, &rows, &origin)?,
        ))
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
    out.push_str(&chosen_text(suite));
    out.push_str(&figures_text(suite));
    for scale in Scale::ALL {
        out.push_str(&format!("\n# plan at --scale {}\n", scale.name()));
        if scale == Scale::Smoke {
            if let Ok(budget) = smoke_budget(suite) {
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

/// The rows' `chosen = "..."`: the values chosen here where the study gives none, and why,
/// as TOML comments; empty when every value is the study's.
fn chosen_text(suite: &Suite) -> String {
    let rows = crate::experiment::parse(suite.text, &suite.path())
        .and_then(|job| crate::experiment::rows(&job, Scale::Full, &suite.path()))
        .unwrap_or_default();
    let chosen: Vec<String> = rows
        .iter()
        .filter_map(|r| r.chosen.as_ref().map(|c| format!("#   {}: {}\n", r.id, fsarena_core::printable(c))))
        .collect();
    match chosen.is_empty() {
        true => String::new(),
        false => format!(
            "\n# chosen here, where the study gives no value (full is otherwise the study's own)\n{}",
            chosen.concat()
        ),
    }
}

/// The smoke budget `suite` states in its `[scale.smoke]` table.
pub fn smoke_budget(suite: &Suite) -> Result<std::time::Duration, InputError> {
    let job = crate::experiment::parse(suite.text, &suite.path())?;
    crate::experiment::file_scale(&job, Scale::Smoke, &suite.path())?
        .budget
        .ok_or_else(|| InputError::new(format!("{}: [scale.smoke] states no budget", suite.path())))
}

#[cfg(test)]
mod tests {
    use super::SUITES;
    use crate::experiment::{claims, parse, rows, FileRow, Scale};

    /// docs/studies.md, whose "Comparative statements" tables name every claim.
    const STUDIES: &str = include_str!("../../../docs/studies.md");

    /// The claim ids the "Comparative statements" tables name: the back-quoted words of each
    /// row's last cell, unless that cell says why the statement is not encoded.
    fn ids_in_docs(doc: &str) -> Vec<String> {
        let start =
            doc.find("\n## Comparative statements\n").expect("docs/studies.md has no section Comparative statements");
        let section = &doc[start + 1..];
        let section = section[3..].find("\n## ").map_or(section, |end| &section[..end + 3]);
        let mut ids = Vec::new();
        for line in section.lines().filter(|l| l.starts_with('|')) {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let last = cells.last().copied().unwrap_or_default();
            if last.starts_with("not encoded") {
                continue;
            }
            ids.extend(last.split('`').skip(1).step_by(2).map(String::from));
        }
        ids
    }

    /// Why the words of `point` and `part` cannot be words of a result of `row`, as far as the
    /// row's table tells: a point's `key=value` is a swept key (an array) holding the value; a
    /// part is one of the row's db_bench `benchmarks`.
    fn scope_error(row: &FileRow, point: Option<&str>, part: Option<&str>) -> Option<String> {
        for word in point.unwrap_or_default().split_whitespace() {
            let Some((key, value)) = word.split_once('=') else {
                return Some(format!("point word '{word}' is not key=value"));
            };
            let values: Vec<String> = match row.table.get(key) {
                Some(toml::Value::Array(items)) => items
                    .iter()
                    .map(|v| match v {
                        toml::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect(),
                _ => return Some(format!("point '{word}': row {} sweeps no '{key}'", row.id)),
            };
            if !values.iter().any(|v| v == value) {
                return Some(format!("point '{word}': row {} sweeps {key} over {}", row.id, values.join(", ")));
            }
        }
        if let Some(part) = part {
            match row.table.get("benchmarks") {
                Some(toml::Value::String(b)) if b.split(',').any(|x| x.trim() == part) => {}
                Some(toml::Value::String(b)) => return Some(format!("part '{part}': row {} runs {b}", row.id)),
                _ => {
                    return Some(format!(
                        "part '{part}': row {} declares no parts this test knows (kv's benchmarks); teach it the row's kind",
                        row.id
                    ))
                }
            }
        }
        None
    }

    #[test]
    fn every_claim_is_in_the_studies_table() {
        let in_docs = ids_in_docs(STUDIES);
        let mut in_suites = Vec::new();
        let mut errors = Vec::new();
        for suite in SUITES {
            let path = suite.path();
            let raw: toml::Table = toml::from_str(suite.text).unwrap();
            let tables = raw.get("claim").and_then(toml::Value::as_array).cloned().unwrap_or_default();
            for (i, t) in tables.iter().enumerate() {
                if t.get("id").and_then(toml::Value::as_str).is_none_or(str::is_empty) {
                    errors.push(format!("{path}: [[claim]] #{} has no id", i + 1));
                }
            }
            let job = parse(suite.text, &path).unwrap();
            let rows = rows(&job, Scale::Full, &path).unwrap();
            for claim in claims(&job, &rows, &path).unwrap() {
                let at = format!("{path}: claim {}", claim.id);
                if !in_docs.contains(&claim.id) {
                    errors.push(format!("{at} is not in docs/studies.md's Comparative statements"));
                }
                let Some(row) = claim.row.as_deref().and_then(|id| rows.iter().find(|r| r.id == id)) else {
                    errors.push(format!("{at} names no row of the suite"));
                    continue;
                };
                if let Some(e) = scope_error(row, claim.point.as_deref(), claim.part.as_deref()) {
                    errors.push(format!("{at}: {e}"));
                }
                if let Some(from) = &claim.from {
                    let base = from.row.as_deref().map_or(Some(row), |id| rows.iter().find(|r| r.id == id));
                    match base {
                        Some(base) => {
                            if let Some(e) = scope_error(base, from.point.as_deref(), from.part.as_deref()) {
                                errors.push(format!("{at}: from: {e}"));
                            }
                        }
                        None => errors.push(format!("{at}: from names no row of the suite")),
                    }
                }
                in_suites.push(claim.id);
            }
        }
        for id in &in_docs {
            if !in_suites.contains(id) {
                errors.push(format!("docs/studies.md names claim {id}, which no suite has"));
            }
        }
        assert!(errors.is_empty(), "{}", errors.join("\n"));
        assert!(in_suites.len() > 18, "{} claims", in_suites.len());
    }

    #[test]
    fn the_docs_table_is_read_as_written() {
        let doc = "# x\n\n## Comparative statements\n\n| statement | claim |\n|---|---|\n| a | `one`, `two` (note) |\n| b | not encoded: `x` is qualitative |\n\n## Next\n\n| c | `three` |\n";
        assert_eq!(ids_in_docs(doc), ["one", "two"]);
    }
}
