//! A Helm repository's `index.yaml` (`apiVersion: v1`, `entries`: each chart's versions, each
//! with its `Chart.yaml` fields, `urls`, `digest` and `created`): read from a repository, and
//! written for the mirror with the entries it serves.

use serde_json::{Map, Value};

/// A repository's index, its entries as they were read (every field kept, so the mirror's
/// index says what the original said).
#[derive(Debug, Clone, Default)]
pub(crate) struct Index {
    pub(crate) entries: Map<String, Value>,
}

/// Why a text is not a Helm index.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotAnIndex {
    #[error("it is not YAML: {0}")]
    Yaml(String),
    #[error("it has no `entries` (an HTML page? a Helm repository's URL is the folder of its index.yaml)")]
    NoEntries,
}

impl Index {
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, NotAnIndex> {
        let text = String::from_utf8_lossy(bytes);
        let doc: Value = serde_saphyr::from_str(&text).map_err(|e| NotAnIndex::Yaml(first_line(&e.to_string())))?;
        let entries = doc
            .get("entries")
            .and_then(Value::as_object)
            .ok_or(NotAnIndex::NoEntries)?;
        Ok(Index {
            entries: entries.clone(),
        })
    }

    /// The entry of `chart` at `version` (a leading `v` is not told apart, as Helm does not).
    pub(crate) fn find(&self, chart: &str, version: &str) -> Option<&Value> {
        self.versions_of(chart)
            .find(|v| same_version(&text(v.get("version")), version))
    }

    /// Every version the repository has of `chart`, as listed (newest first, by Helm's rule).
    pub(crate) fn versions(&self, chart: &str) -> Vec<String> {
        self.versions_of(chart).map(|v| text(v.get("version"))).collect()
    }

    fn versions_of(&self, chart: &str) -> impl Iterator<Item = &Value> {
        self.entries.get(chart).and_then(Value::as_array).into_iter().flatten()
    }

    /// Adds an entry (replacing the same chart's same version).
    pub(crate) fn put(&mut self, chart: &str, entry: Value) {
        let version = text(entry.get("version"));
        let list = self
            .entries
            .entry(chart.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        if !list.is_array() {
            *list = Value::Array(Vec::new());
        }
        let list = list.as_array_mut().expect("an array");
        list.retain(|v| !same_version(&text(v.get("version")), &version));
        list.push(entry);
    }

    /// The index as YAML, charts and their versions sorted (versions newest first by the
    /// order of their numbers, as `helm repo index` sorts them).
    pub(crate) fn to_yaml(&self, header: &[String], generated: &str) -> String {
        let mut entries: Vec<(&String, &Value)> = self.entries.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let mut sorted = Map::new();
        for (chart, versions) in entries {
            let mut versions: Vec<Value> = versions.as_array().cloned().unwrap_or_default();
            versions.sort_by_key(|v| std::cmp::Reverse(numbers(&text(v.get("version")))));
            sorted.insert(chart.clone(), Value::Array(versions));
        }
        let doc = serde_json::json!({
            "apiVersion": "v1",
            "entries": sorted,
            "generated": generated,
        });
        crate::export::yaml::document(header, &doc)
    }
}

/// A version's numbers, for ordering (`v1.16.2` → [1, 16, 2]; a pre-release part after `-`
/// ignored).
fn numbers(version: &str) -> Vec<u64> {
    version
        .trim_start_matches('v')
        .split(['-', '+'])
        .next()
        .unwrap_or_default()
        .split('.')
        .map(|n| n.parse().unwrap_or(0))
        .collect()
}

fn same_version(a: &str, b: &str) -> bool {
    a.trim_start_matches('v') == b.trim_start_matches('v')
}

/// A scalar as text: a version written unquoted may be read as a number.
pub(crate) fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "apiVersion: v1\nentries:\n  demo:\n  - name: demo\n    version: 0.15.0\n    urls: [demo-0.15.0.tgz]\n    digest: abc\n  - name: demo\n    version: 0.14.0\n    urls: [demo-0.14.0.tgz]\ngenerated: \"2024-01-01T00:00:00Z\"\n";

    #[test]
    fn a_version_is_found_and_the_ones_there_are_listed() {
        let index = Index::parse(INDEX.as_bytes()).unwrap();
        assert_eq!(index.find("demo", "0.14.0").unwrap()["urls"][0], "demo-0.14.0.tgz");
        assert!(index.find("demo", "0.14.1").is_none());
        assert_eq!(index.versions("demo"), ["0.15.0", "0.14.0"]);
        assert!(index.versions("other").is_empty());
        assert!(matches!(
            Index::parse(b"<html><body>hi</body></html>"),
            Err(NotAnIndex::NoEntries | NotAnIndex::Yaml(_))
        ));
    }

    #[test]
    fn the_index_written_reads_back_newest_first_with_its_fields() {
        let mut index = Index::parse(INDEX.as_bytes()).unwrap();
        index.put(
            "demo",
            serde_json::json!({"name": "demo", "version": "0.9.0", "urls": ["demo-0.9.0.tgz"], "digest": "d"}),
        );
        index.put(
            "demo",
            serde_json::json!({"name": "demo", "version": "0.14.0", "urls": ["demo-0.14.0.tgz"], "digest": "new"}),
        );
        let yaml = index.to_yaml(&["Made by runner charts mirror".into()], "2026-01-01T00:00:00Z");
        assert!(yaml.starts_with("# Made by runner charts mirror\n"), "{yaml}");
        let back = Index::parse(yaml.as_bytes()).unwrap();
        assert_eq!(back.versions("demo"), ["0.15.0", "0.14.0", "0.9.0"]);
        assert_eq!(back.find("demo", "0.14.0").unwrap()["digest"], "new");
    }
}
