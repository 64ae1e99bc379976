//! Statistics: the mergeable latency histogram, summaries of samples and series, and
//! run-to-run summaries and A/B significance tests.

mod compare;
mod histogram;
mod series;
mod summary;

pub use compare::{verdict, welch, Comparison, Verdict};
pub use histogram::LatencyHistogram;
pub use series::{summarize_series, IntervalCounter};
pub use summary::{mad_outliers, summarize, Summary, OUTLIER_THRESHOLD};
