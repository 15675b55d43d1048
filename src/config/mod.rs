//! Configuration the runner reads before running: the environment file (and, later, the stack
//! configuration, prompts and secrets).

pub mod environment;
