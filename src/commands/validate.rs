//! `validate`: MARA's first-run configuration step. It prepares the configuration as a run
//! would — asking for what is missing and writing the answers, each file written said — then
//! checks everything a run needs (and the `pulumi` CLI and the passphrase against the stack
//! files) and reports every problem at once (exit 3), or that all is well. `--check` asks
//! nothing and changes no file: it reports what a run would still ask as problems too.

use std::path::PathBuf;

use crate::config::prepare;
use crate::config::request::{Mode, Request};
use crate::config::terminal::Terminal;
use crate::error::{RunnerError, exit};
use crate::pulumi::Store;
use crate::report;
use crate::settings::{Settings, StackContext};

pub(crate) fn run(s: &Settings, t: &StackContext, check: bool) -> Result<i32, RunnerError> {
    let request = Request {
        ws: &s.ws,
        provider: &t.provider,
        stack: &t.stack,
        env: t.env.clone(),
        secrets_for: t.provider.projects.iter().collect(),
        runs: t.provider.projects.iter().collect(),
        interactive: s.interactive && !check,
        mode: if check { Mode::Check } else { Mode::Validate },
        idle: false,
        switched: t.switched(),
    };
    let store = Store::new(PathBuf::from("pulumi"), &t.stack, false);
    prepare::prepare(&request, &mut Terminal::new(s.console), &store)?;
    let p = crate::settings::provider_flag(&s.ws, &t.provider.name);
    report::info(&format!(
        "All configuration is OK: provider {}, stack {}, {} (tools, files, passphrase, programs, \
         the provider's checks).\nNext: `runner up{p} -s {1}` shows what it will run and asks first.",
        t.provider.name,
        t.stack,
        crate::render::count(t.provider.projects.len(), "project")
    ));
    Ok(exit::SUCCESS)
}
