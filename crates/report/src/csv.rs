//! CSV (`--output-format csv`, `results export --format csv`): one row per target × workload ×
//! metric × repetition, quoted as RFC 4180 says, so a spreadsheet or pandas reads every value.
//!
//! ```text
//! run_id,target,workload,metric,unit,repetition,value
//! 1700000000-42,ext4,"io:rw=randread,bs=4k",read_iops,ops/s,1,254000
//! ```

use crate::{ExportError, Exporter, RunReport};

/// The header row.
const HEADER: [&str; 7] = ["run_id", "target", "workload", "metric", "unit", "repetition", "value"];

/// Writes every measured value as one CSV row.
#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, runs: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        let report = crate::one_run(runs, "csv")?;
        let mut out = String::new();
        row(&mut out, &HEADER.map(String::from));
        for entry in &report.results {
            let workload = entry.workload_title();
            for (i, m) in entry.measurements.iter().enumerate() {
                for metric in &m.metrics {
                    // Rust prints the shortest text that reads back as the same f64; a value
                    // that is not a number is left empty.
                    let value = if metric.value.is_finite() { metric.value.to_string() } else { String::new() };
                    row(
                        &mut out,
                        &[
                            report.id.clone(),
                            entry.target_label.clone(),
                            workload.clone(),
                            metric.name.clone(),
                            metric.unit.clone(),
                            (i + 1).to_string(),
                            value,
                        ],
                    );
                }
            }
        }
        Ok(out.into_bytes())
    }
}

/// Appends one row, each field quoted when it holds a comma, a quote or a line break.
fn row(out: &mut String, fields: &[String]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if field.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&field.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(field);
        }
    }
    out.push('\n');
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::ResultEntry;
    use fsarena_core::{Better, Measurement};

    fn measurement(iops: f64) -> Measurement {
        let mut m = Measurement { complete: true, ..Default::default() };
        m.push("read_iops", "ops/s", Better::Higher, iops);
        m.push("read_lat_p99", "ns", Better::Lower, f64::NAN);
        m
    }

    #[test]
    fn one_row_per_repetition_with_quoting() {
        let report = RunReport {
            id: "r1".into(),
            results: vec![ResultEntry {
                target_label: "say \"hi\", ext4\nnow".into(),
                workload_kind: "io".into(),
                workload_params: vec![("rw".into(), "randread".into()), ("bs".into(), "4k".into())],
                point: Vec::new(),
                part: None,
                measurements: vec![measurement(1.5), measurement(254_000.0)],
                ..Default::default()
            }],
            ..Default::default()
        };
        let text = String::from_utf8(Csv.export(std::slice::from_ref(&report)).unwrap()).unwrap();
        let expected = "run_id,target,workload,metric,unit,repetition,value\n\
            r1,\"say \"\"hi\"\", ext4\nnow\",\"io:rw=randread,bs=4k\",read_iops,ops/s,1,1.5\n\
            r1,\"say \"\"hi\"\", ext4\nnow\",\"io:rw=randread,bs=4k\",read_lat_p99,ns,1,\n\
            r1,\"say \"\"hi\"\", ext4\nnow\",\"io:rw=randread,bs=4k\",read_iops,ops/s,2,254000\n\
            r1,\"say \"\"hi\"\", ext4\nnow\",\"io:rw=randread,bs=4k\",read_lat_p99,ns,2,\n";
        assert_eq!(text, expected);
        let empty = String::from_utf8(Csv.export(&[RunReport::default()]).unwrap()).unwrap();
        assert_eq!(empty, "run_id,target,workload,metric,unit,repetition,value\n");
    }
}
