//! Everything the runner prints goes through here: results on standard output, messages and
//! errors on standard error (MARA's split). No other module prints. A closed stream
//! (`runner up 2>&1 | head`) is not a reason to stop: what cannot be written is dropped.

/// `eprintln!` that does not panic when standard error is closed.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stderr().lock(), "{}", $crate::report::as_typed(&text));
    }};
}

/// `eprint!` that does not panic when standard error is closed.
macro_rules! say_inline {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{}", $crate::report::as_typed(&text));
        let _ = err.flush();
    }};
}

pub(crate) mod ci;
pub(crate) mod drift;
pub(crate) mod failure;
pub(crate) mod html;
pub(crate) mod junit;
pub(crate) mod live;
pub(crate) mod logs;
pub(crate) mod marks;
pub(crate) mod plain;
pub(crate) mod reason;
pub(crate) mod sinks;
pub(crate) mod status;
pub(crate) mod summary;
pub(crate) mod text;
pub(crate) mod timeline;

use std::io::{self, Write as _};

use miette::{GraphicalReportHandler, GraphicalTheme};

use crate::error::RunnerError;

/// When to use colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// How each project is announced while running (MARA's `--banner-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Banner {
    /// `▶ [project] up started (description)`
    Fabulous,
    /// `* description`
    Boring,
    /// `[description] started`
    Log,
}

/// How a run's progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputMode {
    /// The live view at a terminal outside CI, plain lines otherwise.
    Auto,
    /// Every line prefixed with its project.
    Plain,
}

/// How output looks, resolved once from the flags and the environment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    pub color_stderr: bool,
    pub debug: bool,
}

impl Style {
    /// `--color` wins when it says always or never; otherwise `NO_COLOR` (any non-empty value)
    /// turns colour off, and a terminal turns it on.
    pub(crate) fn resolve(choice: ColorChoice, no_color: bool, ttys: (bool, bool), debug: bool) -> Self {
        let (stdout_tty, stderr_tty) = ttys;
        let (out, err) = match choice {
            ColorChoice::Always => (true, true),
            ColorChoice::Never => (false, false),
            ColorChoice::Auto if no_color => (false, false),
            ColorChoice::Auto => (stdout_tty, stderr_tty),
        };
        console::set_colors_enabled(out);
        console::set_colors_enabled_stderr(err);
        Style {
            color_stderr: err,
            debug,
        }
    }
}

/// Writes a result to standard output. A closed pipe (`runner show-plan | head`) is not an error.
pub(crate) fn result(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// `0.4s`, `12.3s`, `2m 05s`
pub(crate) fn duration(seconds: f64) -> String {
    if seconds < 60.0 {
        format!("{seconds:.1}s")
    } else {
        let s = crate::duration::of_seconds(seconds).as_secs();
        format!("{}m {:02}s", s / 60, s % 60)
    }
}

/// A debug line (`-d`), on standard error.
pub(crate) fn debug(style: Style, message: &str) {
    if style.debug {
        let prefix = console::Style::new().dim().for_stderr().apply_to("debug:");
        say!("{prefix} {message}");
    }
}

/// A runner note as one line: `warning: [project] message`, or the message alone.
pub(crate) fn note_line(project: Option<&str>, level: crate::exec::Level, message: &str) -> String {
    let who = project.map(|p| format!("[{p}] ")).unwrap_or_default();
    match level {
        crate::exec::Level::Warning => {
            let prefix = console::Style::new().yellow().bold().for_stderr().apply_to("warning:");
            format!("{prefix} {who}{message}")
        }
        crate::exec::Level::Info => format!("{who}{message}"),
        crate::exec::Level::Debug => {
            let prefix = console::Style::new().dim().for_stderr().apply_to("debug:");
            format!("{prefix} {who}{message}")
        }
    }
}

/// Why the scheduler runs a project an `up` could skip, as a debug note's line (`-d`).
pub(crate) fn runs_line(project: &str, why: &crate::exec::Runs) -> String {
    note_line(
        Some(project),
        crate::exec::Level::Debug,
        &format!("runs: {}", reason::runs(why)),
    )
}

/// How a note event is said (the live view and plain lines alike): its line, or `None` for a
/// debug note without `-d`, or another event.
pub(crate) fn note_shown(ev: &crate::exec::Event, debug: bool) -> Option<String> {
    use crate::exec::{Event, Level};
    match ev {
        Event::Note {
            project,
            level,
            message,
        } if *level != Level::Debug || debug => Some(note_line(project.as_deref(), *level, message)),
        _ => None,
    }
}

/// How the executor's stopping events are said (the live view and plain lines alike): the
/// note's line, or `None` for another event.
pub(crate) fn stopping_line(ev: &crate::exec::Event) -> Option<String> {
    use crate::exec::{Event, Level};
    let (project, level, message) = match ev {
        Event::Stopping { grace } => (
            None,
            Level::Warning,
            format!(
                "interrupted: stopping running projects (in {} they get SIGTERM, then SIGKILL; \
                 press Ctrl-C again to hurry)",
                humantime::format_duration(*grace)
            ),
        ),
        Event::StillRunning { project, minutes } => (
            Some(project.as_str()),
            Level::Info,
            format!("still running after {minutes} min"),
        ),
        Event::TimedOut { project, after } => (
            Some(project.as_str()),
            Level::Warning,
            format!("timed out after {}: stopping it", humantime::format_duration(*after)),
        ),
        _ => return None,
    };
    Some(note_line(project, level, &message))
}

/// Text for a Markdown table cell (GitHub's job summary): no raw HTML, `|` escaped, line breaks as `<br>`.
pub(crate) fn markdown_cell(text: &str) -> String {
    // HTML in a cell is rendered (an engine's error holding `<img src=…>` would show as an
    // image): `&`, `<` and `>` as entities first, then the line breaks as the one tag allowed.
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\r', "")
        .replace('\n', "<br>")
}

/// The command a person types for the runner when it is not `runner`: a wrapper that starts it
/// (`scripts/try-local`) names itself in `RUNNER_COMMAND`, so the commands the runner suggests
/// can be typed as they are.
pub(crate) const COMMAND_VAR: &str = "RUNNER_COMMAND";

/// The command the person types for the runner, when a wrapper named one (`scripts/try-local`).
pub(crate) fn typed_command() -> Option<&'static str> {
    static TYPED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    TYPED
        .get_or_init(|| {
            std::env::var(COMMAND_VAR)
                .ok()
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty() && c != "runner" && !c.chars().any(|ch| ch == '`' || ch.is_control()))
        })
        .as_deref()
}

/// The `--workspace DIR` the person typed, as a shell reads it back: the commands the runner
/// suggests carry it, or they would run where the person is, in another workspace.
static TYPED_WORKSPACE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Keeps the `--workspace` given on the command line for [`as_typed`] (once, at the start).
pub(crate) fn workspace_typed(dir: Option<&std::path::Path>) {
    if let Some(word) = dir.and_then(std::path::Path::to_str).and_then(shell_word) {
        let _ = TYPED_WORKSPACE.set(word);
    }
}

/// `text` as one word of a command line to copy: as it is, in single quotes, or `None` when
/// no quoting makes it safe to show (a control character, a quote, a backtick).
fn shell_word(text: &str) -> Option<String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    if text.is_empty() || text.chars().any(|c| c.is_control() || c == '\'' || c == '`') {
        None
    } else if text.chars().all(plain) {
        Some(text.to_string())
    } else {
        Some(format!("'{text}'"))
    }
}

/// `text` with each command it suggests (`` `runner …` ``) as the person types it: the wrapper
/// that started the runner (`scripts/try-local`), else `runner` with the `--workspace` typed.
pub(crate) fn as_typed(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("`runner ") {
        return text.into();
    }
    match (typed_command(), TYPED_WORKSPACE.get()) {
        (Some(typed), _) => text.replace("`runner ", &format!("`{typed} ")).into(),
        (None, Some(dir)) => text.replace("`runner ", &format!("`runner --workspace {dir} ")).into(),
        (None, None) => text.into(),
    }
}

/// A message for the user, on standard error.
pub(crate) fn info(message: &str) {
    say!("{message}");
}

/// A warning that does not stop the command.
pub(crate) fn warning(message: &str) {
    say!("{}", note_line(None, crate::exec::Level::Warning, message));
}

/// Many warnings in one write (a big graph's cross-check may have a thousand).
pub(crate) fn warnings(messages: impl Iterator<Item = String>) {
    let mut text = String::new();
    for m in messages {
        text.push_str(&note_line(None, crate::exec::Level::Warning, &m));
        text.push('\n');
    }
    if !text.is_empty() {
        say_inline!("{text}");
    }
}

/// Prints an error with its location, code frame and fix.
pub(crate) fn error(style: Style, err: &RunnerError) {
    let prefix = console::Style::new().red().bold().for_stderr().apply_to("error:");
    match err {
        RunnerError::Usage { message, help } => {
            say!("{prefix} {}", text::visible(message));
            if let Some(help) = help {
                say!("  help: {}", text::visible(help));
            }
        }
        RunnerError::Busy { message, help } | RunnerError::Failed { message, help } => {
            say!("{prefix} {}\n  help: {}", text::visible(message), text::visible(help));
        }
        RunnerError::Declined => say!("{err}"),
        RunnerError::Files {
            problems: diagnostics, ..
        } => {
            let theme = if style.color_stderr {
                GraphicalTheme::unicode()
            } else {
                GraphicalTheme::unicode_nocolor()
            };
            let handler = GraphicalReportHandler::new_themed(theme).with_wrap_lines(false);
            for d in diagnostics {
                let mut text = String::new();
                if handler.render_report(&mut text, d).is_err() {
                    text = format!("{d}\n");
                }
                // A name in the file may hold a bidirectional control: shown, never obeyed.
                say_inline!("{}", text::bidi_visible(&text));
            }
            say!("{prefix} {err}");
        }
        // One problem is the headline itself, as every other error is (`output` without its
        // passphrase was "validation failed"); more are counted and listed.
        RunnerError::Problems(problems) if problems.len() == 1 => {
            let p = &problems[0];
            say!("{prefix} {}\n  fix: {}", text::visible(&p.what), text::visible(&p.fix));
        }
        RunnerError::Problems(problems) => {
            say!("{prefix} {err}");
            for (k, p) in problems.iter().enumerate() {
                say!(
                    "  {}. {}\n     fix: {}",
                    k + 1,
                    text::visible(&p.what),
                    text::visible(&p.fix)
                );
            }
        }
        RunnerError::Io { .. } => say!("{prefix} {}", text::visible(&err.to_string())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_typed_workspace_is_shown_as_one_word_to_copy_or_not_at_all() {
        use super::shell_word;
        assert_eq!(shell_word("examples/local").as_deref(), Some("examples/local"));
        assert_eq!(shell_word("my platform").as_deref(), Some("'my platform'"));
        assert_eq!(shell_word("~/ws").as_deref(), Some("'~/ws'"));
        assert_eq!(shell_word("it's"), None);
        assert_eq!(shell_word("a`b`"), None);
        assert_eq!(shell_word("a\nb"), None);
        assert_eq!(shell_word(""), None);
    }
}
