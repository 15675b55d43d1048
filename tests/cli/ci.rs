//! The runner as a CI step: the variables it reads and sets (the `MARA_` prefix, the old
//! `RUNNER_` names for one release, the CI's own `RUNNER_*` left alone), GitHub Actions and
//! GitLab CI output, `JUnit`, the warning about a backend a CI job loses.

use crate::support::{SECRETS, Ws};

/// A hook script that records the variables it sees into the workspace.
fn recording_hook(ws: &Ws, body: &str) {
    ws.write("scripts/record.sh", &format!("#!/bin/sh\nset -e\n{body}\n"));
    std::fs::set_permissions(
        ws.path().join("scripts/record.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    ws.edit(
        "providers/aws.toml",
        r#"on_success = ["kubeconfig-merge"]"#,
        r#"on_success = ["kubeconfig-merge", "scripts/record.sh"]"#,
    );
}

#[test]
fn a_hook_sees_the_cis_own_runner_variables_unchanged() {
    let ws = Ws::configured("aws");
    recording_hook(
        &ws,
        "echo \"workspace=$MARA_WORKSPACE ci_workspace=$RUNNER_WORKSPACE temp=$RUNNER_TEMP stack=$MARA_STACK\" > \"$MARA_WORKSPACE/hook.txt\"",
    );
    let run = ws
        .exec(
            &["up", "-p", "aws", "-s", "dev", "--target", "eks"],
            &[
                ("CI", "true"),
                ("GITHUB_ACTIONS", "true"),
                ("RUNNER_WORKSPACE", "/home/runner/work/platform"),
                ("RUNNER_TEMP", "/home/runner/work/_temp"),
            ],
        )
        .expect(0);
    let record = std::fs::read_to_string(ws.path().join("hook.txt")).unwrap();
    assert_eq!(
        record.trim(),
        format!(
            "workspace={} ci_workspace=/home/runner/work/platform temp=/home/runner/work/_temp stack=dev",
            ws.path().display()
        )
    );
    assert!(
        !run.stderr.contains("old name"),
        "a hook reading only MARA_ names and the CI's own is not warned about: {}",
        run.stderr
    );
}

#[test]
fn the_old_runner_names_still_work_for_one_release_with_a_warning() {
    let ws = Ws::configured("aws");
    // The stack file lacks a key that comes from RUNNER_CONFIG_…, and the secrets come as
    // RUNNER_SECRET_… (as a CI job set up before the rename gives them).
    ws.edit("config/pulumi/Pulumi.dev.yaml", "  eks:max_size: 12\n", "");
    recording_hook(
        &ws,
        "echo \"project=$RUNNER_PROJECT stack=$RUNNER_STACK cluster=$RUNNER_OUTPUT_CLUSTER_NAME\" > \"$MARA_WORKSPACE/hook.txt\"",
    );
    let mut env: Vec<(String, String)> = SECRETS
        .iter()
        .map(|(k, v)| (k.replace("MARA_", "RUNNER_"), (*v).to_string()))
        .collect();
    env.push(("RUNNER_CONFIG_EKS_MAX_SIZE".into(), "7".into()));
    env.push(("CI".into(), "true".into()));
    let mut cmd = ws.command(&["up", "-p", "aws", "-s", "dev"], &[]);
    for (k, _) in SECRETS {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("variables are read under their old names, for this release only: rename them:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("RUNNER_CONFIG_EKS_MAX_SIZE → MARA_CONFIG_EKS_MAX_SIZE")
            && stderr.contains("RUNNER_SECRET_SIRIUS_LEDGER_PWD → MARA_SECRET_SIRIUS_LEDGER_PWD"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("old names, for this release only").count(),
        1,
        "one warning per run: {stderr}"
    );
    let config = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    assert!(config.contains("eks:max_size: 7"), "{config}");
    let record = std::fs::read_to_string(ws.path().join("hook.txt")).unwrap();
    assert_eq!(record.trim(), "project=eks stack=dev cluster=eks-dev");
    assert!(
        stderr.contains(
            "hook scripts/record.sh reads variables by their old names, set for this release only where the environment has none of that name (RUNNER_* belongs to the CI): rename RUNNER_OUTPUT_CLUSTER_NAME → MARA_OUTPUT_CLUSTER_NAME, RUNNER_PROJECT → MARA_PROJECT, RUNNER_STACK → MARA_STACK"
        ),
        "{stderr}"
    );
}
