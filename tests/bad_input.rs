//! Bad input: exit 2, one clear line naming the value and what is accepted, nothing created.

use crate::util::{run, stderr, stdout, Scratch};

fn refused(args: &[&str], dir: &Scratch, want: &str) {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2; stderr: {err}");
    assert!(err.contains(want), "{args:?}: stderr lacks '{want}': {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line expected: {err}");
    assert!(dir.leftovers().is_empty(), "{args:?} created {:?}", dir.leftovers());
}

#[test]
fn bad_workload_values_exit_2_before_anything_is_created() {
    let dir = Scratch::new("bad-input");
    let t = dir.spec();
    let cases = [
        ("io:rw=sideways,size=1m", "'sideways' is not an access pattern"),
        ("io:bs=0,size=1m", "bs=0"),
        ("io:bs=4x,size=1m", "'4x' is not a size"),
        ("io:bs=2m,size=1m", "larger than"),
        ("io:numjobs=0,size=1m", "numjobs=0"),
        ("io:colour=red,size=1m", "unknown io option 'colour'"),
        ("io:rw=read", "no size"),
        ("io:ioengine=io_uring,size=1m", "io_uring"),
        ("personality:x=1", "not supported yet"),
        ("meta:n=10", "unknown meta option 'n'"),
        ("io:cmd='unbalanced", "unbalanced single quote"),
    ];
    for (workload, want) in cases {
        refused(&["run", "--target", &t, "--workload", workload], &dir, want);
    }
}

#[test]
fn bad_targets_formats_and_files_exit_2() {
    let dir = Scratch::new("bad-input2");
    let t = dir.spec();
    let w = "io:size=1m";
    refused(&["run", "--target", "dir:path=/nonexistent/x", "--workload", w], &dir, "not an existing directory");
    refused(&["run", "--target", "zfs", "--workload", w], &dir, "unknown target kind 'zfs'");
    refused(&["run", "--target", "ext4:colour=red", "--workload", w], &dir, "unknown key 'colour' for target ext4");
    refused(&["run", "--target", "ext4:size=4q", "--workload", w], &dir, "size=4q");
    refused(&["run", "--target", "xfs:size=900t", "--workload", w], &dir, "does not fit");
    refused(&["run", "--target", "device:path=/dev/null,fs=ext4", "--workload", w], &dir, "--force");
    refused(&["run", "--target", "fuse:cmd='true'", "--workload", w], &dir, "has no {mnt}");
    refused(&["run", "--target", &format!("{t},color=red"), "--workload", w], &dir, "unknown key 'color'");
    refused(&["run", "--target", &t, "--workload", w, "--output-format", "xml"], &dir, "unknown output format 'xml'");
    refused(&["run", "--target", &t, "--fio", "/nonexistent.fio"], &dir, "cannot read fio job file");
    refused(&["run", "--workload", w], &dir, "no target");
    let job = dir.path.join("../fsarena-test-bad.fio");
    std::fs::write(&job, "[global]\nsize=1m\n[j]\nrw=randread\nzonemode=zbd\n").unwrap();
    refused(
        &["run", "--target", &t, "--fio", job.to_str().unwrap()],
        &dir,
        "fsarena-test-bad.fio:5: fio option 'zonemode' is not supported",
    );
    std::fs::write(&job, "[j]\nsize=1m\nbs=4k\nbs=1q\n").unwrap();
    refused(&["run", "--target", &t, "--fio", job.to_str().unwrap()], &dir, ":4: bs=1q");
    std::fs::remove_file(&job).unwrap();
    let toml = dir.path.join("../fsarena-test-bad.toml");
    std::fs::write(
        &toml,
        "targets = [\"dir:path=/dev/shm\"]\n[[workload]]\nkind = \"io\"\nrw = \"randread\"\nsize = \"1m\"\nbs = 0\n",
    )
    .unwrap();
    refused(&["run", toml.to_str().unwrap()], &dir, "[[workload]] #1: bs=0");
    std::fs::write(&toml, "targets = [\n").unwrap();
    refused(&["run", toml.to_str().unwrap()], &dir, "not a valid job file");
    std::fs::remove_file(&toml).unwrap();
}

#[test]
fn dry_run_prints_the_plan_and_creates_nothing() {
    let dir = Scratch::new("dry-run");
    let out =
        run(&["run", "--target", &dir.spec(), "--workload", "io:rw=randread,bs=4k,size=64m,numjobs=2", "--dry-run"]);
    assert!(out.status.success());
    let text = crate::util::stdout(&out);
    assert!(text.contains("rw=RandRead") && text.contains("numjobs=2"), "{text}");
    assert!(dir.leftovers().is_empty());
}

#[test]
fn help_man_page_and_completions_come_from_the_one_flag_table() {
    let help = stdout(&run(&["run", "--help"]));
    for flag in [
        "--target",
        "--workload",
        "--fio",
        "--repeat",
        "--warmup",
        "--db",
        "--no-store",
        "--workdir",
        "--output-format",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
    let man = stdout(&run(&["man"]));
    assert!(man.contains(".TH fsarena 1") && man.contains("side by side"), "{man}");
    let bash = stdout(&run(&["completions", "bash"]));
    assert!(bash.contains("--target") && bash.contains("--fail-on-regression"), "completions cover every subcommand");
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "an unknown shell is bad input");
}
