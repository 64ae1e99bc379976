//! Opening a database file, for writing or for reading only.
//!
//! For writing: one fsarena process at a time (an exclusive `flock` on `<db>.lock` beside it,
//! so that no opener sees a half-made new file), and only a sound fsarena database of a schema
//! this code knows, in a file that can be written. Every check that needs no new file comes
//! first, so a refused path gets nothing created beside it; a lock file or a database file
//! this open created is removed again when the open is refused.
//!
//! For reading (`results list|show|export`, `compare`, `report`): no lock file, and no
//! journal, `-wal` or `-shm`: nothing is created or changed, so a database on read-only media
//! or an immutable one (`chattr +i`) is read as it is.

use crate::schema::{self, Shape};
use crate::StoreError;
use rusqlite::{Connection, DatabaseName, OpenFlags};
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every SQLite database file starts with these 16 bytes.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// How long to wait for another fsarena process that holds the write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Files SQLite keeps beside a database.
const SIDECARS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// What the file at the database path is, from its metadata and first bytes.
enum Header {
    /// No file.
    Absent,
    /// An empty file, which SQLite takes as an empty database.
    Empty,
    /// An SQLite database; `wal` when its header says WAL mode (bytes 18 and 19 are 2).
    Sqlite { wal: bool },
}

/// Reads what the file at `path` is, refusing anything but an SQLite database or an empty
/// file. SQLite itself would only notice at the first query, and might first try to recover a
/// journal beside it.
fn header(path: &Path) -> Result<Header, StoreError> {
    let foreign = || StoreError::Foreign(path.to_path_buf());
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Header::Absent),
        Err(source) => return Err(StoreError::Io { path: path.to_path_buf(), source }),
    };
    if !meta.is_file() {
        return Err(foreign());
    }
    if meta.len() == 0 {
        return Ok(Header::Empty);
    }
    let mut header = [0u8; 20];
    match File::open(path).and_then(|mut f| f.read_exact(&mut header)) {
        Ok(()) if &header[..16] == SQLITE_HEADER => Ok(Header::Sqlite { wal: header[18] == 2 && header[19] == 2 }),
        Ok(()) => Err(foreign()),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(foreign()),
        Err(source) => Err(StoreError::Io { path: path.to_path_buf(), source }),
    }
}

/// `<db><suffix>`: the lock file or one of SQLite's files beside the database.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name: OsString = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Refuses a `-wal`, `-shm` or `-journal` beside the database that is a symbolic link, a hard
/// link or a special file: SQLite opens them following links, for writing, so one planted
/// there would have it write into another file.
fn check_sidecars(path: &Path) -> Result<(), StoreError> {
    for suffix in SIDECARS {
        let sidecar = beside(path, suffix);
        if let Ok(meta) = std::fs::symlink_metadata(&sidecar) {
            if !meta.file_type().is_file() || meta.nlink() > 1 {
                return Err(StoreError::Sidecar { path: path.to_path_buf(), sidecar });
            }
        }
    }
    Ok(())
}

/// How many times a refusal of an existing file is checked before it is believed (25 ms apart).
const PRECHECK_ATTEMPTS: u32 = 20;

/// What an existing file is, read without creating anything: not an SQLite file at all is
/// refused; a damaged, foreign-schema or newer database is refused through a reader, which
/// creates nothing (not even a lock, journal, -wal or -shm made and removed again). One with
/// no tables yet is being made by another fsarena, which holds the lock.
fn precheck(path: &Path) -> Result<Header, StoreError> {
    let existing = header(path)?;
    check_sidecars(path)?;
    if let Header::Sqlite { .. } = existing {
        match read_only(path) {
            Ok(_) | Err(StoreError::Empty(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(existing)
}

/// Opens the database at `path` for writing, creating it and its directories if missing, and
/// upgrades an older schema.
pub(crate) fn for_writing(path: &Path) -> Result<Connection, StoreError> {
    // Look before creating anything: another program's file is refused untouched, with no
    // lock file or directory made for it.
    // A database another fsarena is creating this instant (runs started together on a new
    // path) can look foreign or damaged to a reader that takes no lock: a header still being
    // written, a schema between two migrations. Such a state lasts milliseconds, so a refusal
    // is only believed when it holds for a while; another program's file is refused all the
    // same, and still with nothing created beside it.
    let mut attempts = 0;
    loop {
        attempts += 1;
        match precheck(path) {
            Err(StoreError::Foreign(_) | StoreError::Damaged { .. }) if attempts < PRECHECK_ATTEMPTS => {
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            other => {
                other?;
                break;
            }
        }
    }
    let unwritable = |detail: String| StoreError::Unwritable { path: path.to_path_buf(), detail };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        // The database holds commands, environments and logs: the directories made for it
        // (the default ~/.local/share/fsarena) are its owner's alone.
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| unwritable(format!("cannot create {}: {e}", parent.display())))?;
    }
    let lock = Lock::take(path)?;
    // Only files absent now, under the lock, are this open's to remove if it is refused.
    let absent: Vec<PathBuf> = std::iter::once(path.to_path_buf())
        .chain(SIDECARS.iter().map(|s| beside(path, s)))
        .filter(|p| std::fs::symlink_metadata(p).is_err())
        .collect();
    // A new database is made 0600 here, before SQLite opens it: SQLite gives its -wal, -shm
    // and -journal the database file's mode, so they are private too.
    if absent.first().is_some_and(|p| p == path) {
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path);
        if let Err(e) = made {
            lock.remove_if_created();
            return Err(unwritable(format!("cannot create it: {e}")));
        }
    }
    match connect_for_writing(path) {
        Ok(conn) => Ok(conn),
        Err(e) => {
            // The connection is closed by now; what it created holds nothing of anyone's.
            for created in &absent {
                let _ = std::fs::remove_file(created);
            }
            lock.remove_if_created();
            Err(e)
        }
    }
}

fn connect_for_writing(path: &Path) -> Result<Connection, StoreError> {
    // Again under the lock: another fsarena may have made the file meanwhile.
    let existing = !matches!(header(path)?, Header::Absent);
    check_sidecars(path)?;
    let unwritable = |detail: String| StoreError::Unwritable { path: path.to_path_buf(), detail };
    if existing {
        // SQLite silently opens a file it may not write read-only, and the failure would only
        // come with the run's first result: ask the system first, for its own words.
        std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(|e| unwritable(e.to_string()))?;
    }
    let sql = |action: &str| {
        let action = action.to_string();
        move |source| StoreError::Sqlite { path: path.to_path_buf(), action, source }
    };
    // No URI flag: a path such as `file:x.db` is a file name, not an SQLite URI.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql("opening"))?;
    if conn.is_readonly(DatabaseName::Main).unwrap_or(true) {
        return Err(unwritable("SQLite could open it for reading only".into()));
    }
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql("setting the busy timeout"))?;

    // Look before touching anything: a foreign, newer or damaged database is left exactly as
    // it was.
    let shape = schema::classify(path, &conn)?;
    if shape != Shape::Fresh {
        schema::quick_check(path, &conn)?;
    }

    // WAL: a writer never blocks readers (`results list` during a run) and a commit is one
    // append to the log. synchronous=FULL fsyncs the log at every commit, so a committed step
    // survives a SIGKILL or a power cut; NORMAL could lose the last commits on power loss.
    // journal_mode answers with the mode in force; a filesystem without shared memory keeps
    // the rollback journal, which is just as durable.
    // Switching needs an exclusive lock, for which SQLite does not wait on its busy handler:
    // switch only when not yet in WAL, and retry while another fsarena holds the database.
    let current: String =
        conn.query_row("PRAGMA journal_mode", [], |row| row.get(0)).map_err(sql("reading the journal mode"))?;
    if !current.eq_ignore_ascii_case("wal") {
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get::<_, String>(0)) {
                Ok(_) => break,
                Err(e)
                    if matches!(
                        e.sqlite_error_code(),
                        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                    ) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(sql("enabling WAL")(e)),
            }
        }
    }
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
        .map_err(sql("setting synchronous=FULL and foreign_keys=ON"))?;
    if shape != Shape::Current {
        schema::migrate(path, &conn)?;
    }
    Ok(conn)
}

/// The exclusive `flock` on `<db>.lock` held while a database is opened for writing. The lock
/// file stays afterwards (it holds no data): removing it while another process waits on it
/// would let a third take a second lock on a new file. Only a refused open removes the file it
/// created itself, as everyone else is refused the same database.
struct Lock {
    file: File,
    path: PathBuf,
    created: bool,
}

impl Lock {
    fn take(db: &Path) -> Result<Lock, StoreError> {
        let path = beside(db, ".lock");
        let unwritable = |e: std::io::Error| StoreError::Unwritable {
            path: db.to_path_buf(),
            detail: format!("cannot create its lock file {}: {e}", path.display()),
        };
        // Never follow a symbolic link planted at the lock file's name.
        let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
        let mut attempts = 0;
        let (file, created) = loop {
            attempts += 1;
            let new = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path);
            match new {
                Ok(file) => break (file, true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    match std::fs::OpenOptions::new().read(true).custom_flags(nofollow).open(&path) {
                        Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => break (file, false),
                        Ok(_) => return Err(unwritable(std::io::Error::other("not a regular file"))),
                        // Removed in between by a refused open: try again.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempts < 10 => continue,
                        Err(e) => return Err(unwritable(e)),
                    }
                }
                Err(e) => return Err(unwritable(e)),
            }
        };
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| StoreError::Io { path: path.clone(), source: e.into() })?;
        Ok(Lock { file, path, created })
    }

    /// Removes the lock file if this open created it and it is still that file.
    fn remove_if_created(self) {
        let ours = |meta: std::fs::Metadata| {
            self.file.metadata().is_ok_and(|mine| mine.dev() == meta.dev() && mine.ino() == meta.ino())
        };
        if self.created && std::fs::symlink_metadata(&self.path).is_ok_and(ours) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Opens the database at `path` for reading only, creating and changing nothing.
///
/// A WAL database whose `-wal` file is absent has no writer connected and everything in the
/// main file: it is opened `immutable=1`, which reads without locks or shared memory, so that
/// no `-wal` or `-shm` is left beside it (a read-only SQLite connection otherwise creates both
/// and, being read-only, never removes them) and read-only media work. A writer that connects
/// meanwhile appends to its own `-wal`; the main file changes only at a checkpoint, after
/// 1000 pages or when that writer closes. With a `-wal` present (a run in progress, or a killed
/// one), or in rollback-journal mode, SQLite's ordinary read-only mode with its locks reads
/// what was committed; where it cannot use the shared memory (read-only media without a
/// `-shm`), the main file is read as it is.
pub(crate) fn read_only(path: &Path) -> Result<Connection, StoreError> {
    let wal = match header(path)? {
        Header::Absent => return Err(StoreError::Missing(path.to_path_buf())),
        Header::Empty => return Err(StoreError::Empty(path.to_path_buf())),
        Header::Sqlite { wal } => wal,
    };
    let locked = !wal || std::fs::symlink_metadata(beside(path, "-wal")).is_ok();
    if !locked {
        return connect_read_only(path, "immutable=1");
    }
    // SQLite's ordinary read-only mode opens the -shm for writing where it can.
    check_sidecars(path)?;
    match connect_read_only(path, "mode=ro") {
        Err(StoreError::Sqlite { source, .. })
            if wal
                && matches!(
                    source.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
                ) =>
        {
            connect_read_only(path, "immutable=1")
        }
        other => other,
    }
}

fn connect_read_only(path: &Path, parameter: &str) -> Result<Connection, StoreError> {
    let uri = sqlite_uri(path, parameter).map_err(|source| StoreError::Io { path: path.to_path_buf(), source })?;
    let sql = |action: &'static str| {
        move |source| StoreError::Sqlite { path: path.to_path_buf(), action: action.into(), source }
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&uri, flags).map_err(sql("opening for reading"))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql("setting the busy timeout"))?;
    let shape = schema::classify(path, &conn)?;
    if shape == Shape::Fresh {
        return Err(StoreError::Empty(path.to_path_buf()));
    }
    schema::quick_check(path, &conn)?;
    if let Shape::Older(_) = shape {
        // A reader never writes the file, not even to upgrade it: it reads an upgraded copy
        // in memory, so runs stored by an older fsarena show on read-only media too.
        return upgraded_copy(path, &conn);
    }
    Ok(conn)
}

/// An in-memory copy of the older database `conn`, upgraded to this code's schema.
fn upgraded_copy(path: &Path, conn: &Connection) -> Result<Connection, StoreError> {
    let sql = |action: &'static str| {
        move |source| StoreError::Sqlite { path: path.to_path_buf(), action: action.into(), source }
    };
    let mut copy = Connection::open_in_memory().map_err(sql("opening a copy in memory"))?;
    rusqlite::backup::Backup::new(conn, &mut copy)
        .and_then(|backup| backup.run_to_completion(1024, std::time::Duration::ZERO, None))
        .map_err(sql("copying an older database into memory to read it"))?;
    schema::migrate(path, &copy)?;
    Ok(copy)
}

/// `file:` URI of `path` (made absolute) with one query parameter. Every byte but unreserved
/// ones and `/` is percent-encoded, so that `?`, `#` or `%` in a file name stay part of it.
fn sqlite_uri(path: &Path, parameter: &str) -> std::io::Result<String> {
    let absolute = std::path::absolute(path)?;
    let mut uri = String::from("file:");
    for &b in absolute.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push('?');
    uri.push_str(parameter);
    Ok(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_file_is_foreign() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("short.db");
        std::fs::write(&path, b"SQLite").unwrap();
        assert!(matches!(header(&path), Err(StoreError::Foreign(_))));
    }

    #[test]
    fn a_new_database_and_everything_beside_it_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().join("a/b/results.db");
        let conn = for_writing(&path).unwrap();
        conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        for made in [dir.path().join("a"), dir.path().join("a/b")] {
            assert_eq!(mode(&made), 0o700, "{}", made.display());
        }
        for suffix in ["", ".lock", "-wal", "-shm"] {
            let p = beside(&path, suffix);
            assert_eq!(mode(&p), 0o600, "{}", p.display());
        }
    }

    #[test]
    fn uris_keep_odd_file_names_whole() {
        let uri = sqlite_uri(Path::new("/d/a b?c#d%e.db"), "mode=ro").unwrap();
        assert_eq!(uri, "file:/d/a%20b%3Fc%23d%25e.db?mode=ro");
    }
}
