//! fsarena's integration tests: the real binary against real filesystems and real fio.
//! Run as root (`make test`): the tests mount, format and attach loop devices.

// Test code: a failed unwrap is a failed test with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod bad_input;
mod engines;
mod experiment;
mod faults;
mod fio_corpus;
mod fio_crosscheck;
mod fio_tools;
mod help;
mod hostile;
mod io_runs;
mod latency;
mod meta;
mod progress;
mod reports;
mod results;
mod targets;
mod tree;
