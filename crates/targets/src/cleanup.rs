//! `fsarena cleanup`: undoes what killed runs recorded in a work directory, and nothing else.
//! It trusts a state file only if fsarena could have written it: a regular file (not a
//! symlink) owned by this user and writable by nobody else, in a work directory that passes
//! [`Workdir::check`], whose header names that same directory, and every resource in it lies
//! inside the work directory and carries the run's id in its name (a `dir:` target's scratch
//! directory `fsarena-RUNID-N` may lie elsewhere; like everything, it is undone only if its
//! identity matches). Anything else is left alone and reported.

use crate::state::{undo_all, Header, Resource, UndoMode, STATE_VERSION};
use crate::workdir::{LockFile, RunId, Workdir};
use crate::TargetError;
use fsarena_core::{printable, InputError};
use rustix::fs::{self as rfs, Mode, OFlags};
use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};

/// A state file larger than this is not one fsarena wrote (a run records a handful of lines
/// per target).
const MAX_STATE_BYTES: u64 = 16 << 20;

/// What `cleanup` did.
#[derive(Debug, Default)]
pub struct CleanupReport {
    /// The work directory, absolute.
    pub workdir: PathBuf,
    /// One line per action.
    pub done: Vec<String>,
    /// State files left alone, and why.
    pub warnings: Vec<String>,
    /// Why something recorded could not be undone (its state file is kept).
    pub error: Option<TargetError>,
}

impl CleanupReport {
    /// Nothing was done and nothing is wrong.
    pub fn is_empty(&self) -> bool {
        self.done.is_empty() && self.warnings.is_empty() && self.error.is_none()
    }
}

/// Undoes what killed runs left in `workdir`, from their state files; touches nothing else.
/// Targets held by `fsarena up --detach` are left alone and named. Err when the work
/// directory is not one fsarena may trust (exit 2).
pub fn cleanup(workdir: &Path) -> Result<CleanupReport, InputError> {
    clean(workdir, Which::Killed)
}

/// `fsarena down`: tears down the targets `fsarena up --detach` holds in `workdir` (only the
/// run `run` when given), from their state files, and nothing else. Err when the work
/// directory is not one fsarena may trust, or `run` is not a run id (exit 2).
pub fn down(workdir: &Path, run: Option<&str>) -> Result<CleanupReport, InputError> {
    let run = match run {
        Some(r) => Some(RunId::parse(r).ok_or_else(|| {
            InputError::new(format!("'{}' is not a run id: expected the id `fsarena up` printed", printable(r)))
        })?),
        None => None,
    };
    clean(workdir, Which::Held(run))
}

/// Which state files a clean-up undoes.
enum Which {
    /// Those of killed runs (not held).
    Killed,
    /// Those held by `fsarena up --detach`: every one, or one run's.
    Held(Option<RunId>),
}

/// The held marker of run `run` in `dir`, when it is one fsarena made: a regular file owned by
/// this user.
fn held_marker(dir: &Path, run: &str) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let path = dir.join(format!("{}{run}", crate::workdir::HELD_PREFIX));
    let meta = std::fs::symlink_metadata(&path).ok()?;
    let euid = rustix::process::geteuid().as_raw();
    (meta.file_type().is_file() && meta.uid() == euid).then_some(path)
}

fn clean(workdir: &Path, which: Which) -> Result<CleanupReport, InputError> {
    let abs = Workdir::check(workdir)?;
    let mut report = CleanupReport { workdir: abs.clone(), ..Default::default() };
    if !abs.exists() {
        return Ok(report);
    }
    let lock = match LockFile::acquire(&abs) {
        Ok(lock) => lock,
        Err(e) => {
            report.error = Some(e);
            return Ok(report);
        }
    };
    let mut names: Vec<String> = match std::fs::read_dir(&abs) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.starts_with("state-") && n.ends_with(".jsonl"))
            .collect(),
        Err(e) => {
            report.error = Some(TargetError(format!("cannot read {}: {e}", abs.display())));
            lock.release(&[]);
            return Ok(report);
        }
    };
    names.sort();
    let mut recorded_locks = Vec::new();
    for name in names {
        let path = abs.join(&name);
        let shown = printable(&path.to_string_lossy()).into_owned();
        let run = name.trim_start_matches("state-").trim_end_matches(".jsonl");
        let held = held_marker(&abs, run);
        match (&which, &held) {
            (Which::Killed, Some(_)) => {
                report.warnings.push(format!(
                    "left {shown} alone: its targets are held by `fsarena up --detach`; `fsarena down {}` tears them down",
                    printable(run)
                ));
                continue;
            }
            (Which::Held(_), None) => continue,
            (Which::Held(Some(want)), Some(_)) if want.as_str() != run => continue,
            _ => {}
        }
        let (header, resources, id) = match load(&abs, &name) {
            Ok(loaded) => loaded,
            Err(why) => {
                report.warnings.push(format!("left {shown} alone: {why}"));
                continue;
            }
        };
        let undo = undo_all(&resources, UndoMode::Cleanup);
        report.done.extend(undo.done);
        match undo.error {
            Some(e) => {
                report.error.get_or_insert(TargetError(format!("{e}; kept {shown} for the next cleanup")));
            }
            None => {
                if crate::safefs::remove_file_if(&path, id).is_err() {
                    report.warnings.push(format!("cannot remove {shown}"));
                }
                if let Some(marker) = held {
                    if std::fs::remove_file(&marker).is_err() {
                        report.warnings.push(format!("cannot remove {}", printable(&marker.to_string_lossy())));
                    }
                }
                recorded_locks.extend(header.lock);
            }
        }
    }
    lock.release(&recorded_locks);
    Ok(report)
}

/// Reads and checks the state file `dir/name`: its header, its resources, its identity.
/// Err says why it is not trusted.
fn load(dir: &Path, name: &str) -> Result<(Header, Vec<Resource>, crate::safefs::Identity), String> {
    let run = name
        .strip_prefix("state-")
        .and_then(|n| n.strip_suffix(".jsonl"))
        .and_then(RunId::parse)
        .ok_or("its name is not state-RUNID.jsonl with a run id fsarena makes")?;
    let path = dir.join(name);
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rfs::open(&path, flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::LOOP => "it is a symlink".to_string(),
        e => format!("cannot open it: {e}"),
    })?;
    let st = rfs::fstat(&fd).map_err(|e| format!("cannot inspect it: {e}"))?;
    if rfs::FileType::from_raw_mode(st.st_mode) != rfs::FileType::RegularFile {
        return Err("it is not a regular file".into());
    }
    let euid = rustix::process::geteuid().as_raw();
    if st.st_uid != euid {
        return Err(format!("it is owned by uid {}, not uid {euid}", st.st_uid));
    }
    if st.st_mode & 0o022 != 0 {
        return Err(format!("it is writable by group or others (mode {:04o})", st.st_mode & 0o7777));
    }
    if st.st_size as u64 > MAX_STATE_BYTES {
        return Err(format!("it is larger than {MAX_STATE_BYTES} bytes"));
    }
    let id = crate::safefs::Identity::of_fd(fd.as_fd()).map_err(|e| e.to_string())?;
    let mut text = String::new();
    std::fs::File::from(fd)
        .take(MAX_STATE_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read it as text: {e}"))?;
    let mut lines = text.split_inclusive('\n');
    let header: Header = lines
        .next()
        .filter(|l| l.ends_with('\n'))
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or("its first line is not a state header of this fsarena version")?;
    if header.fsarena_state != STATE_VERSION || header.run != run.as_str() {
        return Err(format!("its header is not version {STATE_VERSION} of run {run}"));
    }
    if header.workdir != dir {
        return Err(format!(
            "its header names another work directory, {}",
            printable(&header.workdir.to_string_lossy())
        ));
    }
    let mut resources = Vec::new();
    for (i, line) in lines.enumerate() {
        // A last line cut short by the kill was never completed: its resource was being
        // recorded, and nothing recorded after it exists.
        if !line.ends_with('\n') {
            break;
        }
        let resource: Resource =
            serde_json::from_str(line).map_err(|_| format!("line {} is not a resource record", i + 2))?;
        confined(&resource, dir, &run).map_err(|why| format!("line {}: {why}", i + 2))?;
        resources.push(resource);
    }
    Ok((header, resources, id))
}

/// An absolute path with no `.` or `..` in it.
fn is_plain_absolute(path: &Path) -> bool {
    path.is_absolute() && path.components().skip(1).all(|c| matches!(c, Component::Normal(_)))
}

/// Checks that `resource` is something run `run` could have created in `dir`.
fn confined(resource: &Resource, dir: &Path, run: &RunId) -> Result<(), String> {
    let inside = |path: &Path| -> Result<(), String> {
        let named = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&format!("{run}-")));
        // Targets that host a server are mounted in the run's directory under /run/fsarena.
        let run_dir = crate::workdir::run_dir_of(run);
        let parent_ok = path.parent() == Some(dir) || path.parent() == Some(run_dir.as_path());
        if is_plain_absolute(path) && parent_ok && named {
            Ok(())
        } else {
            Err(format!("{} is not a name run {run} makes in the work directory", printable(&path.to_string_lossy())))
        }
    };
    match resource {
        // The run's own directory under /run/fsarena, and /run/fsarena itself when the run
        // created it.
        Resource::Dir { path, recursive: false, .. }
            if *path == crate::workdir::run_dir_of(run) || path == Path::new(crate::workdir::RUN_BASE) =>
        {
            Ok(())
        }
        Resource::Dir { path, .. } | Resource::File { path, .. } | Resource::Mount { path, .. } => inside(path),
        Resource::Loop { device, image, .. } => {
            let is_loop = device
                .to_str()
                .and_then(|d| d.strip_prefix("/dev/loop"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if !is_loop {
                return Err(format!("{} is not a loop device", printable(&device.to_string_lossy())));
            }
            // The crash recorder's images lie one level down, in a directory (or FUSE mount)
            // the run made: RUNID-crash-N/state-0.img, RUNID-crash-N-fuse/image.
            inside(image).or_else(|e| match (image.parent(), image.file_name()) {
                (Some(parent), Some(_)) if is_plain_absolute(image) => inside(parent),
                _ => Err(e),
            })
        }
        Resource::Scratch { path, .. } => {
            let prefix = format!("fsarena-{run}-");
            let named = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&prefix))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if is_plain_absolute(path) && named {
                Ok(())
            } else {
                Err(format!("{} is not a scratch directory of run {run}", printable(&path.to_string_lossy())))
            }
        }
        Resource::Process { cgroup, .. } | Resource::Server { cgroup, .. } => match cgroup {
            Some(c) => crate::contain::check_recorded(&c.path, run.to_string().as_str(), false),
            None => Ok(()),
        },
        Resource::Cgroup { path, .. } => crate::contain::check_recorded(path, run.to_string().as_str(), true),
        Resource::Outside { path, .. } => {
            let allowed = crate::gluster::OUTSIDE_ROOTS.iter().any(|root| path.starts_with(root));
            if is_plain_absolute(path) && allowed {
                Ok(())
            } else {
                Err(format!("{} is not in a directory GlusterFS writes to", printable(&path.to_string_lossy())))
            }
        }
        Resource::GlusterVolume { name, socket, log, .. } => {
            let ours = format!("fsarena-{run}-");
            let named =
                name.strip_prefix(&ours).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if !named {
                return Err(format!("{} is not a volume name run {run} makes", printable(name)));
            }
            inside(log)?;
            // The socket lies in the run's glusterd directory, RUNID-glusterd-N/.
            match socket.parent() {
                Some(parent) if socket.file_name().is_some_and(|n| n == "glusterd.socket") => inside(parent),
                _ => Err(format!("{} is not a glusterd socket run {run} makes", printable(&socket.to_string_lossy()))),
            }
        }
    }
}

#[cfg(test)]
#[path = "cleanup_tests.rs"]
mod tests;
