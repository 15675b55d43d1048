//! The Helm charts the programs install (`runner charts`), and a chart repository of exactly
//! those charts that a site without the Internet can serve (`runner charts mirror`).
//!
//! A chart is a `kubernetes:helm.sh/v3:Release` (or `helm.sh/v4:Chart`) of a program: its
//! `chart`, `version` and `repositoryOpts.repo`, each a literal or a `${…}` of the program's
//! configuration, resolved as Pulumi resolves them: the stack file's value when it sets the key,
//! else the program's default. The repository a chart "comes from" is the program's own default
//! (the chart's publisher); the stack's `kubernetes:chart_mirror` is where it is installed from.

pub(crate) mod fetch;
pub(crate) mod index;
pub(crate) mod mirror;
pub(crate) mod package;
pub(crate) mod schema;

use std::path::Path;

use serde_json::{Map, Value};

use crate::provider::Project;

/// The resource types that install a chart.
const CHART_TYPES: [&str; 2] = ["kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart"];

/// One chart one program installs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Chart {
    pub(crate) project: String,
    /// The resource's name in the program, and the program's file and line (as shown).
    pub(crate) resource: String,
    pub(crate) file: String,
    pub(crate) line: usize,
    /// The chart's name and version.
    #[serde(rename = "chart")]
    pub(crate) name: String,
    pub(crate) version: String,
    /// The chart's own repository: what the program says when the stack file says nothing.
    pub(crate) repository: String,
    /// Where it is installed from when the stack file says otherwise (a mirror).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) installed_from: Option<String>,
}

/// Why a program's chart cannot be told.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub(crate) enum Unknown {
    #[error("{file}:{line}: `{resource}`'s {field} is {value}, which is no configuration value the runner can read")]
    Expression {
        file: String,
        line: usize,
        resource: String,
        field: &'static str,
        value: String,
    },
    #[error("{file}:{line}: `{resource}` names no {field}")]
    Missing {
        file: String,
        line: usize,
        resource: String,
        field: &'static str,
    },
}

/// The charts `projects` install, in their order, with the stack file's `config` (empty for
/// the programs' defaults alone). A program that cannot be read is left to the checks that
/// read programs (`validate`); a chart field that is not a configuration value is an error.
pub(crate) fn installed<'p>(
    root: &Path,
    show: &dyn Fn(&Path) -> String,
    projects: impl IntoIterator<Item = &'p Project>,
    config: &Map<String, Value>,
) -> Result<Vec<Chart>, Vec<Unknown>> {
    let mut charts = Vec::new();
    let mut unknown = Vec::new();
    for p in projects {
        let path = root.join(&p.path).join("Pulumi.yaml");
        let Ok(text) = crate::fs::read_text(&path) else {
            continue;
        };
        let Ok(doc) = serde_saphyr::from_str::<Value>(&text) else {
            continue;
        };
        let program = Program {
            doc: &doc,
            text: &text,
            file: show(&path),
            stack: config,
        };
        for found in program.charts(&p.name) {
            match found {
                Ok(c) => charts.push(c),
                Err(u) => unknown.push(u),
            }
        }
    }
    if unknown.is_empty() { Ok(charts) } else { Err(unknown) }
}

/// `validate`'s check of the charts a run installs from a mirror (`kubernetes:chart_mirror` in
/// the stack file): each is in the mirror's index at its version, or it is a problem said before
/// any project runs (Helm would fail there, project by project). A mirror that cannot be read
/// is a warning, returned: the run says it again if it matters.
pub(crate) fn check_mirror(
    charts: &[Chart],
    stack: &str,
    provider: &str,
) -> (Vec<crate::diagnostic::Problem>, Vec<String>) {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let fetcher = fetch::Fetcher::new();
    let mut read: std::collections::BTreeMap<String, Option<index::Index>> = std::collections::BTreeMap::new();
    for c in charts {
        let Some(mirror) = c.installed_from.as_deref() else {
            continue;
        };
        let index = read.entry(mirror.to_string()).or_insert_with(|| {
            let got = fetch::Url::parse(mirror)
                .map_err(|e| e.to_string())
                .and_then(|u| u.join("index.yaml").map_err(|e| e.to_string()))
                .and_then(|u| fetcher.get(&u).map_err(|e| e.to_string()))
                .and_then(|b| index::Index::parse(&b).map_err(|e| format!("not a Helm repository's index: {e}")));
            match got {
                Ok(i) => Some(i),
                Err(why) => {
                    warnings.push(format!(
                        "the charts were not checked against the mirror {} (kubernetes:chart_mirror): {why}",
                        fetch::hide_credentials(mirror)
                    ));
                    None
                }
            }
        });
        let Some(index) = index else { continue };
        if index.find(&c.name, &c.version).is_none() {
            problems.push(crate::diagnostic::Problem::at(
                crate::diagnostic::Place {
                    file: c.file.clone(),
                    line: u32::try_from(c.line).ok(),
                },
                format!(
                    "`{}` installs the chart {} {} from the mirror {} (kubernetes:chart_mirror), which has no such \
                     version{}",
                    c.project,
                    c.name,
                    c.version,
                    fetch::hide_credentials(mirror),
                    match index.versions(&c.name).as_slice() {
                        [] => String::from(" (nor the chart)"),
                        some => format!(
                            " (it has {})",
                            some.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                        ),
                    }
                ),
                format!(
                    "fill the mirror with what the programs pin: `runner charts mirror DIR -p {provider} -s {stack}`, \
                     served at that URL; or pin a version it has"
                ),
            ));
        }
    }
    (problems, warnings)
}

/// A program read for its charts.
struct Program<'a> {
    doc: &'a Value,
    text: &'a str,
    file: String,
    stack: &'a Map<String, Value>,
}

impl Program<'_> {
    fn charts(&self, project: &str) -> Vec<Result<Chart, Unknown>> {
        let Some(resources) = self.doc.get("resources").and_then(Value::as_object) else {
            return Vec::new();
        };
        resources
            .iter()
            .filter(|(_, r)| {
                r.get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| CHART_TYPES.contains(&t))
            })
            .map(|(name, r)| self.chart(project, name, r))
            .collect()
    }

    fn chart(&self, project: &str, resource: &str, r: &Value) -> Result<Chart, Unknown> {
        let line = line_of(self.text, resource);
        let properties = r.get("properties");
        let field = |field: &'static str, pointer: &str| -> Result<Option<String>, Unknown> {
            let Some(v) = properties.and_then(|p| p.pointer(pointer)) else {
                return Ok(None);
            };
            self.resolve(v, false).map(Some).ok_or_else(|| Unknown::Expression {
                file: self.file.clone(),
                line,
                resource: resource.to_string(),
                field,
                value: shown(v),
            })
        };
        let missing = |field: &'static str| Unknown::Missing {
            file: self.file.clone(),
            line,
            resource: resource.to_string(),
            field,
        };
        let chart = field("chart", "/chart")?.ok_or_else(|| missing("chart"))?;
        let version = field("version", "/version")?.ok_or_else(|| missing("version"))?;
        let installed = field("repository", "/repositoryOpts/repo")?;
        // The chart's own repository: the program's default, the stack file left out.
        let own = properties
            .and_then(|p| p.pointer("/repositoryOpts/repo"))
            .and_then(|v| self.resolve(v, true));
        // An OCI chart names its repository in itself: `oci://registry/path/chart`.
        let (name, repository) = match (chart.strip_prefix("oci://"), own.clone()) {
            (Some(reference), None) => {
                let (repo, name) = reference.rsplit_once('/').unwrap_or(("", reference));
                (name.to_string(), format!("oci://{repo}"))
            }
            (_, repo) => (chart.clone(), repo.ok_or_else(|| missing("repositoryOpts.repo"))?),
        };
        let installed_from = installed.filter(|i| *i != repository);
        Ok(Chart {
            project: project.to_string(),
            resource: resource.to_string(),
            file: self.file.clone(),
            line,
            name,
            version,
            repository,
            installed_from,
        })
    }

    /// A field's value: a literal, or text with `${key}` of the program's configuration in it;
    /// `defaults_only` leaves the stack file out.
    fn resolve(&self, v: &Value, defaults_only: bool) -> Option<String> {
        let text = match v {
            Value::String(s) => s.as_str(),
            Value::Number(n) => return Some(n.to_string()),
            _ => return None,
        };
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find('}')? + start;
            out.push_str(&self.config(&rest[start + 2..end], defaults_only)?);
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        Some(out)
    }

    /// The value of a configuration key the program reads as `${key}`: `name` of its own
    /// namespace (the stack file's `<project>:name`) or `ns:name`.
    fn config(&self, key: &str, defaults_only: bool) -> Option<String> {
        let declared = self.doc.get("config").and_then(|c| c.get(key));
        let full = if key.contains(':') {
            key.to_string()
        } else {
            format!("{}:{key}", self.doc.get("name").and_then(Value::as_str)?)
        };
        let from_stack = (!defaults_only).then(|| self.stack.get(&full)).flatten();
        let value = from_stack.or_else(|| match declared? {
            Value::Object(m) => m.get("default").or_else(|| m.get("value")),
            plain => Some(plain),
        })?;
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            // A secret (`secure:`) or a structure is no chart field.
            _ => None,
        }
    }
}

/// The line (1-based) of a resource's key under `resources:`.
fn line_of(text: &str, resource: &str) -> usize {
    let mut in_resources = false;
    for (n, line) in text.lines().enumerate() {
        if !line.starts_with([' ', '\t', '#']) && !line.is_empty() {
            in_resources = line.starts_with("resources:");
            continue;
        }
        let trimmed = line.trim_start();
        if in_resources
            && let Some(rest) = trimmed.strip_prefix(resource)
            && rest.trim_start().starts_with(':')
            && line.len() - trimmed.len() <= 4
        {
            return n + 1;
        }
    }
    1
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "name: prometheus\nruntime: yaml\nconfig:\n  kubernetes:chart_mirror: https://prometheus-community.github.io/helm-charts\n  chart_version:\n    type: string\n    default: 66.3.0\n  statsd_chart_version:\n    type: string\n    default: 0.15.0\nresources:\n  release:\n    type: kubernetes:helm.sh/v3:Release\n    properties:\n      chart: kube-prometheus-stack\n      version: ${chart_version}\n      repositoryOpts:\n        repo: ${kubernetes:chart_mirror}\n  statsd:\n    type: kubernetes:helm.sh/v3:Release\n    properties:\n      chart: prometheus-statsd-exporter\n      version: ${statsd_chart_version}\n      repositoryOpts:\n        repo: ${kubernetes:chart_mirror}\n  oci:\n    type: kubernetes:helm.sh/v4:Chart\n    properties:\n      chart: oci://registry-1.docker.io/bitnamicharts/elasticsearch\n      version: \"21.4.1\"\n";

    fn charts(stack: &Map<String, Value>) -> Vec<Result<Chart, Unknown>> {
        let doc: Value = serde_saphyr::from_str(PROGRAM).unwrap();
        Program {
            doc: &doc,
            text: PROGRAM,
            file: "projects/services/prometheus/Pulumi.yaml".into(),
            stack,
        }
        .charts("prometheus")
    }

    #[test]
    fn the_programs_defaults_and_the_stack_files_values_are_told_apart() {
        let mut stack = Map::new();
        stack.insert("kubernetes:chart_mirror".into(), "http://127.0.0.1:8879/mirror".into());
        stack.insert("prometheus:statsd_chart_version".into(), "0.14.0".into());
        let found: Vec<Chart> = charts(&stack).into_iter().map(Result::unwrap).collect();
        assert_eq!(found[0].name, "kube-prometheus-stack");
        assert_eq!(found[0].version, "66.3.0");
        assert_eq!(found[0].line, 12);
        assert_eq!(
            found[0].repository,
            "https://prometheus-community.github.io/helm-charts"
        );
        assert_eq!(found[0].installed_from.as_deref(), Some("http://127.0.0.1:8879/mirror"));
        assert_eq!(found[1].version, "0.14.0", "the stack file's value");
        assert_eq!(found[2].name, "elasticsearch");
        assert_eq!(found[2].repository, "oci://registry-1.docker.io/bitnamicharts");
        assert_eq!(found[2].installed_from, None);
        let defaults: Vec<Chart> = charts(&Map::new()).into_iter().map(Result::unwrap).collect();
        assert_eq!(defaults[1].version, "0.15.0");
        assert_eq!(defaults[0].installed_from, None);
    }

    #[test]
    fn a_version_from_another_resource_is_said_with_its_place() {
        let text = PROGRAM.replace("version: ${chart_version}", "version: ${other.outputs[\"v\"]}");
        let doc: Value = serde_saphyr::from_str(&text).unwrap();
        let stack = Map::new();
        let program = Program {
            doc: &doc,
            text: &text,
            file: "p/Pulumi.yaml".into(),
            stack: &stack,
        };
        let err = program.charts("prometheus").remove(0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "p/Pulumi.yaml:12: `release`'s version is `${other.outputs[\"v\"]}`, which is no configuration value the runner can read"
        );
    }
}
