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
use crate::settings::{Settings, StackContext};

/// Where the files go.
#[derive(Debug, Clone)]
pub(crate) enum Output {
    Dir(PathBuf),
    Stdout,
}

/// What `export` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct ExportOptions {
    /// `None`: `exports/<provider>-<stack>/<format>` under the workspace.
    pub(crate) output: Option<Output>,
    /// Replace files in the output directory that no export made (links themselves).
    pub(crate) force: bool,
    pub(crate) engine: Engine,
}

/// The engine exported to, with what only it takes (the command line offers nothing else).
#[derive(Debug, Clone)]
pub(crate) enum Engine {
    Pko {
        cluster: Cluster,
        stacks: Stacks,
    },
    GithubActions {
        pulumi_version: String,
    },
    GitlabCi {
        image: String,
        pulumi_version: String,
    },
    ArgoWorkflows {
        cluster: Cluster,
        parallel: usize,
        image: String,
        pulumi_version: String,
    },
    Kebap {
        cluster: Cluster,
        stacks: Stacks,
        /// `None`: the output directory's place in the repository.
        bundle_path: Option<String>,
        esc: EscOptions,
    },
    Backstage {
        owner: String,
    },
}

impl Engine {
    pub(crate) fn format(&self) -> Format {
        match self {
            Engine::Pko { .. } => Format::Pko,
            Engine::GithubActions { .. } => Format::GithubActions,
            Engine::GitlabCi { .. } => Format::GitlabCi,
            Engine::ArgoWorkflows { .. } => Format::ArgoWorkflows,
            Engine::Kebap { .. } => Format::Kebap,
            Engine::Backstage { .. } => Format::Backstage,
        }
    }

    fn cluster(&self) -> Option<&Cluster> {
        match self {
            Engine::Pko { cluster, .. } | Engine::ArgoWorkflows { cluster, .. } | Engine::Kebap { cluster, .. } => {
                Some(cluster)
            }
            Engine::GithubActions { .. } | Engine::GitlabCi { .. } | Engine::Backstage { .. } => None,
        }
    }
}

/// Where an engine in the cluster puts its objects, and what it checks out (PKO, Argo
/// Workflows, KEBAP).
#[derive(Debug, Clone)]
pub(crate) struct Cluster {
    /// `None`: `runner-<stack>`, made a DNS-1123 label.
    pub(crate) namespace: Option<String>,
    /// `None`: the `origin` remote.
    pub(crate) repo: Option<String>,
    /// `None`: HEAD's branch, else its commit.
    pub(crate) revision: Option<Revision>,
}

/// How the operator's Stacks are made (PKO, KEBAP).
#[derive(Debug, Clone)]
pub(crate) struct Stacks {
    pub(crate) source: Source,
    pub(crate) succeeded_within: Option<String>,
    pub(crate) destroy_on_finalize: bool,
}

/// The Pulumi ESC environment a KEBAP bundle's secrets come from.
#[derive(Debug, Clone)]
pub(crate) struct EscOptions {
    pub(crate) organization: String,
    pub(crate) project: String,
    /// `None`: the stack's name.
    pub(crate) environment: Option<String>,
}

pub(crate) fn run(s: &Settings, t: &StackContext, o: &ExportOptions) -> Result<i32, RunnerError> {
    let format = o.engine.format();
    let plan = Plan::new(&t.provider, Operation::Up, &[]).map_err(|e| RunnerError::usage(e.to_string(), ""))?;
    let namespace = namespace(o.engine.cluster().and_then(|c| c.namespace.as_deref()), &t.stack)?;
    let backend = shared_backend(s, t, format)?;
    let config = read_config(s, t)?;
    let output = o.output.clone().unwrap_or_else(|| {
        Output::Dir(
            s.ws.root
                .join("exports")
                .join(format!("{}-{}", t.provider.name, t.stack))
                .join(format.as_str()),
        )
    });
    // What every format reads; each format's own part below (the rest stays unread).
    let mut input = Input {
        stack: t.stack.clone(),
        backend: backend.clone(),
        namespace,
        config: config.plain,
        config_secrets: config.secrets,
        store_secrets: store_secrets(t),
        credentials: credentials(t, &backend),
        ..Input::default()
    };
    match &o.engine {
        Engine::Pko { cluster, stacks } => operator_stacks(&mut input, s, t, format, cluster, stacks)?,
        Engine::GithubActions { pulumi_version } => input.pulumi_version.clone_from(pulumi_version),
        Engine::GitlabCi { image, pulumi_version } => {
            input.image.clone_from(image);
            input.pulumi_version.clone_from(pulumi_version);
        }
        Engine::ArgoWorkflows {
            cluster,
            parallel,
            image,
            pulumi_version,
        } => {
            input.repo = Some(repository(s, format, cluster)?);
            input.parallel = *parallel;
            input.image.clone_from(image);
            input.pulumi_version.clone_from(pulumi_version);
        }
        Engine::Kebap {
            cluster,
            stacks,
            bundle_path: path,
            esc,
        } => {
            operator_stacks(&mut input, s, t, format, cluster, stacks)?;
            input.bundle_path = match (path, &output) {
                (Some(p), _) => given_bundle_path(p)?,
                (None, Output::Dir(dir)) => bundle_path(s, dir)?,
                (None, Output::Stdout) => {
                    return Err(RunnerError::usage(
                        "`export kebap -o -` prints the bundle, so where it will live in the repository (the path \
                         Argo CD syncs) is not known",
                        "pass --bundle-path PATH: the bundle's directory relative to the repository's root",
                    ));
                }
            };
            input.esc = Esc {
                organization: esc.organization.clone(),
                project: esc.project.clone(),
                environment: esc.environment.clone().unwrap_or_else(|| t.stack.clone()),
            };
        }
        Engine::Backstage { owner } => input.owner.clone_from(owner),
    }
    let made = export::export(format, &plan, &input).map_err(|e| RunnerError::usage(e.message, e.help))?;
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
        Output::Dir(dir) => write_dir(s, format, o.force, &made.files, &dir, plan.order.len())?,
    }
    Ok(exit::SUCCESS)
}

/// The operator's Stacks (PKO, KEBAP): how they are made, and the repository they check out or
/// the programs they embed.
fn operator_stacks(
    input: &mut Input,
    s: &Settings,
    t: &StackContext,
    format: Format,
    cluster: &Cluster,
    stacks: &Stacks,
) -> Result<(), RunnerError> {
    if format.needs_repo(stacks.source) {
        input.repo = Some(repository(s, format, cluster)?);
    }
    if stacks.source == Source::Program {
        input.programs = programs(s, t);
    }
    input.source = stacks.source;
    input.succeeded_within.clone_from(&stacks.succeeded_within);
    input.destroy_on_finalize = stacks.destroy_on_finalize;
    Ok(())
}

/// The namespace of the Kubernetes objects: `--namespace`, refused unless it is a DNS-1123 label
/// (Kubernetes refuses any other, and the teardown script holds it), or `runner-<stack>` made
/// one.
fn namespace(given: Option<&str>, stack: &str) -> Result<String, RunnerError> {
    let label = |name: &str| Names::new(Rule::Dns1123(63), [name], &[]).get(name).to_string();
    match given {
        None => Ok(label(&format!("runner-{stack}"))),
        Some(n) if export::dns1123_label(n) => Ok(n.to_string()),
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
    format: Format,
    force: bool,
    files: &[export::File],
    dir: &Path,
    projects: usize,
) -> Result<(), RunnerError> {
    let top = git(&s.ws.root, &["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    let trusted: Vec<&Path> = top.iter().map(PathBuf::as_path).chain([s.ws.root.as_path()]).collect();
    let show = |p: &Path| s.ws.show(p);
    let writes = outdir::check(dir, &trusted, files, format, force, &show)?;
    writes.write(files, &show)?;
    for path in &writes.stale {
        report::info(&format!(
            "removed {}: an earlier `export {}` wrote it, this one does not",
            s.ws.show(path),
            format.as_str()
        ));
    }
    report::info(&format!(
        "Exported {} ({projects} projects) to {}: {}",
        format.as_str(),
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
fn shared_backend(s: &Settings, t: &StackContext, format: Format) -> Result<String, RunnerError> {
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
    let backend = Backend::parse(&url);
    if matches!(backend, Backend::NotAUrl(_) | Backend::Service(None)) {
        return refuse(format!("PULUMI_BACKEND_URL is {url}, which is not a URL"));
    }
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
fn read_config(s: &Settings, t: &StackContext) -> Result<Config, RunnerError> {
    let path = stackfile::path(&s.ws.root, &t.stack);
    let shown = s.ws.show(&path);
    let file = StackFile::load(&path, &shown).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
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
fn store_secrets(t: &StackContext) -> Vec<SecretKey> {
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
fn credentials(t: &StackContext, backend: &str) -> Vec<String> {
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
fn programs(s: &Settings, t: &StackContext) -> BTreeMap<String, Value> {
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
fn repository(s: &Settings, format: Format, o: &Cluster) -> Result<Repo, RunnerError> {
    let root = &s.ws.root;
    let url = match &o.repo {
        Some(u) => u.clone(),
        None => git(root, &["remote", "get-url", "origin"]).ok_or_else(|| {
            RunnerError::usage(
                format!(
                    "`export {}` points the engine at the repository, and the workspace has no git remote `origin`",
                    format.as_str()
                ),
                "pass --repo URL (and --branch NAME or --commit SHA)",
            )
        })?,
    };
    if o.repo.is_none()
        && let Some(why) = unclonable(&url)
    {
        report::warning(&format!(
            "the `origin` remote {url} {why}: the engine clones the repository from inside the cluster\n  \
             fix: pass --repo with a URL the engine can clone (https://…), or set up the credentials it needs"
        ));
    }
    let revision = match &o.revision {
        Some(r) => r.clone(),
        None => match git(root, &["symbolic-ref", "--short", "-q", "HEAD"]) {
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

/// Why an engine in a cluster could not clone `url` as it stands, if it could not: a path on
/// this machine, or SSH, which needs a key the exported objects do not carry.
fn unclonable(url: &str) -> Option<&'static str> {
    let scp_like = !url.contains("://") && url.split_once(':').is_some_and(|(host, _)| host.contains('@'));
    if url.starts_with("ssh://") || scp_like {
        Some(
            "is SSH, which needs a key the exported objects do not carry (PKO's gitAuth.sshAuth, Argo's sshPrivateKeySecret)",
        )
    } else if url.starts_with("file://") || !url.contains("://") {
        Some("is a path on this machine, which no pod can reach")
    } else {
        None
    }
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
