//! How many `pulumi` processes a run starts per project (each costs about a second with the
//! real CLI): at most 3 on a first `up` (the stack's creation, the operation, one outputs read),
//! at most 2 on a repeat (no `stack select` for a stack the run state knows), and no outputs
//! read for a project none of whose outputs is secret (the operation's event log holds them
//! whole), counted from the stand-in's call log.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::support::Ws;

/// The `pulumi` commands each project's directory saw, as `stack select`, `up`, `stack output`…
/// (storing secrets, `config set`, is not a start of the project's own).
fn starts(ws: &Ws) -> BTreeMap<String, Vec<String>> {
    let mut by_dir: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in ws.invocations() {
        let argv: Vec<&str> = i.argv.iter().map(String::as_str).collect();
        if argv[0] == "config" {
            continue;
        }
        let words = if argv[0] == "stack" { 2 } else { 1 };
        let dir = Path::new(i.cwd.to_str().unwrap());
        let dir = dir.strip_prefix(ws.path().canonicalize().unwrap()).unwrap_or(dir);
        by_dir
            .entry(dir.display().to_string())
            .or_default()
            .push(argv[..words].join(" "));
    }
    by_dir
}

fn summary_outputs(ws: &Ws, project: &str) -> Value {
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/last-run.json")).unwrap()).unwrap();
    crate::support::project(&s, project)["outputs"].clone()
}

#[test]
fn a_first_up_starts_at_most_3_pulumi_processes_per_project_and_a_repeat_at_most_2() {
    let ws = Ws::configured("aws");
    ws.up("aws", &[], &[]).expect(0);
    let first = starts(&ws);
    assert_eq!(first.len(), 16, "{first:#?}");
    for (dir, calls) in &first {
        assert!(calls.len() <= 3, "{dir}: {calls:?}");
        assert_eq!(
            calls.iter().filter(|c| *c == "stack select").count(),
            1,
            "{dir}: {calls:?}"
        );
        assert!(
            calls.iter().filter(|c| *c == "stack output").count() <= 1,
            "{dir}: {calls:?}"
        );
    }
    // The secrets store's stack was created while storing the secrets, before the run: the
    // run did not select it again (its outputs are read: the stored values are a secret output).
    let store = &first["projects/services/secrets"];
    assert_eq!(store, &["stack select", "up", "stack output"], "{store:?}");
    // eks has a secret output (its kubeconfig): one read; vpc has none: the log is enough.
    assert_eq!(first["projects/cluster/eks"], ["stack select", "up", "stack output"]);
    assert_eq!(first["projects/infra/vpc"], ["stack select", "up"]);
    assert_eq!(
        summary_outputs(&ws, "vpc")["azs"][0],
        "us-east-1a",
        "outputs from the event log"
    );

    ws.clear_invocations();
    let again = ws.up("aws", &["--fresh"], &[]).expect(0);
    let repeat = starts(&ws);
    assert_eq!(repeat.len(), 16, "{repeat:#?}");
    for (dir, calls) in &repeat {
        assert!(calls == &["up", "stack output"] || calls == &["up"], "{dir}: {calls:?}");
    }
    assert_eq!(repeat["projects/cluster/eks"], ["up", "stack output"]);
    assert_eq!(repeat["projects/infra/vpc"], ["up"]);
    // One read of the outputs still tells the secret ones from the others.
    let eks = summary_outputs(&ws, "eks");
    assert_eq!(eks["cluster_name"], "eks-dev");
    assert_eq!(eks["kubeconfig"], "[secret]");
    assert!(!again.stdout.contains("placeholder-token-dev") && !again.stderr.contains("placeholder-token-dev"));

    // A destroy of what the runner deployed needs no select either.
    ws.clear_invocations();
    ws.exec(
        &["destroy", "-p", "aws", "-s", "dev", "--target", "sirius", "--yes"],
        &[],
    )
    .expect(0);
    assert_eq!(starts(&ws).into_values().collect::<Vec<_>>(), [["destroy"]]);
}

#[test]
fn a_stack_the_run_state_knows_but_the_backend_lost_is_created_again() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    // Someone removed the stack from the backend behind the runner's back.
    let stacks = ws.path().join(".pulumi-state/.pulumi/stacks/vpc");
    assert!(stacks.join("dev.json").exists());
    std::fs::remove_dir_all(&stacks).unwrap();
    ws.clear_invocations();
    let run = ws.up("aws", &["--target", "vpc", "--fresh"], &[]).expect(0);
    assert_eq!(
        starts(&ws)["projects/infra/vpc"],
        ["up", "stack select", "up"],
        "{}",
        run.stderr
    );
    assert!(stacks.join("dev.json").exists(), "the stack was created again");
    assert!(run.stderr.contains("1 succeeded"), "{}", run.stderr);
}
