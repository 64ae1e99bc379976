//! Real servers on the filesystem under test — PostgreSQL for `pgbench`, MariaDB for
//! `sysbench`, nginx for `http` — and their lifetime, shared by the three workloads.
//!
//! A server is a tenant of its target, not of the machine: it runs as the account its Debian
//! package created (never one fsarena makes), with its data directory in the target and its
//! run directory (socket, PID file, log) under the run's directory in /run/fsarena, both 0700
//! and owned by that account. Everything is recorded through the runner's [`Host`] — the data
//! and run directories right after they are made, the server's PID and start time right after
//! it is spawned and before it is waited on — so that teardown, or `fsarena cleanup` after a
//! killed run, stops the server (fast shutdown, a bounded wait, then every process of its
//! tree killed) before the target is unmounted.
//!
//! The account is an attacker: any process running as `postgres`, `mysql` or `www-data` can
//! change what is in the directories that account owns at any moment. So fsarena keeps
//! nothing of its own there (its markers live in the [`Host`]'s memory, its files and its
//! clients' files in a root-owned run directory of its own, [`dirs::RoundDirs`]), and reaches
//! what it must open there (a server's log) only beneath a directory descriptor it holds,
//! with no link followed, never blocking on a FIFO, checked to be a regular file of the
//! account, and read with a cap ([`dirs::ServerLog`]).
//!
//! Lifetime across rounds (the seam in the runner is [`Host`]): the data directory is named
//! after the workload's server keys (`pgbench-<hash>`), initialised and loaded once (untimed,
//! then marked loaded in the host's memory) and left recorded with the host, which removes it
//! when the target is torn down; so every repetition and every sweep point with the same
//! server keys (client keys: `client`, `threads`, `time`, ...) reuses it. Each round starts the
//! server afresh on it, drops the caches, measures, and shuts the server down cleanly.
//!
//! That lifetime is written once, in [`round::run`]; each workload fills in what is its own
//! through [`round::Server`]: its names, server keys, load, command line, readiness, client
//! and figures.

pub mod dirs;
pub mod http;
pub mod pgbench;
pub mod process;
pub mod round;
pub mod sysbench;

pub use dirs::{DataDir, RoundDirs, ServerLog};
pub use process::{run_as, run_client, ClientOutput, Running};
pub use round::{Initialise, Measured, Round, Server};

pub use fsarena_workload::host::{Failed, Host, Tenant};

use fsarena_core::InputError;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Longest unix socket path accepted: sun_path holds 108 bytes with its NUL, and the servers
/// add a suffix of their own (`.s.PGSQL.5432.lock`).
pub const MAX_SOCKET_PATH: usize = 100;

/// The default of `start_timeout=`.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// A Debian package's system account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    /// Its uid.
    pub uid: u32,
    /// Its primary gid.
    pub gid: u32,
}

impl Account {
    /// The account `name`, which the Debian package `package` creates; missing → the input
    /// error naming the package (fsarena creates no users).
    pub fn lookup(kind: &str, name: &str, package: &str) -> Result<Self, InputError> {
        let missing = || {
            InputError::new(format!(
                "{kind}: the account '{name}' does not exist: it is created by Debian's {package} package (apt-get install {package}); fsarena creates no users"
            ))
        };
        let c = CString::new(name).map_err(|_| missing())?;
        // SAFETY: getpwnam reads a NUL-terminated name and returns a pointer into static
        // storage or null; the fields are copied out at once.
        let pw = unsafe { libc::getpwnam(c.as_ptr()) };
        if pw.is_null() {
            return Err(missing());
        }
        // SAFETY: non-null, pointing at a valid passwd record until the next getpw* call.
        let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
        Ok(Self { uid, gid })
    }
}

/// `program` in the newest of `dirs` (globbed by the caller), or on the usual paths.
pub fn find_binary(kind: &str, program: &str, package: &str) -> Result<PathBuf, InputError> {
    fsarena_workload::programs::find_program(program).ok_or_else(|| {
        InputError::new(format!(
            "{kind}: {program} is not found: it comes with Debian's {package} package (apt-get install {package})"
        ))
    })
}

/// Checks a unix socket path's length (`what` names it in the message).
pub fn check_socket_path(kind: &str, path: &Path) -> Result<(), String> {
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        return Err(format!(
            "{kind}: the server's socket path {} is {len} bytes, over the {MAX_SOCKET_PATH} a unix socket allows",
            path.display()
        ));
    }
    Ok(())
}

/// Checks that `account` can reach `dir`: every directory above it must let others pass
/// (x), since the server runs as that account, not as root.
pub fn check_reachable(kind: &str, dir: &Path, account_name: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for a in dir.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(a) else { continue };
        if meta.permissions().mode() & 0o001 == 0 {
            return Err(format!(
                "{kind}: {} (mode {:04o}) does not let the '{account_name}' account pass, so the server cannot reach its data in {}",
                a.display(),
                meta.permissions().mode() & 0o7777,
                dir.display()
            ));
        }
    }
    Ok(())
}

/// A short stable hash of the server keys, naming the data directory they build.
pub fn key_hash(keys: &[(&str, String)]) -> String {
    // FNV-1a: stable across builds and runs (std's hasher is not).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (k, v) in keys {
        for b in k.bytes().chain([b'=']).chain(v.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{:08x}", h >> 32)
}

/// A process-wide counter naming each server run directory uniquely in a run.
pub fn next_index() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_tell_keys_apart() {
        let a = key_hash(&[("scale", "1".into()), ("fsync", "on".into())]);
        assert_eq!(a, key_hash(&[("scale", "1".into()), ("fsync", "on".into())]));
        assert_ne!(a, key_hash(&[("scale", "10".into()), ("fsync", "on".into())]));
        assert_ne!(key_hash(&[("a", "bc".into())]), key_hash(&[("ab", "c".into())]));
    }

    #[test]
    fn long_socket_paths_and_missing_accounts_are_refused() {
        assert!(check_socket_path("pgbench", Path::new("/run/fsarena/x/.s.PGSQL.5432")).is_ok());
        let long = PathBuf::from(format!("/run/{}", "x".repeat(100)));
        assert!(check_socket_path("pgbench", &long).unwrap_err().contains("over the 100"));
        let e = Account::lookup("pgbench", "fsarena-no-such-user", "postgresql").unwrap_err().to_string();
        assert!(e.contains("Debian's postgresql package"), "{e}");
        assert_eq!(Account::lookup("x", "root", "base").unwrap(), Account { uid: 0, gid: 0 });
    }
}
