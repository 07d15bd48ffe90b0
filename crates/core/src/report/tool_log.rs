//! One log line per tool call: the tool, what it was called on (the command, the file, the
//! pattern), whether it succeeded, failed or was denied (with the reason), and how long it
//! took — measured from the moment the call was known to the loop to its result. The human log
//! format shows it as `  ✓ Bash  cargo test --quiet  (12.4 s)`.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::events::{RunEvent, Sink};
use crate::log::human::TOOL_TARGET;
use crate::model::ContentBlock;

/// Longest call summary logged, in characters.
const MAX_SUMMARY_CHARS: usize = 100;

/// Logs each tool call of one task when its result arrives (a [`Sink`] of the task's events).
pub(crate) struct ToolLogSink {
    task: String,
    /// Paths under it are shown relative to it.
    workdir: PathBuf,
    /// Calls seen and not answered yet: id → (name, summary, since).
    open: HashMap<String, (String, String, Instant)>,
}

impl ToolLogSink {
    /// A sink for the task named `task`.
    pub(crate) fn new(task: &str, workdir: &Path) -> ToolLogSink {
        ToolLogSink {
            task: task.to_string(),
            workdir: workdir.to_path_buf(),
            open: HashMap::new(),
        }
    }

    /// The call's summary with paths under the workdir shown relative to it.
    fn shown(&self, tool: &str, input: &Value) -> String {
        let s = summary(tool, input);
        let dir = self.workdir.display().to_string();
        let s = s.strip_suffix(&format!(" in {dir}")).unwrap_or(&s);
        s.replace(&format!("{dir}/"), "")
    }

    fn seen(&mut self, block: &ContentBlock) {
        if let ContentBlock::ToolUse { id, name, input } = block
            && !self.open.contains_key(id)
        {
            let shown = self.shown(name, input);
            self.open
                .insert(id.clone(), (name.clone(), shown, Instant::now()));
        }
    }
}

impl Sink for ToolLogSink {
    fn emit(&mut self, event: &RunEvent) -> io::Result<()> {
        match event {
            // A streamed block may start running before the response ends.
            RunEvent::AssistantBlockStreamed { block, .. } => self.seen(block),
            RunEvent::AssistantResponse { blocks, .. } => {
                for b in blocks {
                    self.seen(&b.block);
                }
            }
            RunEvent::PermissionDenied(d) => {
                self.open.remove(&d.tool_use_id);
                tracing::warn!(
                    target: TOOL_TARGET,
                    task = %self.task,
                    tool = %d.tool_name,
                    input = %self.shown(&d.tool_name, &d.tool_input),
                    status = %"denied",
                    reason = %d.reason,
                    "tool call denied"
                );
            }
            RunEvent::ToolResult {
                block:
                    ContentBlock::ToolResult {
                        tool_use_id,
                        is_error,
                        content,
                    },
                ..
            } => {
                // A denied call's result was already logged as its denial.
                if let Some((name, input, since)) = self.open.remove(tool_use_id) {
                    let duration_ms = since.elapsed().as_millis() as u64;
                    if *is_error {
                        // Why it failed: the start of what the model was told.
                        tracing::info!(
                            target: TOOL_TARGET,
                            task = %self.task,
                            tool = %name,
                            input = %input,
                            status = %"error",
                            reason = %one_line(content),
                            duration_ms,
                            "tool call"
                        );
                    } else {
                        tracing::info!(
                            target: TOOL_TARGET,
                            task = %self.task,
                            tool = %name,
                            input = %input,
                            status = %"ok",
                            duration_ms,
                            "tool call"
                        );
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// What a call was made on, in one short line: Bash's command, the file of Read/Write/Edit, the
/// pattern of Glob/Grep, else the input as compact JSON.
pub(crate) fn summary(tool: &str, input: &Value) -> String {
    let field = |k: &str| input.get(k).and_then(Value::as_str);
    let text = match tool {
        "Bash" => field("command").map(str::to_string),
        "Read" | "Write" | "Edit" => field("file_path").map(str::to_string),
        "Glob" => field("pattern").map(|p| match field("path") {
            Some(dir) => format!("{p} in {dir}"),
            None => p.to_string(),
        }),
        "Grep" => field("pattern").map(|p| match field("path") {
            Some(dir) => format!("{p} in {dir}"),
            None => p.to_string(),
        }),
        "TodoWrite" => input
            .get("todos")
            .and_then(Value::as_array)
            .map(|t| format!("{} item{}", t.len(), if t.len() == 1 { "" } else { "s" })),
        _ => None,
    };
    let text = text.unwrap_or_else(|| match input {
        Value::Object(m) if m.is_empty() => String::new(),
        other => other.to_string(),
    });
    one_line(&text)
}

/// `text` on one line (whitespace runs collapsed), at most [`MAX_SUMMARY_CHARS`] characters.
fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= MAX_SUMMARY_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(MAX_SUMMARY_CHARS - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries() {
        assert_eq!(
            summary("Bash", &json!({"command": "cargo test \\\n  --quiet"})),
            "cargo test \\ --quiet"
        );
        assert_eq!(
            summary("Read", &json!({"file_path": "/w/src/lib.rs"})),
            "/w/src/lib.rs"
        );
        assert_eq!(
            summary("Grep", &json!({"pattern": "fn main", "path": "src"})),
            "fn main in src"
        );
        assert_eq!(summary("TodoWrite", &json!({"todos": [{}, {}]})), "2 items");
        assert_eq!(summary("Other", &json!({"a": 1})), "{\"a\":1}");
        let long = summary("Bash", &json!({"command": "x".repeat(300)}));
        assert_eq!(long.chars().count(), MAX_SUMMARY_CHARS);
        assert!(long.ends_with('…'));
    }
}
