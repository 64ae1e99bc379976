//! Man pages and shell completions, generated from the one flag table (args.rs) like
//! `--help` (the words completions offer are in offer.rs).

use crate::args::{Cli, ManArgs};
use crate::failure::Failure;
use crate::output::say;
use clap::CommandFactory;
use fsarena_core::InputError;
use std::process::ExitCode;

/// `fsarena man`: the main page on stdout; `fsarena man --dir DIR`: one page per command
/// (fsarena.1, fsarena-run.1, fsarena-results-list.1, ...) written to DIR.
pub fn man(args: &ManArgs) -> Result<ExitCode, Failure> {
    let Some(dir) = &args.dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(Cli::command()).render(&mut out).map_err(|e| Failure::Run(e.into()))?;
        crate::output::print(&out)?;
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
    crate::output::print(&out)?;
    Ok(ExitCode::SUCCESS)
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
