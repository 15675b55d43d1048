//! Destructive and wide operations ask first: `destroy` at a terminal wants the stack name typed
//! and without one wants `--yes`; `up` at a terminal asks once; what was refused says so with an
//! exit code of its own. Flags that mean nothing for a command are refused.

use std::time::Duration;

use expectrl::Expect as _;

use crate::support::Ws;

/// The runner at a pseudo-terminal, with the usual test environment.
fn at_terminal(ws: &Ws, args: &[&str]) -> expectrl::session::OsSession {
    let c = ws.command(args, &[("TERM", "dumb")]);
    let mut s = expectrl::Session::spawn(c).expect("a pseudo-terminal");
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    s
}

/// Whether a `pulumi COMMAND` ran in the workspace.
fn ran(ws: &Ws, command: &str) -> bool {
    ws.invocations().iter().any(|i| i.command() == command)
}

fn exit_code(s: &mut expectrl::session::OsSession) -> i32 {
    let mut screen = String::new();
    let _ = std::io::Read::read_to_string(s, &mut screen);
    // `Exited(Pid(N), CODE)`
    let status = format!("{:?}", s.get_process().wait().unwrap());
    status
        .strip_prefix("Exited(")
        .and_then(|r| r.rsplit(", ").next())
        .and_then(|c| c.trim_end_matches(')').parse().ok())
        .unwrap_or_else(|| panic!("{status}\n{screen}"))
}

#[test]
fn destroy_without_a_terminal_needs_yes_and_changes_nothing_without_it() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    ws.clear_invocations();
    ws.exec(&["destroy", "-p", "aws", "-s", "dev"], &[("CI", "true")])
        .expect(2)
        .stderr_has("`destroy` needs --yes when nobody can confirm it at a terminal")
        .stderr_has("`runner destroy -p aws -s dev --yes`");
    assert!(ws.invocations().is_empty(), "pulumi ran: {:?}", ws.invocations());
    // A wrapper gives the provider itself: its command needs no -p.
    ws.exec(
        &["destroy", "-p", "aws", "-s", "dev"],
        &[("CI", "true"), ("RUNNER_COMMAND", "scripts/try-aws")],
    )
    .expect(2)
    .stderr_has("`scripts/try-aws destroy -s dev --yes`");
    ws.exec(&["destroy", "-p", "aws", "-s", "dev", "-y"], &[("CI", "true")])
        .expect(0);
}

#[test]
fn destroy_at_a_terminal_wants_the_stack_name_typed() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    ws.clear_invocations();
    let mut s = at_terminal(&ws, &["destroy", "-p", "aws", "-s", "dev", "--target", "iam"]);
    s.expect("in this order:").unwrap();
    s.expect("Type the stack name `dev` to destroy it").unwrap();
    s.send_line("prod").unwrap();
    s.expect("not confirmed: nothing was changed").unwrap();
    assert_eq!(exit_code(&mut s), 5);
    assert!(!ran(&ws, "destroy"), "destroyed anyway");
}

#[test]
fn up_at_a_terminal_says_what_it_will_run_and_asks_once() {
    let ws = Ws::configured("aws");
    let mut s = at_terminal(&ws, &["up", "-p", "aws", "-s", "dev"]);
    s.expect("up: 16 projects of provider aws, stack dev, backend file://")
        .unwrap();
    s.expect("Go ahead?").unwrap();
    s.send_line("n").unwrap();
    assert_eq!(exit_code(&mut s), 5);
    assert!(!ran(&ws, "up"), "ran anyway");

    let mut s = at_terminal(&ws, &["up", "-p", "aws", "-s", "dev", "--target", "iam"]);
    s.expect("Go ahead?").unwrap();
    s.send_line("y").unwrap();
    // It ends with where to look next.
    s.expect(
        "Next: `runner output iam -s dev` shows what it made; `runner status -s dev` says what is deployed and why; \
         `runner report -s dev` draws this run",
    )
    .unwrap();
    assert_eq!(exit_code(&mut s), 0);
    assert!(ran(&ws, "up"));
    // Nothing to do: nothing asked, and no run to look at next.
    let mut s = at_terminal(&ws, &["up", "-p", "aws", "-s", "dev", "--target", "iam"]);
    let seen = s.expect(expectrl::Eof).unwrap();
    nothing_to_do(&ws, &String::from_utf8_lossy(seen.as_bytes()));
}

/// What a terminal shows of an up with nothing to do: unchanged, no question, no prediction, no
/// `Next:`.
#[track_caller]
fn nothing_to_do(ws: &Ws, screen: &str) {
    crate::snapshot!(
        ws.path(),
        "up_at_a_terminal_with_nothing_to_do",
        screen.replace("\r\n", "\n")
    );
}

#[test]
fn a_second_runner_in_the_workspace_exits_with_its_own_code() {
    let ws = Ws::configured("aws");
    let mut first = ws.start(
        &["up", "-p", "aws", "-s", "dev", "--target", "iam"],
        &[("PULUMI_STANDIN_DELAY_MS", "*=3000")],
    );
    // The first holds the lock once it created its lock file and started a project.
    let lock = ws.path().join(".runner/lock");
    // (A project started: its start is in the run's journal.)
    let journal = ws.path().join(".runner/dev/journal.jsonl");
    crate::support::wait_until(Duration::from_secs(30), "the first runner never started", || {
        lock.exists() && journal.exists()
    });
    ws.up("aws", &["--target", "iam"], &[])
        .expect(4)
        .stderr_has("another runner is already running in this workspace");
    assert!(first.wait().unwrap().success());
}

#[test]
fn flags_that_mean_nothing_for_a_command_are_refused_and_targets_split_on_commas() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--prune-kubeconfig"], &[])
        .expect(2)
        .stderr_has("unexpected argument '--prune-kubeconfig'");
    ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--fresh", "--yes"], &[])
        .expect(2)
        .stderr_has("unexpected argument '--fresh'");
    ws.up("aws", &["-t", "iam,vpc"], &[]).expect(0);
    let ran: std::collections::BTreeSet<String> = ws
        .invocations()
        .iter()
        .filter(|i| i.command() == "up")
        .map(|i| i.cwd.to_str().unwrap().rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(ran, ["iam", "vpc"].map(String::from).into());
}

#[test]
fn version_is_a_command_too() {
    let ws = Ws::empty();
    let as_flag = ws.run(&["--version"]).expect(0).stdout;
    assert_eq!(ws.run(&["version"]).expect(0).stdout, as_flag);
    assert!(as_flag.starts_with("runner "), "{as_flag}");
}

#[test]
fn an_unchanged_run_says_so_in_one_line_and_a_preview_says_what_would_change() {
    let ws = Ws::configured("aws");
    ws.up("aws", &[], &[]).expect(0);
    let run = ws.up("aws", &[], &[]).expect(0);
    let (table, settings) = crate::support::closing_table(&run.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_unchanged_in_one_line", table));
    assert_eq!(run.stderr.matches("unchanged").count(), 2, "{}", run.stderr);

    ws.exec(&["preview", "-p", "aws", "-s", "dev", "--expect-no-changes"], &[])
        .expect(0)
        .stderr_has("Nothing would change.");
    ws.edit("config/pulumi/Pulumi.dev.yaml", "eks:min_size: 3", "eks:min_size: 4");
    ws.exec(&["preview", "-p", "aws", "-s", "dev", "--expect-no-changes"], &[])
        .expect(6)
        .stderr_has("Would change: eks: ~1 update")
        .stderr_has("(resources: + created, ~ updated, ± replaced, - deleted, = unchanged, > read)");
    ws.exec(&["preview", "-p", "aws", "-s", "dev"], &[]).expect(0);
    // --fresh runs everything, and says so before it starts. A destroy is not weighed with the
    // provider's estimates, which are of an up: no guess until one has been measured.
    ws.up("aws", &["--fresh"], &[])
        .expect(0)
        .stderr_has("up: 16 of 16 projects will run (--fresh: unchanged ones too)");
    let first = ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--yes"], &[]).expect(0);
    assert!(!first.stderr.contains("Predicted:"), "{}", first.stderr);
    ws.up("aws", &[], &[]).expect(0);
    ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--yes"], &[])
        .expect(0)
        .stderr_has("(learned from past runs)");
}

#[test]
fn ctrl_c_after_the_questions_and_before_the_first_project_exits_130() {
    let ws = Ws::configured("aws");
    let mut s = at_terminal(&ws, &["up", "-p", "aws", "-s", "dev"]);
    s.expect("Go ahead?").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    assert_eq!(exit_code(&mut s), 130);
    assert!(!ran(&ws, "up"), "a project started");
}

/// Ctrl-C at the question of a run that switched stacks: nothing ran, so the switch is put back
/// as a refusal puts it back, and the interruption is said once.
#[test]
fn ctrl_c_at_the_question_puts_a_switch_back_and_says_so_once() {
    let ws = Ws::configured("aws");
    ws.write("config/pulumi/environment", "PULUMI_STACK=dev\n");
    let dev = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    ws.write("config/pulumi/Pulumi.qa.yaml", &dev);
    let mut s = at_terminal(&ws, &["destroy", "-p", "aws", "-s", "qa", "--switch-stack"]);
    s.expect("Type the stack name `qa` to destroy it").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    let mut screen = String::new();
    let _ = std::io::Read::read_to_string(&mut s, &mut screen);
    assert_eq!(exit_code(&mut s), 130);
    assert_eq!(screen.matches("interrupted").count(), 1, "{screen}");
    // `interrupted: nothing ran`, and `Switched the workspace back to stack dev: nothing ran on qa`.
    crate::snapshot!(
        ws.path(),
        "ctrl_c_at_the_question_of_a_switch",
        crate::support::from_line(&screen.replace("\r\n", "\n"), "interrupted")
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("config/pulumi/environment")).unwrap(),
        "PULUMI_STACK=dev\n"
    );
}

#[test]
fn the_confirmation_reads_a_whole_line_at_any_terminal() {
    let ws = Ws::configured("aws");
    let c = ws.command(
        &["up", "-p", "aws", "-s", "dev", "--target", "iam"],
        &[("TERM", "xterm-256color")],
    );
    let mut s = expectrl::Session::spawn(c).expect("a pseudo-terminal");
    s.set_expect_timeout(Some(Duration::from_secs(60)));
    // How long it will take is said before the question: it is part of the answer.
    s.expect("Predicted: about").unwrap();
    s.expect("Go ahead? [y/N] ").unwrap();
    // Read a key at a time, `nonsense` would be its `n`: a no. A line is neither: asked again.
    s.send_line("nonsense").unwrap();
    s.expect("Answer yes or no").unwrap();
    s.expect("Go ahead? [y/N] ").unwrap();
    s.send_line("yes").unwrap();
    assert_eq!(exit_code(&mut s), 0);
    assert!(ran(&ws, "up"), "yes ran it");
}

#[test]
fn an_up_with_nothing_to_do_asks_nothing_and_predicts_nothing() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let mut s = at_terminal(&ws, &["up", "-p", "aws", "-s", "dev", "--target", "iam"]);
    let mut screen = String::new();
    let _ = std::io::Read::read_to_string(&mut s, &mut screen);
    nothing_to_do(&ws, &screen);
    assert_eq!(exit_code(&mut s), 0);
}

/// An up at a terminal that ran the app ends with where the app is: the last project's address
/// output, as MARA's runner ended with the application's URL.
#[test]
fn up_at_a_terminal_ends_with_the_apps_address() {
    let ws = Ws::configured("kubeconfig");
    let mut s = at_terminal(&ws, &["up", "-p", "kubeconfig", "-s", "dev", "--yes"]);
    let seen = s.expect(expectrl::Eof).unwrap();
    let screen = String::from_utf8_lossy(seen.as_bytes()).into_owned();
    let at = screen
        .find("sirius is at http://")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(screen[at..].contains("(its output `application_url`)"), "{screen}");
    assert!(at < screen.find("Next: `runner output sirius").unwrap(), "{screen}");
    // In a CI log too (no terminal): the address, without the terminal's `Next:`.
    let ci = ws.up("kubeconfig", &["--fresh"], &[("CI", "true")]).expect(0);
    let (table, settings) = crate::support::closing_table(&ci.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_of_a_ci_job_ends_with_the_apps_address", table));
}
