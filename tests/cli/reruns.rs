//! Precise reruns: a project's digest covers only the inputs it may read, so a stack-file key
//! in one project's namespace reruns that project (and what reads its changed outputs), not
//! the graph; `status` and the run's line before it starts name the input that changed.

use crate::support::Ws;

#[test]
fn a_key_added_in_one_projects_namespace_reruns_that_project_and_is_named() {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    let config = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &format!("{config}  logstore:retention: 30d\n"),
    );

    let status = ws
        .exec(&["status", "-s", "dev", "--format", "json"], &[])
        .expect(0)
        .json();
    let why = |name: &str| {
        let p = status["projects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap();
        (
            p["up"]["runs"].as_bool().unwrap(),
            p["up"]["why"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        why("logstore"),
        (
            true,
            "stack file key `logstore:retention` added since its last up".to_string()
        )
    );
    assert_eq!(why("kubeconfig"), (false, "unchanged since its last up".to_string()));
    assert_eq!(why("certmgr"), (false, "unchanged since its last up".to_string()));
    assert_eq!(
        why("logagent"),
        (true, "after logstore, which runs (its outputs may change)".to_string())
    );

    let run = ws.up("kubeconfig", &[], &[]).expect(0);
    assert!(
        run.stderr.contains(
            "up: 1 of 10 projects will run: logstore (stack file key `logstore:retention` added since its last up); "
        ),
        "{}",
        run.stderr
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/last-run.json")).unwrap()).unwrap();
    let ran: Vec<&str> = summary["projects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "succeeded")
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    // Its outputs did not change: what reads them stays.
    assert_eq!(ran, ["logstore"], "{}", run.stderr);
}

/// Whether `project`'s next `up` runs, as `status --format json` says.
fn runs(ws: &Ws, project: &str) -> bool {
    let status = ws
        .exec(&["status", "-s", "dev", "--format", "json"], &[])
        .expect(0)
        .json();
    status["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == project)
        .unwrap()["up"]["runs"]
        .as_bool()
        .unwrap()
}

#[test]
fn a_programs_own_key_counts_whatever_its_name_line_looks_like() {
    // pulumi reads each of these as the program `logstore`: its own keys must count.
    for name_line in [
        "name: logstore # the log store",
        "\"name\": logstore",
        "\u{feff}name: logstore",
    ] {
        let ws = Ws::configured("kubeconfig");
        ws.edit("projects/services/logstore/Pulumi.yaml", "name: logstore", name_line);
        ws.up("kubeconfig", &[], &[]).expect(0);
        assert!(!runs(&ws, "logstore"), "{name_line:?}: nothing changed");
        let config = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
        ws.write(
            "config/pulumi/Pulumi.dev.yaml",
            &format!("{config}  logstore:master_replicas: 5\n"),
        );
        assert!(runs(&ws, "logstore"), "{name_line:?}: its own key changed");
    }
}

#[test]
fn a_dotfile_the_program_reads_is_an_input() {
    let ws = Ws::configured("kubeconfig");
    ws.write("projects/services/logstore/.settings", "retain-30\n");
    ws.up("kubeconfig", &[], &[]).expect(0);
    assert!(!runs(&ws, "logstore"));
    ws.write("projects/services/logstore/.settings", "retain-90\n");
    assert!(runs(&ws, "logstore"), "a changed dotfile reruns its project");
    // What tools keep beside a program is no input.
    ws.up("kubeconfig", &[], &[]).expect(0);
    ws.write("projects/services/logstore/.git/HEAD", "ref: refs/heads/main\n");
    assert!(!runs(&ws, "logstore"), ".git is no input");
}
