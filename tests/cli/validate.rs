//! `runner validate`: every problem at once, each with its fix; exit 3; exit 0 when all is well.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::support::{Ws, standin_dir};

/// A directory with fake `aws` and `kubectl` (exit 0, or `aws` failing when asked), so the
/// checks do not depend on what this machine has installed.
fn fake_tools(ws: &Ws, aws: bool, aws_fails: bool) -> String {
    let dir = ws.path().join("fake-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let mut tools = vec![
        ("kubectl", "#!/bin/sh\nexit 0\n".to_string()),
        (
            "docker",
            "#!/bin/sh\necho 'github.com/docker/buildx v0.19.3'\n".to_string(),
        ),
    ];
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

/// What `validate` says when all is well (without what a first run stores before).
fn ok(stderr: &str) -> String {
    crate::support::from_line(stderr, "All configuration is OK")
}

#[test]
fn a_complete_workspace_passes() {
    let ws = Ws::reference();
    ws.write("config/pulumi/Pulumi.dev.yaml", GOOD_AWS);
    let path = fake_tools(&ws, true, false);
    let run = ws
        .exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(0);
    crate::snapshot!(ws.path(), "validate_ok", ok(&run.stderr));
    // Started by a wrapper that names itself, the runner suggests what its user types.
    let wrapped = ws
        .exec(
            &["validate", "-p", "aws", "-s", "dev"],
            &[("PATH", &path), ("RUNNER_COMMAND", "scripts/try-aws")],
        )
        .expect(0);
    // The wrapper gives the provider itself, as scripts/try-local does.
    crate::snapshot!(ws.path(), "validate_ok_under_a_wrapper", ok(&wrapped.stderr));
    // Its usage lines too, when a command is mistyped; and the projects it lists when one is
    // missing.
    let said = |command: &str, args: &[&str], code: i32| {
        let run = ws
            .exec(args, &[("PATH", &path), ("RUNNER_COMMAND", command)])
            .expect(code);
        assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
        run.stderr
    };
    crate::snapshot!(
        ws.path(),
        "mistyped_under_a_wrapper",
        said("scripts/try-aws", &["output", "--nonsense"], 2)
    );
    crate::snapshot!(
        ws.path(),
        "no_project_under_a_wrapper",
        said("scripts/try-aws", &["output"], 2)
    );
    // A name that would drive the terminal or break the quoting is not taken: `runner` stays.
    for hostile in ["evil\u{1b}[2J", "a`b"] {
        crate::snapshot!(
            ws.path(),
            "validate_ok",
            ok(&said(hostile, &["validate", "-p", "aws", "-s", "dev"], 0))
        );
        crate::snapshot!(
            ws.path(),
            "mistyped_under_a_hostile_wrapper",
            said(hostile, &["output", "--nonsense"], 2)
        );
        crate::snapshot!(
            ws.path(),
            "no_project_under_a_hostile_wrapper",
            said(hostile, &["output"], 2)
        );
    }
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
    // missing, twice: the key and the credential check); the missing tool and token together.
    crate::snapshot!(ws.path(), "validate_a_missing_tool_and_token", run.stderr);
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
    crate::snapshot!(ws.path(), "validate_failing_credentials_passphrase_and_name", stderr);
}

/// The stack file every project gets is checked against what each program's `config:` declares,
/// as `pulumi up` would check it when the project's turn came: a value of the wrong type, a
/// secret in plain text, a key without a default missing. A run checks the projects it runs.
#[test]
fn stack_values_are_checked_against_the_programs_declared_config() {
    let ws = Ws::configured("aws");
    let stack = "config/pulumi/Pulumi.dev.yaml";
    ws.edit(
        stack,
        "  eks:min_size: 3\n",
        "  eks:min_size: 3\n  logstore:master_replicas: three\n  vpc:cidr_block: [10.0.0.0/16]\n  vpc:token: plain-text\n",
    );
    ws.edit(
        "projects/infra/vpc/Pulumi.yaml",
        "  cidr_block:\n",
        "  zone:\n    type: string\n  token:\n    type: string\n    secret: true\n  cidr_block:\n",
    );
    let path = fake_tools(&ws, true, false);
    let run = ws
        .exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(3);
    // Each problem with its line and its fix: the wrong type, the list, the missing key, the
    // secret in plain text (and how to set it).
    crate::snapshot!(ws.path(), "validate_stack_values_against_the_programs", run.stderr);
    // A bare key of the shared file is every project's own, as the CLI reads it.
    ws.edit(stack, "  eks:min_size: 3\n", "  eks:min_size: 3\n  zone: eu-1\n");
    let again = ws
        .exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(3);
    assert!(!again.stderr.contains("no `vpc:zone`"), "{}", again.stderr);
    // The fix as printed, from the workspace root (the stack is new: made first), the value from
    // standard input, stored encrypted.
    ws.edit(stack, "  vpc:token: plain-text\n", "");
    ws.exec(
        &[
            "pulumi", "vpc", "-p", "aws", "-s", "dev", "--", "stack", "select", "--create",
        ],
        &[("PATH", &path)],
    )
    .expect(0);
    let mut fix = ws.command(
        &crate::support::words("pulumi vpc -p aws -s dev -- config set --secret vpc:token"),
        &[("PATH", &path)],
    );
    fix.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = fix.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"t0ken\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let fixed = ws
        .exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(3);
    assert!(!fixed.stderr.contains("`vpc:token`"), "{}", fixed.stderr);
    assert!(
        !std::fs::read_to_string(ws.path().join(stack))
            .unwrap()
            .contains("t0ken")
    );
    assert!(
        !run.stderr.contains("plain-text"),
        "a value declared secret is not shown:\n{}",
        run.stderr
    );
    // A run of a project that declares none of them is not held back by them.
    ws.exec(
        &["preview", "-p", "aws", "-s", "dev", "--target", "ecr"],
        &[("PATH", &path)],
    )
    .expect(0);
    // Nor is a refresh or a destroy, which do not run the programs (the CLI checks nothing then).
    for op in ["refresh", "destroy"] {
        let run = ws.exec(
            &[op, "-p", "aws", "-s", "dev", "--only", "vpc", "--yes"],
            &[("PATH", &path)],
        );
        assert!(
            !run.stderr.contains("would refuse the project"),
            "{op}:\n{}",
            run.stderr
        );
        assert_ne!(run.code, 3, "{op}:\n{}", run.stderr);
    }
}

/// A key Pulumi cannot read (`config.ParseKey`: one `:`) makes every `pulumi` of every project
/// refuse the shared file: said before anything runs, with its line.
#[test]
fn a_stack_key_with_two_colons_is_refused_with_its_line() {
    let ws = Ws::configured("aws");
    ws.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "  eks:min_size: 3\n",
        "  eks:min_size: 3\n  eks:node:size: large\n",
    );
    let path = fake_tools(&ws, true, false);
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(3)
        .stderr_has("config/pulumi/Pulumi.dev.yaml:8: `eks:node:size` is not a configuration key Pulumi reads (namespace:key, with one `:`)")
        .stderr_has("rename it to namespace:key in config/pulumi/Pulumi.dev.yaml");
}

/// Each program's `name:` is checked against the provider's, the program read once (and
/// cached); one whose shape the plan cannot read, or that is not YAML, is still looked at.
#[test]
fn every_programs_name_is_checked_read_or_cached() {
    let ws = Ws::reference();
    ws.write("config/pulumi/Pulumi.dev.yaml", GOOD_AWS);
    ws.edit("projects/services/logstore/Pulumi.yaml", "name: logstore\n", "");
    // Resources as a list: no reference can be read from it, but its name can.
    ws.write(
        "projects/services/logagent/Pulumi.yaml",
        "name: log-agent\nruntime: yaml\nresources: [a, b]\n",
    );
    ws.write(
        "projects/services/certmgr/Pulumi.yaml",
        "name: certmgr\nresources: {unclosed\n",
    );
    let path = fake_tools(&ws, true, false);
    // Files changed less than two seconds before are not cached: let these settle.
    ws.settle();
    for round in ["first", "cached"] {
        let run = ws
            .exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
            .expect(3);
        // The same, read or cached: no name, the wrong name, not YAML (and nothing of the others).
        crate::snapshot!(
            ws.path(),
            "validate_the_programs_names",
            crate::support::error_message(&run.stderr)
        );
        let cache = std::fs::read_to_string(ws.path().join(".runner/cache/programs.json")).unwrap();
        assert!(
            cache.contains(r#""dir":"projects/services/logstore""#),
            "{round}: {cache}"
        );
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
        .stderr_has("fix: use another stack for `-p aws` (`-s dev-aws`); or, to move this one, destroy its resources with the provider that made them (DO) and remove the kubernetes:infra_type key");
    // The lock is the one problem: the other provider's keys are not listed as missing.
    let run = ws
        .exec(
            &["validate", "-p", "linode", "-s", "dev"],
            &[("PATH", &path), ("CI", "true")],
        )
        .expect(3);
    crate::snapshot!(
        ws.path(),
        "validate_another_providers_stack_is_the_one_problem",
        run.stderr
    );
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

/// Every file under `dir` with its bytes and mode.
fn snapshot(dir: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, (Vec<u8>, u32)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.clone(),
                    (std::fs::read(&p).unwrap_or_default(), meta.permissions().mode()),
                );
            }
        }
    }
    out
}

/// The files that differ between two snapshots: changed, added or removed.
fn changed<'a>(
    before: &'a std::collections::BTreeMap<std::path::PathBuf, (Vec<u8>, u32)>,
    after: &'a std::collections::BTreeMap<std::path::PathBuf, (Vec<u8>, u32)>,
) -> Vec<&'a Path> {
    let mut paths: Vec<&Path> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k.as_path())
        .chain(
            before
                .keys()
                .filter(|k| !after.contains_key(*k))
                .map(std::path::PathBuf::as_path),
        )
        .collect();
    paths.sort();
    paths
}

#[test]
fn check_asks_nothing_changes_no_file_and_lists_what_a_run_would_ask() {
    let ws = Ws::reference();
    let elsewhere = tempfile::tempdir().unwrap();
    let home = elsewhere.path().join("pulumi-home");
    let log = elsewhere.path().join("invocations.jsonl");
    let env = [
        ("PULUMI_HOME", home.to_str().unwrap()),
        ("PULUMI_STANDIN_LOG", log.to_str().unwrap()),
    ];
    let before = snapshot(ws.path());
    let run = ws
        .exec(&["validate", "-p", "aws", "-s", "dev", "--check"], &env)
        .expect(3);
    // Keys with a default too (`aws:region`, `eks:min_size`): a run at a terminal would ask for
    // them.
    crate::snapshot!(ws.path(), "validate_check_lists_what_a_run_would_ask", run.stderr);
    assert_eq!(snapshot(ws.path()), before, "validate --check changed a file");

    // At a terminal too: nothing is asked.
    let mut c = ws.command(&["validate", "-p", "aws", "-s", "dev", "--check"], &env);
    for (k, _) in crate::support::SECRETS {
        c.env_remove(k);
    }
    let mut s = expectrl::Session::spawn(c).unwrap();
    let mut screen = String::new();
    let _ = std::io::Read::read_to_string(&mut s, &mut screen);
    assert!(!screen.contains("AWS region to use ["), "asked:\n{screen}");
    assert!(screen.contains("lacks `aws:region`"), "{screen}");
    assert!(
        screen.contains("the secret `prometheus:adminpass` (Prometheus administrator password) is not stored"),
        "{screen}"
    );
    assert_eq!(
        snapshot(ws.path()),
        before,
        "validate --check at a terminal changed a file"
    );

    // Once everything is there, it passes, still changing nothing.
    ws.write("config/pulumi/Pulumi.dev.yaml", GOOD_AWS);
    let path = fake_tools(&ws, true, false);
    ws.up("aws", &["--target", "secrets"], &[("PATH", &path)]).expect(0);
    // Let the programs settle: the runner keeps a program in its cache only once its file has
    // not changed for 2 s. A run would now write the cache; a check must not.
    ws.settle();
    let before = snapshot(ws.path());
    let mut env = env.to_vec();
    env.push(("PATH", &path));
    ws.exec(&["validate", "-p", "aws", "-s", "dev", "--check"], &env)
        .expect(0)
        .stderr_has("All configuration is OK");
    assert_eq!(
        changed(&before, &snapshot(ws.path())),
        [] as [&Path; 0],
        "a passing validate --check changed files"
    );
}

#[test]
fn a_wrong_passphrase_is_found_before_any_project_runs() {
    let ws = Ws::reference();
    ws.write("config/pulumi/Pulumi.dev.yaml", GOOD_AWS);
    let path = fake_tools(&ws, true, false);
    ws.up("aws", &["--target", "secrets"], &[("PATH", &path)]).expect(0);
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(0);
    for args in [
        &["validate", "-p", "aws", "-s", "dev"][..],
        &["validate", "-p", "aws", "-s", "dev", "--check"],
    ] {
        ws.exec(args, &[("PATH", &path), ("PULUMI_CONFIG_PASSPHRASE", "not the one")])
            .expect(3)
            .stderr_has(
                "the passphrase from PULUMI_CONFIG_PASSPHRASE in the environment does not open \
                 config/pulumi/Pulumi.dev.yaml and projects/services/secrets/Pulumi.dev.yaml",
            );
    }
    // A run checks it too, before its first project: one error that says where the passphrase
    // came from and how to fix it, and no project started, failed or skipped.
    std::fs::write(ws.path().join("wrong-passphrase"), "not the one\n").unwrap();
    let file = ws.path().join("wrong-passphrase");
    let mut up = ws.command(
        &["up", "-p", "aws", "-s", "dev", "--fresh", "--yes"],
        &[
            ("PATH", &path),
            ("PULUMI_CONFIG_PASSPHRASE_FILE", file.to_str().unwrap()),
        ],
    );
    ws.clear_invocations();
    let out = up.env_remove("PULUMI_CONFIG_PASSPHRASE").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    for said in [
        format!(
            "the passphrase from the file PULUMI_CONFIG_PASSPHRASE_FILE names ({}) does not open",
            file.display()
        ),
        "fix: put the passphrase this stack was created with in that file".to_string(),
    ] {
        assert!(stderr.contains(&said), "{said:?} not in:\n{stderr}");
    }
    assert!(
        !ws.invocations().iter().any(|i| i.command() == "up"),
        "a project was started: {:?}",
        ws.invocations()
    );
    for never in ["started", "Failed:", "skipped", "Summary"] {
        assert!(!stderr.contains(never), "{never:?} in:\n{stderr}");
    }
}

#[test]
fn a_passphrase_file_or_a_salt_that_cannot_be_read_is_one_problem_naming_its_file() {
    let ws = Ws::reference();
    ws.write("config/pulumi/Pulumi.dev.yaml", GOOD_AWS);
    let path = fake_tools(&ws, true, false);
    ws.up("aws", &["--target", "secrets"], &[("PATH", &path)]).expect(0);
    let up = |env: &[(&str, &str)], remove_passphrase: bool| {
        let mut c = ws.command(&["up", "-p", "aws", "-s", "dev", "--fresh", "--yes"], env);
        c.env("PATH", &path);
        if remove_passphrase {
            c.env_remove("PULUMI_CONFIG_PASSPHRASE");
        }
        ws.clear_invocations();
        let out = c.output().unwrap();
        let started = ws.invocations().iter().any(|i| i.command() == "up");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            started,
        )
    };
    // A passphrase file that is not text, and one whose read fails.
    std::fs::write(ws.path().join("latin1"), b"caf\xe9\n").unwrap();
    for (file, name) in [
        (ws.path().join("latin1"), "passphrase_file_not_utf8"),
        (std::path::PathBuf::from("/proc/self/mem"), "passphrase_file_unreadable"),
    ] {
        let (code, stderr, started) = up(&[("PULUMI_CONFIG_PASSPHRASE_FILE", file.to_str().unwrap())], true);
        assert_eq!(code, Some(3), "{stderr}");
        // The passphrase is the problem, said once: no stored secret "could not be compared"
        // with the one the environment gives (there is no key to open it with).
        crate::snapshot!(ws.path(), name, stderr);
        assert!(!started, "a project started: {stderr}");
    }
    // A damaged salt in the shared stack file: that file is named, before any project, with the
    // right passphrase (not "incorrect", not another file).
    let shared = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let good = std::fs::read_to_string(&shared).unwrap();
    let salt = good
        .lines()
        .find(|l| l.starts_with("encryptionsalt:"))
        .unwrap()
        .to_string();
    for (bad, name) in [
        ("encryptionsalt: v2:abc:def", "damaged_salt_v2"),
        ("encryptionsalt: 'v1:!!!!:v1:x:y'", "damaged_salt_not_base64"),
        ("encryptionsalt: 42", "damaged_salt_a_number"),
    ] {
        std::fs::write(&shared, good.replace(&salt, bad)).unwrap();
        let (code, stderr, started) = up(&[], false);
        assert_eq!(code, Some(3), "{bad}: {stderr}");
        // The shared file is named damaged (no other file blamed).
        crate::snapshot!(ws.path(), name, crate::support::error_message(&stderr));
        assert!(!started, "{bad}: a project started: {stderr}");
        // Refused before anything is said of the run it refuses.
        assert!(!stderr.contains("Predicted"), "{bad}: {stderr}");
    }
    std::fs::write(&shared, good).unwrap();
}

#[test]
fn the_kubeconfig_file_and_context_docker_buildx_and_the_pulumi_version_are_checked() {
    let ws = Ws::configured("kubeconfig");
    let path = fake_tools(&ws, false, false);
    ws.exec(&["validate", "-p", "kubeconfig", "-s", "dev"], &[("PATH", &path)])
        .expect(0);
    ws.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "kubernetes:context_name: k3s",
        "kubernetes:context_name: k3d",
    );
    ws.exec(&["validate", "-p", "kubeconfig", "-s", "dev"], &[("PATH", &path)])
        .expect(3)
        .stderr_has("has no context `k3d` (`kubernetes:context_name`); it has: k3s");
    std::fs::remove_file(ws.path().join("cluster/kubeconfig.yaml")).unwrap();
    ws.exec(&["validate", "-p", "kubeconfig", "-s", "dev"], &[("PATH", &path)])
        .expect(3)
        .stderr_has("cluster/kubeconfig.yaml (`kubernetes:kubeconfig`) does not exist");

    // The graphs that build an image need docker buildx.
    let ws = Ws::reference();
    ws.write("config/pulumi/Pulumi.dev.yaml", GOOD_AWS);
    let path = fake_tools(&ws, true, false);
    std::fs::write(
        ws.path().join("fake-bin/docker"),
        "#!/bin/sh\necho \"docker: unknown command: docker buildx\" >&2\nexit 1\n",
    )
    .unwrap();
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(3)
        .stderr_has("Docker with buildx (kic-image-build builds the ingress controller's image): `docker buildx version` failed: docker: unknown command: docker buildx");

    // An old pulumi.
    let old = ws.path().join("old-pulumi");
    std::fs::create_dir_all(&old).unwrap();
    let shim = old.join("pulumi");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\n[ \"$1\" = version ] && {{ echo v3.100.0; exit 0; }}\nexec {}/pulumi \"$@\"\n",
            crate::support::standin_dir().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{path}", old.display());
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[("PATH", &path)])
        .expect(3)
        .stderr_has("is pulumi v3.100.0, older than the programs need")
        .stderr_has("install pulumi v3.142.0 or newer");
}

/// A provider that says how to get a tool (`install`) has that said as the fix when the tool is
/// missing: `examples/local` names the script that builds `pulumi`.
#[test]
fn a_missing_tool_has_the_providers_own_fix() {
    let ws = local_example();
    let empty = ws.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let run = ws
        .exec(
            &["validate", "-p", "local", "-s", "try", "--check"],
            &[("PATH", empty.to_str().unwrap())],
        )
        .expect(3);
    crate::snapshot!(ws.path(), "validate_a_missing_tool_with_the_providers_fix", run.stderr);
}

/// The shaped values of `examples/local`'s questions (an address range, a duration) are checked
/// in the stack file as a typed answer is: a typo is said before a program reads it.
#[test]
fn an_address_range_and_a_duration_are_checked_in_the_stack_file() {
    let ws = local_example();
    ws.write(
        "config/pulumi/Pulumi.try.yaml",
        "config:\n  kubernetes:infra_type: local\n  network:cidr: 10.0.0.1/16\n  logstore:retention: sevendays\n",
    );
    let run = ws
        .exec(&["validate", "-p", "local", "-s", "try", "--check"], &[])
        .expect(3);
    crate::snapshot!(ws.path(), "validate_an_address_range_and_a_duration", run.stderr);
    // A list where a duration goes is one wrong value, said once (not also as a wrong type).
    ws.write(
        "config/pulumi/Pulumi.try.yaml",
        "config:\n  kubernetes:infra_type: local\n  logstore:retention: [45d, 90d]\n",
    );
    let run = ws
        .exec(&["validate", "-p", "local", "-s", "try", "--check"], &[])
        .expect(3);
    // Said once.
    crate::snapshot!(ws.path(), "validate_a_list_where_a_duration_goes", run.stderr);
}

/// A copy of `examples/local`: its providers, projects, configuration and scripts.
fn local_example() -> Ws {
    let ws = Ws {
        dir: tempfile::tempdir().unwrap(),
    };
    crate::support::copy_example_local(ws.path());
    ws
}
