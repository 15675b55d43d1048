//! `export`: the plan written for another engine. This conductor does the reading and writing
//! around the pure exports (`crate::export`): the state backend every engine reaches and the
//! stack configuration (`config`: plain values travel with the export, secrets only as
//! references), the repository's remote and revision and the bundle's place in it (`repo`), the
//! programs (`--source program`), then it writes the files (`outdir`: only inside the output
//! directory, only over its own files) and prints every name it had to change.

mod config;
mod outdir;
mod repo;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::write_result;
use crate::config::backend::BACKEND_VAR;
use crate::error::{RunnerError, exit};
use crate::export::names::{Names, Rule};
use crate::export::{self, Esc, Format, Input, Repo, Revision, Source};
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
    let url = t.env.get(BACKEND_VAR).unwrap_or_default();
    let backend = config::shared_backend(&s.ws.root, &url, format)?;
    let config = config::read(s, t)?;
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
        store_secrets: config::secret_keys(
            t.provider
                .projects
                .iter()
                .flat_map(|p| &p.secrets)
                .map(|s| s.key.as_str()),
        ),
        credentials: config::credentials(&backend, &t.provider.credentials),
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
                (Some(p), _) => repo::given_bundle_path(p)?,
                (None, Output::Dir(dir)) => repo::bundle_path(&s.ws.root, dir)?,
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

/// The repository the engine checks out (see `repo`).
fn repository(s: &Settings, format: Format, c: &Cluster) -> Result<Repo, RunnerError> {
    repo::repository(&s.ws.root, format, c.repo.as_deref(), c.revision.as_ref())
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
    let top = repo::top(&s.ws.root);
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
