//! The test tiers: `make itest` runs this binary without the tests tests/slow.txt names, which
//! `make test` runs too. Every name there must be one of this binary's tests, exactly, so that
//! a renamed test is not silently run in the quick tier or skipped with nothing.

use std::process::Command;

#[test]
fn every_slow_test_named_for_make_itest_is_one_test_of_this_binary() {
    let listed = Command::new(std::env::current_exe().unwrap()).args(["--list", "--format", "terse"]).output().unwrap();
    assert!(listed.status.success());
    let tests: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    assert!(tests.len() > 100, "{} tests listed", tests.len());
    let slow = include_str!("slow.txt");
    let names: Vec<&str> =
        slow.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()).collect();
    assert!(!names.is_empty(), "tests/slow.txt names no test");
    for name in names {
        // `--skip NAME` skips every test whose name contains NAME.
        let matched: Vec<&String> = tests.iter().filter(|t| t.contains(name)).collect();
        assert_eq!(matched, vec![&name.to_string()], "tests/slow.txt: '{name}' must name exactly one test");
    }
}
