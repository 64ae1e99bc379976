//! rmdir(2): POSIX.1-2017 rmdir() and the Linux man page. Removes an empty directory: the
//! parent loses a link and its mtime and ctime are marked for update; `.` as the last
//! component is EINVAL, a non-empty directory EEXIST or ENOTEMPTY (Linux: ENOTEMPTY), and the
//! path errors every path-taking call shares.

use super::RustCase;

/// The rmdir family.
pub static CASES: &[RustCase] = &[];
