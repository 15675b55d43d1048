//! The runner as a CI step: the variables it reads and sets (the `MARA_` prefix, the old
//! `RUNNER_` names for one release, the CI's own `RUNNER_*` left alone), GitHub Actions and
//! GitLab CI output, `JUnit`, the warning about a backend a CI job loses.

use std::fmt::Write as _;

use crate::support::{SECRETS, Ws};

/// A hook script that records the variables it sees into the workspace.
fn recording_hook(ws: &Ws, body: &str) {
    ws.eks_hook("record.sh", &format!("#!/bin/sh\nset -e\n{body}\n"));
}

/// The environment of a GitHub Actions job (`CI`, `GITHUB_ACTIONS`), and `more`.
fn github_job<'a>(more: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    [&[("CI", "true"), ("GITHUB_ACTIONS", "true")][..], more].concat()
}

#[test]
fn a_hook_sees_the_cis_own_runner_variables_unchanged() {
    let ws = Ws::configured("aws");
    recording_hook(
        &ws,
        "echo \"workspace=$MARA_WORKSPACE ci_workspace=$RUNNER_WORKSPACE temp=$RUNNER_TEMP stack=$MARA_STACK\" > \"$MARA_WORKSPACE/hook.txt\"",
    );
    let run = ws
        .up(
            "aws",
            &["--target", "eks"],
            &github_job(&[
                ("RUNNER_WORKSPACE", "/home/runner/work/platform"),
                ("RUNNER_TEMP", "/home/runner/work/_temp"),
            ]),
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
    // Each old name with its new one.
    crate::snapshot!(
        ws.path(),
        "old_names_warning",
        crate::support::message(&stderr, "warning: variables are read under their old names")
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
    crate::snapshot!(
        ws.path(),
        "old_names_read_by_a_hook",
        crate::support::lines_with(&stderr, "hook scripts/record.sh reads")
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
        .up(
            "aws",
            &["--target", "eks"],
            &github_job(&[
                ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
                ("PULUMI_STANDIN_FAIL", "eks"),
                ("PULUMI_STANDIN_DELAY_MS", "*=200"),
            ]),
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
    crate::snapshot!(ws.path(), "github_annotation_of_a_failure", annotation);
    // Appended to the earlier step's: a row per project, the fix, and (the state goes with the
    // job) the warning, as in the log.
    let table = std::fs::read_to_string(&summary).unwrap();
    crate::snapshot!(
        ws.path(),
        "github_step_summary_of_a_failure",
        crate::support::before_timeline(&table)
    );
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
    crate::snapshot!(
        ws.path(),
        "ci_warning_of_the_workspace_backend",
        crate::support::message(&run.stderr, "warning: this CI job keeps")
    );
    assert_eq!(run.stderr.matches("lost when the job ends").count(), 1);
    // Projects with nothing to do are one row per reason, as the log folds them.
    std::fs::write(&summary, "").unwrap();
    ws.up(
        "aws",
        &["--target", "eks"],
        &github_job(&[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())]),
    )
    .expect(0);
    let table = std::fs::read_to_string(&summary).unwrap();
    crate::snapshot!(
        ws.path(),
        "github_step_summary_folds_the_unchanged",
        crate::support::before_timeline(&table)
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
        .up(
            "aws",
            &[],
            &github_job(&[
                ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
                ("GITHUB_WORKSPACE", ws.path().to_str().unwrap()),
            ]),
        )
        .expect(3);
    let table = std::fs::read_to_string(&summary).unwrap_or_default();
    // One wrong value is one problem (not also a wrong type for the program that reads it),
    // escaped; the job's state goes with it: said in the summary as a run that ran says it.
    crate::snapshot!(ws.path(), "github_step_summary_of_a_refused_run", &table);
    assert!(!table.contains("<b>"), "{table}");
    // And on the run's page, at the line.
    let output = format!("{}{}", run.stdout, run.stderr);
    crate::snapshot!(
        ws.path(),
        "github_annotation_of_a_refused_run",
        crate::support::lines_with(&output, "::error ")
    );
}

#[test]
fn in_gitlab_ci_each_project_is_a_collapsed_section_and_a_backend_that_outlives_the_job_is_not_warned_about() {
    let ws = Ws::configured("aws");
    let state = ws.path().join("shared-state");
    std::fs::create_dir_all(&state).unwrap();
    let backend = format!("file://{}", state.display());
    let run = ws
        .up(
            "aws",
            &["--target", "vpc"],
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
    let xsd = dir.join("junit.xsd");
    crate::support::succeeds(
        std::process::Command::new("xmllint")
            .args(["--noout", "--schema"])
            .arg(xsd)
            .arg(path),
    );
}

#[test]
fn junit_has_a_test_case_per_planned_project_and_keeps_the_strict_ant_rules() {
    let ws = Ws::configured("aws");
    let eks_fails = [("PULUMI_STANDIN_FAIL", "eks"), ("PULUMI_STANDIN_DELAY_MS", "eks=300")];
    let run = ws.up("aws", &["--junit", "report.xml"], &eks_fails).expect(1);
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
    // What the report says of each, as a CI's test page shows it: eks failed (`pulumi up exited
    // with code 1`, with its cause), kubeconfig skipped (`needs eks, which failed`), vpc nothing
    // (a success has no child); and where eks's log is.
    let case = |name: &str| *cases.iter().find(|c| c.attribute("name") == Some(name)).unwrap();
    let mut said = String::new();
    for name in ["eks", "kubeconfig", "vpc"] {
        for n in case(name).children().filter(roxmltree::Node::is_element) {
            let (tag, message) = (n.tag_name().name(), n.attribute("message").unwrap_or_default());
            let text = n.text().unwrap_or_default().trim();
            writeln!(said, "{name}: <{tag}> {message}\n{text}").unwrap();
        }
    }
    let out = suite.children().find(|n| n.has_tag_name("system-out")).unwrap();
    write!(said, "<system-out>\n{}", out.text().unwrap_or_default().trim()).unwrap();
    crate::snapshot!(ws.path(), "junit_of_a_failure", said);
    ant_schema(&path);
}
