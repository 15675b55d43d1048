//! Questions at a terminal (on standard error, answers from the keyboard), with `dialoguer`.

use dialoguer::theme::SimpleTheme;
use dialoguer::{Input, Password};

use super::questions::Ask;

pub struct Terminal;

fn io(e: dialoguer::Error) -> std::io::Error {
    match e {
        dialoguer::Error::IO(e) => e,
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
            .validate_with(|a: &String| check(a));
        if let Some(d) = default {
            input = input.default(d.to_string());
        }
        input.interact_text().map_err(io)
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
        let answer = p.interact().map_err(io)?;
        Ok(match default {
            Some(d) if answer.is_empty() => d.to_string(),
            _ => answer,
        })
    }
}
