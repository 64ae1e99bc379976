//! The commands that read the store: results, compare, report; and targets and cleanup.

use crate::args::{CompareArgs, DbArg, ReportArgs, ResultsCommand, EXPORT_FORMATS, SHOW_FORMATS, TABLE_FORMATS};
use crate::failure::Failure;
use crate::output::{print, say};
use fsarena_core::run::RunReport;
use fsarena_core::{printable, InputError};
use fsarena_report::{compare_runs, compare_targets, AbVerdict, OutputFormat};
use fsarena_store::Store;
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

/// `name` as one of the formats `accepted` by `flag`, or bad input naming them.
fn format(name: &str, accepted: &[OutputFormat], flag: &str) -> Result<OutputFormat, Failure> {
    OutputFormat::parse(name, accepted).map_err(|e| InputError::new(e.to_string()).at(flag).into())
}

/// `report` in `format`, or the reason it could not be produced.
fn export(format: OutputFormat, runs: &[RunReport]) -> Result<Vec<u8>, Failure> {
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
    format.exporter(terminal).export(runs).map_err(|e| Failure::Run(e.into()))
}

/// `fsarena results ...`.
pub fn results(command: &ResultsCommand) -> Result<ExitCode, Failure> {
    match command {
        ResultsCommand::List { output_format, db } => {
            let json = format(output_format, TABLE_FORMATS, "--output-format")? == OutputFormat::Json;
            let store = open(db)?;
            let runs = store.list(None).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
            if json {
                let doc = serde_json::json!({ "runs": runs });
                print(&pretty(&doc)?)?;
            } else {
                print(list_text(&runs).as_bytes())?;
            }
        }
        ResultsCommand::Show { run, output_format, db } => {
            let format = format(output_format, SHOW_FORMATS, "--output-format")?;
            let report = load(&open(db)?, run)?;
            print(&export(format, std::slice::from_ref(&report))?)?;
        }
        ResultsCommand::Export { run, format: name, db } => {
            let format = format(name, EXPORT_FORMATS, "--format")?;
            let report = load(&open(db)?, run)?;
            print(&export(format, std::slice::from_ref(&report))?)?;
        }
        ResultsCommand::Rm { run, db } => {
            let mut store = open_for_writing(db)?;
            let id = store.resolve(run).map_err(|e| Failure::BadInput(InputError::new(e.to_string())))?;
            store.remove(&id).map_err(|e| Failure::Run(anyhow::anyhow!("{e}")))?;
            say!("fsarena: removed run {}", printable(&id));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `value` as pretty JSON with a final newline.
fn pretty(value: &serde_json::Value) -> Result<Vec<u8>, Failure> {
    let mut out = serde_json::to_vec_pretty(value).map_err(|e| Failure::Run(e.into()))?;
    out.push(b'\n');
    Ok(out)
}

/// The widest line `results list` prints: what it holds is summarized to fit.
const LIST_WIDTH: usize = 120;

/// `results list` for people: one line per run, at most [`LIST_WIDTH`] characters.
fn list_text(runs: &[fsarena_store::RunSummary]) -> String {
    let width = runs.iter().filter_map(|r| r.name.as_ref()).map(|n| n.chars().count()).max().unwrap_or(0).clamp(4, 16);
    let mut text = format!("{:<16}  {:<width$}  {:<23}  {:<10}  {}\n", "id", "name", "started", "status", "what ran");
    for r in runs {
        let mut tail = format!(" · {}", summarize_workloads(&r.workloads));
        if !r.tags.is_empty() {
            tail.push_str(&format!(" [{}]", r.tags.join(", ")));
        }
        let tail = printable(&tail).into_owned();
        let name = printable(r.name.as_deref().unwrap_or("-")).into_owned();
        let head = format!(
            "{:<16}  {:<width$}  {:<23}  {:<10}  ",
            printable(&r.id),
            cut(&name, width),
            fsarena_report::utc_time(r.started_unix_ms / 1000),
            if r.complete { "complete" } else { "incomplete" },
        );
        // The target labels give way first: the workloads and tags stay readable.
        let room = LIST_WIDTH.saturating_sub(head.chars().count() + tail.chars().count()).max(12);
        let line = format!("{head}{}{tail}", cut(&printable(&r.targets.join(", ")), room));
        text.push_str(&cut(&line, LIST_WIDTH));
        text.push('\n');
    }
    text
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Stored workload titles (`io:rw=read,numjobs=4`, one per sweep point) summarized per kind:
/// titles of one kind with the same keys are one workload's sweep points, so the CubeFS matrix
/// reads `1 io (16 points)` and three specs with their own keys `3 io`.
fn summarize_workloads(titles: &[String]) -> String {
    /// A workload of one kind: its sorted keys, and how many points (titles) it has.
    type Workload<'t> = (Vec<&'t str>, usize);
    let mut kinds: Vec<(&str, Vec<Workload<'_>>)> = Vec::new();
    for title in titles {
        let (kind, params) = title.split_once(':').unwrap_or((title, ""));
        let mut keys: Vec<&str> =
            params.split(',').filter(|p| !p.is_empty()).map(|p| p.split_once('=').map_or(p, |(k, _)| k)).collect();
        keys.sort_unstable();
        let k = match kinds.iter().position(|(name, _)| *name == kind) {
            Some(k) => k,
            None => {
                kinds.push((kind, Vec::new()));
                kinds.len() - 1
            }
        };
        match kinds[k].1.iter_mut().find(|(set, _)| *set == keys) {
            Some((_, points)) => *points += 1,
            None => kinds[k].1.push((keys, 1)),
        }
    }
    let words: Vec<String> = kinds
        .iter()
        .map(|(kind, workloads)| {
            let points: usize = workloads.iter().map(|(_, p)| p).sum();
            if points > workloads.len() {
                format!("{} {kind} ({points} points)", workloads.len())
            } else {
                format!("{} {kind}", workloads.len())
            }
        })
        .collect();
    words.join(", ")
}

/// `fsarena compare A B` or `fsarena compare RUN --baseline LABEL`.
pub fn compare(args: &CompareArgs) -> Result<ExitCode, Failure> {
    let json = format(&args.output_format, TABLE_FORMATS, "--output-format")? == OutputFormat::Json;
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
    let comparison = match (&args.run_b, &args.baseline) {
        (Some(b), None) => {
            // `last` and its id, or two prefixes of one id, are one run: comparing it with
            // itself would only ever say "n.s.".
            let id_b = resolve(b)?;
            if id_a == id_b {
                return Err(InputError::new(format!(
                    "'{}' and '{b}' are the same run {id_a}: give two different runs, or one run and --baseline LABEL",
                    args.run_a
                ))
                .into());
            }
            compare_runs(&load(&store, &id_a)?, &load(&store, &id_b)?)
        }
        (None, Some(label)) => {
            let run = load(&store, &id_a)?;
            compare_targets(&run, label).ok_or_else(|| {
                let mut labels: Vec<&str> = Vec::new();
                for e in &run.results {
                    if !labels.contains(&e.target_label.as_str()) {
                        labels.push(&e.target_label);
                    }
                }
                InputError::new(format!(
                    "--baseline '{label}' is not a target of run {}: its targets are {}",
                    run.id,
                    labels.join(", ")
                ))
            })?
        }
        _ => {
            return Err(InputError::new(
                "compare needs two runs (fsarena compare RUN_A RUN_B) or one run and --baseline LABEL",
            )
            .into())
        }
    };
    if comparison.rows.is_empty() && comparison.verdicts.is_empty() {
        return Err(InputError::new(
            "the runs share no result to compare (same target label, workload and part needed)",
        )
        .into());
    }
    if json {
        let mut value = serde_json::json!({
            "a": comparison.a,
            "b": comparison.b,
            "comparisons": comparison.rows,
            "only_in_a": comparison.only_in_a,
            "only_in_b": comparison.only_in_b,
        });
        // Each verdict kind's diffs under its name (`"posix": [...]`), empty when it has none.
        if let Some(object) = value.as_object_mut() {
            for kind in verdict_kinds() {
                let diffs: Vec<&fsarena_report::VerdictDiff> =
                    comparison.verdicts.iter().filter(|d| d.kind == kind).collect();
                object.insert(kind.to_string(), serde_json::json!(diffs));
            }
        }
        print(&pretty(&value)?)?;
    } else {
        let mut text = String::new();
        if args.baseline.is_none() {
            // Two runs: say which is which, by name where they have one.
            text.push_str(&format!("A = {}, B = {}\n", printable(&comparison.a), printable(&comparison.b)));
        } else if !comparison.verdicts.is_empty() {
            // The verdict tables' A and B columns.
            text.push_str(&format!("A = {} (the baseline), B = the target of each row\n", printable(&comparison.a)));
        }
        if !comparison.rows.is_empty() {
            text.push_str(&fsarena_report::ab_table(&comparison.rows).text());
            text.push_str(&format!("{}\n", fsarena_report::AB_NOTE));
        }
        // Compliance results: pass counts and the cases that changed, no significance test.
        text.push_str(&fsarena_report::verdict_diff_text(&comparison.verdicts, args.baseline.as_deref()));
        print(text.as_bytes())?;
    }
    for (side, names) in [(&comparison.a, &comparison.only_in_a), (&comparison.b, &comparison.only_in_b)] {
        for name in names {
            say!("fsarena: only in {}: {} (not compared)", printable(side), printable(name));
        }
    }
    if comparison.rows.iter().any(|r| r.verdict == AbVerdict::NotTested) {
        say!(
            "fsarena: note: a difference cannot be told where a side has fewer than 3 measured repetitions; \
             store runs with --repeat 3 or more"
        );
    }
    let regressed = args.fail_on_regression.and_then(|pct| {
        comparison.rows.iter().find(|r| r.verdict == AbVerdict::Worse && r.change_percent.abs() > pct).map(|r| (pct, r))
    });
    // A case that passed and now fails is a regression whatever the threshold.
    let mut cases_regressed = false;
    for kind in verdict_kinds() {
        let newly_failing: usize =
            comparison.verdicts.iter().filter(|d| d.kind == kind).map(|d| d.newly_failing.len()).sum();
        if args.fail_on_regression.is_some() && newly_failing > 0 {
            say!("fsarena: regression: {newly_failing} {kind} case(s) newly failing");
            cases_regressed = true;
        }
    }
    if let Some((pct, r)) = regressed {
        say!(
            "fsarena: regression: {} {} on {} changed {:+.1}% (p={:.3}), beyond --fail-on-regression {pct}%",
            printable(&r.result),
            printable(&r.metric),
            printable(&r.target),
            r.change_percent,
            r.p_value.unwrap_or(f64::NAN)
        );
        return Ok(ExitCode::from(1));
    }
    Ok(if cases_regressed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The kinds whose results are verdicts (`posix`), compared case by case.
fn verdict_kinds() -> impl Iterator<Item = &'static str> {
    fsarena_kinds::WORKLOAD_KINDS.iter().filter(|k| k.present.verdicts.is_some()).map(|k| k.name)
}

/// `fsarena report RUN... -o FILE`.
pub fn report(args: &ReportArgs) -> Result<ExitCode, Failure> {
    let out = &args.output;
    crate::report_file::check(out, &crate::report_file::ReportFile::ALL)?;
    let store = open(&args.db)?;
    let runs = args.runs.iter().map(|r| load(&store, r)).collect::<Result<Vec<_>, _>>()?;
    crate::report_file::write(&runs, out).map_err(Failure::Run)?;
    say!("fsarena: wrote {}", printable(&out.display().to_string()));
    Ok(ExitCode::SUCCESS)
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
        say!("fsarena: nothing to clean up in {shown}");
    }
    for line in &report.done {
        say!("fsarena: {}", printable(line));
    }
    for warning in &report.warnings {
        say!("fsarena: warning: {}", printable(warning));
    }
    match report.error {
        Some(e) => Err(Failure::Run(anyhow::anyhow!("cleanup of {shown} is not finished: {e}"))),
        None => Ok(ExitCode::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_are_summarized_by_kind_and_points() {
        let mut titles: Vec<String> = Vec::new();
        for rw in ["read", "write", "randread", "randwrite"] {
            for nj in [1, 4, 16, 64] {
                titles.push(format!("io:rw={rw},bs=4k,numjobs={nj}"));
            }
        }
        titles.push("io:rw=read".into());
        titles.push("io:bs=1m,direct=1".into());
        titles.push("meta:n=100".into());
        assert_eq!(summarize_workloads(&titles), "3 io (18 points), 1 meta");
        assert_eq!(summarize_workloads(&["tree".into()]), "1 tree");
    }

    #[test]
    fn list_lines_fit_in_120_characters() {
        let titles: Vec<String> = (0..40).map(|i| format!("io:rw=randread,bs=4k,size=1g,numjobs={i},k{i}=v")).collect();
        let run = fsarena_store::RunSummary {
            id: "1700000000-12345".into(),
            started_unix_ms: 1_700_000_000_000,
            finished_unix_ms: None,
            complete: true,
            targets: (0..20).map(|i| format!("ext4:size=1g,mkfs='-O ^has_journal',label=t{i}")).collect(),
            workloads: titles,
            results: 40,
            name: Some("a-very-long-run-name-indeed".into()),
            tags: vec!["smoke".into()],
        };
        let text = list_text(&[run]);
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().all(|l| l.chars().count() <= LIST_WIDTH), "{text}");
        assert!(text.lines().nth(1).is_some_and(|l| l.contains("… · 40 io [smoke]")), "{text}");
    }
}
