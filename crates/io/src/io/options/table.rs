//! The `io` option table: one row per fio option (name, fio aliases, type, default, unit,
//! help) with the setter that writes it into [`IoOptions`], and the value parsers only io uses.

use super::super::verify::VerifyMethod;
use super::{outputs, Distribution, ExitWhat, Fallocate, FioVersion, IoEngine, IoOptions, Rw, SyncMode};
use fsarena_core::option::DefaultValue::{Derived, Is, Unset};
use fsarena_core::option::ListSyntax;
use fsarena_core::option::ValueKind::{Bool, Choice, Count, PerDirection, Percent, Size, Split, Text, Time};
use fsarena_core::units::parse_time;
use fsarena_workload::options::{boolean, nonzero_size, opt, percent, size, whole, whole32, OptionDef};

/// Nanoseconds per second: a bare `runtime` or `ramp_time` is in seconds, as in fio.
pub(super) const SECOND: u64 = 1_000_000_000;
/// Nanoseconds per microsecond: fio's other times (`thinktime`) are in microseconds.
const MICROSECOND: u64 = 1_000;

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

/// `rw=PATTERN` or fio's offset modifier (options.c `str_rw_cb`), as (pattern, skip, every):
/// a sequential `PATTERN:SIZE` skips SIZE after each I/O (negative: steps back, reading
/// backwards); a random `PATTERN:N` draws a new offset every N I/Os (fio reads N with atoi:
/// its leading digits).
fn parse_rw_modifier(v: &str) -> Result<(Rw, i64, u32), String> {
    let Some((pattern, modifier)) = v.split_once(':') else { return Ok((parse_rw(v)?, 0, 1)) };
    let rw = parse_rw(pattern)?;
    if rw.is_random() {
        let t = modifier.trim_start();
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        return match t[..digits].parse::<u32>() {
            Ok(n) if n > 0 => Ok((rw, 0, n)),
            _ => Err(format!(
                "'{v}': expected {pattern}:N with N at least 1 (a new random offset every N I/Os, e.g. {pattern}:8)"
            )),
        };
    }
    let (negative, size_text) = match modifier.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, modifier.trim().strip_prefix('+').unwrap_or(modifier.trim())),
    };
    let skip = i64::try_from(nonzero_size(size_text)?).map_err(|_| format!("'{v}': the skip is too large"))?;
    Ok((rw, if negative { -skip } else { skip }, 1))
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
            // fio trims block devices only: on a file its job fails (ENOTTY, "Inappropriate
            // ioctl for device"), so a job file that trims files is refused before it runs.
            return Err(format!(
                "rw={v} trims block devices only (fio fails on files with 'Inappropriate ioctl for device') and fsarena does not trim yet: expected {}",
                RW_WORDS.join(", ")
            ));
        }
        _ => return Err(format!("'{v}' is not an access pattern: expected {}", RW_WORDS.join(", "))),
    })
}

/// fio's `bsrange=MIN-MAX`, or `READ_RANGE,WRITE_RANGE`: sizes drawn as MIN + MAX × U (U
/// uniform in [0, 1)), rounded down to a multiple of MIN and capped at MAX (io_u.c
/// `get_next_buflen`).
fn parse_bsrange(v: &str) -> Result<[Option<(u64, u64)>; 2], String> {
    let one = |r: &str| -> Result<(u64, u64), String> {
        let bad = |why: &str| format!("'{v}' is not a bsrange: {why}; expected MIN-MAX such as 4k-16k, or READ,WRITE");
        let (lo, hi) = r.split_once('-').ok_or_else(|| bad("no '-'"))?;
        let (lo, hi) = (nonzero_size(lo)?, nonzero_size(hi)?);
        if !lo.is_power_of_two() || hi < lo {
            return Err(bad("MIN must be a power of two and at most MAX"));
        }
        if hi % lo != 0 {
            // fio's capped draw then gives MAX itself, which fsarena's sequential offsets (in
            // units of MIN) cannot follow.
            return Err(bad("MAX must be a multiple of MIN"));
        }
        Ok((lo, hi))
    };
    match v.split(',').collect::<Vec<_>>()[..] {
        [both] => Ok([Some(one(both)?); 2]),
        [r, w] => Ok([Some(one(r)?), Some(one(w)?)]),
        _ => Err(format!("'{v}' is not a bsrange: expected MIN-MAX, or READ,WRITE such as 4k-16k,8k-32k")),
    }
}

/// fio's `bssplit=LIST` for both directions, or `READ_LIST,WRITE_LIST`.
pub(super) fn parse_bssplit_dirs(v: &str) -> Result<[Vec<(u64, u32)>; 2], String> {
    match v.split(',').collect::<Vec<_>>()[..] {
        [both] => {
            let l = parse_bssplit(both)?;
            Ok([l.clone(), l])
        }
        [r, w] => Ok([parse_bssplit(r)?, parse_bssplit(w)?]),
        _ => Err(format!("'{v}' is not a bssplit: expected BS/PERCENT:..., or READ_LIST,WRITE_LIST")),
    }
}

pub(super) fn parse_bssplit(v: &str) -> Result<Vec<(u64, u32)>, String> {
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

/// fio's `zoned:60/10:30/20:10/70`: (access %, size %) pairs, read as fio 3.33 reads them
/// (options.c, `split_parse_ddir`, `zone_split_ddir`): the list ends at an empty entry; a
/// size left out, blank or 0 shares what the given ones leave (`zoned:50/5:30/15:20/` gives
/// the last zone 80%); the accesses add up to 100, the sizes to at most 100 (a file's tail
/// past them is never accessed).
fn parse_zones(v: &str) -> Result<Vec<(u32, u32)>, String> {
    let bad = |why: &str| {
        format!("'zoned:{v}' is not a zoned distribution: {why}; expected ACCESS%/SIZE%:... with the accesses adding up to 100, e.g. zoned:60/10:30/20:10/70")
    };
    let mut zones: Vec<(u32, Option<u32>)> = Vec::new();
    for z in v.split(':') {
        if z.is_empty() {
            break;
        }
        let (a, s) = z.split_once('/').unwrap_or((z, ""));
        let access = percent(a).map_err(|_| bad("an access share is not a percentage"))?;
        // fio reads the size share with atoi: its leading digits, 0 when there are none.
        let digits = s.trim_start().bytes().take_while(u8::is_ascii_digit).count();
        let size = s.trim_start()[..digits].parse::<u64>().unwrap_or(0).min(100) as u32;
        zones.push((access, (size > 0).then_some(size)));
    }
    let access: u32 = zones.iter().map(|z| z.0).sum();
    let given: u32 = zones.iter().filter_map(|z| z.1).sum();
    if access != 100 {
        return Err(bad(&format!("the accesses add up to {access}")));
    }
    if given > 100 {
        return Err(bad(&format!("the sizes add up to {given}, more than 100")));
    }
    let missing = zones.iter().filter(|z| z.1.is_none()).count() as u32;
    // fio: a single zone without a size gets (100 - 100) / 1, as fio computes it.
    let left = if missing == 1 && zones.len() == 1 { 0 } else { 100 - given };
    Ok(zones.into_iter().map(|(a, s)| (a, s.unwrap_or_else(|| left / missing.max(1)))).collect())
}

/// `verify=` → (on, method); `pattern` takes the `verify_pattern` given so far.
fn parse_verify(v: &str, pattern: Option<&Vec<u8>>) -> Result<(bool, VerifyMethod), String> {
    Ok(match v {
        "0" | "none" => (false, VerifyMethod::Crc32c),
        "crc32c" | "crc32c-intel" => (true, VerifyMethod::Crc32c),
        "crc64" => (true, VerifyMethod::Crc64),
        "md5" => (true, VerifyMethod::Md5),
        "sha256" => (true, VerifyMethod::Sha256),
        "meta" => (true, VerifyMethod::Meta),
        "pattern" => (true, VerifyMethod::Pattern(pattern.cloned().unwrap_or_default())),
        _ => {
            return Err(format!(
                "'{v}' is not a verify method: expected none, crc32c, crc64, md5, sha256, meta or pattern"
            ))
        }
    })
}

/// fio's pattern forms fsarena reads: `0xHEX` (bytes in the order written) or `"text"`.
fn parse_pattern(v: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("'{v}' is not a pattern: expected 0xHEX (e.g. 0xdeadbeef) or \"text\", at most 512 bytes");
    let bytes = if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        let hex = if hex.len() % 2 == 1 { format!("0{hex}") } else { hex.to_string() };
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| bad()))
            .collect::<Result<Vec<u8>, String>>()?
    } else if let Some(text) = v.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        text.as_bytes().to_vec()
    } else {
        return Err(bad());
    };
    if bytes.is_empty() || bytes.len() > 512 {
        return Err(bad());
    }
    Ok(bytes)
}

fn parse_distribution(v: &str) -> Result<Distribution, String> {
    match v.split_once(':') {
        None if v == "random" => Ok(Distribution::Random),
        Some(("zipf", theta)) => match theta.parse::<f64>() {
            Ok(t) if t > 0.0 && t != 1.0 && t.is_finite() => Ok(Distribution::Zipf(t)),
            _ => Err(format!("'{theta}' is not a zipf exponent: expected a number above 0, not 1 (e.g. zipf:1.2)")),
        },
        Some(("zoned", zones)) => parse_zones(zones).map(Distribution::Zoned),
        _ => Err(format!("'{v}' is not a distribution: expected random, zipf:THETA or zoned:ACCESS/SIZE:...")),
    }
}

/// The engines `ioengine=` names, as the engine registry has them (a test checks).
pub(super) const ENGINE_WORDS: &[&str] = &[
    "psync",
    "sync",
    "null",
    "io_uring",
    "libaio",
    "mmap",
    "posixaio",
    "filecreate",
    "filestat",
    "filedelete",
    "ftruncate",
    "falloc",
    "cpuio",
    "exec",
    "net",
];

/// A row of the io table.
macro_rules! io {
    ($($rest:tt)*) => { opt!(IoOptions, $($rest)*) };
}

/// Every option of the `io` workload: fio's names, meanings and defaults.
pub static OPTIONS: &[OptionDef<IoOptions>] = &[
    io!("name", Text, Is("io"), "job name; files are NAME.JOBNUM.FILENUM", |o, v| o.name = v.to_string())
        .list(ListSyntax::None),
    io!("rw", Choice(RW_WORDS), Is("read"), "access pattern (rw and readwrite: sequential mixed)", |o, v| (
        o.rw, o.rw_skip, o.rw_seq_nr
    ) =
        parse_rw_modifier(v)?)
    .aka(&["readwrite"]),
    io!("rwmixread", Percent, Is("50"), "percentage of reads in mixed jobs", |o, v| o.rwmixread = percent(v)?),
    io!("rwmixwrite", Percent, Is("50"), "percentage of writes in mixed jobs", |o, v| o.rwmixread = 100 - percent(v)?),
    io!("bs", PerDirection(&Size), Is("4k"), "block size, or READ,WRITE", |o, v| o.bs =
        per_direction(v, [4096; 2], nonzero_size)?)
    .aka(&["blocksize"]),
    io!("bssplit", Split, Unset, "block size mix, e.g. 4k/10:64k/90, or READ,WRITE lists; overrides bs", |o, v| o
        .bssplit =
        parse_bssplit_dirs(v)?),
    io!(
        "bsrange",
        Text,
        Unset,
        "block sizes drawn from MIN to MAX in steps of MIN, e.g. 4k-16k, or READ,WRITE",
        |o, v| o.bsrange = parse_bsrange(v)?
    )
    .aka(&["blocksize_range"]),
    io!(
        "size",
        Size,
        Unset,
        "bytes each job moves per pass, split over nrfiles (size or filesize is required)",
        |o, v| o.size = Some(nonzero_size(v)?)
    ),
    io!(
        "filesize",
        Size,
        Derived("size / nrfiles"),
        "size of each file, or MIN-MAX: each file's size drawn as fio draws it",
        |o, v| {
            let (lo, hi) = match v.split_once('-') {
                Some((lo, hi)) => (nonzero_size(lo)?, nonzero_size(hi)?),
                None => (nonzero_size(v)?, 0),
            };
            if hi != 0 && hi < lo {
                return Err(format!("'{v}' is not a file size range: MIN must be at most MAX, e.g. 1m-4m"));
            }
            o.filesize = Some(lo);
            o.filesize_max = (hi > lo).then_some(hi);
        }
    ),
    io!("nrfiles", Count, Is("1"), "files per job", |o, v| o.nrfiles = whole32(v)?).aka(&["nr_files"]).unit("files"),
    io!(
        "filename",
        Text,
        Unset,
        "one file shared by all jobs, inside the target (in a job file, an absolute path runs as its last component there)",
        |o, v| o.filename = Some(v.to_string())
    ),
    io!("directory", Text, Unset, "the target directory when no --target is given", |o, v| o.directory =
        Some(v.to_string())),
    io!("offset", Size, Is("0"), "start offset in each file", |o, v| o.offset = size(v)?),
    io!(
        "numjobs",
        Count,
        Is("1"),
        "clones of the job, each a process (or a thread with thread=1), as fio; on each client (clients=, MPI ranks)",
        |o, v| o.numjobs = whole32(v)?
    )
    // The distributed-filesystem studies' name: processes per client (mount or MPI rank).
    .aka(&["processes_per_client"])
    .unit("jobs"),
    io!(
        "clients",
        Count,
        Is("1"),
        "client mounts of the target to run on, numjobs clones on each, all started together (fsarena's own; glusterfs:clients=N)",
        |o, v| o.clients = whole32(v)?
    )
    .unit("clients"),
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
    io!("iodepth_batch", Count, Is("1"), "queued I/Os sent in one go; 0: iodepth", |o, v| o.iodepth_batch_submit =
        depth(v, 0)?)
    .aka(&["iodepth_batch_submit"]),
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
    io!("fixedbufs", Bool, Is("0"), "io_uring: register the I/O buffers (READ_FIXED/WRITE_FIXED)", |o, v| o
        .engine_flags
        .fixedbufs =
        boolean(v)?),
    io!("registerfiles", Bool, Is("0"), "io_uring: register the job's files and address them by index", |o, v| o
        .engine_flags
        .registerfiles =
        boolean(v)?),
    io!("sqthread_poll", Bool, Is("0"), "io_uring: a kernel thread polls the submission queue (SQPOLL)", |o, v| o
        .engine_flags
        .sqthread_poll =
        boolean(v)?),
    io!("sqthread_poll_cpu", Count, Unset, "io_uring: the CPU of the sqthread_poll thread", |o, v| o
        .engine_flags
        .sqthread_poll_cpu =
        Some(whole32(v)?)),
    io!("hipri", Bool, Is("0"), "io_uring: polled completions (IOPOLL); needs direct=1", |o, v| o.engine_flags.hipri =
        boolean(v)?),
    io!(
        "nonvectored",
        Choice(&["-1", "0", "1"]),
        Is("-1"),
        "io_uring: 0 uses READV/WRITEV; 1 and -1 (probe, as fio) use READ/WRITE",
        |o, v| o.engine_flags.vectored = match v {
            "0" => true,
            "1" | "-1" => false,
            _ => return Err(format!("'{v}' is not a nonvectored value: expected -1, 0 or 1")),
        }
    ),
    io!("thread", Bool, Is("0"), "clones as threads (1) or forked processes (0, fio's default)", |o, v| {
        o.thread = boolean(v)?;
    })
    .aka(&["threads"]),
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
    io!(
        "steadystate",
        Text,
        Is("iops_slope:0.01%"),
        "steady-state criterion with ss_dur: end the job once the largest deviation from the mean (iops, bw) or \
         the slope (iops_slope, bw_slope) of its last ss_dur seconds is under the limit, e.g. iops:10% or bw:1m",
        |o, v| o.ss = super::super::steady::Criterion::parse(v)?
    )
    .aka(&["ss"]),
    io!(
        "steadystate_duration",
        Time,
        Is("0"),
        "steady-state window: end the job once ss holds over this many seconds of samples (0: no detection)",
        |o, v| o.ss_dur = parse_time(v, SECOND).map_err(|e| e.message)?
    )
    .aka(&["ss_dur"]),
    io!(
        "steadystate_ramp_time",
        Time,
        Is("0"),
        "time before steady-state samples begin (one more second passes before the first)",
        |o, v| o.ss_ramp = parse_time(v, SECOND).map_err(|e| e.message)?
    )
    .aka(&["ss_ramp"]),
    io!("loops", Count, Is("1"), "passes over the files", |o, v| o.loops = whole32(v)?),
    io!(
        "thinktime",
        Time,
        Is("0"),
        "pause after every thinktime_blocks I/Os, in-flight I/Os completed first (a bare number is in microseconds)",
        |o, v| o.thinktime = parse_time(v, MICROSECOND).map_err(|e| e.message)?
    ),
    io!(
        "thinktime_spin",
        Time,
        Is("0"),
        "the part of thinktime spent spinning on the CPU; the rest sleeps (microseconds)",
        |o, v| o.thinktime_spin = parse_time(v, MICROSECOND).map_err(|e| e.message)?
    ),
    io!("thinktime_blocks", Count, Is("1"), "I/Os between thinktime pauses", |o, v| o.thinktime_blocks =
        match whole32(v)? {
            0 => return Err(format!("'{v}' must be at least 1")),
            n => n,
        }),
    io!(
        "thinktime_blocks_type",
        Choice(&["complete", "issue"]),
        Is("complete"),
        "count thinktime_blocks when I/Os complete or when they are issued",
        |o, v| o.thinktime_blocks_issue = match v {
            "complete" => false,
            "issue" => true,
            _ => return Err(format!("'{v}' is not a thinktime_blocks_type: expected complete or issue")),
        }
    ),
    io!(
        "number_ios",
        Count,
        Is("0"),
        "stop a size-based job after this many I/Os (times loops, counted over all loops; 0: no limit)",
        |o, v| o.number_ios = size(v)?
    ),
    io!("norandommap", Bool, Is("0"), "random offsets may repeat within a pass", |o, v| o.norandommap = boolean(v)?),
    io!(
        "fio_version",
        Choice(&["3.33", "3.42"]),
        Is("3.33"),
        "the fio release whose random offsets to follow where releases differ (bsrange, bssplit and rw=randread:N jobs); fio-json names it",
        |o, v| o.fio_version = match v.trim().trim_start_matches("fio-") {
            "3.33" => FioVersion::V3_33,
            "3.42" => FioVersion::V3_42,
            _ => return Err(format!("'{v}' is not a fio release fsarena follows: expected 3.33 or 3.42")),
        }
    ),
    io!(
        "rw_sequencer",
        Choice(&["sequential", "identical"]),
        Is("sequential"),
        "with rw=randread:N, the I/Os between random offsets go on from the last one (sequential) or repeat it (identical)",
        |o, v| o.rw_sequencer_identical = match v {
            "sequential" => false,
            "identical" => true,
            _ => return Err(format!("'{v}' is not a sequencer: expected sequential or identical")),
        }
    ),
    io!("randseed", Count, Is("137"), "seed of every random choice, as fio seeds its generators", |o, v| o.randseed =
        whole(v)?),
    io!(
        "randrepeat",
        Bool,
        Is("1"),
        "the same random choices on every run (0: seeded from the system unless a randseed other than 137 is given)",
        |o, v| o.randrepeat = boolean(v)?
    ),
    io!(
        "random_distribution",
        Choice(&["random", "zipf:THETA", "zoned:ACCESS/SIZE:..."]),
        Is("random"),
        "offset distribution of random jobs",
        |o, v| o.random_distribution = parse_distribution(v)?
    ),
    io!(
        "verify",
        Choice(&["none", "crc32c", "crc64", "md5", "sha256", "meta", "pattern"]),
        Is("none"),
        "checksum written blocks and read them back (fsarena's header, fio's counts)",
        |o, v| (o.verify, o.verify_method) = parse_verify(v, o.verify_pattern.as_ref())?
    ),
    io!(
        "verify_interval",
        Size,
        Unset,
        "bytes each verify header covers, a divisor of the block size (unset: the block)",
        |o, v| o.verify_interval_given = Some(nonzero_size(v)?)
    ),
    io!("verify_pattern", Text, Unset, "the pattern of verify=pattern: 0xHEX or \"text\"", |o, v| {
        let pattern = parse_pattern(v)?;
        // As fio: a pattern turns verify=pattern on unless a method was named.
        if !o.verify || matches!(o.verify_method, VerifyMethod::Pattern(_)) {
            (o.verify, o.verify_method) = (true, VerifyMethod::Pattern(pattern.clone()));
        }
        o.verify_pattern = Some(pattern);
    }),
    io!("do_verify", Bool, Is("1"), "run the verify pass when verify is set", |o, v| o.do_verify = boolean(v)?),
    io!(
        "verify_backlog",
        Count,
        Is("0"),
        "verify the written blocks after every N writes, during the job (0: only after it)",
        |o, v| o.verify_backlog = whole(v)?
    ),
    io!("verify_fatal", Bool, Is("0"), "stop at the first block that fails (0: check all, count failures)", |o, v| {
        o.verify_fatal = boolean(v)?
    }),
    io!("verify_only", Bool, Is("0"), "write nothing: check what an earlier run of this job wrote", |o, v| {
        o.verify_only = boolean(v)?
    }),
    io!(
        "verify_state_save",
        Bool,
        Is("1"),
        "write down which blocks a verify job wrote (local-NAME-N-verify.state beside its files)",
        |o, v| o.verify_state_save = boolean(v)?
    ),
    io!(
        "verify_state_load",
        Bool,
        Is("0"),
        "with verify_only: check exactly the blocks the saved state names",
        |o, v| o.verify_state_load = boolean(v)?
    ),
    io!("rate", PerDirection(&Size), Is("0"), "bandwidth limit (0: none), or READ,WRITE (e.g. 10m)", |o, v| o.rate =
        per_direction(v, [0; 2], size)?)
    .unit("bytes/s"),
    io!("rate_iops", PerDirection(&Count), Is("0"), "IOPS limit (0: none), or READ,WRITE", |o, v| o.rate_iops =
        per_direction(v, [0; 2], whole)?)
    .unit("IOPS"),
    io!(
        "rate_process",
        Choice(&["linear", "poisson"]),
        Is("linear"),
        "how rated I/Os are spaced: evenly (linear), or with exponential gaps of the same mean, fio's own draws (poisson)",
        |o, v| o.rate_poisson = match v {
            "linear" => false,
            "poisson" => true,
            _ => return Err(format!("'{v}' is not a rate_process: expected linear or poisson")),
        }
    ),
    io!(
        "rate_ignore_thinktime",
        Bool,
        Is("0"),
        "a thinktime pause does not hold back the rate: the I/Os it missed are counted as issued",
        |o, v| o.rate_ignore_thinktime = boolean(v)?
    ),
    io!(
        "rate_cycle",
        Count,
        Is("1000"),
        "window of fio's rate_min check (fio 3.33 uses it for nothing else); fsarena checks rate_min over the whole run, so another value with rate_min is refused",
        |o, v| o.rate_cycle = whole(v)?
    )
    .aka(&["ratecycle"])
    .unit("ms"),
    io!(
        "io_submit_mode",
        Choice(&["inline", "offload"]),
        Is("inline"),
        "who submits the I/Os: the job's thread (inline), or iodepth worker threads, so the job keeps its rate's schedule whatever the completions (offload)",
        |o, v| o.offload = match v {
            "inline" => false,
            "offload" => true,
            _ => return Err(format!("'{v}' is not an io_submit_mode: expected inline or offload")),
        }
    ),
    io!(
        "buffer_compress_percentage",
        Percent,
        Is("0"),
        "percentage of each buffer that compresses (zero-filled)",
        |o, v| o.buffer_compress_percentage = percent(v)?
    ),
    io!(
        "dedupe_percentage",
        Percent,
        Is("0"),
        "percentage of written blocks that repeat an earlier block (fio's dedupe)",
        |o, v| o.dedupe_percentage = percent(v)?
    ),
    io!(
        "dedupe_mode",
        Choice(&["repeat", "working_set"]),
        Is("repeat"),
        "which block a duplicate repeats: the last unique one, or one drawn from the working set",
        |o, v| o.dedupe_working_set = match v {
            "repeat" => false,
            "working_set" => true,
            _ => return Err(format!("'{v}' is not a dedupe_mode: expected repeat or working_set")),
        }
    ),
    io!(
        "dedupe_working_set_percentage",
        Percent,
        Is("5"),
        "with dedupe_mode=working_set: the blocks duplicates are drawn from, as a percentage of size",
        |o, v| o.dedupe_working_set_percentage = percent(v)?
    ),
    io!(
        "dedupe_global",
        Bool,
        Is("0"),
        "with dedupe_mode=working_set: draw the working set from every job's blocks, so jobs share duplicates",
        |o, v| o.dedupe_global = boolean(v)?
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
    io!("stonewall", Bool, Is("0"), "wait for the jobs before to finish; starts a new stage and reporting group", |o, v| o.stonewall =
        boolean(v)?)
    .aka(&["wait_for_previous"]),
    io!("new_group", Bool, Is("0"), "start a new reporting group (its jobs still run with the ones before, as in fio)", |o, v| o.new_group = boolean(v)?),
    io!("keep", Bool, Is("0"), "keep the test files after the run (fsarena's own)", |o, v| o.keep = boolean(v)?),
    io!("io_size", Size, Unset, "bytes moved per pass, wrapping over the files if more than size", |o, v| o.io_size =
        Some(nonzero_size(v)?))
    .aka(&["io_limit"]),
    io!("offset_increment", Size, Is("0"), "clone N starts at offset + N x offset_increment", |o, v| o
        .offset_increment =
        size(v)?),
    io!("filename_format", Text, Unset, "file names from $jobname, $jobnum, $filenum", |o, v| o.filename_format =
        Some(v.to_string())),
    io!("buffer_pattern", Text, Unset, "fill write buffers with 0xHEX or \"text\", repeated", |o, v| o
        .buffer_pattern =
        Some(parse_pattern(v)?)),
    io!("startdelay", Time, Is("0"), "delay of the job's start after its group starts", |o, v| o.startdelay =
        parse_time(v, SECOND).map_err(|e| e.message)?),
    io!(
        "openfiles",
        Count,
        Derived("nrfiles"),
        "files a job holds open at once in fio; fsarena holds all of a job's files (the same bytes and I/Os)",
        |_o, v| {
            whole32(v)?;
        }
    )
    .aka(&["open_files"])
    .unit("files"),
    io!(
        "unlink",
        Bool,
        Is("0"),
        "fio removes the job's files when it ends; fsarena removes the files it created after the run (keep=1 keeps them)",
        |_o, v| {
            boolean(v)?;
        }
    ),
    io!(
        "stat_type",
        Choice(&["stat", "lstat", "statx"]),
        Is("stat"),
        "filestat: the call timed on each file, stat(2), lstat(2) or statx(2)",
        |o, v| o.stat_type = fsarena_engine::StatType::parse(v)?
    ),
    io!(
        "cpuload",
        Percent,
        Unset,
        "cpuio: the percent of one CPU each job burns (needed; above 100 counts as 100)",
        |o, v| o.cpu.load = whole32(v)?
    ),
    io!(
        "cpumode",
        Choice(&["noop", "qsort"]),
        Is("noop"),
        "cpuio: noop spins on the clock for cpuchunks; qsort sorts 256 Ki integers four times per chunk",
        |o, v| o.cpu.mode = match v {
            "noop" => super::super::noio::CpuMode::Noop,
            "qsort" => super::super::noio::CpuMode::Qsort,
            _ => return Err(format!("'{v}' is not a cpumode: expected noop or qsort")),
        }
    ),
    io!("cpuchunks", Count, Is("50000"), "cpuio: microseconds of each burn; the pause after it makes the load", |o, v| o
        .cpu
        .chunk_us =
        whole(v)?)
    .unit("us"),
    io!(
        "exit_on_io_done",
        Bool,
        Is("0"),
        "cpuio: end once every job doing I/O has ended (in the file's last stage; before it, or with no I/O job, the job runs its runtime, as in fio)",
        |o, v| o.cpu.exit_on_io_done = boolean(v)?
    ),
    io!(
        "program",
        Text,
        Unset,
        "exec: the program to run (by exec, no shell; searched in PATH without a '/'), as the user fsarena runs as",
        |o, v| o.exec.program = Some(v.to_string())
    ),
    io!(
        "arguments",
        Text,
        Unset,
        "exec: its arguments, split on spaces; %r is the runtime in seconds, %n the job name",
        |o, v| o.exec.arguments = Some(v.to_string())
    ),
    io!("grace_time", Count, Is("1"), "exec: seconds between SIGTERM at the runtime's end and SIGKILL", |o, v| o
        .exec
        .grace_time =
        whole(v)?)
    .unit("s"),
    io!(
        "std_redirect",
        Bool,
        Is("1"),
        "exec: the program's stdout and stderr go to NAME.stdout and NAME.stderr in the target (0: to fsarena's stderr)",
        |o, v| o.exec.std_redirect = boolean(v)?
    ),
    io!(
        "hostname",
        Text,
        Unset,
        "net: the peer a sending job connects to (localhost or 127.x.x.x), or the socket's path with protocol=unix",
        |o, v| o.net.hostname = Some(v.to_string())
    ),
    io!("port", Count, Unset, "net: the TCP port to listen on or connect to; clone k uses port+k", |o, v| o.net.port =
        match whole32(v)? {
            p @ 1..=65535 => p,
            _ => return Err(format!("'{v}' is not a port: expected 1 to 65535")),
        }),
    io!(
        "protocol",
        Choice(&["tcp", "unix"]),
        Is("tcp"),
        "net: tcp (on the loopback) or unix (a unix stream socket at hostname=)",
        |o, v| o.net.protocol = super::super::net::Protocol::parse(v)?
    )
    .aka(&["proto"]),
    io!(
        "listen",
        Bool,
        Is("0"),
        "net: this TCP job listens (on 127.0.0.1) and receives; with protocol=unix the reading job listens",
        |o, v| o.net.listen = boolean(v)?
    ),
    io!("nodelay", Bool, Is("0"), "net: set TCP_NODELAY on the connection", |o, v| o.net.nodelay = boolean(v)?),
    io!(
        "window_size",
        Size,
        Is("0"),
        "net: the socket buffer (SO_RCVBUF of a receiver, SO_SNDBUF of a sender; 0: the system's)",
        |o, v| o.net.window_size = u32::try_from(size(v)?).map_err(|_| format!("'{v}' is too large: expected at most 4g"))?
    )
    .unit("bytes"),
    io!("mss", Size, Is("0"), "net: TCP_MAXSEG of the connection (0: the system's)", |o, v| o.net.mss =
        u32::try_from(size(v)?).map_err(|_| format!("'{v}' is too large: expected at most 4g"))?)
    .unit("bytes"),
    io!("create_on_open", Bool, Is("0"), "create each file when the job opens it", |o, v| o.create_on_open =
        boolean(v)?),
    io!(
        "exitall",
        Bool,
        Is("0"),
        "when this job ends, stop the other jobs of its group (see exit_what)",
        |o, v| o.exitall = boolean(v)?
    ),
    io!(
        "exit_what",
        Choice(&["group", "stonewall", "all"]),
        Is("group"),
        "what exitall stops: the jobs of its reporting group (group), every job of its stage that has started its I/O (stonewall; one in its startdelay or wait_for runs later, in full), or every job and every job after them, reported with nothing done (all)",
        |o, v| o.exit_what = match v {
            "group" => ExitWhat::Group,
            "stonewall" => ExitWhat::Stonewall,
            "all" => ExitWhat::All,
            _ => return Err(format!("'{v}' is not an exit_what: expected group, stonewall or all")),
        }
    ),
    io!(
        "fill_device",
        Bool,
        Is("0"),
        "write the target's free space until ENOSPC, which ends the job and is no error (nothing preallocated)",
        |o, v| o.fill_device = boolean(v)?
    )
    .aka(&["fill_fs"]),
    io!(
        "create_serialize",
        Bool,
        Is("1"),
        "lay the files out one at a time (0: all at once, each in a thread)",
        |o, v| o.create_serialize = boolean(v)?
    ),
    io!(
        "flow",
        Count,
        Is("0"),
        "weight in flow control: the jobs of one flow_id issue I/Os in the ratio of their weights (0: none, at most 1000)",
        |o, v| o.flow = match whole32(v)? {
            w if w <= super::super::flow::MAX_WEIGHT => w,
            w => return Err(format!("{w} is over fio's largest flow weight: expected 0 to {}", super::super::flow::MAX_WEIGHT)),
        }
    ),
    io!("flow_id", Count, Is("0"), "the flow whose I/O ratio this job's flow weight counts in", |o, v| o.flow_id =
        whole32(v)?),
    io!(
        "flow_sleep",
        Count,
        Is("0"),
        "microseconds a job held back by flow control sleeps, after its I/Os complete, before asking again",
        |o, v| o.flow_sleep = fsarena_core::Nanos(whole(v)?.saturating_mul(1000))
    ),
    io!(
        "wait_for",
        Text,
        Unset,
        "start this job once every clone of the job of this name has ended (fio's wait_for)",
        |o, v| o.wait_for = Some(v.to_string())
    ),
    io!("rate_min", PerDirection(&Size), Is("0"), "fail the job when its bandwidth after 2 s is below this", |o, v| o
        .ratemin =
        per_direction(v, [0; 2], size)?)
    .aka(&["ratemin"])
    .unit("bytes/s"),
    io!("description", Text, Unset, "free text about the job; changes nothing", |o, v| o.outputs.description =
        Some(v.to_string())),
    io!("clat_percentiles", Bool, Is("1"), "report completion-latency percentiles", |o, v| o
        .outputs
        .clat_percentiles =
        boolean(v)?),
    io!("lat_percentiles", Bool, Is("0"), "report total-latency percentiles", |o, v| o.outputs.lat_percentiles =
        boolean(v)?),
    io!("percentile_list", Text, Unset, "percentiles reported, e.g. 99:99.9:99.99", |o, v| o.outputs.percentile_list =
        Some(outputs::parse_percentiles(v)?)),
    io!("write_bw_log", Text, Unset, "bandwidth log PREFIX_bw.N.log (bare: the job's name)", |o, v| o
        .outputs
        .write_bw_log =
        outputs::log_prefix(v)?),
    io!("write_lat_log", Text, Unset, "latency logs PREFIX_{slat,clat,lat}.N.log", |o, v| o.outputs.write_lat_log =
        outputs::log_prefix(v)?),
    io!("write_iops_log", Text, Unset, "IOPS log PREFIX_iops.N.log", |o, v| o.outputs.write_iops_log =
        outputs::log_prefix(v)?),
    io!("write_hist_log", Text, Unset, "latency histogram log PREFIX_clat_hist.N.log", |o, v| o
        .outputs
        .write_hist_log =
        outputs::log_prefix(v)?),
    io!("log_avg_msec", Count, Is("0"), "average log entries over this many ms (0: every I/O)", |o, v| o
        .outputs
        .log_avg_msec =
        whole(v)?)
    .unit("ms"),
    io!("log_hist_msec", Count, Is("0"), "histogram log entries every this many ms", |o, v| o.outputs.log_hist_msec =
        whole(v)?)
    .unit("ms"),
    io!("gtod_reduce", Bool, Is("0"), "fio reads the clock less; fsarena's timing is unchanged", |o, v| o
        .outputs
        .gtod_reduce =
        boolean(v)?),
    io!(
        "random_generator",
        Choice(&["tausworthe", "lfsr", "tausworthe64"]),
        Is("tausworthe"),
        "fio's generators for sizes, mixes and its random map (tausworthe64: the 64-bit one); lfsr is \
         accepted as tausworthe; a fixed-size random pass takes fsarena's own permutation",
        |o, v| {
            outputs::random_generator(v)?;
            o.tausworthe64 = v == "tausworthe64";
        }
    ),
];

/// Looks an option up by name or alias.
pub fn find(key: &str) -> Option<&'static OptionDef<IoOptions>> {
    fsarena_workload::options::find(OPTIONS, key)
}
