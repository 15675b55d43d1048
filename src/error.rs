//! The runner's top-level errors and the exit codes they map to (in one place).

use crate::diagnostic::FileDiagnostic;

/// Exit codes, MARA-compatible where MARA had one.
pub mod exit {
    pub const SUCCESS: i32 = 0;
    pub const FAILED: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const VALIDATION: i32 = 3;
    pub const INTERRUPTED: i32 = 130;
}

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The command line asks for something that does not exist or does not fit.
    #[error("{message}")]
    Usage { message: String, help: Option<String> },
    /// Provider files (or other workspace files) have problems; each names `file:line:column`.
    #[error("{} problem{} in the workspace files", .0.len(), if .0.len() == 1 { "" } else { "s" })]
    Files(Vec<FileDiagnostic>),
    /// Workspace files that must be right before anything runs are not (exit 3).
    #[error("validation failed: {} problem{}", .0.len(), if .0.len() == 1 { "" } else { "s" })]
    Validation(Vec<FileDiagnostic>),
    /// `validate` found problems (exit 3): each says what and how to fix it.
    #[error("validation failed: {} problem{}", .0.len(), if .0.len() == 1 { "" } else { "s" })]
    Problems(Vec<crate::validate::Problem>),
    /// Reading or writing a file failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl RunnerError {
    pub fn usage(message: impl Into<String>, help: impl Into<String>) -> Self {
        RunnerError::Usage {
            message: message.into(),
            help: Some(help.into()),
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            RunnerError::Usage { .. } | RunnerError::Files(_) => exit::USAGE,
            RunnerError::Validation(_) | RunnerError::Problems(_) => exit::VALIDATION,
            RunnerError::Io { .. } => exit::FAILED,
        }
    }
}
