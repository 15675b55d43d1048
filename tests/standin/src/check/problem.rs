//! What the checker returns: data, not text, so the stand-in can word a problem as the language
//! host does and `check-programs` as one line with what it was checked against.

use std::fmt;

use crate::program::diag::Severity;

/// One problem the checker found.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub severity: Severity,
    /// 1-based line in the program.
    pub line: usize,
    /// The engine's message.
    pub summary: String,
    /// The engine's detail (lines), empty when none.
    pub detail: String,
    pub against: Against,
    /// How to fix it, where one is known (`did you mean …?`): not the engine's words.
    pub fix: Option<String>,
}

/// What a problem was checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// A resource type, an object type or a function of an SDK (`sdk`: `@pulumi/aws@7.48.0`,
    /// or `built in` for the engine's own resources).
    Type {
        token: String,
        sdk: String,
    },
    /// What a package has: `the resource types of @pulumi/aws@7.48.0`.
    Package {
        what: &'static str,
        sdk: String,
    },
    ResourceOptions,
    InvokeOptions,
    /// The keys a resource declaration takes.
    ResourceKeys,
    /// The resources, variables and config this program declares.
    Names,
    BuiltIns,
    /// The project file's schema (the CLI's `project.json`), for `config:`.
    ProjectSchema,
}

impl fmt::Display for Against {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Against::Type { token, sdk } if sdk == BUILT_IN => write!(f, "{token} (built in)"),
            Against::Type { token, sdk } => write!(f, "{token} in {sdk}"),
            Against::Package { what, sdk } => write!(f, "the {what} of {sdk}"),
            Against::ResourceOptions => {
                f.write_str("the Pulumi YAML resource options (pulumi-yaml ast/template.go ResourceOptionsDecl)")
            }
            Against::InvokeOptions => {
                f.write_str("the Pulumi YAML invoke options (pulumi-yaml ast/template.go InvokeOptionsDecl)")
            }
            Against::ResourceKeys => f.write_str("the keys of a Pulumi YAML resource"),
            Against::Names => f.write_str("the names this program declares"),
            Against::BuiltIns => f.write_str("the Pulumi YAML built-in functions"),
            Against::ProjectSchema => f.write_str("the Pulumi project schema"),
        }
    }
}

/// The `sdk` of the engine's own resources (`Against::Type`).
pub(super) const BUILT_IN: &str = "built in";
