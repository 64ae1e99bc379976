//! The clients × processes table of distributed-filesystem studies: a sweep over exactly the
//! two keys `clients` and `numjobs` (io's `clients='1,2,4',numjobs='1,4'`) laid out with one
//! row per client count and one column per process count, each cell the aggregate bandwidth
//! and IOPS (both directions), and the per-client fairness where several clients ran.

use crate::{escape, humanize, ResultEntry, RunReport};
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// The row key and the column key.
const ROWS: &str = "clients";
const COLUMNS: &str = "numjobs";

/// One table: the results of one target and workload that differ only in clients and numjobs.
#[derive(Debug)]
pub(crate) struct Matrix {
    /// What the cells share: the target's label, the workload kind, its other parameters.
    pub title: String,
    /// Client counts (number, as given), increasing.
    pub rows: Vec<(f64, String)>,
    /// Process counts (number, as given), increasing.
    pub columns: Vec<(f64, String)>,
    /// `cells[row][column]`: the cell's text, None where no result ran.
    pub cells: Vec<Vec<Option<String>>>,
    /// The clients were hosts (MPI ranks on several hosts, `host.NAME.*` figures): the rows
    /// count hosts, and the fairness is between hosts.
    pub hosts: bool,
}

/// The mean over the measurements of `f`, None without measurements.
fn mean(ms: &[Measurement], f: impl Fn(&Measurement) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = ms.iter().filter_map(f).collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// A metric's value, 0 when the measurement has none (a read job has no write_bw).
fn value(m: &Measurement, name: &str) -> f64 {
    m.metric(name).map_or(0.0, |x| x.value)
}

/// Aggregate bandwidth and IOPS (read + write) and, over several clients, the fairness; means
/// over the measured repetitions.
fn cell(entry: &ResultEntry) -> Option<String> {
    let ms = &entry.measurements;
    let bw = mean(ms, |m| Some(value(m, "read_bw") + value(m, "write_bw")))?;
    let iops = mean(ms, |m| Some(value(m, "read_iops") + value(m, "write_iops")))?;
    let mut text = format!("{} · {}", humanize::value(bw, "bytes/s"), humanize::value(iops, "ops/s"));
    // The completion latency of every I/O of both directions, as the studies' latency table.
    let latency = mean(ms, |m| {
        let mut all = fsarena_core::LatencyHistogram::new();
        ["read", "write"].iter().filter_map(|d| m.latency(d)).for_each(|h| all.merge(h));
        (!all.is_empty()).then(|| all.mean())
    });
    if let Some(lat) = latency {
        let _ = write!(text, " · {}", humanize::value(lat, "ns"));
    }
    // Between hosts where the clients were hosts (a host's ranks are one client of the study).
    let fairness = |m: &Measurement| m.metric("host_fairness").or_else(|| m.metric("client_fairness")).map(|x| x.value);
    if let Some(fair) = mean(ms, fairness) {
        let _ = write!(text, " · fairness {fair:.2}");
    }
    Some(text)
}

/// The (rows, columns) numbers of a result whose sweep point is exactly clients and numjobs,
/// or, in a run over MPI ranks (each rank one client), exactly numjobs: its row is then the
/// run's rank count, so that the runs of `mpirun -np 1, 2, 4, 8` reported together make the
/// whole table.
fn coordinates(run: &RunReport, entry: &ResultEntry) -> Option<((f64, String), (f64, String))> {
    let find = |key: &str| entry.point.iter().find(|p| p.key == key).and_then(|p| Some((p.number?, p.given.clone())));
    // numjobs by its name in the distributed-filesystem studies, too.
    let column = || find(COLUMNS).or_else(|| find("processes_per_client"));
    match entry.point.len() {
        2 => Some((find(ROWS)?, column()?)),
        1 => {
            let ranks = mpi_ranks(run)?;
            Some(((ranks as f64, ranks.to_string()), column()?))
        }
        _ => None,
    }
}

/// The number of MPI ranks a run was spread over (its `mpi_ranks` environment entry).
fn mpi_ranks(run: &RunReport) -> Option<u64> {
    run.environment.iter().find(|(k, _)| k == "mpi_ranks").and_then(|(_, v)| v.parse().ok())
}

/// A result with its row's and column's numbers.
type Placed<'a> = (f64, f64, &'a ResultEntry);

/// Every clients × numjobs table in `runs`, in the order their first results ran.
pub(crate) fn matrices(runs: &[RunReport]) -> Vec<Matrix> {
    // (title, results with their coordinates, the table being built)
    let mut families: Vec<(String, Vec<Placed<'_>>, Matrix)> = Vec::new();
    for (run, entry) in runs.iter().flat_map(|r| r.results.iter().map(move |e| (r, e))) {
        let Some((row, column)) = coordinates(run, entry) else { continue };
        let mut title = format!("{} · {}", entry.target_label, entry.workload_kind);
        if let Some(part) = &entry.part {
            let _ = write!(title, " {part}");
        }
        for (k, v) in
            entry.workload_params.iter().filter(|(k, _)| ![ROWS, COLUMNS, "processes_per_client"].contains(&k.as_str()))
        {
            let _ = write!(title, " {k}={v}");
        }
        let f = match families.iter().position(|(t, _, _)| *t == title) {
            Some(f) => f,
            None => {
                let m = Matrix {
                    title: title.clone(),
                    rows: Vec::new(),
                    columns: Vec::new(),
                    cells: Vec::new(),
                    hosts: false,
                };
                families.push((title, Vec::new(), m));
                families.len() - 1
            }
        };
        let (_, entries, m) = &mut families[f];
        m.hosts |= entry.measurements.iter().any(|x| x.counters.keys().any(|k| k.starts_with("host.")));
        if !m.rows.iter().any(|(n, _)| *n == row.0) {
            m.rows.push(row.clone());
        }
        if !m.columns.iter().any(|(n, _)| *n == column.0) {
            m.columns.push(column.clone());
        }
        entries.push((row.0, column.0, entry));
    }
    let mut out = Vec::new();
    for (_, entries, mut m) in families {
        // A table of one column is a plain sweep: its chart says it. One row of clients is
        // a table too when it is the run's MPI ranks (the clients were not swept).
        let from_ranks = entries.iter().all(|(_, _, e)| e.point.len() == 1);
        if m.columns.len() < 2 || (m.rows.len() < 2 && !from_ranks) {
            continue;
        }
        m.rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        m.columns.sort_by(|a, b| a.0.total_cmp(&b.0));
        m.cells = vec![vec![None; m.columns.len()]; m.rows.len()];
        for (row, column, entry) in entries {
            let r = m.rows.iter().position(|(n, _)| *n == row);
            let c = m.columns.iter().position(|(n, _)| *n == column);
            if let (Some(r), Some(c)) = (r, c) {
                m.cells[r][c] = cell(entry);
            }
        }
        out.push(m);
    }
    out
}

impl Matrix {
    /// What the table lays out, for its heading.
    pub(crate) fn heading(&self) -> &'static str {
        if self.hosts {
            "Client hosts × processes"
        } else {
            "Clients × processes"
        }
    }

    /// What a cell says, for the line above the table.
    pub(crate) fn note(&self) -> &'static str {
        if self.hosts {
            NOTE_HOSTS
        } else {
            NOTE
        }
    }

    /// The header's corner cell, naming both axes.
    fn corner() -> String {
        format!("{ROWS} \u{2193} {COLUMNS} \u{2192}")
    }

    /// A Markdown table (it reads in a terminal too), under a line naming what it shows.
    pub(crate) fn markdown(&self, escape_text: fn(&str) -> String) -> String {
        let mut out = String::new();
        let mut header = vec![Self::corner()];
        header.extend(self.columns.iter().map(|(_, v)| format!("{COLUMNS}={}", escape_text(v))));
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
        for (r, (_, given)) in self.rows.iter().enumerate() {
            let mut line = vec![format!("{ROWS}={}", escape_text(given))];
            line.extend(self.cells[r].iter().map(|c| c.as_deref().map_or_else(|| "-".to_string(), escape_text)));
            let _ = writeln!(out, "| {} |", line.join(" | "));
        }
        out
    }

    /// An HTML table.
    pub(crate) fn html(&self) -> String {
        let mut out = String::from("<table class=\"matrix\"><thead><tr>");
        let _ = write!(out, "<th>{}</th>", escape::html(&Self::corner()));
        for (_, v) in &self.columns {
            let _ = write!(out, "<th>{COLUMNS}={}</th>", escape::html(v));
        }
        out.push_str("</tr></thead><tbody>\n");
        for (r, (_, given)) in self.rows.iter().enumerate() {
            let _ = write!(out, "<tr><th>{ROWS}={}</th>", escape::html(given));
            for c in &self.cells[r] {
                let _ = write!(out, "<td>{}</td>", escape::html(c.as_deref().unwrap_or("-")));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
        out
    }
}

/// What a cell says, for the line above each table.
pub(crate) const NOTE: &str = "aggregate bandwidth · IOPS over every client's processes (read and write together) · \
                               mean completion latency, means over the repetitions; fairness: the slowest client's \
                               bandwidth over the fastest's";

/// [`NOTE`] when each client is a host (its ranks together).
pub(crate) const NOTE_HOSTS: &str = "aggregate bandwidth · IOPS over every client host's processes (read and write \
                                     together) · mean completion latency, means over the repetitions; fairness: the \
                                     slowest host's bandwidth over the fastest's";

/// The terminal's tables, each under its title: Markdown with aligned columns, as the
/// comparison table.
pub(crate) fn text(runs: &[RunReport]) -> String {
    use comfy_table::{presets, CellAlignment, Table};
    let mut out = String::new();
    for m in matrices(runs) {
        let _ = writeln!(out, "{} · {}\n{}", m.heading().to_lowercase(), m.title, m.note());
        let mut table = Table::new();
        table.load_preset(presets::ASCII_MARKDOWN).force_no_tty();
        let mut header = vec![Matrix::corner()];
        header.extend(m.columns.iter().map(|(_, v)| format!("{COLUMNS}={v}")));
        table.set_header(header);
        for (r, (_, given)) in m.rows.iter().enumerate() {
            let mut row = vec![format!("{ROWS}={given}")];
            row.extend(m.cells[r].iter().map(|c| c.clone().unwrap_or_else(|| "-".into())));
            table.add_row(row);
        }
        for i in 1..=m.columns.len() {
            if let Some(column) = table.column_mut(i) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        let _ = writeln!(out, "{table}");
    }
    out
}
