//! Many hosts, for real (issue 33): a cluster of namespace hosts made by scripts/nscluster
//! (each its own network, hostname and mounts, joined by a bridge), a GlusterFS volume served
//! from one of them, and `fsarena run --mpi --hostfile` launched on another: each client host
//! mounts the volume itself, rank 0 stores one row per host, and a host that goes down mid-run
//! is named, the others' figures stored as incomplete, nothing left on any host. Compiled only
//! with the `mpi` feature.

use crate::util::{json, stderr, stdout, Bounded};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The script that makes the hosts.
fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/nscluster")
}

/// A namespace cluster of this test's own, removed on drop (with everything on its hosts).
struct Cluster {
    name: String,
    /// Its state directory, which every host sees (the hosts' /tmp and /var/tmp are their own).
    dir: PathBuf,
    /// fsarena, copied where the hosts see it.
    fsarena: String,
}

impl Cluster {
    /// Hosts `hosts`, the first serving GlusterFS volume `vol0` from a brick of its own.
    fn up(tag: &str, hosts: &[&str]) -> Self {
        for tool in ["mpirun", "glusterd", "glusterfs", "nsenter", "unshare", "ip"] {
            crate::util::require(tool);
        }
        let name = format!("fsa{}{tag}", std::process::id() % 100_000);
        let mut up = Command::new(script());
        up.arg("up").arg(&name).args(hosts);
        let made = up.bounded_output().expect("nscluster runs");
        let mut cluster =
            Self { dir: PathBuf::from("/run/fsarena-nscluster").join(&name), fsarena: String::new(), name };
        assert!(made.status.success(), "nscluster up: {}", stderr(&made));
        let served = cluster.script(&["gluster", &cluster.name, "vol0", hosts[0]]);
        assert!(served.status.success(), "nscluster gluster: {}", stderr(&served));
        let fsarena = cluster.dir.join("fsarena");
        std::fs::copy(env!("CARGO_BIN_EXE_fsarena"), &fsarena).expect("copy fsarena where the hosts see it");
        cluster.fsarena = fsarena.to_string_lossy().into_owned();
        cluster
    }

    fn script(&self, args: &[&str]) -> Output {
        Command::new(script()).args(args).bounded_output().expect("nscluster runs")
    }

    /// An Open MPI hostfile of `hosts`, `slots` each, in the state directory.
    fn hostfile(&self, slots: u32, hosts: &[&str]) -> String {
        let path = self.dir.join(format!("hostfile-{slots}"));
        let lines: String = hosts.iter().map(|h| format!("{h} slots={slots}\n")).collect();
        std::fs::write(&path, lines).expect("write the hostfile");
        path.to_string_lossy().into_owned()
    }

    /// fsarena with `args` on `host`, as a user there would start it.
    fn fsarena(&self, host: &str, args: &[&str]) -> Command {
        let mut c = Command::new(script());
        c.args(["exec", &self.name, host, &self.fsarena]).args(args);
        c.env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here");
        c
    }

    /// What still runs on `host` (but its init), and what is mounted there of fsarena's.
    fn leftovers(&self, host: &str) -> Vec<String> {
        let ps = self.script(&["ps", &self.name, host]);
        let mut left: Vec<String> = stdout(&ps).lines().map(|l| format!("process {l}")).collect();
        let mounts = self.run_on(host, &["cat", "/proc/self/mounts"]);
        left.extend(
            stdout(&mounts)
                .lines()
                .filter(|l| l.contains("fuse.glusterfs") || l.contains("/var/tmp/fsarena/"))
                .map(|l| format!("mount {l}")),
        );
        let state = self.run_on(host, &["sh", "-c", "ls /var/tmp/fsarena 2>/dev/null"]);
        left.extend(stdout(&state).lines().filter(|l| !l.is_empty()).map(|l| format!("work file {l}")));
        left
    }

    fn run_on(&self, host: &str, args: &[&str]) -> Output {
        let mut c = Command::new(script());
        c.args(["exec", &self.name, host]).args(args);
        c.bounded_output().expect("nscluster exec runs")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script()).args(["down", &self.name]).status();
    }
}

/// A counter of a result's JSON, per repetition.
fn counter(result: &serde_json::Value, name: &str) -> Vec<u64> {
    result["counters"][name]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect())
        .unwrap_or_default()
}

/// 4 hosts (a GlusterFS server and 3 clients), 2 ranks on each client host writing 8 MiB each
/// on the remote volume: the totals are the ranks' sum, with one row per host. Then one client
/// host goes down in the middle of a run: exit 1, the host named, the other hosts' figures
/// stored as incomplete, and nothing left on any host. Last, a host's ranks killed with the
/// host up: named too, and its mount left for `fsarena cleanup` there, which removes it.
#[test]
fn a_volume_served_from_another_host_runs_on_three_client_hosts_and_a_lost_host_is_named() {
    // GlusterFS's daemons one test at a time, as the glusterfs tests' (a loaded machine slows
    // glusterd's start past its limit).
    let _turn = crate::glusterfs::one_at_a_time();
    let cluster = Cluster::up("a", &["srv1", "c1", "c2", "c3"]);
    let hostfile = cluster.hostfile(2, &["c1", "c2", "c3"]);
    let db = cluster.dir.join("results.db").to_string_lossy().into_owned();
    let target = "glusterfs:servers=srv1,volume=vol0";
    let started = Instant::now();
    let run = |workload: &str, json: bool| {
        let mut args = vec!["run", "--mpi", "--hostfile", &hostfile, "--target", target, "--workload", workload];
        args.extend(["--repeat", "1", "--warmup", "0", "--db", &db]);
        if json {
            args.extend(["--output-format", "json"]);
        }
        cluster.fsarena("c1", &args)
    };
    // A `dir:` path only the launching host has: refused on the others, by their first rank,
    // before anything starts; exit 2 (it hung in the run's first collective before).
    let only = "/var/tmp/only-c1";
    assert!(cluster.script(&["exec", &cluster.name, "c1", "mkdir", "-p", only]).status.success());
    let target_only = format!("dir:path={only}");
    let mut args = vec!["run", "--mpi", "--hostfile", &hostfile, "--target", &target_only, "--no-store"];
    args.extend(["--workload", "io:rw=write,bs=64k,size=1m"]);
    let out = wait_within(
        cluster.fsarena("c1", &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap(),
        Duration::from_secs(60),
    );
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    for (rank, host) in [(2, "c2"), (4, "c3")] {
        let line =
            format!("fsarena: rank {rank} on {host}: --target {target_only}: {target_only}: not an existing directory");
        assert!(said.contains(&line), "{said}");
    }
    assert!(!said.contains("rank 3 on") && !said.contains("rank 5 on") && !said.contains("rank 1 on"), "{said}");

    let out = run("io:rw=write,bs=64k,size=8m", true).bounded_output().unwrap();
    assert!(out.status.success(), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    eprintln!("6 ranks on 3 hosts: {:.1} s", started.elapsed().as_secs_f64());
    let shown = json(
        &cluster
            .fsarena("c1", &["results", "show", "last", "--db", &db, "--output-format", "json"])
            .bounded_output()
            .unwrap(),
    );
    let result = &shown["run"]["results"][0];
    assert_eq!(counter(result, "write_bytes"), [6 * (8 << 20)], "{result}");
    for host in ["c1", "c2", "c3"] {
        assert_eq!(counter(result, &format!("host.{host}.ranks")), [2], "{host}: {result}");
        assert_eq!(counter(result, &format!("host.{host}.write_bytes")), [2 * (8 << 20)], "{host}: {result}");
        assert_eq!(counter(result, &format!("host.{host}.write_ios")), [2 * 128], "{host}: {result}");
        assert!(counter(result, &format!("host.{host}.write_bw"))[0] > 0, "{host}: {result}");
    }
    assert!(result["metrics"]["host_fairness"]["values"][0].as_f64().is_some_and(|f| f > 0.0 && f <= 1.0));
    let environment = &shown["run"]["environment"];
    assert_eq!(environment["mpi_ranks"], "6");
    assert!(
        environment["clock_offsets"].as_str().is_some_and(|o| o.contains("c2") && o.contains("c3")),
        "{environment}"
    );
    for (rank, host) in [(0, "c1"), (1, "c1"), (2, "c2"), (3, "c2"), (4, "c3"), (5, "c3")] {
        let facts = environment[format!("rank.{rank}")].as_str().unwrap_or_default();
        assert!(facts.starts_with(&format!("host={host};")), "rank {rank}: {facts}");
    }
    // Rank 0's host mounted the served volume: its mount facts say so.
    let facts = &result["target"]["environment"];
    assert_eq!(facts["source"], "srv1:/vol0", "{facts}");
    assert_eq!(facts["host"], "c1", "{facts}");
    for host in ["srv1", "c1", "c2", "c3"] {
        let left: Vec<String> = cluster
            .leftovers(host)
            .into_iter()
            .filter(|l| !l.contains("glusterd") && !l.contains("glusterfsd"))
            .collect();
        assert!(left.is_empty(), "{host}: {left:?}");
    }

    // A long run; c2 goes down once every rank has done some of it.
    let mut running = run("io:rw=write,bs=64k,size=8m,time_based=1,runtime=30s", false);
    let child = running.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(6));
    let killed = cluster.script(&["kill", &cluster.name, "c2"]);
    assert!(killed.status.success(), "{}", stderr(&killed));
    let lost_at = Instant::now();
    let out = wait_within(child, Duration::from_secs(120));
    eprintln!("a lost host ended the run in {:.1} s", lost_at.elapsed().as_secs_f64());
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("fsarena: host c2 (ranks 2, 3) stopped answering during repetition 1/1 of io"), "{said}");
    assert!(said.contains("the other hosts' figures of that repetition are stored as incomplete"), "{said}");
    let shown = json(
        &cluster
            .fsarena("c1", &["results", "show", "last", "--db", &db, "--output-format", "json"])
            .bounded_output()
            .unwrap(),
    );
    let run = &shown["run"];
    assert_eq!(run["complete"], false, "{run}");
    assert!(run["failure"].as_str().is_some_and(|f| f.contains("host c2 (ranks 2, 3) stopped answering")), "{run}");
    let result = &run["results"][0];
    assert_eq!(result["complete"], false, "{result}");
    for host in ["c1", "c3"] {
        assert_eq!(counter(result, &format!("host.{host}.ranks")), [2], "{host}: {result}");
        assert!(counter(result, &format!("host.{host}.bytes"))[0] > 0, "{host}: {result}");
    }
    assert!(counter(result, "host.c2.bytes").is_empty(), "{result}");
    assert_eq!(
        counter(result, "bytes"),
        [counter(result, "host.c1.bytes")[0] + counter(result, "host.c3.bytes")[0]],
        "{result}"
    );
    // Nothing left on the hosts still up; c2 is gone with its mounts. fsarena cleanup on each
    // finds nothing to do.
    for host in ["c1", "c3"] {
        let left = cluster.leftovers(host);
        assert!(left.is_empty(), "{host}: {left:?}\n{said}");
        let cleanup = cluster.fsarena(host, &["cleanup"]).bounded_output().unwrap();
        assert!(cleanup.status.success(), "{host}: {}", stderr(&cleanup));
    }
    let server: Vec<String> = cluster
        .leftovers("srv1")
        .into_iter()
        .filter(|l| !l.contains("glusterd") && !l.contains("glusterfsd"))
        .collect();
    assert!(server.is_empty(), "srv1: {server:?}");

    // c3's ranks killed, c3 still up: the launcher names them; what c3's first rank mounted
    // stays there, recorded, until `fsarena cleanup` on c3 removes it.
    let hostfile = cluster.hostfile(2, &["c1", "c3"]);
    let mut args = vec!["run", "--mpi", "--hostfile", &hostfile, "--target", target, "--no-store", "--repeat", "1"];
    args.extend(["--warmup", "0"]);
    args.extend(["--workload", "io:rw=write,bs=64k,size=8m,time_based=1,runtime=30s"]);
    let child = cluster.fsarena("c1", &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(6));
    let ranks: Vec<String> = stdout(&cluster.script(&["ps", &cluster.name, "c3"]))
        .lines()
        .filter(|l| l.contains(&cluster.fsarena) && l.contains(" run "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect();
    assert!(!ranks.is_empty(), "no rank runs on c3");
    let killed = Command::new("kill").arg("-KILL").args(&ranks).status().unwrap();
    assert!(killed.success());
    let out = wait_within(child, Duration::from_secs(120));
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("fsarena: host c3 (ranks 2, 3) stopped answering during repetition 1/1 of io"), "{said}");
    assert!(cluster.leftovers("c1").is_empty(), "c1: {:?}\n{said}", cluster.leftovers("c1"));
    let left = cluster.leftovers("c3");
    assert!(left.iter().any(|l| l.contains("fuse.glusterfs")), "c3's mount is left for cleanup: {left:?}");
    let cleanup = cluster.fsarena("c3", &["cleanup"]).bounded_output().unwrap();
    assert!(cleanup.status.success(), "{}", stderr(&cleanup));
    assert!(stderr(&cleanup).contains("unmounted"), "{}", stderr(&cleanup));
    assert!(cluster.leftovers("c3").is_empty(), "c3 after cleanup: {:?}", cluster.leftovers("c3"));
}

/// The client-scaling study across hosts at its smoke scale: one rank a client host, the
/// clients= rows are hosts and numjobs= the processes; the report's tables are client hosts ×
/// processes.
#[test]
fn the_client_scaling_suite_runs_across_client_hosts() {
    let _turn = crate::glusterfs::one_at_a_time();
    let cluster = Cluster::up("b", &["srv1", "c1", "c2", "c3"]);
    let hostfile = cluster.hostfile(4, &["c1", "c2", "c3"]);
    let db = cluster.dir.join("suite.db").to_string_lossy().into_owned();
    let started = Instant::now();
    let out = cluster
        .fsarena(
            "c1",
            &[
                "suite",
                "run",
                "client-scaling",
                "--scale",
                "smoke",
                "--mpi",
                "--hostfile",
                &hostfile,
                "--target",
                "glusterfs:servers=srv1,volume=vol0",
                "--db",
                &db,
            ],
        )
        .bounded_output()
        .unwrap();
    assert!(out.status.success(), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    eprintln!("client-scaling at smoke scale on 3 client hosts: {:.1} s", started.elapsed().as_secs_f64());
    let text = stdout(&out);
    let tables = text.matches("client hosts × processes · glusterfs:servers=srv1,volume=vol0 · io rw=").count();
    assert_eq!(tables, 4, "{text}");
    // Each table's rows: a client count, then the cells (the comparison table's rows go on
    // with the other keys instead).
    for row in ["| clients=1 ", "| clients=2 "] {
        let rows = text.lines().filter(|l| l.strip_prefix(row).is_some_and(|rest| rest.trim_start().starts_with('|')));
        assert_eq!(rows.count(), 4, "{row}: {text}");
    }
    let shown = json(
        &cluster
            .fsarena("c1", &["results", "show", "last", "--db", &db, "--output-format", "json"])
            .bounded_output()
            .unwrap(),
    );
    let results = shown["run"]["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 16, "4 rows x 2 clients x 2 numjobs");
    for result in &results {
        let two = result["workload"]["params"]["clients"] == "2";
        // clients=2: the first two client hosts, one rank each; clients=1: c1's rank alone.
        let hosts: Vec<&str> = ["c1", "c2", "c3"]
            .into_iter()
            .filter(|h| !counter(result, &format!("host.{h}.ranks")).is_empty())
            .collect();
        if two {
            assert_eq!(hosts, ["c1", "c2"], "{result}");
        } else {
            assert!(hosts.is_empty(), "one host: no host rows: {result}");
        }
    }
}

/// The launcher's bad input, said in one line with exit 2 before mpirun starts: a hostfile line
/// Open MPI would not read, and more clients than the hostfile has hosts.
#[test]
fn a_bad_hostfile_and_more_clients_than_hosts_are_refused_before_anything_starts() {
    let scratch = crate::util::TempDir::new();
    std::fs::create_dir_all(&scratch.0).unwrap();
    let hostfile = format!("{}/hosts", scratch.0);
    let run = |hosts: &str, workload: &str| {
        std::fs::write(&hostfile, hosts).unwrap();
        crate::util::fsarena()
            .args([
                "run",
                "--mpi",
                "--hostfile",
                &hostfile,
                "--target",
                "dir:path=/tmp",
                "--workload",
                workload,
                "--no-store",
            ])
            .bounded_output()
            .unwrap()
    };
    let out = run("c1 slots=2\nc2 cores=2\n", "io:rw=write,bs=64k,size=1m");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out).trim(), format!("fsarena: --hostfile {hostfile} line 2: 'cores=2': expected HOST [slots=N] [max_slots=N], as Open MPI's hostfiles"));
    let out = run("c1\nc2\n", "io:rw=write,bs=64k,size=1m,clients=3");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("clients=3: the job runs on 2 hosts") && said.lines().count() == 1, "{said}");
    // A suite's grid runs the clients the hostfile has and lists the rest: at quick, 1 and 2
    // client hosts of 1, 2 and 4 on 2 hosts.
    let out = crate::util::fsarena()
        .args(["suite", "run", "client-scaling", "--scale", "quick", "--mpi", "--hostfile", &hostfile])
        .args(["--target", "glusterfs:servers=srv1,volume=vol0", "--dry-run"])
        .bounded_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = stdout(&out);
    let skipped =
        "skipped io with clients=4 on target glusterfs:servers=srv1,volume=vol0: clients=4: the job runs on 2 hosts";
    assert!(plan.contains(skipped), "{plan}");
    // --hostfile belongs to --mpi.
    let out = crate::util::fsarena()
        .args(["run", "--hostfile", &hostfile, "--target", "dir:path=/tmp", "--workload", "io:size=1m"])
        .bounded_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--mpi"), "{}", stderr(&out));
}

/// Waits for `child` within `limit`, then collects its output; kills it (its process, the
/// launcher fsarena started) at the limit and fails the test.
fn wait_within(mut child: std::process::Child, limit: Duration) -> Output {
    use std::io::Read;
    // Both pipes read to their end meanwhile: a full pipe never blocks the run.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let said = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
            panic!("the run did not end within {limit:?} of a host going down: {said}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output { status, stdout: out.join().unwrap_or_default(), stderr: err.join().unwrap_or_default() }
}
