//! fio's engines that move no data, on a real tmpfs and against fio 3.33 run in the same
//! test: `cpuio` burns the CPU share it is given, `exec` runs its program, writes the
//! program's output into the target, and stops it with SIGTERM when the runtime is over.

use crate::util::Bounded;
use crate::util::{json, require, stderr, Scratch, SmallTmpfs};
use serde_json::Value;

/// fsarena's fio-json for the job file `job`, run on a fresh tmpfs kept as `fs` (so the test
/// can look inside it), under `wrap` (e.g. strace) when given.
fn fsarena_json(name: &str, job: &str, fs: &SmallTmpfs, wrap: Option<&[&str]>) -> Value {
    let work = Scratch::new(&format!("noio-{name}-work"));
    let out = crate::util::run_fio_text(&work.path, &fs.dir.spec(), job, wrap.unwrap_or_default());
    assert!(out.status.success(), "{}", stderr(&out));
    json(&out)
}

/// fio's JSON for `job`, run in a scratch directory of its own (where exec's output files
/// go). cpuio's engine prints a line before the JSON: skipped.
fn fio_json(name: &str, job: &str) -> Value {
    fio_json_wrapped(name, job, &[])
}

/// [`fio_json`] with fio run under `wrap` (a command and its arguments before fio's).
fn fio_json_wrapped(name: &str, job: &str, wrap: &[&str]) -> Value {
    let dir = Scratch::new(&format!("noio-{name}-fio"));
    std::fs::write(dir.path.join("job.fio"), job).unwrap();
    let out = crate::util::wrapped(wrap, require("fio"))
        .current_dir(&dir.path)
        .args(["--output-format=json", "job.fio"])
        .bounded_output()
        .expect("fio runs");
    assert!(out.status.success(), "fio failed: {}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let at = text.find('{').unwrap_or_else(|| panic!("fio printed no JSON: {text}"));
    serde_json::from_str(&text[at..]).unwrap()
}

/// The job named `name` in a fio JSON report.
fn job_named<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["jobs"].as_array().unwrap().iter().find(|j| j["jobname"] == name).unwrap_or_else(|| panic!("no job {name}"))
}

/// CPU use of a job in percent of one CPU: usr_cpu + sys_cpu.
fn cpu(j: &Value) -> f64 {
    j["usr_cpu"].as_f64().unwrap() + j["sys_cpu"].as_f64().unwrap()
}

#[test]
fn cpuio_at_half_load_uses_half_a_cpu_as_fio_does() {
    let job = "[burn]\nioengine=cpuio\ncpuload=50\ntime_based\nruntime=2\n";
    let fs = SmallTmpfs::new("noio-cpuio", "16m");
    // Each tool at a real-time priority: a burn spins on the wall clock, so the machine's other
    // work would take its CPU away and it would burn less than half (beside 2 busy loops and
    // the suite, fsarena 19.9 % and fio 25.3 %). The pauses still give the CPU back.
    let chrt = require("chrt");
    let rt = [chrt.to_str().expect("utf-8"), "--fifo", "1"];
    let ours = fsarena_json("cpuio", job, &fs, Some(&rt));
    let theirs = fio_json_wrapped("cpuio", job, &rt);
    let (o, t) = (job_of(&ours), job_of(&theirs));
    let (ours_cpu, fio_cpu) = (cpu(o), cpu(t));
    eprintln!("cpuio cpuload=50 for 2 s: fsarena {ours_cpu:.1} % of a CPU, fio {fio_cpu:.1} %");
    // 50 ms burns with 50 ms pauses: half a CPU. The machine is shared with other work, which
    // can still delay a pause's end: a wide band, and fsarena within 15 points of fio run just
    // before or after it.
    assert!((35.0..=65.0).contains(&ours_cpu), "cpuload=50 used {ours_cpu:.1} % of a CPU (fio: {fio_cpu:.1} %)");
    assert!((ours_cpu - fio_cpu).abs() <= 15.0, "fsarena used {ours_cpu:.1} % of a CPU, fio {fio_cpu:.1} %");
    // fio's figures for a job that moves nothing: each chunk a read of no bytes that took the
    // chunk, no direction runtime (it moved no bytes), so no bandwidth and no IOPS.
    let (r, fr) = (&o["read"], &t["read"]);
    assert_eq!(r["io_bytes"], 0);
    assert_eq!(r["runtime"], fr["runtime"]);
    assert_eq!(r["iops"].as_f64(), Some(0.0));
    let ios = r["total_ios"].as_u64().unwrap();
    let fio_ios = fr["total_ios"].as_u64().unwrap();
    assert!(ios.abs_diff(fio_ios) <= 3 && (15..=21).contains(&ios), "{ios} chunks in 2 s (fio: {fio_ios})");
    let mean_ms = r["clat_ns"]["mean"].as_f64().unwrap() / 1e6;
    assert!((50.0..60.0).contains(&mean_ms), "a chunk took {mean_ms:.1} ms on average, expected 50");
    let runtime = o["job_runtime"].as_u64().unwrap();
    assert!((2000..2300).contains(&runtime), "job_runtime {runtime} ms for runtime=2");
}

/// The only job of a report.
fn job_of(report: &Value) -> &Value {
    &report["jobs"][0]
}

#[test]
fn exec_runs_its_program_into_the_target_and_stops_it_with_sigterm() {
    let strace = require("strace");
    let job = "[echoer]\nioengine=exec\nprogram=/bin/echo\narguments=hello %n for %r s\ntime_based\nruntime=1\n\
               [sleeper]\nioengine=exec\nprogram=sleep\narguments=30\nruntime=1\ngrace_time=2\n";
    let fs = SmallTmpfs::new("noio-exec", "16m");
    let work = Scratch::new("noio-exec-trace");
    let trace = work.path.join("strace.txt");
    let trace_arg = trace.to_str().unwrap();
    let wrap = [strace.to_str().unwrap(), "-f", "-qq", "-e", "trace=kill", "-e", "signal=SIGTERM", "-o", trace_arg];
    // keep=1: the run's directory in the target stays, with the programs' output in it.
    let ours = fsarena_json("exec", &job.replace("runtime=1\n[", "runtime=1\nkeep=1\n["), &fs, Some(&wrap));
    let theirs = fio_json("exec", job);
    // The output went into the target (its run directory), nowhere else.
    let outputs: Vec<_> = fs.dir.leftovers().into_iter().filter(|p| p.is_file()).collect();
    let stdout = outputs.iter().find(|p| p.ends_with("echoer.stdout")).unwrap_or_else(|| panic!("{outputs:?}"));
    assert_eq!(std::fs::read_to_string(stdout).unwrap(), "hello echoer for 1 s\n");
    for name in ["echoer.stderr", "sleeper.stdout", "sleeper.stderr"] {
        assert!(outputs.iter().any(|p| p.ends_with(name)), "no {name} in the target: {outputs:?}");
    }
    // `sleep 30` ended at the runtime, by the SIGTERM fsarena sent it.
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains(", SIGTERM)") && text.contains("+++ killed by SIGTERM +++"), "strace:\n{text}");
    // fio's figures: runtime plus the whole grace, one look every 100 ms, no bytes.
    for (name, low, high) in [("echoer", 1900, 2400), ("sleeper", 2900, 3400)] {
        let (o, t) = (job_named(&ours, name), job_named(&theirs, name));
        let runtime = o["job_runtime"].as_u64().unwrap();
        let fio_runtime = t["job_runtime"].as_u64().unwrap();
        assert!((low..high).contains(&runtime), "{name}: job_runtime {runtime} ms (fio: {fio_runtime})");
        // fio's exec engine gives the grace when its own check (at its next look) finds the
        // runtime over; fio's job loop may find it over first and end the job at the runtime,
        // without SIGTERM or grace (engines/exec.c; seen once on a loaded machine: 1014 ms).
        // Compared with fio when fio took its grace.
        if fio_runtime >= low {
            assert!(runtime.abs_diff(fio_runtime) < 300, "{name}: job_runtime {runtime} ms, fio's {fio_runtime}");
            let ios = o["read"]["total_ios"].as_u64().unwrap();
            let fio_ios = t["read"]["total_ios"].as_u64().unwrap();
            assert!(ios.abs_diff(fio_ios) <= 2, "{name}: {ios} looks, fio {fio_ios}");
        }
        assert_eq!(o["read"]["io_bytes"], 0);
        assert_eq!(o["error"], 0);
    }
}

#[test]
fn exit_on_io_done_ends_cpuio_with_the_last_stages_io_as_fio_does() {
    // 50 ms burns and 50 ms pauses, checked before each burn: a cpuio job ends within one
    // 100 ms cycle (and a little) of its stage's I/O. The I/O job runs for 1 s (32m at 32m/s).
    let with_io = "[cpu]\nioengine=cpuio\ncpuload=50\nexit_on_io_done=1\nruntime=4\n\
                   [io]\nrw=write\nsize=32m\nbs=4k\nrate=32m\n";
    // A later stage's job is pending while the cpuio job runs: it runs its runtime, in fio too.
    let later_stage = "[cpu]\nioengine=cpuio\ncpuload=50\nexit_on_io_done=1\nruntime=2\n\
                       [io]\nrw=write\nsize=1m\nbs=4k\n[later]\nstonewall\nrw=read\nsize=1m\n";
    // No job does I/O: fio runs a cpuio job its runtime.
    let cpu_only = "[cpu]\nioengine=cpuio\ncpuload=50\nexit_on_io_done=1\nruntime=1\n";
    let ms = |report: &Value, name: &str| job_named(report, name)["job_runtime"].as_u64().unwrap();
    for (name, job) in [("with-io", with_io), ("later-stage", later_stage), ("cpu-only", cpu_only)] {
        let fs = SmallTmpfs::new(&format!("noio-exit-{name}"), "64m");
        let (ours, theirs) = (fsarena_json(name, job, &fs, None), fio_json(&format!("exit-{name}"), job));
        let (our_cpu, their_cpu) = (ms(&ours, "cpu"), ms(&theirs, "cpu"));
        eprintln!("{name}: cpuio ran {our_cpu} ms in fsarena, {their_cpu} ms in fio");
        match name {
            "with-io" => {
                let (our_io, their_io) = (ms(&ours, "io"), ms(&theirs, "io"));
                for (tool, cpu, io) in [("fsarena", our_cpu, our_io), ("fio", their_cpu, their_io)] {
                    assert!(cpu >= io.saturating_sub(50) && cpu <= io + 400, "{tool}: cpuio {cpu} ms, its I/O {io} ms");
                }
            }
            _ => {
                let runtime = if name == "cpu-only" { 1000 } else { 2000 };
                for (tool, cpu) in [("fsarena", our_cpu), ("fio", their_cpu)] {
                    assert!(cpu >= runtime - 10 && cpu <= runtime + 300, "{tool}: cpuio {cpu} ms of its {runtime}");
                }
            }
        }
    }
}
