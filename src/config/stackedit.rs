//! The runner's edits of a stack file, made through a lossless YAML syntax tree (the `yaml-edit`
//! crate): comments, key order, quoting, indentation, flow or block style, line endings, `---`
//! and `...` markers and a byte-order mark stay as written; only the new entries are added.
//! Every edit is checked before it is used: the new text must read back (with `serde-saphyr`,
//! as every reader of the file here does) as the old mapping plus the new entries, with every
//! comment of the old text still there. An edit that fails the check is refused with the
//! reason, and nothing is written.

use std::fmt::Write as _;
use std::str::FromStr as _;

use serde_json::{Map, Value};
use yaml_edit::{YamlFile, YamlNode};

/// Why an edit was refused (the file is then left as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused(pub String);

/// `text` with `entries` added to (or replacing same-named keys of) its top-level `config:`
/// mapping, which is made when missing, empty or null. A text with nothing but whitespace
/// starts as `header` (comment lines).
pub(crate) fn add_config(text: &str, header: &str, entries: &[(String, Value)]) -> Result<String, Refused> {
    let mut expected = top_level(text)?;
    let mut config = match expected.get("config") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(Refused("its `config:` is not a mapping".into())),
    };
    for (k, v) in entries {
        config.insert(k.clone(), v.clone());
    }
    expected.insert("config".into(), Value::Object(config));

    let base = if text.trim().is_empty() { header } else { text };
    let file = tree(base)?;
    let doc = file.ensure_document();
    if let Some(config) = doc.as_mapping().and_then(|m| m.get_mapping("config")) {
        for (k, v) in entries {
            let (key, value) = entry(k, v)?;
            config.set(key, value);
        }
    } else {
        // Missing, `config:`, `config: null` or `~`: a block mapping of the new entries.
        let mut block = String::new();
        for (k, v) in entries {
            let _ = writeln!(block, "{}: {}", yaml_key(k), yaml_value(v));
        }
        let new = tree(&block)?
            .document()
            .and_then(|d| d.as_mapping())
            .ok_or_else(|| Refused("the new entries do not make a mapping".into()))?;
        if !doc.set("config", new) {
            return Err(Refused("its top level is not a mapping".into()));
        }
    }
    let edited = file.to_string();
    verify(text, &edited, &expected)?;
    Ok(edited)
}

/// `text` with a top-level `encryptionsalt: salt` put first, as Pulumi keeps it; `None` when
/// the file has a salt already.
pub(crate) fn add_salt(text: &str, salt: &str) -> Result<Option<String>, Refused> {
    let mut expected = top_level(text)?;
    if expected.contains_key("encryptionsalt") {
        return Ok(None);
    }
    let (key, value) = entry_of(&format!("encryptionsalt: {}\n", yaml_key(salt)))?;
    let file = tree(text)?;
    let doc = file.ensure_document();
    let done = match doc.as_mapping() {
        Some(m) => {
            m.insert_at_index(0, key, value);
            true
        }
        None => doc.set(key, value),
    };
    if !done {
        return Err(Refused("its top level is not a mapping".into()));
    }
    let mut first = Map::new();
    first.insert("encryptionsalt".into(), Value::from(salt));
    first.append(&mut expected);
    let edited = file.to_string();
    verify(text, &edited, &first)?;
    Ok(Some(edited))
}

/// The top-level mapping of `text` as every reader sees it (empty for a text without one).
pub(crate) fn top_level(text: &str) -> Result<Map<String, Value>, Refused> {
    match read(text)? {
        Value::Null => Ok(Map::new()),
        Value::Object(m) => Ok(m),
        _ => Err(Refused("its top level is not a mapping".into())),
    }
}

fn read(text: &str) -> Result<Value, Refused> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_saphyr::from_str(text).map_err(|e| {
        Refused(format!(
            "it is not valid YAML ({})",
            crate::diagnostic::yaml_message(&e)
        ))
    })
}

fn tree(text: &str) -> Result<YamlFile, Refused> {
    YamlFile::from_str(text).map_err(|e| Refused(format!("its YAML cannot be edited without loss ({e})")))
}

/// The key and value nodes of one new entry, written as [`yaml_key`] and [`yaml_value`] do.
fn entry(key: &str, value: &Value) -> Result<(YamlNode, YamlNode), Refused> {
    entry_of(&format!("{}: {}\n", yaml_key(key), yaml_value(value)))
}

/// The key and value nodes of a one-entry mapping's text.
fn entry_of(text: &str) -> Result<(YamlNode, YamlNode), Refused> {
    let entry = tree(text)?
        .document()
        .and_then(|d| d.as_mapping())
        .and_then(|m| m.entries().next());
    entry
        .and_then(|e| Some((e.key_node()?, e.value_node()?)))
        .ok_or_else(|| Refused(format!("`{}` cannot be written as YAML", text.trim_end())))
}

/// The check every edit passes before it is used.
fn verify(before: &str, after: &str, expected: &Map<String, Value>) -> Result<(), Refused> {
    let got = read(after).map_err(|Refused(why)| Refused(format!("the edited text would not read back: {why}")))?;
    if got != Value::Object(expected.clone()) {
        let got = got.as_object().cloned().unwrap_or_default();
        let mut changed: Vec<String> = expected
            .keys()
            .chain(got.keys())
            .filter(|k| *k != "config" && expected.get(*k) != got.get(*k))
            .map(|k| format!("`{k}`"))
            .collect();
        changed.dedup();
        return Err(Refused(if changed.is_empty() {
            "its `config:` would not read back as its settings plus the new ones (is it an alias of another mapping?)"
                .into()
        } else {
            format!(
                "the edit would also change {} (an anchor or alias shared with `config:`?)",
                changed.join(", ")
            )
        }));
    }
    let mut kept = comments(after)?;
    for c in comments(before)? {
        match kept.iter().position(|k| *k == c) {
            Some(at) => {
                kept.swap_remove(at);
            }
            None => return Err(Refused(format!("the edit would lose the comment `{c}`"))),
        }
    }
    Ok(())
}

fn comments(text: &str) -> Result<Vec<String>, Refused> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    Ok(tree(text)?
        .comments()
        .map(|c| c.text().trim_end().to_string())
        .collect())
}

/// A key (`aws:region`) or a Pulumi word (`v1:c2FsdA==:v1:…`, a salt) plain where it reads back
/// as the same string, else quoted.
pub(crate) fn yaml_key(s: &str) -> String {
    let plain = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && !s.ends_with(':')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | ':' | '+' | '=' | '@'));
    if plain && !is_special(s) {
        s.to_string()
    } else {
        yaml_string(s)
    }
}

/// A value as YAML on one line: plain where that reads back as the same string, quoted where
/// YAML would read a number, a boolean, null or structure into it.
pub(crate) fn yaml_value(v: &Value) -> String {
    match v {
        Value::String(s) => yaml_string(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(yaml_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", yaml_string(k), yaml_value(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// A string plain where safe, single-quoted where YAML would read something else into it,
/// double-quoted with escapes when it holds a line break or another control character.
pub(crate) fn yaml_string(s: &str) -> String {
    let plain_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-' | '@' | '+' | '='));
    let starts_ok = s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '/');
    if plain_chars && starts_ok && !is_special(s) {
        s.to_string()
    } else if s.chars().any(char::is_control) || s.contains('\u{feff}') {
        // JSON's string syntax is YAML's double-quoted scalar.
        Value::from(s).to_string()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// Words and numbers YAML (1.1 or 1.2) reads as something other than a string.
fn is_special(s: &str) -> bool {
    let special = matches!(
        s.to_ascii_lowercase().as_str(),
        "" | "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null" | "~"
    );
    let numeric = s.parse::<f64>().is_ok() || s.starts_with("0x") || s.starts_with("0o");
    special || numeric
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> Vec<(String, Value)> {
        vec![("aws:region".into(), Value::from("us-east-1"))]
    }

    #[test]
    fn files_the_text_edits_broke_keep_their_style_and_read_back() {
        for (before, after) in [
            (
                "config:\n    a:b: c\n",
                "config:\n    a:b: c\n    aws:region: us-east-1\n",
            ),
            ("config: {a:b: c}\n", "config: {a:b: c, aws:region: us-east-1}\n"),
            (
                "\"config\":\n  a:b: c\n",
                "\"config\":\n  a:b: c\n  aws:region: us-east-1\n",
            ),
            (
                "---\nconfig:\n  a:b: c\n...\n",
                "---\nconfig:\n  a:b: c\n  aws:region: us-east-1\n...\n",
            ),
            (
                "\u{feff}config:\n  a:b: c\n",
                "\u{feff}config:\n  a:b: c\n  aws:region: us-east-1\n",
            ),
            (
                "config:\r\n  a:b: c # why\r\n",
                "config:\r\n  a:b: c # why\r\n  aws:region: us-east-1\r\n",
            ),
            ("# only a note\n", "# only a note\nconfig:\n  aws:region: us-east-1\n"),
            ("a: 1\n...\n", "a: 1\nconfig:\n  aws:region: us-east-1\n...\n"),
        ] {
            assert_eq!(add_config(before, "# header\n", &one()).unwrap(), after, "{before:?}");
        }
    }

    #[test]
    fn a_file_that_cannot_take_the_entries_is_refused() {
        for text in ["- a\n- b\n", "config: [1, 2]\n", "config: 3\n", "a: [unclosed\n"] {
            assert!(add_config(text, "", &one()).is_err(), "{text:?}");
        }
    }

    #[test]
    fn an_edit_that_would_change_another_key_says_which() {
        let shared = add_config("config: &c\n  a:b: c\nother: *c\n", "", &one()).unwrap_err();
        assert!(shared.0.contains("would also change `other`"), "{}", shared.0);
        let alias = add_config("d: &d {a:b: c}\nconfig: *d\n", "", &one()).unwrap_err();
        assert!(alias.0.contains("alias of another mapping"), "{}", alias.0);
    }

    #[test]
    fn the_salt_goes_first_once() {
        assert_eq!(
            add_salt("# shared\nconfig:\n  a:b: c\n", "v1:abc=").unwrap().unwrap(),
            "# shared\nencryptionsalt: v1:abc=\nconfig:\n  a:b: c\n"
        );
        assert_eq!(
            add_salt("---\n\"config\": {a:b: c}\n", "v1:abc=").unwrap().unwrap(),
            "---\nencryptionsalt: v1:abc=\n\"config\": {a:b: c}\n"
        );
        assert_eq!(add_salt("'encryptionsalt': v1:x\n", "v1:abc=").unwrap(), None);
        assert_eq!(add_salt("", "v1:abc=").unwrap().unwrap(), "encryptionsalt: v1:abc=\n");
    }

    #[test]
    fn strings_with_line_breaks_are_double_quoted() {
        assert_eq!(yaml_string("a\nb"), "\"a\\nb\"");
        let out = add_config("", "", &[("x:y".into(), Value::from("a\n b\t"))]).unwrap();
        assert_eq!(top_level(&out).unwrap()["config"]["x:y"], "a\n b\t");
    }
}
