//! The run state's journal: a runner killed (SIGKILL) at any moment leaves what the next run
//! needs to resume exactly — nothing recorded as done is done again, everything else is — and a
//! journal line cut short by the kill is ignored with a warning.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Later, Ws, files_under, wait_until};

fn journal(ws: &Ws) -> std::path::PathBuf {
    ws.path().join(".runner/dev/journal.jsonl")
}

/// The projects whose `up` the run state records as succeeded: the journal's whole lines, and
/// `state.json`, into which a run that ended before the kill folded its journal.
fn recorded_done(ws: &Ws) -> BTreeSet<String> {
    let mut done: BTreeSet<String> = std::fs::read_to_string(journal(ws))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let f = v.get("finished")?;
            (f["status"] == "succeeded" && f["operation"] == "up").then(|| f["project"].as_str().unwrap().to_string())
        })
        .collect();
    let state: Value = std::fs::read_to_string(ws.path().join(".runner/dev/state.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if let Some(projects) = state["projects"].as_object() {
        done.extend(
            projects
                .iter()
                .filter(|(_, p)| p["status"] == "succeeded" && p["operation"] == "up")
                .map(|(name, _)| name.clone()),
        );
    }
    done
}

/// The projects (by directory name) whose `up` the stand-in ran, from its call log.
fn ups(ws: &Ws) -> BTreeSet<String> {
    ws.invocations()
        .iter()
        .filter(|i| i.command() == "up")
        .map(|i| project_name(i.cwd.to_str().unwrap()))
        .collect()
}

fn project_name(dir: &str) -> String {
    let text = std::fs::read_to_string(Path::new(dir).join("Pulumi.yaml")).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    doc["name"].as_str().unwrap().to_string()
}

/// Waits until no stack lock is held (the `pulumi` children of a killed runner run on) and the
/// workspace lock is free (a child started at the moment of the kill holds it until it execs).
fn wait_for_unlocked(ws: &Ws) {
    let locks = ws.path().join(".pulumi-state/.pulumi/locks");
    let held = || files_under(&locks);
    let workspace_free = || std::fs::File::open(ws.path().join(".runner/lock")).map_or(true, |f| f.try_lock().is_ok());
    // The killed runner's `pulumi`s are not taken down with it (their output goes to files,
    // not to its pipes): they finish, and release their stacks.
    let what = Later(|| {
        format!(
            "still held: stack locks {:?}, the workspace lock {}, a process in the workspace {}",
            held(),
            !workspace_free(),
            working_in(ws.path())
        )
    });
    wait_until(Duration::from_secs(60), what, || {
        held().is_empty() && workspace_free() && !working_in(ws.path())
    });
}

/// Whether a process (a `pulumi` of the killed runner's) still works in a directory of `dir`.
fn working_in(dir: &std::path::Path) -> bool {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    std::fs::read_dir("/proc").into_iter().flatten().flatten().any(|p| {
        let zombie = std::fs::read_to_string(p.path().join("stat")).is_ok_and(|s| s.contains(") Z"));
        !zombie && std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
    })
}

/// Starts `up`, SIGKILLs the runner once `kill_when` holds, lets its children end, and checks
/// that the next `up` runs exactly what the killed run had not recorded as done.
fn kill_and_resume(kill_when: &dyn Fn(&Ws, Duration) -> bool) {
    let ws = Ws::configured("aws");
    let mut child = ws.start(
        &["up", "-p", "aws", "-s", "dev"],
        &[("PULUMI_STANDIN_DELAY_MS", "*=60")],
    );
    let start = Instant::now();
    wait_until(Duration::from_secs(60), "the kill point never came", || {
        kill_when(&ws, start.elapsed()) || child.try_wait().unwrap().is_some()
    });
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    wait_for_unlocked(&ws);
    let done = recorded_done(&ws);

    ws.clear_invocations();
    let run = ws.up("aws", &[], &[]).expect(0);
    let plan: Value = serde_json::from_str(
        &ws.exec(&["show-plan", "-p", "aws", "--format", "json"], &[])
            .expect(0)
            .stdout,
    )
    .unwrap();
    let all: BTreeSet<String> = plan["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(all.len(), 16);
    let ran = ups(&ws);
    assert_eq!(
        ran,
        all.difference(&done).cloned().collect::<BTreeSet<_>>(),
        "recorded as done: {done:?}\n{}",
        run.stderr
    );
    assert!(!journal(&ws).exists(), "the journal was folded into state.json");
    ws.clear_invocations();
    let again = ws.up("aws", &[], &[]).expect(0);
    assert!(ups(&ws).is_empty(), "{}", again.stderr);
    let (table, settings) = crate::support::closing_table(&again.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_after_the_resume", table));
}

fn lines(ws: &Ws) -> usize {
    std::fs::read_to_string(journal(ws)).map_or(0, |t| t.lines().count())
}

#[test]
fn a_runner_killed_at_any_moment_resumes_exactly() {
    // Before any project started, after the first start, in the middle, near the end, and at
    // moments chosen by the clock rather than by the journal.
    kill_and_resume(&|_, t| t > Duration::from_millis(150));
    kill_and_resume(&|ws, _| lines(ws) >= 1);
    kill_and_resume(&|ws, _| lines(ws) >= 13);
    kill_and_resume(&|ws, _| lines(ws) >= 27);
    let ms = 300 + u64::from(std::process::id() % 700);
    // Said, so that a failure at this moment can be tried again at the same one.
    eprintln!("the last kill comes {ms} ms after the start");
    kill_and_resume(&|_, t| t > Duration::from_millis(ms));
}

#[test]
fn a_journal_line_cut_short_is_ignored_with_a_warning() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    // A run killed while writing: its whole line (vpc's up failed) counts, the cut one does not.
    let failed = r#"{"finished":{"project":"vpc","operation":"up","status":"failed","started":"2026-01-01T00:00:00.000Z","ended":"2026-01-01T00:00:01.000Z"}}"#;
    std::fs::write(
        journal(&ws),
        format!("{failed}\n{{\"finished\":{{\"project\":\"vpc\",\"oper"),
    )
    .unwrap();
    ws.clear_invocations();
    let run = ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    crate::snapshot!(
        ws.path(),
        "a_journal_line_cut_short",
        crate::support::message(&run.stderr, "warning:")
    );
    assert_eq!(
        ups(&ws),
        BTreeSet::from(["vpc".to_string()]),
        "the failure was read: vpc ran again"
    );
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/dev/state.json")).unwrap()).unwrap();
    assert_eq!(state["projects"]["vpc"]["status"], "succeeded");
    assert!(!journal(&ws).exists());
}

/// A journal line is trusted only once checked: one naming a project the graph does not have,
/// a status or an operation the runner does not record, or a time it does not write is named
/// (line, what is wrong, escaped) and left out, by `status` and by the `up` that folds it.
#[test]
fn journal_lines_the_runner_could_not_have_written_are_named_and_left_out() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    let end = |project: &str, operation: &str, status: &str, ended: &str| {
        serde_json::json!({"finished": {"project": project, "operation": operation, "status": status,
            "started": "2026-01-01T00:00:00.000Z", "ended": ended}})
        .to_string()
    };
    let lines = [
        end("ghost\u{1b}[2J", "up", "failed", "2026-01-01T00:00:01.000Z"),
        end("vpc", "up", "exploded", "2026-01-01T00:00:01.000Z"),
        end("vpc", "nuke", "failed", "2026-01-01T00:00:01.000Z"),
        end("vpc", "up", "failed", "yesterday"),
    ];
    std::fs::write(journal(&ws), lines.join("\n") + "\n").unwrap();
    let expected = [
        "ignored line 1 of .runner/dev/journal.jsonl: it names project `ghost\\u{1b}[2J`, which the graph does not have",
        "ignored line 2 of .runner/dev/journal.jsonl: its status `exploded` is none the runner records",
        "ignored line 3 of .runner/dev/journal.jsonl: its operation `nuke` is none of up, destroy, refresh, preview",
        "ignored line 4 of .runner/dev/journal.jsonl: its time `yesterday` is not one the runner writes",
    ];
    let status = ws.exec(&["status", "-s", "dev", "--format", "json"], &[]).expect(0);
    for e in expected {
        assert!(status.stderr.contains(e), "{e}\n{}", status.stderr);
    }
    assert!(!status.stderr.contains('\u{1b}'), "{}", status.stderr);
    let json = status.json();
    let vpc = crate::support::project(&json, "vpc");
    assert_eq!(vpc["last"]["status"], "succeeded", "{json:#}");
    assert!(!json["up_would_run"].as_array().unwrap().iter().any(|p| p == "vpc"));

    ws.clear_invocations();
    let run = ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    for e in expected {
        assert!(run.stderr.contains(e), "{e}\n{}", run.stderr);
    }
    assert!(ups(&ws).is_empty(), "a line left out made vpc run: {}", run.stderr);
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/dev/state.json")).unwrap()).unwrap();
    assert_eq!(
        state["projects"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["vpc"]
    );
}
