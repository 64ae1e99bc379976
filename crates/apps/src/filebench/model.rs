//! What a `.f` file describes, checked: variables resolved, filesets, processes, threads and
//! flowops typed, every reference (fileset, semaphore, target flowop) found. A construct the
//! runtime does not support is refused here with file, line and construct, before anything
//! is created; nothing is skipped silently.

use super::lang::{Item, Stmt};
use super::vocabulary::{Attrs, Flowop, Kind};
use fsarena_core::InputError;
use std::collections::BTreeMap;

/// How a fileset's file sizes are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeDist {
    /// Every file this size.
    Fixed(u64),
    /// filebench's `cvar-gamma`: gamma-distributed with this mean and shape (`gamma:`).
    Gamma {
        /// Mean size in bytes.
        mean: f64,
        /// Shape parameter k.
        shape: f64,
    },
}

impl SizeDist {
    /// The mean size in bytes.
    pub fn mean(&self) -> f64 {
        match *self {
            SizeDist::Fixed(n) => n as f64,
            SizeDist::Gamma { mean, .. } => mean,
        }
    }
}

/// A `define fileset` (or `define file`, a fileset of one file named as the file).
#[derive(Debug, Clone, PartialEq)]
pub struct FilesetDef {
    /// Its name (also its directory under the run's root).
    pub name: String,
    /// `define file`: one file, no directory tree.
    pub single_file: bool,
    /// File sizes.
    pub size: SizeDist,
    /// Files (0 for a fileset of leaf directories).
    pub entries: u64,
    /// Leaf directories (`leafdirs=`, used by makedir/removedir), 0 for a fileset of files.
    pub leafdirs: u64,
    /// Mean entries per directory.
    pub dirwidth: u64,
    /// Percent of the entries that exist (with their content) before the run starts.
    pub prealloc: u32,
    /// Open files read-only.
    pub readonly: bool,
    /// Line of the definition.
    pub line: usize,
}

/// A `thread` of a process: its flowops run in a loop by each of its instances.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadDef {
    /// Its name.
    pub name: String,
    /// Threads running this list.
    pub instances: u32,
    /// Its I/O memory (`memsize`): each I/O lands at a random place in it, as in filebench
    /// (0: one buffer, reused).
    pub memsize: u64,
    /// The flowops, in order.
    pub flowops: Vec<Flowop>,
}

/// A `define process`: processes are threads here, `instances` × its threads.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessDef {
    /// Its name.
    pub name: String,
    /// Copies of its threads.
    pub instances: u32,
    /// Its threads.
    pub threads: Vec<ThreadDef>,
}

/// When a run ends besides its time (`set mode quit ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Runs for its time; a flowop that finds no file stops the run as failed (filebench's
    /// "Run stopped early").
    Timeout,
    /// `firstdone`: the first thread out of files ends the run, as a success.
    FirstDone,
    /// `alldone`: a thread out of files stops; the run ends when all have.
    AllDone,
}

/// A checked workload model.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The file it came from, for messages.
    pub file: String,
    /// Filesets, in definition order.
    pub filesets: Vec<FilesetDef>,
    /// Processes, in definition order.
    pub processes: Vec<ProcessDef>,
    /// `run N` / `psrun ... N`: seconds, if given.
    pub run_secs: Option<u64>,
    /// `eventgen rate=N`: events per second, 0 when off.
    pub eventrate: f64,
    /// `set mode quit ...`.
    pub mode: Mode,
    /// The variables the file sets, in order, with their values.
    pub vars: Vec<(String, String)>,
}

impl Model {
    /// Every flowop of every thread, in definition order.
    pub fn flowops(&self) -> impl Iterator<Item = &Flowop> {
        self.processes.iter().flat_map(|p| p.threads.iter().flat_map(|t| t.flowops.iter()))
    }

    /// Threads the run starts.
    pub fn threads(&self) -> u64 {
        self.processes
            .iter()
            .flat_map(|p| p.threads.iter().map(move |t| u64::from(p.instances) * u64::from(t.instances)))
            .sum()
    }
}

/// A variable's value.
#[derive(Debug, Clone, PartialEq)]
enum Var {
    Text(String),
    Gamma(SizeDist),
}

/// The state of the walk over the items.
#[derive(Debug, Clone, Copy)]
enum Where {
    Top,
    AwaitProcess(usize),
    Process,
    AwaitThread(usize),
    Thread,
}

/// Builds the model of `items` (from `file`), with `overrides` (`nthreads=16`) replacing the
/// values the file's `set $VAR=` lines give. An override the file never sets is refused.
/// `builtin`: the text is one of fsarena's own personalities, whose variables may be named in
/// errors; a user's file= is any file, and nothing of it is quoted.
pub fn build(file: &str, items: &[Item], overrides: &[(String, String)], builtin: bool) -> Result<Model, InputError> {
    let mut b = Builder { file, vars: BTreeMap::new(), overrides, used: vec![false; overrides.len()] };
    let mut m = Model {
        file: file.to_string(),
        filesets: Vec::new(),
        processes: Vec::new(),
        run_secs: None,
        eventrate: 0.0,
        mode: Mode::Timeout,
        vars: Vec::new(),
    };
    let mut place = Where::Top;
    let mut ran = false;
    for item in items {
        place = match (item, place) {
            (Item::Open(_), Where::AwaitProcess(_)) => Where::Process,
            (Item::Open(_), Where::AwaitThread(_)) => Where::Thread,
            (Item::Close(_), Where::Process) => Where::Top,
            (Item::Close(_), Where::Thread) => Where::Process,
            (Item::Bad(e), _) => return Err(e.clone()),
            (Item::Open(line) | Item::Close(line), _) => {
                return Err(b.err(*line, "a brace here: braces only open and close a process's or a thread's body"))
            }
            (Item::Stmt(s), Where::AwaitProcess(l) | Where::AwaitThread(l)) => {
                return Err(b.err(s.line, &format!("expected '{{' to open the body defined on line {l}")))
            }
            (Item::Stmt(s), Where::Top) => {
                if ran && !matches!(s.words[0].as_str(), "echo" | "usage" | "quit" | "shutdown") {
                    return Err(b.err(s.line, "a statement after run: fsarena runs a model once, to its end"));
                }
                if b.top(s, &mut m, &mut ran)? {
                    Where::AwaitProcess(s.line)
                } else if s.words[0] == "quit" || s.words[0] == "shutdown" {
                    break;
                } else {
                    Where::Top
                }
            }
            (Item::Stmt(s), Where::Process) => {
                if s.words != ["thread"] {
                    return Err(b.err(s.line, "a process's body holds thread statements only"));
                }
                let t = b.thread(s)?;
                if let Some(p) = m.processes.last_mut() {
                    p.threads.push(t);
                }
                Where::AwaitThread(s.line)
            }
            (Item::Stmt(s), Where::Thread) => {
                if s.words.first().map(String::as_str) != Some("flowop") || s.words.len() != 2 {
                    return Err(b.err(s.line, "a thread's body holds `flowop TYPE name=...` statements only"));
                }
                let f = b.flowop(s)?;
                if let Some(t) = m.processes.last_mut().and_then(|p| p.threads.last_mut()) {
                    t.flowops.push(f);
                }
                Where::Thread
            }
        };
    }
    if !matches!(place, Where::Top) {
        return Err(InputError::new("the file ends inside a process or thread: a '}' is missing").at(file.to_string()));
    }
    if let Some(i) = b.used.iter().position(|u| !u) {
        let names: Vec<String> = b.vars.keys().map(|k| format!("${k}")).collect();
        let listed = match () {
            () if !builtin => "the file's `set $NAME=...` lines name them".to_string(),
            () if names.is_empty() => "its variables are none".to_string(),
            () => format!("its variables are {}", names.join(", ")),
        };
        return Err(InputError::new(format!(
            "'{}' is neither an option of filebench nor a variable of {file}: {listed}",
            fsarena_workload::plain::cut(&overrides[i].0),
        )));
    }
    m.vars =
        b.vars.iter().map(|(k, v)| (k.clone(), if let Var::Text(t) = v { t.clone() } else { "cvar".into() })).collect();
    super::vocabulary::resolve(&mut m)?;
    if m.processes.iter().all(|p| p.threads.iter().all(|t| t.flowops.is_empty())) {
        return Err(InputError::new(format!("{file} defines no flowop: nothing to run")));
    }
    // filebench places each I/O in the thread's memsize bytes and fails the run when one does
    // not fit (flowoplib_iobufsetup: "tf_memsize smaller than IO size"): said here instead.
    for t in m.processes.iter().flat_map(|p| &p.threads).filter(|t| t.memsize > 0) {
        for op in t.flowops.iter().filter(|op| op.kind.buffered()) {
            let need = op.iosize + if op.directio { 512 } else { 0 };
            if need > t.memsize {
                return Err(b.err(
                    op.line,
                    &format!(
                        "an I/O of {} bytes{} does not fit its thread's memsize of {} bytes: filebench does each I/O within the thread's memsize",
                        op.iosize,
                        if op.directio { " (+512 for directio)" } else { "" },
                        t.memsize
                    ),
                ));
            }
        }
    }
    Ok(m)
}

/// Resolves variables and reports errors with the file's name.
#[derive(Debug)]
pub struct Builder<'a> {
    pub(super) file: &'a str,
    vars: BTreeMap<String, Var>,
    overrides: &'a [(String, String)],
    used: Vec<bool>,
}

impl Builder<'_> {
    /// An error at `line`: what is wrong and what was expected, in fsarena's words only. The
    /// model file may be any file (file= names a path), so nothing of it is ever quoted; the
    /// line number shows where.
    pub(super) fn err(&self, line: usize, what: &str) -> InputError {
        InputError::new(what.to_string()).at(format!("{}:{line}", self.file))
    }

    /// A value with `$variables` replaced; `None` stays `None` (a bare key).
    pub(super) fn text(&self, line: usize, raw: &str) -> Result<String, InputError> {
        match raw.strip_prefix('$') {
            None => Ok(raw.to_string()),
            Some(name) => match self.vars.get(name) {
                Some(Var::Text(t)) => Ok(t.clone()),
                Some(Var::Gamma(_)) => Err(self.err(line, "a cvar is accepted only as a fileset's size")),
                None => Err(self.err(
                    line,
                    "a $variable that is not set: set it with `set $NAME=...` before its use (or give NAME= on the command line)",
                )),
            },
        }
    }

    /// A size (`1m`, `16k`, `10g`, a plain number).
    pub(super) fn size(&self, line: usize, key: &str, raw: Option<&str>) -> Result<u64, InputError> {
        let v = self.text(line, raw.unwrap_or(""))?;
        fsarena_core::units::parse_size(&v).map_err(|_| {
            self.err(
                line,
                &format!("{key}= is not a size: expected bytes, or with a suffix k, m, g, t (powers of 1024)"),
            )
        })
    }

    /// A number that may be fractional (`value=0.5`).
    pub(super) fn number(&self, line: usize, key: &str, raw: Option<&str>) -> Result<f64, InputError> {
        let v = self.text(line, raw.unwrap_or(""))?;
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            _ => self.size(line, key, Some(&v)).map(|n| n as f64),
        }
    }

    /// A boolean: a bare key is true; `true`/`false`, `yes`/`no`, `1`/`0`.
    pub(super) fn boolean(&self, line: usize, key: &str, raw: Option<&str>) -> Result<bool, InputError> {
        let Some(raw) = raw else { return Ok(true) };
        let v = self.text(line, raw)?;
        fsarena_workload::options::boolean(&v)
            .map_err(|_| self.err(line, &format!("{key}= expects true or false (or 1 or 0)")))
    }

    /// A whole number of at least 1.
    pub(super) fn count(&self, line: usize, key: &str, raw: Option<&str>) -> Result<u64, InputError> {
        match self.size(line, key, raw)? {
            0 => Err(self.err(line, &format!("{key}= must be at least 1"))),
            n => Ok(n),
        }
    }

    /// One top-level statement; true when it opens a process body.
    fn top(&mut self, s: &Stmt, m: &mut Model, ran: &mut bool) -> Result<bool, InputError> {
        let w: Vec<&str> = s.words.iter().map(String::as_str).collect();
        match w.as_slice() {
            ["set"] => self.set(s)?,
            ["set", "mode", "quit", how] => {
                m.mode = match *how {
                    "firstdone" => Mode::FirstDone,
                    "alldone" => Mode::AllDone,
                    "timeout" => Mode::Timeout,
                    _ => return Err(self.err(s.line, "set mode quit: expected firstdone, alldone or timeout")),
                }
            }
            ["define", "fileset"] => m.filesets.push(self.fileset(s, false)?),
            ["define", "file"] => m.filesets.push(self.fileset(s, true)?),
            ["define", "process"] => {
                m.processes.push(self.process(s)?);
                return Ok(true);
            }
            ["eventgen"] => {
                for a in &s.attrs {
                    match a.key.as_str() {
                        "rate" => m.eventrate = self.number(s.line, "rate", a.value.as_deref())?,
                        _ => return Err(self.err(s.line, "not an eventgen attribute: expected rate=N")),
                    }
                }
            }
            ["run", rest @ ..] | ["psrun", rest @ ..] => {
                *ran = true;
                // psrun's optional `-INTERVAL` is a sampling period: fsarena keeps per-flowop
                // histograms instead, so only the duration matters.
                let secs: Vec<&&str> = rest.iter().filter(|a| !a.starts_with('-')).collect();
                match secs.as_slice() {
                    [] => {}
                    [n] => m.run_secs = Some(self.count(s.line, w[0], Some(**n))?),
                    _ => return Err(self.err(s.line, "expected `run [SECONDS]`")),
                }
            }
            ["create", "files" | "filesets" | "fileset" | "processes"] => {}
            ["echo" | "usage", ..] | ["quit" | "shutdown"] | ["debug", _] | ["enable", "lathist"] => {}
            ["system", ..] => {
                return Err(self.err(s.line, "system runs a shell command: not supported (fsarena does not run commands from workload files)"))
            }
            ["define", "randvar" | "cvar", ..] => {
                return Err(self.err(s.line, "random variables are not supported yet: only cvar(type=cvar-gamma,...) as a fileset's size"))
            }
            ["define", "flowop" | "composite", ..] => {
                return Err(self.err(s.line, "composite flowops are not supported yet"))
            }
            _ => {
                return Err(self.err(
                    s.line,
                    "not a statement fsarena's filebench supports: expected set, define fileset|file|process, eventgen, run, psrun, create files, echo or quit",
                ))
            }
        }
        Ok(false)
    }

    /// `set $name=value`: an override from the spec wins over the file's value.
    fn set(&mut self, s: &Stmt) -> Result<(), InputError> {
        let [a] = s.attrs.as_slice() else {
            return Err(self.err(s.line, "set: expected `set $NAME=VALUE` or `set mode quit firstdone|alldone`"));
        };
        let Some(name) = a.key.strip_prefix('$') else {
            return Err(self.err(s.line, "a variable is written $NAME: expected `set $NAME=VALUE`"));
        };
        let given = match self.overrides.iter().position(|(k, _)| k == name) {
            Some(i) => {
                self.used[i] = true;
                self.overrides[i].1.clone()
            }
            None => a.value.clone().unwrap_or_default(),
        };
        let value = if given.starts_with("cvar(") {
            Var::Gamma(self.cvar(s.line, &given)?)
        } else if given.starts_with("randvar(") || given.starts_with("randvar ") {
            return Err(self.err(s.line, "random variables are not supported yet: only cvar(type=cvar-gamma,...)"));
        } else {
            Var::Text(self.text(s.line, &given)?)
        };
        self.vars.insert(name.to_string(), value);
        Ok(())
    }

    /// `cvar(type=cvar-gamma,parameters=mean:16384;gamma:1.5)`.
    fn cvar(&self, line: usize, text: &str) -> Result<SizeDist, InputError> {
        let inner = text.trim_start_matches("cvar(").trim_end_matches(')');
        let (mut kind, mut mean, mut shape) = (None, None, 1.5);
        if let Some(t) = inner.split(',').find_map(|p| p.trim().strip_prefix("type=")) {
            if t.trim() != "cvar-gamma" {
                return Err(self.err(line, "only cvar-gamma is supported: expected type=cvar-gamma"));
            }
        }
        for part in inner.split(',') {
            match part.split_once('=') {
                Some(("type", t)) => kind = Some(t.trim()),
                Some(("parameters", p)) => {
                    for kv in p.split(';') {
                        let Some((k, v)) = kv.split_once(':') else { continue };
                        let x = self.number(line, k, Some(v.trim()))?;
                        match k.trim() {
                            "mean" => mean = Some(x),
                            "gamma" => shape = x,
                            _ => {
                                return Err(
                                    self.err(line, "not a cvar-gamma parameter: expected mean:BYTES;gamma:SHAPE")
                                )
                            }
                        }
                    }
                }
                Some(("min" | "max" | "round", _)) => {}
                _ => return Err(self.err(line, "expected cvar(type=cvar-gamma,parameters=mean:BYTES;gamma:SHAPE)")),
            }
        }
        match (kind, mean) {
            (Some("cvar-gamma"), Some(mean)) if mean > 0.0 && shape > 0.0 => Ok(SizeDist::Gamma { mean, shape }),
            (Some("cvar-gamma"), _) => {
                Err(self.err(line, "a cvar needs parameters=mean:BYTES;gamma:SHAPE, both above 0"))
            }
            _ => Err(self.err(line, "only cvar-gamma is supported: expected type=cvar-gamma")),
        }
    }

    /// `define fileset ...` / `define file ...`.
    fn fileset(&self, s: &Stmt, single_file: bool) -> Result<FilesetDef, InputError> {
        let mut f = FilesetDef {
            name: String::new(),
            single_file,
            size: SizeDist::Fixed(0),
            entries: u64::from(single_file),
            leafdirs: 0,
            dirwidth: 0,
            prealloc: 0,
            readonly: false,
            line: s.line,
        };
        let l = s.line;
        for a in &s.attrs {
            let v = a.value.as_deref();
            match a.key.as_str() {
                "name" => f.name = self.text(l, v.unwrap_or(""))?,
                // Files go under the run's directory on the target, whatever path says.
                "path" => {
                    self.text(l, v.unwrap_or(""))?;
                }
                "size" => {
                    f.size = match v.and_then(|v| v.strip_prefix('$')).and_then(|n| self.vars.get(n)) {
                        Some(Var::Gamma(g)) => *g,
                        _ => SizeDist::Fixed(self.size(l, "size", v)?),
                    }
                }
                "entries" if !single_file => f.entries = self.size(l, "entries", v)?,
                "leafdirs" if !single_file => f.leafdirs = self.size(l, "leafdirs", v)?,
                "dirwidth" => f.dirwidth = self.size(l, "dirwidth", v)?,
                "prealloc" => {
                    f.prealloc = match v {
                        None => 100,
                        Some(_) => match self.size(l, "prealloc", v)? {
                            p @ 0..=100 => p as u32,
                            _ => return Err(self.err(l, "prealloc= is a percentage: expected 0 to 100")),
                        },
                    }
                }
                "readonly" => f.readonly = self.boolean(l, "readonly", v)?,
                // Accepted without effect: every run creates its files afresh (reuse, trusttree),
                // untimed (paralloc), without dropping caches (cached, as filebench on Linux).
                "reuse" | "paralloc" | "cached" | "trusttree" | "writeonly" => {
                    self.boolean(l, &a.key, v)?;
                }
                "dirgamma" => {
                    self.number(l, "dirgamma", v)?;
                }
                _ => {
                    return Err(self.err(
                        l,
                        "not a fileset attribute fsarena supports: expected name, path, size, entries, leafdirs, dirwidth, dirgamma, prealloc, reuse, readonly, paralloc, cached",
                    ))
                }
            }
        }
        if f.name.is_empty() || f.name.contains('/') || f.name.starts_with('.') {
            return Err(self.err(l, "define needs name=NAME (no '/', not starting with '.')"));
        }
        if f.dirwidth == 0 {
            f.dirwidth = if single_file { 1 } else { 20 };
        }
        if f.entries > 0 && f.leafdirs > 0 {
            return Err(self.err(l, "entries= and leafdirs= together are not supported: give one"));
        }
        Ok(f)
    }

    /// `define process name=...,instances=N`.
    fn process(&self, s: &Stmt) -> Result<ProcessDef, InputError> {
        let mut p = ProcessDef { name: String::new(), instances: 1, threads: Vec::new() };
        for a in &s.attrs {
            let v = a.value.as_deref();
            match a.key.as_str() {
                "name" => p.name = self.text(s.line, v.unwrap_or(""))?,
                "instances" => p.instances = self.instances(s.line, v)?,
                "nice" => {
                    self.number(s.line, "nice", v)?;
                }
                _ => return Err(self.err(s.line, "not a process attribute: expected name, instances or nice")),
            }
        }
        Ok(p)
    }

    /// `thread name=...,memsize=...,instances=N`.
    fn thread(&self, s: &Stmt) -> Result<ThreadDef, InputError> {
        let mut t = ThreadDef { name: String::new(), instances: 1, memsize: 0, flowops: Vec::new() };
        for a in &s.attrs {
            let v = a.value.as_deref();
            match a.key.as_str() {
                "name" => t.name = self.text(s.line, v.unwrap_or(""))?,
                "instances" => t.instances = self.instances(s.line, v)?,
                "memsize" => t.memsize = self.size(s.line, "memsize", v)?,
                // Shared memory for the I/O buffers: threads of one process share memory anyway.
                "useism" => {
                    self.boolean(s.line, "useism", v)?;
                }
                _ => {
                    return Err(self.err(s.line, "not a thread attribute: expected name, instances, memsize or useism"))
                }
            }
        }
        Ok(t)
    }

    fn instances(&self, line: usize, v: Option<&str>) -> Result<u32, InputError> {
        u32::try_from(self.count(line, "instances", v)?).map_err(|_| self.err(line, "instances= is too large"))
    }

    /// `flowop TYPE name=...,ATTR=...`.
    fn flowop(&self, s: &Stmt) -> Result<Flowop, InputError> {
        let kind = Kind::parse(&s.words[1]).map_err(|m| self.err(s.line, &m))?;
        let attrs = Attrs::read(self, s)?;
        Flowop::new(self, s.line, kind, attrs)
    }
}
