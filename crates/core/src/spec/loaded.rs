//! A spec loaded from its file: the parsed spec with its paths resolved, and the file's text
//! kept so that any later error can point at the line it is about.

use std::path::PathBuf;

use super::locate::locate;
use super::types::TaskSpec;

/// The spec path an inline task reports (JUnit `file`, result `spec_path`).
pub const INLINE_PATH: &str = "<inline>";

/// A spec loaded and resolved against its file's location.
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    /// Path as given (for reports).
    pub path: PathBuf,
    /// Directory holding the spec (absolute).
    pub dir: PathBuf,
    /// The parsed spec.
    pub spec: TaskSpec,
    /// The prompt text (from `prompt` or `prompt_file`).
    pub prompt: String,
    /// Absolute workdir.
    pub workdir: PathBuf,
    /// Absolute additional directories.
    pub additional_directories: Vec<PathBuf>,
    /// Absolute cassette path, for replay.
    pub cassette: Option<PathBuf>,
    /// The checked structured-output JSON Schema (`output.schema` or `output.schema_file`).
    pub output_schema: Option<serde_json::Value>,
    /// 1-based line of the `name:` key (for annotations and JUnit `line`).
    pub name_line: usize,
    /// The spec file's text, kept so later errors can be positioned ([`LoadedSpec::locate`]).
    pub source: String,
}

impl LoadedSpec {
    /// The 1-based `(line, column)` where `key_path` (`limits.max_cost_usd`, `tools[2]`,
    /// `models["id"].field`) is written; the deepest written prefix, else `(1, 1)`.
    pub fn locate(&self, key_path: &str) -> (usize, usize) {
        locate(&self.source, key_path)
    }
}
