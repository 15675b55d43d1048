//! Precise reruns: a project's digest covers only the inputs it may read, so a stack-file key
//! in one project's namespace reruns that project (and what reads its changed outputs), not
//! the graph; `status` and the run's line before it starts name the input that changed.

use crate::support::Ws;

/// The kubeconfig graph, deployed, then a key added in logstore's namespace of its stack file.
fn deployed_then_a_logstore_key_added() -> Ws {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    let config = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &format!("{config}  logstore:retention: 30d\n"),
    );
    ws
}

#[test]
fn a_key_added_in_one_projects_namespace_reruns_that_project_and_is_named() {
    let ws = deployed_then_a_logstore_key_added();

    let status = ws
        .exec(&["status", "-s", "dev", "--format", "json"], &[])
        .expect(0)
        .json();
    let why = |name: &str| {
        let p = crate::support::project(&status, name);
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
        (
            true,
            "after logstore, which runs and may change its outputs".to_string()
        )
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
    crate::support::project(&status, project)["up"]["runs"]
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

/// Another stack of the same workspace (a `ci` stack used once): its stack files beside the
/// programs (the secrets store's `Pulumi.ci.yaml`) change nothing for stack `dev`, whose next
/// `up` runs nothing; `dev`'s own stack file beside a program still counts.
#[test]
fn another_stacks_files_make_this_stack_run_nothing() {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    ws.write(
        "projects/services/secrets/Pulumi.ci.yaml",
        "encryptionsalt: v1:abc\nconfig:\n  prometheus:adminpass:\n    secure: v1:def\n",
    );
    ws.write("projects/services/logstore/Pulumi.ci.yaml", "config: {}\n");
    for project in ["secrets", "logstore"] {
        assert!(!runs(&ws, project), "{project}: stack ci's file made stack dev run it");
    }
    let run = ws.up("kubeconfig", &[], &[]).expect(0);
    assert!(
        run.stderr.contains("nothing to do") || !run.stderr.contains("▶"),
        "{}",
        run.stderr
    );
    ws.write("projects/services/logstore/Pulumi.dev.yaml", "config: {}\n");
    assert!(runs(&ws, "logstore"), "its own stack's file beside it");
}

/// An `up` that runs nothing (every project unchanged) takes nothing away: `.runner/last-run.json`
/// is its record (what scripts read after each run), and `report` draws the stack's last run
/// that ran something, its timeline and durations, saying which, not "0 projects ran".
#[test]
fn a_run_that_runs_nothing_keeps_the_record_of_the_last_real_one() {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    let record = |rel: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(rel)).unwrap()).unwrap()
    };
    let real = record(".runner/last-run.json");
    assert_eq!(record(".runner/dev/last-ran.json"), real);
    ws.up("kubeconfig", &[], &[]).expect(0);
    let noop = record(".runner/last-run.json");
    assert_ne!(noop["started"], real["started"]);
    assert_eq!(record(".runner/dev/last-ran.json"), real, "the real run's record stays");
    let report = ws.exec(&["report", "-s", "dev", "-o", "-"], &[]).expect(0);
    assert!(
        report.stderr.contains(&format!(
            "ran nothing: drawn is the last one that ran something (up started {})",
            real["started"].as_str().unwrap()
        )),
        "{}",
        report.stderr
    );
    assert!(
        report.stdout.contains("10 of 10 projects ran"),
        "the report draws the real run"
    );
}

/// The prediction before an up prices the projects that run only if the outputs they read
/// change apart: the least (they do not run) and the most (they do), never the most alone.
#[test]
fn the_prediction_gives_the_least_and_the_most_when_some_projects_may_not_run() {
    let ws = deployed_then_a_logstore_key_added();
    let run = ws.up("kubeconfig", &[], &[]).expect(0);
    let line = crate::support::message(&run.stderr, "Predicted: ");
    // logstore surely runs (`for 1 of`); the two that read its outputs only if they change
    // (`up to …, if the 2 that read their outputs run too`).
    crate::snapshot!(ws.path(), "prediction_of_the_least_and_the_most", line);
}

/// A project folder of thousands of files (data a program ships, say) and a chain of links that
/// each lead twice to the next: the run state stays small enough to be written and read back,
/// every later command works, a change to one of the files is seen and said, and the links are
/// walked once per directory.
#[test]
fn a_folder_of_many_files_and_doubled_links_leave_every_later_command_working() {
    let ws = Ws::configured("kubeconfig");
    let assets = ws.path().join("projects/services/logstore/assets");
    for d in 0..30 {
        let dir = assets.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(f.to_string()), format!("{d}/{f}")).unwrap();
        }
        if d < 29 {
            std::os::unix::fs::symlink(format!("../d{}", d + 1), dir.join("a")).unwrap();
            std::os::unix::fs::symlink(format!("../d{}", d + 1), dir.join("b")).unwrap();
        }
    }
    ws.up("kubeconfig", &[], &[]).expect(0);
    let state = std::fs::metadata(ws.path().join(".runner/dev/state.json"))
        .unwrap()
        .len();
    assert!(state < 200_000, "the run state is {state} bytes");
    assert!(!runs(&ws, "logstore"), "nothing changed");
    ws.write("projects/services/logstore/assets/d17/42", "changed\n");
    let status = ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    crate::snapshot!(
        ws.path(),
        "status_of_a_folder_of_many_files",
        crate::support::lines_with(&status.stdout, " logstore ")
    );
    ws.up("kubeconfig", &[], &[]).expect(0);
    assert!(!runs(&ws, "logstore"));
}

/// Projects that will run for one reason are named together, the reason said once for each of
/// them (`each:`), never as the last one's alone.
#[test]
fn one_reason_after_several_names_is_each_ones() {
    let ws = Ws::configured("aws");
    ws.up("aws", &[], &[("PULUMI_STANDIN_FAIL", "iam:up,vpc:up,ecr:up")])
        .expect(1);
    let again = ws.up("aws", &[], &[]).expect(0);
    let line = crate::support::message(&again.stderr, "up: ");
    // `iam, vpc, ecr (each: its last up failed)`, not `ecr (its last up failed)`.
    crate::snapshot!(ws.path(), "one_reason_for_several", line);
}

/// The backend the stacks live in is an input wherever it is set: after runs on the runner's
/// own file backend, one set in the shell is a changed backend (not a variable "removed").
#[test]
fn a_backend_set_in_the_shell_is_a_changed_backend_not_a_removed_variable() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let elsewhere = ws.path().join("elsewhere-state");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let url = format!("file://{}", elsewhere.display());
    let run = ws
        .up("aws", &["--target", "iam"], &[("PULUMI_BACKEND_URL", &url)])
        .expect(0);
    assert!(
        run.stderr
            .contains("environment variable `PULUMI_BACKEND_URL` changed since its last up")
            && !run.stderr.contains("removed since"),
        "{}",
        run.stderr
    );
}
