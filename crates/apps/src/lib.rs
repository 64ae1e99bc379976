//! The application family: `filebench`'s workload model language, `postmark`, `dbench`'s
//! load files, and `exec`, which times a command or a builtin in the target.

pub mod dbench;
pub mod exec;
pub mod filebench;
pub mod postmark;
