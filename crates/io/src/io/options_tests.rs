//! Unit tests of `options.rs`.

use super::table::{parse_bssplit, ENGINE_WORDS, SECOND};
use super::*;

fn with(pairs: &[(&str, &str)]) -> Result<IoOptions, InputError> {
    let mut o = IoOptions::default();
    for (k, v) in pairs {
        o.set(k, v)?;
    }
    o.validate()?;
    Ok(o)
}

#[test]
fn defaults_are_fios() {
    let o = with(&[("size", "1m")]).unwrap();
    assert_eq!(o.rw, Rw::Read);
    assert_eq!(o.bs, [4096, 4096]);
    assert_eq!(o.ioengine, IoEngine::Psync);
    let q = o.queue_depth();
    assert_eq!((q.depth, q.batch_submit, q.complete_min, q.complete_max, q.low), (1, 1, 1, 1, 1));
    assert_eq!(o.rwmixread, 50);
    assert!(o.invalidate && !o.direct && !o.norandommap);
}

#[test]
fn study_options() {
    let o = with(&[
        ("ioengine", "psync"),
        ("rw", "read"),
        ("bs", "128k"),
        ("direct", "1"),
        ("group_reporting", "1"),
        ("fallocate", "none"),
        ("time_based", "1"),
        ("runtime", "120"),
        ("numjobs", "4"),
        ("nrfiles", "1"),
        ("size", "10G"),
    ])
    .unwrap();
    assert_eq!(o.bs, [131072; 2]);
    assert_eq!(o.size, Some(10 << 30));
    assert_eq!(o.runtime, Some(Nanos(120 * SECOND)));
    assert!(o.direct && o.time_based && o.group_reporting);
    assert_eq!(o.fallocate, Fallocate::None);
}

#[test]
fn queue_depth_options_follow_fio() {
    let o = with(&[("ioengine", "null"), ("iodepth", "32"), ("iodepth_batch", "0"), ("size", "1m")]).unwrap();
    let q = o.queue_depth();
    assert_eq!((q.depth, q.batch_submit, q.complete_min, q.complete_max, q.low), (32, 32, 1, 1, 32));
    assert_eq!(o.engine_config(4096).depth, 32);
    assert!(o.engine_caps().diskless && !o.engine_caps().sync);
    let o = with(&[
        ("ioengine", "null"),
        ("iodepth", "16"),
        ("iodepth_batch_complete", "4"),
        ("iodepth_batch_complete_max", "2"),
        ("iodepth_low", "8"),
        ("size", "1m"),
    ])
    .unwrap();
    let q = o.queue_depth();
    assert_eq!((q.complete_min, q.complete_max, q.low), (4, 4, 8));
    // psync is synchronous: one buffer, whatever iodepth says
    let o = with(&[("iodepth", "64"), ("size", "1m")]).unwrap();
    assert_eq!((o.queue_depth().depth, o.engine_config(4096).depth), (1, 1));
    // null at iodepth=1 is synchronous, as fio's
    assert!(with(&[("ioengine", "null"), ("size", "1m")]).unwrap().engine_caps().sync);
}

#[test]
fn bssplit_fills_blank_shares() {
    assert_eq!(parse_bssplit("4k/10:64k/50:32k/40").unwrap(), vec![(4096, 10), (65536, 50), (32768, 40)]);
    assert_eq!(parse_bssplit("4k/50:8k:16k").unwrap(), vec![(4096, 50), (8192, 25), (16384, 25)]);
    assert!(parse_bssplit("4k/50:8k/20").is_err());
}

#[test]
fn bad_values_name_the_key_and_what_is_accepted() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("rw", "sideways"), ("size", "1m")], "expected read, write"),
        (&[("bs", "0"), ("size", "1m")], "bs=0"),
        (&[("bs", "4q"), ("size", "1m")], "not a size"),
        (&[("bs", "2m"), ("size", "1m")], "larger than"),
        (&[("numjobs", "0"), ("size", "1m")], "numjobs=0"),
        (&[("colour", "red")], "unknown io option 'colour': accepted"),
        (&[("numjob", "4")], "unknown io option 'numjob': did you mean 'numjobs'? accepted"),
        (&[("ioengine", "io_uring"), ("hipri", "1"), ("size", "1m")], "hipri=1 needs direct=1"),
        (&[("ioengine", "io_uring"), ("nonvectored", "2"), ("size", "1m")], "nonvectored"),
        (&[("ioengine", "splice"), ("size", "1m")], "ioengine=splice is fio's but not supported by fsarena"),
        (&[("iodepth", "0"), ("size", "1m")], "iodepth=0"),
        (&[("iodepth", "100000"), ("size", "1m")], "at most 65536"),
        (&[("iodepth_batch", "x"), ("size", "1m")], "not a whole number"),
        (&[("ioengine", "null"), ("rw", "write"), ("verify", "crc32c"), ("size", "1m")], "needs data on disk"),
        (&[("rw", "read")], "no size"),
        (&[("time_based", "1"), ("size", "1m")], "needs runtime"),
        (&[("name", "/some/dir/victim"), ("size", "1m")], "name: '/some/dir/victim' is not a plain name"),
        (&[("name", ".."), ("size", "1m")], "not a plain name"),
        (&[("filename", "../../etc/passwd"), ("size", "1m")], "filename: '../../etc/passwd'"),
        (&[("filename", "a\nb"), ("size", "1m")], "control character"),
    ];
    for (pairs, want) in cases {
        let err = with(pairs).unwrap_err().to_string();
        assert!(err.contains(want), "{pairs:?}: '{err}' lacks '{want}'");
    }
}

#[test]
fn fio_job_file_options_of_issue_10() {
    let o = with(&[("size", "2m"), ("io_limit", "8m"), ("numjobs", "3"), ("offset_increment", "1m")]).unwrap();
    assert_eq!((o.job_size(), o.file_size()), (8 << 20, Some(2 << 20)));
    assert_eq!((o.clone_offset(0), o.clone_offset(2)), (0, 2 << 20));
    assert_eq!(o.file_name(1, 2), "io.1.2");
    let o = with(&[("size", "2m"), ("name", "j"), ("filename_format", "$jobname-$jobnum-$filenum.dat")]).unwrap();
    assert_eq!(o.file_name(3, 1), "j-3-1.dat");
    assert!(with(&[("size", "2m"), ("filename_format", "../$jobname")]).is_err());
    let o = with(&[("size", "4m"), ("rw", "write:8k")]).unwrap();
    assert_eq!((o.rw, o.rw_skip), (Rw::Write, 8192));
    let o = with(&[("size", "4m"), ("rw", "randread:8")]).unwrap();
    assert_eq!((o.rw, o.rw_skip, o.rw_seq_nr), (Rw::RandRead, 0, 8));
    // fio reads N with atoi.
    assert_eq!(with(&[("size", "4m"), ("rw", "randrw:3k")]).unwrap().rw_seq_nr, 3);
    assert!(with(&[("size", "4m"), ("rw", "randread:0")]).is_err());
    let o = with(&[("size", "4m"), ("rw", "read:-8k"), ("rw_sequencer", "identical")]).unwrap();
    assert_eq!((o.rw_skip, o.rw_sequencer_identical), (-8192, true));
    assert!(with(&[("size", "4m"), ("rw", "read:-8k"), ("offset", "1m")])
        .unwrap_err()
        .to_string()
        .contains("backwards"));
    assert!(with(&[("size", "4m"), ("rw", "read:6k")]).unwrap_err().to_string().contains("multiple of bs"));
    let o = with(&[("size", "4m"), ("random_distribution", "zoned:60/10:30/20:10/70")]).unwrap();
    assert_eq!(o.random_distribution, Distribution::Zoned(vec![(60, 10), (30, 20), (10, 70)]));
    assert!(with(&[("size", "4m"), ("random_distribution", "zoned:60/10:30/20")]).is_err());
    // fio 3.33: a size left out or 0 shares what the others leave; sizes may stop short of 100.
    for (given, zones) in [
        ("zoned:50/5:30/15:20/", vec![(50, 5), (30, 15), (20, 80)]),
        ("zoned:50/5:30:20/0", vec![(50, 5), (30, 47), (20, 47)]),
        ("zoned:60/10:40/10", vec![(60, 10), (40, 10)]),
        ("zoned:60/10:40/10::10/10", vec![(60, 10), (40, 10)]),
    ] {
        let o = with(&[("size", "4m"), ("random_distribution", given)]).unwrap();
        assert_eq!(o.random_distribution, Distribution::Zoned(zones), "{given}");
    }
    for bad in ["zoned:50/60:50/60", "zoned:50/5:40/5", "zoned:x/5:100/5"] {
        assert!(with(&[("size", "4m"), ("random_distribution", bad)]).is_err(), "{bad}");
    }
}

#[test]
fn bsrange_is_a_range_per_direction() {
    let o = with(&[("size", "4m"), ("bsrange", "4k-16k")]).unwrap();
    assert_eq!(o.bsrange, [Some((4096, 16384)); 2]);
    assert_eq!((o.min_bs(), o.max_bs()), (4096, 16384));
    let o = with(&[("size", "4m"), ("blocksize_range", "8k-24k,4k-8k"), ("rw", "randrw")]).unwrap();
    assert_eq!(o.bsrange, [Some((8192, 24576)), Some((4096, 8192))]);
    assert_eq!((o.min_bs_of(1), o.max_bs_of(0)), (4096, 24576));
    let o = with(&[("size", "4m"), ("bssplit", "4k/50:8k/50,16k/100"), ("rw", "randrw")]).unwrap();
    assert_eq!(o.bssplit, [vec![(4096, 50), (8192, 50)], vec![(16384, 100)]]);
    for bad in ["4k", "16k-4k", "3k-12k", "4k-10k", "4k-8k,8k-16k,1k-2k"] {
        assert!(with(&[("size", "4m"), ("bsrange", bad)]).is_err(), "{bad}");
    }
}

#[test]
fn fio_version_number_ios_and_thinktime_read_as_fio_reads_them() {
    let o = with(&[("size", "4m"), ("fio_version", "3.42")]).unwrap();
    assert_eq!(o.fio_version, FioVersion::V3_42);
    assert!(!o.fixed_block_seed());
    assert!(with(&[("size", "4m")]).unwrap().fixed_block_seed());
    assert!(with(&[("size", "4m"), ("fio_version", "3.40")]).is_err());
    let o = with(&[("size", "4m"), ("number_ios", "1k"), ("thinktime", "250"), ("thinktime_spin", "1ms")]).unwrap();
    assert_eq!((o.number_ios, o.thinktime, o.thinktime_spin), (1024, Nanos(250_000), Nanos(1_000_000)));
    assert!(with(&[("size", "4m"), ("thinktime_blocks", "0")]).is_err());
    assert!(with(&[("size", "4m"), ("thinktime_blocks_type", "issue")]).unwrap().thinktime_blocks_issue);
}

#[test]
fn the_table_agrees_with_default_and_the_engine_registry() {
    fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    let engines: Vec<&str> = fsarena_engine::ENGINES.iter().map(|e| e.name).collect();
    assert_eq!(engines, ENGINE_WORDS);
}

#[test]
fn rate_options_are_fios_or_refused() {
    // Accepted as fio 3.33 accepts them.
    let o = with(&[
        ("size", "1m"),
        ("rw", "randread"),
        ("rate_iops", "50"),
        ("rate_process", "poisson"),
        ("io_submit_mode", "offload"),
        ("ioengine", "libaio"),
        ("iodepth", "32"),
        ("rate_cycle", "500"),
        ("rate_ignore_thinktime", "1"),
    ])
    .unwrap();
    assert!(o.rate_poisson && o.offload && o.rate_ignore_thinktime && o.rate_cycle == 500);
    // rate_iops is a byte rate of the smallest block; rate= wins when both were allowed.
    assert_eq!(o.rate_bps(0), 50 * 4096);
    let o = with(&[("size", "1m"), ("bsrange", "8k-64k"), ("rate_iops", "10")]).unwrap();
    assert_eq!(o.rate_bps(0), 10 * 8192);
    assert!(with(&[("size", "1m"), ("rate_min", "1k")]).unwrap().rate_checked());
    // The offload queue: iodepth I/Os out across the workers, the batch options unused.
    let q = with(&[("size", "1m"), ("io_submit_mode", "offload"), ("iodepth", "8"), ("iodepth_batch", "4")])
        .unwrap()
        .queue_depth();
    assert_eq!((q.depth, q.batch_submit, q.complete_min, q.low), (8, 1, 1, 8));
    assert!(!with(&[("size", "1m"), ("io_submit_mode", "offload")]).unwrap().engine_caps().sync);
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("size", "1m"), ("rate_process", "uniform")], "expected linear or poisson"),
        (&[("size", "1m"), ("io_submit_mode", "async")], "expected inline or offload"),
        (&[("size", "1m"), ("rate", "1m"), ("rate_iops", "10")], "mutually exclusive"),
        (&[("size", "1m"), ("rate", "1m"), ("ratemin", "2m")], "above rate="),
        // fio 3.33 divides by zero on these (SIGFPE).
        (&[("size", "1m"), ("rate", "1k"), ("rate_process", "poisson")], "at least one block per second"),
        (&[("size", "1m"), ("rw", "randrw"), ("rate_iops", "50,"), ("rate_process", "poisson")], "write rate"),
        (&[("size", "1m"), ("ioengine", "io_uring"), ("io_submit_mode", "offload")], "can't be used with"),
        (
            &[("size", "1m"), ("ioengine", "sync"), ("iodepth", "4"), ("io_submit_mode", "offload")],
            "not supported by fsarena",
        ),
        (&[("size", "1m"), ("ratemin", "1k"), ("rate_cycle", "500")], "not supported by fsarena"),
    ];
    for (pairs, want) in cases {
        let err = with(pairs).unwrap_err().to_string();
        assert!(err.contains(want), "{pairs:?}: '{err}' lacks '{want}'");
    }
}

#[test]
fn cpuio_and_exec_need_no_size_but_their_own_options() {
    // fio's cpuio and exec move nothing: no size, a runtime, and cpuload or program.
    let o = with(&[("ioengine", "cpuio"), ("cpuload", "50"), ("time_based", "1"), ("runtime", "2")]).unwrap();
    assert!(o.noio() && o.engine_caps().diskless);
    assert_eq!((o.cpu.load, o.cpu.chunk_us), (50, 50_000));
    let e = with(&[("ioengine", "cpuio"), ("runtime", "2")]).unwrap_err().to_string();
    assert!(e.contains("needs cpuload="), "{e}");
    let e = with(&[("ioengine", "cpuio"), ("cpuload", "50")]).unwrap_err().to_string();
    assert!(e.contains("needs runtime="), "{e}");
    assert!(with(&[("ioengine", "cpuio"), ("cpuload", "50"), ("runtime", "2"), ("cpumode", "bogo")]).is_err());
    let o = with(&[("ioengine", "cpuio"), ("cpuload", "50"), ("runtime", "2"), ("exit_on_io_done", "1")]).unwrap();
    assert!(o.cpu.exit_on_io_done);
    let o = with(&[("ioengine", "exec"), ("program", "/bin/echo"), ("arguments", "%n"), ("runtime", "1")]).unwrap();
    assert_eq!((o.exec.grace_time, o.exec.std_redirect), (1, true));
    let e = with(&[("ioengine", "exec"), ("runtime", "1")]).unwrap_err().to_string();
    assert!(e.contains("needs program="), "{e}");
    // Other engines still need a size.
    assert!(with(&[("ioengine", "null"), ("runtime", "1")]).is_err());
}
