//! The seq1 generator (B3's bounded black-box idea): a small fixed file set made durable with
//! `sync()`, then one operation from the list, then one persistence call on the file it
//! touched or on its parent. Each operation runs on the real filesystem and on an in-memory
//! [`Model`], so the oracle knows what every mark promised.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// A kind of object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "directory",
            Kind::Symlink => "symlink",
        }
    }
}

/// One inode of the model.
#[derive(Debug, Clone)]
pub(crate) struct Inode {
    pub kind: Kind,
    pub data: Vec<u8>,
    pub mode: u32,
    pub xattrs: BTreeMap<String, Vec<u8>>,
    pub target: String,
    /// The 1 KiB blocks past the end of the file that a fallocate with `KEEP_SIZE` allocated
    /// (and no truncate or hole punch freed since).
    pub prealloc: std::collections::BTreeSet<u64>,
    /// Bytes allocated (st_blocks × 512) as the file showed at its last persistence call.
    pub allocated: u64,
}

impl Inode {
    /// What a state that keeps this file's last persistence call must show allocated, when a
    /// fallocate with `KEEP_SIZE` allocated past its end: its data's 1 KiB blocks and those,
    /// or what the file showed at the call if that is less (a filesystem may share or compress
    /// data blocks, or report blocks otherwise). CrashMonkey checks the block count; a
    /// filesystem that loses the allocation (btrfs did) shows fewer.
    pub(crate) fn min_allocated(&self) -> Option<u64> {
        if self.prealloc.is_empty() {
            return None;
        }
        let model = (self.data.len() as u64).div_ceil(1024) * 1024 + self.prealloc.len() as u64 * 1024;
        Some(model.min(self.allocated))
    }
}

/// The namespace and contents the operations made, as POSIX says they are.
#[derive(Debug, Clone, Default)]
pub(crate) struct Model {
    pub inodes: Vec<Inode>,
    /// Path (relative, `/`-separated) to inode; the root is implicit.
    pub names: BTreeMap<String, usize>,
}

/// `(parent, name)` of a relative path; the root's children have parent `""`.
pub(crate) fn split(path: &str) -> (String, String) {
    match path.rsplit_once('/') {
        Some((d, n)) => (d.to_string(), n.to_string()),
        None => (String::new(), path.to_string()),
    }
}

impl Model {
    pub(crate) fn add(&mut self, path: &str, kind: Kind, data: Vec<u8>, mode: u32) -> usize {
        self.inodes.push(Inode {
            kind,
            data,
            mode,
            xattrs: BTreeMap::new(),
            target: String::new(),
            prealloc: std::collections::BTreeSet::new(),
            allocated: 0,
        });
        let ino = self.inodes.len() - 1;
        self.names.insert(path.to_string(), ino);
        ino
    }

    pub(crate) fn ino(&self, path: &str) -> usize {
        self.names.get(path).copied().unwrap_or(usize::MAX)
    }

    pub(crate) fn file(&mut self, path: &str) -> Option<&mut Inode> {
        let ino = self.ino(path);
        self.inodes.get_mut(ino)
    }

    /// `data` written at `offset` of the file at `path`, which grows to hold it.
    pub(crate) fn write(&mut self, path: &str, offset: usize, data: &[u8]) {
        write_model(self, path, offset, data);
    }

    /// The file's size, at least `len` (zeros added).
    pub(crate) fn extend(&mut self, path: &str, len: usize) {
        if let Some(i) = self.file(path) {
            if i.data.len() < len {
                i.data.resize(len, 0);
            }
        }
    }

    /// The file's size set to `len`.
    pub(crate) fn truncate(&mut self, path: &str, len: usize) {
        if let Some(i) = self.file(path) {
            i.data.resize(len, 0);
        }
    }

    /// The file's size (0 if there is none).
    pub(crate) fn size(&self, path: &str) -> usize {
        self.inodes.get(self.ino(path)).map_or(0, |i| i.data.len())
    }

    /// The names in directory `dir`, with their inodes.
    pub(crate) fn listing(&self, dir: &str) -> BTreeMap<String, usize> {
        self.names
            .iter()
            .filter_map(|(p, &i)| {
                let (d, n) = split(p);
                (d == dir).then_some((n, i))
            })
            .collect()
    }

    /// The directories, the root (`""`) first.
    pub(crate) fn dirs(&self) -> Vec<String> {
        let mut dirs = vec![String::new()];
        dirs.extend(self.names.iter().filter(|(_, &i)| self.inodes[i].kind == Kind::Dir).map(|(p, _)| p.clone()));
        dirs
    }

    /// How many names the inode has.
    pub(crate) fn nlink(&self, ino: usize) -> u64 {
        self.names.values().filter(|&&i| i == ino).count() as u64
    }

    /// Moves `from` (and everything under it) to `to`, replacing what `to` named.
    pub(crate) fn rename(&mut self, from: &str, to: &str) {
        // Two names of one file: rename(2) does nothing ("If oldpath and newpath are existing
        // hard links referring to the same file, then rename() does nothing").
        if self.names.get(from).is_some_and(|i| self.names.get(to) == Some(i)) {
            return;
        }
        let moved: Vec<(String, usize)> = self
            .names
            .iter()
            .filter(|(p, _)| *p == from || p.starts_with(&format!("{from}/")))
            .map(|(p, &i)| (p.clone(), i))
            .collect();
        self.names.remove(to);
        for (p, i) in moved {
            self.names.remove(&p);
            self.names.insert(format!("{to}{}", &p[from.len()..]), i);
        }
    }
}

/// Bytes no filesystem makes up: never zero, different per `seed`.
pub(crate) fn pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len as u64).map(|i| ((i.wrapping_mul(2_654_435_761).wrapping_add(seed * 977) >> 7) as u8) | 1).collect()
}

/// The file set every generated workload starts from, made durable with `sync()`.
pub(crate) fn setup(root: &Path) -> io::Result<Model> {
    let mut m = Model::default();
    let file = |p: &str, len: usize, seed: u64| -> io::Result<Vec<u8>> {
        let data = pattern(len, seed);
        std::fs::write(root.join(p), &data)?;
        std::fs::set_permissions(root.join(p), std::fs::Permissions::from_mode(0o644))?;
        Ok(data)
    };
    let dir = |p: &str| -> io::Result<()> {
        std::fs::create_dir(root.join(p))?;
        std::fs::set_permissions(root.join(p), std::fs::Permissions::from_mode(0o755))
    };
    let d = file("foo", 16384, 1)?;
    m.add("foo", Kind::File, d, 0o644);
    let d = file("bar", 4096, 2)?;
    let bar = m.add("bar", Kind::File, d, 0o644);
    // A filesystem without user xattrs (a FUSE daemon may have none) gets none: its xattr
    // operations are refused in turn and listed as unsupported.
    match setxattr(&root.join("bar"), "user.setup", b"s") {
        Ok(()) => {
            m.inodes[bar].xattrs.insert("user.setup".into(), b"s".to_vec());
        }
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {}
        Err(e) => return Err(e),
    }
    dir("A")?;
    m.add("A", Kind::Dir, Vec::new(), 0o755);
    let d = file("A/foo", 8192, 3)?;
    m.add("A/foo", Kind::File, d, 0o644);
    dir("A/C")?;
    m.add("A/C", Kind::Dir, Vec::new(), 0o755);
    Ok(m)
}

fn cstr(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn setxattr(path: &Path, name: &str, value: &[u8]) -> io::Result<()> {
    let (p, n) = (cstr(path)?, CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?);
    // SAFETY: valid C strings and a buffer of the given length.
    check(unsafe { libc::lsetxattr(p.as_ptr(), n.as_ptr(), value.as_ptr().cast(), value.len(), 0) })
}

/// fallocate(2) with `mode`'s `FALLOC_FL_*` bits as they are (seq's and ACE's workloads).
pub(crate) fn fallocate(file: &File, mode: libc::c_int, offset: u64, len: u64) -> io::Result<()> {
    let flags = rustix::fs::FallocateFlags::from_bits_retain(mode as u32);
    Ok(rustix::fs::fallocate(file, flags, offset, len)?)
}

/// What the persistence call after the operation syncs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Persist {
    /// `fsync` of the file (or directory) the operation made or changed.
    Fsync,
    /// `fdatasync` of it.
    Fdatasync,
    /// `fsync` of its parent directory.
    FsyncParent,
    /// `sync()`.
    Sync,
    /// `msync(MS_SYNC)` of a byte range of a shared mapping, made by the operation itself
    /// (ACE's mmapwrite syncs the first 8 KiB of the range it wrote): those bytes, as POSIX's
    /// synchronized I/O data integrity completion says.
    Msync,
    /// Nothing (a step of a chain whose persistence call is none).
    Nothing,
}

impl Persist {
    fn name(self) -> &'static str {
        match self {
            Persist::Fsync => "fsync",
            Persist::Fdatasync => "fdatasync",
            Persist::FsyncParent => "fsync_parent",
            Persist::Sync => "sync",
            Persist::Msync => "msync",
            Persist::Nothing => "none",
        }
    }
}

/// What a persistence call promises about: its kind, the object it syncs, and a rename the
/// step made (covered when the renamed object itself is fsynced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Promise {
    pub persist: Persist,
    /// The file or directory fsynced (`""`: the root).
    pub subject: Option<String>,
    /// The subject is a directory: its fsync promises its entries.
    pub dir: bool,
    /// The directory `fsync_parent` syncs.
    pub parent: String,
    /// A rename: (from, to).
    pub rename: Option<(String, String)>,
    /// The byte range `msync` synced: (offset, length).
    pub range: Option<(u64, u64)>,
}

impl Promise {
    pub(crate) fn none() -> Self {
        Self { persist: Persist::Nothing, subject: None, dir: false, parent: String::new(), rename: None, range: None }
    }

    /// `msync(MS_SYNC)` of `len` bytes at `offset` of `path`'s shared mapping.
    pub(crate) fn msync(path: &str, offset: u64, len: u64) -> Self {
        Self { persist: Persist::Msync, subject: Some(path.to_string()), range: Some((offset, len)), ..Self::none() }
    }

    pub(crate) fn fsync(path: &str, dir: bool) -> Self {
        Self { persist: Persist::Fsync, subject: Some(path.to_string()), dir, ..Self::none() }
    }

    pub(crate) fn sync() -> Self {
        Self { persist: Persist::Sync, ..Self::none() }
    }
}

/// One operation of the list.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Op {
    pub name: &'static str,
    /// The object a file-level persistence call syncs, after the operation.
    pub subject: Option<&'static str>,
    /// The directory `fsync_parent` syncs.
    pub parent: &'static str,
    /// A rename: (from, to).
    pub rename: Option<(&'static str, &'static str)>,
}

const fn op(name: &'static str, subject: Option<&'static str>, parent: &'static str) -> Op {
    Op { name, subject, parent, rename: None }
}

const fn mv(name: &'static str, subject: &'static str, parent: &'static str, from: &'static str) -> Op {
    Op { name, subject: Some(subject), parent, rename: Some((from, subject)) }
}

/// Every operation of seq1.
pub(crate) const OPS: &[Op] = &[
    op("creat", Some("A/bar"), "A"),
    op("mkdir", Some("A/D"), "A"),
    op("write_append", Some("foo"), ""),
    op("write_overwrite", Some("foo"), ""),
    op("write_extend", Some("foo"), ""),
    op("write_direct", Some("foo"), ""),
    op("mmap_write", Some("foo"), ""),
    op("fallocate_keep_size", Some("bar"), ""),
    op("punch_hole", Some("foo"), ""),
    op("zero_range", Some("foo"), ""),
    op("fallocate", Some("bar"), ""),
    op("truncate_aligned", Some("foo"), ""),
    op("truncate_unaligned", Some("foo"), ""),
    op("link", Some("foo"), "A"),
    op("symlink", None, "A"),
    mv("rename_file", "A/baz", "A", "foo"),
    mv("rename_dir", "D", "", "A/C"),
    mv("rename_over", "A/foo", "A", "bar"),
    op("unlink", None, "A"),
    op("rmdir", None, "A"),
    op("setxattr", Some("foo"), ""),
    op("removexattr", Some("bar"), ""),
];

/// One generated workload: an operation and a persistence call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Case {
    pub op: Op,
    pub persist: Persist,
}

impl Case {
    /// `op.persist`, as findings and `only=` name it.
    pub(crate) fn name(&self) -> String {
        format!("{}.{}", self.op.name, self.persist.name())
    }

    /// The subject is a directory.
    pub(crate) fn subject_is_dir(&self) -> bool {
        matches!(self.op.name, "mkdir" | "rename_dir")
    }

    /// What its persistence call promises about.
    pub(crate) fn promise(&self) -> Promise {
        Promise {
            persist: self.persist,
            subject: self.op.subject.map(str::to_string),
            dir: self.subject_is_dir(),
            parent: self.op.parent.to_string(),
            rename: self.op.rename.map(|(a, b)| (a.to_string(), b.to_string())),
            range: None,
        }
    }
}

/// Every seq1 workload, in a fixed order.
pub(crate) fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for &op in OPS {
        let persists: &[Persist] = match (op.subject, matches!(op.name, "mkdir" | "rename_dir")) {
            (None, _) => &[Persist::FsyncParent, Persist::Sync],
            (Some(_), true) => &[Persist::Fsync, Persist::FsyncParent, Persist::Sync],
            (Some(_), false) => &[Persist::Fsync, Persist::Fdatasync, Persist::FsyncParent, Persist::Sync],
        };
        out.extend(persists.iter().map(|&persist| Case { op, persist }));
    }
    out
}

/// What an operation changed, for the oracle: the directory entries, and the inodes whose
/// data or attributes it touched.
#[derive(Debug, Default, Clone)]
pub(crate) struct Changes {
    pub entries: Vec<(String, String)>,
    pub data: Vec<usize>,
    pub meta: Vec<usize>,
}

/// Runs the operation on the filesystem and on the model. An error is the filesystem's
/// answer (EOPNOTSUPP, EINVAL: the workload is `unsupported`).
pub(crate) fn run_op(root: &Path, m: &mut Model, op: &Op) -> io::Result<Changes> {
    let mut ch = Changes::default();
    let at = |p: &str| root.join(p);
    let entry = |p: &str| split(p);
    let open_rw = |p: &str| OpenOptions::new().read(true).write(true).open(at(p));
    match op.name {
        "creat" => {
            File::create(at("A/bar"))?;
            std::fs::set_permissions(at("A/bar"), std::fs::Permissions::from_mode(0o644))?;
            m.add("A/bar", Kind::File, Vec::new(), 0o644);
            ch.entries.push(entry("A/bar"));
        }
        "mkdir" => {
            std::fs::create_dir(at("A/D"))?;
            std::fs::set_permissions(at("A/D"), std::fs::Permissions::from_mode(0o755))?;
            m.add("A/D", Kind::Dir, Vec::new(), 0o755);
            ch.entries.push(entry("A/D"));
        }
        "write_append" | "write_overwrite" | "write_extend" => {
            let f = open_rw("foo")?;
            let (offset, data) = match op.name {
                "write_append" => (16384, pattern(5000, 4)),
                "write_overwrite" => (1000, pattern(3000, 5)),
                _ => (32768, pattern(4096, 6)),
            };
            f.write_all_at(&data, offset)?;
            write_model(m, "foo", offset as usize, &data);
            ch.data.push(m.ino("foo"));
        }
        "write_direct" => {
            let f = OpenOptions::new().read(true).write(true).custom_flags(libc::O_DIRECT).open(at("foo"))?;
            // O_DIRECT wants a buffer aligned to the logical block size: 4 KiB covers all.
            let data = pattern(4096, 7);
            let mut buf = vec![0u8; 8192];
            let skew = buf.as_ptr().align_offset(4096);
            buf[skew..skew + 4096].copy_from_slice(&data);
            f.write_all_at(&buf[skew..skew + 4096], 4096)?;
            write_model(m, "foo", 4096, &data);
            ch.data.push(m.ino("foo"));
        }
        "mmap_write" => {
            let f = open_rw("foo")?;
            mmap_write(&f, 200, &pattern(100, 8))?;
            write_model(m, "foo", 200, &pattern(100, 8));
            ch.data.push(m.ino("foo"));
        }
        "fallocate_keep_size" => {
            fallocate(&open_rw("bar")?, libc::FALLOC_FL_KEEP_SIZE, 0, 65536)?;
            ch.data.push(m.ino("bar"));
        }
        "punch_hole" => {
            fallocate(&open_rw("foo")?, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 4096, 4096)?;
            write_model(m, "foo", 4096, &[0u8; 4096]);
            ch.data.push(m.ino("foo"));
        }
        "zero_range" => {
            fallocate(&open_rw("foo")?, libc::FALLOC_FL_ZERO_RANGE, 1000, 4000)?;
            write_model(m, "foo", 1000, &[0u8; 4000]);
            ch.data.push(m.ino("foo"));
        }
        "fallocate" => {
            fallocate(&open_rw("bar")?, 0, 0, 32768)?;
            if let Some(i) = m.file("bar") {
                i.data.resize(32768, 0);
            }
            ch.data.push(m.ino("bar"));
        }
        "truncate_aligned" | "truncate_unaligned" => {
            let len = if op.name == "truncate_aligned" { 8192 } else { 5000 };
            open_rw("foo")?.set_len(len)?;
            if let Some(i) = m.file("foo") {
                i.data.resize(len as usize, 0);
            }
            ch.data.push(m.ino("foo"));
        }
        "link" => {
            std::fs::hard_link(at("foo"), at("A/foo2"))?;
            let ino = m.ino("foo");
            m.names.insert("A/foo2".into(), ino);
            ch.entries.push(entry("A/foo2"));
            ch.meta.push(ino);
        }
        "symlink" => {
            std::os::unix::fs::symlink("../foo", at("A/sym"))?;
            let ino = m.add("A/sym", Kind::Symlink, Vec::new(), 0o777);
            m.inodes[ino].target = "../foo".into();
            ch.entries.push(entry("A/sym"));
        }
        "rename_file" | "rename_dir" | "rename_over" => {
            let (from, to) = op.rename.unwrap_or(("", ""));
            if let Some(&old) = m.names.get(to) {
                ch.meta.push(old);
            }
            std::fs::rename(at(from), at(to))?;
            m.rename(from, to);
            ch.entries.push(entry(from));
            ch.entries.push(entry(to));
        }
        "unlink" => {
            std::fs::remove_file(at("A/foo"))?;
            ch.meta.push(m.ino("A/foo"));
            m.names.remove("A/foo");
            ch.entries.push(entry("A/foo"));
        }
        "rmdir" => {
            std::fs::remove_dir(at("A/C"))?;
            m.names.remove("A/C");
            ch.entries.push(entry("A/C"));
        }
        "setxattr" => {
            setxattr(&at("foo"), "user.fsarena", b"v1")?;
            if let Some(i) = m.file("foo") {
                i.xattrs.insert("user.fsarena".into(), b"v1".to_vec());
            }
            ch.meta.push(m.ino("foo"));
        }
        "removexattr" => {
            let (p, n) = (cstr(&at("bar"))?, c"user.setup");
            // SAFETY: valid C strings.
            check(unsafe { libc::lremovexattr(p.as_ptr(), n.as_ptr()) })?;
            if let Some(i) = m.file("bar") {
                i.xattrs.remove("user.setup");
            }
            ch.meta.push(m.ino("bar"));
        }
        other => return Err(io::Error::other(format!("unknown operation {other}"))),
    }
    Ok(ch)
}

fn write_model(m: &mut Model, path: &str, offset: usize, data: &[u8]) {
    if let Some(i) = m.file(path) {
        if i.data.len() < offset + data.len() {
            i.data.resize(offset + data.len(), 0);
        }
        i.data[offset..offset + data.len()].copy_from_slice(data);
    }
}

/// Writes `data` at `offset` through a shared mapping, then `msync(MS_SYNC)`.
fn mmap_write(file: &File, offset: usize, data: &[u8]) -> io::Result<()> {
    let len = file.metadata()?.len() as usize;
    if offset + data.len() > len {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    map_write(file, len, offset, data, 0..len)
}

/// Writes `data` at `offset` through a shared mapping of the file's first `map_len` bytes,
/// then `msync(MS_SYNC)` of the byte range `sync` (page-aligned start), then unmaps it.
pub(crate) fn map_write(
    file: &File,
    map_len: usize,
    offset: usize,
    data: &[u8],
    sync: std::ops::Range<usize>,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    if offset + data.len() > map_len || sync.end > map_len || sync.start > sync.end {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: a shared mapping of the file's first `map_len` bytes (the caller made the file
    // that long), written and synced inside them (checked above), unmapped before returning.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        std::ptr::copy_nonoverlapping(data.as_ptr(), p.cast::<u8>().add(offset), data.len());
        let rc = libc::msync(p.cast::<u8>().add(sync.start).cast(), sync.len(), libc::MS_SYNC);
        let err = io::Error::last_os_error();
        libc::munmap(p, map_len);
        if rc < 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// The persistence call. The `sync` point is syncfs(2) of the filesystem holding `root`, or
/// with `global` the machine-wide sync(2) (`persist=sync`): that waits for every other
/// filesystem's writes too (31 ms at the median and up to 940 ms on this machine while other
/// work ran, as measured for issue 31), which made a case's timing, and which writes a flush
/// caught, depend on unrelated work.
pub(crate) fn persist(root: &Path, case: &Case, global: bool) -> io::Result<()> {
    let sync_path = |p: &Path, data_only: bool| -> io::Result<()> {
        let f = File::open(p)?;
        if data_only {
            f.sync_data()
        } else {
            f.sync_all()
        }
    };
    match (case.persist, case.op.subject) {
        (Persist::Sync, _) if global => {
            // SAFETY: no arguments.
            unsafe { libc::sync() };
            Ok(())
        }
        (Persist::Sync, _) => sync_fs(root),
        (Persist::FsyncParent, _) => sync_path(&root.join(case.op.parent), false),
        (Persist::Fsync, Some(s)) => sync_path(&root.join(s), false),
        (Persist::Fdatasync, Some(s)) => sync_path(&root.join(s), true),
        // The operation made its own msync.
        (Persist::Msync | Persist::Nothing, _) => Ok(()),
        (_, None) => Err(io::Error::other("no file to sync")),
    }
}

/// `sync()`, for the setup.
/// fsync of every directory under `root` and of `root`, then of every file, each file
/// opened for writing (symlinks not followed). For a FUSE filesystem, where `sync()` does
/// nothing: fuse2fs 1.47 flushes its image only on the fsync of a file opened for writing
/// (and has no fsyncdir), so the files come last and are opened so.
pub(crate) fn fsync_tree(root: &Path) -> io::Result<()> {
    let (mut dirs, mut files, mut at) = (vec![root.to_path_buf()], Vec::new(), 0);
    while let Some(dir) = dirs.get(at).cloned() {
        at += 1;
        for e in std::fs::read_dir(&dir)? {
            let e = e?;
            let t = e.file_type()?;
            if t.is_dir() {
                dirs.push(e.path());
            } else if t.is_file() {
                files.push(e.path());
            }
        }
    }
    for dir in &dirs {
        File::open(dir)?.sync_all()?;
    }
    for file in &files {
        std::fs::OpenOptions::new().write(true).open(file)?.sync_all()?;
    }
    Ok(())
}

/// syncfs(2) of the filesystem holding `root`, for the setup: what `sync()` made durable there,
/// without waiting on every other filesystem's dirty data (a global sync() per case took
/// seconds each while other programs wrote elsewhere on the host).
pub(crate) fn sync_fs(root: &Path) -> io::Result<()> {
    Ok(rustix::fs::syncfs(File::open(root)?)?)
}

/// The user xattrs of `path` (names and values), without following a symlink.
pub(crate) fn xattrs(path: &Path) -> io::Result<BTreeMap<String, Vec<u8>>> {
    let p = cstr(path)?;
    let mut names = vec![0u8; 4096];
    // SAFETY: a valid C string and a buffer of the given length.
    let n = unsafe { libc::llistxattr(p.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        // A filesystem without xattrs (a FUSE daemon may have none) has none to list.
        if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
            return Ok(BTreeMap::new());
        }
        return Err(e);
    }
    let mut out = BTreeMap::new();
    for name in names[..n as usize].split(|&b| b == 0).filter(|n| n.starts_with(b"user.")) {
        let cname = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        let mut value = vec![0u8; 4096];
        // SAFETY: valid C strings and a buffer of the given length.
        let len = unsafe { libc::lgetxattr(p.as_ptr(), cname.as_ptr(), value.as_mut_ptr().cast(), value.len()) };
        if len < 0 {
            return Err(io::Error::last_os_error());
        }
        value.truncate(len as usize);
        out.insert(String::from_utf8_lossy(name).into_owned(), value);
    }
    Ok(out)
}
