//! The `tree` workload end to end.

use crate::util::{json, run, stderr, Scratch, SmallTmpfs};

#[test]
fn a_size_list_is_a_sweep_with_one_result_per_size_and_leaves_nothing() {
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
    let results = v["run"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "one result per size: {v}");
    for (r, (size, bytes)) in results.iter().zip([("4k", 4096.0), ("64k", 65536.0)]) {
        assert_eq!(r["workload"]["point"]["file_size"]["given"], size, "{r}");
        assert_eq!(r["workload"]["point"]["file_size"]["number"], bytes, "{r}");
        let m = &r["metrics"];
        let value = |name: &str| m[name]["values"][0].as_f64().unwrap_or_else(|| panic!("{name}: {m}"));
        for name in [
            "files_created",
            "dirs_created",
            "write_bw",
            "files_deleted",
            "create_lat_p50",
            "create_lat_p99",
            "delete_lat_p99",
        ] {
            assert!(value(name) > 0.0, "{name} at {size}");
        }
        // Unsuffixed names; the counts are not metrics.
        let names: Vec<&String> = m.as_object().unwrap().keys().collect();
        assert!(names.iter().all(|n| !n.ends_with("_items") && !n.ends_with(&format!("_{size}"))), "{names:?}");
        assert!((value("write_bw") / value("files_created") - bytes).abs() < 1e-6 * bytes);
        assert_eq!(m["write_bw"]["unit"], "bytes/s");
    }
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
fn an_fsmark_command_line_with_loops_gives_one_result_per_loop() {
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
    let results = v["run"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "{v}");
    for (n, r) in results.iter().enumerate() {
        assert_eq!(r["workload"]["part"], format!("loop {}", n + 1));
        let m = &r["metrics"];
        let value = |name: &str| m[name]["values"][0].as_f64().unwrap_or_else(|| panic!("{name}: {m}"));
        assert!(value("files_created") > 0.0);
        assert_eq!(m["fs_used"]["unit"], "%");
        assert!((value("write_bw") / value("files_created") - 4096.0).abs() < 1e-6);
        // 2 threads × 20 files × 3 loops, all kept until the end, then deleted once: the
        // deletion is timed over every loop's files and reported with the last loop.
        assert_eq!(m.get("files_deleted").is_some(), n == 2, "loop {}: {m}", n + 1);
    }
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
