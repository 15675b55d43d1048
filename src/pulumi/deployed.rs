//! What the backend says about a project outside the plan (`up --only`): its stack outputs,
//! read through the same engine, environment and passphrase as a run, are the proof that its
//! last `up` succeeded.

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use super::Pulumi;
use crate::exec::{Control, Failure, Job, Outputs};
use crate::plan::Operation;
use crate::provider::Project;

/// What the backend holds for one project's stack.
#[derive(Debug)]
pub(crate) enum Deployed {
    /// The backend has no such stack.
    NoStack,
    /// The stack and its outputs (empty for a stack that never had a successful `up`).
    Outputs(Outputs),
}

impl Pulumi {
    /// Reads `project`'s stack outputs from the backend (values in memory only), or says that
    /// its stack does not exist. `Err`: `pulumi` itself failed, with its words.
    pub(crate) async fn deployed(&self, project: &Project) -> Result<Deployed, Failure> {
        let job = Job {
            project: project.clone(),
            operation: Operation::Up,
            upstream: BTreeMap::new(),
        };
        // The read prints nothing anyone sees: its lines go nowhere.
        let (events, _discarded) = tokio::sync::mpsc::unbounded_channel();
        let control = Control {
            events,
            interrupt: CancellationToken::new(),
            terminate: CancellationToken::new(),
            kill: CancellationToken::new(),
        };
        // No operation ran: no event log tells which outputs are secret.
        match self.outputs(&job, &control, &super::events::EventLog::default()).await {
            Ok(outputs) => Ok(Deployed::Outputs(outputs)),
            Err(end) => {
                let error = end.error.unwrap_or_else(|| Failure::said("it failed"));
                if error.cause_says(|l| super::messages::says(l, super::messages::Message::NoStack)) {
                    Ok(Deployed::NoStack)
                } else {
                    Err(error)
                }
            }
        }
    }
}
