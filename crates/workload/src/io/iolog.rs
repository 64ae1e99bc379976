//! fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`, `write_hist_log`),
//! named and laid out as fio 3.33 writes them (HOWTO "Log File Formats"), so that
//! fio2gnuplot, fio_generate_plots and fiologparser read them.
//!
//! The hot loop only appends one [`Sample`] per completed I/O to a buffer kept in memory,
//! and only when the job asked for a log (a branch on an `Option`); every log is computed
//! from those samples when the job's group is over: per I/O (`log_avg_msec=0`), or averaged
//! over windows of `log_avg_msec` as fio averages them, and the histogram log per
//! `log_hist_msec` window. The cost is 24 bytes per I/O while logging.
//!
//! `write_lat_log` gives three logs, as fio: `clat`, `slat` and `lat` (slat + clat). For a
//! synchronous engine the `slat` log is empty and `lat` equals `clat`, as in fio.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

/// The logging options of a job (fio's names in the comments).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// `write_bw_log=NAME`: the prefix of `NAME_bw.N.log`; `Some("")` uses the job's name.
    pub bw: Option<String>,
    /// `write_lat_log=NAME`: `NAME_lat.N.log`, `NAME_slat.N.log`, `NAME_clat.N.log`.
    pub lat: Option<String>,
    /// `write_iops_log=NAME`: `NAME_iops.N.log`.
    pub iops: Option<String>,
    /// `write_hist_log=NAME`: `NAME_clat_hist.N.log`.
    pub hist: Option<String>,
    /// `log_avg_msec`: average over windows of this many ms; 0 logs every I/O.
    pub avg_msec: u64,
    /// `log_hist_msec`: one histogram line per window of this many ms; 0 writes none.
    pub hist_msec: u64,
    /// `log_hist_coarseness`: sum 2^c neighbouring bins (0-6).
    pub hist_coarseness: u32,
    /// `per_job_logs=0` writes one file per job (`NAME_bw.log`) instead of one per clone.
    pub shared: bool,
}

impl LogOptions {
    /// The logs a job's options ask for.
    pub fn of(o: &super::options::OutputOptions) -> Self {
        Self {
            bw: o.write_bw_log.clone(),
            lat: o.write_lat_log.clone(),
            iops: o.write_iops_log.clone(),
            hist: o.write_hist_log.clone(),
            avg_msec: o.log_avg_msec,
            hist_msec: o.log_hist_msec,
            hist_coarseness: 0,
            shared: false,
        }
    }

    /// True when any log was asked for: the hot loop keeps samples only then.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }
}

/// One completed I/O, as the hot loop records it for the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// Completion time, ns since the measured phase began (fio's epoch, after ramp_time).
    pub time_ns: u64,
    /// Completion latency, ns.
    pub lat_ns: u64,
    /// Submission latency, ns, for a queued engine's I/O (`None`: the I/O completed in its
    /// call, as a synchronous engine's do, and fio logs no slat for it).
    pub slat_ns: Option<u64>,
    /// Total latency (slat + clat), ns; equal to `lat_ns` for a synchronous engine.
    pub total_ns: u64,
    /// Bytes moved.
    pub bytes: u32,
    /// 0 read, 1 write (fio's ddir).
    pub dir: u32,
}

/// The samples of one clone, appended to by the hot loop.
pub type Samples = Vec<Sample>;

/// fio's histogram geometry (`stat.h`): 64 linear bins in each of 29 power-of-two groups.
const PLAT_BITS: u32 = 6;
/// Bins of a histogram line.
const PLAT_NR: usize = 29 << PLAT_BITS;

/// fio's bin index of a latency (`plat_val_to_idx`): exact below 128 ns, then 64 bins per
/// power of two, the top group collecting everything above ~17 s.
fn bin_index(ns: u64) -> usize {
    if ns < (1 << (PLAT_BITS + 1)) {
        return ns as usize;
    }
    let msb = 63 - ns.leading_zeros();
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) << PLAT_BITS) as usize;
    (base + ((ns >> error_bits) as usize & ((1 << PLAT_BITS) - 1))).min(PLAT_NR - 1)
}

/// What the logs of one clone need from its job.
#[derive(Debug, Clone, Copy)]
pub struct LogJob<'a> {
    /// The job's name: the prefix when `write_*_log` has no value.
    pub name: &'a str,
    /// fio's thread number: 1 for the first clone of the first job, counted over the file.
    pub thread_number: u32,
    /// The first clone of its job: with `per_job_logs=0` it starts the shared file, the
    /// others append.
    pub first_clone: bool,
    /// The measured phase's length, ns: the last window ends there.
    pub end_ns: u64,
}

/// Opens a log file as fio names it, created if missing. fsarena runs as root and the path
/// comes from the job file (`write_bw_log=/tmp/x`): a symbolic link planted at it is not
/// followed, and only a regular file is emptied and written, never a device or a FIFO.
fn open_log(path: &std::path::Path, append: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .custom_flags(flags.bits() as i32)
        .mode(0o644)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if !append {
        file.set_len(0)?;
    }
    Ok(file)
}

/// Writes every log `o` asks for from one clone's `samples`; the paths written, or the
/// first error naming its file.
pub fn write_logs(o: &LogOptions, job: &LogJob<'_>, samples: &[Sample]) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    let mut out = |prefix: &Option<String>, kind: &str, text: String| -> Result<(), String> {
        let Some(prefix) = prefix else { return Ok(()) };
        let prefix = if prefix.is_empty() { job.name } else { prefix.as_str() };
        let path = if o.shared {
            PathBuf::from(format!("{prefix}_{kind}.log"))
        } else {
            PathBuf::from(format!("{prefix}_{kind}.{}.log", job.thread_number))
        };
        let append = o.shared && !job.first_clone;
        open_log(&path, append)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("cannot write the log {}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    let (lat, total) = (|s: &Sample| s.lat_ns, |s: &Sample| s.total_ns);
    out(&o.lat, "lat", value_log(o.avg_msec, job, samples, total))?;
    if o.lat.is_some() {
        // Only I/Os with a submission step have a slat (none for synchronous engines).
        let queued: Vec<Sample> =
            samples.iter().filter_map(|s| s.slat_ns.map(|slat| Sample { lat_ns: slat, ..*s })).collect();
        out(&o.lat, "slat", value_log(o.avg_msec, job, &queued, lat))?;
    }
    out(&o.lat, "clat", value_log(o.avg_msec, job, samples, lat))?;
    if o.avg_msec == 0 {
        // fio's per-I/O bandwidth: bytes over the I/O's latency, in bytes per ms (~KB/s).
        let bw = |s: &Sample| (u64::from(s.bytes) * 1_000_000).checked_div(s.lat_ns).unwrap_or(0);
        out(&o.bw, "bw", value_log(0, job, samples, bw))?;
        out(&o.iops, "iops", value_log(0, job, samples, |_| 1))?;
    } else {
        out(&o.bw, "bw", rate_log(o.avg_msec, job, samples, |s| u64::from(s.bytes), 1024))?;
        out(&o.iops, "iops", rate_log(o.avg_msec, job, samples, |_| 1, 1))?;
    }
    out(&o.hist, "clat_hist", hist_log(o.hist_msec, o.hist_coarseness, samples))?;
    Ok(written)
}

/// A latency-style log: one line per I/O, or per direction the mean (rounded, as fio) of
/// each `avg_msec` window, stamped when the window closes (fio's `add_log_sample`).
fn value_log(avg_msec: u64, job: &LogJob<'_>, samples: &[Sample], value: impl Fn(&Sample) -> u64) -> String {
    let mut text = String::new();
    if avg_msec == 0 {
        for s in samples {
            let _ = writeln!(text, "{}, {}, {}, {}, 0", s.time_ns / 1_000_000, value(s), s.dir, s.bytes);
        }
        return text;
    }
    // Per direction: (sum, count) of the open window and where it began.
    let mut window = [(0u128, 0u64); 2];
    let mut last = [0u64; 2];
    let line = |text: &mut String, t: u64, d: usize, w: &mut (u128, u64)| {
        if w.1 > 0 {
            let mean = (w.0 as f64 / w.1 as f64 + 0.5) as u64;
            let _ = writeln!(text, "{t}, {mean}, {d}, 0, 0");
        }
        *w = (0, 0);
    };
    for s in samples {
        let d = s.dir as usize & 1;
        let t = s.time_ns / 1_000_000;
        window[d].0 += u128::from(value(s));
        window[d].1 += 1;
        if t >= last[d] + avg_msec {
            line(&mut text, t, d, &mut window[d]);
            last[d] = t - t % avg_msec;
        }
    }
    // fio's finalize_logs: what is left is logged at the end.
    let end = job.end_ns / 1_000_000;
    for (d, w) in window.iter_mut().enumerate() {
        line(&mut text, end, d, w);
    }
    text
}

/// A rate log averaged over `avg_msec` windows (fio's `__add_samples`): per direction, the
/// amount `of` each window's I/Os per second, divided by `unit` (1024: KiB/s), stamped at the
/// window's end with block size 0, as fio's averaged lines. Windows with no I/O are skipped,
/// and so is a last window the job did not fill: fio's sampling thread never closes it.
fn rate_log(avg_msec: u64, job: &LogJob<'_>, samples: &[Sample], of: impl Fn(&Sample) -> u64, unit: u64) -> String {
    let windows = (job.end_ns / 1_000_000 / avg_msec) as usize;
    let mut sums = vec![[0u64; 2]; windows];
    for s in samples {
        let w = ((s.time_ns / 1_000_000) / avg_msec) as usize;
        if let Some(sum) = sums.get_mut(w) {
            sum[s.dir as usize & 1] += of(s);
        }
    }
    let mut text = String::new();
    for (w, sum) in sums.iter().enumerate() {
        let stop = (w as u64 + 1) * avg_msec;
        for (d, &amount) in sum.iter().enumerate() {
            if amount > 0 {
                let _ = writeln!(text, "{stop}, {}, {d}, 0, 0", amount * 1000 / avg_msec / unit);
            }
        }
    }
    text
}

/// The histogram log: per direction, one line per `hist_msec` window, written at the
/// completion that closes it, with the clat bins of the window's I/Os (fio's
/// `add_clat_sample` and `flush_hist_samples`), 2^coarseness bins summed per field.
fn hist_log(hist_msec: u64, coarseness: u32, samples: &[Sample]) -> String {
    let mut text = String::new();
    if hist_msec == 0 {
        return text;
    }
    let stride = 1usize << coarseness.min(PLAT_BITS);
    let mut bins = [vec![0u64; PLAT_NR], vec![0u64; PLAT_NR]];
    let mut last: [Option<u64>; 2] = [None; 2];
    for s in samples {
        let d = s.dir as usize & 1;
        let t = s.time_ns / 1_000_000;
        bins[d][bin_index(s.lat_ns)] += 1;
        let since = *last[d].get_or_insert(t);
        let window = t - since;
        if window >= hist_msec {
            let _ = write!(text, "{t}, {d}, {}", s.bytes);
            for chunk in bins[d].chunks(stride) {
                let _ = write!(text, ", {}", chunk.iter().sum::<u64>());
            }
            text.push('\n');
            bins[d].iter_mut().for_each(|b| *b = 0);
            // fio keeps the drift: the next window starts where this one should have ended.
            last[d] = Some(t - (window - hist_msec));
        }
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn job(end_ms: u64) -> LogJob<'static> {
        LogJob { name: "j", thread_number: 3, first_clone: true, end_ns: end_ms * 1_000_000 }
    }

    fn sample(ms: u64, lat_ns: u64) -> Sample {
        Sample { time_ns: ms * 1_000_000 + 123, lat_ns, slat_ns: None, total_ns: lat_ns, bytes: 65536, dir: 1 }
    }

    #[test]
    fn bins_follow_fios_layout() {
        assert_eq!(bin_index(0), 0);
        assert_eq!(bin_index(127), 127);
        assert_eq!(bin_index(128), 128);
        // 7,054 ns is in the bin fio prints as 7072 (group of 4096, bin 46): 64*7 + 46.
        assert_eq!(bin_index(7054), 7 * 64 + 46);
        assert_eq!(bin_index(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn per_io_lines_are_fios() {
        let samples = [sample(0, 106_589), sample(5, 65_643)];
        let text = value_log(0, &job(10), &samples, |s| s.lat_ns);
        assert_eq!(text, "0, 106589, 1, 65536, 0\n5, 65643, 1, 65536, 0\n");
        // fio's per-I/O bandwidth: 65536 * 10^6 / 106589 ns.
        let bw = value_log(0, &job(10), &samples[..1], |s| u64::from(s.bytes) * 1_000_000 / s.lat_ns);
        assert_eq!(bw, "0, 614847, 1, 65536, 0\n");
    }

    #[test]
    fn averaged_lines_close_each_window_and_the_end() {
        let samples = [sample(10, 100), sample(200, 201), sample(260, 50), sample(400, 70)];
        let text = value_log(250, &job(450), &samples, |s| s.lat_ns);
        // The window closes at the first sample past 250 ms: the mean of 100, 201, 50 rounds
        // to 117; the rest is logged at the end.
        assert_eq!(text, "260, 117, 1, 0, 0\n450, 70, 1, 0, 0\n");
        let rates = rate_log(250, &job(450), &samples, |s| u64::from(s.bytes), 1024);
        // 2 × 64 KiB in 250 ms = 512 KiB/s; the last 200 ms are not a whole window.
        assert_eq!(rates, "250, 512, 1, 0, 0\n");
        assert_eq!(rate_log(250, &job(500), &samples, |_| 1, 1), "250, 8, 1, 0, 0\n500, 8, 1, 0, 0\n");
    }

    #[test]
    fn histogram_lines_hold_each_windows_bins() {
        let samples = [sample(0, 100), sample(300, 100), sample(600, 7054), sample(700, 100)];
        let text = hist_log(500, 0, &samples);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        let fields: Vec<u64> = lines[0].split(", ").map(|f| f.parse().unwrap()).collect();
        assert_eq!(fields.len(), 3 + PLAT_NR);
        assert_eq!(&fields[..3], &[600, 1, 65536]);
        assert_eq!(fields[3 + 100], 2);
        assert_eq!(fields[3 + 7 * 64 + 46], 1);
        assert_eq!(fields[3..].iter().sum::<u64>(), 3);
        // Coarseness 2 sums 4 neighbours: 464 bins.
        let coarse = hist_log(500, 2, &samples);
        assert_eq!(coarse.lines().next().unwrap().split(", ").count(), 3 + PLAT_NR / 4);
        assert!(hist_log(0, 0, &samples).is_empty());
    }

    #[test]
    fn files_are_named_as_fio_names_them() {
        let dir = std::env::temp_dir().join(format!("fsarena-iolog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("x").display().to_string();
        let o = LogOptions {
            bw: Some(prefix.clone()),
            lat: Some(prefix.clone()),
            iops: Some(prefix.clone()),
            hist: Some(prefix.clone()),
            ..Default::default()
        };
        let written = write_logs(&o, &job(10), &[sample(1, 1000)]).unwrap();
        let names: Vec<String> =
            written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(
            names,
            ["x_lat.3.log", "x_slat.3.log", "x_clat.3.log", "x_bw.3.log", "x_iops.3.log", "x_clat_hist.3.log"]
        );
        assert_eq!(std::fs::read_to_string(dir.join("x_iops.3.log")).unwrap(), "1, 1, 1, 65536, 0\n");
        // per_job_logs=0: one file per job, the later clones appending.
        let shared = LogOptions { iops: Some(prefix), shared: true, ..Default::default() };
        write_logs(&shared, &job(10), &[sample(1, 1000)]).unwrap();
        write_logs(&shared, &LogJob { first_clone: false, ..job(10) }, &[sample(2, 1000)]).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("x_iops.log")).unwrap(), "1, 1, 1, 65536, 0\n2, 1, 1, 65536, 0\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lat_logs_split_slat_clat_and_total_as_fio() {
        let dir = std::env::temp_dir().join(format!("fsarena-iolog-lat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("q").display().to_string();
        let o = LogOptions { lat: Some(prefix), ..Default::default() };
        let read = |k: &str| std::fs::read_to_string(dir.join(format!("q_{k}.3.log"))).unwrap();
        // A queued engine's I/O: slat 300, clat 1000, lat 1300.
        let queued = Sample { slat_ns: Some(300), total_ns: 1300, ..sample(1, 1000) };
        write_logs(&o, &job(10), &[queued]).unwrap();
        assert_eq!(read("slat"), "1, 300, 1, 65536, 0\n");
        assert_eq!(read("clat"), "1, 1000, 1, 65536, 0\n");
        assert_eq!(read("lat"), "1, 1300, 1, 65536, 0\n");
        // A synchronous engine's: no slat line, lat = clat.
        write_logs(&o, &job(10), &[sample(1, 1000)]).unwrap();
        assert_eq!(read("slat"), "");
        assert_eq!(read("lat"), read("clat"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_log_path_that_is_a_symlink_or_not_a_file_is_refused() {
        let dir = std::env::temp_dir().join(format!("fsarena-iolog-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.join("x_bw.1.log");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(open_log(&link, false).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(open_log(&dir, false).is_err(), "a directory");
        let plain = dir.join("y_bw.1.log");
        std::fs::write(&plain, "old").unwrap();
        open_log(&plain, false).unwrap().write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
