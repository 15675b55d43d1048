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
    // `..` (from PULUMI_STACK in config/pulumi/environment) is not a valid stack name.
    let refused = ws.exec(&["up", "-p", "aws", "--target", "iam"], &[]).expect(2).stderr;
    crate::snapshot!(ws.path(), "a_stack_name_from_the_environment_file", refused);
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
    ws.up("aws", &["--target", "eks"], &[])
        .expect(2)
        .stderr_has("hook script `scripts/../outside.sh` does not exist under scripts/");
    // A symlink under scripts/ that points out of it is no better.
    symlink(ws.path().join("outside.sh"), ws.path().join("scripts/inside.sh")).unwrap();
    ws.edit("providers/aws.toml", "scripts/../outside.sh", "scripts/inside.sh");
    ws.up("aws", &["--target", "eks"], &[])
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
    ws.up("aws", &["--target", "iam"], &[])
        .expect(3)
        .stderr_has("not a regular file");
    std::fs::remove_file(&env).unwrap();

    // Would read forever from /dev/zero.
    let stack = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    std::fs::remove_file(&stack).unwrap();
    symlink("/dev/zero", &stack).unwrap();
    ws.up("aws", &["--target", "iam"], &[])
        .expect(3)
        .stderr_has("not a regular file");
}

/// The runner at `args`, killed and failed when it does not end within a minute (a read of a
/// FIFO or of an endless device would never end).
fn within_a_minute(ws: &Ws, args: &[&str]) -> crate::support::Run {
    let mut child = ws
        .command(args, &[])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read while it runs: a full pipe would stop it.
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            pipe.read_to_string(&mut text).unwrap();
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let status = crate::support::ended(
        &mut child,
        std::time::Duration::from_secs(60),
        format!("`runner {}` did not end", args.join(" ")),
    );
    crate::support::Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn mkfifo(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    assert!(
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

fn dev_zero(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    symlink("/dev/zero", path).unwrap();
}

/// The runner's own files under `.runner/` follow the rules of every input: a FIFO (which
/// would hang `status`, and `up` while it holds the workspace) or a link to an endless device
/// (which would eat the memory) is refused, naming the file and the fix, and nothing is
/// written through it.
#[test]
fn a_pipe_or_a_device_among_the_run_state_is_refused_naming_it() {
    let ws = Ws::configured("aws");
    let up = ["up", "-p", "aws", "-s", "dev", "--target", "iam"];
    ws.exec(&up, &[]).expect(0);
    let status = ["status", "-s", "dev"];
    // A state file that is not the runner's (binary bytes): a broken workspace file, exit 3,
    // named with the fix — not a usage error.
    let state = ws.path().join(".runner/dev/state.json");
    let kept_state = std::fs::read(&state).unwrap();
    std::fs::write(&state, b"\x00\xff\xfe binary").unwrap();
    for args in [&status[..], &up[..]] {
        within_a_minute(&ws, args)
            .expect(3)
            .stderr_has("cannot read .runner/dev/state.json: not UTF-8 text; remove it to start afresh")
            .stderr_has("to start afresh");
    }
    std::fs::write(&state, kept_state).unwrap();
    let journal = ws.path().join(".runner/dev/journal.jsonl");
    for make in [mkfifo, dev_zero] {
        make(&journal);
        // Status and up alike: the journal named, not a regular file, and the fix.
        for args in [&status[..], &up[..]] {
            let run = within_a_minute(&ws, args).expect(3);
            crate::snapshot!(ws.path(), "a_journal_that_is_no_file", run.stderr);
        }
        std::fs::remove_file(&journal).unwrap();
    }

    let durations = ws.path().join(".runner/dev/durations.json");
    let kept = std::fs::read(&durations).unwrap();
    for make in [mkfifo, dev_zero] {
        make(&durations);
        // Named as from where the runner was started, the workspace, with the fix.
        for args in [&status[..], &up[..]] {
            let run = within_a_minute(&ws, args).expect(3);
            crate::snapshot!(ws.path(), "durations_that_are_no_file", run.stderr);
        }
        // show-plan only weighs by it: a warning.
        within_a_minute(&ws, &["show-plan", "-p", "aws", "-s", "dev"])
            .expect(0)
            .stderr_has("durations.json: not a regular file");
    }
    std::fs::remove_file(&durations).unwrap();
    std::fs::write(&durations, kept).unwrap();

    let key = ws.path().join(".runner/digest-key");
    dev_zero(&key);
    within_a_minute(&ws, &up)
        .expect(3)
        .stderr_has("digest-key: not a regular file")
        .stderr_has("remove it (a new key is made");
    std::fs::remove_file(&key).unwrap();

    // A log is the runner's to write: what is there in its place is replaced.
    let log = ws.path().join(".runner/dev/logs/iam.up.log");
    mkfifo(&log);
    within_a_minute(&ws, &["up", "-p", "aws", "-s", "dev", "--target", "iam", "--fresh"]).expect(0);
    assert!(std::fs::symlink_metadata(&log).unwrap().is_file());
    dev_zero(&log);
    within_a_minute(&ws, &["up", "-p", "aws", "-s", "dev", "--target", "iam", "--fresh"]).expect(0);
    assert!(std::fs::symlink_metadata(&log).unwrap().is_file());
    // The programs' cache is only a cache: read as empty, and not written through.
    let cache = ws.path().join(".runner/cache/programs.json");
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    for make in [mkfifo, dev_zero] {
        make(&cache);
        within_a_minute(&ws, &["show-plan", "-p", "aws"]).expect(0);
    }
    let zero = std::fs::metadata("/dev/zero").unwrap();
    assert!(!zero.is_file(), "/dev/zero was replaced");
}

/// A log is shown, never obeyed: its control sequences are made visible (it cannot clear the
/// screen, retitle the window or write the clipboard), a byte that is not UTF-8 costs only
/// itself, a pipe in its place is refused, and of a huge log the end is shown.
#[test]
fn logs_shows_a_log_without_letting_it_drive_the_terminal() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let log = ws.path().join(".runner/dev/logs/iam.up.log");
    let mut hostile = b"== up iam started 2026-01-01T00:00:00.000Z\n\x1b[2J\x1b[H\x1b]52;c;ZXZpbA==\x07".to_vec();
    hostile.extend_from_slice(b"caf\xe9 \xff done\r\n== succeeded 2026-01-01T00:00:01.000Z\n");
    std::fs::write(&log, &hostile).unwrap();
    let out = ws.command(&["logs", "iam", "-s", "dev"], &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 out");
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}') && !stdout.contains('\r'),
        "{stdout:?}"
    );
    assert!(
        stdout.contains("^[[2J^[[H^[]52;c;ZXZpbA==^Gcaf\u{fffd} \u{fffd} done^M\n== succeeded"),
        "{stdout:?}"
    );

    // Larger than what is shown at once: the end, from a line's start, and a note.
    let mut big = b"== up iam started 2026-01-01T00:00:00.000Z\n".to_vec();
    let line = format!("{}\n", "x".repeat(1023));
    while big.len() < 17 * 1024 * 1024 {
        big.extend_from_slice(line.as_bytes());
    }
    big.extend_from_slice(b"== succeeded 2026-01-01T00:00:01.000Z\n");
    std::fs::write(&log, &big).unwrap();
    let run = within_a_minute(&ws, &["logs", "iam", "-s", "dev"]).expect(0);
    // `(its first 2 MiB are left out: the whole log is .runner/dev/logs/iam.up.log)`.
    crate::snapshot!(ws.path(), "logs_of_a_huge_log", run.stderr);
    assert!(run.stdout.starts_with(&line) && run.stdout.ends_with("== succeeded 2026-01-01T00:00:01.000Z\n"));
    assert!(run.stdout.len() <= 16 * 1024 * 1024);

    mkfifo(&log);
    for args in [
        &["logs", "iam", "-s", "dev"][..],
        &["logs", "iam", "-s", "dev", "--follow"][..],
    ] {
        within_a_minute(&ws, args)
            .expect(1)
            .stderr_has("iam.up.log: not a regular file")
            .stderr_has("remove it: the next run of iam writes it anew");
    }
}

#[test]
fn a_variable_that_is_not_utf8_is_passed_on_or_named_never_a_crash() {
    use std::os::unix::ffi::OsStrExt as _;
    let latin1 = std::ffi::OsStr::from_bytes(b"caf\xe9");
    let ws = Ws::configured("aws");
    // Another tool's variable: passed on to pulumi untouched; the run goes on.
    let mut c = ws.command(&["up", "-p", "aws", "-s", "dev", "--target", "vpc"], &[]);
    c.env("LANGFOO", latin1);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // One the runner reads as text: named, with the fix, before anything runs (not "missing").
    for var in [
        "PULUMI_CONFIG_PASSPHRASE",
        "MARA_SECRET_SIRIUS_LEDGER_PWD",
        "MARA_CONFIG_AWS_REGION",
    ] {
        for command in [
            &["up", "-p", "aws", "-s", "dev"][..],
            &["validate", "-p", "aws", "-s", "dev"][..],
        ] {
            let mut c = ws.command(command, &[]);
            c.env(var, latin1);
            let out = c.output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{var}: {stderr}");
            // Named, with the fix (`set VAR to UTF-8 text`).
            crate::snapshot!(ws.path(), format!("a_variable_not_utf8_{var}"), stderr);
        }
    }
}
