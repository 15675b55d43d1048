//! The `kubeconfig-merge` hook through the binary (`up -p aws --target eks` with the stand-in),
//! on fixture kubeconfigs, checked by the real `kubectl`.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{Ws, failed_block};
use test_requires::requires;

const TOKEN: &str = "placeholder-token-dev";

fn up(ws: &Ws, kubeconfig: Option<&str>) -> crate::support::Run {
    let mut env = vec![];
    if let Some(k) = kubeconfig {
        env.push(("KUBECONFIG", k));
    }
    ws.up("aws", &["--target", "eks", "--fresh"], &env)
}

/// What a run said of the kubeconfig entries it merged, updated or removed.
fn merged(run: &crate::support::Run) -> String {
    crate::support::lines_with(&run.stderr, "context eks-dev")
}

/// The user's `~/.kube/config`, holding [`EXISTING`] (another cluster, user and context).
fn existing_kubeconfig(ws: &Ws) -> PathBuf {
    let file = home(ws).join(".kube/config");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, EXISTING).unwrap();
    file
}

fn home(ws: &Ws) -> PathBuf {
    ws.path().join("home")
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn yaml(p: &Path) -> Value {
    serde_saphyr::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn names(v: &Value, section: &str) -> Vec<String> {
    v[section]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

/// `kubectl config …` on one file; `None` when kubectl is not installed here.
fn kubectl(file: &Path, args: &[&str]) -> Option<String> {
    crate::support::tool("kubectl")?;
    let out = crate::support::succeeds(
        Command::new("kubectl")
            .arg("config")
            .args(args)
            .arg("--kubeconfig")
            .arg(file),
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

const EXISTING: &str = "\
apiVersion: v1
kind: Config
preferences:
  colors: true
clusters:
- name: other
  cluster:
    server: https://other.example
- name: eks-dev
  cluster:
    server: https://old.example
  extensions:
  - name: keep-me
    extension: {a: 1}
- name: last
  cluster:
    server: https://last.example
users:
- name: other-user
  user:
    token: other-token
contexts:
- name: other
  context:
    cluster: other
    user: other-user
current-context: other
x-unknown-field: kept
";

#[test]
fn a_new_kubeconfig_is_created_0600_and_kubectl_reads_it() {
    let ws = Ws::configured("aws");
    let run = up(&ws, None).expect(0);
    let file = home(&ws).join(".kube/config");
    crate::snapshot!(ws.path(), "kubeconfig_merge_added", merged(&run));
    assert_eq!(mode(&file), 0o600);
    assert!(
        !run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN),
        "a kubeconfig secret was printed"
    );
    if let Some(ctx) = kubectl(&file, &["current-context"]) {
        assert_eq!(ctx.trim(), "eks-dev");
        let view = kubectl(&file, &["view", "--raw", "-o", "json"]).unwrap();
        let v: Value = serde_json::from_str(&view).unwrap();
        assert_eq!(v["clusters"][0]["cluster"]["server"], "https://eks.example.invalid");
        assert_eq!(v["users"][0]["user"]["token"], TOKEN);
        let contexts = kubectl(&file, &["get-contexts", "-o", "name"]).unwrap();
        assert_eq!(contexts.trim(), "eks-dev");
    }
}

/// A CI job's home is a shell executor's or a self-hosted runner's, and outlives the job: with
/// no KUBECONFIG the merge goes to a file in the job's checkout, and the home is left alone.
#[test]
fn in_a_ci_job_the_users_kubeconfig_is_left_alone() {
    let ws = Ws::configured("aws");
    let run = ws.up("aws", &["--target", "eks"], &[("CI", "true")]).expect(0);
    assert!(!home(&ws).join(".kube").exists(), "{}", run.stderr);
    let file = ws.path().join(".runner/dev/kubeconfig/config");
    crate::snapshot!(ws.path(), "kubeconfig_merge_in_a_ci_job", merged(&run));
    assert_eq!(mode(&file), 0o600);
    // A destroy in the job has nothing to say of a kubeconfig that goes with the checkout.
    let destroy = ws
        .exec(
            &["destroy", "-p", "aws", "-s", "dev", "--target", "eks", "--yes"],
            &[("CI", "true")],
        )
        .expect(0);
    assert!(!destroy.stderr.contains("The kubeconfig keeps"), "{}", destroy.stderr);
    // KUBECONFIG set by the job is where it goes.
    let chosen = ws.path().join("chosen");
    ws.up(
        "aws",
        &["--target", "eks"],
        &[("CI", "true"), ("KUBECONFIG", chosen.to_str().unwrap())],
    )
    .expect(0);
    assert_eq!(names(&yaml(&chosen), "contexts"), ["eks-dev"]);
    assert!(!home(&ws).join(".kube").exists());
    // Something else where the job's kubeconfig goes (a directory, a FIFO): the project fails
    // naming it, nothing hangs, and the home is still left alone.
    std::fs::remove_dir_all(&file).ok();
    std::fs::remove_file(&file).ok();
    std::fs::create_dir_all(&file).unwrap();
    let run = ws
        .up("aws", &["--target", "eks", "--fresh"], &[("CI", "true")])
        .expect(1);
    crate::snapshot!(
        ws.path(),
        "kubeconfig_merge_into_a_directory",
        failed_block(&run.stderr)
    );
    std::fs::remove_dir(&file).unwrap();
    assert!(Command::new("mkfifo").arg(&file).status().unwrap().success());
    let run = ws
        .up("aws", &["--target", "eks", "--fresh"], &[("CI", "true")])
        .expect(1);
    crate::snapshot!(ws.path(), "kubeconfig_merge_into_a_fifo", failed_block(&run.stderr));
    assert!(!home(&ws).join(".kube").exists());
}

#[test]
fn an_entry_of_the_same_name_is_replaced_in_place_and_everything_else_kept() {
    let ws = Ws::configured("aws");
    let file = existing_kubeconfig(&ws);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = up(&ws, None).expect(0);
    crate::snapshot!(ws.path(), "kubeconfig_merge_added", merged(&run));
    let v = yaml(&file);
    assert_eq!(names(&v, "clusters"), ["other", "eks-dev", "last"], "replaced in place");
    assert_eq!(v["clusters"][1]["cluster"]["server"], "https://eks.example.invalid");
    assert!(
        v["clusters"][1].get("extensions").is_none(),
        "the entry is the new one, whole"
    );
    assert_eq!(names(&v, "users"), ["other-user", "eks-dev-admin"], "appended");
    assert_eq!(names(&v, "contexts"), ["other", "eks-dev"]);
    assert_eq!(v["current-context"], "eks-dev");
    assert_eq!(v["x-unknown-field"], "kept");
    assert_eq!(v["preferences"]["colors"], true);
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "apiVersion",
            "kind",
            "preferences",
            "clusters",
            "users",
            "contexts",
            "current-context",
            "x-unknown-field"
        ]
    );
    assert_eq!(mode(&file), 0o644, "an existing file keeps its mode");

    // The second merge finds its context: "Updated".
    let run = up(&ws, None).expect(0);
    crate::snapshot!(ws.path(), "kubeconfig_merge_updated", merged(&run));
    assert_eq!(names(&yaml(&file), "clusters"), ["other", "eks-dev", "last"]);
    if let Some(all) = kubectl(&file, &["get-contexts", "-o", "name"]) {
        assert_eq!(all.split_whitespace().collect::<Vec<_>>(), ["eks-dev", "other"]);
    }
}

#[test]
fn the_first_kubeconfig_path_holding_the_cluster_wins_else_the_first_that_exists() {
    let ws = Ws::configured("aws");
    let a = ws.path().join("kube/a.yaml");
    let b = ws.path().join("kube/b.yaml");
    std::fs::create_dir_all(a.parent().unwrap()).unwrap();
    std::fs::write(&b, EXISTING).unwrap();
    let list = format!("{}::{}", a.display(), b.display());
    let run = up(&ws, Some(&list)).expect(0);
    crate::snapshot!(
        ws.path(),
        "kubeconfig_merge_into_the_path_holding_the_cluster",
        merged(&run)
    );
    assert!(!a.exists(), "the first path was not touched");
    assert_eq!(yaml(&b)["current-context"], "eks-dev");

    // Nobody holds it: the first file that exists, as kubectl chooses (MARA created the first
    // path; this test expected that before the runner followed kubectl).
    let ws = Ws::configured("aws");
    let a = ws.path().join("kube/a.yaml");
    let c = ws.path().join("kube/c.yaml");
    std::fs::create_dir_all(a.parent().unwrap()).unwrap();
    std::fs::write(&c, "apiVersion: v1\nkind: Config\nclusters: []\n").unwrap();
    let list = format!("{}:{}", a.display(), c.display());
    up(&ws, Some(&list)).expect(0);
    assert!(!a.exists(), "a path that does not exist was created");
    assert_eq!(yaml(&c)["current-context"], "eks-dev");

    // KUBECONFIG from the environment file counts too.
    let ws = Ws::configured("aws");
    let d = ws.path().join("kube/from-env-file.yaml");
    ws.write("config/pulumi/environment", &format!("KUBECONFIG={}\n", d.display()));
    up(&ws, None).expect(0);
    assert!(d.exists() && !home(&ws).join(".kube/config").exists());
}

#[test]
fn a_malformed_kubeconfig_is_refused_and_left_untouched() {
    let ws = Ws::configured("aws");
    let file = home(&ws).join(".kube/config");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let broken = "apiVersion: v1\nclusters: {not: a list}\n";
    std::fs::write(&file, broken).unwrap();
    let run = up(&ws, None).expect(1);
    // Not a valid kubeconfig, left untouched: the merge fails its project.
    crate::snapshot!(
        ws.path(),
        "kubeconfig_merge_refuses_a_malformed_file",
        failed_block(&run.stderr)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);
    std::fs::write(&file, "clusters: [unclosed\n").unwrap();
    up(&ws, None).expect(1).stderr_has("is not a valid kubeconfig");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "clusters: [unclosed\n");
}

#[test]
fn destroy_prunes_the_entries_only_when_asked() {
    let ws = Ws::configured("aws");
    let file = existing_kubeconfig(&ws);
    up(&ws, None).expect(0);
    ws.exec(&["destroy", "-p", "aws", "-s", "dev", "--target", "eks", "--yes"], &[])
        .expect(0);
    assert_eq!(
        names(&yaml(&file), "contexts"),
        ["other", "eks-dev"],
        "not pruned by default"
    );
    up(&ws, None).expect(0);
    let run = ws
        .exec(
            &crate::support::words("destroy -p aws -s dev --target eks --prune-kubeconfig --yes"),
            &[],
        )
        .expect(0);
    crate::snapshot!(ws.path(), "kubeconfig_pruned", merged(&run));
    let v = yaml(&file);
    assert_eq!(names(&v, "contexts"), ["other"]);
    assert_eq!(names(&v, "clusters"), ["other", "last"]);
    assert_eq!(names(&v, "users"), ["other-user"]);
    assert_eq!(v["current-context"], "");
    assert_eq!(v["x-unknown-field"], "kept");
}

/// `c` at a terminal, `typed` given ahead of its questions: what the terminal showed (it must
/// succeed).
fn typed_ahead(c: &std::process::Command, typed: &[u8]) -> String {
    let mut child = crate::support::at_terminal(c, Path::new("/dev/null"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(typed).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{screen}");
    screen
}

#[requires("script")]
#[test]
fn an_interactive_destroy_offers_to_prune_and_ci_never_asks() {
    if crate::support::tool("script").is_none() {
        return;
    }
    let ws = Ws::configured("aws");
    let file = home(&ws).join(".kube/config");
    up(&ws, None).expect(0);
    // CI: no question, nothing removed, and what is left is said with the flag that prunes.
    let ci = ws
        .exec(
            &["destroy", "-p", "aws", "-s", "dev", "--target", "eks", "--yes"],
            &[("CI", "true")],
        )
        .expect(0);
    assert_eq!(names(&yaml(&file), "contexts"), ["eks-dev"]);
    // What stays in the job's checkout is not listed: it goes with the job.
    assert!(
        !ci.stderr.contains("Left as they were")
            && ci
                .stderr
                .contains("The kubeconfig keeps the cluster, user and context that eks merged into it")
            && ci.stderr.contains("`runner destroy -s dev --target eks --prune-kubeconfig` removes them (it asks as every destroy does, but its stacks are empty now: nothing else changes)"),
        "{}",
        ci.stderr
    );

    // At a terminal: asked, and "y" removes the entries.
    up(&ws, None).expect(0);
    let c = ws.command(
        &[
            "destroy", "-p", "aws", "-s", "dev", "--target", "eks", "--output", "plain",
        ],
        &[("TERM", "xterm")],
    );
    // Typed ahead: the terminal holds it until the runner asks. Destroy asks for the stack
    // name first (it used to destroy at once), then about the kubeconfig.
    let screen = typed_ahead(&c, b"dev\ny\n");
    assert!(
        screen.contains("destroy: every resource of 11 projects of provider aws, stack dev")
            && screen.contains("Type the stack name `dev` to destroy it"),
        "{screen}"
    );
    assert!(
        screen.contains("eks is destroyed: remove its cluster, user and context from your kubeconfig? [y/N]"),
        "{screen}"
    );
    assert!(screen.contains("Removed context eks-dev from"), "{screen}");
    assert!(
        screen.contains("Left as they were:") && !screen.contains("The kubeconfig keeps"),
        "{screen}"
    );
    assert!(names(&yaml(&file), "contexts").is_empty());

    // A "no" is said with the way to do it later, once.
    up(&ws, None).expect(0);
    let screen = typed_ahead(&c, b"dev\nn\n");
    assert_eq!(
        screen
            .matches("The kubeconfig keeps the cluster, user and context that eks merged into it")
            .count(),
        1,
        "{screen}"
    );
    assert!(
        screen.contains("--target eks --prune-kubeconfig` removes them"),
        "{screen}"
    );
    assert_eq!(names(&yaml(&file), "contexts").len(), 1, "a no removed the context");

    // At a terminal with --yes: nothing asked at all; what stays is said, with the flag.
    up(&ws, None).expect(0);
    let c = ws.command(
        &[
            "destroy", "-p", "aws", "-s", "dev", "--target", "eks", "--output", "plain", "--yes",
        ],
        &[("TERM", "xterm")],
    );
    let out = crate::support::at_terminal(&c, Path::new("/dev/null"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(!screen.contains("remove its cluster, user and context"), "{screen}");
    assert!(
        screen.contains("The kubeconfig keeps the cluster, user and context that eks merged into it")
            && screen.contains("--prune-kubeconfig` removes them"),
        "{screen}"
    );
    assert_eq!(names(&yaml(&file), "contexts"), ["eks-dev"]);
}

#[test]
fn the_kubeconfig_provider_leaves_the_users_file_alone() {
    let ws = Ws::configured("kubeconfig");
    ws.up("kubeconfig", &["--target", "kubeconfig"], &[]).expect(0);
    assert!(!home(&ws).join(".kube").exists());
}

#[requires("kubectl")]
#[test]
fn a_merge_loses_nothing_kubectl_writes_at_the_same_time() {
    if crate::support::tool("kubectl").is_none() {
        return;
    }
    let ws = Ws::configured("aws");
    let file = existing_kubeconfig(&ws);
    // kubectl adds contexts while the runner merges its cluster again and again; kubectl takes
    // `<file>.lock` and gives up when it is held, so count what it says it wrote.
    let writer = {
        let file = file.clone();
        std::thread::spawn(move || {
            let mut written = Vec::new();
            for i in 0..60 {
                let name = format!("ctx-{i}");
                let ok = Command::new("kubectl")
                    .args(["config", "set-context", &name, "--cluster=other", "--kubeconfig"])
                    .arg(&file)
                    .output()
                    .is_ok_and(|o| o.status.success());
                if ok {
                    written.push(name);
                }
            }
            written
        })
    };
    for _ in 0..4 {
        up(&ws, None).expect(0);
    }
    let written = writer.join().unwrap();
    assert!(!written.is_empty(), "kubectl never wrote");
    let contexts = names(&yaml(&file), "contexts");
    for name in &written {
        assert!(contexts.contains(name), "{name} was lost: {contexts:?}");
    }
    assert!(contexts.contains(&"eks-dev".to_string()) && contexts.contains(&"other".to_string()));
    assert!(
        !PathBuf::from(format!("{}.lock", file.display())).exists(),
        "the lock stayed"
    );
}

#[test]
fn with_several_kubeconfig_paths_the_entry_goes_where_kubectl_would_put_it() {
    let ws = Ws::configured("aws");
    let a = ws.path().join("a/config");
    let b = ws.path().join("b/config");
    // None exists: the last path, as kubectl does.
    let list = format!("{}:{}", a.display(), b.display());
    up(&ws, Some(&list)).expect(0);
    assert!(b.exists() && !a.exists());
    // The first that exists, when none holds the cluster yet.
    std::fs::remove_file(&b).unwrap();
    std::fs::create_dir_all(a.parent().unwrap()).unwrap();
    let other_only = EXISTING.replace("- name: eks-dev\n  cluster:\n    server: https://old.example\n", "");
    std::fs::write(&a, &other_only).unwrap();
    std::fs::create_dir_all(b.parent().unwrap()).unwrap();
    std::fs::write(
        &b,
        "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
    )
    .unwrap();
    up(&ws, Some(&format!("{}:{}", b.display(), a.display()))).expect(0);
    assert!(names(&yaml(&b), "contexts").contains(&"eks-dev".to_string()));
    // The one that holds the cluster, wherever it is in the list.
    up(&ws, Some(&format!("{}:{}", a.display(), b.display()))).expect(0);
    assert!(!names(&yaml(&a), "contexts").contains(&"eks-dev".to_string()));
}

#[test]
fn a_symlinked_kubeconfig_is_written_through_and_keeps_its_mode() {
    let ws = Ws::configured("aws");
    let real = ws.path().join("dotfiles/kube-config");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, EXISTING).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = home(&ws).join(".kube/config");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    up(&ws, None).expect(0);
    assert!(
        std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
        "the link was replaced"
    );
    assert_eq!(yaml(&real)["current-context"], "eks-dev");
    assert_eq!(mode(&real), 0o640);
}

#[test]
fn a_lock_left_by_a_runner_killed_mid_merge_is_removed_not_waited_for() {
    let ws = Ws::configured("aws");
    let file = home(&ws).join(".kube/config");
    let lock = PathBuf::from(format!("{}.lock", file.display()));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    // A runner of this host that no longer runs, as a SIGKILL mid-merge leaves it.
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let host = nix::unistd::gethostname().unwrap().to_string_lossy().into_owned();
    std::fs::write(&lock, format!("runner pid {pid} on {host}\n")).unwrap();
    // Waited for, it would fail the hook after 30 s.
    let run = up(&ws, None).expect(0);
    assert!(
        run.stderr.contains(&format!(
            "removed {}, left by runner pid {pid}, which no longer runs",
            lock.display()
        )),
        "{}",
        run.stderr
    );
    assert!(names(&yaml(&file), "contexts").contains(&"eks-dev".to_string()));
    assert!(!lock.exists(), "the lock stayed");
}
