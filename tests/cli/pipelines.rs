//! The exported GitLab pipelines, executed. `gitlab-ci-local` (GitLab CI's stages, `needs`,
//! variables, `rules` and `when`, run on this machine) runs what `runner export gitlab-ci` wrote
//! for the end-to-end workspace, with its shell executor and each job in a clean copy of the
//! repository (`--shell-isolation`: what git tracks, nothing another job or run left), against a
//! shared state backend: a local S3 server (moto) for the real `pulumi`; for the stand-in, which
//! speaks no S3, a shared-disk `file://` directory outside the repository (the GitLab export
//! takes one there). Up; up again, which changes nothing; the destroy pipeline, which runs no job
//! without the variable naming the stack and its manual job played; then with both: dependents
//! first, and the backend holds no resource.
//!
//! Without gitlab-ci-local, rsync or (for the real engine) moto the test skips, saying so; under
//! `RUNNER_REQUIRE_TOOLS=1` (as in CI) it fails instead.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::engines::{ADMIN_PASSWORD, DB_PASSWORD, E2e, Engine, assert_order};
use crate::support::tool;
use crate::support::{Run, git};

const BUCKET: &str = "runner-state";
/// The keys the jobs reach moto with (it takes any).
const ACCESS_KEY: &str = "runner-test-key";
/// The variable, and the manual job, the destroy pipeline waits for.
const DESTROY_VARIABLE: &str = "RUNNER_DESTROY_STACK";
const CONFIRM_JOB: &str = "confirm-destroy";

/// A local S3 API (moto's server), stopped on drop.
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    fn start(exe: &Path, log_path: &Path) -> Moto {
        let log = std::fs::File::create(log_path).unwrap();
        // Port 0: the server binds a free port itself and names it (`Running on
        // http://127.0.0.1:PORT`); a port found free here first could be taken before it binds.
        let mut child = Command::new(exe)
            .args(["-H", "127.0.0.1", "-p", "0"])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("moto_server starts");
        let port = crate::support::poll(Duration::from_secs(60), || {
            let text = std::fs::read_to_string(log_path).ok()?;
            let (_, rest) = text.split_once("Running on http://127.0.0.1:")?;
            rest.split(|c: char| !c.is_ascii_digit()).next()?.parse::<u16>().ok()
        })
        .unwrap_or_else(|| {
            let _ = child.kill();
            panic!(
                "moto_server named no port within 60 s: {}",
                std::fs::read_to_string(log_path).unwrap_or_default()
            )
        });
        let moto = Moto { child, port };
        // Up once it answers: the bucket the backend lives in.
        crate::support::wait_until(
            Duration::from_secs(60),
            format!("moto_server did not answer on port {port}"),
            || matches!(moto.request("PUT", &format!("/{BUCKET}")), Ok((200, _))),
        );
        moto
    }

    /// One plain HTTP/1.1 request: its status and body. moto checks no signature, but refuses
    /// an anonymous read of an object: the request says who it is, unsigned.
    fn request(&self, method: &str, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: AWS4-HMAC-SHA256 \
             Credential={}/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n",
            self.port, ACCESS_KEY
        )?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        let at = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| std::io::Error::other("no HTTP head"))?;
        let head = String::from_utf8_lossy(&raw[..at]).to_ascii_lowercase();
        let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let mut body = raw[at + 4..].to_vec();
        if head.contains("transfer-encoding: chunked") {
            body = unchunked(&body);
        }
        Ok((status, body))
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A chunked HTTP body, joined.
fn unchunked(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..eol]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&rest[eol + 2..eol + 2 + size]);
        rest = &rest[eol + 2 + size + 2..];
    }
    out
}

/// The state backend every job shares.
enum Backend {
    S3 { moto: Moto, url: String },
    Disk { dir: tempfile::TempDir, url: String },
}

impl Backend {
    fn url(&self) -> &str {
        match self {
            Backend::S3 { url, .. } | Backend::Disk { url, .. } => url,
        }
    }

    /// The variables a job needs to reach it besides its URL (moto takes any key).
    fn credentials(&self) -> Vec<(&'static str, &'static str)> {
        match self {
            Backend::S3 { .. } => vec![
                ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
                ("AWS_SECRET_ACCESS_KEY", "runner-test-secret"),
            ],
            Backend::Disk { .. } => vec![],
        }
    }

    /// The checkpoint of a project's stack, as the backend holds it (the same layout in a
    /// bucket and on a disk), `None` when there is none.
    fn checkpoint(&self, project: &str) -> Option<Value> {
        let key = format!(".pulumi/stacks/{project}/dev.json");
        let bytes = match self {
            Backend::S3 { moto, .. } => match moto.request("GET", &format!("/{BUCKET}/{key}")).unwrap() {
                (200, body) => body,
                (404, _) => return None,
                (status, body) => panic!("GET {key}: {status} {}", String::from_utf8_lossy(&body)),
            },
            Backend::Disk { dir, .. } => std::fs::read(dir.path().join(&key)).ok()?,
        };
        Some(serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{key}: {e}")))
    }

    /// The resources the backend holds for a project's stack.
    fn resources(&self, project: &str) -> Vec<Value> {
        self.checkpoint(project)
            .and_then(|c| {
                c.pointer("/checkpoint/latest/resources")
                    .and_then(Value::as_array)
                    .cloned()
            })
            .unwrap_or_default()
    }
}

/// What is needed to run the pipelines, or why the test skips (a failure under
/// `RUNNER_REQUIRE_TOOLS=1`).
fn tools(engine: Engine) -> Option<(PathBuf, Option<PathBuf>)> {
    let gcl = tool("gitlab-ci-local")?;
    // gitlab-ci-local copies each job's checkout with it.
    tool("rsync")?;
    let moto = match engine {
        Engine::Real => Some(tool("moto")?),
        Engine::Standin => None,
    };
    Some((gcl, moto))
}

/// gitlab-ci-local in the repository, as a GitLab runner with a shell executor: the machine's
/// tools on PATH (the engine's `pulumi`, the runner), the project's CI/CD variables in its
/// variables file, nothing else from the test's environment.
struct Gitlab<'a> {
    e: &'a E2e,
    exe: PathBuf,
    /// The runner machine's home: gitlab-ci-local's variables file, pulumi's home.
    home: tempfile::TempDir,
}

/// One run of a pipeline: how it ended, what it printed, the order of its jobs' events.
struct Pipeline {
    run: Run,
    /// `(job, "starting" | "finished")` in the order gitlab-ci-local printed them.
    events: Vec<(String, &'static str)>,
    passed: BTreeSet<String>,
}

impl Gitlab<'_> {
    fn new<'a>(e: &'a E2e, exe: PathBuf, backend: &Backend) -> Gitlab<'a> {
        let home = tempfile::tempdir().unwrap();
        let mut variables = serde_json::Map::new();
        variables.insert("PULUMI_BACKEND_URL".into(), json!(backend.url()));
        variables.insert("PULUMI_CONFIG_PASSPHRASE".into(), json!("e2e passphrase"));
        for (k, v) in backend.credentials() {
            variables.insert(k.into(), json!(v));
        }
        variables.insert("MARA_SECRET_MONITORING_ADMIN_PASSWORD".into(), json!(ADMIN_PASSWORD));
        variables.insert("MARA_SECRET_APP_DB_PASSWORD".into(), json!(DB_PASSWORD));
        // JSON is YAML: the global section of gitlab-ci-local's variables file, the CI/CD
        // variables every job gets.
        let dir = home.path().join(".gitlab-ci-local");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("variables.yml"),
            serde_json::to_string(&json!({ "global": variables })).unwrap(),
        )
        .unwrap();
        Gitlab { e, exe, home }
    }

    fn run(&self, file: &str, extra: &[&str]) -> Pipeline {
        let runner_dir = Path::new(crate::support::RUNNER).parent().unwrap();
        let path = format!(
            "{}:{}:{}",
            self.e.engine_dir().display(),
            runner_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        // The stand-in's fewer key rounds; never with the real CLI, whose salts the runner
        // checks with the real count.
        let rounds = (self.e.engine() == Engine::Standin).then_some(crate::support::STANDIN_ROUNDS);
        let out = Command::new(&self.exe)
            .args([
                "--file",
                &format!("ci/{file}"),
                "--force-shell-executor",
                "--shell-isolation",
            ])
            .args(["--no-color", "--max-job-name-padding", "0"])
            .args(extra)
            .current_dir(self.e.path())
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home.path())
            .env("TERM", "dumb")
            .env("KUBECONFIG", self.e.kubeconfig())
            .env("PULUMI_HOME", self.home.path().join(".pulumi"))
            .env("PULUMI_SKIP_UPDATE_CHECK", "true")
            .env("PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION", "true")
            .envs(rounds)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let run = self.e.record(out);
        let mut events = Vec::new();
        let mut passed = BTreeSet::new();
        for line in run.stdout.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [job, "starting", "shell", ..] => events.push(((*job).to_string(), "starting")),
                [job, "finished", "in", ..] => events.push(((*job).to_string(), "finished")),
                ["PASS", .., job] => {
                    passed.insert((*job).to_string());
                }
                _ => {}
            }
        }
        Pipeline { run, events, passed }
    }
}

impl Pipeline {
    fn index(&self, job: &str, what: &str) -> usize {
        self.events
            .iter()
            .position(|(j, w)| j == job && *w == what)
            .unwrap_or_else(|| panic!("{job} never {what}:\n{}", self.run.stdout))
    }

    /// Every edge of the plan, in gitlab-ci-local's own account: a job starts after each job
    /// it waits for finished (`reverse`: dependents first).
    #[track_caller]
    fn assert_order(&self, waits: &BTreeMap<String, Vec<String>>, reverse: bool) {
        for (project, upstream) in waits {
            for u in upstream {
                let (first, then) = if reverse { (project, u) } else { (u, project) };
                assert!(
                    self.index(then, "starting") > self.index(first, "finished"),
                    "{then} started before {first} finished:\n{}",
                    self.run.stdout
                );
            }
        }
    }
}

/// The runner's own summary of what a job ran, in that job's copy of the repository.
fn job_summary(e: &E2e, job: &str) -> Value {
    let file = e
        .path()
        .join(".gitlab-ci-local/builds")
        .join(job)
        .join(".runner/last-run.json");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
    serde_json::from_str(&text).unwrap()
}

/// Each job ran its own project, and only it, from a checkout without a run of another job:
/// the environment file made anew, a run state holding its project alone. Returns each
/// project's summary entry.
#[track_caller]
fn assert_clean_jobs(e: &E2e, projects: &[String]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for p in projects {
        let log = std::fs::read_to_string(e.path().join(format!(".gitlab-ci-local/output/{p}.log"))).unwrap();
        assert!(
            log.contains("Created config/pulumi/environment with PULUMI_STACK=dev"),
            "{p}'s checkout held an environment file: not a clean checkout\n{log}"
        );
        let summary = job_summary(e, p);
        let ran: Vec<&str> = summary["projects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].as_str().unwrap())
            .collect();
        assert_eq!(ran, [p.as_str()], "{p}'s job ran exactly its project");
        let build = e.path().join(".gitlab-ci-local/builds").join(p);
        assert!(
            !build.join(".pulumi-state").exists(),
            "{p}'s job kept state in its checkout"
        );
        out.insert(p.clone(), summary["projects"][0].clone());
    }
    out
}

/// `(started, ended)` of each project as its job's runner recorded it (milliseconds).
fn spans(summaries: &BTreeMap<String, Value>) -> BTreeMap<String, (String, String)> {
    summaries
        .iter()
        .map(|(p, s)| {
            let t = |k: &str| s[k].as_str().unwrap_or_else(|| panic!("{p}: no {k}: {s}")).to_string();
            (p.clone(), (t("started"), t("ended")))
        })
        .collect()
}

/// The shared backend the jobs use: S3 (moto) when given its server, else a directory outside
/// the repository.
fn start_backend(e: &E2e, moto: Option<PathBuf>) -> Backend {
    let Some(exe) = moto else {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", dir.path().display());
        return Backend::Disk { dir, url };
    };
    let moto = Moto::start(&exe, &e.path().join("home/moto.log"));
    // What the gocloud S3 driver of pulumi v3.274.1 takes (aws-sdk-go-v2): the endpoint with its
    // scheme, path-style addressing; moto sends no response checksums for the SDK to check.
    let url = format!(
        "s3://{BUCKET}?endpoint=http://127.0.0.1:{}&use_path_style=true&region=us-east-1\
         &response_checksum_validation=when_required",
        moto.port
    );
    Backend::S3 { moto, url }
}

/// One pipeline scenario's world: the repository, its backend, gitlab-ci-local.
struct Scene<'a> {
    e: &'a E2e,
    backend: Backend,
    gitlab: Gitlab<'a>,
    waits: BTreeMap<String, Vec<String>>,
    projects: Vec<String>,
}

impl Scene<'_> {
    /// The runner at the repository's root, with the shared backend.
    fn runner(&self, args: &[&str]) -> Command {
        let mut c = self.e.command(args);
        c.env("PULUMI_BACKEND_URL", self.backend.url())
            .envs(self.backend.credentials());
        c
    }

    /// A project's output as the backend holds it, read outside every job (not recorded: a
    /// secret asked for is printed by design).
    fn output(&self, project: &str, name: &str) -> String {
        let out = self
            .runner(&["output", project, name, "-s", "dev", "--show-secrets"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim_end().to_string()
    }
}

/// The user's side: validate (the stack file the export carries), the export, a commit.
fn set_up(e: &E2e, engine: Engine, gcl: PathBuf, moto: Option<PathBuf>) -> Scene<'_> {
    let backend = start_backend(e, moto);
    let waits = e.waits();
    let projects: Vec<String> = waits.keys().cloned().collect();
    assert_eq!(projects.len(), 11);
    let gitlab = Gitlab::new(e, gcl, &backend);
    let scene = Scene {
        e,
        backend,
        gitlab,
        waits,
        projects,
    };
    e.record(
        scene
            .runner(&["validate", "-p", "local", "-s", "dev"])
            .output()
            .unwrap(),
    )
    .expect(0);
    let export = e
        .record(
            scene
                .runner(&["export", "gitlab-ci", "-p", "local", "-s", "dev", "-o", "ci"])
                .output()
                .unwrap(),
        )
        .expect(0);
    if engine == Engine::Standin {
        assert!(export.stderr.contains("a shared disk"), "{}", export.stderr);
    }
    std::fs::copy(
        Path::new(crate::support::REPO).join("examples/local/.gitignore"),
        e.path().join(".gitignore"),
    )
    .unwrap();
    git(e.path(), &["init", "-q", "-b", "main"]);
    git(
        e.path(),
        &["add", ".gitignore", "providers", "projects", "scripts", "config", "ci"],
    );
    git(e.path(), &["commit", "-q", "-m", "the platform and its pipelines"]);
    scene
}

/// Up: every job passes, in the plan's order, each in a clean checkout; outputs and secrets
/// reach downstream jobs through the backend alone. Returns the secrets the engine made.
fn up(scene: &Scene<'_>) -> Vec<String> {
    let (e, backend) = (scene.e, &scene.backend);
    let up = scene.gitlab.run("runner-up.gitlab-ci.yml", &[]);
    assert_eq!(up.run.code, 0, "{}\n{}", up.run.stdout, up.run.stderr);
    assert_eq!(up.passed, scene.projects.iter().cloned().collect(), "{}", up.run.stdout);
    up.assert_order(&scene.waits, false);
    let summaries = assert_clean_jobs(e, &scene.projects);
    assert_order(&spans(&summaries), &scene.waits, false);
    for (p, s) in &summaries {
        assert_eq!(s["status"], "succeeded", "{p}: {s}");
        assert!(!backend.resources(p).is_empty(), "{p}: the backend holds no resource");
    }
    assert_eq!(
        summaries["app"]["outputs"]["application_url"],
        "http://ingress.dev-cluster.example.invalid/"
    );
    let app_log = std::fs::read_to_string(e.path().join(".gitlab-ci-local/output/app.log")).unwrap();
    assert!(
        app_log.contains("smoke-test: http://"),
        "the app's hook ran:\n{app_log}"
    );
    // The secret went store → app, job to job, through the backend.
    let database_url = scene.output("app", "database_url");
    assert!(
        database_url.starts_with(&format!("postgres://app:{DB_PASSWORD}@db.dev-cluster")),
        "{database_url}"
    );
    vec![database_url, scene.output("identity", "ci_token")]
}

/// Again: every job runs its project anew (no run state survives a job) and nothing changes.
fn up_again(scene: &Scene<'_>) {
    let again = scene.gitlab.run("runner-up.gitlab-ci.yml", &[]);
    assert_eq!(again.run.code, 0, "{}\n{}", again.run.stdout, again.run.stderr);
    assert_eq!(again.passed.len(), 11, "{}", again.run.stdout);
    again.assert_order(&scene.waits, false);
    for (p, s) in assert_clean_jobs(scene.e, &scene.projects) {
        let changes = s["changes"].as_object().unwrap();
        assert!(
            !changes.is_empty() && changes.keys().all(|k| k == "same" || k == "read"),
            "{p} changed on the second run: {s}"
        );
    }
}

/// The up pipeline deploys from the default branch only, never in a destroy pipeline (a team
/// includes both files in one `.gitlab-ci.yml`).
fn up_only_where_it_should(scene: &Scene<'_>) {
    let beside = scene.gitlab.run(
        "runner-up.gitlab-ci.yml",
        &["--variable", &format!("{DESTROY_VARIABLE}=dev")],
    );
    assert_eq!(beside.run.code, 0, "{}\n{}", beside.run.stdout, beside.run.stderr);
    assert!(
        beside.events.is_empty(),
        "up jobs ran in a destroy pipeline:\n{}",
        beside.run.stdout
    );
    git(scene.e.path(), &["checkout", "-q", "-b", "feature"]);
    let branch = scene.gitlab.run("runner-up.gitlab-ci.yml", &[]);
    git(scene.e.path(), &["checkout", "-q", "main"]);
    assert_eq!(branch.run.code, 0, "{}\n{}", branch.run.stdout, branch.run.stderr);
    assert!(
        branch.events.is_empty(),
        "up jobs ran on a feature branch:\n{}",
        branch.run.stdout
    );
}

/// The teardown without the explicit act runs nothing: no variable, another stack's name, or
/// the right name without the manual job played.
fn destroy_refused(scene: &Scene<'_>) {
    for (vars, refused) in [
        (&[][..], None),
        (&["--variable", "RUNNER_DESTROY_STACK=prod"][..], None),
        (
            &["--variable", "RUNNER_DESTROY_STACK=dev"][..],
            Some("confirm-destroy is when:manual"),
        ),
    ] {
        let p = scene.gitlab.run(DESTROY_FILE, vars);
        match refused {
            None => assert_eq!(p.run.code, 0, "{}\n{}", p.run.stdout, p.run.stderr),
            Some(why) => {
                assert_ne!(p.run.code, 0, "{}", p.run.stdout);
                assert!(
                    format!("{}{}", p.run.stdout, p.run.stderr).contains(why),
                    "{}\n{}",
                    p.run.stdout,
                    p.run.stderr
                );
            }
        }
        assert!(p.events.is_empty(), "{vars:?}: jobs ran:\n{}", p.run.stdout);
    }
    for p in &scene.projects {
        assert!(
            !scene.backend.resources(p).is_empty(),
            "{p} was destroyed without the act"
        );
    }
}

/// With both, the variable naming the stack and the manual job played: dependents first, and
/// no resource left in the backend.
fn destroy(scene: &Scene<'_>) {
    let down = scene.gitlab.run(
        DESTROY_FILE,
        &[
            "--variable",
            &format!("{DESTROY_VARIABLE}=dev"),
            "--manual",
            CONFIRM_JOB,
        ],
    );
    assert_eq!(down.run.code, 0, "{}\n{}", down.run.stdout, down.run.stderr);
    let mut expected: BTreeSet<String> = scene.projects.iter().cloned().collect();
    expected.insert(CONFIRM_JOB.into());
    assert_eq!(down.passed, expected, "{}", down.run.stdout);
    down.assert_order(&scene.waits, true);
    for p in &scene.projects {
        assert!(
            down.index(p, "starting") > down.index(CONFIRM_JOB, "finished"),
            "{p} started before the confirmation"
        );
    }
    let summaries = assert_clean_jobs(scene.e, &scene.projects);
    assert_order(&spans(&summaries), &scene.waits, true);
    for p in &scene.projects {
        assert!(
            scene.backend.checkpoint(p).is_some(),
            "{p}: the stack is kept (destroy empties it)"
        );
        assert!(scene.backend.resources(p).is_empty(), "{p} still holds resources");
    }
}

const DESTROY_FILE: &str = "runner-destroy.gitlab-ci.yml";

fn the_exported_pipelines_run_up_twice_then_a_guarded_destroy(
    e: &E2e,
    engine: Engine,
    gcl: PathBuf,
    moto: Option<PathBuf>,
) {
    let started = Instant::now();
    let scene = set_up(e, engine, gcl, moto);
    let made = up(&scene);
    up_again(&scene);
    up_only_where_it_should(&scene);
    destroy_refused(&scene);
    destroy(&scene);
    e.assert_no_plain_secret(&made);
    eprintln!("the pipelines on {engine:?}: {:.1} s", started.elapsed().as_secs_f64());
}

macro_rules! on_both_engines {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use test_requires::requires;

            #[requires("gitlab-ci-local", "rsync")]
            #[test]
            fn standin() {
                super::run(super::Engine::Standin, super::$scenario);
            }
            #[requires("gitlab-ci-local", "rsync", "moto", "real-pulumi")]
            #[test]
            fn real() {
                super::run(super::Engine::Real, super::$scenario);
            }
        }
    )*};
}

type Scenario = fn(&E2e, Engine, PathBuf, Option<PathBuf>);

fn run(engine: Engine, scenario: Scenario) {
    let Some((gcl, moto)) = tools(engine) else { return };
    if let Some(e) = E2e::new(engine) {
        scenario(&e, engine, gcl, moto);
    }
}

on_both_engines!(the_exported_pipelines_run_up_twice_then_a_guarded_destroy);
