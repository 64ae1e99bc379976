//! The hostile suite: fsarena played as an attacker would play it (issue 8). Bad inputs must
//! exit 2 with one clear line and create nothing; objects planted at every predictable path
//! and state files naming things outside the work directory must leave every foreign byte and
//! mount intact; signals, PID reuse, busy mounts and failing stores must leave nothing of
//! fsarena's behind once `fsarena cleanup` has run, and never exit 0 when results were lost.
//!
//! Everything happens in scratch directories of the tests' own under
//! `/var/tmp/fsarena-hostile-*` (see [`harness::Arena`]), undone on drop.

mod evidence;
mod harness;
mod table;

mod scene;

mod daemons;
mod devices;
mod host;
mod inputs;
mod jobfiles;
mod names_and_bombs;
mod planted;
mod planted_state;
mod reads;
mod servers;
mod signals;
mod specs;
mod store;
