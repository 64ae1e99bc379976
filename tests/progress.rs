//! What a run says on stderr while it runs: one plain line per event off a terminal (or with
//! `--log`), one live line on a terminal, nothing but the final warnings with `-q`, and each
//! warning once, at the end.

use crate::util::Bounded;
use crate::util::{json, run, stderr, stdout, Scratch, TempDir};
use std::process::Command;

/// A quick io workload that touches no file.
const NULL_SWEEP: &str = "io:ioengine=null,rw=read,bs=4k,size=1m,numjobs='1,2'";

fn no_controls(text: &str) {
    assert!(!text.contains(|c: char| c.is_control() && c != '\n'), "control characters in {text:?}");
}

#[test]
fn off_a_terminal_each_event_is_one_plain_line_naming_its_place_in_the_plan() {
    let dir = Scratch::new("progress-log");
    let target = dir.spec();
    for extra in [&[][..], &["--log"][..]] {
        let mut args =
            vec!["run", "--target", &target, "--workload", NULL_SWEEP, "--repeat", "2", "--warmup", "1", "--no-store"];
        args.extend_from_slice(extra);
        let out = run(&args);
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        no_controls(&err);
        assert!(err.lines().all(|l| l.starts_with("fsarena: ")), "{err}");
        assert_eq!(
            err.lines().next(),
            Some(
                "fsarena: plan: 2 steps × 1 target × (1+2) repetitions, duration not known beforehand (no step has a \
                 fixed runtime)"
            ),
            "{err}"
        );
        // One line per round, each naming target, workload, point and repetition.
        for (point, values) in [("point 1/2", "numjobs=1"), ("point 2/2", "numjobs=2")] {
            for round in ["warm-up 1/1", "repetition 1/2", "repetition 2/2"] {
                let head = format!("fsarena: target 1/1 · workload 1/1 · {point} · {round}: ");
                let tail = format!(" · io {values}");
                let n = err.lines().filter(|l| l.starts_with(&head) && l.ends_with(&tail)).count();
                assert_eq!(n, 1, "{head}...{tail} in {err}");
            }
        }
    }
}

#[test]
fn the_plan_line_estimates_time_based_jobs() {
    let dir = Scratch::new("progress-estimate");
    let out = run(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "io:ioengine=null,rw=read,bs=4k,size=1m,runtime=100ms,ramp_time=50ms,time_based=1",
        "--repeat",
        "2",
        "--warmup",
        "1",
        "--no-store",
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.starts_with("fsarena: plan: 1 step × 1 target × (1+2) repetitions, about 450ms\n"), "{err}");
    // --dry-run says it too: 2 points × (1+3) rounds × 2 s.
    let workload = "io:ioengine=null,size=1m,runtime=2s,time_based=1,numjobs='1,2'";
    let out = run(&["run", "--target", &dir.spec(), "--workload", workload, "--repeat", "3", "--dry-run"]);
    assert!(stdout(&out).contains("\nduration: about 16s\n"), "{}", stdout(&out));
}

#[test]
fn quiet_prints_results_and_no_progress() {
    let dir = Scratch::new("progress-quiet");
    let out = run(&[
        "run",
        "-q",
        "--log",
        "--target",
        &dir.spec(),
        "--workload",
        NULL_SWEEP,
        "--output-format",
        "json",
        "--no-store",
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // Repetitions of a null job may disagree: a warning is all -q may print.
    assert!(err.lines().all(|l| l.starts_with("fsarena: warning: ")), "{err}");
    assert_eq!(json(&out)["run"]["results"].as_array().map(Vec::len), Some(2), "{}", stdout(&out));
}

/// Regression: the page-cache warning came once per run but amid the events, and the CV
/// warnings after every workload; now every warning comes once, after all events.
#[test]
fn warnings_come_once_at_the_end() {
    // Not root: the cache cannot be dropped before each of the six measured repetitions.
    let dir = Scratch::new("progress-warnings");
    let work = TempDir::new();
    let ok = Command::new("chown").args(["65534:65534", dir.path.to_str().unwrap()]).status().unwrap().success();
    assert!(ok, "chown runs as root");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_fsarena")])
        .args(["run", "--target", &dir.spec(), "--workload", NULL_SWEEP, "--repeat", "3", "--warmup", "0"])
        .args(["--no-store", "--log", "--workdir", &format!("{}/work", work.0)])
        .env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here")
        .bounded_output()
        .expect("setpriv runs");
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    let first_warning = lines.iter().position(|l| l.starts_with("fsarena: warning: ")).expect("a warning");
    assert!(lines[first_warning..].iter().all(|l| l.starts_with("fsarena: warning: ")), "{err}");
    assert_eq!(err.matches("not root, so the page cache is not dropped").count(), 1, "{err}");
    assert!(err.matches("unstable").count() <= 1, "unstable results fold into one line: {err}");
}

#[test]
fn on_a_terminal_the_live_line_shows_position_and_eta_and_the_report_follows() {
    let dir = Scratch::new("progress-tty");
    let work = TempDir::new();
    let command = format!(
        "stty cols 200; {} run --target {} --workload io:ioengine=null,rw=read,bs=4k,size=1m,runtime=300ms,time_based=1 \
         --repeat 2 --warmup 0 --no-store --workdir {}/work",
        env!("CARGO_BIN_EXE_fsarena"),
        dir.spec(),
        work.0
    );
    // script(1) gives the run a terminal for stdout and stderr alike.
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here")
        .bounded_output()
        .expect("script runs");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("fsarena: plan: 1 step × 1 target × 2 repetitions, about 600ms"), "{text:?}");
    assert!(text.contains("target 1/1 · workload 1/1 · repetition 1/2: ") && text.contains("ETA"), "{text:?}");
    // The live line is cleared for good before the report is printed.
    let after_last_clear = text.rsplit("\u{1b}[2K").next().unwrap_or_default();
    assert!(after_last_clear.contains("IOPS=") && !after_last_clear.contains("ETA"), "{text:?}");
    // The plain per-round lines of a log are not there.
    assert!(!text.contains("fsarena: target 1/1"), "{text:?}");
}
