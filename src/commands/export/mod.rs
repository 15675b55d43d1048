//! `export`: the plan written for another engine. This conductor does the reading and writing
//! around the pure exports (`crate::export`): it checks the state backend is one every engine
//! reaches, reads the stack configuration (plain values travel with the export, secrets only as
//! references), the repository's remote and revision, the programs (`--source program`), then
//! writes the files (`outdir`: only inside the output directory, only over its own files) and
//! prints every name it had to change.

mod outdir;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};

use super::write_result;
use crate::config::backend::{BACKEND_VAR, Backend};
use crate::config::prepare;
use crate::config::stackfile::{self, StackFile};
use crate::config::{SECRET_PREFIX, env_name};
use crate::error::{RunnerError, exit};
use crate::export::names::{Names, Rule};
use crate::export::{self, Esc, Format, Input, Repo, Revision, SecretKey, Source};
use crate::plan::{Operation, Plan};
use crate::report;
use crate::settings::{Settings, Target};

/// Where the files go.
#[derive(Debug, Clone)]
pub(crate) enum Output {
    Dir(PathBuf),
    Stdout,
}

/// What `export` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct ExportOptions {
    pub(crate) format: Format,
    /// `None`: `exports/<provider>-<stack>/<format>` under the workspace.
    pub(crate) output: Option<Output>,
    pub(crate) namespace: Option<String>,
    pub(crate) source: Source,
    pub(crate) repo: Option<String>,
    pub(crate) branch: Option<String>,
    pub(crate) commit: Option<String>,
    pub(crate) succeeded_within: Option<String>,
    pub(crate) destroy_on_finalize: bool,
    pub(crate) parallel: usize,
    pub(crate) image: String,
    pub(crate) pulumi_version: String,
    pub(crate) bundle_path: Option<String>,
    pub(crate) esc_organization: Option<String>,
    pub(crate) esc_project: String,
    pub(crate) esc_environment: Option<String>,
    pub(crate) owner: String,
    /// Replace files in the output directory that no export made (links themselves).
    pub(crate) force: bool,
}

pub(crate) fn run(s: &Settings, t: &Target, o: &ExportOptions) -> Result<i32, RunnerError> {
    let plan = Plan::new(&t.provider, Operation::Up, &[]).map_err(|e| RunnerError::usage(e.to_string(), ""))?;
    let namespace = namespace(o, &t.stack)?;
    let backend = shared_backend(s, t, o.format)?;
    let config = read_config(s, t)?;
    let output = o.output.clone().unwrap_or_else(|| {
        Output::Dir(
            s.ws.root
                .join("exports")
                .join(format!("{}-{}", t.provider.name, t.stack))
                .join(o.format.as_str()),
        )
    });
    let repo = if o.format.needs_repo(o.source) {
        Some(repository(s, o)?)
    } else {
        None
    };
    let input = Input {
        stack: t.stack.clone(),
        backend: backend.clone(),
        namespace,
        config: config.plain,
        config_secrets: config.secrets,
        store_secrets: store_secrets(t),
        credentials: credentials(t, &backend),
        source: o.source,
        succeeded_within: o.succeeded_within.clone(),
        destroy_on_finalize: o.destroy_on_finalize,
        parallel: o.parallel,
        image: o.image.clone(),
        pulumi_version: o.pulumi_version.clone(),
        programs: if o.source == Source::Program && matches!(o.format, Format::Pko | Format::Kebap) {
            programs(s, t)
        } else {
            BTreeMap::new()
        },
        bundle_path: match (&o.bundle_path, &output) {
            _ if o.format != Format::Kebap => String::new(),
            (Some(p), _) => given_bundle_path(p)?,
            (None, Output::Dir(dir)) => bundle_path(s, dir)?,
            (None, Output::Stdout) => {
                return Err(RunnerError::usage(
                    "`export kebap -o -` prints the bundle, so where it will live in the repository (the path Argo CD \
                     syncs) is not known",
                    "pass --bundle-path PATH: the bundle's directory relative to the repository's root",
                ));
            }
        },
        esc: Esc {
            organization: match (&o.esc_organization, o.format) {
                (Some(org), _) => org.clone(),
                (None, Format::Kebap) => {
                    return Err(RunnerError::usage(
                        "a KEBAP bundle needs the Pulumi ESC organization its secrets come from",
                        "pass --esc-org ORGANIZATION (and --esc-project, --esc-env when not `runner` and the stack)",
                    ));
                }
                (None, _) => String::new(),
            },
            project: o.esc_project.clone(),
            environment: o.esc_environment.clone().unwrap_or_else(|| t.stack.clone()),
        },
        repo,
        owner: o.owner.clone(),
    };
    let made = export::export(o.format, &plan, &input).map_err(|e| RunnerError::usage(e.message, e.help))?;
    for (what, names) in &made.names {
        for (project, name) in names.changed() {
            report::info(&format!("name: {project} → {name} ({what}: {})", names.rule.describe()));
        }
    }
    match output {
        Output::Stdout => {
            let mut text = String::new();
            for f in &made.files {
                if made.files.len() > 1 {
                    let _ = writeln!(text, "# ==> {} <==", f.path);
                }
                text.push_str(&f.text);
            }
            write_result(&text)?;
        }
        Output::Dir(dir) => write_dir(s, o, &made.files, &dir, plan.order.len())?,
    }
    Ok(exit::SUCCESS)
}

/// The namespace of the Kubernetes objects: `--namespace`, refused unless it is a DNS-1123 label
/// (Kubernetes refuses any other, and the teardown script holds it), or `runner-<stack>` made
/// one.
fn namespace(o: &ExportOptions, stack: &str) -> Result<String, RunnerError> {
    let label = |name: &str| Names::new(Rule::Dns1123(63), [name], &[]).get(name).to_string();
    match &o.namespace {
        None => Ok(label(&format!("runner-{stack}"))),
        Some(n) if export::dns1123_label(n) => Ok(n.clone()),
        Some(n) => Err(RunnerError::usage(
            format!(
                "--namespace {n:?} is not a Kubernetes namespace name: a namespace is a DNS-1123 label, 1 to 63 \
                 lower-case letters, digits and `-`, starting and ending with a letter or digit"
            ),
            format!("pass a name such as `{}`", label(n)),
        )),
    }
}

/// Writes the files into `dir` (see `outdir`), removes what an earlier export left, says so.
fn write_dir(
    s: &Settings,
    o: &ExportOptions,
    files: &[export::File],
    dir: &Path,
    projects: usize,
) -> Result<(), RunnerError> {
    let top = git(&s.ws.root, &["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    let trusted: Vec<&Path> = top.iter().map(PathBuf::as_path).chain([s.ws.root.as_path()]).collect();
    let show = |p: &Path| s.ws.show(p);
    let writes = outdir::check(dir, &trusted, files, o.format, o.force, &show)?;
    writes.write(files, &show)?;
    for path in &writes.stale {
        report::info(&format!(
            "removed {}: an earlier `export {}` wrote it, this one does not",
            s.ws.show(path),
            o.format.as_str()
        ));
    }
    report::info(&format!(
        "Exported {} ({projects} projects) to {}: {}",
        o.format.as_str(),
        s.ws.show(dir),
        files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ")
    ));
    Ok(())
}

/// `PULUMI_BACKEND_URL`, refused unless every job of the export reaches it. A cloud store or
/// Pulumi Cloud: yes. A `file://` backend: only a GitLab pipeline's, and only a directory outside
/// the workspace and its repository, named by its absolute path — a disk every GitLab runner of
/// the project mounts at that path (shell executors on one machine, or an NFS mount); each job's
/// checkout replaces the workspace, and the other engines' jobs run on machines or pods that
/// mount nothing of ours.
fn shared_backend(s: &Settings, t: &Target, format: Format) -> Result<String, RunnerError> {
    let embedded = format!("file://{}", s.ws.root.join(".pulumi-state").display());
    let url = t.env.get(BACKEND_VAR).unwrap_or_default();
    let refuse = |why: String| {
        Err(RunnerError::usage(
            format!(
                "`export {}` needs a state backend every engine reaches: {why}",
                format.as_str()
            ),
            "set PULUMI_BACKEND_URL (in the environment or config/pulumi/environment) to a shared backend — \
             s3://BUCKET, gs://BUCKET, azblob://CONTAINER or https://api.pulumi.com (for gitlab-ci also a \
             file:///DIR every runner mounts, outside the repository) — and move the stacks there \
             (`pulumi stack export` / `pulumi stack import`, or `runner up` again)",
        ))
    };
    if url == embedded {
        return refuse(format!(
            "PULUMI_BACKEND_URL is not set, so the runner uses the workspace's own file backend ({url}), which no \
             other machine can read"
        ));
    }
    if !url.contains("://") {
        return refuse(format!("PULUMI_BACKEND_URL is {url}, which is not a URL"));
    }
    let backend = Backend::parse(&url);
    let Some(dir) = backend.dir() else {
        return Ok(url);
    };
    if format != Format::GitlabCi {
        return refuse(format!(
            "PULUMI_BACKEND_URL is {url}, a file backend, which the machines and pods {} runs its jobs on do not \
             mount",
            format.as_str()
        ));
    }
    let inside = |root: &Path| lexical(dir).starts_with(lexical(root));
    let top = git(&s.ws.root, &["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    if !dir.is_absolute() || inside(&s.ws.root) || top.as_deref().is_some_and(inside) {
        return refuse(format!(
            "PULUMI_BACKEND_URL is {url}, a file backend {}, which each job's checkout replaces",
            if dir.is_absolute() {
                "inside the repository"
            } else {
                "relative to the job's directory"
            }
        ));
    }
    report::info(&format!(
        "note: PULUMI_BACKEND_URL is {url}, a shared disk: every GitLab runner that takes these jobs must mount \
         {} at that path",
        dir.display()
    ));
    Ok(url)
}

/// `path` with `.` and `..` taken out lexically (links are not followed), through its nearest
/// existing ancestor's real path, so two spellings of one directory compare equal.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    let mut existing = out.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let Some(parent) = existing.parent() else { return out };
        rest.push(existing.file_name().map(PathBuf::from).unwrap_or_default());
        existing = parent;
    }
    let mut real = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    for r in rest.iter().rev() {
        real.push(r);
    }
    real
}

struct Config {
    plain: Map<String, Value>,
    secrets: Vec<SecretKey>,
}

/// The shared stack configuration: its plain values, and the keys of its secrets.
fn read_config(s: &Settings, t: &Target) -> Result<Config, RunnerError> {
    let path = stackfile::path(&s.ws.root, &t.stack);
    let shown = s.ws.show(&path);
    let file = StackFile::load(&path, &shown).map_err(|d| RunnerError::Validation(vec![*d]))?;
    // What every exported job would refuse, refused here.
    if let Some(p) = prepare::provider_lock(&t.provider, &file) {
        return Err(RunnerError::Problems(vec![p]));
    }
    if file.config.is_empty() {
        return Err(RunnerError::usage(
            format!("the stack configuration {shown} is missing or empty: an export carries its values"),
            format!(
                "create it first with `runner validate -p {} -s {}` (it asks for what is missing)",
                t.provider.name, t.stack
            ),
        ));
    }
    let mut plain = Map::new();
    let mut secrets = Vec::new();
    for (key, value) in file.config {
        if value.get("secure").is_some() {
            secrets.push(SecretKey {
                env: env_name(SECRET_PREFIX, &key),
                key,
            });
        } else {
            plain.insert(key, value);
        }
    }
    Ok(Config { plain, secrets })
}

/// Every project secret of the graph, in graph order (the secrets store keeps them all).
fn store_secrets(t: &Target) -> Vec<SecretKey> {
    let mut out: Vec<SecretKey> = Vec::new();
    for p in &t.provider.projects {
        for secret in &p.secrets {
            if !out.iter().any(|s| s.key == secret.key) {
                out.push(SecretKey {
                    key: secret.key.clone(),
                    env: env_name(SECRET_PREFIX, &secret.key),
                });
            }
        }
    }
    out
}

/// The backend's credentials (and the passphrase), then the provider's.
fn credentials(t: &Target, backend: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let all = Backend::parse(backend)
        .credentials()
        .into_iter()
        .map(str::to_string)
        .chain(t.provider.credentials.iter().cloned());
    for c in all {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Each project's Pulumi YAML program, as data.
fn programs(s: &Settings, t: &Target) -> BTreeMap<String, Value> {
    t.provider
        .projects
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(s.ws.root.join(&p.path).join("Pulumi.yaml")).ok()?;
            let doc: Value = serde_saphyr::from_str(&text).ok()?;
            Some((p.name.clone(), doc))
        })
        .collect()
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The repository engines check out: `--repo` or the `origin` remote; `--branch`, `--commit`
/// or HEAD (its branch, else its commit); the workspace's directory in it.
fn repository(s: &Settings, o: &ExportOptions) -> Result<Repo, RunnerError> {
    let root = &s.ws.root;
    let url = match &o.repo {
        Some(u) => u.clone(),
        None => git(root, &["remote", "get-url", "origin"]).ok_or_else(|| {
            RunnerError::usage(
                format!(
                    "`export {}` points the engine at the repository, and the workspace has no git remote `origin`",
                    o.format.as_str()
                ),
                "pass --repo URL (and --branch NAME or --commit SHA)",
            )
        })?,
    };
    let revision = match (&o.branch, &o.commit) {
        (Some(b), _) => Revision::Branch(b.clone()),
        (None, Some(c)) => Revision::Commit(c.clone()),
        (None, None) => match git(root, &["symbolic-ref", "--short", "-q", "HEAD"]) {
            Some(b) if !b.is_empty() => Revision::Branch(b),
            _ => Revision::Commit(git(root, &["rev-parse", "HEAD"]).ok_or_else(|| {
                RunnerError::usage(
                    "cannot tell which revision the engine should check out: the workspace is not a git checkout",
                    "pass --branch NAME or --commit SHA",
                )
            })?),
        },
    };
    let prefix = git(root, &["rev-parse", "--show-prefix"]).unwrap_or_default();
    Ok(Repo { url, revision, prefix })
}

/// `--bundle-path`: a path inside the repository, relative to its root.
fn given_bundle_path(path: &str) -> Result<String, RunnerError> {
    let p = Path::new(path);
    let outside = p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir | std::path::Component::Prefix(_)));
    let trimmed = path.trim_matches('/');
    if outside || trimmed.is_empty() || trimmed == "." {
        return Err(RunnerError::usage(
            format!("--bundle-path {path:?} is not a directory inside the repository"),
            "pass the bundle's directory relative to the repository's root (`deploy/kebap`), without `..`",
        ));
    }
    Ok(trimmed.trim_start_matches("./").to_string())
}

/// Where the bundle will live in the repository: the output directory, relative to the
/// repository's root (the workspace's when it is no git checkout). Argo CD syncs that path from
/// git, so a directory outside the repository is refused with the fix.
fn bundle_path(s: &Settings, dir: &Path) -> Result<String, RunnerError> {
    let top = git(&s.ws.root, &["rev-parse", "--show-toplevel"]).map_or_else(|| s.ws.root.clone(), PathBuf::from);
    let (top, dir) = (lexical(&top), lexical(dir));
    match dir.strip_prefix(&top) {
        Ok(rel) if !rel.as_os_str().is_empty() => Ok(rel.display().to_string()),
        _ => Err(RunnerError::usage(
            format!(
                "`export kebap` writes the bundle to {}, {} the repository ({}): Argo CD syncs the bundle's \
                 manifests/ from the repository, so it needs the bundle's path there",
                dir.display(),
                if dir == top { "the root of" } else { "outside" },
                top.display()
            ),
            "pass -o DIR inside the repository, or --bundle-path PATH naming where the bundle will be committed \
             (relative to the repository's root)",
        )),
    }
}
