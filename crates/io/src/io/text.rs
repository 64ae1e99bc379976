//! An `io` result's closing block: fio client mode's "All clients" block, for a result of
//! several clients (MPI ranks or `clients=` mounts): every client's jobs together. Unlike
//! fio's, whose bandwidth adds the clients' own, its rates are the merged measurement's (all
//! clients' bytes over the common span) and its latencies come from the merged histogram.

use fsarena_core::fio_text::latency_lines;
use fsarena_core::run::{bold_line, ResultEntry};
use fsarena_core::units::{format_count, format_iec, format_si};
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, _entry: &ResultEntry, m: &Measurement) {
    all_clients(out, m);
}

/// The "All clients" block; nothing for a result of one client (no `client_fairness`).
fn all_clients(out: &mut String, m: &Measurement) {
    let Some(fairness) = m.metric("client_fairness") else { return };
    let clients = m.counters.keys().filter_map(|k| k.split_once('.')).filter(|(c, _)| c.starts_with("client"));
    let mut names: Vec<&str> = clients.map(|(c, _)| c).collect();
    names.dedup();
    let _ = writeln!(out, "All clients: (clients={}, jobs={}): err= 0", names.len(), m.jobs().len());
    for name in ["read", "write"] {
        let (Some(iops), Some(bw)) = (m.metric(&format!("{name}_iops")), m.metric(&format!("{name}_bw"))) else {
            continue;
        };
        let bytes = m.counters.get(&format!("{name}_bytes")).copied().unwrap_or(0);
        let span_ms = m.rates.get(&format!("{name}_bw")).map_or(0, |r| r.span_ns / 1_000_000);
        let line = format!(
            "  {name}: IOPS={}, BW={}/s ({}/s)({}/{span_ms}msec)",
            format_count(iops.value.floor()),
            format_iec(bw.value),
            format_si(bw.value),
            format_iec(bytes as f64),
        );
        bold_line(out, &line);
        if let Some(h) = m.latency(name) {
            latency_lines(out, "clat", &h.summary(&fsarena_core::FIO_PERCENTILES));
        }
    }
    let value = |n: &str| m.metric(n).map_or(0.0, |x| x.value);
    let _ = writeln!(
        out,
        "  per client   : bw min={}/s, max={}/s, fairness={:.2}",
        format_iec(value("client_bw_min")),
        format_iec(value("client_bw_max")),
        fairness.value
    );
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::{Better, LatencyHistogram};

    /// Two clients' merged measurement: 980 MB read in 2 s, latencies 1 to 1999 µs.
    fn two_clients() -> Measurement {
        let mut m = Measurement { complete: true, ..Default::default() };
        m.push_rate("read_bw", "B/s", "read_bytes", 980_000_000, 2_000_000_000);
        m.push("read_iops", "ops/s", Better::Higher, 9800.0);
        m.count("read_bytes", 980_000_000);
        m.push("client_fairness", "", Better::Higher, 0.93);
        m.push("client_bw_min", "B/s", Better::Higher, 2e8);
        m.push("client_bw_max", "B/s", Better::Higher, 3e8);
        m.count("client0.read_bytes", 100);
        m.count("client1.read_bytes", 200);
        let mut h = LatencyHistogram::new();
        for i in 1..2000u64 {
            h.record(i * 1000);
        }
        m.add_latency("read", &h);
        m
    }

    /// The block as the terminal report wrote it when it was the report's own (before the
    /// kind's), with the read line bold.
    #[test]
    fn several_clients_get_fio_clients_all_clients_block() {
        let mut out = String::new();
        text(&mut out, &ResultEntry::default(), &two_clients());
        assert_eq!(
            out,
            "All clients: (clients=2, jobs=0): err= 0\n\
             \x1b[1m  read: IOPS=9800, BW=467MiB/s (490MB/s)(935MiB/2000msec)\x1b[0m\n    \
             clat (nsec): min=1000, max=1999.0k, avg=1000000.00, stdev=577205.91\n    \
             clat percentiles (usec):\n     \
             |  1.00th=[   21],  5.00th=[  101], 10.00th=[  201], 20.00th=[  401],\n     \
             | 30.00th=[  601], 40.00th=[  801], 50.00th=[ 1002], 60.00th=[ 1201],\n     \
             | 70.00th=[ 1397], 80.00th=[ 1602], 90.00th=[ 1799], 95.00th=[ 1897],\n     \
             | 99.00th=[ 1979], 99.50th=[ 1987], 99.90th=[ 1995], 99.95th=[ 1999],\n     \
             | 99.99th=[ 1999]\n  \
             per client   : bw min=191MiB/s, max=286MiB/s, fairness=0.93\n"
        );
        let mut one = String::new();
        let mut m = two_clients();
        m.metrics.retain(|x| x.name != "client_fairness");
        text(&mut one, &ResultEntry::default(), &m);
        assert_eq!(one, "", "one client: no block");
    }
}
