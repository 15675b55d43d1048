//! The environment file's `PULUMI_STACK` rules (MARA's, minus its bug) and its errors.

use crate::support::{SECRETS, Ws};

const FILE: &str = "config/pulumi/environment";

fn read(ws: &Ws) -> Option<String> {
    std::fs::read_to_string(ws.path().join(FILE)).ok()
}

#[test]
fn the_file_is_created_with_the_stack() {
    let ws = Ws::configured("aws");
    ws.exec(&["up", "-p", "aws", "-s", "Dev", "--target", "iam"], &[])
        .expect(0);
    assert_eq!(read(&ws).as_deref(), Some("PULUMI_STACK=dev\n"));
}

#[test]
fn the_stack_is_appended_on_its_own_line_even_without_a_final_newline() {
    let ws = Ws::configured("aws");
    ws.write(FILE, "# settings\nAWS_PROFILE=admin");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    assert_eq!(
        read(&ws).as_deref(),
        Some("# settings\nAWS_PROFILE=admin\nPULUMI_STACK=dev\n")
    );
    // Next time the file names the stack: -s may be left out.
    ws.exec(&["up", "-p", "aws", "--target", "iam"], &[]).expect(0);
    assert_eq!(
        read(&ws).as_deref(),
        Some("# settings\nAWS_PROFILE=admin\nPULUMI_STACK=dev\n")
    );
}

#[test]
fn a_different_stack_is_refused_naming_both() {
    let ws = Ws::configured("aws");
    ws.write(FILE, "PULUMI_STACK=prod\n");
    ws.up("aws", &[], &[])
        .expect(2)
        .stderr_has("the stack `dev` differs from PULUMI_STACK=`prod` in config/pulumi/environment")
        // Names are quoted in the commands a message suggests.
        .stderr_has("use `-s prod`, or add `--switch-stack`");
    assert_eq!(read(&ws).as_deref(), Some("PULUMI_STACK=prod\n"));

    let ws = Ws::configured("aws");
    ws.exec(&["destroy", "-p", "aws", "-s", "dev"], &[("PULUMI_STACK", "qa")])
        .expect(2)
        .stderr_has("differs from PULUMI_STACK=`qa` in the process environment");
    assert_eq!(read(&ws), None, "nothing written on refusal");
}

#[test]
fn a_malformed_file_names_its_line_and_stays_untouched() {
    let ws = Ws::configured("aws");
    ws.write(FILE, "A=1\nthis is not a setting\n");
    ws.up("aws", &[], &[])
        .expect(3)
        .stderr_has("config/pulumi/environment:2:1: `this is not a setting` is not a KEY=VALUE line");
    assert_eq!(read(&ws).as_deref(), Some("A=1\nthis is not a setting\n"));
    // Without -p the provider would be found through the file: its problem is the one to fix,
    // not a missing -p.
    let commands = [
        &["up", "-s", "dev"][..],
        &["status", "-s", "dev"],
        &["output", "eks", "-s", "dev"],
    ];
    said_alike(&ws, &commands, "a_broken_environment_file_without_p");
}

/// Each of `commands` is refused (exit 3) with the one problem of the file that names the
/// provider (its line and column), not a missing -p, all alike: `name`'s snapshot.
#[track_caller]
fn said_alike(ws: &Ws, commands: &[&[&str]], name: &str) {
    for args in commands {
        let run = ws.exec(args, &[]).expect(3);
        crate::snapshot!(ws.path(), name, run.stderr);
    }
}

#[test]
fn show_plan_and_list_providers_never_write_it() {
    let ws = Ws::reference();
    ws.run(&["show-plan", "-p", "aws", "-s", "dev"]).expect(0);
    ws.run(&["list-providers", "-s", "dev"]).expect(0);
    assert_eq!(read(&ws), None);
}

#[test]
fn creating_the_file_and_adding_the_stack_are_said() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[])
        .expect(0)
        .stderr_has("Created config/pulumi/environment with PULUMI_STACK=dev\n");
    let ws = Ws::configured("aws");
    ws.write(FILE, "AWS_PROFILE=admin\n");
    ws.up("aws", &["--target", "iam"], &[])
        .expect(0)
        .stderr_has("Added PULUMI_STACK=dev to config/pulumi/environment\n");
}

#[test]
fn switch_stack_makes_the_given_stack_the_workspaces_without_editing_files() {
    let ws = Ws::configured("aws");
    ws.write(
        FILE,
        "# ours\nexport PULUMI_STACK=dev # the team's\nAWS_PROFILE=admin\n",
    );
    let prod = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    ws.write("config/pulumi/Pulumi.prod.yaml", &prod);
    ws.exec(&["up", "-p", "aws", "-s", "prod", "--target", "iam"], &[])
        .expect(2)
        .stderr_has("the stack `prod` differs from PULUMI_STACK=`dev` in config/pulumi/environment");
    // A switch to a stack whose run is refused (nothing ran) is undone, and said.
    ws.write(
        "config/pulumi/Pulumi.qa.yaml",
        &prod.replace("eks:min_size: 3", "eks:min_size: lots"),
    );
    ws.exec(&["up", "-p", "aws", "-s", "qa", "--switch-stack"], &[])
    .expect(3)
    .stderr_has("Switched the workspace back to stack dev: nothing ran on qa (PULUMI_STACK=dev in config/pulumi/environment)");
    // What it suggests works from the workspace as it is left, back on dev: it switches again.
    ws.write("config/pulumi/Pulumi.qa.yaml", &prod);
    let mut lacking = ws.command(&["up", "-p", "aws", "-s", "qa", "--switch-stack"], &[("CI", "true")]);
    for (k, _) in SECRETS {
        lacking.env_remove(k);
    }
    let out = lacking.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `or run `runner validate -p aws -s qa --switch-stack` at a terminal`.
    crate::snapshot!(
        ws.path(),
        "switch_stack_lacking_secrets",
        crate::support::error_message(&stderr)
    );
    assert_eq!(
        read(&ws).as_deref(),
        Some("# ours\nPULUMI_STACK=dev\nAWS_PROFILE=admin\n")
    );
    // `validate --check` writes nothing, so it does not switch either: said, not silent.
    let check = ws.exec(
        &["validate", "-p", "aws", "-s", "prod", "--check", "--switch-stack"],
        &[],
    );
    crate::snapshot!(
        ws.path(),
        "switch_stack_left_undone_by_a_check",
        crate::support::lines_with(&check.stderr, "--switch-stack")
    );
    assert!(read(&ws).as_deref().unwrap().contains("PULUMI_STACK=dev\n"));
    ws.exec(
        &["up", "-p", "aws", "-s", "prod", "--target", "iam", "--switch-stack"],
        &[],
    )
    .expect(0)
    .stderr_has("Switched the workspace from stack dev to prod: PULUMI_STACK=prod in config/pulumi/environment");
    assert_eq!(
        read(&ws).as_deref(),
        Some("# ours\nPULUMI_STACK=prod\nAWS_PROFILE=admin\n")
    );
    // From now on prod is the stack: -s may be left out.
    ws.exec(&["up", "-p", "aws", "--target", "iam"], &[]).expect(0);
    assert!(ws.path().join(".runner/prod/state.json").is_file());
}

#[test]
fn export_lines_quotes_and_trailing_comments_are_read_as_a_shell_reads_them() {
    let ws = Ws::configured("aws");
    ws.write(
        FILE,
        "export PULUMI_STACK=dev   # the stack every project shares\nAWS_PROFILE='admin # not a comment'\n",
    );
    ws.exec(&["up", "-p", "aws", "--target", "iam"], &[]).expect(0);
    assert!(ws.path().join(".runner/dev/state.json").is_file());
    ws.write(FILE, "PULUMI_STACK=\"dev\n");
    ws.exec(&["up", "-p", "aws", "--target", "iam"], &[])
        .expect(3)
        .stderr_has("config/pulumi/environment:1:14: the value of `PULUMI_STACK` has no closing quote");
}

#[test]
fn without_p_the_provider_is_the_one_the_stack_file_was_written_for() {
    let ws = Ws::configured("aws");
    // show-plan takes it as the stack's commands do, and writes nothing: it only reads.
    ws.exec(&["show-plan", "-s", "dev"], &[]).expect(0).stderr_has(
        "provider aws: the stack file config/pulumi/Pulumi.dev.yaml was written for it (kubernetes:infra_type: AWS)",
    );
    assert!(!ws.path().join(".runner").exists());
    ws.exec(&["up", "-s", "dev", "--target", "iam"], &[])
        .expect(0)
        .stderr_has(
            "provider aws: the stack file config/pulumi/Pulumi.dev.yaml was written for it (kubernetes:infra_type: AWS); -p chooses another",
        );
    // Said once: the next command that takes the same provider says nothing of it.
    let again = ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    assert!(!again.stderr.contains("was written for it"), "{}", again.stderr);
    // A stack without configuration names no provider: -p is still needed.
    ws.exec(&["up", "-s", "other", "--switch-stack"], &[])
        .expect(2)
        .stderr_has("`up` needs a provider: pass -p/--provider NAME");
}

/// Lines the runner cannot take as they are: a second `PULUMI_STACK` (which stack is the
/// workspace's?), an editor's byte-order mark, a line too long for any variable. Each is named
/// at its line (both lines for the stack), said for what it is, and the file left as it was.
#[test]
fn a_second_stack_a_byte_order_mark_and_a_huge_line_are_named() {
    let ws = Ws::configured("aws");
    let huge = format!("PULUMI_STACK=dev\nBLOB={}\n", "x".repeat(5 * 1024 * 1024));
    for (text, said) in [
        (
            "PULUMI_STACK=dev\nAWS_PROFILE=admin\nexport PULUMI_STACK=qa\n".to_string(),
            "config/pulumi/environment:3:1: PULUMI_STACK is set twice: `dev` at config/pulumi/environment:1 and `qa` here",
        ),
        (
            "\u{feff}PULUMI_STACK=dev\n".to_string(),
            "config/pulumi/environment:1:1: the file starts with a byte-order mark (U+FEFF)",
        ),
        (
            huge,
            "config/pulumi/environment:2:1: this line is 5242885 bytes long, more than a line may hold (64 KiB)",
        ),
    ] {
        ws.write(FILE, &text);
        for args in [
            &["up", "-p", "aws", "-s", "dev", "--target", "iam"][..],
            &["up", "-p", "aws", "--target", "iam"],
            &["status", "-s", "dev"],
        ] {
            let run = ws.exec(args, &[]).expect(3);
            assert!(
                run.stderr.contains(said),
                "{args:?}: {said}\n{}",
                &run.stderr[..run.stderr.len().min(4000)]
            );
            assert!(run.stderr.len() < 4000, "{args:?}: the line was quoted");
            assert_eq!(read(&ws).as_deref(), Some(text.as_str()), "{args:?} changed the file");
        }
    }
}

/// Without -p the provider is found through the stack file: a stack file that cannot be parsed
/// is the error shown, at its line, not a missing -p.
#[test]
fn a_stack_file_that_cannot_be_parsed_is_the_error_shown_without_p() {
    let ws = Ws::configured("aws");
    ws.write(FILE, "PULUMI_STACK=dev\n");
    ws.write("config/pulumi/Pulumi.dev.yaml", "config:\n  aws:region: [us-east-1\n");
    let commands = [
        &["up", "-s", "dev"][..],
        &["up"],
        &["status", "-s", "dev"],
        &["logs", "iam"],
    ];
    said_alike(&ws, &commands, "a_broken_stack_file_without_p");
}

#[test]
fn a_command_that_only_reads_looks_at_another_stack_without_switching() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let env = std::fs::read_to_string(ws.path().join("config/pulumi/environment")).unwrap();
    let dev = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    ws.write("config/pulumi/Pulumi.staging.yaml", &dev);
    let status = ws.exec(&["status", "-s", "staging", "-p", "aws"], &[]).expect(0);
    assert!(status.stdout.contains("stack staging"), "{}", status.stdout);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("config/pulumi/environment")).unwrap(),
        env
    );
    // Without -p, a stack never configured nor run here is said to be that, with the known ones.
    ws.exec(&["status", "-s", "other"], &[])
        .expect(2)
        .stderr_has("stack `other` has no runs here and no configuration (config/pulumi/Pulumi.other.yaml)")
        .stderr_has("stacks here: dev, staging (`runner status -s ");
    // The one a typo most likely meant is the one suggested.
    ws.exec(&["status", "-s", "stagnig"], &[])
        .expect(2)
        .stderr_has("stacks here: dev, staging (`runner status -s staging`)");
    ws.exec(&["output", "iam", "-s", "other"], &[])
        .expect(2)
        .stderr_has("stack `other` has no runs here");
    // The workspace's own stack still finds its provider from its stack file.
    ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    // A run still asks for the switch: it would write the other stack's files.
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    ws.exec(&["up", "-p", "aws", "-s", "other", "--target", "iam"], &[])
        .expect(2)
        .stderr_has("--switch-stack");
}

/// A destroy of the workspace's stack leaves the workspace on it: said when another stack is
/// deployed, with the command that goes back, which works as said.
#[test]
fn a_destroy_of_the_workspaces_stack_names_the_deployed_one_to_go_back_to() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let dev = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    ws.write("config/pulumi/Pulumi.qa.yaml", &dev);
    ws.exec(
        &["up", "-p", "aws", "-s", "qa", "--target", "iam", "--switch-stack"],
        &[],
    )
    .expect(0);
    let destroy = ws.exec(&["destroy", "-p", "aws", "-s", "qa", "--yes"], &[]).expect(0);
    assert!(
        destroy.stderr.contains(
            "The workspace's stack is still `qa`; stack `dev` is deployed: `runner validate -p aws -s dev --switch-stack` makes `dev` the workspace's stack again."
        ),
        "{}",
        destroy.stderr
    );
    ws.exec(&["validate", "-p", "aws", "-s", "dev", "--switch-stack"], &[])
        .expect(0);
    assert!(read(&ws).as_deref().unwrap().contains("PULUMI_STACK=dev\n"));
    // Destroyed from there, nothing else is deployed: nothing to go back to.
    let last = ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--yes"], &[]).expect(0);
    assert!(
        !last.stderr.contains("The workspace's stack is still"),
        "{}",
        last.stderr
    );
}
