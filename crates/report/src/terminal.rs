//! User text on its way to a terminal. Labels, workload parameters, job names, paths and
//! error messages come from specs, job files and the store; a terminal would obey the escape
//! sequences in them and a newline would forge a line. The human report is rendered from a
//! copy of the run whose every text is passed through [`fsarena_core::printable`] first, so no
//! field, today's or tomorrow's, is printed raw by forgetting one call. The other formats keep
//! the raw text, escaped as their own syntax says (JSON, CSV quoting, HTML entities).

use crate::RunReport;
use fsarena_core::printable;
use std::borrow::Cow;

/// `text` made inert in place.
fn inert(text: &mut String) {
    let escaped = match printable(text) {
        Cow::Owned(escaped) => Some(escaped),
        Cow::Borrowed(_) => None,
    };
    if let Some(escaped) = escaped {
        *text = escaped;
    }
}

fn inert_pairs(pairs: &mut [(String, String)]) {
    for (key, value) in pairs {
        inert(key);
        inert(value);
    }
}

/// A copy of `report` with every text made inert for a terminal.
pub(crate) fn printable_report(report: &RunReport) -> RunReport {
    let mut report = report.clone();
    inert(&mut report.id);
    inert(&mut report.plan);
    report.name.iter_mut().for_each(inert);
    report.tags.iter_mut().for_each(inert);
    report.failure.iter_mut().for_each(inert);
    inert_pairs(&mut report.environment);
    inert_pairs(&mut report.global_options);
    for entry in &mut report.results {
        inert(&mut entry.target_label);
        inert(&mut entry.target_kind);
        inert_pairs(&mut entry.target_options);
        inert_pairs(&mut entry.target_info);
        inert(&mut entry.workload_kind);
        inert_pairs(&mut entry.workload_params);
        for m in &mut entry.measurements {
            for metric in &mut m.metrics {
                inert(&mut metric.name);
                inert(&mut metric.unit);
            }
            for job in m.fio.iter_mut().flat_map(|d| &mut d.jobs) {
                inert(&mut job.name);
                inert_pairs(&mut job.options);
                if let Some(message) = &mut job.error_message {
                    inert(message);
                }
            }
        }
    }
    report
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::{html_report, Csv, Exporter, Human, Json, ResultEntry, RunReport};
    use fsarena_core::{Better, JobResult, Measurement};

    const HOSTILE: &str = "evil\x1b[2J\nfake line\u{202e}<b>";

    fn hostile_run() -> RunReport {
        let mut m = Measurement { complete: true, ..Default::default() };
        m.push("read_iops", "ops/s", Better::Higher, 1000.0);
        m.jobs_mut().push(JobResult {
            name: "job\x1b]0;title\x07".into(),
            error_message: Some("open /t/x\nfsarena: forged".into()),
            ..Default::default()
        });
        let entry = |label: &str| ResultEntry {
            target_label: label.into(),
            target_kind: "dir".into(),
            target_info: vec![("path".into(), "/mnt/\x1b[31mred".into())],
            workload_kind: "io".into(),
            workload_params: vec![("name".into(), "n\r\x1b[Kx".into())],
            point: Vec::new(),
            part: None,
            measurements: vec![m.clone(), m.clone()],
            ..Default::default()
        };
        RunReport {
            id: "r1".into(),
            environment: vec![("cpu".into(), "\x1b[?1049h".into())],
            results: vec![entry(HOSTILE), entry("plain")],
            ..Default::default()
        }
    }

    #[test]
    fn the_terminal_report_shows_user_text_inert() {
        for color in [false, true] {
            let text = String::from_utf8(Human { color }.export(&[hostile_run()]).unwrap()).unwrap();
            // Only the report's own bold and colours (SGR: ESC [ digits ; m) remain.
            let sgr = |s: &str| {
                s.strip_prefix('[')
                    .is_some_and(|s| s.trim_start_matches(|c: char| c.is_ascii_digit() || c == ';').starts_with('m'))
            };
            assert!(text.split('\x1b').skip(1).all(sgr), "{text}");
            assert!(text.contains("/mnt/\\x1b[31mred") && text.contains("cpu=\\x1b[?1049h"), "{text}");
            assert!(text.contains("evil\\x1b[2J\\nfake line\\u{202e}<b>"), "{text}");
            assert!(text.contains("job\\x1b]0;title\\x07"), "{text}");
            assert!(text.contains("open /t/x\\nfsarena: forged"), "{text}");
            assert!(!text.lines().any(|l| l.starts_with("fake line") || l.starts_with("fsarena: forged")), "{text}");
            assert!(!text.contains('\r') && !text.contains('\u{202e}'), "{text}");
        }
    }

    #[test]
    fn other_formats_keep_the_raw_text_escaped_their_own_way() {
        let run = hostile_run();
        let json: serde_json::Value =
            serde_json::from_slice(&Json.export(std::slice::from_ref(&run)).unwrap()).unwrap();
        assert_eq!(json["run"]["results"][0]["target"]["label"], HOSTILE);
        let csv = String::from_utf8(Csv.export(std::slice::from_ref(&run)).unwrap()).unwrap();
        assert!(csv.contains("\"evil\x1b[2J\nfake line\u{202e}<b>\""), "quoted, newline kept inside: {csv}");
        let html = html_report(&[run]);
        assert!(!html.contains("<b>") && html.contains("&lt;b&gt;"), "escaped");
        assert!(!html.contains('\x1b'), "no control characters in HTML");
    }
}
