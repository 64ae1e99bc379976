//! `ratio A B`: B over A by the project's one comparison ([`fsarena_stats::ratio`]: the ratio
//! of geometric means with its 95% interval from Welch's t-test on the logarithms), for scripts
//! that compare fsarena with another tool (bench/vs_mdtest.sh). A and B are comma-separated
//! values, one per round; prints `value lo hi` (`lo` and `hi` are `-` without an interval).

// A command-line helper: what it prints is its whole output.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

fn values(arg: &str) -> Result<Vec<f64>, String> {
    arg.split(',').map(|v| v.trim().parse::<f64>().map_err(|e| format!("'{v}': {e}"))).collect()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b] = args.as_slice() else {
        eprintln!("usage: ratio A1,A2,... B1,B2,...   (prints B over A: value lo hi)");
        return ExitCode::from(2);
    };
    let (a, b) = match (values(a), values(b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("ratio: not a number: {e}");
            return ExitCode::from(2);
        }
    };
    match fsarena_stats::ratio(&a, &b) {
        Some(r) => {
            let (lo, hi) = r.ci95.map_or(("-".to_string(), "-".to_string()), |(l, h)| (format!("{l}"), format!("{h}")));
            println!("{} {lo} {hi}", r.value);
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("ratio: no ratio (a side is empty or A's centre is 0)");
            ExitCode::from(1)
        }
    }
}
