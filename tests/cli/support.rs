//! A small harness: a throw-away copy of a workspace, the runner run in it, what it printed.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

pub struct Ws {
    pub dir: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Panics with both streams unless the exit code is `code`.
    #[track_caller]
    pub fn expect(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "expected exit {code}, got {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(self, needle: &str) -> Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}:\n{}",
            self.stderr
        );
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

impl Ws {
    /// A copy of this repository's workspace: its providers and projects.
    pub fn reference() -> Self {
        let ws = Ws {
            dir: tempfile::tempdir().unwrap(),
        };
        for d in ["providers", "projects", "scripts"] {
            copy_dir(&Path::new(REPO).join(d), &ws.path().join(d));
        }
        ws
    }

    /// An empty workspace (a `providers/` directory and nothing else).
    pub fn empty() -> Self {
        let ws = Ws {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(ws.path().join("providers")).unwrap();
        ws
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self
    }

    /// A project directory with a minimal Pulumi.yaml.
    pub fn project(&self, rel: &str, name: &str) -> &Self {
        self.write(&format!("{rel}/Pulumi.yaml"), &format!("name: {name}\nruntime: yaml\n"))
    }

    /// Replaces `from` (which must occur) by `to` in a file.
    #[track_caller]
    pub fn edit(&self, rel: &str, from: &str, to: &str) -> &Self {
        let p = self.path().join(rel);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(from), "{rel} does not contain {from:?}");
        std::fs::write(p, text.replacen(from, to, 1)).unwrap();
        self
    }

    pub fn run(&self, args: &[&str]) -> Run {
        run_in(self.path(), args)
    }
}

/// Runs the runner binary in `cwd` with a clean, colourless environment.
pub fn run_in(cwd: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(args)
        .current_dir(cwd)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("TERM", "dumb")
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    if !from.is_dir() {
        return;
    }
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target: PathBuf = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Whether a test tool must be present (CI installs them through scripts/install-test-tools).
pub fn tool_required() -> bool {
    std::env::var_os("RUNNER_REQUIRE_TOOLS").is_some_and(|v| v == "1")
}

pub fn have(tool: &str) -> bool {
    Command::new(tool).arg("-V").output().is_ok()
}
