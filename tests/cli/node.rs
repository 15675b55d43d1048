//! The real node of `scripts/local-cluster up --node`: a pod asking for it (its label and its
//! taint) runs there in a real container from the image made here (never pulled), reaches the
//! API server at the `kubernetes` Service's address, and `down` leaves the machine as it found
//! it: the kernel settings the kubelet writes put back, no process of the cluster left, nothing
//! mounted. One cluster of its own (not the shared one: that one has no real node), one pod.
//!
//! Skips without the tools (the kube tools with the kubelet, scripts/install-node-tools' packages
//! and images) or without root, saying so; fails instead under `RUNNER_REQUIRE_TOOLS=1` (CI).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{REPO, tool};
use test_requires::requires;

const NODE: &str = "10.246.0.1";

/// One real node per machine (its kubelet's cgroups are the machine's): the tests that start one
/// take turns.
pub(crate) static REAL_NODE: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// What the kubelet writes, and `down` must put back.
const SETTINGS: [&str; 3] = ["vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"];

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: hello}
spec:
  restartPolicy: Never
  nodeSelector: {runner.dev/real-node: "true"}
  tolerations: [{key: runner.dev/real-node, operator: Exists, effect: NoSchedule}]
  containers:
  - name: hello
    image: localhost/runner/busybox:1
    imagePullPolicy: Never
    command: ["/bin/sh", "-c", "echo hello from a real pod on $(hostname); wget -q -O - --no-check-certificate https://10.0.0.1/version"]
"#;

/// The local cluster's tools, when a real node can run beside it ([`tool`]`("node")`).
pub(crate) fn node_tools() -> Option<PathBuf> {
    tool("node")
}

fn settings() -> Vec<(String, String)> {
    SETTINGS
        .iter()
        .map(|s| {
            let v = std::fs::read_to_string(Path::new("/proc/sys").join(s)).unwrap();
            (s.to_string(), v.trim().to_string())
        })
        .collect()
}

/// The processes whose command line names `dir` (every process the cluster starts does).
pub(crate) fn processes_naming(dir: &Path) -> Vec<(u32, String)> {
    let mark = format!("{}/", dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let command = std::fs::read(e.path().join("cmdline")).ok()?;
            let command = String::from_utf8_lossy(&command).replace('\0', " ");
            command.contains(&mark).then_some((pid, command))
        })
        .collect()
}

fn mounts_under(dir: &Path) -> Vec<String> {
    let dir = dir.to_str().unwrap();
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|m| *m == dir || m.starts_with(&format!("{dir}/")))
        .map(str::to_string)
        .collect()
}

/// The listening TCP sockets of this network namespace that `pids` hold, as
/// `address:port` (hex, as /proc/net/tcp writes them).
fn listening(pids: &[u32]) -> Vec<String> {
    let here = std::fs::read_link("/proc/self/ns/net").unwrap();
    let mut inodes = Vec::new();
    for pid in pids {
        if std::fs::read_link(format!("/proc/{pid}/ns/net")).ok().as_ref() != Some(&here) {
            continue;
        }
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Some(inode) = std::fs::read_link(fd.path()).ok().and_then(|t| {
                t.to_str()?
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')
                    .map(str::to_string)
            }) {
                inodes.push(inode);
            }
        }
    }
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
                found.push(f[1].to_string());
            }
        }
    }
    found
}

pub(crate) fn output(c: &mut Command) -> Output {
    c.stdin(Stdio::null()).output().unwrap()
}

/// Stops the cluster however the test ends.
pub(crate) struct Down<'a>(pub(crate) &'a Path);

impl Down<'_> {
    pub(crate) fn run(&self) -> Output {
        output(
            Command::new(Path::new(REPO).join("scripts/local-cluster"))
                .args(["down", "--dir"])
                .arg(self.0),
        )
    }
}

impl Drop for Down<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.run();
        }
    }
}

#[requires("node")]
#[test]
fn a_pod_runs_on_the_real_node_and_down_leaves_nothing() {
    let _node = REAL_NODE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(tools) = node_tools() else { return };
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(base).unwrap();
    let tmp = tempfile::Builder::new().prefix("node-").tempdir_in(base).unwrap();
    let dir = tmp.path().to_path_buf();
    let before = settings();

    let started = Instant::now();
    let up = output(
        Command::new(Path::new(REPO).join("scripts/local-cluster"))
            .args(["up", "--node", "--dir", dir.to_str().unwrap(), "--owner"])
            .arg(std::process::id().to_string())
            .env("RUNNER_KUBE_TOOLS", &tools)
            .env_remove("RUNNER_CHARTS_DIR"),
    );
    let down = Down(&dir);
    let said = String::from_utf8_lossy(&up.stderr).into_owned();
    assert!(up.status.success(), "local-cluster up --node failed:\n{said}");
    eprintln!("up --node: {:.1} s", started.elapsed().as_secs_f64());
    let kubeconfig = PathBuf::from(String::from_utf8(up.stdout).unwrap().trim());
    let kubectl = |args: &[&str], input: Option<&str>| -> (bool, String, String) {
        let mut c = Command::new(tools.join("bin/kubectl"));
        c.args(args)
            .env("KUBECONFIG", &kubeconfig)
            .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        if let Some(text) = input {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    // From the host, at the kubeconfig's 127.0.0.1 address: the real node beside kwok's.
    let (ok, nodes, err) = kubectl(&["get", "nodes", "-o", "name"], None);
    assert!(ok, "{err}");
    assert!(
        nodes.contains(&format!("node/{NODE}")) && nodes.contains("node/kwok-node-0"),
        "{nodes}"
    );
    let (_, taints, _) = kubectl(&["get", "node", NODE, "-o", "jsonpath={.spec.taints}"], None);
    assert!(
        taints.contains("runner.dev/real-node") && taints.contains("NoSchedule"),
        "{taints}"
    );

    // In the host's network namespace, the cluster listens on 127.0.0.1 only.
    let pids: Vec<u32> = processes_naming(&dir).into_iter().map(|(p, _)| p).collect();
    let open = listening(&pids);
    assert!(
        !open.is_empty(),
        "no listening socket of the cluster found in the host's namespace"
    );
    assert!(
        open.iter().all(|a| a.starts_with("0100007F:")),
        "the cluster listens beyond 127.0.0.1 in the host's namespace: {open:?}"
    );

    let applied = Instant::now();
    let (ok, _, err) = kubectl(&["apply", "-f", "-"], Some(POD));
    assert!(ok, "{err}");
    let mut phase = String::new();
    while applied.elapsed() < Duration::from_secs(90) {
        phase = kubectl(&["get", "pod", "hello", "-o", "jsonpath={.status.phase}"], None).1;
        if phase == "Succeeded" || phase == "Failed" {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let logs = kubectl(&["logs", "hello"], None);
    let described = kubectl(&["describe", "pod", "hello"], None).1;
    assert_eq!(phase, "Succeeded", "{described}\nlogs: {logs:?}");
    eprintln!("pod Succeeded {:.1} s after apply", applied.elapsed().as_secs_f64());
    assert!(logs.0, "{}", logs.2);
    assert!(logs.1.contains("hello from a real pod on hello"), "{}", logs.1);
    assert!(
        logs.1.contains("\"gitVersion\": \"v1.34.4\""),
        "the pod did not reach the API server:\n{}",
        logs.1
    );
    let (_, on, _) = kubectl(&["get", "pod", "hello", "-o", "jsonpath={.spec.nodeName}"], None);
    assert_eq!(on, NODE);
    if settings() == before {
        eprintln!("(the kubelet found the kernel settings as it wants them: nothing was changed to put back)");
    }

    let out = down.run();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(settings(), before, "down did not put the kernel settings back");
    let left = processes_naming(&dir);
    assert!(left.is_empty(), "processes of the cluster left: {left:?}");
    let mounted = mounts_under(&dir);
    assert!(mounted.is_empty(), "still mounted: {mounted:?}");
    assert!(!dir.join("node").exists(), "the node's data is left");
    assert!(
        !Path::new("/sys/fs/cgroup/pids/kubepods").exists(),
        "the kubelet's cgroups are left"
    );
}
