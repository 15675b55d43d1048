//! Integration tests: the runner binary, run in throw-away workspaces, as a user would.

#![allow(unreachable_pub, clippy::print_stderr)]

mod cache;
mod ci;
mod ci_examples;
mod cluster;
mod confirm;
mod day2;
mod engines;
mod environment;
mod errors;
mod estimates;
mod export;
mod export_hostile;
mod flags;
mod hostile;
mod journal;
mod kube;
mod kubeconfig;
mod links;
mod only;
mod passthrough;
mod pictures;
mod pipelines;
mod plan;
mod programs;
mod prompts;
mod reference;
mod reruns;
mod run;
mod starts;
mod stopping;
mod strict_programs;
mod support;
mod validate;
mod writes;
