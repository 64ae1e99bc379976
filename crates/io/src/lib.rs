//! The data family: `io`, fio-class (options, job files, engines' hot loop, verify blocks),
//! and `dd`'s sequential copies.

pub mod dd;
pub mod io;
