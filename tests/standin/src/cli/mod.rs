//! The command line, as the real CLI's `pkg/cmd/pulumi` has it: its flags, its commands other
//! than the update operations, and the signals it answers.

pub(crate) mod args;
pub(crate) mod commands;
pub(crate) mod signals;
