//! How a run stops: a hang-up like Ctrl-C, a grace period before SIGTERM and then SIGKILL for
//! what does not stop, and timeouts that stop a project that runs too long.

use std::time::{Duration, Instant};

use crate::support::{Ws, signal};

/// When the locks `lock` writes were taken.
const LOCK_TIME: &str = "2026-11-23T10:00:00Z";

/// iam's `pulumi up` hangs until it is stopped.
const HANG_IAM: [(&str, &str); 1] = [("PULUMI_STANDIN_HANG", "iam:up")];

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

#[test]
fn a_hang_up_stops_the_run_as_ctrl_c_does() {
    let ws = Ws::configured("aws");
    let child = ws.start_keeping_stderr(&["up", "-p", "aws", "-s", "dev", "--target", "iam"], &HANG_IAM);
    crate::support::up_lock(&ws.path().join(".pulumi-state/.pulumi/locks/organization/iam/dev"));
    signal(child.id(), "HUP");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(statuses(&ws)["iam"], "interrupted");
}

/// After an interrupt, what was cut short is "interrupted" everywhere (not "failed"), said in
/// one block, an error (not a failure) in the `JUnit` report, and `status` says the next up runs it; the
/// advice to resume leaves out `--fresh`, which would run everything again.
#[test]
fn interrupted_is_not_failed_in_the_summary_junit_and_status_and_the_resume_advice_fits_fresh() {
    let ws = Ws::configured("aws");
    let junit = ws.path().join("junit.xml");
    let child = ws.start_keeping_stderr(
        &[
            "up",
            "-p",
            "aws",
            "-s",
            "dev",
            "--target",
            "iam",
            "--fresh",
            "--junit",
            junit.to_str().unwrap(),
        ],
        &HANG_IAM,
    );
    crate::support::up_lock(&ws.path().join(".pulumi-state/.pulumi/locks/organization/iam/dev"));
    signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("Failed:"), "{stderr}");
    // The closing table as a person reads it after Ctrl-C (beside those of a success and a
    // failure, in run.rs): `Interrupted: iam (up): cut short before it ended; it runs again on
    // the next run`, and how to resume (`Run it again without --fresh`).
    let (closing, settings) = crate::support::closing_table(&stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_interrupted", closing));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"0\" errors=\"1\""), "{xml}");
    assert!(xml.contains("type=\"up interrupted\""), "{xml}");
    crate::ci::ant_schema(&junit);
    let status = ws
        .exec(&["status", "-s", "dev", "--format", "json"], &[])
        .expect(0)
        .json();
    let iam = crate::support::project(&status, "iam").clone();
    assert_eq!(iam["last"]["status"], "interrupted", "{iam}");
    assert_eq!(iam["up"]["why"], "its last up was interrupted", "{iam}");
}

#[test]
fn what_ignores_ctrl_c_gets_sigterm_then_sigkill_after_the_grace_period() {
    let ws = Ws::configured("aws");
    // A hook that ignores SIGINT and SIGTERM: only SIGKILL ends it.
    ws.eks_hook(
        "stubborn.sh",
        "#!/bin/sh\ntrap '' INT TERM\ntouch \"$MARA_WORKSPACE/stubborn-started\"\nwhile :; do sleep 1; done\n",
    );
    let child = ws.start_keeping_stderr(
        &["up", "-p", "aws", "-s", "dev", "--target", "eks", "--grace", "1s"],
        &[],
    );
    // (The run got as far as that.)
    crate::support::wait_for_file(&ws.path().join("stubborn-started"));
    let asked = Instant::now();
    signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    // (No redactions: the grace given, 1s, is what is said.)
    insta::assert_snapshot!("grace_said", crate::support::lines_with(&stderr, "SIGTERM"));
    // Two grace periods, not forever (generous bound: the machine may be busy).
    assert!(asked.elapsed() < Duration::from_secs(20), "took {:?}", asked.elapsed());
}

#[test]
fn a_project_that_runs_too_long_is_stopped_and_ends_timed_out() {
    let ws = Ws::configured("aws");
    let run = ws
        .up("aws", &["--target", "iam", "--timeout", "1s"], &HANG_IAM)
        .expect(1);
    timed_out_after_1s(&run);
    insta::assert_snapshot!("failed_block_timed_out", crate::support::failed_block(&run.stderr));
    assert_eq!(statuses(&ws)["iam"], "timed out");

    // The provider file may give a project its own timeout; a bad one is refused.
    ws.edit(
        "providers/aws.toml",
        "name = \"iam\"",
        "name = \"iam\"\ntimeout = \"1s\"",
    );
    ws.up("aws", &["--target", "iam"], &HANG_IAM).expect(1);
    assert_eq!(statuses(&ws)["iam"], "timed out");
    ws.edit("providers/aws.toml", "timeout = \"1s\"", "timeout = \"soon\"");
    ws.up("aws", &["--target", "iam"], &[])
        .expect(2)
        .stderr_has("`soon` is not a timeout");
}

/// A duration past what any clock holds, or past what the runner takes, is refused when the
/// command line is read (naming the flag, the value and the most it may be), before anything
/// is written; a provider file's `timeout` likewise, at its line.
#[test]
fn a_duration_too_long_is_refused_before_anything_runs() {
    let ws = Ws::configured("aws");
    // Each refusal names the flag, the value and the most it may be, 30 days (720h).
    let mut said = String::new();
    for (flag, value) in [
        ("--timeout", "18446744073709551615s"),
        ("--timeout", "18446744073709551616s"),
        ("--grace", "99999999999999999999h"),
        ("--grace", "721h"),
    ] {
        let run = ws
            .exec(&["up", "-p", "aws", "-s", "dev", "--target", "iam", flag, value], &[])
            .expect(2);
        said.push_str(&run.stderr);
        assert!(
            !ws.path().join(".runner").exists(),
            "{flag} {value}: wrote under .runner"
        );
        assert!(ws.invocations().is_empty(), "{flag} {value}: ran pulumi");
    }
    insta::assert_snapshot!("durations_too_long", said);
    ws.edit(
        "providers/aws.toml",
        "name = \"iam\"",
        "name = \"iam\"\ntimeout = \"18446744073709551615s\"",
    );
    ws.up("aws", &["--target", "iam"], &[])
        .expect(2)
        .stderr_has("providers/aws.toml:")
        .stderr_has("`18446744073709551615s` is a timeout longer than the most the runner takes, 30 days (720h)");
}

/// The longest grace there is, with a timeout that fires: the project is stopped and ends
/// `timed out`, the run ends (no panic), and nothing says a run is still going.
#[test]
fn a_timeout_with_the_longest_grace_stops_the_project_and_records_it() {
    let ws = Ws::configured("aws");
    let run = ws
        .exec(
            &crate::support::words("up -p aws -s dev --target iam --grace 720h --timeout 1s"),
            &HANG_IAM,
        )
        .expect(1);
    timed_out_after_1s(&run);
    assert_eq!(statuses(&ws)["iam"], "timed out");
    assert!(
        !ws.path().join(".runner/dev/journal.jsonl").exists(),
        "the journal was left"
    );
    let locks = ws.path().join(".pulumi-state/.pulumi/locks/organization/iam/dev");
    assert!(crate::support::files_under(&locks).is_empty(), "a stack lock was left");
    let status = ws
        .exec(&["status", "-s", "dev", "--format", "json"], &[])
        .expect(0)
        .json();
    assert_eq!(status["running"], false);
}

/// A lock of the file backend for `project`'s stack `dev`, as pulumi writes one.
fn lock(ws: &Ws, project: &str, id: &str, host: &str, pid: u32) -> std::path::PathBuf {
    let dir = ws
        .path()
        .join(format!(".pulumi-state/.pulumi/locks/organization/{project}/dev"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{id}.json"));
    let info = serde_json::json!({"pid": pid, "username": "ann", "hostname": host, "timestamp": LOCK_TIME});
    std::fs::write(&file, info.to_string()).unwrap();
    file
}

fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// The run said it stopped iam, timed out after the 1s its `--timeout` gave.
#[track_caller]
fn timed_out_after_1s(run: &crate::support::Run) {
    insta::assert_snapshot!(
        "timed_out_after_1s",
        crate::support::lines_with(&run.stderr, "[iam] timed out")
    );
}

/// The `Failed:` block of a run refused a stack's lock, as a person reads it: the workspace's
/// path, this host's name, the dead pid and the lock's age filtered.
#[track_caller]
fn lock_refused(ws: &Ws, run: &crate::support::Run, dead: Option<u32>, name: &str) {
    let mut failed = crate::support::failed_block(&run.stderr)
        .replace(&format!("@{}", this_host()), "@[this host]")
        // The time the lock says it was taken (as `lock` writes it), kept from the filter of
        // times that vary.
        .replace(LOCK_TIME, "<2026-11-23 at 10:00 UTC>");
    if let Some(pid) = dead {
        failed = failed.replace(&format!("pid {pid}"), "pid [dead pid]");
    }
    let mut settings = crate::support::redactions(ws.path());
    // How long ago the lock was taken (on a fixed date): more every day.
    settings.add_filter(r"(\d+[dhms] ?)+ ago\b", "[age] ago");
    settings.bind(|| insta::assert_snapshot!(name, failed));
}

/// A pid that no longer runs.
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

/// Creating a stack takes its lock too (`CreateStack`), which a killed creation leaves: named,
/// and removed only when asked, both where the run's set-up creates the secrets store's stack
/// and where a project's own stack is created.
#[test]
fn a_stale_lock_on_a_stack_not_created_yet_is_named_and_removed_only_when_asked() {
    let ws = Ws::configured("aws");
    let store = lock(&ws, "secrets", "store", &this_host(), dead_pid());
    let own = lock(&ws, "iam", "own", &this_host(), dead_pid());
    let up = ["up", "-p", "aws", "-s", "dev", "--target", "iam"];
    // The set-up creates the store's stack, for the salt of the shared stack file.
    ws.exec(&up, &[])
        .expect(3)
        .stderr_has("pulumi stack select --create exited with code 1: error: could not create stack: the stack is currently locked by 1 lock(s)")
        .stderr_has("which no longer runs: a stale lock (file://")
        .stderr_has("/locks/organization/secrets/dev/store.json?no_tmp_dir=true); `--remove-stale-locks` removes it")
        .stderr_has("fix: wait for the process that holds the lock to end");
    assert!(store.exists() && own.exists());

    let mut removing = up.to_vec();
    removing.push("--remove-stale-locks");
    let run = ws.exec(&removing, &[]).expect(0);
    assert_eq!(
        run.stderr.matches("removed the stale lock /").count(),
        2,
        "{}",
        run.stderr
    );
    assert!(!store.exists() && !own.exists());

    // Where the run itself creates a project's stack, just before its `up`.
    let pid = dead_pid();
    let vpc = lock(&ws, "vpc", "vpc", &this_host(), pid);
    let run = ws.up("aws", &["--target", "vpc"], &[]).expect(1);
    // `pulumi stack select` could not create the stack: the stale lock, and that
    // `--remove-stale-locks` removes it.
    lock_refused(&ws, &run, Some(pid), "stale_lock_on_a_stack_not_created_yet");
    assert!(vpc.exists());
}

#[test]
fn a_stale_lock_is_named_and_removed_only_when_asked_and_another_hosts_never() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let pid = dead_pid();
    let stale = lock(&ws, "iam", "stale", &this_host(), pid);
    let run = ws.up("aws", &["--target", "iam", "--fresh"], &[]).expect(1);
    // Which no longer runs: a stale lock, that `--remove-stale-locks` removes.
    lock_refused(&ws, &run, Some(pid), "stale_lock");
    assert!(stale.exists());
    ws.up("aws", &["--target", "iam", "--fresh", "--remove-stale-locks"], &[])
        .expect(0)
        .stderr_has("removed the stale lock /");
    assert!(!stale.exists());

    // A lock that is a link (to a file elsewhere, which the removal must never reach): left, and
    // the flag given says why instead of advising itself.
    let pid = dead_pid();
    let elsewhere = lock(&ws, "network-elsewhere", "kept", &this_host(), pid);
    let linked = stale.with_file_name("linked.json");
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    // Under a wrapper, the closing's notes name the command as the wrapper's user types it.
    let wrapper = [("RUNNER_COMMAND", "scripts/try-aws")];
    let run = ws
        .up("aws", &["--target", "iam", "--fresh", "--remove-stale-locks"], &wrapper)
        .expect(1);
    // `--remove-stale-locks` left it: it removes only regular files (and advises nothing).
    lock_refused(&ws, &run, Some(pid), "stale_lock_that_is_a_link");
    assert!(linked.exists() && elsewhere.exists());
    std::fs::remove_file(&linked).unwrap();

    // Another machine's lock: reported with its host, never removed.
    let other = lock(&ws, "iam", "other", "build-7", 4242);
    let run = ws
        .up("aws", &["--target", "iam", "--fresh", "--remove-stale-locks"], &[])
        .expect(1);
    // `locked by ann@build-7 (pid 4242) since …`: another machine's lock, left alone.
    lock_refused(&ws, &run, None, "lock_of_another_machine");
    assert!(other.exists());
}

/// The file backend writes a lock through a temporary file beside it; a pulumi killed at that
/// moment leaves it, and pulumi then fails on every operation of the stack with a bare JSON
/// error: the runner names the file and the fix.
#[test]
fn a_file_left_among_a_stacks_locks_by_a_killed_pulumi_is_named() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let dir = ws.path().join(".pulumi-state/.pulumi/locks/organization/iam/dev");
    std::fs::create_dir_all(&dir).unwrap();
    let stranded = dir.join("0b7a5c1e-3f0e-4c1a-9d2b-5e8f7a6b4c3d.json.18a2b3c4d5e6f708.tmp");
    std::fs::write(&stranded, "").unwrap();
    let run = ws.up("aws", &["--target", "iam", "--fresh"], &[]).expect(1);
    crate::snapshot!(
        ws.path(),
        "failed_block_a_file_among_the_locks",
        crate::support::failed_block(&run.stderr)
    );
    std::fs::remove_file(&stranded).unwrap();
    ws.up("aws", &["--target", "iam", "--fresh"], &[]).expect(0);
}
