//! The directories of a server workload and the logs in them. A server's account owns its
//! run directory (and its data directory, or nginx's log directory) and may change what is in
//! it at any moment, so fsarena keeps nothing of its own there and acts there only beneath a
//! descriptor it holds ([`fsarena_target::beneath::HeldDir`]): each directory is created
//! beneath its (root-owned) parent and held from then on, a log is opened or read only as a
//! regular file of the account, never through a link, never blocking on a FIFO, at most its
//! last [`LOG_CAP`] bytes, and what fsarena shows or keeps of it is made printable. Whether a
//! data directory was loaded completely is the [`Host`]'s memory, not a file in it.

use super::{Account, Failed, Host, Tenant};
use fsarena_core::Measurement;
use fsarena_target::beneath::{kind_words, HeldDir, OpenHow};
use fsarena_target::safefs;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Most bytes of a server's log fsarena reads: its last 64 KiB, whatever the log grew to.
pub const LOG_CAP: u64 = 64 << 10;

/// How many of a server log's last lines are kept with the result.
const KEPT_LOG_LINES: usize = 200;

/// A directory fsarena made and recorded with the host, held open.
#[derive(Debug)]
pub struct Made {
    /// The directory.
    pub held: HeldDir,
    /// Its record with the host.
    pub tenant: Tenant,
}

impl Made {
    /// Its path, for command lines and messages (its parent is fsarena's, so the name keeps
    /// naming this directory).
    pub fn path(&self) -> &Path {
        self.held.path()
    }
}

/// Creates the directory `path`, whose parent is fsarena's (the run's directory under
/// /run/fsarena, the target's directory for the workload), with exactly `mode`, owned by
/// `owner` (root when None); holds it and records it with `host`, as a data directory when
/// `data`, else as a run directory.
fn make_dir(host: &dyn Host, path: &Path, mode: u32, owner: Option<Account>, data: bool) -> Result<Made, String> {
    let not_ours = || format!("{}: not a directory name fsarena makes", path.display());
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(not_ours)?;
    let parent = HeldDir::open(path.parent().ok_or_else(not_ours)?).map_err(|e| format!("cannot open {e}"))?;
    let held =
        parent.create_dir(name, mode, owner.map(|a| (a.uid, a.gid))).map_err(|e| format!("cannot create {e}"))?;
    let id = held.identity().map_err(|e| format!("{}: {e}", path.display()))?;
    let path = path.to_path_buf();
    let tenant = if data { Tenant::DataDir { path, id } } else { Tenant::RunDir { path, id } };
    if let Err(e) = host.record(&tenant) {
        let _ = safefs::remove_dir_if(held.path(), id, false);
        return Err(e);
    }
    Ok(Made { held, tenant })
}

/// The two directories of one round of a server workload, both under the run's directory in
/// /run/fsarena, recorded, and removed with their contents (while still those directories)
/// when released: the server's (its socket, PID file and log: its account's, 0700) and
/// fsarena's own (what only root writes: the clients' logs, the copy of a script, nginx's
/// configuration; root's, 0711 so that the server may read a file fsarena gives it there).
#[derive(Debug)]
pub struct RoundDirs {
    /// The server's run directory.
    pub server: Made,
    /// fsarena's own directory for the round.
    pub own: Made,
}

impl RoundDirs {
    /// Makes both for a round of `kind` whose server runs as `account`, after checking that
    /// the server's unix socket `socket` (a name in its directory), if any, fits the limit.
    pub fn make(host: &dyn Host, kind: &str, account: Account, socket: Option<&str>) -> Result<Self, String> {
        let index = super::next_index();
        let server_path = host.run_path(&format!("{kind}-{index}"));
        if let Some(socket) = socket {
            super::check_socket_path(kind, &server_path.join(socket))?;
        }
        let own = make_dir(host, &host.run_path(&format!("{kind}-{index}-fsarena")), 0o711, None, false)?;
        match make_dir(host, &server_path, 0o700, Some(account), false) {
            Ok(server) => Ok(Self { server, own }),
            Err(e) => {
                let _ = host.release(&own.tenant);
                Err(e)
            }
        }
    }

    /// Releases both, the server's first; the first error.
    pub fn release(&self, host: &dyn Host) -> Result<(), String> {
        let server = host.release(&self.server.tenant);
        let own = host.release(&self.own.tenant);
        server.and(own)
    }

    /// Makes a round's directories ([`RoundDirs::make`]), runs `round` in them, and releases
    /// them whatever it gave; a release that fails fails the round, with what it measured.
    pub fn around(
        host: &dyn Host,
        kind: &str,
        account: Account,
        socket: Option<&str>,
        round: impl FnOnce(&RoundDirs) -> Result<Measurement, Failed>,
    ) -> Result<Measurement, Failed> {
        let dirs = Self::make(host, kind, account, socket).map_err(|e| Box::new((e, Measurement::default())))?;
        let result = round(&dirs);
        match (result, dirs.release(host)) {
            (Ok(m), Ok(())) => Ok(m),
            (Ok(m), Err(e)) => Err(Box::new((e, m))),
            (Err(failed), _) => Err(failed),
        }
    }
}

/// A server's data directory in the target, as a round finds it.
#[derive(Debug)]
pub struct DataDir {
    /// The directory, made by this round or an earlier one.
    pub made: Made,
    /// An earlier round loaded it completely.
    pub loaded: bool,
}

impl DataDir {
    /// The data directory `name` beneath `root` (the target's directory for the workload):
    /// the one an earlier round loaded, while it is still that directory, else a fresh one
    /// (`mode`, owned by `owner`, root when None), once what an earlier round left unfinished
    /// is removed.
    pub fn open(host: &dyn Host, root: &Path, name: &str, mode: u32, owner: Option<Account>) -> Result<Self, String> {
        let path = root.join(name);
        if let Some((tenant, loaded)) = host.data_dir(&path) {
            if let (true, Tenant::DataDir { id, .. }) = (loaded, &tenant) {
                if let Ok(held) = HeldDir::open(root).and_then(|r| r.dir(Path::new(name))) {
                    if held.identity().ok() == Some(*id) {
                        return Ok(Self { made: Made { held, tenant }, loaded: true });
                    }
                }
            }
            // A load that did not finish (a failed round): start over.
            host.release(&tenant)?;
        }
        Ok(Self { made: make_dir(host, &path, mode, owner, true)?, loaded: false })
    }

    /// Marks it loaded completely, for the rounds that follow.
    pub fn mark_loaded(&mut self, host: &dyn Host) {
        host.mark_loaded(&self.made.tenant);
        self.loaded = true;
    }
}

/// The last `n` non-empty lines of `text`, each made printable.
pub(crate) fn last_lines(text: &str, n: usize) -> Vec<String> {
    let all: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    all[all.len().saturating_sub(n)..].iter().map(|l| fsarena_core::printable(l).into_owned()).collect()
}

/// A log in a directory a server's account owns (its run directory, nginx's log directory),
/// written by a process of that account.
#[derive(Debug)]
pub struct ServerLog {
    dir: HeldDir,
    name: PathBuf,
    owner: Account,
}

impl ServerLog {
    /// The log `name` in `dir`, the account `owner`'s.
    pub fn new(dir: &HeldDir, name: &str, owner: Account) -> Result<Self, String> {
        let dir = dir.try_clone().map_err(|e| format!("{}: {e}", dir.path().display()))?;
        Ok(Self { dir, name: PathBuf::from(name), owner })
    }

    /// Another handle on the same log.
    pub fn try_clone(&self) -> Result<Self, String> {
        Self::new(&self.dir, &self.name.to_string_lossy(), self.owner)
    }

    /// Its path, for the server's command line and for messages.
    pub fn path(&self) -> PathBuf {
        self.dir.path().join(&self.name)
    }

    /// Why `e` happened at its name, in words: what is there when it is not a regular file
    /// (an open for writing of a FIFO nobody reads fails with a less telling ENXIO).
    fn why(&self, e: std::io::Error) -> String {
        match self.dir.stat(&self.name) {
            Ok(st) if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile => {
                format!("{}: {}, not a regular file", self.path().display(), kind_words(st.st_mode))
            }
            _ => e.to_string(),
        }
    }

    /// Opens it for a server's standard output and error: a new file (0600, then given to the
    /// account, as every log of the server is the account's) or, when an earlier step of the
    /// round made it, the account's regular file there, appended to. A link, a FIFO, a device
    /// or another owner's file at its name is an error, and nothing was opened through it.
    pub fn open_for_server(&self) -> Result<File, String> {
        let cannot = |e: std::io::Error| format!("cannot open the server's log {}", self.why(e));
        match self.dir.open_file(&self.name, OpenHow::NEW) {
            Ok(file) => {
                let (uid, gid) = (rustix::fs::Uid::from_raw(self.owner.uid), rustix::fs::Gid::from_raw(self.owner.gid));
                rustix::fs::fchown(&file, Some(uid), Some(gid)).map_err(|e| cannot(e.into()))?;
                Ok(file)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let append = OpenHow { write: true, append: true, ..OpenHow::READ }.owned_by(self.owner.uid);
                self.dir.open_file(&self.name, append).map_err(cannot)
            }
            Err(e) => Err(cannot(e)),
        }
    }

    /// Its last `n` lines (of its last [`LOG_CAP`] bytes), printable; why not when it cannot
    /// be read as the account's regular file.
    fn last(&self, n: usize) -> Result<Vec<String>, String> {
        let bytes = self.dir.read_tail(&self.name, Some(self.owner.uid), LOG_CAP).map_err(|e| self.why(e))?;
        let text = String::from_utf8_lossy(&bytes);
        // The cap may have cut the first line short.
        let text = match bytes.len() as u64 == LOG_CAP {
            true => text.split_once('\n').map_or("", |(_, rest)| rest),
            false => &text,
        };
        Ok(last_lines(text, n))
    }

    /// Its last `n` lines as one line (`a | b`), for messages.
    pub fn tail(&self, n: usize) -> String {
        match self.last(n) {
            Ok(lines) => lines.join(" | "),
            Err(e) => format!("(not read: {})", fsarena_core::printable(&e)),
        }
    }

    /// Keeps its last lines with the result `m`, as `key`; nothing when it cannot be read as
    /// the account's regular file (a log its account replaced fails no round).
    pub fn keep(&self, m: &mut Measurement, key: &str) {
        if let Ok(lines) = self.last(KEPT_LOG_LINES) {
            if !lines.is_empty() {
                m.logs.insert(key.to_string(), lines.join("\n"));
            }
        }
    }

    /// Keeps it with whatever a round gave: its measurement, or the one its failure carries.
    pub fn keep_in(&self, result: &mut Result<Measurement, Failed>, key: &str) {
        match result {
            Ok(m) => self.keep(m, key),
            Err(failed) => self.keep(&mut failed.1, key),
        }
    }

    /// Runs `round` with this log, then keeps the log with what it gave, as `key`.
    pub fn keeping(
        &self,
        key: &str,
        round: impl FnOnce(&ServerLog) -> Result<Measurement, Failed>,
    ) -> Result<Measurement, Failed> {
        let mut result = round(self);
        self.keep_in(&mut result, key);
        result
    }
}

#[cfg(test)]
#[path = "dirs_tests.rs"]
mod tests;
