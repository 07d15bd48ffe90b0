//! The TodoWrite tool: the task's todo list, kept in the session so a long unattended run
//! shows its plan (the list is in every call's structured result: transcript and stream-json).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::util::parse_input;
use super::{Tool, ToolContext, ToolFatal, ToolOutput};

/// One todo item (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// Present-continuous form shown while in progress.
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

#[derive(Debug, Deserialize)]
struct TodoInput {
    todos: Vec<Todo>,
}

/// The TodoWrite tool.
pub struct TodoWriteTool;

const DESCRIPTION: &str = "Create and update a structured todo list for this task. Use it for \
multi-step work to plan and to track progress: send the whole list each time, with exactly one \
item `in_progress` while you work on it and items marked `completed` as soon as they are done. \
The list is recorded in the run's transcript.";

#[async_trait::async_trait]
impl Tool for TodoWriteTool {
    fn name(&self) -> &'static str {
        "TodoWrite"
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The updated todo list",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "minLength": 1},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "activeForm": {"type": "string", "minLength": 1}
                        },
                        "required": ["content", "status", "activeForm"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        // It changes only runner's own state, never the workspace.
        true
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        false
    }

    fn needs_permission(&self) -> bool {
        false
    }

    fn validate(&self, input: &Value, _ctx: &ToolContext) -> Result<(), String> {
        let parsed: TodoInput = parse_input(&self.input_schema(), input)?;
        for (i, t) in parsed.todos.iter().enumerate() {
            if !matches!(t.status.as_str(), "pending" | "in_progress" | "completed") {
                return Err(format!(
                    "todos[{i}].status must be pending, in_progress or completed, not `{}`",
                    t.status
                ));
            }
            if t.content.trim().is_empty() {
                return Err(format!("todos[{i}].content must not be empty"));
            }
        }
        Ok(())
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        if let Err(e) = self.validate(&input, ctx) {
            return Ok(ToolOutput::error(format!("InputValidationError: {e}")));
        }
        let parsed: TodoInput = match parse_input(&self.input_schema(), &input) {
            Ok(p) => p,
            Err(e) => return Ok(ToolOutput::error(format!("InputValidationError: {e}"))),
        };
        let old = {
            let mut todos = ctx.todos.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::replace(&mut *todos, parsed.todos.clone())
        };
        let done = parsed
            .todos
            .iter()
            .filter(|t| t.status == "completed")
            .count();
        tracing::info!(
            total = parsed.todos.len(),
            completed = done,
            "todo list updated"
        );
        Ok(ToolOutput::ok(
            "Todos have been modified successfully. Keep using the todo list to track your progress, and proceed with the current task.",
            Some(json!({"oldTodos": old, "newTodos": parsed.todos})),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::util::test_support::ctx;

    #[tokio::test]
    async fn keeps_the_list_and_reports_old_and_new() {
        let (_dir, ctx) = ctx();
        let t = TodoWriteTool;
        let one =
            json!({"todos": [{"content": "a", "status": "in_progress", "activeForm": "Doing a"}]});
        let out = t.call(one, &ctx).await.unwrap();
        assert!(!out.is_error);
        let two =
            json!({"todos": [{"content": "a", "status": "completed", "activeForm": "Doing a"}]});
        let out = t.call(two, &ctx).await.unwrap();
        let s = out.structured.unwrap();
        assert_eq!(s["oldTodos"][0]["status"], "in_progress");
        assert_eq!(s["newTodos"][0]["status"], "completed");
        assert_eq!(ctx.todos.lock().unwrap().len(), 1);
        let bad = json!({"todos": [{"content": "a", "status": "maybe", "activeForm": "x"}]});
        assert!(t.validate(&bad, &ctx).is_err());
        assert!(t.validate(&json!({}), &ctx).is_err());
    }
}
