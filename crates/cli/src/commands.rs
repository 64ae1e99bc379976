//! The commands that read the store: results, compare, report; and targets and cleanup.

use crate::args::{CompareArgs, DbArg, ReportArgs, ResultsCommand};
use crate::plan::Failure;
use fsarena_core::run::{ResultEntry, RunReport};
use fsarena_core::{printable, Better, InputError};
use fsarena_report::Format;
use fsarena_stats::{welch, Verdict};
use fsarena_store::Store;
use std::io::Write;
use std::process::ExitCode;

/// Opens the store for reading only: no lock file or anything else is created beside it,
/// and read-only media work. A missing, foreign, newer or damaged database is bad input.
fn open(db: &DbArg) -> Result<Store, Failure> {
    Store::open_read_only(&db.path()).map_err(|e| InputError::new(e.to_string()).at("--db").into())
}

/// Opens an existing store for writing (`results rm`): a missing one is not created.
fn open_for_writing(db: &DbArg) -> Result<Store, Failure> {
    let path = db.path();
    if !path.exists() {
        return Err(InputError::new(fsarena_store::StoreError::Missing(path).to_string()).at("--db").into());
    }
    Store::open(&path).map_err(|e| InputError::new(e.to_string()).at("--db").into())
}

fn load(store: &Store, spec: &str) -> Result<RunReport, Failure> {
    let id = store.resolve(spec).map_err(|e| Failure::BadInput(InputError::new(e.to_string())))?;
    store.load(&id).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))
}

/// Writes `bytes` to stdout. A closed pipe (`| head`) is not an error; any other failure
/// (`> /dev/full`) is, so that output that was lost never exits 0.
pub fn print(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Run(anyhow::anyhow!("cannot write the output to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// `fsarena results ...`.
pub fn results(command: &ResultsCommand) -> Result<ExitCode, Failure> {
    match command {
        ResultsCommand::List { output_format, db } => {
            let json = match output_format.as_str() {
                "human" => false,
                "json" => true,
                other => {
                    return Err(InputError::new(format!(
                        "unknown output format '{other}': accepted formats are human, json"
                    ))
                    .into())
                }
            };
            let store = open(db)?;
            let runs = store.list(None).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
            if json {
                let doc = serde_json::json!({ "runs": runs });
                print(format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default()).as_bytes())?;
            } else {
                let width = runs.iter().filter_map(|r| r.name.as_ref()).map(String::len).max().unwrap_or(0).max(4);
                let mut text = format!(
                    "{:<16}  {:<width$}  {:<23}  {:<10}  {}\n",
                    "id", "name", "started", "status", "targets · workloads"
                );
                for r in &runs {
                    let mut what = format!("{} · {}", r.targets.join(", "), r.workloads.join(", "));
                    if !r.tags.is_empty() {
                        what.push_str(&format!(" [{}]", r.tags.join(", ")));
                    }
                    text.push_str(&format!(
                        "{:<16}  {:<width$}  {:<23}  {:<10}  {}\n",
                        printable(&r.id),
                        printable(r.name.as_deref().unwrap_or("-")),
                        fsarena_report::utc_time(r.started_unix_ms / 1000),
                        if r.complete { "complete" } else { "incomplete" },
                        printable(&what),
                    ));
                }
                print(text.as_bytes())?;
            }
        }
        ResultsCommand::Show { run, output_format, db } => {
            let format = Format::parse(output_format).ok_or_else(|| {
                InputError::new(format!(
                    "unknown output format '{output_format}': accepted formats are {}",
                    Format::NAMES
                ))
            })?;
            let report = load(&open(db)?, run)?;
            let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
            print(&format.exporter(terminal).serialize(&report))?;
        }
        ResultsCommand::Export { run, format, db } => {
            let bytes = match format.as_str() {
                "json" => Format::Json.exporter(false).serialize(&load(&open(db)?, run)?),
                "csv" => Format::Csv.exporter(false).serialize(&load(&open(db)?, run)?),
                "md" => fsarena_report::markdown_report(&[load(&open(db)?, run)?]).0.into_bytes(),
                other => {
                    return Err(InputError::new(format!(
                        "unknown export format '{other}': accepted formats are json, csv, md"
                    ))
                    .into())
                }
            };
            print(&bytes)?;
        }
        ResultsCommand::Rm { run, db } => {
            let mut store = open_for_writing(db)?;
            let id = store.resolve(run).map_err(|e| Failure::BadInput(InputError::new(e.to_string())))?;
            store.remove(&id).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
            eprintln!("fsarena: removed run {}", printable(&id));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One compared metric.
#[derive(Debug, serde::Serialize)]
struct Row {
    workload: String,
    target: String,
    metric: String,
    unit: String,
    a: String,
    b: String,
    mean_a: f64,
    mean_b: f64,
    change_percent: f64,
    /// `None` (JSON null) where significance cannot be tested.
    ci95_diff: Option<(f64, f64)>,
    /// `None` (JSON null) where significance cannot be tested.
    p_value: Option<f64>,
    verdict: &'static str,
}

/// The verdict where a side has fewer than two measured repetitions: no variance, no test.
const UNTESTED: &str = "not tested: fewer than 2 repetitions";

/// `fsarena compare A B` or `fsarena compare RUN --baseline LABEL`.
pub fn compare(args: &CompareArgs) -> Result<ExitCode, Failure> {
    let json = match args.output_format.as_str() {
        "human" => false,
        "json" => true,
        other => {
            return Err(
                InputError::new(format!("unknown output format '{other}': accepted formats are human, json")).into()
            )
        }
    };
    if let Some(pct) = args.fail_on_regression {
        if !(pct.is_finite() && pct >= 0.0) {
            return Err(
                InputError::new(format!("--fail-on-regression {pct}: expected a percentage of 0 or more")).into()
            );
        }
    }
    let store = open(&args.db)?;
    let resolve = |spec: &str| store.resolve(spec).map_err(|e| Failure::BadInput(InputError::new(e.to_string())));
    let id_a = resolve(&args.run_a)?;
    if let Some(b) = &args.run_b {
        // `last` and its id, or two prefixes of one id, are one run: comparing it with itself
        // would only ever say "no significant difference".
        let id_b = resolve(b)?;
        if id_a == id_b {
            return Err(InputError::new(format!(
                "'{}' and '{b}' are the same run {id_a}: give two different runs, or one run and --baseline LABEL",
                args.run_a
            ))
            .into());
        }
    }
    let run_a = load(&store, &id_a)?;
    // (label of side A, label of side B, entry A, entry B)
    let mut pairs = Vec::new();
    // Results of one run that the other lacks: named, never silently skipped.
    let mut only_in: Vec<(String, String)> = Vec::new();
    match (&args.run_b, &args.baseline) {
        (Some(b), None) => {
            let run_b = load(&store, b)?;
            let same = |x: &ResultEntry, y: &ResultEntry| {
                x.target_label == y.target_label && x.workload_title() == y.workload_title()
            };
            // A side is shown by its name (`--name before`) where it has one.
            let side = |run: &RunReport| run.name.clone().unwrap_or_else(|| run.id.clone());
            for eb in &run_b.results {
                match run_a.results.iter().find(|ea| same(ea, eb)) {
                    Some(ea) => pairs.push((side(&run_a), side(&run_b), ea.clone(), eb.clone())),
                    None => only_in.push((side(&run_b), eb.title())),
                }
            }
            for ea in run_a.results.iter().filter(|ea| !run_b.results.iter().any(|eb| same(ea, eb))) {
                only_in.push((side(&run_a), ea.title()));
            }
        }
        (None, Some(label)) => {
            if !run_a.results.iter().any(|e| &e.target_label == label) {
                let labels: Vec<&str> = run_a.results.iter().map(|e| e.target_label.as_str()).collect();
                return Err(InputError::new(format!(
                    "--baseline '{label}' is not a target of run {}: its targets are {}",
                    run_a.id,
                    labels.join(", ")
                ))
                .into());
            }
            for base in run_a.results.iter().filter(|e| &e.target_label == label) {
                for other in run_a
                    .results
                    .iter()
                    .filter(|e| &e.target_label != label && e.workload_title() == base.workload_title())
                {
                    pairs.push((base.target_label.clone(), other.target_label.clone(), base.clone(), other.clone()));
                }
            }
        }
        _ => {
            return Err(InputError::new(
                "compare needs two runs (fsarena compare RUN_A RUN_B) or one run and --baseline LABEL",
            )
            .into())
        }
    }
    let mut rows = Vec::new();
    let mut untested = false;
    for (label_a, label_b, ea, eb) in &pairs {
        let Some(first) = eb.measurements.first() else { continue };
        for metric in &first.metrics {
            let values = |e: &fsarena_core::run::ResultEntry| -> Vec<f64> {
                e.measurements.iter().filter_map(|m| m.metric(&metric.name)).map(|m| m.value).collect()
            };
            let (va, vb) = (values(ea), values(eb));
            if va.is_empty() || vb.is_empty() {
                continue;
            }
            // One row per metric; the statistics where both sides have 2 or more repetitions.
            let row = |mean_a: f64, mean_b: f64, change_percent, ci95_diff, p_value, verdict| Row {
                workload: ea.workload_title(),
                target: if args.baseline.is_some() { label_b.clone() } else { eb.target_label.clone() },
                metric: metric.name.clone(),
                unit: metric.unit.clone(),
                a: label_a.clone(),
                b: label_b.clone(),
                mean_a,
                mean_b,
                change_percent,
                ci95_diff,
                p_value,
                verdict,
            };
            match welch(&va, &vb) {
                None => {
                    untested = true;
                    let (mean_a, mean_b) = (mean(&va), mean(&vb));
                    let change = if mean_a == 0.0 { f64::NAN } else { (mean_b - mean_a) / mean_a * 100.0 };
                    rows.push(row(mean_a, mean_b, change, None, None, UNTESTED));
                }
                Some(c) => {
                    let verdict = match fsarena_stats::verdict(&c, metric.better == Better::Higher, 0.05) {
                        Verdict::Better => "faster",
                        Verdict::Worse => "slower",
                        Verdict::NoSignificantDifference => "no significant difference",
                    };
                    let change = c.relative * 100.0;
                    rows.push(row(c.mean_a, c.mean_b, change, Some(c.ci95_diff), Some(c.p_value), verdict));
                }
            }
        }
    }
    if pairs.is_empty() {
        return Err(
            InputError::new("the runs share no target × workload to compare (same label and workload needed)").into()
        );
    }
    if json {
        print(
            format!(
                "{}\n",
                serde_json::to_string_pretty(&serde_json::json!({ "comparisons": rows })).unwrap_or_default()
            )
            .as_bytes(),
        )?;
    } else {
        let mut text = String::new();
        if let (Some(first), None) = (rows.first(), &args.baseline) {
            // Two runs: say which is which, by name where they have one.
            text.push_str(&format!("A = {}, B = {}\n", printable(&first.a), printable(&first.b)));
        }
        text.push_str(&render_rows(&rows));
        print(text.as_bytes())?;
    }
    for (run, title) in &only_in {
        eprintln!("fsarena: only in {}: {} (not compared)", printable(run), printable(title));
    }
    if untested {
        eprintln!(
            "fsarena: note: significance cannot be tested where a side has fewer than 2 measured repetitions; \
             store runs with --repeat 3 or more"
        );
    }
    let regressed = args
        .fail_on_regression
        .and_then(|pct| rows.iter().find(|r| r.verdict == "slower" && r.change_percent.abs() > pct).map(|r| (pct, r)));
    if let Some((pct, r)) = regressed {
        eprintln!(
            "fsarena: regression: {} {} on {} changed {:+.1}% (p={:.3}), beyond --fail-on-regression {pct}%",
            printable(&r.workload),
            printable(&r.metric),
            printable(&r.target),
            r.change_percent,
            r.p_value.unwrap_or(f64::NAN)
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The arithmetic mean of a non-empty list.
fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn render_rows(rows: &[Row]) -> String {
    use comfy_table::{presets, Table};
    let mut table = Table::new();
    table.load_preset(presets::ASCII_MARKDOWN).force_no_tty();
    table.set_header(["workload", "target", "metric", "A", "B", "change", "95% CI of B−A", "p", "verdict"]);
    for r in rows {
        // Labels and workload parameters are user text: shown inert in a terminal.
        table.add_row([
            printable(&r.workload).into_owned(),
            printable(&r.target).into_owned(),
            printable(&r.metric).into_owned(),
            fsarena_report::format_value(r.mean_a, &r.unit),
            fsarena_report::format_value(r.mean_b, &r.unit),
            format!("{:+.1}%", r.change_percent),
            r.ci95_diff.map_or_else(
                || "-".to_string(),
                |(lo, hi)| {
                    format!(
                        "[{}, {}]",
                        fsarena_report::format_value(lo, &r.unit),
                        fsarena_report::format_value(hi, &r.unit)
                    )
                },
            ),
            r.p_value.map_or_else(|| "-".to_string(), |p| format!("{p:.3}")),
            r.verdict.to_string(),
        ]);
    }
    format!("{table}\n")
}

/// `fsarena report RUN... -o FILE`.
pub fn report(args: &ReportArgs) -> Result<ExitCode, Failure> {
    let out = &args.output;
    let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext != "html" && ext != "md" {
        return Err(InputError::new(format!("-o {}: expected a file ending in .html or .md", out.display())).into());
    }
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !parent.is_dir() {
        return Err(InputError::new(format!(
            "-o {}: the directory {} does not exist",
            out.display(),
            parent.display()
        ))
        .into());
    }
    let store = open(&args.db)?;
    let runs = args.runs.iter().map(|r| load(&store, r)).collect::<Result<Vec<_>, _>>()?;
    write_report(&runs, out).map_err(Failure::Run)?;
    eprintln!("fsarena: wrote {}", printable(&out.display().to_string()));
    Ok(ExitCode::SUCCESS)
}

/// Writes an HTML report, or a Markdown one with its SVG charts beside it.
pub fn write_report(runs: &[RunReport], out: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context;
    if out.extension().is_some_and(|e| e == "md") {
        let (text, charts) = fsarena_report::markdown_report(runs);
        let dir = out.parent().unwrap_or(std::path::Path::new("."));
        for (name, svg) in charts {
            std::fs::write(dir.join(&name), svg)
                .with_context(|| format!("cannot write {}", dir.join(&name).display()))?;
        }
        std::fs::write(out, text).with_context(|| format!("cannot write {}", out.display()))
    } else {
        std::fs::write(out, fsarena_report::html_report(runs))
            .with_context(|| format!("cannot write {}", out.display()))
    }
}

/// `fsarena targets`: every kind, what it is, available here or not, and why not.
pub fn list_targets() -> Result<ExitCode, Failure> {
    let mut text = format!("{:<8}  {:<9}  {}\n", "kind", "available", "what it is, or why it is not available");
    for kind in &fsarena_target::TARGET_KINDS {
        let (yes, what) = match fsarena_target::requirements::check(&kind.needs.requirements()) {
            Ok(()) => ("yes", kind.summary.to_string()),
            Err(why) => ("no", why),
        };
        text.push_str(&format!("{:<8}  {yes:<9}  {what}\n", kind.name));
    }
    print(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// `fsarena cleanup`: undoes what killed runs recorded in `workdir`.
pub fn cleanup(workdir: &crate::args::WorkdirArg) -> Result<ExitCode, Failure> {
    use fsarena_core::printable;
    // An untrusted work directory is bad input (exit 2): nothing in it is read.
    let report = fsarena_target::cleanup(&workdir.path)?;
    let shown = printable(&report.workdir.to_string_lossy()).into_owned();
    if report.is_empty() {
        eprintln!("fsarena: nothing to clean up in {shown}");
    }
    for line in &report.done {
        eprintln!("fsarena: {}", printable(line));
    }
    for warning in &report.warnings {
        eprintln!("fsarena: warning: {}", printable(warning));
    }
    match report.error {
        Some(e) => Err(Failure::Run(anyhow::anyhow!("cleanup of {shown} is not finished: {e}"))),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `fsarena completions SHELL`: generated from the one flag table, like --help.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode, Failure> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut crate::args::Cli::command(), "fsarena", &mut out);
    print(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `fsarena man`: the man page, generated from the one flag table, like --help.
pub fn man() -> Result<ExitCode, Failure> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_mangen::Man::new(crate::args::Cli::command()).render(&mut out).map_err(|e| Failure::Run(e.into()))?;
    print(&out)?;
    Ok(ExitCode::SUCCESS)
}
