//! Which provider a command works with: the one named, the one a stack file was written for,
//! or the workspace's only one; loaded and checked, with the words for one that is not there.

use crate::config::stackfile::{self, StackFile};
use crate::error::RunnerError;
use crate::graph;
use crate::provider::{self, FileKind, LoadError, Provider};
use crate::workspace::{PROVIDERS_DIR, Workspace};

/// The provider a stack's configuration was written for: the provider file whose `infra_type`
/// is the stack file's `kubernetes:infra_type`, with the note that says so. A stack file that
/// cannot be read or parsed is that error, at its line.
pub(super) fn recorded_provider(ws: &Workspace, stack: &str) -> Result<Option<(String, String)>, RunnerError> {
    let path = stackfile::path(&ws.root, stack);
    let file = StackFile::load(&path, &ws.show(&path)).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
    Ok(provider_of(ws, &file))
}

/// The provider whose `infra_type` is `file`'s `kubernetes:infra_type`, when exactly one is.
pub(super) fn provider_of(ws: &Workspace, file: &StackFile) -> Option<(String, String)> {
    let recorded = file.config.get("kubernetes:infra_type")?.as_str()?.to_string();
    let (entries, _) = provider::entries(ws).ok()?;
    let providers = entries.iter().filter(|e| e.kind == FileKind::Provider).count();
    let mut matching = entries.into_iter().filter(|e| {
        e.kind == FileKind::Provider
            && e.infra_type
                .as_deref()
                .is_some_and(|t| t.eq_ignore_ascii_case(&recorded))
    });
    let entry = matching.next()?;
    // Two providers for one infra type: the stack file does not say which.
    if matching.next().is_some() {
        return None;
    }
    // The only provider of the workspace goes without saying.
    let note = if providers > 1 {
        format!(
            "provider {}: the stack file {} was written for it (kubernetes:infra_type: {recorded}); -p chooses another",
            entry.name, file.shown
        )
    } else {
        String::new()
    };
    Some((entry.name, note))
}

/// The provider `name`, loaded and checked.
pub(super) fn load_provider(
    ws: &Workspace,
    name: Option<&str>,
    command: &str,
    stats: &dyn crate::programs::ProgramStats,
) -> Result<Provider, RunnerError> {
    // The list of providers is only for error messages: read it only when one is needed.
    let available = || -> Vec<String> {
        provider::entries(ws)
            .map(|(entries, _)| {
                entries
                    .into_iter()
                    .filter(|e| e.kind == FileKind::Provider)
                    .map(|e| e.name)
                    .collect()
            })
            .unwrap_or_default()
    };
    let choices = |available: &[String]| {
        if available.is_empty() {
            format!("add a provider file to {}", ws.show(&ws.root.join(PROVIDERS_DIR)))
        } else {
            format!("providers here: {}", available.join(", "))
        }
    };
    let name = if let Some(name) = name {
        name.to_string()
    } else {
        let available = available();
        // The one provider of a workspace is the one meant.
        let [one] = available.as_slice() else {
            return Err(RunnerError::usage(
                format!("`{command}` needs a provider: pass -p/--provider NAME"),
                choices(&available),
            ));
        };
        crate::report::info(&format!("provider {one}: the only one in this workspace"));
        one.clone()
    };
    match provider::load_seeing(ws, &name, stats) {
        Ok(p) => Ok(p),
        Err(LoadError::NotAProvider { name, is_layer }) => {
            let available = available();
            let message = if is_layer {
                format!("`{name}` is a shared layer, not a provider: providers include it")
            } else {
                format!("unknown provider `{name}`")
            };
            let help = match graph::closest(&name, available.iter().map(String::as_str)) {
                Some(c) if !is_layer => format!("did you mean `{c}`? {}", choices(&available)),
                _ => choices(&available),
            };
            Err(RunnerError::usage(message, help))
        }
        Err(LoadError::Invalid(problems)) => Err(RunnerError::in_providers(problems)),
    }
}
