//! The live view on a terminal: one line per running project (spinner, elapsed time, the last
//! line of its output), finished projects above with their duration and result, and an overall
//! bar. Bars are drawn on standard error; everything else is printed through the bars so
//! nothing is torn.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use console::style;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::exec::{Event, Level, Status};
use crate::plan::Plan;
use crate::report::plain::duration;

pub(crate) struct Live {
    multi: MultiProgress,
    overall: ProgressBar,
    running: HashMap<String, ProgressBar>,
    started: HashMap<String, SystemTime>,
    spinner: ProgressStyle,
    width: usize,
    /// `-d`: unchanged projects get their line too.
    debug: bool,
}

impl Live {
    pub(crate) fn new(plan: &Plan<'_>, debug: bool) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10));
        let overall = multi.add(ProgressBar::new(plan.order.len() as u64));
        overall.set_style(
            ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} projects · {elapsed_precise} · {msg}")
                .expect("a valid template")
                .progress_chars("█▉▊▋▌▍▎▏ "),
        );
        overall.set_message(format!("{} · provider {}", plan.operation.as_str(), plan.provider.name));
        overall.enable_steady_tick(Duration::from_millis(200));
        let width = plan.order.iter().map(|&i| plan.name(i).len()).max().unwrap_or(0);
        Live {
            multi,
            overall,
            running: HashMap::new(),
            started: HashMap::new(),
            spinner: ProgressStyle::with_template(&format!(
                "{{spinner:.cyan}} {{prefix:<{width}.bold}} {{elapsed:>4}}  {{wide_msg:.dim}}"
            ))
            .expect("a valid template"),
            width,
            debug,
        }
    }

    pub(crate) fn event(&mut self, ev: &Event) {
        match ev {
            Event::Started { project, at, .. } => {
                let bar = self.multi.insert_before(&self.overall, ProgressBar::new_spinner());
                bar.set_style(self.spinner.clone());
                bar.set_prefix(project.clone());
                bar.enable_steady_tick(Duration::from_millis(120));
                self.running.insert(project.clone(), bar);
                self.started.insert(project.clone(), *at);
            }
            Event::Line { project, text, .. } => {
                if let Some(bar) = self.running.get(project) {
                    let t = text.trim();
                    if !t.is_empty() {
                        bar.set_message(t.to_string());
                    }
                }
            }
            Event::Note {
                project,
                level,
                message,
            } => {
                if *level != Level::Debug || self.debug {
                    let _ = self
                        .multi
                        .println(super::note_line(project.as_deref(), *level, message));
                }
            }
            Event::Finished {
                project,
                operation,
                result,
            } => {
                if let Some(bar) = self.running.remove(project) {
                    bar.finish_and_clear();
                    self.multi.remove(&bar);
                }
                let took = self
                    .started
                    .get(project)
                    .and_then(|s| result.ended.duration_since(*s).ok())
                    .map(|d| duration(d.as_secs_f64()))
                    .unwrap_or_default();
                let w = self.width;
                let line = match &result.status {
                    Status::Succeeded => {
                        style(format!("✔ {project:<w$} {took:>7}  {} succeeded", operation.as_str())).green()
                    }
                    Status::Failed => style(format!("✘ {project:<w$} {took:>7}  {} failed", operation.as_str()))
                        .red()
                        .bold(),
                    Status::TimedOut => style(format!("✘ {project:<w$} {took:>7}  {} timed out", operation.as_str()))
                        .red()
                        .bold(),
                    Status::Unchanged { .. } if !self.debug => {
                        self.overall.inc(1);
                        return;
                    }
                    other => style(format!(
                        "• {project:<w$} {:>7}  {}: {}",
                        "",
                        other.name(),
                        other.reason().unwrap_or_default()
                    ))
                    .dim(),
                };
                let _ = self.multi.println(line.to_string());
                self.overall.inc(1);
            }
        }
    }

    /// Clears the bars; the closing table is printed after.
    pub(crate) fn finish(&self) {
        for bar in self.running.values() {
            bar.finish_and_clear();
        }
        self.overall.finish_and_clear();
        let _ = self.multi.clear();
    }
}
