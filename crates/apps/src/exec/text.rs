//! An `exec` result's closing block: the child's I/O as /proc/PID/io counts it (bytes passed
//! to read and write calls, the calls, bytes fetched from and dirtied for storage) and its
//! page faults and context switches, as `/usr/bin/time -v` lists the latter. Built from the
//! measurement's counters alone, so it is the same for a stored run.

use fsarena_core::run::ResultEntry;
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, _entry: &ResultEntry, m: &Measurement) {
    exec_summary(out, m);
}

/// Appends the block for `m`; nothing when `m` holds no I/O counters (a failed step).
fn exec_summary(out: &mut String, m: &Measurement) {
    let counter = |name: &str| m.counters.get(name).copied();
    let (Some(rchar), Some(wchar)) = (counter("rchar"), counter("wchar")) else { return };
    let c = |name: &str| counter(name).unwrap_or(0);
    let _ = writeln!(out, "  I/O (/proc/PID/io, with its waited-for children):");
    let _ = writeln!(out, "    rchar {rchar} wchar {wchar} syscr {} syscw {}", c("syscr"), c("syscw"));
    let _ = writeln!(
        out,
        "    read_bytes {} write_bytes {} cancelled_write_bytes {}",
        c("read_bytes"),
        c("write_bytes"),
        c("cancelled_write_bytes")
    );
    let _ = writeln!(
        out,
        "  faults: major {} minor {}; context switches: voluntary {} involuntary {}",
        c("major_faults"),
        c("minor_faults"),
        c("voluntary_switches"),
        c("involuntary_switches")
    );
    if let (Some(input), Some(output)) = (counter("input_bytes"), counter("output_bytes")) {
        let _ = writeln!(out, "  compressed {input} bytes to {output}");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_block_lists_the_counters_and_is_empty_without_them() {
        let mut m = Measurement::default();
        let mut out = String::new();
        exec_summary(&mut out, &m);
        assert!(out.is_empty());
        for (k, v) in [("rchar", 10), ("wchar", 8 << 20), ("syscw", 8), ("write_bytes", 8 << 20), ("minor_faults", 3)] {
            m.count(k, v);
        }
        exec_summary(&mut out, &m);
        assert!(out.contains("    rchar 10 wchar 8388608 syscr 0 syscw 8\n"), "{out}");
        assert!(out.contains("read_bytes 0 write_bytes 8388608 cancelled_write_bytes 0"), "{out}");
        assert!(out.contains("faults: major 0 minor 3;"), "{out}");
    }
}
