//! `runner pulumi PROJECT -- ARGS` and signals: what is sent to the runner reaches its `pulumi`
//! (the whole process group), once, as it was sent; the runner ends as `pulumi` ended, as a
//! shell would report it; at a terminal, the terminal is `pulumi`'s.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use expectrl::Expect as _;

use crate::support::{Ws, files_under, runs, signal, wait_for_file, wait_until};

/// How `child` (the runner) ended; killed and failed when it does not end (a signal it never
/// got).
fn ended(mut child: std::process::Child) -> std::process::ExitStatus {
    crate::support::ended(&mut child, Duration::from_secs(60), "the runner did not end")
}

/// A directory holding `pulumi`, a shell script: it writes its pid and that of a child it
/// leaves in the background into `$MARKS`, then becomes `sleep` (which dies of SIGINT and
/// SIGTERM alike).
fn sleeping_pulumi(marks: &Path) -> PathBuf {
    let dir = marks.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("pulumi");
    std::fs::write(
        &script,
        "#!/bin/sh\nsleep 300 &\necho $! > \"$MARKS/grandchild\"\necho $$ > \"$MARKS/pulumi.tmp\"\n\
         mv \"$MARKS/pulumi.tmp\" \"$MARKS/pulumi\"\nexec sleep 300\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    dir
}

#[test]
fn a_signal_sent_to_the_runner_ends_its_pulumi_and_the_runner_ends_as_pulumi_did() {
    // A hang-up reaches pulumi as SIGINT (Go dies of SIGHUP at once, mid-update): it cancels.
    for (sig, code) in [("INT", 130), ("TERM", 143), ("HUP", 130)] {
        let ws = Ws::configured("aws");
        let marks = ws.path().join("marks");
        let bin = sleeping_pulumi(&marks);
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let marks_var = marks.display().to_string();
        // Standard error goes to a file: the child pulumi leaves would hold a pipe open.
        let errors = std::fs::File::create(ws.path().join("stderr")).unwrap();
        let child = ws
            .command(
                &["pulumi", "vpc", "-s", "dev", "--", "stack", "ls"],
                &[("PATH", &path), ("MARKS", &marks_var)],
            )
            .stdout(std::process::Stdio::null())
            .stderr(errors)
            .spawn()
            .unwrap();
        wait_for_file(&marks.join("pulumi"));
        let pulumi = std::fs::read_to_string(marks.join("pulumi"))
            .unwrap()
            .trim()
            .to_string();
        let grandchild = std::fs::read_to_string(marks.join("grandchild"))
            .unwrap()
            .trim()
            .to_string();
        signal(child.id(), sig);
        let status = ended(child);
        assert_eq!(
            status.code(),
            Some(code),
            "SIG{sig}: {}",
            std::fs::read_to_string(ws.path().join("stderr")).unwrap()
        );
        assert!(!runs(&pulumi), "SIG{sig}: pulumi {pulumi} runs on");
        if sig == "INT" || sig == "HUP" {
            // A shell's background child ignores SIGINT: it was sent, and stays.
            signal(grandchild.parse().unwrap(), "KILL");
        } else {
            // The whole group got it: what pulumi started (its plugins) ends too.
            wait_until(
                Duration::from_secs(30),
                format!("SIG{sig}: {grandchild} of pulumi's group runs on"),
                || !runs(&grandchild),
            );
        }
    }
}

/// Pulumi cancels on the first SIGINT and terminates on the next SIGTERM: each sent to the
/// runner reaches it once, and the stack's lock is released.
#[test]
fn pulumi_cancels_on_the_runners_sigint_and_ends_on_its_sigterm() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    ws.clear_invocations();
    let mut child = ws
        .command(
            &["pulumi", "iam", "-s", "dev", "--", "up", "--yes", "--skip-preview"],
            &[("PULUMI_STANDIN_HANG", "iam:up"), ("PULUMI_STANDIN_SLOW_CANCEL", "iam")],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let locks = ws.path().join(".pulumi-state/.pulumi/locks/organization/iam/dev");
    crate::support::up_lock(&locks);
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = lines_tx.send(line);
        }
        all
    });
    let wait_line = |needle: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return,
                Ok(_) => {}
                Err(e) => panic!("pulumi never said {needle:?} ({e})"),
            }
        }
    };
    signal(child.id(), "INT");
    wait_line("^C received; cancelling");
    signal(child.id(), "TERM");
    let status = ended(child);
    let stdout = reader.join().unwrap();
    assert_eq!(stdout.matches("received; cancelling").count(), 1, "{stdout}");
    assert!(stdout.contains("SIGTERM received; terminating"), "{stdout}");
    let call = ws.invocations().pop().unwrap();
    assert_eq!(call.command(), "up");
    assert_eq!(status.code(), Some(call.exit), "{stdout}");
    assert!(files_under(&locks).is_empty(), "the stack lock was left");
}

/// At a terminal, pulumi reads it (a background job would be stopped for reading it), the
/// terminal's Ctrl-C reaches it, and Ctrl-Z stops it and the runner until they are continued.
#[test]
fn at_a_terminal_the_terminal_is_pulumis() {
    let ws = Ws::configured("aws");
    let bin = ws.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("pulumi"),
        "#!/bin/sh\nprintf 'Proceed? '\nread answer\necho \"answered $answer\"\nprintf 'Again? '\nread answer\n\
         echo \"answered $answer\"\nexec sleep 300\n",
    )
    .unwrap();
    std::fs::set_permissions(bin.join("pulumi"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let c = ws.command(
        &["pulumi", "vpc", "-s", "dev", "--", "up"],
        &[("PATH", &path), ("TERM", "dumb")],
    );
    let mut s = expectrl::Session::spawn(c).expect("a pseudo-terminal");
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    s.expect("Proceed? ").unwrap();
    s.send_line("yes").unwrap();
    s.expect("answered yes").unwrap();
    s.expect("Again? ").unwrap();
    // Ctrl-Z: pulumi stops, then the runner, as a shell's job would; continued, pulumi has the
    // terminal again.
    s.send(expectrl::ControlCode::Substitute).unwrap();
    let runner = s.get_process().pid().to_string();
    wait_until(Duration::from_secs(60), "the runner did not stop with pulumi", || {
        std::fs::read_to_string(format!("/proc/{runner}/stat"))
            .unwrap()
            .rsplit_once(')')
            .unwrap()
            .1
            .trim_start()
            .starts_with('T')
    });
    signal(runner.parse().unwrap(), "CONT");
    s.send_line("sure").unwrap();
    s.expect("answered sure").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    let mut screen = String::new();
    let _ = std::io::Read::read_to_string(&mut s, &mut screen);
    let status = format!("{:?}", s.get_process().wait().unwrap());
    assert_eq!(status, format!("Exited(Pid({runner}), 130)"), "{screen}");
}

/// Whether `project`'s next `up` runs, and why, as `status --format json` says.
fn next_up(ws: &Ws, project: &str) -> (bool, String) {
    let status = ws
        .exec(&["status", "-s", "dev", "--format", "json"], &[])
        .expect(0)
        .json();
    let p = crate::support::project(&status, project).clone();
    (
        p["up"]["runs"].as_bool().unwrap(),
        p["up"]["why"].as_str().unwrap().to_string(),
    )
}

#[test]
fn a_passthrough_that_changes_a_stack_is_recorded_and_the_next_up_runs_it() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    // Reading changes nothing.
    ws.exec(&["pulumi", "vpc", "-s", "dev", "--", "stack", "history"], &[])
        .expect(0);
    assert_eq!(next_up(&ws, "vpc"), (false, "unchanged since its last up".into()));
    // A destroy through the passthrough: the run state knows it, and says which command.
    ws.exec(&["pulumi", "vpc", "-s", "dev", "--", "destroy", "--yes"], &[])
        .expect(0);
    assert_eq!(
        next_up(&ws, "vpc"),
        (
            true,
            "`runner pulumi vpc -- destroy --yes` changed its stack since its last up".into()
        )
    );
    let run = ws.up("aws", &["--target", "eks"], &[]).expect(0);
    // `vpc (`runner pulumi vpc -- destroy --yes` changed its stack …)`.
    crate::snapshot!(
        ws.path(),
        "up_says_why_after_a_passthrough",
        crate::support::lines_with(&run.stderr, "up: ")
    );
    assert_eq!(next_up(&ws, "vpc"), (false, "unchanged since its last up".into()));
    // A refresh too (what it took in is what the next up sets back).
    ws.exec(&["pulumi", "iam", "-s", "dev", "--", "refresh", "--yes"], &[])
        .expect(0);
    assert!(next_up(&ws, "iam").0);
    // And each command that replaces, re-keys, renames or keeps changing a stack: whatever
    // pulumi made of it, the next up runs the project again, saying which command.
    for (project, args) in [
        ("vpc", &["stack", "import", "--file", "empty.json"][..]),
        ("eks", &["stack", "change-secrets-provider", "passphrase"][..]),
        ("vpc", &["stack", "rename", "dev2"][..]),
    ] {
        ws.up("aws", &["--target", "eks"], &[]).expect(0);
        assert!(!next_up(&ws, project).0, "{args:?}");
        let mut all = vec!["pulumi", project, "-s", "dev", "--"];
        all.extend_from_slice(args);
        let _ = ws.exec(&all, &[]);
        let (runs, why) = next_up(&ws, project);
        assert!(runs, "{args:?}: {why}");
        assert!(
            why.contains(&format!("`runner pulumi {project} -- {}", args.join(" "))),
            "{why}"
        );
    }
}

#[test]
fn pulumis_arguments_without_the_dashes_are_answered_with_where_they_go() {
    let ws = Ws::configured("aws");
    ws.exec(&["pulumi", "vpc", "-s", "dev", "stack", "history"], &[])
        .expect(2)
        .stderr_has("note: pulumi's own arguments go after `--`: `runner pulumi vpc -s dev -- stack history`");
}

#[test]
fn a_secret_typed_on_the_command_line_is_not_echoed_by_the_debug_line() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "secrets"], &[]).expect(0);
    let run = ws
        .exec(
            &crate::support::words("-d pulumi secrets -s dev -- config set --secret sirius:ledger_pwd hunter2-rotated"),
            &[],
        )
        .expect(0);
    assert!(!run.stderr.contains("hunter2-rotated") && !run.stdout.contains("hunter2-rotated"));
    run.stderr_has("config set --secret sirius:ledger_pwd [secret] --stack dev");
}
