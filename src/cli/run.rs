//! The flags of a run (`up`, `destroy`, `refresh`, `preview`, `drift`) and their help, each
//! command's resolved once into the conductor's [`RunOptions`]: what the conductor reads there,
//! and what every `pulumi` of the run is asked ([`RunFlags`], carried whole into the engine).
//! A new flag is a field here, and its line in its command's `resolve`.

use std::path::PathBuf;

use clap::Args;

use super::duration;
use crate::commands::named_output;
use crate::commands::operation::{Changes, DEFAULT_PARALLEL, RunOptions};
use crate::error::RunnerError;
use crate::exec::Policy;
use crate::plan::Operation;
use crate::pulumi::{Drift, RunFlags};
use crate::report::OutputMode;

/// What every run takes: last in each command's flags, since the headings it sets hold what
/// follows it.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    selection: SelectionArgs,

    /// Run at most N projects at once [default: 8]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), help_heading = "Running")]
    parallel: Option<u16>,

    /// After a failure, finish every branch that does not depend on it
    #[arg(long, help_heading = "Running")]
    keep_going: bool,

    /// Also write the JSON summary of the run to FILE (always: .runner/last-run.json); `-` for
    /// standard output. Checked before the run: a symbolic link or a directory is refused
    #[arg(long, value_name = "FILE|-", help_heading = "Output")]
    summary: Option<PathBuf>,

    /// Also write the run as a `JUnit` XML report to FILE (one test case per planned project);
    /// `-` for standard output, as for --summary
    #[arg(long, value_name = "FILE|-", help_heading = "Output")]
    junit: Option<PathBuf>,

    /// Also write the run as one self-contained HTML file: the plan's graph, the timeline, each
    /// project's result, the cause and log of each failure (opens with no network); `-` for
    /// standard output, as for --summary
    #[arg(long, value_name = "FILE|-", help_heading = "Output")]
    report: Option<PathBuf>,

    /// How progress is shown: `plain` prefixes every line with its project
    #[arg(long, value_enum, default_value_t = OutputMode::Auto, help_heading = "Output")]
    output: OutputMode,

    /// Stop any project still running after DURATION (`45m`, `2h`), as Ctrl-C would; it ends as
    /// `timed out` [default: each project's own `timeout`, else none]
    #[arg(long, value_name = "DURATION", value_parser = duration, help_heading = "Stopping")]
    timeout: Option<std::time::Duration>,

    /// When a stack is locked by a process of this host that no longer runs, remove that lock
    /// (never one of another host or of a running process) and try once more
    #[arg(long, help_heading = "Running")]
    remove_stale_locks: bool,

    /// After Ctrl-C (or a timeout), how long projects get to stop before SIGTERM, and after
    /// SIGTERM before SIGKILL
    #[arg(long, value_name = "DURATION", value_parser = duration, default_value = "30s", help_heading = "Stopping")]
    grace: std::time::Duration,
}

/// `destroy`'s selection flags, said its way round: what needs a project goes before it.
pub(super) fn selected_as_destroy_selects(a: clap::Arg) -> clap::Arg {
    let help = match a.get_id().as_str() {
        "targets" => "Only this project and what needs it (destroyed first); repeatable, or separated by commas",
        "excludes" => "Leave out this project and what it needs (kept); repeatable, or separated by commas",
        "only" => {
            "Only this project, alone: its dependents must be gone already, which the backend must prove first \
             (one CI job per project)"
        }
        _ => return a,
    };
    a.help(help)
}

/// Which projects a run takes, under the heading `Selection`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Selection")]
struct SelectionArgs {
    // Said the way `up` selects: `destroy`'s own help (`cli::Command::Destroy`) says its way round.
    /// Only this project and what it needs; repeatable, or separated by commas
    #[arg(short = 't', long = "target", value_name = "PROJECT", value_delimiter = ',')]
    targets: Vec<String>,

    /// Leave out this project and what needs it or runs after it; repeatable, or separated by
    /// commas
    #[arg(short = 'x', long = "exclude", value_name = "PROJECT", value_delimiter = ',')]
    excludes: Vec<String>,

    /// Only this project, alone: its needs must be deployed already, which the backend must
    /// prove first (one CI job per project)
    #[arg(long, value_name = "PROJECT", conflicts_with_all = ["targets", "excludes"])]
    only: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct UpArgs {
    /// Run every project, even those unchanged since their last successful up
    #[arg(long)]
    fresh: bool,

    /// Do not ask before running
    #[arg(short = 'y', long)]
    yes: bool,

    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Args)]
pub(crate) struct DestroyArgs {
    /// Also remove the clusters, users and contexts `kubeconfig-merge` added
    #[arg(long)]
    prune_kubeconfig: bool,

    /// Do not ask: neither for the stack name (needed without a terminal) nor, after, whether to
    /// remove what `kubeconfig-merge` added (`--prune-kubeconfig` does, without asking)
    #[arg(short = 'y', long)]
    yes: bool,

    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Args)]
pub(crate) struct RefreshArgs {
    /// Do not ask before running
    #[arg(short = 'y', long)]
    yes: bool,

    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Args)]
pub(crate) struct PreviewArgs {
    /// Exit with code 6 when any project would change (a drift check for CI)
    #[arg(long)]
    expect_no_changes: bool,

    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Args)]
pub(crate) struct DriftArgs {
    /// Read each stack's resources from the cloud first (`pulumi preview --refresh`), so
    /// changes made outside Pulumi show too
    #[arg(long)]
    refresh: bool,

    #[command(flatten)]
    run: RunArgs,
}

impl RunArgs {
    /// The options every run shares, for `operation`; an operation's own flags are off until
    /// its command's arguments set them. The files the run is to write are looked at now: a
    /// wrong one is refused before anything runs.
    fn resolve(&self, operation: Operation) -> Result<RunOptions, RunnerError> {
        super::neither_run_nor_left_out(&self.selection.targets, &self.selection.excludes)?;
        let output = |flag: &str, path: &Option<PathBuf>| path.as_deref().map(|p| named_output(flag, p)).transpose();
        Ok(RunOptions {
            operation,
            targets: self.selection.targets.clone(),
            excludes: self.selection.excludes.clone(),
            only: self.selection.only.clone(),
            summary: output("--summary", &self.summary)?,
            junit: output("--junit", &self.junit)?,
            report: output("--report", &self.report)?,
            output: self.output,
            fresh: false,
            yes: false,
            changes: Changes::Allowed,
            pulumi: RunFlags {
                remove_stale_locks: self.remove_stale_locks,
                ..RunFlags::default()
            },
            scheduler: Policy {
                parallel: self.parallel.map_or(DEFAULT_PARALLEL, usize::from),
                keep_going: self.keep_going,
                grace: self.grace,
                timeout: self.timeout,
            },
        })
    }
}

impl UpArgs {
    pub(crate) fn resolve(&self) -> Result<RunOptions, RunnerError> {
        let mut o = self.run.resolve(Operation::Up)?;
        o.fresh = self.fresh;
        o.yes = self.yes;
        Ok(o)
    }
}

impl DestroyArgs {
    pub(crate) fn resolve(&self) -> Result<RunOptions, RunnerError> {
        let mut o = self.run.resolve(Operation::Destroy)?;
        o.yes = self.yes;
        o.pulumi.prune_kubeconfig = self.prune_kubeconfig;
        Ok(o)
    }
}

impl RefreshArgs {
    pub(crate) fn resolve(&self) -> Result<RunOptions, RunnerError> {
        let mut o = self.run.resolve(Operation::Refresh)?;
        o.yes = self.yes;
        Ok(o)
    }
}

impl PreviewArgs {
    pub(crate) fn resolve(&self) -> Result<RunOptions, RunnerError> {
        let mut o = self.run.resolve(Operation::Preview)?;
        if self.expect_no_changes {
            o.changes = Changes::Unexpected;
        }
        Ok(o)
    }
}

impl DriftArgs {
    /// A drift check is a preview of what the backend holds, whose changes are its answer.
    pub(crate) fn resolve(&self) -> Result<RunOptions, RunnerError> {
        let mut o = self.run.resolve(Operation::Preview)?;
        o.changes = Changes::Unexpected;
        o.pulumi.drift = Some(Drift { refresh: self.refresh });
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::{Changes, RunOptions};
    use crate::cli::{Cli, Command};
    use crate::plan::Operation;

    /// `runner ARGS`, a run's command, resolved.
    fn options(args: &[&str]) -> RunOptions {
        let cli = Cli::try_parse_from(std::iter::once("runner").chain(args.iter().copied())).expect("it parses");
        match &cli.command {
            Command::Up(a) => a.resolve(),
            Command::Destroy(a) => a.resolve(),
            Command::Refresh(a) => a.resolve(),
            Command::Preview(a) => a.resolve(),
            Command::Drift(a) => a.resolve(),
            other => panic!("not a run: {other:?}"),
        }
        .expect("it resolves")
    }

    #[test]
    fn each_command_sets_its_own_flags_and_leaves_the_others_off() {
        let up = options(&[
            "up",
            "--fresh",
            "-y",
            "-t",
            "a,b",
            "--parallel",
            "2",
            "--remove-stale-locks",
        ]);
        assert_eq!((up.operation, up.fresh, up.yes), (Operation::Up, true, true));
        assert_eq!(
            (up.targets, up.scheduler.parallel),
            (vec!["a".to_string(), "b".to_string()], 2)
        );
        assert!(up.pulumi.remove_stale_locks && !up.pulumi.prune_kubeconfig && up.pulumi.drift.is_none());
        assert_eq!(up.changes, Changes::Allowed);

        let destroy = options(&["destroy", "--prune-kubeconfig"]);
        assert_eq!(destroy.operation, Operation::Destroy);
        assert!(destroy.pulumi.prune_kubeconfig && !destroy.yes && !destroy.fresh);

        let preview = options(&["preview", "--expect-no-changes"]);
        assert_eq!(
            (preview.operation, preview.changes),
            (Operation::Preview, Changes::Unexpected)
        );
        assert!(preview.pulumi.drift.is_none());
        assert_eq!(options(&["preview"]).changes, Changes::Allowed);

        let drift = options(&["drift", "--refresh"]);
        assert_eq!(
            (drift.operation, drift.changes),
            (Operation::Preview, Changes::Unexpected)
        );
        assert!(drift.pulumi.drift.is_some_and(|d| d.refresh));
        assert!(options(&["drift"]).pulumi.drift.is_some_and(|d| !d.refresh));
        assert_eq!(
            options(&["refresh"]).scheduler.parallel,
            crate::commands::operation::DEFAULT_PARALLEL
        );
    }
}
