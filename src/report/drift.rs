//! What a drift check found, resource by resource: the one place its table is worded, for the
//! terminal, GitHub's job summary and `JUnit`. A row is a resource the preview would change and,
//! for an update or a replacement, each input that differs: its value deployed (the stack's
//! state; refreshed from the cloud with `--refresh`) and declared (the program with the stack
//! configuration), which an `up` would apply.

use std::fmt::Write as _;

use crate::exec::{ResourceDiff, ResourceStep};

/// What an `up` would do to the resource, in words.
fn doing(op: ResourceStep) -> &'static str {
    match op {
        ResourceStep::Create => "would be created",
        ResourceStep::Delete => "would be deleted",
        ResourceStep::Replace => "would be replaced",
        ResourceStep::Update => "would be updated",
    }
}

/// The engine's mark of a step, as the closing table's legend has them.
fn mark(op: ResourceStep) -> char {
    match op {
        ResourceStep::Create => '+',
        ResourceStep::Delete => '-',
        ResourceStep::Replace => '±',
        ResourceStep::Update => '~',
    }
}

fn value(v: Option<&String>) -> &str {
    v.map_or("(absent)", String::as_str)
}

/// Plain text lines, indented by `indent`: a resource a line, each differing input under it.
pub(crate) fn lines(diffs: &[ResourceDiff], indent: &str) -> Vec<String> {
    let width = diffs
        .iter()
        .flat_map(|d| &d.properties)
        .map(|p| p.path.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for d in diffs {
        out.push(format!("{indent}{} {} ({})", mark(d.op), d.resource, doing(d.op)));
        for p in &d.properties {
            if p.deployed.is_none() && p.declared.is_none() {
                out.push(format!("{indent}    {}", p.path));
                continue;
            }
            out.push(format!(
                "{indent}    {:<width$}  {} → {}",
                p.path,
                value(p.deployed.as_ref()),
                value(p.declared.as_ref())
            ));
        }
    }
    out
}

/// A Markdown table of one project's drift (GitHub's job summary).
pub(crate) fn markdown(project: &str, diffs: &[ResourceDiff]) -> String {
    let mut out = format!(
        "<details><summary>{} drifted: {}</summary>\n\n| resource | change | input | deployed | declared |\n| --- | --- | --- | --- | --- |\n",
        cell(project),
        resources(diffs)
    );
    let code = |v: &str| format!("`{}`", cell(v));
    // An empty cell is one space wide.
    let row = |cells: [&str; 5]| {
        let cells = cells.map(|c| {
            if c.is_empty() {
                " ".to_string()
            } else {
                format!(" {c} ")
            }
        });
        format!("|{}|", cells.join("|"))
    };
    rows(&mut out, diffs, &code, &row);
    out.push_str("\n</details>\n\n");
    out
}

/// An HTML table of one project's drift (the run's report), every text escaped.
pub(crate) fn html(project: &str, diffs: &[ResourceDiff]) -> String {
    let e = crate::render::xml_text;
    let mut out = format!(
        "<article class=\"drift\" id=\"drift-{0}\"><h3>{0} drifted: {1}</h3>\n<table>\n<thead><tr><th>resource</th><th>change</th><th>input</th><th>deployed</th><th>declared</th></tr></thead>\n<tbody>\n",
        e(project),
        resources(diffs)
    );
    let code = |v: &str| format!("<code>{}</code>", e(v));
    let row = |cells: [&str; 5]| format!("<tr>{}</tr>", cells.map(|c| format!("<td>{c}</td>")).concat());
    rows(&mut out, diffs, &code, &row);
    out.push_str("</tbody>\n</table></article>\n");
    out
}

/// `N resource(s)`.
fn resources(diffs: &[ResourceDiff]) -> String {
    crate::render::count(diffs.len(), "resource")
}

/// A drift table's rows, a line each, as `row` writes its cells (resource, change, input,
/// deployed, declared) and `code` a value: a row per input that differs, and one for a resource
/// that differs in none it names (created, deleted), its last three cells empty.
fn rows(out: &mut String, diffs: &[ResourceDiff], code: &dyn Fn(&str) -> String, row: &dyn Fn([&str; 5]) -> String) {
    let value = |v: Option<&String>| v.map_or_else(|| "(absent)".to_string(), |v| code(v));
    for d in diffs {
        let (resource, change) = (code(&d.resource), doing(d.op));
        if d.properties.is_empty() {
            let _ = writeln!(out, "{}", row([&resource, change, "", "", ""]));
        }
        for p in &d.properties {
            let (deployed, declared) = (value(p.deployed.as_ref()), value(p.declared.as_ref()));
            let _ = writeln!(
                out,
                "{}",
                row([&resource, change, &code(&p.path), &deployed, &declared])
            );
        }
    }
}

/// Text for a cell of the job summary's table, inside a code span: a backtick would end the
/// span, a line break the row (the table's own cell rule does the rest).
fn cell(text: &str) -> String {
    super::markdown_cell(&text.replace('`', "'").replace('\n', " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::PropertyDiff;

    fn diffs() -> Vec<ResourceDiff> {
        vec![
            ResourceDiff {
                resource: "pulumi:index:Stash::store".into(),
                op: crate::exec::ResourceStep::Update,
                properties: vec![
                    PropertyDiff {
                        path: "input.retention".into(),
                        deployed: Some("\"7d\"".into()),
                        declared: Some("\"14d\"".into()),
                    },
                    PropertyDiff {
                        path: "input.tags".into(),
                        deployed: None,
                        declared: Some("[\"a|b\"]".into()),
                    },
                ],
            },
            ResourceDiff {
                resource: "aws:s3/bucket:Bucket::logs".into(),
                op: crate::exec::ResourceStep::Create,
                properties: vec![],
            },
        ]
    }

    #[test]
    fn each_resource_then_each_input_recorded_and_declared() {
        assert_eq!(
            lines(&diffs(), "  "),
            [
                "  ~ pulumi:index:Stash::store (would be updated)",
                "      input.retention  \"7d\" → \"14d\"",
                "      input.tags       (absent) → [\"a|b\"]",
                "  + aws:s3/bucket:Bucket::logs (would be created)",
            ]
        );
        let md = markdown("logstore", &diffs());
        assert!(md.contains("<summary>logstore drifted: 2 resources</summary>"), "{md}");
        assert!(
            md.contains(
                "| `pulumi:index:Stash::store` | would be updated | `input.retention` | `\"7d\"` | `\"14d\"` |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| (absent) | `[\"a\\|b\"]` |"),
            "a | in a value is escaped: {md}"
        );
        assert!(
            md.contains("| `aws:s3/bucket:Bucket::logs` | would be created | | | |"),
            "{md}"
        );
    }
}
