//! The case tables (`cases/*.cases`) and the one interpreter that runs them.
//!
//! A table lists a family's cases in run order. A case is a block: its header, then its
//! steps, one a line, indented; `#` starts a comment line. The steps run in order, in the
//! case's fresh directory, as root; the first that does not hold ends the case with its
//! failure (or its reason to be unsupported), as `?` does in Rust.
//!
//! ```text
//! case chmod.regular_file.updated
//!   touch f 0644
//!   save before f
//!   tick
//!   expect 0 chmod f 0600
//!   save after f
//!   is perm $after 0600 -- mode of f
//!   moved $before $after any same changed -- f
//! case rmdir.no_search_permission.EACCES security
//!   ...
//!   expect EACCES as U1 rmdir d/e -- rmdir d/e as uid 65534 (d is 0666)
//! rust chmod.fchmodat2_empty_path.updated
//! ```
//!
//! Headers: `case NAME` (`security` after it for an access-control case), or `rust NAME` for
//! a case a table cannot say (descriptors kept across steps, raw syscalls, computed data,
//! probes of the system): a [`RustCase`] of the family's Rust file, run in its place.
//!
//! Steps (paths are relative to the case's directory; `""` is the empty path, `{long_name}`
//! a name one byte longer than the filesystem takes, `{long_path}` a path of PATH_MAX bytes,
//! `{dir}` the case's directory, absolute; modes are octal; owners `UID:GID`; users `U1`
//! (uid and gid 65534) and `U2` (65533), `U1+65533` with supplementary group 65533):
//!
//! - setup, a failure of which is the case's, with the errno: `mkdir P MODE`, `touch P
//!   MODE`, `write P TEXT` (a file holding TEXT, the rest of the line), `chmod P MODE`,
//!   `chown P UID:GID` (not following a last symlink), `symlink TARGET P`, `flag P
//!   immutable|append`, `utime P ATIME MTIME` (utimensat, not following a last symlink),
//!   `fill P BYTES` (a file holding BYTES, the rest of the line, see `data`);
//! - `need flags|acl|xattr NAME`: unsupported, with the reason, where the filesystem lacks it;
//! - `umask MODE`: the case's umask from then on (022 at its start);
//! - `tick`: wait until a change made now gives later timestamps ([`Ctx::tick`]);
//! - `save NAME P`: stat P (not following a last symlink) now, as `$NAME` (`save NAME $FD`:
//!   fstat of a descriptor kept by `fd`); `exists P`: only that the stat succeeds;
//! - `fd NAME P FLAGS`: open P (setup) and keep the descriptor as `$NAME` for the calls
//!   that take one (`fchmod $NAME MODE`, ...) until the case ends;
//! - `expect RESULT [as USER] CALL ARGS`: RESULT is `0` (success) or an errno, or several
//!   separated by commas where the standard allows either; CALL one of [`Call`]'s;
//!   the calls made as *at calls (`unlinkat`, `linkat`, `renameat2`, `fchownat`, `fchmodat`,
//!   `mkdir`, `mkfifo`, `mknod`, `open`, `utimensat`, `symlink`'s new name) take a path relative to a
//!   kept descriptor as `$NAME:PATH` (`$d:f`, `$f:""`, `$f:{dir}/a`), else relative to the
//!   working directory;
//!   `expect 0 [as USER] open P FLAGS [MODE] -> NAME` keeps the descriptor as `$NAME`, as
//!   `fd` does (opened as USER: the descriptor carries the access USER was granted);
//! - `is FIELD SUBJECT VALUE`: a field of a stat (`perm`, `type`, `kind`, `size`, `nlink`,
//!   `uid`, `gid`, `owner`, `ino`, `atime`, `mtime`, `ctime`, `rdev` as `MAJOR:MINOR`) must
//!   equal VALUE; SUBJECT is a
//!   path (stat now) or `$NAME`; VALUE a literal, `$NAME` (the same field of a saved stat) or
//!   `@P` (of P now);
//! - `xattr P NAME VALUE`: getxattr must succeed with VALUE;
//! - `target P TEXT`: readlink of P (readlinkat of `$FD:PATH`) must succeed with TEXT, the
//!   rest of the line;
//! - `data P BYTES`: the whole content of P (a path, or `$NAME` an open descriptor, read
//!   from offset 0 without moving its offset) must be BYTES, the rest of the line: pieces
//!   joined by `+`, each `TEXT` or `TEXT*COUNT` (TEXT repeated), `\0` the zero byte, `\+`
//!   and `\*` the characters (`abc+\0*9997`);
//! - `acl P access|default ENTRIES`: setxattr of the ACL, written as setfacl writes it
//!   (`user::rw-,user:65534:r--,group::---,mask::r--,other::---`), must succeed (`expect
//!   RESULT setacl P access|default ENTRIES` where it may fail);
//! - `subdirs BEFORE AFTER DELTA`: where the filesystem counts a directory's subdirectories
//!   in its link count (BEFORE's is 2 or more), AFTER's is BEFORE's plus DELTA;
//! - `moved BEFORE AFTER A M C`: atime, mtime and ctime between two stats (`$NAME` or a path,
//!   stat now), each `changed`, `same` or `any` ([`Mark`]).
//!
//! A check's failure names what it looked at: the text after ` -- `, else the step as
//! written (`rmdir d/e`), `is`'s default being `FIELD-WORD of SUBJECT` (`mode of f`).
//!
//! What stays Rust (each family's table says which of its cases and why): seeks and offsets,
//! raw syscalls through libc (descriptor -1, fchmodat2, AT_EMPTY_PATH and flags rustix does
//! not pass on), computed data (values of a computed length, long targets, loops), times
//! against a clock reading, conditions on what the filesystem or the kernel does
//! (protected_hardlinks, a second mount), ACLs read back, fallocate and statx.

use super::acl::{Acl, Tag};
use super::cases::{self, Case, RustCase};
use super::check::{self, eq, err, err_any, fail, moved, ok, stat, Check, Mark, Miss, Octal, Stat};
use super::ctx::{broken, Ctx, User, U1, U2};
use rustix::fs::{FileType, Gid, IFlags, Mode, OFlags, RenameFlags, Uid, XattrFlags, CWD};
use rustix::io::Errno;
use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// One step of a table case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Where it was written (`chmod.cases:12`), for parse errors.
    line: u32,
    /// What its failure names.
    label: String,
    what: Do,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Do {
    Mkdir(String, u32),
    Touch(String, u32),
    Write(String, String),
    Chmod(String, u32),
    Chown(String, u32, u32),
    Symlink(String, String),
    Flag(String, IFlags),
    Utime(String, [Time; 2]),
    Fill(String, Vec<u8>),
    Need(Need),
    Umask(u32),
    Tick,
    Save(String, String),
    SaveFd(String, String),
    Exists(String),
    Fd(String, String, OFlags),
    Expect { want: Vec<Errno>, user: Option<User>, call: Call, keep: Option<String> },
    Is { field: Field, subject: Subject, value: Value },
    Moved { before: Subject, after: Subject, marks: [Mark; 3] },
    Xattr { path: String, name: String, value: String },
    Data { subject: Source, want: Vec<u8> },
    Target { path: String, want: String },
    Acl { path: String, default: bool, acl: Acl },
    Subdirs { before: Subject, after: Subject, delta: i128 },
}

/// What a `data` step reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Path(String),
    /// An open descriptor, `$NAME`.
    Fd(String),
}

/// A probe a case needs first.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Need {
    Flags,
    Acl,
    Xattr(String),
}

/// The calls `expect` makes, each with the arguments it is written with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `rmdir P`
    Rmdir(String),
    /// `unlinkat P [AT_REMOVEDIR]` (P may be `$FD:PATH`, as for every *at call)
    Unlinkat(String, rustix::fs::AtFlags),
    /// `unlink P`
    Unlink(String),
    /// `mkdir P MODE` (no chmod after: the umask applies)
    Mkdir(String, u32),
    /// `mkfifo P MODE`
    Mkfifo(String, u32),
    /// `chmod P MODE`
    Chmod(String, u32),
    /// `chown P UID:GID` (following a last symlink; `-1` leaves an id)
    Chown(String, Option<u32>, Option<u32>),
    /// `lchown P UID:GID`
    Lchown(String, Option<u32>, Option<u32>),
    /// `rename OLD NEW`
    Rename(String, String),
    /// `link OLD NEW`
    Link(String, String),
    /// `renameat2 OLD NEW FLAGS` (relative to the working directory), FLAGS among NOREPLACE,
    /// EXCHANGE, WHITEOUT joined by `|`, or a number (`0x80`); with `optional` after them,
    /// EINVAL makes the case unsupported (the filesystem lacks the flag) instead of failed
    Renameat2(String, String, RenameFlags, Option<String>),
    /// `linkat OLD NEW [AT_SYMLINK_FOLLOW]` (both relative to the working directory)
    Linkat(String, String, rustix::fs::AtFlags),
    /// `fchownat P UID:GID [AT_SYMLINK_NOFOLLOW]` (relative to the working directory)
    Fchownat(String, Option<u32>, Option<u32>, rustix::fs::AtFlags),
    /// `symlink TARGET P`
    Symlink(String, String),
    /// `stat P` (following a last symlink)
    Stat(String),
    /// `lstat P`
    Lstat(String),
    /// `truncate P LEN` (LEN may be negative)
    Truncate(String, i64),
    /// `open P FLAGS [MODE]`, flags as `O_CREAT|O_WRONLY` (O_CLOEXEC always added); the
    /// descriptor is closed at once.
    Open(String, OFlags, u32),
    /// `readlink P`
    Readlink(String),
    /// `utimensat P ATIME MTIME [nofollow]`, each time `now`, `omit` or `SECONDS.NANOSECONDS`
    Utimensat(String, [Time; 2], bool),
    /// `mknod P TYPE MODE MAJOR:MINOR`, TYPE one of fifo, char, block, regular, socket, dir,
    /// symlink, unknown
    Mknod(String, FileType, u32, (u32, u32)),
    /// `setxattr P NAME VALUE [create|replace]` (`lsetxattr` on a last symlink itself);
    /// VALUE `""` is the empty value
    Setxattr(String, String, String, XattrFlags, bool),
    /// `getxattr P NAME` (`lgetxattr`)
    Getxattr(String, String, bool),
    /// `removexattr P NAME` (`lremovexattr`)
    Removexattr(String, String, bool),
    /// `setacl P access|default ENTRIES`: the ACL as `acl` writes it, by setxattr
    Setacl(String, bool, Acl),
    /// `fchmod $FD MODE`
    Fchmod(String, u32),
    /// `fchown $FD UID:GID`
    Fchown(String, Option<u32>, Option<u32>),
    /// `ftruncate $FD LEN` (LEN may be negative)
    Ftruncate(String, i64),
    /// `fstat $FD`
    Fstat(String),
    /// `fchmodat P MODE` (no flag: rustix answers AT_SYMLINK_NOFOLLOW itself)
    Fchmodat(String, u32),
    /// `write $FD BYTES` (as `data` writes them; all of them must be written)
    Write(String, Vec<u8>),
    /// `read $FD`: read(2) of up to 4 bytes (what it reads is not looked at)
    Read(String),
    /// `futimens $FD ATIME MTIME`
    Futimens(String, [Time; 2]),
}

/// A time utimensat sets: `now` (UTIME_NOW), `omit` (UTIME_OMIT) or seconds and
/// nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Time(i64, i64);

/// A stat field `is` compares, printed as the Rust cases printed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// `mode & 07777`, in octal.
    Perm,
    /// `mode & S_IFMT`, in octal.
    Type,
    /// `mode & S_IFMT`, in decimal.
    Kind,
    Size,
    Nlink,
    Uid,
    Gid,
    /// `(uid, gid)`.
    Owner,
    /// The device number of a device file, `(major, minor)`.
    Rdev,
    Ino,
    /// The timestamps, in nanoseconds since the epoch.
    Atime,
    Mtime,
    Ctime,
}

/// Whose stat a check reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    /// Saved by `save`.
    Saved(String),
    /// Stat of the path when the step runs.
    Path(String),
}

/// What `is` compares with.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Literal(i128, i128),
    Of(Subject),
}

/// A case of a table, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Steps to interpret.
    Table {
        /// `family.what.expectation`.
        name: String,
        /// An access-control case.
        security: bool,
        /// Its steps.
        steps: Vec<Step>,
    },
    /// A case coded in Rust, by name.
    Rust(String),
}

/// Parses the table `text` of file `file`: its entries in order, or the first error with
/// `file:line`.
pub fn parse(file: &str, text: &str) -> Result<Vec<Entry>, String> {
    let mut out: Vec<Entry> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i as u32 + 1;
        let at = |e: String| format!("{file}:{n}: {e}");
        let line = raw.trim_end();
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            let Some(Entry::Table { steps, .. }) = out.last_mut() else {
                return Err(at("a step outside a `case` block".into()));
            };
            let s = step(body, n).map_err(at)?;
            names(steps, &s).map_err(at)?;
            steps.push(s);
            continue;
        }
        let words: Vec<&str> = body.split_whitespace().collect();
        match words.as_slice() {
            ["case", name] => out.push(Entry::Table { name: (*name).into(), security: false, steps: vec![] }),
            ["case", name, "security"] => {
                out.push(Entry::Table { name: (*name).into(), security: true, steps: vec![] })
            }
            ["rust", name] => out.push(Entry::Rust((*name).into())),
            _ => return Err(at(format!("expected `case NAME [security]` or `rust NAME`, found `{body}`"))),
        }
    }
    Ok(out)
}

/// Every `$NAME` that `s` reads was saved or opened by one of `before`.
fn names(before: &[Step], s: &Step) -> Result<(), String> {
    let saved: BTreeSet<&str> = before
        .iter()
        .filter_map(|b| match &b.what {
            Do::Save(n, _) | Do::SaveFd(n, _) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    let opened: BTreeSet<&str> = before
        .iter()
        .filter_map(|b| match &b.what {
            Do::Fd(n, _, _) | Do::Expect { keep: Some(n), .. } => Some(n.as_str()),
            _ => None,
        })
        .collect();
    let subject = |x: &Subject| match x {
        Subject::Saved(n) if !saved.contains(n.as_str()) => Err(format!("${n} is not saved before")),
        _ => Ok(()),
    };
    if let Do::Target { path, .. } = &s.what {
        if let Some((fd, _)) = dirfd(path).filter(|(fd, _)| !opened.contains(fd)) {
            return Err(format!("${fd} is not opened before (`fd NAME P FLAGS`)"));
        }
    }
    if let Do::Expect { call, .. } = &s.what {
        let paths: Vec<&String> = match call {
            Call::Unlinkat(a, _)
            | Call::Fchmodat(a, _)
            | Call::Fchownat(a, ..)
            | Call::Symlink(_, a)
            | Call::Mkdir(a, _)
            | Call::Mkfifo(a, _)
            | Call::Mknod(a, ..)
            | Call::Open(a, ..)
            | Call::Utimensat(a, ..) => vec![a],
            Call::Linkat(a, b, _) | Call::Renameat2(a, b, ..) => vec![a, b],
            _ => vec![],
        };
        if let Some((fd, _)) = paths.into_iter().filter_map(|p| dirfd(p)).find(|(fd, _)| !opened.contains(fd)) {
            return Err(format!("${fd} is not opened before (`fd NAME P FLAGS`)"));
        }
    }
    match &s.what {
        Do::Is { subject: a, value, .. } => {
            subject(a)?;
            if let Value::Of(b) = value {
                subject(b)?;
            }
        }
        Do::Moved { before, after, .. } | Do::Subdirs { before, after, .. } => {
            subject(before)?;
            subject(after)?;
        }
        Do::Expect {
            call:
                Call::Fchmod(fd, _)
                | Call::Fchown(fd, ..)
                | Call::Ftruncate(fd, _)
                | Call::Fstat(fd)
                | Call::Write(fd, _)
                | Call::Read(fd),
            ..
        } if !opened.contains(fd.as_str()) => {
            return Err(format!("${fd} is not opened before (`fd NAME P FLAGS`)"));
        }
        Do::Data { subject: Source::Fd(fd), .. } | Do::SaveFd(_, fd) if !opened.contains(fd.as_str()) => {
            return Err(format!("${fd} is not opened before (`fd NAME P FLAGS`)"));
        }
        _ => {}
    }
    Ok(())
}

/// One step line (indentation removed).
fn step(text: &str, line: u32) -> Result<Step, String> {
    let (text, label) = match text.split_once(" -- ") {
        Some((t, l)) => (t.trim_end(), Some(l.trim().to_string())),
        None => (text, None),
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let default = |s: &str| label.clone().unwrap_or_else(|| s.to_string());
    let what = match words.as_slice() {
        ["mkdir", p, m] => Do::Mkdir(path(p), octal(m)?),
        ["touch", p, m] => Do::Touch(path(p), octal(m)?),
        ["write", p, ..] => Do::Write(path(p), rest(text, 2)),
        ["chmod", p, m] => Do::Chmod(path(p), octal(m)?),
        ["chown", p, ids] => {
            let (u, g) = ids.split_once(':').ok_or_else(|| format!("not UID:GID: {ids}"))?;
            Do::Chown(path(p), number(u)?, number(g)?)
        }
        ["symlink", t, p] => Do::Symlink(path(t), path(p)),
        ["flag", p, "immutable"] => Do::Flag(path(p), IFlags::IMMUTABLE),
        ["flag", p, "append"] => Do::Flag(path(p), IFlags::APPEND),
        ["utime", p, a, m] => Do::Utime(path(p), [time(a)?, time(m)?]),
        ["fill", p, _, ..] => Do::Fill(path(p), bytes(&rest(text, 2))?),
        ["data", p, _, ..] => {
            let subject = match p.strip_prefix('$') {
                Some(fd) => Source::Fd(fd.into()),
                None => Source::Path(path(p)),
            };
            return Ok(Step {
                line,
                label: default(&format!("data of {p}")),
                what: Do::Data { subject, want: bytes(&rest(text, 2))? },
            });
        }
        ["need", "flags"] => Do::Need(Need::Flags),
        ["need", "acl"] => Do::Need(Need::Acl),
        ["need", "xattr", name] => Do::Need(Need::Xattr((*name).into())),
        ["tick"] => Do::Tick,
        ["umask", m] => Do::Umask(octal(m)?),
        ["save", name, p] => match p.strip_prefix('$') {
            Some(fd) => Do::SaveFd((*name).into(), fd.into()),
            None => Do::Save((*name).into(), path(p)),
        },
        ["exists", p] => Do::Exists(path(p)),
        ["fd", name, p, flags] => Do::Fd((*name).into(), path(p), oflags(flags)?),
        ["expect", want, rest @ ..] => {
            let want = if *want == "0" { vec![] } else { want.split(',').map(errno).collect::<Result<Vec<_>, _>>()? };
            let (user, call_words) = match rest {
                ["as", u, more @ ..] => (Some(user(u)?), more),
                _ => (None, rest),
            };
            let (call_words, keep) = match call_words {
                [w @ .., "->", name] if want.is_empty() && w.first() == Some(&"open") => (w, Some((*name).to_string())),
                _ => (call_words, None),
            };
            let written = match call_words {
                [w @ .., "optional"] if w.first() == Some(&"renameat2") => w.join(" "),
                _ => call_words.join(" "),
            };
            let call = call(call_words)?;
            return Ok(Step { line, label: default(&written), what: Do::Expect { want, user, call, keep } });
        }
        ["is", f, s, v] => {
            let field = field(f)?;
            let subject = subject(s);
            let value = match v.strip_prefix('@') {
                Some(p) => Value::Of(Subject::Path(path(p))),
                None if v.starts_with('$') => Value::Of(subject_of(v)),
                None => literal(field, v)?,
            };
            let word = match field {
                Field::Perm => "mode",
                Field::Type | Field::Kind => "file type",
                Field::Size => "size",
                Field::Nlink => "link count",
                Field::Uid | Field::Owner => "owner",
                Field::Rdev => "device number",
                Field::Gid => "group",
                Field::Ino => "inode",
                Field::Atime => "atime",
                Field::Mtime => "mtime",
                Field::Ctime => "ctime",
            };
            return Ok(Step {
                line,
                label: default(&format!("{word} of {s}")),
                what: Do::Is { field, subject, value },
            });
        }
        ["subdirs", b, a, d] => Do::Subdirs {
            before: subject(b),
            after: subject(a),
            delta: d.parse().map_err(|_| format!("not a link count change: {d}"))?,
        },
        ["acl", p, kind @ ("access" | "default"), entries] => {
            let (path, of_dir) = (path(p), *kind == "default");
            let attr = acl_attr(of_dir);
            return Ok(Step {
                line,
                label: default(&format!("setxattr {path} {attr}")),
                what: Do::Acl { path, default: of_dir, acl: acl(entries)? },
            });
        }
        ["target", p, _, ..] => {
            let label = default(&format!("readlink {p}"));
            return Ok(Step { line, label, what: Do::Target { path: path(p), want: rest(text, 2) } });
        }
        ["xattr", p, n, v] => Do::Xattr { path: path(p), name: (*n).into(), value: path(v) },
        ["moved", b, a, am, mm, cm] => {
            Do::Moved { before: subject(b), after: subject(a), marks: [mark(am)?, mark(mm)?, mark(cm)?] }
        }
        _ => return Err(format!("not a step: `{text}`")),
    };
    Ok(Step { line, label: default(text), what })
}

/// The call of an `expect` step.
fn call(words: &[&str]) -> Result<Call, String> {
    Ok(match words {
        ["rmdir", p] => Call::Rmdir(path(p)),
        ["unlink", p] => Call::Unlink(path(p)),
        ["unlinkat", p, flags @ ..] => Call::Unlinkat(path(p), at_flags(flags)?),
        ["mkdir", p, m] => Call::Mkdir(path(p), octal(m)?),
        ["mkfifo", p, m] => Call::Mkfifo(path(p), octal(m)?),
        ["chmod", p, m] => Call::Chmod(path(p), octal(m)?),
        ["setacl", p, kind @ ("access" | "default"), entries] => {
            Call::Setacl(path(p), *kind == "default", acl(entries)?)
        }
        ["fchmod", fd, m] => Call::Fchmod(descriptor(fd)?, octal(m)?),
        ["fchown", fd, ids] => {
            let (u, g) = ids.split_once(':').ok_or_else(|| format!("not UID:GID: {ids}"))?;
            Call::Fchown(descriptor(fd)?, id(u)?, id(g)?)
        }
        ["ftruncate", fd, n] => Call::Ftruncate(descriptor(fd)?, n.parse().map_err(|_| format!("not a length: {n}"))?),
        ["fstat", fd] => Call::Fstat(descriptor(fd)?),
        ["fchmodat", p, m] => Call::Fchmodat(path(p), octal(m)?),
        ["read", fd] => Call::Read(descriptor(fd)?),
        ["write", fd, data @ ..] if !data.is_empty() => Call::Write(descriptor(fd)?, bytes(&data.join(" "))?),
        ["futimens", fd, a, m] => Call::Futimens(descriptor(fd)?, [time(a)?, time(m)?]),
        [chown @ ("chown" | "lchown"), p, ids] => {
            let (u, g) = ids.split_once(':').ok_or_else(|| format!("not UID:GID: {ids}"))?;
            let (u, g) = (id(u)?, id(g)?);
            if *chown == "chown" {
                Call::Chown(path(p), u, g)
            } else {
                Call::Lchown(path(p), u, g)
            }
        }
        ["rename", a, b] => Call::Rename(path(a), path(b)),
        ["link", a, b] => Call::Link(path(a), path(b)),
        ["renameat2", a, b, flags, more @ ..] => {
            let optional = match more {
                [] => None,
                ["optional"] => Some(format!("RENAME_{flags}")),
                _ => return Err(format!("not renameat2 OLD NEW FLAGS [optional]: {}", words.join(" "))),
            };
            Call::Renameat2(path(a), path(b), rename_flags(flags)?, optional)
        }
        ["linkat", a, b, flags @ ..] => Call::Linkat(path(a), path(b), at_flags(flags)?),
        ["fchownat", p, ids, flags @ ..] => {
            let (u, g) = ids.split_once(':').ok_or_else(|| format!("not UID:GID: {ids}"))?;
            Call::Fchownat(path(p), id(u)?, id(g)?, at_flags(flags)?)
        }
        ["symlink", t, p] => Call::Symlink(path(t), path(p)),
        ["stat", p] => Call::Stat(path(p)),
        ["lstat", p] => Call::Lstat(path(p)),
        ["readlink", p] => Call::Readlink(path(p)),
        ["truncate", p, n] => Call::Truncate(path(p), n.parse().map_err(|_| format!("not a length: {n}"))?),
        ["utimensat", p, a, m] => Call::Utimensat(path(p), [time(a)?, time(m)?], false),
        ["utimensat", p, a, m, "nofollow"] => Call::Utimensat(path(p), [time(a)?, time(m)?], true),
        ["mknod", p, t, m, dev] => Call::Mknod(path(p), file_type(t)?, octal(m)?, device(dev)?),
        [set @ ("setxattr" | "lsetxattr"), p, n, v, more @ ..] => {
            let flags = match more {
                [] => XattrFlags::empty(),
                ["create"] => XattrFlags::CREATE,
                ["replace"] => XattrFlags::REPLACE,
                _ => return Err(format!("not a setxattr flag: {}", more.join(" "))),
            };
            Call::Setxattr(path(p), (*n).into(), path(v), flags, *set == "setxattr")
        }
        [get @ ("getxattr" | "lgetxattr"), p, n] => Call::Getxattr(path(p), (*n).into(), *get == "getxattr"),
        [rm @ ("removexattr" | "lremovexattr"), p, n] => Call::Removexattr(path(p), (*n).into(), *rm == "removexattr"),
        ["open", p, flags] => Call::Open(path(p), oflags(flags)?, 0),
        ["open", p, flags, m] => Call::Open(path(p), oflags(flags)?, octal(m)?),
        _ => return Err(format!("not a call: `{}`", words.join(" "))),
    })
}

/// The attribute of a directory's default ACL or of an access ACL.
fn acl_attr(default: bool) -> &'static str {
    if default {
        "system.posix_acl_default"
    } else {
        "system.posix_acl_access"
    }
}

/// An ACL as setfacl writes it, entries comma-separated: `user::rw-,user:65534:r--,group::---,
/// mask::r--,other::---`.
fn acl(text: &str) -> Result<Acl, String> {
    let mut out = Vec::new();
    for e in text.split(',') {
        let bad = || format!("not an ACL entry: {e} (as user:65534:rw-)");
        let mut parts = e.split(':');
        let (Some(kind), Some(id), Some(perm), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return Err(bad());
        };
        let tag = match (kind, id) {
            ("user", "") => Tag::UserObj,
            ("user", n) => Tag::User(n.parse().map_err(|_| bad())?),
            ("group", "") => Tag::GroupObj,
            ("group", n) => Tag::Group(n.parse().map_err(|_| bad())?),
            ("mask", "") => Tag::Mask,
            ("other", "") => Tag::Other,
            _ => return Err(bad()),
        };
        let b = perm.as_bytes();
        if b.len() != 3 || !matches!(b[0], b'r' | b'-') || !matches!(b[1], b'w' | b'-') || !matches!(b[2], b'x' | b'-')
        {
            return Err(bad());
        }
        let bits = u16::from(b[0] == b'r') << 2 | u16::from(b[1] == b'w') << 1 | u16::from(b[2] == b'x');
        out.push((tag, bits));
    }
    Ok(Acl(out))
}

/// renameat2's flags: names joined by `|`, or a number.
fn rename_flags(s: &str) -> Result<RenameFlags, String> {
    if let Some(hex) = s.strip_prefix("0x") {
        return u32::from_str_radix(hex, 16)
            .map(RenameFlags::from_bits_retain)
            .map_err(|_| format!("not a number: {s}"));
    }
    let names = [
        ("NOREPLACE", RenameFlags::NOREPLACE),
        ("EXCHANGE", RenameFlags::EXCHANGE),
        ("WHITEOUT", RenameFlags::WHITEOUT),
    ];
    flag_set(s, RenameFlags::empty(), &names, "a renameat2 flag")
}

/// Names joined by `|`, each one of `names`, or'ed together.
fn flag_set<F: Copy + std::ops::BitOr<Output = F>>(
    s: &str,
    none: F,
    names: &[(&str, F)],
    what: &str,
) -> Result<F, String> {
    s.split('|').try_fold(none, |acc, w| {
        names.iter().find(|(n, _)| *n == w).map(|(_, f)| acc | *f).ok_or_else(|| format!("not {what}: {w}"))
    })
}

/// The AT_ flags of an *at call: none, or one.
fn at_flags(words: &[&str]) -> Result<rustix::fs::AtFlags, String> {
    use rustix::fs::AtFlags;
    Ok(match words {
        [] => AtFlags::empty(),
        ["AT_SYMLINK_FOLLOW"] => AtFlags::SYMLINK_FOLLOW,
        ["AT_SYMLINK_NOFOLLOW"] => AtFlags::SYMLINK_NOFOLLOW,
        ["AT_REMOVEDIR"] => AtFlags::REMOVEDIR,
        _ => return Err(format!("not an AT_ flag: {}", words.join(" "))),
    })
}

/// A descriptor opened by an `fd` step: `$NAME`.
fn descriptor(fd: &str) -> Result<String, String> {
    fd.strip_prefix('$').map(str::to_string).ok_or_else(|| format!("not a descriptor: {fd} ($NAME of an `fd` step)"))
}

/// Bytes as `fill` and `data` write them: pieces joined by `+`, each `TEXT` or `TEXT*COUNT`;
/// in TEXT `\0` is the zero byte, `\+` and `\*` the characters themselves.
fn bytes(s: &str) -> Result<Vec<u8>, String> {
    // The escaped characters stand aside as control characters no table writes.
    let s = s.replace("\\+", "\u{1}").replace("\\*", "\u{2}");
    let mut out = Vec::new();
    for piece in s.split('+') {
        let (text, count) = match piece.rsplit_once('*') {
            Some((t, n)) => (t, n.parse::<usize>().map_err(|_| format!("not a count: {n} in {piece}"))?),
            None => (piece, 1),
        };
        let text = text.replace("\\0", "\0").replace('\u{1}', "+").replace('\u{2}', "*");
        out.extend(text.as_bytes().repeat(count));
    }
    Ok(out)
}

/// The text of `line` after its first `n` words.
fn rest(line: &str, n: usize) -> String {
    let mut s = line.trim_start();
    for _ in 0..n {
        s = s.trim_start();
        s = s.find(char::is_whitespace).map_or("", |i| &s[i..]);
    }
    s.trim_start().to_string()
}

/// A path as written: `""` is the empty path.
fn path(p: &str) -> String {
    if p == "\"\"" {
        String::new()
    } else {
        p.to_string()
    }
}

fn octal(m: &str) -> Result<u32, String> {
    u32::from_str_radix(m, 8).map_err(|_| format!("not an octal mode: {m}"))
}

fn number(n: &str) -> Result<u32, String> {
    n.parse().map_err(|_| format!("not a number: {n}"))
}

/// An id of chown: a number, or `-1` to leave it.
fn id(n: &str) -> Result<Option<u32>, String> {
    if n == "-1" {
        Ok(None)
    } else {
        number(n).map(Some)
    }
}

fn errno(name: &str) -> Result<Errno, String> {
    check::errno(name).ok_or_else(|| format!("not an errno: {name}"))
}

/// `U1`, `U2`, or either with supplementary groups: `U1+65533`.
fn user(u: &str) -> Result<User, String> {
    let (base, groups) = u.split_once('+').unwrap_or((u, ""));
    let base = match base {
        "U1" => U1,
        "U2" => U2,
        _ => return Err(format!("not a user: {u} (U1 or U2)")),
    };
    if groups.is_empty() {
        return Ok(base);
    }
    let groups: Vec<u32> = groups.split('+').map(number).collect::<Result<_, _>>()?;
    // Parsed once per run: the few group lists live as long as the tables.
    Ok(base.with_groups(Vec::leak(groups)))
}

fn oflags(s: &str) -> Result<OFlags, String> {
    let names = [
        ("O_RDONLY", OFlags::RDONLY),
        ("O_WRONLY", OFlags::WRONLY),
        ("O_RDWR", OFlags::RDWR),
        ("O_CREAT", OFlags::CREATE),
        ("O_EXCL", OFlags::EXCL),
        ("O_TRUNC", OFlags::TRUNC),
        ("O_APPEND", OFlags::APPEND),
        ("O_DIRECTORY", OFlags::DIRECTORY),
        ("O_NOFOLLOW", OFlags::NOFOLLOW),
        ("O_NONBLOCK", OFlags::NONBLOCK),
        ("O_PATH", OFlags::PATH),
        ("O_NOCTTY", OFlags::NOCTTY),
        ("O_SYNC", OFlags::SYNC),
        // O_DSYNC alone: rustix's own DSYNC flag is O_SYNC on linux_raw (see fsarena_engine::O_DSYNC).
        ("O_DSYNC", fsarena_engine::O_DSYNC),
    ];
    flag_set(s, OFlags::empty(), &names, "an open flag")
}

/// `now`, `omit` or `SECONDS.NANOSECONDS`.
fn time(t: &str) -> Result<Time, String> {
    Ok(match t {
        "now" => Time(0, rustix::fs::UTIME_NOW),
        "omit" => Time(0, rustix::fs::UTIME_OMIT),
        _ => {
            let bad = || format!("not a time: {t} (now, omit or SECONDS.NANOSECONDS)");
            let (s, n) = t.split_once('.').ok_or_else(bad)?;
            Time(s.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?)
        }
    })
}

fn timestamps(t: &[Time; 2]) -> rustix::fs::Timestamps {
    let spec = |t: Time| rustix::fs::Timespec { tv_sec: t.0, tv_nsec: t.1 };
    rustix::fs::Timestamps { last_access: spec(t[0]), last_modification: spec(t[1]) }
}

fn file_type(t: &str) -> Result<FileType, String> {
    Ok(match t {
        "fifo" => FileType::Fifo,
        "char" => FileType::CharacterDevice,
        "block" => FileType::BlockDevice,
        "regular" => FileType::RegularFile,
        "socket" => FileType::Socket,
        "dir" => FileType::Directory,
        "symlink" => FileType::Symlink,
        "unknown" => FileType::Unknown,
        _ => return Err(format!("not a file type: {t}")),
    })
}

/// `MAJOR:MINOR`.
fn device(d: &str) -> Result<(u32, u32), String> {
    let (a, b) = d.split_once(':').ok_or_else(|| format!("not MAJOR:MINOR: {d}"))?;
    Ok((number(a)?, number(b)?))
}

fn field(f: &str) -> Result<Field, String> {
    Ok(match f {
        "perm" => Field::Perm,
        "type" => Field::Type,
        "kind" => Field::Kind,
        "size" => Field::Size,
        "nlink" => Field::Nlink,
        "uid" => Field::Uid,
        "gid" => Field::Gid,
        "owner" => Field::Owner,
        "rdev" => Field::Rdev,
        "ino" => Field::Ino,
        "atime" => Field::Atime,
        "mtime" => Field::Mtime,
        "ctime" => Field::Ctime,
        _ => return Err(format!("not a field: {f}")),
    })
}

fn subject(s: &str) -> Subject {
    if s.starts_with('$') {
        subject_of(s)
    } else {
        Subject::Path(path(s))
    }
}

fn subject_of(s: &str) -> Subject {
    Subject::Saved(s.trim_start_matches('$').to_string())
}

/// A value of `field` as written: octal for modes, `UID:GID` for owner, else decimal.
fn literal(field: Field, v: &str) -> Result<Value, String> {
    let n = |s: &str| s.parse::<i128>().map_err(|_| format!("not a number: {v}"));
    Ok(match field {
        Field::Perm | Field::Type => Value::Literal(i128::from(octal(v)?), 0),
        Field::Owner | Field::Rdev => {
            let (u, g) = v.split_once(':').ok_or_else(|| format!("not UID:GID or MAJOR:MINOR: {v}"))?;
            Value::Literal(n(u)?, n(g)?)
        }
        _ => Value::Literal(n(v)?, 0),
    })
}

fn mark(m: &str) -> Result<Mark, String> {
    Ok(match m {
        "changed" => Mark::Changed,
        "same" => Mark::Same,
        "any" => Mark::Any,
        _ => return Err(format!("not a timestamp mark: {m} (changed, same or any)")),
    })
}

/// Runs the steps of a table case in `c`.
pub fn run(c: &Ctx<'_>, steps: &[Step]) -> Check {
    let mut saved: BTreeMap<&str, Stat> = BTreeMap::new();
    let mut fds: BTreeMap<&str, OwnedFd> = BTreeMap::new();
    for s in steps {
        match &s.what {
            Do::Mkdir(p, m) => cases::mkdir(&expand(c, p), *m)?,
            Do::Touch(p, m) => cases::touch(&expand(c, p), *m)?,
            Do::Write(p, data) => cases::write_file(&expand(c, p), data.as_bytes())?,
            Do::Chmod(p, m) => cases::chmod(&expand(c, p), *m)?,
            Do::Chown(p, u, g) => cases::chown(&expand(c, p), *u, *g)?,
            Do::Symlink(t, p) => cases::symlink(&expand(c, t), &expand(c, p))?,
            Do::Flag(p, f) => cases::set_flag(&expand(c, p), *f)?,
            Do::Utime(p, t) => {
                let p = expand(c, p);
                rustix::fs::utimensat(CWD, &p, &timestamps(t), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| broken(&format!("utimensat {p} (setup)"), e))?;
            }
            Do::Fill(p, data) => cases::write_file(&expand(c, p), data)?,
            Do::Need(Need::Flags) => c.need_flags()?,
            Do::Need(Need::Acl) => c.need_acl()?,
            Do::Need(Need::Xattr(name)) => c.need_xattr(name)?,
            Do::Tick => c.tick(),
            Do::Umask(m) => {
                rustix::process::umask(Mode::from_raw_mode(*m));
            }
            Do::Save(name, p) => {
                saved.insert(name, stat(expand(c, p))?);
            }
            Do::SaveFd(name, fd) => {
                let f = open(&fds, fd).map_err(|e| broken(&format!("${fd}"), e))?;
                saved.insert(name, check::fstat(f, &format!("fstat ${fd}"))?);
            }
            Do::Exists(p) => {
                stat(expand(c, p))?;
            }
            Do::Fd(name, p, flags) => {
                let p = expand(c, p);
                let fd = rustix::fs::open(&p, *flags | OFlags::CLOEXEC, Mode::empty())
                    .map_err(|e| broken(&format!("open {p}"), e))?;
                fds.insert(name, fd);
            }
            Do::Expect { call: Call::Open(p, flags, m), keep: Some(name), user, .. } => {
                let fd = {
                    let (d, p) = at(c, &fds, p).map_err(|e| broken(p, e))?;
                    let open = || rustix::fs::openat(d, &p, *flags | OFlags::CLOEXEC, Mode::from_raw_mode(*m));
                    match user {
                        Some(u) => c.as_user(*u, open),
                        None => open(),
                    }
                };
                fds.insert(name, ok(&s.label, fd)?);
            }
            Do::Expect { want, user, call, .. } => {
                let r = match user {
                    Some(u) => c.as_user(*u, || perform(c, &fds, call)),
                    None => perform(c, &fds, call),
                };
                let checked = match want.as_slice() {
                    [] => ok(&s.label, r),
                    [one] => err(&s.label, r, *one),
                    many => err_any(&s.label, r, many),
                };
                match (checked, call) {
                    (Err(Miss::Fail { actual, .. }), Call::Renameat2(.., Some(flag))) if actual == "EINVAL" => {
                        return Err(check::unsupported(format!(
                            "renameat2 {flag}: EINVAL, the filesystem does not implement the flag"
                        )));
                    }
                    (checked, _) => checked?,
                }
            }
            Do::Is { field, subject, value } => {
                let got = of(c, &saved, subject, s.line)?;
                let want = match value {
                    Value::Literal(a, b) => (*a, *b),
                    Value::Of(other) => get(*field, &of(c, &saved, other, s.line)?),
                };
                compare(&s.label, *field, get(*field, &got), want)?;
            }
            Do::Subdirs { before, after, delta } => {
                let b = of(c, &saved, before, s.line)?;
                let a = of(c, &saved, after, s.line)?;
                if counts_subdirs(&b) {
                    eq(&s.label, i128::from(a.nlink), i128::from(b.nlink) + delta)?;
                }
            }
            Do::Acl { path, default, acl } => {
                let p = expand(c, path);
                ok(&s.label, rustix::fs::setxattr(&p, acl_attr(*default), &acl.to_xattr(), XattrFlags::empty()))?;
            }
            Do::Xattr { path, name, value } => {
                let p = expand(c, path);
                let got = ok(&format!("getxattr {p} {name}"), getxattr(&p, name, true))?;
                eq(&s.label, got, value.as_bytes().to_vec())?;
            }
            Do::Data { subject, want } => {
                let got = match subject {
                    Source::Fd(fd) => cases::read_all(open(&fds, fd).map_err(|e| broken(&format!("${fd}"), e))?)?,
                    Source::Path(p) => {
                        let p = expand(c, p);
                        let fd = rustix::fs::open(&p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                            .map_err(|e| broken(&format!("open {p}"), e))?;
                        cases::read_all(&fd)?
                    }
                };
                same_data(&s.label, &got, want)?;
            }
            Do::Target { path, want } => {
                let (d, p) = at(c, &fds, path).map_err(|e| broken(path, e))?;
                let got = ok(&s.label, rustix::fs::readlinkat(d, &p, Vec::new()))?.into_bytes();
                if got != want.as_bytes() {
                    return Err(fail(&s.label, format!("{want:?}"), format!("{:?}", String::from_utf8_lossy(&got))));
                }
            }
            Do::Moved { before, after, marks } => {
                let b = of(c, &saved, before, s.line)?;
                let a = of(c, &saved, after, s.line)?;
                moved(&s.label, b.times, a.times, marks[0], marks[1], marks[2])?;
            }
        }
    }
    Ok(())
}

/// The stat a check reads: saved, or taken now.
fn of(c: &Ctx<'_>, saved: &BTreeMap<&str, Stat>, s: &Subject, line: u32) -> Result<Stat, Miss> {
    match s {
        Subject::Path(p) => stat(expand(c, p)),
        Subject::Saved(name) => saved
            .get(name.as_str())
            .copied()
            .ok_or_else(|| fail(&format!("table line {line}"), format!("${name} saved first"), "not saved")),
    }
}

/// `field` of `s` as two numbers (the second only for owner).
fn get(field: Field, s: &Stat) -> (i128, i128) {
    match field {
        Field::Perm => (i128::from(s.perm().0), 0),
        Field::Type | Field::Kind => (i128::from(s.kind()), 0),
        Field::Size => (i128::from(s.size), 0),
        Field::Nlink => (i128::from(s.nlink), 0),
        Field::Uid => (i128::from(s.uid), 0),
        Field::Gid => (i128::from(s.gid), 0),
        Field::Owner => (i128::from(s.uid), i128::from(s.gid)),
        Field::Rdev => (i128::from(s.rdev.0), i128::from(s.rdev.1)),
        Field::Ino => (i128::from(s.ino), 0),
        Field::Atime => (s.times.atime, 0),
        Field::Mtime => (s.times.mtime, 0),
        Field::Ctime => (s.times.ctime, 0),
    }
}

/// [`eq`] printed as the field's type prints.
fn compare(what: &str, field: Field, got: (i128, i128), want: (i128, i128)) -> Check {
    match field {
        Field::Perm | Field::Type => eq(what, Octal(got.0 as u32), Octal(want.0 as u32)),
        Field::Owner | Field::Rdev => eq(what, got, want),
        _ => eq(what, got.0, want.0),
    }
}

/// `p` with `{long_name}`, `{long_path}` and `{dir}` put in.
fn expand(c: &Ctx<'_>, p: &str) -> String {
    if !p.contains('{') {
        return p.to_string();
    }
    p.replace("{long_name}", &cases::too_long_name(c))
        .replace("{long_path}", &cases::too_long_path())
        .replace("{dir}", &c.dir.to_string_lossy())
}

/// Makes the call; its result without its value.
fn perform(c: &Ctx<'_>, fds: &BTreeMap<&str, OwnedFd>, call: &Call) -> rustix::io::Result<()> {
    use rustix::fs;
    let p = |s: &String| expand(c, s);
    let ids = |u: &Option<u32>, g: &Option<u32>| (u.map(Uid::from_raw), g.map(Gid::from_raw));
    match call {
        Call::Rmdir(a) => fs::rmdir(p(a)),
        Call::Unlink(a) => fs::unlink(p(a)),
        Call::Unlinkat(a, flags) => {
            let (d, a) = at(c, fds, a)?;
            fs::unlinkat(d, a, *flags)
        }
        Call::Fchmodat(a, m) => {
            let (d, a) = at(c, fds, a)?;
            fs::chmodat(d, a, Mode::from_raw_mode(*m), fs::AtFlags::empty())
        }
        Call::Mkdir(a, m) => {
            let (d, a) = at(c, fds, a)?;
            fs::mkdirat(d, a, Mode::from_raw_mode(*m))
        }
        Call::Mkfifo(a, m) => {
            let (d, a) = at(c, fds, a)?;
            fs::mkfifoat(d, a, Mode::from_raw_mode(*m))
        }
        Call::Chmod(a, m) => fs::chmod(p(a), Mode::from_raw_mode(*m)),
        Call::Chown(a, u, g) => {
            let (u, g) = ids(u, g);
            fs::chown(p(a), u, g)
        }
        Call::Lchown(a, u, g) => {
            let (u, g) = ids(u, g);
            fs::chownat(CWD, p(a), u, g, fs::AtFlags::SYMLINK_NOFOLLOW)
        }
        Call::Rename(a, b) => fs::rename(p(a), p(b)),
        Call::Link(a, b) => fs::link(p(a), p(b)),
        Call::Renameat2(a, b, flags, _) => {
            let ((da, a), (db, b)) = (at(c, fds, a)?, at(c, fds, b)?);
            fs::renameat_with(da, a, db, b, *flags)
        }
        Call::Linkat(a, b, flags) => {
            let ((da, a), (db, b)) = (at(c, fds, a)?, at(c, fds, b)?);
            fs::linkat(da, a, db, b, *flags)
        }
        Call::Fchownat(a, u, g, flags) => {
            let (u, g) = ids(u, g);
            let (d, a) = at(c, fds, a)?;
            fs::chownat(d, a, u, g, *flags)
        }
        Call::Symlink(t, a) => {
            let (d, a) = at(c, fds, a)?;
            fs::symlinkat(p(t), d, a)
        }
        Call::Stat(a) => fs::stat(p(a)).map(drop),
        Call::Lstat(a) => fs::lstat(p(a)).map(drop),
        Call::Readlink(a) => fs::readlinkat(CWD, p(a), Vec::new()).map(drop),
        Call::Truncate(a, n) => cases::truncate_raw(&p(a), *n),
        Call::Utimensat(a, t, nofollow) => {
            let flags = if *nofollow { fs::AtFlags::SYMLINK_NOFOLLOW } else { fs::AtFlags::empty() };
            let (d, a) = at(c, fds, a)?;
            fs::utimensat(d, a, &timestamps(t), flags)
        }
        Call::Mknod(a, t, m, (major, minor)) => {
            let (d, a) = at(c, fds, a)?;
            fs::mknodat(d, a, *t, Mode::from_raw_mode(*m), fs::makedev(*major, *minor))
        }
        Call::Setxattr(a, n, v, flags, follow) => {
            if *follow {
                fs::setxattr(p(a), n.as_str(), v.as_bytes(), *flags)
            } else {
                fs::lsetxattr(p(a), n.as_str(), v.as_bytes(), *flags)
            }
        }
        Call::Getxattr(a, n, follow) => getxattr(&p(a), n, *follow).map(drop),
        Call::Removexattr(a, n, follow) => {
            if *follow {
                fs::removexattr(p(a), n.as_str())
            } else {
                fs::lremovexattr(p(a), n.as_str())
            }
        }
        Call::Setacl(a, of_dir, acl) => fs::setxattr(p(a), acl_attr(*of_dir), &acl.to_xattr(), XattrFlags::empty()),
        Call::Fchmod(fd, m) => fs::fchmod(open(fds, fd)?, Mode::from_raw_mode(*m)),
        Call::Fchown(fd, u, g) => {
            let (u, g) = ids(u, g);
            fs::fchown(open(fds, fd)?, u, g)
        }
        Call::Ftruncate(fd, n) => {
            use std::os::fd::AsRawFd;
            let fd = open(fds, fd)?.as_raw_fd();
            // SAFETY: ftruncate on a descriptor the case holds open; no memory is passed.
            // Through libc, since rustix takes no negative length.
            cases::sys_int(unsafe { libc::ftruncate(fd, *n) })
        }
        Call::Fstat(fd) => fs::fstat(open(fds, fd)?).map(drop),
        Call::Read(fd) => rustix::io::read(open(fds, fd)?, &mut [0u8; 4]).map(drop),
        Call::Write(fd, data) => match rustix::io::write(open(fds, fd)?, data)? {
            n if n == data.len() => Ok(()),
            _ => Err(Errno::IO),
        },
        Call::Futimens(fd, t) => fs::futimens(open(fds, fd)?, &timestamps(t)),
        Call::Open(a, f, m) => {
            let (d, a) = at(c, fds, a)?;
            fs::openat(d, a, *f | OFlags::CLOEXEC, Mode::from_raw_mode(*m)).map(drop)
        }
    }
}

/// The content read must be `want` (compared by length and first differing byte, not printed
/// whole).
fn same_data(what: &str, got: &[u8], want: &[u8]) -> Check {
    let first_diff = got.iter().zip(want).position(|(a, b)| a != b);
    check::ensure(
        what,
        got.len() == want.len() && first_diff.is_none(),
        &format!("{} bytes as the table gives them", want.len()),
        || match first_diff {
            Some(i) => format!("byte {i} is {:#04x}, not {:#04x}", got[i], want[i]),
            None => format!("{} bytes", got.len()),
        },
    )
}

/// The directory descriptor and path of an *at call's `$FD:PATH` (the descriptor kept as
/// `$FD`), or the working directory and the path.
fn at<'a>(c: &Ctx<'_>, fds: &'a BTreeMap<&str, OwnedFd>, p: &str) -> rustix::io::Result<(BorrowedFd<'a>, String)> {
    match dirfd(p) {
        Some((fd, rest)) => Ok((open(fds, fd)?.as_fd(), expand(c, &path(rest)))),
        None => Ok((CWD, expand(c, p))),
    }
}

/// `$FD:PATH` split into FD and PATH.
fn dirfd(p: &str) -> Option<(&str, &str)> {
    p.strip_prefix('$')?.split_once(':')
}

/// Whether the directory `d` counts its subdirectories in its link count (each one's `..`):
/// the Unix tradition (ext4, xfs, tmpfs) that POSIX leaves to the filesystem; btrfs keeps
/// every directory at 1.
pub(crate) fn counts_subdirs(d: &Stat) -> bool {
    d.nlink >= 2
}

/// The descriptor an `fd` step opened as `name` (the parser checks that one did).
fn open<'a>(fds: &'a BTreeMap<&str, OwnedFd>, name: &str) -> rustix::io::Result<&'a OwnedFd> {
    fds.get(name).ok_or(Errno::BADF)
}

/// The value of attribute `name` of `p` (following a last symlink when `follow`).
pub(crate) fn getxattr(p: &str, name: &str, follow: bool) -> rustix::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 65536];
    let n = if follow {
        rustix::fs::getxattr(p, name, &mut buf[..])
    } else {
        rustix::fs::lgetxattr(p, name, &mut buf[..])
    }?;
    buf.truncate(n);
    Ok(buf)
}

/// The cases of one table in order, each `rust` entry resolved in `coded`; a parse error, a
/// name twice or a `rust` entry that names no case of `coded` (or a case of `coded` no entry
/// names) is an error.
pub fn build(file: &str, text: &str, coded: &'static [RustCase]) -> Result<Vec<Case>, String> {
    let mut used = vec![false; coded.len()];
    let mut out = Vec::new();
    for e in parse(file, text)? {
        out.push(match e {
            Entry::Table { name, security, steps } => {
                Case { name: Box::leak(name.into_boxed_str()), security, run: cases::Run::Table(steps) }
            }
            Entry::Rust(name) => {
                let i = coded
                    .iter()
                    .position(|r| r.name == name)
                    .ok_or_else(|| format!("{file}: `rust {name}` names no case of the family's Rust file"))?;
                used[i] = true;
                Case { name: coded[i].name, security: coded[i].security, run: cases::Run::Rust(coded[i].run) }
            }
        });
    }
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(format!("{file}: the Rust case {} is in no table", coded[i].name));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn bytes_are_pieces_repeated_with_escapes() {
        assert_eq!(bytes("abc+\\0*3").unwrap(), b"abc\0\0\0".to_vec());
        assert_eq!(bytes("x*4").unwrap(), b"xxxx".to_vec());
        assert_eq!(bytes("still here").unwrap(), b"still here".to_vec());
        assert_eq!(bytes("data\\+").unwrap(), b"data+".to_vec());
        assert_eq!(bytes("\\+\\**2").unwrap(), b"+*+*".to_vec());
        assert!(bytes("x*many").is_err());
    }
}
