//! What a project's Pulumi YAML program reads from other projects: its
//! `pulumi:pulumi:StackReference` resources and the `outputs` it takes from each, and the outputs
//! it declares. Used to label the plan's edges with the outputs that flow along them, and to
//! check the provider files' needs against the programs (`super::crosscheck`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::declared::Declared;

/// A program as the plan and the cross-check see it: no more than that is kept (and cached,
/// `super::cache`), the lines a problem would name included. Flat, sorted vectors rather than
/// maps: a big graph's cache holds thousands of these, and each allocation shows on a repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Program {
    /// Its `name:` when that is a string (a project's Pulumi name, which stack references use).
    pub name: Option<String>,
    /// Its `StackReference`s, one per referenced project, sorted by project.
    pub refs: Vec<Ref>,
    /// The keys of its `outputs:`, sorted.
    pub outputs: Vec<String>,
    /// What its `config:` asks of the stack configuration (typed, secret or required keys).
    pub config: Vec<Declared>,
    /// Each `${name}` that no resource, variable or `config:` key of the program declares (first
    /// line it is read on), with the closest declared name. Pulumi YAML stops on these before
    /// deploying anything, unless the stack configuration holds the key (`super::crosscheck`).
    pub undeclared: Vec<Undeclared>,
}

/// A name read through `${…}` that the program does not declare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Undeclared {
    pub name: String,
    pub line: usize,
    pub closest: Option<String>,
}

/// A referenced project and what the program reads from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Ref {
    pub project: String,
    /// Line of its `StackReference`.
    pub line: usize,
    /// The outputs read, sorted, each with the line where it is first read.
    pub reads: Vec<(String, usize)>,
}

/// Why a program's name could not be read: its file, or its YAML.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NameUnread {
    #[error("{0}")]
    File(#[from] std::io::Error),
    #[error("{0}")]
    Yaml(#[from] serde_saphyr::Error),
}

impl Program {
    /// The `name:` of the program in `dir`, whatever shape the rest of it has: see
    /// [`Program::name_of`].
    pub(crate) fn name_in(dir: &Path) -> Result<Option<String>, NameUnread> {
        Ok(Self::name_of(&crate::fs::read_text(dir.join("Pulumi.yaml"))?)?)
    }

    /// The `name:` of a program's text, read as YAML as pulumi reads it (a comment after it,
    /// quotes, a byte-order mark, a flow mapping), whatever shape the rest has: the one reader
    /// of a program's name ([`Program::parse`] takes it the same way). `None` when the program
    /// names none, or not as text.
    pub(crate) fn name_of(text: &str) -> Result<Option<String>, serde_saphyr::Error> {
        let doc: Value = serde_saphyr::from_str(text)?;
        Ok(name_text(doc.get("name")))
    }

    /// Reads `dir/Pulumi.yaml`; `None` when it cannot be read or parsed.
    pub(crate) fn load(dir: &Path) -> Option<Self> {
        Self::parse(&crate::fs::read_text(dir.join("Pulumi.yaml")).ok()?)
    }

    /// Only what the cross-check needs is deserialized (big graphs have thousands of
    /// programs); the outputs read are found in the text, comment lines left out.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let doc: Doc = serde_saphyr::from_str(text).ok()?;
        // Referenced project → the logical names of its StackReferences (two may share one).
        let mut logical_names: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (logical, r) in &doc.resources {
            if r.ty != "pulumi:pulumi:StackReference" {
                continue;
            }
            let name = r.properties.name.as_ref().and_then(Value::as_str).unwrap_or(logical);
            if let [_, p, _] = name.split('/').collect::<Vec<_>>().as_slice()
                && !p.contains("${")
            {
                logical_names.entry(p).or_default().push(logical);
            }
        }
        let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
        let refs = logical_names
            .into_iter()
            .map(|(project, logicals)| {
                let mut reads: BTreeMap<String, usize> = BTreeMap::new();
                for logical in &logicals {
                    let outputs: BTreeSet<String> = code.iter().flat_map(|l| outputs_read(l, logical)).collect();
                    // Each output's line looked up once, however often it is read.
                    for output in outputs {
                        let at = read_line_in(text, logical, &output);
                        reads.entry(output).and_modify(|l| *l = (*l).min(at)).or_insert(at);
                    }
                }
                Ref {
                    project: project.to_string(),
                    line: line_of(text, &format!("/{project}/")),
                    reads: reads.into_iter().collect(),
                }
            })
            .collect();
        let name = name_text(doc.name.as_ref());
        let undeclared = undeclared(&doc, name.as_deref(), text);
        Some(Program {
            undeclared,
            config: super::declared::read(name.as_deref().unwrap_or_default(), doc.config.as_ref(), text),
            name,
            refs,
            outputs: doc.outputs.into_keys().collect(),
        })
    }

    /// Its reference to `project`, if it has one.
    pub(crate) fn reference(&self, project: &str) -> Option<&Ref> {
        self.refs
            .binary_search_by(|r| r.project.as_str().cmp(project))
            .ok()
            .map(|i| &self.refs[i])
    }

    /// Whether its `outputs:` declare `output`.
    pub(crate) fn declares(&self, output: &str) -> bool {
        self.outputs.binary_search_by(|o| o.as_str().cmp(output)).is_ok()
    }
}

impl Ref {
    /// The names of the outputs read.
    pub(crate) fn outputs(&self) -> impl Iterator<Item = &str> {
        self.reads.iter().map(|(o, _)| o.as_str())
    }
}

/// 1-based line of the first line holding `needle` (1 when absent).
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(1, |at| text[..at].matches('\n').count() + 1)
}

/// Line where `logical.outputs["output"]` (or `.output`) is read.
fn read_line_in(text: &str, logical: &str, output: &str) -> usize {
    for needle in [
        format!("{logical}.outputs[\"{output}\"]"),
        format!("{logical}.outputs.{output}"),
    ] {
        if text.contains(&needle) {
            return line_of(text, &needle);
        }
    }
    1
}

/// A program's name when it is text.
fn name_text(name: Option<&Value>) -> Option<String> {
    name?.as_str().map(str::to_string)
}

#[derive(Deserialize)]
struct Doc {
    name: Option<Value>,
    config: Option<Value>,
    #[serde(default)]
    resources: BTreeMap<String, Resource>,
    #[allow(clippy::zero_sized_map_values)]
    #[serde(default)]
    variables: BTreeMap<String, IgnoredAny>,
    // Only the keys of `outputs:` matter; their values are skipped unread.
    #[allow(clippy::zero_sized_map_values)]
    #[serde(default)]
    outputs: BTreeMap<String, IgnoredAny>,
}

#[derive(Deserialize)]
struct Resource {
    #[serde(rename = "type", default)]
    ty: String,
    #[serde(default)]
    properties: Properties,
}

#[derive(Deserialize, Default)]
struct Properties {
    name: Option<Value>,
}

/// The names read through `${…}` (outside comment lines; `$${` is a literal) that are neither
/// `pulumi`, a resource, a variable nor a `config:` key, nor namespaced (`aws:region` reads the
/// stack configuration of another package).
fn undeclared(doc: &Doc, name: Option<&str>, text: &str) -> Vec<Undeclared> {
    let config: Vec<&str> = match &doc.config {
        Some(Value::Object(m)) => m.keys().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    let declared = |head: &str| {
        head == "pulumi"
            || doc.resources.contains_key(head)
            || doc.variables.contains_key(head)
            || config
                .iter()
                .any(|k| *k == head || name.and_then(|n| k.strip_prefix(n)?.strip_prefix(':')) == Some(head))
    };
    let mut found: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        for head in heads(line) {
            if !head.is_empty() && !head.contains(':') && !declared(head) {
                found.entry(head).or_insert(i + 1);
            }
        }
    }
    if found.is_empty() {
        return Vec::new();
    }
    let known: Vec<&str> = doc
        .resources
        .keys()
        .chain(doc.variables.keys())
        .map(String::as_str)
        .chain(config.iter().copied())
        .collect();
    let mut out: Vec<Undeclared> = found
        .into_iter()
        .map(|(head, line)| Undeclared {
            name: head.to_string(),
            line,
            closest: crate::graph::closest(head, known.iter().copied()),
        })
        .collect();
    out.sort_by_key(|u| u.line);
    out
}

/// The first name of each `${…}` in a line: up to `.`, `[`, `}` or a space.
fn heads(line: &str) -> impl Iterator<Item = &str> {
    line.match_indices("${").filter_map(move |(at, _)| {
        if line[..at].ends_with('$') {
            return None; // `$${` is a literal `${`
        }
        let rest = &line[at + 2..];
        let end = rest
            .find(|c: char| matches!(c, '.' | '[' | '}') || c.is_whitespace())
            .unwrap_or(rest.len());
        Some(rest[..end].trim())
    })
}

/// `${ref.outputs["x"]…}` and `${ref.outputs.x…}` inside one string.
fn outputs_read(s: &str, logical: &str) -> Vec<String> {
    let mut found = Vec::new();
    let needle = format!("{logical}.outputs");
    let mut rest = s;
    while let Some(at) = rest.find(&needle) {
        let before_ok = at == 0 || {
            let c = rest.as_bytes()[at - 1];
            c == b'{' || c == b' ' || c == b'('
        };
        let after = &rest[at + needle.len()..];
        if before_ok {
            if let Some(r) = after.strip_prefix("[\"")
                && let Some(end) = r.find("\"]")
            {
                found.push(r[..end].to_string());
            } else if let Some(r) = after.strip_prefix('.') {
                let end = r
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                    .unwrap_or(r.len());
                if end > 0 {
                    found.push(r[..end].to_string());
                }
            }
        }
        rest = after;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As pulumi reads it: each of these is a program named `logstore`.
    #[test]
    fn a_programs_name_is_read_as_yaml() {
        for text in [
            "name: logstore\nruntime: yaml\n",
            "name: logstore # the log store\nruntime: yaml\n",
            "\"name\": logstore\nruntime: yaml\n",
            "name: 'logstore'\nruntime: yaml\n",
            "\u{feff}name: logstore\nruntime: yaml\n",
            "# a comment first\nruntime: yaml\nname: logstore\n",
            "{name: logstore, runtime: yaml}\n",
        ] {
            assert_eq!(Program::name_of(text).unwrap().as_deref(), Some("logstore"), "{text:?}");
        }
        assert_eq!(Program::name_of("runtime: yaml\n").unwrap(), None);
        assert_eq!(Program::name_of("name: [not, text]\n").unwrap(), None);
        assert_eq!(Program::name_of("[a list]\n").unwrap(), None);
        assert!(Program::name_of("name: : :\n").is_err());
    }

    #[test]
    fn references_one_per_project_and_the_outputs_read_from_them() {
        let program = Program::parse(
            r#"
name: logagent
resources:
  kube:
    type: pulumi:pulumi:StackReference
    properties:
      name: ${pulumi.organization}/kubeconfig/${pulumi.stack}
  logstore:
    type: pulumi:pulumi:StackReference
    properties:
      name: ${pulumi.organization}/logstore/${pulumi.stack}
  chart:
    type: kubernetes:helm.sh/v4:Chart
    properties:
      values:
        host: https://${logstore.outputs["elastic_hostname"]}:9200
        kibana: ${logstore.outputs.kibana_hostname}
  cluster:
    type: pulumi:pulumi:StackReference
    properties:
      name: ${pulumi.organization}/kubeconfig/${pulumi.stack}
variables:
  kc: ${kube.outputs["kubeconfig"]}
  name: ${cluster.outputs["cluster_name"]}
  # old: ${logstore.outputs["removed"]}
outputs:
  status: ${chart.status}
"#,
        )
        .unwrap();
        let outputs = |p: &str| program.reference(p).unwrap().outputs().collect::<Vec<_>>();
        assert_eq!(
            outputs("kubeconfig"),
            ["cluster_name", "kubeconfig"],
            "two references to one project read as one"
        );
        assert_eq!(
            outputs("logstore"),
            ["elastic_hostname", "kibana_hostname"],
            "a commented-out line reads nothing"
        );
        assert_eq!(program.refs.len(), 2);
        assert!(program.reference("chart").is_none());
        assert_eq!(program.outputs, ["status"]);
        assert!(program.declares("status") && !program.declares("chart"));
        let logstore = program.reference("logstore").unwrap();
        assert_eq!(logstore.line, 11);
        assert_eq!(
            logstore.reads,
            [("elastic_hostname".into(), 16), ("kibana_hostname".into(), 17)]
        );
        let kubeconfig = program.reference("kubeconfig").unwrap();
        assert_eq!(kubeconfig.line, 7, "the first reference's line");
        assert_eq!(
            kubeconfig.reads,
            [("cluster_name".into(), 24), ("kubeconfig".into(), 23)]
        );
    }

    #[test]
    fn names_read_but_not_declared_with_their_first_line_and_the_closest_name() {
        let program = Program::parse(
            r#"name: app
config:
  region:
    type: string
  app:zone: {}
variables:
  size: 3
resources:
  bucket:
    type: aws:s3:Bucket
    properties:
      tags:
        a: ${regoin}-${zone}-${size}-${bucket.id}-${pulumi.stack}
        b: $${literal} ${aws:region} ${ spaced }
        # ${commented}
        c: ${regoin} ${extra["k"]}
"#,
        )
        .unwrap();
        let found: Vec<_> = program
            .undeclared
            .iter()
            .map(|u| (u.name.as_str(), u.line, u.closest.as_deref()))
            .collect();
        assert_eq!(found, [("regoin", 13, Some("region")), ("extra", 16, None)]);
    }
}
