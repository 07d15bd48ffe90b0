//! The Grep tool. (Implemented by the tools work.)

use serde_json::Value;

use super::{Tool, ToolContext, ToolFatal, ToolOutput};

/// The Grep tool.
pub struct GrepTool;

#[async_trait::async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &'static str {
        "Grep"
    }

    fn description(&self) -> &'static str {
        "Grep"
    }

    fn input_schema(&self) -> Value {
        serde_json::json!({"type": "object"})
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        false
    }

    fn validate(&self, _input: &Value, _ctx: &ToolContext) -> Result<(), String> {
        Ok(())
    }

    async fn call(&self, _input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        Ok(ToolOutput::error("not implemented"))
    }
}
