//! fio's log lines computed as the samples come, one [`Stream`] per log file: per I/O, or
//! averaged over windows, or the histogram per window. Each needs only its open window, so a
//! clone's logs cost the same memory however long it runs; the text so far is handed out in
//! pieces ([`Stream::take_text`]) to be written, and the lines are exactly those the whole run's
//! samples would give at once (the samples of a clone come in completion order, their times
//! never decreasing).

use super::iolog::{bin_index, Sample, PLAT_BITS, PLAT_NR};
use std::fmt::Write as _;

/// What a log line's value is, from one sample (`None`: the sample has none, say a slat of a
/// synchronous engine's I/O, and takes no part in this log).
pub type Pick = fn(&Sample) -> Option<u64>;

/// How one log's lines are made.
#[derive(Debug)]
enum Kind {
    /// A latency-style log: a line per I/O (`avg_msec` 0), or per direction the mean of each
    /// window, stamped when the window closes (fio's `add_log_sample`).
    Value { avg_msec: u64, window: [(u128, u64); 2], last: [u64; 2] },
    /// A rate over whole windows (fio's `__add_samples`), divided by `unit`: the window open,
    /// and its amount per direction.
    Rate { avg_msec: u64, unit: u64, open: Option<(u64, [u64; 2])> },
    /// The clat histogram per window of `msec` (fio's `flush_hist_samples`), `stride` bins
    /// summed per field.
    Hist { msec: u64, stride: usize, bins: Box<[Vec<u64>; 2]>, last: [Option<u64>; 2] },
}

/// One log file's lines, made sample by sample.
#[derive(Debug)]
pub struct Stream {
    kind: Kind,
    pick: Pick,
    /// The lines made and not yet taken.
    text: String,
}

impl Stream {
    /// A latency-style log of `pick`: per I/O, or averaged over `avg_msec`.
    pub fn value(avg_msec: u64, pick: Pick) -> Self {
        Self::new(Kind::Value { avg_msec, window: [(0, 0); 2], last: [0; 2] }, pick)
    }

    /// A rate log of `pick` over `avg_msec` windows, in units of `unit` (1024: KiB/s).
    pub fn rate(avg_msec: u64, unit: u64, pick: Pick) -> Self {
        Self::new(Kind::Rate { avg_msec: avg_msec.max(1), unit: unit.max(1), open: None }, pick)
    }

    /// The histogram log, one line per direction and `msec` window (none when `msec` is 0).
    pub fn hist(msec: u64, coarseness: u32) -> Self {
        let bins = Box::new([vec![0u64; PLAT_NR], vec![0u64; PLAT_NR]]);
        let kind = Kind::Hist { msec, stride: 1usize << coarseness.min(PLAT_BITS), bins, last: [None; 2] };
        Self::new(kind, |s| Some(s.lat_ns))
    }

    fn new(kind: Kind, pick: Pick) -> Self {
        Self { kind, pick, text: String::new() }
    }

    /// Bytes of text made and not yet taken.
    pub fn pending(&self) -> usize {
        self.text.len()
    }

    /// The text made so far, leaving none.
    pub fn take_text(&mut self) -> String {
        std::mem::take(&mut self.text)
    }

    /// Adds one sample (in completion order).
    pub fn add(&mut self, s: &Sample) {
        let Some(value) = (self.pick)(s) else { return };
        let text = &mut self.text;
        let d = s.dir as usize & 1;
        let t = s.time_ns / 1_000_000;
        match &mut self.kind {
            Kind::Value { avg_msec: 0, .. } => {
                let _ = writeln!(text, "{t}, {value}, {}, {}, 0", s.dir, s.bytes);
            }
            Kind::Value { avg_msec, window, last } => {
                window[d].0 += u128::from(value);
                window[d].1 += 1;
                if t >= last[d] + *avg_msec {
                    mean_line(text, t, d, &mut window[d]);
                    last[d] = t - t % *avg_msec;
                }
            }
            Kind::Rate { avg_msec, unit, open } => {
                let w = t / *avg_msec;
                match open {
                    // A later window: the open one is whole (a sample came after its end).
                    Some((at, sums)) if w > *at => {
                        rate_lines(text, *at, sums, *avg_msec, *unit);
                        let mut fresh = [0u64; 2];
                        fresh[d] = value;
                        *open = Some((w, fresh));
                    }
                    Some((_, sums)) => sums[d] += value,
                    None => {
                        let mut fresh = [0u64; 2];
                        fresh[d] = value;
                        *open = Some((w, fresh));
                    }
                }
            }
            Kind::Hist { msec: 0, .. } => {}
            Kind::Hist { msec, stride, bins, last } => {
                bins[d][bin_index(value)] += 1;
                let since = *last[d].get_or_insert(t);
                let window = t - since;
                if window >= *msec {
                    let _ = write!(text, "{t}, {d}, {}", s.bytes);
                    for chunk in bins[d].chunks(*stride) {
                        let _ = write!(text, ", {}", chunk.iter().sum::<u64>());
                    }
                    text.push('\n');
                    bins[d].iter_mut().for_each(|b| *b = 0);
                    // fio keeps the drift: the next window starts where this one should have ended.
                    last[d] = Some(t - (window - *msec));
                }
            }
        }
    }

    /// The measured phase ended `end_ns` after it began: what fio writes at the end (the
    /// means of the windows still open; a rate window only if the job filled it).
    pub fn end(&mut self, end_ns: u64) {
        let end = end_ns / 1_000_000;
        let text = &mut self.text;
        match &mut self.kind {
            Kind::Value { avg_msec: 0, .. } | Kind::Hist { .. } => {}
            Kind::Value { window, .. } => {
                for (d, w) in window.iter_mut().enumerate() {
                    mean_line(text, end, d, w);
                }
            }
            Kind::Rate { avg_msec, unit, open } => {
                // fio's sampling thread never closes a window the job did not fill.
                if let Some((at, sums)) = open.take().filter(|(at, _)| *at < end / *avg_msec) {
                    rate_lines(text, at, &sums, *avg_msec, *unit);
                }
            }
        }
    }
}

/// fio's averaged line: the window's mean, rounded, stamped `t`; nothing for an empty window.
fn mean_line(text: &mut String, t: u64, d: usize, w: &mut (u128, u64)) {
    if w.1 > 0 {
        let mean = (w.0 as f64 / w.1 as f64 + 0.5) as u64;
        let _ = writeln!(text, "{t}, {mean}, {d}, 0, 0");
    }
    *w = (0, 0);
}

/// The lines of rate window `w`: per direction that moved anything, the amount per second
/// in `unit`s, stamped at the window's end, block size 0.
fn rate_lines(text: &mut String, w: u64, sums: &[u64; 2], avg_msec: u64, unit: u64) {
    let stop = (w + 1) * avg_msec;
    for (d, &amount) in sums.iter().enumerate() {
        if amount > 0 {
            let _ = writeln!(text, "{stop}, {}, {d}, 0, 0", amount * 1000 / avg_msec / unit);
        }
    }
}
