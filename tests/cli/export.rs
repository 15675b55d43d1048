//! `runner export` through the binary: every format for every provider (snapshots), each export
//! read back to the plan's edges (every `needs` and `after`, nothing more), secrets only as
//! references, a shared backend required, names made legal and the mapping printed, YAML that
//! YAML 1.1 readers take the same way, and the real consumers: check-jsonschema's GitHub and
//! GitLab schemas, the published validators of Argo, Argo CD, External Secrets and Backstage,
//! and (with `RUNNER_SCHEMAS_DIR`) the CRDs' own schemas.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Run, SECRETS, Ws, files_under, providers, tool};
use test_requires::requires;

const FORMATS: [&str; 6] = [
    "pko",
    "github-actions",
    "gitlab-ci",
    "argo-workflows",
    "kebap",
    "backstage",
];
pub(crate) const BACKEND: (&str, &str) = ("PULUMI_BACKEND_URL", "s3://runner-state?region=us-east-1");
const REPO_ARGS: [&str; 6] = [
    "--repo",
    "https://git.example.test/acme/platform.git",
    "--branch",
    "main",
    "--esc-org",
    "acme",
];

/// The repository flags (and KEBAP's ESC organization) of the formats that take them: each
/// format refuses the flags of the others.
pub(crate) fn repo_args(format: &str) -> &'static [&'static str] {
    match format {
        "pko" | "argo-workflows" => &REPO_ARGS[..4],
        "kebap" => &REPO_ARGS,
        _ => &[],
    }
}

/// Runs `export FORMAT -p PROVIDER -s dev -o out/NAME` with a shared backend; returns the run
/// and the files written, by path.
fn export(ws: &Ws, format: &str, provider: &str, extra: &[&str]) -> (Run, BTreeMap<String, String>) {
    let out = format!("out/{format}-{provider}-{}", extra.len());
    let mut args = vec!["export", format, "-p", provider, "-s", "dev", "-o", &out];
    args.extend(repo_args(format));
    args.extend(extra);
    let run = ws.exec(&args, &[BACKEND]);
    let mut files = BTreeMap::new();
    let dir = ws.path().join(&out);
    for p in files_under(&dir) {
        let rel = p.strip_prefix(&dir).unwrap().display().to_string();
        files.insert(rel, std::fs::read_to_string(&p).unwrap());
    }
    (run, files)
}

fn is_yaml(path: &str) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// The YAML documents of a file, as JSON.
pub(crate) fn docs(text: &str) -> Vec<Value> {
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap_or_else(|e| panic!("not YAML ({e}):\n{d}")))
        .filter(|v| !v.is_null())
        .collect()
}

/// The plan's edges (runs first, runs after), from `show-plan --format json`.
fn plan_edges(ws: &Ws, provider: &str) -> BTreeSet<(String, String)> {
    let plan = ws
        .run(&["show-plan", "-p", provider, "--format", "json"])
        .expect(0)
        .json();
    plan["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (s(&e["from"]), s(&e["to"])))
        .collect()
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}")).to_string()
}

fn reversed(edges: &BTreeSet<(String, String)>) -> BTreeSet<(String, String)> {
    edges.iter().map(|(a, b)| (b.clone(), a.clone())).collect()
}

/// Edges of PKO Stacks: (prerequisite, stack), by project (from the `runner/project` label).
fn stack_edges(stacks: &[Value]) -> BTreeSet<(String, String)> {
    let project: BTreeMap<String, String> = stacks
        .iter()
        .map(|d| (s(&d["metadata"]["name"]), s(&d["metadata"]["labels"]["runner/project"])))
        .collect();
    let mut edges = BTreeSet::new();
    for d in stacks {
        let me = &project[&s(&d["metadata"]["name"])];
        for p in d["spec"]["prerequisites"].as_array().into_iter().flatten() {
            edges.insert((project[&s(&p["name"])].clone(), me.clone()));
        }
    }
    edges
}

/// What each file of an export says about order, as (runs first, runs after) by project, for
/// the files that order an `up`, and separately for those that order a `destroy`.
type Edges = BTreeSet<(String, String)>;

/// The (runs first, runs after) pairs of an Argo Workflow's DAG, by project.
fn argo_edges(wf: &Value) -> Edges {
    let mut edges = Edges::new();
    let tasks = wf["spec"]["templates"][0]["dag"]["tasks"].as_array().unwrap();
    // The teardown's first task checks the confirmation; every other one runs a project.
    let tasks: Vec<&Value> = tasks.iter().filter(|t| t["name"] != "confirm").collect();
    let project: BTreeMap<String, String> = tasks
        .iter()
        .map(|t| (s(&t["name"]), s(&t["arguments"]["parameters"][0]["value"])))
        .collect();
    for t in tasks {
        for d in t["dependencies"].as_array().into_iter().flatten() {
            if d != "confirm" {
                edges.insert((project[&s(d)].clone(), project[&s(&t["name"])].clone()));
            }
        }
    }
    edges
}

fn read_back(format: &str, files: &BTreeMap<String, String>) -> (Edges, Edges) {
    let mut up = BTreeSet::new();
    let mut down = BTreeSet::new();
    match format {
        "pko" | "kebap" => {
            let stacks = if format == "pko" {
                "stacks.yaml"
            } else {
                "manifests/03-stacks.yaml"
            };
            up = stack_edges(&docs(&files[stacks]));
            // The teardown deletes every stack after all that need it.
            let deleted: Vec<String> = files["teardown.sh"]
                .lines()
                .filter_map(|l| l.strip_prefix("gone "))
                .map(str::to_string)
                .collect();
            let position = |n: &str| deleted.iter().position(|d| d == n).unwrap();
            let stacks = docs(&files[stacks]);
            let name_of: BTreeMap<String, String> = stacks
                .iter()
                .map(|d| (s(&d["metadata"]["labels"]["runner/project"]), s(&d["metadata"]["name"])))
                .collect();
            for (a, b) in &up {
                if position(&name_of[a]) > position(&name_of[b]) {
                    down.insert((b.clone(), a.clone()));
                }
            }
            assert_eq!(down.len(), up.len(), "the teardown deletes dependents first");
        }
        "github-actions" => {
            for (file, into) in [
                ("workflows/runner-up.yml", &mut up),
                ("workflows/runner-destroy.yml", &mut down),
            ] {
                let wf = &docs(&files[file])[0];
                let jobs = wf["jobs"].as_object().unwrap();
                let project = |id: &str| s(&jobs[id]["name"]);
                // The build job, and the destroy workflow's confirmation, which the build needs.
                let gates = ["runner", "confirm"];
                for (id, job) in jobs.iter().filter(|(id, _)| !gates.contains(&id.as_str())) {
                    for n in job["needs"].as_array().unwrap() {
                        if !gates.contains(&n.as_str().unwrap()) {
                            into.insert((project(n.as_str().unwrap()), project(id)));
                        }
                    }
                    let run = s(&job["steps"][4]["run"]);
                    assert!(run.contains(&format!("--only {}", project(id))), "{run}");
                }
            }
        }
        "gitlab-ci" => {
            for (file, into) in [
                ("runner-up.gitlab-ci.yml", &mut up),
                ("runner-destroy.gitlab-ci.yml", &mut down),
            ] {
                let p = &docs(&files[file])[0];
                for (job, body) in p.as_object().unwrap() {
                    if ["stages", "variables", "default", "confirm-destroy"].contains(&job.as_str()) {
                        continue;
                    }
                    for n in body["needs"].as_array().unwrap() {
                        if n != "confirm-destroy" {
                            into.insert((s(n), job.clone()));
                        }
                    }
                }
            }
        }
        "argo-workflows" => {
            for (file, into) in [("workflow-up.yaml", &mut up), ("workflow-destroy.yaml", &mut down)] {
                let wf = &docs(&files[file])[0];
                into.extend(argo_edges(wf));
            }
        }
        "backstage" => {
            let entities = docs(&files["catalog-info.yaml"]);
            let project = |e: &Value| e["metadata"].get("title").map_or_else(|| s(&e["metadata"]["name"]), s);
            let by_name: BTreeMap<String, String> = entities
                .iter()
                .filter(|e| e["kind"] == "Resource")
                .map(|e| {
                    let ref_ = format!(
                        "resource:{}/{}",
                        s(&e["metadata"]["namespace"]),
                        s(&e["metadata"]["name"])
                    );
                    (ref_, project(e))
                })
                .collect();
            for e in entities.iter().filter(|e| e["kind"] == "Resource") {
                for d in e["spec"]["dependsOn"].as_array().into_iter().flatten() {
                    up.insert((by_name[&s(d)].clone(), project(e)));
                }
            }
            down = reversed(&up);
        }
        other => panic!("no reader for {other}"),
    }
    (up, down)
}

#[test]
fn each_format_takes_only_its_own_flags_and_its_help_lists_only_them() {
    let ws = Ws::reference();
    // A flag of another format, for each format (and the short names that work too): clap
    // refuses it before anything is read, naming it.
    for (format, flag) in [
        ("pko", &["--pulumi-version", "3.1.0"][..]),
        ("pko", &["--owner", "team"][..]),
        ("github-actions", &["--succeeded-within", "1h"][..]),
        ("github", &["--namespace", "platform"][..]),
        ("gitlab-ci", &["--parallel", "2"][..]),
        ("gitlab", &["--repo", "https://git.example.test/a.git"][..]),
        ("argo-workflows", &["--destroy-on-finalize"][..]),
        ("argo", &["--esc-org", "acme"][..]),
        ("kebap", &["--pulumi-version", "3.1.0"][..]),
        ("kebap", &["--parallel", "2"][..]),
        ("backstage", &["--branch", "main"][..]),
        ("backstage", &["--source", "program"][..]),
    ] {
        let mut args = vec!["export", format, "-p", "aws", "-s", "dev"];
        args.extend(flag);
        ws.run(&args)
            .expect(2)
            .stderr_has(&format!("unexpected argument '{}'", flag[0]))
            .stderr_has(&format!("note: `{}` is a flag of ", flag[0]))
            .stderr_has("`runner export ");
    }
    // Which formats take it is said too.
    ws.run(&["export", "github", "-p", "aws", "-s", "dev", "--succeeded-within", "1h"])
        .expect(2)
        .stderr_has("note: `--succeeded-within` is a flag of `runner export pko` and `runner export kebap`");
    let help = |args: &[&str]| ws.run(args).expect(0).stdout;
    // pko's flags (--succeeded-within, --destroy-on-finalize, --source, --namespace, --repo,
    // --force, --image) and none of the others' (--pulumi-version, --owner, --esc-org,
    // --parallel, --banner-type).
    crate::snapshot!(ws.path(), "export_pko_help", help(&["export", "pko", "--help"]));
    // GitHub's, the same however asked for: its flags, its usage, the examples at the end.
    for (args, name) in [
        (&["export", "github", "--help"][..], "export_github_actions_help"),
        (&["export", "github-actions", "-h"], "export_github_actions_short_help"),
        (&["help", "export", "github-actions"], "export_github_actions_help"),
        (
            &["-p", "aws", "export", "github-actions", "--help"],
            "export_github_actions_help",
        ),
    ] {
        crate::snapshot!(ws.path(), name, help(args));
    }
    // -h is short: the one line; --help the long text (which tells of confirm-destroy).
    crate::snapshot!(
        ws.path(),
        "export_gitlab_ci_short_help",
        help(&["export", "gitlab-ci", "-h"])
    );
    crate::snapshot!(
        ws.path(),
        "export_gitlab_ci_help",
        help(&["export", "gitlab-ci", "--help"])
    );
    // `export --help` lists the formats, with their short names (and `help` is no format).
    let formats = help(&["export", "--help"]);
    for name in FORMATS {
        assert!(formats.contains(name), "export --help lacks {name}:\n{formats}");
    }
    crate::snapshot!(ws.path(), "export_help", formats);
    ws.run(&["export", "-p", "aws", "-s", "dev"])
        .expect(2)
        .stderr_has("FORMAT");
}

#[test]
fn every_format_of_every_provider_matches_its_snapshot_and_reads_back_to_the_plan() {
    for provider in providers() {
        let ws = Ws::configured(provider);
        let edges = plan_edges(&ws, provider);
        assert!(!edges.is_empty());
        for format in FORMATS {
            let (run, files) = export(&ws, format, provider, &[]);
            let run = run.expect(0);
            assert!(run.stderr.contains(&format!("Exported {format} (")), "{}", run.stderr);
            let (up, down) = read_back(format, &files);
            assert_eq!(
                up, edges,
                "{format} {provider}: the up order is the plan's, every edge and nothing more"
            );
            assert_eq!(
                down,
                reversed(&edges),
                "{format} {provider}: destroy runs dependents first"
            );
            let mut all = String::new();
            for (path, text) in &files {
                let _ = write!(all, "=== {path} ===\n{text}");
            }
            let all = all.replace(&ws.path().display().to_string(), "[WS]");
            insta::assert_snapshot!(format!("export_{format}_{provider}"), all);
        }
    }
}

#[test]
fn pko_from_programs_embeds_one_program_per_project_named_as_it() {
    let ws = Ws::configured("aws");
    let (run, files) = export(
        &ws,
        "pko",
        "aws",
        &crate::support::words("--source program --succeeded-within 1h --destroy-on-finalize"),
    );
    run.expect(0);
    let programs = docs(&files["programs.yaml"]);
    let stacks = docs(&files["stacks.yaml"]);
    assert_eq!(programs.len(), stacks.len());
    for (p, st) in programs.iter().zip(&stacks) {
        assert_eq!(p["kind"], "Program");
        assert_eq!(st["spec"]["programRef"]["name"], p["metadata"]["name"]);
        assert!(st["spec"].get("projectRepo").is_none());
        assert_eq!(st["spec"]["destroyOnFinalize"], true);
        for pre in st["spec"]["prerequisites"].as_array().into_iter().flatten() {
            assert_eq!(pre["requirement"]["succeededWithinDuration"], "1h");
        }
        for (key, decl) in p["program"]["configuration"].as_object().into_iter().flatten() {
            let t = decl.get("type").and_then(Value::as_str);
            assert!(
                t.is_none_or(|t| ["String", "Number", "List<String>", "List<Number>"].contains(&t)),
                "{key}: {decl}"
            );
        }
    }
    let vpc = programs.iter().find(|p| p["metadata"]["name"] == "vpc").unwrap();
    assert_eq!(vpc["program"]["configuration"]["azs"]["type"], "List<String>");
    assert!(files["teardown.sh"].contains("kubectl delete program.pulumi.com vpc"));
    // A program's value of another namespace (the chart repository it falls back to) is not a
    // Program parameter (PKO's Pulumi.yaml would refuse it): its Stack carries it as a value.
    let logstore = programs.iter().find(|p| p["metadata"]["name"] == "logstore").unwrap();
    assert!(
        logstore["program"]["configuration"]
            .get("kubernetes:chart_mirror")
            .is_none()
    );
    let stack_of = |name: &str| {
        stacks
            .iter()
            .find(|s| s["spec"]["programRef"]["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        stack_of("logstore")["spec"]["config"]["kubernetes:chart_mirror"],
        "https://charts.bitnami.com/bitnami"
    );
    assert_eq!(
        stack_of("certmgr")["spec"]["config"]["kubernetes:chart_mirror"],
        "https://charts.jetstack.io"
    );
    insta::assert_snapshot!("export_pko_aws_program", files["programs.yaml"].clone());

    // The stack's own value wins, as with `pulumi up`.
    let mirror = "https://harbor.example.com/chartrepo/mara";
    let file = ws.path().join("config/pulumi/Pulumi.dev.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("config:\n", &format!("config:\n  kubernetes:chart_mirror: {mirror}\n")),
    )
    .unwrap();
    let (run, files) = export(&ws, "pko", "aws", &["--source", "program"]);
    run.expect(0);
    let stacks = docs(&files["stacks.yaml"]);
    for name in ["logstore", "certmgr", "prometheus"] {
        let stack = stacks.iter().find(|s| s["spec"]["programRef"]["name"] == name).unwrap();
        assert_eq!(stack["spec"]["config"]["kubernetes:chart_mirror"], mirror, "{name}");
    }
}

/// What a real operator needs, found running the export on PKO v2: the workspace pods' image
/// (`--image`), a repository it can clone (https or SSH), and every value a run would take.
#[test]
fn the_pko_export_carries_what_the_operator_needs() {
    let ws = Ws::configured("aws");
    let (run, files) = export(&ws, "pko", "aws", &["--image", "registry.example/pulumi:3.274.1"]);
    run.expect(0);
    for stack in docs(&files["stacks.yaml"]) {
        assert_eq!(
            stack["spec"]["workspaceTemplate"],
            json!({"spec": {"image": "registry.example/pulumi:3.274.1"}}),
            "{stack}"
        );
    }
    let with_repo = |repo: &str| {
        ws.exec(
            &[
                "export", "pko", "-p", "aws", "-s", "dev", "-o", "out/repo", "--force", "--repo", repo, "--branch",
                "main",
            ],
            &[BACKEND],
        )
    };
    let refused = with_repo("git://10.0.0.1/platform.git").expect(2);
    crate::snapshot!(ws.path(), "export_pko_refuses_a_git_url", refused.stderr);
    let http = with_repo("http://bot:tok3n@git.example.test/acme/platform.git").expect(2);
    assert!(!http.stderr.contains("tok3n"), "{}", http.stderr);
    with_repo("git@git.example.test:acme/platform.git").expect(0);
    with_repo("ssh://git@git.example.test/acme/platform.git").expect(0);

    // A stack file that leaves prompts unanswered: the defaults a run would take are carried
    // and said (PKO runs no runner to take them).
    let local = Ws {
        dir: tempfile::tempdir().unwrap(),
    };
    crate::support::copy_example_local(local.path());
    local.write(
        "config/pulumi/Pulumi.dev.yaml",
        "config:\n  kubernetes:infra_type: local\n",
    );
    let run = local
        .exec(
            &[
                "export", "pko", "-p", "local", "-s", "dev", "--source", "program", "-o", "out",
            ],
            &[BACKEND, ("MARA_CONFIG_LOGSTORE_RETENTION", "30d")],
        )
        .expect(0);
    crate::snapshot!(local.path(), "export_pko_carries_the_defaults", run.stderr);
    let stacks = docs(&std::fs::read_to_string(local.path().join("out/stacks.yaml")).unwrap());
    let network = stacks
        .iter()
        .find(|s| s["spec"]["programRef"]["name"] == "network")
        .unwrap();
    assert_eq!(network["spec"]["config"]["network:cidr"], "10.0.0.0/16");
    assert_eq!(network["spec"]["config"]["logstore:retention"], "30d");
}

/// PKO's teardown cannot silently leave the cloud resources running: without
/// `--destroy-on-finalize` it refuses unless told to keep them; with it, it deletes at once.
#[test]
fn the_pko_teardown_says_what_happens_to_the_cloud_resources() {
    let ws = Ws::configured("aws");
    let bin = ws.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = ws.path().join("kubectl.log");
    let kubectl = bin.join("kubectl");
    std::fs::write(&kubectl, format!("#!/bin/sh\necho \"$*\" >> '{}'\n", log.display())).unwrap();
    std::fs::set_permissions(&kubectl, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let teardown = |extra: &[&str], env: &[(&str, &str)]| {
        let (run, files) = export(&ws, "pko", "aws", extra);
        run.expect(0);
        let script = ws.path().join("teardown.sh");
        std::fs::write(&script, &files["teardown.sh"]).unwrap();
        let _ = std::fs::remove_file(&log);
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let out = std::process::Command::new("sh")
            .arg(&script)
            .env("PATH", path)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (out, std::fs::read_to_string(&log).unwrap_or_default())
    };
    let (out, deleted) = teardown(&[], &[]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    crate::snapshot!(ws.path(), "pko_teardown_refuses_to_leave_the_resources", said);
    assert!(deleted.is_empty(), "deleted anyway: {deleted}");
    let (out, deleted) = teardown(&[], &[("KEEP_RESOURCES", "yes")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(deleted.starts_with("delete stack.pulumi.com "), "{deleted}");
    let (out, deleted) = teardown(&["--destroy-on-finalize"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(deleted.lines().count(), 16, "{deleted}");
    assert!(deleted.lines().all(|l| l.ends_with("--timeout=1h")), "{deleted}");
    // A Stack that is never gone (its destroy failed, or cannot start) stops the teardown
    // after TIMEOUT, with why and the way out.
    std::fs::write(
        &kubectl,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\nexit 1\n", log.display()),
    )
    .unwrap();
    let (out, deleted) = teardown(&["--destroy-on-finalize"], &[("TIMEOUT", "5m")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        deleted.lines().count(),
        1,
        "went on after a Stack that is not gone: {deleted}"
    );
    let said = String::from_utf8_lossy(&out.stderr);
    crate::snapshot!(ws.path(), "pko_teardown_of_a_stack_never_gone", said);
}

#[test]
fn a_workspace_file_backend_is_refused_with_the_fix() {
    let ws = Ws::configured("aws");
    let run = ws
        .exec(&["export", "pko", "-p", "aws", "-s", "dev", "-o", "out"], &[])
        .expect(2);
    crate::snapshot!(ws.path(), "export_pko_needs_a_shared_backend", run.stderr);
    let run = ws
        .exec(
            &["export", "github-actions", "-p", "aws", "-s", "dev", "-o", "out"],
            &[("PULUMI_BACKEND_URL", "file:///srv/state")],
        )
        .expect(2);
    crate::snapshot!(ws.path(), "export_refuses_a_file_backend", run.stderr);
    assert!(!ws.path().join("out").exists(), "nothing written");
}

#[test]
fn an_export_without_a_stack_configuration_says_why_it_needs_one_and_writes_nothing() {
    let ws = Ws::reference();
    let run = ws
        .exec(
            &["export", "github", "-p", "aws", "-s", "dev", "-o", "out"],
            &[("PULUMI_BACKEND_URL", "s3://acme-state")],
        )
        .expect(2);
    // (And nothing created, as a run would create the stack file.)
    crate::snapshot!(ws.path(), "export_without_a_stack_configuration", run.stderr);
    assert!(
        !ws.path().join("config/pulumi/environment").exists(),
        "no environment file written"
    );
    assert!(!ws.path().join("out").exists(), "nothing written");
}

#[test]
fn a_backstage_catalog_needs_no_shared_backend_nor_stack_values_and_each_stack_has_its_namespace() {
    // A fresh checkout: no stack file, the workspace's own backend. A catalog runs nothing.
    let ws = Ws::reference();
    let run = ws
        .exec(&["export", "backstage", "-p", "aws", "-s", "dev", "-o", "out"], &[])
        .expect(0);
    let catalog = std::fs::read_to_string(ws.path().join("out/catalog-info.yaml")).unwrap();
    ws.exec(&["export", "backstage", "-p", "aws", "-s", "prod", "-o", "prod"], &[])
        .expect(0);
    let prod = std::fs::read_to_string(ws.path().join("prod/catalog-info.yaml")).unwrap();
    // Two stacks' catalogs in one Backstage: the same project names, in namespaces of their own.
    for (doc, ns) in [(&catalog, "runner-aws-dev"), (&prod, "runner-aws-prod")] {
        let entities = docs(doc);
        assert!(entities.iter().all(|e| e["metadata"]["namespace"] == ns), "{doc}");
        assert!(doc.contains(&format!("- resource:{ns}/vpc")), "{doc}");
    }
    assert!(!ws.path().join("config/pulumi/environment").exists(), "{}", run.stderr);
}

#[test]
fn another_providers_stack_file_is_refused_as_every_exported_job_would_refuse_it() {
    let ws = Ws::configured("aws");
    let (run, files) = export(&ws, "gitlab-ci", "linode", &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    crate::snapshot!(ws.path(), "export_of_another_providers_stack_file", run.stderr);
    assert!(files.is_empty(), "nothing written: {files:?}");
}

#[test]
fn secrets_travel_only_as_references_and_plain_configuration_travels_whole() {
    let ws = Ws::configured("do");
    ws.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "config:\n",
        "config:\n  digitalocean:token:\n    secure: v1:c2FsdA==:Y2lwaGVydGV4dC1ub3QtdG8tbGVhaw==\n",
    );
    for format in FORMATS {
        let (run, files) = export(&ws, format, "do", &[]);
        run.expect(0);
        let all: String = files.values().cloned().collect();
        assert!(
            !all.contains("Y2lwaGVydGV4dC1ub3QtdG8tbGVhaw"),
            "{format}: no ciphertext"
        );
        for (_, value) in SECRETS {
            assert!(!all.contains(value), "{format}: {value} leaked");
        }
        if format != "backstage" {
            assert!(all.contains("mara.example.com"), "{format}: kic-helm:fqdn travels");
            assert!(
                all.contains("DIGITALOCEAN_TOKEN"),
                "{format}: the credential is referenced"
            );
        }
    }
    let (_, files) = export(&ws, "pko", "do", &[]);
    let stacks = docs(&files["stacks.yaml"]);
    let domk8s = stacks.iter().find(|d| d["metadata"]["name"] == "domk8s").unwrap();
    assert_eq!(domk8s["spec"]["config"]["kic-helm:fqdn"], "mara.example.com");
    assert_eq!(
        domk8s["spec"]["secretsRef"]["digitalocean:token"],
        serde_json::json!({"type": "Secret", "secret": {"name": "runner-dev-config", "key": "digitalocean.token"}})
    );
    let store = stacks.iter().find(|d| d["metadata"]["name"] == "secrets").unwrap();
    assert!(
        store["spec"].get("config").is_none(),
        "the store reads only its own stack file"
    );
    assert!(store["spec"]["secretsRef"].get("sirius:ledger_pwd").is_some());
    for st in &stacks {
        for r in st["spec"]["envRefs"].as_object().unwrap().values() {
            assert_eq!(r["type"], "Secret", "PKO v2 takes only Secret and Literal refs");
        }
        let spec = st["spec"].as_object().unwrap();
        assert!(
            spec.contains_key("branch") ^ spec.contains_key("commit"),
            "exactly one of branch, commit"
        );
        assert_eq!(st["spec"]["backend"], BACKEND.1);
    }
}

#[test]
fn names_are_made_legal_shortened_deterministically_and_printed() {
    let ws = Ws::configured("kubeconfig");
    let long = "Sirius_Ledger.Reporting-Service-With-A-Name-Far-Too-Long";
    ws.project("projects/apps/reporting", long);
    let text = std::fs::read_to_string(ws.path().join("providers/kubeconfig.toml")).unwrap();
    ws.write(
        "providers/kubeconfig.toml",
        &format!(
            "{text}\n[[project]]\nname = \"{long}\"\npath = \"projects/apps/reporting\"\nlayer = \"apps\"\nafter = [\"sirius\"]\n"
        ),
    );
    let (run, files) = export(&ws, "pko", "kubeconfig", &[]);
    let run = run.expect(0);
    let stacks = docs(&files["stacks.yaml"]);
    let mine = stacks
        .iter()
        .find(|d| d["metadata"]["labels"]["runner/project"] == long)
        .unwrap();
    let name = s(&mine["metadata"]["name"]);
    assert!(
        name.len() <= 42 && name.starts_with("sirius-ledger-reporting-service"),
        "{name}"
    );
    assert!(
        name.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{name}"
    );
    crate::snapshot!(ws.path(), "export_pko_says_the_names_it_made", run.stderr);
    let (again, files_again) = export(&ws, "pko", "kubeconfig", &["--namespace", "runner-dev"]);
    again.expect(0);
    assert_eq!(
        files_again["stacks.yaml"], files["stacks.yaml"],
        "the same names every time"
    );
    let (run, files) = export(&ws, "backstage", "kubeconfig", &[]);
    run.expect(0);
    // Backstage takes the name as it is (63 characters, `_` and `.` allowed).
    assert!(files["catalog-info.yaml"].contains(&format!("name: {long}\n")));

    // A Program is the project: its name cannot be changed, so such a project is refused.
    let (run, _) = export(&ws, "pko", "kubeconfig", &["--source", "program"]);
    let run = run.expect(2);
    crate::snapshot!(ws.path(), "export_pko_program_of_an_illegal_name", run.stderr);
}

#[test]
fn every_file_reads_the_same_as_yaml_1_1() {
    let ws = Ws::configured("linode");
    for format in FORMATS {
        let (run, files) = export(&ws, format, "linode", &[]);
        run.expect(0);
        for (path, text) in &files {
            if !is_yaml(path) {
                continue;
            }
            let mut in_block: Option<usize> = None;
            for line in text.lines() {
                let indent = line.len() - line.trim_start().len();
                if let Some(b) = in_block {
                    if line.trim().is_empty() || indent > b {
                        continue;
                    }
                    in_block = None;
                }
                let t = line.trim_start().trim_start_matches("- ");
                if t.starts_with('#') {
                    continue;
                }
                let (key, value) = t
                    .split_once(": ")
                    .map_or((t.trim_end_matches(':'), ""), |(k, v)| (k, v));
                for word in [key, value, t] {
                    assert!(
                        !["y", "yes", "n", "no", "on", "off"].contains(&word.to_ascii_lowercase().as_str()),
                        "{format} {path}: `{line}` is a boolean to YAML 1.1"
                    );
                }
                if value == "|" || value == "|-" {
                    in_block = Some(indent);
                }
            }
        }
        if format == "github-actions" {
            assert!(files["workflows/runner-up.yml"].contains("\n\"on\":\n"));
        }
    }
}

#[test]
fn kebap_needs_the_esc_organization_and_a_repository() {
    let ws = Ws::configured("aws");
    let run = ws
        .exec(
            &crate::support::words(
                "export kebap -p aws -s dev -o out --repo https://git.example.test/a.git --branch main",
            ),
            &[BACKEND],
        )
        .expect(2);
    // A required flag of kebap's: clap says so before anything is read.
    crate::snapshot!(ws.path(), "export_kebap_needs_the_esc_org", run.stderr);
    let run = ws
        .exec(
            &["export", "argo-workflows", "-p", "aws", "-s", "dev", "-o", "out"],
            &[BACKEND],
        )
        .expect(2);
    crate::snapshot!(ws.path(), "export_argo_needs_a_repository", run.stderr);
    // An `origin` no pod can clone is said, with the flag that overrides it.
    let git = |args: &[&str]| crate::support::git(ws.path(), args);
    git(&["init", "-q", "-b", "main"]);
    git(&["remote", "add", "origin", "/home/me/platform"]);
    let argo = [
        "export",
        "argo-workflows",
        "-p",
        "aws",
        "-s",
        "dev",
        "-o",
        "out",
        "--branch",
        "main",
    ];
    ws.exec(&argo, &[BACKEND])
        .expect(0)
        .stderr_has("the `origin` remote /home/me/platform is a path on this machine, which no pod can reach")
        .stderr_has("fix: pass --repo with a URL the engine can clone");
    git(&["remote", "set-url", "origin", "git@git.example.test:acme/platform.git"]);
    ws.exec(&argo, &[BACKEND])
        .expect(0)
        .stderr_has("is SSH, which needs a key the exported objects do not carry");
    git(&crate::support::words(
        "remote set-url origin https://git.example.test/acme/platform.git",
    ));
    let run = ws.exec(&argo, &[BACKEND]).expect(0);
    assert!(!run.stderr.contains("the `origin` remote"), "{}", run.stderr);
}

/// A JSON value as a Lua table constructor (test data: ASCII strings).
fn lua(v: &Value) -> String {
    match v {
        Value::Null => "nil".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => serde_json::to_string(s).unwrap(),
        Value::Array(items) => format!("{{{}}}", items.iter().map(lua).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("[{}] = {}", serde_json::to_string(k).unwrap(), lua(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A PKO Stack of generation 2 as the operator reports it: `observed` generation, conditions as
/// (type, status, message).
fn stack_with(observed: Option<u64>, conditions: &[(&str, &str, &str)]) -> Value {
    let mut stack = serde_json::json!({
        "apiVersion": "pulumi.com/v1",
        "kind": "Stack",
        "metadata": {"name": "vpc", "generation": 2},
        "spec": {"stack": "dev"},
    });
    if let Some(observed) = observed {
        let conditions: Vec<Value> = conditions
            .iter()
            .map(|(t, s, m)| serde_json::json!({"type": t, "status": s, "reason": "R", "message": m}))
            .collect();
        stack["status"] = serde_json::json!({"observedGeneration": observed, "conditions": conditions});
    }
    stack
}

/// Argo CD up to v3.5 calls a PKO Stack healthy at once, so the KEBAP bundle brings the health
/// check: Lua 5.1 (what Argo CD's gopher-lua speaks) runs it on Stacks in each state the operator
/// reports, and kubectl applies the patch to an `argocd-cm` as the file's comment says.
#[requires("lua5.1", "kubectl")]
#[test]
fn kebap_health_check_follows_the_stack_conditions_and_patches_argocd_cm() {
    if tool("lua5.1").is_none() || tool("kubectl").is_none() {
        return;
    }
    let ws = Ws::configured("aws");
    let (run, files) = export(&ws, "kebap", "aws", &[]);
    run.expect(0);
    let patch_file = &files["argocd-health.yaml"];
    let key = "resource.customizations.health.pulumi.com_Stack";
    let script = s(&docs(patch_file)[0]["data"][key]);
    std::fs::write(ws.path().join("health.lua"), &script).unwrap();

    let cases = [
        (
            stack_with(None, &[]),
            "Progressing",
            "waiting for the operator to see this spec",
        ),
        (
            stack_with(Some(1), &[("Ready", "True", "the last update succeeded")]),
            "Progressing",
            "waiting for the operator to see this spec",
        ),
        (
            stack_with(
                Some(2),
                &[("Ready", "False", ""), ("Reconciling", "True", "updating the stack")],
            ),
            "Progressing",
            "updating the stack",
        ),
        (
            stack_with(
                Some(2),
                &[
                    ("Ready", "False", ""),
                    ("Reconciling", "True", "retrying"),
                    ("Stalled", "True", "update failed"),
                ],
            ),
            "Degraded",
            "update failed",
        ),
        (
            stack_with(
                Some(2),
                &[
                    ("Ready", "True", "deployed"),
                    ("Reconciling", "False", ""),
                    ("Stalled", "False", ""),
                ],
            ),
            "Healthy",
            "deployed",
        ),
        (
            stack_with(Some(2), &[("Ready", "False", "")]),
            "Progressing",
            "waiting for the operator to reconcile the stack",
        ),
    ];
    for (stack, status, message) in cases {
        let harness = format!(
            "obj = {}\nlocal hs = assert(loadfile(\"health.lua\"))()\nio.write(hs.status, \"\\t\", hs.message, \"\\n\")\n",
            lua(&stack)
        );
        let out = Command::new("lua5.1")
            .args(["-e", &harness])
            .current_dir(ws.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{status}\t{message}\n"),
            "{stack}"
        );
    }

    // The command the file's comment gives, offline on a copy of Argo CD's settings.
    let command = patch_file
        .lines()
        .find_map(|l| l.strip_prefix("#   kubectl -n argocd patch configmap argocd-cm "))
        .expect("the file says how to apply it");
    std::fs::write(ws.path().join("argocd-health.yaml"), patch_file).unwrap();
    std::fs::write(
        ws.path().join("argocd-cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata: {url: https://cd.example.test}\n",
    )
    .unwrap();
    let out = Command::new("kubectl")
        .args(["patch", "-f", "argocd-cm.yaml", "--local", "-o", "json"])
        .args(command.split(' '))
        .current_dir(ws.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let patched: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s(&patched["data"][key]), script);
    assert_eq!(s(&patched["data"]["url"]), "https://cd.example.test");
}

/// The directory of the test tools from `PyPI` and npm (scripts/install-test-tools).
pub(crate) fn tools_dir() -> PathBuf {
    test_tools::cache()
}

#[requires("check-jsonschema")]
#[test]
fn github_and_gitlab_files_validate_with_check_jsonschema() {
    let Some(check) = tool("check-jsonschema") else {
        return;
    };
    for provider in providers() {
        let ws = Ws::configured(provider);
        for (format, schema) in [
            ("github-actions", "vendor.github-workflows"),
            ("gitlab-ci", "vendor.gitlab-ci"),
        ] {
            let (run, files) = export(&ws, format, provider, &[]);
            run.expect(0);
            let dir = ws.path().join(format!("out/{format}-{provider}-0"));
            let paths: Vec<PathBuf> = files.keys().map(|p| dir.join(p)).collect();
            let out = Command::new(&check)
                .args(["--builtin-schema", schema])
                .args(&paths)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{format} {provider}:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[requires("kubernetes-models")]
#[test]
fn argo_argo_cd_external_secrets_and_backstage_objects_pass_their_published_validators() {
    let Some(_) = tool("kubernetes-models") else { return };
    for provider in providers() {
        let ws = Ws::configured(provider);
        let mut objects = Vec::new();
        for format in ["argo-workflows", "kebap", "backstage"] {
            let (run, files) = export(&ws, format, provider, &[]);
            run.expect(0);
            for (path, text) in &files {
                if is_yaml(path) {
                    objects.extend(docs(text).into_iter().filter(|d| {
                        let api = d["apiVersion"].as_str().unwrap_or_default();
                        api.starts_with("argoproj.io/")
                            || api.starts_with("external-secrets.io/")
                            || api.starts_with("backstage.io/")
                    }));
                }
            }
        }
        let kinds: BTreeSet<String> = objects.iter().map(|o| s(&o["kind"])).collect();
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            [
                "Application",
                "ClusterSecretStore",
                "ExternalSecret",
                "Resource",
                "System",
                "Workflow",
                "WorkflowTemplate"
            ]
        );
        let mut child = Command::new("node")
            .arg(Path::new(crate::support::REPO).join("tests/cli/consumers.mjs"))
            .env("RUNNER_TEST_TOOLS", tools_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs the validators");
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            serde_json::to_string(&objects).unwrap().as_bytes(),
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{provider}:\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with("ok ")).count(),
            objects.len(),
            "{stdout}"
        );
    }
}

/// The published CRD that serves `apiVersion`/`kind`, by file name in `RUNNER_SCHEMAS_DIR`.
const CRDS: [(&str, &str, &str); 6] = [
    ("pulumi.com/v1", "Stack", "pko-pulumi.com_stacks.yaml"),
    ("pulumi.com/v1", "Program", "pko-pulumi.com_programs.yaml"),
    ("argoproj.io/v1alpha1", "Workflow", "argo-workflows_workflows.yaml"),
    ("argoproj.io/v1alpha1", "Application", "argocd_application-crd.yaml"),
    ("external-secrets.io/v1", "ExternalSecret", "eso_externalsecrets.yaml"),
    (
        "external-secrets.io/v1",
        "ClusterSecretStore",
        "eso_clustersecretstores.yaml",
    ),
];

/// The `openAPIV3Schema` of the served version of a CRD, after checking it serves this group,
/// version and kind.
fn crd_schema(dir: &Path, api_version: &str, kind: &str, file: &str) -> Value {
    let crd: Value = serde_saphyr::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
    let (group, version) = api_version.split_once('/').unwrap();
    assert_eq!(crd["spec"]["group"], group, "{file}");
    assert_eq!(crd["spec"]["names"]["kind"], kind, "{file}");
    let served = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == version && v["served"] == true)
        .unwrap_or_else(|| panic!("{file} serves no {version}"));
    served["schema"]["openAPIV3Schema"].clone()
}

#[requires("schemas")]
#[test]
fn kubernetes_objects_validate_against_the_crds_in_runner_schemas_dir() {
    // The CRDs of PKO, Argo Workflows, Argo CD and External Secrets as published upstream: no
    // package registry ships them, so they are read from a directory holding those files
    // (RUNNER_SCHEMAS_DIR); without it this check is skipped.
    let Some(dir) = tool("schemas") else {
        return;
    };
    let validators: BTreeMap<(String, String), jsonschema::Validator> = CRDS
        .iter()
        .map(|(api, kind, file)| {
            let schema = crd_schema(&dir, api, kind, file);
            let v = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft4)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            (((*api).to_string(), (*kind).to_string()), v)
        })
        .collect();
    let mut seen = BTreeSet::new();
    for provider in providers() {
        let ws = Ws::configured(provider);
        for (format, extra) in [
            ("pko", &[][..]),
            (
                "pko",
                &crate::support::words("--source program --succeeded-within 30m --image registry.example/pulumi:3")[..],
            ),
            ("kebap", &[][..]),
            ("kebap", &["--source", "program"][..]),
            ("argo-workflows", &[][..]),
        ] {
            let (run, files) = export(&ws, format, provider, extra);
            run.expect(0);
            for (path, text) in files.iter().filter(|(p, _)| is_yaml(p)) {
                for object in docs(text) {
                    // Not every document is an object: argocd-health.yaml is a patch (`data` only).
                    let (Some(api), Some(kind)) = (object["apiVersion"].as_str(), object["kind"].as_str()) else {
                        continue;
                    };
                    let key = (api.to_string(), kind.to_string());
                    let Some(v) = validators.get(&key) else { continue };
                    seen.insert(key.1.clone());
                    let errors: Vec<String> = v
                        .iter_errors(&object)
                        .map(|e| format!("{e} at {}", e.instance_path()))
                        .collect();
                    assert!(errors.is_empty(), "{format} {provider} {path}: {errors:#?}");
                    // The CRDs' CEL rules, which a JSON-schema validator does not run.
                    if key.1 == "Stack" {
                        assert!(s(&object["metadata"]["name"]).len() <= 42);
                        let spec = object["spec"].as_object().unwrap();
                        if spec.contains_key("projectRepo") {
                            assert!(spec.contains_key("branch") ^ spec.contains_key("commit"));
                        }
                    }
                    if key.1 == "ClusterSecretStore" {
                        let p = &object["spec"]["provider"]["pulumi"];
                        assert!(p.get("auth").is_some() ^ p.get("accessToken").is_some());
                    }
                }
            }
        }
    }
    assert_eq!(seen.len(), CRDS.len(), "every kind was checked: {seen:?}");
}

/// The Secrets an object names (PKO's `secretsRef` and `envRefs`, External Secrets' and Argo's
/// `secretRef`/`secretKeyRef`), as (namespace, name): the user makes them before applying.
fn secrets_named(object: &Value, namespace: &str, out: &mut BTreeSet<(String, String)>) {
    match object {
        Value::Object(m) => {
            let named = |v: &Value| v["name"].as_str().map(str::to_string);
            if m.get("type").and_then(Value::as_str) == Some("Secret")
                && let Some(name) = m.get("secret").and_then(named)
            {
                out.insert((namespace.to_string(), name));
            }
            for key in ["secretRef", "secretKeyRef"] {
                if let Some(name) = m.get(key).and_then(named) {
                    let ns = m[key]["namespace"].as_str().unwrap_or(namespace);
                    out.insert((ns.to_string(), name));
                }
            }
            for v in m.values() {
                secrets_named(v, namespace, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| secrets_named(v, namespace, out)),
        _ => {}
    }
}

#[requires("schemas", "kube")]
#[test]
fn every_exported_object_is_accepted_by_a_real_api_server() {
    // What a cluster with the engines installed accepts: the published CRDs applied to the local
    // cluster (scripts/local-cluster), then every object of the Kubernetes exports applied with
    // the server's own dry run and strict field validation, generateName objects created so.
    let Some(dir) = tool("schemas") else {
        return;
    };
    let Some(k) = crate::cluster::cluster() else {
        return;
    };
    // The WorkflowTemplate CRD too (the teardown's template): installed with Argo Workflows.
    let mut crds: BTreeSet<&str> = CRDS.iter().map(|c| c.2).collect();
    crds.insert("argo-workflows_workflowtemplates.yaml");
    for file in &crds {
        let file = dir.join(file);
        k.kubectl(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            file.to_str().unwrap(),
        ])
        .expect(0);
    }
    k.kubectl(&["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"])
        .expect(0);
    let mut kinds = BTreeSet::new();
    let program = [
        "--source",
        "program",
        "--succeeded-within",
        "30m",
        "--destroy-on-finalize",
        "--image",
        "registry.example/pulumi:3",
    ];
    for provider in providers() {
        let ws = Ws::configured(provider);
        for (format, extra) in [
            ("pko", &[][..]),
            ("pko", &program[..]),
            ("kebap", &[][..]),
            ("kebap", &["--source", "program"][..]),
            ("argo-workflows", &[][..]),
        ] {
            let (run, files) = export(&ws, format, provider, extra);
            run.expect(0);
            let what = format!("{format} {} {provider}", extra.join(" "));
            kinds.extend(accepted_by_the_server(k, &what, &files));
        }
    }
    for kind in [
        "Stack",
        "Program",
        "Workflow",
        "WorkflowTemplate",
        "Application",
        "ExternalSecret",
        "ClusterSecretStore",
    ] {
        assert!(kinds.contains(kind), "no {kind} among {kinds:?}");
    }
}

/// Every object of an export's YAML `files`, applied to the cluster with the server's dry run
/// and strict validation (`create` for a generateName object), after the namespaces they are in
/// or make (made for real: the objects' dry run needs them) and the Secrets they name (made as a
/// user makes them, by the server's dry run). Their kinds.
fn accepted_by_the_server(
    k: &crate::cluster::Cluster,
    what: &str,
    files: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut kinds = BTreeSet::new();
    let mut objects = Vec::new();
    let mut namespaces = BTreeSet::new();
    let mut secrets = BTreeSet::new();
    for (path, text) in files.iter().filter(|(p, _)| is_yaml(p)) {
        for object in docs(text) {
            // Not every document is an object: argocd-health.yaml is a patch (`data` only).
            let Some(kind) = object["kind"].as_str().filter(|_| object["apiVersion"].is_string()) else {
                continue;
            };
            kinds.insert(kind.to_string());
            let ns = object["metadata"]["namespace"].as_str();
            if kind == "Namespace" {
                namespaces.insert(s(&object["metadata"]["name"]));
            }
            namespaces.extend(ns.map(str::to_string));
            // A PKO Program holds a Pulumi program: its Secrets are resources it makes, not ones it reads.
            if kind != "Program" {
                secrets_named(&object, ns.unwrap_or("default"), &mut secrets);
            }
            objects.push((path.clone(), object));
        }
    }
    for ns in &namespaces {
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        let made = k.kubectl_with(&["apply", "-f", "-"], &namespace.to_string());
        assert_eq!(made.code, 0, "{what}: namespace {ns}: {}", made.stderr);
    }
    for (ns, name) in &secrets {
        let made = k.kubectl(&[
            "create",
            "secret",
            "generic",
            name,
            "-n",
            ns,
            "--from-literal=key=value",
            "--dry-run=server",
            "--validate=strict",
        ]);
        assert_eq!(made.code, 0, "{what}: Secret {ns}/{name}: {}", made.stderr);
    }
    for (path, object) in &objects {
        let generated = object["metadata"]["name"].is_null() && object["metadata"]["generateName"].is_string();
        let verb = if generated { "create" } else { "apply" };
        let run = k.kubectl_with(
            &[verb, "--dry-run=server", "--validate=strict", "-f", "-"],
            &object.to_string(),
        );
        let (kind, name) = (&object["kind"], &object["metadata"]["name"]);
        assert_eq!(run.code, 0, "{what} {path}: {kind} {name}: {}", run.stderr);
    }
    kinds
}

#[test]
fn standard_output_takes_every_file_and_a_commit_replaces_the_branch() {
    let ws = Ws::configured("aws");
    let run = ws
        .exec(
            &["export", "gitlab-ci", "-p", "aws", "-s", "dev", "-o", "-"],
            &[BACKEND],
        )
        .expect(0);
    assert!(
        run.stdout.starts_with("# ==> runner-up.gitlab-ci.yml <==\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("\n# ==> runner-destroy.gitlab-ci.yml <==\n"));
    assert!(!ws.path().join("exports").exists(), "nothing written");
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let run = ws
        .exec(
            &[
                "export",
                "pko",
                "-p",
                "aws",
                "-s",
                "dev",
                "-o",
                "-",
                "--repo",
                "https://git.example.test/a.git",
                "--commit",
                sha,
            ],
            &[BACKEND],
        )
        .expect(0);
    let stacks = run.stdout.split("# ==> stacks.yaml <==\n").nth(1).unwrap();
    let stacks = stacks.split("# ==> teardown.sh <==").next().unwrap();
    for st in docs(stacks) {
        assert_eq!(st["spec"]["commit"], sha);
        assert!(st["spec"].get("branch").is_none());
    }
}

#[test]
fn a_shared_disk_backend_outside_the_repository_is_taken_for_gitlab_only() {
    let ws = Ws::configured("aws");
    let shared = tempfile::tempdir().unwrap();
    let url = format!("file://{}", shared.path().display());
    // GitLab runners may mount one disk at one path (shell executors on one machine, NFS): taken,
    // with a note saying what it assumes.
    let run = ws
        .exec(
            &["export", "gitlab-ci", "-p", "aws", "-s", "dev", "-o", "gl"],
            &[("PULUMI_BACKEND_URL", &url)],
        )
        .expect(0);
    let said = |stderr: &str| stderr.replace(shared.path().to_str().unwrap(), "[shared]");
    crate::snapshot!(ws.path(), "export_gitlab_ci_on_a_shared_disk", said(&run.stderr));
    assert!(ws.path().join("gl/runner-up.gitlab-ci.yml").is_file());
    // The other engines' jobs run on machines or pods that mount nothing of ours.
    for format in ["github-actions", "argo-workflows", "pko"] {
        let out = format!("out-{format}");
        let mut args = vec!["export", format, "-p", "aws", "-s", "dev", "-o", &out];
        args.extend(repo_args(format));
        let run = ws.exec(&args, &[("PULUMI_BACKEND_URL", &url)]).expect(2);
        crate::snapshot!(
            ws.path(),
            format!("export_{format}_on_a_shared_disk"),
            said(&run.stderr)
        );
        assert!(!ws.path().join(&out).exists(), "{format}: nothing written");
    }
    // Inside the workspace, each job's checkout replaces it; a relative path is the job's own.
    for (inside, name) in [
        (format!("file://{}/state", ws.path().display()), "inside_the_workspace"),
        ("file://state".to_string(), "relative"),
    ] {
        let run = ws
            .exec(
                &["export", "gitlab-ci", "-p", "aws", "-s", "dev", "-o", "gl2"],
                &[("PULUMI_BACKEND_URL", &inside)],
            )
            .expect(2);
        // Which each job's checkout replaces; the fix: file:///DIR every runner mounts.
        crate::snapshot!(ws.path(), format!("export_gitlab_ci_backend_{name}"), run.stderr);
    }
    assert!(!ws.path().join("gl2").exists());
}

/// A git repository holding the workspace in `platform/`, with an `origin`.
fn repository_with_workspace_below() -> (tempfile::TempDir, PathBuf) {
    let repo = tempfile::tempdir().unwrap();
    let ws = Ws::configured("aws");
    let below = repo.path().join("platform");
    let status = Command::new("cp")
        .arg("-r")
        .arg(ws.path())
        .arg(&below)
        .status()
        .unwrap();
    assert!(status.success());
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["remote", "add", "origin", "https://git.example.test/acme/platform.git"][..],
    ] {
        assert!(
            Command::new("git")
                .args(args)
                .current_dir(repo.path())
                .status()
                .unwrap()
                .success()
        );
    }
    (repo, below)
}

#[test]
fn a_kebap_bundle_outside_the_repository_is_refused_with_the_fix_and_inside_its_path_is_the_repositorys() {
    let (repo, platform) = repository_with_workspace_below();
    let kebap = |dir: &Path, args: &[&str]| {
        let mut all = vec!["export", "kebap", "-p", "aws", "-s", "dev", "--esc-org", "acme"];
        all.extend(args);
        crate::support::run(
            crate::support::runner(repo.path(), &all)
                .current_dir(dir)
                .env(BACKEND.0, BACKEND.1),
        )
    };
    let synced = |dir: &Path| {
        let app = &docs(&std::fs::read_to_string(dir.join("application.yaml")).unwrap())[0];
        s(&app["spec"]["source"]["path"])
    };
    // Inside the repository, beside the workspace (`..` on the command line): the path from the
    // repository's root, which exists once the bundle is committed.
    kebap(&platform, &["-o", "../deploy/kebap"]).expect(0);
    assert_eq!(synced(&repo.path().join("deploy/kebap")), "deploy/kebap/manifests");
    assert!(repo.path().join("deploy/kebap/manifests").is_dir());
    kebap(&platform, &["-o", "bundle"]).expect(0);
    assert_eq!(synced(&platform.join("bundle")), "platform/bundle/manifests");

    // Outside the repository: no path Argo CD could sync; refused with the fix, nothing written.
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("kebap");
    let run = kebap(&platform, &["-o", target.to_str().unwrap()]).expect(2);
    let said = run.stderr.replace(outside.path().to_str().unwrap(), "[outside]");
    crate::snapshot!(repo.path(), "export_kebap_bundle_outside_the_repository", said);
    assert!(!target.exists(), "nothing written");
    // With --bundle-path naming where it will be committed, the Application syncs that.
    kebap(
        &platform,
        &["-o", target.to_str().unwrap(), "--bundle-path", "deploy/dev/"],
    )
    .expect(0);
    assert_eq!(synced(&target), "deploy/dev/manifests");
    // Printed on standard output, its place is unknown without --bundle-path.
    kebap(&platform, &["-o", "-"]).expect(2).stderr_has("--bundle-path");
    for bad in ["/srv/kebap", "../elsewhere"] {
        kebap(&platform, &["-o", "-", "--bundle-path", bad])
            .expect(2)
            .stderr_has("is not a directory inside the repository");
    }
}

#[requires("actionlint")]
#[test]
fn every_github_workflow_of_every_provider_passes_actionlint() {
    let Some(actionlint) = tool("actionlint") else {
        return;
    };
    for provider in providers() {
        let ws = Ws::configured(provider);
        let (run, files) = export(&ws, "github-actions", provider, &[]);
        run.expect(0);
        let dir = ws.path().join(format!("out/github-actions-{provider}-0"));
        assert_eq!(files.len(), 2, "{files:?}");
        // shellcheck is not installed here: actionlint's own rules (expressions, needs, inputs,
        // environments, runner labels, action inputs) are what is checked.
        let out = Command::new(&actionlint)
            .args(["-no-color", "-shellcheck=", "-pyflakes="])
            .args(files.keys().map(|p| dir.join(p)))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{provider}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// gitlab-ci-local in a git repository holding `pipeline` as its `.gitlab-ci.yml`.
fn gitlab_ci_local(gcl: &Path, repo: &Path, pipeline: &str, args: &[&str]) -> String {
    std::fs::create_dir_all(repo).unwrap();
    std::fs::write(repo.join(".gitlab-ci.yml"), pipeline).unwrap();
    if !repo.join(".git").exists() {
        assert!(
            Command::new("git")
                .args(["init", "-q"])
                .current_dir(repo)
                .status()
                .unwrap()
                .success()
        );
    }
    let out = Command::new(gcl)
        .args(args)
        .current_dir(repo)
        .env("HOME", repo.join(".home"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "gitlab-ci-local {args:?}:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The job names `gitlab-ci-local --list` prints (its first column, after the header line).
fn listed(list: &str) -> Vec<String> {
    list.lines()
        .skip_while(|l| !l.starts_with("name "))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[requires("gitlab-ci-local")]
#[test]
fn every_gitlab_pipeline_of_every_provider_passes_gitlab_ci_local_preview_and_list() {
    let Some(gcl) = tool("gitlab-ci-local") else { return };
    for provider in providers() {
        let ws = Ws::configured(provider);
        let (run, files) = export(&ws, "gitlab-ci", provider, &[]);
        run.expect(0);
        let projects = plan_edges(&ws, provider)
            .into_iter()
            .flat_map(|(a, b)| [a, b])
            .collect::<BTreeSet<_>>()
            .len();
        for (file, text) in &files {
            let repo = ws.path().join("gl").join(file);
            // --preview: GitLab's own expansion of the file (includes, defaults, anchors).
            let preview = gitlab_ci_local(&gcl, &repo, text, &["--preview"]);
            assert!(preview.contains("stages:"), "{provider} {file}:\n{preview}");
            let list = gitlab_ci_local(&gcl, &repo, text, &["--list"]);
            if file.starts_with("runner-up") {
                assert_eq!(listed(&list).len(), projects, "{provider} {file}:\n{list}");
                continue;
            }
            // The teardown: no job at all unless the variable names the stack; then its manual
            // confirmation first, every project after it.
            assert!(
                listed(&list).is_empty(),
                "{provider} {file} without the variable:\n{list}"
            );
            let other = gitlab_ci_local(
                &gcl,
                &repo,
                text,
                &["--list", "--variable", "RUNNER_DESTROY_STACK=prod"],
            );
            assert!(
                listed(&other).is_empty(),
                "{provider} {file} for another stack:\n{other}"
            );
            let named = gitlab_ci_local(&gcl, &repo, text, &["--list", "--variable", "RUNNER_DESTROY_STACK=dev"]);
            let jobs = listed(&named);
            assert_eq!(jobs.len(), projects + 1, "{provider} {file}:\n{named}");
            assert_eq!(jobs[0], "confirm-destroy", "{named}");
            let confirm = named.lines().find(|l| l.starts_with("confirm-destroy")).unwrap();
            assert!(confirm.contains(" manual "), "{confirm}");
        }
    }
}

/// The guard's check itself, run as the engine runs it: the right name passes, anything else
/// (another stack, nothing, a near miss) fails before any project is touched.
fn assert_guard(script: &str, shell: &str, what: &str) {
    for (given, passes) in [
        ("dev", true),
        ("prod", false),
        ("", false),
        ("dev ", false),
        ("DEV", false),
    ] {
        let out = Command::new(shell)
            .args(["-c", script])
            .env("CONFIRM", given)
            .output()
            .unwrap();
        assert_eq!(
            out.status.success(),
            passes,
            "{what} with {given:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn github_workflows_bound_each_job_cache_the_build_and_give_a_destroy_no_project_secret() {
    let ws = Ws::configured("aws");
    let (run, files) = export(&ws, "github-actions", "aws", &[]);
    run.expect(0);
    let up = &docs(&files["workflows/runner-up.yml"])[0];
    let destroy = &docs(&files["workflows/runner-destroy.yml"])[0];
    for wf in [up, destroy] {
        let jobs = wf["jobs"].as_object().unwrap();
        let build = &jobs["runner"]["steps"];
        assert!(
            build
                .as_array()
                .unwrap()
                .iter()
                .any(|st| st["uses"] == "actions/cache@v4"),
            "{build}"
        );
        for (id, job) in jobs
            .iter()
            .filter(|(id, _)| !["runner", "confirm"].contains(&id.as_str()))
        {
            let minutes = job["timeout-minutes"]
                .as_u64()
                .unwrap_or_else(|| panic!("{id}: no timeout-minutes"));
            assert!((10..=360).contains(&minutes), "{id}: {minutes}");
        }
    }
    // The up reads the project secrets; the destroy asks for none, so it is given none.
    assert!(
        up["env"].get("MARA_SECRET_SIRIUS_LEDGER_PWD").is_some(),
        "{}",
        up["env"]
    );
    let env = destroy["env"].as_object().unwrap();
    assert!(!env.keys().any(|k| k.starts_with("MARA_SECRET_")), "{env:?}");
    assert!(env.contains_key("PULUMI_CONFIG_PASSPHRASE") && env.contains_key("AWS_ACCESS_KEY_ID"));
}

#[test]
fn github_and_argo_teardowns_start_only_with_the_stacks_name() {
    let ws = Ws::configured("aws");
    let (run, files) = export(&ws, "github-actions", "aws", &[]);
    run.expect(0);
    let wf = &docs(&files["workflows/runner-destroy.yml"])[0];
    // Started by hand only, with a required input.
    let on = wf["on"].as_object().unwrap();
    assert_eq!(on.keys().collect::<Vec<_>>(), ["workflow_dispatch"]);
    assert_eq!(on["workflow_dispatch"]["inputs"]["stack"]["required"], true);
    let jobs = wf["jobs"].as_object().unwrap();
    let confirm = &jobs["confirm"];
    assert_eq!(confirm["environment"], "destroy-dev");
    assert!(confirm.get("needs").is_none(), "the first job");
    let step = &confirm["steps"][0];
    assert_eq!(step["env"]["CONFIRM"], "${{ inputs.stack }}");
    assert!(
        !s(&step["run"]).contains("${{"),
        "the input is never pasted into the script"
    );
    assert_guard(&s(&step["run"]), "bash", "GitHub's confirm job");
    // Every other job waits for it: the build needs it, every project job needs the build.
    assert_eq!(jobs["runner"]["needs"], serde_json::json!(["confirm"]));
    for (id, job) in jobs
        .iter()
        .filter(|(id, _)| !["runner", "confirm"].contains(&id.as_str()))
    {
        assert!(job["needs"].as_array().unwrap().iter().any(|n| n == "runner"), "{id}");
    }
    let up = &docs(&files["workflows/runner-up.yml"])[0];
    assert!(up["jobs"].get("confirm").is_none(), "up needs no confirmation");

    let (run, files) = export(&ws, "argo-workflows", "aws", &[]);
    run.expect(0);
    let template = &docs(&files["workflow-destroy.yaml"])[0];
    assert_eq!(
        template["kind"], "WorkflowTemplate",
        "nothing runs a template by itself"
    );
    let parameter = &template["spec"]["arguments"]["parameters"][0];
    assert_eq!(parameter["name"], "confirm");
    assert!(parameter.get("value").is_none(), "argo submit must be given it");
    let templates = template["spec"]["templates"].as_array().unwrap();
    let check = templates.iter().find(|t| t["name"] == "confirm").unwrap();
    assert_eq!(check["container"]["env"][0]["value"], "{{workflow.parameters.confirm}}");
    assert_guard(&s(&check["container"]["args"][0]), "sh", "Argo's confirm task");
    for task in templates[0]["dag"]["tasks"].as_array().unwrap() {
        if task["name"] != "confirm" {
            assert!(
                task.get("dependencies").is_some(),
                "{}: every task waits, the first ones for the confirmation",
                task["name"]
            );
        }
    }
    let up = &docs(&files["workflow-up.yaml"])[0];
    assert_eq!(up["kind"], "Workflow");
}

#[requires("hadolint")]
#[test]
fn the_dockerfile_passes_hadolint_and_builds_the_pulumi_the_exports_expect() {
    let repo = Path::new(crate::support::REPO);
    let dockerfile = std::fs::read_to_string(repo.join("Dockerfile")).unwrap();
    // The pulumi it builds is the pinned one the tests run, and the exports' default.
    let versions = std::fs::read_to_string(repo.join("scripts/real-pulumi/versions")).unwrap();
    let pin = versions
        .lines()
        .find_map(|l| l.strip_prefix("pulumi v"))
        .unwrap()
        .trim();
    assert!(
        dockerfile.contains(&format!("\nARG PULUMI_VERSION={pin}\n")),
        "the Dockerfile's PULUMI_VERSION is not the pin {pin}"
    );
    let ws = Ws::configured("aws");
    let (run, files) = export(&ws, "gitlab-ci", "aws", &[]);
    run.expect(0);
    let up = &files["runner-up.gitlab-ci.yml"];
    assert!(
        up.contains(&format!(
            "#   docker build --build-arg PULUMI_VERSION={pin} -t runner:latest ."
        )),
        "{up}"
    );
    let Some(hadolint) = tool("hadolint") else {
        return;
    };
    let lint = |path: &Path| Command::new(&hadolint).arg("--no-color").arg(path).output().unwrap();
    let out = lint(&repo.join("Dockerfile"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    // Without its two reasoned exceptions hadolint objects: it reads this file.
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("Dockerfile");
    std::fs::write(&bare, dockerfile.replace("# hadolint ignore=DL3008,SC2086\n", "")).unwrap();
    let out = lint(&bare);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("DL3008"));
}

/// A workspace in a sub-folder of its repository (`examples/local` in this one): the GitHub and
/// GitLab jobs, which start at the checkout's root, write the stack file where the workspace is
/// and run the runner there (`--workspace`), so `-p local` is found. (Argo and PKO carry the
/// folder in their own fields.)
#[test]
fn ci_exports_of_a_workspace_in_a_sub_folder_run_the_runner_there() {
    let repo = tempfile::tempdir().unwrap();
    let ws_dir = repo.path().join("examples/local");
    std::fs::create_dir_all(&ws_dir).unwrap();
    let ws = Ws {
        dir: tempfile::TempDir::new_in(&ws_dir).unwrap(),
    };
    for d in ["providers", "projects", "scripts"] {
        crate::support::copy_dir(&Path::new(crate::support::REPO).join(d), &ws.path().join(d));
    }
    ws.write(
        "config/pulumi/Pulumi.dev.yaml",
        &crate::support::stack_config("kubeconfig"),
    );
    crate::support::git(repo.path(), &["init", "-q"]);
    let sub = ws.path().strip_prefix(repo.path()).unwrap().display().to_string();
    // Argo's task runs in the workspace (its `workingDir`): the stack file's path is from there.
    let (run, files) = export(&ws, "argo-workflows", "kubeconfig", &[]);
    run.expect(0);
    let up = &files["workflow-up.yaml"];
    assert!(up.contains(&format!("workingDir: /src/{sub}")), "{up}");
    assert!(up.contains("> config/pulumi/Pulumi.dev.yaml\n"), "{up}");
    for format in ["gitlab-ci", "github-actions"] {
        let (run, files) = export(&ws, format, "kubeconfig", &[]);
        let run = run.expect(0);
        let all: String = files.values().cloned().collect();
        assert!(
            all.contains(&format!("-s dev --workspace {sub} --non-interactive")),
            "{format}: {}\n{all}",
            run.stderr
        );
        assert!(
            all.contains(&format!("{sub}/config/pulumi/Pulumi.dev.yaml")),
            "{format}: {all}"
        );
        assert!(
            all.contains(&format!("mkdir -p {sub}/config/pulumi")),
            "{format}: {all}"
        );
        // The header's command works from the root, where the files live, too.
        assert!(
            all.contains(&format!(
                "# Made by `runner export {format} --workspace {sub} -p kubeconfig -s dev`"
            )),
            "{format}: {all}"
        );
    }
}
