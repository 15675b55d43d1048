//! `config/pulumi/Pulumi.<stack>.yaml`, the stack configuration every project shares: read as
//! data (a YAML error points at its line and column), checked against the provider's prompts,
//! and extended through a lossless syntax tree ([`super::stackedit`]) so comments, order,
//! style and Pulumi's own keys stay as they are.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::stackedit::{self, Refused};
use crate::diagnostic::{FileDiagnostic, Place, Problem, SourceFile};
use crate::provider::{Prompt, PromptType};

/// Top-level keys Pulumi itself writes into a stack file.
const PULUMI_KEYS: [&str; 4] = ["encryptionsalt", "secretsprovider", "encryptedkey", "environment"];

/// The shared stack configuration of `stack` in the workspace at `root`.
pub(crate) fn path(root: &Path, stack: &str) -> PathBuf {
    root.join("config/pulumi").join(file_name(stack))
}

/// A project's own stack file of `stack`, in its directory `project_dir`: where `pulumi` keeps
/// what is not shared (the secrets store's secrets, a salt of its own).
pub(crate) fn own(project_dir: &Path, stack: &str) -> PathBuf {
    project_dir.join(file_name(stack))
}

/// `Pulumi.<stack>.yaml`, as the CLI names a stack's file.
fn file_name(stack: &str) -> String {
    format!("Pulumi.{stack}.yaml")
}

/// The stack file as read.
#[derive(Debug, Clone, Default)]
pub(crate) struct StackFile {
    pub path: PathBuf,
    /// The path as shown to the user.
    pub shown: String,
    /// The text; empty when the file is missing or 0 bytes (MARA: "creating new configuration").
    pub text: String,
    /// The `config:` mapping.
    pub config: Map<String, Value>,
    /// The top-level keys (`config`, Pulumi's `encryptionsalt`, `secretsprovider`…).
    pub top: Map<String, Value>,
}

impl StackFile {
    /// Reads the file. Missing or whitespace-only is an empty configuration; YAML that does not
    /// parse, or a top level without a `config:` mapping, is an error pointing into the file.
    pub(crate) fn load(path: &Path, shown: &str) -> Result<Self, Box<FileDiagnostic>> {
        let text = match crate::fs::read_text(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(Box::new(FileDiagnostic::whole_file(
                    shown,
                    format!("cannot read the stack configuration: {e}"),
                    Some("make it a readable UTF-8 YAML file".into()),
                )));
            }
        };
        Self::parse(path, shown, text)
    }

    /// [`StackFile::load`] of a text already read.
    pub(crate) fn parse(path: &Path, shown: &str, text: String) -> Result<Self, Box<FileDiagnostic>> {
        let mut file = StackFile {
            path: path.to_path_buf(),
            shown: shown.to_string(),
            text,
            config: Map::new(),
            top: Map::new(),
        };
        if file.is_blank() {
            return Ok(file);
        }
        let source = SourceFile::new(shown, file.text.clone());
        let doc: Value = serde_saphyr::from_str(&file.text).map_err(|e| {
            let at = e
                .location()
                .map_or(0, |l| offset_of(&source.text, l.line(), l.column()));
            let message = crate::diagnostic::yaml_message(&e);
            Box::new(FileDiagnostic::new(
                &source,
                at..at + 1,
                format!("the stack configuration is not valid YAML: {message}"),
                "here",
                Some("fix the YAML at this line and column (Pulumi stack files are YAML)".into()),
            ))
        })?;
        if let Value::Object(top) = &doc {
            file.top.clone_from(top);
        }
        match doc.get("config") {
            Some(Value::Object(m)) => {
                // A key is printed in `status`, in the line before a run and in CI logs: one
                // holding a control character (a line break, an escape) would act there.
                if let Some(key) = m.keys().find(|k| k.chars().any(char::is_control)) {
                    let shown_key = crate::report::text::visible(key).into_owned();
                    return Err(Box::new(FileDiagnostic::whole_file(
                        shown,
                        format!("the stack configuration has a key with a control character: `{shown_key}`"),
                        Some("rename it to `namespace:key` of printable characters, as Pulumi names keys".into()),
                    )));
                }
                file.config.clone_from(m);
            }
            Some(Value::Null) => {}
            Some(_) => {
                let at = key_offset(&file.text, "config").unwrap_or(0);
                return Err(Box::new(FileDiagnostic::new(
                    &source,
                    at..at + "config".len(),
                    "`config:` is not a mapping",
                    "not a mapping",
                    Some("write one `ns:key: value` line per setting under `config:`".into()),
                )));
            }
            // Only Pulumi's own keys (the passphrase salt `stack select --create` writes): no
            // settings yet.
            None if doc.is_null()
                || doc
                    .as_object()
                    .is_some_and(|m| m.keys().all(|k| PULUMI_KEYS.contains(&k.as_str()))) => {}
            None => {
                return Err(Box::new(FileDiagnostic::whole_file(
                    shown,
                    "the stack configuration has no `config:` mapping",
                    Some("put the settings under a top-level `config:` key, as Pulumi stack files do".into()),
                )));
            }
        }
        Ok(file)
    }

    /// No settings yet (missing, 0 bytes, comments, or only Pulumi's salt): every question of
    /// the provider is asked.
    pub(crate) fn is_new(&self) -> bool {
        self.config.is_empty() && !self.top.contains_key("config")
    }

    /// Nothing but whitespace and comments.
    fn is_blank(&self) -> bool {
        // YAML's line breaks: a lone CR is one too.
        self.text
            .split(['\n', '\r'])
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    }

    /// Pulumi keeps the passphrase salt (or a secrets provider) at the top of the file.
    pub(crate) fn has_secrets_provider(&self) -> bool {
        ["encryptionsalt", "secretsprovider", "encryptedkey"]
            .iter()
            .any(|k| self.top.contains_key(*k))
    }

    /// The `secretsprovider:` Pulumi keeps for a stack whose secrets a KMS or a vault
    /// protects (a passphrase stack has none, or `passphrase`).
    pub(crate) fn secrets_provider(&self) -> Option<&str> {
        self.top.get("secretsprovider").and_then(Value::as_str)
    }

    /// The file and line of a key under `config:`, or the file alone.
    pub(crate) fn place(&self, key: &str) -> Place {
        Place {
            file: self.shown.clone(),
            line: key_offset(&self.text, key)
                .and_then(|at| u32::try_from(self.text[..at].matches('\n').count() + 1).ok()),
        }
    }

    /// Keys Pulumi cannot read (`config.ParseKey`: one `:`, or the old `ns:config:name`), for
    /// which it refuses the whole file, in every project.
    pub(crate) fn key_problems(&self) -> Vec<Problem> {
        self.config
            .keys()
            .filter(|k| match k.split(':').collect::<Vec<_>>().as_slice() {
                [_] | [_, _] => false,
                [ns, "config", name] => ns.is_empty() || name.is_empty(),
                _ => true,
            })
            .map(|k| {
                Problem::at(
                    self.place(k),
                    format!(
                        "`{k}` is not a configuration key Pulumi reads (namespace:key, with one `:`): every `pulumi` command of every project would refuse the file"
                    ),
                    format!("rename it to namespace:key in {}", self.shown),
                )
            })
            .collect()
    }

    /// Plain values that are URLs with a credential in them (`https://robot:pw@…`, `?token=…`): the
    /// stack file's values go into every export and every log, so none may carry one.
    pub(crate) fn credential_problems(&self) -> Vec<Problem> {
        self.config
            .iter()
            .filter_map(|(k, v)| Some((k, v, crate::charts::fetch::credential_in(v.as_str()?)?)))
            .map(|(k, v, credential)| {
                Problem::at(
                    self.place(k),
                    format!(
                        "`{k}` is a URL with {credential} in it ({}): the stack file's values are \
                         written into every export and shown in logs",
                        crate::charts::fetch::hide_credentials(v.as_str().unwrap_or_default())
                    ),
                    format!(
                        "remove them from the URL in {}: serve it to the cluster without them (an internal mirror, \
                         a proxy with anonymous read), or give them to the tool that reads it (Helm's repository \
                         credentials), never in the URL",
                        self.shown
                    ),
                )
            })
            .collect()
    }

    /// A value that does not have the prompt's type: what is wrong, naming the key.
    pub(crate) fn type_problem(&self, prompt: &Prompt) -> Option<Problem> {
        let value = self.config.get(&prompt.key)?;
        // Encrypted: its type cannot be told, and `pulumi` checks it.
        if encrypted(value) {
            return None;
        }
        let ok = match prompt.kind {
            PromptType::Int => value.is_i64() || value.as_str().is_some_and(|s| s.parse::<i64>().is_ok()),
            PromptType::Bool => value.is_boolean() || value.as_str().is_some_and(|s| parse_bool(s).is_some()),
            PromptType::List => value.is_array(),
            PromptType::String => value.is_string() || value.is_number() || value.is_boolean(),
            PromptType::Path | PromptType::Context => value.is_string(),
            // A user and password in it are said by `credential_problems`, the value unshown.
            PromptType::Url => value
                .as_str()
                .is_some_and(|s| prompt.kind.text_problem(s).is_none() || crate::charts::fetch::has_credentials(s)),
            PromptType::Cidr | PromptType::Duration => {
                value.as_str().is_some_and(|s| prompt.kind.text_problem(s).is_none())
            }
        };
        (!ok).then(|| {
            Problem::at(
                self.place(&prompt.key),
                format!(
                    "`{}` is {}, not {}",
                    prompt.key,
                    describe(value),
                    prompt.kind.file_shape()
                ),
                format!("correct the value in {}", self.shown),
            )
        })
    }

    /// The text with `entries` added under `config:` (a new file starts with the header),
    /// edited through a lossless syntax tree and checked to read back as the file plus the
    /// entries; a file that cannot be edited so is refused, naming the lines to add by hand.
    pub(crate) fn with_entries(&self, header: &str, entries: &[(String, Value)]) -> Result<String, Problem> {
        stackedit::add_config(&self.text, header, entries).map_err(|Refused(why)| {
            let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            let lines: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("`{}: {}`", stackedit::yaml_key(k), stackedit::yaml_value(v)))
                .collect();
            Problem::at(
                self.place("config"),
                format!(
                    "cannot add {} safely: {why}; the file was left unchanged",
                    keys.join(", ")
                ),
                format!(
                    "add {} under `config:` in {} by hand (one line each, indented as its other keys), then run again",
                    lines.join(", "),
                    self.shown
                ),
            )
        })
    }
}

/// `true` for yes/y/true/t/1 (MARA's set), `false` for no/n/false/f/0, case-insensitive.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "yes" | "y" | "true" | "t" | "1" => Some(true),
        "no" | "n" | "false" | "f" | "0" => Some(false),
        _ => None,
    }
}

pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "empty".into(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Number(n) => format!("`{n}`"),
        Value::String(s) => format!("`{s}`"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a mapping".into(),
    }
}

/// Byte offset of a 1-based line and column.
fn offset_of(text: &str, line: u64, column: u64) -> usize {
    let mut offset = 0;
    for (n, l) in text.split_inclusive('\n').enumerate() {
        if n as u64 + 1 == line {
            let col = usize::try_from(column.saturating_sub(1)).unwrap_or(0);
            return offset + l.char_indices().nth(col).map_or(l.trim_end().len(), |(i, _)| i);
        }
        offset += l.len();
    }
    text.len().saturating_sub(1)
}

/// Where `key:` starts at the beginning of a line (any indentation).
fn key_offset(text: &str, key: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let lead = line.len() - line.trim_start().len();
        let rest = &line[lead..];
        let quoted = [format!("{key}:"), format!("\"{key}\":"), format!("'{key}':")];
        if quoted.iter().any(|q| rest.starts_with(q.as_str())) {
            return Some(offset + lead);
        }
        offset += line.len();
    }
    None
}

/// A value `pulumi config set --secret` wrote (`secure: v1:…`), which only `pulumi` can open.
pub(crate) fn encrypted(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|m| m.len() == 1 && m.contains_key("secure"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> StackFile {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("Pulumi.dev.yaml");
        std::fs::write(&p, text).unwrap();
        StackFile::load(&p, "Pulumi.dev.yaml").unwrap()
    }

    fn entries() -> Vec<(String, Value)> {
        vec![
            ("aws:region".into(), Value::from("us-east-1")),
            ("eks:k8s_version".into(), Value::from("1.31")),
            ("vpc:azs".into(), serde_json::json!(["us-east-1a", "us-east-1b"])),
            ("eks:min_size".into(), Value::from(3)),
        ]
    }

    #[test]
    fn a_new_file_gets_the_header_and_reads_back_with_the_same_values() {
        let f = file("");
        assert!(f.is_new());
        let text = f.with_entries("# header\n", &entries()).unwrap();
        assert_eq!(
            text,
            "# header\nconfig:\n  aws:region: us-east-1\n  eks:k8s_version: '1.31'\n  vpc:azs: [us-east-1a, us-east-1b]\n  eks:min_size: 3\n"
        );
        let back = file(&text);
        for (k, v) in entries() {
            assert_eq!(back.config[&k], v, "{k}");
        }
    }

    #[test]
    fn entries_go_at_the_end_of_the_config_block_keeping_everything_else() {
        let text = "encryptionsalt: v1:abc\nconfig:\n  # the cluster\n  kubernetes:infra_type: AWS\n\n# trailing note\nenvironment:\n  - x\n";
        let f = file(text);
        assert!(f.has_secrets_provider());
        let out = f.with_entries("", &entries()[..1]).unwrap();
        assert_eq!(
            out,
            "encryptionsalt: v1:abc\nconfig:\n  # the cluster\n  kubernetes:infra_type: AWS\n  aws:region: us-east-1\n\n# trailing note\nenvironment:\n  - x\n"
        );
        // An empty flow mapping keeps its flow style.
        let empty = file("config: {}\n").with_entries("", &entries()[..1]).unwrap();
        assert_eq!(empty, "config: {aws:region: us-east-1}\n");
        // A file without a final line break keeps it that way.
        let no_newline = file("config:\n  a:b: c").with_entries("", &entries()[..1]).unwrap();
        assert_eq!(no_newline, "config:\n  a:b: c\n  aws:region: us-east-1");
    }

    #[test]
    fn a_file_with_only_pulumis_salt_is_new_and_keeps_the_salt() {
        let f = file("encryptionsalt: v1:abc\n");
        assert!(f.is_new() && f.has_secrets_provider());
        assert_eq!(
            f.with_entries("# header\n", &entries()[..1]).unwrap(),
            "encryptionsalt: v1:abc\nconfig:\n  aws:region: us-east-1\n"
        );
    }

    #[test]
    fn strings_that_yaml_would_read_as_something_else_are_quoted() {
        for (s, want) in [
            ("yes", "'yes'"),
            ("1.31", "'1.31'"),
            ("3", "'3'"),
            ("~/.kube/config", "'~/.kube/config'"),
            ("it's: x", "'it''s: x'"),
            ("", "''"),
            ("s-4vcpu-8gb", "s-4vcpu-8gb"),
            ("admin@example.com", "admin@example.com"),
        ] {
            assert_eq!(stackedit::yaml_string(s), want, "{s}");
        }
    }

    #[test]
    fn a_yaml_error_points_at_its_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("Pulumi.dev.yaml");
        std::fs::write(&p, "config:\n  aws:region: [unclosed\n").unwrap();
        let e = StackFile::load(&p, "Pulumi.dev.yaml").unwrap_err();
        assert!(e.location.starts_with("Pulumi.dev.yaml:"), "{}", e.location);
        assert!(
            e.location.contains(":2:") || e.location.contains(":3:"),
            "{}",
            e.location
        );
        // A key written twice: said as such, with no advice meant for the YAML library's users.
        std::fs::write(&p, "config:\n  logstore:retention: 7d\n  logstore:retention: 30d\n").unwrap();
        let e = StackFile::load(&p, "Pulumi.dev.yaml").unwrap_err();
        assert!(
            e.message
                .contains("the key `logstore:retention` appears twice in one mapping (keep one)"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("DuplicateKeyPolicy"), "{}", e.message);
    }

    /// Found by fuzzing: a YAML error in a file ending in a byte-order mark panicked.
    #[test]
    fn a_yaml_error_near_a_multibyte_character_is_reported() {
        let text = "\u{feff}---\r\n# c e:f: [0, 2]\r\n...\ri\u{feff}";
        let e = StackFile::parse(Path::new("Pulumi.dev.yaml"), "Pulumi.dev.yaml", text.into()).unwrap_err();
        assert!(e.message.contains("not valid YAML"), "{}", e.message);
    }

    /// Found by fuzzing: with old Mac line breaks (a lone CR), the edited file read back as
    /// one comment line, so as blank.
    #[test]
    fn a_file_with_lone_cr_line_breaks_reads_back_after_an_edit() {
        let f = file("\r\r\n\n#");
        let text = f.with_entries("", &entries()[..1]).unwrap();
        assert_eq!(file(&text).config["aws:region"], "us-east-1", "{text:?}");
        assert_eq!(file("# a\rconfig:\r  a:b: c\r").config["a:b"], "c");
    }

    #[test]
    fn a_key_with_a_control_character_is_refused_shown_not_obeyed() {
        let text = "config:\n  \"logstore:x\\e]0;KEYTITLE\\a\\e[2J\": 1\n";
        let e = StackFile::parse(Path::new("Pulumi.dev.yaml"), "Pulumi.dev.yaml", text.into()).unwrap_err();
        let said = format!("{e:?}");
        assert!(
            said.contains("a key with a control character: `logstore:x^[]0;KEYTITLE^G^[[2J`"),
            "{said}"
        );
        assert!(!said.contains('\u{1b}'), "{said}");
    }

    #[test]
    fn wrong_types_name_the_key_and_its_line() {
        let f = file("config:\n  eks:min_size: three\n  linode:k8s_ha: yes\n");
        let prompt = Prompt::plain;
        let wrong = f.type_problem(&prompt("eks:min_size", PromptType::Int)).unwrap();
        assert_eq!(
            wrong.what,
            "Pulumi.dev.yaml:2: `eks:min_size` is `three`, not a whole number"
        );
        assert_eq!(wrong.at.map(|at| at.to_string()).as_deref(), Some("Pulumi.dev.yaml:2"));
        assert_eq!(f.type_problem(&prompt("linode:k8s_ha", PromptType::Bool)), None);
        // A number as text, as Go's strconv.Atoi reads it: a sign, digits, nothing around.
        let f = file("config:\n  eks:min_size: ' 3'\n  eks:max_size: '+12'\n");
        assert!(f.type_problem(&prompt("eks:min_size", PromptType::Int)).is_some());
        assert_eq!(f.type_problem(&prompt("eks:max_size", PromptType::Int)), None);
    }
}
