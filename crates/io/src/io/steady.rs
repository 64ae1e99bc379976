//! fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`; fio 3.33's `steadystate.c`).
//!
//! Once a second, the group's checker reads each clone's I/O and byte counts and turns the
//! last second into an IOPS and a bandwidth sample (fio's `steadystate_check`). The last
//! `ss_dur` seconds of samples are a window; once it is full, each new sample is judged: the
//! largest deviation from the window's mean (`iops`, `bw`), or the slope of a least-squares
//! line through it (`iops_slope`, `bw_slope`), against the limit, in the metric's own units
//! or as a percentage of the mean. When it holds, the clone ends as if its runtime were over;
//! under `group_reporting` the group's samples are summed and every clone of the group ends.
//!
//! The arithmetic is fio's, integer divisions and all, so the same samples give the same
//! verdict and the same JSON (`Window::push` is fio's `steadystate_slope` and
//! `steadystate_deviation`). What differs is only where the samples come from: fio's helper
//! thread wakes every second from its own start, fsarena's checker half a second into the group's
//! run ([`CHECK_PHASE_NS`]).
//!
//! The clones publish their counts in [`Slots`], one shared anonymous mapping, so that the
//! checker reads forked job processes (`thread=0`) as it reads threads.

use fsarena_core::fio::SteadyStateResult;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Microseconds per second: fio counts the ramp in microseconds, and checks once a second.
const SECOND_US: u64 = 1_000_000;

/// What `ss=` judges: IOPS or bandwidth samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// I/Os per second.
    Iops,
    /// Bytes per second.
    Bw,
}

/// fio's `ss=CRITERION:LIMIT` (`steadystate=`): its default is `iops_slope:0.01%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Criterion {
    /// IOPS or bandwidth.
    pub metric: Metric,
    /// The slope of the window (`*_slope`), not its largest deviation from the mean.
    pub slope: bool,
    /// The limit is a percentage of the window's mean (`10%`), not a value in the metric's units.
    pub percent: bool,
    /// The limit the criterion must be under.
    pub limit: f64,
}

impl Default for Criterion {
    fn default() -> Self {
        Self { metric: Metric::Iops, slope: true, percent: true, limit: 0.01 }
    }
}

/// The criteria `ss=` accepts, as fio 3.33 names them.
const CRITERIA: &[&str] = &["iops", "iops_slope", "bw", "bw_slope"];

impl Criterion {
    /// Parses `CRITERION:LIMIT` as fio's `str_steadystate_cb` does: a limit with `%` is a
    /// percentage; otherwise an IOPS limit is a number and a bandwidth limit a size in bytes/s
    /// (`bw:10m`). fio reads a number with sscanf: its leading part (`iops:5k` is 5).
    pub fn parse(v: &str) -> Result<Self, String> {
        let expected = "expected CRITERION:LIMIT with CRITERION iops, iops_slope, bw or bw_slope and LIMIT a \
                        number, a percentage of the mean or (bw) a size per second, e.g. iops:10% or bw_slope:1m";
        let (name, limit) = match v.split_once(':') {
            Some((name, limit)) => (name, limit.trim()),
            None if CRITERIA.contains(&v) => return Err(format!("'{v}' has no limit: {expected}")),
            None => return Err(format!("'{v}' is not a steady-state criterion: {expected}")),
        };
        let (metric, slope) = match name {
            "iops" => (Metric::Iops, false),
            "iops_slope" => (Metric::Iops, true),
            "bw" => (Metric::Bw, false),
            "bw_slope" => (Metric::Bw, true),
            "lat" | "lat_slope" => {
                return Err(format!("'{v}': latency criteria are fio 3.42's, not fio 3.33's: {expected}"))
            }
            _ => return Err(format!("'{name}' is not a steady-state criterion: {expected}")),
        };
        let unreadable = || format!("'{v}': the limit '{limit}' is not a number: {expected}");
        let (limit, percent) = match limit.split_once('%') {
            Some((number, _)) => (leading_float(number.trim_end()).ok_or_else(unreadable)?, true),
            None if metric == Metric::Iops => (leading_float(limit).ok_or_else(unreadable)?, false),
            None => (fsarena_workload::options::size(limit).map_err(|e| format!("'{v}': {e}"))? as f64, false),
        };
        Ok(Self { metric, slope, percent, limit })
    }

    /// fio's own text for it in its JSON (`"ss" : "iops:10.000000%"`): the limit as a C
    /// float with six decimals.
    pub fn fio_text(&self) -> String {
        let name = match (self.metric, self.slope) {
            (Metric::Iops, false) => "iops",
            (Metric::Iops, true) => "iops_slope",
            (Metric::Bw, false) => "bw",
            (Metric::Bw, true) => "bw_slope",
        };
        format!("{name}:{}{}", c_float(self.limit as f32 as f64), if self.percent { "%" } else { "" })
    }
}

/// The number at the start of `s`, as C's sscanf `%lf` reads it (leading blanks skipped, the
/// longest prefix that is a decimal number); `None` when there is none.
fn leading_float(s: &str) -> Option<f64> {
    let s = s.trim_start();
    let bytes = s.as_bytes();
    let mut end = 0;
    let mut seen_digit = false;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        end = 1;
    }
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
        seen_digit = true;
    }
    if end < bytes.len() && bytes[end] == b'.' {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
            seen_digit = true;
        }
    }
    if !seen_digit {
        return None;
    }
    // An exponent counts only when digits follow it (`1e` is 1, as for sscanf).
    if end < bytes.len() && matches!(bytes[end], b'e' | b'E') {
        let mut e = end + 1;
        if matches!(bytes.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        if bytes.get(e).is_some_and(u8::is_ascii_digit) {
            while e < bytes.len() && bytes[e].is_ascii_digit() {
                e += 1;
            }
            end = e;
        }
    }
    s[..end].parse().ok()
}

/// C's `%f`: six decimals, and glibc's words for what is not a number.
fn c_float(v: f64) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-inf" } else { "inf" }.to_string()
    } else {
        format!("{v:.6}")
    }
}

/// A job's steady-state settings, as fio's `td_steadystate_init` keeps them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// The criterion and its limit.
    pub criterion: Criterion,
    /// The window, in whole seconds (fio truncates `ss_dur`); at least 1.
    pub dur: usize,
    /// Samples begin one second after this many microseconds of the clone's run.
    pub ramp_us: u64,
}

impl Config {
    /// The job's settings, or `None` when `ss_dur` is under a second: fio then keeps none.
    pub fn of(o: &super::options::IoOptions) -> Option<Self> {
        let dur = (o.ss_dur.0 / 1_000_000_000) as usize;
        (dur > 0).then_some(Self { criterion: o.ss, dur, ramp_us: o.ss_ramp.0 / 1_000 })
    }
}

/// The last `dur` samples and fio's running sums over them (`struct steadystate_data`).
#[derive(Debug, Clone)]
pub(super) struct Window {
    c: Criterion,
    n: usize,
    iops: Vec<u64>,
    bw: Vec<u64>,
    head: usize,
    tail: usize,
    full: bool,
    sum_y: u64,
    sum_xy: u64,
    oldest_y: u64,
    sum_x: u64,
    sum_x_sq: u64,
    slope: f64,
    deviation: f64,
    criterion: f64,
}

impl Window {
    pub(super) fn new(c: Criterion, n: usize) -> Self {
        let m = n as u64;
        Self {
            c,
            n,
            iops: vec![0; n],
            bw: vec![0; n],
            head: 0,
            tail: 0,
            full: false,
            sum_y: 0,
            sum_xy: 0,
            oldest_y: 0,
            sum_x: m * (m - 1) / 2,
            sum_x_sq: (m - 1) * m * (2 * m - 1) / 6,
            slope: 0.0,
            deviation: 0.0,
            criterion: 0.0,
        }
    }

    fn y(&self, i: usize) -> u64 {
        match self.c.metric {
            Metric::Iops => self.iops[i],
            Metric::Bw => self.bw[i],
        }
    }

    /// Adds one second's sample; true when the criterion holds over the full window. The sums
    /// are fio's unsigned 64-bit ones, updated as fio updates them (wrapping where fio's wrap
    /// on the way to a right result).
    pub(super) fn push(&mut self, iops: u64, bw: u64) -> bool {
        let n = self.n;
        self.iops[self.tail] = iops;
        self.bw[self.tail] = bw;
        let new_val = self.y(self.tail);
        if self.full || self.tail.wrapping_sub(self.head) == n - 1 {
            if !self.full {
                self.sum_y = 0;
                for i in 0..n {
                    self.sum_y = self.sum_y.wrapping_add(self.y(i));
                    if self.c.slope {
                        let j = (self.head + i) % n;
                        self.sum_xy = self.sum_xy.wrapping_add((i as u64).wrapping_mul(self.y(j)));
                    }
                }
                self.full = true;
            } else {
                self.sum_y = self.sum_y.wrapping_sub(self.oldest_y).wrapping_add(new_val);
                if self.c.slope {
                    self.sum_xy = self.sum_xy.wrapping_sub(self.sum_y).wrapping_add((n as u64).wrapping_mul(new_val));
                }
            }
            self.oldest_y = self.y(self.head);
            if self.judge() {
                return true;
            }
        }
        self.tail = (self.tail + 1) % n;
        if self.tail == self.head {
            self.head = (self.head + 1) % n;
        }
        false
    }

    /// fio's verdict over the full window, which also sets the figures its JSON reports.
    fn judge(&mut self) -> bool {
        let n = self.n as f64;
        if self.c.slope {
            // Least squares with x = 0..n-1, as fio (samples taken to be a second apart).
            self.slope = (self.sum_xy as f64 - self.sum_x as f64 * self.sum_y as f64 / n)
                / (self.sum_x_sq as f64 - self.sum_x as f64 * self.sum_x as f64 / n);
            // fio divides by the mean in whole units (an integer division).
            self.criterion =
                if self.c.percent { 100.0 * self.slope / (self.sum_y / self.n as u64) as f64 } else { self.slope };
            self.criterion.abs() < self.c.limit
        } else {
            let mean = self.sum_y as f64 / n;
            self.deviation = 0.0;
            for i in 0..self.n {
                let diff = (self.y(i) as f64 - mean).abs();
                if diff > self.deviation {
                    self.deviation = diff;
                }
            }
            self.criterion = if self.c.percent { 100.0 * self.deviation / mean } else { self.deviation };
            self.criterion < self.c.limit
        }
    }

    /// The window as fio's JSON gives it (`show_thread_status_json`): oldest first when the
    /// window is not full or the criterion held; otherwise from the slot before `head`.
    fn ordered(&self, attained: bool, data: &[u64]) -> Vec<u64> {
        let n = self.n;
        let start = if attained || !self.full { self.head } else { (self.head + n - 1) % n };
        (0..n).map(|l| data[(start + l) % n]).collect()
    }

    /// fio's `"steadystate"` object's figures.
    pub(super) fn result(&self, attained: bool) -> SteadyStateResult {
        let mean = |d: &[u64]| d.iter().fold(0u64, |a, &v| a.wrapping_add(v)) / self.n as u64;
        SteadyStateResult {
            ss: self.c.fio_text(),
            duration: self.n as u64,
            attained,
            criterion: format!("{}{}", c_float(self.criterion as f32 as f64), if self.c.percent { "%" } else { "" }),
            max_deviation: self.deviation,
            slope: self.slope,
            bw_mean: mean(&self.bw),
            iops_mean: mean(&self.iops),
            iops: self.ordered(attained, &self.iops),
            bw: self.ordered(attained, &self.bw),
        }
    }
}

/// One clone's counters as the checker reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Reading {
    /// When the clone's measured phase began (CLOCK_MONOTONIC, ns); `None` before it did or
    /// after the clone ended (fio skips a job not running).
    pub epoch_ns: Option<u64>,
    /// I/Os completed in the measured phase, all directions (fio's `io_blocks`).
    pub ios: u64,
    /// Bytes moved by them (fio's `io_bytes`).
    pub bytes: u64,
}

/// One clone's steady-state state between checks.
#[derive(Debug, Clone)]
struct Member {
    ramp_over: bool,
    attained: bool,
    prev_ns: Option<u64>,
    prev_ios: u64,
    prev_bytes: u64,
    /// The samples: every clone's own, or under group_reporting the group's last clone's.
    window: Option<Window>,
}

/// fio's `steadystate_check` over one group of clones, all with the same settings (fio
/// refuses a group whose jobs differ).
#[derive(Debug, Clone)]
pub(super) struct Checker {
    config: Config,
    group_reporting: bool,
    members: Vec<Member>,
}

impl Checker {
    /// A checker for `clones` clones in fio's job order.
    pub(super) fn new(config: Config, clones: usize, group_reporting: bool) -> Self {
        let members = (0..clones)
            .map(|i| Member {
                ramp_over: config.ramp_us == 0,
                attained: false,
                prev_ns: None,
                prev_ios: 0,
                prev_bytes: 0,
                window: (!group_reporting || i + 1 == clones).then(|| Window::new(config.criterion, config.dur)),
            })
            .collect();
        Self { config, group_reporting, members }
    }

    /// One check at `now_ns`: samples the clones that run, judges, and returns the clones to
    /// end now.
    pub(super) fn check(&mut self, now_ns: u64, readings: &[Reading]) -> Vec<usize> {
        let (mut group_bw, mut group_iops, mut ramps_over) = (0u64, 0u64, 0u32);
        let mut stop = Vec::new();
        for (i, r) in readings.iter().enumerate().take(self.members.len()) {
            let m = &mut self.members[i];
            let Some(epoch) = r.epoch_ns else { continue };
            if m.attained {
                continue;
            }
            if !self.group_reporting {
                (group_bw, group_iops, ramps_over) = (0, 0, 0);
            }
            if !m.ramp_over && now_ns.saturating_sub(epoch) / 1_000 >= self.config.ramp_us + SECOND_US {
                m.ramp_over = true;
            }
            // fio's mtime_since: whole milliseconds, and never zero here (fio would divide by it).
            let rate_ms = (now_ns.saturating_sub(m.prev_ns.unwrap_or(epoch)) / 1_000_000).max(1);
            m.prev_ns = Some(now_ns);
            if m.ramp_over {
                group_bw = group_bw.wrapping_add(1000u64.wrapping_mul(r.bytes.wrapping_sub(m.prev_bytes)) / rate_ms);
                group_iops = group_iops.wrapping_add(1000u64.wrapping_mul(r.ios.wrapping_sub(m.prev_ios)) / rate_ms);
                ramps_over += 1;
            }
            (m.prev_ios, m.prev_bytes) = (r.ios, r.bytes);
            // Judged at the clone holding the samples, once one clone's ramp is over.
            let Some(window) = m.window.as_mut() else { continue };
            if ramps_over == 0 || !window.push(group_iops, group_bw) {
                continue;
            }
            if self.group_reporting {
                self.members.iter_mut().for_each(|m| m.attained = true);
                stop.extend(0..self.members.len());
            } else {
                self.members[i].attained = true;
                stop.push(i);
            }
        }
        stop
    }

    /// The `"steadystate"` object of clone `clone`'s result (under group_reporting, the
    /// group's: its last clone's).
    pub(super) fn result(&self, clone: usize) -> Option<SteadyStateResult> {
        let m = if self.group_reporting { self.members.last()? } else { self.members.get(clone)? };
        m.window.as_ref().map(|w| w.result(m.attained))
    }
}

/// The clock the clones and the checker share across processes.
pub(super) fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// One clone's published counters, on a cache line of its own (each clone writes its own
/// after every I/O).
#[repr(C, align(64))]
pub(crate) struct Slot {
    /// CLOCK_MONOTONIC ns when the measured phase began; 0 before.
    epoch_ns: AtomicU64,
    ios: AtomicU64,
    bytes: AtomicU64,
    exited: AtomicBool,
    /// Set by the checker: the criterion held, end the clone.
    stop: AtomicBool,
}

impl Slot {
    /// The measured phase begins now, its counts at zero.
    pub(super) fn begin(&self) {
        self.ios.store(0, Ordering::Relaxed);
        self.bytes.store(0, Ordering::Relaxed);
        self.epoch_ns.store(monotonic_ns().max(1), Ordering::Release);
    }
    /// The measured phase's counts so far (the clone is their only writer).
    #[inline]
    pub(super) fn publish(&self, ios: u64, bytes: u64) {
        self.ios.store(ios, Ordering::Relaxed);
        self.bytes.store(bytes, Ordering::Relaxed);
    }
    /// The clone's I/O is over.
    pub(super) fn end(&self) {
        self.exited.store(true, Ordering::Release);
    }
    /// True once the checker ended the clone.
    #[inline]
    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    fn read(&self) -> Reading {
        let epoch = self.epoch_ns.load(Ordering::Acquire);
        let running = epoch != 0 && !self.exited.load(Ordering::Acquire);
        Reading {
            epoch_ns: running.then_some(epoch),
            ios: self.ios.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

// SAFETY: only atomics, and all-zero is a valid slot (no phase begun, nothing counted).
unsafe impl super::shared::SharedZeroed for Slot {}

/// One [`Slot`] per clone, in a mapping shared with the job processes.
pub(crate) type Slots = super::shared::SharedArray<Slot>;

/// How long before the first clone's start fsarena's once-a-second checks are counted from:
/// the first check comes half a second into the run, the next a second later, and so on.
/// fio's helper thread counts from fio's own start, somewhat before its jobs begin (a tenth
/// of a second or two here, more when files are laid out): where its checks fall within a
/// job's seconds depends on that. Half a second keeps fsarena's away from the clones' whole
/// seconds, so that `ss_ramp` (checked against whole seconds of a clone's run) ends at the
/// same check in every run.
const CHECK_PHASE_NS: u64 = 500_000_000;

/// The watch's clock: when its checks are counted from, and how many were made.
#[derive(Debug, Default)]
struct Ticks {
    origin_ns: Option<u64>,
    done: u64,
}

/// One reporting group's checker: its clones (indices into the watch's slots, in fio's
/// order), the checker and its clock.
struct GroupWatch {
    clones: Vec<usize>,
    checker: std::sync::Mutex<(Checker, Ticks)>,
}

/// A stage's steady-state watch: the clones' slots and a checker per reporting group that
/// keeps a steady state (fio checks each group apart), run once a second by whoever waits
/// for the clones ([`Watch::poll`]).
pub(crate) struct Watch {
    slots: Slots,
    groups: Vec<GroupWatch>,
}

impl Watch {
    /// The watch of a stage whose clones (in fio's order) run `clones`' options, each with
    /// its reporting group (an index) and whether that group reports as one; `None` when no
    /// job of the stage keeps a steady state.
    pub(super) fn of(clones: &[(&super::options::IoOptions, usize, bool)]) -> Result<Option<Self>, String> {
        let mut groups = Vec::new();
        let count = clones.iter().map(|c| c.1 + 1).max().unwrap_or(0);
        for g in 0..count {
            let members: Vec<usize> = (0..clones.len()).filter(|&i| clones[i].1 == g).collect();
            let Some(&first) = members.first() else { continue };
            let (options, _, group_reporting) = clones[first];
            let Some(config) = Config::of(options) else { continue };
            let checker = Checker::new(config, members.len(), group_reporting);
            groups.push(GroupWatch { clones: members, checker: std::sync::Mutex::new((checker, Ticks::default())) });
        }
        if groups.is_empty() {
            return Ok(None);
        }
        let slots =
            Slots::zeroed(clones.len()).map_err(|e| format!("cannot share memory for the steady-state check: {e}"))?;
        Ok(Some(Self { slots, groups }))
    }

    /// Clone `i`'s slot.
    pub(crate) fn slot(&self, i: usize) -> Option<&Slot> {
        self.slots.get(i)
    }

    /// Runs each group's check if it is due (see [`CHECK_PHASE_NS`]); cheap otherwise.
    pub(crate) fn poll(&self) {
        let now = monotonic_ns();
        for group in &self.groups {
            let Ok(mut guard) = group.checker.lock() else { continue };
            let (checker, ticks) = &mut *guard;
            let slots: Vec<&Slot> = group.clones.iter().filter_map(|&i| self.slots.get(i)).collect();
            let origin = match ticks.origin_ns {
                Some(origin) => origin,
                None => {
                    // Counted from the group's first clone that began its measured phase.
                    let first = slots.iter().map(|s| s.epoch_ns.load(Ordering::Acquire)).filter(|&e| e != 0).min();
                    let Some(first) = first else { continue };
                    *ticks.origin_ns.insert(first.saturating_sub(1_000_000_000 - CHECK_PHASE_NS))
                }
            };
            if now < origin + (ticks.done + 1) * 1_000_000_000 {
                continue;
            }
            ticks.done = (now - origin) / 1_000_000_000;
            let readings: Vec<Reading> = slots.iter().map(|s| s.read()).collect();
            for i in checker.check(now, &readings) {
                if let Some(s) = slots.get(i) {
                    s.stop.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    /// The `"steadystate"` object of clone `clone`'s result (under group_reporting, its
    /// group's); None for a clone whose group keeps no steady state.
    pub(crate) fn result(&self, clone: usize) -> Option<SteadyStateResult> {
        let group = self.groups.iter().find(|g| g.clones.contains(&clone))?;
        let local = group.clones.iter().position(|&c| c == clone)?;
        group.checker.lock().ok()?.0.result(local)
    }
}

/// fio's `td_steadystate_init` check: the jobs of one group (fio's groupid: jobs between
/// `stonewall`/`new_group`) must keep the same steady state, or none.
pub(super) fn group_problem(group: &[&super::options::IoOptions]) -> Option<String> {
    let first = group.first()?;
    let mine = Config::of(first);
    group.iter().skip(1).find(|o| Config::of(o) != mine).map(|o| {
        format!(
            "job '{}' keeps another steady state than job '{}' of its group (ss, ss_dur, ss_ramp): fio refuses \
             the group; give every job of a group the same, or start a new group (new_group, stonewall)",
            o.name, first.name
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "steady_tests.rs"]
mod tests;
