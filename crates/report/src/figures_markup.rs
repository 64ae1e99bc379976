//! The study's figures in the HTML and Markdown reports: each with its caption, its chart(s)
//! or table(s) as declared, then the claims about its rows and the Findings lines of its rows.

use crate::charts::Chart;
use crate::escape;
use crate::experiment::Experiment;
use crate::figures::{Drawn, Facet};
use crate::findings::Findings;
use std::fmt::Write as _;

/// A table's header and lines in HTML (numbers right-aligned).
fn html_table(out: &mut String, (header, lines): &(Vec<String>, Vec<Vec<String>>)) {
    out.push_str("<div class=\"table-wrap\"><table class=\"figure-table\"><thead><tr>");
    for (i, h) in header.iter().enumerate() {
        let class = if i == 0 { "" } else { " class=\"num\"" };
        let _ = write!(out, "<th{class}>{}</th>", escape::html(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for line in lines {
        out.push_str("<tr>");
        for (i, v) in line.iter().enumerate() {
            let class = if i == 0 { "" } else { " class=\"num\"" };
            let _ = write!(out, "<td{class}>{}</td>", escape::html(v));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// One facet in HTML: its chart, else its table, with the facet's title as a caption.
fn html_facet(out: &mut String, drawn: &Drawn<'_>, facet: &Facet, chart: Option<&Chart>) {
    match chart {
        Some(chart) => {
            let _ = writeln!(out, "<figure>{}</figure>", chart.render());
        }
        None => {
            if let Some(title) = &facet.title {
                let _ = writeln!(out, "<h3>{}</h3>", escape::html(title));
            }
            html_table(out, &drawn.table(facet));
        }
    }
}

/// Every figure of the run, in the study's order, each its own section (`figure-ID`).
pub(crate) fn html(out: &mut String, drawn: &[Drawn<'_>], findings: &Findings, experiment: &Experiment) {
    for d in drawn {
        let f = d.figure;
        let _ = writeln!(
            out,
            "<section id=\"figure-{}\" class=\"study-figure\"><h2 class=\"caption\">{}</h2><p class=\"note\">{}</p>",
            escape::html(&f.id),
            escape::html(&f.caption),
            escape::html(&d.note())
        );
        if d.facets.is_empty() {
            out.push_str("<p>No result of its rows in this run.</p>\n");
        }
        let charts: Vec<Option<Chart>> = d.facets.iter().map(|facet| d.chart(facet)).collect();
        if charts.iter().any(Option::is_some) {
            out.push_str("<div class=\"charts figure-charts\">\n");
        }
        for (facet, chart) in d.facets.iter().zip(&charts).filter(|(_, c)| c.is_some()) {
            html_facet(out, d, facet, chart.as_ref());
        }
        if charts.iter().any(Option::is_some) {
            out.push_str("</div>\n");
        }
        let tables: Vec<&Facet> = d.facets.iter().zip(&charts).filter(|(_, c)| c.is_none()).map(|(f, _)| f).collect();
        if !tables.is_empty() && f.kind != crate::experiment::FigureKind::Table {
            out.push_str("<p class=\"note\">One point per series at this scale: shown as a table.</p>\n");
        }
        for facet in tables {
            html_facet(out, d, facet, None);
        }
        let claims = d.claims(findings);
        if !claims.is_empty() {
            out.push_str("<h3>Claims</h3><ul class=\"claims\">\n");
            for c in claims {
                // Each verdict its own look: a contradiction is not a "not tested here".
                let class = match c.verdict {
                    crate::findings::ClaimVerdict::Confirmed => "badge ok",
                    crate::findings::ClaimVerdict::Contradicted => "badge worse",
                    crate::findings::ClaimVerdict::NotSignificant => "badge bad",
                    crate::findings::ClaimVerdict::Inconclusive | crate::findings::ClaimVerdict::NotTested => {
                        "badge muted"
                    }
                };
                let _ = writeln!(
                    out,
                    "<li><span class=\"{class}\">{}</span> {}<br><small>{}</small></li>",
                    c.verdict.word(),
                    escape::html(&c.claim.text),
                    c.figures.iter().map(|l| escape::html(l)).collect::<Vec<_>>().join("<br>")
                );
            }
            out.push_str("</ul>\n");
        }
        let lines = d.findings(findings, experiment);
        if !lines.is_empty() {
            out.push_str("<h3>Findings</h3><ul class=\"findings\">\n");
            for m in lines {
                let head = if m.result.is_empty() { m.metric.clone() } else { format!("{} · {}", m.result, m.metric) };
                let _ = writeln!(out, "<li><code>{}</code>: {}</li>", escape::html(&head), escape::html(&m.text()));
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</section>\n");
    }
}

/// Every figure of the run in Markdown: a table per facet, and (when `files`) its chart as
/// an image file beside the report.
pub(crate) fn markdown(
    out: &mut String,
    mut files: Option<&mut Vec<(String, String)>>,
    drawn: &[Drawn<'_>],
    findings: &Findings,
) {
    if drawn.is_empty() {
        return;
    }
    out.push_str("\n## The study's figures\n");
    for d in drawn {
        let _ = writeln!(out, "\n### {}\n\n{}.\n", escape::markdown(&d.figure.caption), escape::markdown(&d.note()));
        for facet in &d.facets {
            if let (Some(chart), Some(files)) = (d.chart(facet), files.as_deref_mut()) {
                let name = format!("figure-{}-{}.svg", d.figure.id, files.len() + 1);
                let _ = writeln!(out, "![{}]({name})\n", escape::markdown(chart.title()));
                files.push((name, chart.render()));
            }
            if let Some(title) = &facet.title {
                let _ = writeln!(out, "{}:\n", escape::markdown(title));
            }
            let (header, lines) = d.table(facet);
            let _ = writeln!(out, "| {} |", header.iter().map(|h| escape::markdown(h)).collect::<Vec<_>>().join(" | "));
            let _ = writeln!(out, "|---|{}", "---:|".repeat(header.len().saturating_sub(1)));
            for line in lines {
                let _ =
                    writeln!(out, "| {} |", line.iter().map(|v| escape::markdown(v)).collect::<Vec<_>>().join(" | "));
            }
            out.push('\n');
        }
        for c in d.claims(findings) {
            let _ = writeln!(out, "- **{}**: {}", c.verdict.word(), escape::markdown(&c.claim.text));
        }
    }
}
