//! PostMark's report (`verbose_report` in PostMark 1.53) for a `postmark` result, in its
//! layout — the "Time:", "Files:" and "Data:" blocks, tab-indented, its words and its byte
//! scaling — so that it reads, and diffs, like PostMark's own. Built from the measurement's
//! counters and metrics alone, so it is the same for a stored run.
//!
//! Two differences, both of precision: PostMark counts whole seconds (`time()`, at least 1)
//! and prints rates as whole numbers of that division; here the seconds have two decimals and
//! the rates are the measured ones, rounded. Byte totals are exact here; PostMark sums them in
//! a `float`, exact up to 16 MiB.

use fsarena_core::run::ResultEntry;
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// PostMark's kilobyte and megabyte (1.5 changed its megabyte to 1024 kilobytes).
const KILOBYTE: f64 = 1024.0;
const MEGABYTE: f64 = KILOBYTE * KILOBYTE;

/// PostMark's `scalef`: megabytes above one, else kilobytes for anything but zero.
fn scaled(bytes: f64) -> String {
    if bytes / MEGABYTE > 1.0 {
        format!("{:.2} megabytes", bytes / MEGABYTE)
    } else if bytes != 0.0 {
        format!("{:.2} kilobytes", bytes / KILOBYTE)
    } else {
        format!("{bytes:.6} bytes")
    }
}

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, entry: &ResultEntry, _m: &Measurement) {
    postmark_report(out, entry);
}

/// Appends PostMark's report of the entry's last measurement; nothing when it holds no
/// PostMark counters (a result stored by an older fsarena).
fn postmark_report(out: &mut String, entry: &ResultEntry) {
    let Some(m) = entry.measurements.last() else { return };
    if !m.counters.contains_key("files_created") {
        return;
    }
    out.push('\n');
    out.push_str(&report(m));
}

/// The report's text.
fn report(m: &Measurement) -> String {
    let count = |name: &str| m.counters.get(name).copied().unwrap_or(0);
    let value = |name: &str| m.metric(name).map_or(0.0, |x| x.value);
    let rate = |name: &str| format!("{:.0}", value(name));
    let seconds = |name: &str| value(name) / 1e9;
    let (created, alone) = (count("files_created"), count("files_created_alone"));
    let (deleted, deleted_alone) = (count("files_deleted"), count("files_deleted_alone"));
    let (bytes_read, bytes_written) = (count("bytes_read") as f64, count("bytes_written") as f64);
    let mut s = String::new();
    let _ = writeln!(s, "Time:");
    let _ = writeln!(s, "\t{:.2} seconds total", seconds("elapsed"));
    let _ = writeln!(
        s,
        "\t{:.2} seconds of transactions ({} per second)",
        seconds("transaction_time"),
        rate("transactions")
    );
    let _ = writeln!(s, "\nFiles:");
    let _ = writeln!(s, "\t{created} created ({} per second)", rate("files_created"));
    let _ = writeln!(s, "\t\tCreation alone: {alone} files ({} per second)", rate("creation_alone"));
    let _ = writeln!(
        s,
        "\t\tMixed with transactions: {} files ({} per second)",
        created.saturating_sub(alone),
        rate("creation_mixed")
    );
    let _ = writeln!(s, "\t{} read ({} per second)", count("files_read"), rate("files_read"));
    let _ = writeln!(s, "\t{} appended ({} per second)", count("files_appended"), rate("files_appended"));
    let _ = writeln!(s, "\t{deleted} deleted ({} per second)", rate("files_deleted"));
    let _ = writeln!(s, "\t\tDeletion alone: {deleted_alone} files ({} per second)", rate("deletion_alone"));
    let _ = writeln!(
        s,
        "\t\tMixed with transactions: {} files ({} per second)",
        deleted.saturating_sub(deleted_alone),
        rate("deletion_mixed")
    );
    let _ = writeln!(s, "\nData:");
    let _ = writeln!(s, "\t{} read ({} per second)", scaled(bytes_read), scaled(value("read_bw")));
    let _ = writeln!(s, "\t{} written ({} per second)", scaled(bytes_written), scaled(value("write_bw")));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsarena_core::Better;

    #[test]
    fn postmarks_layout_and_scaling() {
        let mut m = Measurement::default();
        for (name, n) in [
            ("transactions", 500),
            ("files_created", 764),
            ("files_created_alone", 500),
            ("files_read", 243),
            ("files_appended", 257),
            ("files_deleted", 764),
            ("files_deleted_alone", 528),
            ("bytes_read", 1_398_620),
            ("bytes_written", 4_412_345),
        ] {
            m.count(name, n);
        }
        for (name, v) in [
            ("elapsed", 1.25e9),
            ("transaction_time", 0.5e9),
            ("transactions", 1000.4),
            ("files_created", 611.2),
            ("creation_alone", 2000.0),
            ("creation_mixed", 528.0),
            ("files_read", 486.0),
            ("files_appended", 514.0),
            ("files_deleted", 611.2),
            ("deletion_alone", 5280.0),
            ("deletion_mixed", 472.0),
            ("read_bw", 1_118_896.0),
            ("write_bw", 900.0),
        ] {
            m.push(name, "x", Better::Higher, v);
        }
        let text = report(&m);
        let want = "Time:\n\t1.25 seconds total\n\t0.50 seconds of transactions (1000 per second)\n\nFiles:\n\
            \t764 created (611 per second)\n\t\tCreation alone: 500 files (2000 per second)\n\
            \t\tMixed with transactions: 264 files (528 per second)\n\t243 read (486 per second)\n\
            \t257 appended (514 per second)\n\t764 deleted (611 per second)\n\
            \t\tDeletion alone: 528 files (5280 per second)\n\t\tMixed with transactions: 236 files (472 per second)\n\n\
            Data:\n\t1.33 megabytes read (1.07 megabytes per second)\n\t4.21 megabytes written (0.88 kilobytes per second)\n";
        assert_eq!(text, want);
        assert_eq!(scaled(0.0), "0.000000 bytes");
        assert_eq!(scaled(MEGABYTE), "1024.00 kilobytes", "PostMark's megabytes start above one");
    }
}
