//! The `verify` workload end to end: nothing found on ext4 and xfs nor on the planted-bug
//! FUSE filesystem (crates/cli/examples/bugfs.rs) with its bugs off; its `stale_truncate` and
//! `flip_bit` bugs each found with the default settings, with the offset, the bytes and a
//! replay file that finds it again; `--strict-checks` turning findings into exit 3.

use crate::util::Bounded;
use crate::util::{json, run, stderr, TempDir, TestWorkdir};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The bugfs example: `cargo test --workspace` (make test) builds it with the tests;
/// `cargo test --test tests` does not, so it is built here, once (a no-op when it is fresh;
/// an older build of it would lack the modes the tests use).
pub(crate) fn bugfs() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // target/debug/fsarena → target/debug/examples/bugfs
            let bin = PathBuf::from(env!("CARGO_BIN_EXE_fsarena"));
            let path = bin.parent().unwrap().join("examples/bugfs");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut build = std::process::Command::new(cargo);
            build.args(["build", "-p", "fsarena-cli", "--example", "bugfs"]);
            // The features this test build has, so that the example `cargo test` built with
            // them is fresh (built with others, the whole crate was compiled again, ~90 s).
            let features: Vec<&str> = [("rocksdb", cfg!(feature = "rocksdb")), ("mpi", cfg!(feature = "mpi"))]
                .into_iter()
                .filter_map(|(name, on)| on.then_some(name))
                .collect();
            if !features.is_empty() {
                build.args(["--features", &features.join(",")]);
            }
            if bin.parent().unwrap().file_name().is_some_and(|d| d == "release") {
                build.arg("--release");
            }
            let out = build.bounded_output().expect("cargo runs");
            assert!(out.status.success(), "building bugfs: {}", String::from_utf8_lossy(&out.stderr));
            assert!(path.exists(), "{} after the build", path.display());
            path
        })
        .clone()
}

/// The fuse: target running bugfs with `bugs`.
fn target(bugs: &str) -> String {
    format!("fuse:cmd='{} --bugs={bugs} {{work}} {{mnt}}'", bugfs().display())
}

/// A verify run's (mismatches, bytes_verified, stderr, exit code) on `target`.
fn verify(target: &str, workload: &str, extra: &[&str]) -> (f64, f64, String, i32) {
    let wd = TestWorkdir::new(&format!("verify-{}", fastrand_name(target, workload)));
    let arg = wd.arg();
    let mut args = vec!["run", "--no-store", "--workdir", &arg, "--target", target, "--workload", workload];
    args.extend(["--output-format", "json"]);
    args.extend(extra);
    let out = run(&args);
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 3, "exit {code}: {}", stderr(&out));
    let doc = json(&out);
    let r = &doc["run"]["results"][0];
    let metric = |name: &str| r["metrics"][name]["mean"].as_f64().unwrap_or_else(|| panic!("{name}: {r}"));
    let found = (metric("mismatches"), metric("bytes_verified"), stderr(&out), code);
    // The log of operations of a mismatch is kept in the work directory (where it goes when
    // no opsfile= is given): the one file a run may leave there.
    let left: Vec<String> = wd.leftovers().into_iter().filter(|l| !l.ends_with(".fsxops")).collect();
    assert!(left.is_empty(), "{left:?}");
    found
}

/// A short distinct name for a test's work directory.
fn fastrand_name(target: &str, workload: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (target, workload).hash(&mut h);
    format!("{:x}", h.finish() & 0xffff_ffff)
}

#[test]
fn ext4_and_xfs_pass_fsx() {
    for t in ["ext4:size=256m", "xfs:size=512m"] {
        let (mismatches, bytes, err, code) = verify(t, "verify:numops=3000", &["--strict-checks"]);
        assert_eq!((mismatches, code), (0.0, 0), "{t}: {err}");
        assert!(bytes > 0.0, "{t}: nothing verified: {err}");
    }
}

#[test]
fn bugfs_with_its_bugs_off_passes() {
    let (mismatches, bytes, err, code) = verify(&target(""), "verify", &["--strict-checks"]);
    assert_eq!((mismatches, code), (0.0, 0), "{err}");
    assert!(bytes > 0.0, "{err}");
}

#[test]
fn stale_bytes_after_truncate_are_found_and_replay_finds_them_again() {
    let dir = TempDir::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let ops = format!("{}/stale.fsxops", dir.0);
    let (mismatches, _, err, code) = verify(&target("stale_truncate"), &format!("verify:opsfile={ops}"), &[]);
    assert_eq!((mismatches, code), (1.0, 0), "a finding is a result, exit 0 without --strict-checks: {err}");
    assert!(err.contains("verify: MISMATCH offset 0x") && err.contains("expected 0x00, found 0x"), "{err}");
    assert!(err.contains("LOG DUMP") && err.contains("truncate DOWN"), "{err}");
    let log = std::fs::read_to_string(&ops).unwrap();
    assert!(log.starts_with("# fsarena verify:mode=fsx seed=1 ") && log.contains(" *\n"), "{log}");
    // The replay file finds it again, and --strict-checks makes it exit 3.
    let (again, _, err, code) =
        verify(&target("stale_truncate"), &format!("verify:replay={ops}"), &["--strict-checks"]);
    assert_eq!((again, code), (1.0, 3), "{err}");
    assert!(err.contains("1 findings (--strict-checks)"), "{err}");
    // The same operations on bugfs without the bug: nothing.
    let (clean, _, err, code) = verify(&target(""), &format!("verify:replay={ops}"), &["--strict-checks"]);
    assert_eq!((clean, code), (0.0, 0), "{err}");
}

#[test]
fn a_flipped_bit_is_found() {
    let dir = TempDir::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let ops = format!("{}/flip.fsxops", dir.0);
    let (mismatches, _, err, code) =
        verify(&target("flip_bit"), &format!("verify:opsfile={ops}"), &["--strict-checks"]);
    assert_eq!((mismatches, code), (1.0, 3), "{err}");
    assert!(err.contains("verify: MISMATCH offset 0x"), "{err}");
    assert!(err.contains("1 findings (--strict-checks)"), "{err}");
}

#[test]
fn posix_failures_count_as_findings_under_strict_checks() {
    // fuse2fs-like refusals aside, bugfs has no chmod of its own directories' sticky bits
    // and no links: some posix cases fail there, and --strict-checks says how many.
    let out =
        run(&["run", "--no-store", "--target", &target(""), "--workload", "posix:family=link", "--strict-checks"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("findings (--strict-checks)"), "{err}");
}

#[test]
fn fill_reaches_enospc_and_back_with_every_byte_checked() {
    // tmpfs and fuse2fs (bounded images): filled, read back, half freed and refilled.
    for t in ["tmpfs:size=48m", "fuse2fs:size=64m"] {
        let (mismatches, bytes, err, code) = verify(t, "verify:mode=fill,bs=256k", &["--strict-checks"]);
        assert_eq!((mismatches, code), (0.0, 0), "{t}: {err}");
        // Everything written is read back once, and what the refill wrote once more.
        assert!(bytes >= 40.0 * 1048576.0, "{t}: {bytes} bytes verified: {err}");
    }
    // time_based: cycles until the runtime, with a per-second series.
    let wd = TestWorkdir::new("verify-fill-soak");
    let arg = wd.arg();
    let out = run(&[
        "run",
        "--no-store",
        "--workdir",
        &arg,
        "--output-format",
        "json",
        "--target",
        "tmpfs:size=16m",
        "--workload",
        "verify:mode=fill,bs=64k,filesize=4m,time_based=1,runtime=2s",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let r = &doc["run"]["results"][0];
    assert!(r["metrics"]["cycles"]["mean"].as_f64().unwrap() >= 2.0, "{r}");
    assert!(r["series"]["errors_per_s"].is_object() || r["series"].to_string().contains("errors_per_s"), "{r}");
    assert!(wd.leftovers().is_empty(), "{:?}", wd.leftovers());
    // Never on somebody's own directory: refused before anything is made.
    let out =
        run(&["run", "--no-store", "--workdir", &arg, "--target", "dir:path=/tmp", "--workload", "verify:mode=fill"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("kind dir") && stderr(&out).contains("tmpfs"), "{}", stderr(&out));
}

#[test]
fn concurrent_jobs_are_read_back_after_dropping_caches_and_after_a_remount() {
    let once = ["--repeat", "1", "--warmup", "0", "--strict-checks"];
    let w = "verify:mode=concurrent,numjobs=2,size=16m,verify_backlog=64";
    // ext4 on a loop device: written (backlog and pass), read back cold, read back after the
    // remount: every block three times.
    let (mismatches, bytes, err, code) = verify("ext4:size=256m", w, &once);
    assert_eq!((mismatches, code), (0.0, 0), "{err}");
    assert_eq!(bytes, 3.0 * 32.0 * 1048576.0, "{err}");
    // tmpfs cannot be remounted (its contents would go): that pass is listed, not dropped.
    let (mismatches, bytes, err, code) = verify("tmpfs:size=64m", w, &once);
    assert_eq!((mismatches, bytes, code), (0.0, 2.0 * 32.0 * 1048576.0, 0), "{err}");
    assert!(err.contains("verify.concurrent.remount: not run: this kind of target cannot be remounted"), "{err}");
}

#[test]
fn a_flipped_bit_is_found_by_the_concurrent_read_back() {
    let once = ["--repeat", "1", "--warmup", "0", "--strict-checks"];
    let w = "verify:mode=concurrent,numjobs=2,size=4m";
    let (mismatches, _, err, code) = verify(&target("flip_bit"), w, &once);
    assert!(mismatches > 0.0 && code == 3, "{mismatches} {code}: {err}");
    assert!(err.contains("verify.concurrent.cold: verify failed in ") && err.contains("blocks failed verify"), "{err}");
    let (clean, _, err, code) = verify(&target(""), w, &once);
    assert_eq!((clean, code), (0.0, 0), "{err}");
}
