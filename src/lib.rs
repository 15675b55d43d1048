//! `runner`: stands up a Kubernetes platform from many small Pulumi projects, in dependency
//! order and in parallel, and tears it down again.
//!
//! Layers: `graph` (pure) → `plan` → execution → `report`. Providers are data (`provider`).

pub mod app;
pub mod cli;
pub mod config;
pub mod crosscheck;
pub mod diagnostic;
pub mod error;
pub mod exec;
pub mod graph;
pub mod hooks;
pub mod kubeconfig;
pub mod layer;
pub mod plan;
pub mod program;
pub mod provider;
pub mod pulumi;
pub mod render;
pub mod report;
pub mod run;
pub mod runstate;
pub mod setup;
pub mod validate;
pub mod workspace;
