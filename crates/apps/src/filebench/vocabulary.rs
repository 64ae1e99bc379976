//! The flowop vocabulary (filebench's `flowop_library.c`): each flowop type, the attributes it
//! takes, and the checks made before a run: its fileset exists and holds what it needs, its
//! target is a flowop of the right kind, its sizes are given.

use super::lang::Stmt;
use super::model::{Builder, Model};
use fsarena_core::InputError;

/// A flowop type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Kind {
    Read,
    Write,
    ReadWholeFile,
    WriteWholeFile,
    AppendFile,
    AppendFileRand,
    OpenFile,
    CreateFile,
    CloseFile,
    DeleteFile,
    StatFile,
    Fsync,
    FsyncSet,
    MakeDir,
    RemoveDir,
    ListDir,
    Delay,
    Hog,
    Block,
    Wakeup,
    SemBlock,
    SemPost,
    EventLimit,
    BwLimit,
    IopsLimit,
    OpsLimit,
    FinishOnCount,
    FinishOnBytes,
    AioWrite,
    AioWait,
}

/// Every supported type, by its word in a `.f` file.
const WORDS: &[(&str, Kind)] = &[
    ("read", Kind::Read),
    ("write", Kind::Write),
    ("readwholefile", Kind::ReadWholeFile),
    ("writewholefile", Kind::WriteWholeFile),
    ("appendfile", Kind::AppendFile),
    ("appendfilerand", Kind::AppendFileRand),
    ("openfile", Kind::OpenFile),
    ("createfile", Kind::CreateFile),
    ("closefile", Kind::CloseFile),
    ("deletefile", Kind::DeleteFile),
    ("statfile", Kind::StatFile),
    ("fsync", Kind::Fsync),
    ("fsyncset", Kind::FsyncSet),
    ("makedir", Kind::MakeDir),
    ("removedir", Kind::RemoveDir),
    ("listdir", Kind::ListDir),
    ("delay", Kind::Delay),
    ("hog", Kind::Hog),
    ("block", Kind::Block),
    ("wakeup", Kind::Wakeup),
    ("semblock", Kind::SemBlock),
    ("sempost", Kind::SemPost),
    ("eventlimit", Kind::EventLimit),
    ("bwlimit", Kind::BwLimit),
    ("iopslimit", Kind::IopsLimit),
    ("opslimit", Kind::OpsLimit),
    ("finishoncount", Kind::FinishOnCount),
    ("finishonbytes", Kind::FinishOnBytes),
    ("aiowrite", Kind::AioWrite),
    ("aiowait", Kind::AioWait),
];

impl Kind {
    /// The type called `word`; the error says why one is refused and what is accepted.
    pub fn parse(word: &str) -> Result<Kind, String> {
        if let Some((_, k)) = WORDS.iter().find(|(w, _)| *w == word) {
            return Ok(*k);
        }
        Err(match word {
            "print" | "testrandvar" => "a filebench debugging flowop (print, testrandvar): not supported".to_string(),
            // No "did you mean": the suggestion would tell a byte of the file, which may be
            // any file (file= names a path).
            _ => format!(
                "not a flowop: expected one of {}",
                WORDS.iter().map(|(w, _)| *w).collect::<Vec<_>>().join(", ")
            ),
        })
    }

    /// Its word.
    pub fn word(self) -> &'static str {
        WORDS.iter().find(|(_, k)| *k == self).map_or("?", |(w, _)| w)
    }

    /// An I/O flowop (filebench's FLOW_TYPE_IO, and FLOW_TYPE_AIO: aiowrite and aiowait):
    /// counted in the "IO Summary".
    pub fn is_io(self) -> bool {
        use Kind::*;
        matches!(
            self,
            Read | Write
                | AioWrite
                | AioWait
                | ReadWholeFile
                | WriteWholeFile
                | AppendFile
                | AppendFileRand
                | OpenFile
                | CreateFile
                | CloseFile
                | DeleteFile
                | StatFile
                | Fsync
                | FsyncSet
                | MakeDir
                | RemoveDir
                | ListDir
        )
    }

    /// Reads data (filebench's FLOW_ATTR_READ): counted in rd/s.
    pub fn reads(self) -> bool {
        matches!(self, Kind::Read | Kind::ReadWholeFile)
    }

    /// Writes data (FLOW_ATTR_WRITE): counted in wr/s.
    pub fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::WriteWholeFile | Kind::AppendFile | Kind::AppendFileRand | Kind::AioWrite)
    }

    /// Moves data through the thread's memory (filebench's flowoplib_iobufsetup); aiowrite
    /// writes from its ring's buffers here.
    pub fn buffered(self) -> bool {
        matches!(
            self,
            Kind::Read
                | Kind::Write
                | Kind::ReadWholeFile
                | Kind::WriteWholeFile
                | Kind::AppendFile
                | Kind::AppendFileRand
        )
    }

    /// Works on a file through an fd slot (opening one from its fileset when the slot is empty).
    fn uses_fd(self) -> bool {
        use Kind::*;
        matches!(
            self,
            Read | Write | AioWrite | ReadWholeFile | WriteWholeFile | AppendFile | AppendFileRand | CloseFile | Fsync
        )
    }

    /// Needs `filesetname=` (picks a file or directory of it).
    fn picks(self) -> bool {
        use Kind::*;
        matches!(self, OpenFile | CreateFile | DeleteFile | StatFile | FsyncSet | MakeDir | RemoveDir | ListDir)
    }
}

/// A flowop, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Flowop {
    /// Its type.
    pub kind: Kind,
    /// Its name (results go by it; flowops of one name are reported together, as filebench).
    pub name: String,
    /// Its line in the file.
    pub line: usize,
    /// `filesetname=` / `filename=` as written.
    pub fileset_name: Option<String>,
    /// The fileset's index in the model, once resolved.
    pub fileset: Option<usize>,
    /// The fd slot (`fd=`, 0 when not given).
    pub fd: u32,
    /// `srcfd=`: the slot whose file's size `writewholefile` writes.
    pub srcfd: Option<u32>,
    /// Bytes per I/O (0: the whole file, for the whole-file flowops).
    pub iosize: u64,
    /// Times it runs per pass of its thread's list.
    pub iters: u64,
    /// Random offsets.
    pub random: bool,
    /// O_DSYNC.
    pub dsync: bool,
    /// O_DIRECT.
    pub directio: bool,
    /// Closes its fd and opens the next file before each I/O.
    pub opennext: bool,
    /// Bytes of the file random I/O ranges over (0: the file's size).
    pub workingset: u64,
    /// `value=`: seconds (delay), iterations (hog), count (finishoncount, semaphores), bytes.
    pub value: f64,
    /// `target=`: the flowop a limit or a post acts on.
    pub target: Option<String>,
    /// `highwater=` of a semblock (filebench's default 1): the posts a blocking sempost may
    /// make ahead of the semblock's passes.
    pub highwater: u64,
    /// `blocking` on a sempost.
    pub blocking: bool,
}

/// The attributes of one flowop statement, variables resolved.
#[derive(Debug, Default)]
pub struct Attrs(Vec<(String, Option<String>)>);

/// Attributes every flowop accepts, with those refused as not supported.
const KEYS: &[&str] = &[
    "name",
    "filesetname",
    "filename",
    "fd",
    "srcfd",
    "iosize",
    "iters",
    "random",
    "dsync",
    "directio",
    "opennext",
    "workingset",
    "value",
    "target",
    "highwater",
    "blocking",
];

impl Attrs {
    /// Reads a flowop statement's attributes, refusing unknown and unsupported ones.
    pub fn read(b: &Builder<'_>, s: &Stmt) -> Result<Self, InputError> {
        let mut out = Vec::new();
        for a in &s.attrs {
            match a.key.as_str() {
                k if KEYS.contains(&k) => {
                    let v = a.value.as_deref().map(|v| b.text(s.line, v)).transpose()?;
                    out.push((k.to_string(), v));
                }
                k @ ("indexed" | "rotatefd" | "noreadahead" | "fileindex") => {
                    return Err(b.err(s.line, &format!("flowop attribute {k} is not supported yet")));
                }
                _ => return Err(b.err(s.line, &format!("not a flowop attribute: expected one of {}", KEYS.join(", ")))),
            }
        }
        Ok(Attrs(out))
    }

    fn get(&self, key: &str) -> Option<Option<&str>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_deref())
    }
}

impl Flowop {
    /// A flowop of `kind` from its attributes.
    pub fn new(b: &Builder<'_>, line: usize, kind: Kind, a: Attrs) -> Result<Flowop, InputError> {
        let size = |k: &str| a.get(k).map_or(Ok(0), |v| b.size(line, k, v));
        let flag = |k: &str| a.get(k).map_or(Ok(false), |v| b.boolean(line, k, v));
        let name = a.get("name").flatten().map(str::to_string).unwrap_or_default();
        if name.is_empty() {
            return Err(b.err(line, &format!("flowop {} needs name=NAME (results go by it)", kind.word())));
        }
        let f = Flowop {
            kind,
            line,
            fileset_name: a.get("filesetname").or(a.get("filename")).flatten().map(str::to_string),
            fileset: None,
            fd: u32::try_from(size("fd")?).map_err(|_| b.err(line, "fd= is too large"))?,
            srcfd: a.get("srcfd").map(|v| b.size(line, "srcfd", v)).transpose()?.map(|n| n as u32),
            iosize: size("iosize")?,
            iters: a.get("iters").map_or(Ok(1), |v| b.count(line, "iters", v))?,
            random: flag("random")?,
            dsync: flag("dsync")?,
            directio: flag("directio")?,
            opennext: flag("opennext")?,
            workingset: size("workingset")?,
            value: a.get("value").map_or(Ok(0.0), |v| b.number(line, "value", v))?,
            target: a.get("target").flatten().map(str::to_string),
            highwater: a.get("highwater").map_or(Ok(1), |v| b.size(line, "highwater", v))?,
            blocking: flag("blocking")?,
            name,
        };
        let needs = |what: &str| Err(b.err(line, &format!("flowop {} needs {what}", kind.word())));
        match kind {
            Kind::Read | Kind::Write | Kind::AppendFile | Kind::AppendFileRand | Kind::AioWrite if f.iosize == 0 => {
                needs("iosize=BYTES")
            }
            // filebench's aiowrite does random writes only (sequential ones are an error).
            Kind::AioWrite if !f.random => needs("random (filebench's asynchronous writes are random only)"),
            k if k.picks() && f.fileset_name.is_none() => needs("filesetname=NAME"),
            Kind::FinishOnCount | Kind::FinishOnBytes if f.value <= 0.0 => needs("value=N"),
            Kind::SemPost | Kind::Wakeup if f.target.is_none() => needs("target=FLOWOP"),
            _ => Ok(f),
        }
    }
}

/// Resolves every flowop's fileset and target in `m`, refusing what does not exist or does
/// not fit (a directory flowop on a fileset of files, a data limit on a flowop moving none).
pub fn resolve(m: &mut Model) -> Result<(), InputError> {
    let file = m.file.clone();
    let at = |line: usize| format!("{file}:{line}");
    let all: Vec<(Kind, String)> = m.flowops().map(|f| (f.kind, f.name.clone())).collect();
    let sets = m.filesets.clone();
    for p in &mut m.processes {
        for t in &mut p.threads {
            let here: Vec<(Kind, String, Option<String>, u32)> =
                t.flowops.iter().map(|f| (f.kind, f.name.clone(), f.fileset_name.clone(), f.fd)).collect();
            for f in &mut t.flowops {
                // Names are the file's words: never quoted (file= may name any file); the
                // line numbers say which.
                let fline = f.line;
                let err = |m: String| InputError::new(m).at(at(fline));
                if let Some(n) = &f.fileset_name {
                    let i = sets.iter().position(|s| &s.name == n).ok_or_else(|| {
                        let lines: Vec<String> = sets.iter().map(|s| s.line.to_string()).collect();
                        err(format!(
                            "filesetname= names no fileset or file defined: they are defined on line(s) {}",
                            if lines.is_empty() { "none".to_string() } else { lines.join(", ") }
                        ))
                    })?;
                    let dirs = sets[i].leafdirs > 0;
                    if matches!(f.kind, Kind::MakeDir | Kind::RemoveDir) != dirs && f.kind != Kind::ListDir {
                        return Err(err(format!(
                            "{} on the fileset defined on line {}, which holds {}: makedir and removedir need leafdirs=, file flowops entries=",
                            f.kind.word(),
                            sets[i].line,
                            if dirs { "leaf directories" } else { "files" }
                        )));
                    }
                    f.fileset = Some(i);
                } else if f.kind.uses_fd() && !matches!(f.kind, Kind::CloseFile | Kind::Fsync) {
                    // The slot must be filled by a flowop of this thread that names a fileset.
                    let opened = here.iter().any(|(_, _, set, fd)| set.is_some() && *fd == f.fd);
                    if !opened {
                        return Err(err(format!(
                            "fd={} is opened by no flowop of this thread that names a fileset: give filesetname=",
                            f.fd
                        )));
                    }
                }
                if let Some(target) = &f.target {
                    let (pool, what): (Vec<&(Kind, String)>, &str) = match f.kind {
                        Kind::SemPost => (all.iter().filter(|(k, _)| *k == Kind::SemBlock).collect(), "a semblock"),
                        Kind::Wakeup => (all.iter().filter(|(k, _)| *k == Kind::Block).collect(), "a block"),
                        Kind::BwLimit | Kind::IopsLimit | Kind::FinishOnBytes => (
                            all.iter()
                                .filter(|(k, n)| (k.reads() || k.writes()) && here.iter().any(|h| &h.1 == n))
                                .collect(),
                            "a read or write flowop of this thread",
                        ),
                        _ => (
                            all.iter().filter(|(_, n)| here.iter().any(|h| &h.1 == n)).collect(),
                            "a flowop of this thread",
                        ),
                    };
                    if !pool.iter().any(|(_, n)| n == target) {
                        return Err(err(format!("target= names no flowop that is {what}")));
                    }
                }
            }
        }
    }
    Ok(())
}
