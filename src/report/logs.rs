//! Every project's full output, one log per project and operation (`RunDir::log`, already
//! scrubbed of secrets), so the live view can show only the last line without losing anything
//! and a destroy keeps the up's log. `runner logs` reads them, `--follow` until the end line.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write as _;
use std::path::Path;

use crate::exec::{Event, Stream};
use crate::runstate::timestamp;
use crate::workspace::RunDir;

/// The first word of a log's last line once its operation ended (`== succeeded …`).
pub(crate) const END_MARK: &str = "== ";

pub(crate) struct Logs {
    run_dir: RunDir,
    files: HashMap<String, File>,
}

impl Logs {
    pub(crate) fn new(run_dir: &RunDir) -> Self {
        let _ = std::fs::create_dir_all(run_dir.logs());
        Logs {
            run_dir: run_dir.clone(),
            files: HashMap::new(),
        }
    }

    pub(crate) fn event(&mut self, ev: &Event) {
        match ev {
            Event::Started { project, operation, at } => {
                if let Ok(mut f) = private(&self.run_dir.log(project, operation.as_str())) {
                    let _ = writeln!(f, "== {} {project} started {}", operation.as_str(), timestamp(*at));
                    self.files.insert(project.clone(), f);
                }
            }
            Event::Line { project, stream, text } => {
                if let Some(f) = self.files.get_mut(project) {
                    let mark = if *stream == Stream::Stderr { "! " } else { "" };
                    let _ = writeln!(f, "{mark}{text}");
                }
            }
            Event::Finished { project, result, .. } => {
                if let Some(mut f) = self.files.remove(project) {
                    let _ = writeln!(
                        f,
                        "== {} {}",
                        super::status::outcome_word(result.status.outcome()),
                        timestamp(result.ended)
                    );
                }
            }
            Event::Note { .. }
            | Event::Runs { .. }
            | Event::Stopping { .. }
            | Event::StillRunning { .. }
            | Event::TimedOut { .. } => {}
        }
    }
}

/// Whether a log's operation has ended: its last line is the end line (`== succeeded …`).
pub(crate) fn ended(text: &str) -> bool {
    text.ends_with('\n') && text.lines().count() > 1 && text.lines().last().is_some_and(|l| l.starts_with(END_MARK))
}

/// A log's bytes as they are shown on a terminal: text that is not UTF-8 read lossily (one
/// stray byte no longer hides the whole log), and every control character but the line break
/// and the tab made visible, so that nothing a log holds can move the cursor, repaint the
/// screen, retitle the window or write the clipboard: `^[` for ESC (as `cat -v` shows it),
/// `^M` for a carriage return, `^?` for DEL, `\u{9b}` for one of C1. In GitHub Actions
/// (`ci`), no line of it reads as a workflow command either (`::error`, `##[warning]`).
pub(crate) fn shown(bytes: &[u8], ci: Option<super::ci::CiSystem>) -> String {
    let text = super::text::visible(&String::from_utf8_lossy(bytes)).into_owned();
    if ci == Some(super::ci::CiSystem::GitHub) {
        super::text::inert_on_github(&text).into_owned()
    } else {
        text
    }
}

/// A log for its owner's eyes only (0600). What is there and is no regular file (a link, a
/// pipe that would block the open, a device) is replaced, never written through.
fn private(path: &Path) -> std::io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        std::fs::remove_file(path)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let f = opts.open(path)?;
    // A log written before by an older runner keeps no wider mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_shown_with_its_control_characters_visible_and_its_bytes_read_lossily() {
        assert_eq!(shown(b"plain\tline\n", None), "plain\tline\n");
        assert_eq!(
            shown(b"\x1b[2J\x1b[H\x1b]0;title\x07cleared\r\n", None),
            "^[[2J^[[H^[]0;title^Gcleared^M\n"
        );
        assert_eq!(shown("a\u{9b}31m\u{7f}".as_bytes(), None), "a\\u{9b}31m^?");
        assert_eq!(shown(b"caf\xe9 ok\n", None), "caf\u{fffd} ok\n");
    }
}
