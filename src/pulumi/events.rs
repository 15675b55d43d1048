//! What the runner takes from a `pulumi` operation's engine event log (`--event-log`): the
//! resource changes of its summary, and which of the stack's outputs are secret. The log never
//! holds a secret value: the CLI writes events without showing secrets, each secret kept as
//! `{"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext":
//! "[secret]"}` (its signature and a blinded ciphertext), so one `stack output --show-secrets`
//! afterwards is enough to hold the values and know which to hide.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::exec::outputs::{REDACTED, holds_redacted};
use crate::exec::{Outputs, PropertyDiff, ResourceDiff, ResourceStep};

/// The signature key of a special value in Pulumi's serialized state, and a secret's signature
/// (`sdk/go/common/resource/sig`).
const SIG_KEY: &str = "4dabf18193072939515e22adb298388d";
const SIG_SECRET: &str = "1b47061264138c4ac30d75fd1eb44270";

/// What one operation's event log told.
#[derive(Debug, Default)]
pub(crate) struct EventLog {
    /// `summaryEvent.resourceChanges` (empty when the log has no summary).
    pub(crate) changes: BTreeMap<String, u64>,
    /// The root stack's outputs as the last `resOutputsEvent` of the `pulumi:pulumi:Stack`
    /// resource left them, each secret in them `[secret]` (as `stack output --json` shows
    /// them). `None` when the log has no such event (then the secrets must be learnt another way).
    pub(crate) outputs: Option<Map<String, Value>>,
    /// The messages of `diagnosticEvent`s of severity `error`, colour tags removed: the cause
    /// of a failure (Pulumi prints them on standard output, among the progress).
    pub(crate) errors: Vec<String>,
    /// What the program (its language host) wrote to its standard error, one message a line
    /// (`diagnosticEvent`s of severity `info#err`): where Pulumi YAML reports a program it
    /// refuses, with no `error` diagnostic beside it.
    pub(crate) program_errors: Vec<String>,
    /// The resources the operation (a preview) would change, and what differs in their inputs
    /// (`resourcePreEvent`s of an update, a replacement, a creation or a deletion).
    pub(crate) diffs: Vec<ResourceDiff>,
}

impl EventLog {
    /// Reads the log at `path`; a missing or unreadable log tells nothing.
    pub(crate) fn read(path: &Path) -> Self {
        std::fs::read_to_string(path).map_or_else(|_| EventLog::default(), |text| Self::parse(&text))
    }

    fn parse(text: &str) -> Self {
        let mut log = EventLog::default();
        for event in text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
            if let Some(changes) = event
                .get("summaryEvent")
                .and_then(|s| s.get("resourceChanges"))
                .and_then(|c| serde_json::from_value(c.clone()).ok())
            {
                log.changes = changes;
            }
            if let Some(d) = event.get("diagnosticEvent")
                && let Some(message) = d.get("message").and_then(Value::as_str)
            {
                // Colour tags out, and any control character the text still holds made visible:
                // a diagnostic is a cause, shown at the terminal and in CI logs.
                let message = crate::report::text::visible(&strip_colour_tags(message))
                    .trim_end()
                    .to_string();
                match d.get("severity").and_then(Value::as_str) {
                    Some("error") => {
                        let message = message.trim().to_string();
                        if !message.is_empty() && !log.errors.contains(&message) {
                            log.errors.push(message);
                        }
                    }
                    // Lines of the program's stderr, each kept (indentation shows structure).
                    Some("info#err") if !message.trim().is_empty() => log.program_errors.push(message),
                    _ => {}
                }
            }
            if let Some(diff) = event
                .get("resourcePreEvent")
                .and_then(|e| e.get("metadata"))
                .and_then(resource_diff)
            {
                log.diffs.push(diff);
            }
            let Some(meta) = event.get("resOutputsEvent").and_then(|e| e.get("metadata")) else {
                continue;
            };
            if meta.get("type").and_then(Value::as_str) != Some("pulumi:pulumi:Stack") {
                continue;
            }
            if let Some(outputs) = meta.pointer("/new/outputs").and_then(Value::as_object) {
                log.outputs = Some(outputs.iter().map(|(k, v)| (k.clone(), blinded(v))).collect());
            }
        }
        log
    }

    /// What the engine said: `stderr` and the errors of this log (where a resource's own
    /// diagnostics are), as one text for [`super::messages`].
    pub(crate) fn said(&self, stderr: &str) -> String {
        std::iter::once(stderr)
            .chain(self.cause().iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The cause of a failed operation as the engine reported it: its errors, else what the
    /// program wrote to its standard error (empty when the log told neither).
    pub(crate) fn cause(&self) -> &[String] {
        if self.errors.is_empty() {
            &self.program_errors
        } else {
            &self.errors
        }
    }

    /// The stack's outputs, whole, when the log holds them and none is secret: then nothing
    /// needs reading after the operation. `None` when it has none to tell, or a secret (its
    /// value blinded here) is among them.
    pub(crate) fn plain_outputs(&self) -> Option<Outputs> {
        let outputs = self.outputs.as_ref()?;
        if outputs.values().any(holds_redacted) {
            return None;
        }
        Some(Outputs {
            values: outputs.clone(),
            ..Outputs::default()
        })
    }

    /// The outputs read with `stack output --json --show-secrets`, each marked secret when the
    /// log says any part of it is; `None` when the log cannot tell (it has no stack outputs
    /// event) and there is something to tell. An output the log does not know counts as secret:
    /// nothing is shown that could be one.
    pub(crate) fn mark(&self, shown: Map<String, Value>) -> Option<Outputs> {
        if shown.is_empty() {
            return Some(Outputs::default());
        }
        let known = self.outputs.as_ref()?;
        Some(Outputs::from_pair(shown, known))
    }
}

/// At most this many inputs are listed for one resource (the rest are counted).
const MOST_PROPERTIES: usize = 20;
/// A value longer than this is cut (with `…`).
const LONGEST_VALUE: usize = 80;

/// A changing step's resource and the inputs that differ: leaf by leaf under each key the
/// engine lists as differing (`diffs`; every differing key when it lists none).
fn resource_diff(meta: &Value) -> Option<ResourceDiff> {
    let op = ResourceStep::of(meta.get("op")?.as_str()?)?;
    let urn = meta.get("urn")?.as_str()?;
    let ty = meta.get("type").and_then(Value::as_str).unwrap_or_default();
    let name = urn.rsplit("::").next().unwrap_or(urn);
    let mut properties = Vec::new();
    if matches!(op, ResourceStep::Update | ResourceStep::Replace) {
        let old = meta.pointer("/old/inputs").cloned().unwrap_or(Value::Null);
        let new = meta.pointer("/new/inputs").cloned().unwrap_or(Value::Null);
        let listed: Vec<&str> = meta
            .get("diffs")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if listed.is_empty() {
            leaves("", Some(&old), Some(&new), &mut properties);
        } else {
            for key in listed {
                leaves(key, old.get(key), new.get(key), &mut properties);
            }
        }
        if properties.len() > MOST_PROPERTIES {
            let more = properties.len() - MOST_PROPERTIES;
            properties.truncate(MOST_PROPERTIES);
            properties.push(PropertyDiff {
                path: format!("… {more} more"),
                deployed: None,
                declared: None,
            });
        }
    }
    Some(ResourceDiff {
        resource: format!("{ty}::{name}"),
        op,
        properties,
    })
}

/// The leaves under `path` where `old` and `new` differ: objects by key, lists of the same
/// length by index; anything else differing is one leaf.
fn leaves(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<PropertyDiff>) {
    if old == new {
        return;
    }
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) if !is_special(a) && !is_special(b) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                leaves(&join(k), a.get(k), b.get(k), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                leaves(&format!("{path}[{i}]"), Some(x), Some(y), out);
            }
        }
        _ => out.push(PropertyDiff {
            path: if path.is_empty() {
                "(inputs)".into()
            } else {
                path.to_string()
            },
            deployed: old.map(shown),
            declared: new.map(shown),
        }),
    }
}

/// A value with Pulumi's signature key: a secret, an asset, a resource reference — one leaf.
fn is_special(m: &Map<String, Value>) -> bool {
    m.contains_key(SIG_KEY)
}

/// A value as the table shows it: compact JSON, secrets `[secret]`, long ones cut.
fn shown(v: &Value) -> String {
    let v = blinded(v);
    if v.as_str() == Some(REDACTED) {
        return REDACTED.to_string();
    }
    let text = serde_json::to_string(&v).unwrap_or_default();
    if text.chars().count() <= LONGEST_VALUE {
        return text;
    }
    let cut: String = text.chars().take(LONGEST_VALUE - 1).collect();
    format!("{cut}…")
}

/// Pulumi's colour tags (`<{%reset%}>`, `<{%fg 1%}>`) removed.
fn strip_colour_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<{%") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find("%}>") else {
            rest = &rest[start..];
            break;
        };
        rest = &rest[start + end + 3..];
    }
    out.push_str(rest);
    out
}

/// A serialized property value with each secret in it `[secret]`.
fn blinded(v: &Value) -> Value {
    match v {
        Value::Object(m) if m.get(SIG_KEY).and_then(Value::as_str) == Some(SIG_SECRET) => {
            Value::String(REDACTED.into())
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), blinded(x))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(blinded).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LOG: &str = r#"{"sequence":0,"timestamp":1,"preludeEvent":{"config":{}}}
{"sequence":1,"timestamp":1,"resOutputsEvent":{"metadata":{"op":"create","urn":"urn:pulumi:dev::p::aws:s3/bucket:Bucket::b","type":"aws:s3/bucket:Bucket","new":{"outputs":{"arn":"x"}}}}}
{"sequence":2,"timestamp":1,"resOutputsEvent":{"metadata":{"op":"same","urn":"urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev","type":"pulumi:pulumi:Stack","new":{"outputs":{"url":"http://x","password":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","ciphertext":"[secret]"},"nested":{"user":"admin-user","token":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","ciphertext":"[secret]"}}}}}}}
{"sequence":3,"timestamp":1,"summaryEvent":{"maybeCorrupt":false,"durationSeconds":0,"resourceChanges":{"create":1,"same":1},"PolicyPacks":{}}}
{"sequence":4,"timestamp":1,"cancelEvent":{}}
"#;

    fn object(v: &Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn changes_and_secret_outputs_come_from_the_log() {
        let log = EventLog::parse(LOG);
        assert_eq!(log.changes, BTreeMap::from([("create".into(), 1), ("same".into(), 1)]));
        let shown = json!({"url": "http://x", "password": "hunter22", "nested": {"user": "admin-user", "token": "t0k3n"}, "later": 1});
        let o = log.mark(object(&shown)).unwrap();
        assert_eq!(
            o.secret.iter().collect::<Vec<_>>(),
            ["later", "nested", "password"],
            "secret in part, or unknown to the log: hidden"
        );
        assert_eq!(o.redacted()["url"], "http://x");
        assert!(!LOG.contains("hunter22"));
        // The log says where in `nested` the secret is: its user name is no secret to scrub.
        let mut texts = o.secret_texts();
        texts.sort();
        assert_eq!(texts, ["hunter22", "t0k3n"]);
    }

    #[test]
    fn the_errors_of_a_failure_come_from_the_log() {
        let log = EventLog::parse(concat!(
            r#"{"sequence":1,"timestamp":1,"diagnosticEvent":{"message":"<{%fg 1%}>creating failed: quota<{%reset%}>\n","color":"raw","severity":"error"}}"#,
            "\n",
            r#"{"sequence":2,"timestamp":1,"diagnosticEvent":{"message":"just so you know\n","color":"raw","severity":"warning"}}"#,
            "\n",
            r#"{"sequence":4,"#,
        ));
        assert_eq!(log.errors, ["creating failed: quota"]);
        assert_eq!(log.cause(), ["creating failed: quota"]);
    }

    #[test]
    fn a_program_refused_by_its_language_host_is_the_cause_when_the_engine_adds_no_error() {
        // Pulumi YAML v1.38.3 under pulumi v3.274.1: each line of its report an `info#err`.
        let log = EventLog::parse(concat!(
            r#"{"sequence":2,"timestamp":1,"diagnosticEvent":{"message":"Error: Property retention_days does not exist on 'pulumi:index:Stash'\n\n","color":"never","severity":"info#err"}}"#,
            "\n",
            r#"{"sequence":3,"timestamp":1,"diagnosticEvent":{"message":"  on Pulumi.yaml line 18:\n\n","color":"never","severity":"info#err"}}"#,
            "\n",
        ));
        assert!(log.errors.is_empty());
        assert_eq!(
            log.cause(),
            [
                "Error: Property retention_days does not exist on 'pulumi:index:Stash'",
                "  on Pulumi.yaml line 18:"
            ]
        );
    }

    /// The real CLI's (v3.274.1) preview of a `pulumi:index:Stash` whose input changed, with a
    /// secret beside it; and a creation, a deletion and unchanged steps (not listed).
    #[test]
    fn a_preview_lists_each_changing_resource_and_its_differing_inputs_leaf_by_leaf() {
        let log = EventLog::parse(concat!(
            r#"{"sequence":1,"resourcePreEvent":{"metadata":{"op":"same","urn":"urn:pulumi:t::logstore::pulumi:pulumi:Stack::logstore-t","type":"pulumi:pulumi:Stack","old":{"inputs":{}},"new":{"inputs":{}},"detailedDiff":null},"planning":true}}"#,
            "\n",
            r#"{"sequence":14,"resourcePreEvent":{"metadata":{"op":"update","urn":"urn:pulumi:t::logstore::pulumi:index:Stash::store","type":"pulumi:index:Stash","old":{"inputs":{"input":{"cluster":"t-cluster","retention":"7d","token":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","ciphertext":"[secret]"}},"other":1}},"new":{"inputs":{"input":{"cluster":"t-cluster","retention":"14d","token":{"4dabf18193072939515e22adb298388d":"1b47061264138c4ac30d75fd1eb44270","ciphertext":"[secret]"},"tags":["a"]},"other":2}},"diffs":["input"],"detailedDiff":null},"planning":true}}"#,
            "\n",
            r#"{"sequence":15,"resourcePreEvent":{"metadata":{"op":"create","urn":"urn:pulumi:t::logstore::aws:s3/bucket:Bucket::logs","type":"aws:s3/bucket:Bucket","new":{"inputs":{"bucket":"x"}}}}}"#,
            "\n",
            r#"{"sequence":16,"resourcePreEvent":{"metadata":{"op":"delete","urn":"urn:pulumi:t::logstore::aws:s3/bucket:Bucket::old","type":"aws:s3/bucket:Bucket","old":{"inputs":{}}}}}"#,
            "\n",
        ));
        let d = |path: &str, deployed: Option<&str>, declared: Option<&str>| PropertyDiff {
            path: path.into(),
            deployed: deployed.map(str::to_string),
            declared: declared.map(str::to_string),
        };
        assert_eq!(
            log.diffs,
            [
                ResourceDiff {
                    resource: "pulumi:index:Stash::store".into(),
                    op: ResourceStep::Update,
                    // Only under the keys the engine lists (`other` differs, unlisted); the
                    // unchanged secret is not a difference.
                    properties: vec![
                        d("input.retention", Some("\"7d\""), Some("\"14d\"")),
                        d("input.tags", None, Some("[\"a\"]")),
                    ],
                },
                ResourceDiff {
                    resource: "aws:s3/bucket:Bucket::logs".into(),
                    op: ResourceStep::Create,
                    properties: vec![],
                },
                ResourceDiff {
                    resource: "aws:s3/bucket:Bucket::old".into(),
                    op: ResourceStep::Delete,
                    properties: vec![],
                },
            ]
        );
        // A secret that changed shows as one, never its ciphertext.
        let secret = json!({SIG_KEY: SIG_SECRET, "ciphertext": "v1:abc"});
        let mut out = Vec::new();
        leaves("password", Some(&secret), Some(&json!("plain")), &mut out);
        assert_eq!(out, [d("password", Some("[secret]"), Some("\"plain\""))]);
    }

    #[test]
    fn outputs_all_plain_come_whole_from_the_log_and_a_secret_among_them_needs_a_read() {
        let with_secret = EventLog::parse(LOG);
        assert!(with_secret.plain_outputs().is_none());
        let plain = EventLog::parse(
            r#"{"resOutputsEvent":{"metadata":{"type":"pulumi:pulumi:Stack","new":{"outputs":{"url":"http://x","n":{"a":[1]}}}}}}"#,
        );
        let o = plain.plain_outputs().unwrap();
        assert_eq!(o.values["url"], "http://x");
        assert!(o.secret.is_empty());
        assert!(
            EventLog::parse("").plain_outputs().is_none(),
            "no outputs event: read them"
        );
    }

    #[test]
    fn without_stack_outputs_in_the_log_nothing_is_guessed() {
        let log = EventLog::parse("{\"summaryEvent\":{\"resourceChanges\":{\"same\":2}}}\nnot json\n");
        assert_eq!(log.changes["same"], 2);
        assert!(log.mark(object(&json!({"a": 1}))).is_none());
        assert_eq!(
            log.mark(Map::new()),
            Some(Outputs::default()),
            "no outputs: nothing is secret"
        );
        assert!(EventLog::read(Path::new("/nonexistent/log")).outputs.is_none());
    }
}
