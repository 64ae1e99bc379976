//! fio options that change no I/O, only what is reported or how time is taken: accepted so
//! fio's job files run unchanged, and kept where an output honours them (percentiles, logs).

/// Options that shape the outputs, not the I/O.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputOptions {
    /// fio's `description=`: free text about the job.
    pub description: Option<String>,
    /// fio's `clat_percentiles=` (default 1): report completion-latency percentiles.
    pub clat_percentiles: bool,
    /// fio's `lat_percentiles=` (default 0): report total-latency percentiles.
    pub lat_percentiles: bool,
    /// fio's `percentile_list=`: the percentiles reported, in order (default fio's 17).
    pub percentile_list: Option<Vec<f64>>,
    /// fio's `write_bw_log=PREFIX`: bandwidth log files `PREFIX_bw.N.log`.
    pub write_bw_log: Option<String>,
    /// fio's `write_lat_log=PREFIX`: `PREFIX_{slat,clat,lat}.N.log`.
    pub write_lat_log: Option<String>,
    /// fio's `write_iops_log=PREFIX`: `PREFIX_iops.N.log`.
    pub write_iops_log: Option<String>,
    /// fio's `write_hist_log=PREFIX`: `PREFIX_clat_hist.N.log`.
    pub write_hist_log: Option<String>,
    /// fio's `log_avg_msec=` (default 0: every I/O is logged).
    pub log_avg_msec: u64,
    /// fio's `log_hist_msec=` (default 0: histogram logs every I/O).
    pub log_hist_msec: u64,
    /// fio's `gtod_reduce=`: fio takes fewer clock readings; fsarena's timing is unchanged.
    pub gtod_reduce: bool,
}

impl Default for OutputOptions {
    fn default() -> Self {
        Self {
            description: None,
            clat_percentiles: true,
            lat_percentiles: false,
            percentile_list: None,
            write_bw_log: None,
            write_lat_log: None,
            write_iops_log: None,
            write_hist_log: None,
            log_avg_msec: 0,
            log_hist_msec: 0,
            gtod_reduce: false,
        }
    }
}

/// Most percentiles in `percentile_list`, as fio (FIO_IO_U_LIST_MAX_LEN).
const MAX_PERCENTILES: usize = 20;

/// fio's `percentile_list=99:99.9:99.99`: up to 20 numbers in (0, 100], `:`-separated.
pub(super) fn parse_percentiles(v: &str) -> Result<Vec<f64>, String> {
    let list: Vec<f64> = v
        .split(':')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(x) if x > 0.0 && x <= 100.0 => Ok(x),
            _ => Err(format!("'{p}' is not a percentile: expected numbers in (0, 100] such as 99:99.9")),
        })
        .collect::<Result<_, _>>()?;
    if list.len() > MAX_PERCENTILES {
        return Err(format!("'{v}' lists {} percentiles: expected at most {MAX_PERCENTILES}", list.len()));
    }
    Ok(list)
}

/// A log prefix: fio's bare `write_bw_log` (or `=1`) means the job's name, written later.
/// As in fio, the prefix may name a directory (`/var/log/run1/job` writes
/// `/var/log/run1/job_bw.1.log`); relative ones are taken from the current directory.
pub(super) fn log_prefix(v: &str) -> Result<Option<String>, String> {
    Ok(match v {
        "" | "1" => Some(String::new()),
        "0" => None,
        v if v.ends_with('/') || v.chars().any(char::is_control) => {
            return Err(format!(
                "'{}' is not a log prefix: expected a file name or path prefix such as logs/job",
                fsarena_workload::plain::cut(v)
            ))
        }
        v => Some(v.to_string()),
    })
}

/// fio's `random_generator=`: accepted; fsarena draws offsets with its own generator whatever
/// is named, so random jobs match fio in bytes, not in the order of offsets.
pub(super) fn random_generator(v: &str) -> Result<(), String> {
    match v {
        "tausworthe" | "lfsr" | "tausworthe64" => Ok(()),
        _ => Err(format!("'{v}' is not a random generator: expected tausworthe, lfsr or tausworthe64")),
    }
}
