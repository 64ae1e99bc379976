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

/// A fresh directory for a test that needs root (the cases switch users), `None` without.
fn root_scratch(what: &str) -> Option<std::path::PathBuf> {
    if !rustix::process::geteuid().is_root() {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("fsarena-posix-{what}-{}", std::process::id()));
    std::fs::create_dir(&dir).unwrap();
    Some(dir)
}

#[test]
fn a_family_runs_as_root_in_fresh_directories_and_leaves_nothing() {
    let Some(dir) = root_scratch("test") else { return };
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

#[test]
fn every_table_parses_and_names_each_rust_case_once() {
    let mut table = 0;
    for (file, text, coded) in cases::TABLES {
        let built = table::build(file, text, coded).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(built.len(), text.lines().filter(|l| l.starts_with("case ") || l.starts_with("rust ")).count());
        table += built.iter().filter(|c| matches!(c.run, cases::Run::Table(_))).count();
    }
    assert_eq!(cases::all().len(), table + cases::TABLES.iter().map(|(_, _, coded)| coded.len()).sum::<usize>());
}

#[test]
fn table_errors_name_the_file_and_line() {
    let e = table::parse("x.cases", "case a.b.c\n  frobnicate f\n").unwrap_err();
    assert_eq!(e, "x.cases:2: not a step: `frobnicate f`");
    let e = table::parse("x.cases", "  touch f 0644\n").unwrap_err();
    assert!(e.starts_with("x.cases:1: a step outside"), "{e}");
    let e = table::parse("x.cases", "case a.b.c\n  expect EWHAT rmdir d\n").unwrap_err();
    assert!(e.contains("not an errno: EWHAT"), "{e}");
    let e = table::build("x.cases", "rust a.b.c\n", &[]).unwrap_err();
    assert!(e.contains("names no case"), "{e}");
}

#[test]
fn a_table_case_fails_with_the_label_it_is_written_with() {
    let Some(dir) = root_scratch("table") else { return };
    let text = "case rmdir.x.y\n  touch f 0644\n  expect ENOENT rmdir f -- rmdir f (a file)\n  is perm f 0600\n";
    let Some(table::Entry::Table { steps, .. }) = table::parse("x.cases", text).unwrap().pop() else { panic!() };
    let probes = ctx::Probes::default();
    let c = ctx::Ctx { dir: dir.clone(), probes: &probes };
    let r = std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: CLONE_FS only, as run_case does: this thread's own working directory.
            unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FS) }.unwrap();
            rustix::process::chdir(&dir).unwrap();
            table::run(&c, &steps)
        })
        .join()
        .unwrap()
    });
    assert_eq!(r, Err(check::fail("rmdir f (a file)", "ENOENT", "ENOTDIR")));
    cleanup::remove(&dir).unwrap();
}
