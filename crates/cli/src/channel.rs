//! The side channel of a job fsarena launched (`run --mpi --hostfile`, see
//! crates/cli/src/launch.rs), as each rank uses it: it joins the launcher's channel when its
//! environment says where, reports its host, rank 0's run and repetition, its live reading
//! every quarter of a second, and how it ends. A no-op in every other run.

use crate::output::say;
use fsarena_core::run::{ResultEntry, RunReport};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::net::TcpStream;
use std::process::ExitCode;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Where the ranks report: `PORT@ADDR,ADDR,...` (every address of the launcher's host).
pub const COLLECTOR: &str = "FSARENA_COLLECTOR";
/// A random word the ranks send first: a connection without it is not one of ours.
pub const TOKEN: &str = "FSARENA_LAUNCH_TOKEN";
/// How often a rank reports its progress.
const EVERY: Duration = Duration::from_millis(250);

/// What a rank tells the launcher, one JSON line each.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// First: the launcher's token, the rank and its host.
    Hello { token: String, rank: usize, host: String },
    /// Rank 0: the run as the store knows it (its results not read).
    Head { run: Box<RunReport> },
    /// A repetition starts: what rank 0 shows for it and where it stores it (entry and
    /// repetition on rank 0 only); every rank's live reading at its start.
    Round {
        label: String,
        measured: bool,
        position: usize,
        entry: Option<Box<ResultEntry>>,
        repetition: usize,
        ops: u64,
        bytes: u64,
    },
    /// The live reading (operations and bytes completed since the rank started).
    Progress { ops: u64, bytes: u64 },
    /// The rank is being stopped (mpirun's signal): it tears down and goes.
    Bye { why: String },
    /// The rank ends with this exit status.
    Done { code: u8 },
}

/// The channel of this rank, when fsarena launched the job.
static CHANNEL: OnceLock<Mutex<TcpStream>> = OnceLock::new();

/// Joins the launcher's channel when fsarena launched this job (its environment says where),
/// and reports `live`'s readings every [`EVERY`] from a thread of its own. Best effort: a
/// rank that cannot reach the launcher runs as under any mpirun.
pub fn join(rank: usize, live: crate::progress::Progress) {
    let (Ok(collector), Ok(token)) = (std::env::var(COLLECTOR), std::env::var(TOKEN)) else { return };
    let Some((port, addresses)) = collector.split_once('@') else { return };
    let Some(stream) = addresses.split(',').find_map(|a| {
        let address = format!("{a}:{port}").parse().ok()?;
        TcpStream::connect_timeout(&address, Duration::from_secs(2)).ok()
    }) else {
        say!("fsarena: rank {rank}: cannot reach the launcher at {collector}; this rank's progress is not watched");
        return;
    };
    let _ = stream.set_nodelay(true);
    // A rank stopped by mpirun says why before it tears down: a launcher that does not read
    // must not hold that teardown up past mpirun's SIGKILL.
    let _ = stream.set_write_timeout(Some(Duration::from_millis(500)));
    if CHANNEL.set(Mutex::new(stream)).is_err() {
        return;
    }
    send(&Event::Hello { token, rank, host: crate::ranks::host_name() });
    let _ = std::thread::Builder::new().name("launcher".into()).spawn(move || loop {
        std::thread::sleep(EVERY);
        let now = live.live().sample();
        if !send(&Event::Progress { ops: now.ops, bytes: now.bytes }) {
            return;
        }
    });
}

/// Sends `event` on the channel; false when there is none or it broke.
fn send(event: &Event) -> bool {
    let Some(channel) = CHANNEL.get() else { return false };
    let Ok(mut line) = serde_json::to_vec(event) else { return false };
    line.push(b'\n');
    let mut stream = channel.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    stream.write_all(&line).is_ok()
}

/// Rank 0's run, once it is known.
pub fn head(run: &RunReport) {
    send(&Event::Head { run: Box::new(RunReport { results: Vec::new(), ..run.clone() }) });
}

/// A repetition starts on this rank (`entry` and `repetition` from rank 0).
pub fn round(
    label: String,
    measured: bool,
    position: usize,
    entry: Option<&ResultEntry>,
    repetition: usize,
    live: &fsarena_workload::Live,
) {
    if CHANNEL.get().is_none() {
        return;
    }
    let entry = entry.map(|e| Box::new(ResultEntry { measurements: Vec::new(), ..e.clone() }));
    let now = live.sample();
    send(&Event::Round { label, measured, position, entry, repetition, ops: now.ops, bytes: now.bytes });
}

/// This rank is being stopped by a signal.
pub fn bye(why: String) {
    send(&Event::Bye { why });
}

/// This rank ends with `code`.
pub fn done(code: &ExitCode) {
    if CHANNEL.get().is_some() {
        let code = (0..=255u8).find(|&n| ExitCode::from(n) == *code).unwrap_or(1);
        send(&Event::Done { code });
    }
}
