//! Diagnostics of a Pulumi YAML program as the YAML language host writes them: hcl's text
//! format on its standard error (`Error: <summary>`, `on Pulumi.yaml line N:`, the line, the
//! detail), which the engine shows line by line under the stack's `Diagnostics:`
//! (pulumi-yaml `pkg/server/server.go` `Run`, `pkg/pulumiyaml/ast/diagWriter.go`; pulumi
//! `sdk/go/common/resource/plugin/plugin.go` streams each non-empty stderr line as `info#err`).
//! A program with errors stops the update with no further message ("bail").

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The first line holding `needle`.
pub fn line_containing(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
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
