//! The repository's helper scripts, as a person (or a test, or two clones) runs them.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::REPO;

/// Two `scripts/install-lint-tools` into one empty cache at once (a person's and a test's): the
/// second waits for the first (said), then finds its work done; both answer with the tools'
/// directory. Before the lock, the second saw a half-made venv and failed ("do not answer with
/// the pinned versions").
#[test]
fn two_installs_into_one_cache_take_turns() {
    let cache = tempfile::tempdir().unwrap();
    let start = || {
        Command::new(Path::new(REPO).join("scripts/install-lint-tools"))
            .env("RUNNER_LINT_TOOLS", cache.path().join("lint"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = (start(), start());
    let outs = [first.wait_with_output().unwrap(), second.wait_with_output().unwrap()];
    for out in &outs {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            cache.path().join("lint/bin").to_str().unwrap()
        );
    }
    let said: String = outs
        .iter()
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .collect();
    assert!(said.contains("another install into"), "{said}");
}
