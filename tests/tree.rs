//! The `tree` workload end to end.

use crate::util::{json, run, stderr, Scratch, SmallTmpfs};

#[test]
fn a_size_sweep_reports_every_size_and_leaves_nothing() {
    let dir = Scratch::new("tree-sweep");
    let out = run(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "tree:levels=3,dirs_per_level=4,files_per_dir=5,file_size='4k,64k',threads=2,fsync=none",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let m = &v["run"]["results"][0]["metrics"];
    for size in ["4k", "64k"] {
        let value = |name: &str| {
            m[format!("{name}_{size}")]["values"][0].as_f64().unwrap_or_else(|| panic!("{name}_{size}: {m}"))
        };
        assert_eq!(value("files_created_items"), 120.0);
        assert_eq!(value("dirs_created_items"), 24.0);
        assert_eq!(value("files_deleted_items"), 120.0);
        for name in [
            "files_created",
            "dirs_created",
            "write_bw",
            "files_deleted",
            "create_lat_p50",
            "create_lat_p99",
            "delete_lat_p99",
        ] {
            assert!(value(name) > 0.0, "{name}_{size}");
        }
    }
    assert_eq!(m["write_bw_64k"]["unit"], "bytes/s");
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn a_filesystem_that_fills_exits_1_and_leaves_nothing() {
    // 1-byte files, each taking a 4 KiB page of the 2 MiB tmpfs: the bytes fit the target's
    // size, the pages do not.
    let fs = SmallTmpfs::new("tree-enospc", "2m");
    let out =
        run(&["run", "--target", &fs.dir.spec(), "--workload", "tree:dirs_per_level=10,files_per_dir=100,file_size=1"]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    assert!(stderr(&out).contains("No space left on device"), "{}", stderr(&out));
    assert!(fs.dir.leftovers().is_empty(), "left: {:?}", fs.dir.leftovers());
}

#[test]
fn bad_tree_options_exit_2() {
    let dir = Scratch::new("tree-bad");
    for (workload, want) in [
        ("tree:fsync=always", "expected none, file or end"),
        ("tree:levels=0", "levels=0"),
        ("tree:depth=2", "unknown tree option 'depth'"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", workload]);
        assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{workload}: {}", stderr(&out));
        assert!(dir.leftovers().is_empty());
    }
}

#[test]
fn an_fsmark_command_line_with_loops_reports_every_loop() {
    let dir = Scratch::new("tree-fsmark");
    let out = run(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "tree:fsmark='-n 20 -s 4096 -S 0 -L 3 -t 2'",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let m = &v["run"]["results"][0]["metrics"];
    let value = |name: &str| m[name]["values"][0].as_f64().unwrap_or_else(|| panic!("{name}: {m}"));
    for n in 1..=3 {
        assert!(value(&format!("files_created_loop{n}")) > 0.0);
        assert_eq!(m[format!("fs_used_loop{n}")]["unit"], "%");
    }
    // 2 threads × 20 files × 3 loops, all kept until the end, then deleted.
    assert_eq!(value("files_created_items"), 120.0);
    assert_eq!(value("files_deleted_items"), 120.0);
    assert!((value("write_bw") / value("files_created") - 4096.0).abs() < 1e-6);
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn unsupported_fsmark_flags_exit_2_naming_the_flag() {
    let dir = Scratch::new("tree-fsmark-bad");
    for (workload, want) in [
        ("tree:fsmark='-d /tmp -n 10'", "-d (the test directory"),
        ("tree:fsmark='-n 10 -S 5'", "-S 5 (fsync after all files) is not supported"),
        ("tree:fsmark='-n 10 -Z'", "unknown fs_mark flag -Z"),
        ("tree:fsmark='-n 100 -D 8'", "without -N"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", workload]);
        assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{workload}: {}", stderr(&out));
        assert!(dir.leftovers().is_empty());
    }
}
