//! `Pulumi.<stack>.yaml` (or the `--config-file`): read as data, written by editing its text so
//! comments and order survive, as the real CLI's round-tripping writer does.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::fail::{Failure, fail};

pub struct StackConfig {
    pub path: PathBuf,
    pub text: String,
    pub salt: Option<String>,
    /// Keys as written (`ns:key`) to their raw YAML values (`{secure: …}` for secrets).
    pub values: Map<String, Value>,
}

impl StackConfig {
    /// A missing file reads as an empty configuration.
    pub fn load(path: &Path) -> Result<Self, Failure> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(fail(format!("could not read {}: {e}", path.display()))),
        };
        let doc: Value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_saphyr::from_str(&text).map_err(|e| fail(format!("could not parse {}: {e}", path.display())))?
        };
        let salt = doc["encryptionsalt"].as_str().map(str::to_string);
        let values = match &doc["config"] {
            Value::Object(m) => m.clone(),
            Value::Null => Map::new(),
            _ => return Err(fail(format!("{}: `config` must be a mapping", path.display()))),
        };
        // `config.Map.UnmarshalYAML` reads every key with `ParseKey` (a bare key has taken the
        // project's namespace before).
        for key in values.keys().filter(|k| k.contains(':')) {
            parse_key(key).map_err(|f| fail(format!("could not unmarshal map: {}", f.message)))?;
        }
        Ok(StackConfig {
            path: path.to_path_buf(),
            text,
            salt,
            values,
        })
    }

    /// Bare keys take the project's namespace, as the CLI reads a stack file
    /// (`stackConfigNamespacedWithProject`, `sdk/go/common/workspace/loaders.go`).
    #[must_use]
    pub fn namespaced(mut self, project: &str) -> Self {
        self.values = std::mem::take(&mut self.values)
            .into_iter()
            .map(|(k, v)| {
                if k.contains(':') {
                    (k, v)
                } else {
                    (format!("{project}:{k}"), v)
                }
            })
            .collect();
        self
    }

    /// Written in place, as `workspace.save` does (`os.WriteFile`: truncated, then written), so a
    /// reader at that moment sees a short or empty file: nothing should read it meanwhile.
    pub fn save(&self) -> Result<(), Failure> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| fail(format!("could not save {}: {e}", self.path.display())))?;
        }
        std::fs::write(&self.path, self.text.as_bytes())
            .map_err(|e| fail(format!("could not save {}: {e}", self.path.display())))
    }

    /// Sets `encryptionsalt`: in place when present; a new key goes after the others, as the
    /// real CLI's comment-keeping edit adds keys (`yamlutil.Edit`, pulumi/pulumi#14860), or
    /// first in a file that has none (`encryptionsalt` precedes `config` in `ProjectStack`).
    pub fn set_salt(&mut self, salt: &str) {
        let line = format!("encryptionsalt: {salt}");
        let mut lines: Vec<String> = self.text.lines().map(str::to_string).collect();
        let top_level_key = |l: &String| !l.is_empty() && !l.starts_with([' ', '\t', '#', '-']);
        match lines.iter().position(|l| l.starts_with("encryptionsalt:")) {
            Some(i) => lines[i] = line,
            None if lines.iter().any(top_level_key) => lines.push(line),
            None => lines.insert(0, line),
        }
        self.text = lines.join("\n") + "\n";
        self.salt = Some(salt.to_string());
    }

    /// Sets `key` to a plain string or to `{secure: ciphertext}`, in place when present,
    /// else at the end of the `config:` block.
    pub fn set(&mut self, key: &str, value: &str, secure: bool) {
        let rendered = if secure {
            format!("  {}:\n    secure: {value}", scalar(key))
        } else {
            format!("  {}: {}", scalar(key), scalar(value))
        };
        let v = if secure {
            serde_json::json!({ "secure": value })
        } else {
            Value::String(value.to_string())
        };
        self.replace_entry(key, &rendered, v);
    }

    /// Sets `key` to a structured value (written in flow style, which YAML reads as JSON).
    pub fn set_structured(&mut self, key: &str, value: &Value) {
        let rendered = format!("  {}: {}", scalar(key), serde_json::to_string(value).expect("JSON"));
        self.replace_entry(key, &rendered, value.clone());
    }

    fn replace_entry(&mut self, key: &str, rendered: &str, v: Value) {
        let mut lines: Vec<String> = self.text.lines().map(str::to_string).collect();
        let found = lines
            .iter()
            .position(|l| l.trim_end() == "config:" || l.starts_with("config: {}"));
        let start = if let Some(i) = found {
            lines[i] = "config:".into();
            i
        } else {
            lines.push("config:".into());
            lines.len() - 1
        };
        // The block runs while lines are indented (or blank).
        let mut end = start + 1;
        while end < lines.len() && (lines[end].starts_with(' ') || lines[end].trim().is_empty()) {
            end += 1;
        }
        while end > start + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        let mut found = None;
        for i in start + 1..end {
            let l = &lines[i];
            let indent = l.len() - l.trim_start().len();
            if indent == 2 && entry_key(l.trim_start()).is_some_and(|k| k == key) {
                found = Some(i);
                break;
            }
        }
        match found {
            Some(i) => {
                let mut j = i + 1;
                while j < end && lines[j].len() - lines[j].trim_start().len() > 2 {
                    j += 1;
                }
                lines.splice(i..j, rendered.lines().map(str::to_string));
            }
            None => {
                lines.splice(end..end, rendered.lines().map(str::to_string));
            }
        }
        self.text = lines.join("\n") + "\n";
        self.values.insert(key.to_string(), v);
    }
}

/// The key of a `key: value` line (quoted or not).
fn entry_key(line: &str) -> Option<String> {
    if let Some(rest) = line.strip_prefix('"') {
        let end = rest.find("\":")?;
        return Some(rest[..end].to_string());
    }
    if let Some(rest) = line.strip_prefix('\'') {
        let end = rest.find("':")?;
        return Some(rest[..end].to_string());
    }
    let colon = line.find(": ").or_else(|| line.strip_suffix(':').map(str::len))?;
    Some(line[..colon].to_string())
}

/// A YAML scalar for a string, quoted whenever plain style would change its meaning.
pub fn scalar(s: &str) -> String {
    let plain_ok = !s.is_empty()
        && !s.starts_with(|c: char| c.is_whitespace() || "!&*-?[]{}|>'\"%@`#,".contains(c))
        && !s.ends_with(char::is_whitespace)
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains('\n')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
        )
        && s.parse::<f64>().is_err()
        && !s.ends_with(':');
    if plain_ok {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string serializes")
    }
}

/// The string form Pulumi's config map gives a YAML value: scalars as text, structures as JSON.
/// `config.ParseKey` (`sdk/go/common/resource/config/key.go`): a key with one `:`, or the old
/// `ns:config:name` form, which is `ns:name`.
pub fn parse_key(key: &str) -> Result<String, Failure> {
    match key.split(':').collect::<Vec<_>>().as_slice() {
        [_, _] => Ok(key.to_string()),
        [ns, "config", name] if !ns.is_empty() && !name.is_empty() => Ok(format!("{ns}:{name}")),
        _ => Err(fail(format!(
            "could not parse {key} as a configuration key (configuration keys should be of the form `<namespace>:<name>`)"
        ))),
    }
}

pub fn as_config_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(_) | Value::Number(_) => v.to_string(),
        _ => serde_json::to_string(v).expect("JSON"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> StackConfig {
        StackConfig {
            path: PathBuf::from("x"),
            text: text.into(),
            salt: None,
            values: Map::new(),
        }
    }

    #[test]
    fn set_keeps_comments_and_replaces_in_place() {
        let mut c =
            cfg("# shared\nconfig:\n  aws:region: us-east-1 # here\n  vpc:azs:\n    - a\n    - b\n  eks:min_size: 3\n");
        c.set("vpc:azs", "x", false);
        c.set("new:key", "on", false);
        c.set("db:pw", "v1:abc", true);
        assert_eq!(
            c.text,
            "# shared\nconfig:\n  aws:region: us-east-1 # here\n  vpc:azs: x\n  eks:min_size: 3\n  new:key: \"on\"\n  db:pw:\n    secure: v1:abc\n"
        );
        // A new key goes last, as the real CLI's edit adds it; an existing one stays where it is.
        c.set_salt("v1:s");
        assert!(
            c.text.starts_with("# shared\nconfig:\n") && c.text.ends_with("    secure: v1:abc\nencryptionsalt: v1:s\n")
        );
        c.set_salt("v1:t");
        assert_eq!(c.text.matches("encryptionsalt").count(), 1);
        assert!(c.text.ends_with("\nencryptionsalt: v1:t\n"));
        let mut empty = cfg("# nothing yet\n");
        empty.set_salt("v1:s");
        assert_eq!(empty.text, "encryptionsalt: v1:s\n# nothing yet\n");
    }

    #[test]
    fn set_creates_the_config_block() {
        let mut c = cfg("");
        c.set("a:b", "1", false);
        assert_eq!(c.text, "config:\n  a:b: \"1\"\n");
        let mut c = cfg("config: {}\n");
        c.set("a:b", "c", false);
        assert_eq!(c.text, "config:\n  a:b: c\n");
    }

    #[test]
    fn a_key_pulumi_cannot_parse_fails_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("standin-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("Pulumi.dev.yaml");
        std::fs::write(&file, "config:\n  aws:region: x\n  aws:config:profile: y\n  bare: z\n").unwrap();
        assert!(StackConfig::load(&file).is_ok());
        std::fs::write(&file, "config:\n  aws:region: x\n  eks:node:size: large\n").unwrap();
        let err = StackConfig::load(&file).err().unwrap().message;
        assert_eq!(
            err,
            "could not unmarshal map: could not parse eks:node:size as a configuration key (configuration keys should be of the form `<namespace>:<name>`)"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bare_keys_take_the_projects_namespace_when_read() {
        let mut c = cfg("");
        c.values.insert("size".into(), Value::from("3"));
        c.values.insert("aws:region".into(), Value::from("x"));
        let c = c.namespaced("vpc");
        let mut keys: Vec<&String> = c.values.keys().collect();
        keys.sort();
        assert_eq!(keys, ["aws:region", "vpc:size"]);
    }
}
