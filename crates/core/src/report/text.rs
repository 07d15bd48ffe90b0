//! The `text` output format.

use crate::events::RunResult;
use crate::report::json::error_texts;

/// What `text` prints for one task (expects an already redacted result).
///
/// With one task: the final answer (the structured output as compact JSON for a task with
/// `output:`), or on failure the error text (as `claude -p` prints its
/// failure text to stdout). With several (`multi`): a block `== NAME (outcome) ==` followed by
/// that. The string always ends with a newline.
pub fn render_text(result: &RunResult, multi: bool) -> String {
    let body = if result.outcome.is_error() {
        error_texts(result).join("\n")
    } else if let Some(v) = &result.structured_output {
        // A task with `output:`: its answer is the value.
        v.to_string()
    } else {
        result.result_text.clone()
    };
    let mut out = String::new();
    if multi {
        out.push_str(&format!(
            "== {} ({}) ==\n",
            result.task_name,
            result.outcome.name()
        ));
    }
    out.push_str(body.trim_end_matches('\n'));
    out.push('\n');
    out
}
