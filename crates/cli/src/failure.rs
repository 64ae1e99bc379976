//! How a command ends when it does not succeed: bad input (exit 2, nothing created) or a
//! failure during the run (exit 1).

use fsarena_core::InputError;

/// Why a command did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// Bad input: exit 2, nothing was created.
    BadInput(InputError),
    /// A failure during the run: exit 1.
    Run(anyhow::Error),
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Self {
        Self::BadInput(e)
    }
}
