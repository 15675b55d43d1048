//! One module per command: each takes resolved [`crate::settings::Settings`] and plain options,
//! does its work through the layers below, and returns the exit code.

pub(crate) mod export;
mod only;
pub(crate) mod plan;
pub(crate) mod providers;
pub(crate) mod run;
pub(crate) mod validate;

use crate::error::RunnerError;
use crate::report;

/// Writes a command's result to standard output.
fn write_result(text: &str) -> Result<(), RunnerError> {
    report::result(text).map_err(|source| RunnerError::Io {
        context: "cannot write to standard output".into(),
        source,
    })
}
