//! Starting a workload's threads all or nothing.
//!
//! A workload's threads meet at a `Barrier` sized for all of them. If one of them could not
//! be started (too many threads for the machine, no memory for a stack), the others would
//! wait at that barrier for ever, holding the target's files and its mount. So every thread
//! first waits at a [`StartGate`]: the gate opens only once all threads exist, and if a spawn
//! fails it says "abort" instead, and the threads already started return without running.
//! Threads are started with `std::thread::Builder`, whose spawn returns an error rather than
//! panicking.

use std::sync::{Condvar, Mutex};
use std::thread::{Builder, Scope, ScopedJoinHandle};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed,
    Open,
    Aborted,
}

/// Where started threads wait until all are started (open) or one could not be (abort).
#[derive(Debug)]
pub struct StartGate {
    state: Mutex<State>,
    changed: Condvar,
}

impl Default for StartGate {
    fn default() -> Self {
        Self { state: Mutex::new(State::Closed), changed: Condvar::new() }
    }
}

impl StartGate {
    /// Blocks until the gate opens (true: run) or is aborted (false: return at once).
    pub fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while *state == State::Closed {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        *state == State::Open
    }

    fn set(&self, to: State) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = to;
        self.changed.notify_all();
    }
}

thread_local! {
    /// Test hook: the index of the thread whose spawn fails (for real: its stack cannot be
    /// mapped), on spawns made from this test's thread. Compiled in always (one thread-local
    /// read per spawn), because the families' tests, in other crates, set it.
    #[doc(hidden)]
    pub static FAIL_SPAWN_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Starts one scoped thread per body, named `NAME-INDEX`; each runs its body once the gate is
/// open. If a spawn fails, the threads already started are released without running their
/// bodies (they return None), and the error names the failure and how far it got.
pub fn spawn_gated<'scope, 'env, T, F>(
    scope: &'scope Scope<'scope, 'env>,
    gate: &'scope StartGate,
    name: &str,
    bodies: impl ExactSizeIterator<Item = F>,
) -> Result<Vec<ScopedJoinHandle<'scope, Option<T>>>, String>
where
    T: Send + 'scope,
    F: FnOnce() -> T + Send + 'scope,
{
    let total = bodies.len();
    let mut handles = Vec::with_capacity(total);
    for (i, body) in bodies.enumerate() {
        let mut builder = Builder::new().name(format!("{name}-{i}"));
        if FAIL_SPAWN_AT.with(|f| f.get()) == Some(i) {
            // A stack larger than the address space: the kernel refuses it, as it refuses a
            // thread beyond threads-max.
            builder = builder.stack_size(usize::MAX / 4);
        }
        match builder.spawn_scoped(scope, move || gate.wait().then(body)) {
            Ok(h) => handles.push(h),
            Err(e) => {
                gate.set(State::Aborted);
                return Err(format!(
                    "cannot start {name} thread {} of {total}: {e}; the {i} thread(s) already started were stopped",
                    i + 1
                ));
            }
        }
    }
    gate.set(State::Open);
    Ok(handles)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;

    #[test]
    fn all_start_together_or_none_runs() {
        let ran = AtomicUsize::new(0);
        let barrier = Barrier::new(8);
        let gate = StartGate::default();
        let n = std::thread::scope(|s| {
            let bodies = (0..8).map(|_| {
                let (ran, barrier) = (&ran, &barrier);
                move || {
                    barrier.wait();
                    ran.fetch_add(1, Ordering::Relaxed)
                }
            });
            let handles = spawn_gated(s, &gate, "t", bodies).unwrap();
            handles.into_iter().filter_map(|h| h.join().ok().flatten()).count()
        });
        assert_eq!((n, ran.load(Ordering::Relaxed)), (8, 8));
    }

    #[test]
    fn a_failed_spawn_releases_the_started_threads_and_says_why() {
        FAIL_SPAWN_AT.with(|f| f.set(Some(5)));
        let ran = AtomicUsize::new(0);
        // Sized for all 8: without the gate, the 5 started would wait here for ever.
        let barrier = Barrier::new(8);
        let gate = StartGate::default();
        let outcome = std::thread::scope(|s| {
            let bodies = (0..8).map(|_| {
                let (ran, barrier) = (&ran, &barrier);
                move || {
                    barrier.wait();
                    ran.fetch_add(1, Ordering::Relaxed);
                }
            });
            spawn_gated(s, &gate, "job", bodies).map(|h| h.len())
        });
        FAIL_SPAWN_AT.with(|f| f.set(None));
        let e = outcome.unwrap_err();
        assert!(e.contains("cannot start job thread 6 of 8") && e.contains("5 thread(s) already started"), "{e}");
        assert_eq!(ran.load(Ordering::Relaxed), 0);
    }
}
