//! What can go wrong when opening, writing or reading the store. Every message names the
//! database file or the run, and what is accepted.

use std::path::PathBuf;
use thiserror::Error;

/// An error of the results store.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database file or its directory could not be created or read.
    #[error("results database {path}: {source}")]
    Io {
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file exists but is not an fsarena results database.
    #[error(
        "{0} is not an fsarena results database (another program's file or database); \
         give a new path with --db, or an existing fsarena results database"
    )]
    Foreign(PathBuf),
    /// The database was written by a newer fsarena, with a schema this code does not know.
    #[error(
        "results database {path} was written by a newer fsarena (schema {found}); \
         this fsarena reads up to schema {supported}: upgrade fsarena"
    )]
    Newer {
        /// The database file.
        path: PathBuf,
        /// The schema version found in the file.
        found: u32,
        /// The newest schema version this code reads.
        supported: u32,
    },
    /// The database cannot be written: a read-only or immutable (`chattr +i`) file, a
    /// read-only mount, or a directory where nothing can be created.
    #[error(
        "results database {path} cannot be written ({detail}): give a --db path where fsarena may \
         write, or --no-store"
    )]
    Unwritable {
        /// The database file.
        path: PathBuf,
        /// Why: the operating system's or SQLite's words.
        detail: String,
    },
    /// The file is an fsarena database, or looks like one, but fails SQLite's checks: a damaged
    /// page (`PRAGMA quick_check`) or a header that contradicts the tables.
    #[error(
        "results database {path} is damaged: {finding}; fsarena leaves it untouched: restore it from \
         a backup, or give another --db"
    )]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// What is wrong, in SQLite's words where SQLite found it.
        finding: String,
    },
    /// A file SQLite keeps beside the database (`-wal`, `-shm`, `-journal`) is a symbolic
    /// link, a hard link or not a regular file: SQLite would follow it and write into another
    /// file.
    #[error(
        "results database {path}: {sidecar} beside it is not a plain file of its own (a symbolic or \
         hard link, or a special file), and SQLite would write through it: remove it, or give another --db"
    )]
    Sidecar {
        /// The database file.
        path: PathBuf,
        /// The file beside it.
        sidecar: PathBuf,
    },
    /// There is no database file to read.
    #[error("no results database at {0}: run `fsarena run` first, or give --db")]
    Missing(PathBuf),
    /// The database file exists but holds no fsarena tables yet (an empty file).
    #[error("results database {0} is empty: no run has been stored in it yet")]
    Empty(PathBuf),
    /// No stored run matches what was given.
    #[error(
        "no stored run '{0}': give a run id, a unique prefix of one, a run name (--name), 'last' \
         or 'last~N'; `fsarena results list` shows them"
    )]
    UnknownRun(String),
    /// A run id prefix matches more than one run.
    #[error("'{0}' matches several runs ({list}): give more characters of the id", list = candidate_list(.1))]
    Ambiguous(String, Vec<String>),
    /// A run with this id is already stored.
    #[error("a run with id '{0}' is already stored; run ids must be unique")]
    RunExists(String),
    /// A result already holds this position, or a measurement this repetition.
    #[error("{0} is already stored")]
    Duplicate(String),
    /// No stored result has this id.
    #[error("no stored result with id {0}")]
    UnknownResult(i64),
    /// A stored value could not be read back (the database was edited by hand, or damaged).
    #[error("results database {path}: run '{run}': {what} cannot be read: {detail}")]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// The run the value belongs to.
        run: String,
        /// Which value: `environment`, `measurement 2 of result 1`, ...
        what: String,
        /// Why it cannot be read.
        detail: String,
    },
    /// SQLite refused an operation.
    #[error("results database {path}: {action}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What the store was doing: `storing run 1795311954-22865`, ...
        action: String,
        /// The underlying error.
        source: rusqlite::Error,
    },
}

/// At most five candidates, newest first, then how many more there are.
fn candidate_list(candidates: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = candidates.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if candidates.len() > SHOWN {
        text.push_str(&format!(" and {} more", candidates.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ambiguous_lists_at_most_five_candidates() {
        let ids: Vec<String> = (0..7).map(|i| format!("17-{i}")).collect();
        let e = StoreError::Ambiguous("17".into(), ids);
        assert_eq!(
            e.to_string(),
            "'17' matches several runs (17-0, 17-1, 17-2, 17-3, 17-4 and 2 more): give more characters of the id"
        );
    }
}
