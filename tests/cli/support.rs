//! A small harness: a throw-away copy of a workspace, the runner run in it, what it printed.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant, SystemTime};

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The runner binary under test. Launch it through [`runner`] (or [`Ws::command`]), never with a
/// bare `Command::new`: only they take the developer's environment away.
pub const RUNNER: &str = env!("CARGO_BIN_EXE_runner");

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

impl From<std::process::Output> for Run {
    fn from(out: std::process::Output) -> Self {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }
}

/// Runs `c` to its end: what it printed and its exit code.
pub fn run(c: &mut Command) -> Run {
    c.output().unwrap().into()
}

/// Which `pulumi` a launch runs beside: the stand-in of `tests/standin` or the real CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Standin,
    Real,
}

/// What a launch keeps of the environment the tests run in (a developer's shell, a CI job):
/// where programs are (`PATH`), the locale, the temporary directory, who the user is, and a
/// backtrace when the test asks for one. Nothing else reaches the runner or `pulumi`: no
/// backend, stack, passphrase, configuration, credentials, CI, colours or kubeconfig a test did
/// not give (an allow-list, as jj's tests keep theirs: a new variable the runner reads cannot
/// leak in from the machine).
const KEPT: [&str; 7] = ["PATH", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME", "RUST_BACKTRACE"];

/// The stand-in's key derivation in fewer rounds than Pulumi's million (the runner's passphrase
/// check reads it too): given to the stand-in, never to the real CLI.
pub const STANDIN_ROUNDS: (&str, &str) = ("PULUMI_STANDIN_KDF_ITERATIONS", "1000");

/// Takes the environment the tests run in away from a launch of the runner or of a `pulumi`, so
/// that a test runs the same anywhere: only [`KEPT`] is kept; the home and Pulumi's home are
/// `root`'s own (`home/`, `.pulumi-home/`), the terminal dumb, the working directory `root`. What
/// a test gives is set after this, so it wins. Every launcher calls it; the one difference
/// between them is the `engine` (the stand-in's switches go to the stand-in only):
///
/// - `Engine::Standin`: [`STANDIN_ROUNDS`], the stand-in's key derivation in fewer rounds
///   (which the runner's passphrase check reads too, to check its salts);
/// - `Engine::Real`: none of the stand-in's variables, so the real CLI and the runner's check
///   use Pulumi's own count.
pub fn scrub(c: &mut Command, root: &Path, engine: Engine) {
    c.env_clear();
    for name in KEPT {
        if let Some(value) = std::env::var_os(name) {
            c.env(name, value);
        }
    }
    c.current_dir(root)
        .env("HOME", root.join("home"))
        .env("PULUMI_HOME", root.join(".pulumi-home"))
        .env("TERM", "dumb");
    if engine == Engine::Standin {
        c.env(STANDIN_ROUNDS.0, STANDIN_ROUNDS.1);
    }
}

/// The runner with `args`, scrubbed ([`scrub`]) for a workspace at `root`, beside the stand-in's
/// settings but without the stand-in on `PATH` (for what runs no `pulumi`: help, plans, exports
/// of a workspace elsewhere). A run in a [`Ws`] goes through [`Ws::command`].
pub fn runner(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(RUNNER);
    scrub(&mut c, root, Engine::Standin);
    c.args(args);
    c
}

/// Gives `to` the environment `from` runs with, and its working directory. `from` is a launch
/// [`scrub`] made: its environment is all it sets.
pub fn copy_env(from: &Command, to: &mut Command) {
    to.env_clear();
    for (k, v) in from.get_envs() {
        match v {
            Some(v) => to.env(k, v),
            None => to.env_remove(k),
        };
    }
    if let Some(dir) = from.get_current_dir() {
        to.current_dir(dir);
    }
}

/// `c` at a pseudo-terminal: run by `script` (util-linux), which keeps what the terminal showed
/// in `typescript` and exits as `c` did; the same program, arguments, environment and directory.
pub fn at_terminal(c: &Command, typescript: &Path) -> Command {
    let quote = |w: &std::ffi::OsStr| format!("'{}'", w.to_str().unwrap().replace('\'', r"'\''"));
    let line: Vec<String> = std::iter::once(c.get_program())
        .chain(c.get_args())
        .map(quote)
        .collect();
    let mut script = Command::new("script");
    copy_env(c, &mut script);
    script.args(["-q", "-e", "-c", &line.join(" ")]).arg(typescript);
    script
}

/// `c` at a pseudo-terminal of `columns` columns and 50 rows ([`at_terminal`]): what it
/// printed and its exit code, and what the terminal showed.
pub fn at_terminal_of(columns: u16, c: &Command, typescript: &Path) -> (Run, String) {
    let mut sized = Command::new("sh");
    copy_env(c, &mut sized);
    sized
        .arg("-c")
        .arg(format!("stty cols {columns} rows 50 && exec \"$0\" \"$@\""))
        .arg(c.get_program())
        .args(c.get_args());
    let run = run(&mut at_terminal(&sized, typescript));
    let shown = std::fs::read_to_string(typescript).unwrap();
    (run, shown)
}

/// The entry named `name` among the `projects` of a plan, a run's summary or a status
/// (`show-plan`, `.runner/last-run.json`, `status` in JSON).
#[track_caller]
pub fn project<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["projects"]
        .as_array()
        .unwrap_or_else(|| panic!("no projects in {doc}"))
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {doc}"))
}

/// The projects whose `pulumi OP` ran, in the order they started, from the stand-in's log of
/// the workspace: each by the `name:` of the `Pulumi.yaml` it ran in.
pub fn ran(ws: &Ws, op: &str) -> Vec<String> {
    let name = |dir: &Path| -> String {
        let text = std::fs::read_to_string(dir.join("Pulumi.yaml")).unwrap();
        let doc: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        doc["name"].as_str().unwrap().to_string()
    };
    ws.invocations()
        .iter()
        .filter(|i| i.command() == op)
        .map(|i| name(&i.cwd))
        .collect()
}

/// The names of the `projects` of a plan, a run's summary or a status, in their order.
pub fn names(doc: &serde_json::Value) -> Vec<&str> {
    let projects = doc["projects"]
        .as_array()
        .unwrap_or_else(|| panic!("no projects in {doc}"));
    projects.iter().map(|p| p["name"].as_str().unwrap()).collect()
}

/// What each project of a plan (`show-plan --format json`) waits for: its needs and what it
/// runs after.
pub fn waits(plan: &serde_json::Value) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut waits = std::collections::BTreeMap::new();
    for p in plan["projects"].as_array().unwrap() {
        let names = p["waits_for"].as_array().unwrap().iter().map(|w| w.as_str().unwrap());
        waits.insert(
            p["name"].as_str().unwrap().to_string(),
            names.map(String::from).collect(),
        );
    }
    waits
}

/// `doc` is valid against the JSON schema `schemas/NAME` (a plan, a run's summary, a status),
/// or the test fails with each error and where it is.
#[track_caller]
pub fn assert_valid(doc: &serde_json::Value, schema: &str) {
    let text = std::fs::read_to_string(Path::new(REPO).join("schemas").join(schema)).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{doc}");
}

/// The words of a command line, split at spaces, as a launch takes them (`ws.exec(&words("up
/// -p aws -s dev"), &[])`): the tests' arguments hold no space.
pub fn words(line: &str) -> Vec<&str> {
    line.split(' ').collect()
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

    /// The reference workspace with a complete stack configuration for `provider` and stack
    /// `dev` (copied from the example file's values), as a user who answered every question.
    pub fn configured(provider: &str) -> Self {
        let ws = Self::reference();
        let cluster = ws.path().join("cluster/kubeconfig.yaml");
        ws.write("cluster/kubeconfig.yaml", CLUSTER_KUBECONFIG);
        let config = stack_config(provider).replace("CLUSTER_KUBECONFIG", cluster.to_str().unwrap());
        ws.write("config/pulumi/Pulumi.dev.yaml", &config);
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

    /// `runner ARGS` in the workspace, as [`Ws::exec`] with no variables of its own.
    pub fn run(&self, args: &[&str]) -> Run {
        self.exec(args, &[])
    }

    /// Waits until every file of the workspace has settled as the runner's program cache counts
    /// it: changed (modification and change time) more than 2 s before now. From then on a plan
    /// or a run caches the programs it reads (a file changed since is read every time).
    #[track_caller]
    pub fn settle(&self) {
        use std::os::unix::fs::MetadataExt as _;
        // `SETTLE` of src/programs/cache.rs.
        const SETTLE: Duration = Duration::from_secs(2);
        let nanos = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
        wait_until(Duration::from_secs(30), "the workspace's files never settled", || {
            let horizon = nanos(SystemTime::now() - SETTLE);
            files_under(self.path()).iter().all(|f| {
                // (What cannot be read, a link to nowhere, is no program.)
                std::fs::metadata(f).map_or(true, |m| {
                    let ns = |s: i64, n: i64| u128::try_from(s).unwrap() * 1_000_000_000 + u128::try_from(n).unwrap();
                    ns(m.mtime(), m.mtime_nsec()) < horizon && ns(m.ctime(), m.ctime_nsec()) < horizon
                })
            })
        });
    }

    /// An executable `scripts/<name>` holding `script`, run after eks's `up` of the aws
    /// provider (after the kubeconfig merge).
    #[track_caller]
    pub fn eks_hook(&self, name: &str, script: &str) -> &Self {
        let rel = format!("scripts/{name}");
        self.write(&rel, script);
        std::fs::set_permissions(
            self.path().join(&rel),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        self.edit(
            "providers/aws.toml",
            r#"on_success = ["kubeconfig-merge"]"#,
            &format!(r#"on_success = ["kubeconfig-merge", "{rel}"]"#),
        )
    }
}

/// An existing cluster's kubeconfig, for the kubeconfig provider.
pub const CLUSTER_KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: k3s\n  cluster:\n    server: https://k3s.example.invalid:6443\nusers:\n- name: k3s-admin\n  user:\n    token: placeholder-token-dev\ncontexts:\n- name: k3s\n  context:\n    cluster: k3s\n    user: k3s-admin\ncurrent-context: k3s\n";

/// Every file of this repository's `providers/`, providers and the layers they include: its
/// name (the file's stem, as the runner names it) and its content, sorted by name.
pub fn provider_files() -> &'static [(String, toml::Table)] {
    static FILES: std::sync::OnceLock<Vec<(String, toml::Table)>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let dir = Path::new(REPO).join("providers");
        let mut files: Vec<(String, toml::Table)> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| {
                let name = p.file_stem().unwrap().to_str().unwrap().to_string();
                let text = std::fs::read_to_string(&p).unwrap();
                let table = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                (name, table)
            })
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files
    })
}

/// The providers of this repository's workspace: the files of `providers/` that are not layers
/// (a layer says `kind = "layer"`, as `src/provider` tells them apart), sorted. A test that
/// covers every provider loops over these: a new provider file is covered without editing a
/// list, or the test fails saying what it lacks for the new one.
pub fn providers() -> Vec<&'static str> {
    provider_files()
        .iter()
        .filter(|(_, file)| file.get("kind").and_then(toml::Value::as_str) != Some("layer"))
        .map(|(name, _)| name.as_str())
        .collect()
}

/// A complete stack configuration of each provider (stack `dev`), as a user who answered
/// every question: the example file's values, and one for each question without a default.
/// The kubeconfig provider's file is `CLUSTER_KUBECONFIG`, replaced by the caller.
const STACK_CONFIGS: [(&str, &str); 4] = [
    (
        "aws",
        "  kubernetes:infra_type: AWS\n  aws:region: us-east-1\n  vpc:azs: [us-east-1a, us-east-1b]\n  \
         eks:k8s_version: '1.31'\n  eks:instance_type: t3.large\n  eks:min_size: 3\n  eks:max_size: 12\n  \
         eks:desired_capacity: 3\n",
    ),
    (
        "do",
        "  kubernetes:infra_type: DO\n  kic-helm:fqdn: mara.example.com\n  docean:k8s_version: 1.31.1-do.5\n  \
         docean:region: sfo3\n  docean:instance_size: s-4vcpu-8gb\n  docean:node_count: 3\n",
    ),
    (
        "linode",
        "  kubernetes:infra_type: LKE\n  kic-helm:fqdn: mara.example.com\n  linode:soa_email: a@example.com\n  \
         linode:k8s_version: '1.31'\n  linode:region: us-central\n  linode:instance_type: g6-standard-8\n  \
         linode:node_count: 3\n  linode:k8s_ha: true\n",
    ),
    (
        "kubeconfig",
        "  kubernetes:infra_type: kubeconfig\n  kubernetes:kubeconfig: CLUSTER_KUBECONFIG\n  \
         kubernetes:context_name: k3s\n  kubernetes:cluster_name: k3s\n",
    ),
];

/// A complete stack configuration for `provider` (see [`STACK_CONFIGS`]).
#[track_caller]
pub fn stack_config(provider: &str) -> String {
    let (_, body) = STACK_CONFIGS.iter().find(|(p, _)| *p == provider).unwrap_or_else(|| {
        panic!(
            "the tests have no stack configuration for the provider `{provider}` (providers/{provider}.toml): \
             add a complete one to STACK_CONFIGS in tests/cli/support.rs, with its \
             `kubernetes:infra_type` and an answer to each of its questions"
        )
    });
    format!("config:\n{body}")
}

/// Every provider of `providers/` has a stack configuration for the tests, marked with its own
/// `infra_type`, and no configuration is left for a provider that is gone.
#[test]
fn every_provider_has_a_stack_configuration_of_its_infra_type() {
    for provider in providers() {
        let file = &provider_files().iter().find(|(n, _)| n == provider).unwrap().1;
        let infra_type = file["infra_type"].as_str().unwrap();
        let config: serde_json::Value = serde_saphyr::from_str(&stack_config(provider)).unwrap();
        assert_eq!(config["config"]["kubernetes:infra_type"], infra_type, "{provider}");
    }
    let configured: Vec<&str> = STACK_CONFIGS.iter().map(|(p, _)| *p).collect();
    for p in configured {
        assert!(
            providers().contains(&p),
            "STACK_CONFIGS names `{p}`, which providers/ does not have"
        );
    }
}

/// Secrets every test run finds in its environment, as a CI job gives them.
pub const SECRETS: &[(&str, &str)] = &[
    ("MARA_SECRET_PROMETHEUS_ADMINPASS", "prom-admin-S3cret"),
    ("MARA_SECRET_SIRIUS_ACCOUNTS_PWD", "accounts-S3cret"),
    ("MARA_SECRET_SIRIUS_LEDGER_PWD", "ledger-S3cret"),
    ("MARA_SECRET_SIRIUS_DEMO_LOGIN_USER", "testuser"),
    ("MARA_SECRET_SIRIUS_DEMO_LOGIN_PWD", "demo-S3cret"),
    ("MARA_SECRET_LINODE_HARBOR_PASSWORD", "harbor-S3cret"),
    ("MARA_SECRET_LINODE_HARBOR_DB_PASSWORD", "harbor-db-S3cret"),
    ("MARA_SECRET_LINODE_HARBOR_SUDO_USER_PASSWORD", "harbor-sudo-S3cret"),
];

/// A directory of stand-ins for the CLIs the checks look for: `aws sts get-caller-identity`
/// succeeds without credentials, and `kubectl` is present (the runner only checks for it; tests
/// that read kubeconfigs run the real one themselves).
pub fn fake_clis() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("runner-fake-clis-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, body) in [
            ("aws", "#!/bin/sh\necho '{\"Account\": \"123456789012\"}'\n"),
            ("kubectl", "#!/bin/sh\nexit 0\n"),
            // `docker buildx version` for the graphs that build an image.
            ("docker", "#!/bin/sh\necho 'github.com/docker/buildx v0.19.3'\n"),
        ] {
            let p = dir.join(name);
            std::fs::write(&p, body).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        dir
    })
}

/// One `pulumi` the stand-in ran, as its log (`PULUMI_STANDIN_LOG`) records it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Invocation {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// The variables it saw that the stand-in records (sensitive ones as `<set>`).
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Seconds since the epoch.
    pub start: f64,
    pub end: f64,
    pub exit: i32,
}

impl std::fmt::Display for Invocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pulumi {} (in {}, exit {})",
            self.argv.join(" "),
            self.cwd.display(),
            self.exit
        )
    }
}

impl Invocation {
    /// Its first word: `up`, `stack`, `config`.
    pub fn command(&self) -> &str {
        self.argv.first().map_or("", String::as_str)
    }

    /// Whether `arg` is one of its arguments.
    pub fn has(&self, arg: &str) -> bool {
        self.argv.iter().any(|a| a == arg)
    }
}

/// The invocations a stand-in log holds (none when there is no log).
pub fn read_invocations(log: &Path) -> Vec<Invocation> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", log.display())))
        .collect()
}

/// Snapshot settings that keep what a person reads the same from run to run, the parts that
/// vary filtered: the workspace's temporary path as `[workspace]`, times (`2026-01-01
/// 12:00:00`, RFC 3339's `2026-01-01T12:00:00.000Z`) as `[time]`, a drift check's time of day
/// (`no drift 12:30`) as `[hh:mm]`, durations as `[duration]`
/// (with the padding before them: their column is right-aligned, a duration's width varies),
/// the runner's version as `[version]`. Snapshots live in `tests/cli/snapshots/`.
pub fn redactions(workspace: &Path) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(&workspace.display().to_string()), "[workspace]");
    settings.add_filter(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z| UTC)?", "[time]");
    // The time of day of a drift check, as the status table's narrow column shows it.
    settings.add_filter(r"(no drift|drifted|not deployed) \d{2}:\d{2}\b", "$1 [hh:mm]");
    settings.add_filter(r" +\d+m \d+s\b", " [duration]");
    settings.add_filter(r" +\d+(\.\d+)?(ms|s)\b", " [duration]");
    settings.add_filter(r"(?m)^\d+(\.\d+)?(ms|s)$", "[duration]");
    settings.add_filter(
        &regex_escape(&format!("runner {}", env!("CARGO_PKG_VERSION"))),
        "runner [version]",
    );
    settings
}

/// A run's closing table (its standard error from `Summary:` on), and the snapshot settings
/// that keep it stable ([`redactions`]).
#[track_caller]
pub fn closing_table(stderr: &str, workspace: &Path) -> (String, insta::Settings) {
    let at = stderr
        .find("\nSummary:")
        .unwrap_or_else(|| panic!("no closing table:\n{stderr}"));
    (stderr[at + 1..].to_string(), redactions(workspace))
}

/// `insta::assert_snapshot!(NAME, TEXT)` with the [`redactions`] of the workspace at `WORKSPACE`
/// (a `&Path`): what a person reads, checked whole, the parts that vary from run to run
/// filtered. The snapshot is named after the calling test's module, as `insta` names it.
#[macro_export]
macro_rules! snapshot {
    ($workspace:expr, $name:expr, $text:expr $(,)?) => {
        $crate::support::redactions($workspace).bind(|| insta::assert_snapshot!($name, $text))
    };
}

/// The paragraph of `text` (blank-line separated, without its trailing blanks) that holds
/// `needle`: one message a person reads, cut out of what a run printed, to be checked whole.
#[track_caller]
pub fn paragraph(text: &str, needle: &str) -> String {
    text.split("\n\n")
        .find(|p| p.contains(needle))
        .unwrap_or_else(|| panic!("no paragraph holds {needle:?}:\n{text}"))
        .trim_end()
        .to_string()
}

/// One message of what a run printed: the line that begins with `start` (after any
/// indentation) and the indented lines under it (its fix, its help), without the lines of
/// other projects around it.
#[track_caller]
pub fn message(text: &str, start: &str) -> String {
    let mut lines = text.lines().skip_while(|l| !l.trim_start().starts_with(start));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no line begins with {start:?}:\n{text}"));
    std::iter::once(first)
        .chain(lines.take_while(|l| l.starts_with("  ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A run's summary in Markdown (a CI job's step summary) up to its timeline: the Mermaid chart
/// whose bars are where each project ran, different every run.
pub fn before_timeline(markdown: &str) -> &str {
    markdown
        .find("```mermaid")
        .map_or(markdown, |at| &markdown[..at])
        .trim_end()
}

/// What a command printed from the line that begins with `start` (after any indentation) to
/// its end, without what it said before (a prediction, the secrets it stored on a first run).
#[track_caller]
pub fn from_line(text: &str, start: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(start))
        .collect();
    assert!(!lines.is_empty(), "no line begins with {start:?}:\n{text}");
    lines.join("\n")
}

/// The error a refused command printed: its standard error from the first `error: ` line on.
#[track_caller]
pub fn error_message(stderr: &str) -> String {
    from_line(stderr, "error: ")
}

/// The lines of `text` that hold `needle`, one per line: what a run said of one thing among
/// what it printed of others (its lines interleave with theirs).
#[track_caller]
pub fn lines_with(text: &str, needle: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(needle)).collect();
    assert!(!lines.is_empty(), "no line holds {needle:?}:\n{text}");
    lines.join("\n")
}

/// The `Failed:` block of a run's standard error: the paragraphs (blank-line separated) that
/// begin with `Failed:`, one per failure, up to the advice that follows them.
#[track_caller]
pub fn failed_block(stderr: &str) -> String {
    let at = stderr
        .find("\nFailed: ")
        .unwrap_or_else(|| panic!("no Failed: block:\n{stderr}"));
    let paragraphs: Vec<&str> = stderr[at + 1..]
        .split("\n\n")
        .take_while(|p| p.starts_with("Failed: "))
        .collect();
    paragraphs.join("\n\n").trim_end().to_string()
}

/// The text a browser shows of an HTML page, a line per text node: no markup, styles or
/// scripts, each picture (`<svg>`) as `[picture]`, entities decoded, blank lines left out.
pub fn visible_text(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        text.push('\n');
        rest = &rest[open..];
        // Elements whose content is not text a person reads.
        let hidden = ["style", "script", "svg"].into_iter().find(|t| {
            rest[1..].starts_with(t) && rest[1 + t.len()..].starts_with(|c: char| c == '>' || c.is_whitespace())
        });
        let end = match hidden {
            Some(tag) => {
                if tag == "svg" {
                    text.push_str("[picture]\n");
                }
                let close = format!("</{tag}>");
                rest.find(&close).map_or(rest.len(), |at| at + close.len())
            }
            None => rest.find('>').map_or(rest.len(), |at| at + 1),
        };
        rest = &rest[end..];
    }
    text.push_str(rest);
    let decoded = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    decoded
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` matched literally by a filter's regular expression.
fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special.then_some('\\').into_iter().chain(std::iter::once(c))
        })
        .collect()
}

/// Every file under `dir`, at any depth (none when it does not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// `examples/local`'s providers, projects, configuration and scripts into `to`.
pub fn copy_example_local(to: &Path) {
    for d in ["providers", "projects", "config", "scripts"] {
        copy_dir(&Path::new(REPO).join("examples/local").join(d), &to.join(d));
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
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

/// How often [`eventually`] looks again.
const POLL: Duration = Duration::from_millis(10);

/// `probe` until it returns something, every 10 ms, for at most `within`.
pub fn poll<T>(within: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// The one way a test waits for something to happen: `probe` until it returns `Some`, which is
/// returned; the test fails with `what` (what did not happen) when `within` passes first.
#[track_caller]
pub fn eventually<T>(within: Duration, what: impl Display, probe: impl FnMut() -> Option<T>) -> T {
    poll(within, probe).unwrap_or_else(|| panic!("{what} (waited {within:?})"))
}

/// [`eventually`] for a condition: waits until `condition` holds.
#[track_caller]
pub fn wait_until(within: Duration, what: impl Display, mut condition: impl FnMut() -> bool) {
    eventually(within, what, || condition().then_some(()));
}

/// A message made only when it is shown: what a wait found when it gave up.
pub struct Later<F: Fn() -> String>(pub F);

impl<F: Fn() -> String> Display for Later<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&(self.0)())
    }
}

/// How `child` ended, within `within`; when it does not end, it is killed and the test fails
/// with `what`.
#[track_caller]
pub fn ended(child: &mut Child, within: Duration, what: impl Display) -> ExitStatus {
    poll(within, || child.try_wait().unwrap()).unwrap_or_else(|| {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{what} (waited {within:?})")
    })
}

/// Waits until `path` exists (the process under test got as far as writing it).
#[track_caller]
pub fn wait_for_file(path: &Path) {
    wait_until(
        Duration::from_secs(60),
        format!("{} never appeared", path.display()),
        || path.exists(),
    );
}

/// Sends `sig` (`INT`, `KILL`, …) to the process `pid`, which must be there to take it.
#[track_caller]
pub fn signal(pid: u32, sig: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{sig} {pid}");
}

/// Whether process `pid` runs: it exists and is no zombie.
pub fn runs(pid: impl Display) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// Whether process `pid` waits for what is typed at its terminal: one of its threads is blocked
/// in `read(2)` of a file descriptor that is a terminal (Linux's `/proc/PID/task/TID/syscall`:
/// the call's number, then its arguments). A question's answer typed before that may be lost:
/// a hidden question turns echo off with `TCSAFLUSH`, which drops what was typed ahead.
pub fn reads_its_terminal(pid: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    const READ: &str = "0";
    #[cfg(target_arch = "aarch64")]
    const READ: &str = "63";
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        let call = std::fs::read_to_string(task.path().join("syscall")).unwrap_or_default();
        let mut words = call.split_whitespace();
        let (Some(number), Some(fd)) = (words.next(), words.next()) else {
            return false;
        };
        let fd = fd.strip_prefix("0x").and_then(|h| u64::from_str_radix(h, 16).ok());
        number == READ
            && fd.is_some_and(|fd| {
                std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
                    .is_ok_and(|t| t.starts_with("/dev/pts/") || t == Path::new("/dev/tty"))
            })
    })
}

/// Whether a test tool must be present (CI installs them through scripts/install-test-tools).
pub fn tool_required() -> bool {
    test_tools::required()
}

pub fn have(tool: &str) -> bool {
    Command::new(tool).arg("-V").output().is_ok()
}

/// The one way a test needs a tool of `scripts/install-*-tools` (a name of
/// `test_tools::NAMES`): where it is, or `None` when it is missing, said as `skipped: …` with
/// what installs it; under `RUNNER_REQUIRE_TOOLS=1`, as in CI, where a skip would prove
/// nothing, the test fails instead. The test also carries `#[requires("name")]`, so that a
/// build without the tool lists it as ignored, with the same reason, not as passed.
#[track_caller]
pub fn tool(name: &str) -> Option<PathBuf> {
    match test_tools::find(name) {
        Ok(path) => Some(path),
        Err(why) if tool_required() => panic!("{why}"),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// The schema the SDKs export (`<cache>/schema.json`), when `scripts/install-test-tools` has
/// built it for the pins of `scripts/provider-versions`: the stand-in refuses what the engine
/// refuses from it. `None` when it is missing or stale (nothing said: a test that needs it asks
/// [`tool`]`("sdk-schema")`).
pub fn sdk_schema() -> Option<PathBuf> {
    test_tools::find("sdk-schema").ok()
}

/// The directory cargo builds this profile into (`target/debug`, under `CARGO_TARGET_DIR` when
/// set): the test binary's own, one level up from `deps/`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// A directory holding the stand-in as `pulumi`, built on first use when `cargo test` did not
/// build it already (it is another package of the workspace).
pub fn standin_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let bin = target_dir().join("pulumi");
        assert!(
            !bin.is_file() || !older_than_its_sources(&bin),
            "{} is older than the stand-in's sources: run `cargo test --workspace` (or `cargo build -p pulumi-standin`) so the tests do not drive an old stand-in",
            bin.display()
        );
        if !bin.is_file() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "-p", "pulumi-standin", "--bin", "pulumi"])
                .current_dir(REPO)
                .status()
                .unwrap();
            assert!(status.success(), "cannot build the pulumi stand-in");
        }
        let dir = std::env::temp_dir().join(format!("runner-standin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("pulumi");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&bin, &link).unwrap();
        dir
    })
}

/// Whether a file under `tests/standin/` changed after `bin` was built (a `cargo test --test cli`
/// does not rebuild the stand-in, another package).
fn older_than_its_sources(bin: &Path) -> bool {
    fn newest(dir: &Path) -> Option<std::time::SystemTime> {
        std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                if meta.is_dir() {
                    newest(&e.path())
                } else {
                    meta.modified().ok()
                }
            })
            .max()
    }
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let built = modified(bin);
    // The files the binary was built from, as cargo lists them beside it (`pulumi.d`): a change
    // to a test relinks nothing, so it must not count.
    // Without that list, everything under the crate's `src/`.
    let sources = match std::fs::read_to_string(bin.with_extension("d")) {
        Ok(deps) => deps
            .split_once(": ")
            .map(|(_, files)| files.replace("\\ ", "\u{0}"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|f| modified(Path::new(&f.replace('\u{0}', " "))))
            .max()
            .into_iter()
            .chain(modified(&Path::new(REPO).join("tests/standin/Cargo.toml")))
            .max(),
        Err(_) => newest(&Path::new(REPO).join("tests/standin/src"))
            .into_iter()
            .chain(modified(&Path::new(REPO).join("tests/standin/Cargo.toml")))
            .max(),
    };
    matches!((built, sources), (Some(b), Some(s)) if s > b)
}

impl Ws {
    /// The runner with the stand-in first on PATH (fake cloud CLIs last), scrubbed ([`scrub`]),
    /// a passphrase, the secrets in `MARA_SECRET_*` variables, the invocation log, and then
    /// `env` (which wins).
    pub fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let path = format!(
            "{}:{}:{}",
            standin_dir().display(),
            fake_clis().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = runner(self.path(), args);
        c.env("PATH", path)
            .env("PULUMI_CONFIG_PASSPHRASE", "test passphrase")
            .env("PULUMI_STANDIN_LOG", self.path().join("invocations.jsonl"));
        c.envs(SECRETS.iter().copied());
        // The stand-in refuses what the engine refuses, from the SDKs' types (when installed).
        if let Some(schema) = sdk_schema() {
            c.env("PULUMI_STANDIN_SCHEMA", schema);
        }
        c.envs(env.iter().copied());
        c
    }

    /// `runner ARGS` started in the workspace, as [`Ws::command`], and left to run (to be
    /// interrupted, killed, or watched while it goes): what it prints is thrown away.
    pub fn start(&self, args: &[&str], env: &[(&str, &str)]) -> Child {
        self.spawn(args, env, std::process::Stdio::null())
    }

    /// [`Ws::start`], its standard error kept for the test (`wait_with_output` reads it).
    pub fn start_keeping_stderr(&self, args: &[&str], env: &[(&str, &str)]) -> Child {
        self.spawn(args, env, std::process::Stdio::piped())
    }

    fn spawn(&self, args: &[&str], env: &[(&str, &str)], stderr: std::process::Stdio) -> Child {
        let mut c = self.command(args, env);
        c.stdout(std::process::Stdio::null()).stderr(stderr);
        c.spawn().unwrap()
    }

    /// `runner up -p PROVIDER -s dev EXTRA…` through [`Ws::exec`]: the run most tests start.
    pub fn up(&self, provider: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let mut args = vec!["up", "-p", provider, "-s", "dev"];
        args.extend_from_slice(extra);
        self.exec(&args, env)
    }

    pub fn exec(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        run(&mut self.command(args, env))
    }

    /// Every stand-in invocation so far, in the order they ended.
    pub fn invocations(&self) -> Vec<Invocation> {
        read_invocations(&self.path().join("invocations.jsonl"))
    }

    pub fn clear_invocations(&self) {
        let _ = std::fs::remove_file(self.path().join("invocations.jsonl"));
    }
}

/// Waits for the lock a `pulumi up` takes on a stack (in the stack's lock directory `locks`)
/// and returns its content, which names that process (the temporary file the lock is written
/// through, renamed at once, is skipped, and so is the lock a stack's creation holds for a
/// moment).
#[track_caller]
pub fn up_lock(locks: &Path) -> serde_json::Value {
    let held_by_up = |v: &serde_json::Value| {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", v["pid"])).unwrap_or_default();
        cmdline.split(|&b| b == 0).any(|arg| arg == b"up")
    };
    eventually(
        Duration::from_secs(60),
        format!("the stack lock in {} was never taken", locks.display()),
        || {
            std::fs::read_dir(locks).ok().and_then(|d| {
                d.flatten()
                    .map(|e| e.path())
                    // The file backend keeps each blob's attributes beside it (`.attrs`).
                    .filter(|p| {
                        p.extension().is_some_and(|x| x == "json")
                            && !p.file_name().unwrap().to_string_lossy().starts_with('.')
                    })
                    .filter_map(|p| serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(p).ok()?).ok())
                    .find(held_by_up)
            })
        },
    )
}

/// The directory `scripts/install-pulumi` builds the real `pulumi` and its YAML language host
/// into, when both are there at the pins of `scripts/real-pulumi/versions` ([`tool`]
/// `("real-pulumi")`).
pub fn real_pulumi_dir() -> Option<PathBuf> {
    tool("real-pulumi")
}

/// Chromium, headless, with what keeps it off the network and out of the user's profile.
pub fn headless(chromium: &Path, profile: &Path) -> Command {
    let mut c = Command::new(chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Runs `c` (a tool, a script) to its end, which must be a success: else the test fails with
/// the command and what it printed. What it printed, for the test to read.
#[track_caller]
pub fn succeeds(c: &mut Command) -> std::process::Output {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    let printed = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        out.status.success(),
        "{c:?}: {}{}",
        printed(&out.stdout),
        printed(&out.stderr)
    );
    out
}

/// `git ARGS` in `dir`, as a test's author (commits need a name); it must succeed.
pub fn git(dir: &Path, args: &[&str]) {
    let author = ["-c", "user.name=runner tests", "-c", "user.email=tests@example.invalid"];
    succeeds(Command::new("git").args(author).args(args).current_dir(dir));
}
