//! The JSON schemas of what the runner writes (`schemas/*.schema.json`), made from the types
//! that write them: `schemars` (a dev-dependency: the runner carries none of it) derives each
//! document's shape from its Rust type, and the words a field may take come from the enums
//! that spell them (an outcome added to `exec::Outcome` is in the schema the next time). The
//! test below fails when a file is not what the types make; `RUNNER_WRITE_SCHEMAS=1 cargo test
//! --lib schemas` writes them again (as uv keeps its own).

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Serialize;
use serde_json::Value;

use crate::error::exit;
use crate::exec::Outcome;
use crate::graph::{EdgeKind, Layer};
use crate::plan::{Operation, RunKind};
use crate::report::status::{Found, Told};
use crate::runstate::Recorded;

/// The words `values` serialize to, as an `enum`.
fn words<T: Serialize>(values: impl IntoIterator<Item = T>) -> Schema {
    let words: Vec<Value> = values
        .into_iter()
        .map(|v| serde_json::to_value(v).expect("a word serializes"))
        .collect();
    json_schema!({ "enum": words })
}

/// `schema` or `null`.
fn or_null(schema: &Schema) -> Schema {
    json_schema!({ "oneOf": [schema, { "type": "null" }] })
}

/// A time as the run state writes it: `2026-11-22T14:06:03.881Z`.
pub(crate) fn time(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "string",
        "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"
    })
}

pub(crate) fn time_or_null(g: &mut SchemaGenerator) -> Schema {
    or_null(&time(g))
}

/// A project's or a provider's name as the graph takes it.
pub(crate) fn name(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "pattern": "^[A-Za-z0-9_.-]{1,100}$" })
}

pub(crate) fn names(g: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": name(g) })
}

/// Text, or `null`.
pub(crate) fn text_or_null(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["string", "null"] })
}

/// The documents' version: 1 (fields may be added without changing it).
pub(crate) fn version(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "const": 1 })
}

/// The waves of a plan: wave n at index n-1, each of one project at least.
pub(crate) fn waves(g: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": { "type": "array", "minItems": 1, "items": name(g) } })
}

pub(crate) fn layers(g: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "array", "items": layer(g) })
}

pub(crate) fn edge_kind(_: &mut SchemaGenerator) -> Schema {
    words(<EdgeKind as strum::VariantArray>::VARIANTS.iter().map(|k| k.as_str()))
}

/// What the critical path's weight counts.
pub(crate) fn unit(_: &mut SchemaGenerator) -> Schema {
    words(["projects", "seconds"])
}

pub(crate) fn operation(_: &mut SchemaGenerator) -> Schema {
    words(Operation::ALL.iter().map(|o| o.as_str()))
}

/// The run's kind: an operation, or `drift`.
pub(crate) fn run_kind(_: &mut SchemaGenerator) -> Schema {
    words(
        Operation::ALL
            .iter()
            .map(|&o| RunKind::of(o, false))
            .chain([RunKind::Drift]),
    )
}

pub(crate) fn layer(_: &mut SchemaGenerator) -> Schema {
    words(Layer::ALL.iter().map(|l| l.as_str()))
}

/// How a project ended, as a run tells it (`Told::LISTED`).
pub(crate) fn told(_: &mut SchemaGenerator) -> Schema {
    words(Told::LISTED)
}

/// How a whole run ended.
pub(crate) fn result(_: &mut SchemaGenerator) -> Schema {
    words([Outcome::Succeeded, Outcome::Failed, Outcome::Interrupted])
}

/// The exit codes of a run that wrote its record.
pub(crate) fn exit_code(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "enum": [exit::SUCCESS, exit::FAILED, exit::CHANGES, exit::INTERRUPTED] })
}

/// Every state a project's last operation can be in, as the run state keeps it: running, cut
/// short, or how it ended.
fn recorded_states() -> impl Iterator<Item = Value> {
    [Recorded::Running, Recorded::CutShort]
        .into_iter()
        .chain(Outcome::ALL.iter().map(|&o| Recorded::Ended(o)))
        .map(|r| serde_json::to_value(r).expect("a state serializes"))
}

/// A project's last operation as the run state keeps it.
pub(crate) fn recorded(_: &mut SchemaGenerator) -> Schema {
    words(recorded_states())
}

/// A drift check of a project: what it found, or how it ended otherwise.
pub(crate) fn checked(_: &mut SchemaGenerator) -> Schema {
    words(
        <Found as strum::VariantArray>::VARIANTS
            .iter()
            .map(|f| serde_json::to_value(f).expect("a finding serializes"))
            .chain(recorded_states()),
    )
}

/// The schema of `T` as the runner writes it (every field it always writes is required).
pub(crate) fn schema_of<T: JsonSchema>() -> Schema {
    // A doc comment's lines are one sentence to a schema's reader.
    let unwrapped = RecursiveTransform(|s: &mut Schema| {
        if let Some(Value::String(d)) = s.get_mut("description") {
            *d = d.replace('\n', " ");
        }
    });
    SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(unwrapped)
        .into_generator()
        .into_root_schema_for::<T>()
}

/// A published document's schema: the schema of `T` ([`schema_of`]) under its address (from
/// its file name in `schemas/`), its title and what the document is, in the order a reader
/// meets them.
pub(crate) fn document<T: JsonSchema>(file: &str, title: &str, description: &str) -> Schema {
    let Value::Object(mut made) = schema_of::<T>().to_value() else {
        unreachable!("a type's schema is an object")
    };
    let mut doc = serde_json::Map::new();
    doc.insert(
        "$id".into(),
        format!("https://github.com/runner/runner/schemas/{file}").into(),
    );
    if let Some(dialect) = made.shift_remove("$schema") {
        doc.insert("$schema".into(), dialect);
    }
    doc.insert("title".into(), title.into());
    doc.insert("description".into(), description.into());
    made.shift_remove("title");
    made.shift_remove("description");
    doc.extend(made);
    Schema::try_from(Value::Object(doc)).expect("an object is a schema")
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_schema_file_is_what_its_type_makes() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let write = std::env::var_os("RUNNER_WRITE_SCHEMAS").is_some_and(|v| v == "1");
        let mut stale = Vec::new();
        for (file, schema) in [
            ("plan.schema.json", crate::render::plan_schema()),
            ("summary.schema.json", crate::report::summary::schema()),
            ("status.schema.json", crate::commands::status::schema()),
        ] {
            let made = serde_json::to_string_pretty(&schema).unwrap() + "\n";
            let path = dir.join(file);
            if std::fs::read_to_string(&path).ok().as_deref() != Some(made.as_str()) {
                if write {
                    std::fs::write(&path, &made).unwrap();
                } else {
                    stale.push(file);
                }
            }
        }
        assert!(
            stale.is_empty(),
            "schemas/{stale:?} differ from what the types make: run RUNNER_WRITE_SCHEMAS=1 cargo test --lib schemas, and read the diff"
        );
    }
}
