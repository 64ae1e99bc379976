//! The compliance family: `posix`, pjdfstest-class named cases per syscall family, most of
//! them table lines read by one interpreter.

pub mod posix;
