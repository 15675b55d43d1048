//! The default `show-plan` view: projects grouped by layer, with waves and the critical path.

use std::fmt::Write as _;

use console::style;

use super::count;
use crate::graph::{Direction, EdgeKind, Weighing};
use crate::plan::Plan;

use super::list;

/// Marks a project on the critical path.
const CRITICAL: &str = "★";

pub(crate) fn tree(plan: &Plan<'_>) -> String {
    let mut out = String::new();
    let provider = plan.provider;
    let n = plan.order.len();
    let _ = writeln!(
        out,
        "{} {} · provider {} ({}) · {} in {}",
        style("Plan:").bold(),
        style(plan.operation.as_str()).bold(),
        style(&provider.name).bold(),
        provider.description,
        count(n, "project"),
        count(plan.waves.len(), "wave"),
    );
    if !plan.targets.is_empty() {
        let targets: Vec<&str> = plan.targets.iter().map(|&i| plan.name(i)).collect();
        let with = match (plan.operation.direction(), targets.len()) {
            (Direction::Reverse, 1) => "with everything that needs it",
            (Direction::Reverse, _) => "with everything that needs them",
            (Direction::Forward, 1) => "with everything it needs",
            (Direction::Forward, _) => "with everything they need",
        };
        let _ = writeln!(out, "Targets: {} {with}", list(&targets));
    }
    let names: Vec<&str> = plan.critical.nodes.iter().map(|&i| plan.name(i)).collect();
    let weight = match plan.critical.weighing {
        Weighing::Count => count(usize::try_from(plan.critical.weight).unwrap_or(usize::MAX), "project"),
        Weighing::Estimate => format!("about {}", duration(plan.critical.weight)),
    };
    let _ = writeln!(
        out,
        "Critical path ({CRITICAL}, {weight}): {}",
        style(names.join(" → ")).yellow()
    );

    let width = plan
        .order
        .iter()
        .map(|&i| plan.name(i).chars().count())
        .max()
        .unwrap_or(0);
    for layer in plan.layers() {
        let _ = writeln!(out, "\n{}", style(layer.as_str()).bold().underlined());
        // Within a layer: by wave, then run order, so the list reads in time order.
        let mut members: Vec<usize> = plan
            .order
            .iter()
            .copied()
            .filter(|&i| plan.project(i).layer == layer)
            .collect();
        members.sort_by_key(|&i| plan.wave(i));
        for (k, &i) in members.iter().enumerate() {
            let branch = if k + 1 == members.len() {
                "└──"
            } else {
                "├──"
            };
            let _ = writeln!(out, "{}", project_line(plan, i, branch, width));
        }
    }

    let _ = writeln!(
        out,
        "\n{}",
        style("Waves (the projects of a wave can run at the same time):").bold()
    );
    let digits = plan.waves.len().to_string().len();
    for (w, members) in plan.waves.iter().enumerate() {
        let names: Vec<&str> = members.iter().map(|&i| plan.name(i)).collect();
        let _ = writeln!(out, "  {:>digits$}  {}", w + 1, list(&names));
    }
    out
}

/// One project: branch, name, wave, critical mark, then what it waits for, hooks and secrets.
fn project_line(plan: &Plan<'_>, i: usize, branch: &str, width: usize) -> String {
    let p = plan.project(i);
    let mark = if plan.is_critical(i) {
        style(CRITICAL).yellow().to_string()
    } else {
        " ".to_string()
    };
    let mut details = Vec::new();
    match plan.operation.direction() {
        Direction::Forward => {
            let needs = plan.needs(i, EdgeKind::Data);
            if !needs.is_empty() {
                details.push(format!("needs {}", list(&needs)));
            }
            let after = plan.needs(i, EdgeKind::Order);
            if !after.is_empty() {
                details.push(format!("after {}", list(&after)));
            }
        }
        Direction::Reverse => {
            let first: Vec<&str> = plan.waits_for(i).iter().map(|n| plan.name(n.node)).collect();
            if !first.is_empty() {
                details.push(format!("after {}", list(&first)));
            }
        }
    }
    if !p.on_success.is_empty() && plan.operation == crate::plan::Operation::Up {
        let hooks: Vec<&str> = p.on_success.iter().map(crate::provider::Hook::as_str).collect();
        details.push(format!("on success: {}", list(&hooks)));
    }
    if !p.secrets.is_empty() {
        details.push(count(p.secrets.len(), "secret"));
    }
    let details = if details.is_empty() {
        String::new()
    } else {
        format!("  {}", style(details.join(" · ")).dim())
    };
    let line = format!(
        "{branch} {name:<width$}  wave {wave:<2} {mark}{details}",
        name = p.name,
        wave = plan.wave(i),
    );
    line.trim_end().to_string()
}

/// `45 s`, `12 min`, `1 h 05 min`
fn duration(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60 + u64::from(s % 60 >= 30)),
        s => {
            let minutes = s / 60 + u64::from(s % 60 >= 30);
            format!("{} h {:02} min", minutes / 60, minutes % 60)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(45), "45 s");
        assert_eq!(duration(119), "119 s");
        assert_eq!(duration(2345), "39 min");
        assert_eq!(duration(3900), "1 h 05 min");
        assert_eq!(duration(u64::MAX), "5124095576030431 h 00 min");
    }
}
