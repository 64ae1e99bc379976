//! `glusterfs`: a GlusterFS volume on this host. Each brick is a sparse image in the work
//! directory on a loop device with xfs (the brick filesystem Gluster recommends); fsarena
//! starts its own `glusterd` in the foreground with its working and run directories and its
//! CLI socket in the work directory, creates and starts the volume, and mounts it `clients=`
//! times, each mount its own `glusterfs` client process (in the foreground, in a tree of its
//! own like every process fsarena starts) with its own caches.
//!
//! glusterd and the brick processes it starts also write under /var/log/glusterfs,
//! /var/lib/glusterd and /var/run/gluster where no option redirects them (brick logs, brick
//! sockets, the command history, geo-replication templates). Other programs may write there
//! too, so fsarena never deletes anything there: glusterd runs in a mount namespace of its
//! own (its bricks inherit it) in which those three directories are bind mounts of the run's
//! own directories, gone with the namespace when the last of those processes ends. The
//! client mounts are made in fsarena's namespace, where the workloads see them.
//! Only one glusterd can run on a host (port 24007), so a glusterd fsarena did not start is
//! refused, never touched.
//!
//! With `servers=` and `volume=` the volume is someone else's, served from other hosts:
//! fsarena starts no glusterd and makes no brick, and only mounts the volume `clients=` times
//! (each mount its own client process), on every host that runs ranks of an MPI job.

use crate::common::{CommonOptions, ProvisionCtx, Provisioned};
use crate::kinds::{check_minimum, create_image, make_filesystem, mount, workdir_facts};
use crate::requirements::Requirement;
use crate::safefs;
use crate::state::Resource;
use crate::table::{filesystem, Needs};
use crate::{sys, Mounted, Target, TargetError};
use fsarena_core::{InputError, Spec};
use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The directories GlusterFS writes to outside the work directory, each replaced in
/// glusterd's mount namespace by a directory of the run's own (named here). One that does not
/// exist on the host is made by fsarena (recorded, and removed while empty and still that
/// directory): a bind mount needs a mount point.
pub(crate) const OUTSIDE_ROOTS: [&str; 3] = ["/var/log/glusterfs", "/var/run/gluster", "/var/lib/glusterd"];
/// The run's own directory standing in for each of [`OUTSIDE_ROOTS`], in glusterd's directory.
const OWN_ROOTS: [&str; 3] = ["log", "sockets", "varlib"];

/// glusterd's CLI socket when nobody redirects it: alive means someone else's glusterd.
const DEFAULT_SOCKET: &str = "/var/run/glusterd.socket";
/// glusterd's management port.
const GLUSTERD_PORT: u16 = 24007;
/// Default brick size: sparse, so only what the workload writes takes space.
const DEFAULT_BRICK_SIZE: u64 = 1 << 30;
/// How long glusterd may take to answer, and the CLI to finish one command.
const TIMEOUT: Duration = Duration::from_secs(60);

/// How the bricks make up the volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Files spread over the bricks.
    Distribute,
    /// Every file on `n` bricks.
    Replica(u32),
    /// Erasure-coded over `n` bricks, surviving the loss of `redundancy`.
    Disperse(u32, u32),
}

/// `glusterfs[:bricks=,replica=|disperse=,redundancy=,size=,clients=,label=]`, or
/// `glusterfs:servers=HOST[,HOST...],volume=NAME[,clients=,label=]`.
#[derive(Debug, Clone)]
pub struct GlusterTarget {
    common: CommonOptions,
    bricks: u32,
    layout: Layout,
    clients: u32,
    /// A volume served from other hosts (`servers=`, `volume=`): mounted only.
    remote: Option<Remote>,
}

/// A volume fsarena does not serve: the hosts whose glusterd gives its volume file (the first
/// answering), and its name.
#[derive(Debug, Clone)]
struct Remote {
    servers: Vec<String>,
    volume: String,
}

impl Remote {
    /// From `servers=` and `volume=` (None when neither is given); refuses the keys of a volume
    /// fsarena makes, and names that are no host or volume name, before anything is created.
    fn from_spec(spec: &Spec) -> Result<Option<Self>, InputError> {
        let err = |m: String| Err(InputError::new(format!("glusterfs: {m}")));
        let (servers, volume) = match (spec.get("servers"), spec.get("volume")) {
            (None, None) => return Ok(None),
            (Some(_), None) => return err("servers= needs volume=: the name of the volume they serve".into()),
            (None, Some(_)) => return err("volume= needs servers=: the hosts that serve it".into()),
            (Some(s), Some(v)) => (s, v),
        };
        if let Some(key) =
            ["bricks", "replica", "disperse", "redundancy", "size"].iter().find(|k| spec.get(k).is_some())
        {
            return err(format!(
                "{key}= describes a volume fsarena makes; with servers= the volume is the servers' own: give servers=, volume=, clients= and label= only"
            ));
        }
        let host = |h: &str| {
            !h.is_empty()
                && h.len() <= 253
                && h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
                && !h.starts_with(['-', '.'])
        };
        let servers: Vec<String> = servers.split(',').map(|h| h.trim().to_string()).collect();
        if let Some(bad) = servers.iter().find(|h| !host(h)) {
            return err(format!(
                "servers={}: '{bad}' is not a host name or IPv4 address (letters, digits, '.' and '-'); several are quoted: servers='srv1,srv2'",
                servers.join(",")
            ));
        }
        let named = !volume.is_empty()
            && volume.len() <= 64
            && volume.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            && !volume.starts_with('-');
        if !named {
            return err(format!("volume={volume}: expected a GlusterFS volume name (letters, digits, '_' and '-')"));
        }
        Ok(Some(Self { servers, volume: volume.to_string() }))
    }
}

fn count(spec: &Spec, key: &str) -> Result<Option<u32>, InputError> {
    spec.get(key)
        .map(|v| {
            v.parse::<u32>()
                .map_err(|_| InputError::new(format!("glusterfs: {key}={v}: expected a whole number such as 2")))
        })
        .transpose()
}

impl GlusterTarget {
    /// From the spec; refuses layouts Gluster would refuse, before anything is created.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        let keys = ["bricks", "replica", "disperse", "redundancy", "size", "clients", "servers", "volume"];
        let mut common = CommonOptions::parse(spec, text, &keys)?;
        let remote = Remote::from_spec(spec)?;
        if spec.get("size").is_none() {
            common.size = DEFAULT_BRICK_SIZE;
        }
        let xfs = filesystem("xfs").ok_or_else(|| InputError::new("xfs is not in the filesystem table"))?;
        if remote.is_none() {
            check_minimum("glusterfs", xfs, common.size, "size= (per brick) ")?;
        }
        let replica = count(spec, "replica")?;
        let disperse = count(spec, "disperse")?;
        let redundancy = count(spec, "redundancy")?;
        let bricks = count(spec, "bricks")?.or(replica).or(disperse).unwrap_or(1);
        let err = |m: String| Err(InputError::new(format!("glusterfs: {m}")));
        if bricks == 0 || bricks > 64 {
            return err(format!("bricks={bricks}: expected 1 to 64"));
        }
        let layout = match (replica, disperse, redundancy) {
            (Some(_), Some(_), _) => return err("replica= and disperse= exclude each other".into()),
            (Some(_), None, Some(_)) | (None, None, Some(_)) => {
                return err("redundancy= goes with disperse=".into());
            }
            (Some(r), None, None) if r < 2 => return err(format!("replica={r}: expected 2 or more")),
            (Some(r), None, None) if bricks % r != 0 => {
                return err(format!("replica={r} does not divide bricks={bricks}: expected a multiple of {r}"));
            }
            (Some(r), None, None) => Layout::Replica(r),
            (None, Some(d), _) if d < 3 => return err(format!("disperse={d}: expected 3 or more")),
            (None, Some(d), _) if bricks < d || bricks % d != 0 => {
                return err(format!("disperse={d} needs a multiple of {d} bricks, not bricks={bricks}"));
            }
            (None, Some(d), r) => {
                let r = r.unwrap_or(1);
                if r == 0 || 2 * r >= d {
                    return err(format!("disperse={d},redundancy={r}: expected 1 to {}", (d - 1) / 2));
                }
                Layout::Disperse(d, r)
            }
            (None, None, None) => Layout::Distribute,
        };
        let clients = count(spec, "clients")?.unwrap_or(1);
        if clients == 0 || clients > 64 {
            return err(format!("clients={clients}: expected 1 to 64"));
        }
        if remote.is_some() {
            common.size = 0;
        }
        Ok(Self { common, bricks, layout, clients, remote })
    }

    /// The `volume create` words between the name and the bricks.
    fn layout_args(&self) -> Vec<String> {
        match self.layout {
            Layout::Distribute => Vec::new(),
            Layout::Replica(r) => vec!["replica".into(), r.to_string()],
            Layout::Disperse(d, r) => vec!["disperse".into(), d.to_string(), "redundancy".into(), r.to_string()],
        }
    }
}

impl Target for GlusterTarget {
    fn label(&self) -> &str {
        &self.common.label
    }
    fn kind(&self) -> &str {
        "glusterfs"
    }
    fn options(&self) -> Vec<(String, String)> {
        self.common.params.clone()
    }
    fn requirements(&self) -> Vec<Requirement> {
        match self.remote {
            Some(_) => Needs::GlusterClient.requirements(),
            None => Needs::Gluster.requirements(),
        }
    }
    fn clients(&self) -> Option<u32> {
        Some(self.clients)
    }
    fn image_bytes(&self) -> u64 {
        match self.remote {
            Some(_) => 0,
            None => self.common.size * u64::from(self.bricks),
        }
    }
    fn mounts_on_every_host(&self) -> bool {
        self.remote.is_some()
    }
    fn capacity_bytes(&self) -> Option<u64> {
        if self.remote.is_some() {
            // The servers' bricks: only the mounted volume knows.
            return None;
        }
        let b = u64::from(self.bricks);
        let data_bricks = match self.layout {
            Layout::Distribute => b,
            Layout::Replica(r) => b / u64::from(r),
            Layout::Disperse(d, r) => b / u64::from(d) * u64::from(d - r),
        };
        Some(self.common.size * data_bricks)
    }
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError> {
        let mut p = Provisioned::new(ctx);
        let built = match &self.remote {
            Some(remote) => self.mount_remote(&mut p, ctx, remote),
            None => refuse_foreign_glusterd().and_then(|()| self.build(&mut p, ctx)),
        };
        p.finish(built)
    }
}

/// Refuses when a glusterd fsarena did not start is running: there can be only one per host.
fn refuse_foreign_glusterd() -> Result<(), TargetError> {
    if std::os::unix::net::UnixStream::connect(DEFAULT_SOCKET).is_ok() {
        return Err(TargetError(format!(
            "a glusterd is already running on this host ({DEFAULT_SOCKET} answers); fsarena starts its own and never touches another: stop it first"
        )));
    }
    if port_listening(GLUSTERD_PORT) {
        return Err(TargetError(format!(
            "port {GLUSTERD_PORT} is in use (a glusterd already running?); fsarena starts its own glusterd there and never touches another: stop it first"
        )));
    }
    Ok(())
}

/// Something listens on TCP `port` (IPv4 or IPv6), from /proc/net/tcp{,6}.
fn port_listening(port: u16) -> bool {
    let hex = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).unwrap_or_default().lines().skip(1).any(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            // local_address rem_address st: 0A is LISTEN.
            fields.len() > 3 && fields[1].ends_with(&hex) && fields[3] == "0A"
        })
    })
}

/// The host's first address: bricks refuse localhost.
fn host_ip() -> Result<String, TargetError> {
    let out = sys::run("hostname", &["-I"])?;
    out.split_whitespace()
        .next()
        .map(str::to_string)
        .ok_or_else(|| TargetError("hostname -I shows no address; GlusterFS bricks need one (not 127.0.0.1)".into()))
}

/// Runs the gluster CLI against fsarena's glusterd (its socket in glusterd's directory), in
/// glusterd's stand-ins for the shared directories: the CLI writes there too.
fn cli(socket: &Path, log: &Path, args: &[&str]) -> Result<String, TargetError> {
    let sock = format!("--glusterd-sock={}", socket.display());
    let log = format!("--log-file={}", log.display());
    let timeout = format!("--timeout={}", TIMEOUT.as_secs());
    let mut all = vec!["--mode=script", sock.as_str(), log.as_str(), timeout.as_str()];
    all.extend_from_slice(args);
    let dir = socket.parent().ok_or_else(|| TargetError(format!("{}: no directory", socket.display())))?;
    let mut cmd = Command::new("gluster");
    cmd.args(&all);
    Roots::of(dir)?.apply(&mut cmd);
    sys::run_prepared(cmd, "gluster", &all)
}

/// Undoes a recorded volume: `volume stop NAME force` or `volume delete NAME`. A glusterd that
/// no longer answers leaves nothing to undo (the volume lived in its working directory; its
/// processes are recorded on their own), so that is not an error.
pub(crate) fn undo_volume(name: &str, socket: &Path, log: &Path, started: bool) -> Option<String> {
    if std::os::unix::net::UnixStream::connect(socket).is_err() {
        return None;
    }
    let (args, done) = if started {
        (["volume", "stop", name, "force"], "stopped")
    } else {
        (["volume", "delete", name, ""], "deleted")
    };
    let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
    cli(socket, log, &args).ok().map(|_| format!("{done} GlusterFS volume {name}"))
}

/// The run's own directories standing in for [`OUTSIDE_ROOTS`] (own, root), for glusterd's
/// directory `dir`.
struct Roots(Vec<(CString, CString)>);

impl Roots {
    /// The pairs for glusterd's directory `dir`.
    fn of(dir: &Path) -> Result<Self, TargetError> {
        let c = |path: &Path| {
            CString::new(path.as_os_str().as_bytes())
                .map_err(|_| TargetError(format!("{}: a NUL in the path", path.display())))
        };
        let pairs =
            OUTSIDE_ROOTS.iter().zip(OWN_ROOTS).map(|(root, own)| Ok((c(&dir.join(own))?, c(Path::new(root))?)));
        Ok(Self(pairs.collect::<Result<_, TargetError>>()?))
    }

    /// Makes the run's own directories in `dir`, and the roots missing on the host (each
    /// recorded: a bind mount needs a mount point).
    fn make(p: &mut Provisioned, dir: &Path) -> Result<Self, TargetError> {
        for (root, own) in OUTSIDE_ROOTS.iter().zip(OWN_ROOTS) {
            let root = Path::new(root);
            if std::fs::symlink_metadata(root).is_err() {
                std::fs::create_dir(root).map_err(|e| TargetError(format!("cannot create {}: {e}", root.display())))?;
                let id = safefs::Identity::of_path(root).map_err(|e| TargetError(e.to_string()))?;
                p.add(Resource::Outside { path: root.to_path_buf(), id, dir: true })?;
            }
            let own = dir.join(own);
            std::fs::create_dir(&own).map_err(|e| TargetError(format!("cannot create {}: {e}", own.display())))?;
        }
        Self::of(dir)
    }

    /// Readies `cmd` (glusterd, or the gluster CLI, which writes there too) to run in a mount
    /// namespace of its own in which each root is a bind mount of the run's own directory:
    /// neither it nor the processes it starts (the bricks) write a byte where other programs
    /// keep theirs, and the binds go with the namespace when its last process ends.
    fn apply(self, cmd: &mut Command) {
        let binds = self.0;
        // SAFETY: the closure makes raw system calls only (unshare, mount) on strings made
        // before the fork, which are async-signal-safe, and allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                if libc::unshare(libc::CLONE_NEWNS) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Nothing mounted in this namespace propagates to the host's.
                let flags = libc::MS_REC | libc::MS_PRIVATE;
                if libc::mount(c"none".as_ptr(), c"/".as_ptr(), std::ptr::null(), flags, std::ptr::null()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                for (own, root) in &binds {
                    if libc::mount(own.as_ptr(), root.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
}

/// Records every live GlusterFS process glusterd started for us: those with a pidfile under
/// our run directory `run` whose command line names it.
fn record_daemons(p: &mut Provisioned, run: &Path, known: &mut BTreeSet<u32>) -> Result<(), TargetError> {
    fn pidfiles(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                pidfiles(&path, out);
            } else if path.extension().is_some_and(|x| x == "pid") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    pidfiles(run, &mut files);
    files.sort();
    for file in files {
        let Some(pid) = std::fs::read_to_string(&file).ok().and_then(|s| s.trim().parse::<u32>().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let ours = String::from_utf8_lossy(&cmdline).contains(&*run.to_string_lossy());
        if !ours || known.contains(&pid) {
            continue;
        }
        if let Some(start_time) = sys::process_start_time(pid) {
            p.add(Resource::Process { pid, start_time, cgroup: None })?;
            known.insert(pid);
        }
    }
    Ok(())
}

/// Starts glusterd in the foreground, in a tree and a mount namespace of its own
/// ([`Roots::apply`]), and records it; returns when its CLI socket answers.
fn start_glusterd(p: &mut Provisioned, dir: &Path, log: &Path, socket: &Path) -> Result<u32, TargetError> {
    let lib = dir.join("lib");
    let run = dir.join("run");
    for d in [&lib, &run] {
        std::fs::create_dir(d).map_err(|e| TargetError(format!("cannot create {}: {e}", d.display())))?;
    }
    let out = std::fs::OpenOptions::new()
        .append(true)
        .open(log)
        .map_err(|e| TargetError(format!("cannot open {}: {e}", log.display())))?;
    let mut cmd = Command::new("glusterd");
    Roots::make(p, dir)?.apply(&mut cmd);
    cmd.arg("-N")
        .arg("-p")
        .arg(dir.join("glusterd.pid"))
        .arg("-l")
        .arg(log)
        .arg("--xlator-option")
        .arg(format!("management.working-directory={}", lib.display()))
        .arg("--xlator-option")
        .arg(format!("management.run-directory={}", run.display()))
        .arg("--xlator-option")
        .arg(format!("management.glusterd-sockfile={}", socket.display()));
    let mut child = crate::fuse::spawn_recorded(p, &mut cmd, out)?;
    let pid = child.id();
    let deadline = Instant::now() + TIMEOUT;
    let probe = dir.join("probe.log");
    loop {
        if std::os::unix::net::UnixStream::connect(socket).is_ok() && cli(socket, &probe, &["volume", "list"]).is_ok() {
            // The child is reaped by teardown's kill; do not leave it a zombie meanwhile.
            std::thread::spawn(move || child.wait());
            return Ok(pid);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(TargetError(format!("glusterd exited ({status}) before answering on {}", socket.display())));
        }
        if Instant::now() > deadline {
            return Err(TargetError(format!("glusterd did not answer on {} within {TIMEOUT:?}", socket.display())));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl GlusterTarget {
    fn build(&self, p: &mut Provisioned, ctx: &ProvisionCtx<'_>) -> Result<(), TargetError> {
        let n = ctx.index;
        let name = format!("fsarena-{}-{n}", ctx.workdir.run_id());
        let work = ctx.workdir.path().to_string_lossy();
        // Brick paths go into `IP:/path` words and glusterd's option strings unquoted.
        if !work.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b)) {
            return Err(TargetError(format!(
                "glusterfs: the work directory {work} has characters GlusterFS brick paths cannot hold: use a --workdir of letters, digits, '/', '.', '_' and '-'"
            )));
        }
        let ip = host_ip()?;
        p.fact("kind", "glusterfs");
        p.fact("glusterfs_version", sys::tool_version("glusterfs", "--version"));
        workdir_facts(p, ctx.workdir.path());
        let xfs = filesystem("xfs").ok_or_else(|| TargetError("xfs is not in the filesystem table".into()))?;
        let mut bricks = Vec::new();
        for b in 1..=self.bricks {
            let mnt = p.make_dir(ctx.path(&format!("gluster-{n}-brick{b}")), false)?;
            let image = create_image(p, ctx.path(&format!("gluster-{n}-brick{b}.img")), self.common.size)?;
            let image_id = safefs::Identity::of_path(&image).map_err(|e| TargetError(e.to_string()))?;
            // 512-byte inodes keep Gluster's extended attributes inside the inode.
            make_filesystem(p, xfs, &["-i".into(), "size=512".into()], &image)?;
            let image_s = image.to_string_lossy();
            let dev = sys::run("losetup", &["--find", "--show", "--direct-io=on", &image_s])?;
            p.add(Resource::Loop { device: PathBuf::from(&dev), image: image.clone(), image_id })?;
            mount(p, "xfs", &dev, "", &mnt)?;
            // A directory below the mount point, so that an unmounted brick is never written.
            let brick = mnt.join("brick");
            std::fs::create_dir(&brick).map_err(|e| TargetError(format!("cannot create {}: {e}", brick.display())))?;
            p.fact(&format!("brick{b}"), format!("{ip}:{} (xfs on {dev}, image {})", brick.display(), image.display()));
            bricks.push(format!("{ip}:{}", brick.display()));
        }
        let dir = p.make_dir(ctx.path(&format!("glusterd-{n}")), true)?;
        let socket = dir.join("glusterd.socket");
        if socket.as_os_str().len() > 100 {
            return Err(TargetError(format!(
                "{} is too long for a socket path: use a shorter --workdir",
                socket.display()
            )));
        }
        let (_, log) = p.make_file(ctx.path(&format!("glusterd-{n}.log")))?;
        let (_, cli_log) = p.make_file(ctx.path(&format!("gluster-cli-{n}.log")))?;
        p.log = Some(log.clone());
        let pid = start_glusterd(p, &dir, &log, &socket)?;
        p.fact("glusterd_pid", pid.to_string());
        p.fact("glusterd_log", log.display().to_string());
        let mut args: Vec<&str> = vec!["volume", "create", &name];
        let layout = self.layout_args();
        args.extend(layout.iter().map(String::as_str));
        args.extend(bricks.iter().map(String::as_str));
        args.push("force");
        cli(&socket, &cli_log, &args)?;
        let volume = |started| Resource::GlusterVolume {
            name: name.clone(),
            socket: socket.clone(),
            log: cli_log.clone(),
            started,
        };
        p.add(volume(false))?;
        let started = cli(&socket, &cli_log, &["volume", "start", &name]);
        // Whatever a start that failed half way left, too. The start is recorded after the
        // daemons, so that teardown stops the volume (the bricks exit cleanly) before it
        // ends whichever are still running.
        let mut daemons = BTreeSet::new();
        record_daemons(p, &dir.join("run"), &mut daemons)?;
        p.add(volume(true))?;
        started?;
        let info = cli(&socket, &cli_log, &["volume", "info", &name])?;
        p.fact("volume", name.clone());
        let mut options = Vec::new();
        let mut in_options = false;
        for line in info.lines().map(str::trim) {
            if let Some(t) = line.strip_prefix("Type:") {
                p.fact("volume_type", t.trim());
            } else if let Some(t) = line.strip_prefix("Number of Bricks:") {
                p.fact("volume_bricks", t.trim());
            } else if line.starts_with("Options Reconfigured:") {
                in_options = true;
            } else if in_options && line.contains(": ") {
                options.push(line.replacen(": ", "=", 1));
            }
        }
        p.fact("volume_options", options.join(","));
        p.fact("host_ip", ip.clone());
        self.mount_clients(p, ctx, std::slice::from_ref(&ip), &name)?;
        record_daemons(p, &dir.join("run"), &mut daemons)?;
        Ok(())
    }

    /// Mounts a volume served from other hosts `clients=` times; nothing else is made.
    fn mount_remote(&self, p: &mut Provisioned, ctx: &ProvisionCtx<'_>, remote: &Remote) -> Result<(), TargetError> {
        p.fact("kind", "glusterfs");
        p.fact("glusterfs_version", sys::tool_version("glusterfs", "--version"));
        p.fact("servers", remote.servers.join(","));
        p.fact("volume", remote.volume.clone());
        p.fact("host", rustix::system::uname().nodename().to_string_lossy().into_owned());
        self.mount_clients(p, ctx, &remote.servers, &remote.volume)?;
        // Other hosts serve and change its content (a link planted where a rank's directory
        // goes): a tenant's mount, whose links the kernel follows only for a workload that
        // means to (Mounted::follow_links).
        p.tenant_mounts.extend(p.clients.iter().cloned());
        Ok(())
    }

    /// Mounts volume `name` `clients=` times, each mount its own `glusterfs` client process
    /// (in the foreground, as mount.glusterfs would start it in the background), which asks
    /// the `servers` in turn for the volume file; the first mount is the root.
    fn mount_clients(
        &self,
        p: &mut Provisioned,
        ctx: &ProvisionCtx<'_>,
        servers: &[String],
        name: &str,
    ) -> Result<(), TargetError> {
        let n = ctx.index;
        for k in 1..=self.clients {
            let mnt = p.make_dir(ctx.path(&format!("gluster-{n}-client{k}")), false)?;
            let (out, clog) = p.make_file(ctx.path(&format!("gluster-{n}-client{k}.log")))?;
            let mut args = vec!["-N".to_string(), "--process-name=fuse".to_string()];
            args.extend(servers.iter().map(|s| format!("--volfile-server={s}")));
            args.extend([
                format!("--volfile-id=/{name}"),
                format!("--log-file={}", clog.display()),
                mnt.to_string_lossy().into_owned(),
            ]);
            crate::fuse::spawn_daemon(
                p,
                &mnt,
                "glusterfs",
                &args,
                out,
                (TIMEOUT, "fsarena's limit for a GlusterFS step"),
            )?;
            p.fact(&format!("client{k}"), mnt.display().to_string());
            p.clients.push(mnt);
        }
        p.fact("clients", self.clients.to_string());
        p.root = p.clients.first().cloned().unwrap_or_default();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<GlusterTarget, InputError> {
        GlusterTarget::from_spec(&Spec::parse(text).map_err(|e| InputError::new(e.to_string()))?, text)
    }

    #[test]
    fn layouts_gluster_would_refuse_are_refused_when_parsed() {
        for (text, bricks, layout) in [
            ("glusterfs", 1, Layout::Distribute),
            ("glusterfs:bricks=3", 3, Layout::Distribute),
            ("glusterfs:replica=2", 2, Layout::Replica(2)),
            ("glusterfs:bricks=4,replica=2", 4, Layout::Replica(2)),
            ("glusterfs:disperse=3", 3, Layout::Disperse(3, 1)),
            ("glusterfs:bricks=6,disperse=3,redundancy=1", 6, Layout::Disperse(3, 1)),
        ] {
            let t = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((t.bricks, t.layout), (bricks, layout), "{text}");
        }
        for (text, why) in [
            ("glusterfs:bricks=3,replica=2", "does not divide"),
            ("glusterfs:bricks=2,disperse=3", "needs a multiple"),
            ("glusterfs:disperse=3,redundancy=2", "expected 1 to 1"),
            ("glusterfs:replica=2,disperse=3", "exclude"),
            ("glusterfs:redundancy=1", "goes with disperse"),
            ("glusterfs:clients=0", "clients=0"),
            ("glusterfs:bricks=0", "bricks=0"),
            ("glusterfs:replica=1", "replica=1"),
            ("glusterfs:size=100m", "at least"),
            ("glusterfs:clients=two", "whole number"),
        ] {
            let e = parse(text).err().unwrap_or_else(|| panic!("{text} was accepted")).to_string();
            assert!(e.contains(why) && !e.contains('\n'), "{text}: {e}");
        }
    }

    #[test]
    fn capacity_counts_data_bricks_only() {
        let cap = |t: &str| parse(t).ok().and_then(|t| t.capacity_bytes());
        assert_eq!(cap("glusterfs:bricks=2,size=1g"), Some(2 << 30));
        assert_eq!(cap("glusterfs:bricks=4,replica=2,size=1g"), Some(2 << 30));
        assert_eq!(cap("glusterfs:disperse=3,size=1g"), Some(2 << 30));
    }
}
