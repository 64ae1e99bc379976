//! `--output-format`: every format fsarena writes, defined once, with one validator. Each
//! command passes the formats it accepts, so a message always lists exactly those.

use crate::{Csv, Exporter, FioJson, FioJsonPlus, Human, Json, Markdown};

/// A format a command writes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// A fio-like summary and a comparison table, for people.
    Human,
    /// fsarena's own versioned JSON schema.
    Json,
    /// fio's JSON shape.
    FioJson,
    /// fio's json+ shape (with `clat_ns.bins`).
    FioJsonPlus,
    /// One row per target × workload × metric × repetition.
    Csv,
    /// Markdown tables (the charts need `fsarena report -o FILE.md`).
    Markdown,
}

/// A name that is not one of the formats a command accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown output format '{given}': accepted formats are {accepted}")]
pub struct UnknownFormat {
    /// The name given.
    pub given: String,
    /// The accepted names, comma-separated.
    pub accepted: String,
}

impl OutputFormat {
    /// Every format, in the order help lists them.
    pub const ALL: [OutputFormat; 6] =
        [Self::Human, Self::Json, Self::FioJson, Self::FioJsonPlus, Self::Csv, Self::Markdown];

    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            Self::Human => "human",
            Self::Json => "json",
            Self::FioJson => "fio-json",
            Self::FioJsonPlus => "fio-json+",
            Self::Csv => "csv",
            Self::Markdown => "md",
        }
    }

    /// Other names accepted for it: fio's own spellings (`normal`, `json+`), `markdown`.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Self::Human => &["normal"],
            Self::FioJsonPlus => &["json+"],
            Self::Markdown => &["markdown"],
            _ => &[],
        }
    }

    /// `name` as one of `accepted`, or an error naming what is accepted.
    pub fn parse(name: &str, accepted: &[OutputFormat]) -> Result<Self, UnknownFormat> {
        accepted.iter().copied().find(|f| f.name() == name || f.aliases().contains(&name)).ok_or_else(|| {
            UnknownFormat {
                given: name.to_string(),
                accepted: accepted.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
            }
        })
    }

    /// The exporter for this format; `terminal` turns on colour for people.
    pub fn exporter(self, terminal: bool) -> Box<dyn Exporter> {
        match self {
            Self::Human => Box::new(Human { color: terminal }),
            Self::Json => Box::new(Json),
            Self::FioJson => Box::new(FioJson),
            Self::FioJsonPlus => Box::new(FioJsonPlus),
            Self::Csv => Box::new(Csv),
            Self::Markdown => Box::new(Markdown { charts: false }),
        }
    }
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::OutputFormat::{self, *};

    #[test]
    fn one_validator_lists_what_the_command_accepts() {
        assert_eq!(OutputFormat::parse("json+", &OutputFormat::ALL), Ok(FioJsonPlus));
        assert_eq!(OutputFormat::parse("normal", &[Human, Json]), Ok(Human));
        let e = OutputFormat::parse("csv", &[Human, Json]).unwrap_err();
        assert_eq!(e.to_string(), "unknown output format 'csv': accepted formats are human, json");
        for f in OutputFormat::ALL {
            assert_eq!(OutputFormat::parse(f.name(), &[f]), Ok(f));
        }
    }
}
