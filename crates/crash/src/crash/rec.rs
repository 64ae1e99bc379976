//! The crash side of the two recorders: block level ([`RecordedFs`]: the kernel filesystems,
//! fuse2fs, and a `fuse:` daemon with `level=block`) and file level ([`FilesFs`]: a `fuse:`
//! daemon's `{work}` through the logging passthrough), both behind
//! [`fsarena_target::recorder::Recorder`], which records, builds the states it is told to and
//! mounts them. What a level's log means for a crash run is [`Level`], here: its crash states,
//! which of its entries are writes, which checker judges a state ([`super::fsck`]), how a
//! failing state is kept, whether the strict level applies.
//!
//! The rules are a trait of the recorder, not of its log: a log is plain data (`Vec<Entry>`,
//! `Vec<FileOp>`), and a level's rules belong together, the ones about its log with those
//! about its states, so each level is one `impl` to read. The workload is generic over the
//! level (`R: Level`), not a `Box<dyn …>`: each level's log is its own type (an associated
//! type) and a check returns what its closure returns, neither of which a trait object
//! carries; generic, a log of one level never meets a recorder of the other.

use super::options::{CrashOptions, States};
use super::State;
use fsarena_target::recorder::files::FileOp;
use fsarena_target::recorder::{Entry, FilesFs, RecordedFs, Recorder, Unchecked};
use fsarena_target::TargetError;
use std::path::Path;
use std::time::Duration;

/// A crash state checked: what the check said (or why the state was not checked), and what
/// the filesystem's checker said.
#[derive(Debug)]
pub(super) struct StateOutcome<R> {
    /// The oracle's result, or why the state was not checked.
    pub(super) checked: Result<R, Unchecked>,
    /// The filesystem checker's complaint (its exit status and last lines), None when clean
    /// or when there is no checker.
    pub(super) fsck: Option<String>,
}

/// A recorder's level, as the crash workload sees it.
pub(super) trait Level: Recorder<Log: Sync> + Sync {
    /// The crash states of `log`.
    fn states(log: &Self::Log, o: &CrashOptions) -> Vec<State>;

    /// The logged writes (block level) or data operations (file level).
    fn writes(log: &Self::Log) -> usize;

    /// Of a state's kept entries, the writes (or data operations).
    fn kept_writes(log: &Self::Log, keep: &[usize]) -> usize;

    /// The filesystem checker's complaint about `state` once checked and unmounted, None
    /// when it is clean or nothing checks it.
    fn fsck(&self, state: &Path) -> Option<String>;

    /// Keeps a failing state at `dest`.
    fn keep(&self, state: &Path, dest: &Path) -> std::io::Result<()>;

    /// Whether the strict level (a prefix of the operations, never a mix) is checked.
    fn strict_applies(lossy: bool) -> bool;

    /// Checks `state` ([`Recorder::check_state`]), then runs the checker on it.
    fn check<R>(
        &self,
        slot: usize,
        state: &Path,
        timeout: Duration,
        check: impl FnOnce(&Path) -> R,
    ) -> Result<StateOutcome<R>, TargetError> {
        let checked = self.check_state(slot, state, timeout, check)?;
        Ok(StateOutcome { checked, fsck: self.fsck(state) })
    }
}

impl Level for RecordedFs {
    fn states(log: &Vec<Entry>, o: &CrashOptions) -> Vec<State> {
        super::states(log, o)
    }

    fn writes(log: &Vec<Entry>) -> usize {
        log.iter().filter(|e| matches!(e, Entry::Write { .. } | Entry::Zero { .. })).count()
    }

    /// Every kept entry is a write.
    fn kept_writes(_: &Vec<Entry>, keep: &[usize]) -> usize {
        keep.len()
    }

    /// The image's own checker ([`super::fsck::fsck`]), whatever ran on it: the kernel,
    /// fuse2fs, or a daemon on a directory of it.
    fn fsck(&self, image: &Path) -> Option<String> {
        super::fsck::fsck(self.fs(), image)
    }

    /// A new file `DEST.img`. `.img` is appended, not set as the extension: case names hold
    /// dots (`write_append.fsync-3`), and every state of a case would have been one
    /// `write_append.img`.
    fn keep(&self, image: &Path, dest: &Path) -> std::io::Result<()> {
        let mut img = dest.as_os_str().to_owned();
        img.push(".img");
        super::keep_image(image, Path::new(&img))
    }

    fn strict_applies(_: bool) -> bool {
        true
    }
}

impl Level for FilesFs {
    fn states(log: &Vec<FileOp>, o: &CrashOptions) -> Vec<State> {
        file_states(log, o)
    }

    fn writes(log: &Vec<FileOp>) -> usize {
        log.iter().filter(|o| o.is_data()).count()
    }

    fn kept_writes(log: &Vec<FileOp>, keep: &[usize]) -> usize {
        keep.iter().filter(|&&i| log.get(i).is_some_and(FileOp::is_data)).count()
    }

    /// There is no checker of a daemon's data.
    fn fsck(&self, _: &Path) -> Option<String> {
        None
    }

    /// A new directory at `dest`, a copy of the state's.
    fn keep(&self, dir: &Path, dest: &Path) -> std::io::Result<()> {
        super::walk::copy_tree(dir, dest)
    }

    /// Not with `names=lossy`, where the model itself drops each uncovered name on its own,
    /// as POSIX allows, so that a mix is what it builds, not what the daemon did.
    fn strict_applies(lossy: bool) -> bool {
        !lossy
    }
}

/// The crash states of a file-level log, deterministic from the seed. Crash points: after
/// every mark, before every persistence call, and at the end. At each, every name operation
/// before it that a later fsync covered is kept (with `names=kept`, every one), and every
/// data operation its file's fsync covered; the rest (the uncovered name operations and the
/// data in 4 KiB pieces, in log order) is lost: all of it (`prefix`); with `epoch` also none
/// of it, its first k, and all but one; with `subset` (and `torn`, the same at this granularity) seeded random subsets until
/// 8 tries in a row find no new state. Each state must keep every mark logged before its point.
pub(super) fn file_states(ops: &[FileOp], o: &CrashOptions) -> Vec<State> {
    let marks_before = |p: usize| -> Vec<u32> {
        ops[..p].iter().filter_map(|e| if let FileOp::Mark(n) = e { Some(*n) } else { None }).collect()
    };
    let mut points: Vec<usize> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            FileOp::Mark(_) => points.push(i + 1),
            op if op.is_persist() => points.push(i),
            _ => {}
        }
    }
    points.push(ops.len());
    points.sort_unstable();
    points.dedup();
    let mut out: Vec<State> = Vec::new();
    let push = |s: State, out: &mut Vec<State>| {
        if !out.iter().any(|o| o.keep == s.keep && o.marks == s.marks) {
            out.push(s);
        }
    };
    let with = |sure: &[usize], extra: &[usize]| -> Vec<usize> {
        let mut k: Vec<usize> = sure.iter().chain(extra).copied().collect();
        k.sort_unstable();
        k
    };
    let n = points.len();
    let split: Vec<(usize, Vec<usize>, Vec<usize>)> = points
        .iter()
        .map(|&p| {
            let (sure, unsynced) = super::durable::durable_at(ops, p, o.lossy);
            (p, sure, unsynced)
        })
        .collect();
    for (k, (p, sure, unsynced)) in split.iter().enumerate() {
        let what = format!(
            "crash point {} of {n} (before operation {p} of {}): every unsynced piece lost ({})",
            k + 1,
            ops.len(),
            unsynced.len()
        );
        let id = format!("p{}", k + 1);
        push(State { id, keep: sure.clone(), torn: None, marks: marks_before(*p), what }, &mut out);
    }
    let prefix = out.len();
    if o.states != States::Prefix {
        for (k, (p, sure, unsynced)) in split.iter().enumerate() {
            if unsynced.is_empty() {
                continue;
            }
            let marks = marks_before(*p);
            let at = format!("crash point {} of {n}", k + 1);
            let id = |what: String| format!("p{}{what}", k + 1);
            let total = unsynced.len();
            push(
                State {
                    id: id("a".into()),
                    keep: with(sure, unsynced),
                    torn: None,
                    marks: marks.clone(),
                    what: format!("{at}: every unsynced piece kept ({total})"),
                },
                &mut out,
            );
            for j in 1..total.min(8) {
                let what = format!("{at}: the first {j} of its {total} unsynced pieces kept");
                let s = State {
                    id: id(format!("c{j}")),
                    keep: with(sure, &unsynced[..j]),
                    torn: None,
                    marks: marks.clone(),
                    what,
                };
                push(s, &mut out);
            }
            for (j, &u) in unsynced.iter().enumerate().take(8) {
                let rest: Vec<usize> = unsynced.iter().copied().filter(|&x| x != u).collect();
                let what = format!("{at}: every unsynced piece but piece {} of {total} kept", j + 1);
                let s = State {
                    id: id(format!("x{}", j + 1)),
                    keep: with(sure, &rest),
                    torn: None,
                    marks: marks.clone(),
                    what,
                };
                push(s, &mut out);
            }
            if matches!(o.states, States::Subset | States::Torn) {
                let mut rng = fastrand::Rng::with_seed(o.seed ^ 0x5eed ^ *p as u64);
                let (mut misses, mut tries) = (0, 0);
                while misses < 8 && out.len() < o.max_states as usize * 4 {
                    let chosen: Vec<usize> = unsynced.iter().copied().filter(|_| rng.bool()).collect();
                    tries += 1;
                    let had = out.len();
                    let what = format!("{at}: random subset {tries} of its {total} unsynced pieces kept");
                    let s = State {
                        id: id(format!("s{tries}")),
                        keep: with(sure, &chosen),
                        torn: None,
                        marks: marks.clone(),
                        what,
                    };
                    push(s, &mut out);
                    misses = if out.len() > had { 0 } else { misses + 1 };
                }
            }
        }
    }
    super::cap(out, prefix, o)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn file_states_keep_names_lose_unsynced_data_and_honour_the_marks_before_them() {
        let w = |id: u64, path: &str, offset: u64| FileOp::Write { id, path: path.into(), offset, data: vec![1; 4] };
        let ops = vec![
            FileOp::Create { path: "a".into(), mode: 0o644 },
            w(2, "a", 0),
            FileOp::Barrier,
            FileOp::Mark(0),
            w(2, "a", 4096),
            w(2, "a", 8192),
            FileOp::Fsync { id: 2, path: "a".into() },
            FileOp::Mark(1),
            FileOp::Create { path: "b".into(), mode: 0o644 },
            w(3, "b", 0),
        ];
        let o = CrashOptions { states: States::Prefix, lossy: false, ..CrashOptions::default() };
        let s = file_states(&ops, &o);
        // After mark 0: the set-up; before the fsync: its two writes lost, mark 0 only; after
        // mark 1: both kept; at the end: b's name kept (names=kept), its data lost.
        let pairs = |s: &[State]| -> Vec<(Vec<usize>, Vec<u32>)> {
            s.iter().map(|s| (s.keep.clone(), s.marks.clone())).collect()
        };
        assert_eq!(
            pairs(&s),
            vec![(vec![0, 1], vec![0]), (vec![0, 1, 4, 5], vec![0, 1]), (vec![0, 1, 4, 5, 8], vec![0, 1]),]
        );
        // names=lossy (the default): no fsync covered b's name, so the end loses it too (the
        // same state as after mark 1); the epoch cuts keep it with or without its data.
        let o = CrashOptions { states: States::Prefix, ..CrashOptions::default() };
        assert_eq!(pairs(&file_states(&ops, &o)), vec![(vec![0, 1], vec![0]), (vec![0, 1, 4, 5], vec![0, 1])]);
        let s = file_states(&ops, &CrashOptions::default());
        assert!(s.iter().any(|s| s.keep == vec![0, 1, 4, 5, 8]), "{s:?}");
        assert!(s.iter().any(|s| s.keep == vec![0, 1, 4, 5, 8, 9]), "{s:?}");
        // epoch adds the cuts of the unsynced pieces: before the fsync, each of the two.
        let o = CrashOptions { states: States::Epoch, lossy: false, ..CrashOptions::default() };
        let s = file_states(&ops, &o);
        assert!(s.iter().any(|s| s.keep == vec![0, 1, 4] && s.marks == vec![0]), "{s:?}");
        assert!(s.iter().any(|s| s.keep == vec![0, 1, 5] && s.marks == vec![0]), "{s:?}");
        assert!(s.iter().any(|s| s.keep == vec![0, 1, 4, 5, 8, 9] && s.marks == vec![0, 1]), "{s:?}");
        // Fixed by the seed.
        let o = CrashOptions { states: States::Subset, seed: 7, ..CrashOptions::default() };
        assert_eq!(file_states(&ops, &o), file_states(&ops, &o));
    }
}
