//! The phase runner: threads, barriers, stop, timing and per-second series for every workload
//! that runs in phases (mdtest's and fs_mark's), so that a workload supplies only its phases and
//! what one thread does in each ([`Worker`]).
//!
//! A run starts one thread per worker, all or none ([`crate::gate`]). Before each phase every
//! thread waits at a barrier; the optional [`Phases::before_each`] hook then runs on one thread
//! while the others wait (meta's `drop_caches=phase`), and the phase starts after a second
//! barrier; the threads meet after the phase, each ending its phase as it leaves, and once
//! more before merging their figures. The barrier polls before it sleeps, as MPI's does
//! ([`PollingBarrier`]). A phase's time is its span, from the earliest thread's start to the
//! latest thread's end: mdtest's barrier-inclusive time, where each rank's time runs from its
//! start until it leaves the barrier after the phase. A thread's own clock is not the
//! phase's: threads that do not
//! overlap (more threads than CPUs) would each report a short time and the sum of their rates
//! would exceed what the machine did.
//!
//! Each thread records its operations in a [`Recorder`] of its own (no sharing on the hot path):
//! one clock read per operation, the end of one operation being the start of the next, so the
//! loop's own bookkeeping counts towards the next operation's latency rather than costing a
//! second clock read. The runner merges the threads' recorders into one [`PhaseTotal`] per
//! phase: operations, bytes, the latency histogram of the phase's operation kind, per-second
//! rates and the first error.
//!
//! The `io` workload keeps its own engine loop for now: its jobs run for a time or a size with
//! fio's ramp, rate and stonewall semantics, not as a list of phases every thread runs in step.

use crate::live::{Live, LiveBatch};
use fsarena_stats::{IntervalCounter, LatencyHistogram};
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a thread at the barrier polls (yielding the CPU) before it sleeps.
const POLL: Duration = Duration::from_millis(2);

/// The barrier around each phase, as the ranks of mdtest meet at theirs: Open MPI's barrier
/// polls, yielding the CPU when ranks outnumber CPUs, so that a rank that is done gives its
/// CPU to those still at work and every rank is running when the last arrives. A futex barrier
/// (std's) puts its waiters to sleep and wakes them one by one. Measured with 4 threads on 2
/// CPUs, `-n 10000 -u` tree removal (one rmdir per task; mdtest 31k-45k a second): std's barrier
/// before the phase alone 5.9k; this one alone 8.7k-9.5k; std's with the meeting after the
/// phase 8.7k-10.7k (one run 40k); this one with it 48k-52k. A thread polls for [`POLL`] and
/// then sleeps, so that a long wait (a slow thread's phase, a drop of the caches) does not spin.
#[derive(Debug)]
struct PollingBarrier {
    n: usize,
    /// Threads arrived in this round, and the round.
    state: Mutex<(usize, usize)>,
    /// The round, read while polling.
    round: AtomicUsize,
    woken: Condvar,
}

impl PollingBarrier {
    fn new(n: usize) -> Self {
        Self { n: n.max(1), state: Mutex::new((0, 0)), round: AtomicUsize::new(0), woken: Condvar::new() }
    }

    /// Waits until all `n` threads have arrived; true on the one thread that arrived last.
    fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let round = s.1;
        s.0 += 1;
        if s.0 == self.n {
            *s = (0, round.wrapping_add(1));
            self.round.store(s.1, Ordering::Release);
            drop(s);
            self.woken.notify_all();
            return true;
        }
        drop(s);
        let since = Instant::now();
        while self.round.load(Ordering::Acquire) == round {
            if since.elapsed() > POLL {
                let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                while s.1 == round {
                    s = self.woken.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                return false;
            }
            std::thread::yield_now();
        }
        false
    }
}

/// Nanoseconds per sample of the per-second series.
const SECOND_NS: u64 = 1_000_000_000;

/// A workload's phase, as the runner needs to know it.
pub trait Phase: Copy + Send + Sync {
    /// The kind of operation the phase times (`file_creation`, `create`, ...): its latency
    /// histogram goes by this name. A step that times two kinds is two phases.
    fn op(self) -> &'static str;
}

/// What one thread does: the per-thread body of a workload that runs in phases.
pub trait Worker: Send {
    /// The workload's phases.
    type Phase: Phase;

    /// Runs `phase` on this thread, recording every operation in `rec`. It returns early when
    /// [`Recorder::stopped`] says so, and reports a failure with [`Recorder::fail`], which
    /// stops the other threads too.
    fn run(&mut self, phase: Self::Phase, rec: &mut Recorder<'_>);

    /// Runs once on the thread before its first phase, untimed: what the reference tool does
    /// on the same thread right before its first timed call (meta: mdtest's mkdir of its test
    /// directory). Default: nothing.
    fn warm(&mut self) {}

    /// Whether this thread's operations count towards the phase's total (its latencies always
    /// do). mdtest's tree rows count rank 0's tree only. Default: they count.
    fn counts(&self, _phase: Self::Phase) -> bool {
        true
    }
}

/// One thread's record of one phase: its operations, their latencies and the first error.
#[derive(Debug)]
pub struct Recorder<'a> {
    clock: &'a quanta::Clock,
    /// The clock at the phase's start on this thread.
    origin: u64,
    /// Nanoseconds from `origin` to the end of the previous operation.
    prev_ns: u64,
    ops: u64,
    bytes: u64,
    hist: LatencyHistogram,
    series: IntervalCounter,
    /// The progress display's count, added to in batches.
    live: LiveBatch<'a>,
    error: Option<String>,
    /// Set by any thread that failed: the others stop.
    abort: &'a AtomicBool,
    /// Set on Ctrl-C.
    stop: &'a AtomicBool,
}

impl<'a> Recorder<'a> {
    /// A recorder on `clock`, made before its phase starts ([`Recorder::start`]): what it
    /// allocates and first touches is not the phase's time.
    fn new(clock: &'a quanta::Clock, abort: &'a AtomicBool, stop: &'a AtomicBool, live: &'a Live) -> Self {
        Self {
            clock,
            origin: clock.raw(),
            prev_ns: 0,
            ops: 0,
            bytes: 0,
            hist: LatencyHistogram::resident(),
            series: IntervalCounter::new(SECOND_NS, 8),
            live: LiveBatch::new(live),
            error: None,
            abort,
            stop,
        }
    }

    /// The phase starts now: the first operation's latency runs from here.
    fn start(&mut self) {
        self.origin = self.clock.raw();
    }

    /// One operation of `bytes` bytes (0 for a metadata call) has just completed: its latency
    /// runs from the end of the previous one (or the phase's start).
    #[inline]
    pub fn done(&mut self, bytes: u64) {
        let now_ns = self.clock.delta_as_nanos(self.origin, self.clock.raw());
        self.hist.record(now_ns.saturating_sub(self.prev_ns));
        self.series.add(now_ns, bytes);
        self.live.add(bytes, now_ns);
        self.ops += 1;
        self.bytes += bytes;
        self.prev_ns = now_ns;
    }

    /// True when the run is interrupted or another thread failed: return soon. Cheap, but
    /// loops look only every few dozen operations.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.abort.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    /// Records the first failure, naming the path, and stops every thread.
    pub fn fail(&mut self, message: String) {
        self.error.get_or_insert(message);
        self.abort.store(true, Ordering::Relaxed);
    }

    /// True once this thread failed.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Operations recorded so far.
    pub fn ops(&self) -> u64 {
        self.ops
    }
}

/// One phase over all threads.
#[derive(Debug, Clone)]
pub struct PhaseTotal {
    /// The phase's operation kind ([`Phase::op`]).
    pub op: &'static str,
    /// Operations counted (see [`Worker::counts`]).
    pub ops: u64,
    /// Bytes the counted operations moved.
    pub bytes: u64,
    /// The earliest thread's start, just after the barrier.
    pub start: Option<Instant>,
    /// The latest thread's end.
    pub end: Option<Instant>,
    /// Latency of every operation of every thread.
    pub hist: LatencyHistogram,
    /// Operations per second over all threads, one value per whole second of each thread's
    /// phase (the threads' seconds start together at the barrier, within its wake-up time).
    pub ops_per_second: Vec<f64>,
    /// Bytes per second, likewise.
    pub bytes_per_second: Vec<f64>,
    /// The first error, naming the path.
    pub error: Option<String>,
}

impl PhaseTotal {
    /// Nothing measured yet.
    pub fn new(op: &'static str) -> Self {
        Self {
            op,
            ops: 0,
            bytes: 0,
            start: None,
            end: None,
            hist: LatencyHistogram::new(),
            ops_per_second: Vec::new(),
            bytes_per_second: Vec::new(),
            error: None,
        }
    }

    /// Adds one thread's record of a phase that ran from `start` to `end` on that thread;
    /// its operations and bytes only when `counted`.
    fn add(&mut self, rec: Recorder<'_>, start: Instant, end: Instant, counted: bool) {
        if counted {
            self.ops += rec.ops;
            self.bytes += rec.bytes;
            let (bytes, ops) = rec.series.per_second();
            add_series(&mut self.ops_per_second, &ops);
            add_series(&mut self.bytes_per_second, &bytes);
        }
        self.hist.merge(&rec.hist);
        self.add_span(start, end);
        if self.error.is_none() {
            self.error = rec.error;
        }
    }

    /// Widens the span to cover a thread that ran from `start` to `end`.
    pub fn add_span(&mut self, start: Instant, end: Instant) {
        self.start = Some(self.start.map_or(start, |s| s.min(start)));
        self.end = Some(self.end.map_or(end, |e| e.max(end)));
    }

    /// The phase's span, from the earliest start to the latest end, in nanoseconds.
    pub fn span_ns(&self) -> u64 {
        match (self.start, self.end) {
            (Some(s), Some(e)) => e.saturating_duration_since(s).as_nanos().min(u128::from(u64::MAX)) as u64,
            _ => 0,
        }
    }

    /// The span's start and end on this host's CLOCK_MONOTONIC, in nanoseconds: the clock
    /// every process of the host shares, so that the phases of MPI ranks merge over their
    /// common window ([`fsarena_core::RateBasis::window`]).
    pub fn window_ns(&self) -> Option<(u64, u64)> {
        let (start, end) = (self.start?, self.end?);
        // std's Instant is CLOCK_MONOTONIC on Linux but does not expose its value: read both
        // clocks once and carry the phase's instants over by their distance from that pair.
        let (now, now_ns) = (Instant::now(), monotonic_ns());
        let at = |t: Instant| match now.checked_duration_since(t) {
            Some(before) => now_ns.saturating_sub(before.as_nanos() as u64),
            None => now_ns.saturating_add(t.saturating_duration_since(now).as_nanos() as u64),
        };
        Some((at(start), at(end)))
    }

    /// `count` per second of the span; `None` when nothing was counted or no time passed.
    pub fn rate(&self, count: u64) -> Option<f64> {
        let span = self.span_ns();
        (count > 0 && span > 0).then(|| count as f64 * 1e9 / span as f64)
    }
}

/// Times one operation for a workload that times its calls by hand (filebench's flowops,
/// PostMark's file operations, SQLite's statements), on the clock the phase runner reads:
/// quanta's, one calibrated clock for the process, about 20 ns for an interval (a TSC read
/// each end where the CPU has an invariant one). `start()` before the call, `ns()` or
/// `record()` after it.
#[derive(Debug, Clone, Copy)]
pub struct OpTimer {
    start: u64,
}

/// The process's one calibrated clock (calibrating takes milliseconds: once).
fn op_clock() -> &'static quanta::Clock {
    static CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new)
}

impl OpTimer {
    /// The operation starts now.
    #[inline]
    pub fn start() -> Self {
        Self { start: op_clock().raw() }
    }

    /// Nanoseconds since [`OpTimer::start`].
    #[inline]
    pub fn ns(self) -> u64 {
        let clock = op_clock();
        clock.delta_as_nanos(self.start, clock.raw())
    }

    /// Records the operation's latency, ending now, in `hist`; returns it in nanoseconds.
    #[inline]
    pub fn record(self, hist: &mut LatencyHistogram) -> u64 {
        let ns = self.ns();
        hist.record(ns);
        ns
    }
}

/// This host's CLOCK_MONOTONIC, in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(t.tv_nsec as u64)
}

/// Adds `more` to `sum` element by element, growing `sum` as needed.
fn add_series(sum: &mut Vec<f64>, more: &[f64]) {
    if sum.len() < more.len() {
        sum.resize(more.len(), 0.0);
    }
    for (s, m) in sum.iter_mut().zip(more) {
        *s += m;
    }
}

/// How phases are run: the threads' name, the stop flag and the hook before each phase.
#[derive(Clone, Copy)]
pub struct Phases<'a> {
    /// Thread names are `NAME-INDEX`; failures to start one name it.
    pub name: &'a str,
    /// Set on Ctrl-C: the running phase ends early and no other starts.
    pub stop: &'a AtomicBool,
    /// The progress display's count of operations and bytes.
    pub live: &'a Live,
    /// Runs on one thread before each phase while the others wait (meta's
    /// `drop_caches=phase`); an error fails the phase and stops the run.
    pub before_each: Option<&'a (dyn Fn() -> Result<(), String> + Sync)>,
    /// Runs on one thread before each phase, after `before_each`, while the others wait, and
    /// again after each phase: the MPI ranks' meeting point ([`crate::RunEnv::rendezvous`]),
    /// so that every rank's threads start the phase together and every rank's phase ends when
    /// the last one's has (mdtest's barriers around a phase). It runs for every phase, even
    /// after a failure stopped the run, so that the other ranks are never left waiting.
    pub rendezvous: Option<&'a (dyn Fn() + Sync)>,
}

impl std::fmt::Debug for Phases<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Phases").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Phases<'_> {
    /// Runs `phases` in order on one thread per worker, all threads starting each phase
    /// together, and returns one total per phase. A thread that could not be started, or a
    /// thread that panicked, is the first phase's error; the phases then measured nothing or
    /// part.
    pub fn run<W: Worker>(&self, phases: &[W::Phase], workers: &mut [W]) -> Vec<PhaseTotal> {
        let totals: Vec<Mutex<PhaseTotal>> = phases.iter().map(|p| Mutex::new(PhaseTotal::new(p.op()))).collect();
        let barrier = PollingBarrier::new(workers.len());
        let abort = AtomicBool::new(false);
        let gate = crate::gate::StartGate::default();
        let (panicked, spawn_error) = std::thread::scope(|s| {
            let bodies = workers.iter_mut().map(|worker| {
                let (barrier, totals, abort) = (&barrier, &totals, &abort);
                move || {
                    // Made once, before the phases: making one calibrates it, which would
                    // count towards a phase's span.
                    let clock = quanta::Clock::new();
                    for (i, (&phase, total)) in phases.iter().zip(totals).enumerate() {
                        // Made before the barrier: its allocation is no part of the phase,
                        // whose time holds the operations alone, as mdtest's timer does.
                        let mut rec = Recorder::new(&clock, abort, self.stop, self.live);
                        // After the recorder, whose histogram's first writes would push what
                        // the warm-up brought into the CPU's caches out again.
                        if i == 0 {
                            worker.warm();
                        }
                        let leader = barrier.wait();
                        let mut hook_error = None;
                        if self.before_each.is_some() || self.rendezvous.is_some() {
                            // One thread runs them while the others wait; the phase starts after.
                            if leader {
                                if let Some(Err(e)) = self.before_each.map(|hook| hook()) {
                                    hook_error = Some(e);
                                    abort.store(true, Ordering::Relaxed);
                                }
                                if let Some(meet) = self.rendezvous {
                                    meet();
                                }
                            }
                            barrier.wait();
                        }
                        let start = Instant::now();
                        rec.start();
                        if let Some(e) = hook_error {
                            rec.error = Some(e);
                        } else if !rec.stopped() {
                            worker.run(phase, &mut rec);
                        }
                        // A thread's phase ends when it leaves the meeting after it, as each
                        // mdtest rank's time runs until it leaves its barrier after the phase
                        // (and its tree rows are rank 0's such time): no thread's phase ends
                        // before the last thread's work has, and the waking of the threads
                        // that wait is the phase's, as mdtest's ranks'. Under MPI the ranks
                        // meet there too.
                        if let Some(meet) = self.rendezvous {
                            if barrier.wait() {
                                meet();
                            }
                        }
                        barrier.wait();
                        let end = Instant::now();
                        // Threads, and ranks, meet again before any merges its figures: a
                        // thread that finished first then yields its CPU to the ones still at
                        // work, as mdtest's ranks do at their barrier, instead of delaying
                        // their start or their end with its merge (a histogram's worth of
                        // work: with 4 threads on 2 CPUs a phase of one rmdir per thread
                        // spanned 100-170 us, mdtest's 27). Under MPI, ranks that left the
                        // meeting first went on to that work and to the run's end (a
                        // millisecond of CPU) while two of 4 ranks on 2 CPUs had yet to read
                        // their clock: rank 0's one-rmdir tree removal then lasted 0.6-1.7 ms
                        // in 3 runs of 6, mdtest's 40-60 us.
                        let leader = barrier.wait();
                        if let Some(meet) = self.rendezvous {
                            if leader {
                                meet();
                            }
                            barrier.wait();
                        }
                        let counted = worker.counts(phase);
                        if let Ok(mut t) = total.lock() {
                            t.add(rec, start, end, counted);
                        }
                    }
                }
            });
            match crate::gate::spawn_gated(s, &gate, self.name, bodies) {
                Ok(handles) => (handles.into_iter().map(|h| h.join()).filter(|r| r.is_err()).count(), None),
                Err(e) => (0, Some(e)),
            }
        });
        let mut out: Vec<PhaseTotal> =
            totals.into_iter().map(|t| t.into_inner().unwrap_or_else(|e| e.into_inner())).collect();
        if let Some(first) = out.first_mut() {
            if let Some(e) = spawn_error {
                first.error = Some(e);
            } else if panicked > 0 {
                first.error.get_or_insert(format!("a {} thread panicked; this is a bug in fsarena", self.name));
            }
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Step {
        Count(u64),
        FailAt(u64),
    }

    impl Phase for Step {
        fn op(self) -> &'static str {
            match self {
                Step::Count(_) => "count",
                Step::FailAt(_) => "fail",
            }
        }
    }

    /// Counts to N, or fails at N; thread 1's operations do not count in `Count`.
    struct Counter {
        id: usize,
    }

    impl Worker for Counter {
        type Phase = Step;
        fn run(&mut self, phase: Step, rec: &mut Recorder<'_>) {
            match phase {
                Step::Count(n) => (0..n).for_each(|_| rec.done(10)),
                // Thread 0 fails after n operations; the others run until it has.
                Step::FailAt(n) if self.id == 0 => {
                    (0..n).for_each(|_| rec.done(0));
                    rec.fail(format!("failed at {n}"));
                }
                Step::FailAt(_) => {
                    while !rec.stopped() {
                        rec.done(0);
                        std::thread::yield_now();
                    }
                }
            }
        }
        fn counts(&self, phase: Step) -> bool {
            !(self.id == 1 && matches!(phase, Step::Count(_)))
        }
    }

    fn run(phases: &[Step], threads: usize, hook: Option<&(dyn Fn() -> Result<(), String> + Sync)>) -> Vec<PhaseTotal> {
        let stop = AtomicBool::new(false);
        let mut workers: Vec<Counter> = (0..threads).map(|id| Counter { id }).collect();
        Phases { name: "test", stop: &stop, live: Live::unused(), before_each: hook, rendezvous: None }
            .run(phases, &mut workers)
    }

    #[test]
    fn totals_count_every_counted_thread_and_merge_every_latency() {
        let t = run(&[Step::Count(100), Step::Count(7)], 3, None);
        assert_eq!(t.len(), 2);
        // Threads 0 and 2 count; thread 1's latencies are kept.
        assert_eq!((t[0].op, t[0].ops, t[0].bytes, t[0].hist.len()), ("count", 200, 2000, 300));
        assert_eq!((t[1].ops, t[1].hist.len()), (14, 21));
        assert!(t.iter().all(|t| t.error.is_none() && t.span_ns() > 0));
    }

    /// Sleeps in its warm-up and logs what ran when.
    struct Warming<'a> {
        log: &'a Mutex<Vec<&'static str>>,
    }

    impl Worker for Warming<'_> {
        type Phase = Step;
        fn warm(&mut self) {
            std::thread::sleep(Duration::from_millis(100));
            self.log.lock().unwrap().push("warm");
        }
        fn run(&mut self, _phase: Step, rec: &mut Recorder<'_>) {
            self.log.lock().unwrap().push("run");
            rec.done(0);
        }
    }

    #[test]
    fn the_warm_up_runs_once_per_thread_before_the_first_phase_and_is_not_timed() {
        let log = Mutex::new(Vec::new());
        let stop = AtomicBool::new(false);
        let mut workers: Vec<Warming> = (0..2).map(|_| Warming { log: &log }).collect();
        let phases = Phases { name: "test", stop: &stop, live: Live::unused(), before_each: None, rendezvous: None };
        let t = phases.run(&[Step::Count(1), Step::Count(1)], &mut workers);
        assert_eq!(log.into_inner().unwrap(), ["warm", "warm", "run", "run", "run", "run"]);
        assert!(t[0].span_ns() < 100_000_000, "the warm-up counted in the first phase: {} ns", t[0].span_ns());
    }

    #[test]
    fn a_failure_stops_every_thread_and_later_phases() {
        let t = run(&[Step::FailAt(50), Step::Count(10)], 2, None);
        // The other thread ran until the failure stopped it.
        assert_eq!(t[0].error.as_deref(), Some("failed at 50"));
        assert!(t[0].ops >= 50, "{}", t[0].ops);
        assert_eq!(t[1].hist.len(), 0, "no phase runs after a failure");
    }

    #[test]
    fn the_hook_runs_once_before_each_phase_and_its_error_fails_the_phase() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let hook = || {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(())
        };
        run(&[Step::Count(1), Step::Count(1), Step::Count(1)], 4, Some(&hook));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        let failing = || Err("cannot drop".to_string());
        let t = run(&[Step::Count(1), Step::Count(1)], 2, Some(&failing));
        assert_eq!(t[0].error.as_deref(), Some("cannot drop"));
        assert_eq!((t[0].hist.len(), t[1].hist.len()), (0, 0));
    }

    #[test]
    fn the_rendezvous_meets_before_and_after_every_phase_even_after_a_failure() {
        // The other MPI ranks wait at each phase's rendezvous, before it, after it (the end
        // of mdtest's phase) and once every rank has read its clock: a rank whose run failed
        // must still come to every one, the first after the hook, on one thread.
        let log = Mutex::new(Vec::new());
        let hook = || {
            log.lock().unwrap().push("hook");
            Ok(())
        };
        let meet = || log.lock().unwrap().push("meet");
        let stop = AtomicBool::new(false);
        let mut workers: Vec<Counter> = (0..3).map(|id| Counter { id }).collect();
        let phases = Phases {
            name: "test",
            stop: &stop,
            live: Live::unused(),
            before_each: Some(&hook),
            rendezvous: Some(&meet),
        };
        let t = phases.run(&[Step::FailAt(2), Step::Count(5), Step::Count(5)], &mut workers);
        assert_eq!(t[0].error.as_deref(), Some("failed at 2"));
        let each = ["hook", "meet", "meet", "meet"];
        assert_eq!(log.into_inner().unwrap(), [each, each, each].concat());
    }

    #[test]
    fn a_failed_spawn_is_the_first_phases_error() {
        crate::gate::FAIL_SPAWN_AT.with(|f| f.set(Some(1)));
        let t = run(&[Step::Count(5)], 3, None);
        crate::gate::FAIL_SPAWN_AT.with(|f| f.set(None));
        assert!(t[0].error.as_deref().unwrap().contains("cannot start test thread 2 of 3"), "{:?}", t[0].error);
        assert_eq!(t[0].ops, 0);
    }

    #[test]
    fn the_barrier_lets_no_thread_through_before_the_last_and_names_one_leader_a_round() {
        let (threads, rounds) = (4, 200);
        let barrier = PollingBarrier::new(threads);
        let arrived = std::sync::atomic::AtomicUsize::new(0);
        let leaders = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..threads {
                let (barrier, arrived, leaders) = (&barrier, &arrived, &leaders);
                s.spawn(move || {
                    for r in 0..rounds {
                        // One thread sometimes arrives late, past the polling time: the others
                        // then sleep, and must still wake.
                        if t == 0 && r % 50 == 0 {
                            std::thread::sleep(POLL * 2);
                        }
                        arrived.fetch_add(1, Ordering::SeqCst);
                        if barrier.wait() {
                            leaders.fetch_add(1, Ordering::SeqCst);
                        }
                        // Nobody passes round r before all have arrived at it.
                        assert!(arrived.load(Ordering::SeqCst) >= (r + 1) * threads);
                    }
                });
            }
        });
        assert_eq!(leaders.load(Ordering::SeqCst), rounds);
    }

    #[test]
    fn threads_that_do_not_overlap_share_one_span() {
        // Two threads of 100 operations each, one after the other (more threads than CPUs):
        // 200 operations in 20 ms, not 200 in the 10 ms of either thread's own clock.
        let base = Instant::now();
        let ms = |n| base + Duration::from_millis(n);
        let (abort, stop) = (AtomicBool::new(false), AtomicBool::new(false));
        let clock = quanta::Clock::new();
        let part = |ops| {
            let mut r = Recorder::new(&clock, &abort, &stop, Live::unused());
            (0..ops).for_each(|_| r.done(0));
            r
        };
        let mut total = PhaseTotal::new("x");
        total.add(part(100), ms(0), ms(10), true);
        total.add(part(100), ms(10), ms(20), true);
        assert_eq!((total.ops, total.span_ns()), (200, 20_000_000));
        assert_eq!(total.rate(total.ops), Some(10_000.0));
        // Overlapping threads: the span is still the earliest start to the latest end.
        let mut total = PhaseTotal::new("x");
        total.add(part(100), ms(2), ms(12), true);
        total.add(part(100), ms(0), ms(11), true);
        total.add(part(7), ms(1), ms(3), false);
        assert_eq!((total.ops, total.span_ns(), total.hist.len()), (200, 12_000_000, 207));
    }

    #[test]
    fn per_second_series_add_up_over_threads() {
        let mut sum = vec![1.0, 2.0];
        add_series(&mut sum, &[10.0, 20.0, 30.0]);
        add_series(&mut sum, &[100.0]);
        assert_eq!(sum, vec![111.0, 22.0, 30.0]);
    }
}
