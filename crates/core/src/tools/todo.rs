//! The TodoWrite tool: the task's todo list, kept in the session so a long unattended run
//! shows its plan (the list is in every call's structured result: transcript and stream-json).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Access, CallError, Tool, ToolContext, ToolFatal, ToolOutput};

/// One todo item (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// Present-continuous form shown while in progress.
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

/// The TodoWrite tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct TodoInput {
    todos: Vec<Todo>,
}

/// The TodoWrite tool.
#[derive(Clone, Copy)]
pub(crate) struct TodoWriteTool;

const DESCRIPTION: &str = "Create and update a structured todo list for this task. Use it for \
multi-step work to plan and to track progress: send the whole list each time, with exactly one \
item `in_progress` while you work on it and items marked `completed` as soon as they are done. \
The list is recorded in the run's transcript.";

#[async_trait::async_trait]
impl Tool for TodoWriteTool {
    type Input = TodoInput;
    type Call = TodoInput;

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

    fn check(&self, parsed: TodoInput, _ctx: &ToolContext) -> Result<TodoInput, CallError> {
        for (i, t) in parsed.todos.iter().enumerate() {
            if !matches!(t.status.as_str(), "pending" | "in_progress" | "completed") {
                return Err(call_error!(
                    "todos[{i}].status must be pending, in_progress or completed, not `{}`",
                    t.status
                ));
            }
            if t.content.trim().is_empty() {
                return Err(call_error!("todos[{i}].content must not be empty"));
            }
        }
        Ok(parsed)
    }

    /// It changes only runner's own state, never the workspace.
    fn access(&self, _call: &TodoInput) -> Access {
        Access::Internal
    }

    fn concurrency_safe(&self, _call: &TodoInput) -> bool {
        false
    }

    async fn call(&self, parsed: TodoInput, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        let old = {
            let mut todos = ctx.session.todos.lock().unwrap_or_else(|e| e.into_inner());
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
    use crate::tools::util::test_support::{call, ctx, validate};

    #[tokio::test]
    async fn keeps_the_list_and_reports_old_and_new() {
        let (_dir, ctx) = ctx();
        let t = TodoWriteTool;
        let one =
            json!({"todos": [{"content": "a", "status": "in_progress", "activeForm": "Doing a"}]});
        let out = call(&t, one, &ctx).await.unwrap();
        assert!(!out.is_error);
        let two =
            json!({"todos": [{"content": "a", "status": "completed", "activeForm": "Doing a"}]});
        let out = call(&t, two, &ctx).await.unwrap();
        let s = out.structured.unwrap();
        assert_eq!(s["oldTodos"][0]["status"], "in_progress");
        assert_eq!(s["newTodos"][0]["status"], "completed");
        assert_eq!(ctx.session.todos.lock().unwrap().len(), 1);
        let bad = json!({"todos": [{"content": "a", "status": "maybe", "activeForm": "x"}]});
        assert!(validate(&t, &bad, &ctx).is_err());
        assert!(validate(&t, &json!({}), &ctx).is_err());
    }
}
