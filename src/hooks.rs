//! Hooks that run after a project's `up` succeeded.

/// Hook names the runner implements itself; any other hook is a script under `scripts/`.
pub const BUILTIN_HOOKS: &[&str] = &["kubeconfig-merge"];
