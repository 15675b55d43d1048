//! How a run stops: a hang-up like Ctrl-C, a grace period before SIGTERM and then SIGKILL for
//! what does not stop, and timeouts that stop a project that runs too long.

use std::time::{Duration, Instant};

use crate::support::Ws;

fn statuses(ws: &Ws) -> serde_json::Value {
    let text = std::fs::read_to_string(ws.path().join(".runner/last-run.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p["status"].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn signal(pid: u32, sig: &str) {
    std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
}

/// Waits until `path` exists (the run got as far as that).
fn wait_for(path: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_hang_up_stops_the_run_as_ctrl_c_does() {
    let ws = Ws::configured("aws");
    let child = ws
        .command(
            &["up", "-p", "aws", "-s", "dev", "--target", "iam"],
            &[("PULUMI_STANDIN_HANG", "iam:up")],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&ws.path().join(".pulumi-state/.pulumi/locks/organization/iam/dev"));
    signal(child.id(), "HUP");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(statuses(&ws)["iam"], "failed");
}

#[test]
fn what_ignores_ctrl_c_gets_sigterm_then_sigkill_after_the_grace_period() {
    let ws = Ws::configured("aws");
    // A hook that ignores SIGINT and SIGTERM: only SIGKILL ends it.
    ws.write(
        "scripts/stubborn.sh",
        "#!/bin/sh\ntrap '' INT TERM\ntouch \"$RUNNER_WORKSPACE/stubborn-started\"\nwhile :; do sleep 1; done\n",
    );
    std::fs::set_permissions(
        ws.path().join("scripts/stubborn.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    ws.edit(
        "providers/aws.toml",
        r#"on_success = ["kubeconfig-merge"]"#,
        r#"on_success = ["kubeconfig-merge", "scripts/stubborn.sh"]"#,
    );
    let child = ws
        .command(
            &["up", "-p", "aws", "-s", "dev", "--target", "eks", "--grace", "1s"],
            &[],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&ws.path().join("stubborn-started"));
    let asked = Instant::now();
    signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("in 1s they get SIGTERM, then SIGKILL"), "{stderr}");
    // Two grace periods, not forever (generous bound: the machine may be busy).
    assert!(asked.elapsed() < Duration::from_secs(20), "took {:?}", asked.elapsed());
}

#[test]
fn a_project_that_runs_too_long_is_stopped_and_ends_timed_out() {
    let ws = Ws::configured("aws");
    let run = ws
        .exec(
            &["up", "-p", "aws", "-s", "dev", "--target", "iam", "--timeout", "1s"],
            &[("PULUMI_STANDIN_HANG", "iam:up")],
        )
        .expect(1);
    assert!(run.stderr.contains("[iam] timed out after"), "{}", run.stderr);
    assert!(
        run.stderr.contains("Failed: iam (up): timed out after 1s"),
        "{}",
        run.stderr
    );
    assert_eq!(statuses(&ws)["iam"], "timed out");

    // The provider file may give a project its own timeout; a bad one is refused.
    ws.edit(
        "providers/aws.toml",
        "name = \"iam\"",
        "name = \"iam\"\ntimeout = \"1s\"",
    );
    ws.exec(
        &["up", "-p", "aws", "-s", "dev", "--target", "iam"],
        &[("PULUMI_STANDIN_HANG", "iam:up")],
    )
    .expect(1);
    assert_eq!(statuses(&ws)["iam"], "timed out");
    ws.edit("providers/aws.toml", "timeout = \"1s\"", "timeout = \"soon\"");
    ws.exec(&["up", "-p", "aws", "-s", "dev", "--target", "iam"], &[])
        .expect(2)
        .stderr_has("`soon` is not a timeout");
}
