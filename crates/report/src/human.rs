//! A summary for people, in fio's normal-output layout (`show_thread_status_normal` and
//! `show_ddir_status` in fio's `stat.c`), so that fio users read it without relearning, plus a
//! comparison table when several targets or workloads ran.

use crate::fio_figures::{job_direction_figures, Direction};
use crate::model::{Mark, Model};
use crate::significance::Contrast;
use crate::{humanize, ExportError, Exporter, ResultEntry, RunReport};
use comfy_table::{presets, Cell, CellAlignment, Color, Table};
use fsarena_core::fio_text::{latency_line, latency_lines, num2str, percentile_lines};
use fsarena_core::units::{format_count, format_iec, format_si};
use fsarena_core::JobResult;
use std::fmt::Write as _;

/// A fio-like terminal summary; `color` enables ANSI bold for the headline figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct Human {
    /// Emit ANSI escape codes (only when writing to a terminal).
    pub color: bool,
}

impl Exporter for Human {
    fn export(&self, runs: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        // Every text of the run shown inert: labels and parameters are user text.
        let original = crate::one_run(runs, "human")?;
        let report = &crate::terminal::printable_report(original);
        let mut out = String::new();
        environment_header(&mut out, report);
        for (i, entry) in report.results.iter().enumerate() {
            let verdicts = crate::verdicts::is_verdicts(entry);
            // A verdict result is one line (its cases are in the table below); consecutive
            // ones stay together.
            if i > 0 && !(verdicts && crate::verdicts::is_verdicts(&report.results[i - 1])) {
                out.push('\n');
            }
            if verdicts {
                crate::verdicts::entry_line(&mut out, entry);
            } else {
                self.entry(&mut out, entry);
            }
        }
        // fio's "Disk stats (read/write):" block closes its output, after every group.
        out.push_str(&crate::fio_disk::disk_stats_text(&crate::fio_disk::report_disks(report)));
        // Compliance results have their own side-by-side table: a mean ± CI of case counts
        // would say nothing.
        let mut figures = report.clone();
        figures.results.retain(|e| !crate::verdicts::is_verdicts(e));
        if figures.results.len() > 1 {
            out.push('\n');
            out.push_str(&comparison_table(&figures, self.color));
        }
        // A sweep over clients and numjobs: the studies' table, rows clients, columns processes.
        let matrices = crate::matrix::text(std::slice::from_ref(report));
        if !matrices.is_empty() {
            out.push('\n');
            out.push_str(&matrices);
        }
        for table in crate::verdicts::tables(std::slice::from_ref(report)) {
            out.push('\n');
            out.push_str(&table.text());
        }
        // Findings come from the run as stored (its plan text holds the experiment), shown inert.
        if let Some((experiment, findings)) = crate::findings::of_run(original) {
            out.push('\n');
            for line in crate::findings::text(&findings, &experiment).lines() {
                out.push_str(&fsarena_core::printable(line));
                out.push('\n');
            }
        }
        Ok(out.into_bytes())
    }
}

impl Human {
    /// One target × workload: a header, then one fio-like block per job.
    fn entry(&self, out: &mut String, entry: &ResultEntry) {
        out.push_str(&entry.title());
        out.push('\n');
        let Some(m) = entry.measurements.last() else {
            out.push_str("  no measurement\n");
            return;
        };
        if !m.complete {
            out.push_str("  INCOMPLETE: stopped early; figures cover only what ran\n");
        }
        if entry.measurements.len() > 1 {
            let _ = writeln!(out, "  last of {} measured repetitions", entry.measurements.len());
        }
        if m.jobs().is_empty() {
            // Workloads other than `io` have no fio-style job detail: list their metrics.
            let width = m.metrics.iter().map(|x| x.name.len()).max().unwrap_or(0);
            for metric in &m.metrics {
                let _ = writeln!(out, "  {:width$} : {}", metric.name, humanize::value(metric.value, &metric.unit));
            }
        }
        for job in m.jobs() {
            self.job(out, job, m.jobs());
        }
        // The kind's own block, registered with it (see [`crate::set_presenters`]).
        if let Some(block) = crate::presenter(&entry.workload_kind).and_then(|p| p.text) {
            let mut text = String::new();
            block(&mut text, entry, m);
            out.push_str(&if self.color { text } else { fsarena_core::run::without_bold(&text) });
        }
    }

    /// fio's per-job block.
    fn job(&self, out: &mut String, job: &JobResult, jobs: &[JobResult]) {
        let _ =
            writeln!(out, "{}: (groupid={}, jobs={}): err={:2}", job.name, job.group_id, job.clones.max(1), job.error);
        if let Some(message) = &job.error_message {
            let _ = writeln!(out, "  error: {message}");
        }
        for d in Direction::ALL {
            if d.of(job).total_ios > 0 {
                self.direction(out, job, jobs, d);
            }
        }
        if job.sync.samples > 0 {
            out.push_str("  fsync/fdatasync/sync_file_range/syncfs:\n");
            latency_lines(out, "sync", &job.sync);
        }
        let _ = writeln!(
            out,
            "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
            job.usr_cpu, job.sys_cpu, job.ctx, job.majf, job.minf
        );
        let (r, w, t) = (&job.read, &job.write, &job.trim);
        let _ = writeln!(
            out,
            "     issued rwts: total={},{},{},{} short={},{},{},0 dropped=0,0,0,0",
            r.total_ios, w.total_ios, t.total_ios, job.sync.samples, r.short_ios, w.short_ios, t.short_ios
        );
        if let Some(ss) = &job.steadystate {
            steadystate_line(out, ss);
        }
        if job.layout_bytes > 0 {
            let secs = job.layout_time.as_secs_f64();
            let rate =
                if secs > 0.0 { format!(" ({}/s)", format_iec(job.layout_bytes as f64 / secs)) } else { String::new() };
            let _ = writeln!(
                out,
                "  layout: {} in {secs:.2}s{rate}, excluded from the figures",
                format_iec(job.layout_bytes as f64)
            );
        }
        if job.verify_time.0 > 0 {
            let _ = writeln!(out, "  verify: {:.2}s, excluded from the figures", job.verify_time.as_secs_f64());
        }
    }

    /// fio's `show_ddir_status` for one direction.
    fn direction(&self, out: &mut String, job: &JobResult, jobs: &[JobResult], d: Direction) {
        let dir = d.of(job);
        let f = job_direction_figures(jobs, job, d);
        // fio divides by whole milliseconds; below 1 ms it would print nothing, we fall back
        // to the exact nanosecond rates.
        let (iops, bw) = if f.runtime_ms > 0 { (f.iops, f.bw_bytes as f64) } else { (dir.iops(), dir.bw_bytes()) };
        let line = format!(
            "  {}: IOPS={}, BW={}/s ({}/s)({}/{}msec)",
            d.name(),
            format_count(iops.floor()),
            format_iec(bw),
            format_si(bw),
            format_iec(dir.io_bytes as f64),
            f.runtime_ms
        );
        if self.color {
            let _ = writeln!(out, "\x1b[1m{line}\x1b[0m");
        } else {
            let _ = writeln!(out, "{line}");
        }
        // fio's order: slat (queued engines only), clat, lat, then clat's percentiles.
        latency_line(out, "slat", &dir.slat);
        latency_line(out, "clat", &dir.clat);
        latency_line(out, " lat", dir.lat());
        percentile_lines(out, "clat", &dir.clat.percentiles);

        if f.bw_samples.samples > 0 {
            let s = &f.bw_samples;
            // fio switches to MiB/s above 1 GiB/s (mean > 1024 * 1024 KiB/s).
            let (unit, scale) = if s.mean > 1024.0 * 1024.0 { ("MiB", 1024.0) } else { ("KiB", 1.0) };
            let _ = writeln!(
                out,
                "   bw ({unit:>5}/s): min={:5}, max={:5}, per={:3.2}%, avg={:5.2}, stdev={:5.2}, samples={}",
                (s.min / scale) as u64,
                (s.max / scale) as u64,
                f.bw_agg,
                s.mean / scale,
                s.stddev / scale,
                s.samples
            );
        }
        if f.iops_samples.samples > 0 {
            let s = &f.iops_samples;
            let _ = writeln!(
                out,
                "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
                s.min as u64, s.max as u64, s.mean, s.stddev, s.samples
            );
        }
    }
}

/// fio's `show_ss_normal`: `  steadystate  : attained=yes, bw=1704MiB/s (1745MB/s),
/// iops=436k, iops mean dev=10.210%`.
fn steadystate_line(out: &mut String, ss: &fsarena_core::fio::SteadyStateResult) {
    let name = ss.ss.split(':').next().unwrap_or_default();
    let (metric, kind) = match name.strip_suffix("_slope") {
        Some(metric) => (metric, "slope"),
        None => (name, "mean dev"),
    };
    let (number, percent) = match ss.criterion.strip_suffix('%') {
        Some(n) => (n, "%"),
        None => (ss.criterion.as_str(), ""),
    };
    let criterion = number.parse::<f64>().map_or_else(|_| number.to_string(), |v| format!("{v:.3}"));
    let bw = ss.bw_mean as f64;
    let _ = writeln!(
        out,
        "  steadystate  : attained={}, bw={}/s ({}/s), iops={}, {metric} {kind}={criterion}{percent}",
        if ss.attained { "yes" } else { "no" },
        format_iec(bw),
        format_si(bw),
        num2str(ss.iops_mean, 4)
    );
}

/// The machine, then one line per target with how it was made and mounted.
fn environment_header(out: &mut String, report: &RunReport) {
    if report.environment.is_empty() {
        return;
    }
    let machine: Vec<String> = report.environment.iter().map(|(k, v)| format!("{k}={v}")).collect();
    out.push_str(&format!("machine: {}\n", machine.join(", ")));
    let mut seen: Vec<&str> = Vec::new();
    for entry in &report.results {
        if seen.contains(&entry.target_label.as_str()) || entry.target_info.is_empty() {
            continue;
        }
        seen.push(&entry.target_label);
        let facts: Vec<String> = entry.target_info.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!("target {}: {}\n", entry.target_label, facts.join("; ")));
    }
    out.push('\n');
}

/// Every result side by side, as mean ± 95% CI half-width over the measured repetitions: one
/// column per target, one row per result and metric, as a Markdown table (it reads in a
/// terminal and pastes into a report unchanged). Results are never merged: each is labelled
/// by what varies (its part, its sweep point, the parameters that differ); the parameters
/// they share are said once above the table. Best (green) and worst (red) only where the
/// difference to every other target is significant; "n.s." where it is not.
fn comparison_table(report: &RunReport, color: bool) -> String {
    let runs = std::slice::from_ref(report);
    let model = Model::new(runs);
    let several = model.results.len() > 1;
    let mut table = Table::new();
    table.load_preset(presets::ASCII_MARKDOWN);
    if color {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    let mut header: Vec<String> = if several { vec!["result".into(), "metric".into()] } else { vec!["metric".into()] };
    header.extend(model.series.iter().map(|s| s.label.clone()));
    table.set_header(header);
    let mut notes: Vec<Contrast> = Vec::new();
    for group in &model.results {
        for (i, row) in group.rows().into_iter().enumerate() {
            let mut cells: Vec<Cell> = Vec::new();
            if several {
                cells.push(Cell::new(if i == 0 { group.label() } else { String::new() }));
            }
            let note = row.contrast.note();
            if !note.is_empty() && !notes.contains(&row.contrast) {
                notes.push(row.contrast);
            }
            cells.push(Cell::new(if note.is_empty() {
                row.metric.name.to_string()
            } else {
                format!("{} ({note})", row.metric.name)
            }));
            // One column per series; a series without this result shows a dash.
            for s in 0..model.series.len() {
                let cell = group.entries.iter().position(|(es, _)| *es == s).and_then(|k| row.cells[k].as_ref());
                let text = cell.map_or_else(
                    || "-".to_string(),
                    |c| humanize::mean_ci(c.summary.mean, c.half_width(), row.metric.unit),
                );
                let mut c = Cell::new(text);
                match cell.map(|c| c.mark) {
                    Some(Mark::Best) if color => c = c.fg(Color::Green),
                    Some(Mark::Worst) if color => c = c.fg(Color::Red),
                    _ => {}
                }
                cells.push(c);
            }
            table.add_row(cells);
        }
    }
    let first = if several { 2 } else { 1 };
    for i in first..first + model.series.len() {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = String::new();
    for common in &model.common {
        let _ = writeln!(out, "every result: {common}");
    }
    let _ = writeln!(out, "{table}");
    for note in notes {
        let _ = writeln!(out, "{}: {}", note.note(), note.explanation());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "human_tests.rs"]
mod tests;
