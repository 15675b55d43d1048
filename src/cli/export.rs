//! `runner export FORMAT`: each format's flags (clap) and their help, and where they go. Each
//! format's flags implement `commands::export::FormatFlags`: resolved once, with the workspace,
//! into the options of the format's exporter (`export::pko::PkoOptions`, …), which makes the
//! export.
//! A new format is a subcommand here, its flags, and their `FormatFlags`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::ExportSource;
use crate::commands::export::{Destination, FilesTo, FormatFlags, Resolver};
use crate::commands::operation::DEFAULT_PARALLEL;
use crate::config::backend::Backend;
use crate::error::RunnerError;
use crate::export::argo::{self, ArgoOptions};
use crate::export::backstage::{self, BackstageOptions};
use crate::export::github::{self, GithubOptions};
use crate::export::gitlab;
use crate::export::kebap::{self, Esc, KebapOptions};
use crate::export::pko::{self, PkoOptions, ProgramSource};
use crate::export::{Common, Export, Format, Image, Repo, Revision};
use crate::plan::Plan;

/// The end of every export's help: examples, then what each needs besides its flags.
macro_rules! export_help {
    ($($line:literal),* $(,)?) => {
        format!(concat!("Examples:\n", $("  ", $line, "\n",)* "\n{}"), backend_needed())
    };
}

/// What every export needs, in lines as long as the top-level help's.
fn backend_needed() -> String {
    let text = format!(
        "Every export that runs the graph (all but backstage) needs a shared state backend: PULUMI_BACKEND_URL ({}), never the workspace's file backend.",
        Backend::shared_schemes()
    );
    crate::render::wrap(text.split(' '), 88).join("\n")
}

/// The end of `export`'s help.
pub(super) fn export_examples() -> String {
    export_help!(
        "runner export pko -p aws -s dev -o deploy/pko --namespace platform",
        "runner export pko -p aws -s dev --source program --destroy-on-finalize",
        "runner export github-actions -p do -s prod -o .github",
        "runner export gitlab-ci -p linode -s dev -o -",
        "runner export argo-workflows -p aws -s dev --parallel 4 --image registry.example/runner:1",
        "runner export kebap -p aws -s dev -o deploy/kebap --esc-org acme",
        "runner export backstage -p aws -s dev -o catalog",
    )
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    #[command(subcommand)]
    pub format: ExportFormat,
}

/// The engines `export` writes for, each with the flags that mean something to it (clap refuses
/// the others), named as [`Format`] names it.
#[derive(Debug, Subcommand)]
pub(crate) enum ExportFormat {
    #[command(
        name = Format::Pko.as_str(),
        about = "Pulumi Kubernetes Operator Stacks, their identity, a teardown script",
        long_about = "Pulumi Kubernetes Operator Stacks, their identity, a teardown script.\n\n\
                      stacks.yaml holds one pulumi.com/v1 Stack per project, in run order, with every edge of the \
                      plan as prerequisites; rbac.yaml the ServiceAccount the Stacks run as; programs.yaml (with \
                      --source program) one Program per project; teardown.sh deletes the Stacks one at a time, \
                      dependents first, as PKO does not order deletion.",
        after_help = export_help!(
            "runner export pko -p aws -s dev -o deploy/pko --namespace platform --succeeded-within 1h",
            "runner export pko -p aws -s dev --source program --destroy-on-finalize",
            "runner export pko -p aws -s dev -o - --repo https://git.example/platform.git --commit 0a1b2c3",
        )
    )]
    Pko(PkoArgs),

    #[command(
        name = Format::GithubActions.as_str(),
        visible_alias = "github",
        about = "GitHub Actions workflows (up and destroy)",
        long_about = "GitHub Actions workflows (up and destroy).\n\n\
                      workflows/runner-up.yml builds the runner once, then runs one job per project whose `needs:` \
                      are the plan's edges; workflows/runner-destroy.yml does the same with the edges reversed, \
                      after a `confirm` job in the environment destroy-<stack> (its required reviewers hold the \
                      teardown). Both are workflow_dispatch and read the backend, the passphrase, the credentials \
                      and the secrets from the repository's secrets.",
        after_help = export_help!(
            "runner export github-actions -p do -s prod -o .github",
            "runner export github -p aws -s dev -o .github --pulumi-version 3.274.1",
        )
    )]
    GithubActions(GithubActionsArgs),

    #[command(
        name = Format::GitlabCi.as_str(),
        visible_alias = "gitlab",
        about = "GitLab CI pipelines (up and destroy)",
        long_about = "GitLab CI pipelines (up and destroy).\n\n\
                      runner-up.gitlab-ci.yml has a stage per layer and one job per project, `needs:` per edge, a \
                      resource_group per project stack; runner-destroy.gitlab-ci.yml does the same reversed, its \
                      jobs only in a pipeline run with RUNNER_DESTROY_STACK=<stack>, after the manual job \
                      confirm-destroy. The jobs run in --image; the secrets are masked CI/CD variables.",
        after_help = export_help!(
            "runner export gitlab-ci -p linode -s dev -o ci",
            "runner export gitlab-ci -p aws -s dev -o -              # every file on standard output",
            "runner export gitlab -p aws -s dev -o ci --image registry.example/runner:1",
        )
    )]
    GitlabCi(GitlabCiArgs),

    #[command(
        name = Format::ArgoWorkflows.as_str(),
        visible_alias = "argo",
        about = "Argo Workflows DAGs (up and destroy)",
        long_about = "Argo Workflows DAGs (up and destroy).\n\n\
                      workflow-up.yaml is a Workflow with a DAG template: a task per project, `dependencies` per \
                      edge, at most --parallel at once, each checking the repository out and running in --image; \
                      rbac.yaml the ServiceAccount and Role the tasks run as; workflow-destroy.yaml a \
                      WorkflowTemplate that runs only when submitted with `-p confirm=<stack>`.",
        after_help = export_help!(
            "runner export argo-workflows -p aws -s dev --parallel 4 --image registry.example/runner:1",
            "runner export argo -p aws -s dev -o deploy/argo --namespace platform --branch main",
        )
    )]
    ArgoWorkflows(ArgoWorkflowsArgs),

    #[command(
        name = Format::Kebap.as_str(),
        about = "A GitOps bundle: PKO Stacks, an Argo CD Application, External Secrets",
        long_about = "A GitOps bundle: PKO Stacks, an Argo CD Application, External Secrets.\n\n\
                      application.yaml is the Argo CD Application that syncs the bundle's manifests/ from git (at \
                      --bundle-path); manifests/ holds the identity, the External Secrets of the Pulumi ESC \
                      environment (--esc-org, --esc-project, --esc-env), the Programs (--source program) and the \
                      Stacks in sync waves by plan wave; argocd-health.yaml a health check for Stacks, to apply \
                      once; teardown.sh deletes the Stacks dependents first.",
        after_help = export_help!(
            "runner export kebap -p aws -s dev -o deploy/kebap --esc-org acme",
            "runner export kebap -p aws -s dev -o - --bundle-path deploy/kebap --esc-org acme --esc-env dev",
        )
    )]
    Kebap(KebapArgs),

    #[command(
        name = Format::Backstage.as_str(),
        about = "A Backstage catalog of the graph",
        long_about = "A Backstage catalog of the graph.\n\n\
                      catalog-info.yaml holds a System for the platform and one Resource per project, its type from \
                      its layer, its dependsOn the plan's edges.",
        after_help = export_help!(
            "runner export backstage -p aws -s dev -o catalog",
            "runner export backstage -p aws -s dev -o catalog --owner platform-team",
        )
    )]
    Backstage(BackstageArgs),
}

/// What every export takes: where the files go.
#[derive(Debug, Args)]
pub(crate) struct ExportOutputArgs {
    /// Directory to write the files to, or `-` for standard output
    /// [default: exports/<provider>-<stack>/<format> in the workspace]
    #[arg(short = 'o', long, value_name = "DIR|-")]
    pub output: Option<PathBuf>,

    /// Replace files in the output directory that `runner export` did not make (a symbolic
    /// link is replaced itself, never written through)
    #[arg(long)]
    pub force: bool,
}

/// Where an engine in the cluster runs things, and what it checks out (PKO, Argo Workflows,
/// KEBAP).
#[derive(Debug, Args)]
pub(crate) struct ClusterArgs {
    /// Kubernetes namespace of what the engine runs from (the PKO Stacks, or the Argo Workflows)
    /// and of their Secrets [default: runner-<stack>]
    #[arg(long, value_name = "NAME")]
    pub namespace: Option<String>,

    /// Repository URL the engine checks out [default: the `origin` remote]
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,

    /// Branch the engine follows [default: HEAD's branch]
    #[arg(long, value_name = "NAME", conflicts_with = "commit")]
    pub branch: Option<String>,

    /// Commit the engine checks out [default: HEAD when detached]
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
}

/// How the operator's Stacks are made (PKO, KEBAP).
#[derive(Debug, Args)]
pub(crate) struct StackArgs {
    /// Where PKO takes the programs from: the repository, or Program objects in the export
    #[arg(long, value_enum, default_value_t = ExportSource::Git)]
    pub source: ExportSource,

    /// A prerequisite counts only when it succeeded within this duration (e.g. 1h)
    #[arg(long, value_name = "DURATION")]
    pub succeeded_within: Option<String>,

    /// The image of each Stack's workspace pod, which runs pulumi and the programs: it must
    /// hold pulumi and the programs' language hosts [default: PKO's, pulumi/pulumi]
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,

    /// Destroy a Stack's resources when the Stack object is deleted
    #[arg(long)]
    pub destroy_on_finalize: bool,
}

/// The image CI jobs and Argo tasks run in, and the Pulumi CLI it holds (GitLab CI, Argo
/// Workflows).
#[derive(Debug, Args)]
pub(crate) struct ImageArgs {
    /// The image the jobs run in (it must hold runner and pulumi)
    #[arg(long, value_name = "IMAGE", default_value = "runner:latest")]
    pub image: String,
    #[command(flatten)]
    pub pulumi: PulumiVersionArgs,
}

/// The Pulumi CLI of the jobs (GitHub Actions, GitLab CI, Argo Workflows).
#[derive(Debug, Args)]
pub(crate) struct PulumiVersionArgs {
    /// The Pulumi CLI version the jobs install or expect
    #[arg(long, value_name = "VERSION", default_value = "3.274.1")]
    pub pulumi_version: String,
}

#[derive(Debug, Args)]
pub(crate) struct PkoArgs {
    #[command(flatten)]
    pub out: ExportOutputArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub stacks: StackArgs,
}

#[derive(Debug, Args)]
pub(crate) struct GithubActionsArgs {
    #[command(flatten)]
    pub out: ExportOutputArgs,
    #[command(flatten)]
    pub pulumi: PulumiVersionArgs,
}

#[derive(Debug, Args)]
pub(crate) struct GitlabCiArgs {
    #[command(flatten)]
    pub out: ExportOutputArgs,
    #[command(flatten)]
    pub image: ImageArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ArgoWorkflowsArgs {
    #[command(flatten)]
    pub out: ExportOutputArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,

    /// At most N projects at once [default: 8]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub parallel: Option<u16>,

    #[command(flatten)]
    pub image: ImageArgs,
}

#[derive(Debug, Args)]
pub(crate) struct KebapArgs {
    #[command(flatten)]
    pub out: ExportOutputArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub stacks: StackArgs,

    /// The bundle's directory in the repository, which Argo CD syncs [default: the output
    /// directory's place in the repository]
    #[arg(long, value_name = "PATH")]
    pub bundle_path: Option<String>,

    /// The Pulumi ESC organization the secrets come from
    #[arg(long = "esc-org", value_name = "ORG", required = true)]
    pub esc_organization: String,

    /// The Pulumi ESC project
    #[arg(long, value_name = "PROJECT", default_value = "runner")]
    pub esc_project: String,

    /// The Pulumi ESC environment [default: the stack]
    #[arg(long = "esc-env", value_name = "ENV")]
    pub esc_environment: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct BackstageArgs {
    #[command(flatten)]
    pub out: ExportOutputArgs,

    /// The owner of the System and its Resources
    #[arg(long, value_name = "OWNER", default_value = "platform")]
    pub owner: String,
}

impl ExportFormat {
    /// Where the files go, and the export the format's flags ask for.
    pub(crate) fn request(&self) -> (&ExportOutputArgs, &dyn FormatFlags) {
        match self {
            ExportFormat::Pko(a) => (&a.out, a),
            ExportFormat::GithubActions(a) => (&a.out, a),
            ExportFormat::GitlabCi(a) => (&a.out, a),
            ExportFormat::ArgoWorkflows(a) => (&a.out, a),
            ExportFormat::Kebap(a) => (&a.out, a),
            ExportFormat::Backstage(a) => (&a.out, a),
        }
    }
}

impl ExportOutputArgs {
    /// `-o DIR` (relative to `cwd`) or `-o -`, and `--force`.
    pub(crate) fn destination(&self, cwd: &Path) -> Destination {
        Destination {
            output: self.output.as_ref().map(|o| {
                if o.as_os_str() == "-" {
                    FilesTo::Stdout
                } else {
                    FilesTo::Dir(cwd.join(o))
                }
            }),
            force: self.force,
        }
    }
}

impl ClusterArgs {
    /// The repository the engine checks out: `--repo`, and `--branch` or `--commit` (clap lets
    /// through at most one), the rest read with git.
    fn repository(&self, r: &Resolver<'_>) -> Result<Repo, RunnerError> {
        let branch = self.branch.clone().map(Revision::Branch);
        let revision = branch.or_else(|| self.commit.clone().map(Revision::Commit));
        r.repository(self.repo.as_deref(), revision.as_ref())
    }
}

impl ImageArgs {
    fn resolve(&self) -> Image {
        Image {
            name: self.image.clone(),
            pulumi_version: self.pulumi.pulumi_version.clone(),
        }
    }
}

impl StackArgs {
    /// How the operator's Stacks are made (PKO, KEBAP): their programs from the repository
    /// `repo` gives, or embedded.
    fn options(
        &self,
        r: &Resolver<'_>,
        repo: impl FnOnce() -> Result<Repo, RunnerError>,
    ) -> Result<PkoOptions, RunnerError> {
        let origin = match self.source {
            ExportSource::Git => {
                let repo = repo()?;
                crate::export::pko::cloneable(&repo.url)?;
                ProgramSource::Git(repo)
            }
            ExportSource::Program => ProgramSource::Program(r.programs()),
        };
        Ok(PkoOptions {
            namespace: r.namespace(),
            origin,
            succeeded_within: self.succeeded_within.clone(),
            destroy_on_finalize: self.destroy_on_finalize,
            image: self.image.clone(),
        })
    }
}

impl FormatFlags for PkoArgs {
    fn format(&self) -> Format {
        Format::Pko
    }

    fn namespace(&self) -> Option<&str> {
        self.cluster.namespace.as_deref()
    }

    fn export(&self, r: &Resolver<'_>, plan: &Plan<'_>, common: &Common) -> Result<Export, RunnerError> {
        let options = self.stacks.options(r, || self.cluster.repository(r))?;
        Ok(pko::export(plan, common, &options)?)
    }
}

impl FormatFlags for GithubActionsArgs {
    fn format(&self) -> Format {
        Format::GithubActions
    }

    fn export(&self, _: &Resolver<'_>, plan: &Plan<'_>, common: &Common) -> Result<Export, RunnerError> {
        let options = GithubOptions {
            pulumi_version: self.pulumi.pulumi_version.clone(),
        };
        Ok(github::export(plan, common, &options))
    }
}

impl FormatFlags for GitlabCiArgs {
    fn format(&self) -> Format {
        Format::GitlabCi
    }

    fn export(&self, _: &Resolver<'_>, plan: &Plan<'_>, common: &Common) -> Result<Export, RunnerError> {
        Ok(gitlab::export(plan, common, &self.image.resolve()))
    }
}

impl FormatFlags for ArgoWorkflowsArgs {
    fn format(&self) -> Format {
        Format::ArgoWorkflows
    }

    fn namespace(&self) -> Option<&str> {
        self.cluster.namespace.as_deref()
    }

    fn export(&self, r: &Resolver<'_>, plan: &Plan<'_>, common: &Common) -> Result<Export, RunnerError> {
        let options = ArgoOptions {
            namespace: r.namespace(),
            repo: self.cluster.repository(r)?,
            parallel: self.parallel.map_or(DEFAULT_PARALLEL, usize::from),
            image: self.image.resolve(),
        };
        Ok(argo::export(plan, common, &options)?)
    }
}

impl FormatFlags for KebapArgs {
    fn format(&self) -> Format {
        Format::Kebap
    }

    fn namespace(&self) -> Option<&str> {
        self.cluster.namespace.as_deref()
    }

    fn export(&self, r: &Resolver<'_>, plan: &Plan<'_>, common: &Common) -> Result<Export, RunnerError> {
        let repo = self.cluster.repository(r)?;
        let stacks = self.stacks.options(r, || Ok(repo.clone()))?;
        let options = KebapOptions {
            stacks,
            repo,
            bundle_path: r.bundle_path(self.bundle_path.as_deref())?,
            esc: Esc {
                organization: self.esc_organization.clone(),
                project: self.esc_project.clone(),
                environment: self.esc_environment.clone().unwrap_or_else(|| r.stack().to_string()),
            },
        };
        Ok(kebap::export(plan, common, &options)?)
    }
}

impl FormatFlags for BackstageArgs {
    fn format(&self) -> Format {
        Format::Backstage
    }

    fn export(&self, _: &Resolver<'_>, plan: &Plan<'_>, common: &Common) -> Result<Export, RunnerError> {
        let options = BackstageOptions {
            owner: self.owner.clone(),
        };
        Ok(backstage::export(plan, common, &options))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command};

    #[test]
    fn each_format_is_the_subcommand_of_its_name_and_asks_for_itself() {
        for &format in Format::ALL {
            let mut args = vec!["runner", "export", format.as_str()];
            if format == Format::Kebap {
                args.extend(["--esc-org", "acme"]);
            }
            let cli = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let Command::Export(export) = cli.command else {
                panic!("{args:?} is no export")
            };
            assert_eq!(export.format.request().1.format(), format);
        }
    }

    #[test]
    fn the_output_directory_is_taken_from_where_the_runner_was_started() {
        let out = |o: Option<&str>| ExportOutputArgs {
            output: o.map(PathBuf::from),
            force: false,
        };
        let cwd = Path::new("/srv/ws/sub");
        assert!(matches!(out(Some("-")).destination(cwd).output, Some(FilesTo::Stdout)));
        assert!(matches!(out(Some("ci")).destination(cwd).output, Some(FilesTo::Dir(d)) if d == cwd.join("ci")));
        assert!(out(None).destination(cwd).output.is_none());
    }
}
