//! `list-providers`: the providers of the workspace, then the shared layers they include.

use std::fmt::Write as _;

use super::write_result;
use crate::error::{RunnerError, exit};
use crate::provider::{self, Entry, FileKind};
use crate::settings::Settings;
use crate::workspace::PROVIDERS_DIR;

pub(crate) fn list(s: &Settings) -> Result<i32, RunnerError> {
    let ws = &s.ws;
    let (entries, problems) = provider::entries(ws).map_err(|source| RunnerError::Io {
        context: format!("cannot read {}", ws.show(&ws.root.join(PROVIDERS_DIR))),
        source,
    })?;
    let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for e in entries.iter().filter(|e| e.kind == FileKind::Provider) {
        let _ = writeln!(out, "{:<width$}  {}", e.name, e.description);
    }
    let layers: Vec<&Entry> = entries.iter().filter(|e| e.kind == FileKind::Layer).collect();
    if !layers.is_empty() {
        out.push_str("\nShared layers (included by providers, not run on their own):\n");
        for e in layers {
            let _ = writeln!(out, "{:<width$}  {}", e.name, e.description);
        }
    }
    write_result(&out)?;
    if problems.is_empty() {
        Ok(exit::SUCCESS)
    } else {
        Err(RunnerError::in_providers(problems))
    }
}
