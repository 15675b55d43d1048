//! Time, learned: each project's past durations weigh the next plan (`show-plan`'s critical
//! path), the live view's ETA and the summary's prediction, recorded beside what happened.

use serde_json::Value;

use crate::support::Ws;
use test_requires::requires;

fn summary(ws: &Ws) -> Value {
    serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/last-run.json")).unwrap()).unwrap()
}

fn schema_valid(doc: &Value) {
    crate::support::assert_valid(doc, "summary.schema.json");
}

#[test]
fn the_second_runs_predicted_makespan_is_within_20_percent_of_its_real_one() {
    let ws = Ws::configured("kubeconfig");
    // A second or more per project, so the runner's own overhead does not decide.
    let delay = [("PULUMI_STANDIN_DELAY_MS", "*=1000")];
    let first = ws.up("kubeconfig", &["--parallel", "4"], &delay).expect(0);
    // Before any run the provider file's estimates (minutes each) are all there is.
    let s = summary(&ws);
    schema_valid(&s);
    let declared = s["predicted_makespan_s"].as_f64().unwrap();
    let first_took = s["duration_seconds"].as_f64().unwrap();
    assert!(declared > 60.0, "{declared}");
    assert!(
        first
            .stderr
            .contains("for 10 of 10 projects (from the provider's estimates)"),
        "{}",
        first.stderr
    );
    let took: Vec<(String, f64)> = s["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["duration_seconds"].as_f64().unwrap(),
            )
        })
        .collect();

    // The second run of every project: each estimate is what the first took, and the whole
    // run's prediction holds within 20 % of the run those durations were learned from (the
    // second run's own time depends on what else the machine does meanwhile).
    let second = ws.up("kubeconfig", &["--parallel", "4", "--fresh"], &delay).expect(0);
    assert!(
        second.stderr.contains("for 10 of 10 projects (learned from past runs)"),
        "{}",
        second.stderr
    );
    let s = summary(&ws);
    schema_valid(&s);
    for (name, secs) in &took {
        let p = crate::support::project(&s, name);
        assert!((p["estimate_s"].as_f64().unwrap() - secs).abs() < 1e-6, "{name}: {p}");
    }
    let predicted = s["predicted_makespan_s"].as_f64().unwrap();
    assert!(
        (predicted - first_took).abs() <= 0.2 * first_took,
        "predicted {predicted}s from a run that took {first_took}s"
    );

    // An up with nothing changed predicts nothing to wait for.
    ws.up("kubeconfig", &[], &[]).expect(0);
    let s = summary(&ws);
    assert_eq!(s["predicted_makespan_s"], 0.0, "{s}");
    assert!(s["projects"].as_array().unwrap().iter().all(|p| p["estimate_s"] == 0.0));

    // show-plan weighs the critical path by what the runs took, and says so.
    let plan = ws.exec(&["show-plan", "-p", "kubeconfig", "-s", "dev"], &[]).expect(0);
    assert!(
        plan.stderr
            .contains("estimates: the up durations of 10 of 10 projects learned from past runs of stack dev"),
        "{}",
        plan.stderr
    );
    let critical = plan.stdout.lines().find(|l| l.starts_with("Critical path")).unwrap();
    assert!(critical.contains("about ") && critical.contains(" s)"), "{critical}");
    // Another provider's plan of the same stack is not weighed with these runs' times.
    let aws = ws.exec(&["show-plan", "-p", "aws", "-s", "dev"], &[]).expect(0);
    assert!(!aws.stderr.contains("learned from past runs"), "{}", aws.stderr);
    assert!(aws.stdout.contains("min)"), "the declared estimates\n{}", aws.stdout);
    let other = ws.exec(&["show-plan", "-p", "kubeconfig", "-s", "qa"], &[]).expect(0);
    assert!(
        other.stdout.contains("min)"),
        "a stack never run: the declared estimates\n{}",
        other.stdout
    );
}

#[requires("script")]
#[test]
fn the_live_view_shows_the_eta_and_what_waits_on_what() {
    if crate::support::tool("script").is_none() {
        return;
    }
    let ws = Ws::configured("aws");
    let delay = ("PULUMI_STANDIN_DELAY_MS", "*=1000");
    ws.up("aws", &["--target", "eks"], &[delay]).expect(0);
    let typescript = ws.path().join("typescript");
    let c = ws.command(
        &["up", "-p", "aws", "-s", "dev", "--target", "eks", "--fresh", "--yes"],
        &[delay, ("TERM", "xterm-256color")],
    );
    let out = crate::support::at_terminal(&c, &typescript)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let screen = crate::run::strip_escapes(&String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()));
    assert!(screen.contains("waiting: eks waits for vpc, iam"), "{screen}");
    assert!(screen.contains(" · ETA "), "the whole run's ETA:\n{screen}");
    // The running projects have their own ETA beside their elapsed time.
    assert!(
        screen
            .lines()
            .any(|l| (l.contains(" vpc ") || l.contains(" iam ")) && l.contains(" ETA ")),
        "{screen}"
    );
}

/// A stack with no runs of its own is predicted from the runs of the workspace's other stack
/// of the same provider, and says so (not from the provider file's guesses, minutes each);
/// once it has run, from its own.
#[test]
fn a_new_stack_is_predicted_from_the_other_stacks_runs() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let dev = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    ws.write("config/pulumi/Pulumi.qa.yaml", &dev);
    let up = ["up", "-p", "aws", "-s", "qa", "--target", "iam", "--switch-stack"];
    let first = ws.exec(&up, &[]).expect(0);
    assert!(
        first.stderr.contains("(learned from stack dev's runs)"),
        "{}",
        first.stderr
    );
    let again = ws.exec(&[&up[..], &["--fresh"]].concat(), &[]).expect(0);
    assert!(again.stderr.contains("(learned from past runs)"), "{}", again.stderr);
}
