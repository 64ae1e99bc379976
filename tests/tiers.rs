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

/// Every crate depends on crates/workspace-hack, which `cargo hakari generate` fills with the
/// union of the dependencies' features: `cargo test -p CRATE` then reuses the dependencies the
/// workspace build made instead of building them again with that crate's own features. A new
/// crate without the line would bring the rebuilds back (`cargo hakari manage-deps` adds it).
#[test]
fn every_crate_shares_the_workspace_hack() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut crates = 0;
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        if dir.ends_with("workspace-hack") {
            assert!(manifest.contains("### BEGIN HAKARI SECTION"), "{}", dir.display());
            continue;
        }
        crates += 1;
        assert!(
            manifest.contains("fsarena-workspace-hack = {"),
            "{}: no fsarena-workspace-hack dependency; run `cargo hakari manage-deps`",
            dir.display()
        );
    }
    assert!(crates >= 8, "{crates} crates");
}
