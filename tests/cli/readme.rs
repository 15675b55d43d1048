//! The README's CI examples are what the CIs accept: each fenced YAML block that starts with
//! `# .github/workflows/…` or `# .gitlab-ci.yml` is checked with check-jsonschema's schema of
//! that CI, and runs the runner's own commands.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{REPO, tool_required};

/// The fenced `yaml` blocks of the README whose first line names a CI file, with that name.
fn ci_blocks() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```yaml" {
            continue;
        }
        let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        if let Some(name) = body.first().and_then(|l| l.strip_prefix("# "))
            && (name.starts_with(".github/workflows/") || name == ".gitlab-ci.yml")
        {
            blocks.push((name.to_string(), body.join("\n") + "\n"));
        }
    }
    blocks
}

fn check_jsonschema() -> Option<PathBuf> {
    let dir = std::env::var_os("RUNNER_TEST_TOOLS").map_or_else(
        || PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/runner-test-tools"),
        PathBuf::from,
    );
    let tool = dir.join("venv/bin/check-jsonschema");
    if tool.exists() {
        return Some(tool);
    }
    assert!(
        !tool_required(),
        "check-jsonschema is missing: run scripts/install-test-tools"
    );
    eprintln!("skipped: check-jsonschema is not installed (scripts/install-test-tools installs it)");
    None
}

#[test]
fn the_readmes_github_workflow_and_gitlab_job_validate_and_use_the_runner() {
    let blocks = ci_blocks();
    let names: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.iter().any(|n| n.starts_with(".github/workflows/")) && names.contains(&".gitlab-ci.yml"),
        "the README shows a GitHub Actions workflow and a GitLab CI job: {names:?}"
    );
    for (name, text) in &blocks {
        // They run what the runner offers a CI: a run with a JUnit report, a drift check.
        assert!(text.contains("runner up -p ") && text.contains("--junit"), "{name}");
        assert!(text.contains("runner drift -p "), "{name}");
        assert!(
            !text.contains("RUNNER_SECRET_") && !text.contains("RUNNER_CONFIG_"),
            "{name}: the old names"
        );
    }
    let Some(check) = check_jsonschema() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in &blocks {
        let schema = if name.starts_with(".github/") {
            "vendor.github-workflows"
        } else {
            "vendor.gitlab-ci"
        };
        let file = dir.path().join(Path::new(name).file_name().unwrap());
        std::fs::write(&file, text).unwrap();
        let out = Command::new(&check)
            .args(["--builtin-schema", schema])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name} against {schema}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
