//! Unit tests of the server directories and logs, as root with `nobody` as the account: what
//! the account can put at a log's name (a link, a FIFO, a file of another owner) is never
//! followed, opened for writing or waited on.

#![allow(clippy::unwrap_used)]

use super::*;
use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;

/// The account of the tests: nobody.
const NOBODY: Account = Account { uid: 65534, gid: 65534 };

/// A host that remembers in memory and removes directories by identity.
#[derive(Default)]
struct MemoryHost {
    dir: PathBuf,
    held: Mutex<Vec<(Tenant, bool)>>,
}

impl Host for MemoryHost {
    fn run_path(&self, what: &str) -> PathBuf {
        self.dir.join(what)
    }
    fn record(&self, tenant: &Tenant) -> Result<(), String> {
        self.held.lock().unwrap().push((tenant.clone(), false));
        Ok(())
    }
    fn release(&self, tenant: &Tenant) -> Result<(), String> {
        if let Tenant::RunDir { path, id } | Tenant::DataDir { path, id } = tenant {
            safefs::remove_dir_if(path, *id, true).map_err(|e| e.to_string())?;
        }
        self.held.lock().unwrap().retain(|(t, _)| t != tenant);
        Ok(())
    }
    fn data_dir(&self, path: &Path) -> Option<(Tenant, bool)> {
        let held = self.held.lock().unwrap();
        held.iter().find(|(t, _)| matches!(t, Tenant::DataDir { path: p, .. } if p == path)).cloned()
    }
    fn mark_loaded(&self, tenant: &Tenant) {
        for (t, loaded) in self.held.lock().unwrap().iter_mut() {
            if t == tenant {
                *loaded = true;
            }
        }
    }
}

/// A fresh root-owned scratch directory (0755), removed at drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("fsarena-servers-dirs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir(&p).unwrap();
        Self(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn round_directories_are_the_account_s_and_fsarena_s_and_go_with_their_contents() {
    let s = Scratch::new("round");
    let host = MemoryHost { dir: s.0.clone(), ..Default::default() };
    let dirs = RoundDirs::make(&host, "pgbench", NOBODY, Some(".s.PGSQL.5432")).unwrap();
    let server = std::fs::metadata(dirs.server.path()).unwrap();
    assert_eq!((server.uid(), server.mode() & 0o7777), (NOBODY.uid, 0o700));
    let own = std::fs::metadata(dirs.own.path()).unwrap();
    assert_eq!((own.uid(), own.mode() & 0o7777), (0, 0o711));
    std::fs::write(dirs.server.path().join("postgres.log"), "x").unwrap();
    dirs.release(&host).unwrap();
    assert!(!dirs.server.path().exists() && !dirs.own.path().exists());
    assert!(host.held.lock().unwrap().is_empty());
    let long = format!("{}{}", "x".repeat(100), "y");
    let e = RoundDirs::make(&host, &long, NOBODY, Some(".s.PGSQL.5432")).unwrap_err();
    assert!(e.contains("over the 100"), "{e}");
}

#[test]
fn a_data_directory_is_reused_only_once_marked_loaded_in_the_host_s_memory() {
    let s = Scratch::new("data");
    let host = MemoryHost { dir: s.0.clone(), ..Default::default() };
    let first = DataDir::open(&host, &s.0, "pgbench-1", 0o700, Some(NOBODY)).unwrap();
    assert!(!first.loaded);
    // Not marked: the next round starts over, in a new directory.
    std::fs::write(first.made.path().join("half-loaded"), "x").unwrap();
    let id = first.made.held.identity().unwrap();
    let mut second = DataDir::open(&host, &s.0, "pgbench-1", 0o700, Some(NOBODY)).unwrap();
    assert!(!second.loaded && !second.made.path().join("half-loaded").exists());
    assert_ne!(second.made.held.identity().unwrap(), id);
    second.mark_loaded(&host);
    let third = DataDir::open(&host, &s.0, "pgbench-1", 0o700, Some(NOBODY)).unwrap();
    assert!(third.loaded);
    assert_eq!(third.made.held.identity().unwrap(), second.made.held.identity().unwrap());
    // No marker file in the tenant's directory.
    assert_eq!(std::fs::read_dir(third.made.path()).unwrap().count(), 0);
}

#[test]
fn a_log_is_created_for_the_account_and_appended_to_after() {
    let s = Scratch::new("log");
    let dir = HeldDir::open(&s.0).unwrap();
    let log = ServerLog::new(&dir, "server.log", NOBODY).unwrap();
    use std::io::Write;
    log.open_for_server().unwrap().write_all(b"one\n").unwrap();
    log.open_for_server().unwrap().write_all(b"two\n").unwrap();
    let meta = std::fs::metadata(log.path()).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (NOBODY.uid, 0o600));
    assert_eq!(log.tail(8), "one | two");
}

#[test]
fn what_the_account_plants_at_a_log_s_name_is_neither_followed_nor_waited_on() {
    let s = Scratch::new("planted");
    let secret = s.0.join("secret");
    std::fs::write(&secret, "root's eyes only\n").unwrap();
    let dir = HeldDir::open(&s.0).unwrap();
    // A link to a root-only file.
    std::os::unix::fs::symlink(&secret, s.0.join("link.log")).unwrap();
    let link = ServerLog::new(&dir, "link.log", NOBODY).unwrap();
    assert!(link.open_for_server().unwrap_err().contains("symbolic link"));
    assert!(link.tail(8).starts_with("(not read: ") && !link.tail(8).contains("eyes"), "{}", link.tail(8));
    let mut m = Measurement::default();
    link.keep(&mut m, "link.log");
    assert!(m.logs.is_empty());
    // A FIFO nobody writes: neither an open for writing nor a read waits on it.
    let fifo = s.0.join("fifo.log");
    rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o600), 0)
        .unwrap();
    let fifo = ServerLog::new(&dir, "fifo.log", NOBODY).unwrap();
    assert!(fifo.open_for_server().unwrap_err().contains("a FIFO, not a regular file"));
    assert!(fifo.tail(8).contains("FIFO"), "{}", fifo.tail(8));
    // A file of another owner (a hard link to root's, say).
    std::fs::hard_link(&secret, s.0.join("hard.log")).unwrap();
    let hard = ServerLog::new(&dir, "hard.log", NOBODY).unwrap();
    assert!(hard.open_for_server().unwrap_err().contains("owned by uid 0"));
    assert!(!hard.tail(8).contains("eyes"));
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root's eyes only\n");
}

#[test]
fn the_last_lines_of_a_log_go_with_the_result_capped_and_printable() {
    let s = Scratch::new("keep");
    let path = s.0.join("server.log");
    let text: String = (0..250).map(|i| format!("line {i}\n")).collect();
    std::fs::write(&path, format!("{text}bell \x07 and \x1b[31m escape\n")).unwrap();
    std::os::unix::fs::chown(&path, Some(NOBODY.uid), Some(NOBODY.gid)).unwrap();
    let log = ServerLog::new(&HeldDir::open(&s.0).unwrap(), "server.log", NOBODY).unwrap();
    let mut failed: Result<Measurement, Failed> = Err(Box::new(("x".into(), Measurement::default())));
    log.keep_in(&mut failed, "server.log");
    let kept = &failed.unwrap_err().1.logs["server.log"];
    assert_eq!(kept.lines().count(), KEPT_LOG_LINES);
    assert!(kept.starts_with("line 51\n") && kept.ends_with("escape"), "{kept}");
    assert!(!kept.contains('\x07') && !kept.contains('\x1b'), "{kept}");
    // Only the last 64 KiB is read, whatever the log grew to.
    let big = format!("{}\nthe end\n", "y".repeat(1 << 20));
    std::fs::write(&path, big).unwrap();
    assert_eq!(log.tail(8), "the end");
}
