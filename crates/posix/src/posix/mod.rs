//! The `posix` workload: does the filesystem behave as POSIX.1-2017 and the Linux man pages
//! say? Named cases (`rename.dir_over_nonempty_dir.ENOTEMPTY`), in the tradition of
//! pjdfstest, grouped by syscall family; each case runs in a fresh directory of its own and
//! records what was expected and what happened.
//!
//! A family is one part of the result (`chmod`, `rename`, ...): metrics `passed`, `failed`,
//! `unsupported`, `cases`, `pass_rate`, and the verdict of every case
//! ([`fsarena_core::Verdict`]), so a run stores, compares and reports like any other, and
//! `compare before after` can list the cases that newly fail or newly pass.
//!
//! Written from the standards and the man pages, not from another suite: see cases/ (one
//! file per family) for what each family checks and why.

pub mod acl;
pub mod cases;
pub mod check;
pub mod ctx;
pub mod table;

use cases::Case;
use check::Miss;
use fsarena_core::option::DefaultValue::Unset;
use fsarena_core::option::ListSyntax;
use fsarena_core::option::ValueKind::Text;
use fsarena_core::{Better, InputError, Measurement, Outcome, Spec, Verdict};
use fsarena_workload::options::{opt, OptionDef};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// How the reports name the kind's verdicts (registered with the kind in the registry).
pub static VERDICTS: fsarena_core::run::VerdictSection = fsarena_core::run::VerdictSection {
    title: "POSIX compliance",
    unsupported_examples: "no ACLs, no immutable attribute",
    security: "the access-control cases of every family",
};

/// The options of one `posix` run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PosixOptions {
    /// The families to run, in the order given; empty: all.
    pub families: Vec<&'static str>,
    /// Only cases whose name matches this pattern (`*` any run of characters).
    pub case: Option<String>,
}

/// A row of the posix table.
macro_rules! px {
    ($($rest:tt)*) => { opt!(PosixOptions, $($rest)*) };
}

/// Every option of the `posix` workload.
pub static OPTIONS: &[OptionDef<PosixOptions>] = &[
    px!("family", Text, Unset, "the syscall families to check, comma-separated, of chmod, chown, link, mkdir, mkfifo, mknod, open, rename, rmdir, symlink, truncate, unlink, utimensat, fallocate, xattr, acl, statx; unset: all. Also --posix-family", |o, v| o.families = families(v)?)
        .list(ListSyntax::None),
    px!("case", Text, Unset, "only the cases whose name matches this pattern, `*` standing for any characters (rename.*.ENOTEMPTY)", |o, v| o.case = Some(v.trim().to_string())),
];

/// The comma-separated family list: each a known family, refused with the list otherwise.
fn families(v: &str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let f = cases::FAMILIES.iter().find(|f| **f == name).ok_or_else(|| {
            format!(
                "'{}' is not a posix family:{} expected {}",
                fsarena_workload::plain::cut(name),
                fsarena_core::did_you_mean(name, cases::FAMILIES.iter().copied()),
                cases::FAMILIES.join(", ")
            )
        })?;
        if !out.contains(f) {
            out.push(*f);
        }
    }
    if out.is_empty() {
        return Err("no family named: expected a comma-separated list such as chmod,rename".into());
    }
    Ok(out)
}

/// `pattern` with `*` for any run of characters matches all of `name`.
fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let mut parts: Vec<&str> = parts.collect();
    let Some(last) = parts.pop() else { return rest.is_empty() };
    for p in parts {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The `posix` workload.
#[derive(Debug, Clone)]
pub struct PosixWorkload {
    /// The selected cases, by family in run order.
    plan: Vec<(&'static str, Vec<&'static Case>)>,
    given: Vec<(String, String)>,
}

impl PosixWorkload {
    /// From `--workload posix:family=chmod,rename`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut o = PosixOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("posix", OPTIONS, &mut o, k, v)?;
        }
        let wanted: Vec<&'static str> =
            if o.families.is_empty() { cases::FAMILIES.to_vec() } else { o.families.clone() };
        let all = cases::all();
        let plan: Vec<(&'static str, Vec<&'static Case>)> = wanted
            .into_iter()
            .map(|f| {
                let cs = all
                    .iter()
                    .copied()
                    .filter(|c| c.family() == f && o.case.as_deref().is_none_or(|p| matches(p, c.name)))
                    .collect();
                (f, cs)
            })
            .filter(|(_, cs): &(_, Vec<_>)| !cs.is_empty())
            .collect();
        if plan.is_empty() {
            return Err(InputError::new(format!(
                "case='{}' matches no case of the families chosen: names look like rename.dir_over_nonempty_dir.ENOTEMPTY (`*` for any characters)",
                o.case.as_deref().unwrap_or("")
            )));
        }
        Ok(Self { plan, given: spec.params.clone() })
    }

    /// The families and their cases, in run order.
    pub fn plan(&self) -> &[(&'static str, Vec<&'static Case>)] {
        &self.plan
    }
}

impl Workload for PosixWorkload {
    /// The symlink cases follow links: that is what they check.
    fn follows_links(&self) -> bool {
        true
    }
    fn kind(&self) -> &'static str {
        "posix"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            source: "posix workload".into(),
            // Per lane (ctx::Probes::lanes, at most 8): the lane, a case's thread, and the
            // thread of another user inside it; and the runner.
            threads: 8 * 3 + 1,
            buffer_bytes: 1 << 20,
            // A case makes a few files of a few KiB (fallocate and truncate the largest).
            bytes_on_target: 16 << 20,
            files: 64,
            open_files: 16,
        }
    }

    fn describe(&self) -> Vec<String> {
        self.plan.iter().map(|(f, cs)| format!("posix {f}: {} cases", cs.len())).collect()
    }

    fn parts(&self) -> Vec<String> {
        self.plan.iter().map(|(f, _)| (*f).to_string()).collect()
    }

    fn deterministic(&self) -> bool {
        true
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let probes = ctx::Probes::default();
        let lanes = probes.lanes(env.root);
        let mut leftovers = Leftovers::default();
        let mut done = Vec::new();
        let mut n = 0usize;
        for (family, cases) in &self.plan {
            (env.progress)(&format!("posix: {family} ({} cases)", cases.len()));
            let started = Instant::now();
            let mut m = Measurement { complete: true, ..Measurement::default() };
            let results = run_cases(cases, n, lanes, env, &probes);
            n += cases.len();
            for (i, r) in results.into_iter().enumerate() {
                let dir = env.root.join(format!("p{}", n - cases.len() + i + 1));
                match r {
                    // Not run: interrupted.
                    None => m.complete = false,
                    Some(Ok(v)) => {
                        if dir.exists() {
                            leftovers.0.push(dir);
                        }
                        m.verdicts.push(v);
                    }
                    Some(Err(message)) => {
                        done.push(figures(m, started));
                        let message = match leftovers.retry() {
                            Some(more) => format!("{message}; {more}"),
                            None => message,
                        };
                        return Err(WorkloadError { message, partial: done });
                    }
                }
            }
            done.push(figures(m, started));
            if env.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        if let Some(message) = leftovers.retry() {
            (env.progress)(&message);
        }
        Ok(done)
    }
}

/// Runs `cases` (numbered from `first + 1` for their directories) in `lanes` threads at once,
/// each taking the next case; the results in the cases' order, `None` for a case not started
/// (interrupted, or after a case's setup error).
fn run_cases(
    cases: &[&'static Case],
    first: usize,
    lanes: usize,
    env: &RunEnv<'_>,
    probes: &ctx::Probes,
) -> Vec<Option<Result<Verdict, String>>> {
    let slots: Vec<std::sync::Mutex<Option<Result<Verdict, String>>>> =
        cases.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for _ in 0..lanes.clamp(1, cases.len().max(1)) {
            s.spawn(|| loop {
                if env.stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let r = run_case(case, &env.root.join(format!("p{}", first + i + 1)), probes);
                failed.fetch_or(r.is_err(), Ordering::Relaxed);
                env.live.add(1, 0);
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)).collect()
}

/// The metrics of one family from its verdicts.
fn figures(mut m: Measurement, started: Instant) -> Measurement {
    let count = |o: Outcome| m.verdicts.iter().filter(|v| v.outcome == o).count() as u64;
    let (passed, failed, unsupported) = (count(Outcome::Pass), count(Outcome::Fail), count(Outcome::Unsupported));
    let cases = m.verdicts.len() as u64;
    let security = m.verdicts.iter().filter(|v| v.security).count() as u64;
    let security_passed = m.verdicts.iter().filter(|v| v.security && v.outcome == Outcome::Pass).count() as u64;
    m.push("passed", "cases", Better::Higher, passed as f64);
    m.push("failed", "cases", Better::Lower, failed as f64);
    m.push("unsupported", "cases", Better::Lower, unsupported as f64);
    m.push("cases", "cases", Better::Higher, cases as f64);
    if cases > 0 {
        m.push("pass_rate", "%", Better::Higher, 100.0 * passed as f64 / cases as f64);
    }
    m.push("elapsed", "ns", Better::Lower, started.elapsed().as_secs_f64() * 1e9);
    m.count("passed", passed);
    m.count("failed", failed);
    // What --strict-checks counts: every failed case.
    m.count(fsarena_core::FINDINGS, failed);
    m.count("unsupported", unsupported);
    m.count("cases", cases);
    m.count("security.cases", security);
    m.count("security.passed", security_passed);
    m
}

/// Runs `case` in the fresh directory `dir` and removes it: the verdict, or an error when the
/// directory could not be made or removed (then the run stops: it must leave nothing).
fn run_case(case: &'static Case, dir: &Path, probes: &ctx::Probes) -> Result<Verdict, String> {
    std::fs::create_dir(dir).map_err(|e| format!("posix: creating {}: {e}", dir.display()))?;
    let c = ctx::Ctx { dir: dir.to_path_buf(), probes };
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            // The case's own umask and working directory (see ctx.rs).
            // SAFETY: CLONE_FS only gives this thread its own umask, root and working
            // directory; the hazard unshare_unsafe warns of is CLONE_FILES (descriptor tables).
            unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FS) }
                .map_err(|e| format!("unshare(CLONE_FS): {}", check::name(e)))?;
            rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
            rustix::process::chdir(&c.dir).map_err(|e| format!("chdir: {}", check::name(e)))?;
            Ok::<_, String>(case.check(&c))
        })
        .join()
    });
    let verdict = |outcome, expected: String, actual: String| Verdict {
        case: case.name.to_string(),
        security: case.security,
        outcome,
        expected,
        actual,
    };
    let v = match result {
        Ok(Ok(Ok(()))) => verdict(Outcome::Pass, String::new(), String::new()),
        Ok(Ok(Err(Miss::Fail { expected, actual }))) => verdict(Outcome::Fail, expected, actual),
        Ok(Ok(Err(Miss::Unsupported(why)))) => verdict(Outcome::Unsupported, String::new(), why),
        Ok(Err(setup)) => return Err(format!("posix: case {}: {setup}", case.name)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "a panic".into());
            verdict(Outcome::Fail, "the case to run to its end".into(), what)
        }
    };
    match cleanup::remove(dir) {
        Ok(()) => Ok(v),
        // The filesystem refuses to remove what the case made (fuse2fs answers EIO for an
        // entry it wrote with a name too long): a finding about the case, which fails, and
        // the run goes on; the directory is retried at the end (Leftovers).
        Err(e) => Ok(Verdict {
            outcome: Outcome::Fail,
            expected: if v.outcome == Outcome::Fail { v.expected } else { "the case's files removable".into() },
            actual: format!(
                "{}{}removing the case's directory: {e}",
                v.actual,
                if v.actual.is_empty() { "" } else { "; then " }
            ),
            ..v
        }),
    }
}

/// Case directories the filesystem would not let go of, retried once at the end of the run.
#[derive(Debug, Default)]
struct Leftovers(Vec<std::path::PathBuf>);

impl Leftovers {
    /// Removes what it can; the message names what is still there.
    fn retry(self) -> Option<String> {
        let stuck: Vec<String> =
            self.0.into_iter().filter(|d| cleanup::remove(d).is_err()).map(|d| d.display().to_string()).collect();
        (!stuck.is_empty()).then(|| {
            format!(
                "posix: the filesystem refuses to remove {} case director{} (failures recorded): {}",
                stuck.len(),
                if stuck.len() == 1 { "y" } else { "ies" },
                stuck.join(", ")
            )
        })
    }
}

mod cleanup;

#[cfg(test)]
mod tests;
