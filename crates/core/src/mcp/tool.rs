//! An MCP server's tool as runner offers it: `mcp__<server>__<tool>` with the server's JSON
//! Schema, a [`DynTool`] whose calls touch what runner cannot see ([`Access::Other`]), so the
//! permission policy decides them by the rules that name the tool.

use std::sync::Arc;

use serde_json::Value;

use super::server::Server;
use crate::model::ToolSpec;
use crate::tools::{Access, CallError, CheckedCall, DynTool, ToolContext, ToolFatal, ToolOutput};

/// Longest tool name the model APIs accept.
const MAX_TOOL_NAME: usize = 64;

/// The name runner offers `tool` of `server` under: `mcp__<server>__<tool>`, with characters
/// the model APIs do not accept in tool names replaced by `_`; `None` when it is too long.
pub(crate) fn tool_name(server: &str, tool: &str) -> Option<String> {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("mcp__{server}__{clean}");
    (!clean.is_empty() && name.len() <= MAX_TOOL_NAME).then_some(name)
}

/// One tool of one server.
pub(crate) struct McpTool {
    /// `mcp__<server>__<tool>`.
    name: String,
    /// The server's own name for it.
    remote: String,
    spec: ToolSpec,
    server: Arc<Server>,
}

impl McpTool {
    /// The tool `t` of `server`, offered as `name`.
    pub(crate) fn new(name: String, t: &rmcp::model::Tool, server: Arc<Server>) -> McpTool {
        let description = t
            .description
            .as_deref()
            .or(t.title.as_deref())
            .unwrap_or("")
            .to_string();
        let input_schema = Value::Object((*t.input_schema).clone());
        McpTool {
            spec: ToolSpec {
                name: name.clone(),
                description,
                input_schema,
            },
            name,
            remote: t.name.to_string(),
            server,
        }
    }
}

impl DynTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn parse(&self, input: &Value, _ctx: &ToolContext) -> Result<Box<dyn CheckedCall>, CallError> {
        // The server checks its arguments against its schema; runner only needs an object.
        let Value::Object(arguments) = input else {
            return Err(CallError(format!(
                "the input for {} must be a JSON object, got {input}",
                self.name
            )));
        };
        Ok(Box::new(McpCall {
            server: self.server.clone(),
            tool: self.remote.clone(),
            arguments: arguments.clone(),
        }))
    }

    fn typed_schema(&self) -> Value {
        self.spec.input_schema.clone()
    }
}

/// One call of an MCP tool.
struct McpCall {
    server: Arc<Server>,
    tool: String,
    arguments: serde_json::Map<String, Value>,
}

#[async_trait::async_trait]
impl CheckedCall for McpCall {
    fn access(&self) -> &Access {
        &Access::Other
    }

    fn concurrency_safe(&self) -> bool {
        // The server's `readOnlyHint` is a hint from a program runner does not control.
        false
    }

    async fn run(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        Ok(self
            .server
            .call(&self.tool, self.arguments, &ctx.cancel)
            .await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_cleaned_and_bounded() {
        assert_eq!(
            tool_name("github", "create_issue").as_deref(),
            Some("mcp__github__create_issue")
        );
        assert_eq!(
            tool_name("fs", "read.file v2").as_deref(),
            Some("mcp__fs__read_file_v2")
        );
        assert_eq!(tool_name("fs", ""), None);
        assert_eq!(tool_name("fs", &"x".repeat(60)), None);
    }
}
