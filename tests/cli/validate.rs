//! `runner validate`: every problem at once, each with its fix; exit 3; exit 0 when all is well.

use std::os::unix::fs::PermissionsExt as _;

use crate::support::{Ws, standin_dir};

/// A directory with fake `aws` and `kubectl` (exit 0, or `aws` failing when asked), so the
/// checks do not depend on what this machine has installed.
fn fake_tools(ws: &Ws, aws: bool, aws_fails: bool) -> String {
    let dir = ws.path().join("fake-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let mut tools = vec![("kubectl", "#!/bin/sh\nexit 0\n".to_string())];
    if aws {
        let body = if aws_fails {
            "#!/bin/sh\necho 'Unable to locate credentials. You can configure credentials by running \"aws configure\".' >&2\nexit 253\n"
        } else {
            "#!/bin/sh\necho \"{\\\"Account\\\": \\\"123\\\", \\\"Region\\\": \\\"$AWS_REGION\\\"}\"\n"
        };
        tools.push(("aws", body.to_string()));
    }
    for (name, body) in tools {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    format!("{}:{}:/usr/bin:/bin", standin_dir().display(), dir.display())
}

const GOOD_AWS: &str = "config:\n  kubernetes:infra_type: AWS\n  aws:region: us-east-1\n  aws:profile: dev\n  vpc:azs: [us-east-1a, us-east-1b]\n  eks:k8s_version: '1.31'\n  eks:instance_type: t3.large\n  eks:min_size: 3\n  eks:max_size: 12\n  eks:desired_capacity: 3\n";

#[test]
fn a_complete_workspace_passes() {
    let ws = Ws::reference();
    ws.write("config/pulumi/Pulumi.dev.yaml", GOOD_AWS);
    let path = fake_tools(&ws, true, false);
    let run = ws
        .exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(0);
    assert!(
        run.stderr
            .contains("All configuration is OK: provider aws, stack dev, 16 projects"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_missing_tool_and_token_are_reported_together_and_the_region_takes_its_default() {
    let ws = Ws::reference();
    // One provider that needs all three: the AWS graph with DigitalOcean's token check added.
    let do_check = std::fs::read_to_string(ws.path().join("providers/do.toml")).unwrap();
    let check = &do_check[do_check.find("[[check]]").unwrap()..];
    let aws = std::fs::read_to_string(ws.path().join("providers/aws.toml")).unwrap();
    ws.write("providers/aws.toml", &format!("{aws}\n{check}"));
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &GOOD_AWS.replace("  aws:region: us-east-1\n", ""),
    );
    let path = fake_tools(&ws, false, false);
    let run = ws
        .exec(
            &["validate", "-p", "aws", "-s", "dev"],
            &[
                ("PATH", &path),
                ("AWS_REGION", ""),
                ("AWS_DEFAULT_REGION", ""),
                ("DIGITALOCEAN_TOKEN", ""),
            ],
        )
        .expect(3);
    // The region has a default, which applies without a terminal (it used to be reported as
    // missing, twice: the key and the credential check).
    assert!(!run.stderr.contains("aws:region"), "{}", run.stderr);
    assert!(!run.stderr.contains("AWS region: not set"), "{}", run.stderr);
    for needle in [
        "`aws` is not on PATH (the aws graph needs it)",
        "DigitalOcean API token: not set",
        "fix: set DIGITALOCEAN_TOKEN in the environment",
    ] {
        assert!(run.stderr.contains(needle), "stderr lacks {needle:?}:\n{}", run.stderr);
    }
}

#[test]
fn failing_credentials_the_passphrase_and_a_misnamed_project() {
    let ws = Ws::reference();
    ws.write("config/pulumi/Pulumi.dev.yaml", GOOD_AWS);
    ws.edit(
        "projects/services/logstore/Pulumi.yaml",
        "name: logstore",
        "name: log-store",
    );
    let path = fake_tools(&ws, true, true);
    let mut c = ws.command(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)]);
    c.env_remove("PULUMI_CONFIG_PASSPHRASE");
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    for needle in [
        "AWS credentials: `aws sts get-caller-identity` failed: Unable to locate credentials",
        "needs a passphrase to encrypt secrets, and none is set",
        "projects/services/logstore/Pulumi.yaml names the project `log-store`, but providers/kubernetes.toml calls it `logstore`",
    ] {
        assert!(stderr.contains(needle), "stderr lacks {needle:?}:\n{stderr}");
    }
}

#[test]
fn another_providers_stack_and_broken_yaml() {
    let ws = Ws::reference();
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &GOOD_AWS.replace("infra_type: AWS", "infra_type: DO"),
    );
    let path = fake_tools(&ws, true, false);
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(3)
        .stderr_has(
            "Stack has already been used with the provider [DO], so it cannot be run with the specified provider [AWS]",
        )
        .stderr_has("remove the kubernetes:infra_type key");
    // The lock is the one problem: the other provider's keys are not listed as missing.
    let run = ws
        .exec(
            &["validate", "-p", "linode", "-s", "dev"],
            &[("PATH", &path), ("CI", "true")],
        )
        .expect(3)
        .stderr_has("validation failed: 1 problem\n");
    assert!(!run.stderr.contains("linode:"), "{}", run.stderr);
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &GOOD_AWS.replace("infra_type: AWS", "infra_type: aws"),
    );
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(0);
    ws.write("config/pulumi/Pulumi.dev.yaml", "config:\n  aws:region: [unclosed\n");
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(3)
        .stderr_has("config/pulumi/Pulumi.dev.yaml:2:15: the stack configuration is not valid YAML")
        .stderr_has("unclosed bracket");
    let text = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    assert_eq!(
        text, "config:\n  aws:region: [unclosed\n",
        "a broken stack file is left as it was"
    );
}
