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
pub(crate) fn write_result(text: &str) -> Result<(), RunnerError> {
    report::result(text).map_err(|source| RunnerError::Io {
        context: "cannot write to standard output".into(),
        source,
    })
}

/// A runtime for the async work of a command (children, signals, timers).
fn runtime(threads: Threads) -> Result<tokio::runtime::Runtime, RunnerError> {
    let mut builder = match threads {
        Threads::One => tokio::runtime::Builder::new_current_thread(),
        Threads::Many => tokio::runtime::Builder::new_multi_thread(),
    };
    builder.enable_all().build().map_err(|source| RunnerError::Io {
        context: "cannot start the async runtime".into(),
        source,
    })
}

/// How many threads a [`runtime`] gets.
#[derive(Debug, Clone, Copy)]
enum Threads {
    /// A few reads one after the other.
    One,
    /// A run: projects at once.
    Many,
}
