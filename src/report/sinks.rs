//! Where a run's events go, each to every sink in one place: the live view at a terminal (else
//! plain lines), the projects' logs, and the run state's recorder. A recorder that cannot write
//! is said once, and the run ends unrecorded rather than failed.

use crate::exec::{Event, RunResult};
use crate::plan::Plan;
use crate::runstate::Recorder;

use super::live::Live;
use super::logs::Logs;
use super::plain::Plain;

pub(crate) struct Sinks<'p> {
    /// The closing table is always `plain`'s; it shows the run too when there is no live view.
    plain: Plain,
    live: Option<Live<'p>>,
    logs: Logs,
    recorder: Recorder,
    unrecorded: bool,
}

/// How the run state's file is named to a person, for the warning when it cannot be written.
pub(crate) struct StateFile(pub(crate) String);

impl<'p> Sinks<'p> {
    pub(crate) fn new(plain: Plain, live: Option<Live<'p>>, logs: Logs, recorder: Recorder) -> Self {
        Sinks {
            plain,
            live,
            logs,
            recorder,
            unrecorded: false,
        }
    }

    pub(crate) fn event(&mut self, ev: &Event) {
        match &mut self.live {
            Some(l) => l.event(ev),
            None => self.plain.event(ev),
        }
        self.logs.event(ev);
        if let Err(e) = self.recorder.record(ev)
            && !self.unrecorded
        {
            self.unrecorded = true;
            super::warning(&format!("cannot write the run state: {e}"));
        }
    }

    /// The run ended: the run state is closed, the live view cleared, the closing table
    /// printed. `false` when the run state could not be written.
    pub(crate) fn finish(
        self,
        (plan, result): (&Plan<'_>, &RunResult),
        (total, stack): (f64, &str),
        log: &dyn Fn(&str) -> String,
        state: &StateFile,
    ) -> bool {
        let mut recorded = !self.unrecorded;
        if let Err(e) = self.recorder.close() {
            recorded = false;
            super::warning(&format!("cannot write the run state {}: {e}", state.0));
        }
        if let Some(l) = &self.live {
            l.finish();
        }
        self.plain.finish(plan, result, total, stack, log);
        recorded
    }
}
