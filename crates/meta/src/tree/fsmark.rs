//! `fsmark='-n 1000 -s 4096 -S 1 -L 3'`: fs_mark 3.3's flags (`process_args` in `fs_mark.c`)
//! read into the `tree` workload's options, as `mdtest=` is for `meta`.
//!
//! fs_mark's defaults come first (`-n 1000 -s 51200 -w 16384 -S 1 -t 1`, one loop), then the
//! flags; keys given after `fsmark=` override what it set. A flag that changes what fs_mark
//! measures and has no equivalent here is refused by name: ignoring it would make the
//! comparison wrong.
//!
//! The layout: without `-D`, fs_mark writes every file of a thread into one directory; here
//! that is `levels=1, dirs_per_level=1, files_per_dir=N`. With `-D D -N P` it fills
//! subdirectories round robin, `P` files each; here that is `P` files in each of `N / P`
//! directories (or `N / D` files in each of `D`, when the round robin wraps evenly). Each
//! thread (`-t`) has a directory of its own, which is fs_mark given one `-d` per thread.

use super::options::{FsyncMode, TreeOptions};
use fsarena_core::InputError;

/// fs_mark flags that take a value and are supported.
const WITH_VALUE: &str = "nsSLtwDN";

/// fs_mark flags that are not supported, with why or what to do instead.
const UNSUPPORTED: &[(char, &str)] = &[
    ('d', "the test directory: give it as --target dir:path=..."),
    ('l', "the log file: fsarena stores every result itself"),
    ('F', "filling the filesystem: give loops=N"),
    ('p', "the file name length"),
    ('r', "random bytes in file names"),
    ('h', "printing the usage"),
];

/// The flags `fsmark=` accepts, for messages.
const ACCEPTED: &str = "-n -s -S 0|1|2 -L -t -w -D with -N, -k, -v";

/// What the flags said, before it becomes tree options.
#[derive(Debug, Default)]
struct Flags {
    files: Option<u64>,
    size: Option<u64>,
    sync: Option<u64>,
    loops: Option<u64>,
    threads: Option<u64>,
    write_size: Option<u64>,
    subdirs: Option<u64>,
    per_subdir: Option<u64>,
    keep: bool,
}

/// Reads an fs_mark command line (optionally starting with `fs_mark`) into `options`.
pub fn apply(options: &mut TreeOptions, line: &str) -> Result<(), InputError> {
    let err = |m: String| InputError::new(format!("fsmark='{line}': {m}"));
    let flags = parse(line).map_err(err)?;
    let files = flags.files.unwrap_or(1000);
    let (dirs, per_dir) = layout(files, flags.subdirs, flags.per_subdir).map_err(err)?;
    let small = |name: &str, v: u64| u32::try_from(v).map_err(|_| err(format!("{name} {v} is too large")));
    let positive = |name: &str, v: u64| match v {
        0 => Err(err(format!("{name} 0: expected at least 1"))),
        v => small(name, v),
    };
    options.levels = 1;
    options.dirs_per_level = small("-D", dirs)?;
    options.files_per_dir = small("-n", per_dir)?;
    let size = flags.size.unwrap_or(51_200);
    options.file_size = size;
    options.write_size = match flags.write_size.unwrap_or(16_384) {
        0 => return Err(err("-w 0: expected at least 1 byte per write".into())),
        w => w,
    };
    options.fsync = match flags.sync.unwrap_or(1) {
        0 => FsyncMode::None,
        1 => FsyncMode::File,
        2 => FsyncMode::End,
        s @ 3..=6 => {
            let what = [
                "reverse fsync",
                "sync then reverse fsync",
                "fsync after all files",
                "sync then fsync after all files",
            ];
            return Err(err(format!("-S {s} ({}) is not supported: accepted are -S 0, 1 and 2", what[s as usize - 3])));
        }
        s => return Err(err(format!("-S {s} is not a sync method: fs_mark has 0 to 6, accepted are 0, 1 and 2"))),
    };
    options.threads = positive("-t", flags.threads.unwrap_or(1))?;
    // fs_mark runs one loop when -L is 0 or absent.
    options.loops = small("-L", flags.loops.unwrap_or(1).max(1))?;
    options.keep = flags.keep;
    Ok(())
}

/// Splits the line into flags; `-n100`, `-n=100` and `-n 100` are the same, bare flags may
/// be grouped (`-kv`).
fn parse(line: &str) -> Result<Flags, String> {
    let mut f = Flags::default();
    let mut words = line.split_whitespace().peekable();
    if matches!(words.peek(), Some(&("fs_mark" | "fsmark"))) {
        words.next();
    }
    while let Some(word) = words.next() {
        let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty() && !l.starts_with('-')) else {
            return Err(format!("unknown word '{word}': accepted flags are {ACCEPTED}"));
        };
        for (at, flag) in letters.char_indices() {
            if let Some((_, what)) = UNSUPPORTED.iter().find(|u| u.0 == flag) {
                return Err(format!("-{flag} ({what}) is not supported"));
            }
            match flag {
                'k' => f.keep = true,
                'v' => {} // verbose output: changes nothing measured
                c if WITH_VALUE.contains(c) => {
                    let rest = &letters[at + 1..];
                    let text = match rest.strip_prefix('=').unwrap_or(rest) {
                        "" => words.next().ok_or_else(|| format!("-{flag} needs a value"))?,
                        attached => attached,
                    };
                    // fs_mark reads every value with atoi: plain decimal numbers.
                    let value: u64 = text
                        .parse()
                        .map_err(|_| format!("-{flag} {text}: expected a whole number (fs_mark takes bytes)"))?;
                    let slot = match flag {
                        'n' => &mut f.files,
                        's' => &mut f.size,
                        'S' => &mut f.sync,
                        'L' => &mut f.loops,
                        't' => &mut f.threads,
                        'w' => &mut f.write_size,
                        'D' => &mut f.subdirs,
                        _ => &mut f.per_subdir,
                    };
                    *slot = Some(value);
                    break;
                }
                other => return Err(format!("unknown fs_mark flag -{other}: accepted flags are {ACCEPTED}")),
            }
        }
    }
    Ok(f)
}

/// Directories and files per directory for `files` files per thread over fs_mark's
/// subdirectories.
fn layout(files: u64, subdirs: Option<u64>, per_subdir: Option<u64>) -> Result<(u64, u64), String> {
    if files == 0 {
        return Err("-n 0: expected at least 1 file".into());
    }
    match (subdirs, per_subdir) {
        (None, None) => Ok((1, files)),
        (None, Some(_)) => Err("-N needs -D (fs_mark: more than 1 subdirectory for -N to make sense)".into()),
        (Some(d), _) if d < 2 => Err(format!("-D {d}: fs_mark needs more than 1 subdirectory")),
        (Some(d), None) => Err(format!(
            "-D {d} without -N: fs_mark then changes directory every 180 seconds, by the clock; give -N files per subdirectory"
        )),
        (Some(_), Some(0)) => Err("-N 0: expected at least 1 file per subdirectory".into()),
        (Some(d), Some(p)) if files <= d.saturating_mul(p) && files.checked_rem(p) == Some(0) => Ok((files / p, p)),
        (Some(d), Some(p)) if files.checked_rem(d.saturating_mul(p)) == Some(0) => Ok((d, files / d)),
        (Some(d), Some(p)) => Err(format!(
            "-n {files} -D {d} -N {p}: the files do not fill the subdirectories evenly; give -n as a multiple of -N up to -D × -N, or a multiple of -D × -N"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::tree::options::tests::with as keys;

    #[test]
    fn fsmark_strings_equal_the_keys() {
        let base: &[(&str, &str)] = &[("levels", "1"), ("write_size", "16384"), ("threads", "1")];
        let cases: &[(&str, &[(&str, &str)])] = &[
            (
                "-n 1000 -s 4096 -S 1 -L 3",
                &[
                    ("dirs_per_level", "1"),
                    ("files_per_dir", "1000"),
                    ("file_size", "4096"),
                    ("fsync", "file"),
                    ("loops", "3"),
                ],
            ),
            (
                "fs_mark -n 64 -s 0 -S 0 -t 4 -w 4096 -k",
                &[
                    ("dirs_per_level", "1"),
                    ("files_per_dir", "64"),
                    ("file_size", "0"),
                    ("fsync", "none"),
                    ("threads", "4"),
                    ("write_size", "4096"),
                    ("keep", "1"),
                ],
            ),
            (
                "-n 100 -D 16 -N 25 -S2",
                &[("dirs_per_level", "4"), ("files_per_dir", "25"), ("file_size", "51200"), ("fsync", "end")],
            ),
            ("-n 64 -D 4 -N 4 -v", &[("dirs_per_level", "4"), ("files_per_dir", "16"), ("file_size", "51200")]),
            ("-L 0", &[("dirs_per_level", "1"), ("files_per_dir", "1000"), ("file_size", "51200"), ("loops", "1")]),
        ];
        for (line, pairs) in cases {
            let mut want: Vec<(&str, &str)> = base.to_vec();
            want.extend_from_slice(pairs);
            assert_eq!(keys(&[("fsmark", line)]).unwrap(), keys(&want).unwrap(), "fsmark='{line}'");
        }
        // Keys after fsmark= override it.
        let o = keys(&[("fsmark", "-n 10 -s 100"), ("file_size", "1k")]).unwrap();
        assert_eq!((o.files_per_dir, o.file_size), (10, 1024));
    }

    #[test]
    fn unsupported_and_bad_flags_are_refused_by_name() {
        let cases = [
            ("-d /mnt/x -n 10", "-d (the test directory"),
            ("-n 10 -F", "-F (filling the filesystem"),
            ("-n 10 -l log", "-l (the log file"),
            ("-n 10 -r 4", "-r (random bytes"),
            ("-n 10 -S 3", "-S 3 (reverse fsync) is not supported"),
            ("-n 10 -S 9", "-S 9 is not a sync method"),
            ("-n 10 -Q", "unknown fs_mark flag -Q"),
            ("-n", "-n needs a value"),
            ("-n 4k", "expected a whole number"),
            ("-n 100 -D 16", "-D 16 without -N"),
            ("-n 100 -N 10", "-N needs -D"),
            ("-n 100 -D 1 -N 10", "-D 1"),
            ("-n 100 -D 4 -N 30", "do not fill the subdirectories evenly"),
            ("-n 0", "-n 0"),
            ("-t 0", "-t 0"),
            ("--help", "unknown word '--help'"),
        ];
        for (line, want) in cases {
            let e = keys(&[("fsmark", line)]).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("fsmark='"), "{line}: '{e}' lacks '{want}'");
        }
    }
}
