//! The exec workload's parse and runs in a plain directory.

#![allow(clippy::unwrap_used)]

use super::*;
use std::sync::atomic::AtomicBool;

fn parse(spec: &str) -> Result<ExecWorkload, InputError> {
    ExecWorkload::from_spec(&Spec::parse(spec).unwrap())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fsarena-h8-exec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn bad_input_is_refused_by_name() {
    for (spec, want) in [
        ("exec", "exec needs cmd="),
        ("exec:cmd='true',builtin=build", "not both"),
        ("exec:cmd='fsarena-no-such-tool {mnt}'", "'fsarena-no-such-tool' is not found"),
        ("exec:cmd='true',setup='nope-fsarena-x'", "setup: 'nope-fsarena-x' is not found"),
        ("exec:cmd='ls \"{mnt}\"'", "inside quotes"),
        ("exec:cmd='ls {assets}'", "needs assets="),
        ("exec:cmd='true',assets=/nonexistent/fsarena", "assets=/nonexistent/fsarena"),
        ("exec:cmd='true',assets=/etc/hostname", "not a directory"),
        ("exec:builtin=compile", "not a builtin"),
        ("exec:builtin=compress,level=25", "gzip accepts 1 to 9"),
        ("exec:builtin=unpack,size=1m", "size= applies only to builtin=compress"),
        ("exec:cmd='true',files=3", "files= applies only"),
        ("exec:cmd=''", "the command is empty"),
        ("exec:cmnd=x", "did you mean 'cmd'"),
    ] {
        let e = parse(spec).unwrap_err();
        assert!(e.message.contains(want), "{spec}: {}", e.message);
    }
}

#[test]
fn a_command_runs_in_its_directory_with_placeholders_quoted() {
    let root = scratch("run");
    let assets = scratch("assets dir 'x'");
    std::fs::write(assets.join("in.txt"), "hello").unwrap();
    let spec = format!(
        "exec:cmd='cat {{assets}}/in.txt > out; test \"$(pwd)\" = \"$FSARENA_MNT\"; head -c 100000 /dev/zero > {{mnt}}/z',assets={}",
        assets.display()
    );
    let w = parse(&spec).unwrap();
    let stop = AtomicBool::new(false);
    let m = fsarena_workload::one(w.run(&RunEnv::quiet(&root, &stop)).unwrap());
    assert!(m.complete);
    assert!(m.metric("seconds").unwrap().value > 0.0);
    assert!(m.counters["wchar"] >= 100_000, "{:?}", m.counters);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0, "files left");
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&assets).unwrap();
}

#[test]
fn a_failing_command_fails_the_run_with_its_stderr_and_leaves_nothing() {
    let root = scratch("fail");
    let w = parse("exec:cmd='touch a; echo broken thing >&2; exit 4',teardown='touch {mnt}/td'").unwrap();
    let stop = AtomicBool::new(false);
    let e = w.run(&RunEnv::quiet(&root, &stop)).unwrap_err();
    assert!(e.message.contains("cmd failed (exit status 4)") && e.message.contains("broken thing"), "{}", e.message);
    assert_eq!(e.partial.len(), 1);
    assert!(!e.partial[0].complete);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0, "files left");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn builtins_give_one_result_per_step() {
    let w = parse("exec:builtin=unpack,files=60").unwrap();
    assert_eq!(w.parts(), vec!["unpack", "delete"]);
    let root = scratch("unpack");
    let stop = AtomicBool::new(false);
    let out = w.run(&RunEnv::quiet(&root, &stop)).unwrap();
    assert_eq!(out.len(), 2);
    assert!(out[0].counters["wchar"] > 60 * 1024, "{:?}", out[0].counters);
    let w = parse("exec:builtin=compress,size=2m,tool=gzip,level=1").unwrap();
    assert!(w.parts().is_empty());
    let m = fsarena_workload::one(w.run(&RunEnv::quiet(&root, &stop)).unwrap());
    assert!(m.metric("ratio").unwrap().value > 1.0);
    assert_eq!(m.counters["input_bytes"], 2 << 20);
    assert!(m.counters["rchar"] >= 2 << 20);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0, "files left");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn teardown_runs_after_a_failed_setup() {
    let root = scratch("teardown");
    let marker = root.with_extension("teardown-ran");
    let spec = format!("exec:cmd='true',setup='exit 7',teardown='touch {}'", marker.display());
    let e = parse(&spec).unwrap().run(&RunEnv::quiet(&root, &AtomicBool::new(false))).unwrap_err();
    assert!(e.message.contains("setup failed (exit status 7)"), "{}", e.message);
    assert!(marker.exists(), "teardown did not run");
    std::fs::remove_file(&marker).unwrap();
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0, "files left");
    std::fs::remove_dir_all(&root).unwrap();
}
