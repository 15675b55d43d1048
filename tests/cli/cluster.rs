//! The local Kubernetes cluster the tests that touch a cluster share: one per test binary,
//! started by `scripts/local-cluster up --owner <this process>` (so it stops when the binary
//! ends) from the tools `scripts/install-kube-tools` built, and reused by every test. Without
//! the tools, those tests skip, saying so (and fail under `RUNNER_REQUIRE_TOOLS=1`, as in CI).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::{REPO, Run, tool};

/// A running cluster and what `scripts/local-cluster up` wrote for it.
pub struct Cluster {
    /// Its kubeconfig (context `runner-local`).
    pub kubeconfig: PathBuf,
    /// The stack configuration of `-p kubeconfig` on it (`stack-config.yaml`): the kubeconfig,
    /// the context, the chart repository (`runner charts mirror` fills it), Bank of Sirius' manifests.
    pub stack_config: String,
    /// The tools it runs from (`<dir>/bin`, `<dir>/pulumi-plugins`).
    pub tools: PathBuf,
    /// Its folder (`local-cluster --dir`).
    pub dir: PathBuf,
    /// The published charts it serves as its chart repository's upstream, when found.
    pub charts: Option<PathBuf>,
    mirrored: OnceLock<Result<String, String>>,
}

/// The folder of the published charts (`repo/`, `bank-of-sirius/`): `$RUNNER_CHARTS_DIR`, else
/// `../shared/charts` beside the repository (where CI keeps them); `None` when neither holds
/// them (nothing said: [`Cluster::mirrored`] says it).
pub fn charts_dir() -> Option<PathBuf> {
    test_tools::find("charts").ok()
}

/// The tools of `scripts/install-kube-tools` ([`tool`]`("kube")`).
pub fn kube_tools() -> Option<PathBuf> {
    tool("kube")
}

/// The cluster of this test binary, started on first use.
pub fn cluster() -> Option<&'static Cluster> {
    static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
    CLUSTER
        .get_or_init(|| {
            let tools = kube_tools()?;
            let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("local-clusters");
            forget_ended(&base);
            let dir = base.join(std::process::id().to_string());
            let charts = charts_dir();
            let mut up = Command::new(Path::new(REPO).join("scripts/local-cluster"));
            up.args(["up", "--dir", dir.to_str().unwrap(), "--owner"])
                .arg(std::process::id().to_string())
                .env("RUNNER_KUBE_TOOLS", &tools)
                .env_remove("RUNNER_CHARTS_DIR");
            if let Some(c) = &charts {
                up.arg("--charts").arg(c);
            }
            let out = up.output().unwrap();
            assert!(
                out.status.success(),
                "scripts/local-cluster up failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let kubeconfig = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
            let stack_config = std::fs::read_to_string(dir.join("stack-config.yaml")).unwrap();
            Some(Cluster {
                kubeconfig,
                stack_config,
                tools,
                dir,
                charts,
                mirrored: OnceLock::new(),
            })
        })
        .as_ref()
}

/// Removes the folders of clusters whose test binary has ended (its watchdog stopped them).
fn forget_ended(base: &Path) {
    for entry in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(&pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Cluster {
    /// Fills the cluster's chart repository with the charts of `-p kubeconfig` as a site would:
    /// `runner charts mirror` from the published charts it serves as upstream, the definitions
    /// nginx-ingress's schema points at taken from this cluster's `/openapi/v2`. Once per
    /// cluster; what the runner said. `None` (skipped, or failed in CI) without the charts.
    pub fn mirrored(&self) -> Option<&str> {
        if self.charts.is_none() {
            tool("charts")?;
        }
        let said = self.mirrored.get_or_init(|| {
            let upstream = std::fs::read_to_string(self.dir.join("upstream")).map_err(|e| e.to_string())?;
            let home = tempfile::tempdir().unwrap();
            let path = format!(
                "{}:{}",
                self.tools.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            );
            let mirror = self.dir.join("www/mirror");
            let mut c = crate::support::runner(home.path(), &[]);
            c.args([
                "--workspace",
                REPO,
                "charts",
                "mirror",
                mirror.to_str().unwrap(),
                "-p",
                "kubeconfig",
            ])
            .args(["--from", upstream.trim(), "--kubeconfig"])
            .arg(&self.kubeconfig)
            .env("PATH", path);
            let run = crate::support::run(&mut c);
            if run.code == 0 { Ok(run.stderr) } else { Err(run.stderr) }
        });
        match said {
            Ok(s) => Some(s),
            Err(e) => panic!("runner charts mirror failed:\n{e}"),
        }
    }

    /// `kubectl ARGS…` of the cluster's own release against it.
    pub fn kubectl(&self, args: &[&str]) -> Run {
        let out = Command::new(self.tools.join("bin/kubectl"))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    /// `kubectl ARGS…` with `input` on its standard input (`-f -`).
    pub fn kubectl_with(&self, args: &[&str], input: &str) -> Run {
        use std::io::Write as _;
        let mut child = Command::new(self.tools.join("bin/kubectl"))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    /// `kubectl ARGS… -o json`, parsed; the command must succeed.
    #[track_caller]
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        self.kubectl(&all).expect(0).json()
    }

    /// The names of the cluster's namespaces.
    pub fn namespaces(&self) -> Vec<String> {
        self.json(&["get", "namespaces"])["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// A `PULUMI_HOME` for a test at `home`: its `plugins/` is the registered real provider.
    pub fn pulumi_home(&self, home: &Path) {
        std::fs::create_dir_all(home).unwrap();
        let link = home.join("plugins");
        if !link.exists() {
            std::os::unix::fs::symlink(self.tools.join("pulumi-plugins"), link).unwrap();
        }
    }
}

/// `local-cluster down` with a `watchdog.pid` no watchdog of this cluster wrote (a reboot, a
/// reused pid, a planted file): the process it names is not signalled, nor is `0` (the caller's
/// process group) or a negative number (a group).
#[test]
fn down_signals_no_process_a_stale_watchdog_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut bystander = Command::new("sleep").arg("30").spawn().unwrap();
    for planted in [
        bystander.id().to_string(),
        "0".into(),
        "-1".into(),
        format!("-{}", bystander.id()),
    ] {
        std::fs::write(dir.path().join("watchdog.pid"), &planted).unwrap();
        // (Whatever pid is planted, `down` succeeds.)
        crate::support::succeeds(
            Command::new(Path::new(REPO).join("scripts/local-cluster"))
                .args(["down", "--dir"])
                .arg(dir.path()),
        );
        assert!(
            bystander.try_wait().unwrap().is_none(),
            "{planted}: the bystander was signalled"
        );
        assert!(!dir.path().join("watchdog.pid").exists());
    }
    bystander.kill().unwrap();
    let _ = bystander.wait();
}
