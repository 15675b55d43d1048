//! Command-line syntax (clap). Nothing outside this module and `app` sees clap: `app` resolves
//! these structs into plain settings before any work; a run's flags (`run`) resolve themselves
//! into the conductor's options, those of `show-plan`, `output` and `logs` (`look`) into their
//! command's, an export's (`export`) into their exporter's. clap prints every
//! help from the same definition ([`command`], shaped by `help`), and so is the CLI reference.

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::Shell;

use crate::commands::charts::ChartsFormat;
use crate::commands::status::StatusFormat;
use crate::error::{RunnerError, exit};
use crate::export::pko::Source as ExportSource;
use crate::plan::Operation;
use crate::render::Rendering;
use crate::report::{Banner, ColorChoice, OutputMode};

mod export;
mod help;
mod look;
mod run;
mod usage;

pub(crate) use export::ExportArgs;
use export::export_examples;
use look::{LogsArgs, OutputArgs, ShowPlanArgs};
use run::{DestroyArgs, DriftArgs, PreviewArgs, RefreshArgs, UpArgs};
pub(crate) use usage::{flag_elsewhere, passthrough_without_dashes, reference, with_whole_usage};

/// What a new user runs first, at the top of `runner --help`.
const FIRST_STEPS: &str = "\
First steps:
  runner list-providers                  the providers of this workspace
  runner validate -p PROVIDER -s STACK   asks what is missing, checks what a run needs
  runner up -p PROVIDER -s STACK         deploys every project, in dependency order";

const EXAMPLES: &str = "\
Examples:
  runner up -p aws -s dev
  runner -p aws -s dev destroy
  runner preview -p do -s dev
  runner drift -p aws -s prod
  runner status -p aws -s dev
  runner logs eks -s dev --follow
  runner up -p aws -s dev --target ingress-controller --parallel 2
  runner list-providers
  runner show-plan -p aws
  runner -p aws -s dev show-plan --format dot | dot -Tsvg > plan.svg
  runner show-plan -p linode --operation destroy --target harbor
  runner completions bash > ~/.local/share/bash-completion/completions/runner

Global flags go before or after the command: `runner -p aws show-plan` and
`runner show-plan -p aws` are the same.";

/// The top-level help's tail: the examples, then the exit codes from their one table.
fn top_help() -> String {
    let last = exit::MEANINGS.len() - 1;
    let codes = exit::MEANINGS
        .iter()
        .enumerate()
        .map(|(i, (c, m))| format!("{c} {m}{}", if i == last { "." } else { "," }));
    format!(
        "{EXAMPLES}\n\n{}",
        crate::render::wrap(["Exit codes:".to_string()].into_iter().chain(codes), 88).join("\n")
    )
}

/// Stands up a whole Kubernetes platform from many small Pulumi projects, in dependency
/// order and in parallel, and tears it down again.
#[derive(Debug, Parser)]
#[command(
    name = "runner",
    version,
    before_help = FIRST_STEPS,
    after_help = top_help(),
    // What the tool is, then the first steps (clap puts `before_help` above the description).
    help_template = "{about-with-newline}\n{before-help}{usage-heading} {usage}\n\n{all-args}{after-help}"
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The command line parsed by [`command`]; clap's error (or the help or version asked for),
    /// ready to print, otherwise.
    pub(crate) fn parse_from(args: &[std::ffi::OsString]) -> Result<Cli, clap::Error> {
        use clap::FromArgMatches as _;
        let mut matches = command().try_get_matches_from(args)?;
        Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command()))
    }
}

/// The runner's command line as it parses it and prints its help: [`Cli`]'s definition, each
/// command's help showing only the global options about what it does ([`help`]).
pub(crate) fn command() -> clap::Command {
    use clap::CommandFactory as _;
    let cli = Cli::command().mut_subcommands(|sub| sub.defer(help::shaped));
    // Under a wrapper (`scripts/try-local`), usage lines name what the person typed.
    match crate::report::typed_command() {
        Some(typed) => cli.bin_name(typed),
        None => cli,
    }
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalArgs {
    /// Stack name shared by every project (lower-cased)
    #[arg(short = 's', long, global = true, value_name = "STACK", value_parser = lower_case)]
    pub stack: Option<String>,

    /// Infrastructure provider: a file in providers/ (lower-cased); see `list-providers`
    #[arg(short = 'p', long, global = true, value_name = "PROVIDER", value_parser = lower_case)]
    pub provider: Option<String>,

    /// Print what the runner does and why, on standard error
    #[arg(short = 'd', long, global = true)]
    pub debug: bool,

    /// How each project is announced while running
    #[arg(short = 'b', long, global = true, value_enum, default_value_t = Banner::Fabulous)]
    pub banner_type: Banner,

    /// Workspace root [default: the nearest ancestor of the current directory holding providers/]
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// Never ask questions: what is missing is one error listing every key and how to supply it
    /// (also when `CI` is set or standard input is not a terminal)
    #[arg(long, global = true)]
    pub non_interactive: bool,

    /// Make the stack given with -s the workspace's stack when the environment file names
    /// another (rewrites `PULUMI_STACK` in config/pulumi/environment)
    #[arg(long, global = true)]
    pub switch_stack: bool,

    /// When to use colours (`NO_COLOR` in the environment means never, unless `always`)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Deploy every project of the plan, needs first, in parallel (resumes after a failure)
    #[command(
        after_help = "At a terminal, up shows what it will run and asks once (--yes skips the question).\n\n\
                      Examples:\n  runner up -p aws -s dev\n  runner up -p aws -s dev --target eks\n  \
                      runner up -p linode -s prod --parallel 2 --keep-going --yes\n  \
                      CI=true runner up -p do -s ci --summary summary.json"
    )]
    Up(UpArgs),

    /// Destroy the plan's projects, dependents first
    #[command(
        visible_alias = "down",
        mut_args(run::selected_as_destroy_selects),
        after_help = "At a terminal, destroy lists what it will destroy and asks for the stack name to be typed;\n\
                      without a terminal (CI, scripts) it needs --yes.\n\n\
                      Examples:\n  runner destroy -p aws -s dev\n  runner down -p aws -s dev --target logstore\n  \
                      CI=true runner destroy -p do -s ci --yes"
    )]
    Destroy(DestroyArgs),

    /// Refresh every project's state from the cloud (a stack never deployed is a warning)
    #[command(after_help = "At a terminal, refresh asks once (--yes skips the question).\n\n\
                            Example:\n  runner refresh -p aws -s dev --yes")]
    Refresh(RefreshArgs),

    /// Preview the changes of every project whose upstream stacks are deployed
    #[command(after_help = "Examples:\n  runner preview -p aws -s dev\n  \
                            runner preview -p aws -s prod --expect-no-changes   # exit 6 when anything would change")]
    Preview(PreviewArgs),

    /// Check every deployed project for drift: `pulumi preview --expect-no-changes` across the
    /// graph in parallel, one report of what differs from its program and configuration
    #[command(
        after_help = "Exit 6 when anything drifted (0 when nothing did, 1 when a check failed). \
                            Only stacks the backend holds are checked; none is created.\n\n\
                            Examples:\n  runner drift -p aws -s prod\n  runner drift -p aws -s prod --refresh --junit drift.xml"
    )]
    Drift(DriftArgs),

    /// Prepare the configuration as a run would (asking for what is missing, saying which files
    /// it wrote), then check everything a run needs, reporting every problem at once with its fix
    #[command(
        after_help = "Examples:\n  runner validate -p aws -s dev\n  CI=true runner validate -p do -s ci\n  \
                      runner validate -p aws -s dev --check   # asks nothing, changes no file"
    )]
    Validate {
        /// Ask nothing and change no file: report what a run would still ask as problems too
        #[arg(long)]
        check: bool,
    },

    /// List the providers of this workspace, with a line about each
    #[command(after_help = "Example:\n  runner list-providers")]
    ListProviders,

    /// Show the plan: projects by layer, the waves that can run at once, the critical path
    #[command(
        visible_alias = "show-execution",
        after_help = "Examples:\n  runner show-plan -p aws\n  runner show-plan -p do --operation destroy\n  \
                      runner show-plan -p aws --target ingress-controller --format json\n  \
                      runner show-plan -p linode --format dot | dot -Tsvg > plan.svg\n  \
                      runner show-plan -p kubeconfig --format mermaid > plan.mmd"
    )]
    ShowPlan(ShowPlanArgs),

    /// status, output, logs, pulumi: a look at a stack without running the graph
    #[command(flatten)]
    DayTwo(DayTwo),

    /// Print the runner's version (as --version does)
    #[command(after_help = "Examples:\n  runner version\n  runner --version")]
    Version,

    /// Write the plan for another engine: PKO Stacks, CI pipelines, Argo Workflows, a KEBAP
    /// bundle synced by Argo CD, or a Backstage catalog (every edge of the plan; secrets only as references)
    #[command(
        after_help = export_examples(),
        subcommand_value_name = "FORMAT",
        subcommand_help_heading = "Formats",
        disable_help_subcommand = true
    )]
    Export(ExportArgs),

    /// List the Helm charts the provider's programs install (project, chart, version, the
    /// repository it comes from), or write a chart repository of exactly those (`charts mirror`)
    #[command(
        args_conflicts_with_subcommands = true,
        after_help = "Versions and repositories as a run would install them: the stack file's values where it sets \
                      them, else the programs' own.\n\n\
                      Examples:\n  runner charts -p kubeconfig\n  runner charts -p aws -s dev --format json\n  \
                      runner charts mirror ./mirror -p kubeconfig                 # from each chart's own repository\n  \
                      runner charts mirror ./mirror -p aws --from https://artifactory.example/helm-remote"
    )]
    Charts(ChartsArgs),

    /// Print a shell completion script
    #[command(
        after_help = "Examples:\n  runner completions bash > ~/.local/share/bash-completion/completions/runner\n  \
                      runner completions zsh > \"${fpath[1]}/_runner\"\n  \
                      runner completions fish > ~/.config/fish/completions/runner.fish"
    )]
    Completions {
        /// The shell to complete for
        #[arg(value_enum)]
        shell: CompletionShell,
    },

    /// Print the runner's man page (roff), or write a page per command, made from the same
    /// command definitions as --help
    #[command(
        after_help = "Examples:\n  runner man | man -l -\n  runner man up | man -l -                      # the page of one command\n  runner man export pko | man -l -\n  runner man > ~/.local/share/man/man1/runner.1\n  runner man --dir ~/.local/share/man/man1     # runner.1, runner-up.1, runner-export-pko.1, …\n  man runner-drift"
    )]
    Man {
        /// The command whose page to print (`up`, `export pko`); none: the main page
        #[arg(value_name = "COMMAND", conflicts_with = "dir")]
        command: Vec<String>,
        /// Write one page per command into this directory (made if missing), as git and gh
        /// ship theirs, instead of printing the main page
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

/// The commands that look at a stack without running the graph (top-level commands).
#[derive(Debug, Subcommand)]
pub(crate) enum DayTwo {
    /// Every project of the graph: its last operation, result, when, how long, the resources
    /// its stack holds, and what an `up` would run and why
    #[command(
        after_help = "Reads only what runs leave in the workspace: no lock and no pulumi, so it works while a run is going.\n\n\
                            Examples:\n  runner status -p aws -s dev\n  runner status -s dev --format json | jq '.up_would_run'"
    )]
    Status {
        /// Output format
        #[arg(short = 'f', long, value_enum, default_value_t = StatusFormat::Text)]
        format: StatusFormat,
    },

    /// Print a project's stack outputs, read from the backend (secrets as [secret] unless
    /// --show-secrets); with NAME its value alone, raw
    #[command(after_help = "The same backend and passphrase as a run; takes no lock.\n\n\
                            Examples:\n  runner output eks -s dev\n  runner output eks cluster_name -s dev\n  \
                            runner output eks kubeconfig -s dev --show-secrets > kubeconfig.yaml\n  \
                            runner output ingress-controller -s dev --json | jq -r .lb_ingress_hostname")]
    Output(OutputArgs),

    /// Run any pulumi command in a project with the run's environment: the backend, the
    /// passphrase, --stack, and --config-file where the command reads the configuration
    #[command(after_help = "Its exit code is pulumi's.\n\n\
                            Examples:\n  runner pulumi eks -s dev -- stack history\n  runner pulumi eks -s dev -- cancel --yes\n  \
                            runner pulumi logstore -s dev -- refresh --preview-only --diff")]
    Pulumi(PulumiArgs),

    /// Print a project's last log of an operation (the most recent one unless --operation
    /// says), and with --follow what is written to it until the operation ends (the next run's,
    /// when the last one has ended)
    #[command(after_help = "Reads only: no lock, so it works while a run is going.\n\n\
                            Examples:\n  runner logs eks -s dev\n  runner logs eks -s dev --operation destroy\n  \
                            runner logs ingress-controller -s dev --follow")]
    Logs(LogsArgs),

    /// Write the last run as one self-contained HTML file: the plan's graph, the timeline with
    /// its critical path, each project's result, changes and duration, the cause and log of
    /// each failure
    #[command(
        after_help = "Made from the last run's summary (last-run.json) and its logs; no secret is in it, and it opens with no network.\n\n\
                            Examples:\n  runner report -s dev                  # last-run.html, beside the run's summary\n  \
                            runner report -s dev -o run.html\n  \
                            runner report -s dev -o - | gzip > run.html.gz"
    )]
    Report {
        /// Where to write it, `-` for standard output; a device or a pipe is written into, a
        /// symbolic link refused [default: .runner/last-run.html]
        #[arg(short = 'o', long, value_name = "FILE|-")]
        output: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ChartsArgs {
    #[command(subcommand)]
    pub action: Option<ChartsAction>,

    /// Output format
    #[arg(short = 'f', long, value_enum, default_value_t = ChartsFormat::Text)]
    pub format: ChartsFormat,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ChartsAction {
    /// Write a Helm repository (index.yaml and the packages) of exactly the charts the programs
    /// install, to serve as `kubernetes:chart_mirror` where the charts' own repositories cannot
    /// be reached
    #[command(
        after_help = "Each chart is pulled from its own repository (or --from), its digest and Chart.yaml checked. A chart \
                      whose values schema points at documents off the chart (nginx-ingress) is written again with them \
                      inside, so Helm validates its values offline; Kubernetes definitions that cannot be fetched come \
                      from the cluster's /openapi/v2 (kubectl). Nothing is written unless every chart was pulled; DIR's \
                      index.yaml keeps the charts it held.\n\n\
                      Examples:\n  runner charts mirror ./mirror -p kubeconfig\n  \
                      runner charts mirror /srv/charts -p aws -s prod --from https://artifactory.example/helm-remote\n  \
                      runner charts mirror ./mirror -p kubeconfig --kubeconfig ~/.kube/config --context prod"
    )]
    Mirror(MirrorArgs),
}

#[derive(Debug, Args)]
pub(crate) struct MirrorArgs {
    /// The folder to write (made when missing; a link is refused)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Pull every chart from this Helm repository instead of each chart's own (a proxy such as
    /// Artifactory or Nexus); `https://user:password@host/…` is sent as basic authentication and
    /// never written or shown
    #[arg(long, value_name = "URL")]
    pub from: Option<String>,

    /// The kubeconfig of the cluster whose /openapi/v2 stands in for Kubernetes definitions a
    /// values schema needs and that cannot be fetched [default: kubectl's]
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The context of that kubeconfig [default: its current context]
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl MirrorArgs {
    pub(crate) fn resolve(&self, cwd: &std::path::Path) -> crate::commands::charts::MirrorOptions {
        crate::commands::charts::MirrorOptions {
            dir: cwd.join(&self.dir),
            from: self.from.clone(),
            cluster: crate::charts::mirror::Cluster {
                kubeconfig: self
                    .kubeconfig
                    .as_deref()
                    .map(|k| cwd.join(crate::commands::charts::kubeconfig_path(k))),
                context: self.context.clone(),
            },
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct PulumiArgs {
    /// The project whose directory pulumi runs in
    #[arg(value_name = "PROJECT")]
    pub project: String,

    /// The pulumi command and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

/// A project both a `--target` and an `--exclude`: refused while the arguments are resolved,
/// before any file is read or written.
fn neither_run_nor_left_out(targets: &[String], excludes: &[String]) -> Result<(), RunnerError> {
    match targets.iter().find(|t| excludes.contains(t)) {
        Some(both) => Err(RunnerError::usage(
            format!("`{both}` is given both as --target and as --exclude: it cannot be run and left out"),
            format!("drop `--exclude {both}` to run it, or `--target {both}` to leave it out"),
        )),
        None => Ok(()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

impl From<CompletionShell> for Shell {
    fn from(s: CompletionShell) -> Self {
        match s {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
        }
    }
}

/// `impl ValueEnum` for a plain enum of the runner: its values and their help, so clap parses
/// straight into the type the rest of the runner uses and no twin enum is needed.
macro_rules! value_enum {
    ($ty:ty { $($variant:path => $name:literal $(, $help:literal)?;)* }) => {
        impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($variant),*]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $($variant => PossibleValue::new($name)$(.help($help))?,)*
                })
            }
        }
    };
}

value_enum!(Operation {
    Operation::Up => "up";
    Operation::Destroy => "destroy";
    Operation::Refresh => "refresh";
    Operation::Preview => "preview";
});

value_enum!(Rendering {
    Rendering::Tree => "tree", "Projects grouped by layer, with waves and the critical path";
    Rendering::Dot => "dot", "Graphviz DOT (render with `dot -Tsvg`)";
    Rendering::Mermaid => "mermaid", "Mermaid flowchart";
    Rendering::Svg => "svg", "SVG: waves as columns, the critical path in red (drawn by the runner, no Graphviz)";
    Rendering::Json => "json", "JSON (schema: schemas/plan.schema.json)";
});

value_enum!(ExportSource {
    ExportSource::Git => "git", "The repository (projectRepo, branch or commit, repoDir)";
    ExportSource::Program => "program", "A Program object per project, embedded";
});

value_enum!(StatusFormat {
    StatusFormat::Text => "text", "A table";
    StatusFormat::Json => "json", "JSON (schema: schemas/status.schema.json)";
    StatusFormat::Gantt => "gantt", "The last run's timeline, a Mermaid gantt chart (the critical path marked crit)";
    StatusFormat::GanttSvg => "gantt-svg", "The last run's timeline as SVG";
});

value_enum!(ChartsFormat {
    ChartsFormat::Text => "text", "A table";
    ChartsFormat::Json => "json", "JSON: one object per chart";
});

value_enum!(Banner {
    Banner::Fabulous => "fabulous";
    Banner::Boring => "boring";
    Banner::Log => "log";
});

value_enum!(ColorChoice {
    ColorChoice::Auto => "auto";
    ColorChoice::Always => "always";
    ColorChoice::Never => "never";
});

value_enum!(OutputMode {
    OutputMode::Auto => "auto";
    OutputMode::Plain => "plain";
});

/// `45m`, `2h`, `1h 30m`, `30s` (humantime), more than zero, at most 30 days.
fn duration(s: &str) -> Result<std::time::Duration, String> {
    crate::duration::parse(s).map_err(|e| e.to_string())
}

/// MARA lower-cases `--stack` and `--provider`; so do we.
fn lower_case(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(s.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_consistent() {
        super::command().debug_assert();
    }

    #[test]
    fn the_top_help_gives_every_exit_code_its_meaning_in_short_lines() {
        let help = super::top_help();
        let codes = help[help.find("Exit codes: ").expect("exit codes")..].replace('\n', " ");
        for (code, meaning) in crate::error::exit::MEANINGS {
            assert!(codes.contains(&format!("{code} {meaning}")), "{code}: {help}");
        }
        assert!(help.lines().all(|l| l.len() <= 88), "{help}");
    }
}
