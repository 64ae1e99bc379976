//! The `dd` workload: what `dd if=/dev/zero of=FILE bs=1M count=1024 oflag=dsync` and
//! `dd if=FILE of=/dev/null bs=1M` measure, in dd's words, on every target of a plan.
//!
//! The trading-platform study (../shared/studies, 001 B1) measured sequential writes with
//! `oflag=dsync` and reads of one large file and of many small ones. `files=N` writes (or
//! reads) N files one after another, as a shell loop of dd would. A read runs on files written
//! first, untimed, with the page cache dropped before the timed pass (as `dd` after
//! `echo 3 > /proc/sys/vm/drop_caches`), so it reads from the device, not from memory.
//!
//! It is also the smallest workload on the phase runner and the option table: a template for
//! the next kind (module, plus one line in the registry).

use fsarena_core::option::DefaultValue::{Is, Unset};
use fsarena_core::option::ListSyntax;
use fsarena_core::option::ValueKind::{Bool, Choice, Count, Size};
use fsarena_core::{Better, InputError, Measurement, Spec};
use fsarena_workload::options::{boolean, nonzero_size, opt, OptionDef};
use fsarena_workload::phase::{Phase, Phases, Recorder, Worker};
use fsarena_workload::{Finish, Footprint, RunEnv, Workload, WorkloadError};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags};

/// The options of one `dd` run, with dd's defaults where dd has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdOptions {
    /// Bytes per read() or write() (dd's `bs`, default 512).
    pub bs: u64,
    /// Blocks per file (dd's `count`; dd without it copies /dev/zero for ever, so it is needed).
    pub count: Option<u64>,
    /// `write` (if=/dev/zero of=FILE) or `read` (if=FILE of=/dev/null).
    pub read: bool,
    /// Files, one after another (a shell loop of dd).
    pub files: u64,
    /// `oflag=dsync`: every write is durable before it returns.
    pub dsync: bool,
    /// `oflag=sync`.
    pub sync: bool,
    /// `oflag=direct` / `iflag=direct`: O_DIRECT.
    pub direct: bool,
    /// `conv=fsync` or `conv=fdatasync`: one sync at the end of each file, timed (dd counts it).
    pub fsync: bool,
    /// `conv=fdatasync`: that sync is fdatasync(2), as GNU dd's.
    pub fdatasync: bool,
    /// Keep the files after the run (fsarena's own).
    pub keep: bool,
}

impl Default for DdOptions {
    fn default() -> Self {
        Self {
            bs: 512,
            count: None,
            read: false,
            files: 1,
            dsync: false,
            sync: false,
            direct: false,
            fsync: false,
            fdatasync: false,
            keep: false,
        }
    }
}

/// dd's `oflag`/`iflag` words: `direct`, `dsync`, `sync`, several joined by commas as in dd
/// (`oflag='direct,dsync'`); a sweep of them uses `|` (`oflag='dsync|direct'`), as fio's `bs`.
fn flags(o: &mut DdOptions, v: &str) -> Result<(), String> {
    for flag in v.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        match flag {
            "direct" => o.direct = true,
            "dsync" => o.dsync = true,
            "sync" => o.sync = true,
            _ => return Err(format!("'{flag}' is not a flag fsarena's dd supports: expected direct, dsync or sync")),
        }
    }
    Ok(())
}

/// A row of the dd table.
macro_rules! dd {
    ($($rest:tt)*) => { opt!(DdOptions, $($rest)*) };
}

/// Every option of the `dd` workload.
pub static OPTIONS: &[OptionDef<DdOptions>] = &[
    dd!("bs", Size, Is("512"), "bytes per read() or write(), as dd's bs", |o, v| o.bs = nonzero_size(v)?),
    dd!("count", Count, Unset, "blocks per file, as dd's count (needed)", |o, v| o.count =
        Some(fsarena_workload::options::whole(v)?)),
    dd!("mode", Choice(&["write", "read"]), Is("write"), "write: dd if=/dev/zero of=FILE; read: dd if=FILE of=/dev/null, on files written first, untimed, caches dropped", |o, v| o.read = match v.trim() {
        "write" => false,
        "read" => true,
        _ => return Err(format!("'{v}' is not a mode: expected write or read")),
    }),
    dd!("files", Count, Is("1"), "files, one after another, as a shell loop of dd", |o, v| o.files =
        fsarena_workload::options::positive(v)?.into()),
    dd!("oflag", Choice(&["direct", "dsync", "sync"]), Unset, "direct, dsync or sync, several joined by commas, as dd's oflag", |o, v| flags(o, v)?)
        .list(ListSyntax::Bar),
    dd!("iflag", Choice(&["direct"]), Unset, "direct, as dd's iflag for reads", |o, v| flags(o, v)?).list(ListSyntax::Bar),
    dd!("conv", Choice(&["fsync", "fdatasync"]), Unset, "fsync or fdatasync: one sync at the end of each file, timed, as dd's conv", |o, v| {
        (o.fsync, o.fdatasync) = match v.trim() {
            "fsync" => (true, false),
            "fdatasync" => (true, true),
            _ => return Err(format!("'{v}' is not a conv fsarena's dd supports: expected fsync or fdatasync")),
        }
    }),
    dd!("keep", Bool, Is("0"), "keep the files after the run (fsarena's own)", |o, v| o.keep = boolean(v)?),
];

/// The `dd` workload.
#[derive(Debug, Clone)]
pub struct DdWorkload {
    options: DdOptions,
    count: u64,
    given: Vec<(String, String)>,
}

impl DdWorkload {
    /// From `--workload dd:bs=1m,count=1024,oflag=dsync`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = DdOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("dd", OPTIONS, &mut options, k, v)?;
        }
        let count = options
            .count
            .ok_or_else(|| InputError::new("dd needs count= (blocks per file), as dd without count copies for ever"))?;
        if count == 0 {
            return Err(InputError::new("count=0: expected at least 1 block"));
        }
        Ok(Self { options, count, given: spec.params.clone() })
    }

    fn name(i: u64) -> String {
        format!("dd.{i}")
    }

    fn open_flags(&self, create: bool) -> OFlags {
        let o = &self.options;
        // O_NONBLOCK: a FIFO the target serves in a file's place cannot block the open
        // (reads and writes of a regular file ignore it).
        let mut flags = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        flags |= if create { OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL } else { OFlags::RDONLY };
        if o.direct {
            flags |= OFlags::DIRECT;
        }
        if create && o.dsync {
            flags |= fsarena_engine::O_DSYNC;
        }
        if create && o.sync {
            flags |= OFlags::SYNC;
        }
        flags
    }
}

/// The one timed phase: the writes, or the reads.
#[derive(Debug, Clone, Copy)]
struct Pass(&'static str);

impl Phase for Pass {
    fn op(self) -> &'static str {
        self.0
    }
}

/// The one thread: dd is one process copying one file after another.
struct Copier<'a> {
    dd: &'a DdWorkload,
    root: &'a OwnedFd,
    /// Files this run created, removed at the end.
    created: u64,
}

impl Copier<'_> {
    fn file(&mut self, i: u64, write: bool, rec: &mut Recorder<'_>) -> Result<(), String> {
        let o = &self.dd.options;
        let name = DdWorkload::name(i);
        let fd = rustix::fs::openat(self.root, name.as_str(), self.dd.open_flags(write), Mode::from_raw_mode(0o600))
            .map_err(|e| format!("open {name}: {e}"))?;
        if write {
            self.created += 1;
        }
        // O_DIRECT needs an aligned buffer; 4 KiB covers every filesystem here.
        let mut buf = fsarena_engine::AlignedBuf::new(o.bs as usize, 4096);
        for block in 0..self.dd.count {
            if block % 64 == 0 && rec.stopped() {
                return Ok(());
            }
            let done =
                if write { rustix::io::write(&fd, buf.as_slice()) } else { rustix::io::read(&fd, buf.as_mut_slice()) }
                    .map_err(|e| format!("{} {name} at block {block}: {e}", if write { "write" } else { "read" }))?;
            if done == 0 {
                break;
            }
            rec.done(done as u64);
        }
        if write && o.fdatasync {
            rustix::fs::fdatasync(fd.as_fd()).map_err(|e| format!("fdatasync {name}: {e}"))?;
        } else if write && o.fsync {
            rustix::fs::fsync(fd.as_fd()).map_err(|e| format!("fsync {name}: {e}"))?;
        }
        Ok(())
    }
}

impl Worker for Copier<'_> {
    type Phase = Pass;

    fn run(&mut self, phase: Pass, rec: &mut Recorder<'_>) {
        let write = phase.0 == "write";
        for i in 0..self.dd.options.files {
            if let Err(e) = self.file(i, write, rec) {
                rec.fail(e);
                return;
            }
        }
    }
}

impl Workload for DdWorkload {
    fn kind(&self) -> &'static str {
        "dd"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        Footprint {
            source: format!("dd workload (bs={}, count={}, files={})", o.bs, self.count, o.files),
            threads: 1,
            buffer_bytes: o.bs + 4096,
            bytes_on_target: o.bs.saturating_mul(self.count).saturating_mul(o.files),
            files: o.files,
            open_files: 1,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        let (from, to) = if o.read { ("FILE", "/dev/null") } else { ("/dev/zero", "FILE") };
        let mut line = format!("dd if={from} of={to} bs={} count={}", o.bs, self.count);
        // The flags in dd's words, as the timed pass opens its files: a read's O_DIRECT is
        // iflag=; dsync and sync apply to writes (the read's untimed layout writes with them).
        let flags: Vec<&str> = [(o.direct, "direct"), (o.dsync && !o.read, "dsync"), (o.sync && !o.read, "sync")]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect();
        if !flags.is_empty() {
            line += &format!(" {}={}", if o.read { "iflag" } else { "oflag" }, flags.join(","));
        }
        if o.fsync && !o.read {
            line += if o.fdatasync { " conv=fdatasync" } else { " conv=fsync" };
        }
        vec![format!("{line} × {} file(s)", o.files)]
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let fail = |message: String| WorkloadError { message, partial: Vec::new() };
        let root = rustix::fs::open(env.root, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| fail(format!("open {}: {e}", env.root.display())))?;
        let phases = Phases { name: "dd", stop: env.stop, live: env.live, before_each: None, rendezvous: None };
        let mut copier = [Copier { dd: self, root: &root, created: 0 }];
        let mut error = None;
        if self.options.read {
            // The files to read, written first with the same flags, untimed, then cold.
            let quiet = fsarena_workload::live::Live::unused();
            let layout = Phases { live: quiet, ..phases };
            error = layout.run(&[Pass("write")], &mut copier).remove(0).error;
            if let (None, Some(drop)) = (&error, env.drop_caches) {
                error = drop().err().map(|e| format!("dd: dropping the caches before reading: {e}"));
            }
        }
        let mut m = Measurement::default();
        if error.is_none() {
            let pass = Pass(if self.options.read { "read" } else { "write" });
            let total = phases.run(&[pass], &mut copier).remove(0);
            error = total.error.clone();
            let secs = total.span_ns() as f64 / 1e9;
            if secs > 0.0 {
                // dd's closing figure: bytes over the whole copy, syncs included.
                m.push("bw", "bytes/s", Better::Higher, total.bytes as f64 / secs);
                m.push("elapsed", "ns", Better::Lower, total.span_ns() as f64);
                m.push(&format!("{}_lat_mean", pass.0), "ns", Better::Lower, total.hist.mean());
                m.push(&format!("{}_lat_p99", pass.0), "ns", Better::Lower, total.hist.percentile(99.0) as f64);
            }
            m.add_latency(pass.0, &total.hist);
        }
        if !self.options.keep {
            for i in 0..copier[0].created {
                let _ = rustix::fs::unlinkat(&root, DdWorkload::name(i).as_str(), rustix::fs::AtFlags::empty());
            }
        }
        m.finish(error, env.stop.load(std::sync::atomic::Ordering::Relaxed))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn run(spec: &str) -> Result<Measurement, WorkloadError> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("fsarena-dd-test-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        let stop = AtomicBool::new(false);
        let w = DdWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap();
        let out = w.run(&RunEnv::quiet(&dir, &stop)).map(fsarena_workload::one);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "files left");
        std::fs::remove_dir(&dir).unwrap();
        out
    }

    #[test]
    fn writes_and_reads_count_blocks_of_bs_over_files() {
        let m = run("dd:bs=64k,count=16,files=3,conv=fsync").unwrap();
        assert_eq!(m.latency("write").unwrap().len(), 48);
        assert!(m.metric("bw").unwrap().value > 0.0);
        let m = run("dd:bs=4k,count=8,mode=read,files=2").unwrap();
        assert_eq!(m.latency("read").unwrap().len(), 16);
        assert!(m.latency("write").is_none(), "the layout is not measured");
    }

    #[test]
    fn dds_words_and_refusals() {
        let w = DdWorkload::from_spec(&Spec::parse("dd:bs=1m,count=4,oflag='direct,dsync'").unwrap()).unwrap();
        assert!(w.options.direct && w.options.dsync && !w.options.sync);
        assert_eq!(w.describe()[0], "dd if=/dev/zero of=FILE bs=1048576 count=4 oflag=direct,dsync × 1 file(s)");
        let w = DdWorkload::from_spec(&Spec::parse("dd:bs=4k,count=2,conv=fsync,files=3").unwrap()).unwrap();
        assert_eq!(w.describe()[0], "dd if=/dev/zero of=FILE bs=4096 count=2 conv=fsync × 3 file(s)");
        let w = DdWorkload::from_spec(&Spec::parse("dd:bs=4k,count=2,mode=read,oflag=direct").unwrap()).unwrap();
        assert_eq!(w.describe()[0], "dd if=FILE of=/dev/null bs=4096 count=2 iflag=direct × 1 file(s)");
        for (spec, want) in [
            ("dd:bs=1m", "needs count="),
            ("dd:count=1,oflag=nocache", "'nocache' is not a flag"),
            ("dd:count=1,mode=copy", "not a mode"),
            ("dd:count=1,cout=2", "did you mean 'count'"),
        ] {
            let e = DdWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap_err();
            assert!(e.message.contains(want), "{spec}: {}", e.message);
        }
    }

    #[test]
    fn the_table_and_the_defaults_agree() {
        fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    }
}
