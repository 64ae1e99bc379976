//! A file's `[[figure]]` tables: the study's figures and tables, checked against its rows
//! before anything runs (see [`crate::experiment`] for the file format).

use super::{FileRow, Labels, TomlJob};
use fsarena_core::InputError;
use fsarena_report::experiment::{Figure, FigureKind};
use fsarena_workload::plain::cut;

/// A `[[figure]]` as written; [`figures`] checks it.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureTable {
    id: Option<String>,
    caption: Option<String>,
    kind: Option<String>,
    rows: Option<Labels>,
    x: Option<String>,
    series: Option<String>,
    facet: Option<String>,
    metric: Option<Labels>,
}

/// The layout keys a figure may name besides its rows' workload keys.
const LAYOUT_KEYS: &[&str] = &["row", "part", "target", "metric"];

/// The `[[figure]]`s, checked: an id given once, a caption, a known kind, rows that exist,
/// a metric, and layout keys (`x`, `series`, `facet`) that name `row`, `part`, `target`,
/// `metric` or a key of one of the figure's rows, each a different one.
pub fn figures(job: &TomlJob, rows: &[FileRow], origin: &str) -> Result<Vec<Figure>, InputError> {
    let mut out: Vec<Figure> = Vec::new();
    for (i, f) in job.figure.iter().enumerate() {
        let at = format!("{origin}: [[figure]] #{}", i + 1);
        let needed = |key: &str, value: &Option<String>| {
            value
                .clone()
                .filter(|v| !v.trim().is_empty())
                .ok_or_else(|| InputError::new(format!("{key} = \"...\" is missing: a figure needs it")).at(at.clone()))
        };
        let id = needed("id", &f.id)?;
        if out.iter().any(|o| o.id == id) {
            return Err(
                InputError::new(format!("id = \"{}\" is given twice: each figure needs its own id", cut(&id))).at(at)
            );
        }
        let caption = needed("caption", &f.caption)?;
        let kind_name = needed("kind", &f.kind)?;
        let Some(kind) = FigureKind::ALL.into_iter().find(|k| k.name() == kind_name) else {
            let names: Vec<&str> = FigureKind::ALL.iter().map(|k| k.name()).collect();
            return Err(
                InputError::new(format!("kind = \"{}\": expected {}", cut(&kind_name), names.join(", "))).at(at)
            );
        };
        let figure_rows = f.rows.as_ref().map(Labels::list).unwrap_or_default();
        if figure_rows.is_empty() {
            return Err(InputError::new("rows = [...] is missing: name the rows the figure draws from").at(at));
        }
        let mut keys: Vec<&str> = LAYOUT_KEYS.to_vec();
        for id in &figure_rows {
            let Some(row) = rows.iter().find(|r| r.id == *id) else {
                let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
                return Err(InputError::new(format!("rows = \"{}\": the rows are {}", cut(id), ids.join(", "))).at(at));
            };
            keys.extend(row.table.keys().map(String::as_str).filter(|k| *k != "kind"));
        }
        let metric = f.metric.as_ref().map(Labels::list).unwrap_or_default();
        if metric.is_empty() || metric.iter().any(|m| m.trim().is_empty()) {
            return Err(InputError::new("metric = \"...\" is missing: name the metric the figure shows").at(at));
        }
        let x = needed("x", &f.x)?;
        let series = f.series.clone().unwrap_or_else(|| "target".to_string());
        let mut given: Vec<(&str, &str)> = vec![("x", x.as_str()), ("series", series.as_str())];
        given.extend(f.facet.as_deref().map(|v| ("facet", v)));
        for (n, (key, value)) in given.iter().enumerate() {
            if !keys.contains(value) {
                let mut known = keys.clone();
                known.sort_unstable();
                known.dedup();
                return Err(InputError::new(format!(
                    "{key} = \"{}\": expected {} (row, part, target, metric or a key of its rows)",
                    cut(value),
                    known.join(", ")
                ))
                .at(at));
            }
            if let Some((other, _)) = given[..n].iter().find(|(_, v)| v == value) {
                return Err(InputError::new(format!(
                    "{key} = \"{}\": {other} shows it already; each of x, series and facet needs its own",
                    cut(value)
                ))
                .at(at));
            }
        }
        out.push(Figure { id, caption, kind, rows: figure_rows, x, series, facet: f.facet.clone(), metric });
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::experiment::{parse, rows, Scale};

    /// A file of one io row with `figure` appended: its figures, or the error.
    fn figures_of(figure: &str) -> Result<Vec<Figure>, String> {
        let text =
            format!("[[workload]]\nrow = \"fio\"\nkind = \"io\"\nrw = [\"write\", \"read\"]\nnumjobs = 1\n{figure}");
        let job = parse(&text, "f.toml").map_err(|e| e.to_string())?;
        let r = rows(&job, Scale::Smoke, "f.toml").unwrap();
        figures(&job, &r, "f.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn figures_are_read_in_the_files_order() {
        let f = figures_of(
            "[[figure]]\nid = \"fig3\"\ncaption = \"Fig. 3: modes\"\nkind = \"bars\"\nrows = [\"fio\"]\nx = \"rw\"\nmetric = [\"write_bw\", \"read_bw\"]\n\
             [[figure]]\nid = \"t1\"\ncaption = \"Table 1\"\nkind = \"table\"\nrows = \"fio\"\nx = \"target\"\nseries = \"rw\"\nfacet = \"numjobs\"\nmetric = \"write_bw\"\n",
        )
        .unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].id.as_str(), f[0].kind, f[0].series.as_str()), ("fig3", FigureKind::Bars, "target"));
        assert_eq!(f[0].metric, vec!["write_bw".to_string(), "read_bw".to_string()]);
        assert_eq!((f[1].kind, f[1].x.as_str(), f[1].facet.as_deref()), (FigureKind::Table, "target", Some("numjobs")));
    }

    #[test]
    fn bad_figures_are_refused_naming_the_key_and_value() {
        let base = "[[figure]]\nid = \"f\"\ncaption = \"c\"\n";
        for (body, expected) in [
            (
                "kind = \"pie\"\nrows = [\"fio\"]\nx = \"rw\"\nmetric = \"m\"\n",
                "kind = \"pie\": expected bars, lines, table",
            ),
            ("kind = \"bars\"\nrows = [\"nope\"]\nx = \"rw\"\nmetric = \"m\"\n", "rows = \"nope\": the rows are fio"),
            ("kind = \"bars\"\nrows = [\"fio\"]\nx = \"rw\"\n", "metric = \"...\" is missing"),
            ("kind = \"bars\"\nrows = [\"fio\"]\nx = \"threads\"\nmetric = \"m\"\n", "x = \"threads\": expected"),
            (
                "kind = \"bars\"\nrows = [\"fio\"]\nx = \"rw\"\nseries = \"rw\"\nmetric = \"m\"\n",
                "series = \"rw\": x shows it already",
            ),
            (
                "kind = \"bars\"\nrows = [\"fio\"]\nx = \"rw\"\nmetric = \"m\"\ncolour = \"red\"\n",
                "unknown field `colour`",
            ),
        ] {
            let e = figures_of(&format!("{base}{body}")).unwrap_err();
            assert!(e.contains(expected), "{expected} in {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        let twice = format!("{base}kind = \"bars\"\nrows = [\"fio\"]\nx = \"rw\"\nmetric = \"m\"\n");
        let e = figures_of(&format!("{twice}{twice}")).unwrap_err();
        assert!(e.contains("id = \"f\" is given twice"), "{e}");
    }
}
