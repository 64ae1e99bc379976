//! Small system helpers: running tools, the mount table, unmounting with retries, dropping
//! caches, free space. Everything here acts only on paths and devices the caller owns.

use crate::TargetError;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Runs `program args...`; on failure the error carries the tool's own message.
pub fn run(program: &str, args: &[&str]) -> Result<String, TargetError> {
    let out = Command::new(program)
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| TargetError(format!("cannot run {program}: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let mut msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if msg.is_empty() {
            msg = String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
        Err(TargetError(format!("{program} {} failed ({}): {msg}", args.join(" "), out.status)))
    }
}

/// The line a tool prints about its version (the one naming the tool, else the first), or
/// "unknown".
pub fn tool_version(program: &str, flag: &str) -> String {
    let Ok(o) = Command::new(program).arg(flag).output() else { return "unknown".into() };
    let text = format!("{}\n{}", String::from_utf8_lossy(&o.stderr), String::from_utf8_lossy(&o.stdout));
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.iter().find(|l| l.contains(program)).or(lines.first()).map_or_else(|| "unknown".into(), |l| l.to_string())
}

/// True if `program` is on PATH (or /sbin, /usr/sbin, which non-root PATHs may lack).
pub fn have(program: &str) -> bool {
    find_program(program).is_some()
}

/// Where `program` is.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone)]
pub struct MountEntry {
    /// `major:minor` of the mounted device.
    pub dev: String,
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// Filesystem type (`ext4`, `fuse.fuse2fs`).
    pub fstype: String,
    /// Source (`/dev/loop3`, `tmpfs`).
    pub source: String,
    /// Superblock options.
    pub super_options: String,
}

/// The mount table as the kernel shows it.
pub fn mounts() -> Vec<MountEntry> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let sep = fields.iter().position(|f| *f == "-")?;
            Some(MountEntry {
                dev: fields.get(2)?.to_string(),
                mount_point: PathBuf::from(unescape(fields.get(4)?)),
                mount_options: fields.get(5)?.to_string(),
                fstype: fields.get(sep + 1)?.to_string(),
                source: unescape(fields.get(sep + 2)?),
                super_options: fields.get(sep + 3).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// The mount at exactly `path`, the last one if stacked.
pub fn mount_at(path: &Path) -> Option<MountEntry> {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    mounts().into_iter().rev().find(|m| m.mount_point == path)
}

/// mountinfo escapes spaces and such as octal `\040`.
pub fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.by_ref().take(3).collect();
            if let Ok(v) = u8::from_str_radix(&code, 8) {
                out.push(v as char);
                continue;
            }
            out.push(c);
            out.push_str(&code);
        } else {
            out.push(c);
        }
    }
    out
}

/// Unmounts `path`, retrying on EBUSY; when it stays busy the error names the processes that
/// hold it. `fuse` uses `fusermount3 -u` first.
pub fn unmount(path: &Path, fuse: bool) -> Result<(), TargetError> {
    let p = path.to_string_lossy().to_string();
    let mut last = String::new();
    for attempt in 0..10 {
        if mount_at(path).is_none() {
            return Ok(());
        }
        let result = if fuse && have("fusermount3") { run("fusermount3", &["-u", &p]) } else { run("umount", &[&p]) };
        match result {
            Ok(_) => return Ok(()),
            Err(e) => last = e.0,
        }
        std::thread::sleep(Duration::from_millis(100 * (attempt + 1)));
    }
    if fuse {
        // Last resort for a FUSE daemon that no longer answers: detach lazily.
        if run("umount", &["-l", &p]).is_ok() {
            return Ok(());
        }
    }
    let holders = holders(path);
    Err(TargetError(format!(
        "cannot unmount {p}: {last}{}",
        if holders.is_empty() { String::new() } else { format!("; held by {}", holders.join(", ")) }
    )))
}

/// Processes with a file, working directory or root under `path`: `pid 123 (bash)`.
pub fn holders(path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let base = entry.path();
        let mut links: Vec<PathBuf> = vec![base.join("cwd"), base.join("root")];
        links.extend(std::fs::read_dir(base.join("fd")).into_iter().flatten().flatten().map(|e| e.path()));
        if links.iter().any(|l| std::fs::read_link(l).is_ok_and(|t| t.starts_with(path))) {
            let comm = std::fs::read_to_string(base.join("comm")).unwrap_or_default();
            out.push(format!("pid {pid} ({})", comm.trim()));
        }
    }
    out
}

/// Bytes free for an unprivileged user under `path` (or its nearest existing ancestor).
pub fn free_bytes(path: &Path) -> Option<u64> {
    let mut p = path.to_path_buf();
    loop {
        if p.exists() {
            let st = rustix::fs::statvfs(&p).ok()?;
            return Some(st.f_bavail * st.f_frsize);
        }
        if !p.pop() {
            return None;
        }
    }
}

/// True when running as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// sync, then drop the page cache, dentries and inodes (root only).
pub fn drop_caches() -> Result<(), TargetError> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| TargetError(format!("cannot drop caches: {e}")))
}

/// Filesystems the running kernel has (/proc/filesystems).
pub fn kernel_filesystems() -> Vec<String> {
    std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect()
}

/// The start time of a process (field 22 of /proc/PID/stat), to tell it from a later process
/// that reuses its PID.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19)?.parse().ok()
}

/// Ends the process `pid` if it is still the one started at `start_time`: SIGTERM, then
/// SIGKILL after `grace`.
pub fn end_process(pid: u32, start_time: u64, grace: Duration) {
    use rustix::process::{kill_process, Pid, Signal};
    let alive = || process_start_time(pid) == Some(start_time) && !is_zombie(pid);
    let Some(rpid) = Pid::from_raw(pid as i32) else { return };
    if !alive() {
        return;
    }
    let _ = kill_process(rpid, Signal::TERM);
    let deadline = std::time::Instant::now() + grace;
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if alive() {
        let _ = kill_process(rpid, Signal::KILL);
    }
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').and_then(|i| s.get(i + 2..i + 3)).map(|c| c == "Z"))
        .unwrap_or(true)
}

/// Loop devices whose backing file is `image`.
pub fn loops_backed_by(image: &Path) -> Vec<String> {
    let image = image.canonicalize().unwrap_or_else(|_| image.to_path_buf());
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/sys/block").into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.starts_with("loop") {
            continue;
        }
        let backing = std::fs::read_to_string(entry.path().join("loop/backing_file")).unwrap_or_default();
        let backing = backing.trim().trim_end_matches(" (deleted)");
        if !backing.is_empty() && Path::new(backing) == image {
            out.push(format!("/dev/{name}"));
        }
    }
    out
}
