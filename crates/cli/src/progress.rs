//! What a run tells people while it runs, on stderr: on a terminal one live status line
//! (position in the plan, current rate, elapsed, ETA) with events printed above it; otherwise,
//! or with `--log`, one plain line per event; with `-q` nothing but errors. Warnings are
//! collected and printed once at the end, in every mode.
//!
//! Locking: the status line's rate and clock are computed by indicatif's draw (its steady
//! tick, every [`TICK`]), which holds the bar's lock and then takes [`Shared::state`]. So no
//! method here calls the bar while holding `state`: the lock order is always bar, then state.

use crate::output::say;
use crate::warnings::{Unstable, Warnings};
use fsarena_core::printable;
use fsarena_workload::{Live, LiveSample};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often the status line is redrawn and the live counter sampled.
const TICK: Duration = Duration::from_millis(500);

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One live status line (stderr is a terminal).
    Bar,
    /// One plain `fsarena: ...` line per event (`--log`, or stderr is not a terminal).
    Log,
    /// Nothing but errors and the final warnings (`-q`).
    Quiet,
}

impl Mode {
    /// `-q` wins over `--log`; without either, the live line when stderr is a terminal.
    pub fn choose(quiet: bool, log: bool) -> Self {
        if quiet {
            Mode::Quiet
        } else if log || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            Mode::Log
        } else {
            Mode::Bar
        }
    }
}

/// Where one repetition is in the plan; counts are 1-based, as shown.
#[derive(Debug, Clone, Default)]
pub struct Position {
    /// This target, of `targets`.
    pub target: usize,
    /// Targets in the plan.
    pub targets: usize,
    /// The target's label (user text).
    pub label: String,
    /// This workload, of `workloads`.
    pub workload: usize,
    /// Workloads in the plan.
    pub workloads: usize,
    /// The workload's kind (`io`).
    pub kind: String,
    /// This sweep point, of `points`.
    pub point: usize,
    /// Points of this workload's sweep (1 when nothing is swept).
    pub points: usize,
    /// The point's values (`numjobs=4 rw=read`); empty when nothing is swept.
    pub values: String,
    /// This round, 0-based, of `warmup + repeat`: warm-ups first.
    pub round: u32,
    /// Discarded warm-up rounds.
    pub warmup: u32,
    /// Measured repetitions.
    pub repeat: u32,
}

impl Position {
    /// `target 1/2 · workload 1/3 · point 2/4 · repetition 2/3: ext4 · io numjobs=4`: the
    /// counts first, so that a narrow terminal cuts the names (a `dir:` label is a path), not
    /// the position; on 80 columns the counts fit beside the rate and clock. The point is left
    /// out when nothing is swept; a warm-up (discarded) says `warm-up 1/1`.
    pub fn text(&self) -> String {
        let mut out =
            format!("target {}/{} · workload {}/{}", self.target, self.targets, self.workload, self.workloads);
        if self.points > 1 {
            let _ = write!(out, " · point {}/{}", self.point, self.points);
        }
        let _ = write!(out, " · {}", self.round_label());
        let _ = write!(out, ": {} · {}", self.label, self.kind);
        if self.points > 1 {
            let _ = write!(out, " {}", self.values);
        }
        out
    }

    /// `repetition 2/3`, or `warm-up 1/1` for a warm-up.
    pub fn round_label(&self) -> String {
        if self.round < self.warmup {
            format!("warm-up {}/{}", self.round + 1, self.warmup)
        } else {
            format!("repetition {}/{}", self.round - self.warmup + 1, self.repeat)
        }
    }

    /// Whether this round is measured (not a warm-up).
    pub fn measured(&self) -> bool {
        self.round >= self.warmup
    }
}

/// Every round of the run in order (target by target, step by step, warm-ups first), with
/// how long each takes where the workload's options fix it.
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    rounds: Vec<Option<Duration>>,
    /// From round `i` on: the known durations summed, and how many are unknown.
    after: Vec<(Duration, usize)>,
}

impl Schedule {
    /// `steps` holds each step's estimate; every target runs every step `rounds` times.
    #[cfg(test)]
    pub fn new(targets: usize, steps: &[Option<Duration>], rounds: u32) -> Self {
        let steps: Vec<(Option<Duration>, u32)> = steps.iter().map(|&e| (e, rounds)).collect();
        Self::of_pairs(targets, &steps, |_, _| false)
    }

    /// As [`Schedule::new`], each step with its own number of rounds (a check runs once), and
    /// without the (target, step) pairs `skipped` says the run skips (a workload a target's
    /// kind cannot run, clients a cluster does not have).
    pub fn of_pairs(targets: usize, steps: &[(Option<Duration>, u32)], skipped: impl Fn(usize, usize) -> bool) -> Self {
        let mut rounds: Vec<Option<Duration>> = Vec::new();
        for t in 0..targets {
            for (s, &(e, n)) in steps.iter().enumerate() {
                if !skipped(t, s) {
                    rounds.extend(std::iter::repeat_n(e, n as usize));
                }
            }
        }
        let mut after = vec![(Duration::ZERO, 0); rounds.len() + 1];
        for i in (0..rounds.len()).rev() {
            let (known, unknown) = after[i + 1];
            after[i] = match rounds[i] {
                Some(d) => (known + d, unknown),
                None => (known, unknown + 1),
            };
        }
        Self { rounds, after }
    }

    /// The known durations summed, and how many rounds have none.
    pub fn total(&self) -> (Duration, usize) {
        self.after.first().copied().unwrap_or_default()
    }

    /// Time left when `done` rounds are over and the next has run for `in_round`, `elapsed`
    /// since the start. From the estimates when every round left has one (the current one
    /// counts what is left of it); otherwise from the mean time of the rounds done so far.
    /// `None` before anything can be said, and when nothing is left.
    pub fn eta(&self, done: usize, in_round: Duration, elapsed: Duration) -> Option<Duration> {
        if done >= self.rounds.len() {
            return None;
        }
        if self.after[done].1 == 0 {
            let current = self.rounds[done].unwrap_or_default().saturating_sub(in_round);
            return Some(self.after[done + 1].0 + current);
        }
        if done == 0 {
            return None;
        }
        let per_round = elapsed.saturating_sub(in_round) / done as u32;
        Some((per_round * (self.rounds.len() - done) as u32).saturating_sub(in_round))
    }
}

/// The line printed before a run starts: its size and how long it should take.
/// `16 steps × 2 targets × (1+3) repetitions, about 4m20s`.
pub fn plan_line(steps: usize, targets: usize, warmup: u32, repeat: u32, total: (Duration, usize)) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let rounds =
        if warmup > 0 { format!("({warmup}+{repeat}) repetitions") } else { plural(repeat as usize, "repetition") };
    format!("plan: {} × {} × {rounds}, {}", plural(steps, "step"), plural(targets, "target"), duration_text(total))
}

/// `about 4m20s`; `at least 5.0s (...)` when some rounds have no estimate; or why none can be
/// given. `total` is [`Schedule::total`].
pub fn duration_text(total: (Duration, usize)) -> String {
    match total {
        (known, 0) => format!("about {}", human_duration(known)),
        (known, _) if known > Duration::ZERO => {
            format!("at least {} (some steps run until their work is done)", human_duration(known))
        }
        _ => "duration not known beforehand (no step has a fixed runtime)".to_string(),
    }
}

pub use fsarena_core::text::human_duration;

/// The current rate as the status line shows it: bytes for data I/O (`1.2GiB/s`), operations
/// for metadata (`312 ops/s`); one figure, to leave the line's width to the position. Empty
/// when nothing completed since the last sample.
pub fn rate_text(ops_per_second: f64, bytes_per_second: f64) -> String {
    use fsarena_core::units::{format_count, format_iec};
    if ops_per_second <= 0.0 {
        String::new()
    } else if bytes_per_second > 0.0 {
        format!("{}/s", format_iec(bytes_per_second))
    } else {
        format!("{} ops/s", format_count(ops_per_second))
    }
}

/// The rate between the two latest samples of the live counter, taken at most once a tick
/// however often the line is drawn.
#[derive(Debug, Default)]
struct RateMeter {
    last: Option<(Instant, LiveSample)>,
    shown: String,
}

impl RateMeter {
    fn sample(&mut self, now: Instant, sample: LiveSample) -> &str {
        match self.last {
            Some((at, before)) => {
                let secs = now.duration_since(at).as_secs_f64();
                if secs >= TICK.as_secs_f64() * 0.8 {
                    let per_second = |a: u64, b: u64| a.saturating_sub(b) as f64 / secs;
                    self.shown = rate_text(per_second(sample.ops, before.ops), per_second(sample.bytes, before.bytes));
                    self.last = Some((now, sample));
                }
            }
            None => self.last = Some((now, sample)),
        }
        &self.shown
    }
}

/// What the run's threads and the status line's draw share.
#[derive(Debug)]
struct Shared {
    live: Live,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    schedule: Schedule,
    started: Instant,
    round_started: Instant,
    /// Rounds over.
    done: usize,
    rate: RateMeter,
    warnings: Warnings,
}

impl Shared {
    /// The state, even after a thread panicked holding it (it holds only display figures).
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// ` · 1.2GiB/s`, or nothing while idle.
    fn rate(&self) -> String {
        let sample = self.live.sample();
        let mut state = self.state();
        let text = state.rate.sample(Instant::now(), sample);
        if text.is_empty() {
            String::new()
        } else {
            format!(" · {text}")
        }
    }

    /// ` · 1m05s, ETA 3m10s`.
    fn clock(&self) -> String {
        let state = self.state();
        let now = Instant::now();
        let elapsed = now.duration_since(state.started);
        let eta = state.schedule.eta(state.done, now.duration_since(state.round_started), elapsed);
        match eta {
            Some(left) => format!(" · {}, ETA {}", human_duration(elapsed), human_duration(left)),
            None => format!(" · {}", human_duration(elapsed)),
        }
    }
}

/// A run's progress display and warning collector; cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct Progress {
    mode: Mode,
    bar: ProgressBar,
    shared: Arc<Shared>,
    /// The status line is gone: later lines go straight to stderr.
    finished: Arc<AtomicBool>,
}

impl Progress {
    /// A display for a run of `schedule`; the live line draws on stderr.
    pub fn new(mode: Mode, schedule: Schedule) -> Self {
        Self::with_target(mode, schedule, ProgressDrawTarget::stderr())
    }

    /// As [`Progress::new`], drawing the live line on `target` (hidden in tests).
    pub fn with_target(mode: Mode, schedule: Schedule, target: ProgressDrawTarget) -> Self {
        let now = Instant::now();
        let shared = Arc::new(Shared {
            live: Live::new(),
            state: Mutex::new(State {
                schedule,
                started: now,
                round_started: now,
                done: 0,
                rate: RateMeter::default(),
                warnings: Warnings::default(),
            }),
        });
        let bar = if mode == Mode::Bar {
            let bar = ProgressBar::with_draw_target(None, target);
            let (rate, clock) = (Arc::clone(&shared), Arc::clone(&shared));
            // The template is a constant: a parse error is a bug, and the plain spinner stands in.
            let style = ProgressStyle::with_template("{spinner} {wide_msg}{rate}{clock}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner())
                .with_key("rate", move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&rate.rate());
                })
                .with_key("clock", move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&clock.clock());
                });
            bar.set_style(style);
            bar.set_message("starting");
            bar.enable_steady_tick(TICK);
            bar
        } else {
            ProgressBar::hidden()
        };
        Self { mode, bar, shared, finished: Arc::new(AtomicBool::new(false)) }
    }

    /// The counter workloads add their completed operations to (`RunEnv::live`).
    pub fn live(&self) -> &Live {
        &self.shared.live
    }

    /// An event (`provisioning ext4`, `laid out 1.0GiB`): above the live line, as a plain line,
    /// or nowhere with `-q`. Text starting `warning: ` is kept for the end instead.
    pub fn event(&self, text: &str) {
        if let Some(warning) = text.strip_prefix("warning: ") {
            self.warn(warning);
        } else if self.mode != Mode::Quiet {
            self.line(&format!("fsarena: {}", printable(text)));
        }
    }

    /// A line shown in every mode, `-q` included: what the user must act on (a kept state
    /// file to clean up).
    pub fn notice(&self, text: &str) {
        self.line(&format!("fsarena: {}", printable(text)));
    }

    fn line(&self, line: &str) {
        if self.mode == Mode::Bar && !self.finished.load(Ordering::SeqCst) {
            self.bar.println(line);
        } else {
            say!("{line}");
        }
    }

    /// A warning, printed once at the end.
    pub fn warn(&self, text: &str) {
        self.shared.state().warnings.note(text);
    }

    /// An unstable result, folded with the others into one warning at the end.
    pub fn unstable(&self, u: Unstable) {
        self.shared.state().warnings.add_unstable(u);
    }

    /// A round begins at `position`.
    pub fn start_round(&self, position: &Position) {
        self.shared.state().round_started = Instant::now();
        match self.mode {
            Mode::Bar => self.bar.set_message(printable(&position.text()).into_owned()),
            Mode::Log => say!("fsarena: {}", printable(&position.text())),
            Mode::Quiet => {}
        }
    }

    /// The round begun last is over.
    pub fn end_round(&self) {
        let mut state = self.shared.state();
        state.done += 1;
        state.round_started = Instant::now();
    }

    /// Removes the live line, for good; later lines go straight to stderr. Called before the
    /// report is printed and by the signal handler before its own lines.
    pub fn finish(&self) {
        if !self.finished.swap(true, Ordering::SeqCst) {
            self.bar.finish_and_clear();
        }
    }

    /// Removes the live line and prints the warnings collected, in every mode; they are then
    /// gone, so a second call prints nothing.
    pub fn print_warnings(&self) {
        self.finish();
        let lines = std::mem::take(&mut self.shared.state().warnings).lines();
        for line in lines {
            say!("fsarena: warning: {}", printable(&line));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn position(round: u32, points: usize) -> Position {
        Position {
            target: 1,
            targets: 2,
            label: "ext4".into(),
            workload: 1,
            workloads: 3,
            kind: "io".into(),
            point: 2,
            points,
            values: "numjobs=4".into(),
            round,
            warmup: 1,
            repeat: 3,
        }
    }

    #[test]
    fn the_position_names_target_workload_point_and_repetition() {
        assert_eq!(
            position(2, 4).text(),
            "target 1/2 · workload 1/3 · point 2/4 · repetition 2/3: ext4 · io numjobs=4"
        );
        assert_eq!(position(0, 4).text(), "target 1/2 · workload 1/3 · point 2/4 · warm-up 1/1: ext4 · io numjobs=4");
        assert!(!position(0, 4).measured() && position(1, 4).measured());
        // Nothing swept: no point.
        assert_eq!(position(3, 1).text(), "target 1/2 · workload 1/3 · repetition 3/3: ext4 · io");
    }

    #[test]
    fn the_plan_line_gives_size_and_duration() {
        let s = |secs| Duration::from_secs(secs);
        assert_eq!(plan_line(16, 2, 1, 3, (s(260), 0)), "plan: 16 steps × 2 targets × (1+3) repetitions, about 4m20s");
        assert_eq!(
            plan_line(1, 1, 0, 1, (s(5), 2)),
            "plan: 1 step × 1 target × 1 repetition, at least 5.0s (some steps run until their work is done)"
        );
        assert_eq!(
            plan_line(2, 1, 0, 3, (Duration::ZERO, 6)),
            "plan: 2 steps × 1 target × 3 repetitions, duration not known beforehand (no step has a fixed runtime)"
        );
    }

    #[test]
    fn durations_read_as_people_write_them() {
        let cases = [
            (0.25, "250ms"),
            (4.2, "4.2s"),
            (9.97, "10s"),
            (59.7, "1m00s"),
            (42.0, "42s"),
            (260.0, "4m20s"),
            (3900.0, "1h05m"),
        ];
        for (secs, text) in cases {
            assert_eq!(human_duration(Duration::from_secs_f64(secs)), text);
        }
    }

    #[test]
    fn a_schedule_counts_every_round_of_every_target() {
        let s = Schedule::new(2, &[Some(Duration::from_secs(10)), None], 4);
        assert_eq!(s.rounds.len(), 2 * 2 * 4);
        assert_eq!(s.total(), (Duration::from_secs(2 * 4 * 10), 2 * 4));
    }

    #[test]
    fn a_skipped_pair_has_no_rounds() {
        let steps = [(Some(Duration::from_secs(10)), 3), (Some(Duration::from_secs(5)), 1)];
        // The first step skipped on the second target: 10 10 10 5 | 5.
        let s = Schedule::of_pairs(2, &steps, |t, s| (t, s) == (1, 0));
        assert_eq!(s.rounds.len(), 5);
        assert_eq!(s.total(), (Duration::from_secs(40), 0));
    }

    #[test]
    fn the_eta_comes_from_estimates_when_all_are_known() {
        let s = Schedule::new(2, &[Some(Duration::from_secs(10)), Some(Duration::from_secs(5))], 2);
        // Rounds: 10 10 5 5 | 10 10 5 5.
        let eta = |done, in_round| s.eta(done, Duration::from_secs(in_round), Duration::from_secs(999));
        assert_eq!(eta(0, 0), Some(Duration::from_secs(60)));
        assert_eq!(eta(0, 4), Some(Duration::from_secs(56)), "what is left of the current round");
        assert_eq!(eta(0, 30), Some(Duration::from_secs(50)), "an overrunning round counts as done");
        assert_eq!(eta(3, 0), Some(Duration::from_secs(35)));
        assert_eq!(eta(8, 0), None, "nothing left");
    }

    #[test]
    fn the_eta_comes_from_rounds_done_when_some_are_unknown() {
        let s = Schedule::new(1, &[None, Some(Duration::from_secs(10))], 2);
        assert_eq!(s.eta(0, Duration::from_secs(1), Duration::from_secs(1)), None, "nothing to go by yet");
        // Two rounds took 20 s: 10 s each, two left, 3 s into the third.
        assert_eq!(s.eta(2, Duration::from_secs(3), Duration::from_secs(23)), Some(Duration::from_secs(17)));
        // Only known rounds left: the estimates again.
        let s = Schedule::new(1, &[None, Some(Duration::from_secs(10))], 1);
        assert_eq!(s.eta(1, Duration::from_secs(3), Duration::from_secs(50)), Some(Duration::from_secs(7)));
    }

    #[test]
    fn the_rate_shows_bytes_and_operations_or_operations_alone() {
        assert_eq!(rate_text(0.0, 0.0), "");
        assert_eq!(rate_text(312.0, 0.0), "312 ops/s");
        assert_eq!(rate_text(300_000.0, 300_000.0 * 4096.0), "1.1GiB/s");
    }

    #[test]
    fn the_rate_is_sampled_at_most_once_a_tick() {
        let mut m = RateMeter::default();
        let t0 = Instant::now();
        assert_eq!(m.sample(t0, LiveSample { ops: 0, bytes: 0 }), "", "one sample is no rate");
        assert_eq!(m.sample(t0 + Duration::from_millis(100), LiveSample { ops: 5, bytes: 0 }), "", "too soon");
        let one_second = m.sample(t0 + Duration::from_secs(1), LiveSample { ops: 500, bytes: 0 }).to_string();
        assert_eq!(one_second, "500 ops/s");
        // Drawn again at once: the same figure, not a rate over a few microseconds.
        assert_eq!(m.sample(t0 + Duration::from_millis(1001), LiveSample { ops: 900, bytes: 0 }), "500 ops/s");
        assert_eq!(m.sample(t0 + Duration::from_secs(2), LiveSample { ops: 500, bytes: 0 }), "", "idle");
    }

    #[test]
    fn the_live_line_keeps_warnings_for_the_end_and_survives_threads() {
        let schedule = Schedule::new(1, &[Some(Duration::from_secs(1))], 2);
        let p = Progress::with_target(Mode::Bar, schedule, ProgressDrawTarget::hidden());
        std::thread::scope(|s| {
            for _ in 0..4 {
                let p = p.clone();
                s.spawn(move || {
                    for _ in 0..100 {
                        p.live().add(1, 4096);
                        p.event("warning: not root, so the page cache is not dropped");
                        p.event("laid out 1.0MiB");
                    }
                });
            }
            s.spawn(|| {
                p.start_round(&position(1, 4));
                p.end_round();
            });
        });
        assert_eq!(p.live().sample().ops, 400);
        assert_eq!(p.shared.state().warnings.lines(), vec!["not root, so the page cache is not dropped".to_string()]);
        assert_eq!(p.shared.clock().matches("ETA").count(), 1, "one round of two left: {}", p.shared.clock());
        p.finish();
        p.finish();
    }
}
