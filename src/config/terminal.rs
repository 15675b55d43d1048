//! The terminal the runner was started at ([`Console`]: read once, before anything prints), and
//! questions at it (on standard error, answers from the keyboard), with `dialoguer`, or as plain
//! lines on a dumb terminal.

use std::io::IsTerminal as _;

use dialoguer::theme::SimpleTheme;
use dialoguer::{Input, Password};

use super::questions::Ask;
use crate::exec::signals::{self, OnInterrupt};

/// The runner's standard streams as the process got them: which are terminals, and of what kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Console {
    /// Standard input is a terminal: a person can type an answer.
    pub(crate) stdin: bool,
    /// Standard output is a terminal.
    pub(crate) stdout: bool,
    /// Standard error is a terminal: questions, progress and notes are seen as they come.
    pub(crate) stderr: bool,
    pub(crate) kind: TermKind,
}

/// What the terminal can show, from `TERM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TermKind {
    /// `TERM=dumb` (Emacs's shell, some CI logs): escape codes show as text, so no colour, no
    /// redrawing, and questions as plain lines.
    Dumb,
    Capable,
}

impl Console {
    /// The streams and `TERM` of this process.
    pub(crate) fn detect() -> Self {
        Console {
            stdin: std::io::stdin().is_terminal(),
            stdout: std::io::stdout().is_terminal(),
            stderr: std::io::stderr().is_terminal(),
            kind: if std::env::var("TERM").is_ok_and(|t| t == "dumb") {
                TermKind::Dumb
            } else {
                TermKind::Capable
            },
        }
    }

    /// Whether standard output and standard error can show colour: terminals, not dumb ones.
    pub(crate) fn colour(self) -> (bool, bool) {
        let capable = self.kind == TermKind::Capable;
        (self.stdout && capable, self.stderr && capable)
    }

    /// Whether progress can be drawn and redrawn on standard error.
    pub(crate) fn redraws(self) -> bool {
        self.colour().1
    }
}

/// Asks at the terminal. While it lives, Ctrl-C restores the terminal (a hidden prompt turns
/// echo off) and ends the runner with exit 130, saying `no answer was written` (or, before a
/// run, that nothing ran).
pub(crate) struct Terminal {
    /// A dumb terminal: the questions are plain lines.
    plain: bool,
    guard: Option<OnInterrupt>,
}

impl Terminal {
    pub(crate) fn new(console: Console) -> Self {
        Self::saying(console, "no answer was written")
    }

    /// For the question before a run (`Go ahead?`): answers given before it were written, so
    /// Ctrl-C there says that nothing ran.
    pub(crate) fn before_the_run(console: Console) -> Self {
        Self::saying(
            console,
            "nothing ran (the settings and secrets answered before this question are in the stack files: the next run uses them)",
        )
    }

    /// Ctrl-C restores the terminal and says `interrupted: {said}`.
    fn saying(console: Console, said: &'static str) -> Self {
        #[cfg(unix)]
        let restore = nix::sys::termios::tcgetattr(std::io::stdin()).ok();
        #[cfg(not(unix))]
        let restore = None;
        let guard = signals::hub().on_interrupt(move || leave(restore.as_ref(), said));
        Terminal {
            plain: console.kind == TermKind::Dumb,
            guard: Some(guard),
        }
    }

    fn io(e: dialoguer::Error) -> std::io::Error {
        let dialoguer::Error::IO(e) = e;
        Self::read_error(e)
    }

    fn read_error(e: std::io::Error) -> std::io::Error {
        // Ctrl-C while reading an answer: the terminal library may see it before the signal
        // handler does; either way the runner ends the same way, exit 130 (the guard's action
        // restores the terminal and says so, once).
        if e.kind() == std::io::ErrorKind::Interrupted {
            signals::hub().end();
        }
        e
    }

    // A dumb terminal shows escape codes as they are, and `dialoguer` clears its lines with
    // them after every answer: there the questions are plain lines, answered with Enter (the
    // terminal's own line editing), as `dialoguer`'s simple theme words them.

    /// A visible answer on a dumb terminal.
    fn line(prompt: &str) -> std::io::Result<String> {
        use std::io::Write as _;
        let mut err = std::io::stderr().lock();
        write!(err, "{prompt}")?;
        err.flush()?;
        drop(err);
        let mut line = String::new();
        if std::io::stdin().read_line(&mut line).map_err(Self::read_error)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the terminal closed before an answer",
            ));
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    }

    /// One hidden entry (empty allowed): `dialoguer`'s, or a plain line on a dumb terminal.
    fn hidden_entry(&self, prompt: &str) -> std::io::Result<String> {
        if self.plain {
            return Self::hidden_line(prompt);
        }
        Password::with_theme(&SimpleTheme)
            .with_prompt(prompt)
            .allow_empty_password(true)
            .interact()
            .map_err(Self::io)
    }

    /// A hidden answer on a dumb terminal: the question, then the answer read with echo off.
    fn hidden_line(prompt: &str) -> std::io::Result<String> {
        let term = console::Term::stderr();
        term.write_str(&format!("{prompt}: "))?;
        let answer = term.read_secure_line().map_err(Self::read_error)?;
        // The Enter that ended it was not echoed either.
        term.write_line("")?;
        Ok(answer)
    }
}

/// The second entry's prompt: the question without the aside it ends with, if any (`Passphrase
/// to protect this stack's secrets (again)`, not `… (choose one; it is not stored) (again)`).
fn again_of(question: &str) -> String {
    let short = question
        .strip_suffix(')')
        .and_then(|q| q.rfind(" (").map(|at| &q[..at]))
        .unwrap_or(question);
    format!("{short} (again)")
}

/// What an empty answer to a question without a default is told (after `error: `, as the line
/// editor says what it refuses, so every question says it alike).
const REQUIRED: &str = "an answer is required (Ctrl-C stops: nothing is written)";

/// The terminal as it was before the questions (echo back on), and what was left undone.
#[cfg(unix)]
fn leave(saved: Option<&nix::sys::termios::Termios>, said: &str) {
    if let Some(saved) = saved {
        let _ = nix::sys::termios::tcsetattr(std::io::stdin(), nix::sys::termios::SetArg::TCSANOW, saved);
    }
    crate::report::info(&format!("\ninterrupted: {said}"));
}

#[cfg(not(unix))]
fn leave(_: Option<&()>, said: &str) {
    crate::report::info(&format!("\ninterrupted: {said}"));
}

impl Ask for Terminal {
    fn text(
        &mut self,
        question: &str,
        default: Option<&str>,
        check: &super::questions::AnswerCheck<'_>,
    ) -> std::io::Result<String> {
        if self.plain {
            let prompt = match default {
                Some(d) => format!("{question} [{d}]: "),
                None => format!("{question}: "),
            };
            loop {
                let typed = Self::line(&prompt)?;
                let answer = match default {
                    Some(d) if typed.is_empty() => d.to_string(),
                    _ => typed,
                };
                if answer.is_empty() {
                    crate::report::info(&format!("error: {REQUIRED}"));
                    continue;
                }
                match check(&answer) {
                    Ok(()) => return Ok(answer),
                    Err(e) => crate::report::info(&format!("error: {e}")),
                }
            }
        }
        // An empty answer with no default is refused with the reason, not asked again in silence.
        let mut input = Input::<String>::with_theme(&SimpleTheme)
            .with_prompt(question)
            .allow_empty(default.is_none())
            .validate_with(|a: &String| {
                if a.is_empty() {
                    Err(REQUIRED.to_string())
                } else {
                    check(a)
                }
            });
        if let Some(d) = default {
            input = input.default(d.to_string());
        }
        input.interact_text().map_err(Self::io)
    }

    fn hidden(&mut self, question: &str, default: Option<&str>, confirm: bool) -> std::io::Result<String> {
        let prompt = match default {
            Some(d) => format!("{question} [{d}]"),
            None => question.to_string(),
        };
        let again = again_of(question);
        let say = |line: &str| console::Term::stderr().write_line(line);
        loop {
            let first = self.hidden_entry(&prompt)?;
            if first.is_empty() {
                // The default is what the provider file says, in the open: taking it needs no
                // second entry, and it is no secret of this site.
                let Some(d) = default else {
                    say(&format!("error: {REQUIRED}"))?;
                    continue;
                };
                say(
                    "took the default, which the provider file shows to anyone: choose your own for \
                     anything but a demo (docs/configuration.md says how to change a stored secret)",
                )?;
                return Ok(d.to_string());
            }
            if !confirm || self.hidden_entry(&again)? == first {
                return Ok(first);
            }
            say("The two entries differ: type it again.")?;
        }
    }

    /// A whole line, as pulumi and terraform read it: `yes⏎` is one answer (a single key read
    /// would take the `y` and leave `es` for the shell after the run); anything but yes or no
    /// is asked again.
    fn confirm(&mut self, question: &str) -> std::io::Result<bool> {
        loop {
            match Self::line(&format!("{question} [y/N] "))?
                .trim()
                .to_lowercase()
                .as_str()
            {
                "y" | "yes" => return Ok(true),
                "" | "n" | "no" => return Ok(false),
                _ => {
                    let _ = console::Term::stderr().write_line("Answer yes or no (Enter: no).");
                }
            }
        }
    }

    fn finished(&mut self) {
        // Ctrl-C is the runner's own again (from here on, something may have been written).
        self.guard = None;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_second_entry_leaves_out_the_questions_aside() {
        assert_eq!(
            super::again_of("Passphrase to protect this stack's secrets (choose one; it is not stored)"),
            "Passphrase to protect this stack's secrets (again)"
        );
        assert_eq!(
            super::again_of("App database password"),
            "App database password (again)"
        );
    }
}
