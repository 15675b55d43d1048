//! `runner`: stands up a Kubernetes platform from many small Pulumi projects, in dependency
//! order and in parallel, and tears it down again.
//!
//! Each folder is one concern, and every `use` points down this list: `app` (and `cli`) →
//! `commands` → `settings` → `pulumi` → `config` → `report`, `render`, `export` → `runstate` → `exec` →
//! `programs` → `plan` → `provider` → `graph` (pure) → `workspace` → `diagnostic`, `error`,
//! `fs`. Providers are data (`provider`); only `report` prints.

pub mod app;
mod cli;
mod commands;
mod config;
mod diagnostic;
mod error;
pub mod exec;
mod export;
mod fs;
pub mod graph;
pub mod plan;
mod programs;
pub mod provider;
mod pulumi;
mod render;
mod report;
mod runstate;
mod settings;
mod workspace;
