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
}

impl Schema {
    fn new(text: String) -> Self {
        let mut index = HashMap::new();
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            if let Some(rest) = line.strip_prefix('"')
                && let Some(end) = rest.find("\":")
            {
                index.insert(rest[..end].to_string(), at + 1 + end + 2);
            }
            at += line.len();
        }
        Schema { text, index }
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
