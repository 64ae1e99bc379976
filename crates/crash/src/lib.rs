//! The correctness family: `crash` (crash consistency, recorded below the filesystem by the
//! recorder in fsarena-target; the oracle's rule, `durable_at`, and the checkers' rules live
//! here) and `verify` (fsx's single-file model, every byte checked).

pub mod crash;
pub mod verify;
