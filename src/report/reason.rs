//! Reasons in words, said here alone: why a project ended without running (`exec::Because`),
//! why the scheduler runs one an `up` could skip (`exec::Runs`), and why an `up` would run one
//! or skip it (`runstate::Why`). Every view, the summary and `status` take their words from here.

use super::status::outcome_word;
use crate::exec::{ALL_FILES, Because, Change, InputChange, InputKind, Outcome, Runs, Status};
use crate::runstate::Why;

/// Why a project ended without running, said of it alone.
pub(crate) fn because(b: &Because) -> String {
    match b {
        Because::Upstream { name, outcome } => {
            let how = match outcome {
                Outcome::Failed | Outcome::TimedOut => outcome_word(*outcome),
                Outcome::Interrupted => "was interrupted",
                Outcome::Skipped => "was skipped",
                _ => "did not run",
            };
            format!("needs {name}, which {how}")
        }
        Because::Interrupted => "interrupted".into(),
        Because::StoppedAfter { failed } => format!("the run stopped after {failed} failed"),
        Because::Stopped => "the run stopped".into(),
        Because::NothingChanged => "nothing it depends on changed since its last successful up".into(),
        Because::NotDeployed { waits_for } => format!("waits for {}, not deployed yet", waits_for.join(", ")),
        Because::NoDeployment => "no previous deployment".into(),
        Because::NoStack { stack } => format!("not deployed: the backend has no stack {stack}"),
        Because::NoResources { stack } => format!("not deployed, its stack {stack} holds no resources"),
    }
}

/// Why a project with `status` ended without running; `None` when it ran.
pub(crate) fn of(status: &Status) -> Option<String> {
    status.because().map(because)
}

/// Why several projects ended without running, said once for them all.
pub(crate) fn because_of_each(b: &Because) -> String {
    match b {
        Because::NothingChanged => "nothing each depends on changed since its last successful up".into(),
        other => because(other),
    }
}

/// Why the scheduler runs a project an `up` skips when unchanged.
pub(crate) fn runs(r: &Runs) -> String {
    match r {
        Runs::NoRecord => "no successful up of it is recorded, or --fresh".into(),
        Runs::InputsChanged { ran_before } => {
            let upstream = if ran_before.is_empty() {
                String::new()
            } else {
                format!(", or the outputs of {}, which ran before it", ran_before.join(", "))
            };
            format!(
                "its inputs changed since its last successful up: its files, the stack configuration, the environment{upstream}"
            )
        }
    }
}

/// Why an `up` would run a project, or skip it.
pub(crate) fn pending(w: &Why) -> String {
    match w {
        Why::NeverRun => "never run".into(),
        Why::Running(operation) => format!("running now: {}", operation.as_str()),
        Why::ChangedBy(command) => format!("`{command}` changed its stack since its last up"),
        Why::CutShort(operation) => format!(
            "its last {} was cut short: its runner ended before it did",
            operation.as_str()
        ),
        Why::Ended(operation, outcome) => {
            let how = match outcome {
                Outcome::Interrupted => "was interrupted",
                other => outcome_word(*other),
            };
            format!("its last {} {how}", operation.as_str())
        }
        Why::NotDeployed => "not deployed".into(),
        Why::After(upstream) => format!("after {upstream}, which runs and may change its outputs"),
        Why::Unchanged => "unchanged since its last up".into(),
        Why::InputsChanged(None) => {
            "its inputs changed since its last up: program, stack configuration, environment file or a file it reads"
                .into()
        }
        Why::InputsChanged(Some(what)) => format!("{} since its last up", input(what)),
        Why::Refreshed => "its last refresh took changes made outside Pulumi into the state".into(),
        Why::Drifted(None) => {
            "a check (preview or drift) found its stack differs from its program and configuration; its up refreshes first".into()
        }
        Why::Drifted(Some(what)) => {
            format!(
                "{} since its last up, and a check (preview or drift) found changes; its up refreshes first",
                input(what)
            )
        }
        Why::NoRecord => "no record of its inputs".into(),
    }
}

/// What changed among a project's inputs, as a person reads it: "stack file key
/// `logstore:retention` added" (", and N more" when several did).
pub(crate) fn input(c: &InputChange) -> String {
    let how = match c.how {
        Change::Added => "added",
        Change::Changed => "changed",
        Change::Removed => "removed",
    };
    let more = match c.more {
        0 => String::new(),
        n => format!(", and {n} more"),
    };
    format!("{} {how}{more}", named(c.kind, &c.name))
}

/// An input as a person reads it: "stack file key `logstore:retention`".
fn named(kind: InputKind, name: &str) -> String {
    match kind {
        InputKind::Config => format!("stack file key `{name}`"),
        // A project's own stack file has the name of the shared one: say which it is.
        InputKind::File
            if name
                .strip_prefix("Pulumi.")
                .and_then(|rest| rest.strip_suffix(".yaml"))
                .is_some_and(|stack| !stack.is_empty()) =>
        {
            format!("its own stack file `{name}`, not config/pulumi's,")
        }
        InputKind::File => match name.strip_prefix(ALL_FILES) {
            Some(rest) => format!("a file of its folder{rest}"),
            None => format!("its file `{name}`"),
        },
        InputKind::Named => format!("the file `{name}` names"),
        InputKind::Environment => format!("environment variable `{name}`"),
        InputKind::Upstream => format!("the outputs of `{name}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Operation;

    /// The words every view has said, reason by reason.
    #[test]
    fn each_reason_keeps_its_words() {
        let upstream = |outcome| Because::Upstream {
            name: "net".into(),
            outcome,
        };
        let said = [
            (upstream(Outcome::Failed), "needs net, which failed"),
            (upstream(Outcome::TimedOut), "needs net, which timed out"),
            (upstream(Outcome::Interrupted), "needs net, which was interrupted"),
            (upstream(Outcome::Skipped), "needs net, which was skipped"),
            (upstream(Outcome::Waits), "needs net, which did not run"),
            (Because::Interrupted, "interrupted"),
            (
                Because::StoppedAfter { failed: "net".into() },
                "the run stopped after net failed",
            ),
            (Because::Stopped, "the run stopped"),
            (
                Because::NothingChanged,
                "nothing it depends on changed since its last successful up",
            ),
            (
                Because::NotDeployed {
                    waits_for: vec!["a".into(), "b".into()],
                },
                "waits for a, b, not deployed yet",
            ),
            (Because::NoDeployment, "no previous deployment"),
            (
                Because::NoStack { stack: "dev".into() },
                "not deployed: the backend has no stack dev",
            ),
            (
                Because::NoResources { stack: "dev".into() },
                "not deployed, its stack dev holds no resources",
            ),
        ];
        for (b, words) in said {
            assert_eq!(because(&b), words);
        }
        assert_eq!(
            because_of_each(&Because::NothingChanged),
            "nothing each depends on changed since its last successful up"
        );
        assert_eq!(
            runs(&Runs::InputsChanged {
                ran_before: vec!["a".into(), "b".into()]
            }),
            "its inputs changed since its last successful up: its files, the stack configuration, the environment, \
             or the outputs of a, b, which ran before it"
        );
        assert_eq!(
            pending(&Why::Ended(Operation::Destroy, Outcome::TimedOut)),
            "its last destroy timed out"
        );
        assert_eq!(
            pending(&Why::Ended(Operation::Up, Outcome::Interrupted)),
            "its last up was interrupted"
        );
        assert_eq!(
            pending(&Why::InputsChanged(Some(InputChange {
                kind: InputKind::File,
                name: "Pulumi.yaml".into(),
                how: Change::Changed,
                more: 0,
            }))),
            "its file `Pulumi.yaml` changed since its last up"
        );
        // A project's own stack file is told apart from the shared one; several changes counted.
        assert_eq!(
            input(&InputChange {
                kind: InputKind::File,
                name: "Pulumi.dev.yaml".into(),
                how: Change::Added,
                more: 2,
            }),
            "its own stack file `Pulumi.dev.yaml`, not config/pulumi's, added, and 2 more"
        );
    }
}
