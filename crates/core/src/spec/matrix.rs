//! `matrix:` — one template spec expanded into many tasks (the expansion is in
//! [`super::expand`]).
//!
//! ```yaml
//! name: fix-{{crate}}          # or no placeholder: `fix[crate=core]`
//! matrix:
//!   - {crate: core}
//!   - {crate: cli}
//! # or: matrix: {glob: "crates/*"}   (parameters `path` and `basename`)
//! ```
//!
//! `{{param}}` is replaced in `name`, `prompt` (or the text of `prompt_file`, whose path may use
//! parameters too), `workdir`, each verify check's `name` and `run`, the `permissions` rules,
//! `git.branch`, and each hook's `command`, `args`, `matcher` and `if`. In `run` and in a hook's
//! shell `command` the value is shell-quoted. Each parameter is also exported to the checks as `RUNNER_PARAM_<NAME>`
//! (upper-cased). A `{{x}}` naming no parameter is an error at its file:line:col. Expansion
//! happens at load time, so every expanded task is validated before anything runs.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most tasks one matrix may expand into.
pub(crate) const MAX_MATRIX_TASKS: usize = 1_000;

/// Expand one template into many tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Matrix {
    /// One task per parameter map, e.g. `[{crate: core}, {crate: cli}]`.
    List(Vec<BTreeMap<String, ParamValue>>),
    /// One task per path matching a glob relative to the spec file (`.gitignore`d and hidden
    /// paths excluded), with parameters `path` (relative to the spec file) and `basename`. The
    /// glob may reach anywhere inside the git repository holding the spec (`../services/*`),
    /// never outside it (outside a repository: the spec's directory).
    Glob(GlobMatrix),
}

/// `matrix: {glob: PATTERN}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobMatrix {
    /// Glob relative to the spec file, e.g. `crates/*` or `../services/*` (`*` does not cross
    /// `/`; `**` does); it may not leave the repository holding the spec.
    pub glob: String,
}

/// A parameter value: a string, number or boolean (used as text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamValue {
    /// Text.
    String(String),
    /// A whole number.
    Int(i64),
    /// A number.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl ParamValue {
    /// The value as text, as it is substituted.
    pub(crate) fn text(&self) -> String {
        match self {
            ParamValue::String(s) => s.clone(),
            ParamValue::Int(i) => i.to_string(),
            ParamValue::Float(f) => f.to_string(),
            ParamValue::Bool(b) => b.to_string(),
        }
    }
}
