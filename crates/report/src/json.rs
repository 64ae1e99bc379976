//! fsarena's own JSON results schema (`--output-format json`), versioned by
//! [`fsarena_core::SCHEMA_VERSION`]:
//!
//! ```text
//! {"schema": 1, "run": {"id", "started_unix_ms", "complete", "plan", "environment": {..},
//!   "results": [{"target": {"label", "kind", "options": {..}},
//!                "workload": {"kind", "params": {..}, "point": {key: {"given", "number"}},
//!                             "part": "job name" | null},
//!                "metrics": {"read_iops": {"unit", "better", "values": [..], "mean", "stdev",
//!                                          "min", "max", "ci95": [lo, hi], "cv", "outliers"}},
//!                "complete": true, "wall_ms": 61234 | null,
//!                "counters": {"io.ops": [per repetition..]},
//!                "series": {"ops_per_s": {"unit", "interval_ns", "values": [[per repetition..]]}},
//!                "jobs": [..JobResults of the last repetition..],
//!                "verdicts": [{"case", "security", "outcome", "expected", "actual"}]}]}}
//! ```
//!
//! `wall_ms`: what the workload took on the target, wall-clock, every round included (on the
//! first part of a workload that gives several; null in runs stored before it was kept).
//! `verdicts` only for a compliance workload (`posix`): one per case, its worst outcome over
//! the repetitions (`pass`, `fail`, `unsupported`); `security` only when true, `expected` and
//! `actual` only when not empty.
//!
//! Fields may be added; existing ones keep their meaning.

use crate::summary::summarize;
use crate::{ExportError, Exporter, ResultEntry, RunReport};
use fsarena_core::{Better, SCHEMA_VERSION};
use serde_json::{json, Map, Value};

/// Writes fsarena's own versioned JSON schema.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Exporter for Json {
    fn export(&self, runs: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        crate::pretty_json(&document(crate::one_run(runs, "json")?), "json")
    }
}

/// The whole document.
fn document(report: &RunReport) -> Value {
    json!({
        "schema": SCHEMA_VERSION,
        "run": {
            "id": report.id,
            "started_unix_ms": report.started_unix_ms,
            "complete": report.complete,
            "name": report.name,
            "tags": report.tags,
            "failure": report.failure,
            "plan": report.plan,
            "environment": string_map(&report.environment),
            "results": report.results.iter().map(result_object).collect::<Vec<_>>(),
        }
    })
}

/// One target × workload.
fn result_object(entry: &ResultEntry) -> Value {
    // An entry with no measurement ran nothing, so it is not complete.
    let complete = !entry.measurements.is_empty() && entry.measurements.iter().all(|m| m.complete);
    let jobs = entry.measurements.last().map(|m| m.jobs()).unwrap_or_default();
    let mut object = json!({
        "target": {
            "label": entry.target_label,
            "kind": entry.target_kind,
            "options": string_map(&entry.target_options),
            "environment": string_map(&entry.target_info),
        },
        "workload": {
            "kind": entry.workload_kind,
            "params": string_map(&entry.workload_params),
            "point": entry.point.iter().map(|p| (p.key.clone(), json!({"given": p.given, "number": p.number}))).collect::<Map<String, Value>>(),
            "part": entry.part,
        },
        "metrics": metrics_object(entry),
        "complete": complete,
        "wall_ms": entry.wall_ms,
        "counters": counters_object(entry),
        "series": series_object(entry),
        "jobs": serde_json::to_value(jobs).unwrap_or(Value::Array(Vec::new())),
    });
    // A compliance result (posix) names its cases: each once, with its worst outcome over
    // the repetitions.
    let verdicts = crate::verdicts::entry_verdicts(entry);
    if let (false, Some(o)) = (verdicts.is_empty(), object.as_object_mut()) {
        o.insert("verdicts".into(), serde_json::to_value(verdicts).unwrap_or(Value::Array(Vec::new())));
    }
    object
}

/// `{name: {unit, better, values, mean, stdev, min, max, ci95}}`, in the order the metrics
/// first appear. A repetition without a metric (it stopped before producing it) adds no value
/// to it, so `values` may be shorter than the number of repetitions.
fn metrics_object(entry: &ResultEntry) -> Value {
    let mut order: Vec<(&str, &str, Better)> = Vec::new();
    for m in &entry.measurements {
        for metric in &m.metrics {
            if !order.iter().any(|(name, _, _)| *name == metric.name) {
                order.push((&metric.name, &metric.unit, metric.better));
            }
        }
    }
    let mut out = Map::new();
    for (name, unit, better) in order {
        let values: Vec<f64> = entry.measurements.iter().filter_map(|m| m.metric(name)).map(|m| m.value).collect();
        let mut o = Map::new();
        o.insert("unit".into(), json!(unit));
        o.insert("better".into(), json!(better));
        o.insert("values".into(), json!(values.iter().map(|&v| number(v)).collect::<Vec<_>>()));
        if let Some(s) = summarize(&values) {
            o.insert("mean".into(), number(s.mean));
            o.insert("stdev".into(), number(s.stdev));
            o.insert("min".into(), number(s.min));
            o.insert("max".into(), number(s.max));
            o.insert("ci95".into(), json!([number(s.ci95.0), number(s.ci95.1)]));
            o.insert("cv".into(), json!(number(s.cv)));
            o.insert("outliers".into(), json!(s.outliers));
        }
        out.insert(name.to_string(), Value::Object(o));
    }
    Value::Object(out)
}

/// `{name: [value per repetition]}`: a repetition without the counter gives 0 (it counted
/// none).
fn counters_object(entry: &ResultEntry) -> Value {
    let mut names: Vec<&str> = Vec::new();
    for m in &entry.measurements {
        for name in m.counters.keys() {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    let out: Map<String, Value> = names
        .into_iter()
        .map(|n| {
            (
                n.to_string(),
                json!(entry.measurements.iter().map(|m| m.counters.get(n).copied().unwrap_or(0)).collect::<Vec<_>>()),
            )
        })
        .collect();
    Value::Object(out)
}

/// `{name: {unit, interval_ns, values: [[..] per repetition]}}` of the time series kept.
fn series_object(entry: &ResultEntry) -> Value {
    let mut out = Map::new();
    for m in &entry.measurements {
        for (name, s) in &m.series {
            let o = out
                .entry(name.clone())
                .or_insert_with(|| json!({"unit": s.unit, "interval_ns": s.interval_ns, "values": []}));
            if let Some(values) = o["values"].as_array_mut() {
                values.push(json!(s.values.iter().map(|&v| number(v)).collect::<Vec<_>>()));
            }
        }
    }
    Value::Object(out)
}

/// A float, or `null` where JSON has no number (NaN, infinity).
fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// An object of string values, keeping the given order.
fn string_map(pairs: &[(String, String)]) -> Value {
    Value::Object(pairs.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::{JobResult, Measurement};

    fn measurement(iops: f64, p99: f64, complete: bool) -> Measurement {
        let mut m = Measurement {
            fio: Some(fsarena_core::FioDetail {
                jobs: vec![JobResult { name: format!("job-{iops}"), ..Default::default() }],
            }),
            complete,
            ..Default::default()
        };
        m.push("read_iops", "ops/s", Better::Higher, iops);
        m.push("read_lat_p99", "ns", Better::Lower, p99);
        m.count("read_ios", iops as u64);
        m.add_series("read_iops", fsarena_core::Series::per_second("ops/s", vec![iops, iops / 2.0]));
        m
    }

    fn report() -> RunReport {
        RunReport {
            id: "r1".into(),
            started_unix_ms: 1_700_000_000_000,
            environment: vec![("kernel".into(), "6.8".into()), ("cpu".into(), "x".into())],
            results: vec![ResultEntry {
                target_label: "ext4-big".into(),
                target_kind: "ext4".into(),
                target_options: vec![("size".into(), "1g".into())],
                target_info: vec![("mkfs".into(), "mkfs.ext4 -F -q img".into())],
                workload_kind: "io".into(),
                workload_params: vec![("rw".into(), "randread".into()), ("bs".into(), "4k".into())],
                point: Vec::new(),
                part: None,
                measurements: vec![
                    measurement(100.0, 9.0, true),
                    measurement(200.0, 8.0, true),
                    measurement(300.0, 7.0, true),
                ],
                wall_ms: None,
            }],
            ..Default::default()
        }
    }

    fn parse(report: &RunReport) -> Value {
        let bytes = Json.export(std::slice::from_ref(report)).unwrap();
        assert_eq!(bytes.last(), Some(&b'\n'));
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn schema_and_run_fields() {
        let v = parse(&report());
        assert_eq!(v["schema"], SCHEMA_VERSION);
        assert_eq!(v["run"]["id"], "r1");
        assert_eq!(v["run"]["started_unix_ms"], 1_700_000_000_000u64);
        let env: Vec<&String> = v["run"]["environment"].as_object().unwrap().keys().collect();
        assert_eq!(env, ["kernel", "cpu"]);
        let r = &v["run"]["results"][0];
        assert_eq!(r["target"]["label"], "ext4-big");
        assert_eq!(r["target"]["kind"], "ext4");
        assert_eq!(r["target"]["options"]["size"], "1g");
        assert_eq!(r["workload"]["kind"], "io");
        assert_eq!(r["workload"]["params"]["rw"], "randread");
        assert_eq!(r["complete"], true);
        // The jobs of the last repetition, serialized as JobResult.
        assert_eq!(r["jobs"][0]["name"], "job-300");
        let back: Vec<JobResult> = serde_json::from_value(r["jobs"].clone()).unwrap();
        assert_eq!(back.len(), 1);
    }

    #[test]
    fn counters_and_series_per_repetition() {
        let v = parse(&report());
        let r = &v["run"]["results"][0];
        let n = r["metrics"]["read_iops"]["values"].as_array().unwrap().len();
        assert_eq!(r["counters"]["read_ios"].as_array().unwrap().len(), n);
        let s = &r["series"]["read_iops"];
        assert_eq!((s["unit"].as_str(), s["interval_ns"].as_u64()), (Some("ops/s"), Some(1_000_000_000)));
        assert_eq!(s["values"].as_array().unwrap().len(), n);
        assert_eq!(s["values"][0].as_array().unwrap().len(), 2);
    }

    #[test]
    fn metrics_carry_values_and_statistics() {
        let v = parse(&report());
        let metrics = &v["run"]["results"][0]["metrics"];
        let names: Vec<&String> = metrics.as_object().unwrap().keys().collect();
        assert_eq!(names, ["read_iops", "read_lat_p99"]);
        let iops = &metrics["read_iops"];
        assert_eq!(iops["unit"], "ops/s");
        assert_eq!(iops["better"], "higher");
        assert_eq!(metrics["read_lat_p99"]["better"], "lower");
        assert_eq!(iops["values"], json!([100.0, 200.0, 300.0]));
        assert_eq!(iops["mean"].as_f64(), Some(200.0));
        assert_eq!(iops["stdev"].as_f64(), Some(100.0));
        assert_eq!(iops["min"].as_f64(), Some(100.0));
        assert_eq!(iops["max"].as_f64(), Some(300.0));
        // t(0.975, 2) = 4.302653
        let half = 4.302_652_729_911_275 * 100.0 / 3f64.sqrt();
        let ci = iops["ci95"].as_array().unwrap();
        assert!((ci[0].as_f64().unwrap() - (200.0 - half)).abs() < 1e-6);
        assert!((ci[1].as_f64().unwrap() - (200.0 + half)).abs() < 1e-6);
        assert!((iops["cv"].as_f64().unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(iops["outliers"], json!([]));
    }

    #[test]
    fn posix_results_carry_their_verdicts() {
        let mut r = report();
        let verdict = |outcome| fsarena_core::Verdict {
            case: "rmdir.nonempty.ENOTEMPTY".into(),
            security: false,
            outcome,
            expected: "ENOTEMPTY".into(),
            actual: "EEXIST".into(),
        };
        r.results[0].workload_kind = "posix".into();
        r.results[0].measurements[0].verdicts = vec![verdict(fsarena_core::Outcome::Pass)];
        r.results[0].measurements[1].verdicts = vec![verdict(fsarena_core::Outcome::Fail)];
        let v = parse(&r);
        let verdicts = v["run"]["results"][0]["verdicts"].as_array().unwrap();
        assert_eq!(verdicts.len(), 1);
        assert_eq!(verdicts[0]["case"], "rmdir.nonempty.ENOTEMPTY");
        assert_eq!(verdicts[0]["outcome"], "fail");
        assert_eq!(verdicts[0]["actual"], "EEXIST");
        assert!(verdicts[0].get("security").is_none());
        assert!(parse(&report())["run"]["results"][0].get("verdicts").is_none());
    }

    #[test]
    fn one_value_and_incomplete_runs() {
        let mut r = report();
        r.results[0].measurements = vec![measurement(42.0, 1.0, false)];
        let v = parse(&r);
        let res = &v["run"]["results"][0];
        assert_eq!(res["complete"], false);
        assert_eq!(res["metrics"]["read_iops"]["stdev"].as_f64(), Some(0.0));
        assert_eq!(res["metrics"]["read_iops"]["ci95"], json!([42.0, 42.0]));
        r.results[0].measurements.clear();
        let v = parse(&r);
        assert_eq!(v["run"]["results"][0]["complete"], false);
        assert_eq!(v["run"]["results"][0]["jobs"], json!([]));
    }
}
