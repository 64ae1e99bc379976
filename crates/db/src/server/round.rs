//! The round every server workload runs ([`run`]), and what a workload fills in ([`Server`]).
//!
//! [`run`] owns the lifetime described in [`super`]: the data directory named after the
//! server keys, checked to be reachable by the account, opened (reused when an earlier round
//! loaded it) and loaded once, untimed; the round's run directories around it; the server's
//! log kept with whatever the round gave; the server started and waited for; the caches
//! dropped; the client's figures judged (a client stopped by Ctrl-C keeps what it measured
//! without failing the run; one that failed or printed no figure fails it, with what it
//! measured); and the server stopped cleanly, a failed stop failing the round too. Every step
//! records what it makes with the runner's [`Host`] before anything waits on it.

use super::process::ServerStart;
use super::{check_reachable, key_hash, run_as, Account, DataDir, Failed, Host, RoundDirs, Running, ServerLog};
use fsarena_core::Measurement;
use fsarena_workload::{Finish, RunEnv, WorkloadError};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// What a server workload fills in of [`run`]'s round: its names, its server's command line
/// and readiness, its untimed load, its client and its figures. A hook says why it failed in
/// words, which [`run`] prefixes with the workload's kind; nothing was measured then.
pub trait Server {
    /// The workload's kind (`pgbench`): the prefix of its messages and directories.
    const KIND: &'static str;
    /// The name of the account the server runs as (`postgres`), which its package creates.
    const ACCOUNT: &'static str;
    /// The server's unix socket in its run directory, whose path must fit the limit.
    const SOCKET: Option<&'static str> = None;
    /// The name the server's log is kept under with the result; by default also its name in
    /// the server's run directory ([`Server::log`]).
    const LOG: &'static str;
    /// The figure without which a client that ran to its end measured nothing (`tps`).
    const FIGURE: &'static str;
    /// Where the server's standard output and error go when its log is a file of its own
    /// ([`Server::log`], given on its command line): a file of this name in its run directory.
    const OUTPUT: Option<&'static str> = None;

    /// What a client needs to reach the started server besides its run directory (http's
    /// port; `()` for a unix socket there).
    type Address;

    /// How the server is started: its name in messages, its account, its stop signal.
    fn server_start(&self) -> ServerStart;

    /// The account the server runs as.
    fn account(&self) -> Account {
        self.server_start().account
    }

    /// How long the server may take to accept clients (`start_timeout=`).
    fn start_timeout(&self) -> Duration;

    /// The keys that decide what the data directory holds and how the server runs.
    fn server_keys(&self) -> Vec<(&'static str, String)>;

    /// The data directory's mode and owner (root when None): the account's, 0700.
    fn data_dir_mode(&self) -> (u32, Option<Account>) {
        (0o700, Some(self.account()))
    }

    /// Fills a fresh data directory before the round's log is opened, without a server
    /// (http's site, whose log directory is in it); true when that loaded it completely, and
    /// no server is started to load it.
    fn fill(&self, _data: &DataDir) -> Result<bool, String> {
        Ok(false)
    }

    /// The server's log: [`Server::LOG`] in its run directory, the account's.
    fn log(&self, dirs: &RoundDirs, _data: &DataDir) -> Result<ServerLog, String> {
        ServerLog::new(&dirs.server.held, Self::LOG, self.account())
    }

    /// What fsarena says as it loads a fresh data directory (`initdb and loading scale 1
    /// (untimed)`), after the kind.
    fn loading(&self) -> String {
        "loading (untimed)".into()
    }

    /// The untimed step that makes a fresh data directory the server's (initdb), run to its
    /// end as the account before the server first starts on it; none by default.
    fn initialise(&self, _round: &Round<'_>) -> Option<Initialise> {
        None
    }

    /// Loads the data with the server up, untimed (pgbench --initialize): the last step of the
    /// load, which then stops the server cleanly and marks the data directory loaded.
    fn populate(&self, _round: &Round<'_>, _at: &Self::Address) -> Result<(), String> {
        Ok(())
    }

    /// The server's command line on the round's data and run directories, and where it will
    /// listen.
    fn command(&self, round: &Round<'_>) -> Result<(Command, Self::Address), String>;

    /// True once the server accepts clients (the round waits for it, the workload's
    /// `start_timeout=` at most).
    fn ready(&self, round: &Round<'_>, at: &Self::Address) -> bool;

    /// What a round does, untimed, with the server up before the caches are dropped.
    fn before_caches(&self, _round: &Round<'_>, _at: &Self::Address) -> Result<(), String> {
        Ok(())
    }

    /// Runs the client against the server and reads its figures; an error when it could not
    /// run at all (nothing measured).
    fn measure<'m>(
        &'m self,
        round: &'m Round<'_>,
        server: &'m Running<'_>,
        at: &Self::Address,
    ) -> Result<Measured<'m>, String>;
}

/// A round's directories, its server's log and its context, as the hooks see them.
#[derive(Clone, Copy)]
pub struct Round<'r> {
    /// The run's environment.
    pub env: &'r RunEnv<'r>,
    /// The runner's host, which records everything the round makes.
    pub host: &'r dyn Host,
    /// The round's run directories: the server's and fsarena's own.
    pub dirs: &'r RoundDirs,
    /// The data directory's path.
    pub data: &'r Path,
    /// The server's log.
    pub log: &'r ServerLog,
}

impl std::fmt::Debug for Round<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Round").field("dirs", self.dirs).field("data", &self.data).finish_non_exhaustive()
    }
}

impl<'r> Round<'r> {
    /// The server's run directory (its socket, PID file and log).
    pub fn run_dir(&self) -> &'r Path {
        self.dirs.server.path()
    }
}

/// The step that makes a fresh data directory a server's ([`Server::initialise`]).
#[derive(Debug)]
pub struct Initialise {
    /// Its name in messages (`initdb`).
    pub name: &'static str,
    /// Its command line.
    pub command: Command,
    /// The log in the server's run directory its output goes to; the server's own when None.
    pub log: Option<&'static str>,
}

/// What a round's client gave.
pub struct Measured<'m> {
    /// Its figures.
    pub figures: Measurement,
    /// It exited 0 (every one of them, where several ran).
    pub success: bool,
    /// It was stopped by Ctrl-C: what it measured is kept, incomplete, and fails nothing.
    pub stopped: bool,
    /// Why the round failed, in words: true when the client failed, false when it ran to its
    /// end but printed no [`Server::FIGURE`]. Only called on a failure (it may read the
    /// server's log).
    pub why: Box<dyn FnOnce(bool) -> String + 'm>,
}

impl std::fmt::Debug for Measured<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self { figures, success, stopped, .. } = self;
        f.debug_struct("Measured")
            .field("figures", figures)
            .field("success", success)
            .field("stopped", stopped)
            .finish()
    }
}

/// The body of a server workload's `Workload::run`: one round, its failure prefixed with the
/// kind and carrying what it measured.
pub fn run<S: Server>(server: &S, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
    let fail = |message: String, m: Measurement| m.finish(Some(format!("{}: {message}", S::KIND)), true);
    let Some(host) = env.host else {
        return fail("needs the runner's host for its server (not available here)".into(), Measurement::default());
    };
    match round(server, env, host) {
        Ok(m) => Ok(vec![m]),
        Err(failed) => fail(failed.0, failed.1),
    }
}

/// A failure with nothing measured.
fn bare(e: String) -> Failed {
    Box::new((e, Measurement::default()))
}

/// One round: the data directory (made and loaded once), the run directories, the log kept
/// with what the round gave.
fn round<S: Server>(server: &S, env: &RunEnv<'_>, host: &dyn Host) -> Result<Measurement, Failed> {
    let name = format!("{}-{}", S::KIND, key_hash(&server.server_keys()));
    check_reachable(S::KIND, &env.root.join(&name), S::ACCOUNT).map_err(bare)?;
    // The run directories (socket, log, the clients' logs) go after every round.
    RoundDirs::around(host, S::KIND, server.account(), S::SOCKET, |dirs| {
        let (mode, owner) = server.data_dir_mode();
        let mut data = DataDir::open(host, env.root, &name, mode, owner).map_err(bare)?;
        if !data.loaded && server.fill(&data).map_err(bare)? {
            data.mark_loaded(host);
        }
        let log = server.log(dirs, &data).map_err(bare)?;
        log.keeping(S::LOG, |log| {
            let path = data.made.path().to_path_buf();
            let round = Round { env, host, dirs, data: &path, log };
            if !data.loaded {
                load(server, &round).map_err(bare)?;
                data.mark_loaded(host);
            }
            serve(server, &round)
        })
    })
}

/// Loads a fresh data directory the fill left unfinished, untimed: initialises it, starts the
/// server on it, populates it, and stops the server cleanly.
fn load<S: Server>(server: &S, round: &Round<'_>) -> Result<(), String> {
    (round.env.progress)(&format!("{}: {}", S::KIND, server.loading()));
    if let Some(step) = server.initialise(round) {
        let log = match step.log {
            Some(name) => ServerLog::new(&round.dirs.server.held, name, server.account())?,
            None => round.log.try_clone()?,
        };
        let how = ServerStart { name: step.name, ..server.server_start() };
        run_as(round.host, how, step.command, &log, round.env.stop)?;
    }
    let (running, at) = start(server, round)?;
    server.populate(round, &at)?;
    running.stop()
}

/// Starts the server on the data directory, recorded with the host before it is waited on,
/// and waits until it accepts clients, for at most [`Server::start_timeout`]; its output goes
/// to its log (or to [`Server::OUTPUT`]), which messages end with.
fn start<'r, S: Server>(server: &S, round: &Round<'r>) -> Result<(Running<'r>, S::Address), String> {
    let (command, at) = server.command(round)?;
    let output = match S::OUTPUT {
        Some(name) => ServerLog::new(&round.dirs.server.held, name, server.account())?,
        None => round.log.try_clone()?,
    };
    let mut running = Running::spawn(round.host, server.server_start(), command, output)?;
    if S::OUTPUT.is_some() {
        running.log = round.log.try_clone()?;
    }
    running.wait_ready(server.start_timeout(), round.env.stop, || server.ready(round, &at))?;
    Ok((running, at))
}

/// The measured part of a round: start the server, drop the caches, measure, stop it.
fn serve<S: Server>(server: &S, round: &Round<'_>) -> Result<Measurement, Failed> {
    let (running, at) = start(server, round).map_err(bare)?;
    server.before_caches(round, &at).map_err(bare)?;
    if let Some(drop) = round.env.drop_caches {
        drop().map_err(|e| bare(format!("dropping the caches: {e}")))?;
    }
    let Measured { mut figures, success, stopped, why } = server.measure(round, &running, &at).map_err(bare)?;
    figures.complete = success && !stopped;
    if !stopped && (!success || figures.metric(S::FIGURE).is_none()) {
        // The server stops when it is dropped, after its log's end is in the message.
        return Err(Box::new((why(!success), figures)));
    }
    drop(why);
    match running.stop() {
        Ok(()) => Ok(figures),
        Err(e) => Err(Box::new((e, figures))),
    }
}
