//! The CI examples of the documentation are what the CIs accept: each fenced YAML block of
//! README.md, CONTRIBUTING.md, BENCHMARKS.md or docs/ that starts with `# .github/workflows/…`
//! or `# .gitlab-ci.yml` is checked with check-jsonschema's schema of that CI, runs the runner's
//! own commands, and keeps its state in a shared backend (the job's checkout goes with the job).

use std::path::Path;
use std::process::Command;

use crate::links::markdown_files;
use crate::support::REPO;
use test_requires::requires;

/// The fenced `yaml` blocks of the documentation whose first line names a CI file: the
/// document (relative to the repository), the CI file's name, the block.
fn ci_blocks() -> Vec<(String, String, String)> {
    let mut blocks = Vec::new();
    for doc in markdown_files() {
        let text = std::fs::read_to_string(Path::new(REPO).join(&doc)).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() != "```yaml" {
                continue;
            }
            let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            if let Some(name) = body.first().and_then(|l| l.strip_prefix("# "))
                && (name.starts_with(".github/workflows/") || name == ".gitlab-ci.yml")
            {
                blocks.push((doc.clone(), name.to_string(), body.join("\n") + "\n"));
            }
        }
    }
    blocks
}

/// The value a CI file gives `PULUMI_BACKEND_URL` (in an `env:` or `variables:` map), if any.
fn backend_url(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix("PULUMI_BACKEND_URL:"))
        .map(|v| v.split(" #").next().unwrap_or_default().trim())
        .filter(|v| !v.is_empty())
}

#[requires("check-jsonschema")]
#[test]
fn the_docs_github_workflow_and_gitlab_job_validate_and_use_the_runner() {
    let blocks = ci_blocks();
    let in_ci: Vec<&str> = blocks
        .iter()
        .filter(|(doc, _, _)| doc == "docs/ci.md")
        .map(|(_, n, _)| n.as_str())
        .collect();
    assert!(
        in_ci.iter().any(|n| n.starts_with(".github/workflows/")) && in_ci.contains(&".gitlab-ci.yml"),
        "docs/ci.md shows a GitHub Actions workflow and a GitLab CI job: {in_ci:?}"
    );
    for (doc, name, text) in &blocks {
        // They run what the runner offers a CI: a run with a JUnit report, a drift check.
        assert!(
            text.contains("runner up -p ") && text.contains("--junit"),
            "{doc}: {name}"
        );
        assert!(text.contains("runner drift -p "), "{doc}: {name}");
        assert!(
            !text.contains("RUNNER_SECRET_") && !text.contains("RUNNER_CONFIG_"),
            "{doc}: {name}: the old names"
        );
        // A job's checkout goes with the job: the state must live in a shared backend.
        let backend = backend_url(text).unwrap_or_else(|| panic!("{doc}: {name} sets no PULUMI_BACKEND_URL"));
        assert!(
            !backend.starts_with("file:"),
            "{doc}: {name}: {backend} is no shared backend"
        );
    }
    let Some(check) = crate::support::tool("check-jsonschema") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (doc, name, text) in &blocks {
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
            "{doc}: {name} against {schema}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
