//! A `crash` result's closing block: the findings, one per crash state that broke a promise
//! (or that the filesystem's checker rejected), each with what was promised, what the
//! recovered image held, and the command that reproduces it. Built from the measurement's
//! verdicts alone, so it is the same for a stored run.

use fsarena_core::run::ResultEntry;
use fsarena_core::{Measurement, Outcome};
use std::fmt::Write as _;

/// Findings listed in full; the rest are counted.
const SHOWN: usize = 10;

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, _entry: &ResultEntry, m: &Measurement) {
    crash_summary(out, m);
}

/// Appends the block for `m`; nothing when it has no findings.
fn crash_summary(out: &mut String, m: &Measurement) {
    let unsupported: Vec<&str> = m
        .verdicts
        .iter()
        .filter(|v| v.outcome == Outcome::Unsupported)
        .map(|v| v.case.trim_start_matches("crash.unsupported."))
        .collect();
    if !unsupported.is_empty() {
        let _ = writeln!(out, "  unsupported by the filesystem (not run): {}", unsupported.join(", "));
    }
    let findings: Vec<_> = m.verdicts.iter().filter(|v| v.outcome == Outcome::Fail).collect();
    if findings.is_empty() {
        if m.metric("states_checked").is_some() {
            out.push_str(
                "  no violation: every crash state kept what its marks promised, and its checker found it clean\n",
            );
        }
        return;
    }
    let _ = writeln!(out, "  findings ({} shown of {}):", findings.len().min(SHOWN), findings.len());
    for v in findings.iter().take(SHOWN) {
        let case = v.case.trim_start_matches("crash.");
        let (found, rest) = v.actual.split_once("; reproduce: ").unwrap_or((&v.actual, ""));
        let _ = writeln!(out, "  - {case}");
        let _ = writeln!(out, "      promised: {}", v.expected);
        let _ = writeln!(out, "      found:    {found}");
        if !rest.is_empty() {
            let _ = writeln!(out, "      reproduce: {rest}");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::Verdict;

    #[test]
    fn findings_show_promise_finding_and_command() {
        let mut m = Measurement::default();
        m.push("states_checked", "states", fsarena_core::Better::Higher, 3.0);
        let mut out = String::new();
        crash_summary(&mut out, &m);
        assert!(out.contains("no violation"), "{out}");
        m.verdicts.push(Verdict {
            case: "crash.posix.link.fsync/f2".into(),
            security: false,
            outcome: Outcome::Fail,
            expected: "foo: 2 link(s)".into(),
            actual: "1 link(s); state f2 (at flush 2 of 3); reproduce: fsarena run --target ext4 --workload crash:only=link.fsync/f2"
                .into(),
        });
        let mut out = String::new();
        crash_summary(&mut out, &m);
        assert!(out.contains("posix.link.fsync/f2") && out.contains("promised: foo: 2 link(s)"), "{out}");
        assert!(out.contains("reproduce: fsarena run --target ext4"), "{out}");
    }
}
