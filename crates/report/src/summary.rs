//! Run-to-run summaries come from the stats crate; this re-export keeps the report modules'
//! paths short.

pub(crate) use fsarena_stats::{summarize, Summary};
