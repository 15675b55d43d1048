//! `charts`: the Helm charts the provider's programs install (project, chart, version, the
//! repository it comes from), and `charts mirror DIR`, a Helm repository of exactly those that a
//! site without the Internet serves as its `kubernetes:chart_mirror`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Map;

use super::write_result;
use crate::charts::fetch::Url;
use crate::charts::mirror::{self, Cluster, MirrorStep, SchemaSource};
use crate::charts::{self, Chart};
use crate::config::stackfile::{self, StackFile};
use crate::error::{RunnerError, exit};
use crate::report;
use crate::settings::Settings;

/// How `charts` prints its list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChartsFormat {
    Text,
    Json,
}

/// What `charts mirror` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct MirrorOptions {
    pub(crate) dir: PathBuf,
    pub(crate) from: Option<String>,
    pub(crate) cluster: Cluster,
}

/// The charts, and the stack file whose values they were read with (when there is one).
fn read(s: &Settings) -> Result<(Vec<Chart>, Option<StackFile>), RunnerError> {
    let provider = s.provider("charts")?;
    let file = match s.known_stack() {
        Some(stack) => {
            let path = stackfile::path(&s.ws.root, &stack);
            let file =
                StackFile::load(&path, &s.ws.show(&path)).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
            if file.is_new() {
                report::info(&format!(
                    "stack {stack} has no stack file yet ({}): the programs' own versions and repositories",
                    file.shown
                ));
                None
            } else {
                Some(file)
            }
        }
        None => None,
    };
    let empty = Map::new();
    let config = file.as_ref().map_or(&empty, |f| &f.config);
    let charts = charts::installed(&s.ws.root, &|p| s.ws.show(p), &provider.projects, config).map_err(|unknown| {
        RunnerError::failed(
            unknown.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"),
            "give the chart's name, version and repository as literals or `${key}`s of the program's config",
        )
    })?;
    Ok((charts, file))
}

/// `runner charts`.
pub(crate) fn list(s: &Settings, format: ChartsFormat) -> Result<i32, RunnerError> {
    let (charts, file) = read(s)?;
    match format {
        ChartsFormat::Json => {
            let mut text = serde_json::to_string_pretty(&charts).expect("charts serialize");
            text.push('\n');
            write_result(&text)?;
        }
        ChartsFormat::Text => {
            write_result(&table(&charts))?;
            if let Some(from) = charts.iter().find_map(|c| c.installed_from.as_deref()) {
                let file = file.as_ref().map_or_else(String::new, |f| format!(" in {}", f.shown));
                report::info(&format!(
                    "installed from {} (kubernetes:chart_mirror{file}), not from their own repositories",
                    crate::charts::fetch::hide_credentials(from)
                ));
            }
        }
    }
    Ok(exit::SUCCESS)
}

fn table(charts: &[Chart]) -> String {
    let rows: Vec<[String; 4]> = charts
        .iter()
        .map(|c| {
            [
                c.project.clone(),
                c.name.clone(),
                c.version.clone(),
                crate::charts::fetch::hide_credentials(&c.repository),
            ]
        })
        .collect();
    let head = ["PROJECT", "CHART", "VERSION", "REPOSITORY"].map(String::from);
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            rows.iter()
                .chain([&head])
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in [&head].into_iter().chain(&rows) {
        let _ = writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:<w2$}  {}",
            r[0],
            r[1],
            r[2],
            report::text::visible(&r[3]),
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
    }
    if charts.is_empty() {
        out = "no program of this provider installs a Helm chart\n".into();
    }
    out
}

/// `runner charts mirror DIR`.
pub(crate) fn mirror(s: &Settings, o: &MirrorOptions) -> Result<i32, RunnerError> {
    let shown = s.ws.show(&o.dir);
    let existing = mirror::prepare_dir(&o.dir, &shown)
        .map_err(|e| RunnerError::usage(format!("charts mirror {shown}: {e}"), e.fix()))?;
    let from = o.from.as_deref().map(Url::parse).transpose().map_err(|e| {
        RunnerError::usage(
            format!("--from {e}"),
            "give the http:// or https:// URL of a Helm repository (the folder of its index.yaml)",
        )
    })?;
    let (charts, file) = read(s)?;
    if charts.is_empty() {
        report::info("no program of this provider installs a Helm chart: nothing to mirror");
        return Ok(exit::SUCCESS);
    }
    let request = mirror::MirrorRequest {
        charts: &charts,
        from,
        cluster: &o.cluster,
    };
    let pulled = mirror::pull(&request, &mut |step| report::info(&said(&step)))
        .map_err(|f| RunnerError::failed(format!("cannot mirror {f}; nothing was written to {shown}"), f.fix))?;
    let header = [
        format!(
            "Made by `runner charts mirror` ({} charts of provider {}): serve this folder over HTTP and set",
            pulled.len(),
            s.provider("charts").map(|p| p.name).unwrap_or_default()
        ),
        "kubernetes:chart_mirror to its URL. Packages whose values schema pointed off the chart hold it".into(),
        "whole (see docs/charts.md); their digests are those of the packages here.".into(),
    ];
    mirror::write(&o.dir, &shown, existing, &pulled, &header).map_err(|e| {
        RunnerError::failed(
            format!("{e} (the packages written so far are whole; index.yaml is written last)"),
            e.fix(),
        )
    })?;
    let wrote = format!(
        "wrote {} and index.yaml to {shown}",
        crate::render::count(pulled.len(), "chart")
    );
    // A stack already installing from a mirror needs only this folder served there.
    report::info(
        &match (charts.iter().find_map(|c| c.installed_from.as_deref()), &file) {
            (Some(from), Some(file)) => format!(
                "{wrote}: the stack installs from {} (kubernetes:chart_mirror in {}), which must serve this folder",
                crate::charts::fetch::hide_credentials(from),
                file.shown
            ),
            _ => format!(
                "{wrote}: serve it over HTTP (`python3 -m http.server --directory {shown}`) and set \
             kubernetes:chart_mirror to its URL"
            ),
        },
    );
    Ok(exit::SUCCESS)
}

fn said(step: &MirrorStep) -> String {
    match step {
        MirrorStep::Pulled { chart, from } => format!("pulled {chart} from {from}"),
        MirrorStep::Resolved {
            chart,
            schema,
            document,
            definitions,
            source: SchemaSource::Fetched,
        } => format!("{chart}: {schema} refers to {document}: {definitions} definitions taken in from it"),
        MirrorStep::Resolved {
            chart,
            schema,
            document,
            definitions,
            source: SchemaSource::Cluster { cluster, why },
        } => format!(
            "{chart}: {schema} refers to {document}, which cannot be read ({why}): {definitions} definitions taken in \
             from the cluster's /openapi/v2 instead ({cluster}; int-or-string and quantities as string or integer, as \
             kubernetes-json-schema writes them)"
        ),
    }
}

/// `--kubeconfig`'s path as given (`~` expanded).
pub(crate) fn kubeconfig_path(given: &Path) -> PathBuf {
    crate::fs::expand_home(&given.to_string_lossy(), crate::fs::home().as_deref())
}
