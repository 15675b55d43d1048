//! A run as a picture: the HTML report opened in headless Chromium (what is on the page, a
//! screenshot), the timeline as a Mermaid gantt chart and as SVG, the plan as SVG, and the
//! chart in GitHub's job summary. On the end-to-end workspace, with the stand-in.

use std::process::Command;

use crate::engines::{E2e, Engine};
use crate::support::{headless, tool};
use test_requires::requires;

/// A workspace where `logstore`'s program is refused by the engine: an up fails there.
fn failing_run() -> E2e {
    let e = E2e::new(Engine::Standin).expect("the stand-in");
    e.edit(
        "projects/services/logstore/Pulumi.yaml",
        "        retention: ${retention}\n",
        "        retention: ${retention}\n      retention_days: 7\n",
    );
    e
}

#[requires("chromium")]
#[test]
fn the_html_report_shows_the_plan_the_timeline_and_each_failure_with_its_log_in_a_browser() {
    let e = failing_run();
    let report = e.path().join("run.html");
    let run = e
        .runner(&["up", "--yes", "--report", report.to_str().unwrap()])
        .expect(1);
    crate::snapshot!(
        e.path(),
        "report_is_said",
        crate::support::lines_with(&run.stderr, "Report: ")
    );
    let html = std::fs::read_to_string(&report).unwrap();
    // Self-contained: nothing to fetch, no script.
    for fetch in ["src=", "href=\"http", "<script", "@import", "url(http"] {
        assert!(!html.contains(fetch), "the report fetches or runs something: {fetch}");
    }
    e.assert_no_plain_secret(&[]);
    assert!(
        html.contains("id=\"failure-logstore\""),
        "a failure section for logstore"
    );
    assert!(html.contains("Property retention_days does not exist"), "the cause");
    assert!(
        html.contains("<details class=\"log\"><summary>log of logstore"),
        "its log, folded"
    );
    // The plan's boxes say how each project ended, in the colours of the timeline.
    let plan = &html[html.find("<section id=\"plan\">").expect("a plan")..];
    let plan = &plan[..plan.find("</section>").unwrap()];
    let node = |project: &str| {
        let at = plan
            .find(&format!("<g class=\"project\" data-name=\"{project}\">"))
            .unwrap_or_else(|| panic!("{project} has a box"));
        plan[at..].split("</g>").next().unwrap().to_string()
    };
    let failed = node("logstore");
    assert!(
        failed.contains("): failed</title>") && failed.contains("fill=\"#e06666\""),
        "{failed}"
    );
    let ok = node("identity");
    assert!(
        ok.contains("): succeeded</title>") && ok.contains("fill=\"#7cb87e\""),
        "{ok}"
    );

    let Some(chromium) = tool("chromium") else { return };
    let profile = tempfile::tempdir().unwrap();
    // What a person sees: the DOM after the page loaded, every part there.
    let dom = headless(&chromium, profile.path())
        .arg("--dump-dom")
        .arg(format!("file://{}", report.display()))
        .output()
        .unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let dom = String::from_utf8_lossy(&dom.stdout);
    // Its text: the run (`up · provider local · stack dev`, `failed (exit 1)`), the Plan, the
    // Timeline, the Failures (`logstore (failed)` and its cause).
    // (Not the rows between: what had started when logstore failed varies from run to run.)
    let text = crate::support::visible_text(&dom);
    let head: Vec<&str> = text.lines().take(3).collect();
    let sections: Vec<&str> = text
        .lines()
        .filter(|l| ["Plan", "Timeline", "Projects"].contains(l))
        .collect();
    let failures = &text[text.find("\nFailures\n").expect("a Failures section")..];
    let failures = &failures[..failures.find("log of logstore").unwrap_or(failures.len())];
    let shown = format!("{}\n{}{failures}", head.join("\n"), sections.join("\n"));
    crate::snapshot!(e.path(), "report_as_a_browser_shows_it", shown);
    for project in ["identity", "network", "cluster", "secrets", "app"] {
        assert!(
            dom.contains(&format!("id=\"project-{project}\"")),
            "{project} has a row"
        );
        assert!(
            dom.contains(&format!("data-name=\"{project}\"")),
            "{project} is in a picture"
        );
    }
    // And a screenshot a person can look at (kept in the target directory, wherever
    // CARGO_TARGET_DIR puts it).
    let shot = crate::support::target_dir().join("report-screenshot.png");
    let out = headless(&chromium, profile.path())
        .arg("--window-size=1400,2200")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", report.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "a real picture");
}

#[test]
fn runner_report_writes_the_last_runs_report_and_status_draws_its_timeline() {
    let e = failing_run();
    e.runner(&["up", "--yes"]).expect(1);
    let run = e.runner(&["report"]).expect(0);
    crate::snapshot!(e.path(), "report_of_the_last_run", run.stderr);
    let html = std::fs::read_to_string(e.path().join(".runner/last-run.html")).unwrap();
    assert!(html.contains("id=\"failure-logstore\""));
    // The plan is weighed as the run knew it: what each project took (the stand-in's projects
    // take well under a second), not the provider file's `estimate = 3`.
    // What did not run keeps the estimate the run had for it.
    for (project, shown) in [
        ("identity (identity, wave 1, est. 1s): succeeded", true),
        ("logstore (services, wave 4, est. 1s): failed", true),
        ("app (apps, wave 6, est. 3s): skipped", true),
        ("identity (identity, wave 1, est. 3s)", false),
    ] {
        assert_eq!(html.contains(&format!("<title>{project}")), shown, "{project}");
    }

    let gantt = e.runner(&["status", "--format", "gantt"]).expect(0).stdout;
    assert!(
        gantt.starts_with("gantt\n    title up · provider local · stack dev · "),
        "{gantt}"
    );
    assert!(
        gantt.lines().nth(1).unwrap().contains(" of 11 projects ran in "),
        "{gantt}"
    );
    assert!(gantt.contains("    logstore (failed) :crit, "), "{gantt}");
    // The chain that set the run's length is marked: it starts in the first wave.
    let first_wave = ["identity", "network", "registry"];
    assert!(
        gantt.lines().any(|l| first_wave
            .iter()
            .any(|p| l.starts_with(&format!("    {p} :crit, done, ")))),
        "{gantt}"
    );
    assert!(!gantt.contains("logagent"), "what did not run has no bar: {gantt}");

    let svg = e.runner(&["status", "--format", "gantt-svg"]).expect(0).stdout;
    well_formed(&svg);
    assert!(svg.contains("data-name=\"logstore\" data-status=\"failed\""));

    // Another stack's last run is not shown as this one's (a stack configured, never run).
    std::fs::remove_file(e.path().join("config/pulumi/environment")).unwrap();
    std::fs::copy(
        e.path().join("config/pulumi/Pulumi.dev.yaml"),
        e.path().join("config/pulumi/Pulumi.qa.yaml"),
    )
    .unwrap();
    let other = e
        .command(&["status", "-s", "qa", "-p", "local", "--format", "gantt"])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(2));
    let said = String::from_utf8_lossy(&other.stderr);
    crate::snapshot!(e.path(), "gantt_of_another_stack", said);
}

#[test]
fn show_plan_draws_the_plan_as_svg_without_graphviz() {
    let e = E2e::new(Engine::Standin).expect("the stand-in");
    let svg = e.runner(&["show-plan", "--format", "svg"]).expect(0).stdout;
    well_formed(&svg);
    for project in ["identity", "network", "registry", "cluster", "kubeconfig", "app"] {
        assert!(svg.contains(&format!("data-name=\"{project}\"")), "{project}");
    }
    assert!(svg.contains("critical path"), "the legend");
    assert!(svg.contains("stroke=\"#c0392b\""), "the critical path in red");
    assert!(svg.contains("stroke-dasharray"), "app's ordering-only needs dashed");
}

#[test]
fn github_gets_the_runs_timeline_as_a_mermaid_chart() {
    let e = E2e::new(Engine::Standin).expect("the stand-in");
    let summary = e.path().join("step-summary.md");
    let out = e
        .command(&["up", "--yes", "-p", "local", "-s", "dev"])
        .env("GITHUB_ACTIONS", "true")
        .env("CI", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&summary).unwrap();
    let chart = text.split("```mermaid\n").nth(1).expect("a mermaid block");
    assert!(chart.starts_with("gantt\n"), "{text}");
    assert_eq!(
        chart.matches(":crit, done,").count() + chart.matches(" :done,").count(),
        11,
        "{chart}"
    );
}

/// xmllint reads it as XML.
fn well_formed(svg: &str) {
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"), "{svg}");
    if tool("xmllint").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.svg");
    std::fs::write(&file, svg).unwrap();
    let out = Command::new("xmllint").arg("--noout").arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
