//! Failures as the real CLI reports them: `error: <message>` on stderr and an exit code from its
//! v3.226+ taxonomy (`pkg/cmd/pulumi/cmd/exit_codes.go`).

#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: i32,
}

/// Generic failure: exit 1.
pub fn fail(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code: 1,
    }
}

/// `ConfigurationError` / `NoConfirmationInNonInteractiveError`: exit 2.
pub fn config_error(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code: 2,
    }
}

/// `StackNotFoundError` and friends: exit 6.
pub fn stack_not_found(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code: 6,
    }
}

/// `CancelledError`: exit 8.
pub fn cancelled(operation: &str) -> Failure {
    Failure {
        message: format!("{operation} cancelled"),
        code: 8,
    }
}

impl Failure {
    pub fn with_code(mut self, code: i32) -> Self {
        self.code = code;
        self
    }
}
