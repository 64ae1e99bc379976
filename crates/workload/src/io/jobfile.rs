//! fio's INI job files: `[global]` and job sections, comments, `include`, `${VAR}`.
//!
//! Hand-written because generic INI crates mis-read fio's bare keys (`time_based`) and
//! know nothing of `[global]` applying only to the jobs below it.

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

/// Reads and parses a job file; every error names the file and line.
pub fn parse_file(path: &Path) -> Result<FioJobFile, InputError> {
    let mut lines = Vec::new();
    read_lines(path, &mut lines, 0)?;
    parse_lines(&lines)
}

/// Parses job-file text (for tests and stdin); `name` is used in error messages.
pub fn parse_str(text: &str, name: &str) -> Result<FioJobFile, InputError> {
    let lines: Vec<Line> = text
        .lines()
        .enumerate()
        .map(|(i, t)| Line { file: PathBuf::from(name), number: i + 1, text: t.to_string() })
        .collect();
    parse_lines(&lines)
}

fn read_lines(path: &Path, out: &mut Vec<Line>, depth: usize) -> Result<(), InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(format!("cannot read fio job file {}: {e}", path.display())))?;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if let Some(included) = trimmed.strip_prefix("include ") {
            let origin = format!("{}:{}", path.display(), i + 1);
            if depth > 8 {
                return Err(InputError::new("include nested too deeply (more than 8 levels)").at(origin));
            }
            let target = path.parent().unwrap_or(Path::new(".")).join(included.trim());
            read_lines(&target, out, depth + 1).map_err(|e| e.at(origin))?;
        } else {
            out.push(Line { file: path.to_path_buf(), number: i + 1, text: raw.to_string() });
        }
    }
    Ok(())
}

/// Expands `${VAR}` from the environment, as fio does.
fn expand(text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| format!("unclosed '${{' in '{text}'"))?;
        let var = &after[..end];
        let value = std::env::var(var).map_err(|_| format!("environment variable '{var}' is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// An option as written, with where it was written.
struct Given {
    key: String,
    value: String,
    origin: String,
}

/// A job section being read.
struct Section {
    name: String,
    own: Vec<Given>,
    origin: String,
}

/// Turns a finished job section into a job: defaults, then the globals above it, then its own.
fn finish(section: Section, globals: &[Given], file: &mut FioJobFile) -> Result<(), InputError> {
    let mut options = IoOptions { name: section.name.clone(), ..IoOptions::default() };
    for g in globals.iter().chain(section.own.iter()) {
        options.set(&g.key, &g.value).map_err(|e| e.at(g.origin.clone()))?;
    }
    options.validate().map_err(|e| e.at(format!("{} (job '{}')", section.origin, section.name)))?;
    let given = section.own.into_iter().map(|g| (g.key, g.value)).collect();
    file.jobs.push(JobDef { options, given });
    Ok(())
}

fn parse_lines(lines: &[Line]) -> Result<FioJobFile, InputError> {
    let mut file = FioJobFile::default();
    let mut globals: Vec<Given> = Vec::new();
    let mut in_section = false; // false before the first header
    let mut job: Option<Section> = None; // None inside [global]

    for line in lines {
        let origin = format!("{}:{}", line.file.display(), line.number);
        let text = line.text.trim();
        if text.is_empty() || text.starts_with(';') || text.starts_with('#') {
            continue;
        }
        if let Some(name) = text.strip_prefix('[') {
            let name = name.strip_suffix(']').ok_or_else(|| {
                InputError::new(format!("'{text}' is not a section header: expected [name]")).at(origin.clone())
            })?;
            let name = name.trim();
            if name.is_empty() {
                return Err(InputError::new("empty section name: expected [global] or [jobname]").at(origin));
            }
            if let Some(done) = job.take() {
                finish(done, &globals, &mut file)?;
            }
            in_section = true;
            if name != "global" {
                job = Some(Section { name: name.to_string(), own: Vec::new(), origin });
            }
            continue;
        }
        let text = expand(text).map_err(|m| InputError::new(m).at(origin.clone()))?;
        let (key, value) = match text.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (text.trim().to_string(), String::new()),
        };
        if super::options::find(&key).is_none() {
            return Err(InputError::new(format!(
                "fio option '{key}' is not supported by fsarena; remove it or see the io options in the README (ignoring it would make the comparison wrong)"
            ))
            .at(origin));
        }
        // Check the value now, so the error points at this line.
        IoOptions::default().set(&key, &value).map_err(|e| e.at(origin.clone()))?;
        if !in_section {
            return Err(InputError::new(format!("option '{key}' comes before any [section]")).at(origin));
        }
        let given = Given { key, value, origin };
        match job.as_mut() {
            Some(section) => section.own.push(given),
            None => {
                file.global_options.push((given.key.clone(), given.value.clone()));
                globals.push(given);
            }
        }
    }
    if let Some(done) = job.take() {
        finish(done, &globals, &mut file)?;
    }
    if file.jobs.is_empty() {
        let name = lines.first().map(|l| l.file.display().to_string()).unwrap_or_default();
        return Err(InputError::new("the job file defines no job: expected at least one [jobname] section").at(name));
    }
    Ok(file)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::options::Rw;
    use super::*;

    #[test]
    fn globals_apply_to_the_jobs_below() {
        let f = parse_str(
            "; comment\n[global]\nrw=randread\nsize=128m\n# another\n\n[job1]\n\n[job2]\nbs=64k\ntime_based\nruntime=5\n",
            "t.fio",
        )
        .unwrap();
        assert_eq!(f.jobs.len(), 2);
        assert_eq!(f.jobs[0].options.name, "job1");
        assert_eq!(f.jobs[0].options.rw, Rw::RandRead);
        assert_eq!(f.jobs[0].options.size, Some(128 << 20));
        assert_eq!(f.jobs[1].options.bs, [65536; 2]);
        assert!(f.jobs[1].options.time_based);
        assert!(!f.jobs[0].options.time_based);
        assert_eq!(f.global_options, vec![("rw".into(), "randread".into()), ("size".into(), "128m".into())]);
        assert_eq!(f.jobs[1].given[1], ("time_based".into(), String::new()));
    }

    #[test]
    fn a_later_global_affects_only_later_jobs() {
        let f = parse_str("[global]\nsize=1m\n[a]\n[global]\nrw=write\n[b]\n", "t.fio").unwrap();
        assert_eq!(f.jobs[0].options.rw, Rw::Read);
        assert_eq!(f.jobs[1].options.rw, Rw::Write);
    }

    #[test]
    fn study_job_file_runs_unchanged() {
        let f = parse_str(
            "[global]\nioengine=psync\ndirect=1\nbs=128k\nsize=10g\nnumjobs=4\ntime_based\nruntime=120\ngroup_reporting\n\n[seqread]\nrw=read\nstonewall\n[seqwrite]\nrw=write\nstonewall\n",
            "study.fio",
        )
        .unwrap();
        assert_eq!(f.jobs.len(), 2);
        assert!(f.jobs.iter().all(|j| j.options.direct && j.options.numjobs == 4 && j.options.stonewall));
    }

    #[test]
    fn errors_name_file_line_and_option() {
        let cases = [
            ("[a]\nsize=1m\nzonemode=zbd\n", "t.fio:3", "zonemode"),
            ("[a]\nsize=1m\nbs=4q\n", "t.fio:3", "not a size"),
            ("size=1m\n[a]\n", "t.fio:1", "before any [section]"),
            ("[a\n", "t.fio:1", "section header"),
            ("[global]\nsize=1m\n", "t.fio", "no job"),
            ("[a]\nrw=read\n", "t.fio:1", "no size"),
            ("[a]\nsize=${FSARENA_SURELY_UNSET}\n", "t.fio:2", "not set"),
        ];
        for (text, at, what) in cases {
            let e = parse_str(text, "t.fio").unwrap_err().to_string();
            assert!(e.starts_with(at) && e.contains(what), "{text:?}: {e}");
        }
    }

    #[test]
    fn include_and_unreadable_files() {
        let dir = std::env::temp_dir().join(format!("fsarena-jobfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("common.fio"), "[global]\nsize=2m\n").unwrap();
        std::fs::write(dir.join("main.fio"), "include common.fio\n[j]\nrw=write\n").unwrap();
        let f = parse_file(&dir.join("main.fio")).unwrap();
        assert_eq!(f.jobs[0].options.size, Some(2 << 20));
        let e = parse_file(&dir.join("missing.fio")).unwrap_err().to_string();
        assert!(e.contains("cannot read fio job file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
