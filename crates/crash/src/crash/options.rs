//! The `crash` workload's options, one row each in [`OPTIONS`]; help and the docs come from it.

use fsarena_core::option::DefaultValue::{Is, Unset};
use fsarena_core::option::ValueKind::{Choice, Count, Size, Text, Time};
use fsarena_core::units::parse_time;
use fsarena_workload::options::{opt, size, whole, OptionDef};
use std::path::PathBuf;

/// Which crash states each generated workload gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum States {
    /// The image at every flush (every persistence point), and before the first.
    Prefix,
    /// Those, plus cuts inside the epoch that ends at the last flush before the final mark:
    /// its prefix at each write, and the epoch without one write.
    Epoch,
    /// Those, plus seeded random subsets of that epoch's writes, until 8 tries in a row find
    /// no new state (or `max_states`).
    Subset,
    /// Those, plus torn writes: each of the epoch's last 4 writes cut at the logical block
    /// size, its first blocks persisted, at up to 4 points each.
    Torn,
}

/// The options of one `crash` run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashOptions {
    /// The generated set: `b3-seq1` (CrashMonkey's ACE seq-1), `b3-seq2`, `seq1` (one
    /// operation and one persistence call on a durable file set), `seq2`, `seq3`.
    pub ops: &'static str,
    /// An application's workloads instead of generated ones: `sqlite`.
    pub app: Option<&'static str>,
    /// Run this many of the generated workloads, chosen with `seed` (0: all).
    pub sample: u64,
    /// The seed of the sample and of the state choice.
    pub seed: u64,
    /// Which states.
    pub states: States,
    /// States per generated workload at most.
    pub max_states: u64,
    /// Only this workload (and state): `CASE` or `CASE/STATE`.
    pub only: Option<(String, Option<String>)>,
    /// How long a crash image may take to mount (recovery), ns.
    pub mount_timeout: u64,
    /// The whole crash workload on one target stops starting new generated workloads after
    /// this long, ns (None: no limit).
    pub budget: Option<u64>,
    /// Bytes the write log may hold.
    pub max_log: u64,
    /// A new directory where failing crash images are kept.
    pub keep_failed: Option<PathBuf>,
    /// The recorded device's logical block size: 512 or 4096.
    pub sector: u64,
    /// Size of the recorded image (0: the smallest that suits the filesystem).
    pub image_size: u64,
    /// How a `fuse:` target's daemon is recorded: `file` (its `{work}` served by a logging
    /// passthrough) or `block` (its `{work}` on a recorded ext4).
    pub level: &'static str,
    /// File level: name operations no later fsync covered may be lost (`names=lossy`, the
    /// default), or every one before the crash point is kept (`names=kept`).
    pub lossy: bool,
    /// The `sync` persistence point: syncfs(2) of the recorded filesystem (false, the
    /// default) or the machine-wide sync(2) (`persist=sync`).
    pub global_sync: bool,
    /// ACE workloads: the persistence call through the descriptor that did the operation
    /// (`same`, as ACE) or through a new one (`new`).
    pub descriptor: super::ace::Descriptor,
    /// The dry run lists the workloads it would run: their names, or their j-lang steps.
    pub list: Option<&'static str>,
}

impl CrashOptions {
    /// Operations in one generated workload of `ops`: 1 for seq1, 2 for seq2, 3 for seq3.
    pub fn chain_length(&self) -> u32 {
        match self.ops {
            "seq2" => 2,
            "seq3" => 3,
            _ => 1,
        }
    }
}

impl Default for CrashOptions {
    fn default() -> Self {
        Self {
            ops: "b3-seq1",
            app: None,
            sample: 0,
            seed: 1,
            states: States::Epoch,
            max_states: 64,
            only: None,
            mount_timeout: 10 * SECOND,
            budget: None,
            max_log: 2 << 30,
            keep_failed: None,
            sector: 512,
            image_size: 0,
            level: "file",
            lossy: true,
            global_sync: false,
            descriptor: super::ace::Descriptor::Same,
            list: None,
        }
    }
}

const SECOND: u64 = 1_000_000_000;

/// `sample=` at most: the largest set, seq3, has 80³ sequences.
pub const MAX_SAMPLE: u64 = 512_000;
/// `max_states=` at most: each state is a mount (or a daemon's start) and a check.
pub const MAX_STATES: u64 = 10_000;
/// `mount_timeout=` at most.
const MAX_MOUNT_TIMEOUT: u64 = 3600 * SECOND;
/// `max_log=` at least: the block-level log holds a workload's mount and unmount too.
pub const MIN_LOG: u64 = 16 << 20;
/// `max_log=` at most.
const MAX_LOG: u64 = 1 << 40;
/// `image_size=` at least (and at least what the filesystem needs): room for the generated
/// workloads' files.
pub const MIN_IMAGE: u64 = 16 << 20;
/// `image_size=` at most: the recorded image is sparse, but mkfs and fsck grow with it.
const MAX_IMAGE: u64 = 1 << 40;

/// A whole number from `min` to `max`.
fn within(v: &str, min: u64, max: u64) -> Result<u64, String> {
    match whole(v)? {
        n if n < min => Err(format!("'{v}' must be at least {min}")),
        n if n > max => Err(format!("'{v}' is too large: expected at most {max}")),
        n => Ok(n),
    }
}

/// A size from `min` to `max` (0 allowed when `zero`: the default).
fn size_within(v: &str, min: u64, max: u64, zero: bool) -> Result<u64, String> {
    let iec = |b: u64| fsarena_core::units::format_iec(b as f64);
    match size(v)? {
        0 if zero => Ok(0),
        n if n < min => Err(format!("'{v}' is too small: expected at least {}", iec(min))),
        n if n > max => Err(format!("'{v}' is too large: expected at most {}", iec(max))),
        n => Ok(n),
    }
}

/// A duration of at least a millisecond.
fn duration(v: &str) -> Result<u64, String> {
    match parse_time(v, SECOND).map_err(|e| e.message)?.0 {
        n if n < 1_000_000 => Err(format!("'{v}' is too short: expected at least 1ms")),
        n => Ok(n),
    }
}

/// A duration from a millisecond to an hour.
fn short_duration(v: &str) -> Result<u64, String> {
    match duration(v)? {
        n if n > MAX_MOUNT_TIMEOUT => Err(format!("'{v}' is too long: expected at most 1h")),
        n => Ok(n),
    }
}

/// `CASE` or `CASE/STATE`.
fn only(v: &str) -> Result<(String, Option<String>), String> {
    let (case, state) = match v.split_once('/') {
        Some((c, s)) => {
            if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
                return Err(format!(
                    "'{s}' is not a crash state: expected CASE/STATE as a finding names it, e.g. link.fsync/f2"
                ));
            }
            (c, Some(s.to_string()))
        }
        None => (v, None),
    };
    if case.is_empty() || !case.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+')) {
        return Err(format!(
            "'{v}' is not a generated workload's name: expected CASE or CASE/STATE, e.g. link.fsync/f2"
        ));
    }
    Ok((case.to_string(), state))
}

/// A directory that must not exist yet, in a directory that exists and that nobody but root
/// can change the entries of (fsarena writes crash images there as root, by name).
fn new_dir(v: &str) -> Result<PathBuf, String> {
    let path = std::path::absolute(v).map_err(|e| format!("{e}: expected a path"))?;
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(format!("'{v}' exists: expected a new directory for fsarena to create"));
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("/"));
    match std::fs::metadata(parent) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "'{v}': {} does not exist: expected a new directory in an existing one",
                parent.display()
            ))
        }
        Err(e) => return Err(format!("'{v}': cannot inspect {}: {e}", parent.display())),
        Ok(m) if !m.is_dir() => return Err(format!("'{v}': {} is not a directory", parent.display())),
        Ok(_) => {}
    }
    if let Some((dir, uid, mode)) = fsarena_target::beneath::first_writable_by_others(parent) {
        return Err(format!(
            "'{v}': {} is writable by others (owner uid {uid}, mode {mode:04o}): expected a directory only root can change",
            dir.display()
        ));
    }
    Ok(path)
}

/// A row of the crash table.
macro_rules! cr {
    ($($rest:tt)*) => { opt!(CrashOptions, $($rest)*) };
}

/// Every option of the `crash` workload.
pub static OPTIONS: &[OptionDef<CrashOptions>] = &[
    cr!(
        "ops",
        Choice(&["b3-seq1", "b3-seq2", "seq1", "seq2", "seq3"]),
        Is("b3-seq1"),
        "generated workloads: b3-seq1 = CrashMonkey's ACE seq-1 set as `ace.py -l 1` writes it (435: creat, mkdir, falloc in 5 modes × 3 ranges, write, O_DIRECT write, mmap write, link, unlink, remove, rename, fsetxattr, removexattr, truncate over foo, A/foo, bar, A/bar, A/C/bar, A, B, A/C, each workload from an empty directory, then fsync of a used file, its sibling or its parent, or sync); b3-seq2 = ACE's seq-2 (every pair, none allowed between: use sample=); seq1 = each operation once (creat, mkdir, writes, O_DIRECT, mmap, fallocate, truncate, link, symlink, rename, unlink, rmdir, xattrs), followed by fsync, fdatasync or sync of the file or its parent (80); seq2 = every pair of those, each with its persistence call (6400: use sample=); seq3 = sampled sequences of three (sample= needed)",
        |o, v| o.ops = match v {
            "b3-seq1" => "b3-seq1",
            "b3-seq2" => "b3-seq2",
            "seq1" => "seq1",
            "seq2" => "seq2",
            "seq3" => "seq3",
            _ => return Err(format!("'{v}' is not a generated set: expected b3-seq1, b3-seq2, seq1, seq2 or seq3")),
        }
    ),
    cr!(
        "app",
        Choice(&["sqlite", "kv"]),
        Unset,
        "an application's promises instead of generated workloads: sqlite = SQLite in rollback mode with synchronous=FULL and EXTRA and in WAL mode with FULL, 8 transactions each; every state must pass integrity_check and keep every commit SQLite documents as durable; kv = the kv workload's store with sync=true, 8 puts; every acknowledged put survives and the store opens",
        |o, v| o.app = match v {
            "sqlite" => Some("sqlite"),
            "kv" => Some("kv"),
            _ => return Err(format!("'{v}' is not an application: expected sqlite or kv")),
        }
    ),
    cr!("sample", Count, Is("0"), "run this many of the generated workloads, chosen with seed= (0: all; at most 512000)", |o, v| o
        .sample =
        within(v, 0, MAX_SAMPLE)?),
    cr!("seed", Count, Is("1"), "seed of the sample and of the states chosen", |o, v| o.seed = whole(v)?),
    cr!(
        "states",
        Choice(&["prefix", "epoch", "subset", "torn"]),
        Is("epoch"),
        "prefix: the image at every flush; epoch: also cuts inside the epoch before the final mark (each write, and the epoch less one write); subset: also seeded random subsets of that epoch's writes, until 8 tries in a row find no new one; torn: also its last writes cut at the logical block size",
        |o, v| o.states = match v {
            "prefix" => States::Prefix,
            "epoch" => States::Epoch,
            "subset" => States::Subset,
            "torn" => States::Torn,
            _ => return Err(format!("'{v}' is not a state set: expected prefix, epoch, subset or torn")),
        }
    ),
    cr!("max_states", Count, Is("64"), "crash states per generated workload at most (1 to 10000)", |o, v| o
        .max_states =
        within(v, 1, MAX_STATES)?),
    cr!("only", Text, Unset, "only this generated workload, or one of its states: CASE or CASE/STATE (as a finding names it)", |o, v| o
        .only =
        Some(only(v)?)),
    cr!("mount_timeout", Time, Is("10s"), "a crash image that takes longer to mount (recovery) is unmountable; a fuse: daemon that takes longer on a crash state is a daemon failure (at most 1h)", |o, v| o
        .mount_timeout =
        short_duration(v)?),
    cr!("budget", Time, Unset, "stop starting generated workloads after this long on one target", |o, v| o.budget =
        Some(duration(v)?)),
    cr!("max_log", Size, Is("2g"), "bytes the write log (spill file) may hold (16 MiB to 1 TiB); checked against the work directory's free space before anything is created; at file level the log is held in memory, at most 256 MiB of it", |o, v| o
        .max_log =
        size_within(v, MIN_LOG, MAX_LOG, false)?),
    cr!("keep_failed", Text, Unset, "a new directory (created 0700) where the crash images that failed are kept; its parent must exist and be changeable by root alone", |o, v| o
        .keep_failed =
        Some(new_dir(v)?)),
    cr!("sector", Choice(&["512", "4096"]), Is("512"), "logical block size of the recorded loop device", |o, v| o
        .sector =
        match v {
            "512" => 512,
            "4096" | "4k" => 4096,
            _ => return Err(format!("'{v}' is not a sector size: expected 512 or 4096")),
        }),
    cr!("image_size", Size, Is("0"), "size of the recorded image (0: 64 MiB, or the smallest xfs and btrfs accept; else 16 MiB, and what the filesystem needs, to 1 TiB)", |o, v| o
        .image_size =
        size_within(v, MIN_IMAGE, MAX_IMAGE, true)?),
    cr!(
        "level",
        Choice(&["file", "block"]),
        Is("file"),
        "how a fuse: target's daemon is recorded: file = its {work} directory served by fsarena's logging passthrough (every name operation, write, truncate and fsync logged per file; a crash keeps the names and loses unsynced data in 4 KiB pieces); block = its {work} on a recorded ext4, below the daemon",
        |o, v| o.level = match v {
            "file" => "file",
            "block" => "block",
            _ => return Err(format!("'{v}' is not a recording level: expected file or block")),
        }
    ),
    cr!(
        "names",
        Choice(&["kept", "lossy"]),
        Is("lossy"),
        "file level: lossy = a crash may lose each name operation no later fsync covered, of its directory or of the name it made (POSIX promises a new name only then), or for a mode or xattr change or a new hard link of the file itself; kept = a crash keeps every name operation made before it, in order",
        |o, v| o.lossy = match v {
            "kept" => false,
            "lossy" => true,
            _ => return Err(format!("'{v}' is not a name model: expected kept or lossy")),
        }
    ),
    cr!(
        "persist",
        Choice(&["syncfs", "sync"]),
        Is("syncfs"),
        "the sync persistence point: syncfs = syncfs(2) of the recorded filesystem (the same filesystem code, without waiting for every other filesystem's writes); sync = the machine-wide sync(2), to test what sync() itself does",
        |o, v| o.global_sync = match v {
            "syncfs" => false,
            "sync" => true,
            _ => return Err(format!("'{v}' is not a persistence call: expected syncfs or sync")),
        }
    ),
    cr!(
        "descriptor",
        Choice(&["same", "new"]),
        Is("same"),
        "b3 sets: the persistence call's descriptor: same = the one that did the operation, as ACE's workloads do (a daemon that makes a size durable only when the writing descriptor is closed is caught); new = a descriptor opened for the call",
        |o, v| o.descriptor = match v {
            "same" => super::ace::Descriptor::Same,
            "new" => super::ace::Descriptor::New,
            _ => return Err(format!("'{v}' is not a descriptor choice: expected same or new")),
        }
    ),
    cr!(
        "list",
        Choice(&["names", "jlang"]),
        Unset,
        "the dry run (--dry-run) lists the workloads it would run: names, or jlang = each as its steps in CrashMonkey's j-lang (as ace.py writes its workloads' run section)",
        |o, v| o.list = match v {
            "names" => Some("names"),
            "jlang" => Some("jlang"),
            _ => return Err(format!("'{v}' is not a listing: expected names or jlang")),
        }
    ),
];

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_defaults_agree() {
        fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    }

    #[test]
    fn bad_values_are_named() {
        for (k, v, want) in [
            ("ops", "seq9", "expected b3-seq1, b3-seq2, seq1, seq2 or seq3"),
            ("states", "all", "expected prefix, epoch, subset or torn"),
            ("only", "a/b;c", "not a crash state"),
            ("only", "a;b", "not a generated workload"),
            ("max_states", "0", "at least 1"),
            ("max_states", "10001", "at most 10000"),
            ("sample", "512001", "at most 512000"),
            ("mount_timeout", "61m", "at most 1h"),
            ("max_log", "1m", "at least 16.0MiB"),
            ("max_log", "2t", "at most 1.0TiB"),
            ("image_size", "1m", "at least 16.0MiB"),
            ("image_size", "2t", "at most 1.0TiB"),
            ("keep_failed", "/", "exists"),
            ("keep_failed", "/nonexistent-fsarena/kept", "does not exist"),
            ("keep_failed", "/etc/hostname/kept", "not a directory"),
            ("level", "page", "expected file or block"),
            ("names", "lost", "expected kept or lossy"),
        ] {
            let e = fsarena_workload::options::set("crash", OPTIONS, &mut CrashOptions::default(), k, v).unwrap_err();
            assert!(e.message.contains(want), "{k}={v}: {}", e.message);
        }
        let mut o = CrashOptions::default();
        fsarena_workload::options::set("crash", OPTIONS, &mut o, "only", "link.fsync/f3").unwrap();
        assert_eq!(o.only, Some(("link.fsync".to_string(), Some("f3".to_string()))));
    }
}
