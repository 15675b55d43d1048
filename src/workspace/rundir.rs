//! `.runner/`: what the runner keeps between runs, and the one place its paths are spelt.
//!
//! ```text
//! .runner/lock                        one runner at a time per workspace
//! .runner/last-run.json               the JSON summary of the last run
//! .runner/<stack>/last-ran.json       the same, of the stack's last run that ran something
//! .runner/last-run.html               its HTML report (`runner report`)
//! .runner/digest-key                  the key of the input and output digests
//! .runner/cache/programs.json         what each program reads and declares, by file (planning)
//! .runner/<stack>/state.json          the run state (resume)
//! .runner/<stack>/journal.jsonl       the run state's changes since state.json was written
//! .runner/<stack>/durations.json      what past runs took, per project and operation
//! .runner/<stack>/logs/<project>.<operation>.log   each project's last output per operation
//! .runner/<stack>/tmp/                scratch: event logs, hook inputs (removed after use)
//! .runner/<stack>/kubeconfig/<project>.json   what kubeconfig-merge added (for pruning)
//! .runner/<stack>/inferred-provider  the provider last taken from the stack file (said once)
//! ```

use std::path::{Path, PathBuf};

/// The directory, relative to the workspace root.
const RUNNER_DIR: &str = ".runner";

/// The runner's own files for one workspace and stack.
#[derive(Debug, Clone)]
pub(crate) struct RunDir {
    /// `<workspace>/.runner`
    base: PathBuf,
    stack: String,
}

impl RunDir {
    pub(crate) fn new(root: &Path, stack: &str) -> Self {
        RunDir {
            base: root.join(RUNNER_DIR),
            stack: stack.to_string(),
        }
    }

    /// `.runner/` readable by its owner alone (see [`create_private`]), and this stack's
    /// directory in it.
    pub(crate) fn create(&self) -> std::io::Result<()> {
        create_private(&self.base, &self.stack_dir())
    }

    /// `.runner/` alone, readable by its owner alone.
    pub(crate) fn create_base(&self) -> std::io::Result<()> {
        create_private(&self.base, &self.base)
    }

    pub(crate) fn stack(&self) -> &str {
        &self.stack
    }

    /// `.runner/` itself.
    pub(crate) fn base(&self) -> &Path {
        &self.base
    }

    /// `.runner/<stack>/`
    pub(crate) fn stack_dir(&self) -> PathBuf {
        self.base.join(&self.stack)
    }

    pub(crate) fn lock(&self) -> PathBuf {
        self.base.join("lock")
    }

    pub(crate) fn last_run(&self) -> PathBuf {
        self.base.join("last-run.json")
    }

    /// The record of the stack's last run that ran something (`report` draws it when the last
    /// run found everything unchanged).
    pub(crate) fn last_ran(&self) -> PathBuf {
        self.stack_dir().join("last-ran.json")
    }

    /// The provider a command without `-p` last took from the stack file: its note is said
    /// again only when it changes.
    pub(crate) fn inferred_provider(&self) -> PathBuf {
        self.stack_dir().join("inferred-provider")
    }

    /// Where `runner report` writes the last run's HTML report unless told.
    pub(crate) fn last_report(&self) -> PathBuf {
        self.base.join("last-run.html")
    }

    pub(crate) fn digest_key(&self) -> PathBuf {
        self.base.join("digest-key")
    }

    pub(crate) fn state(&self) -> PathBuf {
        self.stack_dir().join("state.json")
    }

    /// The run state's journal: one line per change, folded into `state.json`.
    pub(crate) fn journal(&self) -> PathBuf {
        self.stack_dir().join("journal.jsonl")
    }

    pub(crate) fn logs(&self) -> PathBuf {
        self.stack_dir().join("logs")
    }

    /// The log of a project's last `operation` (`up`, `destroy`, …): one per operation, so a
    /// destroy keeps the up's.
    pub(crate) fn log(&self, project: &str, operation: &str) -> PathBuf {
        self.logs().join(format!("{project}.{operation}.log"))
    }

    /// How long the past successful runs of each project took, per operation.
    pub(crate) fn durations(&self) -> PathBuf {
        self.stack_dir().join("durations.json")
    }

    pub(crate) fn scratch(&self) -> PathBuf {
        self.stack_dir().join("tmp")
    }

    /// What `kubeconfig-merge` added to the user's kubeconfig for a project.
    pub(crate) fn merge_record(&self, project: &str) -> PathBuf {
        self.stack_dir().join("kubeconfig").join(format!("{project}.json"))
    }

    /// The kubeconfig `kubeconfig-merge` writes in a CI job with no `KUBECONFIG`: the job's
    /// home (a shell executor's, a self-hosted runner's) is someone's, and outlives the job.
    pub(crate) fn ci_kubeconfig(&self) -> PathBuf {
        self.stack_dir().join("kubeconfig").join("config")
    }
}

/// The runner's files that belong to the whole workspace, whatever the stack: `show-plan` has
/// no stack and still keeps what it learnt here.
#[derive(Debug, Clone)]
pub(crate) struct SharedDir {
    /// `<workspace>/.runner`
    base: PathBuf,
}

impl SharedDir {
    pub(crate) fn new(root: &Path) -> Self {
        SharedDir {
            base: root.join(RUNNER_DIR),
        }
    }

    /// `.runner/` readable by its owner alone (see [`create_private`]), and its `cache/`.
    pub(crate) fn create_cache(&self) -> std::io::Result<()> {
        create_private(&self.base, &self.base.join("cache"))
    }

    /// What each project's program reads and declares, keyed by its file's identity.
    pub(crate) fn program_cache(&self) -> PathBuf {
        self.base.join("cache").join("programs.json")
    }
}

/// Creates `base` (`.runner/`) readable by its owner alone — logs and scratch files may hold
/// what others should not read, so one made by an older version is narrowed too — and `sub`
/// in it, private as well.
fn create_private(base: &Path, sub: &Path) -> std::io::Result<()> {
    let mut dir = std::fs::DirBuilder::new();
    dir.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
    dir.create(base)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o700))?;
    }
    dir.create(sub)
}
