//! Unit tests of the `posix` workload: options, patterns, and a run of a family in a
//! temporary directory.

#![allow(clippy::unwrap_used)]

use super::*;
use std::sync::atomic::AtomicBool;

fn workload(spec: &str) -> Result<PosixWorkload, InputError> {
    PosixWorkload::from_spec(&Spec::parse(spec).unwrap())
}

#[test]
fn patterns_match_whole_names() {
    assert!(matches("rename.*.ENOTEMPTY", "rename.dir_over_nonempty_dir.ENOTEMPTY"));
    assert!(matches("*", "x"));
    assert!(matches("rmdir.*", "rmdir.dot.EINVAL"));
    assert!(!matches("rmdir.*", "mkdir.dot.EINVAL"));
    assert!(!matches("rmdir", "rmdir.dot.EINVAL"), "no pattern character: the whole name");
    assert!(matches("*EINVAL", "rmdir.dot.EINVAL"));
    assert!(!matches("*EINVAL*x", "rmdir.dot.EINVAL"));
    assert!(matches("a*a", "aa") && !matches("aa*aa", "aaa"));
}

#[test]
fn families_and_cases_are_chosen_and_bad_ones_refused() {
    let w = workload("posix:family=rmdir").unwrap();
    assert_eq!(w.parts(), vec!["rmdir"]);
    let w = workload("posix:family=rmdir,case='rmdir.*.ENOTDIR'").unwrap();
    assert!(w.plan()[0].1.iter().all(|c| c.name.ends_with(".ENOTDIR")) && !w.plan()[0].1.is_empty());
    let e = workload("posix:family=rmdr").unwrap_err().to_string();
    assert!(e.contains("'rmdr' is not a posix family") && e.contains("rmdir"), "{e}");
    let e = workload("posix:family=rmdir,case=nothing.*").unwrap_err().to_string();
    assert!(e.contains("matches no case"), "{e}");
}

#[test]
fn the_family_option_lists_every_family() {
    let help = OPTIONS.iter().find(|o| o.doc.name == "family").unwrap().doc.doc;
    assert!(cases::FAMILIES.iter().all(|f| help.contains(f)), "{help}");
}

#[test]
fn every_case_is_named_family_what_expectation_once() {
    let all = cases::all();
    let mut seen = std::collections::BTreeSet::new();
    for c in &all {
        let parts: Vec<&str> = c.name.split('.').collect();
        assert_eq!(parts.len(), 3, "{}: family.what.expectation", c.name);
        assert!(cases::FAMILIES.contains(&parts[0]), "{}: unknown family", c.name);
        assert!(parts[1].chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'), "{}", c.name);
        assert!(seen.insert(c.name), "{} twice", c.name);
    }
}

#[test]
fn a_family_runs_as_root_in_fresh_directories_and_leaves_nothing() {
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fsarena-posix-test-{}", std::process::id()));
    std::fs::create_dir(&dir).unwrap();
    let stop = AtomicBool::new(false);
    let out = workload("posix:family=rmdir").unwrap().run(&RunEnv::quiet(&dir, &stop)).unwrap();
    assert_eq!(out.len(), 1);
    let m = &out[0];
    let failed: Vec<_> = m.verdicts.iter().filter(|v| v.outcome != Outcome::Pass).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(m.metric("passed").unwrap().value, m.verdicts.len() as f64);
    assert_eq!(m.counters["security.cases"], m.verdicts.iter().filter(|v| v.security).count() as u64);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing left");
    std::fs::remove_dir(&dir).unwrap();
}
