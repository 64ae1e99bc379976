//! dbench's load file (the NBENCH-style operation lines of dbench 4, e.g. Debian's
//! /usr/share/dbench/client.txt), read whole and checked when the workload is parsed, so a
//! bad file is refused with its file and line before anything is created.
//!
//! A line is `[TIME] OPERATION ARGS... STATUS`. dbench turns `\` into `/`, splits on spaces
//! with `"` grouping, takes a first token that starts with a digit as the time (seconds from
//! the start of the pass) at which the line is due, and the last token as the NT status the
//! operation is expected to end with. Paths are relative to the client's directory, and every
//! `client1` in them becomes the client's own name (`client0`, `client1`, ...). Where dbench
//! prints a complaint and goes on (a badly formed status, an unknown operation) this parser
//! refuses the file instead: a line that silently does nothing would change the mix measured.

use std::collections::{BTreeSet, HashMap};

/// The operations of dbench's fileio backend, in the order of dbench's results table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Open or create a file or directory (`NTCreateX`).
    NtCreateX,
    /// Close a handle.
    Close,
    /// Rename a path.
    Rename,
    /// Remove a file.
    Unlink,
    /// Remove what a directory holds, recursively (the directory stays).
    Deltree,
    /// Remove an empty directory.
    Rmdir,
    /// Make a directory.
    Mkdir,
    /// Look a path up (`QUERY_PATH_INFORMATION`).
    Qpathinfo,
    /// fstat a handle (`QUERY_FILE_INFORMATION`).
    Qfileinfo,
    /// statvfs of the client's filesystem (`QUERY_FS_INFORMATION`).
    Qfsinfo,
    /// Set a handle's times (`SET_FILE_INFORMATION`).
    Sfileinfo,
    /// List a directory (`FIND_FIRST`).
    Find,
    /// Write at an offset.
    WriteX,
    /// Read at an offset.
    ReadX,
    /// Take a byte-range write lock.
    LockX,
    /// Release a byte-range lock.
    UnlockX,
    /// fsync a handle.
    Flush,
}

impl Kind {
    /// Every kind, in the order of dbench's table.
    pub const ALL: [Kind; 17] = [
        Kind::NtCreateX,
        Kind::Close,
        Kind::Rename,
        Kind::Unlink,
        Kind::Deltree,
        Kind::Rmdir,
        Kind::Mkdir,
        Kind::Qpathinfo,
        Kind::Qfileinfo,
        Kind::Qfsinfo,
        Kind::Sfileinfo,
        Kind::Find,
        Kind::WriteX,
        Kind::ReadX,
        Kind::LockX,
        Kind::UnlockX,
        Kind::Flush,
    ];

    /// The name in dbench's results table (and the latency histogram's name).
    pub fn name(self) -> &'static str {
        match self {
            Kind::NtCreateX => "NTCreateX",
            Kind::Close => "Close",
            Kind::Rename => "Rename",
            Kind::Unlink => "Unlink",
            Kind::Deltree => "Deltree",
            Kind::Rmdir => "Rmdir",
            Kind::Mkdir => "Mkdir",
            Kind::Qpathinfo => "Qpathinfo",
            Kind::Qfileinfo => "Qfileinfo",
            Kind::Qfsinfo => "Qfsinfo",
            Kind::Sfileinfo => "Sfileinfo",
            Kind::Find => "Find",
            Kind::WriteX => "WriteX",
            Kind::ReadX => "ReadX",
            Kind::LockX => "LockX",
            Kind::UnlockX => "UnlockX",
            Kind::Flush => "Flush",
        }
    }

    /// The word a load file uses for it (dbench 4 matches these exactly, case included).
    fn word(self) -> &'static str {
        match self {
            Kind::Qpathinfo => "QUERY_PATH_INFORMATION",
            Kind::Qfileinfo => "QUERY_FILE_INFORMATION",
            Kind::Qfsinfo => "QUERY_FS_INFORMATION",
            Kind::Sfileinfo => "SET_FILE_INFORMATION",
            Kind::Find => "FIND_FIRST",
            other => other.name(),
        }
    }

    /// Its position in [`Kind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One operation with its arguments. Paths are relative to the target's work directory, with
/// `client1` still in them (see [`client_path`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `NTCreateX PATH CREATE_OPTIONS DISPOSITION HANDLE`.
    NtCreateX { path: String, options: u32, disposition: u32, handle: i64 },
    /// `Close HANDLE`.
    Close { handle: i64 },
    /// `Rename FROM TO`.
    Rename { from: String, to: String },
    /// `Unlink PATH ATTR`.
    Unlink { path: String },
    /// `Deltree PATH`.
    Deltree { path: String },
    /// `Rmdir PATH`.
    Rmdir { path: String },
    /// `Mkdir PATH`.
    Mkdir { path: String },
    /// `QUERY_PATH_INFORMATION PATH LEVEL`.
    Qpathinfo { path: String },
    /// `QUERY_FILE_INFORMATION HANDLE LEVEL`.
    Qfileinfo { handle: i64 },
    /// `QUERY_FS_INFORMATION LEVEL`.
    Qfsinfo,
    /// `SET_FILE_INFORMATION HANDLE LEVEL`.
    Sfileinfo { handle: i64 },
    /// `FIND_FIRST PATTERN LEVEL MAXCOUNT COUNT`.
    Find { path: String, max_count: i64 },
    /// `WriteX HANDLE OFFSET SIZE RETURNED`.
    WriteX { handle: i64, offset: i64, size: i64, returned: i64 },
    /// `ReadX HANDLE OFFSET SIZE RETURNED`.
    ReadX { handle: i64, offset: i64, size: i64, returned: i64 },
    /// `LockX HANDLE OFFSET SIZE`.
    LockX { handle: i64, offset: i64, size: i64 },
    /// `UnlockX HANDLE OFFSET SIZE`.
    UnlockX { handle: i64, offset: i64, size: i64 },
    /// `Flush HANDLE`.
    Flush { handle: i64 },
    /// `Sleep MICROSECONDS`: waits, not counted (as dbench 4).
    Sleep { micros: u64 },
}

impl Op {
    /// Its kind; None for `Sleep`, which has no row in the table.
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            Op::NtCreateX { .. } => Kind::NtCreateX,
            Op::Close { .. } => Kind::Close,
            Op::Rename { .. } => Kind::Rename,
            Op::Unlink { .. } => Kind::Unlink,
            Op::Deltree { .. } => Kind::Deltree,
            Op::Rmdir { .. } => Kind::Rmdir,
            Op::Mkdir { .. } => Kind::Mkdir,
            Op::Qpathinfo { .. } => Kind::Qpathinfo,
            Op::Qfileinfo { .. } => Kind::Qfileinfo,
            Op::Qfsinfo => Kind::Qfsinfo,
            Op::Sfileinfo { .. } => Kind::Sfileinfo,
            Op::Find { .. } => Kind::Find,
            Op::WriteX { .. } => Kind::WriteX,
            Op::ReadX { .. } => Kind::ReadX,
            Op::LockX { .. } => Kind::LockX,
            Op::UnlockX { .. } => Kind::UnlockX,
            Op::Flush { .. } => Kind::Flush,
            Op::Sleep { .. } => return None,
        })
    }
}

/// One line of the load file.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// 1-based line number in the file, for messages.
    pub number: usize,
    /// When the line is due, in seconds from the start of the pass; None (or 0, as dbench
    /// reads it) replays it at once.
    pub at: Option<f64>,
    /// What it does.
    pub op: Op,
    /// The status names success (`NT_STATUS_OK` or a hex 0); otherwise the operation is
    /// expected to fail.
    pub expect_ok: bool,
    /// The status as written, for messages.
    pub status: String,
}

/// A parsed load file.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFile {
    /// Where it was read from.
    pub path: String,
    /// Its operation lines, in order.
    pub lines: Vec<Line>,
}

/// What one pass of the file puts on the target per client, found by following its handles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// Sum over files of the furthest byte written.
    pub bytes: u64,
    /// Distinct paths named.
    pub paths: u64,
    /// Most handles open at once.
    pub open_handles: u64,
    /// Largest read or write.
    pub largest_io: u64,
    /// First path components named (`clients`), removed after the run.
    pub top_level: BTreeSet<String>,
}

impl LoadFile {
    /// Reads and checks `path` (a regular file within loadfile='s limit); the error is
    /// `file:line: what`, never quoting the file.
    pub fn read(path: &str) -> Result<Self, String> {
        let text = fsarena_workload::options::read_file(super::OPTIONS, "loadfile", std::path::Path::new(path))
            .map_err(|e| {
                format!(
                    "dbench: {} (Debian's dbench package installs /usr/share/dbench/client.txt; or give loadfile=)",
                    e.message
                )
            })?;
        // Named by its key wherever the spec came from (a job file, the command line).
        Self::parse(path, &text).map_err(|e| format!("dbench: loadfile={e}"))
    }

    /// Parses the text of a load file called `path` (for messages).
    pub fn parse(path: &str, text: &str) -> Result<Self, String> {
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let number = i + 1;
            if let Some(line) = parse_line(raw).map_err(|e| format!("{path}:{number}: {e}"))? {
                lines.push(Line { number, ..line });
            }
        }
        if !lines.iter().any(|l| l.op.kind().is_some()) {
            return Err(format!("{path}: no dbench operation in the file"));
        }
        Ok(Self { path: path.to_string(), lines })
    }

    /// What one pass puts on the target, following handles from NTCreateX to Close.
    pub fn shape(&self) -> Shape {
        let mut shape = Shape::default();
        let mut open: HashMap<i64, &str> = HashMap::new();
        let mut extent: HashMap<&str, u64> = HashMap::new();
        let mut paths: BTreeSet<&str> = BTreeSet::new();
        for line in &self.lines {
            let named: Vec<&str> = match &line.op {
                Op::Rename { from, to } => vec![from.as_str(), to.as_str()],
                Op::NtCreateX { path, .. }
                | Op::Unlink { path }
                | Op::Deltree { path }
                | Op::Rmdir { path }
                | Op::Mkdir { path }
                | Op::Qpathinfo { path }
                | Op::Find { path, .. } => vec![path.as_str()],
                _ => vec![],
            };
            for p in named {
                paths.insert(p);
                if let Some(top) = p.split('/').find(|c| !c.is_empty()) {
                    shape.top_level.insert(top.to_string());
                }
            }
            match &line.op {
                Op::NtCreateX { path, handle, .. } if line.expect_ok => {
                    open.insert(*handle, path);
                    shape.open_handles = shape.open_handles.max(open.len() as u64);
                }
                Op::Close { handle } => {
                    open.remove(handle);
                }
                Op::WriteX { handle, offset, size, .. } => {
                    let end = (*offset).max(0).saturating_add((*size).max(0)) as u64;
                    if let Some(p) = open.get(handle) {
                        let e = extent.entry(*p).or_default();
                        *e = (*e).max(end);
                    }
                    shape.largest_io = shape.largest_io.max((*size).max(0) as u64);
                }
                Op::ReadX { size, .. } => shape.largest_io = shape.largest_io.max((*size).max(0) as u64),
                _ => {}
            }
        }
        shape.bytes = extent.values().sum();
        shape.paths = paths.len() as u64;
        shape
    }

    /// Lines per kind in one pass, in [`Kind::ALL`] order.
    pub fn mix(&self) -> [u64; 17] {
        let mut mix = [0; 17];
        for k in self.lines.iter().filter_map(|l| l.op.kind()) {
            mix[k.index()] += 1;
        }
        mix
    }
}

/// `path` for client `id`: every `client1` becomes `client<id>`, as dbench does.
pub fn client_path(path: &str, id: usize) -> String {
    if id == 1 {
        path.to_string()
    } else {
        path.replace("client1", &format!("client{id}"))
    }
}

/// What a line is made of, for errors (which never quote the line).
const LINE: &str = "expected [TIME] OPERATION ARGS STATUS";

/// One line: None for what dbench skips (blank, fewer than two words, `#` comments).
fn parse_line(raw: &str) -> Result<Option<Line>, String> {
    // dbench's own rewriting, before it splits: Windows separators become '/', and an
    // unquoted leading '/' is dropped (" /" -> " ").
    let text = raw.replace('\\', "/").replace(" /", " ");
    let mut words = tokens(&text);
    if words.len() < 2 || words[0].starts_with('#') {
        return Ok(None);
    }
    if words[0].starts_with("SMB") {
        return Err("this is a dbench 1 load file (SMB lines); dbench 4's format is TIME OPERATION ARGS STATUS".into());
    }
    let at = if words[0].starts_with(|c: char| c.is_ascii_digit()) {
        let t = words.remove(0);
        Some(t.parse::<f64>().map_err(|_| format!("the leading number is not a time in seconds: {LINE}"))?)
    } else {
        None
    };
    let status = match words.last() {
        Some(s) if words.len() >= 2 && (s.starts_with("NT_STATUS_") || s.starts_with("0x")) => s.clone(),
        _ => return Err(format!("the last word must be the expected status (NT_STATUS_... or 0x...): {LINE}")),
    };
    let expect_ok = status == "NT_STATUS_OK"
        || status.strip_prefix("0x").is_some_and(|h| u64::from_str_radix(h, 16).is_ok_and(|v| v == 0));
    let name = words[0].clone();
    let args = &words[1..words.len() - 1];
    let op = op(&name, args)?;
    Ok(Some(Line { number: 0, at, op, expect_ok, status }))
}

/// The operation `name` with its arguments (the words between the name and the status).
fn op(name: &str, args: &[String]) -> Result<Op, String> {
    let need = |n: usize, what: &str| -> Result<(), String> {
        if args.len() < n {
            Err(format!("{name} needs {what} before the status, got {} word(s)", args.len()))
        } else {
            Ok(())
        }
    };
    // `name` is an operation this parser knows (unknown ones are refused without a word of
    // them): naming it quotes nothing of the file.
    let num = |i: usize| {
        number(&args[i])
            .ok_or_else(|| format!("{name}: argument {} is not a number: expected decimal, 0x hex or 0 octal", i + 1))
    };
    let path = |i: usize| relative(&args[i]).map_err(|e| format!("{name}: {e}"));
    let kind = Kind::ALL.into_iter().find(|k| k.word() == name);
    Ok(match kind {
        Some(Kind::NtCreateX) => {
            need(4, "PATH CREATE_OPTIONS DISPOSITION HANDLE")?;
            Op::NtCreateX { path: path(0)?, options: num(1)? as u32, disposition: num(2)? as u32, handle: num(3)? }
        }
        Some(Kind::Close) => {
            need(1, "HANDLE")?;
            Op::Close { handle: num(0)? }
        }
        Some(Kind::Rename) => {
            need(2, "FROM TO")?;
            Op::Rename { from: path(0)?, to: path(1)? }
        }
        Some(Kind::Unlink) => {
            need(1, "PATH")?;
            Op::Unlink { path: path(0)? }
        }
        Some(Kind::Deltree) => {
            need(1, "PATH")?;
            Op::Deltree { path: path(0)? }
        }
        Some(Kind::Rmdir) => {
            need(1, "PATH")?;
            Op::Rmdir { path: path(0)? }
        }
        Some(Kind::Mkdir) => {
            need(1, "PATH")?;
            Op::Mkdir { path: path(0)? }
        }
        Some(Kind::Qpathinfo) => {
            need(1, "PATH")?;
            Op::Qpathinfo { path: path(0)? }
        }
        Some(Kind::Qfileinfo) => {
            need(1, "HANDLE")?;
            Op::Qfileinfo { handle: num(0)? }
        }
        Some(Kind::Qfsinfo) => Op::Qfsinfo,
        Some(Kind::Sfileinfo) => {
            need(1, "HANDLE")?;
            Op::Sfileinfo { handle: num(0)? }
        }
        Some(Kind::Find) => {
            need(3, "PATTERN LEVEL MAXCOUNT")?;
            Op::Find { path: path(0)?, max_count: num(2)? }
        }
        Some(k @ (Kind::WriteX | Kind::ReadX)) => {
            need(4, "HANDLE OFFSET SIZE RETURNED")?;
            let (handle, offset, size, returned) = (num(0)?, num(1)?, num(2)?, num(3)?);
            if offset < 0 || !(0..=1 << 30).contains(&size) {
                return Err(format!("{name}: the offset and the size must be 0 or more (the size at most 1 GiB)"));
            }
            if k == Kind::WriteX {
                Op::WriteX { handle, offset, size, returned }
            } else {
                Op::ReadX { handle, offset, size, returned }
            }
        }
        Some(k @ (Kind::LockX | Kind::UnlockX)) => {
            need(3, "HANDLE OFFSET SIZE")?;
            let (handle, offset, size) = (num(0)?, num(1)?, num(2)?);
            if k == Kind::LockX {
                Op::LockX { handle, offset, size }
            } else {
                Op::UnlockX { handle, offset, size }
            }
        }
        Some(Kind::Flush) => {
            need(1, "HANDLE")?;
            Op::Flush { handle: num(0)? }
        }
        None if name == "Sleep" => {
            need(1, "MICROSECONDS")?;
            Op::Sleep { micros: num(0)?.max(0) as u64 }
        }
        None => {
            // No "did you mean": a suggestion would tell a word of the file, which may be any file.
            let known: Vec<&str> = Kind::ALL.iter().map(|k| k.word()).chain(["Sleep"]).collect();
            return Err(format!("an unknown operation: dbench's fileio operations are {}", known.join(", ")));
        }
    })
}

/// A path argument as a path under the work directory: dbench prefixes it with the
/// directory, so it must start with '/'; `..` would leave the target, and is refused.
fn relative(word: &str) -> Result<String, String> {
    let Some(rest) = word.strip_prefix('/') else {
        return Err("a path argument is not a path: expected one starting with \\ or /".into());
    };
    if rest.split('/').any(|c| c == "..") {
        return Err("a path argument leaves the client's directory ('..')".into());
    }
    Ok(rest.trim_end_matches('/').to_string())
}

/// A number as C's strtol with base 0 reads it (`0x` hex, a leading 0 octal, else decimal),
/// but the whole word must be the number.
fn number(word: &str) -> Option<i64> {
    let (negative, digits) = match word.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, word.strip_prefix('+').unwrap_or(word)),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<i64>().ok()?
    };
    Some(if negative { -value } else { value })
}

/// Words separated by spaces, `"` grouping (and removed), as dbench's tokenizer splits.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            ' ' | '\t' | '\r' if !quoted => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            _ => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn dbench_lines_parse_into_operations() {
        let text = "# comment\n\n\
            0.010 Deltree \"\\clients\\client1\" NT_STATUS_OK\n\
            0.020 NTCreateX \"\\clients\\client1\\a b.doc\" 0x40 0x5 7001 NT_STATUS_OK\n\
            WriteX 7001 0 65536 65536 NT_STATUS_OK\n\
            ReadX 7001 0x10 010 8 NT_STATUS_OK\n\
            QUERY_FS_INFORMATION 0x103 NT_STATUS_OK\n\
            FIND_FIRST \"\\clients\\client1\\*.*\" 0x104 1366 10000 NT_STATUS_OK\n\
            Unlink \"\\clients\\client1\\gone\" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND\n\
            Close 7001 0x00000000\n";
        let f = LoadFile::parse("t.txt", text).unwrap();
        assert_eq!(f.lines.len(), 8);
        assert_eq!((f.lines[0].number, f.lines[0].at), (3, Some(0.010)));
        assert_eq!(f.lines[0].op, Op::Deltree { path: "clients/client1".into() });
        assert_eq!(
            f.lines[1].op,
            Op::NtCreateX { path: "clients/client1/a b.doc".into(), options: 0x40, disposition: 5, handle: 7001 }
        );
        assert_eq!(f.lines[2].at, None);
        assert_eq!(f.lines[3].op, Op::ReadX { handle: 7001, offset: 16, size: 8, returned: 8 });
        assert_eq!(f.lines[5].op, Op::Find { path: "clients/client1/*.*".into(), max_count: 1366 });
        assert!(!f.lines[6].expect_ok && f.lines[7].expect_ok && f.lines[0].expect_ok);
        let shape = f.shape();
        assert_eq!((shape.bytes, shape.open_handles, shape.largest_io), (65536, 1, 65536));
        assert_eq!(shape.top_level.into_iter().collect::<Vec<_>>(), ["clients"]);
        let mix = f.mix();
        assert_eq!((mix[Kind::WriteX.index()], mix[Kind::Find.index()], mix[Kind::Flush.index()]), (1, 1, 0));
        assert_eq!(client_path("clients/client1/x", 12), "clients/client12/x");
    }

    #[test]
    fn bad_lines_are_refused_with_file_and_line() {
        for (text, want) in [
            (
                "Close 1 NT_STATUS_OK\nFrobnicate 1 NT_STATUS_OK\n",
                "t.txt:2: an unknown operation: dbench's fileio operations are NTCreateX",
            ),
            ("NTCreatX \"\\a\" 0 1 2 NT_STATUS_OK\n", "t.txt:1: an unknown operation"),
            ("Close 1 OK\n", "t.txt:1: the last word must be the expected status"),
            ("WriteX 1 0 ten 10 NT_STATUS_OK\n", "t.txt:1: WriteX: argument 3 is not a number"),
            ("WriteX 1 0 NT_STATUS_OK\n", "WriteX needs HANDLE OFFSET SIZE RETURNED before the status, got 2"),
            ("Unlink \"\\a\\..\\..\\etc\" 0 NT_STATUS_OK\n", "leaves the client's directory"),
            ("Unlink relative 0 NT_STATUS_OK\n", "is not a path"),
            ("SMBopenX a b\n", "dbench 1 load file"),
            ("1.x Close 1 NT_STATUS_OK\n", "t.txt:1: the leading number is not a time"),
            ("# nothing\n", "t.txt: no dbench operation"),
        ] {
            let e = LoadFile::parse("t.txt", text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let lines = [
            "1.234 NTCreateX \"\\clients\\client1\\~dmtmp\\WORD\\CHAP10.DOC\" 0x1 0x1 7001 NT_STATUS_OK",
            "WriteX 7001 0 65536 65536 NT_STATUS_OK",
            "Rename \"\\a\\b\" \"\\a\\c\" NT_STATUS_OK",
            "FIND_FIRST \"\\clients\\client1\\*.*\" 0x104 1366 1 NT_STATUS_OK",
            "Close 7001 0x0",
            "Sleep 100 NT_STATUS_OK",
        ];
        let errors = fsarena_workload::options::assert_never_quotes(&lines, |l| LoadFile::parse("t.txt", l).map(drop));
        assert!(errors > 15, "{errors}");
        let e = LoadFile::read("/nonexistent/client.txt").unwrap_err();
        assert!(e.contains("cannot read loadfile= file /nonexistent/client.txt"), "{e}");
    }

    #[test]
    fn numbers_read_as_strtol_base_0() {
        assert_eq!(number("0x1F"), Some(31));
        assert_eq!(number("017"), Some(15));
        assert_eq!(number("-5"), Some(-5));
        assert_eq!(number("0"), Some(0));
        assert_eq!(number("12abc"), None);
        assert_eq!(tokens("a  \"b c\" \"\" d"), ["a", "b c", "", "d"]);
    }
}
