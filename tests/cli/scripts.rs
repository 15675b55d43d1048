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

/// `scripts/try-local` runs the stack the workspace is on once `--switch-stack` moved it (the
/// runner reads it from the environment file), `try` before any, and the `-s` or `STACK` given
/// over both. Run from a copy of the scripts, with stand-ins for `pulumi`'s build and a `runner`
/// that prints what it was given.
#[test]
fn try_local_follows_the_stack_the_workspace_is_on() {
    let root = wrapper_copy("examples/local/config/pulumi");
    stub(root.path(), "target/release/runner", "printf '%s\\n' \"$@\"");
    let given = |args: &[&str], stack: Option<&str>| {
        let mut c = Command::new(root.path().join("scripts/try-local"));
        c.args(args).env_remove("CARGO_TARGET_DIR").env_remove("STACK");
        if let Some(s) = stack {
            c.env("STACK", s);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let stack_of = |args: &[String]| args.iter().position(|a| a == "-s").map(|i| args[i + 1].clone());
    assert_eq!(stack_of(&given(&["status"], None)), Some("try".into()));
    std::fs::write(
        root.path().join("examples/local/config/pulumi/environment"),
        "PULUMI_STACK=demo\n",
    )
    .unwrap();
    let on_demo = given(&["status"], None);
    assert_eq!(
        stack_of(&on_demo),
        None,
        "the runner reads the workspace's stack: {on_demo:?}"
    );
    assert_eq!(stack_of(&given(&["status"], Some("other"))), Some("other".into()));
    let typed = given(&["status", "-s", "typed"], Some("other"));
    assert_eq!(typed.iter().filter(|a| *a == "-s").count(), 1, "{typed:?}");
    assert_eq!(stack_of(&typed), Some("typed".into()));
    // A backend left in the shell (a recipe's) is said before the state goes there.
    let out = Command::new(root.path().join("scripts/try-local"))
        .arg("status")
        .env_remove("CARGO_TARGET_DIR")
        .env("PULUMI_BACKEND_URL", "s3://forgotten")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "PULUMI_BACKEND_URL is set in this shell: the state goes there, not to examples/local/.pulumi-state"
        ) && !said.contains("forgotten"),
        "{said}"
    );
}

/// A copy of the scripts a wrapper runs from, with a workspace's `config_dir`, the sources it
/// checks for a build and a stand-in for `scripts/install-pulumi`; the test writes the runner
/// (after the sources: the wrapper then builds nothing) and the other stand-ins with [`stub`].
fn wrapper_copy(config_dir: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    crate::support::copy_dir(&Path::new(REPO).join("scripts"), &r.join("scripts"));
    for dir in ["src", "crates", config_dir, "target/release"] {
        std::fs::create_dir_all(r.join(dir)).unwrap();
    }
    for file in ["Cargo.toml", "Cargo.lock"] {
        std::fs::write(r.join(file), "").unwrap();
    }
    stub(r, "scripts/install-pulumi", "echo \"$PWD/bin\"");
    root
}

/// An executable shell script at `root/path`, its `body` after the `#!/bin/sh` line.
fn stub(root: &Path, path: &str, body: &str) {
    let p = root.join(path);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A copy of the scripts with stand-ins for the cluster (it notes each start in `started`), the
/// tools and a `runner` that prints what it was given (and says stack `cluster` is deployed).
fn try_cluster_copy() -> tempfile::TempDir {
    let root = wrapper_copy("config/pulumi");
    let r = root.path();
    let script = |path: &str, body: &str| stub(r, path, body);
    let started = r.join("started");
    script(
        "scripts/local-cluster",
        &format!(
            "echo \"$@\" >> '{}'; mkdir -p .local-cluster; \
             printf 'config:\\n  kubernetes:chart_mirror: http://127.0.0.1:1/mirror\\n' > .local-cluster/stack-config.yaml; \
             echo \"$PWD/kubeconfig\"",
            started.display()
        ),
    );
    script("scripts/install-kube-tools", "echo \"$PWD/tools\"");
    // Newer than the sources above: the script builds nothing.
    // Each start of the runner is a block of its arguments, one a line; its status of stack
    // `cluster` says it is deployed.
    script(
        "target/release/runner",
        "echo '--- runner'; printf '%s\\n' \"$@\"; \
         case \"$*\" in status*cluster*json*) echo '\"deployed\": true' ;; esac",
    );
    root
}

/// `scripts/try-cluster` starts the local cluster only for what needs it: a command that reads
/// what runs left (status, output…) leaves a stopped cluster stopped, wherever its global
/// options stand (`--color never status`, `-b log status`, `-s cluster status`); `up` starts it,
/// and mirrors the charts, options before it or not. Run from a copy of the scripts, with
/// stand-ins for the cluster, the tools and a `runner` that prints what it was given.
#[test]
fn try_cluster_starts_the_cluster_only_for_what_needs_it() {
    let root = try_cluster_copy();
    let r = root.path();
    let started = r.join("started");
    let run_with = |args: &[&str], env: &[(&str, &str)]| {
        let out = crate::support::succeeds(
            Command::new(r.join("scripts/try-cluster"))
                .args(args)
                .env_remove("CARGO_TARGET_DIR")
                .env_remove("STACK")
                .env_remove("RUNNER_CHARTS_DIR")
                .env_remove("PULUMI_BACKEND_URL")
                .envs(env.iter().copied())
                .current_dir(r),
        );
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // The arguments of the last start of the runner (the command itself, after the mirror's).
    let run = |args: &[&str]| {
        let out = run_with(args, &[]).0;
        out.rsplit("--- runner\n").next().unwrap_or_default().to_string()
    };
    for args in [
        &["status"][..],
        &["--color", "never", "status"],
        &["-b", "log", "status"],
        &["-s", "cluster", "status"],
        &["--help"],
    ] {
        run(args);
        assert!(!started.exists(), "{args:?} started the cluster");
    }
    let up = run(&["-s", "cluster", "up"]);
    assert_eq!(std::fs::read_to_string(&started).unwrap().trim(), "up", "{up}");
    assert!(
        r.join(".local-cluster/mirror.stamp").exists(),
        "up did not mirror the charts: {up}"
    );

    // A stack typed after the command gets the local cluster's stack file as STACK=… would.
    let other = run(&["up", "-s", "other"]);
    assert!(r.join("config/pulumi/Pulumi.other.yaml").exists(), "{other}");
    assert_eq!(other.lines().filter(|a| *a == "-s").count(), 1, "{other}");
    // Once the workspace is on another stack, a plain command is about that one.
    std::fs::write(r.join("config/pulumi/environment"), "PULUMI_STACK=elsewhere\n").unwrap();
    let status = run(&["status"]);
    let stack = status.lines().skip_while(|a| *a != "-s").nth(1);
    assert_eq!(stack, Some("elsewhere"), "{status}");
    // A backend in the shell is said.
    let (_, said) = run_with(&["status"], &[("PULUMI_BACKEND_URL", "s3://forgotten")]);
    assert!(
        said.contains("PULUMI_BACKEND_URL is set in this shell") && !said.contains("forgotten"),
        "{said}"
    );
}

/// A second stack is not put on the local cluster while another written for it is deployed:
/// the cluster layer's namespaces and Helm releases would be the first one's (and its destroy
/// would delete them).
#[test]
fn try_cluster_refuses_a_second_stack_on_the_cluster_while_one_is_deployed() {
    let root = try_cluster_copy();
    let r = root.path();
    std::fs::create_dir_all(r.join(".local-cluster")).unwrap();
    let cluster_file = r.join("config/pulumi/Pulumi.cluster.yaml");
    let local = r.canonicalize().unwrap().join(".local-cluster/kubeconfig");
    std::fs::write(
        &cluster_file,
        format!("config:\n  kubernetes:kubeconfig: {}\n", local.display()),
    )
    .unwrap();
    let second = Command::new(r.join("scripts/try-cluster"))
        .args(["up", "-s", "third"])
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("STACK")
        .current_dir(r)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{said}");
    assert!(
        said.contains("stack `cluster` is deployed on the local cluster, which holds one stack at a time")
            && said.contains("Destroy stack `cluster` first (`scripts/try-cluster destroy -s cluster`), or give `third` a cluster of its own")
            && said.contains("(`cargo install --path .` puts `runner` on PATH)"),
        "{said}"
    );
    // Refused before anything is written for it: no stack file pointing at the local cluster.
    assert!(!r.join("config/pulumi/Pulumi.third.yaml").exists(), "{said}");
}
