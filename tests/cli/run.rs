//! `up`, `destroy`, `refresh`, `preview` through the binary, with the Pulumi stand-in as `pulumi`:
//! order and overlap from the invocation log, failures and resume, outputs to hooks and the
//! summary, secrets never leaked, Ctrl-C.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Ws, failed_block, files_under, redactions, runs, wait_until};
use test_requires::requires;

/// The token inside every placeholder kubeconfig output: a secret.
const SECRET_MARK: &str = "placeholder-token-dev";

/// (start, end) of each project's operation command (`up`, `destroy`, …), by project.
fn intervals(ws: &Ws, op: &str) -> BTreeMap<String, (f64, f64)> {
    ws.invocations()
        .into_iter()
        .filter(|i| i.command() == op)
        .map(|i| {
            let project = project_of(i.cwd.to_str().unwrap());
            (project, (i.start, i.end))
        })
        .collect()
}

/// The Pulumi project name of a directory (variants of one project live in several).
fn project_of(dir: &str) -> String {
    let text = std::fs::read_to_string(Path::new(dir).join("Pulumi.yaml")).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    doc["name"].as_str().unwrap().to_string()
}

/// Each project's span, from the start of its first `pulumi` command to the end of its last,
/// sorted by start.
fn project_spans(ws: &Ws) -> Vec<(f64, f64)> {
    let mut spans: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    // Storing the secrets (`stack select`, then `config set`) comes before the run.
    let all = ws.invocations();
    let setup = all.iter().rposition(|i| i.command() == "config").map_or(0, |k| k + 1);
    for i in all.into_iter().skip(setup) {
        let (start, end) = (i.start, i.end);
        let span = spans.entry(i.cwd.to_str().unwrap().to_string()).or_insert((start, end));
        span.0 = span.0.min(start);
        span.1 = span.1.max(end);
    }
    let mut v: Vec<(f64, f64)> = spans.into_values().collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

/// What each project of a plan waits for, from `show-plan --format json`.
fn waits(ws: &Ws, provider: &str, op: &str) -> BTreeMap<String, Vec<String>> {
    let plan = ws
        .run(&["show-plan", "-p", provider, "--operation", op, "--format", "json"])
        .expect(0)
        .json();
    crate::support::waits(&plan)
}

fn summary(ws: &Ws) -> Value {
    serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/last-run.json")).unwrap()).unwrap()
}

fn statuses(ws: &Ws) -> BTreeMap<String, String> {
    summary(ws)["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// No file the runner wrote, and nothing it printed, holds a secret value.
#[track_caller]
fn assert_no_secret(ws: &Ws, printed: &[&str]) {
    for p in printed {
        assert!(!p.contains(SECRET_MARK), "a secret was printed:\n{p}");
    }
    for f in files_under(&ws.path().join(".runner")) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(!text.contains(SECRET_MARK), "{} holds a secret", f.display());
    }
}

#[test]
fn up_runs_every_project_after_what_it_needs_and_independent_ones_together() {
    let ws = Ws::configured("aws");
    let run = ws.up("aws", &[], &[("PULUMI_STANDIN_DELAY_MS", "*=150")]).expect(0);
    let ran = intervals(&ws, "up");
    let waits = waits(&ws, "aws", "up");
    assert_eq!(ran.len(), 16, "every AWS project ran: {ran:?}");
    for (project, needs) in &waits {
        for n in needs {
            assert!(ran[n].1 <= ran[project].0, "{project} started before {n} ended");
        }
    }
    let overlap = |a: &str, b: &str| ran[a].0 < ran[b].1 && ran[b].0 < ran[a].1;
    assert!(
        overlap("vpc", "ecr") && overlap("iam", "kic-image-build"),
        "independent projects ran one after another"
    );
    // Output lines are prefixed with their project.
    crate::snapshot!(
        ws.path(),
        "output_of_eks_prefixed",
        crate::support::lines_with(&run.stdout, "[eks] ")
    );
    let (table, settings) = crate::support::closing_table(&run.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_of_every_project", table));
    assert!(statuses(&ws).values().all(|s| s == "succeeded"));
    let s = summary(&ws);
    assert_eq!(s["exit_code"], 0);
    assert_eq!(s["result"], "succeeded");
    let eks = crate::support::project(&s, "eks");
    assert_eq!(eks["outputs"]["cluster_name"], "eks-dev");
    assert_eq!(eks["outputs"]["kubeconfig"], "[secret]");
    // The stack and the cluster are created; the two stack references and the two IAM roles
    // are read.
    assert_eq!(eks["changes"]["create"], 2);
    assert_eq!(eks["changes"]["read"], 4);
    // Every pulumi command named the stack and the shared stack configuration was passed.
    for i in ws.invocations() {
        let argv: Vec<&str> = i.argv.iter().map(String::as_str).collect();
        assert!(argv.contains(&"--stack"), "{argv:?}");
        // The secrets store reads its own stack file, where the secrets are.
        if argv[0] == "up" && !i.cwd.to_str().unwrap().ends_with("services/secrets") {
            assert!(
                argv.windows(2)
                    .any(|w| w[0] == "--config-file" && w[1].ends_with("config/pulumi/Pulumi.dev.yaml"))
            );
        }
        let url = i.env["PULUMI_BACKEND_URL"].as_str();
        assert!(url.starts_with("file://") && url.ends_with("/.pulumi-state"), "{url}");
        assert_eq!(i.env["PULUMI_SKIP_UPDATE_CHECK"], "true");
    }
    assert_no_secret(&ws, &[&run.stdout, &run.stderr]);
    // The passphrase salt was put into the shared file before the projects ran in parallel: one.
    let shared = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    assert_eq!(shared.matches("encryptionsalt:").count(), 1, "{shared}");
    assert!(shared.starts_with("encryptionsalt: v1:"), "{shared}");
    crate::support::assert_valid(&s, "summary.schema.json");
}

#[test]
fn parallel_1_never_overlaps() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--parallel", "1"], &[]).expect(0);
    let spans = project_spans(&ws);
    assert_eq!(spans.len(), 16);
    for w in spans.windows(2) {
        assert!(w[0].1 <= w[1].0, "two projects overlapped with --parallel 1: {w:?}");
    }
}

#[test]
fn destroy_runs_dependents_first_and_targets_work_both_ways() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "logagent"], &[]).expect(0);
    let ran: BTreeSet<String> = intervals(&ws, "up").into_keys().collect();
    assert_eq!(
        ran,
        ["eks", "iam", "kubeconfig", "logagent", "logstore", "vpc"]
            .map(String::from)
            .into()
    );

    ws.up("aws", &[], &[]).expect(0);
    ws.clear_invocations();
    ws.exec(
        &["destroy", "-p", "aws", "-s", "dev", "--target", "logstore", "--yes"],
        &[],
    )
    .expect(0);
    let gone = intervals(&ws, "destroy");
    assert_eq!(
        gone.keys().cloned().collect::<BTreeSet<_>>(),
        ["logagent", "logstore", "sirius"].map(String::from).into()
    );
    assert!(gone["sirius"].1 <= gone["logagent"].0 && gone["logagent"].1 <= gone["logstore"].0);

    ws.clear_invocations();
    ws.exec(&["down", "-p", "aws", "-s", "dev", "--yes"], &[]).expect(0);
    let gone = intervals(&ws, "destroy");
    let waits = waits(&ws, "aws", "destroy");
    for (project, first) in &waits {
        for f in first {
            if let (Some(a), Some(b)) = (gone.get(f), gone.get(project)) {
                assert!(a.1 <= b.0, "{project} was destroyed before {f}, which needs it");
            }
        }
    }
    // Destroyed before: destroying again deletes nothing and is not a failure.
    let statuses = statuses(&ws);
    assert!(statuses.values().all(|s| s == "succeeded"), "{statuses:?}");
    let s = summary(&ws);
    let logstore = crate::support::project(&s, "logstore");
    assert!(logstore["changes"].get("delete").is_none(), "{logstore}");
    let eks = crate::support::project(&s, "eks");
    // What was only read is discarded from the state, not deleted.
    assert_eq!(eks["changes"]["delete"], 2);
    assert_eq!(eks["changes"]["discard"], 4);
}

#[test]
fn a_failure_stops_what_depends_on_it_and_the_next_up_resumes() {
    let ws = Ws::configured("aws");
    let run = ws.up("aws", &[], &[("PULUMI_STANDIN_FAIL", "kubeconfig:up")]).expect(1);
    crate::snapshot!(
        ws.path(),
        "failed_block_stops_what_depends_on_it",
        failed_block(&run.stderr)
    );
    let st = statuses(&ws);
    assert_eq!(st["kubeconfig"], "failed");
    assert_eq!(st["secrets"], "skipped");
    assert!(["succeeded", "not started"].contains(&st["kic-image-push"].as_str()));
    let s = summary(&ws);
    assert_eq!(s["exit_code"], 1);
    let secrets = crate::support::project(&s, "secrets");
    assert_eq!(secrets["reason"], "needs kubeconfig, which failed");
    let ran_first: BTreeSet<String> = intervals(&ws, "up").into_keys().collect();
    assert!(
        !ran_first.contains("secrets") && !ran_first.contains("sirius"),
        "dependents never started"
    );
    let succeeded: BTreeSet<String> = st
        .iter()
        .filter(|(_, s)| *s == "succeeded")
        .map(|(n, _)| n.clone())
        .collect();

    ws.clear_invocations();
    ws.up("aws", &[], &[]).expect(0);
    let ran_again: BTreeSet<String> = intervals(&ws, "up").into_keys().collect();
    assert!(
        ran_again.is_disjoint(&succeeded),
        "redid {:?}",
        ran_again.intersection(&succeeded).collect::<Vec<_>>()
    );
    assert!(ran_again.contains("kubeconfig") && ran_again.contains("sirius"));
    assert!(statuses(&ws).values().all(|s| s == "succeeded" || s == "unchanged"));
}

#[test]
fn keep_going_finishes_independent_branches() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--keep-going"], &[("PULUMI_STANDIN_FAIL", "ecr:up")])
        .expect(1);
    let st = statuses(&ws);
    assert_eq!(st["ecr"], "failed");
    assert_eq!(st["kic-image-push"], "skipped");
    assert_eq!(st["ingress-controller"], "skipped");
    assert_eq!(st["logagent"], "succeeded");
    assert_eq!(st["eks"], "succeeded");
}

#[test]
fn a_second_up_runs_nothing_and_a_change_reruns_only_what_reads_it() {
    let ws = Ws::configured("aws");
    ws.up("aws", &[], &[]).expect(0);
    ws.clear_invocations();
    let again = ws.up("aws", &[], &[]).expect(0);
    assert!(intervals(&ws, "up").is_empty(), "ran again: {:?}", intervals(&ws, "up"));
    let (table, settings) = crate::support::closing_table(&again.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_of_a_second_up", table));

    // A change that leaves the outputs alone: only the project itself.
    ws.edit(
        "projects/services/logstore/Pulumi.yaml",
        "runtime: yaml",
        "runtime: yaml\n# edited",
    );
    ws.clear_invocations();
    ws.up("aws", &[], &[]).expect(0);
    assert_eq!(intervals(&ws, "up").into_keys().collect::<Vec<_>>(), ["logstore"]);

    // A changed output: the project and what reads it.
    ws.edit(
        "projects/services/logstore/Pulumi.yaml",
        "elastic_hostname: ${release.name}-elasticsearch",
        "elastic_hostname: ${release.name}-es",
    );
    ws.clear_invocations();
    ws.up("aws", &[], &[]).expect(0);
    assert_eq!(
        intervals(&ws, "up").into_keys().collect::<Vec<_>>(),
        ["logagent", "logstore"]
    );

    // --fresh runs everything.
    ws.clear_invocations();
    ws.up("aws", &["--fresh"], &[]).expect(0);
    assert_eq!(intervals(&ws, "up").len(), 16);
    // ... and records what it ran with: the next up has nothing to do.
    ws.clear_invocations();
    ws.up("aws", &[], &[]).expect(0);
    assert!(intervals(&ws, "up").is_empty(), "ran again: {:?}", intervals(&ws, "up"));
}

#[test]
fn outputs_reach_hooks_and_secrets_only_through_the_environment() {
    let ws = Ws::configured("aws");
    ws.eks_hook(
        "record.sh",
        "#!/bin/sh\nset -e\nout=\"$MARA_WORKSPACE/hook-record.txt\"\n\
         echo \"project=$MARA_PROJECT stack=$MARA_STACK provider=$MARA_PROVIDER\" > \"$out\"\n\
         echo \"cluster_name=$MARA_OUTPUT_CLUSTER_NAME\" >> \"$out\"\n\
         echo \"kubeconfig_length=${#MARA_OUTPUT_KUBECONFIG}\" >> \"$out\"\n\
         cat \"$MARA_OUTPUTS_FILE\" >> \"$out\"\n\
         echo \"stdin_bytes=$(wc -c)\" >> \"$out\"\n\
         echo hook ran\n",
    );
    let run = ws.up("aws", &["--target", "eks"], &[]).expect(0);
    let record = std::fs::read_to_string(ws.path().join("hook-record.txt")).unwrap();
    // What the hook was told, the outputs file redacted (`"kubeconfig": "[secret]"`).
    crate::snapshot!(ws.path(), "what_a_hook_is_told", &record);
    let len: usize = record
        .lines()
        .find_map(|l| l.strip_prefix("kubeconfig_length="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(len > 100, "the secret kubeconfig reached the hook's environment");
    let stdin: usize = record
        .lines()
        .find_map(|l| l.strip_prefix("stdin_bytes="))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(stdin > len, "the full outputs came on standard input");
    assert!(run.stdout.contains("[eks] hook ran"));
    assert!(
        !ws.path().join(".runner/dev/tmp/eks-outputs.json").exists(),
        "the outputs file is removed"
    );
    assert_no_secret(&ws, &[&run.stdout, &run.stderr]);

    // A failing hook fails its project.
    // (Written over, the script keeps its mode.)
    ws.write("scripts/record.sh", "#!/bin/sh\necho broken >&2\nexit 3\n");
    let run = ws.up("aws", &["--target", "eks", "--fresh"], &[]).expect(1);
    crate::snapshot!(
        ws.path(),
        "failed_block_hook_on_standard_error",
        failed_block(&run.stderr)
    );
}

#[test]
fn preview_waits_for_undeployed_upstreams_and_refresh_of_nothing_warns() {
    let ws = Ws::configured("kubeconfig");
    let run = ws.exec(&["refresh", "-p", "kubeconfig", "-s", "dev"], &[]).expect(0);
    crate::snapshot!(
        ws.path(),
        "refresh_of_nothing_warns",
        crate::support::lines_with(&run.stderr, "warning: [kubeconfig]")
    );
    // Every start said is ended: a destroy of projects never deployed says each had nothing.
    let destroy = ws
        .exec(
            &["destroy", "-p", "kubeconfig", "-s", "dev", "--yes", "--output", "plain"],
            &[],
        )
        .expect(0);
    // (Its lines sorted: the projects run at once.)
    let mut said: Vec<&str> = destroy
        .stderr
        .lines()
        .filter(|l| l.starts_with(['▶', '•', '✔']))
        .collect();
    said.sort_unstable();
    crate::snapshot!(ws.path(), "destroy_of_what_was_never_deployed", said.join("\n"));
    // What is left is said of the stacks there were: the secrets store's alone.
    crate::snapshot!(
        ws.path(),
        "destroy_leaves_the_stacks_that_were",
        crate::support::paragraph(&destroy.stderr, "Left as they were:")
    );

    let run = ws.exec(&["preview", "-p", "kubeconfig", "-s", "dev"], &[]).expect(0);
    let st = statuses(&ws);
    assert_eq!(st["kubeconfig"], "succeeded");
    assert_eq!(st["logstore"], "waits");
    let s = summary(&ws);
    let logagent = crate::support::project(&s, "logagent");
    assert_eq!(logagent["reason"], "waits for kubeconfig, logstore, not deployed yet");
    assert!(run.stdout.contains("[kubeconfig] Previewing update (dev):"));

    ws.up("kubeconfig", &["--target", "logstore"], &[]).expect(0);
    ws.exec(&["preview", "-p", "kubeconfig", "-s", "dev"], &[]).expect(0);
    let st = statuses(&ws);
    assert_eq!(st["logagent"], "succeeded");
    assert_eq!(st["sirius"], "waits");
}

#[test]
fn ctrl_c_stops_the_run_leaves_no_process_and_resume_works() {
    let ws = Ws::configured("aws");
    let args = ["up", "-p", "aws", "-s", "dev", "--summary", "s.json"];
    let child = ws.start_keeping_stderr(&args, &[("PULUMI_STANDIN_HANG", "logstore:up")]);
    let locks = ws.path().join(".pulumi-state/.pulumi/locks/organization/logstore/dev");
    let pulumi_pid = crate::support::up_lock(&locks)["pid"].as_u64().unwrap();
    crate::support::signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        !Path::new(&format!("/proc/{pulumi_pid}")).exists(),
        "pulumi is still running"
    );
    assert!(
        std::fs::read_dir(&locks).map_or(true, |mut d| d.next().is_none()),
        "the stack lock was left"
    );
    let s: Value = serde_json::from_str(&std::fs::read_to_string(ws.path().join("s.json")).unwrap()).unwrap();
    assert_eq!(s["result"], "interrupted");
    assert_eq!(s["exit_code"], 130);
    crate::support::assert_valid(&s, "summary.schema.json");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".runner/dev/state.json")).unwrap()).unwrap();
    for (name, p) in state["projects"].as_object().unwrap() {
        assert_ne!(p["status"], "running", "{name} is still marked running");
    }
    crate::snapshot!(
        ws.path(),
        "interrupted_says_how_to_resume",
        crate::support::paragraph(&stderr, "Interrupted.")
    );

    ws.clear_invocations();
    ws.up("aws", &[], &[]).expect(0);
    let ran: BTreeSet<String> = intervals(&ws, "up").into_keys().collect();
    assert!(
        !ran.contains("kubeconfig") && !ran.contains("eks"),
        "a succeeded project ran again"
    );
    assert!(ran.contains("logstore") && ran.contains("sirius"));
}

#[test]
fn a_stack_is_required() {
    let ws = Ws::configured("aws");
    ws.exec(&["up", "-p", "aws"], &[])
        .expect(2)
        .stderr_has("`up` needs a stack: pass -s/--stack NAME");
    // Without -p a configured stack names its provider (its stack file's infra_type); a stack
    // without configuration does not.
    ws.exec(&["up", "-s", "qa"], &[])
        .expect(2)
        .stderr_has("`up` needs a provider");
}

#[requires("script")]
#[test]
fn a_terminal_gets_the_live_view_and_logs_keep_every_line() {
    if crate::support::tool("script").is_none() {
        return;
    }
    let ws = Ws::configured("aws");
    let typescript = ws.path().join("typescript");
    // The runner's usual test environment, with `script` giving it a pseudo-terminal.
    let c = ws.command(
        &["up", "-p", "aws", "-s", "dev", "--target", "eks", "--yes"],
        &[("PULUMI_STANDIN_DELAY_MS", "*=100"), ("TERM", "xterm-256color")],
    );
    let out = crate::support::at_terminal(&c, &typescript)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let raw = String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned();
    let screen = strip_escapes(&raw);
    assert!(screen.contains("projects ·"), "no progress bar drawn:\n{screen}");
    assert!(screen.contains("✔ eks"), "{screen}");
    assert!(
        screen.contains("Summary: up · provider aws · stack dev: 3 succeeded"),
        "{screen}"
    );
    assert!(
        !screen.contains("[eks] Updating"),
        "a terminal gets the live view, not prefixed lines"
    );
    let log = std::fs::read_to_string(ws.path().join(".runner/dev/logs/eks.up.log")).unwrap();
    assert!(log.contains("Updating (dev):") && log.contains("== succeeded"), "{log}");
    assert!(!log.contains(SECRET_MARK));
}

/// The text of a terminal recording without its escape sequences.
pub(crate) fn strip_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                while let Some(&n) = chars.peek() {
                    chars.next();
                    if n.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn a_second_ctrl_c_kills_what_does_not_stop() {
    let ws = Ws::configured("aws");
    let slow_to_cancel = [
        ("PULUMI_STANDIN_HANG", "logstore:up"),
        ("PULUMI_STANDIN_SLOW_CANCEL", "logstore"),
    ];
    let child = ws.start_keeping_stderr(
        &["up", "-p", "aws", "-s", "dev", "--target", "logstore"],
        &slow_to_cancel,
    );
    let locks = ws.path().join(".pulumi-state/.pulumi/locks/organization/logstore/dev");
    let pid = crate::support::up_lock(&locks)["pid"].clone();
    let pulumi = format!("/proc/{pid}");
    let interrupt = || crate::support::signal(child.id(), "INT");
    interrupt();
    // pulumi got it: it says so (and, slow to cancel, works on).
    let log = ws.path().join(".runner/dev/logs/logstore.up.log");
    wait_until(
        Duration::from_secs(60),
        "pulumi never acknowledged the first Ctrl-C",
        || std::fs::read_to_string(&log).is_ok_and(|l| l.contains("^C received; cancelling")),
    );
    // A fixed wait on purpose: that pulumi is not killed is shown over a while, not by an event.
    std::thread::sleep(Duration::from_millis(500));
    assert!(runs(pid), "the first Ctrl-C only asks pulumi to stop");
    interrupt();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    wait_until(Duration::from_secs(5), "the second Ctrl-C did not kill pulumi", || {
        !Path::new(&pulumi).exists()
    });
    let st = statuses(&ws);
    assert_eq!(st["logstore"], "interrupted", "cut short is not failed");
    assert_eq!(summary(&ws)["result"], "interrupted");
}

#[test]
fn a_failure_shows_its_cause_once_in_the_failed_block_and_in_the_summary() {
    let ws = Ws::configured("aws");
    let run = ws
        .up("aws", &[], &[("PULUMI_STANDIN_FAIL", "logstore:up"), ("CI", "true")])
        .expect(1);
    let cause = "injected failure for logstore (up) by PULUMI_STANDIN_FAIL";
    // `Failed: logstore (up): pulumi up exited with code 1: <cause>`, and where its log is.
    let failed = failed_block(&run.stderr);
    redactions(ws.path()).bind(|| insta::assert_snapshot!("failed_block_program", failed));
    let row = run
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("logstore ") && l.contains("failed"))
        .unwrap_or_else(|| panic!("no row for logstore:\n{}", run.stderr));
    // The cause is said once, whole, in the block under the table (not also in its row).
    assert!(row.trim_end().ends_with("(below)") && !row.contains(cause), "{row}");
    assert_eq!(run.stderr.matches(cause).count(), 1, "{}", run.stderr);
    let logstore = crate::support::project(&summary(&ws), "logstore").clone();
    assert!(
        logstore["error"].as_str().unwrap().contains(cause),
        "{}",
        logstore["error"]
    );

    // A program the engine refuses (what `validate` cannot know: a stack no backend holds):
    // the engine's message, not only the exit code.
    ws.edit(
        "projects/services/logstore/Pulumi.yaml",
        "/kubeconfig/${pulumi.stack}",
        "/kubeconfig/no-such-stack",
    );
    let run = ws.up("aws", &[], &[("CI", "true")]).expect(1);
    assert!(
        run.stderr
            .contains("Failed: logstore (up): pulumi up exited with code 1: ")
            && run.stderr.contains("no-such-stack"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_hook_that_fails_shows_what_it_printed_on_standard_output() {
    let ws = Ws::configured("aws");
    ws.eks_hook(
        "check.sh",
        "#!/bin/sh\necho \"cluster $MARA_OUTPUT_CLUSTER_NAME is not reachable\"\nexit 4\n",
    );
    let run = ws.up("aws", &["--target", "eks"], &[("CI", "true")]).expect(1);
    // `Failed: eks (up): hook scripts/check.sh exited with code 4: cluster eks-dev is not
    // reachable`.
    let failed = failed_block(&run.stderr);
    redactions(ws.path()).bind(|| insta::assert_snapshot!("failed_block_hook", failed));
}

#[test]
fn a_file_the_configuration_names_and_the_environment_file_are_inputs_too() {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &[], &[]).expect(0);
    ws.clear_invocations();
    ws.up("kubeconfig", &[], &[]).expect(0);
    assert!(intervals(&ws, "up").is_empty(), "ran again: {:?}", intervals(&ws, "up"));

    // A rotated token in the cluster's kubeconfig: the project that reads the file runs again.
    ws.edit("cluster/kubeconfig.yaml", "placeholder-token-dev", "rotated-token-dev");
    ws.up("kubeconfig", &[], &[]).expect(0);
    assert!(
        intervals(&ws, "up").contains_key("kubeconfig"),
        "the rotated token went unnoticed: {:?}",
        intervals(&ws, "up")
    );

    // A changed environment file: every project sees it.
    ws.clear_invocations();
    ws.write("config/pulumi/environment", "PULUMI_STACK=dev\nHELM_DEBUG=1\n");
    ws.up("kubeconfig", &[], &[]).expect(0);
    assert_eq!(intervals(&ws, "up").len(), 10, "{:?}", intervals(&ws, "up"));
}

#[test]
fn debug_says_the_backend_each_pulumi_command_and_why_a_project_runs() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    ws.edit("projects/identity/iam/Pulumi.yaml", "name: iam", "name: iam\n# edited");
    let run = ws.up("aws", &["--target", "iam", "-d"], &[]).expect(0);
    crate::snapshot!(
        ws.path(),
        "debug_lines",
        crate::support::lines_with(&run.stderr, "debug:")
    );
    // Without -d, none of it.
    let quiet = ws.up("aws", &["--target", "iam", "--fresh"], &[]).expect(0);
    assert!(!quiet.stderr.contains("debug:"), "{}", quiet.stderr);
    assert_no_secret(&ws, &[&run.stdout, &run.stderr]);
}

#[test]
fn closed_output_streams_do_not_stop_the_run() {
    // `runner up … 2>&1 | grep -m1 x`: the reader goes away after its first line.
    let ws = Ws::configured("aws");
    let mut child = ws
        .command(&["up", "-p", "aws", "-s", "dev", "--target", "eks"], &[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a closed stream ended the run: {status:?}");
    let st = statuses(&ws);
    assert_eq!(st["eks"], "succeeded", "{st:?}");
    assert!(summary(&ws)["result"] == "succeeded");
}

#[test]
fn no_secret_is_printed_or_written_in_any_form() {
    use base64::Engine as _;
    let ws = Ws::configured("aws");
    // A careless hook: it prints every secret it can reach, whole, cut into lines, in base64.
    ws.eks_hook(
        "leaky.sh",
        "#!/bin/sh\nprintf '%s' \"$MARA_OUTPUT_KUBECONFIG\" > \"$MARA_WORKSPACE/kubeconfig-seen\"\n\
         echo \"whole: $MARA_OUTPUT_KUBECONFIG\"\necho \"$MARA_OUTPUT_KUBECONFIG\" | tr ',' '\\n'\n\
         printf '%s' \"$MARA_OUTPUT_KUBECONFIG\" | base64 -w0; echo\n\
         echo \"admin: $MARA_SECRET_PROMETHEUS_ADMINPASS\"\necho \"passphrase: ${PULUMI_CONFIG_PASSPHRASE-none}\"\n\
         cat >&2\n",
    );
    let run = ws.up("aws", &[], &[]).expect(0);
    let kubeconfig = std::fs::read_to_string(ws.path().join("kubeconfig-seen")).unwrap();
    assert!(kubeconfig.contains("placeholder-token-dev"), "{kubeconfig}");

    let mut secrets: Vec<String> = crate::support::SECRETS
        .iter()
        .map(|(_, v)| (*v).to_string())
        .filter(|v| v.len() >= 8)
        .collect();
    secrets.extend([
        "test passphrase".to_string(),
        kubeconfig.clone(),
        "placeholder-token-dev".into(),
    ]);
    let mut forms = Vec::new();
    for s in &secrets {
        forms.push(s.clone());
        let json = serde_json::to_string(s).unwrap();
        forms.push(json[1..json.len() - 1].to_string());
        forms.push(base64::engine::general_purpose::STANDARD.encode(s));
    }
    let mut texts = vec![
        ("stdout".to_string(), run.stdout.clone()),
        ("stderr".into(), run.stderr.clone()),
    ];
    let mut files = files_under(&ws.path().join(".runner"));
    files.push(ws.path().join("config/pulumi/environment"));
    files.push(ws.path().join("config/pulumi/Pulumi.dev.yaml"));
    for f in files {
        texts.push((
            f.display().to_string(),
            String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned(),
        ));
    }
    for (what, text) in &texts {
        for form in &forms {
            assert!(!text.contains(form.as_str()), "{what} holds a secret ({form:?})");
        }
    }
    // Logs and scratch are for the owner's eyes only.
    let mode = |p: &Path| std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions()) & 0o777;
    assert_eq!(mode(&ws.path().join(".runner")), 0o700);
    assert_eq!(mode(&ws.path().join(".runner/dev/logs/eks.up.log")), 0o600);
}

#[test]
fn a_fresh_clone_against_an_existing_backend_gets_the_salt_before_projects_run_in_parallel() {
    let ws = Ws::configured("aws");
    ws.up("aws", &[], &[]).expect(0);
    // A new clone of the workspace against the same backend: the stacks exist, the projects'
    // own stack files (ignored by git) and the runner's record do not, and the shared file was
    // committed without its salt.
    for f in files_under(&ws.path().join("projects")) {
        if f.file_name().is_some_and(|n| n == "Pulumi.dev.yaml") {
            std::fs::remove_file(f).unwrap();
        }
    }
    std::fs::remove_dir_all(ws.path().join(".runner")).unwrap();
    let shared = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&shared).unwrap();
    let without: Vec<&str> = text.lines().filter(|l| !l.starts_with("encryptionsalt:")).collect();
    let without = without.join("\n") + "\n";
    std::fs::write(&shared, without).unwrap();
    ws.clear_invocations();

    // No secret is stored on the way (eks needs none): no file of this clone has a salt.
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    // `pulumi up` rewrites the file in place to add a missing salt, each project its own: the
    // runner adds one (first, where it puts it) before any project runs.
    let text = std::fs::read_to_string(&shared).unwrap();
    assert_eq!(text.matches("encryptionsalt:").count(), 1, "{text}");
    assert!(text.starts_with("encryptionsalt: v1:"), "{text}");
    let calls = ws.invocations();
    let made = calls
        .iter()
        .position(|i| i.command() == "config" && i.argv.iter().any(|a| a.contains("runner:salt")))
        .expect("pulumi made a salt");
    let first_up = calls.iter().position(|i| i.command() == "up").expect("projects ran");
    assert!(made < first_up);
    // The salt opens with the run's passphrase: every project runs with it.
    ws.up("aws", &[], &[]).expect(0);
}

/// The closing table as a person reads it after a run that succeeded, after one where nothing
/// had changed and after one that failed: a snapshot each (durations and the workspace's
/// temporary path filtered), so a change to how a run ends is a reviewed diff.
#[test]
fn the_closing_table_after_a_success_and_after_a_failure() {
    let ws = Ws::configured("aws");
    let ok = ws.up("aws", &["--target", "eks"], &[]).expect(0);
    let unchanged = ws.up("aws", &["--target", "eks"], &[]).expect(0);
    let failed = ws
        .up(
            "aws",
            &["--target", "eks", "--fresh"],
            &[("PULUMI_STANDIN_FAIL", "eks:up")],
        )
        .expect(1);
    let (success, settings) = crate::support::closing_table(&ok.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_success", success));
    let (unchanged, settings) = crate::support::closing_table(&unchanged.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_unchanged", unchanged));
    let (failure, settings) = crate::support::closing_table(&failed.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_failure", failure));
}

/// `pulumi` exiting 0 while its event log holds an error (a resource that failed: Pulumi YAML
/// can end so): the project is failed, with the engine's error as its cause, and not settled —
/// the next `up` runs it again.
#[test]
fn an_error_the_engine_reports_in_an_update_it_calls_succeeded_fails_the_project() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = Ws::configured("aws");
    // A `pulumi` that is the stand-in, but adds an error to vpc's event log and still exits 0.
    let bin = ws.path().join("odd-pulumi");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\nlog=''\nprev=''\nfor a in \"$@\"; do [ \"$prev\" = --event-log ] && log=$a; prev=$a; done\n\
         {standin}/pulumi \"$@\" || exit $?\n\
         case \"$PWD\" in */infra/vpc) [ -n \"$log\" ] && [ \"$1\" = up ] && \
         echo '{{\"diagnosticEvent\":{{\"severity\":\"error\",\"message\":\"creating failed: the subnet quota is exhausted\"}}}}' >> \"$log\";; esac\n\
         exit 0\n",
        standin = crate::support::standin_dir().display()
    );
    std::fs::write(bin.join("pulumi"), script).unwrap();
    std::fs::set_permissions(bin.join("pulumi"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        crate::support::fake_clis().display(),
        std::env::var("PATH").unwrap()
    );
    let run = ws.up("aws", &["--target", "vpc"], &[("PATH", &path)]).expect(1);
    // `Failed: vpc (up): pulumi up: exited 0, but reported an error: creating failed: the
    // subnet quota is exhausted`.
    let failed = failed_block(&run.stderr);
    redactions(ws.path()).bind(|| insta::assert_snapshot!("failed_block_engine_error", failed));
    let status = ws
        .exec(&["status", "-s", "dev", "--format", "json"], &[])
        .expect(0)
        .json();
    let vpc = crate::support::project(&status, "vpc").clone();
    assert_eq!(vpc["up"]["runs"], true, "{vpc}");
}

/// What a person reads after a run where one project failed and stopped the one after it: the
/// closing table (the failed row with its cause, the skipped row with why), and the HTML
/// report's text (the summary, each project's row and outputs, the failure with its log).
#[test]
fn a_failure_and_what_it_stopped_in_the_closing_table_and_the_report() {
    let ws = Ws::configured("aws");
    let kubeconfig_fails = [("PULUMI_STANDIN_FAIL", "kubeconfig:up")];
    let run = ws.up("aws", &["--target", "secrets"], &kubeconfig_fails).expect(1);
    let (table, settings) = crate::support::closing_table(&run.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_failure_and_skipped", table));
    ws.exec(&["report", "-s", "dev", "-o", "report.html"], &[]).expect(0);
    let html = std::fs::read_to_string(ws.path().join("report.html")).unwrap();
    let text = crate::support::visible_text(&html);
    redactions(ws.path()).bind(|| insta::assert_snapshot!("report_text", text));
}

/// At a terminal of 100 columns a skipped row of the closing table fits: a row with no time
/// and no changes gives their columns to its reason, rather than let the terminal break the
/// reason mid-word; into a pipe the columns stay aligned.
#[test]
fn a_skipped_rows_reason_fits_the_terminal() {
    let ws = Ws::configured("aws");
    let fail = [("PULUMI_STANDIN_FAIL", "kubeconfig")];
    let piped = ws.up("aws", &[], &fail).expect(1);
    let long = |text: &str| {
        text.lines()
            .filter(|l| l.contains(" skipped "))
            .any(|l| l.trim_end_matches('\r').chars().count() > 100)
    };
    assert!(
        long(&piped.stderr),
        "the pipe's rows are aligned, not fitted:\n{}",
        piped.stderr
    );
    let typescript = ws.path().join("typescript");
    let up = ws.command(&["up", "-p", "aws", "-s", "dev", "--yes"], &fail);
    let (run, shown) = crate::support::at_terminal_of(100, &up, &typescript);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let closing = &shown[shown.find("Summary:").expect("a closing table")..];
    assert!(closing.contains(" skipped "), "{closing}");
    assert!(!long(closing), "{closing}");
    assert!(
        closing.contains("needs kubeconfig, which failed"),
        "the reason is whole:\n{closing}"
    );
}
