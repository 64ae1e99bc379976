//! fsarena's integration tests: the real binary against real filesystems and real fio.
//! Run as root (`make test`): the tests mount, format and attach loop devices.

// Test code: a failed unwrap is a failed test with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod bad_input;
mod crash;
mod dbench;
mod demo;
mod engines;
mod exec;
mod experiment;
mod faults;
mod filebench;
mod fio_corpus;
mod fio_crosscheck;
mod fio_dedupe;
mod fio_examples;
mod fio_tools;
mod flags;
mod glusterfs;
mod help;
mod hold;
mod hostile;
#[cfg(feature = "mpi")]
mod hosts;
mod io_runs;
mod kv;
mod latency;
mod meta;
#[cfg(feature = "mpi")]
mod mpi;
mod noio;
mod posix;
mod postmark;
mod progress;
mod rate;
mod reports;
mod results;
mod servers;
mod sqlite;
mod steadystate;
mod suites;
mod targets;
mod tiers;
mod tree;
mod verify;
