//! How a project's operation ended: the one status vocabulary the run state, its journal, the
//! run's summary and every view share. Its spelling on disk is its serde name, given here once
//! (the files written before keep reading); the words a person reads are `report`'s.

use serde::{Deserialize, Serialize};

/// How a project's operation ended (or that it ended without running).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, strum::VariantArray)]
pub enum Outcome {
    #[serde(rename = "succeeded")]
    Succeeded,
    #[serde(rename = "failed")]
    Failed,
    #[serde(rename = "timed out")]
    TimedOut,
    #[serde(rename = "interrupted")]
    Interrupted,
    #[serde(rename = "skipped")]
    Skipped,
    #[serde(rename = "unchanged")]
    Unchanged,
    #[serde(rename = "not started")]
    NotStarted,
    #[serde(rename = "waits")]
    Waits,
}

impl Outcome {
    /// Every outcome, in the order they are listed to a person.
    pub const ALL: &'static [Outcome] = <Outcome as strum::VariantArray>::VARIANTS;

    /// It ended without running: unchanged, skipped, not started, waits.
    pub fn settled(self) -> bool {
        matches!(
            self,
            Outcome::Unchanged | Outcome::Skipped | Outcome::NotStarted | Outcome::Waits
        )
    }

    /// It ran and did not succeed.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::TimedOut)
    }
}

/// The outcome as the files spell it (its serde name): for messages about what a file holds.
impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.serialize(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words the run state, the journal and the summary have always written read back.
    #[test]
    fn outcomes_keep_their_spelling_on_disk() {
        let words = [
            "succeeded",
            "failed",
            "timed out",
            "interrupted",
            "skipped",
            "unchanged",
            "not started",
            "waits",
        ];
        for (o, word) in Outcome::ALL.iter().copied().zip(words) {
            assert_eq!(serde_json::to_string(&o).unwrap(), format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<Outcome>(&format!("\"{word}\"")).unwrap(), o);
            assert_eq!(o.to_string(), word);
        }
    }
}
