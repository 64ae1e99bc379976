//! The `io` option table: one row per fio option (name, fio aliases, type, default, unit,
//! help) with the setter that writes it into [`IoOptions`], and the value parsers only io uses.

use super::{Distribution, Fallocate, IoEngine, IoOptions, Rw, SyncMode};
use crate::options::{boolean, nonzero_size, opt, percent, size, whole, whole32, OptionDef};
use fsarena_core::option::DefaultValue::{Derived, Is, Unset};
use fsarena_core::option::ListSyntax;
use fsarena_core::option::ValueKind::{Bool, Choice, Count, PerDirection, Percent, Size, Split, Text, Time};
use fsarena_core::units::parse_time;

/// Nanoseconds per second: a bare `runtime` or `ramp_time` is in seconds, as in fio.
pub(super) const SECOND: u64 = 1_000_000_000;

/// The largest queue depth accepted: every slot is a buffer of the largest block size.
const MAX_DEPTH: u64 = 65536;

fn depth(v: &str, min: u64) -> Result<u32, String> {
    match whole(v)? {
        n if n < min => Err(format!("'{v}' is too small: expected at least {min}")),
        n if n > MAX_DEPTH => Err(format!("'{v}' is too large: expected at most {MAX_DEPTH}")),
        n => Ok(n as u32),
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

/// The words `rw=` accepts.
const RW_WORDS: &[&str] = &["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"];

fn parse_rw(v: &str) -> Result<Rw, String> {
    Ok(match v {
        "read" => Rw::Read,
        "write" => Rw::Write,
        "randread" => Rw::RandRead,
        "randwrite" => Rw::RandWrite,
        "rw" | "readwrite" => Rw::ReadWrite,
        "randrw" => Rw::RandRw,
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            return Err(format!("rw={v} (trim) is not supported yet: expected {}", RW_WORDS.join(", ")))
        }
        _ => return Err(format!("'{v}' is not an access pattern: expected {}", RW_WORDS.join(", "))),
    })
}

pub(super) fn parse_bssplit(v: &str) -> Result<Vec<(u64, u32)>, String> {
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

fn parse_distribution(v: &str) -> Result<Distribution, String> {
    match v.split_once(':') {
        None if v == "random" => Ok(Distribution::Random),
        Some(("zipf", theta)) => match theta.parse::<f64>() {
            Ok(t) if t > 0.0 && t != 1.0 && t.is_finite() => Ok(Distribution::Zipf(t)),
            _ => Err(format!("'{theta}' is not a zipf exponent: expected a number above 0, not 1 (e.g. zipf:1.2)")),
        },
        _ => Err(format!("'{v}' is not a distribution: expected random or zipf:THETA")),
    }
}

/// The engines `ioengine=` names, as the engine registry has them (a test checks).
pub(super) const ENGINE_WORDS: &[&str] = &["psync", "sync", "null"];

/// A row of the io table.
macro_rules! io {
    ($($rest:tt)*) => { opt!(IoOptions, $($rest)*) };
}

/// Every option of the `io` workload: fio's names, meanings and defaults.
pub static OPTIONS: &[OptionDef<IoOptions>] = &[
    io!("name", Text, Is("io"), "job name; files are NAME.JOBNUM.FILENUM", |o, v| o.name = v.to_string())
        .list(ListSyntax::None),
    io!("rw", Choice(RW_WORDS), Is("read"), "access pattern (rw and readwrite: sequential mixed)", |o, v| o.rw =
        parse_rw(v)?)
    .aka(&["readwrite"]),
    io!("rwmixread", Percent, Is("50"), "percentage of reads in mixed jobs", |o, v| o.rwmixread = percent(v)?),
    io!("rwmixwrite", Percent, Is("50"), "percentage of writes in mixed jobs", |o, v| o.rwmixread = 100 - percent(v)?),
    io!("bs", PerDirection(&Size), Is("4k"), "block size, or READ,WRITE", |o, v| o.bs =
        per_direction(v, [4096; 2], nonzero_size)?)
    .aka(&["blocksize"]),
    io!("bssplit", Split, Unset, "block size mix, e.g. 4k/10:64k/90; overrides bs", |o, v| o.bssplit =
        parse_bssplit(v)?),
    io!(
        "size",
        Size,
        Unset,
        "bytes each job moves per pass, split over nrfiles (size or filesize is required)",
        |o, v| o.size = Some(nonzero_size(v)?)
    ),
    io!("filesize", Size, Derived("size / nrfiles"), "size of each file", |o, v| o.filesize = Some(nonzero_size(v)?)),
    io!("nrfiles", Count, Is("1"), "files per job", |o, v| o.nrfiles = whole32(v)?).aka(&["nr_files"]).unit("files"),
    io!("filename", Text, Unset, "one file shared by all jobs, inside the target", |o, v| o.filename =
        Some(v.to_string())),
    io!("directory", Text, Unset, "the target directory when no --target is given", |o, v| o.directory =
        Some(v.to_string())),
    io!("offset", Size, Is("0"), "start offset in each file", |o, v| o.offset = size(v)?),
    io!("numjobs", Count, Is("1"), "clones of the job, each a thread", |o, v| o.numjobs = whole32(v)?).unit("jobs"),
    io!("group_reporting", Bool, Is("0"), "report each group of jobs as one", |o, v| o.group_reporting = boolean(v)?),
    io!(
        "ioengine",
        Choice(ENGINE_WORDS),
        Is("psync"),
        "I/O engine; null does no I/O and measures fsarena's own overhead",
        |o, v| o.ioengine = IoEngine::parse(v).map_err(|e| e.to_string())?
    ),
    io!("iodepth", Count, Is("1"), "I/Os in flight per job; synchronous engines use 1, as in fio", |o, v| o.iodepth =
        depth(v, 1)?),
    io!("iodepth_batch_submit", Count, Is("1"), "queued I/Os sent in one go; 0: iodepth", |o, v| o
        .iodepth_batch_submit =
        depth(v, 0)?)
    .aka(&["iodepth_batch"]),
    io!("iodepth_batch_complete_min", Count, Is("1"), "completions waited for in one go; 0 polls", |o, v| o
        .iodepth_batch_complete_min =
        depth(v, 0)?)
    .aka(&["iodepth_batch_complete"]),
    io!(
        "iodepth_batch_complete_max",
        Count,
        Is("0"),
        "completions taken at most in one go; 0: iodepth_batch_complete_min",
        |o, v| o.iodepth_batch_complete_max = depth(v, 0)?
    ),
    io!("iodepth_low", Count, Is("0"), "after a full queue, reap down to this many in flight; 0: iodepth", |o, v| o
        .iodepth_low =
        depth(v, 0)?),
    io!("thread", Bool, Is("1"), "accepted for fio job files; jobs are always threads", |_o, v| {
        boolean(v)?;
    }),
    io!("direct", Bool, Is("0"), "O_DIRECT", |o, v| o.direct = boolean(v)?),
    io!("buffered", Bool, Is("1"), "the opposite of direct", |o, v| o.direct = !boolean(v)?),
    io!(
        "sync",
        Choice(&["0", "1", "sync", "dsync"]),
        Is("0"),
        "open with O_SYNC (1, sync) or O_DSYNC (dsync)",
        |o, v| o.sync = match v {
            "0" | "none" => SyncMode::None,
            "" | "1" | "sync" => SyncMode::Sync,
            "dsync" => SyncMode::Dsync,
            _ => return Err(format!("'{v}' is not a sync mode: expected 0, 1, sync, dsync")),
        }
    ),
    io!("fsync", Count, Is("0"), "fsync every N writes (0: never)", |o, v| o.fsync = whole32(v)?).unit("writes"),
    io!("fdatasync", Count, Is("0"), "fdatasync every N writes (0: never)", |o, v| o.fdatasync = whole32(v)?)
        .unit("writes"),
    io!("end_fsync", Bool, Is("0"), "fsync the files when the job ends (timed, as fio)", |o, v| o.end_fsync =
        boolean(v)?),
    io!("runtime", Time, Unset, "time limit of the job (e.g. 10, 10s, 2m)", |o, v| o.runtime =
        Some(parse_time(v, SECOND).map_err(|e| e.message)?))
    .aka(&["timeout"]),
    io!("time_based", Bool, Is("0"), "run until runtime, looping over the files", |o, v| o.time_based = boolean(v)?),
    io!("ramp_time", Time, Is("0"), "warm-up time excluded from the figures", |o, v| o.ramp_time =
        parse_time(v, SECOND).map_err(|e| e.message)?),
    io!("loops", Count, Is("1"), "passes over the files", |o, v| o.loops = whole32(v)?),
    io!("norandommap", Bool, Is("0"), "random offsets may repeat within a pass", |o, v| o.norandommap = boolean(v)?),
    io!("randseed", Count, Is("137"), "seed of every random choice", |o, v| o.randseed = whole(v)?),
    io!(
        "random_distribution",
        Choice(&["random", "zipf:THETA"]),
        Is("random"),
        "offset distribution of random jobs",
        |o, v| o.random_distribution = parse_distribution(v)?
    ),
    io!(
        "verify",
        Choice(&["none", "crc32c"]),
        Is("none"),
        "crc32c: checksum written blocks and read them back",
        |o, v| o.verify = match v {
            "0" | "none" => false,
            "crc32c" | "crc32c-intel" => true,
            _ => return Err(format!("'{v}' is not a verify method: expected crc32c or none")),
        }
    ),
    io!("do_verify", Bool, Is("1"), "run the verify pass when verify is set", |o, v| o.do_verify = boolean(v)?),
    io!("rate", PerDirection(&Size), Is("0"), "bandwidth limit (0: none), or READ,WRITE (e.g. 10m)", |o, v| o.rate =
        per_direction(v, [0; 2], size)?)
    .unit("bytes/s"),
    io!("rate_iops", PerDirection(&Count), Is("0"), "IOPS limit (0: none), or READ,WRITE", |o, v| o.rate_iops =
        per_direction(v, [0; 2], whole)?)
    .unit("IOPS"),
    io!(
        "buffer_compress_percentage",
        Percent,
        Is("0"),
        "percentage of each buffer that compresses (zero-filled)",
        |o, v| o.buffer_compress_percentage = percent(v)?
    ),
    io!(
        "fallocate",
        Choice(&["none", "native", "posix", "keep", "truncate", "0", "1"]),
        Is("native"),
        "preallocation of files written from scratch",
        |o, v| o.fallocate = match v {
            "none" | "0" => Fallocate::None,
            "native" | "posix" | "1" => Fallocate::Native,
            "keep" => Fallocate::Keep,
            "truncate" => Fallocate::Truncate,
            _ =>
                return Err(format!(
                    "'{v}' is not a fallocate mode: expected none, native, posix, keep, truncate, 0, 1"
                )),
        }
    ),
    io!("invalidate", Bool, Is("1"), "drop the files' page cache before the job", |o, v| o.invalidate = boolean(v)?),
    io!("stonewall", Bool, Is("0"), "wait for the jobs before to finish; starts a new group", |o, v| o.stonewall =
        boolean(v)?)
    .aka(&["wait_for_previous"]),
    io!("new_group", Bool, Is("0"), "start a new reporting group", |o, v| o.new_group = boolean(v)?),
    io!("keep", Bool, Is("0"), "keep the test files after the run (fsarena's own)", |o, v| o.keep = boolean(v)?),
];

/// Looks an option up by name or alias.
pub fn find(key: &str) -> Option<&'static OptionDef<IoOptions>> {
    crate::options::find(OPTIONS, key)
}
