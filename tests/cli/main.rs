//! Integration tests: the runner binary, run in throw-away workspaces, as a user would.

#![allow(unreachable_pub, clippy::print_stderr)]

mod cache;
mod environment;
mod errors;
mod flags;
mod journal;
mod kubeconfig;
mod plan;
mod programs;
mod prompts;
mod run;
mod starts;
mod support;
mod validate;
mod writes;
