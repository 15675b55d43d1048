//! The runner's top-level errors and the exit codes they map to (in one place).

use crate::diagnostic::{FileDiagnostic, Problem};

/// Exit codes, MARA-compatible where MARA had one.
pub(crate) mod exit {
    pub(crate) const SUCCESS: i32 = 0;
    pub(crate) const FAILED: i32 = 1;
    pub(crate) const USAGE: i32 = 2;
    pub(crate) const VALIDATION: i32 = 3;
    /// Another runner holds the workspace.
    pub(crate) const BUSY: i32 = 4;
    /// The operation was not confirmed at the terminal: nothing was changed.
    pub(crate) const DECLINED: i32 = 5;
    /// `preview --expect-no-changes` or `drift` found changes: the deployed stacks differ from
    /// their programs and configuration.
    pub(crate) const CHANGES: i32 = 6;
    /// Every project did what it was asked, but the run state or the summary could not be
    /// written: the next run may redo work, and CI has no summary to read.
    pub(crate) const UNRECORDED: i32 = 7;
    pub(crate) const INTERRUPTED: i32 = 130;

    /// What each code means, as the top-level help says it (one table, so the help and the
    /// constants cannot part).
    pub(crate) const MEANINGS: [(i32, &str); 9] = [
        (SUCCESS, "success"),
        (FAILED, "a project or hook failed"),
        (USAGE, "usage error"),
        (VALIDATION, "validation failed"),
        (BUSY, "another runner holds the workspace"),
        (DECLINED, "not confirmed"),
        (CHANGES, "drift: `drift` or `preview --expect-no-changes` found changes"),
        (UNRECORDED, "the run state or summary could not be written"),
        (INTERRUPTED, "interrupted"),
    ];

    #[cfg(test)]
    mod tests {
        use super::MEANINGS;

        /// Every `const NAME: i32` of this module, read from its source: a new code without a
        /// meaning fails here, not in a user's help.
        #[test]
        fn every_exit_code_has_one_meaning() {
            let source = include_str!("error.rs");
            let module = &source[..source.find("#[cfg(test)]").expect("the tests")];
            let codes: Vec<i32> = module
                .lines()
                .filter_map(|l| l.trim().strip_prefix("pub(crate) const ")?.split_once(": i32 = "))
                .map(|(_, v)| v.trim_end_matches(';').parse().expect("a number"))
                .collect();
            assert_eq!(codes.len(), MEANINGS.len(), "{codes:?}");
            for code in codes {
                let meanings: Vec<_> = MEANINGS.iter().filter(|(c, _)| *c == code).collect();
                assert_eq!(meanings.len(), 1, "exit code {code}: {meanings:?}");
                assert!(!meanings[0].1.is_empty());
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RunnerError {
    /// The command line asks for something that does not exist or does not fit.
    #[error("{message}")]
    Usage { message: String, help: Option<String> },
    /// Workspace files have problems; each names `file:line:column`. Which files they are
    /// decides the exit code and the headline.
    #[error("{}", group.headline(problems.len()))]
    Files {
        group: FileGroup,
        problems: Vec<FileDiagnostic>,
    },
    /// `validate` found problems (exit 3): each says what and how to fix it.
    #[error("validation failed: {} problem{}", .0.len(), if .0.len() == 1 { "" } else { "s" })]
    Problems(Vec<Problem>),
    /// Another runner holds the workspace (exit 4).
    #[error("{message}")]
    Busy { message: String, help: String },
    /// The operation was not confirmed at the terminal (exit 5).
    #[error("not confirmed: nothing was changed")]
    Declined,
    /// What the command needed failed, said with the fix (exit 1).
    #[error("{message}")]
    Failed { message: String, help: String },
    /// Reading or writing a file failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// Which workspace files [`RunnerError::Files`] found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileGroup {
    /// The provider files, which what the command line names is loaded from (exit 2).
    Providers,
    /// The environment and stack files, which must be right before anything runs (exit 3).
    Configuration,
}

impl FileGroup {
    fn headline(self, n: usize) -> String {
        let s = if n == 1 { "" } else { "s" };
        match self {
            FileGroup::Providers => format!("{n} problem{s} in the workspace files"),
            FileGroup::Configuration => format!("validation failed: {n} problem{s}"),
        }
    }
}

/// One thing an error says was wrong, as a report beside the terminal's shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub(crate) what: String,
    pub(crate) fix: Option<String>,
    /// The file and line it points at, when it does.
    pub(crate) at: Option<crate::diagnostic::Place>,
}

impl RunnerError {
    /// Problems in the provider files (exit 2).
    pub(crate) fn in_providers(problems: Vec<FileDiagnostic>) -> Self {
        RunnerError::Files {
            group: FileGroup::Providers,
            problems,
        }
    }

    /// Problems in the environment or stack files (exit 3).
    pub(crate) fn in_configuration(problems: Vec<FileDiagnostic>) -> Self {
        RunnerError::Files {
            group: FileGroup::Configuration,
            problems,
        }
    }

    pub(crate) fn usage(message: impl Into<String>, help: impl Into<String>) -> Self {
        RunnerError::Usage {
            message: message.into(),
            help: Some(help.into()),
        }
    }

    pub(crate) fn failed(message: impl Into<String>, help: impl Into<String>) -> Self {
        RunnerError::Failed {
            message: message.into(),
            help: help.into(),
        }
    }

    /// What was wrong, each with its fix when one is known and its place when it points into a
    /// file: the problems listed, or the error itself (for a report beside the terminal's, as
    /// GitHub's job summary and annotations).
    pub(crate) fn items(&self) -> Vec<Item> {
        let item = |what: &str, fix: Option<&String>| Item {
            what: what.to_string(),
            fix: fix.cloned(),
            at: None,
        };
        match self {
            RunnerError::Problems(problems) => problems
                .iter()
                .map(|p| Item {
                    at: p.at.clone(),
                    ..item(&p.what, Some(&p.fix))
                })
                .collect(),
            RunnerError::Files { problems, .. } => problems
                .iter()
                .map(|d| Item {
                    at: Some(d.place.clone()),
                    ..item(&format!("{}: {}", d.location, d.message), d.help.as_ref())
                })
                .collect(),
            RunnerError::Usage { message, help } => vec![item(message, help.as_ref())],
            RunnerError::Busy { message, help } | RunnerError::Failed { message, help } => {
                vec![item(message, Some(help))]
            }
            RunnerError::Declined | RunnerError::Io { .. } => vec![item(&self.to_string(), None)],
        }
    }

    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            RunnerError::Usage { .. }
            | RunnerError::Files {
                group: FileGroup::Providers,
                ..
            } => exit::USAGE,
            RunnerError::Files {
                group: FileGroup::Configuration,
                ..
            }
            | RunnerError::Problems(_) => exit::VALIDATION,
            RunnerError::Busy { .. } => exit::BUSY,
            RunnerError::Declined => exit::DECLINED,
            RunnerError::Io { .. } | RunnerError::Failed { .. } => exit::FAILED,
        }
    }
}
