//! Helpers shared by the integration tests: run the binary, scratch directories on real
//! filesystems, and the reference tools.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fsarena binary under test.
pub fn fsarena() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fsarena"))
}

/// Runs fsarena with `args`.
pub fn run(args: &[&str]) -> Output {
    fsarena().args(args).output().expect("fsarena runs")
}

/// stdout as a string.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as a string.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory removed on drop, on tmpfs (/dev/shm) unless `base` says otherwise.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Self {
        Self::under("/dev/shm", name)
    }
    pub fn under(base: &str, name: &str) -> Self {
        let path = PathBuf::from(base).join(format!("fsarena-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("scratch dir");
        Self { path }
    }
    pub fn spec(&self) -> String {
        format!("dir:path={}", self.path.display())
    }
    /// Everything left inside, recursively.
    pub fn leftovers(&self) -> Vec<PathBuf> {
        fn walk(p: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
                out.push(e.path());
                if e.path().is_dir() {
                    walk(&e.path(), out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.path, &mut out);
        out
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A small tmpfs mounted for one test (needs root), unmounted on drop.
pub struct SmallTmpfs {
    pub dir: Scratch,
}

impl SmallTmpfs {
    pub fn new(name: &str, size: &str) -> Self {
        let dir = Scratch::under("/tmp", name);
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "fsarena-test", dir.path.to_str().expect("utf-8")])
            .status()
            .expect("mount runs")
            .success();
        assert!(ok, "mounting a tmpfs failed: these tests run as root (sudo make test)");
        Self { dir }
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir.path).status();
    }
}

/// The path of a reference tool; a missing tool fails the test, never skips it.
pub fn require(tool: &str) -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(tool))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| panic!("{tool} is missing: `make test` installs it (apt-get install {tool})"))
}

/// Parses JSON output.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}
