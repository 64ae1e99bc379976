//! The `exec` workload: time any command in the target, or a built-in program workload
//! (compress a file, unpack and delete a source tree, build a C project), as the Phoronix
//! round-up (../shared/studies, 004) timed programs on each filesystem.
//!
//! A run, in the workload's directory `exec/` under the target (`{mnt}`, the commands' working
//! directory): the user's `assets=DIR` is copied to `exec-assets/` (`{assets}`) and a builtin's
//! inputs are generated, untimed; `setup` runs, untimed; the caches are dropped (`cold=1`, when
//! the run drops caches); each timed step runs — `cmd`, or the builtin's steps, one result
//! (part) each; `teardown` runs, untimed, also after a failure; everything is removed.
//!
//! Every command runs as `/bin/sh -c` (run.rs): `{mnt}` and `{assets}` are substituted
//! shell-quoted, and exported as `FSARENA_MNT` and `FSARENA_ASSETS`. A step's figures are its
//! wall clock (the headline, seconds), CPU and peak memory (rusage) and I/O (`/proc/PID/io`). A
//! command that exits non-zero fails the run, with the end of its stderr.

pub mod assets;
pub mod builtins;
pub mod options;
pub mod run;
pub mod text;

use fsarena_core::{Better, InputError, Measurement, Spec};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use options::{Builtin, ExecOptions};
use run::Outcome;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

pub use options::OPTIONS;

/// The workload's directory under the target: `{mnt}`.
const WORK_DIR: &str = "exec";
/// The copy of `assets=`: `{assets}`.
const ASSETS_DIR: &str = "exec-assets";

/// The `exec` workload.
#[derive(Debug, Clone)]
pub struct ExecWorkload {
    options: ExecOptions,
    /// Bytes and files of `assets=`, measured at parse time.
    assets_size: (u64, u64),
    given: Vec<(String, String)>,
}

impl ExecWorkload {
    /// From `--workload exec:cmd='tar xf {assets}/linux.tar',assets=/srv/in` or
    /// `exec:builtin=compress,tool=zstd`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut o = ExecOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("exec", OPTIONS, &mut o, k, v)?;
        }
        let given = |key: &str| spec.params.iter().any(|(k, _)| k == key);
        match (&o.cmd, o.builtin) {
            (None, None) => {
                return Err(InputError::new(
                    "exec needs cmd='...' (a command, e.g. cmd='tar xf {assets}/src.tar') or builtin=compress, unpack or build",
                ))
            }
            (Some(_), Some(_)) => return Err(InputError::new("exec: give cmd= or builtin=, not both")),
            _ => {}
        }
        // Options of one builtin given to another, or to a plain command, are mistakes.
        for (key, applies, name) in [
            ("tool", Builtin::Compress, "compress"),
            ("level", Builtin::Compress, "compress"),
            ("size", Builtin::Compress, "compress"),
            ("jobs", Builtin::Build, "build"),
        ] {
            if given(key) && o.builtin != Some(applies) {
                return Err(InputError::new(format!("exec: {key}= applies only to builtin={name}")));
            }
        }
        if given("files") && !matches!(o.builtin, Some(Builtin::Unpack | Builtin::Build)) {
            return Err(InputError::new("exec: files= applies only to builtin=unpack or build"));
        }
        if let (Some(Builtin::Compress), Some(level)) = (o.builtin, o.level) {
            let (low, high, _) = o.tool.levels();
            if !(low..=high).contains(&level) {
                return Err(InputError::new(format!(
                    "exec: level={level}: {} accepts {low} to {high}",
                    o.tool.program()
                )));
            }
        }
        let assets_size = match &o.assets {
            Some(dir) => measure_assets(dir)?,
            None => (0, 0),
        };
        for (key, cmd) in [("cmd", &o.cmd), ("setup", &o.setup), ("teardown", &o.teardown)] {
            let Some(cmd) = cmd else { continue };
            let framed = |m: String| InputError::new(format!("exec: {m}"));
            options::check_placeholders(key, cmd, o.assets.is_some()).map_err(framed)?;
            options::check_program(key, cmd).map_err(framed)?;
        }
        if let Some(b) = o.builtin {
            for program in builtins::programs(&o, b) {
                if fsarena_workload::programs::find_program(program).is_none() {
                    return Err(InputError::new(format!(
                        "exec: builtin={} needs {program}, which is not on PATH: install it",
                        spec.get("builtin").unwrap_or_default()
                    )));
                }
            }
        }
        Ok(Self { options: o, assets_size, given: spec.params.clone() })
    }

    /// The timed steps: (part name, command before substitution).
    fn steps(&self) -> Vec<(&'static str, String)> {
        match (self.options.builtin, &self.options.cmd) {
            (Some(b), _) => builtins::steps(&self.options, b),
            (None, Some(cmd)) => vec![("cmd", cmd.clone())],
            (None, None) => Vec::new(),
        }
    }
}

/// Bytes and entries under `assets=`, within [`assets`]'s bounds.
fn measure_assets(dir: &Path) -> Result<(u64, u64), InputError> {
    let tally =
        assets::measure(dir).map_err(|why| InputError::new(format!("exec: assets={}: {why}", dir.display())))?;
    Ok((tally.bytes, tally.entries))
}

/// One timed step's figures: seconds first (the headline), then CPU and memory; I/O and the
/// rest as counters.
fn measurement(o: &Outcome) -> Measurement {
    let mut m = Measurement { complete: !o.stopped, ..Measurement::default() };
    let secs = o.wall.as_secs_f64();
    m.push("seconds", "s", Better::Lower, secs);
    m.push("user", "s", Better::Lower, o.user);
    m.push("sys", "s", Better::Lower, o.sys);
    if secs > 0.0 {
        m.push("cpu", "%", Better::Lower, 100.0 * (o.user + o.sys) / secs);
    }
    m.push("max_rss", "bytes", Better::Lower, o.max_rss as f64);
    if let Some(io) = o.io {
        for (name, value) in io.counters() {
            m.count(name, value);
        }
    }
    m.count("major_faults", o.major_faults);
    m.count("minor_faults", o.minor_faults);
    m.count("voluntary_switches", o.vol_switches);
    m.count("involuntary_switches", o.invol_switches);
    m
}

/// "cmd failed (exit status 1); its stderr ends: <its last lines, joined by ' | '>" — one
/// line, as fsarena's messages are (control characters would be escaped).
fn failure(what: &str, o: &Outcome) -> String {
    let lines: Vec<&str> = o.stderr_tail.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    if tail.is_empty() {
        format!("exec: {what} failed ({}), nothing on stderr", o.status_text())
    } else {
        format!("exec: {what} failed ({}); its stderr ends: {tail}", o.status_text())
    }
}

impl Workload for ExecWorkload {
    /// A command may follow any link it makes or finds, as it would anywhere.
    fn follows_links(&self) -> bool {
        true
    }
    fn kind(&self) -> &'static str {
        "exec"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let (mut bytes, mut files) = self.assets_size;
        if let Some(b) = self.options.builtin {
            let (more_bytes, more_files) = builtins::footprint(&self.options, b);
            bytes = bytes.saturating_add(more_bytes);
            files = files.saturating_add(more_files);
        }
        Footprint {
            source: format!(
                "exec workload ({})",
                self.steps().iter().map(|s| s.1.as_str()).collect::<Vec<_>>().join("; ")
            ),
            // The commands' own needs are unknown: fsarena's are one waiter and a watcher; a
            // build's make runs `jobs` compilers at once, held to the thread limit.
            threads: 2 + u64::from(
                self.options.jobs.filter(|_| self.options.builtin == Some(Builtin::Build)).unwrap_or(0),
            ),
            buffer_bytes: 2 << 20,
            bytes_on_target: bytes,
            files: files + 2,
            open_files: 4,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        let mut lines = Vec::new();
        if let Some(dir) = &o.assets {
            lines.push(format!("exec: copy {} ({} bytes) to {{assets}}, untimed", dir.display(), self.assets_size.0));
        }
        match o.builtin {
            Some(Builtin::Compress) => lines.push(format!("exec: generate {COMPRESS} ({} bytes), untimed", o.size)),
            Some(Builtin::Unpack) => lines.push(format!(
                "exec: generate {} source files as {}, untimed",
                o.files.unwrap_or(builtins::default_files(Builtin::Unpack)),
                builtins::UNPACK_TAR
            )),
            Some(Builtin::Build) => lines.push(format!(
                "exec: generate a C project of {} units and a Makefile, untimed",
                o.files.unwrap_or(builtins::default_files(Builtin::Build))
            )),
            None => {}
        }
        if let Some(s) = &o.setup {
            lines.push(format!("exec: setup (untimed): sh -c {}", options::shell_quote(s)));
        }
        for (part, cmd) in self.steps() {
            lines.push(format!("exec: {part} (timed): sh -c {}", options::shell_quote(&cmd)));
        }
        if let Some(t) = &o.teardown {
            lines.push(format!("exec: teardown (untimed): sh -c {}", options::shell_quote(t)));
        }
        lines
    }

    /// One result per timed step when there are several (unpack's unpack and delete).
    fn parts(&self) -> Vec<String> {
        match self.steps() {
            steps if steps.len() > 1 => steps.into_iter().map(|s| s.0.to_string()).collect(),
            _ => Vec::new(),
        }
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let work = env.root.join(WORK_DIR);
        let assets = self.options.assets.as_ref().map(|_| env.root.join(ASSETS_DIR));
        let mut out = Vec::new();
        let mut error = None;
        // Left by an interrupted earlier run: each run starts from nothing.
        for dir in std::iter::once(&work).chain(assets.as_ref()) {
            if dir.exists() {
                if let Err(e) = std::fs::remove_dir_all(dir) {
                    error.get_or_insert(format!("cannot remove {} left by an earlier run: {e}", dir.display()));
                }
            }
        }
        if error.is_none() {
            error = self.run_in(env, &work, assets.as_deref(), &mut out).err();
        }
        for dir in std::iter::once(&work).chain(assets.as_ref()) {
            if let Err(e) = std::fs::remove_dir_all(dir) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    error.get_or_insert(format!("cannot remove {}: {e}", dir.display()));
                }
            }
        }
        let stopped = env.stop.load(Ordering::Relaxed);
        if out.is_empty() {
            out.push(Measurement::default());
        }
        if let Some(last) = out.last_mut() {
            last.complete &= error.is_none() && !stopped;
        }
        match error {
            Some(message) => Err(WorkloadError { message, partial: out }),
            None => Ok(out),
        }
    }
}

/// The generated input of compress, for describe.
const COMPRESS: &str = builtins::COMPRESS_INPUT;

impl ExecWorkload {
    /// The run proper, between making and removing the directories.
    fn run_in(
        &self,
        env: &RunEnv<'_>,
        work: &Path,
        assets: Option<&Path>,
        out: &mut Vec<Measurement>,
    ) -> Result<(), String> {
        let o = &self.options;
        std::fs::create_dir(work).map_err(|e| format!("mkdir {}: {e}", work.display()))?;
        if let (Some(from), Some(to)) = (&o.assets, assets) {
            (env.progress)(&format!("exec: copying {} in", from.display()));
            assets::copy(from, to).map_err(|why| format!("exec: assets={}: {why}", from.display()))?;
        }
        let mnt = work.to_string_lossy().into_owned();
        let assets_text = assets.map(|a| a.to_string_lossy().into_owned());
        let mut vars: Vec<(&str, &Path)> = vec![("FSARENA_MNT", work)];
        if let Some(a) = assets {
            vars.push(("FSARENA_ASSETS", a));
        }
        let shell = |what: &str, cmd: &str| -> Result<Outcome, String> {
            let script = options::substitute(cmd, &mnt, assets_text.as_deref());
            run::run_shell(&script, work, &vars, env.stop).map_err(|e| format!("exec: {what}: {e}"))
        };
        match o.builtin {
            Some(Builtin::Compress) => builtins::write_compress_input(work, o.size)?,
            Some(Builtin::Unpack) => {
                builtins::write_source_tree(work, o.files.unwrap_or(builtins::default_files(Builtin::Unpack)))?;
                let pack = format!("tar cf {} {t} && rm -rf {t}", builtins::UNPACK_TAR, t = builtins::UNPACK_TREE);
                let done = shell("packing the source tree", &pack)?;
                if !done.success() {
                    return Err(failure("packing the source tree", &done));
                }
            }
            Some(Builtin::Build) => {
                builtins::write_project(work, o.files.unwrap_or(builtins::default_files(Builtin::Build)))?
            }
            None => {}
        }
        let setup = match &o.setup {
            Some(setup) => {
                shell("setup", setup)
                    .and_then(|done| if done.success() { Ok(()) } else { Err(failure("setup", &done)) })
            }
            None => Ok(()),
        };
        let result = setup.and_then(|()| self.timed(env, &shell, work, out));
        // Teardown after a failed setup or step too (it may undo part of what setup did); its
        // own failure is reported only when nothing failed before.
        if let Some(teardown) = &o.teardown {
            let done = shell("teardown", teardown)?;
            if !done.success() && result.is_ok() {
                return Err(failure("teardown", &done));
            }
        }
        result
    }

    /// The timed steps, one measurement each.
    fn timed(
        &self,
        env: &RunEnv<'_>,
        shell: &dyn Fn(&str, &str) -> Result<Outcome, String>,
        work: &Path,
        out: &mut Vec<Measurement>,
    ) -> Result<(), String> {
        for (part, cmd) in self.steps() {
            if env.stop.load(Ordering::Relaxed) {
                break;
            }
            if self.options.cold {
                if let Some(drop) = env.drop_caches {
                    drop().map_err(|e| format!("exec: dropping the caches before {part}: {e}"))?;
                }
            }
            (env.progress)(&format!("exec: {part}"));
            let done = shell(part, &cmd)?;
            let mut m = measurement(&done);
            if self.options.builtin == Some(Builtin::Compress) {
                compress_figures(&mut m, work, self.options.size, self.options.tool.program());
            }
            out.push(m);
            if done.stopped {
                break;
            }
            if !done.success() {
                return Err(failure(part, &done));
            }
        }
        Ok(())
    }
}

/// compress's throughput (input bytes per second) and ratio (input over output).
fn compress_figures(m: &mut Measurement, work: &Path, input: u64, program: &str) {
    let output: PathBuf = work.join(format!("{}.{program}", builtins::COMPRESS_INPUT));
    let secs = m.metric("seconds").map_or(0.0, |s| s.value);
    if secs > 0.0 {
        m.push("bw", "bytes/s", Better::Higher, input as f64 / secs);
    }
    if let Ok(meta) = std::fs::metadata(output) {
        if meta.len() > 0 {
            m.push("ratio", "x", Better::Higher, input as f64 / meta.len() as f64);
        }
        m.count("output_bytes", meta.len());
    }
    m.count("input_bytes", input);
}

#[cfg(test)]
mod tests;
