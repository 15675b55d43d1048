//! `scripts/provider-versions`: one pin a line, `package version npm:<package>` or
//! `package version pypi:<package>`, `#` comments and blank lines ignored. The one reader in
//! Rust (`scripts/lib/pins` is the shell's, with the same rule and message).

use std::path::{Path, PathBuf};

/// One pinned provider package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The package's name in type tokens (`aws`).
    pub name: String,
    pub version: String,
    /// The registry its SDK comes from: `npm` or `pypi`.
    pub registry: String,
    /// The SDK's name there (`@pulumi/aws`).
    pub sdk: String,
    /// 1-based line in the file.
    pub line: usize,
}

impl Pin {
    /// `@pulumi/aws@7.48.0`: the SDK whose types a program is checked against.
    pub fn sdk_at_version(&self) -> String {
        format!("{}@{}", self.sdk, self.version)
    }
}

/// The pins of `text` (read from `file`, which messages name), or the first bad line's message.
pub fn parse(text: &str, file: &str) -> Result<Vec<Pin>, String> {
    let mut pins: Vec<Pin> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let source = fields.get(2).and_then(|s| s.split_once(':'));
        let (name, version, (registry, sdk)) = match (fields.as_slice(), source) {
            ([name, version, _], Some(src @ ("npm" | "pypi", sdk))) if !sdk.is_empty() => (*name, *version, src),
            _ => {
                return Err(format!(
                    "{file}:{}: expected `package version npm:<package>` or `… pypi:<package>`, got {raw:?}",
                    i + 1
                ));
            }
        };
        if let Some(first) = pins.iter().find(|p| p.name == name) {
            return Err(format!(
                "{file}:{}: {name} is pinned twice (first on line {})",
                i + 1,
                first.line
            ));
        }
        pins.push(Pin {
            name: name.to_string(),
            version: version.to_string(),
            registry: registry.to_string(),
            sdk: sdk.to_string(),
            line: i + 1,
        });
    }
    Ok(pins)
}

/// The pins of the file at `path` (named in messages as `shown`).
pub fn read(path: &Path, shown: &str) -> Result<Vec<Pin>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    parse(&text, shown)
}

/// Where `scripts/install-test-tools` installs the pinned SDKs (outside git):
/// `$RUNNER_SDK_CACHE`, else `$XDG_CACHE_HOME/runner-sdk`, else `~/.cache/runner-sdk`, the rule
/// of `scripts/lib/sdk-cache-dir`.
pub fn sdk_cache() -> PathBuf {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("RUNNER_SDK_CACHE")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("runner-sdk")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/runner-sdk")))
        .unwrap_or_else(|| PathBuf::from(".cache/runner-sdk"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pins_and_names_a_bad_line() {
        let pins = parse(
            "# comment\naws  7.48.0  npm:@pulumi/aws  # trailing\n\nharbor 3.10.21 pypi:pulumiverse-harbor\n",
            "f",
        )
        .unwrap();
        assert_eq!(pins.len(), 2);
        assert_eq!(pins[0].sdk_at_version(), "@pulumi/aws@7.48.0");
        assert_eq!((pins[1].registry.as_str(), pins[1].line), ("pypi", 4));
        for bad in [
            "aws 7.48.0",
            "aws 7.48.0 cargo:aws",
            "aws 7.48.0 npm:",
            "aws 1 npm:a extra",
        ] {
            let e = parse(&format!("# c\n{bad}\n"), "scripts/provider-versions").unwrap_err();
            assert!(
                e.starts_with(
                    "scripts/provider-versions:2: expected `package version npm:<package>` or `… pypi:<package>`"
                ),
                "{e}"
            );
        }
        let e = parse("a 1 npm:a\na 2 npm:a\n", "f").unwrap_err();
        assert_eq!(e, "f:2: a is pinned twice (first on line 1)");
    }
}
