//! The options of `exec` and the checks made on its commands before anything runs: the
//! placeholders (`{mnt}`, `{assets}`) are substituted shell-quoted, so they must be written
//! bare (outside quotes); the first word of a command, when it is a plain program name, must
//! be on PATH or a shell builtin.

use fsarena_core::option::DefaultValue::{Is, Unset};
use fsarena_core::option::ListSyntax;
use fsarena_core::option::ValueKind::{Bool, Choice, CommandLine, Count, Directory, Size};
use fsarena_workload::options::{boolean, nonzero_size, opt, positive, OptionDef};
use fsarena_workload::programs::find_program;
use std::path::PathBuf;

/// A built-in program workload (generated inputs, no download).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// Compress a generated file with gzip or zstd.
    Compress,
    /// Unpack a generated source tree from a tar, then delete it.
    Unpack,
    /// Build a generated C project with make.
    Build,
}

/// The compressor of `builtin=compress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `gzip -c -LEVEL`.
    Gzip,
    /// `zstd -c -LEVEL`.
    Zstd,
}

impl Tool {
    /// The program's name.
    pub fn program(self) -> &'static str {
        match self {
            Tool::Gzip => "gzip",
            Tool::Zstd => "zstd",
        }
    }

    /// The levels the program accepts, and its default.
    pub fn levels(self) -> (u32, u32, u32) {
        match self {
            Tool::Gzip => (1, 9, 6),
            Tool::Zstd => (1, 19, 3),
        }
    }
}

/// Every option of one `exec` run, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOptions {
    /// The timed command (sh -c), or none with a builtin.
    pub cmd: Option<String>,
    /// Untimed, before the command.
    pub setup: Option<String>,
    /// Untimed, after the command (also after a failure).
    pub teardown: Option<String>,
    /// A directory of inputs, copied in untimed as `{assets}`.
    pub assets: Option<PathBuf>,
    /// A built-in program workload instead of `cmd`.
    pub builtin: Option<Builtin>,
    /// compress: the compressor.
    pub tool: Tool,
    /// compress: its level (the tool's default when unset).
    pub level: Option<u32>,
    /// compress: the size of the generated input.
    pub size: u64,
    /// unpack and build: the number of generated files (per builtin default when unset).
    pub files: Option<u32>,
    /// build: make's -j (the CPUs when unset).
    pub jobs: Option<u32>,
    /// Drop the caches before each timed step, when the run drops caches.
    pub cold: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        Self {
            cmd: None,
            setup: None,
            teardown: None,
            assets: None,
            builtin: None,
            tool: Tool::Gzip,
            level: None,
            size: 256 << 20,
            files: None,
            jobs: None,
            cold: true,
        }
    }
}

/// A non-empty command line.
fn command(v: &str) -> Result<Option<String>, String> {
    if v.trim().is_empty() {
        return Err("the command is empty".into());
    }
    Ok(Some(v.to_string()))
}

/// A row of the exec table.
macro_rules! ex {
    ($($rest:tt)*) => { opt!(ExecOptions, $($rest)*) };
}

/// Every option of the `exec` workload.
pub static OPTIONS: &[OptionDef<ExecOptions>] = &[
    ex!("cmd", CommandLine, Unset, "the timed command, run by /bin/sh -c in the workload's directory; {mnt} and {assets} are substituted shell-quoted, so write them bare", |o, v| o.cmd = command(v)?).list(ListSyntax::None),
    ex!("setup", CommandLine, Unset, "an untimed command run before cmd, as cmd", |o, v| o.setup = command(v)?).list(ListSyntax::None),
    ex!("teardown", CommandLine, Unset, "an untimed command run after cmd (also after it failed), as cmd", |o, v| o.teardown = command(v)?).list(ListSyntax::None),
    ex!("assets", Directory, Unset, "a directory of inputs (at most 1000000 entries, 64 levels deep and 64 GiB; regular files, directories and links that stay inside it), copied into the target untimed before setup; {assets} is the copy", |o, v| o.assets = Some(PathBuf::from(v))).list(ListSyntax::None),
    ex!("builtin", Choice(&["compress", "unpack", "build"]), Unset, "a built-in program workload on generated inputs: compress a file, unpack and delete a source tree, build a C project", |o, v| o.builtin = Some(match v.trim() {
        "compress" => Builtin::Compress,
        "unpack" => Builtin::Unpack,
        "build" => Builtin::Build,
        _ => return Err(format!("'{v}' is not a builtin: expected compress, unpack or build")),
    })),
    ex!("tool", Choice(&["gzip", "zstd"]), Is("gzip"), "builtin=compress: the compressor", |o, v| o.tool = match v.trim() {
        "gzip" => Tool::Gzip,
        "zstd" => Tool::Zstd,
        _ => return Err(format!("'{v}' is not a compressor: expected gzip or zstd")),
    }),
    ex!("level", Count, Unset, "builtin=compress: the compression level: gzip 1-9 (6 when unset), zstd 1-19 (3 when unset)", |o, v| o.level = Some(positive(v)?)),
    ex!("size", Size, Is("256m"), "builtin=compress: the size of the generated input file", |o, v| o.size = nonzero_size(v)?),
    ex!("files", Count, Unset, "builtin=unpack: files in the tree (2000 when unset); builtin=build: translation units (32 when unset)", |o, v| o.files = Some(positive(v)?)),
    ex!("jobs", Count, Unset, "builtin=build: make's -j (the CPUs when unset)", |o, v| o.jobs = Some(positive(v)?)),
    ex!("cold", Bool, Is("1"), "drop the page cache before each timed step (after setup and the untimed inputs), unless the run keeps caches", |o, v| o.cold = boolean(v)?),
];

/// The placeholders, in the order they are looked for.
pub const PLACEHOLDERS: [&str; 2] = ["{mnt}", "{assets}"];

pub use fsarena_core::shell_quote;

/// Checks where the placeholders stand in `cmd` (named `key` in messages): each must be bare,
/// since it is replaced by a quoted word: inside quotes the quotes would become part of the
/// path, and `${mnt}` is shell syntax of its own. `{assets}` needs `assets=`.
pub fn check_placeholders(key: &str, cmd: &str, have_assets: bool) -> Result<(), String> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut state = Quote::None;
    let mut chars = cmd.char_indices().peekable();
    let mut prev = None;
    while let Some((i, c)) = chars.next() {
        if let Some(p) = PLACEHOLDERS.iter().find(|p| cmd[i..].starts_with(**p)) {
            if state != Quote::None {
                return Err(format!(
                    "{key}: {p} stands inside quotes: write it bare, fsarena substitutes it shell-quoted"
                ));
            }
            if prev == Some('$') {
                return Err(format!(
                    "{key}: ${p} is shell syntax: write {p} bare, fsarena substitutes it shell-quoted"
                ));
            }
            if *p == "{assets}" && !have_assets {
                return Err(format!("{key}: {{assets}} needs assets=DIR (a directory of inputs to copy in)"));
            }
        }
        match (&state, c) {
            (Quote::None, '\'') => state = Quote::Single,
            (Quote::Single, '\'') => state = Quote::None,
            (Quote::None, '"') => state = Quote::Double,
            (Quote::Double, '"') => state = Quote::None,
            // An escaped character is literal: skip it.
            (Quote::None | Quote::Double, '\\') => {
                chars.next();
            }
            _ => {}
        }
        prev = Some(c);
    }
    if state != Quote::None {
        return Err(format!("{key}: a quote is not closed"));
    }
    Ok(())
}

/// `cmd` with each placeholder replaced by its value, shell-quoted, in one pass (so a value
/// that itself holds `{assets}` is not substituted again).
pub fn substitute(cmd: &str, mnt: &str, assets: Option<&str>) -> String {
    let mut out = String::with_capacity(cmd.len() + 64);
    let mut rest = cmd;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("{mnt}") {
            out.push_str(&shell_quote(mnt));
            rest = after;
        } else if let (Some(after), Some(a)) = (rest.strip_prefix("{assets}"), assets) {
            out.push_str(&shell_quote(a));
            rest = after;
        } else {
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Words `sh` runs without looking on PATH (POSIX special and regular builtins of dash, and
/// the reserved words that may open a command).
const SHELL_WORDS: &[&str] = &[
    ".", ":", "[", "alias", "bg", "break", "case", "cd", "command", "continue", "echo", "eval", "exec", "exit",
    "export", "false", "fg", "for", "getopts", "hash", "if", "jobs", "kill", "local", "printf", "pwd", "read",
    "readonly", "return", "set", "shift", "test", "times", "trap", "true", "type", "ulimit", "umask", "unalias",
    "unset", "until", "wait", "while", "!", "{", "(",
];

/// Checks that the program `cmd` starts with exists, when that is knowable before running:
/// the first word is a plain name (no shell syntax, no placeholder, no assignment) that is
/// not a shell builtin, or an absolute path.
pub fn check_program(key: &str, cmd: &str) -> Result<(), String> {
    let first = cmd.split_whitespace().next().unwrap_or_default();
    let syntax = |c: char| "$`\"'(){}[]*?;&|<>=~\\#".contains(c);
    if first.is_empty() || first.contains(syntax) || SHELL_WORDS.contains(&first) {
        return Ok(());
    }
    let found = if first.contains('/') {
        let p = PathBuf::from(first);
        // A relative path names something in the workload's directory, made by setup.
        !p.is_absolute() || p.is_file()
    } else {
        find_program(first).is_some()
    };
    if found {
        Ok(())
    } else {
        Err(format!(
            "{key}: '{}' is not found (not on PATH, not a shell builtin): install it or give its full path",
            fsarena_workload::plain::cut(first)
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// What `sh` makes of `script`'s arguments: one line per argument.
    fn argv(script: &str) -> Vec<String> {
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("for a in {script}; do printf '%s\\n' \"$a\"; done"))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect()
    }

    #[test]
    fn a_hostile_path_stays_one_argument() {
        let evil = "/tmp/a b'c\"d;e $(touch /tmp/fsarena-h8-pwned) `x` {assets}";
        let cmd = substitute("{mnt}/x {assets}", evil, Some("/as'sets"));
        assert_eq!(argv(&cmd), vec![format!("{evil}/x"), "/as'sets".to_string()]);
        assert!(!std::path::Path::new("/tmp/fsarena-h8-pwned").exists());
        // Without assets, {assets} is left alone (the parse refuses it before).
        assert_eq!(substitute("a {assets}", "/m", None), "a {assets}");
        assert_eq!(substitute("é{mnt}ü", "/m", None), "é'/m'ü");
    }

    #[test]
    fn placeholders_must_be_bare() {
        assert!(check_placeholders("cmd", "tar xf {assets}/a.tar -C {mnt}", true).is_ok());
        assert!(check_placeholders("cmd", "echo '{' {mnt}", false).is_ok());
        for (cmd, want) in [
            ("ls '{mnt}'", "inside quotes"),
            ("ls \"x {mnt}/y\"", "inside quotes"),
            ("ls ${mnt}", "is shell syntax"),
            ("ls {assets}", "needs assets="),
            ("echo 'open", "not closed"),
        ] {
            let e = check_placeholders("cmd", cmd, false).unwrap_err();
            assert!(e.contains(want), "{cmd}: {e}");
        }
        // An escaped quote does not open a quoted region.
        assert!(check_placeholders("cmd", r"echo \' {mnt}", false).is_ok());
    }

    #[test]
    fn programs_not_found_are_named() {
        assert!(check_program("cmd", "sh -c true").is_ok());
        assert!(check_program("cmd", "cd {mnt} && true").is_ok());
        assert!(check_program("cmd", "X=1 nosuchprog").is_ok(), "an assignment is not checked");
        assert!(check_program("cmd", "./made-by-setup").is_ok());
        let e = check_program("cmd", "fsarena-no-such-program -x").unwrap_err();
        assert!(e.contains("'fsarena-no-such-program' is not found"), "{e}");
        assert!(check_program("setup", "/nonexistent/bin/x").unwrap_err().starts_with("setup: "));
    }

    #[test]
    fn the_table_and_the_defaults_agree() {
        fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    }
}
