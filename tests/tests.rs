//! fsarena's integration tests: the real binary against real filesystems and real fio.
//! Run as root (`make test`): some tests mount a small tmpfs.

mod util;

mod bad_input;
mod faults;
mod fio_crosscheck;
mod io_runs;
