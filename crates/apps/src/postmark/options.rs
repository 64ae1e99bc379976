//! The `postmark` workload's options, named as PostMark 1.5's `set` commands, and
//! `postmark='set number 1000; set transactions 5000'`, which reads PostMark's own command
//! lines (a `.pmrc` or a config file given to `postmark FILE`) into the same options.
//!
//! PostMark reads every number with `atoi` and keeps the old value, printing an error, when it
//! refuses one; here a value PostMark would refuse, or read other than written (`10k` is 10
//! to `atoi`), is bad input (exit 2) naming the command and what is accepted.

use fsarena_core::option::DefaultValue::{Is, Unset};
use fsarena_core::option::ValueKind::{Bool, CommandLine, Count, Size, Text};
use fsarena_core::units::parse_size;
use fsarena_workload::options::{boolean, opt, OptionDef};

/// Largest file size: PostMark fills a buffer of twice the largest size, an `int`.
pub const MAX_FILE_SIZE: u32 = (1 << 30) - 1;

/// Largest pool: PostMark's table holds twice `number` entries, an `int`.
pub const MAX_NUMBER: u32 = (1 << 30) - 1;

/// Every option of the `postmark` workload, with PostMark 1.5's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostmarkOptions {
    /// Files in the pool, created before the transactions (`set number`).
    pub number: u32,
    /// Transactions (`set transactions`).
    pub transactions: u32,
    /// Smallest new file, in bytes (`set size LOW HIGH`).
    pub size_low: u32,
    /// Largest file: new files are below it, appends stop at it.
    pub size_high: u32,
    /// Subdirectories the files are spread over at random; 0 and 1 mean none, as in PostMark.
    pub subdirectories: u32,
    /// Bytes per read call (`set read`).
    pub read_block: u32,
    /// Bytes per write call (`set write`).
    pub write_block: u32,
    /// C library buffered I/O (`fopen`/`fwrite`), PostMark's default; false: `open`/`write`.
    pub buffering: bool,
    /// Chance in 10 that a transaction reads rather than appends; -1: neither.
    pub bias_read: i32,
    /// Chance in 10 that a transaction creates rather than deletes; -1: neither.
    pub bias_create: i32,
    /// The generator's seed (`set seed`).
    pub seed: u32,
}

impl Default for PostmarkOptions {
    fn default() -> Self {
        Self {
            number: 500,
            transactions: 500,
            size_low: 500,
            size_high: 10_000,
            subdirectories: 0,
            read_block: 512,
            write_block: 512,
            buffering: true,
            bias_read: 5,
            bias_create: 5,
            seed: 42,
        }
    }
}

/// A positive whole number of at most `max`, as PostMark's `atoi(...) > 0`; `suffixes`
/// allows fsarena's size suffixes (keys), PostMark's lines take plain numbers.
fn number(v: &str, max: u32, suffixes: bool) -> Result<u32, String> {
    let t = v.trim();
    let n = if suffixes {
        parse_size(t).map_err(|e| e.message)?
    } else {
        t.parse::<u64>().map_err(|_| format!("'{t}' is not a whole number (PostMark reads plain numbers)"))?
    };
    match n {
        0 => Err(format!("'{t}' must be at least 1")),
        n if n > u64::from(max) => Err(format!("'{t}' is too large: at most {max}")),
        n => Ok(n as u32),
    }
}

/// `LOW HIGH`, or one size for all files (PostMark's `set size 1000`).
fn sizes(o: &mut PostmarkOptions, v: &str, suffixes: bool) -> Result<(), String> {
    let words: Vec<&str> = v.split_whitespace().collect();
    let (low, high) = match words.as_slice() {
        [one] => (number(one, MAX_FILE_SIZE, suffixes)?, number(one, MAX_FILE_SIZE, suffixes)?),
        [low, high] => (number(low, MAX_FILE_SIZE, suffixes)?, number(high, MAX_FILE_SIZE, suffixes)?),
        _ => return Err(format!("'{v}' is not a size range: expected LOW HIGH (500 10000) or one size")),
    };
    if low > high {
        return Err(format!("'{v}': the smallest size {low} is larger than the largest {high}"));
    }
    (o.size_low, o.size_high) = (low, high);
    Ok(())
}

/// A bias: 0 to 10 chances in 10, or -1 to leave the choice out of every transaction.
fn bias(v: &str) -> Result<i32, String> {
    match v.trim().parse::<i32>() {
        Ok(b @ -1..=10) => Ok(b),
        _ => Err(format!("'{}' is not a bias: expected 0 to 10 (chances in 10), or -1 to disable", v.trim())),
    }
}

/// Subdirectories: 0 (none) or more.
fn subdirectories(v: &str, suffixes: bool) -> Result<u32, String> {
    if v.trim() == "0" {
        return Ok(0);
    }
    number(v, 1 << 20, suffixes)
}

/// A row of the postmark table.
macro_rules! pm {
    ($($rest:tt)*) => { opt!(PostmarkOptions, $($rest)*) };
}

/// Every option of the `postmark` workload; each is PostMark's `set` command of that name.
pub static OPTIONS: &[OptionDef<PostmarkOptions>] = &[
    pm!("number", Count, Is("500"), "files in the pool, created before the transactions (set number)", |o, v| o
        .number = number(v, MAX_NUMBER, true)?)
    .unit("files"),
    pm!("transactions", Count, Is("500"), "transactions: a read or an append, then a create or a delete (set transactions)", |o, v| o
        .transactions = number(v, i32::MAX as u32, true)?),
    pm!("size", Text, Is("500 10000"), "'LOW HIGH': new files get LOW to HIGH-1 bytes, appends stop at HIGH; one number for a fixed size (set size)", |o, v| sizes(o, v, true)?),
    pm!("subdirectories", Count, Is("0"), "subdirectories the files are spread over at random; 0 or 1: none (set subdirectories)", |o, v| o
        .subdirectories = subdirectories(v, true)?),
    pm!("read", Size, Is("512"), "bytes per read call (set read)", |o, v| o.read_block = number(v, MAX_FILE_SIZE, true)?),
    pm!("write", Size, Is("512"), "bytes per write call (set write)", |o, v| o.write_block = number(v, MAX_FILE_SIZE, true)?),
    pm!("buffering", Bool, Is("1"), "stdio-buffered I/O as PostMark's fopen/fwrite/fread (a buffer of the file's st_blksize, at most BUFSIZ, as glibc); 0: read/write calls of the block sizes (set buffering)", |o, v| o
        .buffering = boolean(v)?),
    pm!("bias_read", Count, Is("5"), "chances in 10 that a transaction reads a file rather than appends to one; -1: neither (set bias read)", |o, v| o
        .bias_read = bias(v)?),
    pm!("bias_create", Count, Is("5"), "chances in 10 that a transaction creates a file rather than deletes one; -1: neither (set bias create)", |o, v| o
        .bias_create = bias(v)?),
    pm!("seed", Count, Is("42"), "seed of PostMark's generator (Mersenne Twister): the same seed gives the same files and choices (set seed)", |o, v| o
        .seed = number(v, i32::MAX as u32, false)?),
    pm!("postmark", CommandLine, Unset, "PostMark's own command lines, separated by ';' or newlines ('set number 1000; set transactions 5000; run'); keys after it override it", |o, v| apply_lines(o, v)?),
];

/// The `set` commands of PostMark 1.5 that have no equivalent here, with why.
const REFUSED: &[(&str, &str)] = &[
    ("set location", "the target is the location: give --target (dir:path=... for an existing directory)"),
    ("load", "give the file's lines in postmark='...'"),
    ("show", "fsarena --dry-run shows what will run"),
    ("help", "fsarena help postmark lists the commands"),
];

/// The commands `postmark=` accepts, for messages.
const ACCEPTED: &str = "set number, set transactions, set size, set subdirectories, set read, set write, \
set buffering, set bias read, set bias create, set seed, set report verbose, run, quit";

/// Reads PostMark's command lines into `o`: PostMark's defaults, then each `set` in order.
/// `run` ends the configuration (one run per workload: use --repeat for more), as does
/// `quit`; nothing may follow them.
pub fn apply_lines(o: &mut PostmarkOptions, text: &str) -> Result<(), String> {
    let mut fresh = PostmarkOptions::default();
    let mut ended: Option<&str> = None;
    for (i, raw) in text.split([';', '\n']).enumerate() {
        let line = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            continue;
        }
        let at = |m: String| format!("postmark= command {} '{line}': {m}", i + 1);
        if let Some(end) = ended {
            return Err(at(format!("comes after '{end}', where PostMark stops reading this run's configuration")));
        }
        if let Some((cmd, why)) = REFUSED.iter().find(|(c, _)| line == *c || line.starts_with(&format!("{c} "))) {
            return Err(at(format!("'{cmd}' is not supported: {why}")));
        }
        match line.as_str() {
            "run" => ended = Some("run"),
            "quit" | "exit" => ended = Some("quit"),
            "set report verbose" => {}
            "set report terse" => {
                return Err(at("the terse report is not supported: fsarena prints PostMark's verbose report, and \
                               --output-format json or csv for scripts"
                    .into()))
            }
            _ => set_line(&mut fresh, &line).map_err(at)?,
        }
    }
    *o = fresh;
    Ok(())
}

/// One `set NAME VALUE` line.
fn set_line(o: &mut PostmarkOptions, line: &str) -> Result<(), String> {
    // Longest names first: "set bias read" before a shorter prefix could match.
    const SETS: &[&str] = &[
        "set bias create",
        "set bias read",
        "set subdirectories",
        "set transactions",
        "set buffering",
        "set number",
        "set write",
        "set read",
        "set size",
        "set seed",
    ];
    let Some(name) = SETS.iter().find(|s| line == **s || line.starts_with(&format!("{s} "))) else {
        return Err(format!("unknown command: accepted are {ACCEPTED}"));
    };
    let value = line[name.len()..].trim();
    if value.is_empty() {
        return Err("needs a value".into());
    }
    match *name {
        "set size" => sizes(o, value, false)?,
        "set number" => o.number = number(value, MAX_NUMBER, false)?,
        "set transactions" => o.transactions = number(value, i32::MAX as u32, false)?,
        "set subdirectories" => o.subdirectories = subdirectories(value, false)?,
        "set read" => o.read_block = number(value, MAX_FILE_SIZE, false)?,
        "set write" => o.write_block = number(value, MAX_FILE_SIZE, false)?,
        "set seed" => o.seed = number(value, i32::MAX as u32, false)?,
        "set bias read" => o.bias_read = bias(value)?,
        "set bias create" => o.bias_create = bias(value)?,
        _ => {
            o.buffering = match value {
                "true" => true,
                "false" => false,
                _ => return Err(format!("'{value}' is not a buffering mode: expected true or false")),
            }
        }
    }
    Ok(())
}
