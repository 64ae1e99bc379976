//! The verdict kinds' results in the HTML and Markdown reports: per kind a section with the
//! family table (targets side by side), each target's failures and unsupported cases, and the
//! verdict part of an A/B section; built from the same [`VerdictTable`] and [`VerdictDiff`]
//! as the terminal's ([`crate::verdicts`]), escaped as each markup says.

use crate::verdicts::{by_kind, section, CaseChange, VerdictDiff, VerdictTable};
use crate::RunReport;
use std::fmt::Write as _;

/// The sections of the HTML report for the verdict kinds of `runs`: per kind its table, then
/// per target its failures (case, expected, actual) and its unsupported cases by reason; empty
/// without verdict results.
pub(crate) fn html(runs: &[RunReport]) -> String {
    crate::verdicts::tables(runs).iter().map(table_html).collect()
}

/// One kind's section of the HTML report.
fn table_html(table: &VerdictTable) -> String {
    use crate::escape::html;
    let (kind, words) = (html(table.kind), table.section);
    let mut out =
        format!("<section id=\"{kind}\"><h2>{}<span class=\"badge kind\">{kind}</span></h2>\n", html(words.title));
    out.push_str(&table.table().html(&format!("compare {kind}")));
    let _ = writeln!(
        out,
        "<p class=\"note\">passed/all: \"all\" counts the cases the target could express; the unsupported ones (the filesystem cannot express them: {}) are counted apart. security: {}.</p>",
        html(words.unsupported_examples),
        html(words.security)
    );
    for c in &table.columns {
        let failures = c.failures();
        if !failures.is_empty() {
            let _ = writeln!(
                out,
                "<h3>{}: {} failed</h3>\n<div class=\"table-wrap\"><table class=\"failures\"><thead><tr><th>case</th><th>expected</th><th>actual</th></tr></thead><tbody>",
                html(&c.label),
                failures.len()
            );
            for v in failures {
                let badge = if v.security { " <span class=\"badge bad\">security</span>" } else { "" };
                let _ = writeln!(
                    out,
                    "<tr><td><code>{}</code>{badge}</td><td>{}</td><td>{}</td></tr>",
                    html(&v.case),
                    html(&v.expected),
                    html(&v.actual)
                );
            }
            out.push_str("</tbody></table></div>\n");
        }
        let unsupported = c.unsupported();
        if !unsupported.is_empty() {
            let n: usize = unsupported.iter().map(|(_, cs)| cs.len()).sum();
            let _ = writeln!(out, "<h3>{}: {n} unsupported</h3><ul>", html(&c.label));
            for (why, cases) in unsupported {
                let names: Vec<String> = cases.iter().map(|c| format!("<code>{}</code>", html(c))).collect();
                let _ = writeln!(out, "<li>{}: {}</li>", html(why), names.join(", "));
            }
            out.push_str("</ul>\n");
        }
    }
    out.push_str("</section>\n");
    out
}

/// The sections of the Markdown report for the verdict kinds of `runs`, as [`html`].
pub(crate) fn markdown(runs: &[RunReport]) -> String {
    crate::verdicts::tables(runs).iter().map(table_markdown).collect()
}

/// One kind's section of the Markdown report.
fn table_markdown(table: &VerdictTable) -> String {
    use crate::escape::markdown as md;
    let mut out = format!("\n## {}\n\n", md(table.section.title));
    out.push_str(&table.table().markdown());
    let _ = writeln!(
        out,
        "\npassed/all: \"all\" counts the cases the target could express; unsupported ones are counted apart. security: {}.",
        md(table.section.security)
    );
    for c in &table.columns {
        let failures = c.failures();
        if !failures.is_empty() {
            let _ = writeln!(
                out,
                "\n### {}: {} failed\n\n| case | expected | actual |\n|:---|:---|:---|",
                md(&c.label),
                failures.len()
            );
            for v in failures {
                let security = if v.security { " (security)" } else { "" };
                let _ = writeln!(out, "| {}{security} | {} | {} |", md(&v.case), md(&v.expected), md(&v.actual));
            }
        }
        let unsupported = c.unsupported();
        if !unsupported.is_empty() {
            let n: usize = unsupported.iter().map(|(_, cs)| cs.len()).sum();
            let _ = writeln!(out, "\n### {}: {n} unsupported\n", md(&c.label));
            for (why, cases) in unsupported {
                let names: Vec<String> = cases.iter().map(|c| md(c)).collect();
                let _ = writeln!(out, "- {}: {}", md(why), names.join(", "));
            }
        }
    }
    out
}

/// The verdict part of an A/B section in HTML, per kind: pass counts and the changed cases.
pub(crate) fn diff_html(diffs: &[VerdictDiff]) -> String {
    use crate::escape::html;
    let mut out = String::new();
    for (kind, diffs) in by_kind(diffs) {
        let title = section(kind).map_or(kind, |s| s.title);
        let _ = writeln!(
            out,
            "<h3>{}</h3>\n<div class=\"table-wrap\"><table class=\"ab {}\">\n<thead><tr><th>target</th><th>family</th><th class=\"num\">A</th><th class=\"num\">B</th><th>newly failing</th><th>newly passing</th></tr></thead><tbody>",
            html(title),
            html(kind)
        );
        for d in diffs {
            let list = |l: &[CaseChange]| -> String {
                l.iter()
                    .map(|c| format!("<code>{}</code> (was {})", html(&c.case), c.a.name()))
                    .collect::<Vec<_>>()
                    .join("<br>")
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"worse\">{}</td><td class=\"better\">{}</td></tr>",
                html(&d.target),
                html(&d.family),
                html(&d.text_a()),
                html(&d.text_b()),
                list(&d.newly_failing),
                list(&d.newly_passing)
            );
        }
        out.push_str("</tbody></table></div>\n<p class=\"note\">Newly failing: passed or unsupported in A, fails in B; newly passing: failed in A, passes in B. Counted cases get no significance test: a case passes or it does not.</p>\n");
    }
    out
}

/// The verdict part of an A/B section in Markdown, per kind.
pub(crate) fn diff_markdown(diffs: &[VerdictDiff]) -> String {
    use crate::escape::markdown as md;
    let mut out = String::new();
    for (kind, diffs) in by_kind(diffs) {
        let _ = writeln!(
            out,
            "\n| target | {} family | A | B | newly failing | newly passing |\n|:---|:---|---:|---:|:---|:---|",
            md(kind)
        );
        for d in diffs {
            let list = |l: &[CaseChange]| -> String {
                let names: Vec<String> = l.iter().map(|c| format!("{} (was {})", md(&c.case), c.a.name())).collect();
                if names.is_empty() {
                    "–".into()
                } else {
                    names.join("<br>")
                }
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                md(&d.target),
                md(&d.family),
                md(&d.text_a()),
                md(&d.text_b()),
                list(&d.newly_failing),
                list(&d.newly_passing)
            );
        }
    }
    out
}
