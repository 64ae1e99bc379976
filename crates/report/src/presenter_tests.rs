//! The report crate knows no workload kind by name: kinds present themselves through the
//! presenters registered with them ([`crate::set_presenters`]). These tests register the
//! kinds the other unit tests use, and fail when a source file of the crate dispatches on a
//! kind's name again.

use crate::{Presenter, VerdictSection};

/// The kinds the unit tests present: `posix` as a verdict kind, in the words its registry
/// line gives it (crates/workload's registry), so that the tests of the posix tables read as
/// the reports of a real run.
pub(crate) fn presenters() -> Vec<(&'static str, Presenter)> {
    static POSIX: VerdictSection = VerdictSection {
        title: "POSIX compliance",
        unsupported_examples: "no ACLs, no immutable attribute",
        security: "the access-control cases of every family",
    };
    vec![
        ("posix", Presenter { text: None, verdicts: Some(&POSIX) }),
        ("headline", Presenter { text: Some(headline_block), verdicts: None }),
    ]
}

/// The text block of the tests' `headline` kind: one line, a bold one.
fn headline_block(out: &mut String, _entry: &crate::ResultEntry, _m: &fsarena_core::Measurement) {
    out.push_str("  a plain line\n");
    fsarena_core::run::bold_line(out, "  a headline");
}

#[test]
fn a_kinds_text_block_follows_its_results_lines_bold_only_in_colour() {
    use crate::Exporter;
    let entry = crate::ResultEntry {
        target_label: "tmpfs".into(),
        workload_kind: "headline".into(),
        measurements: vec![fsarena_core::Measurement { complete: true, ..Default::default() }],
        ..Default::default()
    };
    let run = crate::RunReport { results: vec![entry], ..Default::default() };
    let text = |color| String::from_utf8(crate::Human { color }.export(std::slice::from_ref(&run)).unwrap()).unwrap();
    assert_eq!(text(false), "tmpfs · headline\n  a plain line\n  a headline\n");
    assert_eq!(text(true), "tmpfs · headline\n  a plain line\n\x1b[1m  a headline\x1b[0m\n");
}

/// Every workload kind's name today, which the crate's code must not spell.
const KIND_NAMES: &[&str] = &[
    "io",
    "meta",
    "tree",
    "dd",
    "filebench",
    "personality",
    "postmark",
    "dbench",
    "exec",
    "kv",
    "posix",
    "pgbench",
    "sysbench",
    "http",
    "crash",
    "verify",
    "sqlite",
];

/// The lines of `source` (code before its test module, comments left out) that dispatch on a
/// workload kind's name: a kind's name as a string literal (a comparison, a match arm, a
/// constant), or anything called `kind` compared with a string literal.
fn kind_dispatch(source: &str) -> Vec<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or_default();
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or_default();
        let names_a_kind = KIND_NAMES.iter().any(|k| line.contains(&format!("\"{k}\"")));
        let compares = ["== \"", "!= \"", "\" ==", "\" !="].iter().any(|op| line.contains(op));
        if names_a_kind || (line.contains("kind") && compares) {
            found.push(format!("{}: {}", n + 1, line.trim()));
        }
    }
    found
}

#[test]
fn the_check_finds_a_kind_dispatch() {
    assert_eq!(
        kind_dispatch("        if entry.workload_kind == \"io\" {\n"),
        ["1: if entry.workload_kind == \"io\" {"]
    );
    assert_eq!(kind_dispatch("    g.kind != KIND && g.kind == \"posix\"\n").len(), 1);
    assert_eq!(kind_dispatch("const KIND: &str = \"posix\";\n").len(), 1);
    assert_eq!(kind_dispatch("if matches!(kind.as_str(), \"meta\" | \"tree\") {}\n").len(), 1);
    assert_eq!(kind_dispatch("if g.workload_kind != \"my-new-kind\" {\n").len(), 1);
    assert!(kind_dispatch("let kinds = verdict_kinds(); // \"posix\"\n").is_empty());
    assert!(kind_dispatch("let (metric, kind) = match name.strip_suffix(\"_slope\") {\n").is_empty());
    assert!(kind_dispatch("x\n#[cfg(test)]\nmod tests { const K: &str = \"posix\"; }\n").is_empty());
}

#[test]
fn no_source_of_the_report_crate_dispatches_on_a_kind_name() {
    fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    let mut found = Vec::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        // Test files build runs of real kinds.
        if name.contains("tests") {
            continue;
        }
        let source = std::fs::read_to_string(&file).unwrap();
        found.extend(kind_dispatch(&source).into_iter().map(|l| format!("{name}:{l}")));
    }
    assert!(found.is_empty(), "the report crate dispatches on workload kind names: {found:#?}");
}
