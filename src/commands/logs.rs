//! `logs PROJECT`: a project's last log of one operation (`--operation`, else the most recent
//! of its operations), its path on standard error and its text on standard output; `--follow`
//! goes on printing what is written until the operation ends — when the last one has ended, that
//! of the project's next run, as `tail -F`. Reads only: no lock, so it works
//! while a run is going.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::write_result;
use crate::error::{RunnerError, exit};
use crate::plan::Operation;
use crate::report::summary::Summary;
use crate::report::{self, logs};
use crate::settings::{Settings, StackContext};

/// How often a followed log is read again.
const POLL: Duration = Duration::from_millis(150);

#[derive(Debug, Clone)]
pub(crate) struct LogsOptions {
    pub(crate) project: Option<String>,
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

pub(crate) fn run(s: &Settings, t: &StackContext, o: &LogsOptions) -> Result<i32, RunnerError> {
    let project = super::project_of(t, o.project.as_deref(), "`runner logs`")?
        .name
        .clone();
    let candidates: Vec<PathBuf> = match o.operation {
        Some(op) => vec![t.run_dir.log(&project, op.as_str())],
        None => OPERATIONS
            .iter()
            .map(|op| t.run_dir.log(&project, op.as_str()))
            .collect(),
    };
    let path = match newest(&candidates) {
        Some(p) => p,
        None if o.follow => {
            report::info(&format!(
                "waiting for {} to start (its log will be under {})",
                project,
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
                    project,
                    s.ws.show(&t.run_dir.logs()),
                    o.operation.map_or(String::new(), |op| format!(" `{}`", op.as_str())),
                ),
                format!(
                    "run it (`runner {} -p {} -s {} --target {}`), or `runner logs {} --follow` while a run is going",
                    // The operation whose log was asked for.
                    o.operation.map_or("up", |op| op.as_str()),
                    t.provider.name,
                    t.stack,
                    project,
                    project
                ),
            ));
        }
    };
    let mut path = path;
    report::info(&format!("log: {}", s.ws.show(&path)));
    let io = |source: std::io::Error| {
        RunnerError::failed(
            format!("cannot read {}: {source}", s.ws.show(&path)),
            format!("remove it: the next run of {project} writes it anew (a log is only what a run printed)"),
        )
    };
    let (text, left_out) = read_tail(&path).map_err(io)?;
    if left_out > 0 {
        report::info(&format!(
            "(its first {} MiB are left out: the whole log is {})",
            left_out.div_ceil(1024 * 1024),
            s.ws.show(&path)
        ));
    }
    write_result(&logs::shown(&text, s.ci))?;
    if o.follow {
        let mut seen = Seen {
            printed: left_out + text.len() as u64,
            first: first_line(&path).map_err(io)?,
            lines: line_count(&text),
            done: logs::ended(&String::from_utf8_lossy(&text)),
        };
        // As `tail -F`: a log whose run has ended is followed into the project's next run.
        if seen.done {
            report::info(&format!(
                "{project}'s last run has ended; waiting for its next one (Ctrl-C to stop)"
            ));
            let Some(next) = next_run(&candidates, &|| crate::workspace::going(&t.run_dir)) else {
                report::info(&format!("the run ended without {}{}", project, why_not(t, &project)));
                return Ok(exit::SUCCESS);
            };
            path = next;
            report::info(&format!("log: {}", s.ws.show(&path)));
            seen = Seen::new(first_line(&path).unwrap_or_default());
        }
        follow(&path, seen, s.ci).map_err(|source| {
            RunnerError::failed(
                format!("cannot read {}: {source}", s.ws.show(&path)),
                "run `runner logs` again once the project's run has started",
            )
        })?;
    }
    Ok(exit::SUCCESS)
}

/// The most of a log `logs` prints at once: the end of a longer one.
const SHOWN_LIMIT: u64 = crate::fs::READ_LIMIT;

/// A log's last [`SHOWN_LIMIT`] bytes (from a line's start), and how many bytes before them are
/// left out; refused when it is not a regular file (a FIFO would hang the read, a device never
/// end).
fn read_tail(path: &Path) -> std::io::Result<(Vec<u8>, u64)> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let len = crate::fs::regular(path)?.len();
    let mut file = std::fs::File::open(path)?;
    let mut from = len.saturating_sub(SHOWN_LIMIT);
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.take(SHOWN_LIMIT).read_to_end(&mut bytes)?;
    if from > 0
        && let Some(start) = bytes.iter().position(|&b| b == b'\n')
    {
        bytes.drain(..=start);
        from += start as u64 + 1;
    }
    Ok((bytes, from))
}

/// The first line of a log (its start line names the operation's start), to tell a log
/// started afresh by a new run.
fn first_line(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    crate::fs::regular(path)?;
    let mut head = Vec::new();
    std::fs::File::open(path)?.take(256).read_to_end(&mut head)?;
    let end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    head.truncate(end);
    Ok(head)
}

fn line_count(bytes: &[u8]) -> usize {
    // Line breaks: one fewer than the pieces they cut the bytes into.
    bytes.split(|&b| b == b'\n').count() - 1
}

/// How far a followed log was printed.
struct Seen {
    /// Bytes of the file printed (or left out).
    printed: u64,
    first: Vec<u8>,
    /// Lines printed.
    lines: usize,
    /// Its operation's end line was printed.
    done: bool,
}

impl Seen {
    /// Nothing of the log `first` begins printed yet.
    fn new(first: Vec<u8>) -> Self {
        Seen {
            printed: 0,
            first,
            lines: 0,
            done: false,
        }
    }
}

/// Waits for a new run of the project: one of its logs (`paths`) begun afresh — created, or
/// its first line (the start line, which names when) changed, or cut shorter.
/// `None` once a run of the stack (`going` tells, without taking the workspace lock) was seen
/// going and has ended without the project starting: it was unchanged, left out or not started.
fn next_run(paths: &[PathBuf], going: &dyn Fn() -> crate::workspace::Going) -> Option<PathBuf> {
    let now = |p: &PathBuf| {
        let len = std::fs::metadata(p).map(|m| m.len()).ok();
        (len, first_line(p).ok())
    };
    let before: Vec<(Option<u64>, Option<Vec<u8>>)> = paths.iter().map(now).collect();
    let mut seen_going = false;
    loop {
        std::thread::sleep(POLL);
        let state = going();
        for (p, (len, first)) in paths.iter().zip(&before) {
            let (new_len, new_first) = now(p);
            let begun = new_first.as_ref().is_some_and(|f| !f.is_empty()) && (new_first != *first || new_len < *len);
            if begun {
                return Some(p.clone());
            }
        }
        match state {
            crate::workspace::Going::Yes => seen_going = true,
            crate::workspace::Going::No if seen_going => return None,
            _ => {}
        }
    }
}

/// Why the last run left `project` out, from its summary: ` (unchanged: nothing it depends on
/// changed…)`, or nothing when the summary does not say.
fn why_not(t: &StackContext, project: &str) -> String {
    let Ok(text) = crate::fs::read_text(t.run_dir.last_run()) else {
        return String::new();
    };
    let Ok(summary) = Summary::read(&text) else {
        return String::new();
    };
    match summary.project(project) {
        Some(p) => {
            let status = report::status::word(p.status);
            match &p.reason {
                Some(reason) => format!(" ({status}: {reason})"),
                None => format!(" ({status})"),
            }
        }
        None => " (it was not in the run's plan: excluded or not targeted)".to_string(),
    }
}

/// The most recently written of `paths` that exist.
fn newest(paths: &[PathBuf]) -> Option<PathBuf> {
    paths
        .iter()
        .filter_map(|p| Some((std::fs::metadata(p).and_then(|m| m.modified()).ok()?, p)))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p.clone())
}

/// Prints what is appended to `path` after what `seen` printed, whole lines at a time, until
/// its operation's end line; a log started afresh (a new run of the project) is printed from
/// its beginning.
fn follow(path: &Path, mut seen: Seen, ci: Option<crate::report::ci::CiSystem>) -> std::io::Result<()> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    while !seen.done {
        std::thread::sleep(POLL);
        let len = crate::fs::regular(path)?.len();
        let first = first_line(path)?;
        if len < seen.printed || first != seen.first {
            seen = Seen::new(first);
        }
        if len == seen.printed {
            continue;
        }
        let mut file = std::fs::File::open(path)?;
        file.seek(SeekFrom::Start(seen.printed))?;
        let mut bytes = Vec::new();
        file.take(SHOWN_LIMIT).read_to_end(&mut bytes)?;
        let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
            continue;
        };
        let chunk = &bytes[..=end];
        report::result(&logs::shown(chunk, ci))?;
        seen.printed += chunk.len() as u64;
        seen.lines += line_count(chunk);
        // The end line, once more than the start line was printed.
        let last = chunk[..end].rsplit(|&b| b == b'\n').next().unwrap_or_default();
        seen.done = seen.lines > 1 && last.starts_with(logs::END_MARK.as_bytes());
    }
    Ok(())
}
