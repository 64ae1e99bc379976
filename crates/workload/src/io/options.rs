//! The `io` workload's options: fio's names, meanings and defaults, defined once.
//!
//! One table ([`OPTIONS`]) serves `--workload io:...`, fio job files and TOML job files, and
//! the documentation; a test checks the README lists every entry.

use fsarena_core::units::{parse_size, parse_time};
use fsarena_core::{InputError, Nanos};

/// fio's `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rw {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes (`rw`, `readwrite`).
    ReadWrite,
    /// Random mixed reads and writes.
    RandRw,
}

impl Rw {
    /// True for random offsets.
    pub fn is_random(self) -> bool {
        matches!(self, Self::RandRead | Self::RandWrite | Self::RandRw)
    }
    /// True if the job reads.
    pub fn reads(self) -> bool {
        !matches!(self, Self::Write | Self::RandWrite)
    }
    /// True if the job writes.
    pub fn writes(self) -> bool {
        !matches!(self, Self::Read | Self::RandRead)
    }
}

/// fio's `ioengine=`: an engine of the engine registry (`psync`, `sync`, `null`, ...).
pub use fsarena_engine::EngineKind as IoEngine;

/// fio's `random_distribution=`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Uniform (with the random map unless `norandommap`).
    Random,
    /// Zipf with exponent θ.
    Zipf(f64),
}

/// fio's `fallocate=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallocate {
    /// Do not preallocate.
    None,
    /// fallocate(2) (fio's default, `native`; also `posix`, `1`).
    Native,
    /// fallocate(2) with FALLOC_FL_KEEP_SIZE.
    Keep,
    /// Only ftruncate(2) to the size.
    Truncate,
}

/// fio's `sync=` open flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// No sync flag.
    None,
    /// O_SYNC.
    Sync,
    /// O_DSYNC.
    Dsync,
}

/// Every option of one `io` job, with fio's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct IoOptions {
    /// Job name; files are named `NAME.JOBNUM.FILENUM` as fio names them.
    pub name: String,
    /// Access pattern.
    pub rw: Rw,
    /// Percentage of reads in mixed jobs (default 50).
    pub rwmixread: u32,
    /// Block size for reads and for writes (default 4096).
    pub bs: [u64; 2],
    /// `(block size, percent)` pairs; overrides `bs` when set.
    pub bssplit: Vec<(u64, u32)>,
    /// Bytes each job moves per pass (`size=`); split over `nrfiles`.
    pub size: Option<u64>,
    /// Size of each file (default `size / nrfiles`).
    pub filesize: Option<u64>,
    /// Files per job.
    pub nrfiles: u32,
    /// One file name shared by all jobs instead of `NAME.JOBNUM.FILENUM`.
    pub filename: Option<String>,
    /// fio's `directory=`: the target directory when no `--target` is given.
    pub directory: Option<String>,
    /// Start offset in each file.
    pub offset: u64,
    /// Clones of this job, each a thread.
    pub numjobs: u32,
    /// Report the job's group as one.
    pub group_reporting: bool,
    /// I/O engine.
    pub ioengine: IoEngine,
    /// I/Os in flight per clone (asynchronous engines; synchronous ones use 1, as fio).
    pub iodepth: u32,
    /// Queued I/Os per commit (0: iodepth; default 1).
    pub iodepth_batch_submit: u32,
    /// Completions a reap waits for (default 1; 0 polls).
    pub iodepth_batch_complete_min: u32,
    /// Completions a reap takes at most (0: the min).
    pub iodepth_batch_complete_max: u32,
    /// After a full queue, reap down to this many in flight (0: iodepth).
    pub iodepth_low: u32,
    /// O_DIRECT.
    pub direct: bool,
    /// O_SYNC / O_DSYNC.
    pub sync: SyncMode,
    /// fsync every N writes (0: never).
    pub fsync: u32,
    /// fdatasync every N writes (0: never).
    pub fdatasync: u32,
    /// fsync when the job ends (timed, like fio).
    pub end_fsync: bool,
    /// Time limit of the measured phase.
    pub runtime: Option<Nanos>,
    /// Keep going until `runtime`, looping over the files.
    pub time_based: bool,
    /// Unmeasured time before the measured phase.
    pub ramp_time: Nanos,
    /// Passes over the files for size-based jobs.
    pub loops: u32,
    /// Random offsets may repeat within a pass.
    pub norandommap: bool,
    /// Seed of every random choice.
    pub randseed: u64,
    /// Offset distribution for random jobs.
    pub random_distribution: Distribution,
    /// Checksum written blocks and read them back after the job (`verify=crc32c`).
    pub verify: bool,
    /// Run the verify pass (default 1 when `verify` is set).
    pub do_verify: bool,
    /// Bandwidth limit in bytes/s, per direction (read, write); 0: none.
    pub rate: [u64; 2],
    /// IOPS limit per direction; 0: none.
    pub rate_iops: [u64; 2],
    /// Percentage of each buffer that compresses (zero-filled); 0: all random.
    pub buffer_compress_percentage: u32,
    /// Preallocation of files written from scratch.
    pub fallocate: Fallocate,
    /// Drop the files' page cache before the measured phase (default 1).
    pub invalidate: bool,
    /// Wait for the jobs before this one to finish (starts a new group).
    pub stonewall: bool,
    /// Start a new reporting group.
    pub new_group: bool,
    /// Keep the test files after the run.
    pub keep: bool,
}

impl Default for IoOptions {
    fn default() -> Self {
        Self {
            name: "io".into(),
            rw: Rw::Read,
            rwmixread: 50,
            bs: [4096, 4096],
            bssplit: Vec::new(),
            size: None,
            filesize: None,
            nrfiles: 1,
            filename: None,
            directory: None,
            offset: 0,
            numjobs: 1,
            group_reporting: false,
            ioengine: IoEngine::Psync,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            iodepth_low: 0,
            direct: false,
            sync: SyncMode::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            runtime: None,
            time_based: false,
            ramp_time: Nanos(0),
            loops: 1,
            norandommap: false,
            randseed: 0x89,
            random_distribution: Distribution::Random,
            verify: false,
            do_verify: true,
            rate: [0, 0],
            rate_iops: [0, 0],
            buffer_compress_percentage: 0,
            fallocate: Fallocate::Native,
            invalidate: true,
            stonewall: false,
            new_group: false,
            keep: false,
        }
    }
}

/// One option: its name, fio aliases, a line of help, and how to set it.
#[derive(Debug)]
pub struct OptionDef {
    /// fio's name.
    pub name: &'static str,
    /// Other names fio accepts for it.
    pub aliases: &'static [&'static str],
    /// One line of help, with the default.
    pub help: &'static str,
    set: fn(&mut IoOptions, &str) -> Result<(), String>,
}

const SECOND: u64 = 1_000_000_000;

fn size(v: &str) -> Result<u64, String> {
    parse_size(v).map_err(|e| e.message)
}

fn nonzero_size(v: &str) -> Result<u64, String> {
    match size(v)? {
        0 => Err(format!("'{v}' must be larger than 0")),
        n => Ok(n),
    }
}

fn boolean(v: &str) -> Result<bool, String> {
    match v.trim() {
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("'{v}' is not a boolean: expected 1 or 0")),
    }
}

fn int(v: &str) -> Result<u64, String> {
    v.trim().parse::<u64>().map_err(|_| format!("'{v}' is not a whole number"))
}

/// The largest queue depth accepted: every slot is a buffer of the largest block size.
const MAX_DEPTH: u64 = 65536;

fn depth(v: &str, min: u64) -> Result<u32, String> {
    match int(v)? {
        n if n < min => Err(format!("'{v}' is too small: expected at least {min}")),
        n if n > MAX_DEPTH => Err(format!("'{v}' is too large: expected at most {MAX_DEPTH}")),
        n => Ok(n as u32),
    }
}

fn percent(v: &str) -> Result<u32, String> {
    match int(v)? {
        n @ 0..=100 => Ok(n as u32),
        _ => Err(format!("'{v}' is not a percentage: expected 0 to 100")),
    }
}

/// `a` or `a,b` → per direction (read, write); an empty side keeps the default.
fn per_direction(v: &str, default: [u64; 2], parse: fn(&str) -> Result<u64, String>) -> Result<[u64; 2], String> {
    let mut out = default;
    let parts: Vec<&str> = v.split(',').collect();
    match parts.as_slice() {
        [one] => out = [parse(one)?; 2],
        [r, w] | [r, w, _] => {
            if !r.is_empty() {
                out[0] = parse(r)?;
            }
            if !w.is_empty() {
                out[1] = parse(w)?;
            }
        }
        _ => return Err(format!("'{v}' has too many parts: expected VALUE or READ,WRITE")),
    }
    Ok(out)
}

fn parse_rw(v: &str) -> Result<Rw, String> {
    Ok(match v {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        "rw" | "readwrite" => Rw::ReadWrite,
        "randrw" => Rw::RandRw,
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            return Err(format!(
                "rw={v} (trim) is not supported yet: expected read, write, randread, randwrite, rw, readwrite, randrw"
            ))
        }
        _ => {
            return Err(format!(
                "'{v}' is not an access pattern: expected read, write, randread, randwrite, rw, readwrite, randrw"
            ))
        }
    })
}

fn parse_bssplit(v: &str) -> Result<Vec<(u64, u32)>, String> {
    if v.contains(',') {
        return Err(format!(
            "'{v}': per-direction bssplit lists are not supported yet: give one list such as 4k/10:64k/90"
        ));
    }
    let mut entries = Vec::new();
    let mut blank = 0;
    for part in v.split(':').filter(|p| !p.is_empty()) {
        let (bs, pct) = part.split_once('/').unwrap_or((part, ""));
        let bs = nonzero_size(bs)?;
        if pct.is_empty() {
            blank += 1;
            entries.push((bs, u32::MAX));
        } else {
            entries.push((bs, percent(pct)?));
        }
    }
    let given: u32 = entries.iter().filter(|e| e.1 != u32::MAX).map(|e| e.1).sum();
    if given > 100 || entries.is_empty() || (blank == 0 && given != 100) {
        return Err(format!("'{v}' is not a bssplit: expected BS/PERCENT:... with percentages adding up to 100"));
    }
    // fio: entries without a percentage share what is left evenly.
    if let Some(share) = (100 - given).checked_div(blank) {
        let mut extra = (100 - given) % blank;
        for e in entries.iter_mut().filter(|e| e.1 == u32::MAX) {
            e.1 = share + u32::from(extra > 0);
            extra = extra.saturating_sub(1);
        }
    }
    Ok(entries)
}

macro_rules! opt {
    ($name:literal, [$($alias:literal),*], $help:literal, |$o:ident, $v:ident| $body:expr) => {
        OptionDef { name: $name, aliases: &[$($alias),*], help: $help, set: |$o: &mut IoOptions, $v: &str| { $body; Ok(()) } }
    };
}

/// Every option of the `io` workload.
pub static OPTIONS: &[OptionDef] = &[
    opt!("name", [], "job name; files are NAME.JOBNUM.FILENUM (default io)", |o, v| o.name = v.to_string()),
    opt!("rw", ["readwrite"], "read, write, randread, randwrite, rw/readwrite, randrw (default read)", |o, v| o.rw =
        parse_rw(v)?),
    opt!("rwmixread", [], "percentage of reads in mixed jobs (default 50)", |o, v| o.rwmixread = percent(v)?),
    opt!("rwmixwrite", [], "percentage of writes in mixed jobs (default 50)", |o, v| o.rwmixread = 100 - percent(v)?),
    opt!("bs", ["blocksize"], "block size, or READ,WRITE (default 4k)", |o, v| o.bs =
        per_direction(v, [4096; 2], nonzero_size)?),
    opt!("bssplit", [], "block size mix, e.g. 4k/10:64k/90", |o, v| o.bssplit = parse_bssplit(v)?),
    opt!("size", [], "bytes each job moves per pass, split over nrfiles", |o, v| o.size = Some(nonzero_size(v)?)),
    opt!("filesize", [], "size of each file (default size/nrfiles)", |o, v| o.filesize = Some(nonzero_size(v)?)),
    opt!("nrfiles", ["nr_files"], "files per job (default 1)", |o, v| o.nrfiles =
        int(v)?.try_into().map_err(|_| format!("'{v}' is too large"))?),
    opt!("filename", [], "one file shared by all jobs, inside the target", |o, v| o.filename = Some(v.to_string())),
    opt!("directory", [], "the target directory when no --target is given", |o, v| o.directory = Some(v.to_string())),
    opt!("offset", [], "start offset in each file (default 0)", |o, v| o.offset = size(v)?),
    opt!("numjobs", [], "clones of the job, each a thread (default 1)", |o, v| o.numjobs =
        int(v)?.try_into().map_err(|_| format!("'{v}' is too large"))?),
    opt!("group_reporting", [], "report each group of jobs as one", |o, v| o.group_reporting = boolean(v)?),
    opt!("ioengine", [], "psync (default), sync, or null (no I/O: measures fsarena's own overhead)", |o, v| o
        .ioengine =
        IoEngine::parse(v).map_err(|e| e.to_string())?),
    opt!("iodepth", [], "I/Os in flight per job; synchronous engines use 1, as in fio (default 1)", |o, v| o.iodepth =
        depth(v, 1)?),
    opt!("iodepth_batch_submit", ["iodepth_batch"], "queued I/Os sent in one go; 0: iodepth (default 1)", |o, v| o
        .iodepth_batch_submit =
        depth(v, 0)?),
    opt!(
        "iodepth_batch_complete_min",
        ["iodepth_batch_complete"],
        "completions waited for in one go; 0 polls (default 1)",
        |o, v| o.iodepth_batch_complete_min = depth(v, 0)?
    ),
    opt!(
        "iodepth_batch_complete_max",
        [],
        "completions taken at most in one go (default: iodepth_batch_complete_min)",
        |o, v| o.iodepth_batch_complete_max = depth(v, 0)?
    ),
    opt!(
        "iodepth_low",
        [],
        "after a full queue, reap down to this many in flight; 0: iodepth (default iodepth)",
        |o, v| o.iodepth_low = depth(v, 0)?
    ),
    opt!("thread", [], "accepted for fio job files; jobs are always threads", |_o, v| {
        boolean(v)?;
    }),
    opt!("direct", [], "O_DIRECT (default 0)", |o, v| o.direct = boolean(v)?),
    opt!("buffered", [], "the opposite of direct (default 1)", |o, v| o.direct = !boolean(v)?),
    opt!("sync", [], "open with O_SYNC (1, sync) or O_DSYNC (dsync) (default 0)", |o, v| o.sync = match v {
        "0" | "none" => SyncMode::None,
        "" | "1" | "sync" => SyncMode::Sync,
        "dsync" => SyncMode::Dsync,
        _ => return Err(format!("'{v}' is not a sync mode: expected 0, 1, sync, dsync")),
    }),
    opt!("fsync", [], "fsync every N writes (default 0)", |o, v| o.fsync =
        int(v)?.try_into().map_err(|_| format!("'{v}' is too large"))?),
    opt!("fdatasync", [], "fdatasync every N writes (default 0)", |o, v| o.fdatasync =
        int(v)?.try_into().map_err(|_| format!("'{v}' is too large"))?),
    opt!("end_fsync", [], "fsync the files when the job ends (default 0)", |o, v| o.end_fsync = boolean(v)?),
    opt!("runtime", ["timeout"], "time limit, seconds by default (e.g. 10, 10s, 2m)", |o, v| o.runtime =
        Some(parse_time(v, SECOND).map_err(|e| e.message)?)),
    opt!("time_based", [], "run until runtime, looping over the files (default 0)", |o, v| o.time_based = boolean(v)?),
    opt!("ramp_time", [], "warm-up time excluded from the figures (default 0)", |o, v| o.ramp_time =
        parse_time(v, SECOND).map_err(|e| e.message)?),
    opt!("loops", [], "passes over the files (default 1)", |o, v| o.loops =
        int(v)?.try_into().map_err(|_| format!("'{v}' is too large"))?),
    opt!("norandommap", [], "random offsets may repeat within a pass (default 0)", |o, v| o.norandommap = boolean(v)?),
    opt!("randseed", [], "seed of every random choice (default 137)", |o, v| o.randseed = int(v)?),
    opt!("random_distribution", [], "random (default) or zipf:THETA", |o, v| o.random_distribution =
        match v.split_once(':') {
            None if v == "random" => Distribution::Random,
            Some(("zipf", theta)) => match theta.parse::<f64>() {
                Ok(t) if t > 0.0 && t != 1.0 && t.is_finite() => Distribution::Zipf(t),
                _ =>
                    return Err(format!(
                        "'{theta}' is not a zipf exponent: expected a number above 0, not 1 (e.g. zipf:1.2)"
                    )),
            },
            _ => return Err(format!("'{v}' is not a distribution: expected random or zipf:THETA")),
        }),
    opt!(
        "verify",
        [],
        "crc32c: checksum written blocks and read them back (default none)",
        |o, v| o.verify = match v {
            "0" | "none" => false,
            "crc32c" | "crc32c-intel" => true,
            _ => return Err(format!("'{v}' is not a verify method: expected crc32c or none")),
        }
    ),
    opt!("do_verify", [], "run the verify pass when verify is set (default 1)", |o, v| o.do_verify = boolean(v)?),
    opt!("rate", [], "bandwidth limit in bytes/s, or READ,WRITE (e.g. 10m)", |o, v| o.rate =
        per_direction(v, [0; 2], size)?),
    opt!("rate_iops", [], "IOPS limit, or READ,WRITE", |o, v| o.rate_iops = per_direction(v, [0; 2], int)?),
    opt!("buffer_compress_percentage", [], "percentage of each buffer that compresses (default 0)", |o, v| o
        .buffer_compress_percentage =
        percent(v)?),
    opt!("fallocate", [], "none, native (default), posix, keep, truncate, 0, 1", |o, v| o.fallocate = match v {
        "none" | "0" => Fallocate::None,
        "native" | "posix" | "1" => Fallocate::Native,
        "keep" => Fallocate::Keep,
        "truncate" => Fallocate::Truncate,
        _ => return Err(format!("'{v}' is not a fallocate mode: expected none, native, posix, keep, truncate, 0, 1")),
    }),
    opt!("invalidate", [], "drop the files' page cache before the job (default 1)", |o, v| o.invalidate = boolean(v)?),
    opt!("stonewall", ["wait_for_previous"], "wait for the jobs before to finish; starts a new group", |o, v| o
        .stonewall =
        boolean(v)?),
    opt!("new_group", [], "start a new reporting group", |o, v| o.new_group = boolean(v)?),
    opt!("keep", [], "keep the test files after the run (fsarena's own; default 0)", |o, v| o.keep = boolean(v)?),
];

/// Looks an option up by name or alias.
pub fn find(key: &str) -> Option<&'static OptionDef> {
    OPTIONS.iter().find(|d| d.name == key || d.aliases.contains(&key))
}

impl IoOptions {
    /// Sets `key` to `value`; the error names the key and what is accepted.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), InputError> {
        let def = find(key).ok_or_else(|| {
            InputError::new(format!(
                "unknown io option '{}':{} accepted options are {}",
                crate::plain::cut(key),
                fsarena_core::did_you_mean(key, OPTIONS.iter().map(|d| d.name)),
                OPTIONS.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
            ))
        })?;
        (def.set)(self, value).map_err(|m| InputError::new(crate::plain::value_error(key, value, &m)))
    }

    /// Checks the options together; called once all are set.
    pub fn validate(&self) -> Result<(), InputError> {
        let e = |m: String| Err(InputError::new(m));
        if self.numjobs == 0 {
            return e("numjobs=0: expected at least 1 job".into());
        }
        if self.nrfiles == 0 {
            return e("nrfiles=0: expected at least 1 file".into());
        }
        if self.loops == 0 {
            return e("loops=0: expected at least 1 pass".into());
        }
        let Some(file_size) = self.file_size() else {
            return e(format!("job '{}' has no size: give size= (bytes per job) or filesize=", self.name));
        };
        let largest = self.max_bs();
        if largest > file_size.saturating_sub(self.offset) {
            return e(format!(
                "bs={} is larger than the {} bytes each file offers (size/nrfiles - offset): use a smaller bs or a larger size",
                largest,
                file_size.saturating_sub(self.offset)
            ));
        }
        if self.time_based && self.runtime.is_none() {
            return e("time_based needs runtime= (e.g. runtime=10s)".into());
        }
        if self.verify && !self.rw.writes() {
            return e(format!(
                "verify=crc32c needs a job that writes: rw={:?} only reads; use write, randwrite, rw or randrw",
                self.rw
            )
            .to_lowercase());
        }
        if self.verify && self.engine_caps().diskless {
            return e(format!(
                "verify=crc32c needs data on disk: ioengine={} moves none; use psync or sync",
                self.ioengine
            ));
        }
        if self.verify && self.min_bs() < 32 {
            return e(format!("verify=crc32c needs blocks of at least 32 bytes for its header: bs={}", self.min_bs()));
        }
        // Both become file names inside the target: one path component, nothing more.
        let plain =
            |key: &str, v: &str| crate::plain::check_plain_name(v).map_err(|m| InputError::new(format!("{key}: {m}")));
        plain("name", &self.name)?;
        if let Some(f) = &self.filename {
            plain("filename", f)?;
        }
        Ok(())
    }

    /// The engine's capabilities for this job.
    pub fn engine_caps(&self) -> fsarena_engine::EngineCaps {
        self.ioengine.caps(&self.engine_config(4096))
    }

    /// How a clone sets its engine up, with buffers aligned to `align`.
    pub fn engine_config(&self, align: usize) -> fsarena_engine::EngineConfig {
        let depth = self.queue_depth().depth;
        fsarena_engine::EngineConfig { depth, slot_len: self.max_bs() as usize, align, iodepth: self.iodepth }
    }

    /// The queue-depth settings, fixed up as fio does for this job's engine.
    pub fn queue_depth(&self) -> fsarena_engine::QueueDepth {
        // An engine's caps depend on the depth only through `iodepth` as given (fio's null
        // engine is synchronous at 1), so asking with the raw depth tells whether it is.
        let raw = fsarena_engine::EngineConfig {
            depth: self.iodepth.max(1),
            slot_len: self.max_bs() as usize,
            align: 4096,
            iodepth: self.iodepth,
        };
        fsarena_engine::QueueDepth::new(
            self.iodepth,
            self.iodepth_batch_submit,
            self.iodepth_batch_complete_min,
            self.iodepth_batch_complete_max,
            self.iodepth_low,
            self.ioengine.caps(&raw).sync,
        )
    }

    /// Size of each file.
    pub fn file_size(&self) -> Option<u64> {
        self.filesize.or_else(|| self.size.map(|s| s / u64::from(self.nrfiles.max(1))))
    }

    /// Bytes a job moves per pass (fio's size; filesize × nrfiles when only filesize is given).
    pub fn job_size(&self) -> u64 {
        self.size.unwrap_or_else(|| self.file_size().unwrap_or(0) * u64::from(self.nrfiles))
    }

    /// Smallest block size in use.
    pub fn min_bs(&self) -> u64 {
        if self.bssplit.is_empty() {
            match (self.rw.reads(), self.rw.writes()) {
                (true, false) => self.bs[0],
                (false, true) => self.bs[1],
                _ => self.bs[0].min(self.bs[1]),
            }
        } else {
            self.bssplit.iter().map(|e| e.0).min().unwrap_or(4096)
        }
    }

    /// Largest block size in use.
    pub fn max_bs(&self) -> u64 {
        if self.bssplit.is_empty() {
            match (self.rw.reads(), self.rw.writes()) {
                (true, false) => self.bs[0],
                (false, true) => self.bs[1],
                _ => self.bs[0].max(self.bs[1]),
            }
        } else {
            self.bssplit.iter().map(|e| e.0).max().unwrap_or(4096)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
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
            (&[("ioengine", "io_uring"), ("size", "1m")], "not supported yet"),
            (&[("ioengine", "libaio"), ("size", "1m")], "expected one of psync, sync, null"),
            (
                &[("ioengine", "splice"), ("size", "1m")],
                "'splice' is not an I/O engine: expected one of psync, sync, null",
            ),
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
    fn every_option_has_help_and_unique_names() {
        let mut names: Vec<&str> =
            OPTIONS.iter().flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied())).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "an option name is defined twice");
        assert!(OPTIONS.iter().all(|d| !d.help.is_empty()));
    }
}
