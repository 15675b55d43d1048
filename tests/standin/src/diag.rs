//! Diagnostics of a Pulumi YAML program as the YAML language host writes them: hcl's text
//! format on its standard error (`Error: <summary>`, `on Pulumi.yaml line N:`, the line, the
//! detail), which the engine shows line by line under the stack's `Diagnostics:`
//! (pulumi-yaml `pkg/server/server.go` `Run`, `pkg/pulumiyaml/ast/diagWriter.go`; pulumi
//! `sdk/go/common/resource/plugin/plugin.go` streams each non-empty stderr line as `info#err`).
//! A program with errors stops the update with no further message ("bail").

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

pub struct Diag {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    /// 1-based line in Pulumi.yaml.
    pub line: Option<usize>,
}

impl Diag {
    /// The lines the engine shows for it (empty lines are dropped).
    pub fn render(&self, file_name: &str, text: &str) -> Vec<String> {
        let mut out = vec![format!(
            "{}: {}",
            if self.severity == Severity::Error {
                "Error"
            } else {
                "Warning"
            },
            self.summary
        )];
        if let Some(n) = self.line {
            out.push(format!("  on {file_name} line {n}:"));
            out.push(format!("  {n:>4}: {}", text.lines().nth(n - 1).unwrap_or_default()));
        }
        out.extend(self.detail.lines().filter(|l| !l.trim().is_empty()).map(str::to_string));
        out
    }
}

/// The line of the key at `path` (each key nested under the previous one), in a block-style
/// YAML document.
pub fn line_of(text: &str, path: &[&str]) -> Option<usize> {
    let mut from = 0;
    let mut parent_indent: isize = -1;
    let mut found = None;
    let lines: Vec<&str> = text.lines().collect();
    for key in path {
        let mut hit = None;
        for (i, l) in lines.iter().enumerate().skip(from) {
            let trimmed = l.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = isize::try_from(l.len() - trimmed.len()).unwrap_or(0);
            if i > from && indent <= parent_indent && found.is_some() {
                break;
            }
            let body = trimmed.strip_prefix("- ").unwrap_or(trimmed);
            let quoted = format!("\"{key}\":");
            if body.starts_with(&format!("{key}:")) || body.starts_with(&quoted) {
                hit = Some((i, indent + isize::try_from(trimmed.len() - body.len()).unwrap_or(0)));
                break;
            }
        }
        let (i, indent) = hit?;
        found = Some(i + 1);
        from = i + 1;
        parent_indent = indent;
    }
    found
}

/// The first line holding `needle`.
pub fn line_containing(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// "Existing properties are: a, b, c, d, e and 3 others", closest names first (pulumi-yaml
/// `pkg/pulumiyaml/diags/diags.go` `NonExistentFieldFormatter`).
pub fn existing(fields: &[String], field: &str, noun: &str) -> String {
    let mut sorted: Vec<&String> = fields.iter().collect();
    sorted.sort_by(|a, b| edit_distance(field, a).cmp(&edit_distance(field, b)).then(a.cmp(b)));
    if sorted.is_empty() {
        return format!("has no {noun}");
    }
    let shown: Vec<&str> = sorted.iter().take(5).map(|s| s.as_str()).collect();
    let more = sorted.len().saturating_sub(5);
    let tail = match more {
        0 => String::new(),
        1 => " and 1 other".to_string(),
        n => format!(" and {n} others"),
    };
    format!("Existing {noun} are: {}{tail}", shown.join(", "))
}

pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_by_indentation() {
        let text = "name: x\nresources:\n  a:\n    type: t\n  b:\n    type: u\n    properties:\n      k: 1\n";
        assert_eq!(line_of(text, &["resources", "b", "type"]), Some(6));
        assert_eq!(line_of(text, &["resources", "b", "properties", "k"]), Some(8));
        assert_eq!(line_of(text, &["resources", "a", "properties"]), None);
    }

    #[test]
    fn lists_the_closest_names_first() {
        let f: Vec<String> = ["dependsOn", "parent", "provider"]
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            existing(&f, "dependOn", "fields"),
            "Existing fields are: dependsOn, parent, provider"
        );
    }
}
