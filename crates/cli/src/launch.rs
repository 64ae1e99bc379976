//! fsarena as the launcher of its own MPI job (`run --mpi --hostfile FILE`, and `suite run`):
//! it validates the plan, starts `mpirun` on the hostfile's hosts, and watches the job.
//!
//! mpirun alone cannot say which host failed: a host that goes down ends the whole job with
//! mpirun's own exit status (9 or 205, with a banner about a lost daemon), rank 0 is ended
//! with the others, and what the other hosts measured in the repetition under way is lost. So
//! every rank reports to the launcher over a side channel of its own (crates/cli/src/channel.rs) (one TCP connection,
//! JSON lines): its host, rank 0's run and the repetition under way, and every quarter of a
//! second the operations and bytes its workload completed ([`fsarena_workload::Live`]). A
//! rank that ends cleanly says so (`done`), and one that mpirun stops says why (`bye`, from
//! its signal handler, before it tears down); a rank whose host went down says nothing. When
//! the job ends without rank 0's `done`, the launcher names the hosts whose ranks went silent
//! (or the ranks, where others of their host spoke), stores the other hosts' figures of that
//! repetition as incomplete, and exits 1.
//! mpirun is given 5 s between its SIGTERM and its SIGKILL (`odls_base_sigkill_timeout`,
//! 1 s by default), in which each host's first rank tears its mounts down (a GlusterFS
//! client's in 40 ms here; a mount the host's other ranks still hold is detached lazily, as
//! they end too); what a SIGKILL cuts short stays recorded for `fsarena cleanup` on that host.
//! Open MPI waits that long twice on each host, one host after the other.

use crate::args::PlanArgs;
use crate::channel::{Event, COLLECTOR, TOKEN};
use crate::failure::Failure;
use crate::output::say;
use fsarena_core::run::{ResultEntry, RunReport};
use fsarena_core::{InputError, Measurement};
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What mpirun waits between SIGTERM and SIGKILL: room for each host's teardown.
const TEARDOWN_SECONDS: u32 = 5;

/// One host of an Open MPI hostfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLine {
    pub host: String,
    /// `slots=`, 1 when not given (as Open MPI).
    pub slots: u32,
}

/// Reads an Open MPI hostfile: `HOST [slots=N] [max_slots=N]` a line, `#` comments.
pub fn parse_hostfile(text: &str, path: &Path) -> Result<Vec<HostLine>, InputError> {
    let at = |n: usize| format!("--hostfile {} line {n}", path.display());
    let mut hosts: Vec<HostLine> = Vec::new();
    for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        let Some(host) = words.next() else { continue };
        let named = host.bytes().all(|b| b.is_ascii_alphanumeric() || b".-_".contains(&b)) && !host.starts_with('-');
        if !named {
            return Err(InputError::new(format!(
                "{}: '{host}' is not a host name (letters, digits, '.', '-' and '_')",
                at(n)
            )));
        }
        let mut slots = 1;
        for word in words {
            let (key, value) = word.split_once('=').unwrap_or((word, ""));
            match key {
                "slots" => {
                    slots = value.parse().ok().filter(|&s| s >= 1).ok_or_else(|| {
                        InputError::new(format!("{}: slots={value}: expected a whole number of 1 or more", at(n)))
                    })?;
                }
                "max_slots" | "max-slots" => {}
                _ => {
                    return Err(InputError::new(format!(
                        "{}: '{word}': expected HOST [slots=N] [max_slots=N], as Open MPI's hostfiles",
                        at(n)
                    )))
                }
            }
        }
        if hosts.iter().any(|h| h.host == host) {
            return Err(InputError::new(format!("{}: host {host} is named twice", at(n))));
        }
        hosts.push(HostLine { host: host.to_string(), slots });
    }
    if hosts.is_empty() {
        return Err(InputError::new(format!("--hostfile {}: names no host", path.display())));
    }
    Ok(hosts)
}

/// What the launcher knows of one rank.
#[derive(Debug, Default, Clone)]
struct RankState {
    host: String,
    /// The live reading at the start of the repetition under way, and the latest.
    baseline: (u64, u64),
    latest: (u64, u64),
    /// When the latest reading came.
    latest_at: Option<Instant>,
    said_bye: bool,
    done: Option<u8>,
}

/// What the launcher learnt of the job.
#[derive(Debug, Default)]
struct Watch {
    ranks: std::collections::BTreeMap<usize, RankState>,
    head: Option<RunReport>,
    /// Rank 0's repetition under way, and when it started on the launcher's clock.
    round: Option<(String, bool, usize, Option<ResultEntry>, usize, Instant)>,
}

/// Applies one event of rank `rank` (None until its hello).
fn apply(watch: &mut Watch, rank: usize, event: Event) {
    let state = watch.ranks.entry(rank).or_default();
    match event {
        Event::Hello { host, .. } => state.host = host,
        Event::Head { run } => watch.head = Some(*run),
        Event::Round { label, measured, position, entry, repetition, ops, bytes } => {
            state.baseline = (ops, bytes);
            state.latest = (ops, bytes);
            if rank == 0 {
                watch.round = Some((label, measured, position, entry.map(|e| *e), repetition, Instant::now()));
            }
        }
        Event::Progress { ops, bytes } => {
            state.latest = (ops, bytes);
            state.latest_at = Some(Instant::now());
        }
        Event::Bye { .. } => state.said_bye = true,
        Event::Done { code } => state.done = Some(code),
    }
}

/// `run --mpi --hostfile FILE` (and `suite run`): validates the plan with `validate` (bad
/// input: exit 2, nothing started), starts mpirun on the hostfile's hosts and watches it.
/// `default_per_host`: ranks on each host when --ranks-per-host is not given (None: each
/// host's slots).
pub fn launch(
    args: &PlanArgs,
    default_per_host: Option<u32>,
    validate: impl FnOnce() -> Result<crate::plan::Plan, Failure>,
) -> Result<ExitCode, Failure> {
    // A build without MPI: the ranks could not join the job either; said once, here.
    #[cfg(not(feature = "mpi"))]
    crate::cluster::open(true)?;
    let path = args.hostfile.as_deref().unwrap_or(Path::new(""));
    if let Some(rank) = crate::ranks::launcher_rank() {
        return Err(InputError::new(format!(
            "--hostfile: this fsarena is rank {rank} of an MPI job already: start it without mpirun and it starts the job itself, or drop --hostfile under your own mpirun"
        ))
        .into());
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| InputError::new(format!("--hostfile {}: {e}", path.display())))?;
    let hosts = parse_hostfile(&text, path)?;
    let per_host: Vec<u32> =
        hosts.iter().map(|h| args.ranks_per_host.or(default_per_host).unwrap_or(h.slots)).collect();
    let ranks: u64 = per_host.iter().map(|&n| u64::from(n)).sum();
    crate::ranks::set_job_shape(ranks, hosts.len() as u64);
    let plan = validate()?;
    if plan.dry_run {
        return crate::output::print(crate::runner::plan_listing(&plan).as_bytes()).map(|()| ExitCode::SUCCESS);
    }
    let listener = TcpListener::bind("0.0.0.0:0")
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot listen for the ranks: {e}")))?;
    let port = listener.local_addr().map_err(|e| Failure::Run(e.into()))?.port();
    let token = fsarena_target::RunId::generate().map_err(|e| Failure::Run(e.into()))?.to_string();
    let mut addresses: Vec<String> = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    addresses.retain(|a| !a.contains(':'));
    addresses.push("127.0.0.1".into());
    // The hosts with the ranks each runs (`--host c1:2,c2:2`): no file of the launcher's own.
    let job_hosts: Vec<String> = hosts.iter().zip(&per_host).map(|(h, n)| format!("{}:{n}", h.host)).collect();
    let exe = std::env::current_exe().map_err(|e| Failure::Run(e.into()))?;
    let mut mpirun = std::process::Command::new("mpirun");
    if fsarena_target::sys::is_root() {
        mpirun.arg("--allow-run-as-root");
    }
    mpirun
        .arg("--host")
        .arg(job_hosts.join(","))
        .args(["-np", &ranks.to_string(), "--map-by", "slot", "--bind-to", "none"])
        .args(["--mca", "odls_base_sigkill_timeout", &TEARDOWN_SECONDS.to_string()])
        .args(["-x", COLLECTOR, "-x", TOKEN, "-x", crate::ranks::HOSTS])
        .env(COLLECTOR, format!("{port}@{}", addresses.join(",")))
        .env(TOKEN, &token)
        .env(crate::ranks::HOSTS, hosts.len().to_string())
        .arg(exe)
        .args(rank_args());
    let watch = Arc::new(Mutex::new(Watch::default()));
    let readers =
        accept(listener, token, Arc::clone(&watch), usize::try_from(ranks).unwrap_or(usize::MAX).saturating_add(16));
    let mut child = mpirun
        .spawn()
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot start mpirun (apt-get install openmpi-bin): {e}")))?;
    let interrupted = forward_signals(child.id());
    let status = child.wait().map_err(|e| Failure::Run(e.into()))?;
    // Every rank has ended: its connection is closed, or (a host that lost power) never will
    // be; what came is read within a moment.
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline && readers.lock().is_ok_and(|n| *n > 0) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let watch = watch.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Stopped by the user (Ctrl-C, SIGTERM) before rank 0 finished: as a run on one host.
    let signal = interrupted.load(std::sync::atomic::Ordering::SeqCst);
    if signal != 0 && watch.ranks.get(&0).and_then(|r| r.done).is_none() {
        say!("fsarena: interrupted (signal {signal}); the ranks tore down, and what was stored is marked incomplete");
        return Ok(ExitCode::from(128 + signal as u8));
    }
    conclude(&plan, &watch, ranks, status)
}

/// The job's outcome from what the ranks said: rank 0's exit status when it finished; else
/// the hosts whose ranks went silent, named, the other hosts' figures stored as incomplete,
/// and 1.
fn conclude(
    plan: &crate::plan::Plan,
    watch: &Watch,
    ranks: u64,
    status: std::process::ExitStatus,
) -> Result<ExitCode, Failure> {
    if let Some(code) = watch.ranks.get(&0).and_then(|r| r.done) {
        if code == 0 && !status.success() {
            return Err(Failure::Run(anyhow::anyhow!(
                "rank 0 finished, but mpirun exited with {status}: another rank failed after it (mpirun's message is above)"
            )));
        }
        return Ok(ExitCode::from(code));
    }
    let silent: Vec<usize> =
        (0..ranks as usize).filter(|r| watch.ranks.get(r).is_some_and(|s| s.done.is_none() && !s.said_bye)).collect();
    let heard = watch.ranks.len();
    // Every rank refused the plan before the run (a fault only another host has, say a
    // `dir:` path missing there): the rank that found it said why, above; bad input.
    if heard == 0 && status.code() == Some(2) {
        return Ok(ExitCode::from(2));
    }
    if silent.is_empty() {
        return Err(Failure::Run(anyhow::anyhow!(
            "the MPI job ended ({status}) before rank 0 finished, with {heard} of {ranks} ranks heard from (mpirun's message is above)"
        )));
    }
    let mut lost_hosts: Vec<(String, Vec<usize>)> = Vec::new();
    for &r in &silent {
        let host = watch.ranks.get(&r).map(|s| s.host.clone()).unwrap_or_default();
        match lost_hosts.iter_mut().find(|(h, _)| *h == host) {
            Some((_, rs)) => rs.push(r),
            None => lost_hosts.push((host, vec![r])),
        }
    }
    // A host all of whose ranks went silent stopped answering (down, cut off, or its ranks
    // killed); a rank silent beside ranks of its host that said why was killed or crashed.
    let all_of = |h: &str, rs: &[usize]| watch.ranks.values().filter(|s| s.host == h).count() == rs.len();
    let named: Vec<String> = lost_hosts
        .iter()
        .map(|(h, rs)| {
            let list: Vec<String> = rs.iter().map(ToString::to_string).collect();
            let ranks = format!("rank{} {}", if rs.len() == 1 { "" } else { "s" }, list.join(", "));
            match all_of(h, rs) {
                true => format!("host {h} ({ranks}) stopped answering"),
                false => format!("{ranks} on {h} ended"),
            }
        })
        .collect();
    let during = watch.round.as_ref().map_or(String::new(), |(label, ..)| format!(" during {label}"));
    let mut message = format!(
        "{}{during}, without a word: the host went down or lost the network, or the ranks were killed",
        named.join(" and ")
    );
    match store_partial(plan, watch, &silent, &message) {
        Ok(Some(id)) => message
            .push_str(&format!("; the other hosts' figures of that repetition are stored as incomplete in run {id}")),
        Ok(None) => message.push_str("; nothing was stored"),
        Err(e) => message.push_str(&format!("; the other hosts' figures could not be stored: {e}")),
    }
    Err(Failure::Run(anyhow::anyhow!(message)))
}

/// Stores what the ranks not `silent` did in the repetition under way (when measured), as an
/// incomplete measurement, and marks the run stopped with `failure`: the run's id, or None
/// when there is no store or no run yet.
fn store_partial(
    plan: &crate::plan::Plan,
    watch: &Watch,
    silent: &[usize],
    failure: &str,
) -> Result<Option<String>, String> {
    let (Some(db), Some(head)) = (&plan.db, &watch.head) else { return Ok(None) };
    let mut store = fsarena_store::Store::open(db).map_err(|e| e.to_string())?;
    if let Some((_, true, position, Some(entry), repetition, started)) = &watch.round {
        // Over the repetition as far as the other ranks' latest readings go.
        let last = watch.ranks.iter().filter(|(r, _)| !silent.contains(r)).filter_map(|(_, s)| s.latest_at).max();
        let m = partial(watch, silent, last.map_or(Duration::ZERO, |at| at.saturating_duration_since(*started)));
        store
            .add_repetition(head, *position, entry, u32::try_from(*repetition).unwrap_or(u32::MAX), &m)
            .map_err(|e| e.to_string())?;
    }
    let report = RunReport { complete: false, failure: Some(failure.to_string()), ..head.clone() };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let stored =
        store.finish(&report, u64::try_from(now.as_millis()).unwrap_or(u64::MAX)).map_err(|e| e.to_string())?;
    Ok(stored.then(|| head.id.clone()))
}

/// The incomplete measurement of the ranks not `silent`: the operations and bytes they
/// completed in the repetition under way (`ops`, `bytes`, and per host `host.NAME.ops`,
/// `.bytes`, `.ranks`), over `elapsed` (`elapsed_ns`).
fn partial(watch: &Watch, silent: &[usize], elapsed: Duration) -> Measurement {
    let mut m = Measurement { complete: false, ..Measurement::default() };
    let mut hosts: Vec<(&String, u64, u64, u64)> = Vec::new();
    for (_, state) in watch.ranks.iter().filter(|(r, _)| !silent.contains(r)) {
        let ops = state.latest.0.saturating_sub(state.baseline.0);
        let bytes = state.latest.1.saturating_sub(state.baseline.1);
        match hosts.iter_mut().find(|(h, ..)| *h == &state.host) {
            Some((_, o, b, r)) => {
                *o += ops;
                *b += bytes;
                *r += 1;
            }
            None => hosts.push((&state.host, ops, bytes, 1)),
        }
    }
    m.count("ops", hosts.iter().map(|h| h.1).sum());
    m.count("bytes", hosts.iter().map(|h| h.2).sum());
    m.count("elapsed_ns", u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
    for (host, ops, bytes, ranks) in hosts {
        m.count(&format!("host.{host}.ops"), ops);
        m.count(&format!("host.{host}.bytes"), bytes);
        m.count(&format!("host.{host}.ranks"), ranks);
    }
    m
}

/// Accepts the ranks' connections, each read on a thread of its own into `watch`; the
/// returned count is the readers still reading.
fn accept(listener: TcpListener, token: String, watch: Arc<Mutex<Watch>>, limit: usize) -> Arc<Mutex<usize>> {
    let readers = Arc::new(Mutex::new(0usize));
    let counted = Arc::clone(&readers);
    let _ = std::thread::Builder::new().name("ranks".into()).spawn(move || {
        for stream in listener.incoming().flatten() {
            let (token, watch, counted) = (token.clone(), Arc::clone(&watch), Arc::clone(&counted));
            if let Ok(mut n) = counted.lock() {
                // One reader a rank, and a few for strays: a flood of connections that are no
                // ranks' is dropped, not given a thread each.
                if *n >= limit {
                    continue;
                }
                *n += 1;
            }
            let _ = std::thread::Builder::new().name("rank".into()).spawn(move || {
                read_rank(stream, &token, &watch);
                if let Ok(mut n) = counted.lock() {
                    *n -= 1;
                }
            });
        }
    });
    readers
}

/// Reads one rank's events until its connection ends; one that does not start with the
/// launcher's token is dropped.
fn read_rank(stream: TcpStream, token: &str, watch: &Mutex<Watch>) {
    // A connection that says nothing is not a rank: dropped after a while, not read forever.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(reader) = stream.try_clone() else { return };
    let mut lines = BufReader::new(reader).lines();
    let Some(Ok(first)) = lines.next() else { return };
    // A rank's progress may pause while its workload lays files out: no timeout after hello.
    let _ = stream.set_read_timeout(None);
    let Ok(Event::Hello { token: theirs, rank, host }) = serde_json::from_str::<Event>(&first) else { return };
    if theirs != token {
        return;
    }
    let lock = || watch.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    apply(&mut lock(), rank, Event::Hello { token: theirs, rank, host });
    for line in lines {
        let Ok(line) = line else { break };
        if let Ok(event) = serde_json::from_str::<Event>(&line) {
            apply(&mut lock(), rank, event);
        }
    }
}

/// Passes SIGINT and SIGTERM on to mpirun (PID `child`, which fsarena started), which passes
/// them to the ranks: the run stops as a run on one host does. The signal received, 0 if none.
fn forward_signals(child: u32) -> Arc<std::sync::atomic::AtomicI32> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let received = Arc::new(std::sync::atomic::AtomicI32::new(0));
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else { return received };
    let Ok(pid) = i32::try_from(child) else { return received };
    let seen = Arc::clone(&received);
    let _ = std::thread::Builder::new().name("signals".into()).spawn(move || {
        for sig in signals.forever() {
            seen.store(sig, std::sync::atomic::Ordering::SeqCst);
            // SAFETY: kill(2) on the PID of the child this process started and has not reaped.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    });
    received
}

/// This process's arguments for its ranks: all but the program's name, --hostfile and
/// --ranks-per-host (the ranks run under the launcher's mpirun).
fn rank_args() -> Vec<String> {
    rank_args_of(crate::ARGS.get().cloned().unwrap_or_default())
}

/// [`rank_args`] of the command line `args`.
fn rank_args_of(args: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args.into_iter().skip(1) {
        if skip {
            skip = false;
            continue;
        }
        if a == "--hostfile" || a == "--ranks-per-host" {
            skip = true;
            continue;
        }
        if a.starts_with("--hostfile=") || a.starts_with("--ranks-per-host=") {
            continue;
        }
        out.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostfiles_read_as_open_mpi_reads_them() {
        let text = "# the cluster\nc1 slots=2\n\nc2 slots=4 max_slots=8  # fast\nc3\n";
        let hosts = parse_hostfile(text, Path::new("h")).unwrap();
        let got: Vec<(&str, u32)> = hosts.iter().map(|h| (h.host.as_str(), h.slots)).collect();
        assert_eq!(got, [("c1", 2), ("c2", 4), ("c3", 1)]);
        for (bad, said) in [
            ("c1 slots=0\n", "slots=0"),
            ("c1 cores=2\n", "'cores=2'"),
            ("c1\nc1\n", "named twice"),
            ("# nothing\n", "names no host"),
            ("c1;rm slots=1\n", "not a host name"),
        ] {
            let e = parse_hostfile(bad, Path::new("h")).unwrap_err().to_string();
            assert!(e.contains(said), "{bad:?}: {e}");
        }
    }

    fn rank(host: &str, baseline: (u64, u64), latest: (u64, u64), done: Option<u8>, bye: bool) -> RankState {
        RankState { host: host.into(), baseline, latest, latest_at: None, said_bye: bye, done }
    }

    #[test]
    fn the_partial_measurement_holds_the_other_hosts_progress_only() {
        let mut watch = Watch::default();
        watch.ranks.insert(0, rank("c1", (10, 1000), (110, 9000), None, true));
        watch.ranks.insert(1, rank("c1", (0, 0), (50, 4000), None, true));
        watch.ranks.insert(2, rank("c2", (0, 0), (70, 7000), None, false));
        watch.ranks.insert(3, rank("c3", (5, 500), (25, 2500), None, true));
        let m = partial(&watch, &[2], Duration::from_secs(2));
        assert!(!m.complete);
        assert_eq!(m.counters["ops"], 100 + 50 + 20);
        assert_eq!(m.counters["bytes"], 8000 + 4000 + 2000);
        assert_eq!(m.counters["host.c1.ranks"], 2);
        assert_eq!(m.counters["host.c1.bytes"], 12000);
        assert_eq!(m.counters["host.c3.ops"], 20);
        assert!(!m.counters.contains_key("host.c2.ops"));
        assert_eq!(m.counters["elapsed_ns"], 2_000_000_000);
    }

    #[test]
    fn the_ranks_get_every_argument_but_the_launchers() {
        let args =
            ["fsarena", "run", "--mpi", "--hostfile", "h", "--target", "dir:path=/x", "--ranks-per-host=2", "-q"];
        assert_eq!(rank_args_of(args.map(String::from).to_vec()), ["run", "--mpi", "--target", "dir:path=/x", "-q"]);
    }
}
