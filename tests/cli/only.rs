//! `up --only X` (and `destroy --only X`) through the binary: X runs alone, what it waits for is
//! proven done in the backend first (refused with every unproven need otherwise), and it runs
//! with the same environment, configuration, outputs passing and hooks as a full run.

use serde_json::Value;

use crate::support::{Ws, ran};

#[test]
fn only_refuses_until_its_needs_are_deployed_then_runs_alone_with_their_outputs() {
    let ws = Ws::configured("aws");
    // A hook that records what it got, as in a full run.
    ws.eks_hook(
        "record.sh",
        "#!/bin/sh\nset -e\nout=\"$MARA_WORKSPACE/hook-record.txt\"\n\
         echo \"project=$MARA_PROJECT cluster_name=$MARA_OUTPUT_CLUSTER_NAME\" > \"$out\"\n\
         cat >> \"$out\"\n",
    );

    // Nothing deployed: eks needs vpc and iam; both are named, with the fix, and nothing runs.
    refused(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--only", "eks"],
        "only_refused_for_its_needs",
    );
    assert!(ran(&ws, "up").is_empty(), "nothing ran: {:?}", ran(&ws, "up"));

    // Ordering-only needs count too: sirius runs after logagent, certmgr, prometheus, observability.
    refused(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--only", "sirius"],
        "only_refused_for_what_it_runs_after",
    );

    // Its needs alone, one job each (they need nothing), then eks alone.
    ws.up("aws", &["--only", "vpc"], &[]).expect(0);
    ws.up("aws", &["--only", "iam"], &[]).expect(0);
    assert_eq!(ran(&ws, "up"), ["vpc", "iam"]);
    ws.clear_invocations();
    let run = ws.up("aws", &["--only", "eks"], &[]).expect(0);
    assert_eq!(ran(&ws, "up"), ["eks"], "{}", run.stderr);
    // The backend reads that prove its needs are said before they are made; and the prediction
    // says they come first, not priced.
    crate::snapshot!(
        ws.path(),
        "only_reads_its_needs_outputs",
        crate::support::lines_with(&run.stderr, "--only eks: ")
    );
    crate::snapshot!(
        ws.path(),
        "only_prediction",
        crate::support::lines_with(&run.stderr, "(from the provider's estimates)")
    );

    // The same configuration and environment as a full run: the shared stack file, the backend.
    let up = ws.invocations().into_iter().find(|i| i.command() == "up").unwrap();
    let argv: Vec<&str> = up.argv.iter().map(String::as_str).collect();
    let config = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    assert!(
        argv.windows(2)
            .any(|w| w == ["--config-file", config.to_str().unwrap()]),
        "{argv:?}"
    );
    let backend = format!("file://{}", ws.path().join(".pulumi-state").display());
    assert_eq!(up.env["PULUMI_BACKEND_URL"], backend.as_str());

    // Its hooks ran with its outputs and its needs' outputs, read from the backend.
    let record = std::fs::read_to_string(ws.path().join("hook-record.txt")).unwrap();
    assert!(record.starts_with("project=eks cluster_name=eks-dev\n"), "{record}");
    let stdin: Value = serde_json::from_str(record.lines().skip(1).collect::<Vec<_>>().join("\n").as_str()).unwrap();
    let upstream = stdin["upstream"].as_object().unwrap();
    assert_eq!(
        upstream.keys().map(String::as_str).collect::<Vec<_>>(),
        ["iam", "vpc"],
        "{stdin}"
    );
    assert!(upstream["vpc"].get("vpc").is_some(), "{stdin}");
    assert!(
        run.stdout.contains("Added new context") || run.stderr.contains("context"),
        "kubeconfig-merge ran"
    );

    // The summary and the closing table name it alone.
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/last-run.json")).unwrap()).unwrap();
    assert_eq!(crate::support::names(&summary), ["eks"]);
}

#[test]
fn destroy_only_refuses_while_a_dependent_is_deployed() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "kubeconfig"], &[]).expect(0);
    refused(
        &ws,
        &["destroy", "-p", "aws", "-s", "dev", "--only", "eks", "--yes"],
        "destroy_only_refused_while_a_dependent_is_deployed",
    );
    ws.clear_invocations();
    ws.exec(
        &["destroy", "-p", "aws", "-s", "dev", "--only", "kubeconfig", "--yes"],
        &[],
    )
    .expect(0);
    ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--only", "eks", "--yes"], &[])
        .expect(0);
    assert_eq!(ran(&ws, "destroy"), ["kubeconfig", "eks"]);
}

#[test]
fn only_takes_one_known_project_and_not_with_target() {
    let ws = Ws::configured("aws");
    refused(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--only", "ekz"],
        "only_of_an_unknown_project",
    );
    refused(
        &ws,
        &["up", "-p", "aws", "-s", "dev", "--only", "eks", "--target", "vpc"],
        "only_with_target",
    );
}

/// `runner ARGS` is refused before anything runs (exit 2), saying what `name`'s snapshot holds.
#[track_caller]
fn refused(ws: &Ws, args: &[&str], name: &str) {
    let run = ws.exec(args, &[]).expect(2);
    crate::snapshot!(ws.path(), name, run.stderr);
}

/// A fresh checkout (a CI job) knows nothing of what is deployed: a destroy there runs what it
/// names, not settled as "never deployed" by a run state that is merely empty; once a destroy
/// has been measured, it is predicted to run.
#[test]
fn a_destroy_from_a_fresh_checkout_is_predicted_to_run() {
    let ws = crate::support::Ws::configured("aws");
    let destroy_vpc = || {
        ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--only", "vpc", "--yes"], &[])
            .expect(0)
    };
    ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    destroy_vpc();
    ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    // A fresh checkout, but for what past runs took (a CI cache keeps it).
    let durations = std::fs::read(ws.path().join(".runner/dev/durations.json")).unwrap();
    std::fs::remove_dir_all(ws.path().join(".runner")).unwrap();
    std::fs::create_dir_all(ws.path().join(".runner/dev")).unwrap();
    std::fs::write(ws.path().join(".runner/dev/durations.json"), durations).unwrap();
    let destroy = destroy_vpc();
    // Predicted: `for 1 of 1 project (…)`; and it ran: `1 succeeded`.
    crate::snapshot!(
        ws.path(),
        "destroy_from_a_fresh_checkout_predicted",
        crate::support::lines_with(&destroy.stderr, " for 1 of 1 project (")
    );
    let (table, settings) = crate::support::closing_table(&destroy.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_destroy_from_a_fresh_checkout", table));
}

#[test]
fn only_and_a_full_up_keep_one_fingerprint_so_neither_reruns_what_the_other_ran() {
    let ws = Ws::configured("aws");
    ws.up("aws", &[], &[]).expect(0);
    ws.clear_invocations();
    // Nothing changed: the project alone is as unchanged as in a full run.
    let only = ws.up("aws", &["--only", "eks", "--yes"], &[]).expect(0);
    assert!(ran(&ws, "up").is_empty(), "{}", only.stderr);
    let (table, settings) = crate::support::closing_table(&only.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_only_unchanged", table));
    // Run it anyway: the next full up and status see nothing to do (the cycle of N9).
    ws.up("aws", &["--only", "eks", "--fresh", "--yes"], &[]).expect(0);
    assert_eq!(ran(&ws, "up"), ["eks"]);
    let status = ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    assert!(status.stdout.contains("An up would run nothing"), "{}", status.stdout);
    ws.clear_invocations();
    let full = ws.up("aws", &[], &[]).expect(0);
    assert!(ran(&ws, "up").is_empty(), "{}", full.stderr);
    // A need run alone that gave the same outputs leaves what reads them unchanged.
    ws.up("aws", &["--only", "vpc", "--fresh", "--yes"], &[]).expect(0);
    let status = ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    assert!(status.stdout.contains("An up would run nothing"), "{}", status.stdout);
}
