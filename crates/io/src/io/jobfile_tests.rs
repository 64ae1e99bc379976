//! Unit tests of `jobfile.rs`.

use super::super::options::Rw;
use super::*;

#[test]
fn globals_apply_to_the_jobs_below() {
    let f = parse_str(
        "; comment\n[global]\nrw=randread\nsize=128m\n# another\n\n[job1]\n\n[job2]\nbs=64k\ntime_based\nruntime=5\n",
        "t.fio",
    )
    .unwrap();
    assert_eq!(f.jobs.len(), 2);
    assert_eq!(f.jobs[0].options.name, "job1");
    assert_eq!(f.jobs[0].options.rw, Rw::RandRead);
    assert_eq!(f.jobs[0].options.size, Some(128 << 20));
    assert_eq!(f.jobs[1].options.bs, [65536; 2]);
    assert!(f.jobs[1].options.time_based);
    assert!(!f.jobs[0].options.time_based);
    assert_eq!(f.global_options, vec![("rw".into(), "randread".into()), ("size".into(), "128m".into())]);
    assert_eq!(f.jobs[1].given[1], ("time_based".into(), String::new()));
}

#[test]
fn options_are_listed_as_fio_lists_them_in_its_json() {
    // Each pair as fio 3.33 printed it (`fio --output-format=json`): names, not aliases;
    // filename after the rest; the engine's own options last; each [global] on its own.
    let keys = |pairs: &[(String, String)]| pairs.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    let f = parse_str(
        "[global]\nfilename=/x/f\nsize=1m\n[global]\nioengine=psync\nbs=4k\n\
         [a]\nfilename=/x/g\nblocksize=8k\ntime_based\nruntime=1\nrw=read\n",
        "t.fio",
    )
    .unwrap();
    assert_eq!(keys(&f.global_options), ["size", "filename", "ioengine", "bs"]);
    assert_eq!(keys(&f.jobs[0].given), ["bs", "time_based", "runtime", "rw", "filename"]);
    assert_eq!(f.jobs[0].given[0], ("bs".into(), "8k".into()));
    let net = parse_str(
        "[global]\nioengine=net\nport=8888\nprotocol=tcp\nbs=4k\nsize=1m\n[r]\nlisten\nrw=read\n",
        "netio.fio",
    )
    .unwrap();
    assert_eq!(keys(&net.global_options), ["ioengine", "bs", "size", "port", "protocol"]);
    assert_eq!(keys(&net.jobs[0].given), ["rw", "listen"]);
    // fio's names where fio has two: `iodepth_batch` (alias iodepth_batch_submit) and
    // `rate_min` (alias ratemin), as fio 3.33's options.c names them.
    let named = parse_str("[j]\niodepth_batch_submit=4\nratemin=1k\nsize=1m\n", "t.fio").unwrap();
    assert_eq!(keys(&named.jobs[0].given), ["iodepth_batch", "rate_min", "size"]);
}

#[test]
fn every_engine_option_listed_last_is_an_option_under_its_own_name() {
    // A renamed or removed engine option would fall back into the section's order unseen.
    for name in ENGINE_OPTIONS {
        let def = super::super::options::find(name).unwrap_or_else(|| panic!("{name} is no io option"));
        assert_eq!(def.name, *name, "{name} is an alias of {}", def.name);
    }
}

#[test]
fn a_later_global_affects_only_later_jobs() {
    let f = parse_str("[global]\nsize=1m\n[a]\n[global]\nrw=write\n[b]\n", "t.fio").unwrap();
    assert_eq!(f.jobs[0].options.rw, Rw::Read);
    assert_eq!(f.jobs[1].options.rw, Rw::Write);
}

#[test]
fn study_job_file_runs_unchanged() {
    let f = parse_str(
        "[global]\nioengine=psync\ndirect=1\nbs=128k\nsize=10g\nnumjobs=4\ntime_based\nruntime=120\ngroup_reporting\n\n[seqread]\nrw=read\nstonewall\n[seqwrite]\nrw=write\nstonewall\n",
        "study.fio",
    )
    .unwrap();
    assert_eq!(f.jobs.len(), 2);
    assert!(f.jobs.iter().all(|j| j.options.direct && j.options.numjobs == 4 && j.options.stonewall));
}

#[test]
fn errors_name_file_line_and_option() {
    let cases = [
        ("[a]\nsize=1m\nzonemode=zbd\n", "t.fio:3", "zonemode"),
        ("[a]\nsize=1m\nbs=4q\n", "t.fio:3", "not a size"),
        ("size=1m\n[a]\n", "t.fio:1", "before any [section]"),
        ("[a\n", "t.fio:1", "neither a [section] header"),
        ("[global]\nsize=1m\n", "t.fio", "no job"),
        ("[a]\nrw=read\n", "t.fio:1", "no size"),
        ("[a]\nsize=${FSARENA_SURELY_UNSET}\n", "t.fio:2", "not set"),
    ];
    for (text, at, what) in cases {
        let e = parse_str(text, "t.fio").unwrap_err().to_string();
        assert!(e.starts_with(at) && e.contains(what), "{text:?}: {e}");
    }
}

#[test]
fn every_problem_of_a_file_is_reported_then_counted() {
    let text = "[global]\nsize=1m\n[a]\nbs=4q\nzonemode=zbd\n[b\nrw=write\n[c]\nrw=sideways\nnumjobs=0\n[d]\nnumjobs=0\n[e]\nsize=${FSARENA_SURELY_UNSET}\n";
    let e = parse_str(text, "t.fio").unwrap_err().to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 8, "{e}");
    assert!(lines[0].starts_with("t.fio:4: bs=4q"), "{e}");
    assert!(lines[1].starts_with("t.fio:5: fio option 'zonemode'"), "{e}");
    assert!(lines[2].starts_with("t.fio:6: this line is neither"), "{e}");
    assert!(lines[3].starts_with("t.fio:9: rw=sideways"), "{e}");
    // A job with a bad line still has its other problems said (a second run found them).
    assert!(lines[4].starts_with("t.fio:8 (job 'c'): numjobs=0"), "{e}");
    assert!(lines[5].starts_with("t.fio:11 (job 'd'): numjobs=0"), "{e}");
    // ... but not one that names the bad line's option: not also "no size".
    assert!(lines[6].starts_with("t.fio:14: environment variable"), "{e}");
    assert_eq!(lines[7], "t.fio: 7 problems in this job file: fix them all and run again");
    // A file with a problem on every line says the first 20 and counts them all.
    let e = parse_str(&"not a job file\n".repeat(500), "t.fio").unwrap_err().to_string();
    assert_eq!(e.lines().count(), 21, "{e}");
    assert!(e.ends_with("t.fio: 500 problems in this job file (the first 20 shown): fix them all and run again"));
    // One problem alone is one line, as before.
    let e = parse_str("[a]\nsize=1m\nbs=4q\n", "t.fio").unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn inline_comments_aliases_and_output_options_are_accepted() {
    let f = parse_str(
        "[global]\nsize=1m ; per job\nbs=8k # blocks\nthreads=1\ndescription=a test ; of comments\nclat_percentiles=1\nlat_percentiles=1\npercentile_list=50:99:99.9\nwrite_bw_log\nwrite_lat_log=lat\nwrite_iops_log=io\nwrite_hist_log=h\nlog_avg_msec=500\nlog_hist_msec=1000\ngtod_reduce=1\nrandom_generator=lfsr\nstartdelay=1\ncreate_on_open=1\nexitall\nratemin=1k\n[j] ; the job\nrw=read\n",
        "t.fio",
    )
    .unwrap();
    let o = &f.jobs[0].options;
    assert_eq!((o.size, o.bs), (Some(1 << 20), [8192; 2]));
    assert_eq!(o.outputs.description.as_deref(), Some("a test"));
    assert_eq!(o.outputs.percentile_list, Some(vec![50.0, 99.0, 99.9]));
    assert!(o.outputs.clat_percentiles && o.outputs.lat_percentiles && o.outputs.gtod_reduce);
    assert_eq!(o.outputs.write_bw_log.as_deref(), Some(""));
    assert_eq!(o.outputs.write_lat_log.as_deref(), Some("lat"));
    assert_eq!((o.outputs.log_avg_msec, o.outputs.log_hist_msec), (500, 1000));
    assert_eq!(o.startdelay, fsarena_core::Nanos(1_000_000_000));
    assert!(o.create_on_open && o.exitall);
    assert_eq!(o.ratemin, [1024, 1024]);
    assert!(parse_str("[j]\nsize=1m\npercentile_list=0:101\n", "t.fio").is_err());
    assert!(parse_str("[j]\nsize=1m\nrandom_generator=mt\n", "t.fio").is_err());
    let e = parse_str("[j]\nsize=1m\nrw=trim\n", "t.fio").unwrap_err().to_string();
    assert!(e.contains("Inappropriate ioctl for device"), "{e}");
}

#[test]
fn a_global_name_does_not_rename_the_sections() {
    let f = parse_str("[global]\nname=all\nsize=1m\n[first]\n[second]\nname=renamed\n", "t.fio").unwrap();
    let names: Vec<&str> = f.jobs.iter().map(|j| j.options.name.as_str()).collect();
    assert_eq!(names, ["first", "renamed"]);
    assert_eq!(f.global_options[0], ("name".into(), "all".into()));
}

/// A scratch directory of its own for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fsarena-h2-jobfile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn non_files_and_large_files_are_refused_without_reading_them_whole() {
    let t = std::time::Instant::now();
    let e = parse_file(Path::new("/dev/zero")).unwrap_err().to_string();
    assert!(e.contains("/dev/zero is a character device"), "{e}");
    let dir = scratch("sizes");
    let fifo = dir.join("fifo.fio");
    rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o600), 0)
        .unwrap();
    let e = parse_file(&fifo).unwrap_err().to_string();
    assert!(e.contains("is a FIFO"), "{e}");
    let e = parse_file(&dir).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
    let big = dir.join("big.fio");
    std::fs::write(&big, "; padding\n".repeat(200_000)).unwrap();
    let e = parse_file(&big).unwrap_err().to_string();
    assert!(e.contains("larger than the 1 MiB"), "{e}");
    // The same through an include, and from a TOML job file's reader.
    std::fs::write(dir.join("main.fio"), "include /dev/zero\n[j]\nsize=1m\n").unwrap();
    let e = parse_file(&dir.join("main.fio")).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:1: ", dir.join("main.fio").display())) && e.contains("character device"), "{e}");
    assert!(read_job_text(&big, "job file").unwrap_err().to_string().contains("1 MiB"));
    assert!(t.elapsed().as_secs() < 5);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn include_fan_out_is_refused_fast() {
    // Six files, each including the next ten times: 10^5 copies of the last if expanded.
    let dir = scratch("fanout");
    for i in 0..6 {
        let body =
            if i == 5 { "[global]\nsize=1m\n".to_string() } else { format!("include f{}.fio\n", i + 1).repeat(10) };
        std::fs::write(dir.join(format!("f{i}.fio")), body).unwrap();
    }
    let t = std::time::Instant::now();
    let e = parse_file(&dir.join("f0.fio")).unwrap_err().to_string();
    assert!(e.contains("more than 64 include directives"), "{e}");
    assert!(t.elapsed().as_secs() < 2, "took {:?}", t.elapsed());
    // Deep nesting, and 4 MiB of text in all from files of under 1 MiB each.
    std::fs::write(dir.join("loop.fio"), "include loop.fio\n").unwrap();
    let e = parse_file(&dir.join("loop.fio")).unwrap_err().to_string();
    assert!(e.contains("nested too deeply"), "{e}");
    std::fs::write(dir.join("pad.fio"), "; padding\n".repeat(90_000)).unwrap();
    std::fs::write(dir.join("wide.fio"), "include pad.fio\n".repeat(6)).unwrap();
    let e = parse_file(&dir.join("wide.fio")).unwrap_err().to_string();
    assert!(e.contains("more than 4 MiB of text"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_that_is_not_a_job_file_is_never_echoed() {
    let dir = scratch("echo");
    let secret = "root:$6$Zm9vYmFy$c2VjcmV0aGFzaA:19000:0:99999:7:::";
    std::fs::write(dir.join("shadow"), format!("{secret}\n")).unwrap();
    std::fs::write(dir.join("main.fio"), "[j]\nsize=1m\ninclude shadow\n").unwrap();
    let e = parse_file(&dir.join("main.fio")).unwrap_err().to_string();
    assert!(e.contains("shadow:1") && e.contains("neither a [section] header nor an option=value line"), "{e}");
    assert!(!e.contains("Zm9v") && !e.contains("root"), "{e}");
    for text in [
        format!("[j]\nsize=1m\n{secret}=1\n"),
        format!("[j]\nsize=1m\nkey with spaces {secret}\n"),
        format!("[j]\nsize=1m\nbs=${{{secret}}}\n"),
        format!("[j]\nsize=1m\nbs=${{{secret}\n"),
        format!("[{secret}\n"),
    ] {
        let e = parse_str(&text, "t.fio").unwrap_err().to_string();
        assert!(!e.contains("Zm9v"), "{text:?}: {e}");
    }
    // A value is quoted, cut.
    let e = parse_str(&format!("[j]\nsize=1m\nbs={}\n", "9".repeat(5000)), "t.fio").unwrap_err().to_string();
    assert!(e.len() < 400 && e.contains("t.fio:3: bs=999"), "{e}");
    let bin = dir.join("bin.fio");
    std::fs::write(&bin, b"[j]\nsize=1m\n\xff\xfe secret\n").unwrap();
    let e = parse_file(&bin).unwrap_err().to_string();
    assert!(e.contains("bin.fio:3 is not UTF-8 text") && !e.contains("secret"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bom_and_empty_includes_get_clear_answers() {
    let dir = scratch("bom");
    std::fs::write(dir.join("bom.fio"), "\u{feff}[global]\nsize=1m\n[j]\nrw=read\n").unwrap();
    assert_eq!(parse_file(&dir.join("bom.fio")).unwrap().jobs[0].options.size, Some(1 << 20));
    assert_eq!(parse_str("\u{feff}[j]\nsize=1m\n", "t.fio").unwrap().jobs.len(), 1);
    std::fs::write(dir.join("empty.fio"), "\n  \n").unwrap();
    std::fs::write(dir.join("main.fio"), "include empty.fio\n[j]\nsize=1m\n").unwrap();
    let e = parse_file(&dir.join("main.fio")).unwrap_err().to_string();
    assert!(e.contains("main.fio:1: included file") && e.contains("empty.fio is empty"), "{e}");
    std::fs::write(dir.join("main.fio"), "[j]\nsize=1m\ninclude   \n").unwrap();
    let e = parse_file(&dir.join("main.fio")).unwrap_err().to_string();
    assert!(e.contains("main.fio:3: include without a file name"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn section_names_are_plain_names() {
    for (text, want) in [
        ("[/some/dir/victim]\nsize=1m\n", "t.fio:1: section name '/some/dir/victim' is not a plain name"),
        ("[..]\nsize=1m\n", "t.fio:1: section name '..' is not a plain name"),
        ("[a/../../b]\nsize=1m\n", "holds '/'"),
        ("[j]\nsize=1m\nname=../x\n", "name: '../x' is not a plain name"),
        ("[j]\nsize=1m\nfilename=../passwd\n", "filename: '../passwd' is not a plain name"),
    ] {
        let e = parse_str(text, "t.fio").unwrap_err().to_string();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

#[test]
fn include_and_unreadable_files() {
    let dir = std::env::temp_dir().join(format!("fsarena-jobfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("common.fio"), "[global]\nsize=2m\n").unwrap();
    std::fs::write(dir.join("main.fio"), "include common.fio\n[j]\nrw=write\n").unwrap();
    let f = parse_file(&dir.join("main.fio")).unwrap();
    assert_eq!(f.jobs[0].options.size, Some(2 << 20));
    let e = parse_file(&dir.join("missing.fio")).unwrap_err().to_string();
    assert!(e.contains("cannot read fio job file"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_jobs_problems_are_all_said_in_one_run() {
    // Each of these used to show only its first problem; fixing it revealed the next.
    let e = parse_str("[j]\nsize=1m\nnumjobs=0\nnrfiles=0\nloops=0\n", "t.fio").unwrap_err().to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 4, "{e}");
    for (line, want) in lines.iter().zip(["numjobs=0", "nrfiles=0", "loops=0"]) {
        assert!(line.starts_with("t.fio:1 (job 'j'): ") && line.contains(want), "{e}");
    }
    // A bad value in [global] still lets the jobs below be checked for the rest.
    let e = parse_str("[global]\nbs=4q\n[j]\nsize=1m\nnumjobs=0\n", "t.fio").unwrap_err().to_string();
    assert!(e.contains("t.fio:2: bs=4q") && e.contains("(job 'j'): numjobs=0") && e.contains("2 problems"), "{e}");
    // ... and not for what the bad option would have given.
    let e = parse_str("[global]\nsize=4q\n[j]\nrw=read\n", "t.fio").unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn an_unreadable_include_is_one_problem_among_the_others() {
    let dir = scratch("include-problems");
    std::fs::write(dir.join("main.fio"), "include missing.fio\n[j]\nsize=1m\nbs=4q\ninclude\n").unwrap();
    let e = parse_file(&dir.join("main.fio")).unwrap_err().to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 4, "{e}");
    assert!(lines[0].contains("main.fio:1") && lines[0].contains("missing.fio"), "{e}");
    assert!(lines[1].contains("main.fio:5: include without a file name"), "{e}");
    assert!(lines[2].contains("main.fio:4: bs=4q"), "{e}");
    assert!(lines[3].contains("3 problems"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reserved_words_take_this_hosts_values() {
    let host = Host { pagesize: 16384, mb_memory: 1000, ncpus: 3 };
    let f = parse_str_on("[j]\nbs=$pagesize\nsize=$mb_memory*1024*1024/2\nnumjobs=$ncpus\n", "t.fio", &host).unwrap();
    let o = &f.jobs[0].options;
    assert_eq!((o.bs, o.size, o.numjobs), ([16384; 2], Some(500 << 20), 3));
    // fio's "job options" show the value computed, as fio's JSON does.
    assert_eq!(f.jobs[0].given[1], ("size".to_string(), "524288000".to_string()));
    let e = parse_str_on("[j]\nsize=1m\nbs=2k-$pagesize\n", "t.fio", &host).unwrap_err().to_string();
    assert!(e.starts_with("t.fio:3: bs: fio computes this value with bc"), "{e}");
    let e = parse_str_on("[j]\nsize=(1m*2)\n", "t.fio", &host).unwrap_err().to_string();
    assert!(e.starts_with("t.fio:2: size=(1m*2)") || e.contains("'(1m*2)' is not a size"), "{e}");
}

#[test]
fn new_group_starts_a_reporting_group_and_stonewall_a_stage_as_fio_numbers_them() {
    // fio's groupid: stonewall and new_group each start a group, except on the first job;
    // only stonewall makes the jobs before it end first.
    let f = parse_str(
        "[global]\nsize=1m\n[a]\nstonewall\n[b]\nnew_group\n[c]\n[d]\nstonewall\n[e]\nnew_group\nstonewall\n[f]\n",
        "g.fio",
    )
    .unwrap();
    let w = crate::io::IoWorkload::from_job_file(f);
    let stages: Vec<Vec<&str>> =
        w.groups().iter().map(|s| s.iter().map(|j| j.options.name.as_str()).collect()).collect();
    assert_eq!(stages, vec![vec!["a", "b", "c"], vec!["d"], vec!["e", "f"]]);
    assert_eq!(w.group_ids(), vec![vec![0, 1, 1], vec![2], vec![3, 3]]);
}

#[test]
fn wait_for_names_one_other_job_of_this_stage_or_an_earlier_one() {
    let ok = "[global]\nsize=1m\n[w]\nrw=write\n[r]\nnew_group\nwait_for=w\n[late]\nstonewall\nwait_for=r\n";
    parse_str(ok, "ok.fio").unwrap();
    for (text, says) in [
        ("[a]\nsize=1m\nwait_for=a\n", "a job cannot wait for itself"),
        ("[a]\nsize=1m\nwait_for=nobody\n", "no job is named 'nobody'"),
        (
            "[a]\nsize=1m\nwait_for=b\n[b]\nsize=1m\nstonewall\n",
            "waiting for a job of a later stage is not supported by fsarena",
        ),
        ("[a]\nsize=1m\nwait_for=b\n[b]\nsize=1m\nwait_for=a\n", "jobs that wait for each other never start"),
    ] {
        let e = parse_str(text, "bad.fio").err().unwrap_or_else(|| panic!("accepted: {text}")).to_string();
        assert!(e.contains(says), "{text}: {e}");
        assert!(e.contains("bad.fio"), "{e}");
    }
}

#[test]
fn a_path_as_filename_is_run_as_its_last_component_and_a_directory_is_refused() {
    let f = parse_str("[a]\nsize=1m\nfilename=/tmp/data\n", "p.fio").unwrap();
    assert_eq!(f.jobs[0].options.filename.as_deref(), Some("data"));
    assert_eq!(f.jobs[0].options.filename_path.as_deref(), Some("/tmp/data"));
    let w = crate::io::IoWorkload::from_job_file(f);
    let described = fsarena_workload::Workload::describe(&w).join("\n");
    assert!(described.contains("filename=/tmp/data: run as 'data' in the target"), "{described}");
    let plain = parse_str("[a]\nsize=1m\nfilename=data\n", "p.fio").unwrap();
    assert_eq!(plain.jobs[0].options.filename_path, None);
    // A relative path is refused, as on the command line.
    let e = parse_str("[a]\nsize=1m\nfilename=sub/data\n", "p.fio").err().unwrap().to_string();
    assert!(e.contains("is not a plain name"), "{e}");
    for bad in ["/tmp/", "/tmp/..", "/tmp/."] {
        let e = parse_str(&format!("[a]\nsize=1m\nfilename={bad}\n"), "p.fio").err().unwrap().to_string();
        assert!(e.contains("names no file"), "{bad}: {e}");
    }
}
