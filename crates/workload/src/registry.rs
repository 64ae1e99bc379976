//! What the registry holds for each workload kind: its name, a one-line summary, its option
//! table, its parser and its own text block. The list itself is fsarena-kinds' (one line per
//! kind), so that this crate, which every family builds on, names none of them.

use crate::Workload;
use fsarena_core::option::OptionDoc;
use fsarena_core::{InputError, Spec};

/// A parsed, checked workload, ready to run.
pub type Parsed = Box<dyn Workload + Send + Sync>;

/// A workload kind, as the registry lists it.
#[derive(Debug)]
pub struct WorkloadKind {
    /// What `--workload` starts with.
    pub name: &'static str,
    /// One line for `fsarena help` and the docs.
    pub summary: &'static str,
    /// Its keys, in the order help lists them.
    pub options: fn() -> Vec<&'static OptionDoc>,
    /// Parses and checks a spec of this kind, without side effects.
    pub parse: fn(&Spec) -> Result<Parsed, InputError>,
    /// How the reports present its results beyond what every result shows: its own block in
    /// a result's text (`text = MODULE::text` on its line), the words of its section when its
    /// results are verdicts (`verdicts = PATH`).
    pub present: fsarena_core::run::Presenter,
}

impl WorkloadKind {
    /// The key called `key` (a name or an alias).
    pub fn option(&self, key: &str) -> Option<&'static OptionDoc> {
        (self.options)().into_iter().find(|d| d.is(key))
    }
}
