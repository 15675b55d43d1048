//! A YAML document as a tree whose every node and key knows its line and column, as the type
//! checker reports them (pulumi-yaml's diagnostics point at nodes). Read with serde-saphyr's
//! `Spanned`; scalars keep the type YAML 1.2 gives them (a quoted `"7"` is text, `7` a number,
//! `on` text).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use serde_saphyr::Spanned;

/// A node: its value, and where it starts (1-based line and column).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub line: usize,
    pub column: usize,
    pub value: Yaml,
}

/// A mapping's key (keys are read as text, as Pulumi YAML reads them).
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub line: usize,
    pub column: usize,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    Null,
    Bool(bool),
    Number(Number),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Key, Node)>),
}

/// The document of `text`, or the parser's message.
/// Why a text is not YAML, and where (1-based line; 1 when the parser names none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotYaml {
    pub line: usize,
    pub message: String,
}

pub fn parse(text: &str) -> Result<Node, NotYaml> {
    if text.trim().is_empty() {
        return Ok(Node {
            line: 1,
            column: 1,
            value: Yaml::Null,
        });
    }
    // YAML 1.2's booleans, as Pulumi YAML's parser reads them (`on`, `yes`, `n` are text).
    let options = serde_saphyr::options! { strict_booleans: true };
    let doc: Spanned<Yaml> = serde_saphyr::from_str_with_options(text, options).map_err(|e| NotYaml {
        line: e.location().map_or(1, |l| at(l.line()).max(1)),
        message: e.to_string(),
    })?;
    Ok(spanned(doc))
}

fn spanned(s: Spanned<Yaml>) -> Node {
    Node {
        line: at(s.referenced.line()),
        column: at(s.referenced.column()),
        value: s.value,
    }
}

/// A position as an index (saturating: no document has that many lines).
fn at(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl Node {
    /// The entries of a mapping (none for anything else).
    pub fn entries(&self) -> &[(Key, Node)] {
        match &self.value {
            Yaml::Map(m) => m,
            _ => &[],
        }
    }

    /// The value under `key` (exact name).
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries().iter().find(|(k, _)| k.name == key).map(|(_, v)| v)
    }

    /// The entry under `key`, compared case-insensitively (as Pulumi YAML reads record fields).
    pub fn get_ci(&self, key: &str) -> Option<&(Key, Node)> {
        self.entries().iter().find(|(k, _)| k.name.eq_ignore_ascii_case(key))
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_map(&self) -> bool {
        matches!(self.value, Yaml::Map(_))
    }

    /// The text of a scalar, as a key or a version is read (`7.48.0`, `7`, `true`).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Yaml::Str(s) => Some(s.clone()),
            Yaml::Number(n) => Some(n.to_string()),
            Yaml::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// The node as JSON (no lines).
    pub fn to_json(&self) -> Value {
        match &self.value {
            Yaml::Null => Value::Null,
            Yaml::Bool(b) => Value::Bool(*b),
            Yaml::Number(n) => Value::Number(n.clone()),
            Yaml::Str(s) => Value::String(s.clone()),
            Yaml::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Yaml::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.name.clone(), v.to_json())).collect()),
        }
    }
}

impl<'de> Deserialize<'de> for Yaml {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(YamlVisitor)
    }
}

struct YamlVisitor;

impl<'de> Visitor<'de> for YamlVisitor {
    type Value = Yaml;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_unit<E>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }

    fn visit_none<E>(self) -> Result<Yaml, E> {
        Ok(Yaml::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Yaml, D::Error> {
        Yaml::deserialize(d)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Yaml, E> {
        Ok(Yaml::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Yaml, E> {
        Ok(Yaml::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Yaml, E> {
        Ok(Yaml::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Yaml, E> {
        Ok(Number::from_f64(v).map_or(Yaml::Null, Yaml::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Yaml, E> {
        Ok(Yaml::Str(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Yaml, E> {
        Ok(Yaml::Str(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Yaml, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Yaml>>()? {
            items.push(spanned(item));
        }
        Ok(Yaml::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Yaml, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<Spanned<Yaml>>()? {
            let name = match &k.value {
                Yaml::Str(s) => s.clone(),
                Yaml::Number(n) => n.to_string(),
                Yaml::Bool(b) => b.to_string(),
                Yaml::Null => "null".into(),
                _ => return Err(de::Error::custom("a mapping key must be a scalar")),
            };
            let key = Key {
                line: at(k.referenced.line()),
                column: at(k.referenced.column()),
                name,
            };
            let v = map.next_value::<Spanned<Yaml>>()?;
            entries.push((key, spanned(v)));
        }
        Ok(Yaml::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_and_keys_know_their_lines() {
        let doc = parse(
            "name: x\nresources:\n  r:\n    type: t\n    properties:\n      a: \"7\"\n      b:\n        - 1\n      c: {d: true}\n",
        )
        .unwrap();
        let r = doc.get("resources").unwrap().get("r").unwrap();
        assert_eq!(r.line, 4, "a block mapping starts at its first key");
        let props = r.get("properties").unwrap();
        assert_eq!(props.line, 6);
        assert_eq!(props.get("a").unwrap().value, Yaml::Str("7".into()));
        assert_eq!(
            props.get("b").unwrap().line,
            8,
            "a block sequence starts at its first item"
        );
        let (key, _) = &props.entries()[1];
        assert_eq!((key.line, key.column, key.name.as_str()), (7, 7, "b"));
        assert_eq!(props.get("c").unwrap().get("d").unwrap().value, Yaml::Bool(true));
    }
}
