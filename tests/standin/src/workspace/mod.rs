//! A project's workspace files as `sdk/go/common/workspace` reads them: the stack's
//! configuration file, and the provider versions the programs are pinned to.

pub mod pins;
pub(crate) mod stackconfig;
