//! A `meta` result's closing block: mdtest's `SUMMARY rate` table over the measured
//! repetitions, in mdtest's layout, so that it reads, and diffs, like mdtest's own.

use fsarena_core::run::ResultEntry;
use fsarena_core::Measurement;
use fsarena_stats::{summarize, Summary};
use std::fmt::Write as _;

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, entry: &ResultEntry, _m: &Measurement) {
    mdtest_summary(out, entry);
}

/// mdtest's summary rows: metric, and the row label mdtest prints.
const MDTEST_ROWS: [(&str, &str); 10] = [
    ("dir_creation", "Directory creation"),
    ("dir_stat", "Directory stat"),
    ("dir_rename", "Directory rename"),
    ("dir_removal", "Directory removal"),
    ("file_creation", "File creation"),
    ("file_stat", "File stat"),
    ("file_read", "File read"),
    ("file_removal", "File removal"),
    ("tree_creation", "Tree creation"),
    ("tree_removal", "Tree removal"),
];

/// mdtest's `SUMMARY rate` table over the entry's measured repetitions (mdtest's iterations):
/// max, min, mean and sample standard deviation of each phase's rate, in mdtest's layout
/// (label `%-22s`, numbers ` %14.3f`), so that it reads, and diffs, like mdtest's own. Only
/// the phases that ran have a row.
fn mdtest_summary(out: &mut String, entry: &ResultEntry) {
    let rows: Vec<(&str, Summary)> = MDTEST_ROWS
        .iter()
        .filter_map(|(metric, label)| {
            let values: Vec<f64> =
                entry.measurements.iter().filter_map(|m| m.metric(metric)).map(|m| m.value).collect();
            Some((*label, summarize(&values)?))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nSUMMARY rate (in ops/sec): (of {} iterations)", entry.measurements.len());
    out.push_str("   Operation                     Max            Min           Mean        Std Dev\n");
    out.push_str("   ---------                     ---            ---           ----        -------\n");
    for (label, s) in rows {
        let _ = writeln!(out, "   {label:<22} {:14.3} {:14.3} {:14.3} {:14.3}", s.max, s.min, s.mean, s.stdev);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::Better;

    fn block_of(e: &ResultEntry) -> String {
        let mut out = String::new();
        text(&mut out, e, e.measurements.last().unwrap());
        out
    }

    #[test]
    fn meta_results_end_with_mdtests_summary_table() {
        // The two iterations of reference/mdtest.md 3.3, as two measured repetitions. Three
        // figures differ from mdtest's capture in the last digit: its inputs carry more
        // decimals than it prints.
        let rows: [(&str, f64, f64); 10] = [
            ("dir_creation", 17981.779, 9678.299),
            ("dir_stat", 184162.634, 99433.502),
            ("dir_rename", 35856.414, 34777.775),
            ("dir_removal", 930.307, 577.963),
            ("file_creation", 5981.071, 3125.548),
            ("file_stat", 703742.282, 173103.756),
            ("file_read", 83752.077, 74144.920),
            ("file_removal", 43907.460, 42945.825),
            ("tree_creation", 6168.094, 5295.838),
            ("tree_removal", 95.429, 64.595),
        ];
        let rep = |i: usize| {
            let mut m = Measurement { complete: true, ..Default::default() };
            for (name, a, b) in rows {
                m.push(name, "ops/s", Better::Higher, if i == 0 { a } else { b });
            }
            m.push("file_creation_items", "items", Better::Higher, 1000.0);
            m
        };
        let e = ResultEntry {
            target_label: "tmpfs".into(),
            workload_kind: "meta".into(),
            point: Vec::new(),
            part: None,
            measurements: vec![rep(0), rep(1)],
            ..Default::default()
        };
        let text = block_of(&e);
        let want = "
SUMMARY rate (in ops/sec): (of 2 iterations)
   Operation                     Max            Min           Mean        Std Dev
   ---------                     ---            ---           ----        -------
   Directory creation          17981.779       9678.299      13830.039       5871.447
   Directory stat             184162.634      99433.502     141798.068      59912.544
   Directory rename            35856.414      34777.775      35317.094        762.713
   Directory removal             930.307        577.963        754.135        249.145
   File creation                5981.071       3125.548       4553.309       2019.160
   File stat                  703742.282     173103.756     438423.019     375218.100
   File read                   83752.077      74144.920      78948.499       6793.286
   File removal                43907.460      42945.825      43426.643        679.979
   Tree creation                6168.094       5295.838       5731.966        616.778
   Tree removal                   95.429         64.595         80.012         21.803
";
        assert!(text.ends_with(want), "{text}");
        // A run of some phases only has rows for those.
        let mut m = Measurement { complete: true, ..Default::default() };
        m.push("file_creation", "ops/s", Better::Higher, 1234.5);
        let e = ResultEntry { workload_kind: "meta".into(), measurements: vec![m], ..Default::default() };
        let text = block_of(&e);
        assert!(text.ends_with("(of 1 iterations)\n   Operation                     Max            Min           Mean        Std Dev\n   ---------                     ---            ---           ----        -------\n   File creation                1234.500       1234.500       1234.500          0.000\n"), "{text}");
    }
}
