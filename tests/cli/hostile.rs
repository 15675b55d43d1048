//! Input meant to escape or hang: a stack name that is a path, a hook or provider outside its
//! directory (by `..` or by a symlink), a FIFO or an endless device given as a file. Each is
//! refused before any path is built or file written, naming what and how to fix it.

use std::os::unix::fs::symlink;

use crate::support::Ws;

#[test]
fn a_stack_name_that_is_a_path_is_refused_before_anything_is_written() {
    for (args, env, from) in [
        (
            vec!["up", "-p", "aws", "-s", "..", "--target", "iam"],
            vec![],
            "-s/--stack",
        ),
        (
            vec!["up", "-p", "aws", "-s", "../../../../tmp/pwned", "--target", "iam"],
            vec![],
            "-s/--stack",
        ),
        (
            vec!["up", "-p", "aws", "--target", "iam"],
            vec![("PULUMI_STACK", "../../../../../pwned")],
            "PULUMI_STACK in the process environment",
        ),
    ] {
        let ws = Ws::configured("aws");
        let run = ws.exec(&args, &env).expect(2);
        assert!(
            run.stderr.contains(&format!("(from {from}) is not a valid stack name")),
            "{}",
            run.stderr
        );
        assert!(!ws.path().join(".runner").exists(), "wrote under .runner");
        assert!(
            !ws.path().join("config/pulumi/environment").exists(),
            "pinned the bad name"
        );
    }
    let ws = Ws::configured("aws");
    ws.write("config/pulumi/environment", "PULUMI_STACK=..\n");
    ws.exec(&["up", "-p", "aws", "--target", "iam"], &[])
        .expect(2)
        .stderr_has("`..` (from PULUMI_STACK in config/pulumi/environment) is not a valid stack name");
}

#[test]
fn hooks_and_providers_stay_inside_their_directories() {
    let ws = Ws::configured("aws");
    std::fs::write(
        ws.path().join("outside.sh"),
        "#!/bin/sh\ntouch \"$MARA_WORKSPACE/escaped\"\n",
    )
    .unwrap();
    ws.edit(
        "providers/aws.toml",
        r#"on_success = ["kubeconfig-merge"]"#,
        r#"on_success = ["kubeconfig-merge", "scripts/../outside.sh"]"#,
    );
    ws.exec(&["up", "-p", "aws", "-s", "dev", "--target", "eks"], &[])
        .expect(2)
        .stderr_has("hook script `scripts/../outside.sh` does not exist under scripts/");
    // A symlink under scripts/ that points out of it is no better.
    symlink(ws.path().join("outside.sh"), ws.path().join("scripts/inside.sh")).unwrap();
    ws.edit("providers/aws.toml", "scripts/../outside.sh", "scripts/inside.sh");
    ws.exec(&["up", "-p", "aws", "-s", "dev", "--target", "eks"], &[])
        .expect(2)
        .stderr_has("hook script `scripts/inside.sh` does not exist under scripts/");
    assert!(!ws.path().join("escaped").exists());

    // -p and include name files in providers/, nothing else.
    std::fs::write(ws.path().join("evil.toml"), "description = \"x\"\n").unwrap();
    ws.exec(&["show-plan", "-p", "../evil"], &[])
        .expect(2)
        .stderr_has("unknown provider `../evil`");
    symlink(ws.path().join("evil.toml"), ws.path().join("providers/linked.toml")).unwrap();
    ws.exec(&["show-plan", "-p", "linked"], &[])
        .expect(2)
        .stderr_has("unknown provider `linked`");
}

#[test]
fn a_pipe_or_a_device_is_not_read_as_a_file() {
    let ws = Ws::configured("aws");
    let env = ws.path().join("config/pulumi/environment");
    let made = std::process::Command::new("mkfifo").arg(&env).status().unwrap();
    assert!(made.success());
    // Would hang forever reading the FIFO.
    ws.exec(&["up", "-p", "aws", "-s", "dev", "--target", "iam"], &[])
        .expect(3)
        .stderr_has("not a regular file");
    std::fs::remove_file(&env).unwrap();

    // Would read forever from /dev/zero.
    let stack = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    std::fs::remove_file(&stack).unwrap();
    symlink("/dev/zero", &stack).unwrap();
    ws.exec(&["up", "-p", "aws", "-s", "dev", "--target", "iam"], &[])
        .expect(3)
        .stderr_has("not a regular file");
}
