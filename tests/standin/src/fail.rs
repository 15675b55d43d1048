//! Failures as the real CLI reports them: `error: <message>` on stderr and an exit code from its
//! v3.226+ taxonomy (`pkg/cmd/pulumi/cmd/exit_codes.go`).

#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: i32,
    /// Lines the engine shows under the stack's `Diagnostics:` (a program's errors); with an
    /// empty `message` the command then ends with no `error:` line (the engine's "bail").
    pub diagnostics: Vec<String>,
}

/// Generic failure: exit 1.
pub fn fail(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code: 1,
        diagnostics: Vec::new(),
    }
}

/// `ConfigurationError` / `NoConfirmationInNonInteractiveError`: exit 2.
pub fn config_error(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code: 2,
        diagnostics: Vec::new(),
    }
}

/// `StackNotFoundError` and friends: exit 6.
pub fn stack_not_found(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code: 6,
        diagnostics: Vec::new(),
    }
}

/// `CancelledError`: exit 8.
pub fn cancelled(operation: &str) -> Failure {
    Failure {
        message: format!("{operation} cancelled"),
        code: 8,
        diagnostics: Vec::new(),
    }
}

/// `NoChangesExpectedError` (`--expect-no-changes` and the operation had changes): exit 7.
pub fn no_changes_expected(operation: &str) -> Failure {
    Failure {
        message: format!("no changes were expected for {operation} but changes were proposed"),
        code: 7,
        diagnostics: Vec::new(),
    }
}

/// A program the language host refused: its diagnostics were shown, nothing more is said; exit 1.
pub fn bail(diagnostics: Vec<String>) -> Failure {
    Failure {
        message: String::new(),
        code: 1,
        diagnostics,
    }
}

impl Failure {
    #[must_use]
    pub fn with_code(mut self, code: i32) -> Self {
        self.code = code;
        self
    }
}
