//! Man pages and shell completions, generated from the one flag table (args.rs) like
//! `--help`; and the value hints that let completions offer the kinds for `--target` and
//! `--workload` rather than file names.

use crate::args::{Cli, ManArgs};
use crate::output::say;
use crate::plan::Failure;
use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use clap::CommandFactory;
use fsarena_core::InputError;
use std::process::ExitCode;

/// `fsarena man`: the main page on stdout; `fsarena man --dir DIR`: one page per command
/// (fsarena.1, fsarena-run.1, fsarena-results-list.1, ...) written to DIR.
pub fn man(args: &ManArgs) -> Result<ExitCode, Failure> {
    let Some(dir) = &args.dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(Cli::command()).render(&mut out).map_err(|e| Failure::Run(e.into()))?;
        crate::commands::print(&out)?;
        return Ok(ExitCode::SUCCESS);
    };
    let shown = fsarena_core::printable(&dir.to_string_lossy()).into_owned();
    if !dir.is_dir() {
        return Err(InputError::new(format!("{shown} is not a directory: give an existing one")).at("--dir").into());
    }
    clap_mangen::generate_to(Cli::command(), dir)
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot write the man pages to {shown}: {e}")))?;
    say!("fsarena: wrote {} man pages to {shown}", pages(&Cli::command()));
    Ok(ExitCode::SUCCESS)
}

/// How many pages `generate_to` writes: the command and each visible subcommand, recursively.
fn pages(command: &clap::Command) -> usize {
    1 + command.get_subcommands().filter(|c| !c.is_hide_set()).map(pages).sum::<usize>()
}

/// `fsarena completions SHELL`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode, Failure> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "fsarena", &mut out);
    crate::commands::print(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// What completions offer for an argument whose values are checked later, with their own
/// messages (a spec by its kind's parser, a format by the command's list): clap accepts any
/// text and only lists these words, so a shell completes `--target ext<TAB>` to the kinds and
/// never to file names.
#[derive(Debug, Clone, Copy)]
pub enum Offer {
    /// The target kinds (`--target`).
    TargetKinds,
    /// The workload kinds (`--workload`).
    WorkloadKinds,
    /// These output formats (`--output-format`: a command's accepted list in args.rs).
    Formats(&'static [fsarena_report::OutputFormat]),
}

/// `--target`: the target kinds.
pub fn target_specs() -> Offer {
    Offer::TargetKinds
}

/// `--workload`: the workload kinds.
pub fn workload_specs() -> Offer {
    Offer::WorkloadKinds
}

/// `--output-format`: the names of `formats`.
pub fn format_names(formats: &'static [fsarena_report::OutputFormat]) -> Offer {
    Offer::Formats(formats)
}

impl TypedValueParser for Offer {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let words: Vec<PossibleValue> = match self {
            Offer::TargetKinds => {
                fsarena_target::TARGET_KINDS.iter().map(|k| PossibleValue::new(k.name).help(k.summary)).collect()
            }
            Offer::WorkloadKinds => {
                fsarena_workload::WORKLOAD_KINDS.iter().map(|k| PossibleValue::new(k.name).help(k.summary)).collect()
            }
            Offer::Formats(formats) => formats.iter().map(|f| PossibleValue::new(f.name())).collect(),
        };
        Some(Box::new(words.into_iter()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn completions_offer_the_kinds_and_formats() {
        for shell in [clap_complete::Shell::Bash, clap_complete::Shell::Zsh, clap_complete::Shell::Fish] {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "fsarena", &mut out);
            let script = String::from_utf8(out).unwrap();
            for word in ["ext4", "tmpfs", "fuse2fs", "dir", "io", "meta", "tree"] {
                assert!(script.contains(word), "{shell}: no {word}");
            }
        }
        // bash: --target and --workload complete words, not file names.
        let mut out = Vec::new();
        clap_complete::generate(clap_complete::Shell::Bash, &mut Cli::command(), "fsarena", &mut out);
        let script = String::from_utf8(out).unwrap();
        let target = script.split("--target)").nth(1).unwrap().split(";;").next().unwrap();
        assert!(target.contains("ext4") && !target.contains("compgen -f"), "{target}");
        let workload = script.split("--workload)").nth(1).unwrap().split(";;").next().unwrap();
        assert!(workload.contains("io meta tree") && !workload.contains("compgen -f"), "{workload}");
        let format = script.split("--output-format)").nth(1).unwrap().split(";;").next().unwrap();
        assert!(format.contains("human json") && !format.contains("compgen -f"), "{format}");
    }

    #[test]
    fn a_spec_is_any_text() {
        use clap::Parser;
        let cli = Cli::try_parse_from(["fsarena", "run", "--target", "ext4:size=1g", "--workload", "io:bs=4k"]);
        assert!(cli.is_ok(), "{cli:?}");
    }

    #[test]
    fn one_man_page_per_command() {
        let dir = tempfile::tempdir().unwrap();
        clap_mangen::generate_to(Cli::command(), dir.path()).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for page in ["fsarena.1", "fsarena-run.1", "fsarena-help.1", "fsarena-results.1", "fsarena-results-list.1"] {
            assert!(names.iter().any(|n| n == page), "{page} missing from {names:?}");
        }
        assert_eq!(names.len(), pages(&Cli::command()));
        let run = std::fs::read_to_string(dir.path().join("fsarena-run.1")).unwrap();
        assert!(run.contains("\\-\\-workload") && run.contains("fsarena help"), "{run}");
    }
}
