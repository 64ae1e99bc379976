//! One db_bench benchmark on an open store: `threads` threads, each doing `num` operations
//! (db_bench's per-thread counts), started together; the figures db_bench prints from them.

use super::engine::Engine;
use super::gen::{key_from_int, ValueGen};
use super::options::{Benchmark, KvOptions};
use fsarena_core::LatencyHistogram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Instant;

/// What one thread did.
#[derive(Debug)]
pub struct ThreadStats {
    /// When its first operation started.
    pub start: Instant,
    /// When its last one ended.
    pub finish: Instant,
    /// Operations done (db_bench's `done_`).
    pub ops: u64,
    /// Bytes db_bench counts: key and value of each write, and of each entry read or found.
    pub bytes: u64,
    /// Keys looked up (reads and seeks).
    pub read: u64,
    /// Keys found among them (seeks: an exact hit).
    pub found: u64,
    /// Keys written.
    pub written: u64,
    /// Keys deleted.
    pub deleted: u64,
    /// One sample per operation, ns.
    pub hist: LatencyHistogram,
}

/// What the benchmark's threads did, the background writer of readwhilewriting apart.
#[derive(Debug)]
pub struct Outcome {
    /// The measured threads.
    pub threads: Vec<ThreadStats>,
    /// Keys the background writer of readwhilewriting wrote (not in the figures, as db_bench).
    pub background_writes: u64,
    /// The first error.
    pub error: Option<String>,
}

/// db_bench's `Duration`: a benchmark loop ends after `max_ops` operations, or, when
/// `seconds` is set, once that many whole seconds have passed, looked at every 1000
/// operations (db_bench's ops_between_duration_checks).
struct Duration {
    seconds: u64,
    max_ops: u64,
    ops: u64,
    start: Instant,
}

impl Duration {
    /// The number of the next operation, `None` when the loop is done.
    fn next(&mut self) -> Option<u64> {
        let i = self.ops;
        self.ops += 1;
        let done = if self.seconds > 0 {
            self.ops.is_multiple_of(1000) && self.start.elapsed().as_secs() >= self.seconds
        } else {
            self.ops > self.max_ops
        };
        (!done).then_some(i)
    }
}

/// The generators of one thread.
struct Thread<'a> {
    engine: &'a dyn Engine,
    o: &'a KvOptions,
    rng: fastrand::Rng,
    values: ValueGen,
    key: Vec<u8>,
    stop: &'a AtomicBool,
    live: fsarena_workload::LiveBatch<'a>,
    /// The TSC clock: one read per operation, as db_bench's `--histogram` timing.
    clock: quanta::Clock,
    /// The clock when the run started, for the live rate.
    origin: u64,
    /// The clock when the last operation ended (or the thread started).
    last: u64,
}

impl Thread<'_> {
    fn stats(&mut self) -> ThreadStats {
        self.last = self.clock.raw();
        let now = Instant::now();
        ThreadStats {
            start: now,
            finish: now,
            ops: 0,
            bytes: 0,
            read: 0,
            found: 0,
            written: 0,
            deleted: 0,
            hist: LatencyHistogram::new(),
        }
    }

    /// Records one operation: its time runs from the end of the previous one, as db_bench
    /// times an operation (so key generation is in it, as in db_bench's). Without
    /// `histogram`, as db_bench without it, no clock per operation: one per 256, for the live
    /// rate.
    fn done(&mut self, s: &mut ThreadStats, bytes: u64) {
        s.ops += 1;
        s.bytes += bytes;
        if self.o.histogram {
            let now = self.clock.raw();
            s.hist.record(self.clock.delta_as_nanos(self.last, now));
            self.last = now;
        } else if s.ops.is_multiple_of(256) {
            self.last = self.clock.raw();
        }
        self.live.add(bytes, self.clock.delta_as_nanos(self.origin, self.last));
    }

    fn stopped(&self, i: u64) -> bool {
        i.is_multiple_of(256) && self.stop.load(Ordering::Relaxed)
    }

    fn random_key(&mut self) {
        let n = self.rng.u64(0..self.o.num);
        key_from_int(n, &mut self.key);
    }

    /// db_bench's `Duration` for `bench`: its count, or its seconds from now.
    fn duration(&self, bench: Benchmark) -> Duration {
        Duration { seconds: self.o.seconds(bench), max_ops: self.o.ops(bench), ops: 0, start: Instant::now() }
    }

    fn write(&mut self, s: &mut ThreadStats, bench: Benchmark) -> Result<(), String> {
        let len = self.o.value_size as usize;
        let sequential = bench == Benchmark::FillSeq;
        let mut d = self.duration(bench);
        while let Some(i) = d.next() {
            if self.stopped(i) {
                break;
            }
            if sequential {
                key_from_int(i, &mut self.key);
            } else {
                self.random_key();
            }
            self.engine.put(&self.key, self.values.next(len))?;
            s.written += 1;
            self.done(s, self.o.key_size + self.o.value_size);
        }
        Ok(())
    }

    fn read_seq(&mut self, s: &mut ThreadStats) -> Result<(), String> {
        let (engine, limit, stop, origin, timed) =
            (self.engine, self.o.ops(Benchmark::ReadSeq), self.stop, self.origin, self.o.histogram);
        let (clock, live, last) = (&self.clock, &mut self.live, &mut self.last);
        // Each entry's time runs from the end of the previous one: the iterator's step.
        engine.scan(&mut |n| {
            s.ops += 1;
            if timed {
                let now = clock.raw();
                s.hist.record(clock.delta_as_nanos(*last, now));
                *last = now;
            } else if s.ops.is_multiple_of(256) {
                *last = clock.raw();
            }
            s.read += 1;
            s.found += 1;
            s.bytes += n as u64;
            live.add(n as u64, clock.delta_as_nanos(origin, *last));
            s.ops < limit && !(s.ops.is_multiple_of(256) && stop.load(Ordering::Relaxed))
        })
    }

    fn read_random(&mut self, s: &mut ThreadStats, bench: Benchmark) -> Result<(), String> {
        let mut d = self.duration(bench);
        while let Some(i) = d.next() {
            if self.stopped(i) {
                break;
            }
            self.random_key();
            let got = self.engine.get(&self.key)?;
            s.read += 1;
            let bytes = got.map_or(0, |v| {
                s.found += 1;
                self.o.key_size + v as u64
            });
            self.done(s, bytes);
        }
        Ok(())
    }

    fn seek_random(&mut self, s: &mut ThreadStats) -> Result<(), String> {
        let mut d = self.duration(Benchmark::SeekRandom);
        while let Some(i) = d.next() {
            if self.stopped(i) {
                break;
            }
            self.random_key();
            let got = self.engine.seek(&self.key)?;
            s.read += 1;
            let bytes = got.map_or(0, |(exact, n)| {
                s.found += u64::from(exact);
                n as u64
            });
            self.done(s, bytes);
        }
        Ok(())
    }

    fn delete_random(&mut self, s: &mut ThreadStats) -> Result<(), String> {
        let mut d = self.duration(Benchmark::DeleteRandom);
        while let Some(i) = d.next() {
            if self.stopped(i) {
                break;
            }
            self.random_key();
            self.engine.delete(&self.key)?;
            s.deleted += 1;
            self.done(s, 0);
        }
        Ok(())
    }

    /// readwhilewriting's extra thread: random writes until the readers are done.
    fn write_until(&mut self, done: &AtomicBool) -> Result<u64, String> {
        let len = self.o.value_size as usize;
        let mut n = 0;
        while !done.load(Ordering::Relaxed) && !self.stop.load(Ordering::Relaxed) {
            self.random_key();
            self.engine.put(&self.key, self.values.next(len))?;
            n += 1;
        }
        Ok(n)
    }
}

/// Runs `bench` with `o.threads` threads; thread `i`'s generators are seeded `seed + i`.
pub fn run(
    engine: &dyn Engine,
    o: &KvOptions,
    bench: Benchmark,
    seed: u64,
    stop: &AtomicBool,
    live: &fsarena_workload::Live,
) -> Outcome {
    let threads = o.threads as usize;
    let background = bench == Benchmark::ReadWhileWriting;
    let barrier = Barrier::new(threads + usize::from(background));
    let readers_done = AtomicBool::new(false);
    let clock = quanta::Clock::new();
    let origin = clock.raw();
    let new_thread = |i: u64| Thread {
        engine,
        o,
        rng: fastrand::Rng::with_seed(seed.wrapping_add(i)),
        // db_bench's generator is the same for every thread; a seed per thread is as good.
        values: ValueGen::new(o.value_size as usize, o.compression_ratio, seed.wrapping_add(i)),
        key: vec![0; o.key_size as usize],
        stop,
        live: fsarena_workload::LiveBatch::new(live),
        clock: clock.clone(),
        origin,
        last: origin,
    };
    std::thread::scope(|scope| {
        let writer = background.then(|| {
            let (barrier, readers_done, mut t) = (&barrier, &readers_done, new_thread(threads as u64));
            scope.spawn(move || {
                t.engine.begin_thread();
                barrier.wait();
                t.write_until(readers_done)
            })
        });
        let handles: Vec<_> = (0..threads as u64)
            .map(|i| {
                let (barrier, mut t) = (&barrier, new_thread(i));
                scope.spawn(move || {
                    t.engine.begin_thread();
                    barrier.wait();
                    let mut s = t.stats();
                    let r = match bench {
                        Benchmark::FillSeq | Benchmark::FillRandom | Benchmark::Overwrite => t.write(&mut s, bench),
                        Benchmark::ReadSeq => t.read_seq(&mut s),
                        Benchmark::ReadRandom | Benchmark::ReadWhileWriting => t.read_random(&mut s, bench),
                        Benchmark::SeekRandom => t.seek_random(&mut s),
                        Benchmark::DeleteRandom => t.delete_random(&mut s),
                    };
                    s.finish = Instant::now();
                    t.live.flush();
                    (s, r.err())
                })
            })
            .collect();
        let mut out = Outcome { threads: Vec::new(), background_writes: 0, error: None };
        for h in handles {
            match h.join() {
                Ok((s, e)) => {
                    out.threads.push(s);
                    out.error = out.error.take().or(e);
                }
                Err(_) => out.error = out.error.take().or(Some("kv: a benchmark thread panicked".into())),
            }
        }
        readers_done.store(true, Ordering::Relaxed);
        if let Some(w) = writer {
            match w.join() {
                Ok(Ok(n)) => out.background_writes = n,
                Ok(Err(e)) => out.error = out.error.take().or(Some(e)),
                Err(_) => out.error = out.error.take().or(Some("kv: the writer thread panicked".into())),
            }
        }
        out
    })
}
