//! Statistics: the mergeable latency histogram, summaries of samples and series, and
//! run-to-run summaries and A/B significance tests.

mod compare;
mod ratio;
mod series;
mod summary;

pub use compare::{welch, Comparison};
/// The mergeable latency histogram; defined in `fsarena_core` so that a `Measurement` can
/// merge exactly (see its error bound there).
pub use fsarena_core::LatencyHistogram;
pub use ratio::{
    center, contrast, factor_text, p_text, ratio, Method, Ratio, Reading, Untold, ALPHA, MAX_SPREAD, MIN_REPETITIONS,
};
pub use series::{summarize_series, IntervalCounter};
pub use summary::{mad_outliers, summarize, Summary, OUTLIER_THRESHOLD};
