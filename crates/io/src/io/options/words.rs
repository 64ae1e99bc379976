//! A job's options in fio's words, for `--dry-run`.

use super::{Distribution, FioVersion, IoOptions, SyncMode};

/// The options that decide what a job moves, as `key=value` in fio's names and units (sizes
/// in bytes, times in seconds), defaults included: `--dry-run` shows exactly what will run.
pub fn fio_words(o: &IoOptions) -> Vec<String> {
    let mut w = vec![
        format!("size={}", o.job_size()),
        format!("nrfiles={}", o.nrfiles),
        format!("filesize={}", o.file_size().unwrap_or(0)),
        format!("offset={}", o.offset),
        format!("numjobs={}", o.numjobs),
        format!("direct={}", u8::from(o.direct)),
        format!(
            "sync={}",
            match o.sync {
                SyncMode::None => "0",
                SyncMode::Sync => "sync",
                SyncMode::Dsync => "dsync",
            }
        ),
        format!("fsync={}", o.fsync),
        format!("fdatasync={}", o.fdatasync),
        format!("end_fsync={}", u8::from(o.end_fsync)),
    ];
    if o.rw.reads() && o.rw.writes() {
        w.push(format!("rwmixread={}", o.rwmixread));
    }
    if o.bssplit.iter().any(|s| !s.is_empty()) {
        let list = |s: &[(u64, u32)]| s.iter().map(|(b, p)| format!("{b}/{p}")).collect::<Vec<_>>().join(":");
        let (r, w_) = (list(&o.bssplit[0]), list(&o.bssplit[1]));
        w.push(if r == w_ { format!("bssplit={r}") } else { format!("bssplit={r},{w_}") });
    }
    if o.bsrange.iter().any(Option::is_some) {
        let range = |r: Option<(u64, u64)>| r.map_or(String::new(), |(lo, hi)| format!("{lo}-{hi}"));
        let (r, w_) = (range(o.bsrange[0]), range(o.bsrange[1]));
        w.push(if r == w_ { format!("bsrange={r}") } else { format!("bsrange={r},{w_}") });
    }
    if o.rw.is_random() {
        w.push(format!("norandommap={}", u8::from(o.norandommap)));
        w.push(format!("randseed={}", o.randseed));
        match &o.random_distribution {
            Distribution::Random => {}
            Distribution::Zipf(theta) => w.push(format!("random_distribution=zipf:{theta}")),
            Distribution::Zoned(zones) => {
                let parts: Vec<String> = zones.iter().map(|(a, s)| format!("{a}/{s}")).collect();
                w.push(format!("random_distribution=zoned:{}", parts.join(":")));
            }
        }
    }
    w.push(match o.runtime {
        Some(r) => format!("runtime={}s", r.as_secs_f64()),
        None => "runtime=0".to_string(),
    });
    w.push(format!("time_based={}", u8::from(o.time_based)));
    if o.ramp_time.0 > 0 {
        w.push(format!("ramp_time={}s", o.ramp_time.as_secs_f64()));
    }
    w.push(format!("loops={}", o.loops));
    if let Some(io_size) = o.io_size {
        w.push(format!("io_size={io_size}"));
    }
    if o.offset_increment > 0 {
        w.push(format!("offset_increment={}", o.offset_increment));
    }
    if o.rw_skip != 0 {
        w.push(format!("rw={}:{}", o.rw.fio_name(), o.rw_skip));
    }
    if o.rw_seq_nr > 1 {
        w.push(format!("rw={}:{}", o.rw.fio_name(), o.rw_seq_nr));
        w.push(format!("rw_sequencer={}", if o.rw_sequencer_identical { "identical" } else { "sequential" }));
    }
    if o.rate != [0, 0] {
        w.push(format!("rate={},{}", o.rate[0], o.rate[1]));
    }
    if o.rate_iops != [0, 0] {
        w.push(format!("rate_iops={},{}", o.rate_iops[0], o.rate_iops[1]));
    }
    if o.rate_poisson {
        w.push("rate_process=poisson".into());
    }
    if o.rate_ignore_thinktime {
        w.push("rate_ignore_thinktime=1".into());
    }
    if o.offload {
        w.push("io_submit_mode=offload".into());
    }
    if o.verify {
        w.push(format!("verify={}", o.verify_method.fio_name()));
    }
    if o.number_ios > 0 {
        w.push(format!("number_ios={}", o.number_ios));
    }
    if o.thinktime.0 > 0 {
        w.push(format!("thinktime={}us", o.thinktime.0 / 1000));
        w.push(format!("thinktime_spin={}us", o.thinktime_spin.0 / 1000));
        w.push(format!("thinktime_blocks={}", o.thinktime_blocks));
        w.push(format!("thinktime_blocks_type={}", if o.thinktime_blocks_issue { "issue" } else { "complete" }));
    }
    if o.fio_version != FioVersion::V3_33 {
        w.push(format!("fio_version={}", o.fio_version.fio_name()));
    }
    w.push(format!("group_reporting={}", u8::from(o.group_reporting)));
    w
}
