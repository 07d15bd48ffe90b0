//! The structured output of a run (`output:` in the spec) as one JSON value, for
//! `--output-file FILE` and the `structured_output` step output in GitHub Actions.
//!
//! One task: its value (`null` when it produced none). Several tasks: an object keyed by task
//! name (names are unique in a run), each the task's value or `null`.

use std::path::Path;

use serde_json::{Map, Value};

use crate::events::RunResult;

/// The run's structured output (see the module docs).
pub fn combined(results: &[RunResult]) -> Value {
    match results {
        [one] => one.structured_output.clone().unwrap_or(Value::Null),
        many => Value::Object(
            many.iter()
                .map(|r| {
                    (
                        r.task_name.clone(),
                        r.structured_output.clone().unwrap_or(Value::Null),
                    )
                })
                .collect::<Map<String, Value>>(),
        ),
    }
}

/// Whether any task produced structured output.
pub fn any(results: &[RunResult]) -> bool {
    results.iter().any(|r| r.structured_output.is_some())
}

/// Write [`combined`] to `path` as one line of JSON (replacing the file).
pub fn write_output_file(path: &Path, results: &[RunResult]) -> std::io::Result<()> {
    let mut text = serde_json::to_string(&combined(results)).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(path, text)
}
