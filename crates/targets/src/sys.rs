//! Small system helpers: running tools, the mount table, unmounting with retries, dropping
//! caches, free space. Everything here acts only on paths and devices the caller owns.

use crate::TargetError;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Runs `program args...`; on failure the error carries the tool's own message, cut to its
/// first lines (mkfs.xfs follows a one-line reason with 29 lines of usage).
pub fn run(program: &str, args: &[&str]) -> Result<String, TargetError> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    run_prepared(cmd, program, args)
}

/// [`run`], for a command readied beforehand (`program` with `args`, and whatever else the
/// caller set up, such as a mount namespace).
pub fn run_prepared(mut cmd: Command, program: &str, args: &[&str]) -> Result<String, TargetError> {
    let out = cmd
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| TargetError(format!("cannot run {program}: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let mut msg = summarize(&String::from_utf8_lossy(&out.stderr));
        if msg.is_empty() {
            msg = summarize(&String::from_utf8_lossy(&out.stdout));
        }
        Err(TargetError(format!("{program} {} failed ({}): {msg}", args.join(" "), out.status)))
    }
}

/// A tool's error output on one line: its first few non-empty lines, up to a usage text.
fn summarize(text: &str) -> String {
    const MAX_LINES: usize = 4;
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take_while(|l| !l.to_ascii_lowercase().starts_with("usage:"))
        .collect();
    let mut out = lines.iter().take(MAX_LINES).copied().collect::<Vec<_>>().join("; ");
    if lines.len() > MAX_LINES {
        out.push_str(&format!(" (and {} more lines)", lines.len() - MAX_LINES));
    }
    out
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
    /// The kernel's mount ID (field 1), unique among the current mounts.
    pub mount_id: u64,
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
    parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default())
}

/// Parses the text of a /proc/PID/mountinfo.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let sep = fields.iter().position(|f| *f == "-")?;
            Some(MountEntry {
                mount_id: fields.first()?.parse().ok()?,
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
/// hold it. `fuse` uses `fusermount3 -u` first. `emergency` (a second Ctrl-C, the process
/// exits next) does not wait: a mount held only by this process is detached lazily.
pub fn unmount(path: &Path, fuse: bool, emergency: bool) -> Result<(), TargetError> {
    let p = path.to_string_lossy().to_string();
    let mut last = String::new();
    let attempts = if emergency { 1 } else { 10 };
    for attempt in 0..attempts {
        if mount_at(path).is_none() {
            return Ok(());
        }
        let result = if fuse && have("fusermount3") { run("fusermount3", &["-u", &p]) } else { run("umount", &[&p]) };
        match result {
            Ok(_) => return Ok(()),
            Err(e) => last = e.0,
        }
        if attempt + 1 < attempts {
            std::thread::sleep(Duration::from_millis(100 * (attempt + 1)));
        }
    }
    let holders = holder_pids(path);
    let own = std::process::id();
    // Lazily detached, a mount lives on for whoever holds it: acceptable only when nobody
    // else does (a FUSE daemon that no longer answers), or when the only holders are this
    // process, which is about to exit, its descendants (the io workload's job processes,
    // which die with it: PR_SET_PDEATHSIG), and the other ranks of its MPI job on this host
    // (mpirun ends them together, with a SIGKILL soon after its SIGTERM).
    let only_us = holders.iter().all(|(pid, _)| descends_from(*pid, own) || in_our_job(*pid));
    let may_detach = (holders.is_empty() && fuse) || (emergency && only_us);
    if may_detach && run("umount", &["-l", &p]).is_ok() {
        return Ok(());
    }
    let named: Vec<String> = holders.iter().map(|(pid, comm)| format!("pid {pid} ({comm})")).collect();
    Err(TargetError(format!(
        "cannot unmount {p}: {last}{}",
        if named.is_empty() { String::new() } else { format!("; held by {}", named.join(", ")) }
    )))
}

/// The `KEY=VALUE` in the environment of every process of the MPI job this one is a rank of
/// (see [`ends_with_job`]).
static JOB: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// This process is one rank of an MPI job whose ranks all carry `marker` (`KEY=VALUE`, such as
/// Open MPI's `PMIX_NAMESPACE=…`) in their environment and end together: a mount that only
/// they hold may be detached lazily by an emergency teardown (each is about to exit).
pub fn ends_with_job(marker: String) {
    let _ = JOB.set(marker);
}

/// `pid` is a rank of this process's MPI job (or one of a rank's job processes, forked with
/// its environment): the same job marker, the same executable and the same user as this
/// process. A tenant cannot pass for one: it runs as another user, and another program.
fn in_our_job(pid: u32) -> bool {
    let Some(marker) = JOB.get() else { return false };
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let same_exe = match (std::fs::metadata(proc.join("exe")), std::fs::metadata("/proc/self/exe")) {
        (Ok(a), Ok(b)) => {
            use std::os::unix::fs::MetadataExt;
            (a.dev(), a.ino()) == (b.dev(), b.ino())
        }
        _ => false,
    };
    let uid = |status: &str| status.lines().find(|l| l.starts_with("Uid:")).map(str::to_string);
    let same_user = match (std::fs::read_to_string(proc.join("status")), std::fs::read_to_string("/proc/self/status")) {
        (Ok(a), Ok(b)) => uid(&a).is_some() && uid(&a) == uid(&b),
        _ => false,
    };
    same_exe
        && same_user
        && std::fs::read(proc.join("environ")).is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == marker.as_bytes()))
}

/// `pid` is `ancestor` or one of its descendants (its parent chain in /proc reaches it).
fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut p = pid;
    // A chain longer than this is not one fsarena made.
    for _ in 0..32 {
        if p == ancestor {
            return true;
        }
        // The parent is the second field after the command name, which may hold spaces and
        // parentheses: read after the last ')'.
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let parent = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        match parent {
            Some(q) if q > 1 => p = q,
            _ => return false,
        }
    }
    false
}

/// Processes with a file, working directory or root under `path`: `pid 123 (bash)`.
pub fn holders(path: &Path) -> Vec<String> {
    holder_pids(path).into_iter().map(|(pid, comm)| format!("pid {pid} ({comm})")).collect()
}

fn holder_pids(path: &Path) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let base = entry.path();
        let mut links: Vec<PathBuf> = vec![base.join("cwd"), base.join("root")];
        links.extend(std::fs::read_dir(base.join("fd")).into_iter().flatten().flatten().map(|e| e.path()));
        if links.iter().any(|l| std::fs::read_link(l).is_ok_and(|t| t.starts_with(path))) {
            let comm = std::fs::read_to_string(base.join("comm")).unwrap_or_default();
            out.push((pid, fsarena_core::printable(comm.trim()).into_owned()));
        }
    }
    out
}

/// Bytes free for an unprivileged user under `path` (or its nearest existing ancestor); None
/// when unknown, including on filesystems that report no size (ramfs).
pub fn free_bytes(path: &Path) -> Option<u64> {
    let mut p = path.to_path_buf();
    loop {
        if p.exists() {
            let st = rustix::fs::statvfs(&p).ok()?;
            return (st.f_blocks > 0).then(|| st.f_bavail.saturating_mul(st.f_frsize));
        }
        if !p.pop() {
            return None;
        }
    }
}

/// Inodes free for an unprivileged user under `path`; None when the filesystem has no fixed
/// inode count (btrfs, ramfs and others report 0 inodes in all).
pub fn free_files(path: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(path).ok()?;
    (st.f_files > 0).then_some(st.f_favail)
}

/// The size of the block device `device` in bytes, from /sys/class/block/NAME/size (always
/// in 512-byte sectors, whatever the logical block size).
pub fn block_device_bytes(device: &Path) -> Option<u64> {
    let name = std::fs::canonicalize(device).ok()?.file_name()?.to_string_lossy().into_owned();
    let sectors: u64 = std::fs::read_to_string(format!("/sys/class/block/{name}/size")).ok()?.trim().parse().ok()?;
    Some(sectors * 512)
}

/// True when running as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Pauses between polls for something that is usually done at once (a process gone after its
/// signal, a daemon's mount made): 1 ms, doubling to at most 20 ms. A fixed 20 ms poll cost
/// tens of milliseconds per daemon start and stop where crash checks restart one per state.
#[derive(Debug)]
pub struct Backoff(Duration);

impl Backoff {
    pub fn new() -> Self {
        Self(Duration::from_millis(1))
    }

    /// Sleeps the next pause.
    pub fn pause(&mut self) {
        std::thread::sleep(self.0);
        self.0 = (self.0 * 2).min(Duration::from_millis(20));
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
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

/// True while `pid` is the process started at `start_time` and has not exited (a zombie,
/// exited but not reaped yet, is not running).
pub fn process_running(pid: u32, start_time: u64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let Some(rest) = stat.rfind(')').and_then(|i| stat.get(i + 2..)) else { return false };
    let mut fields = rest.split(' ');
    let state = fields.next();
    let start = fields.nth(18).and_then(|s| s.parse::<u64>().ok());
    start == Some(start_time) && state != Some("Z") && state != Some("X")
}

/// Sets (`on`) or clears `MOUNT_ATTR_NOSYMFOLLOW` on the mount at `path`, fsarena's own mount
/// point (mount_setattr(2), Linux 5.12): while set, the kernel follows no symbolic link on that
/// mount in any path resolution (reading a link stays possible). Hand-written: neither rustix
/// nor libc wraps mount_setattr.
pub fn set_nosymfollow(path: &Path, on: bool) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    /// `struct mount_attr` of <linux/mount.h>.
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_NOSYMFOLLOW: u64 = 0x0020_0000;
    let attr = match on {
        true => MountAttr { attr_set: MOUNT_ATTR_NOSYMFOLLOW, attr_clr: 0, propagation: 0, userns_fd: 0 },
        false => MountAttr { attr_set: 0, attr_clr: MOUNT_ATTR_NOSYMFOLLOW, propagation: 0, userns_fd: 0 },
    };
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a NUL-terminated path and a mount_attr of the size passed, both live for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    match r {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// True if `device` (`/dev/loopN`) is attached to `image` and that is still the inode
/// `image_id` (a loop device reused for another file, or a new file under the same name, is
/// not ours).
pub fn loop_backed_by(device: &Path, image: &Path, image_id: crate::safefs::Identity) -> bool {
    let Some(name) = device.file_name().and_then(|n| n.to_str()) else { return false };
    let backing = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).unwrap_or_default();
    let backing = backing.trim_end_matches('\n');
    let backing = backing.strip_suffix(" (deleted)").unwrap_or(backing);
    if backing.is_empty() || Path::new(backing) != image {
        return false;
    }
    // The backing inode, as the kernel reports it (LOOP_GET_STATUS64 via losetup).
    let ino = run("losetup", &["--noheadings", "--raw", "--output", "BACK-INO", &device.to_string_lossy()]);
    ino.ok().and_then(|i| i.trim().parse::<u64>().ok()) == Some(image_id.ino)
}

/// The signal dispositions of a child forked without an exec: SIGINT ignored (the terminal
/// sends it to the whole process group; the parent decides), SIGTERM, SIGHUP, SIGQUIT and SIGBUS back
/// to their defaults. fsarena's handlers (signal-hook) write to a pipe the child has closed
/// ([`close_all_but`]), whose number a file the child opens may take: a handler left in
/// place could write into that file.
pub fn reset_signals_after_fork() {
    // SAFETY: setting signal dispositions has no preconditions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        // SIGBUS too: fsarena's own handler parks the faulting thread for a teardown that
        // only the parent can do; a forked job just dies of it, and the parent sees that.
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGBUS] {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}

/// Closes every descriptor above stderr except those in `keep`, in a child right after a
/// fork that is not followed by an exec.
///
/// A fork copies every descriptor of the process, including those other threads opened
/// (other runs' pipes, the work directory's lock, FUSE connections): a forked helper that
/// kept them would hold them open as long as it lives. close_range(2) is one system call,
/// safe between fork and exec; nothing is allocated (the array is sorted in place).
pub fn close_all_but<const N: usize>(mut keep: [i32; N]) {
    keep.sort_unstable();
    let mut first = 3u32;
    for fd in keep.into_iter().filter(|&fd| fd > 2).map(|fd| fd as u32).chain([u32::MAX]) {
        if fd > first {
            // SAFETY: close_range closes descriptors only; the caller uses none of them again.
            unsafe { libc::syscall(libc::SYS_close_range, first, fd - 1, 0u32) };
        }
        first = fd.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::{descends_from, in_our_job};

    /// Sleeps when started by [`the_ranks_of_our_job_are_the_same_program_with_its_marker`].
    #[test]
    fn a_rank_of_the_job() {
        if std::env::var_os("FSARENA_TEST_RANK").is_some() {
            std::thread::sleep(std::time::Duration::from_secs(30));
        }
    }

    #[test]
    fn the_ranks_of_our_job_are_the_same_program_with_its_marker() {
        let marker = ("FSARENA_TEST_JOB", format!("{}", std::process::id()));
        super::ends_with_job(format!("{}={}", marker.0, marker.1));
        let exe = std::env::current_exe().unwrap();
        let rank = |env: bool| {
            let mut c = std::process::Command::new(&exe);
            c.args(["--exact", "sys::tests::a_rank_of_the_job", "--test-threads", "1"]).env("FSARENA_TEST_RANK", "1");
            if env {
                c.env(marker.0, &marker.1);
            }
            c.stdout(std::process::Stdio::null()).spawn().unwrap()
        };
        let mut children = vec![rank(true), rank(false)];
        children.push(std::process::Command::new("sleep").arg("30").env(marker.0, &marker.1).spawn().unwrap());
        // The rank is found once its exec is complete (a moment on a loaded machine).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !in_our_job(children[0].id()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let found: Vec<bool> = children.iter().map(|c| in_our_job(c.id())).collect();
        let rank = format!("/proc/{}", children[0].id());
        let seen = (std::fs::read_link(format!("{rank}/exe")), std::fs::read_to_string(format!("{rank}/stat")));
        for mut c in children {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Only the same program with the marker: not without it, nor another program with it.
        assert_eq!(found, [true, false, false], "the rank: {seen:?}");
    }

    #[test]
    fn a_child_descends_from_this_process_and_init_does_not() {
        let own = std::process::id();
        assert!(descends_from(own, own));
        let mut child = std::process::Command::new("sleep").arg("5").spawn().expect("sleep");
        assert!(descends_from(child.id(), own));
        assert!(!descends_from(own, child.id()), "a parent does not descend from its child");
        assert!(!descends_from(1, own));
        let _ = child.kill();
        let _ = child.wait();
    }
}
