//! A project's status as a run tells it, and the words a person reads for every status. A
//! status is how its operation ended (`exec::Outcome`), except that a drift check tells a
//! preview by what it found. The summary, the closing table, GitHub's job summary, `JUnit`, the
//! logs, the HTML report, the timeline and `status` take their words from here.

use crate::plan::RunKind;
use serde::{Deserialize, Serialize};

use crate::exec::{Finished, Outcome, RunResult, Status, would_change};
use crate::runstate::Recorded;

/// What a drift check found in a project, told instead of how its preview ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantArray)]
pub(crate) enum Found {
    #[serde(rename = "drifted")]
    Drifted,
    #[serde(rename = "no drift")]
    NoDrift,
    /// Not deployed: there was nothing to check.
    #[serde(rename = "not checked")]
    NotChecked,
}

/// A project's status as a run tells it (the summary's `status`, spelled as its parts are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Told {
    Found(Found),
    Ended(Outcome),
}

impl Told {
    /// Every status a run tells, in the order its counts list them.
    pub(crate) const LISTED: [Told; 11] = [
        Told::Found(Found::Drifted),
        Told::Found(Found::NoDrift),
        Told::Found(Found::NotChecked),
        Told::Ended(Outcome::Succeeded),
        Told::Ended(Outcome::Unchanged),
        Told::Ended(Outcome::Failed),
        Told::Ended(Outcome::TimedOut),
        Told::Ended(Outcome::Interrupted),
        Told::Ended(Outcome::Skipped),
        Told::Ended(Outcome::Waits),
        Told::Ended(Outcome::NotStarted),
    ];

    /// How a project's end is told: its outcome, but in a drift check a preview that found
    /// changes `drifted` and one that found none `no drift` (both ran fine: neither
    /// "succeeded"), and one with nothing deployed `not checked`.
    pub(crate) fn of(f: &Finished, kind: RunKind) -> Self {
        let drift = kind.is_drift();
        match &f.status {
            Status::Succeeded if drift && would_change(&f.changes) => Told::Found(Found::Drifted),
            Status::Succeeded if drift => Told::Found(Found::NoDrift),
            Status::Unchanged(_) if drift => Told::Found(Found::NotChecked),
            other => Told::Ended(other.outcome()),
        }
    }

    /// It ran, and all is well: it succeeded, or its check found no drift.
    pub(crate) fn fine(self) -> bool {
        matches!(self, Told::Ended(Outcome::Succeeded) | Told::Found(Found::NoDrift))
    }
}

/// `3 succeeded, 1 failed`: how many projects ended each way, in a fixed order, the ways none
/// ended left out.
pub(crate) fn counts(result: &RunResult, kind: RunKind) -> String {
    let mut counts = Vec::new();
    for told in Told::LISTED {
        let n = result.results.iter().filter(|(_, f)| Told::of(f, kind) == told).count();
        if n > 0 {
            counts.push(format!("{n} {}", word(told)));
        }
    }
    counts.join(", ")
}

/// A status in words.
pub(crate) fn word(told: Told) -> &'static str {
    match told {
        Told::Found(Found::Drifted) => "drifted",
        Told::Found(Found::NoDrift) => "no drift",
        Told::Found(Found::NotChecked) => "not checked",
        Told::Ended(outcome) => outcome_word(outcome),
    }
}

/// How an operation ended, in words.
pub(crate) fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Succeeded => "succeeded",
        Outcome::Failed => "failed",
        Outcome::TimedOut => "timed out",
        Outcome::Interrupted => "interrupted",
        Outcome::Skipped => "skipped",
        Outcome::Unchanged => "unchanged",
        Outcome::NotStarted => "not started",
        Outcome::Waits => "waits",
    }
}

/// What the run state says of a project's last operation, in words.
pub(crate) fn recorded_word(recorded: Recorded) -> &'static str {
    match recorded {
        Recorded::Running => "running",
        Recorded::CutShort => "cut short",
        Recorded::Ended(outcome) => outcome_word(outcome),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A status added to `Found` or `Outcome` and not to `Told::LISTED` would drop out of every
    /// counts line: each must be listed, once.
    #[test]
    fn every_status_a_run_can_tell_is_listed_once() {
        use strum::VariantArray as _;
        let told = Found::VARIANTS
            .iter()
            .map(|&f| Told::Found(f))
            .chain(Outcome::ALL.iter().map(|&o| Told::Ended(o)));
        for t in told {
            assert_eq!(Told::LISTED.iter().filter(|&&l| l == t).count(), 1, "{t:?}");
        }
        assert_eq!(Told::LISTED.len(), Found::VARIANTS.len() + Outcome::ALL.len());
    }

    /// The summary's `status` and the closing table say a status with the same word.
    #[test]
    fn each_status_is_said_as_the_summary_spells_it() {
        for told in Told::LISTED {
            assert_eq!(serde_json::to_value(told).unwrap(), word(told), "{told:?}");
            let read: Told = serde_json::from_value(word(told).into()).unwrap();
            assert_eq!(read, told);
        }
        for recorded in [Recorded::Running, Recorded::CutShort, Recorded::Ended(Outcome::Waits)] {
            assert_eq!(serde_json::to_value(recorded).unwrap(), recorded_word(recorded));
        }
    }
}
