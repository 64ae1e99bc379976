//! Errors in what the user gave us: specs, options, job files. All of them mean exit code 2.

use std::fmt;

/// Bad input, detected before anything is created. The message names the bad value, where it
/// was given, and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// Where the value came from: `--workload`, `job.fio:12`, ...; empty when not yet known.
    pub origin: String,
    /// What is wrong and what is accepted.
    pub message: String,
    /// Further problems found in the same input (a job file reports all of its problems at
    /// once), each shown on a line of its own after this one.
    pub also: Vec<InputError>,
}

impl InputError {
    /// An error with no origin yet; callers add it with [`InputError::at`].
    pub fn new(message: impl Into<String>) -> Self {
        Self { origin: String::new(), message: message.into(), also: Vec::new() }
    }

    /// Sets where the bad value was given, unless a more precise origin is already set.
    #[must_use]
    pub fn at(mut self, origin: impl Into<String>) -> Self {
        if self.origin.is_empty() {
            self.origin = origin.into();
        }
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // User text (values, names, file contents) is inside both: never let it reach a
        // terminal raw, and keep the error on one line.
        if self.origin.is_empty() {
            write!(f, "{}", crate::printable(&self.message))?;
        } else {
            write!(f, "{}: {}", crate::printable(&self.origin), crate::printable(&self.message))?;
        }
        // One line each: `printable` escapes any newline inside a message.
        for more in &self.also {
            write!(f, "\n{more}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}
