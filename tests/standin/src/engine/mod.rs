//! The update operations, as the engine runs them (`pkg/engine`), and what providers return
//! for the programs' resources and functions.

pub(crate) mod fakes;
pub(crate) mod operations;
