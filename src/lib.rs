//! `runner`: stands up a Kubernetes platform from many small Pulumi projects, in dependency
//! order and in parallel, and tears it down again.
//!
//! Each folder is one concern, and every `use` points down this list: `app` (and `cli`) →
//! `commands` → `settings` → `pulumi` → `config` → `report`, `render`, `export` → `runstate` → `exec` →
//! `programs` → `plan` → `provider` → `graph` (pure) → `workspace` → `diagnostic`, `error`,
//! `fs`. Providers are data (`provider`); only `report` prints.

pub mod app;
mod charts;
mod cli;
mod commands;
mod config;
mod diagnostic;
mod duration;
mod error;
pub mod exec;
mod export;
mod fs;
pub mod graph;
pub mod plan;
mod programs;
pub mod provider;
mod pulumi;
mod render;
mod report;
mod runstate;
#[cfg(test)]
mod schemas;
mod settings;
mod workspace;

/// The property tests' configuration: `cases` cases unless `PROPTEST_CASES` says how many, and
/// no file of failures.
#[cfg(test)]
fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

/// The CLI reference, `docs/reference/cli.md` (not an API: its test keeps the file current).
#[doc(hidden)]
#[must_use]
pub fn cli_reference() -> String {
    cli::reference()
}

/// Entry points for the fuzz targets in `fuzz/` (not an API): each takes any input, must not
/// panic, and asserts what must hold of what it produced.
#[doc(hidden)]
pub mod fuzzing {
    use std::path::Path;

    use serde_json::{Map, Value};

    use crate::config::stackedit;
    use crate::config::stackfile::StackFile;
    use crate::diagnostic::SourceFile;
    use crate::pulumi::hooks::kubeconfig;

    /// `config/pulumi/environment`: parsed, or every bad line reported with its line.
    pub fn environment_file(text: &str) {
        let file = SourceFile::new("environment", text);
        match crate::config::env_file::parse(&file) {
            Ok(env) => assert!(env.vars.keys().all(|k| !k.is_empty())),
            Err(problems) => assert!(!problems.is_empty()),
        }
    }

    /// A duration as a flag or a provider file gives it: refused with a reason, or more than
    /// zero and at most the maximum, and a deadline that far from now is an instant.
    pub fn duration(text: &str) {
        match crate::duration::parse(text) {
            Ok(d) => {
                assert!(!d.is_zero() && d <= crate::duration::MAX, "{text:?} gave {d:?}");
                assert!(crate::duration::after(tokio::time::Instant::now(), d).is_some());
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }

    /// Text from the engine, as the runner shows it: made visible, no control character is
    /// left; made inert for GitHub Actions, no line reads as a workflow command and the text
    /// is the same but for the zero-width spaces; a conflict parsed from it names a manager
    /// and a field, never a panic.
    pub fn engine_text(text: &str) {
        let shown = crate::report::text::visible(text);
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{shown:?}"
        );
        let inert = crate::report::text::inert_on_github(text);
        for line in inert.split('\n') {
            assert!(
                !line.trim_start().starts_with("::") && !line.contains("##["),
                "{line:?}"
            );
        }
        assert_eq!(inert.replace('\u{200b}', ""), text.replace('\u{200b}', ""));
        for c in crate::pulumi::messages::field_conflicts(text) {
            assert!(!c.field.is_empty() && !c.field.contains('\n'), "{c:?}");
        }
    }

    /// `.runner/<stack>/journal.jsonl` as a crash may leave it, or anyone may write it: every
    /// line is taken or named, and what is taken folds into a state the runner can hold.
    pub fn journal(bytes: &[u8]) {
        crate::runstate::fuzz_journal(bytes);
    }

    /// The provider `fuzz` made of `files` (`providers/<name>.toml` each) under `root`: loaded
    /// or refused with problems, and planned both ways when it loads.
    pub fn provider_files(root: &Path, files: &[(String, String)]) {
        let dir = root.join(crate::workspace::PROVIDERS_DIR);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        for (name, text) in files {
            std::fs::write(dir.join(format!("{name}.toml")), text).expect("a scratch file");
        }
        let ws = crate::workspace::Workspace::locate(Some(root), root).expect("a scratch workspace");
        let _ = crate::provider::entries(&ws);
        match crate::provider::load(&ws, "fuzz") {
            Ok(provider) => {
                for op in [crate::plan::Operation::Up, crate::plan::Operation::Destroy] {
                    let plan = crate::plan::Plan::new(&provider, op, &[]).expect("a plan of every project");
                    assert_eq!(plan.order.len(), provider.projects.len());
                }
            }
            Err(crate::provider::LoadError::Invalid(problems)) => assert!(!problems.is_empty()),
            Err(crate::provider::LoadError::NotAProvider { .. }) => {}
        }
    }

    /// A stack file read, then edited as a run edits it: the edit, when made, reads back as
    /// the file plus the new entries, and so does the salt added after it.
    pub fn stack_file(text: &str) {
        let path = Path::new("Pulumi.fuzz.yaml");
        let read = |text: String| StackFile::parse(path, "Pulumi.fuzz.yaml", text);
        let Ok(file) = read(text.to_string()) else { return };
        let entries = vec![
            ("fuzz:text".to_string(), Value::from("it's: #1")),
            ("fuzz:number".to_string(), Value::from(3)),
            ("fuzz:list".to_string(), Value::from(vec!["a", "b c"])),
        ];
        let Ok(edited) = file.with_entries("# header\n", &entries) else {
            return;
        };
        let again = read(edited.clone()).unwrap_or_else(|e| panic!("the edit does not read back: {e}\n{edited}"));
        let mut expected = file.config.clone();
        expected.extend(entries);
        assert_eq!(again.config, expected, "{edited}");
        for (k, v) in file.top.iter().filter(|(k, _)| *k != "config") {
            assert_eq!(again.top.get(k), Some(v), "{k} changed:\n{edited}");
        }
        if let Ok(Some(salted)) = stackedit::add_salt(&edited, "v1:c2FsdA==:v1:Ab+/cd==") {
            let salted = read(salted).expect("the salted file reads back");
            assert_eq!(salted.config, again.config);
            assert!(salted.has_secrets_provider());
        }
    }

    /// A kubeconfig merged into another as `kubeconfig-merge` does, and written as YAML: what
    /// is written reads back as the merge, holds every incoming entry and keeps every name
    /// the existing file had.
    pub fn kubeconfig_merge(existing: &str, incoming: &str) {
        let Ok(incoming) = kubeconfig::parse_input(incoming) else {
            return;
        };
        let Ok(context) = kubeconfig::context_of(&incoming) else {
            return;
        };
        let Ok(existing) = kubeconfig::parse_config(existing) else {
            return;
        };
        let (merged, _) = kubeconfig::merged(existing.clone(), &incoming, &context);
        let text = serde_saphyr::to_string(&Value::Object(merged.clone())).expect("a kubeconfig serializes");
        let back = kubeconfig::parse_config(&text)
            .unwrap_or_else(|e| panic!("the merged kubeconfig does not read back: {e}\n{text}"))
            .unwrap_or_default();
        assert_eq!(back, merged, "{text}");
        let list = |m: &Map<String, Value>, s: &str| m.get(s).and_then(Value::as_array).cloned().unwrap_or_default();
        for section in ["clusters", "users", "contexts"] {
            let written = list(&back, section);
            for entry in list(&incoming, section) {
                assert!(written.contains(&entry), "{section}: {entry} missing");
            }
            for entry in existing.as_ref().map(|m| list(m, section)).unwrap_or_default() {
                assert!(
                    written.iter().any(|w| w["name"] == entry["name"]),
                    "{section}: {} lost",
                    entry["name"]
                );
            }
        }
        assert_eq!(back.get("current-context"), Some(&Value::from(context)));
    }
}
