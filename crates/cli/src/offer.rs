//! The value hints that let completions offer the kinds for `--target` and `--workload`, and
//! a command's formats for `--output-format`, rather than file names.

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};

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
                fsarena_kinds::WORKLOAD_KINDS.iter().map(|k| PossibleValue::new(k.name).help(k.summary)).collect()
            }
            Offer::Formats(formats) => formats.iter().map(|f| PossibleValue::new(f.name())).collect(),
        };
        Some(Box::new(words.into_iter()))
    }
}
