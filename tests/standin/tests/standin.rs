//! The stand-in, driven as the runner drives the real CLI: every command it imitates, the file
//! backend after each, secrets never in plain text, stack references, locks, signals, switches.
#![allow(clippy::print_stderr, unreachable_pub)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const SECRET: &str = "Sup3r-S3cret-Value!";

struct Env {
    dir: tempfile::TempDir,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    #[track_caller]
    fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "exit {}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    fn code(self, code: i32) -> Self {
        assert_eq!(self.code, code, "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    #[track_caller]
    fn stderr_has(self, text: &str) -> Self {
        assert!(self.stderr.contains(text), "no {text:?} in stderr:\n{}", self.stderr);
        self
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

impl From<Output> for Out {
    fn from(o: Output) -> Self {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

const VPC: &str = r"name: vpc
runtime: yaml
description: a network
config:
  cidr:
    type: string
    default: 10.0.0.0/16
  size:
    type: integer
    default: 3
resources:
  main:
    type: aws:ec2:Vpc
    properties:
      cidrBlock: ${cidr}
      tags:
        Name: vpc-${pulumi.stack}
outputs:
  vpc:
    id: ${main.id}
    cidr: ${main.cidrBlock}
  project: ${pulumi.project}
  size: ${size}
  password: ${db:password}
";

const EKS: &str = r#"name: eks
runtime: yaml
resources:
  vpc:
    type: pulumi:pulumi:StackReference
    properties:
      name: ${pulumi.organization}/vpc/${pulumi.stack}
  cluster:
    type: eks:index:Cluster
    properties:
      vpcId: ${vpc.outputs["vpc"]["id"]}
outputs:
  cluster_name: eks-${pulumi.stack}
  vpc_id: ${cluster.vpcId}
  copied_password: ${vpc.outputs["password"]}
"#;

impl Env {
    fn new() -> Self {
        let e = Env {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(e.state()).unwrap();
        e.project("vpc", VPC);
        e.project("eks", EKS);
        e
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn state(&self) -> PathBuf {
        self.root().join("state")
    }

    fn project(&self, name: &str, program: &str) {
        let d = self.root().join("projects").join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("Pulumi.yaml"), program).unwrap();
    }

    fn shared_config(&self) -> String {
        self.root().join("Pulumi.dev.yaml").display().to_string()
    }

    fn cmd(&self, project: &str, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pulumi"));
        c.args(args)
            .current_dir(self.root().join("projects").join(project))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root())
            .env("PULUMI_HOME", self.root().join("home"))
            .env("PULUMI_BACKEND_URL", format!("file://{}", self.state().display()))
            .env("PULUMI_CONFIG_PASSPHRASE", "correct horse")
            .env("PULUMI_STANDIN_KDF_ITERATIONS", "1000")
            .env("PULUMI_STANDIN_LOG", self.root().join("invocations.jsonl"))
            .stdin(Stdio::null());
        c
    }

    fn run(&self, project: &str, args: &[&str]) -> Out {
        self.cmd(project, args).output().unwrap().into()
    }

    fn run_with(&self, project: &str, args: &[&str], env: &[(&str, &str)]) -> Out {
        let mut c = self.cmd(project, args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap().into()
    }

    fn spawn_with(&self, project: &str, args: &[&str], env: &[(&str, &str)]) -> Child {
        let mut c = self.cmd(project, args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    }

    /// Creates the stack and stores the secret in the shared config file.
    fn init(&self, project: &str) {
        let created = self
            .run(project, &["stack", "select", "--create", "--stack", "dev"])
            .ok();
        assert!(created.stderr.contains("Created stack 'dev'"), "{}", created.stderr);
    }

    fn set_secret(&self, project: &str) {
        let mut c = self.cmd(
            project,
            &[
                "config",
                "set",
                "--secret",
                "db:password",
                "--stack",
                "dev",
                "--config-file",
            ],
        );
        c.arg(self.shared_config())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{SECRET}\n").as_bytes())
            .unwrap();
        Out::from(child.wait_with_output().unwrap()).ok();
    }

    fn up(&self, project: &str) -> Out {
        let cfg = self.shared_config();
        self.run(
            project,
            &[
                "up",
                "--yes",
                "--skip-preview",
                "--non-interactive",
                "--stack",
                "dev",
                "--config-file",
                &cfg,
            ],
        )
    }

    fn files(&self) -> Vec<String> {
        let mut out = Vec::new();
        walk(self.root(), self.root(), &mut out);
        out.sort();
        out
    }

    /// No file under the temporary root holds the secret in plain text.
    #[track_caller]
    fn assert_no_plain_secret(&self) {
        let mut files = Vec::new();
        walk(self.root(), self.root(), &mut files);
        for f in files {
            let text = std::fs::read(self.root().join(&f)).unwrap();
            assert!(
                !String::from_utf8_lossy(&text).contains(SECRET),
                "{f} holds the secret in plain text"
            );
        }
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(root, &p, out);
        } else {
            out.push(p.strip_prefix(root).unwrap().display().to_string());
        }
    }
}

/// The engine events of an event log, one per line.
fn event_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// How a child process ended, once it has (within 20 s, else `what` went wrong).
fn ended(mut child: Child, what: &str) -> Out {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap().into()
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn version_whoami_and_login() {
    let e = Env::new();
    assert_eq!(e.run("vpc", &["version"]).ok().stdout, "v3.259.0\n");
    let who = e.run("vpc", &["whoami"]).ok();
    assert!(!who.stdout.trim().is_empty());
    let url = format!("file://{}", e.state().display());
    let login = e.run("vpc", &["login", &url]).ok();
    assert!(login.stdout.starts_with("Logged in to "), "{}", login.stdout);
    assert!(login.stdout.trim_end().ends_with(&format!("({url})")));
    let creds: Value =
        serde_json::from_str(&std::fs::read_to_string(e.root().join("home/credentials.json")).unwrap()).unwrap();
    assert_eq!(creds["current"], url);
    // A file backend directory must exist.
    e.run("vpc", &["login", "file:///does/not/exist"])
        .code(1)
        .stderr_has("unable to open state directory \"file:///does/not/exist\"");
}

#[test]
fn stack_select_create_init_and_the_backend_layout() {
    let e = Env::new();
    e.run("vpc", &["stack", "select", "--stack", "dev"])
        .code(6)
        .stderr_has("error: no stack named 'dev' found");
    e.init("vpc");
    let files = e.files();
    for f in [
        "state/.pulumi/meta.yaml",
        "state/.pulumi/stacks/vpc/dev.json",
        "projects/vpc/Pulumi.dev.yaml",
    ] {
        assert!(files.contains(&f.to_string()), "{f} missing: {files:#?}");
    }
    assert_eq!(
        std::fs::read_to_string(e.state().join(".pulumi/meta.yaml")).unwrap(),
        "version: 1\n"
    );
    let cp: Value =
        serde_json::from_str(&std::fs::read_to_string(e.state().join(".pulumi/stacks/vpc/dev.json")).unwrap()).unwrap();
    assert_eq!(cp["version"], 3);
    assert_eq!(cp["checkpoint"]["stack"], "organization/vpc/dev");
    assert_eq!(cp["checkpoint"]["latest"]["secrets_providers"]["type"], "passphrase");
    assert!(cp["checkpoint"]["latest"].get("resources").is_none());
    let local = std::fs::read_to_string(e.root().join("projects/vpc/Pulumi.dev.yaml")).unwrap();
    assert!(local.starts_with("encryptionsalt: v1:"), "{local}");
    assert_eq!(
        cp["checkpoint"]["latest"]["secrets_providers"]["state"]["salt"]
            .as_str()
            .unwrap(),
        local.trim().trim_start_matches("encryptionsalt: ")
    );

    // Selecting an existing stack prints nothing; init of an existing one fails.
    let again = e.run("vpc", &["stack", "select", "--create", "--stack", "dev"]).ok();
    assert!(again.stderr.is_empty() && again.stdout.is_empty());
    e.run("vpc", &["stack", "init", "dev"])
        .code(1)
        .stderr_has("stack 'organization/vpc/dev' already exists");
    e.run("vpc", &["stack", "init", "bad/na me"]).code(1);
    let ls = e.run("vpc", &["stack", "ls", "--json"]).ok().json();
    assert_eq!(ls[0]["name"], "dev");
    assert_eq!(ls[0]["current"], true);
    assert_eq!(ls[0]["resourceCount"], 0);
}

/// `CreateStack` holds the stack's lock (`pkg/backend/diy/backend.go`): a lock left behind
/// refuses the creation, and nothing is written, not even the new salt.
#[test]
fn creating_a_stack_takes_its_lock_and_writes_nothing_when_it_is_held() {
    let e = Env::new();
    let locks = e.state().join(".pulumi/locks/organization/vpc/dev");
    std::fs::create_dir_all(&locks).unwrap();
    let held = locks.join("left.json");
    let lock = r#"{"pid":1,"username":"ann","hostname":"ci-7","timestamp":"2026-11-23T10:00:00Z"}"#;
    std::fs::write(&held, lock).unwrap();
    e.run("vpc", &["stack", "select", "--create", "--stack", "dev"])
        .code(1)
        .stderr_has("error: could not create stack: the stack is currently locked by 1 lock(s).")
        .stderr_has("/left.json?no_tmp_dir=true: created by ann@ci-7 (pid 1) at 2026-11-23T10:00:00Z");
    assert!(!e.state().join(".pulumi/stacks/vpc/dev.json").exists());
    assert!(!e.root().join("projects/vpc/Pulumi.dev.yaml").exists());

    std::fs::remove_file(&held).unwrap();
    e.init("vpc");
    assert!(
        std::fs::read_dir(&locks).unwrap().next().is_none(),
        "the creation's own lock was left behind"
    );
}

#[test]
fn a_missing_passphrase_fails_like_the_real_cli() {
    let e = Env::new();
    let mut c = e.cmd("vpc", &["stack", "select", "--create", "--stack", "dev"]);
    c.env_remove("PULUMI_CONFIG_PASSPHRASE");
    let out: Out = c.output().unwrap().into();
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains(
        "error: could not create secrets manager for new stack: passphrase must be set with PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE environment variables"
    ), "{}", out.stderr);
    // The file variant works; a wrong passphrase is refused.
    std::fs::write(e.root().join("pass"), "correct horse\n").unwrap();
    let mut c = e.cmd("vpc", &["stack", "select", "--create", "--stack", "dev"]);
    c.env_remove("PULUMI_CONFIG_PASSPHRASE")
        .env("PULUMI_CONFIG_PASSPHRASE_FILE", e.root().join("pass"));
    Out::from(c.output().unwrap()).ok();
    let cfg = e.root().join("projects/vpc/Pulumi.dev.yaml").display().to_string();
    e.run_with(
        "vpc",
        &["up", "--yes", "-s", "dev", "--config-file", &cfg],
        &[("PULUMI_CONFIG_PASSPHRASE", "wrong")],
    )
    .code(1)
    .stderr_has("incorrect passphrase");
}

#[test]
fn config_set_get_and_secrets_are_encrypted() {
    let e = Env::new();
    e.init("vpc");
    let cfg = e.shared_config();
    std::fs::write(&cfg, "# shared by every project\nconfig:\n  aws:region: us-east-1\n").unwrap();
    e.run(
        "vpc",
        &[
            "config",
            "set",
            "aws:profile",
            "dev-admin",
            "--stack",
            "dev",
            "--config-file",
            &cfg,
        ],
    )
    .ok();
    e.set_secret("vpc");
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(text.contains("# shared by every project"), "comments are kept:\n{text}");
    assert!(text.contains("  aws:profile: dev-admin"));
    assert!(text.contains("  db:password:\n    secure: v1:"), "{text}");
    // The new key goes after the others, as the real CLI's comment-keeping edit adds it.
    assert!(
        text.trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("encryptionsalt: v1:"),
        "{text}"
    );
    e.assert_no_plain_secret();

    let get = |key: &str| e.run("vpc", &["config", "get", key, "--stack", "dev", "--config-file", &cfg]);
    assert_eq!(get("aws:region").ok().stdout, "us-east-1\n");
    let mut plain = e.cmd(
        "vpc",
        &["config", "get", "aws:region", "-s", "dev", "--config-file", &cfg],
    );
    plain.env_remove("PULUMI_CONFIG_PASSPHRASE");
    assert_eq!(
        Out::from(plain.output().unwrap()).ok().stdout,
        "us-east-1\n",
        "plain keys need no passphrase"
    );
    assert_eq!(get("db:password").ok().stdout, format!("{SECRET}\n"));
    assert_eq!(get("cidr").ok().stdout, "10.0.0.0/16\n", "project defaults count");
    get("nope")
        .code(1)
        .stderr_has("error: configuration key 'nope' not found for stack 'dev'");
    get("aws:nope")
        .code(1)
        .stderr_has("configuration key 'aws:nope' not found for stack 'dev'");
    let json = e
        .run(
            "vpc",
            &[
                "config",
                "get",
                "db:password",
                "--json",
                "-s",
                "dev",
                "--config-file",
                &cfg,
            ],
        )
        .ok()
        .json();
    assert_eq!(json["secret"], true);
    let all = e
        .run("vpc", &["config", "--json", "-s", "dev", "--config-file", &cfg])
        .ok()
        .json();
    assert_eq!(all["db:password"], serde_json::json!({"secret": true}));
    assert_eq!(all["aws:region"]["value"], "us-east-1");

    // A secret-looking plain value is refused, as the real plaintext guard does.
    e.run(
        "vpc",
        &[
            "config",
            "set",
            "app:api_token",
            "Abcdef12345!",
            "-s",
            "dev",
            "--config-file",
            &cfg,
        ],
    )
    .code(1)
    .stderr
    .contains("looks like a secret; rerun with --secret");
}

#[test]
fn up_writes_state_outputs_and_history_and_stack_references_flow() {
    let e = Env::new();
    assert_eq!(
        e.run("vpc", &["stack", "output", "--json", "-s", "dev"]).code(6).code,
        6
    );
    e.init("vpc");
    assert_eq!(
        e.run("vpc", &["stack", "output", "--json", "-s", "dev"]).ok().stdout,
        "{}\n"
    );
    e.set_secret("vpc");
    let up = e.up("vpc").ok();
    assert!(up.stdout.starts_with("Updating (dev):\n"), "{}", up.stdout);
    assert!(up.stdout.contains("+ 2 created"), "{}", up.stdout);
    assert!(up.stdout.contains("Duration: "));
    assert!(!up.stdout.contains(SECRET));

    let out = e.run("vpc", &["stack", "output", "--json", "-s", "dev"]).ok().json();
    assert_eq!(out["password"], "[secret]");
    assert_eq!(out["project"], "vpc");
    assert_eq!(out["size"], 3);
    assert_eq!(out["vpc"]["cidr"], "10.0.0.0/16");
    let shown = e
        .run("vpc", &["stack", "output", "--json", "--show-secrets", "-s", "dev"])
        .ok()
        .json();
    assert_eq!(shown["password"], SECRET);
    assert_eq!(
        e.run("vpc", &["stack", "output", "project", "-s", "dev"]).ok().stdout,
        "vpc\n"
    );

    let files = e.files();
    for prefix in [
        "state/.pulumi/history/vpc/dev/dev-",
        "state/.pulumi/backups/vpc/dev/dev.",
        "state/.pulumi/stacks/vpc/dev.json.bak",
    ] {
        assert!(
            files.iter().any(|f| f.starts_with(prefix)),
            "nothing at {prefix}*: {files:#?}"
        );
    }
    assert!(files.iter().all(|f| !f.contains("locks/")), "a lock was left behind");
    e.assert_no_plain_secret();

    // The downstream project reads the upstream outputs, secrets still secret.
    e.init("eks");
    e.up("eks").ok();
    let eks = e
        .run("eks", &["stack", "output", "--json", "--show-secrets", "-s", "dev"])
        .ok()
        .json();
    assert_eq!(eks["vpc_id"], out["vpc"]["id"]);
    assert_eq!(eks["cluster_name"], "eks-dev");
    assert_eq!(eks["copied_password"], SECRET);
    let hidden = e.run("eks", &["stack", "output", "--json", "-s", "dev"]).ok().json();
    assert_eq!(hidden["copied_password"], "[secret]");
    e.assert_no_plain_secret();

    // A second up changes nothing.
    let again = e.up("vpc").ok();
    assert!(again.stdout.contains("2 unchanged"), "{}", again.stdout);
}

#[test]
fn a_stack_reference_to_a_missing_stack_or_output_fails() {
    let e = Env::new();
    e.init("eks");
    let up = e.up("eks").code(1);
    assert!(
        up.stderr.contains("unknown stack \"organization/vpc/dev\""),
        "{}",
        up.stderr
    );
    e.init("vpc");
    let up = e.up("eks").code(1);
    assert!(up.stderr.contains("has no output [\"vpc\"]"), "{}", up.stderr);
}

#[test]
fn non_interactive_operations_need_yes() {
    let e = Env::new();
    e.init("vpc");
    let msg = "error: --yes or --skip-preview or --preview-only must be passed in to proceed when running in non-interactive mode";
    e.run("vpc", &["up", "-s", "dev", "--non-interactive"])
        .code(2)
        .stderr_has(msg);
    assert!(e.run("vpc", &["destroy", "-s", "dev"]).code(2).stderr.contains(msg));
    assert!(e.run("vpc", &["refresh", "-s", "dev"]).code(1).stderr.contains(msg));
    e.run("vpc", &["up", "-s", "dev", "--frobnicate"])
        .code(1)
        .stderr_has("unknown flag: --frobnicate");
    // --event-log exists only with PULUMI_DEBUG_COMMANDS.
    let log = e.root().join("events.jsonl").display().to_string();
    e.run("vpc", &["preview", "-s", "dev", "--event-log", &log])
        .code(1)
        .stderr_has("unknown flag: --event-log");
    e.run_with(
        "vpc",
        &["preview", "-s", "dev", "--event-log", &log],
        &[("PULUMI_DEBUG_COMMANDS", "yes")],
    )
    .code(1)
    .stderr_has("unknown flag: --event-log");
}

#[test]
fn flags_and_arguments_are_refused_as_cobra_and_the_cli_refuse_them() {
    let e = Env::new();
    e.init("vpc");
    e.set_secret("vpc");
    let cfg = e.shared_config();
    let up = |extra: &[&str]| {
        let mut args = vec!["up", "-s", "dev", "--config-file", &cfg];
        args.extend(extra);
        e.run("vpc", &args)
    };
    up(&["--yes=sure"]).code(1).stderr_has(
        "invalid argument \"sure\" for \"-y, --yes\" flag: strconv.ParseBool: parsing \"sure\": invalid syntax",
    );
    up(&["--yes", "--refresh=yes"])
        .code(1)
        .stderr_has("unable to determine value for --refresh");
    up(&["--yes", "one", "two"])
        .code(1)
        .stderr_has("accepts at most 1 arg(s), received 2");
    e.run("vpc", &["stack", "ls", "extra"])
        .code(1)
        .stderr_has("accepts 0 arg(s), received 1");
    e.run("vpc", &["config", "get", "-s", "dev"])
        .code(1)
        .stderr_has("accepts 1 arg(s), received 0");
    e.run("vpc", &["config", "set", "-s", "dev"])
        .code(1)
        .stderr_has("requires at least 1 arg(s), only received 0");
    // --show-secrets is a flag of up and preview only.
    e.run("vpc", &["refresh", "-s", "dev", "--yes", "--show-secrets"])
        .code(1)
        .stderr_has("unknown flag: --show-secrets");
    e.run("vpc", &["refresh", "-s", "dev", "--preview-only", "--yes"])
        .code(1)
        .stderr_has("--yes and --preview-only cannot be used together");
    e.run("vpc", &["destroy", "-s", "dev", "--preview-only", "--skip-preview"])
        .code(1)
        .stderr_has("--skip-preview and --preview-only cannot be used together");
    up(&["--yes=false", "--skip-preview=1"]).ok();
    // A real command it does not imitate says so; one pulumi does not have is cobra's error.
    e.run("vpc", &["stack", "tag", "ls", "-s", "dev"])
        .code(1)
        .stderr_has("the pulumi stand-in does not imitate `pulumi stack tag`");
    e.run("vpc", &["frobnicate"])
        .code(1)
        .stderr_has("unknown command \"frobnicate\" for \"pulumi\"");
}

#[test]
fn any_file_in_a_stacks_lock_directory_is_a_lock() {
    let e = Env::new();
    e.init("vpc");
    e.set_secret("vpc");
    let locks = e.state().join(".pulumi/locks/organization/vpc/dev");
    std::fs::create_dir_all(&locks).unwrap();
    // Not named *.json, written by another host in its own zone: still a lock, its time as written.
    std::fs::write(
        locks.join("left-over"),
        r#"{"pid":4242,"username":"ann","hostname":"build-7","timestamp":"2026-11-23T10:00:00.123456+01:00"}"#,
    )
    .unwrap();
    let refused = e.up("vpc").code(1);
    assert!(
        refused.stderr.contains("the stack is currently locked by 1 lock(s)"),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("left-over?no_tmp_dir=true: created by ann@build-7 (pid 4242) at 2026-11-23T10:00:00+01:00"),
        "{}",
        refused.stderr
    );
    // One that is not a lock at all fails the check with the JSON reader's words.
    std::fs::write(locks.join("left-over"), "").unwrap();
    e.up("vpc").code(1).stderr_has("unexpected end of JSON input");
    // `cancel` removes every file there, the stack named as its argument or with --stack.
    std::fs::write(locks.join("left-over"), "").unwrap();
    e.run("vpc", &["cancel", "dev", "--stack", "dev", "--yes"])
        .code(1)
        .stderr_has("only one of --stack or argument stack name may be specified, not both");
    e.run("vpc", &["cancel", "dev", "--yes"]).ok();
    assert!(locks.is_dir() && std::fs::read_dir(&locks).unwrap().next().is_none());
    e.up("vpc").ok();
    e.run("vpc", &["stack", "list", "--json"]).ok();
}

/// The file backend's blob store (gocloud's fileblob) writes `<file>.attrs` beside each file and
/// hides them when it lists a directory (`ListPaged`), and deletes a file's with it (`Delete`):
/// no `.attrs` is a lock, a stack or a history entry.
#[test]
fn an_attrs_file_is_hidden_from_the_backends_listings_and_deleted_with_its_file() {
    let e = Env::new();
    e.init("vpc");
    e.set_secret("vpc");
    // As fileblob writes them (`xattrs`, encoded by Go's `json.Encoder`).
    let attrs = r#"{"user.cache_control":"","user.content_disposition":"","user.content_encoding":"","user.content_language":"","user.content_type":"application/octet-stream","user.metadata":null,"md5":"1B2M2Y8AsgTpgAmY7PhCfg=="}"#;
    let locks = e.state().join(".pulumi/locks/organization/vpc/dev");
    std::fs::create_dir_all(&locks).unwrap();
    // One whose lock is gone: no lock.
    std::fs::write(locks.join("gone.json.attrs"), format!("{attrs}\n")).unwrap();
    e.up("vpc").ok();
    // A lock with its attributes: one lock.
    std::fs::write(
        locks.join("held.json"),
        r#"{"pid":4242,"username":"ann","hostname":"build-7","timestamp":"2026-11-23T10:00:00Z"}"#,
    )
    .unwrap();
    std::fs::write(locks.join("held.json.attrs"), format!("{attrs}\n")).unwrap();
    let refused = e.up("vpc").code(1);
    assert!(
        refused.stderr.contains("the stack is currently locked by 1 lock(s)") && !refused.stderr.contains(".attrs"),
        "{}",
        refused.stderr
    );
    // `cancel` deletes each lock it lists with its attributes; the orphan, which it does not list, stays.
    e.run("vpc", &["cancel", "--yes"]).ok();
    let left: Vec<String> = std::fs::read_dir(&locks)
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["gone.json.attrs"]);
    // Beside a stack's checkpoint and its history: neither a stack nor an update.
    let stacks = e.state().join(".pulumi/stacks/vpc");
    std::fs::write(stacks.join("dev.json.attrs"), format!("{attrs}\n")).unwrap();
    let ls = e.run("vpc", &["stack", "ls", "--json"]).ok().json();
    assert_eq!(ls.as_array().map(Vec::len), Some(1), "{ls}");
    let history = e.state().join(".pulumi/history/vpc/dev");
    for entry in std::fs::read_dir(&history).unwrap() {
        let mut path = entry.unwrap().path().into_os_string();
        path.push(".attrs");
        std::fs::write(path, format!("{attrs}\n")).unwrap();
    }
    let updates = e.run("vpc", &["stack", "history", "--json"]).ok().json();
    assert_eq!(updates.as_array().map(Vec::len), Some(1), "{updates}");
}

#[test]
fn preview_json_digest_and_event_log() {
    let e = Env::new();
    e.init("vpc");
    e.set_secret("vpc");
    let cfg = e.shared_config();
    let before = e.files();
    let preview = e
        .run("vpc", &["preview", "--json", "-s", "dev", "--config-file", &cfg])
        .ok();
    assert!(
        preview.stdout.starts_with("{\n    \""),
        "4-space indent: {}",
        preview.stdout
    );
    let digest = preview.json();
    assert_eq!(digest["changeSummary"]["create"], 2);
    assert!(digest["duration"].as_u64().unwrap() > 0);
    assert_eq!(digest["config"]["db:password"], "[secret]");
    assert!(digest.get("outputs").is_none());
    assert_eq!(digest["steps"][0]["op"], "create");
    assert_eq!(before, e.files(), "preview writes nothing");

    let log = e.root().join("events.jsonl");
    let log_arg = log.display().to_string();
    e.run_with(
        "vpc",
        &[
            "up",
            "--yes",
            "--skip-preview",
            "-s",
            "dev",
            "--config-file",
            &cfg,
            "--event-log",
            &log_arg,
        ],
        &[("PULUMI_DEBUG_COMMANDS", "true")],
    )
    .ok();
    let events = event_log(&log);
    assert!(events[0].get("preludeEvent").is_some());
    assert!(events.last().unwrap().get("cancelEvent").is_some());
    let summary = events.iter().find_map(|e| e.get("summaryEvent")).unwrap();
    assert_eq!(summary["resourceChanges"]["create"], 2);
    assert_eq!(summary["result"], "succeeded");
    for (k, ev) in events.iter().enumerate() {
        assert_eq!(ev["sequence"], k);
    }
    assert!(!std::fs::read_to_string(&log).unwrap().contains(SECRET));
    // The root stack's outputs, each secret marked by the signature with a blinded ciphertext.
    let root = events
        .iter()
        .filter_map(|e| e.get("resOutputsEvent"))
        .find(|e| e["metadata"]["type"] == "pulumi:pulumi:Stack")
        .unwrap();
    let outputs = &root["metadata"]["new"]["outputs"];
    assert_eq!(
        outputs["password"],
        serde_json::json!({"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext": "[secret]"})
    );
    assert_eq!(outputs["project"], "vpc");
}

#[test]
fn expect_no_changes_fails_with_exit_7_once_the_operation_had_changes() {
    let e = Env::new();
    e.init("vpc");
    e.set_secret("vpc");
    let cfg = e.shared_config();
    let preview = |extra: &[&str]| {
        let mut args = vec!["preview", "--expect-no-changes", "-s", "dev", "--config-file", &cfg];
        args.extend(extra);
        e.run("vpc", &args)
    };
    // Nothing deployed: the preview would create; it is shown, then refused.
    let first = preview(&[]).code(7);
    assert!(first.stdout.contains("+ 2 to create"), "{}", first.stdout);
    assert!(
        first
            .stderr
            .contains("error: no changes were expected for preview but changes were proposed"),
        "{}",
        first.stderr
    );
    // The same flag on up: the update is applied, then refused.
    let up = e
        .run(
            "vpc",
            &["up", "--yes", "--expect-no-changes", "-s", "dev", "--config-file", &cfg],
        )
        .code(7);
    assert!(
        up.stderr
            .contains("error: no changes were expected for update but changes were proposed"),
        "{}",
        up.stderr
    );
    // Deployed and unchanged: fine.
    preview(&[]).ok();
    e.run(
        "vpc",
        &["up", "--yes", "--expect-no-changes", "-s", "dev", "--config-file", &cfg],
    )
    .ok();
    e.run(
        "vpc",
        &[
            "refresh",
            "--yes",
            "--expect-no-changes",
            "-s",
            "dev",
            "--config-file",
            &cfg,
        ],
    )
    .ok();
}

#[test]
fn refresh_and_destroy() {
    let e = Env::new();
    e.init("vpc");
    let refresh = e.run("vpc", &["refresh", "--yes", "-s", "dev"]).ok();
    assert!(
        refresh.stdout.contains("Refreshing (dev):"),
        "never deployed is not an error: {}",
        refresh.stdout
    );
    e.set_secret("vpc");
    e.up("vpc").ok();
    let refresh = e.run("vpc", &["refresh", "--yes", "--skip-preview", "-s", "dev"]).ok();
    assert!(refresh.stdout.contains("2 unchanged"), "{}", refresh.stdout);
    let destroy = e.run("vpc", &["destroy", "--yes", "--skip-preview", "-s", "dev"]).ok();
    assert!(destroy.stdout.contains("- 2 deleted"), "{}", destroy.stdout);
    assert!(
        destroy
            .stdout
            .contains("If you want to remove the stack completely, run `pulumi stack rm dev`.")
    );
    assert_eq!(
        e.run("vpc", &["stack", "output", "--json", "-s", "dev"]).ok().stdout,
        "{}\n"
    );
    e.run("vpc", &["stack", "rm", "dev"])
        .code(1)
        .stderr_has("non-interactive mode requires --yes flag");
    e.run("vpc", &["stack", "rm", "--yes", "dev"]).ok();
    e.run("vpc", &["stack", "select", "dev"]).code(6);
}

/// A resource changed by hand (`PULUMI_STANDIN_DRIFT`): a plain preview compares the program
/// with the state and sees nothing; `preview --refresh` reads the cloud first and sees the
/// update (exit 7 with `--expect-no-changes`); `refresh` records what it read, its events with
/// the `refresh` op and its summary with what it found; `up` then puts the program back.
#[test]
fn a_change_made_outside_pulumi_shows_only_through_a_refresh() {
    let e = Env::new();
    e.init("vpc");
    e.set_secret("vpc");
    e.up("vpc").ok();
    let cfg = e.shared_config();
    let by_hand = [("PULUMI_STANDIN_DRIFT", "vpc:main")];
    let check = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["preview", "-s", "dev", "--config-file", &cfg, "--expect-no-changes"];
        args.extend(extra);
        e.run_with("vpc", &args, env)
    };
    check(&[], &by_hand).ok();
    check(&["--refresh"], &by_hand)
        .code(7)
        .stderr_has("no changes were expected for preview but changes were proposed");
    check(&["--refresh"], &[("PULUMI_STANDIN_DRIFT", "vpc:other")]).ok();
    // `options.refresh: always` in Pulumi.yaml refreshes without the flag; `--refresh=false`
    // still turns it off.
    let program = std::fs::read_to_string(e.root().join("projects/vpc/Pulumi.yaml")).unwrap();
    e.project("vpc", &format!("{program}options:\n  refresh: always\n"));
    check(&[], &by_hand).code(7);
    check(&["--refresh=false"], &by_hand).ok();
    e.project("vpc", &program);

    let log = e.root().join("refresh.jsonl");
    let log_arg = log.display().to_string();
    let refresh = [
        "refresh",
        "--yes",
        "-s",
        "dev",
        "--config-file",
        &cfg,
        "--event-log",
        &log_arg,
    ];
    e.run_with("vpc", &refresh, &[by_hand[0], ("PULUMI_DEBUG_COMMANDS", "true")])
        .ok();
    let events = event_log(&log);
    let ops: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.get("resourcePreEvent"))
        .map(|e| &e["metadata"]["op"])
        .collect();
    assert_eq!(ops, ["refresh", "refresh"], "{events:?}");
    let summary = events.iter().find_map(|e| e.get("summaryEvent")).unwrap();
    assert_eq!(summary["resourceChanges"], serde_json::json!({"same": 1, "update": 1}));

    // The state now holds the change: a plain preview sees it, `up` undoes it.
    check(&[], &[]).code(7);
    e.up("vpc").ok();
    check(&[], &[]).ok();
}

#[test]
fn the_lock_refuses_a_second_update_of_the_same_stack_but_not_of_another_project() {
    let e = Env::new();
    e.init("vpc");
    e.init("eks");
    e.set_secret("vpc");
    e.up("vpc").ok();
    let cfg = e.shared_config();
    let args = ["up", "--yes", "--skip-preview", "-s", "dev", "--config-file", &cfg];
    let hang = [("PULUMI_STANDIN_HANG", "vpc")];
    let first = e.spawn_with("vpc", &args, &hang);
    let locks = e.state().join(".pulumi/locks/organization/vpc/dev");
    wait_for("the lock", || {
        std::fs::read_dir(&locks).is_ok_and(|mut d| d.next().is_some())
    });

    let second = e.up("vpc").code(1);
    assert!(
        second.stderr.contains("error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`."),
        "{}",
        second.stderr
    );
    assert!(
        second.stderr.contains(&format!("(pid {})", first.id())),
        "{}",
        second.stderr
    );

    // A refused update never opened its event log.
    let log = e.root().join("refused.jsonl");
    let log_arg = log.display().to_string();
    let with_log = [&args[..], &["--event-log", &log_arg]].concat();
    e.run_with("vpc", &with_log, &[("PULUMI_DEBUG_COMMANDS", "true")])
        .code(1)
        .stderr_has("the stack is currently locked");
    assert!(!log.exists());

    // Another project's stack is not locked; an event log that cannot be created is done without.
    let nowhere = e.root().join("no/such/dir/events.jsonl").display().to_string();
    e.run_with(
        "eks",
        &[
            "up",
            "--yes",
            "--skip-preview",
            "-s",
            "dev",
            "--config-file",
            &cfg,
            "--event-log",
            &nowhere,
        ],
        &[("PULUMI_DEBUG_COMMANDS", "true")],
    )
    .ok();

    // SIGINT: the real cancellation line, exit 8 (CancelledError), lock released.
    Command::new("kill")
        .args(["-INT", &first.id().to_string()])
        .status()
        .unwrap();
    let out = ended(first, "the stand-in ignored SIGINT");
    assert_eq!(out.code, 8, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("^C received; cancelling. If you would like to terminate immediately, press ^C again.")
    );
    assert!(out.stderr.contains("error: update cancelled"), "{}", out.stderr);
    assert!(
        std::fs::read_dir(&locks).map_or(true, |mut d| d.next().is_none()),
        "lock left behind"
    );
    e.up("vpc").ok();
}

/// SIGTERM twice, to an update whose cancellation takes long: the first asks it to cancel (the
/// SIGTERM wording), the second terminates it; either way it ends as cancelled (exit 8), with a
/// summary that says so, a failed history entry and its lock released.
#[test]
fn a_second_sigterm_terminates_an_update_and_releases_its_lock() {
    let e = Env::new();
    e.init("vpc");
    e.set_secret("vpc");
    e.up("vpc").ok();
    let cfg = e.shared_config();
    let log = e.root().join("up.jsonl");
    let log_arg = log.display().to_string();
    let args = [
        "up",
        "--yes",
        "--skip-preview",
        "-s",
        "dev",
        "--config-file",
        &cfg,
        "--event-log",
        &log_arg,
    ];
    let env = [
        ("PULUMI_STANDIN_HANG", "vpc"),
        ("PULUMI_STANDIN_SLOW_CANCEL", "vpc"),
        ("PULUMI_DEBUG_COMMANDS", "true"),
    ];
    let mut child = e.spawn_with("vpc", &args, &env);
    let locks = e.state().join(".pulumi/locks/organization/vpc/dev");
    wait_for("the lock", || {
        std::fs::read_dir(&locks).is_ok_and(|mut d| d.next().is_some())
    });
    let pid = child.id().to_string();
    let term = || {
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    };
    term();
    // Time for a wrong end to show: a cancellation that ended at the first SIGTERM would be
    // over in far less (the slow one takes seconds), and a still-running one proves nothing
    // sooner.
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "a slow cancellation ended at the first SIGTERM"
    );
    term();
    let out = ended(child, "the second SIGTERM did not end it");
    assert_eq!(out.code, 8, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("SIGTERM received; cancelling. If you would like to terminate immediately, send SIGTERM again."),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("SIGTERM received; terminating"), "{}", out.stdout);
    assert!(out.stderr.contains("error: update cancelled"), "{}", out.stderr);
    assert!(
        std::fs::read_dir(&locks).map_or(true, |mut d| d.next().is_none()),
        "lock left behind"
    );
    let events = event_log(&log);
    let summary = events.iter().find_map(|e| e.get("summaryEvent")).unwrap();
    assert_eq!(summary["result"], "canceled");
    assert!(events.last().unwrap().get("cancelEvent").is_some());
    // The history: the first update succeeded, the cancelled one failed.
    let dir = e.state().join(".pulumi/history/vpc/dev");
    let mut results: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".history.json"))
        .map(|p| {
            let info: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p.display().to_string(), info["result"].as_str().unwrap().to_string())
        })
        .collect();
    results.sort();
    let results: Vec<&str> = results.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(results, ["succeeded", "failed"]);
}

#[test]
fn switches_fail_delay_and_log_every_invocation() {
    let e = Env::new();
    e.init("vpc");
    e.set_secret("vpc");
    let cfg = e.shared_config();
    let failed = e.run_with(
        "vpc",
        &["up", "--yes", "--skip-preview", "-s", "dev", "--config-file", &cfg],
        &[("PULUMI_STANDIN_FAIL", "vpc:up")],
    );
    assert_eq!(failed.code, 1);
    assert!(
        failed.stdout.contains("error: injected failure for vpc (up)"),
        "{}",
        failed.stdout
    );
    assert_eq!(
        e.run("vpc", &["stack", "output", "--json", "-s", "dev"]).ok().stdout,
        "{}\n",
        "a failed up changes no outputs"
    );
    // The switch names the operation: destroy is not affected.
    e.run_with(
        "vpc",
        &["destroy", "--yes", "-s", "dev"],
        &[("PULUMI_STANDIN_FAIL", "vpc:up")],
    )
    .ok();

    let start = Instant::now();
    e.run_with(
        "vpc",
        &["up", "--yes", "--skip-preview", "-s", "dev", "--config-file", &cfg],
        &[("PULUMI_STANDIN_DELAY_MS", "other=1,vpc=300")],
    )
    .ok();
    assert!(start.elapsed() >= Duration::from_millis(300));

    let log = std::fs::read_to_string(e.root().join("invocations.jsonl")).unwrap();
    let lines: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = lines.last().unwrap();
    assert_eq!(last["argv"][0], "up");
    assert_eq!(last["exit"], 0);
    assert!(last["end"].as_f64().unwrap() - last["start"].as_f64().unwrap() >= 0.3);
    assert!(last["cwd"].as_str().unwrap().ends_with("projects/vpc"));
    assert_eq!(
        last["env"]["PULUMI_CONFIG_PASSPHRASE"], "<set>",
        "secrets are never logged"
    );
    assert!(!log.contains("correct horse") && !log.contains(SECRET));
    assert!(lines.iter().any(|l| l["exit"] == 1));
}

#[test]
fn config_set_and_get_with_path() {
    let e = Env::new();
    e.init("vpc");
    let cfg = e.shared_config();
    let set = |k: &str, v: &str| {
        e.run(
            "vpc",
            &["config", "set", "--path", k, v, "-s", "dev", "--config-file", &cfg],
        )
        .ok()
    };
    set("vpc:azs[0]", "us-east-1a");
    set("vpc:azs[1]", "us-east-1b");
    set("eks:nodes.min", "3");
    set("eks:nodes.spot", "true");
    let get = |k: &str| {
        e.run(
            "vpc",
            &["config", "get", "--path", k, "-s", "dev", "--config-file", &cfg],
        )
    };
    assert_eq!(get("vpc:azs[1]").ok().stdout, "us-east-1b\n");
    assert_eq!(get("eks:nodes.min").ok().stdout, "3\n");
    assert_eq!(get("eks:nodes.spot").ok().stdout, "true\n");
    get("eks:nodes.max")
        .code(1)
        .stderr_has("configuration key 'eks:nodes.max' not found");
    let all = e
        .run("vpc", &["config", "--json", "-s", "dev", "--config-file", &cfg])
        .ok()
        .json();
    assert_eq!(
        all["vpc:azs"]["objectValue"],
        serde_json::json!(["us-east-1a", "us-east-1b"])
    );
    assert_eq!(
        all["eks:nodes"]["objectValue"],
        serde_json::json!({"min": 3, "spot": true})
    );
}

/// A small schema in the layout `scripts/install-test-tools` exports (one entry a line).
const SCHEMA: &str = r#"{"schemaVersion":1,"pins":{"aws":"7.48.0"},"packages":{
"aws":{"source":"@pulumi/aws@7.48.0","version":"7.48.0","resources":{
"aws:ecr/repository:Repository":{"inputs":{"forceDelete":{"type":"boolean","required":false},"imageScanningConfiguration":{"type":{"ref":"aws:types/input#ecr.Scan"},"required":false},"tags":{"type":{"map":"string"},"required":false},"imageTagMutability":{"type":{"enum":["MUTABLE","IMMUTABLE"]},"required":false}},"outputs":{"repositoryUrl":"string","registryId":"string","imageScanningConfiguration":{"ref":"aws:types/output#ecr.Scan"}}},
"aws:iam/role:Role":{"inputs":{"assumeRolePolicy":{"type":"string","required":true},"description":{"type":"string","required":false}},"outputs":{"arn":"string","name":"string"}}},"functions":{
"aws:index/getCallerIdentity:getCallerIdentity":{"inputs":{"id":{"type":"string","required":false}},"outputs":{"accountId":"string","arn":"string"}}},"types":{
"aws:types/input#ecr.Scan":{"properties":{"scanOnPush":{"type":"boolean","required":true}}},
"aws:types/output#ecr.Scan":{"properties":{"scanOnPush":"boolean"}}}}
}}
"#;

impl Env {
    /// `pulumi preview` of `program` (project `p`), with the schema when `schema` is set.
    fn preview_program(&self, program: &str, schema: bool) -> Out {
        self.project("p", program);
        self.init("p");
        let path = self.root().join("schema.json");
        std::fs::write(&path, SCHEMA).unwrap();
        let path = path.display().to_string();
        let env: Vec<(&str, &str)> = if schema {
            vec![("PULUMI_STANDIN_SCHEMA", &path)]
        } else {
            vec![]
        };
        self.run_with("p", &["preview", "--non-interactive", "--stack", "dev"], &env)
    }
}

const REPOSITORY: &str = "name: p\nruntime: yaml\nresources:\n  repository:\n    type: aws:ecr/repository:Repository\n    properties:\n      forceDelete: true\n";

#[test]
fn with_the_sdk_schema_the_program_errors_the_engine_reports_fail_the_preview() {
    let cases: [(&str, &str, &[&str]); 8] = [
        (
            "name: p\nruntime: yaml\nresources:\n  bucket:\n    type: aws:s3/bukket:Bucket\n",
            "unknown type",
            &[
                "\u{1b}[31mError\u{1b}[0m: error resolving type of resource bucket: unable to find resource type \"aws:s3/bukket:Bucket\" in resource provider \"aws\"",
                "on Pulumi.yaml line 5:",
            ],
        ),
        (
            &format!("{REPOSITORY}      imageScanningConfig:\n        scanOnPush: true\n"),
            "unknown property",
            &[
                "\u{1b}[31mError\u{1b}[0m: Property imageScanningConfig does not exist on 'aws:ecr/repository:Repository'",
                "on Pulumi.yaml line 8:",
                "Existing properties are: imageScanningConfiguration",
            ],
        ),
        (
            "name: p\nruntime: yaml\nresources:\n  role:\n    type: aws:iam/role:Role\n    properties:\n      description: d\n",
            "missing required input",
            &[
                "\u{1b}[31mError\u{1b}[0m: aws:iam/role:Role is not assignable from {description: string}",
                "assumeRolePolicy: Missing required property 'assumeRolePolicy'",
            ],
        ),
        (
            &format!("{REPOSITORY}outputs:\n  url: ${{repository.repositoryUri}}\n"),
            "unknown output",
            &[
                "\u{1b}[31mError\u{1b}[0m: repositoryUri does not exist on repository",
                "on Pulumi.yaml line 9:",
                "Existing properties are: repositoryUrl",
            ],
        ),
        (
            &format!("{REPOSITORY}      imageScanningConfiguration:\n        - scanOnPush: true\n"),
            "list for an object",
            &["imageScanningConfiguration: Cannot assign 'List<{scanOnPush: boolean}>' to 'ecr.Scan'"],
        ),
        (
            &format!("{REPOSITORY}      tags: [a, b]\n"),
            "list for a map",
            &["tags: Cannot assign 'List<string>' to 'Map<string>'"],
        ),
        (
            &format!("{REPOSITORY}      imageTagMutability: SOMETIMES\n"),
            "enum value",
            &["imageTagMutability: Allowed values are \"MUTABLE\", \"IMMUTABLE\""],
        ),
        (
            "name: p\nruntime: yaml\nvariables:\n  id:\n    fn::invoke:\n      function: aws:index/getCallerIdentity:getCallerIdentity\n      return: accountNumber\n",
            "unknown invoke return",
            &[
                "\u{1b}[31mError\u{1b}[0m: accountNumber does not exist on aws:index/getCallerIdentity:getCallerIdentity",
                "Existing properties are: accountId, arn",
            ],
        ),
    ];
    for (program, what, needles) in cases {
        let e = Env::new();
        let out = e.preview_program(program, true).code(1);
        for needle in needles {
            assert!(
                out.stdout.contains(needle),
                "{what}: stdout lacks {needle:?}:\n{}",
                out.stdout
            );
        }
        // The language host bails: no `error:` line follows its diagnostics.
        assert!(!out.stderr.contains("error:"), "{what}: {}", out.stderr);
        // Without the schema the same program previews (today's lenient behaviour), except
        // where no schema is needed to see the mistake.
        if what != "unknown output" {
            Env::new().preview_program(program, false).ok();
        }
    }
}

#[test]
fn language_errors_and_warnings_need_no_schema() {
    // An undefined name, in pulumi-yaml's words.
    let e = Env::new();
    let out = e
        .preview_program(
            "name: p\nruntime: yaml\noutputs:\n  url: ${repoo.repositoryUrl}\n",
            false,
        )
        .code(1);
    assert!(
        out.stdout
            .contains("\u{1b}[31mError\u{1b}[0m: resource, variable, or config value \"repoo\" not found"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("on Pulumi.yaml line 4:"), "{}", out.stdout);
    // A resource option that does not exist.
    let e = Env::new();
    let out = e
        .preview_program(&format!("{REPOSITORY}    options:\n      dependOn: []\n"), false)
        .code(1);
    assert!(
        out.stdout
            .contains("\u{1b}[31mError\u{1b}[0m: dependOn does not exist on resource options"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Existing fields are: dependsOn"), "{}", out.stdout);
    // An unknown `fn::` key and an unknown invoke argument only warn; the preview succeeds.
    let e = Env::new();
    let out = e
        .preview_program(
            "name: p\nruntime: yaml\nvariables:\n  id:\n    fn::invoke:\n      function: aws:index/getCallerIdentity:getCallerIdentity\n      arguments:\n        account: x\n      return: accountId\n  odd:\n    fn::frobnicate: 1\noutputs:\n  id: ${id}\n",
            true,
        )
        .ok();
    assert!(
        out.stdout
            .contains("Warning: account does not exist on Invoke aws:index/getCallerIdentity:getCallerIdentity"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Warning: 'fn::' is a reserved prefix"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_config_file_without_a_salt_gets_a_new_one_unless_the_state_fallback_is_asked() {
    let e = Env::new();
    e.init("vpc");
    let local = e.root().join("projects/vpc/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&local).unwrap();
    let first = text
        .lines()
        .find_map(|l| l.strip_prefix("encryptionsalt: "))
        .unwrap()
        .to_string();
    let config = |env: &[(&str, &str)]| {
        std::fs::write(&local, "").unwrap();
        e.run_with(
            "vpc",
            &[
                "config",
                "set",
                "--secret",
                "token",
                "not-a-real-token",
                "--stack",
                "dev",
            ],
            env,
        )
        .ok();
        let text = std::fs::read_to_string(&local).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("encryptionsalt: "))
            .unwrap()
            .to_string()
    };
    let fresh = config(&[]);
    assert_ne!(fresh, first, "a new salt, as the real CLI makes");
    let reused = config(&[("PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER", "true")]);
    assert_eq!(reused, first, "the salt recorded in the state");
}

#[test]
fn an_output_with_a_secret_nested_in_it_is_secret_whole_in_stack_output_and_stack_references() {
    let e = Env::new();
    e.project(
        "db",
        "name: db\nruntime: yaml\noutputs:\n  conn:\n    user: admin\n    password: ${db:password}\n    hosts: [primary, \"${db:password}\"]\n  plain: open\n",
    );
    e.project(
        "app",
        "name: app\nruntime: yaml\nresources:\n  db:\n    type: pulumi:pulumi:StackReference\n    properties:\n      name: organization/db/dev\noutputs:\n  user: ${db.outputs[\"conn\"][\"user\"]}\n  plain: ${db.outputs[\"plain\"]}\n",
    );
    e.init("db");
    e.set_secret("db");
    let up = e.up("db").ok();
    // Pulumi YAML registers an output with a secret anywhere in it as a secret as a whole
    // (pulumi v3.274.1, pulumi-language-yaml v1.38.3): the summary and `stack output` hide it
    // whole, as the real CLI shows `nested: [secret]` and `"nested": "[secret]"`.
    assert!(up.stdout.contains("conn : [secret]"), "{}", up.stdout);
    assert!(!up.stdout.contains(SECRET));
    e.assert_no_plain_secret();

    let hidden = e.run("db", &["stack", "output", "--json", "-s", "dev"]).ok().json();
    assert_eq!(hidden, serde_json::json!({"conn": "[secret]", "plain": "open"}));
    let shown = e
        .run("db", &["stack", "output", "--json", "--show-secrets", "-s", "dev"])
        .ok()
        .json();
    assert_eq!(shown["conn"]["password"], SECRET);
    assert_eq!(shown["conn"]["hosts"][1], SECRET);
    let one = e.run("db", &["stack", "output", "conn", "-s", "dev"]).ok();
    assert!(
        one.stdout.contains("[secret]") && !one.stdout.contains(SECRET),
        "{}",
        one.stdout
    );

    // Showing opens the secrets manager: no passphrase, no values; hiding needs none.
    let mut c = e.cmd("db", &["stack", "output", "--json", "--show-secrets", "-s", "dev"]);
    c.env_remove("PULUMI_CONFIG_PASSPHRASE");
    Out::from(c.output().unwrap())
        .code(1)
        .stderr_has("passphrase must be set with PULUMI_CONFIG_PASSPHRASE");
    let mut c = e.cmd("db", &["stack", "output", "--json", "-s", "dev"]);
    c.env_remove("PULUMI_CONFIG_PASSPHRASE");
    Out::from(c.output().unwrap()).ok();

    // A stack reference marks an output secret when any part of it is: what is read from it is.
    e.init("app");
    e.up("app").ok();
    let app = e.run("app", &["stack", "output", "--json", "-s", "dev"]).ok().json();
    assert_eq!(app, serde_json::json!({"user": "[secret]", "plain": "open"}));
    let app = e
        .run("app", &["stack", "output", "--json", "--show-secrets", "-s", "dev"])
        .ok()
        .json();
    assert_eq!(app["user"], "admin");
    e.assert_no_plain_secret();
}
