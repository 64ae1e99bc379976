//! The `exec` workload end to end: a command's wall clock, CPU and I/O on tmpfs and ext4, a
//! failing command (exit 1, its stderr shown, nothing left), a command not found (exit 2
//! before anything is created), and the compress builtin.

use crate::util::{require, run, stderr, stdout, Scratch};

/// The numbers after `key ` on the output's lines that have it, in order.
fn values(text: &str, key: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            if pair[0] == key {
                if let Ok(n) = pair[1].parse() {
                    out.push(n);
                }
            }
        }
    }
    out
}

#[test]
fn dd_in_the_target_is_timed_with_its_io_on_tmpfs_and_ext4() {
    let out = run(&[
        "run",
        "--target",
        "tmpfs:size=256m",
        "--target",
        "ext4:size=512m",
        "--workload",
        "exec:cmd='dd if=/dev/zero of={mnt}/x bs=1M count=8 conv=fsync'",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let seconds: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("seconds :")).collect();
    assert_eq!(seconds.len(), 2, "{text}");
    for line in seconds {
        assert!(!line.ends_with(": 0 s"), "{line}");
    }
    let wchar = values(&text, "wchar");
    assert_eq!(wchar.len(), 2, "{text}");
    assert!(wchar.iter().all(|&w| w >= 8 << 20), "{wchar:?}\n{text}");
    // tmpfs has no storage to dirty pages for; ext4 counts the 8 MiB it will write.
    let write_bytes = values(&text, "write_bytes");
    assert_eq!(write_bytes.len(), 2, "{text}");
    assert!(write_bytes[1] >= 8 << 20, "{write_bytes:?}\n{text}");
}

#[test]
fn a_failing_command_exits_1_with_its_stderr_and_leaves_nothing() {
    let dir = Scratch::new("exec-fail");
    let out = run(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "exec:cmd='mkdir d; touch d/f {mnt}/g; echo no space left, pretend >&2; exit 3'",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("cmd failed (exit status 3)") && err.contains("no space left, pretend"), "{err}");
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn a_command_not_found_exits_2_before_anything_is_created() {
    let dir = Scratch::new("exec-notfound");
    for (workload, want) in [
        ("exec:cmd='fsarena-no-such-program {mnt}'", "'fsarena-no-such-program' is not found"),
        ("exec:cmd='ls \"{mnt}\"'", "inside quotes"),
        ("exec:cmd='true',assets=/nonexistent/fsarena-assets", "assets=/nonexistent/fsarena-assets"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", workload]);
        assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{workload}: {}", stderr(&out));
        assert!(dir.leftovers().is_empty());
    }
}

#[test]
fn builtin_compress_runs_and_assets_are_copied_in() {
    require("gzip");
    let dir = Scratch::new("exec-compress");
    let out = run(&["run", "--target", &dir.spec(), "--workload", "exec:builtin=compress,size=4m,level=1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("compressed 4194304 bytes to "), "{text}");
    assert!(values(&text, "rchar")[0] >= 4 << 20, "{text}");
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());

    // A path with a space reaches the command as one argument.
    let assets = Scratch::new("exec-assets dir");
    std::fs::write(assets.path.join("in.txt"), vec![b'a'; 100_000]).expect("write");
    let spec = format!("exec:cmd='cp {{assets}}/in.txt {{mnt}}/copy',assets={}", assets.path.display());
    let out = run(&["run", "--target", &dir.spec(), "--workload", &spec]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(values(&stdout(&out), "wchar")[0] >= 100_000, "{}", stdout(&out));
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn ctrl_c_ends_the_command_group_even_when_it_ignores_sigterm() {
    let dir = Scratch::new("exec-sigint");
    let work = crate::util::TempDir::new();
    // The shell and its sleeps ignore SIGTERM (an ignored signal stays ignored across exec),
    // so only the SIGKILL after the grace period ends them.
    let child = crate::util::fsarena()
        .args(["run", "--repeat", "1", "--warmup", "0", "--no-store", "--workdir", &format!("{}/wd", work.0)])
        .args(["--target", &dir.spec(), "--workload", "exec:cmd='trap \"\" TERM; touch started; sleep 317; sleep 317'"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fsarena runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !dir.leftovers().iter().any(|p| p.ends_with("exec/started")) {
        assert!(std::time::Instant::now() < deadline, "the command never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT");
    let out = child.wait_with_output().expect("fsarena ends");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
    let sleeping = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x00317\x00"));
    assert!(!sleeping, "a sleep of the command survived");
}
