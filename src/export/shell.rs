//! Values in the shell scripts an export writes (the teardown script, the CI jobs' `run:` and
//! `script:` lines, the Argo task's script): each is one word that the shell reads back exactly,
//! never code. A word of characters no POSIX shell treats specially stays as it is (so the usual
//! names read as before); any other is single-quoted, each `'` in it written `'\''` (close the
//! quote, an escaped quote, open again): inside single quotes nothing is special.

/// Characters a POSIX shell word may hold unquoted with no meaning to the shell (about what
/// Python's `shlex.quote` keeps; not `=`, which can make a word an assignment).
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | ',' | '+' | '@' | '%')
}

/// `s` as one shell word.
pub(crate) fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_and_anything_else_is_read_back_exactly_by_sh() {
        for s in [
            "vpc",
            "runner-dev",
            "config/pulumi/Pulumi.dev.yaml",
            "a.b_c-9",
            "s3://x/y",
        ] {
            assert_eq!(quote(s), s);
        }
        let hostile = [
            "$(touch PWN)",
            "`touch PWN`",
            "a b",
            "it's",
            "'",
            "''",
            "\\'",
            "x\ny",
            ";rm -rf /",
            "${HOME}",
            "*",
            "~",
            "a=b",
            "",
            "!!",
            "\"$PATH\"",
        ];
        let dir = tempfile::tempdir().unwrap();
        for s in hostile {
            let script = format!("printf '%s' {}", quote(s));
            let out = std::process::Command::new("sh")
                .args(["-c", &script])
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{script}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), s, "{script}");
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert!(left.is_empty(), "no word ran as a command: {left:?}");
    }
}
