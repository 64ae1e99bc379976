//! The flowops that move no data: delay, hog, block/wakeup, semblock/sempost, the rate limits
//! fed by `eventgen` (eventlimit, opslimit, iopslimit, bwlimit) and the finish conditions
//! (finishoncount, finishonbytes), with filebench's semantics (`flowop_library.c`).

use super::flowops::{End, Step, Worker};
use super::vocabulary::Kind;
use fsarena_workload::phase::OpTimer;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a waiting thread sleeps before it looks whether the run is over.
const POLL: Duration = Duration::from_millis(20);

/// filebench's event generator: `rate` events a second into a queue the limits draw from.
#[derive(Debug)]
pub struct Events {
    queue: Mutex<u64>,
    added: Condvar,
    rate: f64,
}

impl Events {
    /// A generator of `rate` events a second (started by [`Events::generate`]).
    pub fn new(rate: f64) -> Self {
        Events { queue: Mutex::new(0), added: Condvar::new(), rate }
    }

    /// Adds events at the rate until `over()`; run on a thread of its own.
    pub fn generate(&self, over: &dyn Fn() -> bool) {
        let start = Instant::now();
        let mut given = 0u64;
        while !over() {
            std::thread::sleep(Duration::from_millis(10));
            let due = (start.elapsed().as_secs_f64() * self.rate) as u64;
            if due > given {
                *self.queue.lock().unwrap_or_else(|e| e.into_inner()) += due - given;
                given = due;
                self.added.notify_all();
            }
        }
        self.added.notify_all();
    }

    /// Takes `n` events, waiting for them; false when the run ended first.
    fn take(&self, n: u64, over: &dyn Fn() -> bool) -> bool {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        while *q < n {
            if over() {
                return false;
            }
            q = self.added.wait_timeout(q, POLL).unwrap_or_else(|e| e.into_inner()).0;
        }
        *q -= n;
        true
    }
}

/// A semblock's semaphores, as filebench's System V pair: `passes` (the low-water one) is
/// what posts add and a semblock takes `value` from; `credit` (the high-water one) starts at
/// `highwater`, is raised by `value` each time a semblock starts waiting and is spent by
/// blocking posts, which wait while it is short. So a blocking poster runs at most
/// `highwater` posts ahead of what the blocker has asked for, and a semblock whose value is
/// above its highwater (oltp's lg-block, 3200 over 1000) still gets all the posts it needs.
#[derive(Debug, Default)]
pub struct Sem {
    /// (passes, credit).
    state: Mutex<(u64, u64)>,
    changed: Condvar,
}

impl Sem {
    /// A semaphore with no posts and `highwater` credit.
    pub fn new(highwater: u64) -> Self {
        Sem { state: Mutex::new((0, highwater)), changed: Condvar::new() }
    }
}

/// A block flowop's wake-ups: a generation counter bumped by each wakeup.
#[derive(Debug, Default)]
pub struct Wake {
    generation: Mutex<u64>,
    changed: Condvar,
}

/// Runs a control flowop on `w`.
pub fn exec(w: &mut Worker<'_>, i: usize, step: Step<'_>) -> Result<(), End> {
    let op = step.op;
    let sh = w.shared();
    let over = || sh.over();
    let t0 = OpTimer::start();
    match op.kind {
        Kind::Delay => w.sleep(Duration::from_secs_f64(op.value)),
        Kind::Hog => {
            // filebench's hog burns CPU for `value` iterations of a trivial loop.
            let mut x = 0u64;
            for k in 0..op.value as u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(k));
            }
        }
        Kind::Block => {
            let Some(b) = sh.blocks.get(&op.name) else { return Ok(()) };
            let mut g = b.generation.lock().unwrap_or_else(|e| e.into_inner());
            let seen = *g;
            while *g == seen && !over() {
                g = b.changed.wait_timeout(g, POLL).unwrap_or_else(|e| e.into_inner()).0;
            }
        }
        Kind::Wakeup => {
            if let Some(b) = op.target.as_ref().and_then(|t| sh.blocks.get(t)) {
                *b.generation.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                b.changed.notify_all();
            }
        }
        Kind::SemBlock => {
            let Some(s) = sh.sems.get(&op.name).and_then(|v| v.get(step.sem)) else { return Ok(()) };
            let need = op.value.max(1.0) as u64;
            let mut c = s.state.lock().unwrap_or_else(|e| e.into_inner());
            // First the credit for the posts this pass needs, then the wait for them.
            c.1 += need;
            s.changed.notify_all();
            while c.0 < need {
                if over() {
                    return Err(End::Over);
                }
                c = s.changed.wait_timeout(c, POLL).unwrap_or_else(|e| e.into_inner()).0;
            }
            c.0 -= need;
        }
        Kind::SemPost => {
            let value = op.value.max(1.0) as u64;
            for s in op.target.as_ref().and_then(|t| sh.sems.get(t)).into_iter().flatten() {
                let mut c = s.state.lock().unwrap_or_else(|e| e.into_inner());
                if op.blocking {
                    // filebench's semop on both: the post happens once the credit allows it.
                    while c.1 < value {
                        if over() {
                            return Err(End::Over);
                        }
                        c = s.changed.wait_timeout(c, POLL).unwrap_or_else(|e| e.into_inner()).0;
                    }
                    c.1 -= value;
                }
                c.0 += value;
                s.changed.notify_all();
            }
        }
        Kind::EventLimit | Kind::OpsLimit | Kind::IopsLimit | Kind::BwLimit => {
            // Without `eventgen` the limits do nothing and count nothing, as in filebench.
            let Some(events) = sh.events else { return Ok(()) };
            if op.kind == Kind::EventLimit {
                if !events.take(1, &over) {
                    return Err(End::Over);
                }
            } else {
                let now = match (op.kind, step.target) {
                    (Kind::BwLimit, Some(t)) => sh.live[t].bytes.load(Relaxed),
                    (Kind::BwLimit, None) => sh.io_bytes.load(Relaxed),
                    (Kind::IopsLimit, None) => sh.io_rw.load(Relaxed),
                    (Kind::OpsLimit, None) => sh.io_ops.load(Relaxed),
                    (_, Some(t)) => sh.live[t].ops.load(Relaxed),
                    _ => 0,
                };
                let (last, bucket) = w.limit(i);
                if *last == 0 {
                    *last = now;
                    return Ok(());
                }
                *bucket -= now.saturating_sub(*last) as i64;
                *last = now;
                if *bucket >= 0 {
                    return Ok(());
                }
                // A byte limit draws an event per MiB owed, rounded up, as filebench's.
                let owed = bucket.unsigned_abs();
                let (events_owed, refill) = if op.kind == Kind::BwLimit {
                    let n = owed / (1 << 20) + 1;
                    (n, n << 20)
                } else {
                    (owed, owed)
                };
                if !events.take(events_owed, &over) {
                    return Err(End::Over);
                }
                w.limit(i).1 += refill as i64;
            }
        }
        Kind::FinishOnCount | Kind::FinishOnBytes => {
            let reached = match (op.kind, step.target) {
                (Kind::FinishOnCount, Some(t)) => sh.live[t].ops.load(Relaxed),
                (Kind::FinishOnCount, None) => sh.io_ops.load(Relaxed),
                (_, Some(t)) => sh.live[t].bytes.load(Relaxed),
                (_, None) => sh.io_bytes.load(Relaxed),
            };
            w.done(step, t0);
            // filebench: a count ends at the value, bytes once beyond it.
            let over_it =
                if op.kind == Kind::FinishOnCount { reached as f64 >= op.value } else { reached as f64 > op.value };
            if over_it {
                return Err(End::Done);
            }
            return Ok(());
        }
        _ => return Ok(()),
    }
    w.done(step, t0);
    Ok(())
}
