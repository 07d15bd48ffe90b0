//! The Write tool. (Implemented by the tools work.)

use serde_json::Value;

use super::{Tool, ToolContext, ToolFatal, ToolOutput};

/// The Write tool.
pub struct WriteTool;

#[async_trait::async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &'static str {
        "Write"
    }

    fn description(&self) -> &'static str {
        "Write"
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
