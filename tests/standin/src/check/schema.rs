//! The provider SDKs' types, as `scripts/install-test-tools` exports them (`schema.json` in the
//! SDK cache), read from the file named by `PULUMI_STANDIN_SCHEMA`. With it the stand-in refuses
//! what the engine refuses: unknown resource types and functions, unknown properties, missing
//! required inputs, reads of outputs a type does not have. Without it (or for a package it does
//! not describe) programs are evaluated leniently, as before.
//!
//! The file is JSON with one entry a line (a package's header, each resource, function and object
//! type on its own line, starting with its quoted key); one program needs a few entries, so they
//! are found by their line and parsed alone instead of parsing megabytes on every run.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use crate::fail::{Failure, fail};

pub struct Schema {
    text: String,
    /// Key of every entry line → where its value starts.
    index: HashMap<String, usize>,
    /// (package, `resources` or `functions`) → the tokens it has, for suggestions.
    names: HashMap<(String, &'static str), Vec<String>>,
}

impl Schema {
    /// The schema of a `schema.json`'s text.
    pub fn new(text: String) -> Self {
        let mut index = HashMap::new();
        let mut names: HashMap<(String, &'static str), Vec<String>> = HashMap::new();
        let mut package = String::new();
        let mut section = "";
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            if let Some(rest) = line.strip_prefix('"')
                && let Some(end) = rest.find("\":")
            {
                let key = &rest[..end];
                index.insert(key.to_string(), at + 1 + end + 2);
                if rest[end + 2..].starts_with("{\"source\":") {
                    package = key.to_string();
                } else if !section.is_empty() {
                    names
                        .entry((package.clone(), section))
                        .or_default()
                        .push(key.to_string());
                }
            }
            // A package's header and the last entry of a section end by opening the next one.
            let tail = line.trim_end();
            for (opening, name) in [
                ("\"resources\":{", "resources"),
                ("\"functions\":{", "functions"),
                ("\"types\":{", ""),
            ] {
                if tail.ends_with(opening) {
                    section = name;
                }
            }
            at += line.len();
        }
        Schema { text, index, names }
    }

    /// The schema in the file at `path`.
    pub fn load(path: &std::path::Path) -> Result<Self, String> {
        std::fs::read_to_string(path)
            .map(Schema::new)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    /// The resource types (`section` `resources`) or functions (`functions`) of a package.
    pub fn names(&self, package: &str, section: &str) -> Vec<&str> {
        self.names
            .iter()
            .filter(|((p, s), _)| p == package && *s == section)
            .flat_map(|(_, v)| v.iter().map(String::as_str))
            .collect()
    }
}

/// The schema of `PULUMI_STANDIN_SCHEMA`, if set.
pub fn get() -> Result<Option<&'static Schema>, Failure> {
    static SCHEMA: OnceLock<Result<Option<Schema>, String>> = OnceLock::new();
    let loaded = SCHEMA.get_or_init(|| {
        let Some(path) = std::env::var_os("PULUMI_STANDIN_SCHEMA").filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        std::fs::read_to_string(&path)
            .map(|text| Some(Schema::new(text)))
            .map_err(|e| {
                format!(
                    "PULUMI_STANDIN_SCHEMA: cannot read {}: {e} (scripts/install-test-tools writes it)",
                    std::path::Path::new(&path).display()
                )
            })
    });
    match loaded {
        Ok(s) => Ok(s.as_ref()),
        Err(e) => Err(fail(e.clone())),
    }
}

impl Schema {
    /// The value of the entry whose line starts with `"key":`.
    fn entry(&self, key: &str) -> Option<Value> {
        let at = *self.index.get(key)?;
        serde_json::Deserializer::from_str(&self.text[at..])
            .into_iter::<Value>()
            .next()?
            .ok()
    }

    /// The SDK a package is described from (`@pulumi/aws@7.48.0`), if the schema has it.
    pub fn package(&self, name: &str) -> Option<String> {
        let at = *self.index.get(name)?;
        let at = at
            + self.text[at..]
                .strip_prefix("{\"source\":")
                .map(|_| "{\"source\":".len())?;
        serde_json::Deserializer::from_str(&self.text[at..])
            .into_iter::<String>()
            .next()?
            .ok()
    }

    /// A resource type: `{inputs: {name: {type, required}}, outputs: {name: type}, component?}`.
    pub fn resource(&self, token: &str) -> Option<Value> {
        self.entry(token)
            .filter(|v| v.get("outputs").is_some() && v.get("returns").is_none())
    }

    /// A function: `{inputs, outputs, returns?}`.
    pub fn function(&self, token: &str) -> Option<Value> {
        self.entry(token).filter(|v| v.get("inputs").is_some())
    }

    /// An object type's properties: `{name: {type, required}}`.
    pub fn object(&self, key: &str) -> Option<Value> {
        self.entry(key).map(|v| v["properties"].clone())
    }
}

/// The package of a type token (`pulumi:providers:aws` → `aws`).
pub fn package_of(token: &str) -> &str {
    match token.strip_prefix("pulumi:providers:") {
        Some(p) => p,
        None => token.split(':').next().unwrap_or_default(),
    }
}
