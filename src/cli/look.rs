//! The flags of the commands that look without running the graph — `show-plan`, `output`,
//! `logs` — each resolved once into its command's options. A new flag is a field here and its
//! line in `resolve`.

use clap::Args;

use crate::commands::logs::LogsOptions;
use crate::commands::output::OutputOptions;
use crate::commands::show_plan::PlanOptions;
use crate::error::RunnerError;
use crate::plan::Operation;
use crate::render::Rendering;

#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
    /// The project (without it, the projects there are are listed)
    #[arg(value_name = "PROJECT")]
    project: Option<String>,

    /// One output: its value alone, raw (a string as it is, anything else as JSON)
    #[arg(value_name = "NAME")]
    name: Option<String>,

    /// Print secret values instead of [secret]
    #[arg(long)]
    show_secrets: bool,

    /// Print JSON: the outputs as an object, or NAME's value
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct LogsArgs {
    /// The project (without it, the projects there are are listed)
    #[arg(value_name = "PROJECT")]
    project: Option<String>,

    /// The operation whose log to print [default: the project's most recent]
    #[arg(long, value_enum, value_name = "OPERATION")]
    operation: Option<Operation>,

    /// Go on printing what is written to the log until the operation ends, as `tail -F`: waits
    /// for the project to start when it has no log yet, and for its next run when the last one
    /// has ended
    #[arg(short = 'f', long)]
    follow: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ShowPlanArgs {
    /// The operation to plan: `destroy` runs dependents first
    #[arg(long, value_enum, default_value_t = Operation::Up)]
    operation: Operation,

    /// Plan only this project and what it needs (on destroy: what needs it); repeatable, or
    /// separated by commas
    #[arg(short = 't', long = "target", value_name = "PROJECT", value_delimiter = ',')]
    targets: Vec<String>,

    /// Plan without this project and what cannot run without it (on destroy: what it needs is
    /// kept); repeatable, or separated by commas
    #[arg(short = 'x', long = "exclude", value_name = "PROJECT", value_delimiter = ',')]
    excludes: Vec<String>,

    /// Output format
    #[arg(short = 'f', long, value_enum, default_value_t = Rendering::Tree)]
    format: Rendering,
}

impl OutputArgs {
    pub(crate) fn resolve(&self) -> OutputOptions {
        OutputOptions {
            project: self.project.clone(),
            name: self.name.clone(),
            show_secrets: self.show_secrets,
            json: self.json,
        }
    }
}

impl LogsArgs {
    pub(crate) fn resolve(&self) -> LogsOptions {
        LogsOptions {
            project: self.project.clone(),
            operation: self.operation,
            follow: self.follow,
        }
    }
}

impl ShowPlanArgs {
    /// A project both targeted and left out is refused before any file is read.
    pub(crate) fn resolve(&self) -> Result<PlanOptions, RunnerError> {
        super::neither_run_nor_left_out(&self.targets, &self.excludes)?;
        Ok(PlanOptions {
            operation: self.operation,
            targets: self.targets.clone(),
            excludes: self.excludes.clone(),
            format: self.format,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use crate::cli::{Cli, Command, DayTwo};
    use crate::plan::Operation;
    use crate::render::Rendering;

    fn cli(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("runner").chain(args.iter().copied())).expect("it parses")
    }

    #[test]
    fn show_plan_resolves_its_selection_and_refuses_a_project_both_run_and_left_out() {
        let Command::ShowPlan(a) = cli(&[
            "show-plan",
            "-t",
            "a,b",
            "-x",
            "c",
            "-f",
            "json",
            "--operation",
            "destroy",
        ])
        .command
        else {
            panic!("show-plan")
        };
        let o = a.resolve().expect("it resolves");
        assert_eq!((o.operation, o.format), (Operation::Destroy, Rendering::Json));
        assert_eq!(
            (o.targets, o.excludes),
            (vec!["a".into(), "b".into()], vec!["c".to_string()])
        );

        let Command::ShowPlan(both) = cli(&["show-plan", "-t", "a", "-x", "a"]).command else {
            panic!("show-plan")
        };
        let e = both.resolve().expect_err("refused");
        assert!(
            e.to_string().contains("`a` is given both as --target and as --exclude"),
            "{e}"
        );
    }

    #[test]
    fn output_and_logs_take_their_flags() {
        let Command::DayTwo(DayTwo::Output(a)) = cli(&["output", "eks", "kubeconfig", "--show-secrets"]).command else {
            panic!("output")
        };
        let o = a.resolve();
        assert_eq!(
            (o.project.as_deref(), o.name.as_deref()),
            (Some("eks"), Some("kubeconfig"))
        );
        assert!(o.show_secrets && !o.json);

        let Command::DayTwo(DayTwo::Logs(a)) = cli(&["logs", "eks", "-f", "--operation", "destroy"]).command else {
            panic!("logs")
        };
        let o = a.resolve();
        assert_eq!(
            (o.project.as_deref(), o.operation, o.follow),
            (Some("eks"), Some(Operation::Destroy), true)
        );
    }
}
