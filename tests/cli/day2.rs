//! The questions of day two, through the binary with the stand-in: `status`, `output`, `logs`,
//! `pulumi PROJECT -- ARGS`, `drift`, `--exclude`.

use std::time::{Duration, Instant};

use crate::support::{Ws, assert_valid as validate, files_under, project};

#[test]
fn logs_keeps_one_log_per_operation_and_follows_a_running_project() {
    let ws = Ws::configured("aws");
    // Follow eks while a run is going: the log does not exist yet, so it waits for it.
    let up = ws.start(
        &["up", "-p", "aws", "-s", "dev", "--target", "eks"],
        &[("PULUMI_STANDIN_DELAY_MS", "eks=1500")],
    );
    let started = Instant::now();
    let follow = ws.exec(&["logs", "eks", "-s", "dev", "--follow"], &[]).expect(0);
    assert!(
        follow.stdout.contains("Updating (dev):")
            && follow.stdout.trim_end().ends_with(&format!(
                "== succeeded {}",
                follow.stdout.trim_end().rsplit(' ').next().unwrap()
            )),
        "followed to the end line:\n{}",
        follow.stdout
    );
    // (From there: whether the note that the stack file names the provider comes first depends
    // on what the run beside it recorded of it.)
    let waited = crate::support::from_line(&follow.stderr, "waiting for eks");
    crate::snapshot!(ws.path(), "logs_follow_waits_for_the_project_to_start", waited);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "follow ended with the operation"
    );
    assert!(up.wait_with_output().unwrap().status.success());
    follows_into_the_next_run(&ws);

    ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--target", "eks", "--yes"], &[])
        .expect(0);
    // The destroy did not overwrite the up's log, and the most recent one is shown; without -p
    // the provider comes from the stack file.
    // What has no log, and what is no project, say so with the fix; the log of another
    // operation, the command that makes it.
    let said: [(&[&str], i32, &str); 5] = [
        (&["logs", "eks", "-s", "dev"], 0, "logs_shows_the_last_operations_log"),
        (
            &["logs", "eks", "-s", "dev", "--operation", "up"],
            0,
            "logs_of_an_operation",
        ),
        (&["logs", "ecr", "-s", "dev"], 1, "logs_of_a_project_without_a_log"),
        (
            &["logs", "ecr", "-s", "dev", "--operation", "refresh"],
            1,
            "logs_of_an_operation_without_a_log",
        ),
        (&["logs", "ekss", "-s", "dev"], 2, "logs_of_no_project"),
    ];
    for (args, code, name) in said {
        let run = ws.exec(args, &[]).expect(code);
        crate::snapshot!(ws.path(), name, format!("{}{}", run.stderr, run.stdout));
    }
}

/// A log whose run has ended is followed into the project's next run, as `tail -F`, to that
/// run's end.
/// `runner logs eks --follow`, once it says it waits for eks's next run: the follower, its
/// standard error from there on, and what it said until then.
fn follow_eks(
    ws: &Ws,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStderr>,
    String,
) {
    use std::io::BufRead as _;
    let mut next = ws
        .command(&["logs", "eks", "-s", "dev", "--follow"], &[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(next.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("waiting for its next one") {
        if err.read_line(&mut said).unwrap() == 0 {
            break;
        }
    }
    (next, err, said)
}

fn follows_into_the_next_run(ws: &Ws) {
    use std::io::Read as _;
    let (mut next, _stderr, said) = follow_eks(ws); // kept open: the follower writes on
    let waits = crate::support::from_line(&said, "log: ");
    crate::snapshot!(ws.path(), "logs_follow_waits_for_the_next_run", waits);
    ws.up("aws", &["--target", "eks", "--fresh"], &[]).expect(0);
    crate::support::ended(
        &mut next,
        Duration::from_secs(60),
        "logs --follow did not end with the next run's end",
    );
    let mut stdout = String::new();
    next.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    assert_eq!(
        stdout.matches("Updating (dev):").count(),
        2,
        "the last run, then the next:\n{stdout}"
    );
    assert!(
        stdout.trim_end().lines().last().unwrap().starts_with("== succeeded"),
        "{stdout}"
    );
}

/// Waiting for a project's next run ends when a run ends without it, saying why.
#[test]
fn logs_follow_ends_when_the_run_it_waits_for_ends_without_the_project() {
    use std::io::Read as _;
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    let (mut next, mut err, said) = follow_eks(&ws);
    // A run without eks (another project's, slowed so the follower sees it going).
    ws.up(
        "aws",
        &["--target", "vpc", "--fresh"],
        &[("PULUMI_STANDIN_DELAY_MS", "*=400")],
    )
    .expect(0);
    crate::support::ended(
        &mut next,
        Duration::from_secs(30),
        "logs --follow waited on after the run ended",
    );
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let ended = crate::support::from_line(&format!("{said}{rest}"), "log: ");
    crate::snapshot!(ws.path(), "logs_follow_ends_with_a_run_without_the_project", ended);
}

/// A shared stack file that cannot be read (YAML that does not parse, a key with a control
/// character): `status` names the file and line, as `up` does, and exits 3; it never says that
/// every project would run for reasons it made up.
#[test]
fn status_on_a_broken_stack_file_names_it_instead_of_inventing_reasons() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "iam"], &[]).expect(0);
    let file = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}  broken: [unclosed\n")).unwrap();
    let status = ws.exec(&["status", "-p", "aws", "-s", "dev"], &[]).expect(3);
    crate::snapshot!(ws.path(), "status_on_a_broken_stack_file", status.stderr);
    assert_eq!(status.stdout, "", "no reasons made up");
    let up = ws.up("aws", &["--target", "iam"], &[]).expect(3);
    let first = |s: &str| {
        s.lines()
            .find(|l| l.contains("Pulumi.dev.yaml:"))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(first(&status.stderr), first(&up.stderr), "status and up say it alike");
    std::fs::write(&file, format!("{text}  \"vpc:ci\\u0007dr\": x\n")).unwrap();
    let run = ws.exec(&["status", "-p", "aws", "-s", "dev"], &[]).expect(3);
    crate::snapshot!(ws.path(), "status_on_a_key_with_a_control_character", run.stderr);
}

#[test]
fn status_says_what_ran_how_it_ended_and_what_an_up_would_run_and_why() {
    let ws = Ws::configured("aws");
    let json = |ws: &Ws| {
        let run = ws
            .exec(&["status", "-p", "aws", "-s", "dev", "--format", "json"], &[])
            .expect(0);
        let doc = run.json();
        validate(&doc, "status.schema.json");
        doc
    };
    let before = json(&ws);
    assert_eq!(before["projects"].as_array().unwrap().len(), 16);
    assert_eq!(before["up_would_run"].as_array().unwrap().len(), 16);
    assert_eq!(project(&before, "eks")["last"], serde_json::Value::Null);
    assert_eq!(project(&before, "eks")["up"]["why"], "never run");

    ws.up("aws", &["--target", "eks"], &[("PULUMI_STANDIN_FAIL", "eks")])
        .expect(1);
    // A project's program changes after its successful up.
    ws.edit("projects/infra/vpc/Pulumi.yaml", "name: vpc", "# a comment\nname: vpc");
    let after = json(&ws);
    let iam = project(&after, "iam");
    assert_eq!(iam["last"]["operation"], "up");
    assert_eq!(iam["last"]["status"], "succeeded");
    assert!(iam["last"]["duration_seconds"].as_f64().unwrap() > 0.0);
    assert_eq!(iam["resources"], 9, "the stack and the eight IAM resources");
    assert!(iam["estimate_s"].as_f64().unwrap() > 0.0, "learned from the run");
    assert_eq!(iam["deployed"], true);
    assert_eq!(
        iam["up"],
        serde_json::json!({"runs": false, "why": "unchanged since its last up"})
    );
    let vpc = project(&after, "vpc");
    assert_eq!(vpc["up"]["runs"], true);
    assert_eq!(
        vpc["up"]["why"], "its file `Pulumi.yaml` changed since its last up",
        "the input that changed is named: {vpc}"
    );
    let eks = project(&after, "eks");
    assert_eq!(eks["last"]["status"], "failed");
    assert_eq!(eks["up"]["why"], "its last up failed");
    assert_eq!(project(&after, "kubeconfig")["up"]["why"], "never run");
    assert!(
        !after["up_would_run"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("iam"))
    );

    // The table for people, without -p (the stack file names its provider): where it comes
    // from, a row per project (iam succeeded and skipped, eks failed and run, sirius never
    // run), and what an up would run (15 of 16, from vpc).
    let table = ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    crate::support::redactions(ws.path()).bind(|| insta::assert_snapshot!("status", table.stdout));
}

#[test]
fn status_and_logs_work_while_a_run_holds_the_workspace() {
    let ws = Ws::configured("aws");
    let mut up = ws.start(
        &["up", "-p", "aws", "-s", "dev", "--target", "eks"],
        &[("PULUMI_STANDIN_HANG", "eks")],
    );
    let status = crate::support::eventually(Duration::from_secs(60), "eks never showed as running", || {
        let run = ws.exec(&["status", "-s", "dev", "--format", "json"], &[]);
        (run.code == 0 && project(&run.json(), "eks")["last"]["status"] == "running").then(|| run.json())
    });
    assert_eq!(status["running"], true);
    assert_eq!(project(&status, "eks")["up"]["why"], "running now: up");
    // The run holds the workspace: another run is refused, the readers are not.
    ws.up("aws", &[], &[]).expect(4);
    let log = ws.exec(&["logs", "eks", "-s", "dev"], &[]).expect(0);
    assert!(log.stdout.starts_with("== up eks started"), "{}", log.stdout);
    // Ctrl-C to the runner (it stops the hanging project and ends).
    crate::support::signal(up.id(), "INT");
    let _ = up.wait();
}

#[test]
fn output_reads_the_backend_and_shows_secrets_only_when_asked() {
    let ws = Ws::configured("aws");
    // Without a project: which there are, and how one is named (logs the same).
    for command in ["output", "logs"] {
        ws.exec(&[command, "-p", "aws", "-s", "dev"], &[])
            .expect(2)
            .stderr_has(&format!("`runner {command}` needs a project"))
            .stderr_has("name one of iam, vpc, ecr, eks");
    }
    ws.exec(&["output", "eks", "-p", "aws", "-s", "dev"], &[])
        .expect(1)
        .stderr_has("eks has no stack `dev` in the backend file://")
        .stderr_has("runner up -p aws -s dev --target eks");
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    // The runner's own record is not where outputs come from: the backend is.
    std::fs::remove_dir_all(ws.path().join(".runner")).unwrap();

    let table = ws.exec(&["output", "eks", "-s", "dev"], &[]).expect(0);
    crate::snapshot!(ws.path(), "output_table", table.stdout);
    let json = ws.exec(&["output", "eks", "-s", "dev", "--json"], &[]).expect(0).json();
    assert_eq!(json["cluster_name"], "eks-dev");
    assert_eq!(json["kubeconfig"], "[secret]");

    // One value, raw: what `> file` needs.
    let name = ws.exec(&["output", "eks", "cluster_name", "-s", "dev"], &[]).expect(0);
    assert_eq!(name.stdout, "eks-dev\n");
    ws.exec(&["output", "eks", "kubeconfig", "-s", "dev"], &[])
        .expect(1)
        .stderr_has("the output `kubeconfig` of eks is a secret")
        .stderr_has("runner output eks kubeconfig --show-secrets > file");
    // Once an up here recorded it as a secret: refused before anything asks for the passphrase.
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    ws.clear_invocations();
    ws.exec(
        &["output", "eks", "kubeconfig", "-s", "dev"],
        &[("PULUMI_CONFIG_PASSPHRASE", "")],
    )
    .expect(1)
    .stderr_has("the output `kubeconfig` of eks is a secret");
    assert!(
        ws.invocations().is_empty(),
        "pulumi was started: {:?}",
        ws.invocations()
    );
    let kubeconfig = ws
        .exec(&["output", "eks", "kubeconfig", "-s", "dev", "--show-secrets"], &[])
        .expect(0);
    crate::snapshot!(ws.path(), "output_shows_a_secret_when_asked", &kubeconfig.stdout);
    assert!(
        serde_saphyr::from_str::<serde_json::Value>(&kubeconfig.stdout).unwrap()["clusters"].is_array(),
        "the kubeconfig as it is, ready for a file:\n{}",
        kubeconfig.stdout
    );
    ws.exec(&["output", "eks", "cluster", "-s", "dev"], &[])
        .expect(1)
        .stderr_has("eks has no output `cluster`")
        .stderr_has("its outputs: cluster_name, kubeconfig");
    // The same passphrase as a run: another is refused before `pulumi` is asked anything.
    ws.exec(
        &["output", "eks", "-s", "dev"],
        &[("PULUMI_CONFIG_PASSPHRASE", "wrong passphrase")],
    )
    .expect(3)
    .stderr_has(
        "the passphrase from PULUMI_CONFIG_PASSPHRASE in the environment does not open config/pulumi/Pulumi.dev.yaml",
    )
    .stderr_has("fix: set PULUMI_CONFIG_PASSPHRASE to the passphrase this stack was created with");
    // None at all, from a folder of the workspace: the problem is the headline (not "validation
    // failed"), and the environment file is named where it is from there.
    let mut none = ws.command(&["output", "eks", "-s", "dev"], &[]);
    none.current_dir(ws.path().join("projects"))
        .env_remove("PULUMI_CONFIG_PASSPHRASE");
    let run = crate::support::run(&mut none).expect(3);
    crate::snapshot!(ws.path(), "output_without_a_passphrase", run.stderr);
}

#[test]
fn an_output_with_a_secret_nested_in_it_is_secret_as_a_whole() {
    let ws = Ws::configured("aws");
    ws.edit(
        "projects/cluster/eks/Pulumi.yaml",
        "outputs:\n",
        "outputs:\n  access:\n    user: admin\n    tokens:\n      - fn::secret: tok-${pulumi.stack}-abcdef\n",
    );
    let up = ws.up("aws", &["--target", "eks"], &[]).expect(0);
    assert!(!up.stdout.contains("tok-dev-abcdef") && !up.stderr.contains("tok-dev-abcdef"));
    // Pulumi YAML makes the whole output secret (as the real CLI does): the summary hides it.
    assert!(
        up.stdout.contains("access") && !up.stdout.contains("admin"),
        "{}",
        up.stdout
    );

    // `output` reads the backend without an operation's event log: the blinded read tells.
    let json = ws.exec(&["output", "eks", "-s", "dev", "--json"], &[]).expect(0);
    assert_eq!(json.json()["access"], "[secret]", "{}", json.stdout);
    let table = ws.exec(&["output", "eks", "-s", "dev"], &[]).expect(0);
    crate::snapshot!(ws.path(), "output_table_with_a_nested_secret", table.stdout);
    ws.exec(&["output", "eks", "access", "-s", "dev"], &[])
        .expect(1)
        .stderr_has("the output `access` of eks is a secret");
    let shown = ws
        .exec(
            &["output", "eks", "access", "-s", "dev", "--show-secrets", "--json"],
            &[],
        )
        .expect(0)
        .json();
    assert_eq!(
        shown,
        serde_json::json!({"user": "admin", "tokens": ["tok-dev-abcdef"]})
    );
    for f in files_under(&ws.path().join(".runner")) {
        let text = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&text).contains("tok-dev-abcdef"),
            "{} holds the secret",
            f.display()
        );
    }
}

#[test]
fn pulumi_runs_in_the_project_with_the_runs_backend_stack_and_configuration() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "vpc"], &[]).expect(0);
    ws.clear_invocations();
    let out = ws
        .exec(&["pulumi", "vpc", "-s", "dev", "--", "stack", "output", "--json"], &[])
        .expect(0);
    assert!(
        out.json()["vpc"].is_object() || out.json()["vpc"].is_string(),
        "{}",
        out.stdout
    );
    // The shared stack file is where `config get` finds the key (the project has none).
    let region = ws
        .exec(
            &["pulumi", "vpc", "-s", "dev", "--", "config", "get", "aws:region"],
            &[],
        )
        .expect(0);
    assert_eq!(region.stdout.trim(), "us-east-1");
    let calls = ws.invocations();
    let argv: Vec<Vec<String>> = calls.iter().map(|i| i.argv.clone()).collect();
    assert_eq!(argv[0], ["stack", "output", "--json", "--stack", "dev"]);
    assert_eq!(
        argv[1],
        [
            "config",
            "get",
            "aws:region",
            "--stack",
            "dev",
            "--config-file",
            &ws.path().join("config/pulumi/Pulumi.dev.yaml").display().to_string()
        ]
    );
    for i in &calls {
        assert!(i.cwd.to_str().unwrap().ends_with("projects/infra/vpc"), "{i}");
        assert!(i.env["PULUMI_BACKEND_URL"].as_str().starts_with("file://"), "{i}");
        assert_eq!(i.env["PULUMI_CONFIG_PASSPHRASE"], "<set>");
    }
    // pulumi's exit code and its words.
    let missing = ws.exec(&["pulumi", "vpc", "-s", "dev", "--", "stack", "output", "nosuch"], &[]);
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    crate::snapshot!(ws.path(), "pulumi_says_its_own_error", missing.stderr);
    ws.exec(&["pulumi", "vpcc", "-s", "dev", "--", "version"], &[])
        .expect(2)
        .stderr_has("did you mean `vpc`?");
    // A stack named as the command's argument gets no --stack beside it (pulumi refuses both).
    ws.exec(&["pulumi", "vpc", "-s", "dev", "--", "cancel", "dev", "--yes"], &[])
        .expect(0);
    let last = ws.invocations().pop().unwrap();
    assert_eq!(last.argv, ["cancel", "dev", "--yes"]);
}

#[test]
fn drift_previews_what_the_backend_holds_and_exits_6_when_anything_differs() {
    let ws = Ws::configured("aws");
    // Nothing deployed yet: nothing to check, said as that.
    let empty = ws.exec(&["drift", "-p", "aws", "-s", "dev"], &[]).expect(0);
    let (table, settings) = crate::support::closing_table(&empty.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("drift_with_nothing_deployed", table));
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    // A scheduled CI job has a fresh checkout: nothing recorded, the backend says what is there.
    std::fs::remove_dir_all(ws.path().join(".runner")).unwrap();
    ws.clear_invocations();
    let clean = ws.exec(&["drift", "-p", "aws", "-s", "dev"], &[]).expect(0);
    crate::snapshot!(
        ws.path(),
        "drift_found_none",
        crate::support::paragraph(&clean.stderr, "No drift:")
    );
    // What that check found is what status tells, though nothing ran here before it.
    let status = ws.exec(&["status", "-p", "aws", "-s", "dev"], &[]).expect(0).stdout;
    let eks = status.lines().find(|l| l.trim_start().starts_with("eks ")).unwrap();
    assert!(eks.contains("no drift"), "{status}");
    let calls = ws.invocations();
    let previews: Vec<&crate::support::Invocation> = calls.iter().filter(|i| i.command() == "preview").collect();
    assert_eq!(previews.len(), 3, "only the stacks the backend holds are previewed");
    for p in &previews {
        assert!(p.has("--expect-no-changes"), "{p}");
    }
    // The checks (after the secrets are stored, as for any preview) create no stack.
    let setup = calls.iter().rposition(|i| i.command() == "config").map_or(0, |k| k + 1);
    let selects: Vec<&crate::support::Invocation> = calls[setup..]
        .iter()
        .filter(|i| i.command() == "stack" && i.argv.get(1).is_some_and(|a| *a == "select"))
        .collect();
    assert_eq!(selects.len(), 16, "{selects:?}");
    assert!(
        selects.iter().all(|i| !i.has("--create")),
        "a drift check creates no stack: {selects:?}"
    );

    // The configuration moves away from what is deployed.
    ws.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "eks:instance_type: t3.large",
        "eks:instance_type: t3.xlarge",
    );
    let drifted = ws
        .exec(
            &"drift -p aws -s dev --summary drift.json --junit drift.xml"
                .split(' ')
                .collect::<Vec<_>>(),
            &[
                ("GITHUB_ACTIONS", "true"),
                (
                    "GITHUB_STEP_SUMMARY",
                    ws.path().join("step-summary.md").to_str().unwrap(),
                ),
            ],
        )
        .expect(6);
    drift_is_listed_input_by_input(&ws, &drifted);
    // For a scheduled job's test report, what drifted fails.
    let xml = std::fs::read_to_string(ws.path().join("drift.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases = crate::ci::ant_rules(&doc);
    let failed: Vec<(&str, &str)> = cases
        .iter()
        .filter_map(|c| {
            let f = c.children().find(|n| n.has_tag_name("failure"))?;
            Some((c.attribute("name")?, f.attribute("message")?))
        })
        .collect();
    assert_eq!(failed, [("eks", "drifted: 1 update")], "{xml}");
    crate::ci::ant_schema(&ws.path().join("drift.xml"));
    crate::snapshot!(
        ws.path(),
        "drift_found_some",
        crate::support::paragraph(&drifted.stderr, "Drift: ")
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join("drift.json")).unwrap()).unwrap();
    validate(&summary, "summary.schema.json");
    assert_eq!(summary["exit_code"], 6);
    assert_eq!(project(&summary, "eks")["changes"]["update"], 1);
    drift_is_said_as_drift(&ws, &drifted, &summary);
    // Nothing was deployed by looking.
    ws.exec(&["output", "eks", "-s", "dev", "--json"], &[]).expect(0);
    let state = ws.path().join(".pulumi-state/.pulumi/stacks/eks/dev.json");
    assert!(std::fs::read_to_string(state).unwrap().contains("t3.large"));

    // A check that fails is a failure, not drift.
    ws.exec(
        &["drift", "-p", "aws", "-s", "dev"],
        &[("PULUMI_STANDIN_FAIL", "vpc:preview")],
    )
    .expect(1)
    .stderr_has("Failed: vpc (drift check)");
}

#[test]
fn after_a_drift_check_status_keeps_the_last_up_and_shows_the_drift_beside_it() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    ws.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "eks:instance_type: t3.large",
        "eks:instance_type: t3.xlarge",
    );
    let run = ws.exec(&["drift", "-p", "aws", "-s", "dev"], &[]).expect(6);
    crate::snapshot!(
        ws.path(),
        "drift_says_what_it_checks",
        crate::support::lines_with(&run.stderr, "[eks]")
    );
    assert!(!run.stderr.contains("preview started"), "{}", run.stderr);
    run.stderr_has("Next: `runner up -p aws -s dev` makes what is deployed match the programs and configuration");
    // The report of the check reads as drift found, in amber, with what differs.
    let html = ws
        .exec(&["report", "-p", "aws", "-s", "dev", "-o", "-"], &[])
        .expect(0)
        .stdout;
    for needle in [
        "<p class=\"result drift-found\" id=\"result\">drift found (exit 6)",
        "<h3>eks drifted: 1 resource</h3>",
        "<td><code>&quot;t3.large&quot;</code></td><td><code>&quot;t3.xlarge&quot;</code></td>",
        "<text x=\"24\" y=\"22\" font-size=\"14\" font-weight=\"bold\">drift · provider aws",
    ] {
        assert!(html.contains(needle), "the report lacks {needle:?}:\n{html}");
    }
    assert!(!html.contains(">succeeded (exit"), "{html}");
    ws.exec(&["preview", "-p", "aws", "-s", "dev", "--target", "eks"], &[])
        .expect(0)
        .stderr_has("Would change: eks: ~1 update")
        .stderr_has("\"t3.large\" → \"t3.xlarge\"")
        .stderr_has("Next: `runner up -p aws -s dev` makes these changes.");
    // In a workspace of one provider, the command is typed without `-p`.
    for other in ["do", "kubeconfig", "linode"] {
        std::fs::remove_file(ws.path().join(format!("providers/{other}.toml"))).unwrap();
    }
    ws.exec(&["preview", "-s", "dev", "--target", "eks"], &[])
        .expect(0)
        .stderr_has("Next: `runner up -s dev` makes these changes.");
    ws.exec(&["validate", "-s", "dev"], &[])
        .expect(0)
        .stderr_has("Next: `runner up -s dev` shows what it will run and asks first.");
    for other in ["do", "kubeconfig", "linode"] {
        std::fs::copy(
            std::path::Path::new(crate::support::REPO).join(format!("providers/{other}.toml")),
            ws.path().join(format!("providers/{other}.toml")),
        )
        .unwrap();
    }
    let status = |ws: &Ws| {
        let doc: serde_json::Value = serde_json::from_str(
            &ws.exec(&["status", "-p", "aws", "-s", "dev", "--format", "json"], &[])
                .expect(0)
                .stdout,
        )
        .unwrap();
        validate(&doc, "status.schema.json");
        doc
    };
    let doc = status(&ws);
    for name in ["vpc", "eks"] {
        let row = project(&doc, name);
        assert_eq!(row["last"]["operation"], "up", "{row}");
        assert_eq!(row["last"]["status"], "succeeded", "{row}");
        assert!(row["deployed"].as_bool().unwrap(), "{row}");
    }
    assert_eq!(project(&doc, "eks")["drift"]["status"], "drifted");
    assert_eq!(project(&doc, "vpc")["drift"]["status"], "no drift");
    assert!(project(&doc, "sirius")["drift"].is_null() && project(&doc, "sirius")["last"].is_null());
    assert!(
        project(&doc, "eks")["up"]["why"]
            .as_str()
            .unwrap()
            .ends_with("and a check (preview or drift) found changes; its up refreshes first"),
        "{doc}"
    );
    // The table: the drift column beside the last up (eks up succeeded, drifted; vpc no drift).
    let table = ws.exec(&["status", "-p", "aws", "-s", "dev"], &[]).expect(0).stdout;
    crate::snapshot!(ws.path(), "status_after_a_drift_check", table);
    // The up that sets the declared values back is what the table then shows; the check is past.
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    let doc = status(&ws);
    assert!(project(&doc, "eks")["drift"].is_null(), "{doc}");
    assert_eq!(
        project(&doc, "vpc")["drift"]["status"],
        "no drift",
        "unchanged, so not run: still true"
    );
    let table = ws.exec(&["status", "-p", "aws", "-s", "dev"], &[]).expect(0).stdout;
    crate::snapshot!(ws.path(), "status_after_the_up_that_set_the_drift_back", table);
}

/// What differs, input by input: on the terminal, in the job summary, in the test report.
fn drift_is_listed_input_by_input(ws: &Ws, drifted: &crate::support::Run) {
    crate::snapshot!(
        ws.path(),
        "drifted_input_by_input",
        crate::support::paragraph(&drifted.stderr, "Drifted: eks")
    );
    let step = std::fs::read_to_string(ws.path().join("step-summary.md")).unwrap();
    crate::snapshot!(ws.path(), "drift_step_summary", crate::support::before_timeline(&step));
    let xml = std::fs::read_to_string(ws.path().join("drift.xml")).unwrap();
    assert!(xml.contains("&quot;t3.large&quot; → &quot;t3.xlarge&quot;"), "{xml}");
}

/// Drift speaks of drift: the project is marked drifted (not succeeded), the others no drift
/// or not checked, the run is a drift check, in the summary file and on the terminal.
fn drift_is_said_as_drift(ws: &Ws, drifted: &crate::support::Run, summary: &serde_json::Value) {
    assert_eq!(project(summary, "eks")["status"], "drifted");
    assert_eq!(project(summary, "vpc")["status"], "no drift");
    assert_eq!(summary["operation"], "drift");
    let (table, settings) = crate::support::closing_table(&drifted.stderr, ws.path());
    settings.bind(|| insta::assert_snapshot!("closing_table_drift", table));
    crate::snapshot!(
        ws.path(),
        "drift_progress_of_a_drifted_project",
        crate::support::lines_with(&drifted.stderr, "[eks]")
    );
}

/// A change made by hand in the cloud shows only to a refreshing check: `drift` compares the
/// programs with the state, `drift --refresh` with what the cloud holds (`preview --refresh`).
#[test]
fn only_drift_with_refresh_sees_a_change_made_outside_pulumi() {
    let ws = Ws::configured("aws");
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    let by_hand = [("PULUMI_STANDIN_DRIFT", "eks")];
    let drift = ["drift", "-p", "aws", "-s", "dev"];
    // Its "no drift" says what it compared, and names the check that sees the change.
    ws.exec(&drift, &by_hand).expect(0).stderr_has(
        "No drift: the 3 deployed projects checked match their programs and configuration (13 not deployed: not checked). \
         This compared them with the state Pulumi recorded: `runner drift -p aws -s dev --refresh` reads what is deployed \
         first (the cloud, the cluster), to see changes made outside Pulumi (a resource deleted or edited by hand).",
    );
    ws.clear_invocations();
    ws.exec(&[&drift[..], &["--refresh"]].concat(), &by_hand)
        .expect(6)
        .stderr_has("Drift: 1 of 3 deployed projects differs from their programs and configuration (13 not deployed: not checked): eks (~1 update)");
    let previews: Vec<crate::support::Invocation> = ws
        .invocations()
        .into_iter()
        .filter(|i| i.command() == "preview")
        .collect();
    assert_eq!(previews.len(), 3);
    assert!(previews.iter().all(|p| p.has("--refresh")), "{previews:?}");

    // `refresh` takes the change into the state: now the programs differ from it; `up` puts
    // the program's values back.
    let refresh = ["refresh", "-p", "aws", "-s", "dev", "--target", "eks", "--yes"];
    ws.exec(&refresh, &[])
        .expect(0)
        .stderr_has("Nothing changed outside Pulumi: the 3 refreshed stacks match their state.");
    ws.exec(&refresh, &by_hand).expect(0).stderr_has(
        "Changed outside Pulumi, now in the state: eks (~1 update). The next `up` runs these projects again",
    );
    ws.exec(&drift, &[]).expect(6).stderr_has("eks (~1 update)");
    ws.up("aws", &["--target", "eks"], &[]).expect(0);
    let refreshed = ws.exec(&[&drift[..], &["--refresh"]].concat(), &[]).expect(0);
    assert!(
        refreshed.stderr.contains("No drift") && !refreshed.stderr.contains("This compared them with the state"),
        "{}",
        refreshed.stderr
    );
}

/// Looking changes nothing: after a preview, a drift check or a refresh that found nothing, an
/// `up` still skips what is up to date, as its prediction and `status` say. A refresh that
/// found changes made outside Pulumi took them into the state: `up` then runs the project again
/// to put its program back.
#[test]
fn only_a_refresh_that_found_changes_makes_an_up_to_date_project_run_again() {
    let ws = Ws::configured("aws");
    let up = ["up", "-p", "aws", "-s", "dev", "--target", "vpc"];
    ws.exec(&up, &[]).expect(0);
    let refresh = ["refresh", "-p", "aws", "-s", "dev", "--target", "vpc", "--yes"];
    let looks: [&[&str]; 3] = [
        &["preview", "-p", "aws", "-s", "dev", "--target", "vpc"],
        &["drift", "-p", "aws", "-s", "dev"],
        &refresh,
    ];
    for look in looks {
        ws.exec(look, &[]).expect(0);
        let again = ws
            .exec(&up, &[])
            .expect(0)
            .stderr_has("1 unchanged: nothing it depends on changed since its last successful up");
        // Nothing runs: nothing is predicted.
        assert!(!again.stderr.contains("Predicted"), "{}", again.stderr);
    }
    ws.exec(&refresh, &[("PULUMI_STANDIN_DRIFT", "vpc")])
        .expect(0)
        .stderr_has("Changed outside Pulumi, now in the state: vpc (~1 update)");
    let status = ws.exec(&["status", "-p", "aws", "-s", "dev"], &[]).expect(0);
    crate::snapshot!(
        ws.path(),
        "status_after_a_refresh_that_found_changes",
        crate::support::lines_with(&status.stdout, " vpc ")
    );
    ws.exec(&up, &[])
        .expect(0)
        .stderr_has(" for 1 of 1 project (")
        .stderr_has("✔ [vpc] up succeeded");
}

/// The projects whose `op` command ran, from the invocation log.
fn ran(ws: &Ws, op: &str) -> std::collections::BTreeSet<String> {
    crate::support::ran(ws, op).into_iter().collect()
}

#[test]
fn exclude_leaves_out_what_cannot_run_without_the_project_and_says_so() {
    let ws = Ws::configured("aws");
    let up = ws.up("aws", &["--exclude", "logstore"], &[]).expect(0);
    crate::snapshot!(
        ws.path(),
        "up_excluded",
        crate::support::lines_with(&up.stderr, "excluded: ")
    );
    let ups = ran(&ws, "up");
    assert_eq!(ups.len(), 13, "{ups:?}");
    for out in ["logstore", "logagent", "sirius"] {
        assert!(!ups.contains(out), "{out} ran");
    }
    crate::snapshot!(
        ws.path(),
        "up_excluded_summary",
        crate::support::lines_with(&up.stderr, "Summary: ")
    );

    // On destroy the excluded project stays, and so does what it needs.
    ws.clear_invocations();
    let destroy = ws
        .exec(
            &["destroy", "-p", "aws", "-s", "dev", "--exclude", "kubeconfig", "--yes"],
            &[],
        )
        .expect(0);
    crate::snapshot!(
        ws.path(),
        "destroy_kept",
        crate::support::lines_with(&destroy.stderr, "kept: ")
    );
    let destroyed = ran(&ws, "destroy");
    for kept in ["kubeconfig", "eks", "vpc", "iam"] {
        assert!(!destroyed.contains(kept), "{kept} was destroyed");
    }
    assert!(
        destroyed.contains("ingress-controller") && destroyed.contains("ecr"),
        "{destroyed:?}"
    );

    ws.up("aws", &["--exclude", "iam,vpc,ecr,kic-image-build"], &[])
        .expect(2)
        .stderr_has("nothing left to up: --exclude leaves out every project of the plan");
    ws.up("aws", &["--exclude", "logstor"], &[])
        .expect(2)
        .stderr_has("did you mean `logstore`?");
    let plan = ws
        .exec(
            &["show-plan", "-p", "aws", "--exclude", "logstore", "--format", "json"],
            &[],
        )
        .expect(0)
        .json();
    let names = crate::support::names(&plan);
    assert_eq!(names.len(), 13);
    assert!(!names.contains(&"logagent"));
}

/// A runner killed mid-run leaves the journal saying its project runs; `status` asks the
/// workspace lock who holds it (pid, host, when that process started) and, that runner gone —
/// a zombie not yet reaped, or reaped —, says no run is going and the project was cut short;
/// the next run reads it so too.
#[test]
fn after_a_runner_is_killed_status_says_its_run_was_cut_short() {
    let ws = Ws::configured("aws");
    let mut up = ws.start(
        &["up", "-p", "aws", "-s", "dev", "--target", "iam"],
        &[("PULUMI_STANDIN_HANG", "iam:up")],
    );
    let pulumi = crate::support::up_lock(&ws.path().join(".pulumi-state/.pulumi/locks/organization/iam/dev"));
    let status = |ws: &Ws| {
        let doc = ws
            .exec(&["status", "-s", "dev", "--format", "json"], &[])
            .expect(0)
            .json();
        validate(&doc, "status.schema.json");
        doc
    };
    let going = status(&ws);
    assert_eq!(going["running"], true);
    assert_eq!(project(&going, "iam")["last"]["status"], "running");

    crate::support::signal(up.id(), "KILL");
    // Not reaped yet: a zombie runs no more.
    crate::support::wait_until(Duration::from_secs(60), "the runner did not die", || {
        !crate::support::runs(up.id())
    });
    let killed = status(&ws);
    assert_eq!(killed["running"], false, "{killed:#}");
    assert_eq!(project(&killed, "iam")["last"]["status"], "cut short");
    assert_eq!(
        project(&killed, "iam")["up"]["why"],
        "its last up was cut short: its runner ended before it did"
    );
    let text = ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    crate::snapshot!(ws.path(), "status_after_a_runner_was_killed", text.stdout);
    let _ = up.wait();
    assert_eq!(status(&ws)["running"], false);

    // The pulumi the killed runner left is stopped (it would hold its stack's lock on).
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pulumi["pid"].to_string()])
        .status();
    // The next run folds the journal as cut short, and runs iam again.
    ws.up("aws", &["--target", "iam", "--remove-stale-locks"], &[])
        .expect(0);
    assert_eq!(project(&status(&ws), "iam")["last"]["status"], "succeeded");
}

/// `--switch-stack` while another runner holds the workspace is refused (exit 4) before the
/// environment file is changed, whatever the command.
#[test]
fn a_refused_switch_leaves_the_environment_file_as_it_was() {
    let ws = Ws::configured("aws");
    let mut up = ws.start(
        &["up", "-p", "aws", "-s", "dev", "--target", "iam"],
        &[("PULUMI_STANDIN_HANG", "iam:up")],
    );
    crate::support::up_lock(&ws.path().join(".pulumi-state/.pulumi/locks/organization/iam/dev"));
    let env = ws.path().join("config/pulumi/environment");
    let before = std::fs::read(&env).unwrap();
    assert_eq!(before, b"PULUMI_STACK=dev\n");
    ws.write("config/pulumi/Pulumi.qa.yaml", &crate::support::stack_config("aws"));
    for args in [
        &["up", "-p", "aws", "-s", "qa", "--switch-stack", "--target", "iam"][..],
        &[
            "pulumi",
            "iam",
            "-p",
            "aws",
            "-s",
            "qa",
            "--switch-stack",
            "--",
            "version",
        ][..],
        &["validate", "-p", "aws", "-s", "qa", "--switch-stack"][..],
    ] {
        ws.exec(args, &[])
            .expect(4)
            .stderr_has("another runner is already running in this workspace");
        assert_eq!(std::fs::read(&env).unwrap(), before, "{args:?} changed the file");
        assert!(!ws.path().join(".runner/qa").exists(), "{args:?}");
    }
    // Ctrl-C to the runner (it stops the hanging project and ends).
    crate::support::signal(up.id(), "INT");
    let _ = up.wait();
    // Once free, the switch is made.
    ws.exec(
        &["up", "-p", "aws", "-s", "qa", "--switch-stack", "--target", "iam"],
        &[],
    )
    .expect(0)
    .stderr_has("Switched the workspace from stack dev to qa");
    assert_eq!(std::fs::read_to_string(&env).unwrap(), "PULUMI_STACK=qa\n");
}

/// A typo of a stack's name is not taken for a new stack without a word: with -p, `status`
/// says the stack has neither runs nor configuration and names the stacks there are.
#[test]
fn status_of_a_stack_never_seen_says_so_and_names_the_known_ones() {
    let ws = Ws::configured("kubeconfig");
    // With -p as without: a typo is not shown as a new stack whose every project never ran.
    for args in [&["-p", "kubeconfig", "-s", "dve"][..], &["-s", "dve"]] {
        let run = ws.exec(&[&["status"][..], args].concat(), &[]).expect(2);
        crate::snapshot!(ws.path(), "status_of_a_stack_never_seen", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    // A stack that is known says nothing of the kind.
    let known = ws.exec(&["status", "-p", "kubeconfig", "-s", "dev"], &[]).expect(0);
    assert!(!known.stderr.contains("no runs here"), "{}", known.stderr);
    // Typed from elsewhere with --workspace: the commands it suggests keep it, or they would
    // run in the directory the person is in.
    let name = ws.path().file_name().unwrap().to_str().unwrap();
    let mut elsewhere = ws.command(&["--workspace", name, "status", "-s", "dve"], &[]);
    elsewhere.current_dir(ws.path().parent().unwrap());
    let run = crate::support::run(&mut elsewhere).expect(2);
    assert!(
        run.stderr
            .contains(&format!("stacks here: dev (`runner --workspace {name} status -s dev`)")),
        "{}",
        run.stderr
    );
    // No stack at all yet, under a wrapper that gives the provider and stack: its plain `up`.
    std::fs::remove_file(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    let first = ws
        .exec(
            &["status", "-p", "kubeconfig", "-s", "try"],
            &[("RUNNER_COMMAND", "scripts/try-local")],
        )
        .expect(2);
    crate::snapshot!(ws.path(), "status_with_no_stack_yet", first.stderr);
}

/// In a workspace of one provider, the stack a typo most likely meant is offered, and no `-p`.
#[test]
fn a_mistyped_stack_in_a_one_provider_workspace_is_answered_without_a_provider() {
    let ws = Ws {
        dir: tempfile::tempdir().unwrap(),
    };
    crate::support::copy_example_local(ws.path());
    ws.write(
        "config/pulumi/Pulumi.try.yaml",
        "config:\n  kubernetes:infra_type: local\n",
    );
    let run = ws.exec(&["status", "-s", "tyr"], &[]).expect(2);
    crate::snapshot!(
        ws.path(),
        "status_of_a_mistyped_stack_in_a_one_provider_workspace",
        run.stderr
    );
}

/// A pipeline deploys into the shared backend from its own checkout: `status` on a workstation,
/// which tells only the runs made there, says so and names what checks the backend.
#[test]
fn status_with_a_shared_backend_and_no_run_here_names_what_checks_the_backend() {
    let ws = Ws::configured("aws");
    let backend = format!("file://{}", ws.path().join("shared-backend").display());
    std::fs::create_dir_all(ws.path().join("shared-backend")).unwrap();
    let status = ws
        .exec(&["status", "-s", "dev"], &[("PULUMI_BACKEND_URL", backend.as_str())])
        .expect(0);
    crate::snapshot!(ws.path(), "status_with_a_shared_backend_and_no_run_here", status.stdout);
    // A pipeline deployed (here: a run whose record is gone), then a drift check from here: the
    // rows show what it found, and the note says what they are and what an up would do.
    let shared = [("PULUMI_BACKEND_URL", backend.as_str())];
    ws.up("aws", &["--target", "vpc"], &shared).expect(0);
    std::fs::remove_dir_all(ws.path().join(".runner")).unwrap();
    ws.exec(&["drift", "-p", "aws", "-s", "dev"], &shared).expect(0);
    // vpc no drift; eks found not deployed (not a check left undone); the note says what the
    // rows are and what an up would do.
    let after = ws.exec(&["status", "-s", "dev"], &shared).expect(0);
    crate::snapshot!(
        ws.path(),
        "status_with_a_shared_backend_after_a_drift_check",
        after.stdout
    );
    // Once the pipeline has destroyed it all, the check finds nothing deployed: an up deploys.
    ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--yes"], &shared)
        .expect(0);
    std::fs::remove_dir_all(ws.path().join(".runner")).unwrap();
    ws.exec(&["drift", "-p", "aws", "-s", "dev"], &shared).expect(0);
    let gone = ws.exec(&["status", "-s", "dev"], &shared).expect(0);
    crate::snapshot!(ws.path(), "status_with_a_shared_backend_all_destroyed", gone.stdout);
    // The same in JSON, as its schema says it (`not checked`: the hand-kept schema lacked it).
    let doc: serde_json::Value = serde_json::from_str(
        &ws.exec(&["status", "-s", "dev", "--format", "json"], &shared)
            .expect(0)
            .stdout,
    )
    .unwrap();
    validate(&doc, "status.schema.json");
    assert_eq!(project(&doc, "vpc")["drift"]["status"], "not checked", "{doc}");
    // The workspace's own file backend holds only what ran here: nothing to add.
    let local = ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    assert!(
        !local.stdout.contains("Nothing ran from this checkout"),
        "{}",
        local.stdout
    );
}

/// At a terminal of 100 columns every row of `status` fits (the date short, long names cut in
/// the middle, as kubectl and gh cut theirs) and the reasons a row cannot hold are listed whole
/// under the table; into a pipe the rows are whole.
#[test]
fn status_fits_its_rows_to_the_terminal() {
    let ws = Ws::configured("aws");
    ws.up("aws", &[], &[]).expect(0);
    // A drift check adds a column: the reasons must still be read somewhere at 100 columns.
    ws.exec(&["drift", "-s", "dev"], &[]).expect(0);
    ws.edit("config/pulumi/Pulumi.dev.yaml", "us-east-1", "us-west-2");
    let piped = ws.exec(&["status", "-s", "dev"], &[]).expect(0);
    assert!(
        piped.stdout.lines().any(|l| l.chars().count() > 100),
        "{}",
        piped.stdout
    );
    let typescript = ws.path().join("typescript");
    let status = ws.command(&["status", "-s", "dev"], &[]);
    let (run, shown) = crate::support::at_terminal_of(100, &status, &typescript);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("  up  ") && l.contains("succeeded"))
        .collect();
    assert!(!rows.is_empty(), "{shown}");
    for row in &rows {
        assert!(row.trim_end_matches('\r').chars().count() <= 100, "{row:?}");
    }
    // Two long names sharing a start stay apart; the reasons a row cannot hold are whole below.
    assert!(rows.iter().any(|r| r.contains("ingress-…mespace")), "{shown}");
    assert!(rows.iter().any(|r| r.contains("ingress-…troller")), "{shown}");
    assert!(
        rows.iter().all(|r| r.trim_end_matches('\r').ends_with("  run")),
        "{shown}"
    );
    assert!(shown.contains("An up would run 16 of 16 projects:"), "{shown}");
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("  ingress-controller-namespace  after kubeconfig, which runs")),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("  iam ") && l.contains("stack file key `aws:region` changed since its last up")),
        "{shown}"
    );
    assert!(
        shown.contains("rows cut to the terminal's width: `runner status --format json` has them whole"),
        "{shown}"
    );
    assert!(!piped.stdout.contains("rows cut"), "{}", piped.stdout);
}
