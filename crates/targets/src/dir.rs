//! `dir:path=PATH`: an existing directory the user names, never formatted or unmounted.
//!
//! Workloads work in a fresh scratch directory `fsarena-RUNID-N` made there. That directory
//! is held, not named: it is created with `mkdirat` beneath a descriptor of the user's
//! directory, kept open for the target's life, and every workload reaches it through that
//! descriptor. The root handed to workloads is a bind mount of the held descriptor
//! (`/proc/self/fd/N` as the source of `mount(2)`, which the kernel resolves to the very
//! directory held, never to a path) on a mount point in fsarena's own directory (the 0700 work
//! directory, or the run's 0711 directory under /run/fsarena when a server runs as another
//! account). Why a bind mount rather than `/proc/self/fd/N` as the root itself:
//!
//! - external programs see an ordinary directory: servers that run as postgres or mysql
//!   (who may not look into root's `/proc/PID/fd`), job processes, exec commands, tools that
//!   canonicalize their paths (a canonicalized `/proc/self/fd/N` is the user's path again,
//!   which an attacker can re-point; the mount point is in a directory only root can change);
//! - `/proc/self/fd/N` means another descriptor in every child process;
//! - `fsarena up --detach` hands the root to the user's tools after fsarena exits: the bind
//!   mount stays (recorded in the state file) where a descriptor would be gone.
//!
//! Renaming the scratch directory and planting a link in its place (anyone who can change the
//! user's directory could) then changes nothing for the run: the mount holds the directory,
//! not its name. Reports show the user's path (`root` in the target's facts).
//!
//! Without the privilege to mount (fsarena not root, or a container without CAP_SYS_ADMIN)
//! workloads reach the scratch directory by its path, and the directory holding it passes the
//! same check: only root or fsarena's own user can change its entries, so nobody else can
//! re-point it.
//!
//! A directory that someone else can change the entries of (owned by another user, or
//! writable by group or others without the sticky bit) is refused when the spec is parsed,
//! before anything exists (exit 2), and again on the held descriptor when provisioning.

use crate::beneath::HeldDir;
use crate::common::{CommonOptions, ProvisionCtx, Provisioned};
use crate::requirements::Requirement;
use crate::state::Resource;
use crate::{sys, Mounted, Target, TargetError};
use fsarena_core::{InputError, Spec};
use rustix::fs::{self as rfs, Mode, OFlags};
use std::path::{Path, PathBuf};

/// The uid fsarena runs as.
fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// What is accepted, appended to every refusal (the work directory's wording, for `dir:`).
fn accepted() -> String {
    let uid = euid();
    let owners = if uid == 0 { "root".to_string() } else { format!("root or uid {uid}") };
    format!(
        "a dir: target must be a directory owned by {owners} that nobody else can write to (unless sticky, like /tmp): \
         fsarena creates and removes files in it"
    )
}

/// Why the directory of owner `uid` and `mode` is refused, if it is: someone other than root
/// (or fsarena's own user) can change its entries.
fn untrusted(dir: &Path, uid: u32, mode: u32) -> Option<String> {
    // The user fsarena runs as counts as root here: a non-root fsarena works in its user's
    // own directories.
    let owner = if uid == euid() { 0 } else { uid };
    if !crate::beneath::others_can_write(mode, owner) {
        return None;
    }
    Some(if owner != 0 {
        format!("{} is owned by uid {uid}", dir.display())
    } else {
        format!("{} is writable by others (mode {:04o}) and not sticky", dir.display(), mode & 0o7777)
    })
}

/// A `dir:` target, parsed and checked.
#[derive(Debug, Clone)]
pub struct DirTarget {
    common: CommonOptions,
    /// The directories: the first is where the subdirectory is made, each one client's view.
    paths: Vec<PathBuf>,
}

impl DirTarget {
    /// From `dir:path=...[,label=...]`; a relative path is taken against the current directory.
    /// `path=A:B:...` (colon-separated, as fio's `directory=`) names several client mounts of
    /// one shared filesystem on this host: the subdirectory is made through the first and must
    /// then be seen through every other, which proves they are one filesystem; io's `clients=`
    /// and MPI ranks use them in turn.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        let common = CommonOptions::parse(spec, text, &["path"])?;
        let given =
            spec.get("path").ok_or_else(|| InputError::new("target dir needs path=, e.g. dir:path=/mnt/nfs"))?;
        let mut paths = Vec::new();
        for one in given.split(':') {
            let path = std::path::absolute(one)
                .map_err(|e| InputError::new(format!("dir:path={one}: {e}: expected an existing directory")))?;
            let meta = std::fs::metadata(&path).ok().filter(|m| m.is_dir() && !one.is_empty());
            let Some(meta) = meta else {
                return Err(InputError::new(format!(
                    "dir:path={one}: not an existing directory (several client mounts are separated by ':')"
                )));
            };
            use std::os::unix::fs::MetadataExt;
            if let Some(why) = untrusted(&path, meta.uid(), meta.mode()) {
                return Err(InputError::new(format!("dir:path={one}: {why}; {}", accepted())));
            }
            paths.push(path);
        }
        Ok(Self { common, paths })
    }

    /// Where the subdirectory is made.
    fn path(&self) -> &Path {
        &self.paths[0]
    }
}

/// Opens the user's directory `path` (following links, as the user named it) and checks the
/// directory actually held, which is what fsarena will act beneath.
fn hold(path: &Path) -> Result<HeldDir, TargetError> {
    let fd = rfs::open(path, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| TargetError(format!("cannot open {}: {e}", path.display())))?;
    let st = rfs::fstat(&fd).map_err(|e| TargetError(format!("cannot inspect {}: {e}", path.display())))?;
    if let Some(why) = untrusted(path, st.st_uid, st.st_mode) {
        return Err(TargetError(format!("dir:path={}: {why}; {}", path.display(), accepted())));
    }
    Ok(HeldDir::from_fd(fd, path.to_path_buf()))
}

/// Makes `held` the root workloads reach: bind-mounted from its descriptor on a new mount
/// point `what` in fsarena's own directory (recorded), or, without the privilege to mount, its
/// path `shown`. The fact `held` says which.
fn bind_held(
    p: &mut Provisioned,
    ctx: &ProvisionCtx<'_>,
    held: &HeldDir,
    what: &str,
    shown: &Path,
) -> Result<PathBuf, TargetError> {
    let mnt = p.make_dir(ctx.mount_path(what), false)?;
    match rustix::mount::mount_bind(held.proc_path(), &mnt) {
        Ok(()) => {
            p.add_mount(&mnt, false)?;
            // What the directory holds besides fsarena's own files is the user's.
            p.tenant_mounts.push(mnt.clone());
            Ok(mnt)
        }
        Err(e @ (rustix::io::Errno::PERM | rustix::io::Errno::ACCESS)) => {
            p.fact("held", format!("no: cannot bind-mount it ({e}); workloads reach it by its path"));
            Ok(shown.to_path_buf())
        }
        Err(e) => Err(TargetError(format!("cannot bind-mount {} on {}: {e}", shown.display(), mnt.display()))),
    }
}

impl Target for DirTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        "dir"
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        Vec::new()
    }
    fn clients(&self) -> Option<u32> {
        Some(u32::try_from(self.paths.len()).unwrap_or(u32::MAX))
    }
    fn capacity_bytes(&self) -> Option<u64> {
        // A filesystem that reports no size at all (ramfs, some FUSE and network
        // filesystems) has an unknown capacity, not a zero one.
        sys::free_bytes(self.path())
    }
    fn capacity_files(&self) -> Option<u64> {
        sys::free_files(self.path())
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::new(ctx);
        let built = (|| {
            let name = format!("fsarena-{}-{}", ctx.workdir.run_id(), ctx.index);
            let parent = hold(self.path())?;
            let work = self.path().join(&name);
            // A server's account (postgres, mysql, www-data) must pass through it to its data
            // directory: 0711 when a workload runs a server, else root's alone.
            let mode = if ctx.mount_base.is_some() { 0o711 } else { 0o700 };
            let scratch = parent
                .create_dir(&name, mode, None)
                .map_err(|e| TargetError(format!("cannot create {}: {e}", work.display())))?;
            let id = scratch.identity().map_err(|e| TargetError(format!("cannot inspect {}: {e}", work.display())))?;
            p.add(Resource::Scratch { path: work.clone(), id })?;
            p.fact("kind", "dir");
            p.fact("path", self.paths.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(":"));
            p.root = bind_held(&mut p, ctx, &scratch, &format!("mnt-{}-dir", ctx.index), &work)?;
            p.shown_roots.push(work.clone());
            p.held.push(scratch);
            if self.paths.len() > 1 {
                for (k, other) in self.paths.iter().enumerate() {
                    // The directory just made (its name has the run's id) through every
                    // client: the paths are one filesystem, not copies that would each hold
                    // part. (Not by inode number: a FUSE filesystem may number per mount.)
                    let seen = hold(other).and_then(|d| {
                        d.dir(Path::new(&name)).map_err(|_| {
                            TargetError(format!(
                                "dir:path: {} is not a mount of the same filesystem as {}: the directory {name} made there is not seen through it",
                                other.display(),
                                self.path().display()
                            ))
                        })
                    })?;
                    let shown = other.join(&name);
                    let client = match k {
                        0 => p.root.clone(),
                        _ => bind_held(&mut p, ctx, &seen, &format!("mnt-{}-dir-{k}", ctx.index), &shown)?,
                    };
                    p.clients.push(client);
                    if k > 0 {
                        p.shown_roots.push(shown);
                    }
                    p.held.push(seen);
                }
                p.fact("clients", self.paths.len().to_string());
            }
            Ok(())
        })();
        p.finish(built)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    fn parse(dir: &std::path::Path) -> Result<(), String> {
        crate::parse(&format!("dir:path={}", dir.display()), false).map(|_| ()).map_err(|e| e.to_string())
    }

    #[test]
    fn directories_others_can_change_are_refused_when_parsed() {
        let base = std::path::PathBuf::from(format!("/var/tmp/fsarena-host-dirspec-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        for (name, mode) in [("closed", 0o755), ("sticky", 0o1777), ("open", 0o777), ("group", 0o775)] {
            let d = base.join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        assert_eq!(parse(&base.join("closed")), Ok(()));
        assert_eq!(parse(&base.join("sticky")), Ok(()), "a sticky directory such as /tmp is fine");
        let e = parse(&base.join("open")).unwrap_err();
        assert!(e.contains("is writable by others (mode 0777) and not sticky; a dir: target must be"), "{e}");
        assert!(parse(&base.join("group")).unwrap_err().contains("(mode 0775)"));
        if rustix::process::geteuid().is_root() {
            let theirs = base.join("closed");
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let e = parse(&theirs).unwrap_err();
            assert!(e.contains("is owned by uid 65534; a dir: target must be a directory owned by root"), "{e}");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
