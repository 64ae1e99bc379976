//! One run as reports and the store see it: the environment, and per target × workload the
//! measurements of every repetition. Fresh runs and stored runs share this shape, so a report
//! never needs to know where a run came from.

use crate::Measurement;
use serde::{Deserialize, Serialize};

/// Everything a report shows about one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// Run identifier.
    pub id: String,
    /// Unix time of the run's start, in milliseconds.
    pub started_unix_ms: u64,
    /// Machine and software facts: `cpu`, `cores`, `memory`, `kernel`, `distribution`,
    /// `fsarena_version`, ... in display order.
    pub environment: Vec<(String, String)>,
    /// Options from a fio job file's `[global]` section (fio-json's `"global options"`).
    pub global_options: Vec<(String, String)>,
    /// One entry per target × workload.
    pub results: Vec<ResultEntry>,
    /// The plan as given: the command line, and the text of any job file.
    #[serde(default)]
    pub plan: String,
    /// False when the run stopped early (a failure, Ctrl-C, or a kill before it finished).
    #[serde(default)]
    pub complete: bool,
    /// The name given with `--name` (`before`, `after`), by which commands find the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Tags given with `--tag`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Why the run stopped early, when it failed or was interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

impl RunReport {
    /// How reports and comparisons name the run: its `--name` where it has one, else its id.
    pub fn handle(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }

    /// The id followed by the name, for the tables that list runs: `3f2a… (before)`.
    pub fn id_and_name(&self) -> String {
        match &self.name {
            Some(name) => format!("{} ({name})", self.id),
            None => self.id.clone(),
        }
    }
}

/// A workload kind's own block in a result's text (the human output), after the lines every
/// result has: registered with the kind (the workload registry's `text`), so that a kind with
/// its own output adds a module and never edits the report crate. A headline line is written
/// with [`bold_line`].
pub type TextBlock = fn(out: &mut String, entry: &ResultEntry, m: &crate::Measurement);

/// How the reports present a workload kind's results beyond what every result shows:
/// registered with the kind in the workload registry and handed to the report crate by the
/// binary, so that the report crate knows no kind by name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Presenter {
    /// Its own block in a result's text (`text = MODULE::text` on its registry line).
    pub text: Option<TextBlock>,
    /// Set for a kind whose results are verdicts ([`crate::Verdict`], expected vs actual per
    /// case) rather than figures (`verdicts = PATH`): the reports give them a section of
    /// their own, a table of passed cases per family and target, and compare them case by
    /// case, never by a mean ± CI.
    pub verdicts: Option<&'static VerdictSection>,
}

/// The words of the section in which the reports show a kind's verdicts; the rest (families,
/// pass counts, failures, the `security` row) comes from the verdicts themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerdictSection {
    /// The section's heading and the name of links to it: `POSIX compliance`.
    pub title: &'static str,
    /// Why a filesystem may be unable to run a case, as examples for the HTML report's note:
    /// `no ACLs, no immutable attribute`.
    pub unsupported_examples: &'static str,
    /// What the `security` row counts: `the access-control cases of every family`.
    pub security: &'static str,
}

/// The mark around a headline line of a [`TextBlock`] (bold on a terminal).
const BOLD: (&str, &str) = ("\x1b[1m", "\x1b[0m");

/// Writes `line` and a newline as a headline of a [`TextBlock`] (fio's IOPS and bandwidth
/// lines): marked bold; the terminal report keeps the mark only when it writes colour, and
/// takes it out otherwise ([`without_bold`]).
pub fn bold_line(out: &mut String, line: &str) {
    out.push_str(BOLD.0);
    out.push_str(line);
    out.push_str(BOLD.1);
    out.push('\n');
}

/// `text` without [`bold_line`]'s marks. User text in a report is made inert before it is
/// written ([`crate::printable`]), so no mark comes from anywhere else.
pub fn without_bold(text: &str) -> String {
    text.replace(BOLD.0, "").replace(BOLD.1, "")
}

/// The results of one workload on one target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultEntry {
    /// The name shown in reports (`label=`, by default the spec).
    pub target_label: String,
    /// Target kind: `dir`, `ext4`, ...
    pub target_kind: String,
    /// The target's options.
    pub target_options: Vec<(String, String)>,
    /// Facts about the provisioned target: mkfs command and version, image, loop device,
    /// mount options as the kernel shows them, FUSE command and PID.
    pub target_info: Vec<(String, String)>,
    /// Workload kind: `io`, ...
    pub workload_kind: String,
    /// The workload's parameters as given.
    pub workload_params: Vec<(String, String)>,
    /// The swept keys and their values at this point of the plan (`numjobs=16`), in the order
    /// the sweeps were given; empty when nothing is swept. Reports label rows and draw sweep
    /// charts from this, typed, never from re-parsing `workload_params`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub point: Vec<Param>,
    /// Which part of the workload this result covers when one workload gives several: a fio
    /// job (or its reporting group under `group_reporting`), a `tree` loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// One measurement per measured repetition (one until repetitions land).
    pub measurements: Vec<Measurement>,
    /// Wall-clock milliseconds the workload took on this target: every round, warm-ups and
    /// untimed setup included (what a study row costs to run here). On the first part only
    /// when one workload gives several results; none in runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<u64>,
}

/// One swept parameter at one point: the key, the value as given, and the value as a number
/// in the option's base unit (bytes, ns, a count) where the option is numeric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// The option's name (`numjobs`, `bs`).
    pub key: String,
    /// The value as the user wrote it (`4k`).
    pub given: String,
    /// The value as a number (`4096`), for sweep charts' axes; `None` for words (`randread`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<f64>,
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.key, self.given)
    }
}

impl ResultEntry {
    /// What tells this result apart from the others of its workload: its part and its sweep
    /// point (`seqread`, `numjobs=16`, `seqread rw=randread bs=4k`); empty when neither.
    pub fn variant(&self) -> String {
        let mut words: Vec<String> = self.part.iter().cloned().collect();
        words.extend(self.point.iter().map(Param::to_string));
        words.join(" ")
    }

    /// `"<target label> · <workload>"`, the entry's name in reports.
    pub fn title(&self) -> String {
        match &self.part {
            Some(part) => format!("{} · {} · {part}", self.target_label, self.workload_title()),
            None => format!("{} · {}", self.target_label, self.workload_title()),
        }
    }

    /// `"<workload kind>:<k=v,...>"`; a flag given bare (`time_based`) shows bare.
    pub fn workload_title(&self) -> String {
        let params: Vec<String> = self
            .workload_params
            .iter()
            .map(|(k, v)| if v.is_empty() { k.clone() } else { format!("{k}={v}") })
            .collect();
        if params.is_empty() {
            self.workload_kind.clone()
        } else {
            format!("{}:{}", self.workload_kind, params.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_headline_is_bold_until_the_marks_are_taken_out() {
        let mut out = String::from("  a line\n");
        bold_line(&mut out, "  read: IOPS=1");
        assert_eq!(out, "  a line\n\x1b[1m  read: IOPS=1\x1b[0m\n");
        assert_eq!(without_bold(&out), "  a line\n  read: IOPS=1\n");
    }
}
