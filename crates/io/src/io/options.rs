//! The `io` workload's options: fio's names, meanings and defaults, defined once.
//!
//! One table ([`OPTIONS`]) serves `--workload io:...`, fio job files and TOML job files,
//! `fsarena help io` and docs/workloads.md; a test checks it against [`IoOptions::default`].

mod outputs;
mod table;
mod words;

pub use outputs::OutputOptions;
pub use table::{find, OPTIONS};
pub use words::fio_words;

use super::job::{READ, WRITE};
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
    /// fio's name for it (`randread`).
    pub fn fio_name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::RandRead => "randread",
            Self::RandWrite => "randwrite",
            Self::ReadWrite => "rw",
            Self::RandRw => "randrw",
        }
    }
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
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// Uniform (with the random map unless `norandommap`).
    Random,
    /// Zipf with exponent θ.
    Zipf(f64),
    /// fio's `zoned:A/S:...`: A% of the accesses go to the next S% of the region, in order.
    Zoned(Vec<(u32, u32)>),
}

impl Distribution {}

/// The fio release whose draws a job follows where releases differ (`fio_version=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioVersion {
    /// fio 3.33 (Debian 12's): random offsets drawn from a stream seeded with
    /// `FIO_RANDSEED × job number` under `randrepeat`.
    V3_33,
    /// fio 3.42: random offsets drawn from the job's own block seed (`offset_state`).
    V3_42,
}

impl FioVersion {
    /// fio's name for the release, as its JSON's `"fio version"` says it.
    pub fn fio_name(self) -> &'static str {
        match self {
            Self::V3_33 => "fio-3.33",
            Self::V3_42 => "fio-3.42",
        }
    }
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
    /// `(block size, percent)` pairs per direction (read, write); overrides `bs` when set.
    pub bssplit: [Vec<(u64, u32)>; 2],
    /// fio's `bsrange=MIN-MAX` per direction: sizes drawn as fio draws them.
    pub bsrange: [Option<(u64, u64)>; 2],
    /// Bytes each job moves per pass (`size=`); split over `nrfiles`.
    pub size: Option<u64>,
    /// Size of each file (default `size / nrfiles`); the smallest under `filesize=MIN-MAX`.
    pub filesize: Option<u64>,
    /// The largest file under `filesize=MIN-MAX`: each file's size is drawn in between.
    pub filesize_max: Option<u64>,
    /// Files per job.
    pub nrfiles: u32,
    /// One file name shared by all jobs instead of `NAME.JOBNUM.FILENUM`.
    pub filename: Option<String>,
    /// `filename=` as given when it named a path (`/tmp/test`): the file is made in the
    /// target under the path's last component (`filename` holds that), and the plan says so.
    pub filename_path: Option<String>,
    /// fio's `directory=`: the target directory when no `--target` is given.
    pub directory: Option<String>,
    /// Start offset in each file.
    pub offset: u64,
    /// Clones of this job, each a process (or a thread with `thread=1`).
    pub numjobs: u32,
    /// fsarena's own: the client mounts the job runs on (`Mounted::client_roots`), each with
    /// `numjobs` clones; 1 (the default) is fio's single client.
    pub clients: u32,
    /// fio's `thread`: clones run as threads; `thread=0` (fio's default) forks a process each.
    pub thread: bool,
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
    /// fio's engine-specific options (`fixedbufs`, `registerfiles`, `sqthread_poll`, `hipri`,
    /// `nonvectored`); `direct` is filled in from [`IoOptions::direct`].
    pub engine_flags: fsarena_engine::EngineFlags,
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
    /// fio's steady-state criterion (`ss=`); used only with `ss_dur`.
    pub ss: super::steady::Criterion,
    /// fio's `ss_dur`: the window of steady-state samples; under a second, no detection.
    pub ss_dur: Nanos,
    /// fio's `ss_ramp`: the time before steady-state samples begin.
    pub ss_ramp: Nanos,
    /// Passes over the files for size-based jobs.
    pub loops: u32,
    /// Random offsets may repeat within a pass.
    pub norandommap: bool,
    /// Seed of every random choice.
    pub randseed: u64,
    /// fio's `randrepeat`: the same choices on every run.
    pub randrepeat: bool,
    /// fio's `random_generator=tausworthe64`.
    pub tausworthe64: bool,
    /// Offset distribution for random jobs.
    pub random_distribution: Distribution,
    /// Checksum written blocks and read them back after the job (`verify=crc32c`).
    pub verify: bool,
    /// Run the verify pass (default 1 when `verify` is set).
    pub do_verify: bool,
    /// fio's `verify_backlog`: verify the written blocks every this many writes, during the
    /// job (0: only in the pass after it).
    pub verify_backlog: u64,
    /// fio's `verify_fatal`: stop checking at the first failure (0: check everything, count
    /// the failures).
    pub verify_fatal: bool,
    /// fio's `verify_only`: write nothing; check what an earlier run of the job wrote.
    pub verify_only: bool,
    /// fio's `verify_state_save`: write down which blocks the job wrote.
    pub verify_state_save: bool,
    /// fio's `verify_state_load`: with `verify_only`, check the blocks the saved state names.
    pub verify_state_load: bool,
    /// How written units are checked (fio's `verify=` method).
    pub verify_method: super::verify::VerifyMethod,
    /// fio's `verify_pattern=`, for `verify=pattern`.
    pub verify_pattern: Option<Vec<u8>>,
    /// Bandwidth limit in bytes/s, per direction (read, write); 0: none.
    pub rate: [u64; 2],
    /// IOPS limit per direction; 0: none.
    pub rate_iops: [u64; 2],
    /// fio's `rate_process=poisson`: the gaps between rated I/Os are drawn from an
    /// exponential distribution (fio's own stream), not even.
    pub rate_poisson: bool,
    /// fio's `rate_ignore_thinktime`: a thinktime pause counts as I/O issued at the rate.
    pub rate_ignore_thinktime: bool,
    /// fio's `rate_cycle` (ms, default 1000): it only sets the window of fio's `rate_min`
    /// check, which fsarena makes over the whole run.
    pub rate_cycle: u64,
    /// fio's `io_submit_mode=offload`: I/Os are handed to `iodepth` worker threads.
    pub offload: bool,
    /// Percentage of each buffer that compresses (zero-filled); 0: all random.
    pub buffer_compress_percentage: u32,
    /// fio's `dedupe_percentage`: the share of written blocks that repeat an earlier block's
    /// content (0: none); see [`super::dedupe`].
    pub dedupe_percentage: u32,
    /// fio's `dedupe_mode=working_set` (false: `repeat`).
    pub dedupe_working_set: bool,
    /// fio's `dedupe_working_set_percentage`: the working set's size, as a share of `size`.
    pub dedupe_working_set_percentage: u32,
    /// fio's `dedupe_global`: the working set is drawn from every job's blocks, so jobs share
    /// their duplicates.
    pub dedupe_global: bool,
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
    /// fio's `startdelay=`: the job starts this long after its group.
    pub startdelay: Nanos,
    /// fio's `create_on_open=`: files are created when the job opens them, not beforehand.
    pub create_on_open: bool,
    /// `filestat`'s `stat_type=`: which stat call it times.
    pub stat_type: fsarena_engine::StatType,
    /// `cpuio`'s options (cpuload, cpumode, cpuchunks, exit_on_io_done).
    pub cpu: super::noio::CpuOptions,
    /// `exec`'s options (program, arguments, grace_time, std_redirect).
    pub exec: super::noio::ExecOptions,
    /// `net`'s options (hostname, port, protocol, listen, nodelay, window_size, mss).
    pub net: super::net::NetOptions,
    /// fio's `exitall=`: when this job ends, every job of its group is stopped.
    pub exitall: bool,
    /// fio's `exit_what`: what this job's `exitall` stops.
    pub exit_what: ExitWhat,
    /// fio's `wait_for=NAME`: the job starts once every clone of job NAME has ended.
    pub wait_for: Option<String>,
    /// fio's `verify_interval`: the bytes each verify header covers; None: the block.
    pub verify_interval_given: Option<u64>,
    /// fio's `fill_device` (`fill_fs`): write until the filesystem is full; ENOSPC ends the
    /// job, and is no error.
    pub fill_device: bool,
    /// fio's `create_serialize` (default on): the job's files are laid out one at a time,
    /// not beside other files.
    pub create_serialize: bool,
    /// fio's `flow`: this job's weight in its flow's I/O ratio (0: no flow control).
    pub flow: u32,
    /// fio's `flow_id`: the flow the job's weight counts in.
    pub flow_id: u32,
    /// fio's `flow_sleep`: how long a job held back by its flow sleeps before asking again.
    pub flow_sleep: Nanos,
    /// fio's `rate_min=` per direction (bytes/s): below it after a second the job fails.
    pub ratemin: [u64; 2],
    /// Options that change no I/O, only the outputs (percentiles, logs, description).
    pub outputs: OutputOptions,
    /// fio's `io_size=` (`io_limit`): bytes a job moves per pass, wrapping around its files
    /// when more than `size`; None: `size`.
    pub io_size: Option<u64>,
    /// fio's `offset_increment=`: clone N starts at `offset + N × offset_increment`.
    pub offset_increment: u64,
    /// fio's `filename_format=` (`$jobname`, `$jobnum`, `$filenum`); None: fio's default
    /// `$jobname.$jobnum.$filenum`.
    pub filename_format: Option<String>,
    /// fio's `rw=read:8k`: a hole skipped after every sequential I/O; negative
    /// (`rw=read:-8k`) steps back, reading backwards (0: none).
    pub rw_skip: i64,
    /// fio's `rw=randread:8`: a new random offset every this many I/Os, the ones between
    /// chosen by `rw_sequencer` (1: every I/O random).
    pub rw_seq_nr: u32,
    /// fio's `rw_sequencer=identical`: the I/Os between random offsets repeat the last
    /// offset instead of going on from it (`sequential`).
    pub rw_sequencer_identical: bool,
    /// fio's `buffer_pattern=`: write buffers hold this pattern, repeated.
    pub buffer_pattern: Option<Vec<u8>>,
    /// fsarena's own: the fio release whose draws to follow where releases differ.
    pub fio_version: FioVersion,
    /// fio's `thinktime`: a pause after every `thinktime_blocks` I/Os (0: none).
    pub thinktime: Nanos,
    /// fio's `thinktime_spin`: the part of the pause spent spinning on the CPU.
    pub thinktime_spin: Nanos,
    /// fio's `thinktime_blocks` (default 1).
    pub thinktime_blocks: u32,
    /// fio's `thinktime_blocks_type=issue`: I/Os counted when issued, not completed.
    pub thinktime_blocks_issue: bool,
    /// fio's `number_ios`: a size-based job stops after this many I/Os per loop, counted
    /// over all its loops (0: no limit; ignored by time-based jobs, as in fio).
    pub number_ios: u64,
}

impl Default for IoOptions {
    fn default() -> Self {
        Self {
            name: "io".into(),
            rw: Rw::Read,
            rwmixread: 50,
            bs: [4096, 4096],
            bssplit: [Vec::new(), Vec::new()],
            bsrange: [None, None],
            size: None,
            filesize: None,
            filesize_max: None,
            nrfiles: 1,
            filename: None,
            filename_path: None,
            directory: None,
            offset: 0,
            numjobs: 1,
            clients: 1,
            thread: false,
            group_reporting: false,
            ioengine: IoEngine::Psync,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            iodepth_low: 0,
            engine_flags: fsarena_engine::EngineFlags::default(),
            direct: false,
            sync: SyncMode::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            runtime: None,
            time_based: false,
            ramp_time: Nanos(0),
            ss: super::steady::Criterion::default(),
            ss_dur: Nanos(0),
            ss_ramp: Nanos(0),
            loops: 1,
            norandommap: false,
            randseed: 0x89,
            randrepeat: true,
            tausworthe64: false,
            random_distribution: Distribution::Random,
            verify: false,
            do_verify: true,
            verify_backlog: 0,
            verify_fatal: false,
            verify_only: false,
            verify_state_save: true,
            verify_state_load: false,
            verify_method: super::verify::VerifyMethod::Crc32c,
            verify_pattern: None,
            rate: [0, 0],
            rate_iops: [0, 0],
            rate_poisson: false,
            rate_ignore_thinktime: false,
            rate_cycle: 1000,
            offload: false,
            buffer_compress_percentage: 0,
            dedupe_percentage: 0,
            dedupe_working_set: false,
            dedupe_working_set_percentage: 5,
            dedupe_global: false,
            fallocate: Fallocate::Native,
            invalidate: true,
            stonewall: false,
            new_group: false,
            keep: false,
            startdelay: Nanos(0),
            create_on_open: false,
            stat_type: fsarena_engine::StatType::Stat,
            cpu: super::noio::CpuOptions::default(),
            exec: super::noio::ExecOptions::default(),
            net: super::net::NetOptions::default(),
            exitall: false,
            exit_what: ExitWhat::Group,
            wait_for: None,
            create_serialize: true,
            fill_device: false,
            verify_interval_given: None,
            flow: 0,
            flow_id: 0,
            flow_sleep: Nanos(0),
            ratemin: [0, 0],
            outputs: OutputOptions::default(),
            io_size: None,
            offset_increment: 0,
            filename_format: None,
            rw_skip: 0,
            rw_seq_nr: 1,
            rw_sequencer_identical: false,
            buffer_pattern: None,
            fio_version: FioVersion::V3_33,
            number_ios: 0,
            thinktime: Nanos(0),
            thinktime_spin: Nanos(0),
            thinktime_blocks: 1,
            thinktime_blocks_issue: false,
        }
    }
}

impl IoOptions {
    /// Sets `key` to `value`; the error names the key and what is accepted.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), InputError> {
        fsarena_workload::options::set("io", OPTIONS, self, key, value)
    }

    /// Every clone the job runs: `numjobs` on each of its `clients`. Clones are numbered
    /// across clients (client k has clones k·numjobs .. (k+1)·numjobs - 1), so their files
    /// and offsets never collide on the shared filesystem and one client is fio exactly.
    pub fn clones(&self) -> u32 {
        self.numjobs.saturating_mul(self.clients)
    }

    /// The client (0-based index into the client roots) clone `clone` runs on.
    pub fn client_of(&self, clone: u32) -> usize {
        (clone / self.numjobs.max(1)) as usize
    }

    /// Checks the options together; called once all are set. The first of [`Self::problems`].
    pub fn validate(&self) -> Result<(), InputError> {
        match self.problems().into_iter().next() {
            Some(first) => Err(first),
            None => Ok(()),
        }
    }

    /// Every problem of the options taken together, so that a job file's are all said in one
    /// run. A check that needs what an earlier one refused (bs against a size that is missing)
    /// is left out rather than guessed.
    pub fn problems(&self) -> Vec<InputError> {
        let mut out = Vec::new();
        let mut e = |m: String| out.push(InputError::new(m));
        if self.numjobs == 0 {
            e("numjobs=0: expected at least 1 job".into());
        }
        if self.clients == 0 {
            e("clients=0: expected at least 1 client".into());
        }
        if self.nrfiles == 0 {
            e("nrfiles=0: expected at least 1 file".into());
        }
        if self.loops == 0 {
            e("loops=0: expected at least 1 pass".into());
        }
        match self.file_size() {
            // fio's cpuio and exec move nothing and need no size.
            _ if self.noio() => {}
            // fio takes the size of a file that exists (made by an earlier job: checked when
            // the job starts), or fills the filesystem.
            None if self.fill_device || (self.filename.is_some() && self.nrfiles == 1) => {}
            None => e(format!("job '{}' has no size: give size= (bytes per job) or filesize=", self.name)),
            Some(file_size) if self.max_bs() > file_size.saturating_sub(self.offset) => e(format!(
                "bs={} is larger than the {} bytes each file offers (size/nrfiles - offset): use a smaller bs or a larger size",
                self.max_bs(),
                file_size.saturating_sub(self.offset)
            )),
            Some(_) => {}
        }
        if self.time_based && self.runtime.is_none() {
            e("time_based needs runtime= (e.g. runtime=10s)".into());
        }
        self.noio_problems(&mut e);
        if self.ioengine == IoEngine::Net {
            super::net::problems(self, &mut e);
        } else if self.net != super::net::NetOptions::default() {
            e(format!(
                "hostname, port, protocol, listen, nodelay, window_size and mss are options of ioengine=net, not of ioengine={}",
                self.ioengine
            ));
        }
        self.rate_problems(&mut e);
        let method = self.verify_method.fio_name();
        for (on, key) in [
            (self.verify_only, "verify_only"),
            (self.verify_backlog > 0, "verify_backlog"),
            (self.verify_state_load, "verify_state_load"),
        ] {
            if on && !self.verify {
                e(format!("{key} needs verify= (e.g. verify=crc32c): nothing is checked without it"));
            }
        }
        if self.verify_state_load && !self.verify_only {
            e("verify_state_load=1 needs verify_only=1: the saved state says what a verify-only run checks".into());
        }
        // A job that only reads checks what it reads (fio verifies each read against the
        // headers an earlier job wrote); with do_verify=0 it checks nothing, as in fio.
        let diskless = self.verify && self.engine_caps().diskless;
        if diskless {
            e(format!("verify={method} needs data on disk: ioengine={} moves none; use psync or sync", self.ioengine));
        }
        if self.verify && self.verify_method == super::verify::VerifyMethod::Pattern(Vec::new()) {
            e("verify=pattern needs verify_pattern= (e.g. verify_pattern=0xdeadbeef)".into());
        }
        let header = self.verify_method.header_len().max(32) as u64;
        if let Some(i) = self.verify_interval_given {
            if i == 0 || !self.min_bs().is_multiple_of(i) {
                e(format!(
                    "verify_interval={i}: expected a divisor of the smallest block size {} (each block holds whole intervals)",
                    self.min_bs()
                ));
            }
        }
        if self.verify && self.verify_interval() < header {
            e(format!(
                "verify={method} needs at least {header} bytes for its header in each block (bs={}, verify_interval={})",
                self.min_bs(),
                self.verify_interval()
            ));
        }
        // The engine can run here (io_uring allowed, AIO events left, ...): said before
        // anything is created.
        if let Err(m) = self.ioengine.probe(&self.engine_config(4096)) {
            e(m);
        }
        // Both become file names inside the target: one path component, nothing more.
        let plain =
            |key: &str, v: &str| fsarena_workload::plain::check_plain_name(v).err().map(|m| format!("{key}: {m}"));
        let mut names = vec![plain("name", &self.name)];
        if let Some(f) = &self.filename {
            names.push(plain("filename", f));
        }
        if self.filename_format.is_some() {
            names.push(plain("filename_format", &self.file_name(0, 0)));
        }
        for m in names.into_iter().flatten() {
            e(m);
        }
        if self.rw_skip != 0 && !self.rw_skip.unsigned_abs().is_multiple_of(self.min_bs()) {
            e(format!(
                "rw={}:{}: the hole after each I/O must be a multiple of bs={}",
                self.rw.fio_name(),
                self.rw_skip,
                self.min_bs()
            ));
        }
        if let Some(m) = self.dedupe_problem() {
            e(m);
        }
        if self.rw_skip < 0 && self.offset > 0 {
            e(format!(
                "rw={}:{} with offset={}: reading backwards from an offset is not supported by fsarena; remove offset= or the '-'",
                self.rw.fio_name(),
                self.rw_skip,
                self.offset
            ));
        }
        out
    }

    /// The engine's capabilities for this job (behind fio's offload workers under
    /// `io_submit_mode=offload`).
    pub fn engine_caps(&self) -> fsarena_engine::EngineCaps {
        self.ioengine.caps_in(&self.engine_config(4096), self.offload)
    }

    /// fio's byte rate of direction `d` (init.c `__setup_rate`): `rate`, else `rate_iops`
    /// times the direction's smallest block, so that under `bsrange` or `bssplit` a larger
    /// I/O takes more of the rate; 0: not limited.
    pub fn rate_bps(&self, d: usize) -> u64 {
        if self.rate[d] > 0 {
            self.rate[d]
        } else {
            self.rate_iops[d].saturating_mul(self.min_bs_of(d))
        }
    }

    /// fio keeps a rate schedule (`TD_F_CHECK_RATE`) when any rate option is given, even
    /// only `rate_min`.
    pub fn rate_checked(&self) -> bool {
        [self.rate, self.rate_iops, self.ratemin].iter().any(|r| r.iter().any(|&v| v > 0))
    }

    /// The rate options taken together: what fio refuses, what it cannot run, and what
    /// fsarena does not do as fio does.
    fn rate_problems(&self, e: &mut impl FnMut(String)) {
        let names = ["read", "write"];
        if self.rate.iter().any(|&r| r > 0) && self.rate_iops.iter().any(|&r| r > 0) {
            e("rate and rate_iops are mutually exclusive, as in fio: give one of them".into());
        }
        for d in [READ, WRITE] {
            if self.rate[d] > 0 && self.rate[d] < self.ratemin[d] {
                e(format!(
                    "rate_min={} is above rate={} for {}: fio refuses a minimum rate above the limit",
                    self.ratemin[d], self.rate[d], names[d]
                ));
            }
        }
        let dirs = [self.rw.reads(), self.rw.writes()];
        if self.rate_poisson && self.rate_checked() {
            for d in [READ, WRITE].into_iter().filter(|&d| dirs[d]) {
                if self.rate_bps(d) / self.min_bs_of(d) == 0 {
                    e(format!(
                        "rate_process=poisson needs a {} rate of at least one block per second (rate_iops=N, or rate= of at least bs={}): \
                         fio 3.33 divides by zero without one",
                        names[d],
                        self.min_bs_of(d)
                    ));
                }
            }
        }
        if self.offload {
            match self.ioengine {
                fsarena_engine::EngineKind::IoUring => e(
                    "ioengine=io_uring can't be used with io_submit_mode=offload, as in fio: use a synchronous engine (psync) or libaio"
                        .into(),
                ),
                fsarena_engine::EngineKind::Sync if self.iodepth > 1 => e(format!(
                    "io_submit_mode=offload with ioengine=sync and iodepth={} is not supported by fsarena: its workers would share each \
                     file's position (lseek, then read or write); use psync",
                    self.iodepth
                )),
                _ => {}
            }
        }
        if self.rate_cycle != 1000 && self.ratemin != [0, 0] {
            e(format!(
                "rate_cycle={} with rate_min is not supported by fsarena: it checks rate_min over the whole run, not per \
                 rate_cycle window; remove rate_cycle",
                self.rate_cycle
            ));
        }
    }

    /// How a clone sets its engine up, with buffers aligned to `align`.
    pub fn engine_config(&self, align: usize) -> fsarena_engine::EngineConfig {
        let depth = self.queue_depth().depth;
        let flags = fsarena_engine::EngineFlags { direct: self.direct, ..self.engine_flags };
        fsarena_engine::EngineConfig { depth, slot_len: self.max_bs() as usize, align, iodepth: self.iodepth, flags }
    }

    /// The queue-depth settings, fixed up as fio does for this job's engine.
    pub fn queue_depth(&self) -> fsarena_engine::QueueDepth {
        if self.offload {
            // fio's job thread under offload keeps `iodepth` I/Os out across its workers,
            // hands each over as soon as it is made, and waits for one when all are out
            // (`get_io_u`); the workers run at iodepth=1, so the batch options change nothing.
            return fsarena_engine::QueueDepth::new(self.iodepth, 1, 1, self.iodepth, self.iodepth, false);
        }
        // An engine's caps depend on the depth only through `iodepth` as given (fio's null
        // engine is synchronous at 1), so asking with the raw depth tells whether it is.
        let raw = fsarena_engine::EngineConfig {
            depth: self.iodepth.max(1),
            slot_len: self.max_bs() as usize,
            align: 4096,
            iodepth: self.iodepth,
            flags: self.engine_flags,
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
    /// fio's engines that move no data (`FIO_NOIO`): `cpuio` and `exec`, whose loop is
    /// [`super::noio`]'s, not the I/O loop.
    pub fn noio(&self) -> bool {
        matches!(self.ioengine, IoEngine::CpuIo | IoEngine::Exec)
    }

    /// What `cpuio` and `exec` need: a runtime (nothing else ends them), and their own
    /// options (fio refuses a cpuio job without cpuload and an exec job without program).
    fn noio_problems(&self, e: &mut impl FnMut(String)) {
        let engine = self.ioengine;
        if self.noio() && self.runtime.is_none() {
            e(format!("ioengine={engine} needs runtime= (e.g. runtime=10s): it moves no data, so only time ends it"));
        }
        if engine == IoEngine::CpuIo {
            if self.cpu.load == 0 {
                e("ioengine=cpuio needs cpuload= (the percent of one CPU to use, 1 to 100)".into());
            }
            if self.cpu.chunk_us == 0 && self.cpu.mode == super::noio::CpuMode::Noop {
                e("cpuchunks=0: expected at least 1 microsecond of burn per chunk".into());
            }
        }
        if engine == IoEngine::Exec {
            if self.exec.program.is_none() {
                e("ioengine=exec needs program= (the program to run, e.g. program=/usr/bin/sleep)".into());
            }
            if self.exec.std_redirect && (self.name.contains('/') || self.name.starts_with('.')) {
                e(format!(
                    "exec: std_redirect=1 writes '{0}.stdout' and '{0}.stderr' in the target: the job name must not contain '/' or start with '.' (or set std_redirect=0)",
                    self.name
                ));
            }
        }
    }

    pub fn file_size(&self) -> Option<u64> {
        self.filesize.or_else(|| self.size.map(|s| s / u64::from(self.nrfiles.max(1))))
    }

    /// Bytes a job moves per pass: fio's `io_size`, else its size (filesize × nrfiles when only
    /// filesize is given).
    pub fn job_size(&self) -> u64 {
        self.io_size.or(self.size).unwrap_or_else(|| self.file_size().unwrap_or(0) * u64::from(self.nrfiles))
    }

    /// Waits fio's `startdelay` before the job's measured phase, giving up early on `stop`.
    pub fn wait_start_delay(&self, stop: &std::sync::atomic::AtomicBool) {
        let until = std::time::Instant::now() + std::time::Duration::from_nanos(self.startdelay.0);
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            // Short naps, so that Ctrl-C is not kept waiting for a long delay.
            std::thread::sleep(left.min(std::time::Duration::from_millis(20)));
        }
    }

    /// fio's `rate_min`: the job fails when a direction's bandwidth after fio's 2-second
    /// settle period is below it. Checked on the average over the rest of the job, where fio
    /// checks every `ratecycle` (1 s): a job that slows down only briefly may pass here.
    pub fn ratemin_missed(&self, bytes: [u64; 2], runtime_ns: u64) -> Option<String> {
        const SETTLE_NS: u64 = 2_000_000_000;
        if self.ratemin == [0, 0] || runtime_ns <= SETTLE_NS + 1_000_000_000 {
            return None;
        }
        let (dirs, names) = ([self.rw.reads(), self.rw.writes()], ["read", "write"]);
        (0..2).filter(|&d| dirs[d] && self.ratemin[d] > 0).find_map(|d| {
            let rate = u128::from(bytes[d]) * 1_000_000_000 / u128::from(runtime_ns);
            (rate < u128::from(self.ratemin[d]))
                .then(|| format!("{}: {} rate_min={}B/s not met, got {rate}B/s", self.name, names[d], self.ratemin[d]))
        })
    }

    /// Where clone `clone` starts in each file (fio's `offset + subjob × offset_increment`).
    pub fn clone_offset(&self, clone: u32) -> u64 {
        self.offset.saturating_add(u64::from(clone).saturating_mul(self.offset_increment))
    }

    /// The name of file `filenum` of clone `clone`, by `filename_format` as fio expands it.
    pub fn file_name(&self, clone: u32, filenum: u32) -> String {
        match &self.filename_format {
            None => format!("{}.{clone}.{filenum}", self.name),
            Some(f) => f
                .replace("$jobname", &self.name)
                .replace("$jobnum", &clone.to_string())
                .replace("$filenum", &filenum.to_string()),
        }
    }

    /// The seed of fio's streams: `randseed`, or one from the system when `randrepeat=0` and
    /// `randseed` is left at its default (fio's `setup_random_seeds`; an explicit
    /// `randseed=137` is taken as the default, the one case where fsarena differs).
    pub fn fio_seed(&self) -> u64 {
        if self.randrepeat || self.randseed != 0x89 {
            self.randseed
        } else {
            fastrand::u64(..)
        }
    }

    /// True when the random-offset stream is seeded with `FIO_RANDSEED × job number`, as fio
    /// 3.33 seeds it under `randrepeat` (fio 3.42 seeds it from the job's seeds).
    pub fn fixed_block_seed(&self) -> bool {
        self.randrepeat && self.fio_version == FioVersion::V3_33
    }

    /// Smallest block size of direction `d` (fio's `min_bs[ddir]`).
    pub fn min_bs_of(&self, d: usize) -> u64 {
        match (&self.bssplit[d][..], self.bsrange[d]) {
            ([], None) => self.bs[d],
            ([], Some((lo, _))) => lo,
            (split, _) => split.iter().map(|e| e.0).min().unwrap_or(self.bs[d]),
        }
    }

    /// Largest block size of direction `d` (fio's `max_bs[ddir]`).
    pub fn max_bs_of(&self, d: usize) -> u64 {
        match (&self.bssplit[d][..], self.bsrange[d]) {
            ([], None) => self.bs[d],
            ([], Some((_, hi))) => hi,
            (split, _) => split.iter().map(|e| e.0).max().unwrap_or(self.bs[d]),
        }
    }

    /// True when a direction's sizes are drawn (`bssplit` or `bsrange`), not fixed.
    pub fn sizes_drawn(&self) -> bool {
        (0..2).any(|d| !self.bssplit[d].is_empty() || self.bsrange[d].is_some())
    }

    /// The directions the job moves data in.
    fn used_dirs(&self) -> impl Iterator<Item = usize> {
        let (r, w) = (self.rw.reads(), self.rw.writes());
        [(0, r || !w), (1, w)].into_iter().filter(|e| e.1).map(|e| e.0)
    }

    /// Smallest block size in use.
    pub fn min_bs(&self) -> u64 {
        self.used_dirs().map(|d| self.min_bs_of(d)).min().unwrap_or(self.bs[0])
    }

    /// Largest block size in use.
    pub fn max_bs(&self) -> u64 {
        self.used_dirs().map(|d| self.max_bs_of(d)).max().unwrap_or(self.bs[0])
    }
}

/// Fills `buf` with `pattern` repeated (fio's `buffer_pattern`).
pub fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    for (b, p) in buf.iter_mut().zip(pattern.iter().cycle()) {
        *b = *p;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "options_tests.rs"]
mod tests;

impl IoOptions {
    /// fio's `verify_interval`: the bytes each verify header covers, the smallest block by
    /// default.
    pub fn verify_interval(&self) -> u64 {
        self.verify_interval_given.unwrap_or_else(|| self.min_bs())
    }

    /// [`IoOptions::set`] for a job file's line. An absolute `filename=` (the scratch file
    /// a job file names on its author's machine, `/tmp/test`) is run on the filesystem under
    /// test, which is what fsarena measures: the file is made in the target under the path's
    /// last component, never at the path itself, and the plan listing says so. A relative
    /// path (`../x`, `sub/x`) stays refused, as everywhere: fsarena makes no directories.
    pub fn set_from_job_file(&mut self, key: &str, value: &str) -> Result<(), InputError> {
        let Some(rest) = value.strip_prefix('/').filter(|_| key == "filename") else {
            return self.set(key, value);
        };
        let last = rest.rsplit('/').next().unwrap_or_default();
        if last.is_empty() || last == "." || last == ".." {
            return Err(InputError::new(format!(
                "filename: '{}' names no file (it ends in '{}'): expected a file name, or an absolute path whose last component is one (run as that name in the target)",
                fsarena_core::printable(value),
                if last.is_empty() { "/" } else { last }
            )));
        }
        self.set(key, last)?;
        self.filename_path = Some(value.to_string());
        Ok(())
    }
}

/// fio's `exit_what`: which jobs a job's `exitall` stops when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of its reporting group (`new_group` starts one; fio's default).
    Group,
    /// Every job running: the jobs of its stonewall stage, whatever their reporting group.
    Stonewall,
    /// Those, and every job after them, which is reported with nothing done.
    All,
}
