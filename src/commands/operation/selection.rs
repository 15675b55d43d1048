//! Which projects a run takes: the plan the options ask for (`--target`, `--exclude`, `--only`).

use super::RunOptions;
use crate::error::RunnerError;
use crate::plan::{Operation, Plan};
use crate::provider::Provider;
use crate::report;

/// The plan the options ask for; what `--exclude` leaves out is said in one line.
pub(super) fn plan<'p>(provider: &'p Provider, o: &RunOptions) -> Result<Plan<'p>, RunnerError> {
    let plan = match &o.only {
        Some(x) => Plan::only(provider, o.operation, x),
        None => Plan::new(provider, o.operation, &o.targets),
    }?;
    let (plan, left_out) = plan.excluding(&o.excludes)?;
    if !left_out.is_empty() {
        report::info(&excluded_line(&plan, &o.excludes, &left_out));
    }
    if plan.order.is_empty() {
        return Err(RunnerError::usage(
            format!(
                "nothing left to {}: --exclude leaves out every project of the plan",
                o.operation.as_str()
            ),
            "exclude fewer projects, or see what each one takes along with `runner show-plan -p PROVIDER --exclude …`",
        ));
    }
    Ok(plan)
}

/// `excluded: vpc, and what needs it or runs after it: eks, kubeconfig` (on destroy: `kept: …,
/// and what it needs: …`).
pub(super) fn excluded_line(plan: &Plan<'_>, excludes: &[String], left_out: &[usize]) -> String {
    let named: Vec<&str> = left_out
        .iter()
        .map(|&i| plan.name(i))
        .filter(|n| excludes.iter().any(|x| x == n))
        .collect();
    let taken: Vec<&str> = left_out
        .iter()
        .map(|&i| plan.name(i))
        .filter(|n| !excludes.iter().any(|x| x == n))
        .collect();
    let (verb, along) = match (plan.operation, named.len()) {
        (Operation::Destroy, 1) => ("kept", "what it needs"),
        (Operation::Destroy, _) => ("kept", "what they need"),
        (_, 1) => ("excluded", "what needs it or runs after it"),
        (_, _) => ("excluded", "what needs them or runs after them"),
    };
    if taken.is_empty() {
        format!("{verb}: {}", named.join(", "))
    } else {
        format!("{verb}: {}, and {along}: {}", named.join(", "), taken.join(", "))
    }
}
