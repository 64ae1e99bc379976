//! An `io` result's closing block: fio client mode's "All clients" block, for a result of
//! several clients (MPI ranks or `clients=` mounts): every client's jobs together. Unlike
//! fio's, whose bandwidth adds the clients' own, its rates are the merged measurement's (all
//! clients' bytes over the common span) and its latencies come from the merged histogram.
//! Under MPI on several hosts, a "Hosts" block follows: one row per host, its ranks merged.

use fsarena_core::fio_text::latency_lines;
use fsarena_core::run::{bold_line, ResultEntry};
use fsarena_core::units::{format_count, format_iec, format_si};
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, _entry: &ResultEntry, m: &Measurement) {
    all_clients(out, m);
    hosts(out, m);
}

/// The "Hosts" block of a run on several hosts: each host's row from its `host.NAME.*`
/// counters (its ranks' measurements merged exactly on rank 0), then the fairness between the
/// hosts. Nothing for a run on one host.
fn hosts(out: &mut String, m: &Measurement) {
    let mut names: Vec<&str> = Vec::new();
    for key in m.counters.keys() {
        if let Some(name) = key.strip_prefix("host.").and_then(|k| k.strip_suffix(".ranks")) {
            names.push(name);
        }
    }
    if names.len() < 2 && !m.counters.keys().any(|k| k.starts_with("host.") && k.ends_with(".ops")) {
        return;
    }
    let ranks: u64 = names.iter().filter_map(|h| m.counters.get(&format!("host.{h}.ranks"))).sum();
    let _ = writeln!(out, "Hosts: (hosts={}, ranks={ranks})", names.len());
    let counter = |h: &str, k: &str| m.counters.get(&format!("host.{h}.{k}")).copied();
    for h in &names {
        let mut line = format!("  {h:<13}: ranks={}", counter(h, "ranks").unwrap_or(0));
        for dir in ["read", "write"] {
            let Some(iops) = counter(h, &format!("{dir}_iops")) else { continue };
            let bw = counter(h, &format!("{dir}_bw")).unwrap_or(0) as f64;
            let _ = write!(line, ", {dir}: IOPS={}, BW={}/s", format_count(iops as f64), format_iec(bw));
            if let (Some(mean), Some(p99)) =
                (counter(h, &format!("{dir}_lat_mean_ns")), counter(h, &format!("{dir}_lat_p99_ns")))
            {
                let _ = write!(line, ", clat avg={:.1}us p99={:.1}us", mean as f64 / 1e3, p99 as f64 / 1e3);
            }
        }
        // A repetition a host's loss cut short: what the host had done when the run stopped.
        if let (Some(ops), Some(bytes)) = (counter(h, "ops"), counter(h, "bytes")) {
            let _ = write!(
                line,
                ", done before the run stopped: {} ops, {}",
                format_count(ops as f64),
                format_iec(bytes as f64)
            );
        }
        let _ = writeln!(out, "{line}");
    }
    if let Some(fairness) = m.metric("host_fairness") {
        let value = |n: &str| m.metric(n).map_or(0.0, |x| x.value);
        let _ = writeln!(
            out,
            "  per host     : bw min={}/s, max={}/s, fairness={:.2}",
            format_iec(value("host_bw_min")),
            format_iec(value("host_bw_max")),
            fairness.value
        );
    }
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

    #[test]
    fn several_hosts_get_a_row_each_and_their_fairness() {
        let mut m = Measurement { complete: true, ..Default::default() };
        for (h, ranks, bw, iops) in [("c1", 2, 175_000_000, 2676), ("c2", 2, 150_000_000, 2341)] {
            m.count(&format!("host.{h}.ranks"), ranks);
            m.count(&format!("host.{h}.write_bw"), bw);
            m.count(&format!("host.{h}.write_iops"), iops);
            m.count(&format!("host.{h}.write_lat_mean_ns"), 970_400);
            m.count(&format!("host.{h}.write_lat_p99_ns"), 4_104_192);
        }
        m.push("host_fairness", "ratio", Better::Higher, 150.0 / 175.0);
        m.push("host_bw_min", "bytes/s", Better::Higher, 150e6);
        m.push("host_bw_max", "bytes/s", Better::Higher, 175e6);
        let mut out = String::new();
        text(&mut out, &ResultEntry::default(), &m);
        assert_eq!(
            out,
            "Hosts: (hosts=2, ranks=4)\n  \
             c1           : ranks=2, write: IOPS=2676, BW=167MiB/s, clat avg=970.4us p99=4104.2us\n  \
             c2           : ranks=2, write: IOPS=2341, BW=143MiB/s, clat avg=970.4us p99=4104.2us\n  \
             per host     : bw min=143MiB/s, max=167MiB/s, fairness=0.86\n"
        );
        // One host: no block.
        let mut one = Measurement::default();
        one.count("host.c1.ranks", 2);
        let mut out = String::new();
        text(&mut out, &ResultEntry::default(), &one);
        assert_eq!(out, "");
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
