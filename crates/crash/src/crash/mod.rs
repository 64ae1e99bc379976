//! The `crash` workload: crash consistency, recorded below the filesystem. It makes its own
//! copy of the target's filesystem on fsarena's recorder ([`fsarena_target::recorder`]), runs
//! each generated workload (b3-seq1, the default: CrashMonkey's ACE seq-1 set, [`ace`]; seq1:
//! a durable file set, one operation, one persistence call; a mark after each persistence
//! call) while every write and flush of the device is logged,
//! then rebuilds crash images from the log — (a) the image at every flush, (b) cuts inside the
//! epoch before the final mark, (c) with `states=subset`, random subsets of that epoch's
//! writes — mounts each (recovery), checks it against what the marks
//! promised ([`oracle`]), unmounts it and runs the filesystem's checker. The last state of
//! each generated workload is mounted once more for a sanity pass (a new file in every
//! directory, the tree removed, the checker again).
//!
//! A `fuse:` daemon is recorded at file level by default ([`rec`]): its `{work}` is fsarena's
//! logging passthrough, and a crash state is the log replayed into a directory — the name
//! operations before the crash point that a later fsync covered kept (`names=lossy`, the
//! default; `names=kept` keeps them all), each file's data kept up to its last fsync, and the
//! rest lost in 4 KiB pieces — with the daemon started again on it.
//!
//! Figures: `states_checked`, `states_per_s`, `violations_posix`, `violations_linux` and
//! `violations_strict` (crash states with at least one broken promise of that level), `fsck_failures` (states the
//! checker rejects, that do not mount, or that fail the sanity pass), `daemon_failures` (states on which a
//! `fuse:` daemon did not start or mount), `cases` and `cases_unsupported` (workloads run, and not run: each
//! counts in one). Each violation is a
//! verdict (`crash.LEVEL.CASE/STATE`) carrying what was promised, what was found and a
//! command that reproduces it. A violation is a finding, not a failed run.

mod ace;
mod app;
mod durable;
mod fsck;
mod options;
mod oracle;
mod rec;
mod seq;
pub mod text;
mod walk;

use fsarena_core::{Better, InputError, Measurement, Outcome, Spec, Verdict};
use fsarena_target::recorder::{Entry, FilesFs, RecordOptions, RecordedFs, Recorder, Unchecked, RECORDABLE};
use fsarena_workload::{Finish, Footprint, RunEnv, Workload, WorkloadError};
use rec::Level;

/// The target kinds `crash` records: the kernel filesystems at block level; fuse2fs at file
/// level (its one image file's writes and fsyncs); a `fuse:` command through the directory it
/// keeps its data in (`{work}`): served by the logging passthrough (`level=file`, the default)
/// or a directory of a recorded ext4 (`level=block`).
pub const KINDS: &[&str] = &["ext2", "ext3", "ext4", "xfs", "btrfs", "fuse2fs", "fuse"];
use options::{CrashOptions, States};
use seq::Case;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use options::OPTIONS;

/// Findings stored per run at most (the counts are always complete).
const MAX_FINDINGS: usize = 200;

/// The `crash` workload.
#[derive(Debug, Clone)]
pub struct CrashWorkload {
    options: CrashOptions,
    given: Vec<(String, String)>,
}

impl CrashWorkload {
    /// From `--workload crash:ops=seq1,sample=40`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = CrashOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("crash", OPTIONS, &mut options, k, v)?;
        }
        let w = Self { options, given: spec.params.clone() };
        let length = w.options.chain_length();
        if w.options.ops == "seq3" && w.options.sample == 0 && w.options.only.is_none() && w.options.app.is_none() {
            return Err(InputError::new(
                "crash: ops=seq3 has 512000 sequences of three: give sample=N (e.g. sample=200)",
            ));
        }
        if let Some((case, _)) = &w.options.only {
            let generated = w.options.app.is_none()
                && !w.options.ops.starts_with("b3-")
                && chain_of(case).is_some_and(|c| c.len() == length as usize);
            if !generated && !w.all().iter().any(|c| c.name() == *case) {
                return Err(InputError::new(match w.options.app {
                    Some(app) => format!(
                        "only={case}: no such workload of app={app}: expected {}",
                        w.all().iter().map(Job::name).collect::<Vec<_>>().join(", ")
                    ),
                    None if w.options.ops.starts_with("b3-") => format!(
                        "only={case}: no such workload in {}: names are OPERATION.ARGUMENTS.PERSISTENCE in ACE's j-lang names, e.g. link.foo.Abar.fsync_A (list=names lists them)",
                        w.options.ops
                    ),
                    None => format!(
                        "only={case}: no such generated workload in {}: names are OPERATION.PERSISTENCE, e.g. link.fsync",
                        w.options.ops
                    ),
                }));
            }
        }
        Ok(w)
    }

    /// Every workload of the set or the application, in their fixed order.
    fn all(&self) -> Vec<Job> {
        match self.options.app {
            Some("kv") => vec![Job::Kv],
            Some(_) => app::ALL.into_iter().map(Job::App).collect(),
            None if self.options.ops == "seq2" => {
                let one = seq::cases();
                one.iter().flat_map(|a| one.iter().map(move |b| Job::Chain(vec![*a, *b]))).collect()
            }
            // seq3 is sampled, never listed whole (512,000 sequences): see `cases`.
            None if self.options.ops == "seq3" => Vec::new(),
            None if self.options.ops == "b3-seq1" => ace::generate(1).into_iter().map(Job::Ace).collect(),
            None if self.options.ops == "b3-seq2" => ace::generate(2).into_iter().map(Job::Ace).collect(),
            None => seq::cases().into_iter().map(|c| Job::Chain(vec![c])).collect(),
        }
    }

    /// The workloads this run runs, in their fixed order.
    fn cases(&self) -> Vec<Job> {
        let o = &self.options;
        if let (Some((only, _)), None, false) = (&o.only, o.app, o.ops.starts_with("b3-")) {
            return chain_of(only).map(Job::Chain).into_iter().collect();
        }
        if o.ops == "seq3" && o.app.is_none() {
            // `sample` sequences of three drawn with the seed, each once, in a fixed order.
            let one = seq::cases();
            let n = one.len();
            let mut rng = fastrand::Rng::with_seed(o.seed);
            let mut picked = std::collections::BTreeSet::new();
            while (picked.len() as u64) < o.sample.min((n * n * n) as u64) {
                picked.insert(rng.usize(..n * n * n));
            }
            return picked
                .into_iter()
                .map(|i| Job::Chain(vec![one[i / (n * n)], one[i / n % n], one[i % n]]))
                .collect();
        }
        let all = self.all();
        if let Some((only, _)) = &o.only {
            return all.into_iter().filter(|c| c.name() == *only).collect();
        }
        if o.sample == 0 || o.sample as usize >= all.len() {
            return all;
        }
        let mut rng = fastrand::Rng::with_seed(o.seed);
        let mut picked: Vec<usize> = (0..all.len()).collect();
        rng.shuffle(&mut picked);
        picked.truncate(o.sample as usize);
        picked.sort_unstable();
        picked.into_iter().map(|i| all[i].clone()).collect()
    }
}

/// The generated workload `only=` names: seq1 names joined by `+`.
fn chain_of(name: &str) -> Option<Vec<Case>> {
    let one = seq::cases();
    name.split('+').map(|n| one.iter().find(|c| c.name() == n).copied()).collect()
}

/// What a sequence of operations ran through: the models (set-up, then after each step) and
/// each step's changes.
type Chain = (Vec<seq::Model>, Vec<seq::Changes>);

/// One workload of a crash run: a generated one, or an application's.
#[derive(Debug, Clone)]
enum Job {
    /// Generated: operations (one for seq1, two or three for seq2 and seq3), each with its
    /// persistence call.
    Chain(Vec<Case>),
    /// One of CrashMonkey's ACE workloads: its j-lang steps, a mark at each checkpoint.
    Ace(ace::Workload),
    App(app::Journal),
    Kv,
}

impl Job {
    /// A generated workload persisted by `sync()` somewhere: it promises nothing on a FUSE
    /// target (sync() never reaches the daemon), so there it is listed, not run.
    fn persists_by_sync(&self) -> bool {
        match self {
            Self::Chain(steps) => steps.iter().any(|c| c.persist == seq::Persist::Sync),
            Self::Ace(w) => w.steps.contains(&ace::Step::Sync),
            _ => false,
        }
    }

    fn name(&self) -> String {
        match self {
            Self::Chain(steps) => steps.iter().map(Case::name).collect::<Vec<_>>().join("+"),
            Self::Ace(w) => w.name.clone(),
            Self::App(j) => j.name().to_string(),
            Self::Kv => app::KV.to_string(),
        }
    }
}

/// One crash state: the writes it keeps and the marks it must honour.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    /// Its name, from where in the log it is cut (not from the order states are found, so a
    /// rerun of the same log names the same state alike): `f0` before the first flush, `fK`
    /// at the K-th flush before any mark, `mMfK` at the K-th flush after mark M, `cJ` the
    /// epoch's first J writes, `xJ` the epoch without its write J,
    /// `tJ.K` its write J torn after K blocks, `sN` the N-th random subset; at file level
    /// `pK` at crash point K, with `a` (every unsynced piece kept), `cJ`, `xJ` or `sN` after.
    id: String,
    keep: Vec<usize>,
    /// A torn write: this entry's first bytes only, after `keep`.
    torn: Option<(usize, u64)>,
    marks: Vec<u32>,
    what: String,
}

/// The crash states of one log, deterministic from `seed`: the image before the first flush
/// and at every flush; with `epoch`, cuts inside the epoch that ends at the last flush before
/// the final mark; with `subset`, also seeded random subsets of that epoch's writes. A state
/// cut at a flush stands for every crash point up to the next flush,
/// so it must keep every mark logged before that next flush.
fn states(entries: &[Entry], o: &CrashOptions) -> Vec<State> {
    let is_write = |i: usize| matches!(entries[i], Entry::Write { .. } | Entry::Zero { .. });
    let flushes: Vec<usize> = (0..entries.len()).filter(|&i| entries[i] == Entry::Flush).collect();
    let next_flush = |pos: usize| flushes.iter().copied().find(|&f| f > pos).unwrap_or(entries.len());
    let marks_before = |limit: usize| -> Vec<u32> {
        entries[..limit].iter().filter_map(|e| if let Entry::Mark(n) = e { Some(*n) } else { None }).collect()
    };
    let writes_before = |pos: usize| -> Vec<usize> { (0..pos).filter(|&i| is_write(i)).collect() };
    let mut out: Vec<State> = Vec::new();
    let push = |s: State, out: &mut Vec<State>| {
        if !out.iter().any(|o| o.keep == s.keep && o.torn == s.torn && o.marks == s.marks) {
            out.push(s);
        }
    };
    push(
        State {
            id: "f0".into(),
            torn: None,
            keep: Vec::new(),
            marks: marks_before(flushes.first().copied().unwrap_or(entries.len())),
            what: "before the first flush".into(),
        },
        &mut out,
    );
    // Flushes counted from the mark before them: a journal commit that comes earlier or later
    // in another run renames the flushes of its own epoch only.
    let flush_id = |f: usize| -> String {
        let mark = entries[..f].iter().rposition(|e| matches!(e, Entry::Mark(_)));
        let k = flushes.iter().filter(|&&g| g < f && mark.is_none_or(|m| g > m)).count() + 1;
        match mark.map(|m| &entries[m]) {
            Some(Entry::Mark(n)) => format!("m{n}f{k}"),
            _ => format!("f{k}"),
        }
    };
    for (k, &f) in flushes.iter().enumerate() {
        let s = State {
            id: flush_id(f),
            torn: None,
            keep: writes_before(f),
            marks: marks_before(next_flush(f)),
            what: format!("at flush {} of {}", k + 1, flushes.len()),
        };
        push(s, &mut out);
    }
    let prefix = out.len();
    if o.states != States::Prefix {
        let last_mark = entries.iter().rposition(|e| matches!(e, Entry::Mark(_))).unwrap_or(entries.len());
        let end = flushes.iter().copied().rfind(|&f| f < last_mark).unwrap_or(last_mark);
        let start = flushes.iter().copied().rfind(|&f| f < end).map_or(0, |f| f + 1);
        let epoch: Vec<usize> = (start..end).filter(|&i| is_write(i)).collect();
        let marks = marks_before(end);
        let all = writes_before(end);
        for (j, &w) in epoch.iter().enumerate() {
            let cut = State {
                id: format!("c{j}"),
                torn: None,
                keep: writes_before(w),
                marks: marks.clone(),
                what: format!("in the epoch before the final mark: its first {j} of {} writes", epoch.len()),
            };
            push(cut, &mut out);
            let less = State {
                id: format!("x{}", j + 1),
                torn: None,
                keep: all.iter().copied().filter(|&i| i != w).collect(),
                marks: marks.clone(),
                what: format!(
                    "in the epoch before the final mark: all of its {} writes but write {}",
                    epoch.len(),
                    j + 1
                ),
            };
            push(less, &mut out);
        }
        if o.states == States::Torn {
            // The epoch's last writes, each persisted only in part: its first blocks of the
            // logical block size, at up to 4 points.
            let sector = o.sector;
            for (j, &w) in epoch.iter().enumerate().rev().take(4) {
                let Entry::Write { len, .. } = entries[w] else { continue };
                let blocks = len / sector;
                if blocks < 2 {
                    continue;
                }
                let step = (blocks / 4).max(1);
                for k in (step..blocks).step_by(step as usize).take(4) {
                    let what =
                        format!("in the epoch before the final mark: a write torn after {k} of its {blocks} blocks");
                    push(
                        State {
                            id: format!("t{}.{k}", j + 1),
                            keep: writes_before(w),
                            torn: Some((w, k * sector)),
                            marks: marks.clone(),
                            what,
                        },
                        &mut out,
                    );
                }
            }
        }
        if o.states == States::Subset {
            // Seeded random subsets of the epoch's writes (each kept with probability 1/2),
            // until 8 tries in a row give no new image or there is no room left. Same keep
            // lists are the same image: duplicates are dropped by the push.
            let mut rng = fastrand::Rng::with_seed(o.seed ^ 0x5eed);
            let before: Vec<usize> = writes_before(start);
            let (mut misses, mut n) = (0, 0);
            while misses < 8 && out.len() < o.max_states as usize * 4 {
                let mut keep = before.clone();
                keep.extend(epoch.iter().copied().filter(|_| rng.bool()));
                let had = out.len();
                n += 1;
                let what =
                    format!("in the epoch before the final mark: random subset {n} of its {} writes", epoch.len());
                push(State { id: format!("s{n}"), keep, torn: None, marks: marks.clone(), what }, &mut out);
                misses = if out.len() > had { 0 } else { misses + 1 };
            }
        }
    }
    cap(out, prefix, o)
}

/// At most `max_states` of `out`: its first `prefix` (the persistence points) first, then a
/// seeded choice of the rest.
fn cap(mut out: Vec<State>, prefix: usize, o: &CrashOptions) -> Vec<State> {
    let max = o.max_states as usize;
    if out.len() > max {
        // The persistence points first; then a seeded choice of the cuts.
        let mut rest = out.split_off(prefix.min(max));
        out.truncate(max);
        let mut rng = fastrand::Rng::with_seed(o.seed);
        rng.shuffle(&mut rest);
        let room = max - out.len();
        out.extend(rest.into_iter().take(room));
    }
    out
}

/// A target spec written back as `kind:key=value,...`, values holding commas quoted.
fn spec_text(kind: &str, params: &[(String, String)]) -> String {
    let keys: Vec<String> =
        params.iter().map(|(k, v)| if v.contains(',') { format!("{k}='{v}'") } else { format!("{k}={v}") }).collect();
    if keys.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}:{}", keys.join(","))
    }
}

/// The filesystem the recorder makes for a target of `kind`: fuse2fs's image holds an ext
/// filesystem (`fs=`, ext4 by default, as the target); a `fuse:` command's `{work}` is on an
/// ext4; a kernel filesystem is itself.
fn recorded_fs(kind: &str, params: &[(String, String)]) -> String {
    match kind {
        "fuse2fs" => params.iter().find(|(k, _)| k == "fs").map_or_else(|| "ext4".into(), |(_, v)| v.clone()),
        "fuse" => "ext4".into(),
        kind => kind.to_string(),
    }
}

/// The default image size of the recorded filesystem: small, but what mkfs accepts.
fn image_size(fs: &str, given: u64) -> u64 {
    match (given, fs) {
        (0, "xfs") => 300 << 20,
        (0, "btrfs") => 128 << 20,
        (0, _) => 64 << 20,
        (n, _) => n,
    }
}

/// An operation the filesystem does not support: EPERM is link(2)'s and symlink(2)'s word
/// for a filesystem without them; ENOSYS a FUSE daemon's.
fn is_refusal(code: i32) -> bool {
    matches!(code, libc::EOPNOTSUPP | libc::EINVAL | libc::EPERM | libc::ENOSYS | libc::ENOTTY)
}

/// An operation that does not apply after the steps before it: its name gone or taken.
fn is_moot(code: i32) -> bool {
    matches!(code, libc::ENOENT | libc::EEXIST | libc::ENOTEMPTY | libc::ENOTDIR | libc::EISDIR | libc::ENODATA)
}

/// Makes what a generated workload set up under `root` durable, then writes mark 0.
fn set_up(rec: &impl Recorder, root: &Path, fuse: bool, name: &str) -> Result<(), String> {
    if !fuse {
        seq::sync_fs(root).map_err(|e| format!("{name}: setup: syncfs: {e}"))?;
    } else {
        // sync() does not reach a FUSE daemon: the set-up is made durable by an fsync of each
        // of its files and directories.
        seq::fsync_tree(root).map_err(|e| format!("{name}: setup: fsync: {e}"))?;
        // Below a `fuse:` daemon, the set-up is made durable whatever the daemon's fsync
        // does: the operation's persistence call is what is tested.
        rec.sync_lower().map_err(|e| format!("{name}: setup: {e}"))?;
    }
    rec.mark(0).map_err(|e| e.to_string())
}

/// What one run found, gathered from the checking threads.
#[derive(Debug, Default)]
struct Tally {
    states: u64,
    posix: u64,
    linux: u64,
    strict: u64,
    fsck: u64,
    /// States whose `fuse:` daemon did not start or mount: the daemon's failure, not the image's.
    daemon: u64,
    unsupported: u64,
    cases: u64,
    findings: Vec<Verdict>,
    kept: u64,
}

impl Tally {
    fn finding(&mut self, v: Verdict) {
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(v);
        }
    }
}

impl CrashWorkload {
    /// The command that reproduces state `n` of `case` on this target.
    fn reproduce(&self, target: &str, case: &str, n: &str) -> String {
        // An application's workloads are named by `app=`, the generated ones by `ops=`.
        let set = match self.options.app {
            Some(app) => format!("app={app}"),
            None => format!("ops={}", self.options.ops),
        };
        let mut keys = vec![set, format!("seed={}", self.options.seed)];
        for (k, v) in &self.given {
            if ["states", "max_states", "sector", "image_size", "mount_timeout", "level", "names", "persist"]
                .contains(&k.as_str())
            {
                keys.push(format!("{k}={v}"));
            }
        }
        keys.push(format!("only={case}/{n}"));
        format!(
            "fsarena run --target {} --workload {}",
            fsarena_target::shell_quote(target),
            fsarena_target::shell_quote(&format!("crash:{}", keys.join(",")))
        )
    }

    /// Runs generated workload `steps` and checks its crash states; false when the filesystem
    /// refused one of its operations (counted in `cases_unsupported`, nothing checked).
    #[allow(clippy::too_many_lines)]
    fn run_case<R: Level>(
        &self,
        rec: &mut R,
        steps: &[Case],
        target: &str,
        fuse: bool,
        tally: &Mutex<Tally>,
    ) -> Result<bool, String> {
        let name = steps.iter().map(Case::name).collect::<Vec<_>>().join("+");
        let root = rec.begin_case().map_err(|e| e.to_string())?;
        let ran = (|| -> Result<Option<Chain>, String> {
            let setup = seq::setup(&root).map_err(|e| format!("{name}: setup: {e}"))?;
            set_up(rec, &root, fuse, &name)?;
            let (mut models, mut changes) = (vec![setup], Vec::new());
            for (i, case) in steps.iter().enumerate() {
                let mut after = models[i].clone();
                let ch = match seq::run_op(&root, &mut after, &case.op) {
                    Ok(c) => c,
                    Err(e) => {
                        let code = e.raw_os_error().unwrap_or(0);
                        // Refused: not supported (EPERM is link(2)'s and symlink(2)'s word for
                        // a filesystem without them; ENOSYS a FUSE daemon's), never a
                        // violation; or, in a sequence, not applicable after the step before
                        // (its name gone or taken).
                        let (refused, moot) = (is_refusal(code), i > 0 && is_moot(code));
                        if !(refused || moot) {
                            return Err(format!("{name}: {}: {e}", case.op.name));
                        }
                        let mut t = lock(tally);
                        t.unsupported += 1;
                        let why = if moot { "does not apply after the step before" } else { "refused" };
                        t.finding(unsupported(&name, format!("{}: {e} ({why})", case.op.name)));
                        return Ok(None);
                    }
                };
                seq::persist(&root, case, self.options.global_sync)
                    .map_err(|e| format!("{name}: persistence call {}: {e}", i + 1))?;
                rec.mark(i as u32 + 1).map_err(|e| e.to_string())?;
                models.push(after);
                changes.push(ch);
            }
            Ok(Some((models, changes)))
        })();
        let log = rec.end_case().map_err(|e| e.to_string())?;
        // Refused: counted as unsupported, not as a workload run.
        let Some((models, changes)) = ran? else { return Ok(false) };
        let durable = if fuse { "fsync of each" } else { "syncfs" };
        let mut sequence = format!("setup (foo, bar, A/foo, A/C; {durable}), mark 0");
        for (i, case) in steps.iter().enumerate() {
            let what = match case.persist {
                seq::Persist::Sync if self.options.global_sync => "sync() of everything".to_string(),
                seq::Persist::Sync => "syncfs of the filesystem".to_string(),
                seq::Persist::FsyncParent => format!("fsync of /{}", case.op.parent),
                p => format!(
                    "{} of /{}",
                    if p == seq::Persist::Fdatasync { "fdatasync" } else { "fsync" },
                    case.op.subject.unwrap_or("")
                ),
            };
            sequence.push_str(&format!("; {}; {what}, mark {}", case.op.name, i + 1));
        }
        let chain: Vec<(seq::Promise, &seq::Model, &seq::Model, &seq::Changes)> =
            steps.iter().enumerate().map(|(i, c)| (c.promise(), &models[i], &models[i + 1], &changes[i])).collect();
        let all: Vec<&seq::Model> = models.iter().collect();
        // Each broken promise at the level of the rule that makes it (oracle::check_chain).
        let strict = R::strict_applies(self.options.lossy);
        let check = |r: &Path, marks: &[u32]| {
            if !marks.contains(&0) {
                return Vec::new();
            }
            let mut v = oracle::check_chain(r, &chain, marks, fuse);
            if strict {
                v.extend(oracle::check_strict_chain(r, &all));
            }
            v
        };
        self.check_log(rec, &log, &name, &sequence, &check, target, tally).map(|()| true)
    }

    /// Runs ACE workload `w` (it starts from an empty directory and makes what it uses) and
    /// checks its crash states; false when the filesystem refused one of its steps.
    fn run_ace<R: Level>(
        &self,
        rec: &mut R,
        w: &ace::Workload,
        target: &str,
        fuse: bool,
        tally: &Mutex<Tally>,
    ) -> Result<bool, String> {
        let name = &w.name;
        let root = rec.begin_case().map_err(|e| e.to_string())?;
        let ran = (|| -> Result<Option<ace::Ran>, String> {
            set_up(rec, &root, fuse, name)?;
            let mut mark = |k: u32| rec.mark(k).map_err(std::io::Error::other);
            match ace::run(&root, w, self.options.descriptor, self.options.global_sync, &mut mark) {
                Ok(r) => Ok(Some(r)),
                Err(e) => {
                    let code = e.error.raw_os_error().unwrap_or(0);
                    // Refused: not supported (as for seq1), or a step ACE's own test fails
                    // at: EBADF, it syncs a name it never opened; EINVAL, it renames a
                    // directory into itself or writes at -2000; ENOENT and the like, a seq-2
                    // workload opens A/C after moving A away (ACE does not follow a
                    // directory's children).
                    let (refused, moot) = (is_refusal(code), code == libc::EBADF || is_moot(code));
                    if !(refused || moot) {
                        return Err(format!("{name}: {}: {}", e.step, e.error));
                    }
                    let why = match code {
                        libc::EBADF => "ACE's workload syncs a name it never opened; its own test fails there too",
                        _ if moot => "ACE's workload does not apply at this step; its own test fails there too",
                        _ => "refused",
                    };
                    let mut t = lock(tally);
                    t.unsupported += 1;
                    t.finding(unsupported(name, format!("{}: {} ({why})", e.step, e.error)));
                    Ok(None)
                }
            }
        })();
        let log = rec.end_case().map_err(|e| e.to_string())?;
        let Some(ran) = ran? else { return Ok(false) };
        let durable = if fuse { "the empty directory fsynced" } else { "the empty directory, syncfs" };
        let mut sequence = format!("setup ({durable}), mark 0");
        let mut k = 0;
        for s in &w.steps {
            match s {
                ace::Step::Checkpoint(_) => {
                    k += 1;
                    sequence.push_str(&format!("; mark {k}"));
                }
                s => sequence.push_str(&format!("; {s}")),
            }
        }
        let chain: Vec<(seq::Promise, &seq::Model, &seq::Model, &seq::Changes)> =
            ran.parts.iter().map(|p| (p.promise.clone(), &p.before, &p.after, &p.changes)).collect();
        let all: Vec<&seq::Model> = ran.models.iter().collect();
        let strict = R::strict_applies(self.options.lossy);
        let check = |r: &Path, marks: &[u32]| {
            if !marks.contains(&0) || chain.is_empty() {
                return Vec::new();
            }
            let mut v = oracle::check_chain(r, &chain, marks, fuse);
            if strict {
                v.extend(oracle::check_strict_chain(r, &all));
            }
            v
        };
        self.check_log(rec, &log, name, &sequence, &check, target, tally).map(|()| true)
    }

    /// An application's workload (`app=sqlite`): its transactions, a mark after each commit,
    /// then its crash states checked by [`app::check`].
    fn run_app<R: Level>(
        &self,
        rec: &mut R,
        j: app::Journal,
        target: &str,
        fuse: bool,
        tally: &Mutex<Tally>,
    ) -> Result<(), String> {
        let root = rec.begin_case().map_err(|e| e.to_string())?;
        let ran = (|| -> Result<(), String> {
            let conn = app::setup(&root, j).map_err(|e| format!("{}: setup: {e}", j.name()))?;
            if fuse {
                // The table's commit was fsynced by SQLite; below a daemon, made durable too.
                rec.sync_lower().map_err(|e| format!("{}: setup: {e}", j.name()))?;
            }
            rec.mark(0).map_err(|e| e.to_string())?;
            for k in 1..=app::TXNS {
                app::commit(&conn, k).map_err(|e| format!("{}: transaction {k}: {e}", j.name()))?;
                rec.mark(k).map_err(|e| e.to_string())?;
            }
            conn.close().map_err(|e| format!("{}: close: {e}", j.name()))
        })();
        let log = rec.end_case().map_err(|e| e.to_string())?;
        ran?;
        self.check_log(rec, &log, j.name(), &j.sequence(), &|r, marks| app::check(r, j, marks), target, tally)
    }

    /// `app=kv`: the kv store's acknowledged puts, a mark after each.
    fn run_kv<R: Level>(&self, rec: &mut R, target: &str, tally: &Mutex<Tally>) -> Result<(), String> {
        let root = rec.begin_case().map_err(|e| e.to_string())?;
        let ran = app::kv_run(&root, &mut |k| rec.mark(k).map_err(|e| e.to_string()));
        let log = rec.end_case().map_err(|e| e.to_string())?;
        ran.map_err(|e| format!("{}: {e}", app::KV))?;
        let sequence =
            format!("the kv store (fjall) with sync=true opened, mark 0; {} puts, mark k after put k", app::TXNS);
        self.check_log(rec, &log, app::KV, &sequence, &app::kv_check, target, tally)
    }

    /// Runs this run's workloads on `rec` until the end, the budget, a stop or an error, then
    /// finishes it. Returns what the recorder made (for the result), the error, if any, and
    /// whether the run was stopped.
    fn record<R: Level>(
        &self,
        mut rec: R,
        env: &RunEnv<'_>,
        spec: &str,
        fuse: bool,
        started: Instant,
        tally: &Mutex<Tally>,
    ) -> (String, Option<String>, bool) {
        let o = &self.options;
        // The copy's mkfs, mount and recorder, for the result (the target itself is not mounted).
        let made: String = rec.info().iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        let mut error = None;
        let mut stopped = false;
        let cases = self.cases();
        for (i, job) in cases.iter().enumerate() {
            if env.stop.load(Ordering::Relaxed) {
                stopped = true;
                break;
            }
            if o.budget.is_some_and(|b| started.elapsed() >= Duration::from_nanos(b)) {
                (env.progress)(&format!("crash: budget reached after {i} of {} generated workloads", cases.len()));
                break;
            }
            (env.progress)(&format!("crash: {} ({}/{})", job.name(), i + 1, cases.len()));
            let ran = match job {
                Job::Chain(_) | Job::Ace(_) if fuse && job.persists_by_sync() => {
                    // sync() and syncfs() never reach a FUSE daemon: nothing is promised,
                    // nothing to check.
                    let mut t = lock(tally);
                    t.unsupported += 1;
                    t.finding(unsupported(
                        &job.name(),
                        "sync() is not a persistence point on a FUSE filesystem: it never reaches the daemon".into(),
                    ));
                    continue;
                }
                Job::Chain(steps) => self.run_case(&mut rec, steps, spec, fuse, tally),
                Job::Ace(w) => self.run_ace(&mut rec, w, spec, fuse, tally),
                Job::App(j) => self.run_app(&mut rec, *j, spec, fuse, tally).map(|()| true),
                Job::Kv => self.run_kv(&mut rec, spec, tally).map(|()| true),
            };
            // A workload counts once: in `cases` when it ran, in `cases_unsupported` when an
            // operation of it was refused (run_case counted that).
            match ran {
                Ok(true) => lock(tally).cases += 1,
                Ok(false) => {}
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        if let Err(e) = rec.finish() {
            error.get_or_insert(format!("recorder teardown: {e}"));
        }
        (made, error, stopped)
    }

    /// Checks the crash states of one generated workload's log: each built, recovered,
    /// checked by `check` (given the recovered root and the marks the state must honour)
    /// and by the filesystem's checker, the last also given the sanity pass.
    #[allow(clippy::too_many_arguments, clippy::too_many_lines)]
    fn check_log<R: Level>(
        &self,
        rec: &R,
        log: &R::Log,
        name: &str,
        sequence: &str,
        check: &(dyn Fn(&Path, &[u32]) -> Vec<oracle::Violation> + Sync),
        target: &str,
        tally: &Mutex<Tally>,
    ) -> Result<(), String> {
        let o = &self.options;
        let mut list: Vec<State> = R::states(log, o);
        if let Some((_, Some(id))) = &o.only {
            list.retain(|s| s.id == *id);
        }
        // The last state gets a second mount for the sanity pass.
        let last = list.last().map(|s| s.id.clone());
        let next = AtomicUsize::new(0);
        let failure: Mutex<Option<String>> = Mutex::new(None);
        let timeout = Duration::from_nanos(o.mount_timeout);
        std::thread::scope(|scope| {
            for slot in 0..rec.slots() {
                let (list, next, failure, last) = (&list, &next, &failure, &last);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(state) = list.get(i) else { break };
                    let n = &state.id;
                    if lock(failure).is_some() {
                        break;
                    }
                    let checked = rec.build_state(slot, log, &state.keep, state.torn).and_then(|image| {
                        let outcome = rec.check(slot, &image, timeout, |r| check(r, &state.marks))?;
                        Ok((image, outcome))
                    });
                    let (image, outcome) = match checked {
                        Ok(x) => x,
                        Err(e) => {
                            lock(failure).get_or_insert(format!("{name}: state {n}: {e}"));
                            break;
                        }
                    };
                    // The recovered filesystem must also take new work: mounted again, a file
                    // made in every directory and the tree removed, then checked again.
                    let sanity = match (last.as_ref() == Some(n) && outcome.checked.is_ok())
                        .then(|| rec.check(slot, &image, timeout, sanity_pass))
                    {
                        Some(Ok(s)) => Some(s),
                        Some(Err(e)) => {
                            lock(failure).get_or_insert(format!("{name}: state {n}: sanity pass: {e}"));
                            break;
                        }
                        None => None,
                    };
                    let mut t = lock(tally);
                    t.states += 1;
                    let where_ = format!(
                        "state {n} ({}, {} of {} logged writes kept)",
                        state.what,
                        R::kept_writes(log, &state.keep),
                        R::writes(log)
                    );
                    let repro = self.reproduce(target, name, n);
                    // A failed check of this state: its class, what should hold, what was found.
                    let failed_check = |class: &str, expected: String, found: &str| Verdict {
                        case: format!("crash.{class}.{name}/{n}"),
                        security: false,
                        outcome: Outcome::Fail,
                        expected,
                        actual: format!("{found}; {sequence}; {where_}; reproduce: {repro}"),
                    };
                    let mut failed = false;
                    let unmountable_state = matches!(outcome.checked, Err(Unchecked::Unmountable(_)));
                    let daemon_failed = matches!(outcome.checked, Err(Unchecked::Daemon(_)));
                    let violations = match outcome.checked {
                        Ok(v) => v,
                        Err(Unchecked::Unmountable(why)) => {
                            t.fsck += 1;
                            failed = true;
                            t.finding(failed_check(
                                "fsck",
                                "the crash image mounts (recovery)".to_string(),
                                &format!("unmountable: {why}"),
                            ));
                            Vec::new()
                        }
                        Err(Unchecked::Daemon(why)) => {
                            // The daemon's own failure, with what it last said: not a finding
                            // about the image, and no checker ran on what it serves.
                            t.daemon += 1;
                            failed = true;
                            t.finding(failed_check(
                                "daemon",
                                "the FUSE command starts and mounts on the crash state".to_string(),
                                &why,
                            ));
                            Vec::new()
                        }
                    };
                    for level in ["posix", "linux", "strict"] {
                        let of_level: Vec<&oracle::Violation> =
                            violations.iter().filter(|v| v.level == level).collect();
                        if of_level.is_empty() {
                            continue;
                        }
                        failed = true;
                        match level {
                            "posix" => t.posix += 1,
                            "linux" => t.linux += 1,
                            _ => t.strict += 1,
                        }
                        let promised: Vec<String> = of_level.iter().map(|v| v.promised.clone()).collect();
                        let found: Vec<String> = of_level.iter().map(|v| v.found.clone()).collect();
                        let mut promised = promised.join("; ");
                        // The rule behind a promise only syncfs() made, said once.
                        if promised.contains(oracle::BY_SYNC) {
                            promised = format!("{promised}; {}", oracle::BY_SYNC_RULE);
                        }
                        if promised.contains(oracle::BY_FSYNC_NAME) {
                            promised = format!("{promised}; {}", oracle::BY_FSYNC_NAME_RULE);
                        }
                        if promised.contains(oracle::BY_ALLOCATION) {
                            promised = format!("{promised}; {}", oracle::BY_ALLOCATION_RULE);
                        }
                        t.finding(failed_check(level, promised, &found.join("; ")));
                    }
                    if let Some(fsck) = &outcome.fsck {
                        // A state counts once, whether it failed to mount, the checker, or both.
                        if !unmountable_state {
                            t.fsck += 1;
                        }
                        failed = true;
                        t.finding(failed_check("fsck", "the checker finds the recovered image clean".to_string(), fsck));
                    }
                    if let Some(sanity) = sanity {
                        let broken = match sanity.checked {
                            Ok(Ok(())) => None,
                            Ok(Err(e)) => Some(e),
                            Err(unmountable) => Some(format!("it does not mount a second time: {unmountable}")),
                        };
                        if let Some(why) = broken.or(sanity.fsck) {
                            if !failed {
                                t.fsck += 1;
                            }
                            failed = true;
                            t.finding(failed_check("sanity", "the recovered filesystem mounts again, takes a new file in every directory, lets the tree be removed and stays clean".to_string(), &why));
                        }
                    }
                    if failed {
                        if let Some(dir) = &o.keep_failed {
                            let dest = dir.join(format!("{name}-{n}"));
                            if rec.keep(&image, &dest).is_ok() {
                                t.kept += 1;
                            }
                            // The daemon's whole output beside the state it failed on.
                            if let Some(log) = rec.daemon_log(slot).filter(|_| daemon_failed) {
                                let _ = keep_log(&log, &dir.join(format!("{name}-{n}.daemon.log")));
                            }
                        }
                    }
                });
            }
        });
        let failed = lock(&failure).take();
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A generated workload not run, and why.
fn unsupported(case: &str, why: String) -> Verdict {
    Verdict {
        case: format!("crash.unsupported.{case}"),
        security: false,
        outcome: Outcome::Unsupported,
        expected: String::new(),
        actual: why,
    }
}

/// The sanity pass on a recovered filesystem mounted at `root`: a new 4 KiB file, fsynced,
/// in every directory, then every entry removed (lost+found kept: the checkers want it).
/// What a daemon serves there may be hostile: the walk, the new files and the removals act
/// beneath the root with no link followed and nothing blocking ([`walk`]), so a link or a
/// FIFO where the new file goes, or a lost+found that is a link, is a failed pass, not a
/// write, a wait or a removal elsewhere.
fn sanity_pass(root: &Path) -> Result<(), String> {
    let top = walk::open_root(root).map_err(|e| format!("cannot open the root: {e}"))?;
    let dirs = walk::directories(&top).map_err(|e| format!("cannot list the tree: {e}"))?;
    for rel in &dirs {
        let path = rel.join(".fsarena-sanity");
        walk::dir(&top, rel)
            .and_then(|d| walk::write_new(&d, ".fsarena-sanity", &[0x5a; 4096]))
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    }
    let entries = walk::list(&top, Path::new(""), walk::MAX_NAMES).map_err(|e| format!("cannot list the root: {e}"))?;
    for (name, _) in entries {
        let removed = if name == "lost+found" {
            top.dir(Path::new("lost+found")).and_then(|lf| {
                let inside = walk::list(&lf, Path::new(""), walk::MAX_NAMES)?;
                inside.iter().try_for_each(|(x, _)| walk::remove_tree(&lf, x))
            })
        } else {
            walk::remove_tree(&top, &name)
        };
        removed.map_err(|e| format!("cannot remove {}: {e}", root.join(&name).display()))?;
    }
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Crash images checked at once: one per core (at most 4). btrfs refuses to mount a second
/// device with the same filesystem id unless the kernel gives single-device copies a temporary
/// one (`temp_fsid`, Linux 6.7): without it, one at a time.
fn slots(fs: &str) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, 4);
    match fs {
        "btrfs" if !Path::new("/sys/fs/btrfs/features/temp_fsid").exists() => 1,
        _ => cores,
    }
}

/// Copies a daemon's log into `keep_failed=` (a new file): its last [`KEPT_LOG`] bytes. The
/// log is in the recorder's directory, but the daemon runs as root beside it: the name is
/// opened without following a link and without blocking, and kept only if it is still a
/// regular file (a FIFO or a device swapped in is refused, never read).
fn keep_log(log: &Path, dest: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let src = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(log)?;
    let meta = src.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!("{} is not a regular file", log.display())));
    }
    let from = meta.len().saturating_sub(KEPT_LOG);
    let mut buf = vec![0u8; usize::try_from(meta.len() - from).unwrap_or(0)];
    let n = src.read_at(&mut buf, from)?;
    let (dst, _) = fsarena_target::safefs::create_new_file(dest)?;
    dst.write_all_at(&buf[..n], 0)
}

/// The most of a daemon's log [`keep_log`] keeps: its end.
const KEPT_LOG: u64 = 1 << 20;

/// Copies a failing crash image into `keep_failed=` (a new file, sparse: blocks of zeroes are
/// left as holes). Read and written, not copy_file_range: the image may be a virtual one on
/// the recorder's FUSE mount, another filesystem than the destination's.
fn keep_image(image: &Path, dest: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let src = std::fs::File::open(image)?;
    let (dst, _) = fsarena_target::safefs::create_new_file(dest)?;
    let size = src.metadata()?.len();
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < size {
        let n = ((size - at) as usize).min(buf.len());
        src.read_exact_at(&mut buf[..n], at)?;
        if buf[..n].iter().any(|b| *b != 0) {
            dst.write_all_at(&buf[..n], at)?;
        }
        at += n as u64;
    }
    dst.set_len(size)
}

impl Workload for CrashWorkload {
    fn kind(&self) -> &'static str {
        "crash"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            source: "crash workload (seq1)".into(),
            threads: 4,
            buffer_bytes: 8 << 20,
            // Its images live in the work directory, not on the target.
            bytes_on_target: 0,
            files: 0,
            open_files: 32,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        let cases = self.cases();
        let set = match o.app {
            Some(app) => format!(
                "{} workloads of app={app} ({}; {} transactions each)",
                cases.len(),
                cases.iter().map(Job::name).collect::<Vec<_>>().join(", "),
                app::TXNS
            ),
            None => {
                let length = o.chain_length();
                let in_set = if o.ops.starts_with("b3-") { self.all().len() } else { seq::cases().len().pow(length) };
                format!("{} generated workloads of {} ({in_set} in the set)", cases.len(), o.ops)
            }
        };
        let mut lines = vec![format!(
            "crash: {set}{}, states={}, at most {} crash states each ({} in all; how many each gives is known once its writes are logged), recorded below the filesystem by fsarena's FUSE recorder",
            if o.sample > 0 { format!(", sample={} with seed={}", o.sample, o.seed) } else { String::new() },
            match o.states {
                States::Prefix => "prefix",
                States::Epoch => "epoch",
                States::Subset => "subset",
                States::Torn => "torn",
            },
            o.max_states,
            cases.len() as u64 * o.max_states
        )];
        let sync_only = cases.iter().filter(|j| j.persists_by_sync()).count();
        if sync_only > 0 {
            lines.push(format!(
                "on fuse2fs and fuse: targets {} of them run and {sync_only} are listed, not run: they persist with sync(), which never reaches a FUSE daemon",
                cases.len() - sync_only
            ));
        }
        if let Some(b) = o.budget {
            lines.push(format!(
                "budget={}: no generated workload starts after that long on a target",
                fsarena_core::text::human_duration(Duration::from_nanos(b))
            ));
        }
        for job in cases.iter().filter(|_| o.list.is_some()) {
            match job {
                Job::Ace(w) if o.list == Some("jlang") => lines.push(format!(
                    "{}: {}",
                    w.name,
                    w.steps.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
                )),
                j => lines.push(j.name()),
            }
        }
        lines
    }

    fn deterministic(&self) -> bool {
        true
    }

    fn target_kinds(&self) -> Option<&'static [&'static str]> {
        Some(KINDS)
    }

    fn own_target(&self) -> bool {
        true
    }

    fn check_target(&self, kind: &str, params: &[(String, String)]) -> Result<(), String> {
        let cmd = params.iter().find(|(k, _)| k == "cmd").map(|(_, v)| v.as_str());
        if kind == "fuse" && !cmd.is_some_and(|c| c.contains("{work}")) {
            return Err(
                "crash records a fuse: target through the directory its command keeps its data in: cmd= needs {work}"
                    .into(),
            );
        }
        let size = self.options.image_size;
        let fs = recorded_fs(kind, params);
        let given = self.given.iter().find(|(k, _)| k == "image_size").map_or("0", |(_, v)| v.as_str());
        match fsarena_target::table::filesystem(&fs) {
            Some(f) if size > 0 && size < f.minimum => Err(format!(
                "crash: image_size={given} is too small for {fs}: expected at least {} ({})",
                fsarena_target::beneath::limit_text(f.minimum),
                f.minimum_why
            )),
            _ => Ok(()),
        }
    }

    fn workdir_bytes(&self, kind: &str, params: &[(String, String)]) -> Option<(u64, String)> {
        // At file level the log is in memory and the states hold no more than it.
        let _ = params;
        let file_level = kind == "fuse" && self.options.level == "file";
        let given = self.given.iter().find(|(k, _)| k == "max_log").map_or("2g", |(_, v)| v.as_str());
        (!file_level).then(|| (self.options.max_log, format!("max_log={given}, the most its write log may hold")))
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let fail = |message: String| WorkloadError { message, partial: Vec::new() };
        let Some(target) = &env.target else {
            return Err(fail(format!(
                "crash: records a target fsarena provisions ({}); this run has none",
                KINDS.join(", ")
            )));
        };
        if !KINDS.contains(&target.kind.as_str()) {
            return Err(fail(format!(
                "crash cannot record a {} target: the kinds it can record are {}",
                target.kind,
                KINDS.join(", ")
            )));
        }
        let o = &self.options;
        let param = |k: &str| target.params.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        self.check_target(&target.kind, &target.params).map_err(fail)?;
        let fuse2fs = target.kind == "fuse2fs";
        let daemon = if target.kind == "fuse" { param("cmd") } else { None };
        let fs = recorded_fs(&target.kind, &target.params);
        let daemon_timeout = match param("timeout") {
            Some(t) => fsarena_core::units::parse_time(&t, 1_000_000_000).map_err(|e| fail(e.to_string()))?.0,
            None => 30_000_000_000,
        };
        // A FUSE filesystem: sync() does not reach it, its setup is made durable otherwise.
        let fuse = fuse2fs || daemon.is_some();
        if !RECORDABLE.contains(&fs.as_str()) {
            return Err(fail(format!("crash cannot record fuse2fs:fs={fs}: expected ext2, ext3 or ext4")));
        }
        let record = RecordOptions {
            size: image_size(&fs, o.image_size),
            slots: slots(&fs),
            fs,
            fuse2fs,
            daemon,
            daemon_timeout: Duration::from_nanos(daemon_timeout),
            mkfs: param("mkfs")
                .filter(|_| !fuse || fuse2fs)
                .map(|m| m.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
            mount: param("mount").filter(|_| !fuse || fuse2fs).unwrap_or_default(),
            sector_4k: o.sector == 4096,
            max_log: o.max_log,
        };
        if let Some(dir) = &o.keep_failed {
            fsarena_target::safefs::create_new_dir(dir, 0o700)
                .map_err(|e| fail(format!("keep_failed={}: cannot create it: {e}", dir.display())))?;
        }
        let spec = spec_text(&target.kind, &target.params);
        let started = Instant::now();
        let tally = Mutex::new(Tally::default());
        // A `fuse:` daemon at file level (the default): its `{work}` through the logging
        // passthrough; else everything at block level.
        let (made, error, stopped) = if record.daemon.is_some() && o.level == "file" {
            let rec = FilesFs::start(target.workdir, target.index, &record).map_err(|e| fail(e.to_string()))?;
            self.record(rec, env, &spec, fuse, started, &tally)
        } else {
            let rec = RecordedFs::start(target.workdir, target.index, record).map_err(|e| fail(e.to_string()))?;
            self.record(rec, env, &spec, fuse, started, &tally)
        };
        let elapsed = started.elapsed().as_secs_f64();
        let t = tally.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut m = Measurement::default();
        m.push("states_checked", "states", Better::Higher, t.states as f64);
        m.push("states_per_s", "states/s", Better::Higher, if elapsed > 0.0 { t.states as f64 / elapsed } else { 0.0 });
        m.push("violations_posix", "states", Better::Lower, t.posix as f64);
        m.push("violations_linux", "states", Better::Lower, t.linux as f64);
        m.push("violations_strict", "states", Better::Lower, t.strict as f64);
        m.push("fsck_failures", "states", Better::Lower, t.fsck as f64);
        m.push("daemon_failures", "states", Better::Lower, t.daemon as f64);
        m.push("cases", "workloads", Better::Higher, t.cases as f64);
        m.push("cases_unsupported", "workloads", Better::Lower, t.unsupported as f64);
        m.push("elapsed", "ns", Better::Lower, elapsed * 1e9);
        // The hook for --strict-checks: every finding of every level.
        m.count("findings", t.posix + t.linux + t.strict + t.fsck + t.daemon);
        m.count("images_kept", t.kept);
        m.verdicts = t.findings;
        m.logs.insert("recorder".into(), made);
        m.finish(error, stopped)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn states_cover_every_flush_and_honour_the_marks_before_the_next_one() {
        let w = |o| Entry::Write { offset: o, len: 1, spill: 0 };
        // setup writes, flush, mark 0, op writes, flush, mark 1, unmount writes.
        let log = [w(0), w(1), Entry::Flush, Entry::Mark(0), w(2), w(3), Entry::Flush, Entry::Mark(1), w(4)];
        let o = CrashOptions { states: States::Prefix, ..Default::default() };
        let s = states(&log, &o);
        assert_eq!(s.len(), 3, "{s:?}");
        assert_eq!((s[0].keep.clone(), s[0].marks.clone()), (vec![], vec![]));
        assert_eq!((s[1].keep.clone(), s[1].marks.clone()), (vec![0, 1], vec![0]));
        assert_eq!((s[2].keep.clone(), s[2].marks.clone()), (vec![0, 1, 4, 5], vec![0, 1]));
        assert_eq!(s.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), ["f0", "f1", "m0f1"]);
        // Named from the mark before them: one more flush in the set-up renames none after
        // mark 0.
        let more = [w(0), Entry::Flush, w(1), Entry::Flush, Entry::Mark(0), w(2), w(3), Entry::Flush, Entry::Mark(1)];
        let ids: Vec<_> = states(&more, &o).into_iter().map(|x| x.id).collect();
        assert_eq!(ids, ["f0", "f1", "f2", "m0f1"]);
        // No flush at all (barrier=0): the empty image must keep both marks.
        let s = states(&[w(0), Entry::Mark(0), w(1), Entry::Mark(1)], &o);
        assert_eq!(s[0].marks, vec![0, 1]);
        let o = CrashOptions::default();
        let s = states(&log, &o);
        // The epoch before mark 1 holds writes 4 and 5: cuts before each, and less each.
        assert!(s.iter().any(|x| x.keep == vec![0, 1, 4] && x.marks == vec![0]), "{s:?}");
        assert!(s.iter().any(|x| x.keep == vec![0, 1, 5]), "{s:?}");
        // Subsets: new images only, the prefix ones first, never more than max_states.
        let o = CrashOptions { states: States::Subset, ..Default::default() };
        let s = states(&log, &o);
        assert!(s.iter().any(|x| x.keep == vec![0, 1]), "{s:?}");
        for (i, a) in s.iter().enumerate() {
            assert!(s[i + 1..].iter().all(|b| b.keep != a.keep || b.marks != a.marks), "{s:?}");
        }
        // Torn: the 4 KiB write 5 cut after its first of eight 512-byte blocks, and so on.
        let log = [
            w(0),
            Entry::Flush,
            Entry::Mark(0),
            Entry::Write { offset: 9, len: 4096, spill: 0 },
            Entry::Flush,
            Entry::Mark(1),
        ];
        let o = CrashOptions { states: States::Torn, ..Default::default() };
        let torn: Vec<_> = states(&log, &o).into_iter().filter_map(|x| x.torn).collect();
        assert_eq!(torn, vec![(3, 1024), (3, 2048), (3, 3072)], "{torn:?}");
        let o = CrashOptions { max_states: 2, ..Default::default() };
        assert_eq!(states(&log, &o).len(), 2);
    }

    #[test]
    fn a_chain_promises_only_what_each_persistence_call_covered() {
        let dir = std::env::temp_dir().join(format!("fsarena-crash-chain-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let setup = seq::setup(&dir).unwrap();
        let old_foo = std::fs::read(dir.join("foo")).unwrap();
        let find = |n: &str| seq::cases().into_iter().find(|c| c.name() == n).unwrap();
        // Step 1 appends to foo and fsyncs its parent (the entries, not foo's data); step 2
        // creates A/bar and fsyncs it.
        let (a, b) = (find("write_append.fsync_parent"), find("creat.fsync"));
        let mut m1 = setup.clone();
        let c1 = seq::run_op(&dir, &mut m1, &a.op).unwrap();
        let mut m2 = m1.clone();
        let c2 = seq::run_op(&dir, &mut m2, &b.op).unwrap();
        let chain = [(a.promise(), &setup, &m1, &c1), (b.promise(), &m1, &m2, &c2)];
        let all = oracle::expect_chain(&chain, &[0, 1, 2]).unwrap();
        assert_eq!(oracle::check(&dir, &all), Vec::new());
        // foo back at its set-up contents: still no broken promise (the append was never
        // promised), and A/bar is.
        std::fs::write(dir.join("foo"), &old_foo).unwrap();
        assert_eq!(oracle::check(&dir, &all), Vec::new());
        std::fs::remove_file(dir.join("A/bar")).unwrap();
        let v = oracle::check(&dir, &all);
        assert!(v.iter().any(|v| v.found.contains("no A/bar")), "{v:?}");
        // Before mark 2, A/bar is not promised.
        let one = oracle::expect_chain(&chain, &[0, 1]).unwrap();
        assert_eq!(oracle::check(&dir, &one), Vec::new());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_sanity_pass_writes_in_every_directory_and_leaves_only_lost_and_found() {
        let dir = std::env::temp_dir().join(format!("fsarena-crash-sanity-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("A/C")).unwrap();
        std::fs::create_dir_all(dir.join("lost+found/#12")).unwrap();
        std::fs::write(dir.join("foo"), b"x").unwrap();
        std::os::unix::fs::symlink("A", dir.join("link")).unwrap();
        sanity_pass(&dir).unwrap();
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("lost+found")]);
        assert_eq!(std::fs::read_dir(dir.join("lost+found")).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_image_and_the_log_are_checked_against_the_target_with_the_plan() {
        let w = |t: &str| CrashWorkload::from_spec(&Spec::parse(t).unwrap()).unwrap();
        let e = w("crash:image_size=64m").check_target("xfs", &[]).unwrap_err();
        assert!(e.contains("image_size=64m is too small for xfs") && e.contains("at least"), "{e}");
        assert!(w("crash:image_size=64m").check_target("ext4", &[]).is_ok());
        let fs = [("fs".to_string(), "ext2".to_string())];
        assert!(w("crash:image_size=20m").check_target("fuse2fs", &fs).is_ok());
        // The block level's spill file is in the work directory; the file level's log in memory.
        let (bytes, what) = w("crash:max_log=100m").workdir_bytes("ext4", &[]).unwrap();
        assert_eq!((bytes, what.starts_with("max_log=100m")), (100 << 20, true));
        let cmd = [("cmd".to_string(), "x {work} {mnt}".to_string())];
        assert!(w("crash").workdir_bytes("fuse", &cmd).is_none());
        assert!(w("crash:level=block").workdir_bytes("fuse", &cmd).is_some());
    }

    #[test]
    fn the_dry_run_says_the_workloads_the_bound_on_states_the_sync_only_ones_and_the_budget() {
        let describe = |t: &str| CrashWorkload::from_spec(&Spec::parse(t).unwrap()).unwrap().describe().join("\n");
        let seq1 = seq::cases().len();
        let sync_only = seq::cases().iter().filter(|c| c.persist == seq::Persist::Sync).count();
        assert!(sync_only > 0 && sync_only < seq1);
        let text = describe("crash:ops=seq1,max_states=10");
        assert!(text.contains(&format!("{seq1} generated workloads of seq1")), "{text}");
        assert!(text.contains(&format!("at most 10 crash states each ({} in all", seq1 * 10)), "{text}");
        assert!(
            text.contains(&format!("{} of them run and {sync_only} are listed, not run", seq1 - sync_only)),
            "{text}"
        );
        assert!(!text.contains("budget"), "{text}");
        let text = describe("crash:ops=seq1,budget=90s,only=link.fsync");
        assert!(text.contains("1 generated workloads"), "{text}");
        assert!(!text.contains("listed, not run"), "{text}");
        assert!(text.contains("budget=1m30s: no generated workload starts after that long"), "{text}");
    }

    #[test]
    fn the_set_and_its_sample_are_fixed_by_the_seed() {
        let all = seq::cases();
        assert!(all.len() >= 70, "{}", all.len());
        let spec = |t: &str| Spec::parse(t).unwrap();
        let a = CrashWorkload::from_spec(&spec("crash:sample=10,seed=3")).unwrap().cases();
        let b = CrashWorkload::from_spec(&spec("crash:sample=10,seed=3")).unwrap().cases();
        assert_eq!(a.len(), 10);
        assert_eq!(a.iter().map(Job::name).collect::<Vec<_>>(), b.iter().map(Job::name).collect::<Vec<_>>());
        let one = CrashWorkload::from_spec(&spec("crash:ops=seq1,only=link.fsync/f2")).unwrap().cases();
        assert_eq!(one.len(), 1);
        assert!(CrashWorkload::from_spec(&spec("crash:ops=seq1,only=nope.fsync")).is_err());
        // The default set is ACE's seq-1, named in its j-lang names.
        let ace = CrashWorkload::from_spec(&spec("crash:only=link.foo.Abar.fsync_A/f3")).unwrap().cases();
        assert_eq!(ace.iter().map(Job::name).collect::<Vec<_>>(), ["link.foo.Abar.fsync_A"]);
        let e = CrashWorkload::from_spec(&spec("crash:only=link.fsync")).unwrap_err().to_string();
        assert!(e.contains("e.g. link.foo.Abar.fsync_A"), "{e}");
        // seq3: sampled only, by the seed; a sequence named by only=.
        assert!(CrashWorkload::from_spec(&spec("crash:ops=seq3")).unwrap_err().to_string().contains("sample="));
        let three = CrashWorkload::from_spec(&spec("crash:ops=seq3,sample=5,seed=9")).unwrap().cases();
        assert_eq!(three.len(), 5);
        assert!(three.iter().all(|j| j.name().matches('+').count() == 2), "{three:?}");
        let again = CrashWorkload::from_spec(&spec("crash:ops=seq3,sample=5,seed=9")).unwrap().cases();
        assert_eq!(three.iter().map(Job::name).collect::<Vec<_>>(), again.iter().map(Job::name).collect::<Vec<_>>());
        let named = three[0].name();
        let one = CrashWorkload::from_spec(&spec(&format!("crash:ops=seq3,only={named}"))).unwrap().cases();
        assert_eq!(one.iter().map(Job::name).collect::<Vec<_>>(), [named]);
        assert!(CrashWorkload::from_spec(&spec("crash:ops=seq2,only=link.fsync")).is_err());
        // An application's workloads, by name.
        let app = CrashWorkload::from_spec(&spec("crash:app=sqlite")).unwrap().cases();
        assert_eq!(
            app.iter().map(Job::name).collect::<Vec<_>>(),
            ["sqlite.rollback", "sqlite.rollback_extra", "sqlite.wal"]
        );
        let wal = CrashWorkload::from_spec(&spec("crash:app=sqlite,only=sqlite.wal")).unwrap().cases();
        assert_eq!(wal.len(), 1);
        let e = CrashWorkload::from_spec(&spec("crash:app=sqlite,only=link.fsync")).unwrap_err().to_string();
        assert!(e.contains("sqlite.rollback, sqlite.rollback_extra, sqlite.wal"), "{e}");
    }

    #[test]
    fn a_daemons_log_is_kept_only_as_the_regular_file_it_was() {
        let root = std::env::temp_dir().join(format!("fsarena-crash-keeplog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let dir = Dir(root);
        let log = dir.path().join("daemon.log");
        std::fs::write(&log, b"said this").unwrap();
        keep_log(&log, &dir.path().join("kept.log")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("kept.log")).unwrap(), b"said this");
        // A link or a FIFO in its place: refused at once, nothing read or made.
        let secret = dir.path().join("secret");
        std::fs::write(&secret, b"root's").unwrap();
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert!(keep_log(&link, &dir.path().join("k1")).is_err());
        let fifo = dir.path().join("fifo.log");
        assert_eq!(unsafe { libc::mkfifo(std::ffi::CString::new(fifo.to_str().unwrap()).unwrap().as_ptr(), 0o600) }, 0);
        assert!(keep_log(&fifo, &dir.path().join("k2")).is_err());
        assert!(!dir.path().join("k1").exists() && !dir.path().join("k2").exists());
    }

    /// A scratch directory removed when dropped.
    struct Dir(std::path::PathBuf);
    impl Dir {
        fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_oracle_knows_what_an_fsync_promised() {
        let dir = std::env::temp_dir().join(format!("fsarena-crash-oracle-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let before = seq::setup(&dir).unwrap();
        let case = seq::cases().into_iter().find(|c| c.name() == "write_append.fsync").unwrap();
        let mut after = before.clone();
        let ch = seq::run_op(&dir, &mut after, &case.op).unwrap();
        // The directory as it is now keeps every promise.
        let e = oracle::expect(&case, &before, &after, &ch, &[0, 1]).unwrap();
        assert_eq!(oracle::check(&dir, &e), Vec::new());
        // Before mark 1 the appended file may be old or new: no promise about its data.
        let e = oracle::expect(&case, &before, &after, &ch, &[0]).unwrap();
        assert_eq!(oracle::check(&dir, &e), Vec::new());
        // The namespace is the one after the operation: strict holds; a stray name breaks it.
        assert_eq!(oracle::check_strict(&dir, &before, &after), None);
        std::fs::write(dir.join("A/stray"), b"").unwrap();
        assert_eq!(oracle::check_strict(&dir, &before, &after).map(|v| v.level), Some("strict"));
        std::fs::remove_file(dir.join("A/stray")).unwrap();
        // The append lost: a posix violation.
        std::fs::OpenOptions::new().write(true).open(dir.join("foo")).unwrap().set_len(16384).unwrap();
        let e = oracle::expect(&case, &before, &after, &ch, &[0, 1]).unwrap();
        let v = oracle::check(&dir, &e);
        assert!(v.len() == 1 && v[0].level == "posix" && v[0].promised.contains("size 21384"), "{v:?}");
        // A setup file gone: a violation whatever the operation.
        std::fs::remove_file(dir.join("A/foo")).unwrap();
        let e = oracle::expect(&case, &before, &after, &ch, &[0]).unwrap();
        assert!(oracle::check(&dir, &e).iter().any(|v| v.found == "no A/foo"));
        // By level: the lost append broke fsync's promise (POSIX's); the set-up's file was
        // made durable by syncfs() (Linux's promise); below a FUSE daemon the set-up is made
        // durable by fsync of each file, so its loss is POSIX's too.
        let chain = [(case.promise(), &before, &after, &ch)];
        let level_of =
            |v: &[oracle::Violation], found: &str| v.iter().find(|v| v.found.contains(found)).map(|v| v.level);
        let v = oracle::check_chain(&dir, &chain, &[0, 1], false);
        assert_eq!((level_of(&v, "size 16384"), level_of(&v, "no A/foo")), (Some("posix"), Some("linux")), "{v:?}");
        assert!(v.iter().any(|v| v.level == "linux" && v.promised.ends_with(oracle::BY_SYNC)), "{v:?}");
        let v = oracle::check_chain(&dir, &chain, &[0, 1], true);
        assert_eq!((level_of(&v, "size 16384"), level_of(&v, "no A/foo")), (Some("posix"), Some("posix")), "{v:?}");
        // A sync point's promise is Linux's: the same loss after write_append.sync.
        let sync = seq::cases().into_iter().find(|c| c.name() == "write_append.sync").unwrap();
        let v = oracle::check_chain(&dir, &[(sync.promise(), &before, &after, &ch)], &[0, 1], false);
        assert_eq!(level_of(&v, "size 16384"), Some("linux"), "{v:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
