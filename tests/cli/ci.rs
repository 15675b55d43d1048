//! The runner as a CI step: the variables it reads and sets (the `MARA_` prefix, the old
//! `RUNNER_` names for one release, the CI's own `RUNNER_*` left alone), GitHub Actions and
//! GitLab CI output, `JUnit`, the warning about a backend a CI job loses.

use crate::support::{SECRETS, Ws};

/// A hook script that records the variables it sees into the workspace.
fn recording_hook(ws: &Ws, body: &str) {
    ws.eks_hook("record.sh", &format!("#!/bin/sh\nset -e\n{body}\n"));
}

#[test]
fn a_hook_sees_the_cis_own_runner_variables_unchanged() {
    let ws = Ws::configured("aws");
    recording_hook(
        &ws,
        "echo \"workspace=$MARA_WORKSPACE ci_workspace=$RUNNER_WORKSPACE temp=$RUNNER_TEMP stack=$MARA_STACK\" > \"$MARA_WORKSPACE/hook.txt\"",
    );
    let run = ws
        .exec(
            &["up", "-p", "aws", "-s", "dev", "--target", "eks"],
            &[
                ("CI", "true"),
                ("GITHUB_ACTIONS", "true"),
                ("RUNNER_WORKSPACE", "/home/runner/work/platform"),
                ("RUNNER_TEMP", "/home/runner/work/_temp"),
            ],
        )
        .expect(0);
    let record = std::fs::read_to_string(ws.path().join("hook.txt")).unwrap();
    assert_eq!(
        record.trim(),
        format!(
            "workspace={} ci_workspace=/home/runner/work/platform temp=/home/runner/work/_temp stack=dev",
            ws.path().display()
        )
    );
    assert!(
        !run.stderr.contains("old name"),
        "a hook reading only MARA_ names and the CI's own is not warned about: {}",
        run.stderr
    );
}

#[test]
fn the_old_runner_names_still_work_for_one_release_with_a_warning() {
    let ws = Ws::configured("aws");
    // The stack file lacks a key that comes from RUNNER_CONFIG_…, and the secrets come as
    // RUNNER_SECRET_… (as a CI job set up before the rename gives them).
    ws.edit("config/pulumi/Pulumi.dev.yaml", "  eks:max_size: 12\n", "");
    recording_hook(
        &ws,
        "echo \"project=$RUNNER_PROJECT stack=$RUNNER_STACK cluster=$RUNNER_OUTPUT_CLUSTER_NAME\" > \"$MARA_WORKSPACE/hook.txt\"",
    );
    let mut env: Vec<(String, String)> = SECRETS
        .iter()
        .map(|(k, v)| (k.replace("MARA_", "RUNNER_"), (*v).to_string()))
        .collect();
    env.push(("RUNNER_CONFIG_EKS_MAX_SIZE".into(), "7".into()));
    env.push(("CI".into(), "true".into()));
    let mut cmd = ws.command(&["up", "-p", "aws", "-s", "dev"], &[]);
    for (k, _) in SECRETS {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("variables are read under their old names, for this release only: rename them:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("RUNNER_CONFIG_EKS_MAX_SIZE → MARA_CONFIG_EKS_MAX_SIZE")
            && stderr.contains("RUNNER_SECRET_SIRIUS_LEDGER_PWD → MARA_SECRET_SIRIUS_LEDGER_PWD"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("old names, for this release only").count(),
        1,
        "one warning per run: {stderr}"
    );
    let config = std::fs::read_to_string(ws.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    assert!(config.contains("eks:max_size: 7"), "{config}");
    let record = std::fs::read_to_string(ws.path().join("hook.txt")).unwrap();
    assert_eq!(record.trim(), "project=eks stack=dev cluster=eks-dev");
    assert!(
        stderr.contains(
            "hook scripts/record.sh reads variables by their old names, set for this release only where the environment has none of that name (RUNNER_* belongs to the CI): rename RUNNER_OUTPUT_CLUSTER_NAME → MARA_OUTPUT_CLUSTER_NAME, RUNNER_PROJECT → MARA_PROJECT, RUNNER_STACK → MARA_STACK"
        ),
        "{stderr}"
    );
}

/// The lines of standard output between each `::group::` and its `::endgroup::`, by title.
/// The groups of a GitHub Actions log, each `::group::TITLE`, `::stop-commands::TOKEN`, the
/// project's lines, `::TOKEN::`, `::endgroup::`: (title, lines). Every group's lines are out of
/// GitHub's reach as commands, the token the same throughout and found nowhere else.
fn github_groups(stdout: &str) -> Vec<(String, Vec<String>)> {
    let mut groups = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    let mut token: Option<String> = None;
    let mut stopped = false;
    for line in stdout.lines() {
        if let Some(title) = line.strip_prefix("::group::") {
            assert!(open.is_none(), "a group inside a group:\n{stdout}");
            open = Some((title.to_string(), Vec::new()));
        } else if let Some(t) = line.strip_prefix("::stop-commands::") {
            assert!(open.is_some() && !stopped, "stop-commands outside a group:\n{stdout}");
            assert!(
                token.get_or_insert_with(|| t.to_string()) == t,
                "another token:\n{stdout}"
            );
            stopped = true;
        } else if stopped && token.as_deref().is_some_and(|t| line == format!("::{t}::")) {
            stopped = false;
        } else if line == "::endgroup::" {
            assert!(!stopped, "a group ended with commands stopped:\n{stdout}");
            groups.push(open.take().expect("an end without a start"));
        } else if let Some((_, lines)) = &mut open {
            assert!(stopped, "a line of a group where commands run: {line}\n{stdout}");
            lines.push(line.to_string());
        }
    }
    assert!(open.is_none(), "a group never ended:\n{stdout}");
    groups
}

#[test]
fn in_github_actions_each_project_is_a_group_a_failure_an_annotation_and_the_run_a_summary() {
    let ws = Ws::configured("aws");
    let summary = ws.path().join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let run = ws
        .exec(
            &["up", "-p", "aws", "-s", "dev", "--target", "eks"],
            &[
                ("CI", "true"),
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
                ("PULUMI_STANDIN_FAIL", "eks"),
                ("PULUMI_STANDIN_DELAY_MS", "*=200"),
            ],
        )
        .expect(1);
    let groups = github_groups(&run.stdout);
    let titles: Vec<&str> = groups.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(groups.len(), 3, "{titles:?}");
    for (title, lines) in &groups {
        let project = title.split(':').next().unwrap();
        // The title names the project: its lines carry no `[project]` of their own, and none
        // is another project's (its stack's root resource names it).
        assert!(!lines.iter().any(|l| l.starts_with('[')), "{title}: {lines:#?}");
        assert!(
            lines
                .iter()
                .filter(|l| l.contains("pulumi:pulumi:Stack"))
                .all(|l| l.contains(&format!("{project}-dev"))),
            "{title}: another project's lines inside:\n{lines:#?}"
        );
        assert!(
            lines.iter().any(|l| l.ends_with("Updating (dev):")),
            "{title}: {lines:#?}"
        );
    }
    assert!(
        titles.iter().any(|t| t.starts_with("iam: up succeeded in ")),
        "{titles:?}"
    );
    assert!(titles.iter().any(|t| t.starts_with("eks: up failed in ")), "{titles:?}");
    // Outside the groups, only workflow commands.
    let annotation = run
        .stdout
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("no annotation:\n{}", run.stdout));
    assert!(
        annotation.starts_with("::error title=eks%3A up failed::pulumi up exited with code 1")
            && annotation.contains("injected failure for eks (up) by PULUMI_STANDIN_FAIL"),
        "{annotation}"
    );
    job_summary_says(&std::fs::read_to_string(&summary).unwrap());
    // In CI with the workspace's own backend, the warning comes first (after the note on the
    // environment file, which says which stack), once.
    let first = run
        .stderr
        .lines()
        .find(|l| !l.starts_with("Created config/pulumi/environment"))
        .unwrap_or_default();
    assert!(
        first.starts_with("warning: this CI job keeps the Pulumi state in the workspace's own file backend"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "fix: set PULUMI_BACKEND_URL in the job's environment to a backend that outlives it: s3://BUCKET"
        )
    );
    assert_eq!(run.stderr.matches("lost when the job ends").count(), 1);
    // Projects with nothing to do are one row per reason, as the log folds them.
    std::fs::write(&summary, "").unwrap();
    ws.exec(
        &["up", "-p", "aws", "-s", "dev", "--target", "eks"],
        &[
            ("CI", "true"),
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    )
    .expect(0);
    let table = std::fs::read_to_string(&summary).unwrap();
    assert!(
        table.contains(
            "| iam, vpc | ⏭️ unchanged | | | nothing each depends on changed since its last successful up |\n"
        ),
        "{table}"
    );
}

/// The job summary of the GitHub test's run (iam succeeded, eks failed), appended to what an
/// earlier step wrote.
#[track_caller]
fn job_summary_says(table: &str) {
    // The state goes with the job: the summary says so too, not only the log.
    assert!(
        table.contains("> [!WARNING]\n> this CI job keeps the Pulumi state in the workspace's own file backend"),
        "{table}"
    );
    assert!(
        table.starts_with("earlier step\n### runner up · provider aws · stack dev\n\n2 succeeded, 1 failed in "),
        "appended:\n{table}"
    );
    assert!(
        table.contains("| project | result | duration | changes | detail |"),
        "{table}"
    );
    assert!(table.contains("| eks | ❌ failed | "), "{table}");
    assert!(
        table.contains("Fix the cause: run the job again; what is deployed already changes nothing"),
        "{table}"
    );
    // Its changes in the log's marks, said under the table.
    let legend = "\nResources: + created, ~ updated, ± replaced, - deleted, = unchanged, > read.\n";
    assert!(
        table.contains("| iam | ✅ succeeded | ") && table.contains(legend),
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.starts_with("| iam |") && l.contains(" | +")),
        "{table}"
    );
}

/// A run refused before its first project (here a value of the wrong type) is said in the job
/// summary too: where a job's readers look first, not only in its log.
#[test]
fn in_github_actions_a_refused_run_is_said_in_the_job_summary() {
    let ws = Ws::configured("aws");
    ws.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "eks:min_size: 3",
        "eks:min_size: <b>lots</b>",
    );
    let summary = ws.path().join("step-summary.md");
    let run = ws
        .exec(
            &["up", "-p", "aws", "-s", "dev"],
            &[
                ("CI", "true"),
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
                ("GITHUB_WORKSPACE", ws.path().to_str().unwrap()),
            ],
        )
        .expect(3);
    let table = std::fs::read_to_string(&summary).unwrap_or_default();
    // One wrong value is one problem (not also a wrong type for the program that reads it).
    assert!(
        table.starts_with(
            "### runner up · provider aws · stack dev\n\n❌ nothing ran: config/pulumi/Pulumi.dev.yaml:7: `eks:min_size` is `&lt;b&gt;lots&lt;/b&gt;`, not a whole number\n\nFix: correct the value in config/pulumi/Pulumi.dev.yaml\n"
        ),
        "{table}"
    );
    assert!(!table.contains("<b>"), "{table}");
    // The job's state goes with it: said in the summary as a run that ran says it.
    assert!(table.contains("> [!WARNING]\n> "), "{table}");
    // And on the run's page, at the line.
    let output = format!("{}{}", run.stdout, run.stderr);
    assert!(
        output.contains(
            "::error file=config/pulumi/Pulumi.dev.yaml,line=7,title=runner up%3A nothing ran::config/pulumi/Pulumi.dev.yaml:7: `eks:min_size` is `<b>lots</b>`, not a whole number%0Afix: correct the value in config/pulumi/Pulumi.dev.yaml\n"
        ),
        "{output}"
    );
}

#[test]
fn in_gitlab_ci_each_project_is_a_collapsed_section_and_a_backend_that_outlives_the_job_is_not_warned_about() {
    let ws = Ws::configured("aws");
    let state = ws.path().join("shared-state");
    std::fs::create_dir_all(&state).unwrap();
    let backend = format!("file://{}", state.display());
    let run = ws
        .exec(
            &["up", "-p", "aws", "-s", "dev", "--target", "vpc"],
            &[("CI", "true"), ("GITLAB_CI", "true"), ("PULUMI_BACKEND_URL", &backend)],
        )
        .expect(0);
    let start = run
        .stdout
        .lines()
        .find(|l| l.starts_with("\u{1b}[0Ksection_start:"))
        .unwrap_or_else(|| panic!("{:?}", run.stdout));
    assert!(
        start.ends_with(":runner_vpc[collapsed=true]\r\u{1b}[0Kvpc: up succeeded in ")
            || start.contains(":runner_vpc[collapsed=true]\r\u{1b}[0Kvpc: up succeeded in "),
        "{start:?}"
    );
    let after: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("\u{1b}[0Ksection_start:"))
        .collect();
    let end = after
        .iter()
        .position(|l| l.starts_with("\u{1b}[0Ksection_end:"))
        .unwrap();
    assert!(after[end].ends_with(":runner_vpc\r\u{1b}[0K"), "{:?}", after[end]);
    assert!(
        after[1..end].iter().any(|l| l.ends_with("Updating (dev):")),
        "{after:?}"
    );
    assert!(!after[1..end].iter().any(|l| l.starts_with("[vpc] ")), "{after:?}");
    assert!(!run.stdout.contains("::group::"));
    assert!(!run.stderr.contains("lost when the job ends"), "{}", run.stderr);
}

/// The rules of the strict Apache Ant schema a report must keep, checked whatever the machine
/// has: one `testsuite` with every required attribute, a timestamp without a time zone, and
/// `properties`, the test cases, `system-out`, `system-err` in that order. Returns the cases.
pub fn ant_rules<'a>(doc: &'a roxmltree::Document<'a>) -> Vec<roxmltree::Node<'a, 'a>> {
    let suite = doc.root_element();
    assert_eq!(suite.tag_name().name(), "testsuite");
    for attribute in ["name", "tests", "failures", "errors", "time", "timestamp", "hostname"] {
        assert!(
            suite.attribute(attribute).is_some_and(|v| !v.trim().is_empty()),
            "{attribute} is missing"
        );
    }
    let stamp = suite.attribute("timestamp").unwrap();
    assert!(
        stamp.len() == 19 && stamp.as_bytes()[10] == b'T' && stamp.chars().filter(char::is_ascii_digit).count() == 14,
        "a timestamp without a time zone or fraction: {stamp}"
    );
    let children: Vec<&str> = suite
        .children()
        .filter(roxmltree::Node::is_element)
        .map(|n| n.tag_name().name())
        .collect();
    assert_eq!(children.first(), Some(&"properties"), "{children:?}");
    assert_eq!(
        &children[children.len() - 2..],
        ["system-out", "system-err"],
        "{children:?}"
    );
    assert!(
        children[1..children.len() - 2].iter().all(|c| *c == "testcase"),
        "{children:?}"
    );
    let cases: Vec<roxmltree::Node<'a, 'a>> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(suite.attribute("tests").unwrap(), cases.len().to_string());
    for case in &cases {
        for attribute in ["name", "classname", "time"] {
            assert!(case.attribute(attribute).is_some(), "{attribute}");
        }
        assert!(case.attribute("time").unwrap().parse::<f64>().is_ok());
        let kids: Vec<_> = case.children().filter(roxmltree::Node::is_element).collect();
        assert!(kids.len() <= 1, "at most one of skipped, error, failure");
        if let Some(k) = kids.first()
            && k.tag_name().name() != "skipped"
        {
            assert!(k.attribute("type").is_some(), "failure and error carry a type");
        }
    }
    let count = |tag: &str| {
        cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name(tag)))
            .count()
    };
    assert_eq!(suite.attribute("failures").unwrap(), count("failure").to_string());
    assert_eq!(suite.attribute("errors").unwrap(), count("error").to_string());
    assert_eq!(suite.attribute("skipped").unwrap_or("0"), count("skipped").to_string());
    cases
}

/// The report against the strict Ant schema itself, when `RUNNER_SCHEMAS_DIR` holds
/// `junit.xsd` (no registry ships it); skipped otherwise.
pub fn ant_schema(path: &std::path::Path) {
    // The Ant rules were checked in the test already: only this last check may skip.
    let Some(dir) = crate::support::tool("schemas") else {
        return;
    };
    if crate::support::tool("xmllint").is_none() {
        return;
    }
    let check = std::process::Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(dir.join("junit.xsd"))
        .arg(path)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn junit_has_a_test_case_per_planned_project_and_keeps_the_strict_ant_rules() {
    let ws = Ws::configured("aws");
    let run = ws
        .exec(
            &["up", "-p", "aws", "-s", "dev", "--junit", "report.xml"],
            &[("PULUMI_STANDIN_FAIL", "eks"), ("PULUMI_STANDIN_DELAY_MS", "eks=300")],
        )
        .expect(1);
    assert!(run.stderr.contains("Failed: eks (up)"));
    let path = ws.path().join("report.xml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(crate::support::SECRETS[0].1));
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let cases = ant_rules(&doc);
    assert_eq!(cases.len(), 16, "one test case per planned project:\n{text}");
    let suite = doc.root_element();
    assert_eq!(suite.attribute("failures"), Some("1"), "{text}");
    assert!(
        cases
            .iter()
            .all(|c| c.attribute("classname") == Some("runner.aws.dev.up"))
    );
    let case = |name: &str| *cases.iter().find(|c| c.attribute("name") == Some(name)).unwrap();
    let failure = case("eks")
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("eks failed");
    assert!(
        failure
            .attribute("message")
            .unwrap()
            .contains("pulumi up exited with code 1"),
        "{text}"
    );
    assert!(
        failure.text().unwrap_or_default().contains("injected failure for eks"),
        "{text}"
    );
    let kubeconfig = case("kubeconfig")
        .children()
        .find(|n| n.has_tag_name("skipped"))
        .expect("not started: skipped");
    assert!(
        kubeconfig
            .attribute("message")
            .unwrap()
            .contains("needs eks, which failed"),
        "{text}"
    );
    assert!(
        case("vpc").children().all(|n| !n.is_element()),
        "a success has no child"
    );
    let out = suite.children().find(|n| n.has_tag_name("system-out")).unwrap();
    assert!(
        out.text()
            .unwrap_or_default()
            .contains("eks: up failed; its log: .runner/dev/logs/eks.up.log"),
        "{text}"
    );
    ant_schema(&path);
}
