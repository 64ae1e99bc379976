//! fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`, `write_hist_log`),
//! named and laid out as fio 3.33 writes them (HOWTO "Log File Formats"), so that
//! fio2gnuplot, fio_generate_plots and fiologparser read them.
//!
//! The hot loop only appends one [`Sample`] per completed I/O to a buffer of a clone's
//! [`SampleLog`], and only when the job asked for a log (a branch on an `Option`). The buffer
//! holds at most [`LOG_BUFFER_SAMPLES`]: when it is full, as fio flushes its log buffers, its
//! samples go through each log's [`Stream`] (per I/O with `log_avg_msec=0`, or averaged over
//! windows of `log_avg_msec` as fio averages them, and the histogram log per `log_hist_msec`
//! window) and the lines made so far are appended to the files. A long or `time_based` job
//! therefore logs in bounded memory ([`LOG_MEMORY`] per clone, counted in the plan's memory
//! check); a job that fits the buffer writes its logs when it ends, as before, and every file
//! is the same either way.
//!
//! `write_lat_log` gives three logs, as fio: `clat`, `slat` and `lat` (slat + clat). For a
//! synchronous engine the `slat` log is empty and `lat` equals `clat`, as in fio.

use super::logstream::Stream;
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

/// fio's histogram geometry (`stat.h`): 64 linear bins in each of 29 power-of-two groups.
pub(super) const PLAT_BITS: u32 = 6;
/// Bins of a histogram line.
pub(super) const PLAT_NR: usize = 29 << PLAT_BITS;

/// fio's bin index of a latency (`plat_val_to_idx`): exact below 128 ns, then 64 bins per
/// power of two, the top group collecting everything above ~17 s.
pub(super) fn bin_index(ns: u64) -> usize {
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

/// Samples a clone keeps in memory before it hands them to its log streams and files.
pub const LOG_BUFFER_SAMPLES: usize = 1 << 16;

/// Text a log stream holds before it is appended to its file.
const LOG_TEXT_FLUSH: usize = 64 << 10;

/// Memory a clone that writes logs holds for them at most: its sample buffer, the text of
/// six logs waiting to be written (a histogram line is up to ~40 KiB) and the histogram bins.
pub const LOG_MEMORY: u64 = (LOG_BUFFER_SAMPLES * std::mem::size_of::<Sample>()) as u64
    + 6 * (LOG_TEXT_FLUSH as u64 + (40 << 10))
    + 2 * (PLAT_NR * 8) as u64;

/// One log file of a clone: where it goes and its lines.
#[derive(Debug)]
struct LogFile {
    path: PathBuf,
    /// Appends to the job's shared file (`per_job_logs=0`, a later clone).
    append: bool,
    /// Open once the first lines are written.
    file: Option<std::fs::File>,
    stream: Stream,
}

impl LogFile {
    /// Appends the lines made so far (opening the file the first time, even for no lines).
    fn write_out(&mut self) -> std::io::Result<()> {
        let text = self.stream.take_text();
        let file = match &mut self.file {
            Some(f) => f,
            none => none.insert(open_log(&self.path, self.append)?),
        };
        file.write_all(text.as_bytes())
    }
}

/// The logs of one clone: the samples not yet handed on, and each log file's stream.
#[derive(Debug)]
pub struct SampleLog {
    buffered: Vec<Sample>,
    /// False during `ramp_time`: the samples are not kept (the ramp's are dropped when it ends).
    measuring: bool,
    files: Vec<LogFile>,
    /// The first error writing a file: the logs stop there, and the job reports it.
    error: Option<String>,
}

impl SampleLog {
    /// The logs `o` asks for, of the clone `job` describes; `measuring` is false while a
    /// ramp runs first. None when `o` asks for none.
    pub fn new(o: &LogOptions, job: &LogJob<'_>, measuring: bool) -> Option<Self> {
        if !o.any() {
            return None;
        }
        let mut files = Vec::new();
        let mut add = |prefix: &Option<String>, kind: &str, stream: Stream| {
            let Some(prefix) = prefix else { return };
            let prefix = if prefix.is_empty() { job.name } else { prefix.as_str() };
            let path = if o.shared {
                PathBuf::from(format!("{prefix}_{kind}.log"))
            } else {
                PathBuf::from(format!("{prefix}_{kind}.{}.log", job.thread_number))
            };
            files.push(LogFile { path, append: o.shared && !job.first_clone, file: None, stream });
        };
        let avg = o.avg_msec;
        add(&o.lat, "lat", Stream::value(avg, |s| Some(s.total_ns)));
        // Only I/Os with a submission step have a slat (none for synchronous engines).
        add(&o.lat, "slat", Stream::value(avg, |s| s.slat_ns));
        add(&o.lat, "clat", Stream::value(avg, |s| Some(s.lat_ns)));
        if avg == 0 {
            // fio's per-I/O bandwidth: bytes over the I/O's latency, in bytes per ms (~KB/s).
            let bw: super::logstream::Pick =
                |s| Some((u64::from(s.bytes) * 1_000_000).checked_div(s.lat_ns).unwrap_or(0));
            add(&o.bw, "bw", Stream::value(0, bw));
            add(&o.iops, "iops", Stream::value(0, |_| Some(1)));
        } else {
            add(&o.bw, "bw", Stream::rate(avg, 1024, |s| Some(u64::from(s.bytes))));
            add(&o.iops, "iops", Stream::rate(avg, 1, |_| Some(1)));
        }
        add(&o.hist, "clat_hist", Stream::hist(o.hist_msec, o.hist_coarseness));
        Some(Self { buffered: Vec::new(), measuring, files, error: None })
    }

    /// Keeps one completed I/O's sample (the hot loop's only work for the logs).
    #[inline]
    pub fn push(&mut self, sample: Sample) {
        if self.buffered.len() >= LOG_BUFFER_SAMPLES {
            self.hand_on();
        }
        self.buffered.push(sample);
    }

    /// The ramp is over: its samples are dropped, and what follows is logged.
    pub fn restart(&mut self) {
        self.buffered.clear();
        self.measuring = true;
    }

    /// The buffer is full: its samples go through the streams, and the lines made are
    /// written out when they fill a piece. During the ramp they are dropped (the end of the
    /// ramp drops them anyway).
    #[cold]
    fn hand_on(&mut self) {
        if self.measuring && self.error.is_none() {
            self.feed();
            for f in &mut self.files {
                if f.stream.pending() >= LOG_TEXT_FLUSH {
                    if let Err(e) = f.write_out() {
                        self.error = Some(format!("cannot write the log {}: {e}", f.path.display()));
                        break;
                    }
                }
            }
        }
        self.buffered.clear();
    }

    fn feed(&mut self) {
        for f in &mut self.files {
            for s in &self.buffered {
                f.stream.add(s);
            }
        }
    }

    /// The measured phase ended `end_ns` after it began: the rest of every log is written,
    /// and each file exists (empty when it has no line). The paths written, or the first
    /// error naming its file.
    pub fn finish(mut self, end_ns: u64) -> Result<Vec<PathBuf>, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.feed();
        let mut written = Vec::new();
        for mut f in self.files {
            f.stream.end(end_ns);
            f.write_out().map_err(|e| format!("cannot write the log {}: {e}", f.path.display()))?;
            written.push(f.path);
        }
        Ok(written)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "iolog_tests.rs"]
mod tests;
