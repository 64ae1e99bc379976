//! The posix results in the HTML and Markdown reports: the family table with the targets
//! side by side, each target's failures and unsupported cases, and the posix part of an A/B
//! section; built from the same [`PosixTable`] and [`PosixDiff`] as the terminal's
//! ([`crate::posix_text`]), escaped as each markup says.

use crate::posix_text::{CaseChange, PosixDiff, PosixTable};
use crate::RunReport;
use std::fmt::Write as _;

/// The posix section of the HTML report: the same table, then per target its failures
/// (case, expected, actual) and its unsupported cases by reason; empty without posix results.
pub(crate) fn posix_html(runs: &[RunReport]) -> String {
    use crate::escape::html;
    let Some(table) = PosixTable::new(runs) else { return String::new() };
    let mut out =
        String::from("<section id=\"posix\"><h2>POSIX compliance<span class=\"badge kind\">posix</span></h2>\n");
    out.push_str("<div class=\"table-wrap\"><table class=\"compare posix\">\n<thead><tr><th>family</th>");
    for c in &table.columns {
        let _ = write!(out, "<th class=\"num\">{}</th>", html(&c.label));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in table.rows() {
        let _ = write!(out, "<tr><td class=\"metric\">{}</td>", html(&row.label));
        for cell in &row.cells {
            match cell {
                None => out.push_str("<td class=\"num\">–</td>"),
                Some(t) => {
                    let class = if t.failed > 0 { "num worst" } else { "num" };
                    let _ = write!(out, "<td class=\"{class}\">{}</td>", html(&t.text()));
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n<p class=\"note\">passed/all: \"all\" counts the cases the target could express; the unsupported ones (the filesystem cannot express them: no ACLs, no immutable attribute) are counted apart. security: the access-control cases of every family.</p>\n");
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

/// The posix section of the Markdown report, as [`posix_html`].
pub(crate) fn posix_markdown(runs: &[RunReport]) -> String {
    use crate::escape::markdown as md;
    let Some(table) = PosixTable::new(runs) else { return String::new() };
    let mut out = String::from("\n## POSIX compliance\n\n| family |");
    for c in &table.columns {
        let _ = write!(out, " {} |", md(&c.label));
    }
    out.push_str("\n|:---|");
    out.push_str(&"---:|".repeat(table.columns.len()));
    out.push('\n');
    for row in table.rows() {
        let _ = write!(out, "| {} |", md(&row.label));
        for cell in &row.cells {
            match cell {
                None => out.push_str(" – |"),
                Some(t) if t.failed > 0 => {
                    let _ = write!(out, " _{}_ |", md(&t.text()));
                }
                Some(t) => {
                    let _ = write!(out, " {} |", md(&t.text()));
                }
            }
        }
        out.push('\n');
    }
    out.push_str("\npassed/all: \"all\" counts the cases the target could express; unsupported ones are counted apart. security: the access-control cases of every family.\n");
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

/// The posix part of an A/B section in HTML: pass counts and the changed cases.
pub(crate) fn diff_html(diffs: &[PosixDiff]) -> String {
    use crate::escape::html;
    let mut out = String::new();
    if diffs.is_empty() {
        return out;
    }
    out.push_str("<h3>POSIX compliance</h3>\n<div class=\"table-wrap\"><table class=\"ab posix\">\n<thead><tr><th>target</th><th>family</th><th class=\"num\">A</th><th class=\"num\">B</th><th>newly failing</th><th>newly passing</th></tr></thead><tbody>\n");
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
    out
}

/// The posix part of an A/B section in Markdown.
pub(crate) fn diff_markdown(diffs: &[PosixDiff]) -> String {
    use crate::escape::markdown as md;
    let mut out = String::new();
    if diffs.is_empty() {
        return out;
    }
    out.push_str(
        "\n| target | posix family | A | B | newly failing | newly passing |\n|:---|:---|---:|---:|:---|:---|\n",
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
    out
}
