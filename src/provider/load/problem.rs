//! Wording: each problem the stages find as a diagnostic at its file, line and column, with a
//! short label under the code and the fix.

use std::collections::HashMap;

use toml::Spanned;

use super::Loader;
use crate::diagnostic::FileDiagnostic;
use crate::graph::{GraphError, Origin};

impl Loader<'_> {
    pub(super) fn problem<T>(
        &mut self,
        file: usize,
        span: &Spanned<T>,
        message: impl Into<String>,
        label: &str,
        help: impl Into<Option<String>>,
    ) {
        let d = FileDiagnostic::new(&self.files[file], span.span(), message, label, help.into());
        self.problems.push(d);
    }

    pub(super) fn at(&self, origin: Origin) -> String {
        self.files[origin.file].location(origin.start)
    }

    pub(super) fn graph_problem(&mut self, e: &GraphError, excluded: &HashMap<String, Origin>) {
        let (origin, label, help) = match e {
            GraphError::Duplicate { first, second, .. } => (
                *second,
                "declared again here",
                format!(
                    "it is first declared at {}; project names are Pulumi project names and must be unique, or their stacks collide",
                    self.at(*first)
                ),
            ),
            GraphError::UnknownNeed {
                need,
                origin,
                suggestion,
                ..
            } => {
                let help = if let Some(ex) = excluded.get(need) {
                    format!(
                        "`{need}` is excluded at {}; remove this need with `remove_needs` in a [rewire] table",
                        self.at(*ex)
                    )
                } else if let Some(s) = suggestion {
                    format!("did you mean `{s}`?")
                } else {
                    format!("declare a project named `{need}`, or remove it from the list")
                };
                (*origin, "unknown project", help)
            }
            GraphError::SelfNeed { project, origin } => {
                (*origin, "itself", format!("remove `{project}` from its own needs"))
            }
            GraphError::RepeatedNeed { need, origin, .. } => (
                *origin,
                "repeated",
                format!("list `{need}` once, in `needs` or in `after`"),
            ),
            GraphError::EstimateOverflow { origin, .. } => (
                *origin,
                "the chain ends here",
                "give `estimate` as the expected seconds of one run of each project (600 for ten minutes)".to_string(),
            ),
            GraphError::Cycle { origin, .. } => (
                *origin,
                "this need starts the cycle",
                "a project cannot wait for itself: remove or reverse one of the needs along the cycle".to_string(),
            ),
        };
        let d = FileDiagnostic::new(
            &self.files[origin.file],
            origin.start..origin.end,
            e.to_string(),
            label,
            Some(help),
        );
        self.problems.push(d);
    }
}
