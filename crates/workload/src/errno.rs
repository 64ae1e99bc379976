//! Errno names, as the POSIX cases and fsx's refusals print them (`ENOENT`): one table for
//! every family that names an errno in its results.

use rustix::io::Errno;

/// The symbolic name of an errno (`ENOENT`), or `errno N` for one not in the table.
pub fn name(e: Errno) -> String {
    NAMES.iter().find(|(x, _)| *x == e).map_or_else(|| format!("errno {}", e.raw_os_error()), |(_, n)| (*n).to_string())
}

/// The errno named `name` (`ENOENT`), of those in the table.
pub fn errno(name: &str) -> Option<Errno> {
    NAMES.iter().find(|(_, n)| *n == name).map(|(e, _)| *e)
}

/// The errnos the cases provoke or may meet, by name.
const NAMES: &[(Errno, &str)] = &[
    (Errno::PERM, "EPERM"),
    (Errno::NOENT, "ENOENT"),
    (Errno::IO, "EIO"),
    (Errno::NXIO, "ENXIO"),
    (Errno::TOOBIG, "E2BIG"),
    (Errno::BADF, "EBADF"),
    (Errno::AGAIN, "EAGAIN"),
    (Errno::NOMEM, "ENOMEM"),
    (Errno::ACCESS, "EACCES"),
    (Errno::FAULT, "EFAULT"),
    (Errno::BUSY, "EBUSY"),
    (Errno::EXIST, "EEXIST"),
    (Errno::XDEV, "EXDEV"),
    (Errno::NODEV, "ENODEV"),
    (Errno::NOTDIR, "ENOTDIR"),
    (Errno::ISDIR, "EISDIR"),
    (Errno::INVAL, "EINVAL"),
    (Errno::NFILE, "ENFILE"),
    (Errno::MFILE, "EMFILE"),
    (Errno::NOTTY, "ENOTTY"),
    (Errno::TXTBSY, "ETXTBSY"),
    (Errno::FBIG, "EFBIG"),
    (Errno::NOSPC, "ENOSPC"),
    (Errno::SPIPE, "ESPIPE"),
    (Errno::ROFS, "EROFS"),
    (Errno::MLINK, "EMLINK"),
    (Errno::RANGE, "ERANGE"),
    (Errno::NAMETOOLONG, "ENAMETOOLONG"),
    (Errno::NOSYS, "ENOSYS"),
    (Errno::NOTEMPTY, "ENOTEMPTY"),
    (Errno::LOOP, "ELOOP"),
    (Errno::NODATA, "ENODATA"),
    (Errno::OVERFLOW, "EOVERFLOW"),
    (Errno::OPNOTSUPP, "EOPNOTSUPP"),
    (Errno::DQUOT, "EDQUOT"),
    (Errno::STALE, "ESTALE"),
    (Errno::NOTSUP, "ENOTSUP"),
];
