//! Statistics: the mergeable latency histogram and summaries of samples and series.

mod histogram;
mod series;

pub use histogram::LatencyHistogram;
pub use series::{summarize_series, IntervalCounter};
