//! What `pulumi` says, matched in one place: the CLI's messages (v3.142 to v3.274 alike) that
//! the runner acts on. No other module matches the engine's wording; each asks [`says`] (or
//! [`classify`]) which of these a process's standard error holds.

/// A message of the CLI the runner acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Message {
    /// `error: the stack is currently locked by N lock(s). Either wait …` followed by one line
    /// per lock (`pkg/backend/diy/lock.go`).
    StackLocked,
    /// `error: no stack named 'dev' found`: selecting (or operating on) a stack that does not
    /// exist.
    NoStack,
    /// `error: no changes were expected for preview but changes were proposed`
    /// (`--expect-no-changes`, `pkg/backend/backenderr/backenderr.go`).
    NoChangesExpected,
    /// A file in a stack's lock directory that is not JSON, which `pulumi` reads as a lock:
    /// Go's JSON decoder's errors.
    UnreadableLock,
    /// `incorrect passphrase` (`pkg/secrets/passphrase`).
    IncorrectPassphrase,
}

impl Message {
    const ALL: [Message; 5] = [
        Message::StackLocked,
        Message::NoStack,
        Message::NoChangesExpected,
        Message::UnreadableLock,
        Message::IncorrectPassphrase,
    ];

    /// The texts that tell it (any one).
    fn texts(self) -> &'static [&'static str] {
        match self {
            Message::StackLocked => &["the stack is currently locked"],
            Message::NoStack => &["no stack named"],
            Message::NoChangesExpected => &["no changes were expected"],
            Message::UnreadableLock => &[
                "unexpected end of JSON input",
                "looking for beginning of value",
                "invalid character",
            ],
            Message::IncorrectPassphrase => &["incorrect passphrase"],
        }
    }
}

/// Every message `stderr` holds.
pub(crate) fn classify(stderr: &str) -> Vec<Message> {
    Message::ALL.into_iter().filter(|m| says(stderr, *m)).collect()
}

/// Whether `stderr` holds `message`.
pub(crate) fn says(stderr: &str, message: Message) -> bool {
    message.texts().iter().any(|t| stderr.contains(t))
}

/// The line of `stderr` that says `message`, trimmed.
pub(crate) fn line_of(stderr: &str, message: Message) -> Option<&str> {
    stderr
        .lines()
        .find(|l| message.texts().iter().any(|t| l.contains(t)))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the real CLI (v3.274.1) printed them.
    #[test]
    fn the_real_clis_messages_are_told_apart() {
        let locked = "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n  file:///w/.pulumi/locks/organization/iam/dev/a.json: created by ann@h (pid 1) at 2026-11-23T10:00:00Z\n";
        assert_eq!(classify(locked), [Message::StackLocked]);
        assert_eq!(
            line_of(locked, Message::StackLocked).unwrap(),
            "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`."
        );
        assert_eq!(classify("error: no stack named 'dev' found\n"), [Message::NoStack]);
        assert_eq!(
            classify("error: no changes were expected for preview but changes were proposed\n"),
            [Message::NoChangesExpected]
        );
        assert_eq!(
            classify("error: getting stack configuration: get stack secrets manager: incorrect passphrase\n"),
            [Message::IncorrectPassphrase]
        );
        assert_eq!(
            classify("error: failed to load checkpoint: unexpected end of JSON input\n"),
            [Message::UnreadableLock]
        );
        assert!(classify("error: something else\n").is_empty());
    }
}
