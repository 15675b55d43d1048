//! `validate`: MARA's first-run configuration step. It prepares the configuration as a run
//! would — asking for what is missing and writing the answers — then reports every problem the
//! checks find at once (exit 3), or that all is well.

use std::path::PathBuf;

use crate::config::prepare::{self, Request};
use crate::config::terminal::Terminal;
use crate::error::{RunnerError, exit};
use crate::pulumi::Store;
use crate::report;
use crate::settings::{Settings, Target};

pub(crate) fn run(s: &Settings, t: &Target) -> Result<i32, RunnerError> {
    let request = Request {
        ws: &s.ws,
        provider: &t.provider,
        stack: &t.stack,
        env: t.env.clone(),
        secrets_for: t.provider.projects.iter().collect(),
        interactive: s.interactive,
    };
    let store = Store::new(PathBuf::from("pulumi"), &t.stack);
    prepare::prepare(&request, &mut Terminal::new(), &store)?;
    report::info(&format!(
        "All configuration is OK: provider {}, stack {}, {} projects",
        t.provider.name,
        t.stack,
        t.provider.projects.len()
    ));
    Ok(exit::SUCCESS)
}
