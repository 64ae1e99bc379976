//! The servers' accounts as attackers (issue 28). PostgreSQL, MariaDB and nginx run as
//! `postgres`, `mysql` and `www-data`, which own the servers' data and run directories; each
//! attack here is played by that account (`runuser -u ACCOUNT -- ...`) while a real run is
//! under way: a link where fsarena keeps a marker, a link to a root-only secret or a FIFO where
//! fsarena opens or reads a log, a server killed or stopped by its own account, a process of
//! the account holding the target. Bad server input (clients or threads over the limits, a
//! script file that is a FIFO, a device, a directory, too large, or a root-only file whose
//! syntax error pgbench would quote) exits 2 before anything is created. Every test checks
//! the canary byte for byte, the exit code and message, and that nothing of the run is left:
//! processes, mounts, /run/fsarena, listening sockets, /dev/shm and System V segments.
//!
//! The tests take the lock of the server tests (each of those checks that no server of
//! fsarena's is left, which a server of these would fail).

use super::harness::{fsarena, play, process_start, quote, start, wait_until, Arena, Played, Victim, SECRET};
use crate::util::Bounded;
use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where runs that host a server keep their directories and mounts.
const RUN_BASE: &str = "/run/fsarena";
/// How long a server run of these tests may take before it counts as hung.
const LIMIT: Duration = Duration::from_secs(120);

/// The accounts of Debian's server packages, as (name, uid).
fn account(name: &str) -> (u32, u32) {
    let out = Command::new("id").arg("-u").arg(name).bounded_output().unwrap();
    let uid = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let out = Command::new("id").arg("-g").arg(name).bounded_output().unwrap();
    (uid, String::from_utf8_lossy(&out.stdout).trim().parse().unwrap())
}

/// Runs `script` with `sh -c` as `who` (the attacker's move); true when it succeeded.
fn as_account(who: &str, script: &str) -> bool {
    Command::new("runuser").args(["-u", who, "--", "sh", "-c", script]).status().unwrap().success()
}

/// `fsarena run` of `workload` on a tmpfs target, its work directory and results database in
/// the arena.
fn server_run(a: &Arena, workload: &str) -> Command {
    let mut c = fsarena();
    c.args(["run", "--repeat", "1", "--warmup", "0", "--workdir"]).arg(a.workdir("work"));
    c.arg("--db").arg(a.path("results.db"));
    c.args(["--target", "tmpfs:size=512m", "--workload", workload]);
    c
}

/// The entries of /run/fsarena now.
fn runs_now() -> BTreeSet<PathBuf> {
    std::fs::read_dir(RUN_BASE).into_iter().flatten().flatten().map(|e| e.path()).collect()
}

/// What a run may leave behind outside its work directory, as it was before the run.
struct Baseline {
    runs: BTreeSet<PathBuf>,
    shm: BTreeSet<String>,
    sysv: BTreeSet<String>,
}

/// The servers' accounts' uids.
fn server_uids() -> Vec<u32> {
    ["postgres", "mysql", "www-data"].iter().map(|n| account(n).0).collect()
}

/// Entries of /dev/shm owned by a server's account.
fn shm_entries() -> BTreeSet<String> {
    let uids = server_uids();
    std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.metadata().is_ok_and(|m| uids.contains(&m.uid())))
        .map(|e| e.path().display().to_string())
        .collect()
}

/// System V shared memory segments and semaphore sets of a server's account (`ipcs`).
fn sysv_entries() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for what in ["-m", "-s"] {
        let text = Command::new("ipcs").arg(what).bounded_output().unwrap().stdout;
        for line in String::from_utf8_lossy(&text).lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 2 && ["postgres", "mysql", "www-data"].contains(&f[2]) {
                out.insert(format!("ipcs {what}: {line}"));
            }
        }
    }
    out
}

impl Baseline {
    fn now() -> Self {
        Self { runs: runs_now(), shm: shm_entries(), sysv: sysv_entries() }
    }

    /// Waits for the run's directory under /run/fsarena to appear.
    fn run_dir(&self) -> PathBuf {
        let mut found = None;
        let seen = wait_until(Duration::from_secs(30), || {
            found = runs_now().into_iter().find(|p| !self.runs.contains(p) && p.is_dir());
            found.is_some()
        });
        assert!(seen, "the run made no directory under {RUN_BASE}");
        found.unwrap()
    }

    /// What the run left: its directory, mounts and listeners under it, processes naming it,
    /// the processes `pids` (the run's servers), new /dev/shm entries and System V objects of
    /// the servers' accounts, and a listener on `port`.
    fn leftovers(&self, run: Option<&Path>, pids: &[u32], port: Option<u16>) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(run) = run {
            if run.exists() {
                out.push(format!("{} is left", run.display()));
            }
            let shown = run.display().to_string();
            out.extend(super::harness::mount_points_under(run).iter().map(|m| format!("mount {}", m.display())));
            out.extend(super::harness::processes_mentioning(&shown));
            let ss = Command::new("ss").args(["-lxnH"]).bounded_output().unwrap().stdout;
            out.extend(
                String::from_utf8_lossy(&ss).lines().filter(|l| l.contains(&shown)).map(|l| format!("socket {l}")),
            );
        }
        out.extend(pids.iter().filter(|p| process_start(**p).is_some()).map(|p| format!("process {p} of the run")));
        if let Some(port) = port {
            let ss = Command::new("ss").args(["-ltnH"]).bounded_output().unwrap().stdout;
            let text = String::from_utf8_lossy(&ss).into_owned();
            out.extend(text.lines().filter(|l| l.contains(&format!("127.0.0.1:{port} "))).map(|l| format!("tcp {l}")));
        }
        out.extend(shm_entries().difference(&self.shm).map(|s| format!("/dev/shm: {s}")));
        out.extend(sysv_entries().difference(&self.sysv).cloned());
        out
    }

    /// Asserts nothing is left, within a few seconds (a killed process is reaped a moment later).
    fn assert_clean(&self, run: Option<&Path>, pids: &[u32], port: Option<u16>, played: &Played) {
        let _ = wait_until(Duration::from_secs(5), || self.leftovers(run, pids, port).is_empty());
        let left = self.leftovers(run, pids, port);
        assert!(left.is_empty(), "left behind: {left:?}\nstderr: {}", quote(&played.err()));
    }
}

/// The first path below `dir` (at most `depth` levels down) that `pred` accepts.
fn find_below(dir: &Path, depth: usize, pred: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if pred(&p) {
            return Some(p);
        }
        if depth > 1 && e.file_type().is_ok_and(|t| t.is_dir()) {
            if let Some(found) = find_below(&p, depth - 1, pred) {
                return Some(found);
            }
        }
    }
    None
}

/// Waits (up to a minute) for a path below `run` that `pred` accepts.
fn wait_for(run: &Path, depth: usize, pred: impl Fn(&Path) -> bool) -> PathBuf {
    let mut found = None;
    let seen = wait_until(Duration::from_secs(60), || {
        found = find_below(run, depth, &pred);
        found.is_some()
    });
    assert!(seen, "nothing of the run appeared below {} in time", run.display());
    found.unwrap()
}

/// The name of `p`.
fn name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A server's run directory (`RUNID-KIND-N`, the account's) once `file` is in it.
fn server_run_dir(run: &Path, kind: &str, file: &str) -> PathBuf {
    let dir = wait_for(run, 1, |p| {
        name(p).rsplit_once(&format!("-{kind}-")).is_some_and(|(_, n)| n.bytes().all(|b| b.is_ascii_digit()))
            && p.join(file).exists()
    });
    dir
}

/// A data directory (`KIND-HASH` in the target's mount below `run`) once `inside` is in it.
fn data_dir(run: &Path, kind: &str, inside: &str) -> PathBuf {
    wait_for(run, 3, |p| {
        name(p).starts_with(&format!("{kind}-"))
            && p.parent().is_some_and(|m| name(m).contains("-mnt-"))
            && p.join(inside).exists()
    })
}

/// PIDs of live processes whose command line holds `needle`.
fn pids_mentioning(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).replace('\0', " ").contains(needle) && process_start(pid).is_some() {
            out.push(pid);
        }
    }
    out
}

/// The children of `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let ppid = stat.rfind(')').and_then(|i| stat[i + 2..].split(' ').nth(1)?.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Waits for the server process of the run (its command line holds `needle`, a setting only
/// the server gets) and returns its PID.
fn server_pid(run: &Path, needle: &str) -> u32 {
    let shown = run.display().to_string();
    let mut found = None;
    let seen = wait_until(Duration::from_secs(60), || {
        found = pids_mentioning(&shown).into_iter().find(|p| {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(needle)
        });
        found.is_some()
    });
    assert!(seen, "no server of the run ({needle}) was seen");
    found.unwrap()
}

/// A file of the test's own that fsarena must never touch, and its snapshot.
fn canary(a: &Arena) -> (PathBuf, Victim) {
    let p = a.file("canary", "the canary: every byte and every bit of metadata must survive\n".repeat(16));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    let v = Victim::tree(&p);
    (p, v)
}

/// A root-only file (0600) holding [`SECRET`].
fn secret(a: &Arena) -> (PathBuf, Victim) {
    let p = a.file("secret", format!("root's eyes only: {SECRET}\n"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    let v = Victim::tree(&p);
    (p, v)
}

/// The bytes of the results database (and its journal) at `db`, to look for a secret in.
fn db_bytes(db: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for suffix in ["", "-wal", "-journal"] {
        out.extend(std::fs::read(format!("{}{suffix}", db.display())).unwrap_or_default());
    }
    out
}

/// True when `haystack` holds `needle`.
fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// The lock of the server tests, and the tools these tests need.
fn servers_only(tools: &[&str]) -> std::sync::MutexGuard<'static, ()> {
    for tool in tools {
        crate::util::require(tool);
    }
    crate::servers::ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Plays the marker attack on `kind`: once the server's data is in place, its account puts a
/// link to the canary where fsarena used to write its "loaded" marker.
fn marker_attack(kind: &str, workload: &str, who: &str, initialised: &str) {
    let a = Arena::new(&format!("servers-marker-{kind}"));
    let (canary, victim) = canary(&a);
    let base = Baseline::now();
    let running = start(server_run(&a, workload));
    let run = base.run_dir();
    let data = data_dir(&run, kind, initialised);
    let marker = data.join("fsarena-loaded");
    assert!(as_account(who, &format!("ln -s '{}' '{}'", canary.display(), marker.display())), "{who} plants the link");
    let played = running.finish(LIMIT);
    assert_eq!(victim.damage(), Vec::<String>::new(), "the canary was changed\nstderr: {}", quote(&played.err()));
    assert_eq!(
        played.code(),
        Ok(0),
        "a link the account planted in its own directory is harmless: {}",
        quote(&played.err())
    );
    base.assert_clean(Some(&run), &[], None, &played);
}

#[test]
fn a_link_postgres_plants_where_the_loaded_marker_was_truncates_nothing() {
    let _one = servers_only(&[]);
    marker_attack("pgbench", "pgbench:scale=1,time=1s", "postgres", "PG_VERSION");
}

#[test]
fn a_link_mysql_plants_where_the_loaded_marker_was_truncates_nothing() {
    let _one = servers_only(&["sysbench", "mariadbd"]);
    marker_attack("sysbench", "sysbench:table_size=1000,time=1s", "mysql", "mysql");
}

#[test]
fn a_server_log_postgres_replaces_by_a_link_to_a_secret_is_neither_printed_nor_stored() {
    let _one = servers_only(&[]);
    let a = Arena::new("servers-log-link");
    let (secret, victim) = secret(&a);
    let base = Baseline::now();
    // The server never counts as ready: fsarena reads its log once start_timeout expires.
    let mut cmd = server_run(&a, "pgbench:scale=1,time=1s,start_timeout=2s");
    cmd.env("FSARENA_TEST_SERVER_NEVER_READY", "1");
    let running = start(cmd);
    let run = base.run_dir();
    let dir = server_run_dir(&run, "pgbench", "postgres.log");
    server_pid(&run, "external_pid_file=");
    let log = dir.join("postgres.log");
    assert!(as_account("postgres", &format!("ln -sfn '{}' '{}'", secret.display(), log.display())));
    let played = running.finish(LIMIT);
    let all = format!("{}{}", played.out(), played.err());
    assert!(!all.contains(SECRET), "the secret was printed: {}", quote(&all));
    assert!(!holds(&db_bytes(&a.path("results.db")), SECRET), "the secret is in the results database");
    assert_eq!(victim.damage(), Vec::<String>::new(), "the secret file was changed");
    assert_eq!(played.code(), Ok(1), "{}", quote(&played.err()));
    assert!(played.err().contains("postgres.log"), "the message names the log: {}", quote(&played.err()));
    base.assert_clean(Some(&run), &[], None, &played);
}

#[test]
fn a_fifo_postgres_plants_where_fsarena_opens_its_log_fails_the_run_without_hanging() {
    let _one = servers_only(&[]);
    let a = Arena::new("servers-log-fifo");
    let base = Baseline::now();
    let running = start(server_run(&a, "pgbench:scale=1,time=1s"));
    let run = base.run_dir();
    let dir = server_run_dir(&run, "pgbench", "postgres.log");
    // While the load's server runs: the measured round's server gets the log next.
    server_pid(&run, "external_pid_file=");
    let log = dir.join("postgres.log");
    assert!(as_account("postgres", &format!("rm -f '{0}' && mkfifo '{0}'", log.display())));
    let played = running.finish(Duration::from_secs(60));
    assert_eq!(played.code(), Ok(1), "{}", quote(&played.err()));
    assert!(
        played.err().contains("postgres.log: a FIFO, not a regular file"),
        "the message says what is wrong with the log: {}",
        quote(&played.err())
    );
    base.assert_clean(Some(&run), &[], None, &played);
}

#[test]
fn a_fifo_www_data_plants_where_fsarena_reads_nginx_s_log_fails_nothing_and_hangs_nothing() {
    let _one = servers_only(&["nginx", "ab"]);
    let a = Arena::new("servers-nginx-fifo");
    let base = Baseline::now();
    let running = start(server_run(&a, "http:requests=20000,concurrency=2"));
    let run = base.run_dir();
    let logs = data_dir(&run, "http", "logs");
    server_pid(&run, "nginx: master");
    let log = logs.join("logs").join("error.log");
    // nginx holds its own descriptor: what fsarena finds at the name afterwards is the FIFO.
    assert!(as_account("www-data", &format!("rm -f '{0}' && mkfifo '{0}'", log.display())));
    let played = running.finish(Duration::from_secs(60));
    assert!(played.code().is_ok(), "the run {}", played.code().unwrap_err());
    assert!(played.code() == Ok(0) || played.err().contains("error.log"), "{}", quote(&played.err()));
    base.assert_clean(Some(&run), &[], None, &played);
}

/// `fsarena cleanup` of the arena's work directory, played with the time limit `limit`.
fn cleanup(a: &Arena, limit: Duration) -> Played {
    let mut cleanup = fsarena();
    cleanup.arg("cleanup").arg("--workdir").arg(a.path("work"));
    play(cleanup, limit)
}

/// The nginx processes of the run (master and workers) and its port, once they run.
fn nginx_tree(run: &Path) -> (Vec<u32>, u16) {
    let master = server_pid(run, "nginx: master");
    let mut workers = Vec::new();
    wait_until(Duration::from_secs(10), || {
        workers = children(master);
        !workers.is_empty()
    });
    let mut port = None;
    wait_until(Duration::from_secs(10), || {
        let ss = Command::new("ss").args(["-ltnpH"]).bounded_output().unwrap().stdout;
        port = String::from_utf8_lossy(&ss)
            .lines()
            .find(|l| l.contains(&format!("pid={master},")))
            .and_then(|l| l.split_whitespace().nth(3)?.rsplit_once(':')?.1.parse().ok());
        port.is_some()
    });
    let mut all = vec![master];
    all.extend(workers);
    (all, port.expect("nginx listens"))
}

#[test]
fn nginx_workers_www_data_stops_die_with_the_run() {
    let _one = servers_only(&["nginx", "ab"]);
    let a = Arena::new("servers-nginx-stopped");
    let base = Baseline::now();
    let running = start(server_run(&a, "http:requests=20000,concurrency=2"));
    let run = base.run_dir();
    let (pids, port) = nginx_tree(&run);
    // The account stops every worker: none of them can act on the master's SIGTERM.
    let list: Vec<String> = pids[1..].iter().map(u32::to_string).collect();
    assert!(as_account("www-data", &format!("kill -STOP {}", list.join(" "))));
    let played = running.finish(LIMIT);
    assert!(played.code().is_ok(), "the run {}", played.code().unwrap_err());
    base.assert_clean(Some(&run), &pids, Some(port), &played);
}

#[test]
fn an_nginx_master_www_data_stops_still_shuts_down_at_once() {
    let _one = servers_only(&["nginx", "ab"]);
    let a = Arena::new("servers-master-stopped");
    let base = Baseline::now();
    let running = start(server_run(&a, "http:requests=20000,concurrency=2"));
    let run = base.run_dir();
    let (pids, port) = nginx_tree(&run);
    // The workers go on serving; the master would sit on its SIGTERM for the whole grace.
    assert!(as_account("www-data", &format!("kill -STOP {}", pids[0])));
    let played = running.finish(Duration::from_secs(45));
    assert_eq!(played.code(), Ok(0), "{}", quote(&played.err()));
    base.assert_clean(Some(&run), &pids, Some(port), &played);
}

#[test]
fn after_a_killed_run_cleanup_ends_every_nginx_process_and_frees_port_and_mount() {
    let _one = servers_only(&["nginx", "ab"]);
    let a = Arena::new("servers-nginx-kill");
    let base = Baseline::now();
    let running = start(server_run(&a, "http:requests=1000000,concurrency=2"));
    let run = base.run_dir();
    let (pids, port) = nginx_tree(&run);
    running.signal(rustix::process::Signal::KILL);
    let killed = running.finish(Duration::from_secs(10));
    assert!(pids.iter().any(|p| process_start(*p).is_some()), "a SIGKILLed run leaves nginx running");
    // The account stops the master: it would sit on cleanup's SIGTERM for the whole grace.
    assert!(as_account("www-data", &format!("kill -STOP {}", pids[0])));
    let cleaned = cleanup(&a, Duration::from_secs(30));
    assert_eq!(cleaned.code(), Ok(0), "{}", quote(&cleaned.err()));
    base.assert_clean(Some(&run), &pids, Some(port), &killed);
}

/// Plays a server killed (SIGKILL) by its own account `who` while the run measures: the
/// server whose command line holds `needle`, the second one seen when the round's server
/// follows the load's (`loads`). The run fails (exit 1) and leaves nothing: no process, no
/// socket, nothing in /dev/shm, no System V segment.
fn killed_by_its_account(kind: &str, workload: &str, who: &str, needle: &str, loads: bool) {
    let a = Arena::new(&format!("servers-killed-{kind}"));
    let base = Baseline::now();
    let running = start(server_run(&a, workload));
    let run = base.run_dir();
    let first = server_pid(&run, needle);
    let mut server = Some(first);
    if loads {
        server = None;
        wait_until(Duration::from_secs(60), || {
            server = pids_mentioning(needle).into_iter().find(|p| *p != first && process_start(first).is_none());
            server.is_some()
        });
    }
    let server = server.expect("the measured round's server runs");
    let mut pids = vec![first, server];
    pids.extend(children(server));
    std::thread::sleep(Duration::from_secs(2));
    assert!(as_account(who, &format!("kill -KILL {server}")));
    let played = running.finish(LIMIT);
    assert_eq!(played.code(), Ok(1), "{}", quote(&played.err()));
    base.assert_clean(Some(&run), &pids, None, &played);
}

#[test]
fn a_postgres_its_account_kills_leaves_no_shared_memory() {
    let _one = servers_only(&[]);
    killed_by_its_account("pgbench", "pgbench:scale=1,time=20s", "postgres", "external_pid_file=", true);
}

#[test]
fn a_mariadb_its_account_kills_leaves_nothing() {
    let _one = servers_only(&["sysbench", "mariadbd"]);
    killed_by_its_account("sysbench", "sysbench:table_size=1000,time=20s", "mysql", "mysqld.sock", true);
}

#[test]
fn an_nginx_master_its_account_kills_leaves_no_worker() {
    let _one = servers_only(&["nginx", "ab"]);
    killed_by_its_account("http", "http:requests=100000,concurrency=2", "www-data", "nginx: master", false);
}

#[test]
fn a_killed_run_s_postgres_is_ended_by_cleanup_and_leaves_no_shared_memory() {
    let _one = servers_only(&[]);
    let a = Arena::new("servers-pg-kill");
    let base = Baseline::now();
    let running = start(server_run(&a, "pgbench:scale=1,time=30s"));
    let run = base.run_dir();
    let postmaster = server_pid(&run, "external_pid_file=");
    std::thread::sleep(Duration::from_secs(1));
    running.signal(rustix::process::Signal::KILL);
    let killed = running.finish(Duration::from_secs(10));
    let cleaned = cleanup(&a, Duration::from_secs(90));
    assert_eq!(cleaned.code(), Ok(0), "{}", quote(&cleaned.err()));
    base.assert_clean(Some(&run), &[postmaster], None, &killed);
}

#[test]
fn a_process_of_postgres_holding_the_target_is_named_and_a_second_cleanup_finishes_once_it_is_gone() {
    let _one = servers_only(&[]);
    let a = Arena::new("servers-holder");
    let base = Baseline::now();
    let running = start(server_run(&a, "pgbench:scale=1,time=2s"));
    let run = base.run_dir();
    let data = data_dir(&run, "pgbench", "PG_VERSION");
    // The account's own process, not fsarena's: it must be named, never killed.
    let (uid, gid) = account("postgres");
    let holder = a.spawn(Command::new("sleep").arg("600").uid(uid).gid(gid).current_dir(&data));
    let victim = Victim::process(holder);
    let played = running.finish(LIMIT);
    assert_eq!(played.code(), Ok(1), "{}", quote(&played.err()));
    assert!(played.err().contains(&format!("{holder} (sleep)")), "the holder is named: {}", quote(&played.err()));
    let busy = cleanup(&a, Duration::from_secs(90));
    assert_ne!(busy.code(), Ok(0), "cleanup cannot finish while the holder lives");
    assert!(busy.err().contains(&format!("{holder} (sleep)")), "{}", quote(&busy.err()));
    assert_eq!(victim.damage(), Vec::<String>::new(), "fsarena ended a process not its own");
    a.kill(holder);
    let cleaned = cleanup(&a, Duration::from_secs(90));
    assert_eq!(cleaned.code(), Ok(0), "{}", quote(&cleaned.err()));
    base.assert_clean(Some(&run), &[], None, &played);
}

/// Plays `fsarena run` (and `--dry-run`) with the workload `spec` (`{A}` is the arena), with
/// RLIMIT_NOFILE `nofile` when given, and asserts exit 2 with one line holding `wants`,
/// nothing created, no secret echoed.
fn refused(spec: &str, nofile: Option<u64>, wants: &[&str]) {
    let a = Arena::new("servers-refused");
    let spec = spec.replace("{A}", &a.root.display().to_string());
    let base = Baseline::now();
    for dry in [true, false] {
        let work = a.path("work");
        let mut cmd = fsarena();
        cmd.args(["run", "--workdir"]).arg(&work).arg("--db").arg(a.path("results.db"));
        cmd.args(["--target", "tmpfs:size=1g", "--workload", &spec]);
        if dry {
            cmd.arg("--dry-run");
        }
        if let Some(n) = nofile {
            // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    let lim = libc::rlimit { rlim_cur: n, rlim_max: n };
                    libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
                    Ok(())
                });
            }
        }
        let played = play(cmd, Duration::from_secs(20));
        let err = played.err();
        assert_eq!(played.code(), Ok(2), "{spec} (dry run: {dry}): {}", quote(&err));
        assert_eq!(err.trim_end().lines().count(), 1, "{spec}: one line: {}", quote(&err));
        for want in wants {
            assert!(err.contains(want), "{spec}: wants {want:?}: {}", quote(&err));
        }
        assert!(!err.contains(SECRET), "{spec}: the file's content was echoed: {}", quote(&err));
        assert!(!work.exists() && !a.path("results.db").exists(), "{spec}: something was created");
        assert_eq!(base.leftovers(None, &[], None), Vec::<String>::new());
        assert_eq!(runs_now(), base.runs, "{spec}: something was created under {RUN_BASE}");
    }
}

#[test]
fn clients_and_threads_over_the_limits_exit_2_before_anything_is_created() {
    let _one = servers_only(&["sysbench"]);
    refused("pgbench:client=5000,jobs=1", None, &["client=5000", "4096"]);
    refused("sysbench:threads=5000", None, &["threads=5000", "4096"]);
    // Each pgbench client is a connection pgbench keeps open.
    refused("pgbench:client=300", Some(256), &["client=300", "RLIMIT_NOFILE 256"]);
    refused("sysbench:threads=300", Some(256), &["threads=300", "RLIMIT_NOFILE 256"]);
}

#[test]
fn a_pgbench_script_that_is_no_small_regular_file_exits_2_before_anything_is_created() {
    let _one = servers_only(&[]);
    let fixtures = Arena::new("servers-scripts");
    let fifo = fixtures.path("script.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let dir = fixtures.dir("script-dir");
    let big = fixtures.path("big.sql");
    std::fs::File::create(&big).unwrap().set_len(2 << 20).unwrap();
    for (path, want) in [
        (fifo.as_path(), "FIFO"),
        (Path::new("/dev/zero"), "character device"),
        (&dir, "directory"),
        (&big, "larger than"),
    ] {
        refused(&format!("pgbench:file={}", path.display()), None, &["file=", &path.display().to_string(), want]);
    }
}

#[test]
fn a_root_only_pgbench_script_with_a_syntax_error_is_never_echoed() {
    let _one = servers_only(&[]);
    let a = Arena::new("servers-script-secret");
    let script = a.file("secret.sql", format!("\\set aid {SECRET} ++ (\nSELECT 1;\n"));
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o600)).unwrap();
    let victim = Victim::tree(&script);
    let base = Baseline::now();
    let running = start(server_run(&a, &format!("pgbench:scale=1,time=1s,file={}", script.display())));
    let run = base.run_dir();
    let played = running.finish(LIMIT);
    let all = format!("{}{}", played.out(), played.err());
    assert!(!all.contains(SECRET) && !all.contains("HOSTILE"), "the script was echoed: {}", quote(&all));
    assert!(!holds(&db_bytes(&a.path("results.db")), SECRET), "the script is in the results database");
    assert_eq!(played.code(), Ok(1), "{}", quote(&played.err()));
    assert!(played.err().contains("file="), "the message names the key: {}", quote(&played.err()));
    assert_eq!(victim.damage(), Vec::<String>::new());
    base.assert_clean(Some(&run), &[], None, &played);
}
