//! The Argo Workflows export, run by Argo Workflows: `scripts/local-cluster up --engines argo`
//! (its controller beside the cluster, a git server of the repository, an S3 server for the
//! state), the runner's image made here (`scripts/runner-image`) on the real node, and the export
//! of `examples/local` submitted as its header says. Every project's pod runs `runner up --only
//! P` with the real `pulumi`, none before what it needs succeeded; the teardown goes dependents
//! first and leaves every stack empty.
//!
//! Skips without the tools (the real node's, the engines', moto, the real `pulumi`) or without
//! root, saying so; fails instead under `RUNNER_REQUIRE_TOOLS=1` (CI). Takes the real node in
//! turn with the other tests that start one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::node::{Down, REAL_NODE, node_tools, output, processes_naming};
use crate::support::{REPO, RUNNER, copy_example_local, git, tool};
use test_requires::requires;

const STACK: &str = "ci";
const NAMESPACE: &str = "runner-ci";
const IMAGE: &str = "localhost/runner/runner:dev";

/// The engines' cache (scripts/install-engine-tools) ([`tool`]`("engines")`).
fn engine_tools() -> Option<PathBuf> {
    tool("engines")
}

/// `KEY=value` lines (a value may be in single quotes), as `local-cluster` writes engines.env.
fn env_file(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect()
}

/// Submits with `argo`, waiting; on failure the message holds the end of each task's log.
fn submitted(c: &mut Command, kubectl: &dyn Fn(&[&str]) -> Command, what: &str) -> String {
    let out = output(c);
    let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        let label = format!(
            "workflows.argoproj.io/workflow={}",
            name.rsplit('/').next().unwrap_or("")
        );
        let failed = output(&mut kubectl(&[
            "-n",
            NAMESPACE,
            "get",
            "pods",
            "-l",
            &label,
            "--field-selector=status.phase=Failed",
            "-o",
            "name",
        ]));
        let mut logs = String::new();
        for pod in String::from_utf8_lossy(&failed.stdout).lines() {
            let said = output(&mut kubectl(&[
                "-n", NAMESPACE, "logs", pod, "-c", "main", "--tail", "25",
            ]));
            let _ = writeln!(logs, "{pod}:\n{}", String::from_utf8_lossy(&said.stdout));
        }
        panic!(
            "{what}: {name} failed:\n{}\n{logs}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    name
}

fn ok(c: &mut Command, what: &str) -> String {
    let out = output(c);
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each task of the last workflow in the namespace: its project, when it started and ended
/// (seconds), how it ended.
fn tasks(kubectl: &dyn Fn(&[&str]) -> Command, name: &str) -> BTreeMap<String, (i64, i64, String)> {
    let doc: Value = serde_json::from_str(&ok(
        &mut kubectl(&["-n", NAMESPACE, "get", "workflow", name, "-o", "json"]),
        "kubectl get workflow",
    ))
    .unwrap();
    let seconds = |v: &Value| {
        v.as_str()
            .and_then(|t| humantime::parse_rfc3339(t).ok())
            .map_or(0, |t| {
                i64::try_from(t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()).unwrap()
            })
    };
    doc["status"]["nodes"]
        .as_object()
        .unwrap()
        .values()
        .filter(|n| n["type"] == "Pod" && n["templateName"] == "runner")
        .map(|n| {
            (
                n["displayName"].as_str().unwrap().to_string(),
                (
                    seconds(&n["startedAt"]),
                    seconds(&n["finishedAt"]),
                    n["phase"].as_str().unwrap_or("").to_string(),
                ),
            )
        })
        .collect()
}

/// The repository the pods clone: examples/local at its root, committed.
fn committed_workspace(repo: &Path) {
    copy_example_local(repo);
    std::fs::copy(
        Path::new(REPO).join("examples/local/.gitignore"),
        repo.join(".gitignore"),
    )
    .unwrap();
    git(repo, &["init", "-q", "-b", "main"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "the workspace"]);
}

/// The local cluster with its engines, and the tools to reach it.
struct Cluster {
    dir: PathBuf,
    kube: PathBuf,
    engines: PathBuf,
    kubeconfig: PathBuf,
    /// DIR/engines.env.
    reach: BTreeMap<String, String>,
}

impl Cluster {
    /// `local-cluster up --engines argo`, serving `repo`, with the runner's image of this build.
    fn up(dir: &Path, repo: &Path, kube: PathBuf, engines: PathBuf) -> Self {
        let scripts = Path::new(REPO).join("scripts");
        ok(
            Command::new(scripts.join("runner-image"))
                .args(["--runner", RUNNER, "--name", IMAGE])
                .env("RUNNER_ENGINE_TOOLS", &engines),
            "scripts/runner-image",
        );
        let up = output(
            Command::new(scripts.join("local-cluster"))
                .args(["up", "--engines", "argo", "--dir"])
                .arg(dir)
                .arg("--repo")
                .arg(repo)
                .arg("--owner")
                .arg(std::process::id().to_string())
                .env("RUNNER_KUBE_TOOLS", &kube)
                .env("RUNNER_ENGINE_TOOLS", &engines)
                .env_remove("RUNNER_CHARTS_DIR"),
        );
        if !up.status.success() {
            let _ = Down(dir).run();
            panic!(
                "local-cluster up --engines argo failed:\n{}",
                String::from_utf8_lossy(&up.stderr)
            );
        }
        Cluster {
            dir: dir.to_path_buf(),
            kube,
            engines,
            kubeconfig: PathBuf::from(String::from_utf8(up.stdout).unwrap().trim()),
            reach: env_file(&dir.join("engines.env")),
        }
    }

    fn kubectl(&self, args: &[&str]) -> Command {
        let mut c = Command::new(self.kube.join("bin/kubectl"));
        c.args(args).env("KUBECONFIG", &self.kubeconfig);
        c
    }

    fn argo(&self, args: &[&str]) -> Command {
        let mut c = Command::new(self.engines.join("bin/argo"));
        c.args(args).env("KUBECONFIG", &self.kubeconfig);
        c
    }

    /// Runs the header's set-up lines of an exported file, each as written (bash, with the
    /// variables it names in the environment).
    fn set_up(&self, file: &str, at: &Path, secrets: &[(&str, &str)]) {
        let path = format!(
            "{}:{}:{}",
            self.kube.join("bin").display(),
            self.engines.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        for line in file.lines().filter_map(|l| l.strip_prefix("#   kubectl ")) {
            let mut c = Command::new("bash");
            c.arg("-c")
                .arg(format!("kubectl {line}"))
                .current_dir(at)
                .env("KUBECONFIG", &self.kubeconfig)
                .env("PATH", &path)
                .env("AWS_ACCESS_KEY_ID", &self.reach["AWS_ACCESS_KEY_ID"])
                .env("AWS_SECRET_ACCESS_KEY", &self.reach["AWS_SECRET_ACCESS_KEY"])
                .envs(secrets.iter().copied());
            ok(&mut c, &format!("kubectl {line}"));
        }
    }

    /// The number of resources each project's stack holds, read from the S3 server inside the
    /// cluster's network namespace. moto answers an object only to a signed request: boto3,
    /// moto's own dependency, signs it.
    fn resources(&self, projects: impl Iterator<Item = String>) -> BTreeMap<String, usize> {
        let endpoint = self.reach["PULUMI_BACKEND_URL"]
            .split("endpoint=")
            .nth(1)
            .and_then(|r| r.split('&').next())
            .unwrap()
            .to_string();
        let python = self.engines.parent().unwrap().join("moto/bin/python3");
        let s3 = |code: &str, arg: &str| {
            let client = "import boto3, sys\ns3 = boto3.client('s3', endpoint_url=sys.argv[1], \
                aws_access_key_id='k', aws_secret_access_key='s', region_name='us-east-1')\n";
            ok(
                Command::new("nsenter")
                    .arg(format!("--net={}", self.dir.join("node/netns").display()))
                    .arg("--")
                    .arg(&python)
                    .args(["-c", &format!("{client}{code}"), &endpoint, arg]),
                &format!("reading {arg} from the S3 server"),
            )
        };
        let keys = s3(
            "for o in s3.list_objects_v2(Bucket='runner-state', Prefix=sys.argv[2])['Contents']: print(o['Key'])",
            ".pulumi/stacks/",
        );
        projects
            .map(|project| {
                let key = keys
                    .lines()
                    .find(|k| k.ends_with(&format!("/{project}/{STACK}.json")))
                    .unwrap_or_else(|| panic!("no stack {project}/{STACK} in the backend: {keys}"));
                let text = s3(
                    "print(s3.get_object(Bucket='runner-state', Key=sys.argv[2])['Body'].read().decode())",
                    key,
                );
                let checkpoint: Value = serde_json::from_str(&text).unwrap();
                let n = checkpoint["checkpoint"]["latest"]["resources"]
                    .as_array()
                    .map_or(0, Vec::len);
                (project, n)
            })
            .collect()
    }
}

/// A pod whose passphrase does not open the stacks: its project fails with the runner's words
/// in its log (what `kubectl logs POD -c main` shows, as docs/exports.md says), nothing after
/// it starts, and what is deployed stays. The right passphrase is put back after.
fn a_wrong_passphrase_fails_in_the_runners_words(
    cluster: &Cluster,
    up_file: &Path,
    needs: &BTreeMap<String, Vec<String>>,
) {
    let secret = format!("runner-{STACK}-credentials");
    let passphrase = |value: &str| {
        let patch = serde_json::json!({"stringData": {"PULUMI_CONFIG_PASSPHRASE": value}}).to_string();
        ok(
            &mut cluster.kubectl(&[
                "-n", NAMESPACE, "patch", "secret", &secret, "--type", "merge", "-p", &patch,
            ]),
            "kubectl patch secret",
        );
    };
    passphrase("not the passphrase");
    let submit = output(
        cluster
            .argo(&["submit", "-n", NAMESPACE, "--wait", "-o", "name"])
            .arg(up_file),
    );
    assert!(
        !submit.status.success(),
        "a wrong passphrase ran the workflow to its end"
    );
    let name = String::from_utf8_lossy(&submit.stdout)
        .trim()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let run = tasks(&|a| cluster.kubectl(a), &name);
    let failed: Vec<&String> = run.iter().filter(|(_, t)| t.2 == "Failed").map(|(p, _)| p).collect();
    assert!(!failed.is_empty(), "no task failed: {run:?}");
    for (project, (_, _, phase)) in &run {
        if phase == "Succeeded" || failed.contains(&project) {
            continue;
        }
        assert!(
            needs[project]
                .iter()
                .any(|n| !matches!(run.get(n), Some(t) if t.2 == "Succeeded")),
            "{project} ({phase}) did not wait for what failed: {run:?}"
        );
    }
    let label = format!("workflows.argoproj.io/workflow={name}");
    let logs = ok(
        &mut cluster.kubectl(&[
            "-n",
            NAMESPACE,
            "logs",
            "-l",
            &label,
            "-c",
            "main",
            "--tail",
            "40",
            "--max-log-requests",
            "20",
        ]),
        "kubectl logs",
    );
    assert!(
        logs.contains("does not open") && logs.contains("made with another"),
        "the failed pod's log lacks the runner's words:\n{logs}"
    );
    assert!(
        !logs.contains("not the passphrase"),
        "the passphrase in a pod's log:\n{logs}"
    );
    assert!(
        cluster.resources(needs.keys().cloned()).values().all(|&n| n > 0),
        "a failed run changed what is deployed"
    );
    passphrase("argo test passphrase");
}

/// What each project waits for, from the plan.
fn waits() -> BTreeMap<String, Vec<String>> {
    let plan: Value = serde_json::from_str(&ok(
        Command::new(RUNNER)
            .args(["show-plan", "-p", "local", "-f", "json"])
            .current_dir(Path::new(REPO).join("examples/local")),
        "show-plan",
    ))
    .unwrap();
    plan["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let waits = p["waits_for"].as_array().unwrap().iter();
            (
                p["name"].as_str().unwrap().to_string(),
                waits.map(|w| w.as_str().unwrap().to_string()).collect(),
            )
        })
        .collect()
}

#[requires("node", "engines")]
#[test]
fn argo_runs_the_exported_graph_on_the_real_node_in_order_and_tears_it_down() {
    let _node = REAL_NODE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(kube) = node_tools() else { return };
    let Some(engines) = engine_tools() else { return };
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(base).unwrap();
    let tmp = tempfile::Builder::new().prefix("argo-").tempdir_in(base).unwrap();
    let repo = tmp.path().join("repo");
    committed_workspace(&repo);
    let dir = tmp.path().join("cluster");
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = Cluster::up(&dir, &repo, kube, engines);
    let down = Down(&dir);

    // The export, as a person makes it: the workspace's stack file, the shared backend.
    std::fs::write(
        repo.join(format!("config/pulumi/Pulumi.{STACK}.yaml")),
        "config:\n  kubernetes:infra_type: local\n",
    )
    .unwrap();
    let out = tmp.path().join("export");
    let secrets = [
        ("PULUMI_CONFIG_PASSPHRASE", "argo test passphrase"),
        ("MARA_SECRET_MONITORING_ADMIN_PASSWORD", "monitoring-Pass-1"),
        ("MARA_SECRET_APP_DB_PASSWORD", "app-db-Pass-1"),
    ];
    ok(
        Command::new(RUNNER)
            .args(["export", "argo-workflows", "-p", "local", "-s", STACK, "--repo"])
            .arg(&cluster.reach["GIT_URL"])
            .args(["--image", IMAGE, "-o"])
            .arg(&out)
            .current_dir(&repo)
            .env("PULUMI_BACKEND_URL", &cluster.reach["PULUMI_BACKEND_URL"])
            .envs(secrets),
        "runner export argo-workflows",
    );
    let up_file = std::fs::read_to_string(out.join("workflow-up.yaml")).unwrap();
    for (_, value) in secrets {
        assert!(!up_file.contains(value), "a secret in the export");
    }
    cluster.set_up(&up_file, &out, &secrets);

    // Up: every project, none before what it waits for.
    let needs = waits();
    let name = submitted(
        cluster
            .argo(&["submit", "-n", NAMESPACE, "--wait", "-o", "name"])
            .arg(out.join("workflow-up.yaml")),
        &|a| cluster.kubectl(a),
        "argo submit workflow-up.yaml",
    );
    let up_run = tasks(&|a| cluster.kubectl(a), &name);
    assert_eq!(up_run.len(), needs.len(), "{up_run:?}");
    for (project, (start, _, phase)) in &up_run {
        assert_eq!(phase, "Succeeded", "{project}: {up_run:?}");
        for need in &needs[project] {
            assert!(
                *start >= up_run[need].1,
                "{project} started before {need} ended: {up_run:?}"
            );
        }
    }
    assert!(cluster.resources(needs.keys().cloned()).values().all(|&n| n > 0));
    a_wrong_passphrase_fails_in_the_runners_words(&cluster, &out.join("workflow-up.yaml"), &needs);

    // The teardown, as its header says: dependents first, and every stack left empty.
    let destroy_file = std::fs::read_to_string(out.join("workflow-destroy.yaml")).unwrap();
    assert!(destroy_file.contains(&format!("-p confirm={STACK}")), "{destroy_file}");
    ok(
        cluster.kubectl(&["apply", "-f"]).arg(out.join("workflow-destroy.yaml")),
        "kubectl apply",
    );
    let template = format!("workflowtemplate/{NAMESPACE}-destroy");
    let confirm = format!("confirm={STACK}");
    let name = submitted(
        &mut cluster.argo(&[
            "submit", "-n", NAMESPACE, "--from", &template, "-p", &confirm, "--wait", "-o", "name",
        ]),
        &|a| cluster.kubectl(a),
        "argo submit --from workflowtemplate",
    );
    let destroy_run = tasks(&|a| cluster.kubectl(a), &name);
    assert_eq!(destroy_run.len(), needs.len(), "{destroy_run:?}");
    for (project, waits) in &needs {
        assert_eq!(destroy_run[project].2, "Succeeded", "{project}: {destroy_run:?}");
        for need in waits {
            assert!(
                destroy_run[need].0 >= destroy_run[project].1,
                "{need} destroyed before {project}, which needs it, was: {destroy_run:?}"
            );
        }
    }
    for (project, n) in cluster.resources(needs.keys().cloned()) {
        assert_eq!(n, 0, "{project} keeps resources after the teardown");
    }

    let stopped = down.run();
    assert!(stopped.status.success(), "{}", String::from_utf8_lossy(&stopped.stderr));
    assert!(processes_naming(&dir).is_empty(), "{:?}", processes_naming(&dir));
}
