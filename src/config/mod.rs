//! Configuration the runner reads before running: the environment file, the shared stack
//! configuration, the questions for what it lacks, and the secrets.

pub mod environment;
pub mod questions;
pub mod stackfile;
pub mod store;
pub mod terminal;
