//! What the runner writes and hands on: a user's file keeps its mode and stays a symlink where it
//! was one, a log path is shown so it can be opened from where the command ran, and the backend
//! passphrase reaches `pulumi` and nothing else.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::support::Ws;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_private_stack_file_behind_a_symlink_stays_private_and_linked() {
    let ws = Ws::configured("aws");
    // The user keeps the real file elsewhere, readable by them alone, and links to it.
    let stack = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let real = ws.path().join("private/Pulumi.dev.yaml");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(&stack)
        .unwrap()
        .replace("  eks:max_size: 12\n", "");
    std::fs::write(&real, text).unwrap();
    chmod(&real, 0o600);
    std::fs::remove_file(&stack).unwrap();
    std::os::unix::fs::symlink(&real, &stack).unwrap();

    ws.exec(
        &["validate", "-p", "aws", "-s", "dev"],
        &[("MARA_CONFIG_EKS_MAX_SIZE", "7")],
    )
    .expect(0);
    assert!(
        std::fs::symlink_metadata(&stack).unwrap().file_type().is_symlink(),
        "the link was replaced by a plain file"
    );
    let written = std::fs::read_to_string(&real).unwrap();
    assert!(written.contains("eks:max_size: 7"), "{written}");
    assert_eq!(mode(&real), 0o600, "the stack file lost its mode");
}

#[test]
fn the_environment_file_keeps_its_mode_when_the_stack_is_added() {
    let ws = Ws::configured("aws");
    let file = ws.path().join("config/pulumi/environment");
    ws.write("config/pulumi/environment", "AWS_PROFILE=admin\n");
    chmod(&file, 0o640);
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "AWS_PROFILE=admin\nPULUMI_STACK=dev\n"
    );
    assert_eq!(mode(&file), 0o640);
}

#[test]
fn a_failure_names_a_log_that_opens_from_a_sub_directory() {
    let ws = Ws::configured("aws");
    let cwd = ws.path().join("projects/infra");
    let out = ws
        .command(
            &["up", "-p", "aws", "-s", "dev", "--target", "vpc"],
            &[("PULUMI_STANDIN_FAIL", "vpc:up")],
        )
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let shown = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("full output: "))
        .unwrap_or_else(|| panic!("no log path in:\n{stderr}"));
    let log = cwd.join(shown);
    assert!(log.is_file(), "{shown} does not open from {}", cwd.display());
    assert!(std::fs::read_to_string(log).unwrap().contains("== up vpc started"));
}

#[test]
fn the_passphrase_reaches_pulumi_but_no_hook_and_no_credential_check() {
    let ws = Ws::configured("aws");
    // A hook that records whether it sees the passphrase, and a credential check that fails
    // when it does.
    ws.eks_hook(
        "record.sh",
        "#!/bin/sh\necho \"passphrase=${PULUMI_CONFIG_PASSPHRASE-unset}\" > \"$MARA_WORKSPACE/hook-env.txt\"\n",
    );
    let toml = std::fs::read_to_string(ws.path().join("providers/aws.toml")).unwrap();
    ws.write(
        "providers/aws.toml",
        &format!(
            "{toml}\n[[check]]\ndescription = \"no passphrase for tools\"\n\
             command = [\"sh\", \"-c\", \"test -z \\\"${{PULUMI_CONFIG_PASSPHRASE+set}}\\\"\"]\n\
             fix = \"keep the passphrase away from tools that are not pulumi\"\n"
        ),
    );
    // The passphrase comes from the environment file here; the stand-in needs it for every
    // command, so the run succeeding shows pulumi got it.
    ws.write(
        "config/pulumi/environment",
        "PULUMI_CONFIG_PASSPHRASE=file passphrase\n",
    );
    let run = ws.up(
        "aws",
        &["--target", "eks"],
        &[("PULUMI_CONFIG_PASSPHRASE", "file passphrase")],
    );
    run.expect(0);
    let seen = std::fs::read_to_string(ws.path().join("hook-env.txt")).unwrap();
    assert_eq!(seen, "passphrase=unset\n");
}

#[test]
fn a_summary_that_cannot_be_written_has_its_own_exit_code_and_leaves_no_temporary_file() {
    let ws = Ws::configured("aws");
    // A directory is refused before the run (outputs.rs); a device that refuses the write
    // (no space left) is found only when the run is over.
    ws.up("aws", &["--target", "iam", "--summary", "/dev/full"], &[])
        .expect(7)
        .stderr_has("cannot write the summary to /dev/full");
    let left: Vec<_> = std::fs::read_dir(ws.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| std::path::Path::new(n).extension().is_some_and(|e| e == "tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    // A failure keeps its own code: it says more than the lost summary.
    ws.up(
        "aws",
        &["--target", "iam", "--fresh", "--summary", "/dev/full"],
        &[("PULUMI_STANDIN_FAIL", "iam:up")],
    )
    .expect(1);
}

#[test]
fn a_state_of_another_stack_or_schema_is_refused_and_stale_temporaries_are_removed() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/dev/state.json")).unwrap()).unwrap();
    // Only what ran is recorded: no entry with an empty status for what was not planned.
    for (name, p) in state["projects"].as_object().unwrap() {
        assert!(
            !p["status"].as_str().unwrap().is_empty(),
            "{name} recorded without a status"
        );
    }
    // A killed write left its temporary file: the next run removes it.
    ws.write(".runner/dev/.state.json.runner-999999.tmp", "half");
    ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    assert!(!ws.path().join(".runner/dev/.state.json.runner-999999.tmp").exists());

    // A run state of another schema, or of another stack: said, with the file.
    let text = std::fs::read_to_string(ws.path().join(".runner/dev/state.json")).unwrap();
    for (from, to, name) in [
        (
            "\"schema_version\": 2",
            "\"schema_version\": 9",
            "a_run_state_of_another_schema",
        ),
        (
            "\"stack\": \"dev\"",
            "\"stack\": \"prod\"",
            "a_run_state_of_another_stack",
        ),
    ] {
        ws.write(".runner/dev/state.json", &text.replace(from, to));
        let run = ws.up("aws", &["--target", "vpc"], &[]).expect(3);
        crate::snapshot!(ws.path(), name, run.stderr);
    }
}

/// The stack file in styles people and tools write: each takes the missing key and still
/// reads as before plus the key, every comment kept (before the lossless edit, each of these
/// was broken or lost keys while the command said all was well).
#[test]
fn a_stack_file_in_any_style_takes_the_new_key_and_keeps_everything_else() {
    let aws = |indent: &str| {
        [
            "kubernetes:infra_type: AWS",
            "aws:region: us-east-1 # the region",
            "vpc:azs: [us-east-1a, us-east-1b]",
            "eks:k8s_version: '1.31'",
            "eks:instance_type: t3.large",
            "eks:min_size: 3",
            "eks:desired_capacity: 3",
        ]
        .iter()
        .fold(String::new(), |text, l| text + indent + l + "\n")
    };
    let flow = "{kubernetes:infra_type: AWS, aws:region: us-east-1, vpc:azs: [us-east-1a, us-east-1b], \
                eks:k8s_version: '1.31', eks:instance_type: t3.large, eks:min_size: 3, eks:desired_capacity: 3}";
    let styles = [
        (
            "four spaces",
            format!("# mine\nconfig:\n{}# end of config\n", aws("    ")),
        ),
        ("a flow mapping", format!("config: {flow} # flow\n")),
        ("a quoted key", format!("\"config\":\n{}", aws("  "))),
        (
            "document markers",
            format!("--- # start\nconfig:\n{}...\n# after the end\n", aws("  ")),
        ),
        ("a byte-order mark", format!("\u{feff}config:\n{}", aws("  "))),
        (
            "CRLF",
            format!("# windows\r\nconfig:\r\n{}", aws("  ").replace('\n', "\r\n")),
        ),
        (
            "keys after config",
            format!("config:\n{}\n# pulumi's\nenvironment:\n  - shared\n", aws("  ")),
        ),
    ];
    for (style, text) in styles {
        let ws = Ws::configured("aws");
        let stack = ws.path().join("config/pulumi/Pulumi.dev.yaml");
        std::fs::write(&stack, &text).unwrap();
        let before: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        ws.exec(
            &["validate", "-p", "aws", "-s", "dev"],
            &[("RUNNER_CONFIG_EKS_MAX_SIZE", "7")],
        )
        .expect(0);
        let written = std::fs::read_to_string(&stack).unwrap();
        let mut after: serde_json::Value = serde_saphyr::from_str(&written)
            .unwrap_or_else(|e| panic!("{style}: the written file does not parse ({e}):\n{written}"));
        // The passphrase salt is added too, once, as a top-level string.
        let salt = after.as_object_mut().unwrap().remove("encryptionsalt");
        assert!(
            salt.as_ref()
                .and_then(|s| s.as_str())
                .is_some_and(|s| s.starts_with("v1:")),
            "{style}: no salt:\n{written}"
        );
        let mut expected = before.clone();
        expected["config"]["eks:max_size"] = 7.into();
        assert_eq!(after, expected, "{style}:\n{text}\n=>\n{written}");
        for comment in text.lines().filter_map(|l| l.find('#').map(|at| &l[at..])) {
            assert!(written.contains(comment), "{style}: lost `{comment}`:\n{written}");
        }
    }
}

/// A file whose `config:` is an alias of another mapping cannot take a key without changing
/// that other mapping too: the runner refuses, names the file and the lines to add, and
/// leaves the file as it was.
#[test]
fn a_stack_file_that_cannot_be_edited_safely_is_refused_and_left_alone() {
    let ws = Ws::configured("aws");
    let stack = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&stack)
        .unwrap()
        .replace("  eks:max_size: 12\n", "")
        .replace("config:\n", "defaults: &defaults\n")
        + "config: *defaults\n";
    std::fs::write(&stack, &text).unwrap();
    ws.exec(
        &["validate", "-p", "aws", "-s", "dev"],
        &[("RUNNER_CONFIG_EKS_MAX_SIZE", "7")],
    )
    .expect(3)
    .stderr_has("Pulumi.dev.yaml")
    .stderr_has("cannot add eks:max_size safely")
    .stderr_has("is it an alias of another mapping?")
    .stderr_has("the file was left unchanged")
    .stderr_has("add `eks:max_size: 7` under `config:`");
    assert_eq!(std::fs::read_to_string(&stack).unwrap(), text);
}

#[test]
fn a_huge_output_keeps_the_run_state_small_enough_to_read_again() {
    let ws = Ws::configured("kubeconfig");
    ws.write("projects/services/logstore/big.txt", &"x".repeat(9_000_000));
    ws.edit(
        "projects/services/logstore/Pulumi.yaml",
        "outputs:\n",
        "outputs:\n  big:\n    fn::readFile: ./big.txt\n",
    );
    ws.up("kubeconfig", &[], &[]).expect(0);
    for file in [".runner/dev/state.json", ".runner/last-run.json"] {
        let size = std::fs::metadata(ws.path().join(file)).unwrap().len();
        assert!(size < 1_000_000, "{file}: {size} bytes");
        let text = std::fs::read_to_string(ws.path().join(file)).unwrap();
        assert!(
            text.contains("[9000002 bytes: not kept; `runner output` reads it]"),
            "{file}"
        );
    }
    // What was written is read again: the next run, status and the report work.
    let again = ws.up("kubeconfig", &[], &[]).expect(0);
    let (table, settings) = crate::support::closing_table(&again.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_after_a_huge_output", table));
    ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    ws.exec(&["report", "-s", "dev", "-o", "run.html"], &[]).expect(0);
    // The whole value is still the backend's.
    let big = ws.exec(&["output", "logstore", "big", "-s", "dev"], &[]).expect(0);
    assert_eq!(big.stdout.trim_end().len(), 9_000_000);
}
