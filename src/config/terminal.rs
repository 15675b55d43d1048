//! Questions at a terminal (on standard error, answers from the keyboard), with `dialoguer`.

use dialoguer::theme::SimpleTheme;
use dialoguer::{Input, Password};

use super::questions::Ask;
use crate::exec::signals::{self, OnInterrupt};

/// Asks at the terminal. While it lives, Ctrl-C restores the terminal (a hidden prompt turns
/// echo off) and ends the runner with exit 130, saying `nothing was written`.
pub(crate) struct Terminal {
    guard: Option<OnInterrupt>,
    #[cfg(unix)]
    saved: Option<nix::sys::termios::Termios>,
}

impl Terminal {
    pub(crate) fn new() -> Self {
        #[cfg(unix)]
        let saved = nix::sys::termios::tcgetattr(std::io::stdin()).ok();
        #[cfg(unix)]
        let restore = saved.clone();
        #[cfg(not(unix))]
        let restore = None;
        let guard = signals::hub().on_interrupt(move || leave(restore.as_ref()));
        Terminal {
            guard: Some(guard),
            #[cfg(unix)]
            saved,
        }
    }

    /// Ctrl-C while reading an answer: the terminal library may see it before the signal
    /// handler does; either way the runner ends the same way, exit 130.
    fn interrupted(&self) -> ! {
        #[cfg(unix)]
        leave(self.saved.as_ref());
        #[cfg(not(unix))]
        leave(None);
        std::process::exit(crate::error::exit::INTERRUPTED);
    }

    fn io(&self, e: dialoguer::Error) -> std::io::Error {
        let dialoguer::Error::IO(e) = e;
        if e.kind() == std::io::ErrorKind::Interrupted {
            self.interrupted();
        }
        e
    }
}

fn dumb_terminal() -> bool {
    std::env::var("TERM").is_ok_and(|t| t == "dumb")
}

/// The terminal as it was before the questions (echo back on), and what was left undone.
#[cfg(unix)]
fn leave(saved: Option<&nix::sys::termios::Termios>) {
    if let Some(saved) = saved {
        let _ = nix::sys::termios::tcsetattr(std::io::stdin(), nix::sys::termios::SetArg::TCSANOW, saved);
    }
    crate::report::info("\ninterrupted: nothing was written");
}

#[cfg(not(unix))]
fn leave(_: Option<&()>) {
    crate::report::info("\ninterrupted: nothing was written");
}

impl Default for Terminal {
    fn default() -> Self {
        Self::new()
    }
}

impl Ask for Terminal {
    fn text(
        &mut self,
        question: &str,
        default: Option<&str>,
        check: &dyn Fn(&str) -> Result<(), String>,
    ) -> std::io::Result<String> {
        let mut input = Input::<String>::with_theme(&SimpleTheme)
            .with_prompt(question)
            // A dumb terminal cannot redraw the question with its answer: it would look asked
            // twice, so the answer stays as typed.
            .report(!dumb_terminal())
            .validate_with(|a: &String| check(a));
        if let Some(d) = default {
            input = input.default(d.to_string());
        }
        input.interact_text().map_err(|e| self.io(e))
    }

    fn hidden(&mut self, question: &str, default: Option<&str>, confirm: bool) -> std::io::Result<String> {
        let prompt = match default {
            Some(d) => format!("{question} [{d}]"),
            None => question.to_string(),
        };
        let mut p = Password::with_theme(&SimpleTheme)
            .with_prompt(&prompt)
            .allow_empty_password(default.is_some());
        if confirm {
            p = p.with_confirmation(format!("{question} (again)"), "The two entries differ; enter it again.");
        }
        let answer = p.interact().map_err(|e| self.io(e))?;
        Ok(match default {
            Some(d) if answer.is_empty() => d.to_string(),
            _ => answer,
        })
    }

    fn confirm(&mut self, question: &str) -> std::io::Result<bool> {
        dialoguer::Confirm::with_theme(&SimpleTheme)
            .with_prompt(question)
            .default(false)
            .interact()
            .map_err(|e| self.io(e))
    }

    fn finished(&mut self) {
        // Ctrl-C is the runner's own again (from here on, something may have been written).
        self.guard = None;
    }
}
