//! FUSE targets: `fuse2fs` (an ext2/3/4 image through FUSE) and `fuse:cmd='... {mnt}'` (any
//! FUSE filesystem started by a shell command). The daemon runs in a process group of its own,
//! recorded, and is ended with its whole group.

use crate::common::{CommonOptions, ProvisionCtx, Provisioned};
use crate::kinds::{check_minimum, create_image, make_filesystem, workdir_facts};
use crate::requirements::{Requirement, FUSE2FS};
use crate::state::Resource;
use crate::table::{filesystem, Filesystem, Needs};
use crate::{sys, Mounted, Target, TargetError};
use fsarena_core::{InputError, Spec};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use fsarena_core::shell_quote;

/// `fuse2fs[:fs=ext4,size=,mkfs=,mount=]` and `fuse:cmd='... {mnt}'`.
#[derive(Debug, Clone)]
pub struct FuseTarget {
    common: CommonOptions,
    /// For fuse2fs: the filesystem inside the image.
    image_fs: Option<&'static Filesystem>,
    /// For fuse: the command, with {mnt} and {work}.
    cmd: Option<String>,
    timeout: Duration,
}

impl FuseTarget {
    /// From `fuse2fs[...]` or `fuse:cmd=...[,timeout=]`.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        if spec.kind == "fuse2fs" {
            let common = CommonOptions::parse(spec, text, &["fs", "size", "mkfs", "mount"])?;
            let image_fs = match spec.get("fs").unwrap_or("ext4") {
                name @ ("ext2" | "ext3" | "ext4") => filesystem(name),
                _ => None,
            }
            .ok_or_else(|| {
                InputError::new(format!(
                    "fuse2fs: fs={}: expected ext2, ext3 or ext4",
                    spec.get("fs").unwrap_or_default()
                ))
            })?;
            check_minimum("fuse2fs", image_fs, common.size, "size=")?;
            return Ok(Self { common, image_fs: Some(image_fs), cmd: None, timeout: Duration::from_secs(30) });
        }
        let common = CommonOptions::parse(spec, text, &["cmd", "timeout"])?;
        let cmd = spec
            .get("cmd")
            .ok_or_else(|| InputError::new("fuse needs cmd='...{mnt}...', e.g. fuse:cmd='fuse2fs -f img {mnt}'"))?;
        if !cmd.contains("{mnt}") {
            return Err(InputError::new(format!(
                "fuse: cmd='{cmd}' has no {{mnt}}: fsarena needs to know where it mounts"
            )));
        }
        for quoted in ["'{mnt}'", "\"{mnt}\"", "'{work}'", "\"{work}\""] {
            if cmd.contains(quoted) {
                return Err(InputError::new(format!(
                    "fuse: cmd='{cmd}' quotes {quoted}: write {} bare, fsarena substitutes it shell-quoted",
                    quoted.trim_matches(['\'', '"'])
                )));
            }
        }
        let timeout = match spec.get("timeout") {
            Some(t) => fsarena_core::units::parse_time(t, 1_000_000_000).map_err(|e| e.at("fuse timeout"))?,
            None => fsarena_core::Nanos(30_000_000_000),
        };
        // Every start of the daemon may wait this long (crash starts it once per state).
        if timeout.0 == 0 || timeout.0 > 3_600_000_000_000 {
            return Err(InputError::new(format!(
                "fuse: timeout={}: expected a time from 1ns to at most 1h, such as 30s",
                spec.get("timeout").unwrap_or_default()
            )));
        }
        Ok(Self { common, image_fs: None, cmd: Some(cmd.to_string()), timeout: Duration::from_nanos(timeout.0) })
    }

    /// The shell command for `fuse:`, with `{mnt}` and `{work}` replaced by quoted paths.
    fn command(&self, mnt: &Path, work: &Path) -> String {
        substitute(self.cmd.as_deref().unwrap_or_default(), mnt, work)
    }

    fn spawn(
        &self,
        p: &mut Provisioned,
        ctx: &ProvisionCtx<'_>,
        mnt: &Path,
        program: &str,
        args: &[String],
    ) -> Result<(), TargetError> {
        let (log_file, log) = p.make_file(ctx.path(&format!("fuse-{}.log", ctx.index)))?;
        p.log = Some(log);
        spawn_daemon(p, mnt, program, args, log_file, (self.timeout, "timeout="))
    }
}

/// A `fuse:` command with `{mnt}` and `{work}` replaced by shell-quoted paths.
pub fn substitute(cmd: &str, mnt: &Path, work: &Path) -> String {
    cmd.replace("{mnt}", &shell_quote(&mnt.to_string_lossy())).replace("{work}", &shell_quote(&work.to_string_lossy()))
}

/// Starts `cmd` in a tree of its own (a process group, and a cgroup where the machine allows:
/// [`crate::contain`]), stdin empty, stdout and stderr to `log`, and records it before
/// anything waits on it: teardown ends every process of the tree, whatever the first one did.
pub(crate) fn spawn_recorded(
    p: &mut Provisioned,
    cmd: &mut Command,
    log: std::fs::File,
) -> Result<std::process::Child, TargetError> {
    let log_err = log.try_clone().map_err(|e| TargetError(e.to_string()))?;
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdin(Stdio::null()).stdout(log).stderr(log_err);
    let prepared = crate::contain::prepare(cmd, crate::contain::Setup::default());
    let child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            prepared.abandon();
            return Err(TargetError(format!("cannot start {program}: {e}")));
        }
    };
    // Until it is reaped, the child's /proc entry stays, so its start time is readable.
    let tree = prepared.started(child.id());
    p.add(Resource::Process { pid: tree.leader, start_time: tree.start_time, cgroup: tree.cgroup })?;
    Ok(child)
}

/// Starts a FUSE daemon in the foreground in a process group of its own, its output to `log`;
/// records its PID and start time, then its mount at `mnt` once it appears (within `timeout`,
/// which the option `key` sets: named in the error; else an error, and the recorded process
/// is ended by the teardown). A daemon that exits or does not mount in time is reported with
/// the last lines it wrote.
pub(crate) fn spawn_daemon(
    p: &mut Provisioned,
    mnt: &Path,
    program: &str,
    args: &[String],
    log: std::fs::File,
    (timeout, key): (Duration, &str),
) -> Result<(), TargetError> {
    // fsarena's own handle on the log, to read what the daemon said if it fails.
    let said = log.try_clone().map_err(|e| TargetError(format!("cannot keep a handle on {program}'s log: {e}")))?;
    let mut child = spawn_recorded(p, Command::new(program).args(args), log)?;
    let pid = child.id();
    p.fact("fuse_pid", pid.to_string());
    let (deadline, mut backoff) = (Instant::now() + timeout, sys::Backoff::new());
    loop {
        if sys::mount_at(mnt).is_some_and(|m| m.fstype.starts_with("fuse")) {
            p.add_mount(mnt, true)?;
            // The child is reaped by teardown's kill; do not leave it a zombie meanwhile.
            std::thread::spawn(move || child.wait());
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(TargetError(format!(
                "{program} exited ({status}) without mounting {}; its last output: {}",
                mnt.display(),
                output_tail(&said)
            )));
        }
        if Instant::now() > deadline {
            return Err(TargetError(format!(
                "the FUSE command did not mount {} within {timeout:?} ({key}); fsarena ended it (process group {pid}); its last output: {}",
                mnt.display(),
                output_tail(&said)
            )));
        }
        backoff.pause();
    }
}

impl Target for FuseTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        if self.image_fs.is_some() {
            "fuse2fs"
        } else {
            "fuse"
        }
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        let mut r = Needs::Fuse.requirements();
        if let Some(fs) = self.image_fs {
            r.extend([FUSE2FS, fs.mkfs_requirement()]);
        }
        r
    }
    fn image_bytes(&self) -> u64 {
        if self.image_fs.is_some() {
            self.common.size
        } else {
            0
        }
    }
    fn capacity_bytes(&self) -> Option<u64> {
        // A FUSE command's filesystem is unknown until it runs.
        self.image_fs.map(|_| self.common.size)
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::new(ctx);
        let built = (|| {
            let mnt = p.make_dir(ctx.mount_path(&format!("mnt-{}-{}", ctx.index, self.kind())), false)?;
            p.root = mnt.clone();
            p.fact("kind", self.kind());
            workdir_facts(&mut p, ctx.workdir.path());
            if let Some(fs) = self.image_fs {
                let image =
                    create_image(&mut p, ctx.path(&format!("image-{}-fuse2fs.img", ctx.index)), self.common.size)?;
                p.fact("image", format!("{} ({} bytes, sparse)", image.display(), self.common.size));
                make_filesystem(&mut p, fs, &self.common.mkfs, &image)?;
                // fuse2fs gets its arguments directly, not through a shell.
                let mut args =
                    vec!["-f".to_string(), image.to_string_lossy().into_owned(), mnt.to_string_lossy().into_owned()];
                // Other users may use the filesystem, as a kernel mount by root (a FUSE mount
                // without allow_other refuses every other uid, so workloads acting as other
                // users, posix's permission cases, would test FUSE, not fuse2fs), and the
                // kernel checks permissions (fuse2fs 1.47.0 alone lets a user through a
                // directory without search permission).
                let mut options = "allow_other,default_permissions".to_string();
                if !self.common.mount.is_empty() {
                    options = format!("{options},{}", self.common.mount);
                }
                args.extend(["-o".to_string(), options]);
                p.fact("fuse_command", format!("fuse2fs {}", args.join(" ")));
                p.fact("fuse2fs_version", sys::tool_version("fuse2fs", "-V"));
                self.spawn(&mut p, ctx, &mnt, "fuse2fs", &args)
            } else {
                let work = p.make_dir(ctx.path(&format!("work-{}-fuse", ctx.index)), true)?;
                let cmd = self.command(&mnt, &work);
                p.fact("fuse_command", cmd.clone());
                self.spawn(&mut p, ctx, &mnt, "sh", &["-c".to_string(), cmd])?;
                // Any command serves this mount: what it answers to a lookup is a tenant's.
                p.tenant_mounts.push(mnt.clone());
                Ok(())
            }
        })();
        p.finish(built)
    }
}

/// The last lines a daemon wrote to its log, for the error that says why it did not mount:
/// read through fsarena's own handle on the file (never its path, which a daemon could race;
/// the handle is write-only, so it is opened again for reading through /proc/self/fd, which
/// names the same file), at most its last 4 KiB, the last 3 non-empty lines made printable
/// and joined by ` | `.
fn output_tail(log: &std::fs::File) -> String {
    use std::os::unix::fs::FileExt;
    use std::os::unix::io::AsRawFd;
    const TAIL: u64 = 4096;
    let Ok(log) = std::fs::File::open(format!("/proc/self/fd/{}", log.as_raw_fd())) else {
        return "(its log could not be read)".to_string();
    };
    let len = log.metadata().map_or(0, |m| m.len());
    let from = len.saturating_sub(TAIL);
    let mut buf = vec![0u8; usize::try_from(len - from).unwrap_or(0)];
    let read = log.read_at(&mut buf, from).unwrap_or(0);
    let text = String::from_utf8_lossy(&buf[..read]);
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    let last = &lines[lines.len().saturating_sub(3)..];
    if last.is_empty() {
        return "(nothing)".to_string();
    }
    last.iter().map(|l| fsarena_core::printable(l).into_owned()).collect::<Vec<_>>().join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_reach_the_shell_as_one_literal_word() {
        let scratch = std::env::temp_dir().join(format!("fsarena-h1-quote-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        let pwned = scratch.join("PWNED");
        let hostile = format!("/var/tmp/a b;touch {};#'\"$(touch {})`x`", pwned.display(), pwned.display());
        let spec = Spec::parse("fuse:cmd='printf %s/ {mnt} {work}'").unwrap();
        let target = FuseTarget::from_spec(&spec, "fuse").unwrap();
        let cmd = target.command(Path::new(&hostile), Path::new("/w/it's"));
        let out = Command::new("sh").args(["-c", &cmd]).current_dir(&scratch).output().unwrap();
        assert!(out.status.success(), "{cmd}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{hostile}//w/it's/"), "{cmd}");
        assert!(!pwned.exists(), "the shell ran part of a path: {cmd}");
        std::fs::remove_dir_all(&scratch).unwrap();
    }

    #[test]
    fn a_daemons_last_output_is_its_last_three_lines_made_printable() {
        use std::io::Write;
        // Write-only, as the daemons' logs are made.
        let dir = tempfile::tempdir().unwrap();
        let mut log = std::fs::File::create(dir.path().join("daemon.log")).unwrap();
        assert_eq!(output_tail(&log), "(nothing)");
        // Past the 4 KiB read: only the end counts; an escape sequence is shown, not sent.
        writeln!(log, "{}", "x".repeat(5000)).unwrap();
        write!(log, "first\n\nsecond\n\x1b]0;title\x07third\nfourth  \n\n").unwrap();
        assert_eq!(output_tail(&log), "second | \\x1b]0;title\\x07third | fourth");
    }

    #[test]
    fn placeholders_quoted_by_the_user_are_refused() {
        for cmd in ["fuse:cmd='x \"{mnt}\"'", "fuse:cmd='x {mnt} \"{work}\"'"] {
            let e = FuseTarget::from_spec(&Spec::parse(cmd).unwrap(), cmd).unwrap_err();
            assert!(e.message.contains("bare"), "{e}");
        }
    }
}
