//! YAML out of JSON values, written so that every reader takes it the same way: YAML 1.1 (the
//! Kubernetes and GitHub readers) and YAML 1.2 alike. A string is left plain only when it is
//! made of safe characters and cannot be read as anything else (`on`, `yes`, `y`, `null`, a
//! number, a date, a sexagesimal); everything else is double-quoted (JSON escapes, which YAML
//! reads the same) or, when it spans lines, a literal block. Keys follow the same rule, so the
//! GitHub trigger key comes out as `"on":`. Maps keep their order (the callers sort).

use std::fmt::Write as _;

use serde_json::Value;

/// The words YAML 1.1 reads as booleans or null, in any case.
const RESERVED: [&str; 12] = [
    "y", "yes", "n", "no", "true", "false", "on", "off", "null", "~", "<<", "=",
];

/// `header` as comment lines (for YAML and shell alike): a line break inside an entry starts
/// another comment line, so no value in a header can end the comment and become content.
pub(crate) fn comments(header: &[String]) -> String {
    let mut out = String::new();
    for entry in header {
        for line in entry.split(['\n', '\r']) {
            if line.is_empty() {
                out.push_str("#\n");
            } else {
                let _ = writeln!(out, "# {line}");
            }
        }
    }
    out
}

/// One YAML document of `value`, with `header` comment lines first.
pub(crate) fn document(header: &[String], value: &Value) -> String {
    let mut out = comments(header);
    block(&mut out, value, 0);
    out
}

/// Several documents in one stream, `---` between them.
pub(crate) fn documents(header: &[String], values: &[Value]) -> String {
    let mut out = document(header, &Value::Null);
    out.truncate(out.len() - "null\n".len());
    for (n, v) in values.iter().enumerate() {
        if n > 0 {
            out.push_str("---\n");
        }
        block(&mut out, v, 0);
    }
    out
}

/// A string as a YAML scalar on one line (plain when safe, else double-quoted).
pub(crate) fn scalar(s: &str) -> String {
    if plain(s) {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string serializes")
    }
}

fn plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '/')
        && s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '.' | '/' | ':' | '=' | '+' | '@' | '(' | ')' | '-'))
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(s))
        // `.inf`, `.nan` start with a dot; a word followed by a digit-only tail is fine.
        && !s.eq_ignore_ascii_case("nan")
}

/// Can be written as a literal block (`|`): several lines, printable, no leading space on the
/// first line (it would need an indentation indicator), at most one final newline.
fn literal(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\n'])
        && !s.ends_with("\n\n")
        && s.chars().all(|c| c == '\n' || c == '\t' || !c.is_control())
        && s.lines().all(|l| !l.ends_with([' ', '\t']))
}

/// A value that fits after `key:` or `- ` on the same line.
fn inline(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// Writes the literal block of `s` (after its `|` or `|-`), its lines at `indent`.
fn literal_block(out: &mut String, s: &str, indent: usize) {
    out.push_str(if s.ends_with('\n') { "|\n" } else { "|-\n" });
    for line in s.lines() {
        if !line.is_empty() {
            pad(out, indent);
            out.push_str(line);
        }
        out.push('\n');
    }
}

/// Writes what follows `key:` or `- `: the rest of the line, and nested lines at `indent`.
fn after_marker(out: &mut String, v: &Value, indent: usize, in_sequence: bool) {
    match v {
        Value::String(s) if literal(s) => {
            out.push(' ');
            literal_block(out, s, indent);
        }
        Value::Object(m) if !m.is_empty() => {
            if in_sequence {
                out.push(' ');
                map(out, m, indent, true);
            } else {
                out.push('\n');
                map(out, m, indent, false);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            sequence(out, a, indent);
        }
        other => {
            out.push(' ');
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
}

fn map(out: &mut String, m: &serde_json::Map<String, Value>, indent: usize, first_inline: bool) {
    for (n, (k, v)) in m.iter().enumerate() {
        if n > 0 || !first_inline {
            pad(out, indent);
        }
        out.push_str(&scalar(k));
        out.push(':');
        after_marker(out, v, indent + 2, false);
    }
}

fn sequence(out: &mut String, a: &[Value], indent: usize) {
    for v in a {
        pad(out, indent);
        out.push('-');
        after_marker(out, v, indent + 2, true);
    }
}

fn block(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Object(m) if !m.is_empty() => map(out, m, indent, false),
        Value::Array(a) if !a.is_empty() => sequence(out, a, indent),
        Value::String(s) if literal(s) => literal_block(out, s, indent + 2),
        other => {
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn yaml_1_1_words_numbers_and_specials_are_quoted() {
        for s in [
            "on",
            "On",
            "ON",
            "off",
            "yes",
            "Y",
            "n",
            "NO",
            "true",
            "False",
            "null",
            "~",
            "",
            "1.31",
            "08",
            "0x1F",
            "1:20",
            "-dev",
            ".inf",
            "2024-01-01",
            "a: b",
            "a #b",
            "${{ secrets.X }}",
            "*ref",
            "&a",
            "!tag",
            "x:",
            " lead",
            "trail ",
            "{a}",
            "[a]",
            "'q'",
            "\"q\"",
            "%x",
            "@at",
            "`b`",
            "a,b",
            "a\tb",
            "=",
        ] {
            assert!(scalar(s).starts_with('"'), "{s:?} must be quoted, got {}", scalar(s));
            let back: Value = serde_saphyr::from_str(&format!("k: {}\n", scalar(s))).unwrap();
            assert_eq!(back["k"], json!(s), "{s:?}");
        }
        for s in [
            "vpc",
            "ingress-controller",
            "kubernetes:infra_type",
            "https://x.example/a.git",
            "ubuntu-latest",
            "a b",
        ] {
            assert_eq!(scalar(s), s);
        }
    }

    #[test]
    fn nested_maps_sequences_and_blocks_read_back_the_same() {
        let v = json!({
            "on": {"workflow_dispatch": {}},
            "jobs": {"a": {"needs": [], "steps": [{"run": "echo 1\necho 2\n", "name": "x"}, {"uses": "y"}]}},
            "list": [["a", "b"], {"k": [1, 2]}, "yes", 3, true, null],
            "script": "no final newline\nsecond",
            "odd": "  leading\n",
        });
        let text = document(&["made by a test".into()], &v);
        assert!(
            text.starts_with("# made by a test\n\"on\":\n  workflow_dispatch: {}\n"),
            "{text}"
        );
        assert!(text.contains("- run: |\n"), "{text}");
        let back: Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, v, "{text}");
        let docs = documents(&[], &[json!({"a": 1}), json!({"b": [1]})]);
        assert_eq!(docs, "a: 1\n---\nb:\n  - 1\n");
    }
}
