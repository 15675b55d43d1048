//! What a project's Pulumi YAML program reads from other projects: its
//! `pulumi:pulumi:StackReference` resources and the `outputs` it takes from each, and the outputs
//! it declares. Used to label the plan's edges with the outputs that flow along them, and to
//! check the provider files' needs against the programs (`crosscheck`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

/// For each referenced project, the outputs the program reads from it.
pub type Reads = BTreeMap<String, BTreeSet<String>>;

/// A program as the cross-check sees it.
pub struct Program {
    pub text: String,
    /// Referenced project → the logical name of its `StackReference`.
    pub refs: BTreeMap<String, String>,
    pub reads: Reads,
    /// The keys of its `outputs:`.
    pub outputs: BTreeSet<String>,
}

impl Program {
    /// Reads `dir/Pulumi.yaml`; `None` when it cannot be read or parsed.
    pub fn load(dir: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(dir.join("Pulumi.yaml")).ok()?;
        let doc: Value = serde_saphyr::from_str(&text).ok()?;
        Some(Program {
            refs: references(&doc),
            reads: reads_of(&doc),
            outputs: doc["outputs"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
            text,
        })
    }

    /// 1-based line of the first line holding `needle` (1 when absent).
    pub fn line_of(&self, needle: &str) -> usize {
        self.text
            .find(needle)
            .map_or(1, |at| self.text[..at].matches('\n').count() + 1)
    }

    /// Line of the `StackReference` to `project`.
    pub fn ref_line(&self, project: &str) -> usize {
        self.line_of(&format!("/{project}/"))
    }

    /// Line where output `output` of `project` is read.
    pub fn read_line(&self, project: &str, output: &str) -> usize {
        let Some(logical) = self.refs.get(project) else {
            return 1;
        };
        for needle in [
            format!("{logical}.outputs[\"{output}\"]"),
            format!("{logical}.outputs.{output}"),
        ] {
            if self.text.contains(&needle) {
                return self.line_of(&needle);
            }
        }
        1
    }
}

/// Referenced project → logical name, for every `StackReference` with a literal project.
fn references(doc: &Value) -> BTreeMap<String, String> {
    let mut refs = BTreeMap::new();
    if let Some(resources) = doc["resources"].as_object() {
        for (logical, r) in resources {
            if r["type"] != "pulumi:pulumi:StackReference" {
                continue;
            }
            let name = r["properties"]["name"].as_str().unwrap_or(logical);
            if let [_, p, _] = name.split('/').collect::<Vec<_>>().as_slice()
                && !p.contains("${")
            {
                refs.insert((*p).to_string(), logical.clone());
            }
        }
    }
    refs
}

pub fn reads_of(doc: &Value) -> Reads {
    // Logical resource name → the project it references (`organization/<project>/<stack>`).
    let mut refs: BTreeMap<String, String> = BTreeMap::new();
    if let Some(resources) = doc["resources"].as_object() {
        for (logical, r) in resources {
            if r["type"] != "pulumi:pulumi:StackReference" {
                continue;
            }
            let name = r["properties"]["name"].as_str().unwrap_or(logical);
            let parts: Vec<&str> = name.split('/').collect();
            let project = match parts.as_slice() {
                [_, p, _] => *p,
                _ => continue,
            };
            if !project.contains("${") {
                refs.insert(logical.clone(), project.to_string());
            }
        }
    }
    let mut out: Reads = refs.values().map(|p| (p.clone(), BTreeSet::new())).collect();
    let mut strings = Vec::new();
    collect_strings(doc, &mut strings);
    for s in strings {
        for (logical, project) in &refs {
            for output in outputs_read(s, logical) {
                out.get_mut(project).expect("inserted").insert(output);
            }
        }
    }
    out
}

fn collect_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
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
        let doc: Value = serde_saphyr::from_str(
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
"#,
        )
        .unwrap();
        let r = reads_of(&doc);
        assert_eq!(r["kubeconfig"].iter().collect::<Vec<_>>(), ["kubeconfig"]);
        assert_eq!(
            r["logstore"].iter().collect::<Vec<_>>(),
            ["elastic_hostname", "kibana_hostname"]
        );
    }
}
