//! The `postmark` workload end to end: beside Debian's postmark 1.53 with the same parameters,
//! on tmpfs and ext4, the counts of PostMark's report ("Files:" and "Data:") are the same.

use crate::util::Bounded;
use crate::util::{require, run, stderr, stdout, Scratch};
use std::process::Command;

/// The lines of each "Files:" and "Data:" block in `text`, without the rates (which are
/// times, not counts): `764 created`, `Creation alone: 500 files`, ..., `4.21 megabytes written`.
fn count_blocks(text: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines().map(str::trim) {
        if line == "Files:" {
            current = Some(Vec::new());
            continue;
        }
        let Some(block) = current.as_mut() else { continue };
        if line.is_empty() || line == "Data:" {
            continue;
        }
        let counted = line.split(" (").next().unwrap_or(line).to_string();
        let last = counted.ends_with(" written");
        block.push(counted);
        if last {
            blocks.extend(current.take());
        }
    }
    blocks
}

/// Debian's postmark with `config`'s commands, in a scratch directory; its output.
fn postmark(name: &str, config: &str) -> String {
    let tool = require("postmark");
    let dir = Scratch::new(name);
    std::fs::create_dir_all(&dir.path).unwrap();
    let file = dir.path.join("pm.cfg");
    std::fs::write(&file, format!("{}\nrun\nquit\n", config.replace("; ", "\n"))).unwrap();
    let out = Command::new(tool).arg(&file).current_dir(&dir.path).bounded_output().expect("postmark runs");
    assert!(out.status.success(), "postmark: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("out of files"), "{text}");
    text
}

/// Byte totals stay under 16 MiB, where PostMark's float sums are exact: then "Data:" agrees
/// to the last printed digit too.
const CONFIGS: &[(&str, &str)] = &[
    ("defaults", "set transactions 2000"),
    (
        "full-table",
        // bias create 6 fills the table of 2 × number slots: creations then do nothing.
        "set number 200; set transactions 1500; set size 100 12000; set subdirectories 5; set read 1000; \
         set write 700; set buffering false; set bias read 3; set bias create 6; set seed 1234",
    ),
];

#[test]
fn the_counts_equal_debians_postmark_on_tmpfs_and_ext4() {
    for (name, config) in CONFIGS {
        let reference = count_blocks(&postmark(&format!("postmark-ref-{name}"), config));
        assert_eq!(reference.len(), 1, "one report from postmark");
        assert_eq!(reference[0].len(), 10, "{:?}", reference[0]);
        let workload = format!("postmark:postmark='{config}'");
        let out = run(&[
            "run",
            "--target",
            "tmpfs:size=256m",
            "--target",
            "ext4:size=512m",
            "--workload",
            &workload,
            "--output-format",
            "human",
            "--no-store",
        ]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let ours = count_blocks(&stdout(&out));
        assert_eq!(ours.len(), 2, "one report per target: {}", stdout(&out));
        for block in &ours {
            assert_eq!(block, &reference[0], "{name}: fsarena (left) and postmark (right)");
        }
    }
}

#[test]
fn keys_and_postmark_lines_run_the_same_and_leave_nothing() {
    let dir = Scratch::new("postmark-keys");
    let mut blocks = Vec::new();
    for workload in [
        "postmark:number=100,transactions=300,size='200 3000',bias_read=8,seed=5",
        "postmark:postmark='set number 100; set transactions 300; set size 200 3000; set bias read 8; set seed 5'",
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", workload, "--no-store"]);
        assert!(out.status.success(), "{workload}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("Time:\n\t") && text.contains("seconds of transactions ("), "{text}");
        blocks.push(count_blocks(&text));
        assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
    }
    assert_eq!(blocks[0], blocks[1]);
    assert!(blocks[0][0][0].ends_with(" created"), "{:?}", blocks[0]);
}

#[test]
fn bad_postmark_input_exits_2_naming_the_value() {
    let dir = Scratch::new("postmark-bad");
    for (workload, want) in [
        ("postmark:postmark='set nmber 5'", "unknown command"),
        ("postmark:size='9000 500'", "the smallest size 9000 is larger than the largest 500"),
        ("postmark:bias_read=11", "'11' is not a bias: expected 0 to 10"),
        ("postmark:postmark='set bias create 12'", "'12' is not a bias"),
        ("postmark:flies=3", "unknown postmark option 'flies'"),
        ("postmark:number=10,transactions=5000", "runs out of files after"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", workload]);
        assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{workload}: {}", stderr(&out));
        assert!(dir.leftovers().is_empty());
    }
}
