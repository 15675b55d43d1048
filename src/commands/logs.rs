//! `logs PROJECT`: a project's last log of one operation (`--operation`, else the most recent
//! of its operations), its path on standard error and its text on standard output; `--follow`
//! goes on printing what is written until the operation ends. Reads only: no lock, so it works
//! while a run is going.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::write_result;
use crate::error::{RunnerError, exit};
use crate::plan::Operation;
use crate::report::{self, logs};
use crate::settings::{Settings, Target};

/// How often a followed log is read again.
const POLL: Duration = Duration::from_millis(150);

#[derive(Debug, Clone)]
pub(crate) struct LogsOptions {
    pub(crate) project: String,
    /// The operation whose log to show; `None`: the most recent one.
    pub(crate) operation: Option<Operation>,
    pub(crate) follow: bool,
}

const OPERATIONS: [Operation; 4] = [
    Operation::Up,
    Operation::Destroy,
    Operation::Refresh,
    Operation::Preview,
];

pub(crate) fn run(s: &Settings, t: &Target, o: &LogsOptions) -> Result<i32, RunnerError> {
    super::project_of(t, &o.project, "logs")?;
    let candidates: Vec<PathBuf> = match o.operation {
        Some(op) => vec![t.run_dir.log(&o.project, op.as_str())],
        None => OPERATIONS
            .iter()
            .map(|op| t.run_dir.log(&o.project, op.as_str()))
            .collect(),
    };
    let path = match newest(&candidates) {
        Some(p) => p,
        None if o.follow => {
            report::info(&format!(
                "waiting for {} to start (its log will be under {})",
                o.project,
                s.ws.show(&t.run_dir.logs())
            ));
            loop {
                std::thread::sleep(POLL);
                if let Some(p) = newest(&candidates) {
                    break p;
                }
            }
        }
        None => {
            let what = o.operation.map_or(String::new(), |op| format!("{} ", op.as_str()));
            return Err(RunnerError::failed(
                format!(
                    "{} has no {what}log in {} yet: it has not run{} with this stack",
                    o.project,
                    s.ws.show(&t.run_dir.logs()),
                    o.operation.map_or(String::new(), |op| format!(" `{}`", op.as_str())),
                ),
                format!(
                    "run it (`runner up -p {} -s {} --target {}`), or `runner logs {} --follow` while a run is going",
                    t.provider.name, t.stack, o.project, o.project
                ),
            ));
        }
    };
    report::info(&format!("log: {}", s.ws.show(&path)));
    let io = |source| RunnerError::Io {
        context: format!("cannot read {}", s.ws.show(&path)),
        source,
    };
    let text = std::fs::read_to_string(&path).map_err(io)?;
    write_result(&text)?;
    if o.follow {
        follow(&path, text.len(), logs::ended(&text)).map_err(io)?;
    }
    Ok(exit::SUCCESS)
}

/// The most recently written of `paths` that exist.
fn newest(paths: &[PathBuf]) -> Option<PathBuf> {
    paths
        .iter()
        .filter_map(|p| Some((std::fs::metadata(p).and_then(|m| m.modified()).ok()?, p)))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p.clone())
}

/// Prints what is appended to `path` after its first `printed` bytes, whole lines at a time,
/// until its operation's end line; a log started afresh (a new run of the project) is printed
/// from its beginning.
fn follow(path: &Path, mut printed: usize, mut done: bool) -> std::io::Result<()> {
    let first_line = |t: &str| t.lines().next().unwrap_or_default().to_string();
    let mut first = first_line(&std::fs::read_to_string(path)?);
    while !done {
        std::thread::sleep(POLL);
        let text = std::fs::read_to_string(path)?;
        if text.len() < printed || first_line(&text) != first {
            printed = 0;
            first = first_line(&text);
        }
        let Some(end) = text.rfind('\n').map(|e| e + 1).filter(|&e| e > printed) else {
            continue;
        };
        report::result(&text[printed..end])?;
        printed = end;
        done = logs::ended(&text[..end]);
    }
    Ok(())
}
