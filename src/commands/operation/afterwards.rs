//! What a run says when it is over, to whoever reads it: after a destroy, what it leaves (and at
//! a terminal the offer to prune the kubeconfig); a drift check's or a refresh's verdict; after
//! an up or a preview that went well, where to look next (the app's address among it).

use std::fmt::Write as _;

use super::RunOptions;
use super::confirm::offer_kubeconfig_prune;
use crate::exec::{Because, RunResult, Status};
use crate::plan::{Operation, Plan};
use crate::report;
use crate::report::plain::{drift_verdict, refresh_verdict};
use crate::settings::{Settings, StackContext};

/// Says it all; the drift check's verdict, which the CI reports carry too.
pub(super) fn say(
    s: &Settings,
    t: &StackContext,
    o: &RunOptions,
    (plan, result): (&Plan<'_>, &RunResult),
) -> Option<String> {
    if o.operation == Operation::Destroy && !o.pulumi.prune_kubeconfig && prune_asked(s, o) {
        offer_kubeconfig_prune(s, t, result);
    }
    if o.operation == Operation::Destroy && !result.failed() && !result.interrupted {
        let left = left_after_destroy(s, t, o, result);
        if !left.is_empty() {
            report::info(&left);
        }
    }
    let verdict = (o.kind().is_drift() && !result.interrupted).then(|| {
        let unrefreshed = o.pulumi.drift.is_some_and(|d| !d.refresh);
        let again = format!(
            "runner drift{} -s {} --refresh",
            crate::settings::provider_flag(&s.ws, &t.provider.name),
            t.stack
        );
        drift_verdict(result, unrefreshed.then_some(again.as_str()))
    });
    if let Some(v) = &verdict {
        report::info(&format!("\n{v}"));
    }
    // After an up that went well: where the app is (in a CI log too), and at a terminal, where
    // to look next.
    let ran = result
        .results
        .iter()
        .any(|(_, f)| !matches!(f.status, crate::exec::Status::Unchanged { .. }));
    if o.operation == Operation::Up && ran && !result.failed() && !result.interrupted {
        // The last project of the run is the one a person came for (the app): its outputs, and
        // the address it made if it made one (MARA ended its run with the app's URL too).
        let last = plan.order.last().map(|&i| plan.name(i)).unwrap_or_default();
        if let Some((key, url)) = address(result, last) {
            report::info(&format!("{last} is at {url} (its output `{key}`)"));
        }
        if s.interactive && o.report.is_none() {
            report::info(&format!(
                "Next: `runner output {last} -s {0}` shows what it made; `runner status -s {0}` says what is deployed \
                 and why; `runner report -s {0}` draws this run as one HTML file.",
                t.stack
            ));
        }
    }
    // What a look that found changes leaves to do.
    let would_change = result
        .results
        .iter()
        .any(|(_, f)| f.status == crate::exec::Status::Succeeded && crate::exec::would_change(&f.changes));
    if o.operation == Operation::Preview && would_change && !result.interrupted && !result.failed() {
        let p = crate::settings::provider_flag(&s.ws, &t.provider.name);
        let up = format!("runner up{p} -s {}", t.stack);
        report::info(&if o.kind().is_drift() {
            format!(
                "Next: `{up}` makes what is deployed match the programs and configuration (it refreshes the drifted projects first), or change their programs or configuration to match what is deployed."
            )
        } else {
            format!("Next: `{up}` makes these changes.")
        });
    }
    if o.operation == Operation::Refresh
        && !result.interrupted
        && let Some(v) = refresh_verdict(result)
    {
        report::info(&format!("\n{v}"));
    }
    verdict
}

/// Whether a destroy asks, after, to remove what `kubeconfig-merge` added: at a terminal,
/// unless `--yes` said not to ask (then what stays is said, with the flag that removes it).
fn prune_asked(s: &Settings, o: &RunOptions) -> bool {
    s.interactive && !o.yes
}

/// What a destroy that went well leaves, as `pulumi destroy` says it of its stack: the stacks
/// themselves, the configuration and stored secrets, the logs; and, where nobody was asked,
/// the kubeconfig's contexts.
fn left_after_destroy(s: &Settings, t: &StackContext, o: &RunOptions, result: &RunResult) -> String {
    // The stack files and logs stay on this machine: nothing a CI job's reader keeps (its
    // checkout goes with it).
    let mut text = if s.ci.is_none() {
        // Only the projects that had a stack left one.
        let had = result
            .results
            .iter()
            .filter(|(_, f)| !matches!(f.status, Status::Unchanged(Because::NoDeployment)))
            .count();
        let stacks = if had == result.results.len() {
            format!("each project's stack `{}`", t.stack)
        } else {
            format!(
                "the stack `{}` of the {} that had one",
                t.stack,
                crate::render::count(had, "project")
            )
        };
        format!(
            "\nLeft as they were: {stacks} (empty now, with its history) in the backend, the stack \
             files with the stored secrets (a later `runner up -s {0}` reuses them without asking) and the logs under \
             {1}. To remove a stack for good: `runner pulumi PROJECT -s {0} -- stack rm`.",
            t.stack,
            s.ws.show(&t.run_dir.stack_dir())
        )
    } else {
        String::new()
    };
    // The workspace stays on the stack just emptied: say so when another one is deployed,
    // and how to go back to it.
    if s.ci.is_none() && s.workspace_stack().as_deref() == Some(t.stack.as_str()) {
        let p = crate::settings::provider_flag(&s.ws, &t.provider.name);
        text.push_str(&still_on(&t.stack, &s.deployed_stacks_besides(&t.stack), &p).unwrap_or_default());
    }
    let kept = super::confirm::merged_and_destroyed(t, result);
    if !o.pulumi.prune_kubeconfig && !prune_asked(s, o) && !kept.is_empty() {
        let _ = write!(text, "\n{}", super::confirm::kubeconfig_kept(t, &kept));
    }
    text
}

/// After a destroy of the workspace's stack while `others` are deployed: that the workspace
/// stays on it, and the command that goes back to the first of them.
fn still_on(stack: &str, others: &[String], p: &str) -> Option<String> {
    let back = others.first()?;
    let deployed = match others {
        [one] => format!("stack `{one}` is deployed"),
        many => format!(
            "stacks {} are deployed",
            many.iter().map(|o| format!("`{o}`")).collect::<Vec<_>>().join(", ")
        ),
    };
    Some(format!(
        "\nThe workspace's stack is still `{stack}`; {deployed}: `runner validate{p} -s {back} --switch-stack` \
         makes `{back}` the workspace's stack again."
    ))
}

/// A plain output of `project` in this run whose name ends in `_url` (`application_url`), as
/// it may be shown: never a secret one, its text made visible (an output is the program's).
fn address(result: &RunResult, project: &str) -> Option<(String, String)> {
    let outputs = result
        .results
        .iter()
        .find(|(name, _)| name == project)?
        .1
        .outputs
        .as_ref()?;
    outputs.values.iter().find_map(|(key, value)| {
        let url = value
            .as_str()
            .filter(|_| key.ends_with("_url") && !outputs.secret.contains(key))?;
        Some((
            crate::report::text::visible(key).into_owned(),
            crate::report::text::visible(url).into_owned(),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{Finished, Outputs, Status};

    /// A project that ran, its outputs as `stack output --json --show-secrets` and `stack output
    /// --json` read them.
    fn ran(values: &serde_json::Value, redacted: &serde_json::Value) -> RunResult {
        let mut f = Finished::settled(Status::Succeeded, None);
        f.outputs = Some(Outputs::from_pair(
            values.as_object().unwrap().clone(),
            redacted.as_object().unwrap(),
        ));
        RunResult {
            results: vec![("app".to_string(), f)],
            interrupted: false,
        }
    }

    #[test]
    fn the_address_shown_is_a_plain_url_output_made_visible_and_never_a_secret() {
        // A program's output is the program's text: an escape in it is shown, not obeyed.
        let hostile = "http://x/\u{1b}]0;owned\u{7}";
        let plain = serde_json::json!({"application_url": hostile, "count": 3});
        let r = ran(&plain, &plain);
        let (key, url) = address(&r, "app").unwrap();
        assert_eq!(key, "application_url");
        assert!(!url.contains('\u{1b}') && !url.contains('\u{7}'), "{url:?}");
        assert!(url.starts_with("http://x/"), "{url:?}");
        // A secret one (`[secret]` where it is shown) is never the address.
        let r = ran(
            &serde_json::json!({"db_url": "postgres://u:pw@db/x"}),
            &serde_json::json!({"db_url": "[secret]"}),
        );
        assert_eq!(address(&r, "app"), None);
        assert_eq!(address(&r, "other"), None);
    }
}
