//! Evidence: byte-and-inode snapshots of files and trees, victims that must survive, and
//! what fsarena may have left behind (mounts, loop devices, processes, directory entries).

use std::collections::BTreeMap;
use std::hash::Hasher;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What a snapshot knows of one directory entry: identity, type, owner, mode, size,
/// modification time and (for files) a digest of the first 4 MiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    kind: char,
    dev: u64,
    ino: u64,
    mode: u32,
    uid: u32,
    len: u64,
    mtime: (i64, i64),
    digest: u64,
    link: Option<PathBuf>,
}

fn entry(p: &Path) -> Option<Entry> {
    let m = std::fs::symlink_metadata(p).ok()?;
    let ft = m.file_type();
    let kind = if ft.is_symlink() {
        'l'
    } else if ft.is_dir() {
        'd'
    } else if ft.is_file() {
        'f'
    } else {
        'o'
    };
    let mut digest = 0;
    if kind == 'f' {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut buf = Vec::new();
        if let Ok(f) = std::fs::File::open(p) {
            let _ = f.take(4 << 20).read_to_end(&mut buf);
        }
        h.write(&buf);
        digest = h.finish();
    }
    Some(Entry {
        kind,
        dev: m.dev(),
        ino: m.ino(),
        mode: m.mode(),
        uid: m.uid(),
        len: if kind == 'd' { 0 } else { m.len() },
        mtime: (m.mtime(), m.mtime_nsec()),
        digest,
        link: std::fs::read_link(p).ok(),
    })
}

/// Every entry at and below `root`, without following symlinks.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Entry> {
    fn walk(p: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
        let Some(e) = entry(p) else { return };
        let is_dir = e.kind == 'd';
        out.insert(p.to_path_buf(), e);
        if is_dir {
            let mut names: Vec<_> = std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| e.path()).collect();
            names.sort();
            for n in names {
                walk(&n, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, &mut out);
    out
}

/// What changed between two snapshots, one line per path.
pub fn diff(before: &BTreeMap<PathBuf, Entry>, after: &BTreeMap<PathBuf, Entry>) -> Vec<String> {
    diff_with(before, after, true)
}

/// [`diff`], optionally ignoring directories' modification times: a target directory that
/// fsarena rightly worked in (and cleaned up) has a new mtime but the same entries.
pub fn diff_with(before: &BTreeMap<PathBuf, Entry>, after: &BTreeMap<PathBuf, Entry>, dir_mtime: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (p, b) in before {
        match after.get(p) {
            None => out.push(format!("removed {}", p.display())),
            Some(a) if !dir_mtime && b.kind == 'd' && &Entry { mtime: b.mtime, ..a.clone() } == b => {}
            Some(a) if a != b => out.push(format!("changed {} ({})", p.display(), what_changed(b, a))),
            _ => {}
        }
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        out.push(format!("created {}", p.display()));
    }
    out
}

fn what_changed(b: &Entry, a: &Entry) -> String {
    let mut w = Vec::new();
    if (b.dev, b.ino) != (a.dev, a.ino) {
        w.push("inode");
    }
    if b.kind != a.kind {
        w.push("type");
    }
    if b.digest != a.digest || b.len != a.len {
        w.push("content");
    }
    if b.mode != a.mode || b.uid != a.uid {
        w.push("mode/owner");
    }
    if b.mtime != a.mtime {
        w.push(if b.kind == 'd' { "entries created or removed" } else { "mtime" });
    }
    if b.link != a.link {
        w.push("link target");
    }
    w.join(", ")
}

/// Something of the test's own that fsarena must leave exactly as it was.
#[derive(Debug)]
pub enum Victim {
    /// A file or directory tree: every byte and inode.
    Tree(PathBuf, BTreeMap<PathBuf, Entry>),
    /// A mount of the test's own: still mounted (same mount ID), same content.
    Mount(PathBuf, String, BTreeMap<PathBuf, Entry>),
    /// A loop device of the test's own: still attached to the same image.
    Loop(String, String),
    /// A process of the test's own: still running with the same start time.
    Process(u32, String),
}

impl Victim {
    /// Records `path` as it is now.
    pub fn tree(path: &Path) -> Self {
        Self::Tree(path.to_path_buf(), snapshot(path))
    }
    /// Records the mount at `path`.
    pub fn mount(path: &Path) -> Self {
        Self::Mount(path.to_path_buf(), mount_id(path).expect("victim is a mount"), snapshot(path))
    }
    /// Records the loop device `dev`.
    pub fn loop_device(dev: &str) -> Self {
        Self::Loop(dev.to_string(), loop_backing(dev).expect("victim loop is attached"))
    }
    /// Records the process `pid`.
    pub fn process(pid: u32) -> Self {
        Self::Process(pid, process_start(pid).expect("victim process runs"))
    }
    /// What fsarena did to it; empty when intact.
    pub fn damage(&self) -> Vec<String> {
        match self {
            Self::Tree(p, before) => diff_with(before, &snapshot(p), false),
            Self::Mount(p, id, before) => match mount_id(p) {
                Some(now) if &now == id => diff_with(before, &snapshot(p), false),
                _ => vec![format!("victim mount {} is gone", p.display())],
            },
            Self::Loop(dev, backing) => match loop_backing(dev) {
                Some(now) if &now == backing => Vec::new(),
                _ => vec![format!("victim loop device {dev} was detached")],
            },
            Self::Process(pid, start) => match process_start(*pid) {
                Some(now) if &now == start => Vec::new(),
                _ => vec![format!("victim process {pid} was ended")],
            },
        }
    }
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// (mount ID, mount point, source) of every mount in this mount namespace.
pub fn mounts() -> Vec<(String, PathBuf, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|x| *x == "-")?;
            Some((f[0].to_string(), PathBuf::from(unescape(f.get(4)?)), unescape(f.get(sep + 2)?)))
        })
        .collect()
}

/// The mount ID of the mount whose mount point is `path` (the topmost one).
pub fn mount_id(path: &Path) -> Option<String> {
    mounts().into_iter().rev().find(|(_, mp, _)| mp == path).map(|(id, _, _)| id)
}

/// Mount points at or below `prefix`.
pub fn mount_points_under(prefix: &Path) -> Vec<PathBuf> {
    mounts().into_iter().filter(|(_, mp, _)| mp.starts_with(prefix)).map(|(_, mp, _)| mp).collect()
}

/// The backing file of loop device `dev` (`/dev/loopN`), if attached.
pub fn loop_backing(dev: &str) -> Option<String> {
    let name = Path::new(dev).file_name()?.to_string_lossy().to_string();
    let b = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    Some(b.trim().to_string())
}

/// Loop devices backed by files at or below `prefix`.
pub fn loops_under(prefix: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/sys/block").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(b) = loop_backing(&format!("/dev/{name}")) {
            if Path::new(b.trim_end_matches(" (deleted)")).starts_with(prefix) {
                out.push(format!("/dev/{name}"));
            }
        }
    }
    out
}

/// Field 22 of /proc/PID/stat: the start time, which tells a PID's reuse apart.
pub fn process_start(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    // A zombie has exited: it no longer counts as running.
    if after.starts_with('Z') {
        return None;
    }
    after.split(' ').nth(19).map(str::to_string)
}

/// Processes (other than this test binary) whose command line contains `needle`.
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = e.file_name().to_string_lossy().to_string();
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && process_start(pid.parse().unwrap_or(0)).is_some() {
            out.push(format!("process {pid}: {}", cmdline.trim()));
        }
    }
    out
}

/// Mounts, loop devices and processes at or below `prefix`.
pub fn leftovers_under(prefix: &Path) -> Vec<String> {
    let mut out: Vec<String> =
        mount_points_under(prefix).into_iter().map(|m| format!("mount {}", m.display())).collect();
    out.extend(loops_under(prefix).into_iter().map(|d| format!("loop device {d}")));
    out.extend(processes_mentioning(&prefix.display().to_string()));
    out
}

/// What fsarena left in its work directory `work` besides the `foreign` entries the test
/// planted there: mounts, loop devices, processes and directory entries.
pub fn workdir_leftovers(work: &Path, foreign: &[PathBuf]) -> Vec<String> {
    let mut out: Vec<String> = leftovers_under(work)
        .into_iter()
        .filter(|l| !foreign.iter().any(|f| l.ends_with(&f.display().to_string())))
        .collect();
    for e in std::fs::read_dir(work).into_iter().flatten().flatten() {
        if !foreign.contains(&e.path()) {
            out.push(format!("file {}", e.path().display()));
        }
    }
    out
}
