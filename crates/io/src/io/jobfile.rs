//! fio's INI job files: `[global]` and job sections, comments, `include`, `${VAR}`.
//!
//! Hand-written because generic INI crates mis-read fio's bare keys (`time_based`) and
//! know nothing of `[global]` applying only to the jobs below it.

pub use super::keywords::Host;
use super::options::IoOptions;
use fsarena_core::InputError;
use std::path::{Path, PathBuf};

/// One job of a job file, with fio's inheritance from `[global]` applied.
#[derive(Debug, Clone)]
pub struct JobDef {
    /// The job's options.
    pub options: IoOptions,
    /// The job section's own options as written, for fio-json's `"job options"`.
    pub given: Vec<(String, String)>,
}

/// A parsed fio job file.
#[derive(Debug, Clone, Default)]
pub struct FioJobFile {
    /// Options of the `[global]` sections, as written.
    pub global_options: Vec<(String, String)>,
    /// Jobs in file order.
    pub jobs: Vec<JobDef>,
}

struct Line {
    file: PathBuf,
    number: usize,
    text: String,
}

/// Largest job file accepted, each file (fio or TOML, includes too).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Deepest nesting of `include`.
pub const MAX_INCLUDE_DEPTH: usize = 8;
/// Most `include` directives expanded in all, over every file.
pub const MAX_INCLUDES: usize = 64;
/// Most text of a job file and all its includes together.
pub const MAX_TOTAL_BYTES: usize = 4 << 20;
/// Most problems of one job file said; the count says how many there are in all.
const MAX_PROBLEMS_SHOWN: usize = 20;
/// Longest option name quoted in an error: fio's longest is under 40.
const MAX_KEY_CHARS: usize = 64;

/// Reads a job file's text: a regular file (not a FIFO, a device such as /dev/zero, or a
/// directory) of at most [`MAX_FILE_BYTES`], in UTF-8, with a leading byte-order mark
/// skipped. `what` names it in errors (`fio job file`). No byte of the file is ever quoted.
pub fn read_job_text(path: &Path, what: &str) -> Result<String, InputError> {
    let text = fsarena_target::beneath::read_input_text(path, what, MAX_FILE_BYTES)
        .map_err(|e| InputError::new(e.to_string()))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Reads and parses a job file; every error names the file and line.
pub fn parse_file(path: &Path) -> Result<FioJobFile, InputError> {
    let mut expansion = Expansion::default();
    read_lines(path, &mut expansion, 0)?;
    parse_lines(&expansion.lines, path, &Host::this_machine(), expansion.problems)
}

/// Parses job-file text (for tests and stdin); `name` is used in error messages.
pub fn parse_str(text: &str, name: &str) -> Result<FioJobFile, InputError> {
    parse_str_on(text, name, &Host::this_machine())
}

/// [`parse_str`] with the values of `$pagesize`, `$mb_memory` and `$ncpus` given.
pub fn parse_str_on(text: &str, name: &str, host: &Host) -> Result<FioJobFile, InputError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<Line> = text
        .lines()
        .enumerate()
        .map(|(i, t)| Line { file: PathBuf::from(name), number: i + 1, text: t.to_string() })
        .collect();
    parse_lines(&lines, Path::new(name), host, Vec::new())
}

/// The job file and its includes read so far, with the counts that bound them. Counted
/// while reading, so a fan-out of files including each other ten times is refused after 64
/// includes, not after 10^8.
#[derive(Default)]
struct Expansion {
    lines: Vec<Line>,
    /// Includes that could not be read: said with the file's other problems.
    problems: Vec<InputError>,
    /// A bound was passed (too many includes, too deep, too much text): reading stops.
    over_bounds: bool,
    includes: usize,
    bytes: usize,
}

/// `include FILE` → Some("FILE"), `include` → Some(""), anything else → None.
fn include_directive(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim())
}

fn read_lines(path: &Path, out: &mut Expansion, depth: usize) -> Result<(), InputError> {
    let text = read_job_text(path, "fio job file")?;
    out.bytes += text.len();
    if out.bytes > MAX_TOTAL_BYTES {
        out.over_bounds = true;
        return Err(InputError::new(format!(
            "the job file and its includes hold more than {} MiB of text in all (at {}): expected a smaller job",
            MAX_TOTAL_BYTES >> 20,
            path.display()
        )));
    }
    if depth > 0 && text.trim().is_empty() {
        return Err(InputError::new(format!(
            "included file {} is empty: expected fio job-file lines ([section] headers, option=value)",
            path.display()
        )));
    }
    for (i, raw) in text.lines().enumerate() {
        let origin = || format!("{}:{}", path.display(), i + 1);
        let Some(included) = include_directive(strip_inline_comment(raw).trim()) else {
            out.lines.push(Line { file: path.to_path_buf(), number: i + 1, text: raw.to_string() });
            continue;
        };
        if included.is_empty() {
            out.problems.push(InputError::new("include without a file name: expected 'include FILE'").at(origin()));
            continue;
        }
        out.includes += 1;
        if out.includes > MAX_INCLUDES {
            out.over_bounds = true;
            return Err(InputError::new(format!(
                "more than {MAX_INCLUDES} include directives in all: expected a job file that includes fewer files"
            ))
            .at(origin()));
        }
        if depth + 1 > MAX_INCLUDE_DEPTH {
            out.over_bounds = true;
            return Err(InputError::new(format!("include nested too deeply (more than {MAX_INCLUDE_DEPTH} levels)"))
                .at(origin()));
        }
        let target = path.parent().unwrap_or(Path::new(".")).join(included);
        // A file that cannot be read is one more problem of the job file; a job file past
        // the bounds is refused at once, before more of it is read.
        if let Err(e) = read_lines(&target, out, depth + 1) {
            if out.over_bounds {
                return Err(e.at(origin()));
            }
            out.problems.push(e.at(origin()));
        }
    }
    Ok(())
}

/// True for what can be an option name: letters, digits and `_`, not too long. Only such a
/// key is quoted in an error, so a line of a file that is not a job file is never shown.
fn option_shaped(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_CHARS && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Expands `${VAR}` from the environment, as fio does. Errors quote only a variable name
/// shaped like one.
fn expand(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| "unclosed '${': expected ${NAME}".to_string())?;
        let var = &after[..end];
        let value = std::env::var(var).map_err(|_| match option_shaped(var) {
            true => format!("environment variable '{var}' is not set"),
            false => "'${...}' does not name an environment variable: expected ${NAME}".to_string(),
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// An option as written.
struct Given {
    key: String,
    value: String,
}

/// A job section being read.
struct Section {
    /// Empty for a refused header: its lines are checked, and no job is made of them.
    name: String,
    own: Vec<Given>,
    origin: String,
    /// The options of the section's lines that had a problem: a problem of the job as a
    /// whole that names one of them is a guess (`size=${UNSET}` is not also "no size"), and
    /// is left out; the others are said in the same run.
    bad_keys: Vec<String>,
}

/// fio ends a value at `;` or `#`: everything after is a comment (`size=1m ; per job`).
fn strip_inline_comment(text: &str) -> &str {
    text.find([';', '#']).map_or(text, |at| &text[..at])
}

/// Turns a finished job section into a job: defaults, then the globals above it, then its own.
/// fio keeps the section's name even when `[global]` says `name=`; the section's own `name=`
/// still renames it.
fn finish(section: Section, globals: &Globals, file: &mut FioJobFile, problems: &mut Vec<InputError>) {
    if section.name.is_empty() || globals.unreadable {
        return;
    }
    let mut options = IoOptions::default();
    for g in globals.given.iter().filter(|g| g.key != "name") {
        let _ = options.set_from_job_file(&g.key, &g.value); // a bad value was said at its line already
    }
    options.name = section.name.clone();
    for g in &section.own {
        let _ = options.set_from_job_file(&g.key, &g.value);
    }
    let bad: Vec<&String> = globals.bad_keys.iter().chain(&section.bad_keys).collect();
    let names_a_bad_key = |e: &InputError| {
        let m = e.to_string();
        m.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| bad.iter().any(|k| k.as_str() == w))
    };
    let found = options.problems();
    let broken = !bad.is_empty();
    let origin = format!("{} (job '{}')", section.origin, section.name);
    problems.extend(found.iter().filter(|e| !names_a_bad_key(e)).map(|e| e.clone().at(origin.clone())));
    if broken || !found.is_empty() {
        return;
    }
    let given = in_fio_order(section.own.into_iter().map(|g| (g.key, g.value)).collect());
    file.jobs.push(JobDef { options, given });
}

/// fio's engines' own options that fsarena takes (fio 3.33's engines/cpu.c, exec.c,
/// filestat's fileoperations.c, io_uring.c and net.c): fio parses them after a section's
/// other options, so they come last in its JSON.
const ENGINE_OPTIONS: &[&str] = &[
    "arguments",
    "cpuchunks",
    "cpuload",
    "cpumode",
    "exit_on_io_done",
    "fixedbufs",
    "grace_time",
    "hipri",
    "hostname",
    "listen",
    "mss",
    "nodelay",
    "nonvectored",
    "port",
    "program",
    "protocol",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "stat_type",
    "std_redirect",
    "window_size",
];

/// One section's options as fio lists them in its JSON (`"job options"`, `"global
/// options"`): under their own names, not an alias (`blocksize=` is `bs`); sorted as fio
/// sorts a section before parsing it (options.c's opt_cmp on each option's priority:
/// `filename` and `filename_format` after the rest, which keep their order; glibc's qsort
/// is a merge sort, so stable); then the engine's own options, which fio parses in a second
/// pass. Bare keys (`time_based`) keep their empty value here; fio's JSON leaves them out.
fn in_fio_order(pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    let rank = |k: &str| match k {
        "filename" | "filename_format" => 1,
        _ if ENGINE_OPTIONS.contains(&k) => 2,
        _ => 0,
    };
    let mut named: Vec<(String, String)> =
        pairs.into_iter().map(|(k, v)| (super::options::find(&k).map_or(k, |d| d.name.to_string()), v)).collect();
    named.sort_by_key(|(k, _)| rank(k));
    named
}

/// The `[global]` options so far, and the options of their lines that had a problem.
#[derive(Default)]
struct Globals {
    given: Vec<Given>,
    bad_keys: Vec<String>,
    /// A line that is no option line at all, or an include that could not be read, was
    /// seen: what the jobs lack may be in it, so they are not checked as a whole.
    unreadable: bool,
    /// Where each `[global]` section's options start in the file's `global_options`: fio
    /// orders each section's on its own.
    sections: Vec<usize>,
}

/// All the problems of a job file as one error: the first, then one line each for the rest,
/// then their count, so a user fixes them in one round.
fn all_problems(mut problems: Vec<InputError>, top: &Path) -> InputError {
    let count = problems.len();
    // A file that is no job file at all (a password file given by mistake) has a problem
    // on every line: the first few say enough.
    problems.truncate(MAX_PROBLEMS_SHOWN);
    let mut first = problems.remove(0);
    if count > 1 {
        let shown =
            if count > MAX_PROBLEMS_SHOWN { format!(" (the first {MAX_PROBLEMS_SHOWN} shown)") } else { String::new() };
        problems.push(
            InputError::new(format!("{count} problems in this job file{shown}: fix them all and run again"))
                .at(top.display().to_string()),
        );
        first.also.extend(problems);
    }
    first
}

/// Parses the lines of the job file `top` and its includes, gathering every problem.
/// `problems` holds those of the includes that could not be read: the jobs are then not
/// checked as a whole, since what they lack may be in those files.
fn parse_lines(
    lines: &[Line],
    top: &Path,
    host: &Host,
    mut problems: Vec<InputError>,
) -> Result<FioJobFile, InputError> {
    let mut file = FioJobFile::default();
    let mut globals = Globals { unreadable: !problems.is_empty(), ..Globals::default() };
    let mut in_section = false; // false before the first header
    let mut job: Option<Section> = None; // None inside [global] or a refused header

    for line in lines {
        if let Err(e) = parse_line(line, host, &mut file, &mut globals, &mut in_section, &mut job, &mut problems) {
            problems.push(e);
            // The option the line sets, if it reads as one. A refused header is no option:
            // the lines below it are checked as a section of no job.
            let text = strip_inline_comment(&line.text).trim();
            let key = text.split_once('=').map_or(text, |(k, _)| k).trim().to_string();
            match (job.as_mut(), option_shaped(&key)) {
                _ if text.starts_with('[') => {}
                (Some(section), true) => section.bad_keys.push(key),
                (None, true) => globals.bad_keys.push(key),
                // A line that names no option: it may have been meant to give anything.
                (_, false) => globals.unreadable = true,
            }
        }
    }
    if let Some(done) = job.take() {
        finish(done, &globals, &mut file, &mut problems);
    }
    let ends = globals.sections.iter().skip(1).copied().chain([file.global_options.len()]);
    let chunks: Vec<(usize, usize)> = globals.sections.iter().copied().zip(ends).collect();
    for (start, end) in chunks {
        let ordered = in_fio_order(file.global_options[start..end].to_vec());
        file.global_options.splice(start..end, ordered);
    }
    if problems.is_empty() {
        // What the jobs ask of each other, once each is whole.
        let origin = top.display().to_string();
        problems.extend(super::check_jobs(&file.jobs).into_iter().map(|m| InputError::new(m).at(origin.clone())));
        // fio checks steady state per group (its groupid): new_group and stonewall start one.
        let mut groups: Vec<Vec<&super::options::IoOptions>> = Vec::new();
        for job in &file.jobs {
            match groups.last_mut() {
                Some(g) if !(job.options.stonewall || job.options.new_group) => g.push(&job.options),
                _ => groups.push(vec![&job.options]),
            }
        }
        problems.extend(
            groups
                .iter()
                .filter_map(|g| super::steady::group_problem(g))
                .map(|m| InputError::new(m).at(top.display().to_string())),
        );
    }
    if file.jobs.is_empty() && problems.is_empty() {
        // Named by the file given, which an empty file (no line to take it from) has too.
        problems.push(
            InputError::new("the job file defines no job: expected at least one [jobname] section")
                .at(top.display().to_string()),
        );
    }
    if problems.is_empty() {
        Ok(file)
    } else {
        Err(all_problems(problems, top))
    }
}

/// Reads one line into the sections; an error is this line's problem, and parsing goes on.
fn parse_line(
    line: &Line,
    host: &Host,
    file: &mut FioJobFile,
    globals: &mut Globals,
    in_section: &mut bool,
    job: &mut Option<Section>,
    problems: &mut Vec<InputError>,
) -> Result<(), InputError> {
    let origin = format!("{}:{}", line.file.display(), line.number);
    let text = strip_inline_comment(&line.text).trim();
    if text.is_empty() {
        return Ok(());
    }
    let neither =
        || InputError::new("this line is neither a [section] header nor an option=value line").at(origin.clone());
    if let Some(name) = text.strip_prefix('[') {
        // The lines below belong to this header even when it is refused: they are still
        // checked, and not taken for [global]'s.
        if let Some(done) = job.take() {
            finish(done, globals, file, problems);
        }
        *in_section = true;
        // Until the header is known good, the lines below go to a refused section.
        *job = Some(Section { name: String::new(), own: Vec::new(), origin: origin.clone(), bad_keys: Vec::new() });
        let name = name.strip_suffix(']').ok_or_else(neither)?.trim();
        if name.is_empty() {
            return Err(InputError::new("empty section name: expected [global] or [jobname]").at(origin));
        }
        // A job's name names its files: a plain name, checked here to point at the line.
        fsarena_workload::plain::check_plain_name(name)
            .map_err(|m| InputError::new(format!("section name {m}")).at(origin.clone()))?;
        if name == "global" {
            globals.sections.push(file.global_options.len());
        }
        *job = (name != "global").then(|| Section {
            name: name.to_string(),
            own: Vec::new(),
            origin,
            bad_keys: Vec::new(),
        });
        return Ok(());
    }
    let text = expand(text).map_err(|m| InputError::new(m).at(origin.clone()))?;
    // fio's reserved words, and its arithmetic on a value that held one.
    let text = super::keywords::replace(&text, host).map_err(|m| InputError::new(m).at(origin.clone()))?;
    let (key, value) = match text.split_once('=') {
        Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
        None => (text.trim().to_string(), String::new()),
    };
    if !option_shaped(&key) {
        return Err(neither());
    }
    if super::options::find(&key).is_none() {
        // A real fio option fsarena lacks, or a typo of one it has: say which it may be.
        return Err(InputError::new(format!(
            "fio option '{key}' is not supported by fsarena;{} remove it or see the io options in docs/workloads.md (ignoring it would make the comparison wrong)",
            fsarena_core::did_you_mean(&key, super::options::OPTIONS.iter().map(|d| d.name))
        ))
        .at(origin));
    }
    if !*in_section {
        return Err(InputError::new(format!("option '{key}' comes before any [section]")).at(origin));
    }
    // Check the value now, so the error points at this line; the option is kept either way
    // so that its job is not also blamed for lacking it.
    // A name is checked as a file name wherever it is given, [global] included, where fio
    // keeps the sections' names and it names no file: a hostile one is refused all the same.
    let checked = IoOptions::default()
        .set_from_job_file(&key, &value)
        .and_then(|()| match key.as_str() {
            "name" => {
                fsarena_workload::plain::check_plain_name(&value).map_err(|m| InputError::new(format!("name: {m}")))
            }
            _ => Ok(()),
        })
        .map_err(|e| e.at(origin.clone()));
    let given = Given { key, value };
    match job.as_mut() {
        Some(section) => section.own.push(given),
        None => {
            file.global_options.push((given.key.clone(), given.value.clone()));
            globals.given.push(given);
        }
    }
    checked
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "jobfile_tests.rs"]
mod tests;
