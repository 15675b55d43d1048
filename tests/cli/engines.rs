//! One scenario table, two engines: the runner binary driven through the end-to-end workspace
//! (`examples/local`: 11 Pulumi YAML projects over the five layers, resources the engine has
//! built in) once with the Pulumi stand-in and once with the real `pulumi` built from Go modules
//! by `scripts/install-pulumi`. Each scenario runs on both with the same assertions; where the
//! two differed, the real CLI was right, and what was fixed is listed in
//! tests/standin/README.md ("Checked against the real CLI").
//!
//! Without the real CLI built, its half skips (and fails under `RUNNER_REQUIRE_TOOLS=1`, as in
//! CI).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::{self, Cluster};
pub use crate::support::Engine;
use crate::support::{REPO, RUNNER, Run, ended, files_under, real_pulumi_dir, runs, scrub, standin_dir, wait_until};

/// The secrets every scenario gives in `MARA_SECRET_*`, as a CI job would.
pub const ADMIN_PASSWORD: &str = "adm-S3cret-e2e";
pub const DB_PASSWORD: &str = "db-S3cret-e2e";

/// A throw-away copy of an end-to-end workspace and the engine that runs it.
pub struct E2e {
    dir: tempfile::TempDir,
    bin: PathBuf,
    engine: Engine,
    /// The provider every run names (`-p`).
    provider: &'static str,
    /// The secrets the runs find in `MARA_SECRET_*` (variable, value).
    secrets: Vec<(&'static str, &'static str)>,
    /// The local cluster the real Kubernetes provider applies the programs to.
    cluster: Option<&'static Cluster>,
    /// Everything the runner printed so far (both streams), to check no secret ever was.
    printed: std::cell::RefCell<String>,
}

/// The secrets of the cluster graph (`-p kubeconfig`), as a CI job gives them.
pub const KUBE_SECRETS: &[(&str, &str)] = &[
    ("MARA_SECRET_PROMETHEUS_ADMINPASS", "prom-admin-S3cret-e2e"),
    ("MARA_SECRET_SIRIUS_ACCOUNTS_PWD", "accounts-S3cret-e2e"),
    ("MARA_SECRET_SIRIUS_LEDGER_PWD", "ledger-S3cret-e2e"),
    ("MARA_SECRET_SIRIUS_DEMO_LOGIN_USER", "demo-user-e2e"),
    ("MARA_SECRET_SIRIUS_DEMO_LOGIN_PWD", "demo-S3cret-e2e"),
];

impl E2e {
    /// `examples/local` (provider `local`, stack `dev`). `None` (the test skips) when the
    /// engine is the real CLI and it is not built; under `RUNNER_REQUIRE_TOOLS=1` that fails
    /// instead.
    pub fn new(engine: Engine) -> Option<Self> {
        let e = Self::copy(engine, &Path::new(REPO).join("examples/local"), "local")?;
        Some(E2e {
            secrets: vec![
                ("MARA_SECRET_MONITORING_ADMIN_PASSWORD", ADMIN_PASSWORD),
                ("MARA_SECRET_APP_DB_PASSWORD", DB_PASSWORD),
            ],
            ..e
        })
    }

    /// This repository's workspace with `-p kubeconfig` (stack `dev`): on the real CLI against
    /// the local cluster, with the real Kubernetes provider and the cluster's stand-in charts
    /// (`None` without the real CLI or the cluster's tools); on the stand-in against a
    /// kubeconfig no server answers (the stand-in fakes what a cluster returns).
    pub fn kube(engine: Engine) -> Option<Self> {
        let cluster = match engine {
            Engine::Real => Some(cluster::cluster()?),
            Engine::Standin => None,
        };
        let e = Self::copy(engine, Path::new(REPO), "kubeconfig")?;
        let config = if let Some(c) = cluster {
            c.mirrored()?;
            c.pulumi_home(&e.path().join(".pulumi-home"));
            c.stack_config.clone()
        } else {
            let file = e.path().join("home/cluster.yaml");
            std::fs::write(&file, crate::support::CLUSTER_KUBECONFIG).unwrap();
            format!(
                "config:\n  kubernetes:infra_type: kubeconfig\n  kubernetes:kubeconfig: {}\n  \
                 kubernetes:context_name: k3s\n  kubernetes:cluster_name: runner-local\n  \
                 kubernetes:chart_mirror: http://127.0.0.1:9/charts\n",
                file.display()
            )
        };
        std::fs::write(e.path().join("config/pulumi/Pulumi.dev.yaml"), config).unwrap();
        Some(E2e {
            secrets: KUBE_SECRETS.to_vec(),
            cluster,
            ..e
        })
    }

    /// A workspace of two projects on the real engine and the local cluster: `cluster`, whose
    /// `kubeconfig` output is the cluster's own (`kubeconfig-merge` merges it into
    /// [`E2e::kubeconfig`]), and `app`, whose Kubernetes provider reads the merged file and makes
    /// a `ConfigMap` ([`E2e::hook_configmap`]). `None` without the real CLI or the cluster.
    pub fn hook() -> Option<Self> {
        let cluster = cluster::cluster()?;
        let bin = real_pulumi_dir()?;
        let dir = tempfile::tempdir().unwrap();
        let e = E2e {
            dir,
            bin,
            engine: Engine::Real,
            provider: "hook",
            secrets: Vec::new(),
            cluster: Some(cluster),
            printed: std::cell::RefCell::default(),
        };
        std::fs::create_dir_all(e.path().join("home")).unwrap();
        cluster.pulumi_home(&e.path().join(".pulumi-home"));
        let files = [
            (
                "providers/hook.toml",
                "name = \"hook\"\ndescription = \"A cluster reached through the merged kubeconfig\"\n\
                 required_tools = [\"pulumi\", \"kubectl\"]\n\n\
                 [[project]]\nname = \"cluster\"\npath = \"projects/cluster\"\nlayer = \"cluster\"\n\
                 on_success = [\"kubeconfig-merge\"]\n\n\
                 [[project]]\nname = \"app\"\npath = \"projects/app\"\nlayer = \"apps\"\nneeds = [\"cluster\"]\n"
                    .to_string(),
            ),
            (
                "projects/cluster/Pulumi.yaml",
                format!(
                    "name: cluster\nruntime: yaml\noutputs:\n  cluster_name: runner-local\n  kubeconfig:\n    \
                     fn::secret:\n      fn::readFile: {}\n",
                    cluster.kubeconfig.display()
                ),
            ),
            (
                "projects/app/Pulumi.yaml",
                format!(
                    "name: app\nruntime: yaml\nresources:\n  cluster:\n    type: pulumi:pulumi:StackReference\n    \
                     properties:\n      name: ${{pulumi.organization}}/cluster/${{pulumi.stack}}\n  k8s:\n    \
                     type: pulumi:providers:kubernetes\n    properties:\n      # The file the hook merged into.\n      \
                     kubeconfig:\n        fn::readFile: {}\n      context: ${{cluster.outputs[\"cluster_name\"]}}\n    \
                     options:\n      version: 4.34.2\n  map:\n    type: kubernetes:core/v1:ConfigMap\n    \
                     properties:\n      metadata:\n        name: {}\n        namespace: default\n      data:\n        \
                     merged_by: kubeconfig-merge\n    options:\n      version: 4.34.2\n      provider: ${{k8s}}\n",
                    e.kubeconfig().display(),
                    e.hook_configmap()
                ),
            ),
            (
                "config/pulumi/Pulumi.dev.yaml",
                "config:\n  kubernetes:infra_type: hook\n".to_string(),
            ),
        ];
        for (rel, text) in files {
            let path = e.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Some(e)
    }

    /// The `ConfigMap` the hook workspace's `app` makes (named after the workspace: tests share
    /// the cluster).
    pub fn hook_configmap(&self) -> String {
        let dir = self.path().file_name().unwrap().to_string_lossy().to_lowercase();
        let name: String = dir.chars().filter(char::is_ascii_alphanumeric).collect();
        format!("hook-{name}")
    }

    fn copy(engine: Engine, workspace: &Path, provider: &'static str) -> Option<Self> {
        let bin = match engine {
            Engine::Standin => standin_dir().to_path_buf(),
            Engine::Real => real_pulumi_dir()?,
        };
        let dir = tempfile::tempdir().unwrap();
        for d in ["providers", "projects", "scripts"] {
            copy_committed(&workspace.join(d), &dir.path().join(d));
        }
        let example_config = "config/pulumi/Pulumi.stackname.yaml.example";
        std::fs::create_dir_all(dir.path().join("config/pulumi")).unwrap();
        std::fs::copy(workspace.join(example_config), dir.path().join(example_config)).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Some(E2e {
            dir,
            bin,
            engine,
            provider,
            secrets: Vec::new(),
            cluster: None,
            printed: std::cell::RefCell::default(),
        })
    }

    /// The local cluster the runs apply to (the real engine's).
    pub fn cluster(&self) -> Option<&'static Cluster> {
        self.cluster
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The directory holding the engine's `pulumi`.
    pub fn engine_dir(&self) -> &Path {
        &self.bin
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.path().join("home/kubeconfig")
    }

    /// The environment of a `pulumi` (or of the runner, which passes it on): scrubbed for the
    /// engine ([`scrub`]: the stand-in's switches for the stand-in only), the engine first on
    /// PATH, the workspace's kubeconfig, the passphrase, nothing fetched from the network.
    fn engine_env(&self, c: &mut Command) {
        scrub(c, self.path(), self.engine);
        // The cluster's kubectl (of its release) after the engine.
        let kubectl = self.cluster.map(|k| format!("{}:", k.tools.join("bin").display()));
        let path = format!(
            "{}:{}{}",
            self.bin.display(),
            kubectl.unwrap_or_default(),
            std::env::var("PATH").unwrap_or_default()
        );
        c.env("PATH", path)
            .env("KUBECONFIG", self.kubeconfig())
            .env("PULUMI_CONFIG_PASSPHRASE", "e2e passphrase")
            .env("PULUMI_SKIP_UPDATE_CHECK", "true")
            .env("PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION", "true");
        // The real Kubernetes provider is the one registered in PULUMI_HOME, never a binary
        // that happens to be on PATH.
        if self.cluster.is_some() {
            c.env("PULUMI_IGNORE_AMBIENT_PLUGINS", "true");
        }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(RUNNER);
        self.engine_env(&mut c);
        c.args(args).envs(self.secrets.iter().copied());
        c
    }

    /// The runner with `args` (`-p PROVIDER -s dev` before them).
    #[track_caller]
    pub fn runner(&self, args: &[&str]) -> Run {
        let mut all = vec!["-p", self.provider, "-s", "dev"];
        all.extend(args);
        let out = self.command(&all).output().unwrap();
        self.record(out)
    }

    /// Keeps what a process printed (to check no secret ever was), as a [`Run`].
    pub fn record(&self, out: std::process::Output) -> Run {
        let run = Run::from(out);
        let mut printed = self.printed.borrow_mut();
        printed.push_str(&run.stdout);
        printed.push_str(&run.stderr);
        run
    }

    /// The engine's own `pulumi` in a project's directory, against the workspace's backend: a
    /// change made by hand, outside the runner.
    pub fn pulumi_by_hand(&self, project_dir: &str, args: &[&str]) -> Run {
        let mut c = Command::new(self.bin.join("pulumi"));
        self.engine_env(&mut c);
        let backend = format!("file://{}", self.path().join(".pulumi-state").display());
        c.current_dir(self.path().join(project_dir))
            .env("PULUMI_BACKEND_URL", backend)
            .args(args);
        crate::support::run(&mut c)
    }

    pub fn summary(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path().join(".runner/last-run.json")).unwrap()).unwrap()
    }

    /// Each project's status in the last run's summary.
    pub fn statuses(&self) -> BTreeMap<String, String> {
        self.summary()["projects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (name(p), p["status"].as_str().unwrap().to_string()))
            .collect()
    }

    /// A project's entry in the last run's summary.
    pub fn project(&self, project: &str) -> Value {
        self.summary()["projects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == project)
            .unwrap_or_else(|| panic!("{project} is not in the summary"))
            .clone()
    }

    /// (started, ended) of each project that ran in the last run (RFC 3339 UTC with
    /// milliseconds: they sort as text).
    pub fn spans(&self) -> BTreeMap<String, (String, String)> {
        self.summary()["projects"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| {
                Some((
                    name(p),
                    (p["started"].as_str()?.to_string(), p["ended"].as_str()?.to_string()),
                ))
            })
            .collect()
    }

    /// What each project waits for (needs and ordering-only), from the plan.
    pub fn waits(&self) -> BTreeMap<String, Vec<String>> {
        crate::support::waits(&self.runner(&["show-plan", "--format", "json"]).expect(0).json())
    }

    /// Replaces `from` (which must occur) by `to` in a workspace file.
    #[track_caller]
    pub fn edit(&self, rel: &str, from: &str, to: &str) {
        let p = self.path().join(rel);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(from), "{rel} does not contain {from:?}");
        std::fs::write(p, text.replacen(from, to, 1)).unwrap();
    }

    /// One output of a deployed project, as `runner output` prints it (a secret one only with
    /// `--show-secrets`).
    #[track_caller]
    pub fn output(&self, project: &str, output: &str, show_secrets: bool) -> String {
        let mut args = vec!["output", project, output, "-s", "dev"];
        if show_secrets {
            args.push("--show-secrets");
        }
        let out = self.command(&args).output().unwrap();
        // A secret asked for is printed by design: only what was not asked for is recorded.
        let run = if show_secrets {
            Run {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8(out.stdout).unwrap(),
                stderr: String::from_utf8(out.stderr).unwrap(),
            }
        } else {
            self.record(out)
        };
        run.expect(0).stdout.trim_end().to_string()
    }

    /// `runner output PROJECT NAME` of a secret output without `--show-secrets`: refused.
    #[track_caller]
    pub fn secret_output_refused(&self, project: &str, output: &str) {
        let run = self.record(
            self.command(&["output", project, output, "-s", "dev"])
                .output()
                .unwrap(),
        );
        let run = run.expect(1);
        assert!(run.stderr.contains("is a secret"), "{}", run.stderr);
    }

    /// Asserts that no secret given to the run (nor one the engine made) was ever printed or
    /// written in plain text anywhere in the workspace.
    #[track_caller]
    pub fn assert_no_plain_secret(&self, made: &[String]) {
        let printed = self.printed.borrow();
        for secret in self
            .secrets
            .iter()
            .map(|(_, v)| *v)
            .chain(made.iter().map(String::as_str))
        {
            assert!(!printed.contains(secret), "{secret} was printed:\n{printed}");
            for file in files_under(self.path()) {
                // The user's kubeconfig holds the cluster's token: that is what it is for.
                if file == self.kubeconfig() {
                    continue;
                }
                let bytes = std::fs::read(&file).unwrap_or_default();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(secret),
                    "{} holds {secret} in plain text",
                    file.display()
                );
            }
        }
    }

    /// Makes `project`'s program read `./gate`, a FIFO nobody writes to: its `pulumi up` holds
    /// the stack's lock and waits there, in the real language host as in the stand-in.
    pub fn hang(&self, project_dir: &str) -> Gate {
        self.edit(
            &format!("{project_dir}/Pulumi.yaml"),
            "        cluster: ${kubeconfig.outputs[\"cluster_name\"]}\n",
            "        cluster: ${kubeconfig.outputs[\"cluster_name\"]}\n        gate:\n          fn::readFile: ./gate\n",
        );
        let fifo = self.path().join(project_dir).join("gate");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        Gate { fifo }
    }

    /// The content of the lock `pulumi up` holds on `project`'s stack, once it is taken (the
    /// process must still run: its command line tells an `up`).
    pub fn wait_for_lock(&self, project: &str) -> Value {
        let dir = self
            .path()
            .join(".pulumi-state/.pulumi/locks/organization")
            .join(project)
            .join("dev");
        crate::support::up_lock(&dir)
    }

    /// The files of the stack's lock directory of `project` (none once every lock is gone).
    pub fn lock_files(&self, project: &str) -> Vec<PathBuf> {
        files_under(
            &self
                .path()
                .join(".pulumi-state/.pulumi/locks/organization")
                .join(project),
        )
    }

    /// The resources the backend holds for `project`'s stack.
    pub fn resources(&self, project: &str) -> Vec<Value> {
        let file = self
            .path()
            .join(format!(".pulumi-state/.pulumi/stacks/{project}/dev.json"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let v: Value = serde_json::from_str(&text).unwrap();
        v.pointer("/checkpoint/latest/resources")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }
}

/// A FIFO a program reads: opened for writing (and closed) on drop, so no reader stays blocked.
pub struct Gate {
    fifo: PathBuf,
}

impl Gate {
    /// Replaces the FIFO by a file, so the program reads it at once from now on. The path
    /// never goes missing: the file is written beside and renamed over the FIFO (removing the
    /// FIFO first left a moment when a `pulumi` reaching its read found nothing, `fn::readFile
    /// ./gate: No such file or directory`, and the update failed: the cause of
    /// `a_killed_runner_leaves_its_pulumi_to_finish`'s rare failure under load). A handle that
    /// both reads and writes the FIFO (Linux opens one without waiting) is held across the
    /// rename, so a reader that opens the FIFO just before it does not wait for a writer that
    /// never comes: it reads the end of the FIFO when the handle is dropped.
    pub fn open(&self) {
        let held = std::fs::OpenOptions::new().read(true).write(true).open(&self.fifo);
        let beside = self.fifo.with_extension("open");
        std::fs::write(&beside, "open\n").unwrap();
        std::fs::rename(&beside, &self.fifo).unwrap();
        drop(held);
    }

    fn release(&self) {
        use std::os::unix::fs::OpenOptionsExt as _;
        // O_NONBLOCK: fails at once when nobody reads, instead of waiting for a reader.
        const O_NONBLOCK: i32 = 0o4000;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(O_NONBLOCK)
            .open(&self.fifo);
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.release();
    }
}

fn name(p: &Value) -> String {
    p["name"].as_str().unwrap().to_string()
}

/// Copies what git holds of the example (not what a run of it left: state, stack files).
fn copy_committed(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_committed(&entry.path(), &target);
        } else if !(name.starts_with("Pulumi.") && name != "Pulumi.yaml") && name != "gate" {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill").args([sig, &pid.to_string()]).status().unwrap();
    assert!(ok.success(), "kill {sig} {pid}");
}

/// Every project's start came after the end of each project it waits for.
#[track_caller]
pub fn assert_order(spans: &BTreeMap<String, (String, String)>, waits: &BTreeMap<String, Vec<String>>, reverse: bool) {
    for (project, upstream) in waits {
        for u in upstream {
            let (first, then) = if reverse { (project, u) } else { (u, project) };
            let (Some(a), Some(b)) = (spans.get(first), spans.get(then)) else {
                continue;
            };
            assert!(b.0 >= a.1, "{then} started at {} before {first} ended at {}", b.0, a.1);
        }
    }
}

/// The sha256 of `text`, in hex, first 16 digits (what the example's smoke-test hook prints).
fn fingerprint(text: &str) -> String {
    use sha2::Digest as _;
    let d = sha2::Sha256::digest(text.as_bytes());
    let hex = d.iter().fold(String::new(), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    });
    hex[..16].to_string()
}

macro_rules! on_both_engines {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use test_requires::requires;

            #[test]
            fn standin() {
                if let Some(e2e) = super::E2e::new(super::Engine::Standin) {
                    super::$scenario(&e2e);
                }
            }
            #[requires("real-pulumi")]
            #[test]
            fn real() {
                if let Some(e2e) = super::E2e::new(super::Engine::Real) {
                    super::$scenario(&e2e);
                }
            }
        }
    )*};
}

/// The runner killed (`SIGKILL`) while a `pulumi up` runs (an OOM kill, a CI's hard cancel of the
/// runner alone): that `pulumi` is not taken down with it (its output goes to a file, not the
/// dead runner's pipe, so no SIGPIPE mid-update): it finishes, releasing its stack, and the next
/// `up` just runs.
fn a_killed_runner_leaves_its_pulumi_to_finish(e: &E2e) {
    let gate = e.hang("projects/services/logstore");
    let mut runner = e
        .command(&["up", "--yes", "-p", "local", "-s", "dev"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = e.wait_for_lock("logstore");
    runner.kill().unwrap(); // SIGKILL, the runner alone
    runner.wait().unwrap();
    // The program goes on, and `pulumi` writes its output after the runner is gone.
    gate.open();
    let pid = lock["pid"].as_u64().unwrap();
    wait_until(Duration::from_secs(120), format!("pulumi {pid} never ended"), || {
        !runs(pid)
    });
    assert!(e.lock_files("logstore").is_empty(), "{:?}", e.lock_files("logstore"));
    // It finished its update: the stack holds what the program declares. (When not, its own
    // output says why: after the runner died it went on into the files the runner had given it,
    // left under the run's directory, not into the project's log.)
    assert!(
        !e.resources("logstore").is_empty(),
        "the stack holds no resources; what the run left of logstore:\n{}",
        files_under(&e.path().join(".runner/dev"))
            .into_iter()
            .filter(|f| f.to_string_lossy().contains("logstore"))
            .map(|f| [
                "--- ",
                &f.display().to_string(),
                "\n",
                &std::fs::read_to_string(&f).unwrap_or_default()
            ]
            .concat())
            .collect::<String>()
    );
    e.runner(&["up", "--yes"]).expect(0);
    let statuses = e.statuses();
    assert!(
        statuses.values().all(|s| s == "succeeded" || s == "unchanged"),
        "{statuses:?}"
    );
}

/// What a user writes reaches the next `up`, on the engine the attack found otherwise: a
/// program's own key counts whatever its `name:` line looks like (a comment), a dotfile it
/// reads is an input, and a `runner pulumi P -- destroy` is recorded, so `up` deploys it again.
fn what_a_user_writes_is_not_missed(e: &E2e) {
    e.runner(&["up", "--yes"]).expect(0);
    let runs = |project: &str| {
        let status = e.runner(&["status", "--format", "json"]).expect(0).json();
        crate::support::project(&status, project)["up"]["runs"]
            .as_bool()
            .unwrap()
    };
    e.edit(
        "projects/services/logstore/Pulumi.yaml",
        "name: logstore",
        "name: logstore # the log store",
    );
    e.runner(&["up", "--yes"]).expect(0);
    assert!(!runs("logstore"));
    e.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "logstore:retention: 7d",
        "logstore:retention: 21d",
    );
    assert!(runs("logstore"), "its own key changed");
    e.runner(&["up", "--yes"]).expect(0);
    assert_eq!(e.output("logstore", "retention", false), "21d");

    std::fs::write(e.path().join("projects/infra/registry/.settings"), "retain-30\n").unwrap();
    e.runner(&["up", "--yes"]).expect(0);
    std::fs::write(e.path().join("projects/infra/registry/.settings"), "retain-90\n").unwrap();
    assert!(runs("registry"), "a dotfile changed");
    e.runner(&["up", "--yes"]).expect(0);

    // A file the program reads from outside its folder: an input too.
    std::fs::write(e.path().join("shared.txt"), "one\n").unwrap();
    e.edit(
        "projects/infra/registry/Pulumi.yaml",
        "outputs:\n",
        "outputs:\n  shared:\n    fn::readFile: ../../../shared.txt\n",
    );
    e.runner(&["up", "--yes"]).expect(0);
    assert!(!runs("registry"));
    std::fs::write(e.path().join("shared.txt"), "two\n").unwrap();
    assert!(runs("registry"), "a file it reads from outside its folder changed");
    e.runner(&["up", "--yes"]).expect(0);
    assert_eq!(e.output("registry", "shared", false).trim_end(), "two");

    e.runner(&["pulumi", "registry", "--", "destroy", "--yes", "--skip-preview"])
        .expect(0);
    assert!(runs("registry"), "destroyed behind the run state's back");
    e.runner(&["up", "--yes"]).expect(0);
    assert!(!e.resources("registry").is_empty(), "deployed again");
}

/// The runner killed (`SIGKILL`) at seeded random moments of an `up` (`RUNNER_KILL_TRIES`, 30 by
/// default): each time, its `pulumi`s finish on their own, leaving no stack lock and no process,
/// and the next `up` succeeds without `--remove-stale-locks`.
fn killed_at_random_moments(e: &E2e) {
    let tries: u64 = std::env::var("RUNNER_KILL_TRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    e.runner(&["up", "--yes"]).expect(0);
    // xorshift64*, seeded by the try: the same moments each run, different ones each try.
    let moment = |seed: u64| {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        Duration::from_millis(x.wrapping_mul(0x2545_F491_4F6C_DD1D) % 2500)
    };
    for i in 0..tries {
        let at = moment(i + 1);
        let mut runner = e
            .command(&["up", "--yes", "--fresh", "-p", "local", "-s", "dev"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // A fixed wait on purpose: the moment of the kill is what the test varies, not an
        // event it waits for.
        std::thread::sleep(at);
        let _ = runner.kill(); // SIGKILL (it may have ended already)
        runner.wait().unwrap();
        wait_until(
            Duration::from_secs(60),
            format!("try {i} ({at:?}): a process runs on"),
            || !working_under(e.path()),
        );
        let locks = files_under(&e.path().join(".pulumi-state/.pulumi/locks"));
        assert!(locks.is_empty(), "try {i} ({at:?}): locks left: {locks:?}");
        let next = e.runner(&["up", "--yes"]);
        assert_eq!(next.code, 0, "try {i} ({at:?}): the next up failed:\n{}", next.stderr);
    }
}

/// Whether a live process works in `dir` or below it.
fn working_under(dir: &Path) -> bool {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    std::fs::read_dir("/proc").into_iter().flatten().flatten().any(|p| {
        let zombie = std::fs::read_to_string(p.path().join("stat")).is_ok_and(|s| s.contains(") Z"));
        !zombie && std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
    })
}

/// A project stopped by its timeout with a grace too short for `pulumi` to cancel: the
/// runner kills it, and what it started in groups of their own (its language host, blocked in
/// the program) goes with it — nothing is left running.
fn a_killed_pulumi_leaves_no_process(e: &E2e) {
    let gate = e.hang("projects/services/logstore");
    let run = e
        .runner(&crate::support::words(
            "up --yes --target logstore --timeout 5s --grace 1s",
        ))
        .expect(1);
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
    let dir = e.path().join("projects/services/logstore");
    wait_until(
        Duration::from_secs(10),
        format!("a process still works in {}", dir.display()),
        || !working_in(&dir),
    );
    drop(gate);
}

/// Whether a live process works in `dir`.
fn working_in(dir: &Path) -> bool {
    std::fs::read_dir("/proc").into_iter().flatten().flatten().any(|p| {
        let zombie = std::fs::read_to_string(p.path().join("stat")).is_ok_and(|s| s.contains(") Z"));
        !zombie && std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd == dir)
    })
}

/// Text from a program's error — a property named with a workflow command, a legacy `##[…]`
/// one and a terminal title sequence — reaches the terminal and a GitHub Actions log as text:
/// no control character obeyed, no line GitHub would read as a command but the runner's own.
fn hostile_text_stays_text(e: &E2e) {
    e.edit(
        "projects/services/logstore/Pulumi.yaml",
        "      input:\n        cluster:",
        "      \"bogus\\n  ::error title=LOG::from a log line\\n  ##[error]legacy \\u001b]0;TITLE\\u0007 end \\u202eretlif\": 1\n      input:\n        cluster:",
    );
    let mut github = e.command(&["-p", "local", "-s", "dev", "up", "--yes", "--target", "logstore"]);
    github.env("CI", "true").env("GITHUB_ACTIONS", "true");
    let run = e.record(github.output().unwrap()).expect(1);
    assert!(
        run.stderr.contains("from a log line"),
        "the cause is shown:\n{}",
        run.stderr
    );
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.contains(['\u{1b}', '\u{7}']),
            "{stream} holds a control character:\n{text}"
        );
    }
    let mut stopped = None::<String>;
    for line in run.stdout.lines() {
        if let Some(t) = &stopped {
            if line == format!("::{t}::") {
                stopped = None;
            }
            continue;
        }
        if let Some(t) = line.strip_prefix("::stop-commands::") {
            stopped = Some(t.to_string());
            continue;
        }
        let ours = ["::group::", "::endgroup::", "::error title=", "::error file="]
            .iter()
            .any(|p| line.starts_with(p));
        assert!(
            ours || !(line.trim_start().starts_with("::") || line.contains("##[")),
            "a command GitHub would obey: {line}"
        );
    }
    for line in run.stderr.lines() {
        assert!(
            !line.trim_start().starts_with("::") && !line.contains("##["),
            "a command GitHub would obey on stderr: {line}"
        );
    }
    // The annotation is placed at the program's line, which GitHub marks in a pull request.
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("::error file=projects/services/logstore/Pulumi.yaml,line=")),
        "{}",
        run.stdout
    );
    // At a terminal's plain lines as well: shown, not obeyed.
    let run = e.runner(&["up", "--yes", "--target", "logstore"]).expect(1);
    assert!(run.stderr.contains("^[]0;TITLE^G"), "{}", run.stderr);
    assert!(!run.stderr.contains(['\u{1b}', '\u{7}']) && !run.stdout.contains(['\u{1b}', '\u{7}']));
    // A bidirectional override, shown as what it is rather than reversing what follows.
    assert!(run.stderr.contains("\\u{202e}retlif"), "{}", run.stderr);
    assert!(!run.stderr.contains('\u{202e}') && !run.stdout.contains('\u{202e}'));
    // The project's log, printed by `runner logs` in a GitHub job: read, not obeyed.
    let mut logs = e.command(&["-p", "local", "-s", "dev", "logs", "logstore"]);
    logs.env("CI", "true").env("GITHUB_ACTIONS", "true");
    let logs = e.record(logs.output().unwrap()).expect(0);
    assert!(logs.stdout.contains("from a log line"), "{}", logs.stdout);
    for line in logs.stdout.lines().chain(logs.stderr.lines()) {
        assert!(
            !line.trim_start().starts_with("::") && !line.contains("##["),
            "`runner logs` relays a command GitHub would obey: {line}"
        );
    }
}

on_both_engines!(
    what_a_user_writes_is_not_missed,
    killed_at_random_moments,
    a_killed_runner_leaves_its_pulumi_to_finish,
    a_killed_pulumi_leaves_no_process,
    hostile_text_stays_text,
    day_one_and_day_two,
    ctrl_c_during_up,
    a_killed_pulumi_leaves_its_lock,
    a_stale_lock_goes_with_its_attributes,
    a_forged_lock_deletes_nothing,
    sigint_to_runner_pulumi,
    sighup_to_runner_pulumi
);

/// A step of a scenario: what it shows, and the step itself.
type Step = (&'static str, fn(&E2e));

/// From nothing to a deployed platform and back, on one workspace: each step starts from
/// what the one before left.
const DAY_ONE_AND_DAY_TWO: &[Step] = &[
    ("validate writes the stack file and stores the secrets", validate),
    ("up creates every stack, in dependency order", first_up),
    (
        "outputs and secrets reach downstream projects and hooks, never printed",
        secrets_downstream,
    ),
    (
        "a repeat runs nothing; a configuration change updates in place",
        repeat_and_change,
    ),
    (
        "a change made by hand: drift, preview --expect-no-changes, refresh, up",
        change_by_hand,
    ),
    ("a program the engine refuses, then the resume", refused_then_resumed),
    ("status, logs, the engine's own history", day_two_commands),
    ("destroy: dependents first, nothing left", destroy_all),
];

fn day_one_and_day_two(e: &E2e) {
    for (what, step) in DAY_ONE_AND_DAY_TWO {
        eprintln!("step: {what}");
        step(e);
    }
}

/// The secrets the engine made: the identity's token, the app's database URL.
fn made_secrets(e: &E2e) -> Vec<String> {
    vec![
        e.output("identity", "ci_token", true),
        e.output("app", "database_url", true),
    ]
}

/// `validate` asks nothing without a terminal: the stack file from the defaults, the secrets
/// (through stdin) in the secrets store's own stack file.
fn validate(e: &E2e) {
    // validate: asks nothing (no terminal), writes the stack file from the defaults, stores the
    // secrets (through stdin) in the secrets store's own stack file.
    let run = e.runner(&["validate"]).expect(0);
    assert!(run.stderr.contains("All configuration is OK"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("storing 2 secrets, one `pulumi config set --secret` each…"),
        "progress before the wait: {}",
        run.stderr
    );
    let shared = std::fs::read_to_string(e.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    assert!(shared.contains("kubernetes:infra_type: local"), "{shared}");
    assert!(shared.contains("logstore:retention: 7d"), "{shared}");
    let store = std::fs::read_to_string(e.path().join("projects/services/secrets/Pulumi.dev.yaml")).unwrap();
    assert!(store.contains("encryptionsalt: v1:"), "the store's own salt:\n{store}");
    assert_eq!(store.matches("secure: v1:").count(), 2, "{store}");
}

/// `up`: every stack created, in dependency order, with the shared stack file.
fn first_up(e: &E2e) {
    // up: every stack created, in dependency order, with the shared stack file.
    let run = e.runner(&["up", "--yes"]).expect(0);
    let statuses = e.statuses();
    assert!(
        statuses.values().all(|s| s == "succeeded"),
        "{statuses:?}\n{}",
        run.stderr
    );
    assert_eq!(statuses.len(), 11);
    assert_order(&e.spans(), &e.waits(), false);
    let shared = std::fs::read_to_string(e.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    assert_eq!(
        shared.matches("encryptionsalt:").count(),
        1,
        "one salt, shared:\n{shared}"
    );
    for p in ["identity", "network", "cluster", "secrets", "app"] {
        assert!(!e.resources(p).is_empty(), "{p} holds no resource");
    }
    // A config value from the shared file, through two stack references.
    assert_eq!(e.output("network", "cidr", false), "10.0.0.0/16");
    assert_eq!(e.output("logstore", "retention", false), "7d");
}

/// Outputs and secrets through stack references, to a hook and the user's kubeconfig.
fn secrets_downstream(e: &E2e) {
    // Secrets downstream: the database password went store → app (two stack references), the
    // app's output is secret, shown only when asked; the hook got it (its fingerprint printed).
    e.secret_output_refused("app", "database_url");
    let database_url = e.output("app", "database_url", true);
    assert!(
        database_url.starts_with(&format!("postgres://app:{DB_PASSWORD}@db.dev-cluster")),
        "{database_url}"
    );
    assert!(
        e.printed.borrow().contains(&format!(
            "its database URL arrived (sha256 {})",
            fingerprint(&database_url)
        )),
        "the hook's line, when the first up ran it"
    );
    assert_eq!(e.output("monitoring", "admin_password", true), ADMIN_PASSWORD);
    // A secret made by the engine (the identity's token), read by the cluster, merged into the
    // user's kubeconfig; kubectl reads the result.
    let token = e.output("identity", "ci_token", true);
    assert!(token.starts_with("token-"), "{token}");
    let kubectl = |args: &[&str]| {
        let out = Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", e.kubeconfig())
            .output()
            .expect("kubectl (scripts/install-test-tools installs it)");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(kubectl(&["config", "current-context"]).trim(), "dev-cluster");
    assert_eq!(
        kubectl(&["config", "view", "--raw", "-o", "jsonpath={.users[0].user.token}"]),
        token
    );
    e.assert_no_plain_secret(&made_secrets(e));
}

/// A repeat, then a configuration change.
fn repeat_and_change(e: &E2e) {
    // A repeat changes nothing and runs nothing.
    e.runner(&["up", "--yes"]).expect(0);
    assert!(e.statuses().values().all(|s| s == "unchanged"), "{:?}", e.statuses());

    // A configuration change: logstore updates its resource in place; nothing else changes.
    e.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "logstore:retention: 7d",
        "logstore:retention: 30d",
    );
    e.runner(&["up", "--yes"]).expect(0);
    let logstore = e.project("logstore");
    assert_eq!(logstore["status"], "succeeded", "{logstore}");
    assert_eq!(logstore["changes"]["update"], 1, "{logstore}");
    for p in e.summary()["projects"].as_array().unwrap() {
        if p["name"] != "logstore" && p["name"] != "logagent" {
            let changes = p["changes"].as_object().unwrap();
            assert!(
                changes.keys().all(|k| k == "same" || k == "read"),
                "{} changed: {p}",
                p["name"]
            );
        }
    }
    assert_eq!(e.output("logstore", "retention", false), "30d");
}

/// The network deployed by hand with another range, outside the runner.
fn change_by_hand(e: &E2e) {
    // A change made by hand: the network deployed with another range, outside the runner.
    let shared = std::fs::read_to_string(e.path().join("config/pulumi/Pulumi.dev.yaml")).unwrap();
    let other = e.path().join("home/other.yaml");
    std::fs::write(&other, shared.replace("10.0.0.0/16", "10.9.0.0/16")).unwrap();
    let by_hand = e.pulumi_by_hand(
        "projects/infra/network",
        &[
            "up",
            "--yes",
            "--skip-preview",
            "--non-interactive",
            "--stack",
            "dev",
            "--config-file",
            other.to_str().unwrap(),
        ],
    );
    assert_eq!(by_hand.code, 0, "{}{}", by_hand.stdout, by_hand.stderr);
    // drift and preview --expect-no-changes find it (exit 6), naming network.
    let drift = e.runner(&["drift"]).expect(6);
    assert!(
        drift.stdout.contains("network") || drift.stderr.contains("network (~1"),
        "{}",
        drift.stderr
    );
    // What differs, resource by resource: the range deployed by hand, the one declared.
    for line in [
        "Drifted: network (deployed → declared):",
        "  ~ pulumi:index:Stash::vpc (would be updated)",
        "      input.cidr  \"10.9.0.0/16\" → \"10.0.0.0/16\"",
    ] {
        assert!(
            drift.stderr.lines().any(|l| l == line),
            "no line {line:?} in:\n{}",
            drift.stderr
        );
    }
    e.runner(&["preview", "--expect-no-changes"]).expect(6);
    // refresh takes it into the cluster's view of the network (its stack reference).
    let refresh = e.runner(&["refresh", "--yes"]).expect(0);
    assert!(refresh.stderr.contains("Changed outside Pulumi"), "{}", refresh.stderr);
    assert_eq!(e.project("cluster")["changes"]["update"], 1, "{}", e.project("cluster"));
    // The next up sets what the workspace says again: network (which drift found) and cluster.
    e.runner(&["up", "--yes"]).expect(0);
    for p in ["network", "cluster"] {
        assert_eq!(e.project(p)["status"], "succeeded", "{p} ran again: {:?}", e.statuses());
    }
    assert_eq!(e.output("network", "cidr", false), "10.0.0.0/16");
    e.runner(&["drift"]).expect(0);
}

/// A program the engine refuses, fixed, and the run resumed.
fn refused_then_resumed(e: &E2e) {
    // A program the engine refuses: its own diagnostic is the cause, the dependents skipped.
    e.edit(
        "projects/services/logstore/Pulumi.yaml",
        "        retention: ${retention}\n",
        "        retention: ${retention}\n      retention_days: 7\n",
    );
    let failed = e.runner(&["up", "--yes"]).expect(1);
    let logstore = e.project("logstore");
    assert_eq!(logstore["status"], "failed");
    let error = logstore["error"].as_str().unwrap();
    assert!(
        error.contains("Property retention_days does not exist on 'pulumi:index:Stash'"),
        "the engine's diagnostic is the cause: {error}"
    );
    assert!(!error.contains('\u{1b}'), "no terminal escapes in the cause: {error:?}");
    assert!(failed.stderr.contains("retention_days"), "{}", failed.stderr);
    assert_eq!(e.project("logagent")["status"], "skipped");
    assert_eq!(e.project("app")["status"], "skipped");
    // Fixed, the run resumes: logstore runs; what was skipped after it had been deployed
    // before and reads the same outputs as then, so it stays.
    e.edit(
        "projects/services/logstore/Pulumi.yaml",
        "      retention_days: 7\n",
        "",
    );
    e.runner(&["up", "--yes"]).expect(0);
    let statuses = e.statuses();
    for (p, s) in &statuses {
        let expected = if p == "logstore" { "succeeded" } else { "unchanged" };
        assert_eq!(s, expected, "{p}: {statuses:?}");
    }
}

/// Day two: `status`, `logs`, `runner pulumi P -- stack history`.
fn day_two_commands(e: &E2e) {
    // Day two: status, output, logs, the engine's own history.
    let status = e.runner(&["status"]).expect(0);
    assert!(status.stdout.contains("An up would run nothing"), "{}", status.stdout);
    let logs = e.runner(&["logs", "logstore"]).expect(0);
    assert!(logs.stdout.contains("Updating (dev)"), "{}", logs.stdout);
    let history = e
        .runner(&["pulumi", "network", "--", "stack", "history", "--json"])
        .expect(0);
    let history: Value =
        serde_json::from_str(&history.stdout).unwrap_or_else(|err| panic!("{err}: {}", history.stdout));
    let kinds: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"update") && kinds.contains(&"refresh"), "{kinds:?}");
}

/// `destroy`: dependents first, every stack empty after, no secret anywhere.
fn destroy_all(e: &E2e) {
    // destroy: dependents first, every stack empty after.
    let made = made_secrets(e);
    let waits = e.waits();
    e.runner(&["destroy", "--yes"]).expect(0);
    assert!(e.statuses().values().all(|s| s == "succeeded"), "{:?}", e.statuses());
    assert_order(&e.spans(), &waits, true);
    for p in waits.keys() {
        assert!(e.resources(p).is_empty(), "{p} still holds resources after destroy");
    }
    e.assert_no_plain_secret(&made);
}

/// Ctrl-C while a `pulumi up` holds its stack: the run ends 130, nothing is left locked, and the
/// next `up` finishes the job.
fn ctrl_c_during_up(e: &E2e) {
    let gate = e.hang("projects/services/logstore");
    let child = e
        .command(&["up", "--yes", "-p", "local", "-s", "dev"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    e.wait_for_lock("logstore");
    signal(child.id(), "-INT");
    let out = e.record(child.wait_with_output().unwrap());
    assert_eq!(out.code, 130, "Ctrl-C ends the run with 130:\n{}", out.stderr);
    assert!(
        e.lock_files("logstore").is_empty(),
        "{:?}\n{}\n{}",
        e.lock_files("logstore"),
        out.stdout,
        out.stderr
    );
    gate.open();
    let logstore = e.project("logstore");
    assert_ne!(logstore["status"], "succeeded", "{logstore}");
    assert_eq!(e.project("app")["status"], "not started", "{}", e.project("app"));

    e.runner(&["up", "--yes"]).expect(0);
    let statuses = e.statuses();
    for p in ["logstore", "logagent", "app"] {
        assert_eq!(statuses[p], "succeeded", "{statuses:?}");
    }
    assert!(
        statuses.values().all(|s| s == "succeeded" || s == "unchanged"),
        "{statuses:?}"
    );
}

/// A `pulumi` killed with SIGKILL while it holds its stack's lock. Seen by the runner: the project fails
/// naming the signal and the runner removes the lock its own child left, so the next `up` just
/// runs. With the runner killed too (a crash, an OOM kill): the lock stays, the next `up` names
/// it as stale, and `--remove-stale-locks` removes it and finishes.
fn a_killed_pulumi_leaves_its_lock(e: &E2e) {
    let gate = e.hang("projects/services/logstore");
    let spawn = || {
        e.command(&["up", "--yes", "-p", "local", "-s", "dev"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let pid_of = |lock: &Value| u32::try_from(lock["pid"].as_u64().unwrap()).unwrap();

    let child = spawn();
    let lock = e.wait_for_lock("logstore");
    signal(pid_of(&lock), "-KILL");
    let out = e.record(child.wait_with_output().unwrap());
    assert_eq!(out.code, 1, "{}", out.stderr);
    let error = e.project("logstore")["error"].as_str().unwrap().to_string();
    assert!(error.contains("killed by SIGKILL"), "{error}");
    assert!(out.stderr.contains("removed the lock it left"), "{}", out.stderr);
    assert!(e.lock_files("logstore").is_empty(), "{:?}", e.lock_files("logstore"));

    // The runner and its pulumi both killed: nobody removes the lock.
    let child = spawn();
    let lock = e.wait_for_lock("logstore");
    signal(child.id(), "-KILL");
    signal(pid_of(&lock), "-KILL");
    let _ = child.wait_with_output();
    gate.open();
    let refused = e.runner(&["up", "--yes"]).expect(1);
    let error = e.project("logstore")["error"].as_str().unwrap().to_string();
    assert!(error.contains("the stack is currently locked"), "{error}");
    assert!(error.contains("--remove-stale-locks"), "{error}\n{}", refused.stderr);

    let removed = e.runner(&["up", "--yes", "--remove-stale-locks"]).expect(0);
    assert!(removed.stderr.contains("removed the stale lock"), "{}", removed.stderr);
    assert!(e.lock_files("logstore").is_empty(), "{:?}", e.lock_files("logstore"));
    assert_eq!(e.statuses()["app"], "succeeded");
}

/// A stale lock of this host (a `pulumi` killed with its runner) with the attributes the file
/// backend keeps beside each file it writes (`<lock>.attrs`, gocloud's fileblob), and an
/// `.attrs` whose lock is gone. The backend's listing hides both (`pulumi` names one lock);
/// `--remove-stale-locks` removes the lock and its `.attrs`, and the next `up` runs. The orphan
/// is no lock to either engine, and nothing removes it.
fn a_stale_lock_goes_with_its_attributes(e: &E2e) {
    e.runner(&["up", "--yes", "--target", "logstore"]).expect(0);
    let dir = e.path().join(".pulumi-state/.pulumi/locks/organization/logstore/dev");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = dir.join("5d0c9a3e-7b21-4f6a-9c84-2e1b7d3f0a65.json");
    let attrs = dir.join("5d0c9a3e-7b21-4f6a-9c84-2e1b7d3f0a65.json.attrs");
    let orphan = dir.join("9e4f1b7c-03d2-4a58-b6e1-7c5a2d8f3b90.json.attrs");
    let dead = {
        let mut c = Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let held = serde_json::json!({
        "pid": dead, "username": "ann", "hostname": host.trim(), "timestamp": "2026-11-23T10:00:00Z"
    });
    std::fs::write(&lock, held.to_string()).unwrap();
    // As fileblob writes them (its `xattrs`, through Go's `json.Encoder`).
    let xattrs = "{\"user.cache_control\":\"\",\"user.content_disposition\":\"\",\"user.content_encoding\":\"\",\
                  \"user.content_language\":\"\",\"user.content_type\":\"application/octet-stream\",\
                  \"user.metadata\":null,\"md5\":\"1B2M2Y8AsgTpgAmY7PhCfg==\"}\n";
    std::fs::write(&attrs, xattrs).unwrap();
    std::fs::write(&orphan, xattrs).unwrap();

    let up = ["up", "--yes", "--fresh", "--target", "logstore"];
    e.runner(&up).expect(1);
    let error = e.project("logstore")["error"].as_str().unwrap().to_string();
    assert!(
        error.contains("the stack is currently locked by 1 lock(s)"),
        "no .attrs is a lock: {error}"
    );
    assert!(error.contains("--remove-stale-locks"), "{error}");
    assert!(lock.exists() && attrs.exists());

    let removing = [&up[..], &["--remove-stale-locks"]].concat();
    let removed = e.runner(&removing).expect(0);
    assert!(removed.stderr.contains("removed the stale lock"), "{}", removed.stderr);
    assert!(!lock.exists(), "the stale lock stays");
    assert!(!attrs.exists(), "its .attrs stays");
    e.runner(&up).expect(0);
    assert_eq!(e.statuses()["logstore"], "succeeded");
    assert_eq!(e.lock_files("logstore"), [orphan], "what is left of the locks");
}

/// A lock planted in the backend by whoever can write it (a shared directory or a bucket): its
/// `username` holds a line break and a second lock line naming a file of the user's, with this
/// host and a pid that no longer runs. `pulumi` counts one lock; the runner reads no second one,
/// advises no removal of that file, and `--remove-stale-locks` leaves it (and the real lock,
/// whose owner runs) alone.
fn a_forged_lock_deletes_nothing(e: &E2e) {
    e.runner(&["up", "--yes", "--target", "logstore"]).expect(0);
    let victim = e.path().join("home/precious.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    std::fs::write(e.path().join("home/precious.txt.attrs"), "{}").unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    let dead = {
        let mut c = Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    let dir = e.path().join(".pulumi-state/.pulumi/locks/organization/logstore/dev");
    std::fs::create_dir_all(&dir).unwrap();
    let forged = serde_json::json!({
        // Alive: the process running this test.
        "pid": std::process::id(),
        "username": format!("mallory\n  file://{}: created by x@{host} (pid {dead}) at 2026-11-23T10:00:00Z\n  x", victim.display()),
        "hostname": host,
        "timestamp": "2026-11-23T10:00:00Z"
    });
    let lock = dir.join("0b7f0c1e-2b5a-4c7e-9d3f-6a1e8b2c4d59.json");
    std::fs::write(&lock, forged.to_string()).unwrap();
    let up = ["up", "--yes", "--fresh", "--target", "logstore"];
    let refused = e.runner(&up).expect(1);
    assert!(
        !refused.stderr.contains("precious.txt); `--remove-stale-locks`"),
        "{}",
        refused.stderr
    );
    let removing = [&up[..], &["--remove-stale-locks"]].concat();
    e.runner(&removing).expect(1);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "keep me\n",
        "the forged lock deleted a file"
    );
    assert!(e.path().join("home/precious.txt.attrs").exists());
    assert!(lock.exists(), "a lock whose owner runs is not stale");
    // The same forged lock left by a pid that no longer runs (the attack's own): the lock
    // itself is stale and goes, and nothing its text names.
    let mut forged = forged;
    forged["pid"] = serde_json::json!(dead);
    std::fs::write(&lock, forged.to_string()).unwrap();
    let removed = e.runner(&removing).expect(0);
    assert!(removed.stderr.contains("removed the stale lock"), "{}", removed.stderr);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "keep me\n",
        "the forged lock deleted a file"
    );
    assert!(e.path().join("home/precious.txt.attrs").exists());
    assert!(!lock.exists(), "the stale lock stays");
    e.runner(&up).expect(0);
}

/// `runner pulumi PROJECT -- up` while a SIGINT is sent to the runner (not through a
/// terminal): `pulumi` gets it, cancels and releases its stack's lock, and the runner ends with
/// `pulumi`'s own code.
fn sigint_to_runner_pulumi(e: &E2e) {
    signal_to_runner_pulumi(e, "-INT");
}

/// The same with SIGHUP (an SSH session dropping): relayed as SIGINT, so `pulumi` cancels
/// rather than dying at once with its lock left.
fn sighup_to_runner_pulumi(e: &E2e) {
    signal_to_runner_pulumi(e, "-HUP");
}

fn signal_to_runner_pulumi(e: &E2e, sent: &str) {
    e.runner(&["up", "--yes", "--target", "logstore"]).expect(0);
    let gate = e.hang("projects/services/logstore");
    // Files, not pipes: a plugin left reading the gate would hold a pipe open.
    let out = e.path().join("passthrough.out");
    let mut child = e
        .command(&crate::support::words(
            "-p local -s dev pulumi logstore -- up --yes --skip-preview",
        ))
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(e.path().join("passthrough.err")).unwrap())
        .spawn()
        .unwrap();
    let lock = e.wait_for_lock("logstore");
    // Once the program waits at the gate: before, the signal would reach the plugins `pulumi`
    // starts and asks about (the whole group gets it, as from a terminal).
    let dir = e.path().join("projects/services/logstore");
    wait_until(Duration::from_secs(120), "the program never read the gate", || {
        waits_at_a_fifo(&dir)
    });
    signal(child.id(), sent);
    let status = ended(
        &mut child,
        Duration::from_secs(120),
        format!("the runner did not end after {sent}"),
    );
    gate.open();
    let printed =
        std::fs::read_to_string(&out).unwrap() + &std::fs::read_to_string(e.path().join("passthrough.err")).unwrap();
    e.printed.borrow_mut().push_str(&printed);
    assert!(printed.contains("received; cancelling"), "{printed}");
    // The CLI's code for an update cancelled (its `pulumi`'s, as the runner's).
    assert_eq!(status.code(), Some(1), "{printed}");
    let pid = lock["pid"].as_u64().unwrap();
    assert!(!runs(pid), "pulumi runs on");
    assert!(
        e.lock_files("logstore").is_empty(),
        "{:?}\n{printed}",
        e.lock_files("logstore")
    );
}

/// Whether a process working in `dir` waits to open a FIFO (a thread of it is in Linux's
/// `wait_for_partner`): the program at its gate.
fn waits_at_a_fifo(dir: &Path) -> bool {
    std::fs::read_dir("/proc").into_iter().flatten().flatten().any(|p| {
        std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd == dir)
            && std::fs::read_dir(p.path().join("task"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|t| std::fs::read_to_string(t.path().join("wchan")).is_ok_and(|w| w == "wait_for_partner"))
    })
}
