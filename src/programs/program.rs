//! What a project's Pulumi YAML program reads from other projects: its
//! `pulumi:pulumi:StackReference` resources and the `outputs` it takes from each, and the outputs
//! it declares. Used to label the plan's edges with the outputs that flow along them, and to
//! check the provider files' needs against the programs (`super::crosscheck`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// For each referenced project, the outputs the program reads from it.
pub(super) type Reads = BTreeMap<String, BTreeSet<String>>;

/// A program as the plan and the cross-check see it: no more than that is kept (and cached,
/// `super::cache`), the lines a problem would name included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Program {
    /// Referenced project → the logical name of its `StackReference`.
    pub refs: BTreeMap<String, String>,
    pub reads: Reads,
    /// The keys of its `outputs:`.
    pub outputs: BTreeSet<String>,
    /// Referenced project → the line of its `StackReference`.
    ref_lines: BTreeMap<String, usize>,
    /// Referenced project → output → the line where it is read.
    read_lines: BTreeMap<String, BTreeMap<String, usize>>,
}

impl Program {
    /// Reads `dir/Pulumi.yaml`; `None` when it cannot be read or parsed.
    pub(crate) fn load(dir: &Path) -> Option<Self> {
        Self::parse(&crate::fs::read_text(dir.join("Pulumi.yaml")).ok()?)
    }

    /// Only what the cross-check needs is deserialized (big graphs have thousands of
    /// programs); the outputs read are found in the text, comment lines left out.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let doc: Doc = serde_saphyr::from_str(text).ok()?;
        let mut refs = BTreeMap::new();
        for (logical, r) in &doc.resources {
            if r.ty != "pulumi:pulumi:StackReference" {
                continue;
            }
            let name = r.properties.name.as_ref().and_then(Value::as_str).unwrap_or(logical);
            if let [_, p, _] = name.split('/').collect::<Vec<_>>().as_slice()
                && !p.contains("${")
            {
                refs.insert((*p).to_string(), logical.clone());
            }
        }
        let mut reads: Reads = refs.keys().map(|p| (p.clone(), BTreeSet::new())).collect();
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            for (project, logical) in &refs {
                for output in outputs_read(line, logical) {
                    reads.get_mut(project).expect("inserted").insert(output);
                }
            }
        }
        let ref_lines = refs
            .keys()
            .map(|p| (p.clone(), line_of(text, &format!("/{p}/"))))
            .collect();
        let read_lines = reads
            .iter()
            .map(|(p, outputs)| {
                let logical = &refs[p];
                let lines = outputs
                    .iter()
                    .map(|o| (o.clone(), read_line_in(text, logical, o)))
                    .collect();
                (p.clone(), lines)
            })
            .collect();
        Some(Program {
            refs,
            reads,
            outputs: doc.outputs.into_keys().collect(),
            ref_lines,
            read_lines,
        })
    }

    /// Line of the `StackReference` to `project` (1 when unknown).
    pub(crate) fn ref_line(&self, project: &str) -> usize {
        self.ref_lines.get(project).copied().unwrap_or(1)
    }

    /// Line where output `output` of `project` is read (1 when unknown).
    pub(crate) fn read_line(&self, project: &str, output: &str) -> usize {
        self.read_lines
            .get(project)
            .and_then(|l| l.get(output))
            .copied()
            .unwrap_or(1)
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

#[derive(Deserialize)]
struct Doc {
    #[serde(default)]
    resources: BTreeMap<String, Resource>,
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

    #[test]
    fn references_and_the_outputs_read_from_them() {
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
variables:
  kc: ${kube.outputs["kubeconfig"]}
  # old: ${logstore.outputs["removed"]}
outputs:
  status: ${chart.status}
"#,
        )
        .unwrap();
        let r = &program.reads;
        assert_eq!(r["kubeconfig"].iter().collect::<Vec<_>>(), ["kubeconfig"]);
        assert_eq!(
            r["logstore"].iter().collect::<Vec<_>>(),
            ["elastic_hostname", "kibana_hostname"],
            "a commented-out line reads nothing"
        );
        assert_eq!(program.refs["logstore"], "logstore");
        assert_eq!(program.outputs.iter().collect::<Vec<_>>(), ["status"]);
        assert_eq!(program.ref_line("logstore"), 11);
        assert_eq!(program.read_line("logstore", "kibana_hostname"), 17);
        assert_eq!(program.read_line("kubeconfig", "kubeconfig"), 19);
        assert_eq!(program.read_line("logstore", "absent"), 1);
    }
}
