//! `StructuredOutput`: the final-answer tool offered when a spec sets `output:` (Claude Code's
//! name for it). Its input schema is the spec's JSON Schema; a call is validated with
//! `jsonschema`, an invalid one is answered with every validation error (instance path and
//! message) so the model can correct it, and a valid one is kept as the task's
//! `structured_output`. The agent loop ends the run once a valid value is in
//! ([`StructuredOutputHandle::value`]) and fails it after too many misses
//! ([`StructuredOutputHandle::exhausted`]).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{Access, CallError, Tool, ToolContext, ToolFatal, ToolOutput};

/// The tool's name.
pub(crate) const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

/// The result subtype of a task whose structured output never validated.
pub(crate) const MAX_RETRIES_SUBTYPE: &str = "error_max_structured_output_retries";

/// Most validation errors listed in one tool_result.
const MAX_LISTED_ERRORS: usize = 20;

/// The reminder sent when the model ends its turn without calling the tool.
pub(crate) const REMINDER: &str = "You ended your turn without calling the StructuredOutput tool. This task's final answer must be given by calling StructuredOutput exactly once, with input that matches its schema. Call it now.";

/// The system prompt paragraph that tells the model how to finish.
pub(crate) const SYSTEM_PROMPT_NOTE: &str = "# Final answer\nThis task requires a structured final answer. When the work is done, finish by calling the StructuredOutput tool once with your answer as its input; the input must match the tool's JSON Schema. That call ends the run: do not reply with plain text instead. If the call is rejected, read the listed validation errors and call it again with corrected input.";

#[derive(Debug, Default)]
struct Slot {
    value: Option<Value>,
    misses: u32,
}

/// Shared state of one task's structured output: the accepted value and how many misses
/// (invalid calls, or turns ended without a call) there were. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct StructuredOutputHandle {
    slot: Arc<Mutex<Slot>>,
    max_retries: u32,
}

impl StructuredOutputHandle {
    /// A handle allowing `max_retries` misses before the task fails.
    pub(crate) fn new(max_retries: u32) -> Self {
        StructuredOutputHandle {
            slot: Arc::new(Mutex::new(Slot::default())),
            max_retries,
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Slot) -> R) -> R {
        let mut g = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    /// The accepted value, once a valid call was made.
    pub(crate) fn value(&self) -> Option<Value> {
        self.with(|s| s.value.clone())
    }

    /// Count one miss (an invalid call, or a turn that ended without a call).
    pub(crate) fn miss(&self) {
        self.with(|s| s.misses += 1);
    }

    /// Misses so far.
    pub(crate) fn misses(&self) -> u32 {
        self.with(|s| s.misses)
    }

    /// The configured retry limit.
    pub(crate) fn max_retries(&self) -> u32 {
        self.max_retries
    }

    /// Whether the misses went past `max_retries` (the task then fails).
    pub(crate) fn exhausted(&self) -> bool {
        self.misses() > self.max_retries
    }

    /// Forget the accepted value (a verify re-entry asks for a new answer); misses are kept.
    pub(crate) fn clear_value(&self) {
        self.with(|s| s.value = None);
    }

    fn accept(&self, value: Value) {
        self.with(|s| s.value = Some(value));
    }
}

/// The tool. Built per task from the spec's (already checked) schema.
pub(crate) struct StructuredOutputTool {
    schema: Value,
    validator: jsonschema::Validator,
    handle: StructuredOutputHandle,
}

impl StructuredOutputTool {
    /// A tool for `schema`, recording into `handle`. Fails when the schema does not compile
    /// (spec loading checks this first, so it only fails on a schema that bypassed it).
    pub(crate) fn new(schema: Value, handle: StructuredOutputHandle) -> Result<Self, CallError> {
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| format!("the output schema is not a usable JSON Schema: {e}"))?;
        Ok(StructuredOutputTool {
            schema,
            validator,
            handle,
        })
    }

    /// The handle the tool records into.
    pub(crate) fn handle(&self) -> StructuredOutputHandle {
        self.handle.clone()
    }

    /// Every validation error of `input`, as `path: message` lines (`(root)` for the root).
    pub(crate) fn errors(&self, input: &Value) -> Vec<String> {
        self.validator
            .iter_errors(input)
            .map(|e| {
                let path = e.instance_path().as_str();
                let path = if path.is_empty() { "(root)" } else { path };
                format!("{path}: {e}")
            })
            .collect()
    }
}

#[async_trait::async_trait]
impl Tool for StructuredOutputTool {
    type Input = Value;
    type Call = Value;

    fn name(&self) -> &'static str {
        STRUCTURED_OUTPUT_TOOL
    }

    fn description(&self) -> &'static str {
        "Use this tool to return your final response in the requested structured format. Call it exactly once, at the end, with input matching the schema; the call ends the task."
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn check(&self, input: Value, _ctx: &ToolContext) -> Result<Value, CallError> {
        Ok(input)
    }

    /// Schema validation happens in `call`, so a miss is counted exactly once.
    fn validates_own_input(&self) -> bool {
        true
    }

    fn access(&self, _call: &Value) -> Access {
        Access::Internal
    }

    async fn call(&self, input: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        let errors = self.errors(&input);
        if errors.is_empty() {
            self.handle.accept(input.clone());
            return Ok(ToolOutput::ok(
                "Structured output provided successfully",
                Some(input),
            ));
        }
        self.handle.miss();
        let n = errors.len();
        let mut text = format!(
            "Output does not match the required schema ({n} error{}):\n",
            if n == 1 { "" } else { "s" }
        );
        for e in errors.iter().take(MAX_LISTED_ERRORS) {
            text.push_str("- ");
            text.push_str(e);
            text.push('\n');
        }
        if n > MAX_LISTED_ERRORS {
            text.push_str(&format!("- … and {} more\n", n - MAX_LISTED_ERRORS));
        }
        let left = self
            .handle
            .max_retries
            .saturating_sub(self.handle.misses().saturating_sub(1));
        text.push_str(&format!(
            "Call StructuredOutput again with corrected input ({left} attempt{} left).",
            if left == 1 { "" } else { "s" }
        ));
        Ok(ToolOutput::error(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(max: u32) -> (StructuredOutputTool, StructuredOutputHandle) {
        let h = StructuredOutputHandle::new(max);
        let schema = json!({
            "type": "object",
            "properties": {"verdict": {"enum": ["pass", "fail"]}, "score": {"type": "integer"}},
            "required": ["verdict", "score"],
            "additionalProperties": false
        });
        (StructuredOutputTool::new(schema, h.clone()).unwrap(), h)
    }

    #[test]
    fn lists_each_error_with_its_path() {
        let (t, _) = tool(3);
        let errs = t.errors(&json!({"verdict": "maybe", "score": "high", "x": 1}));
        assert_eq!(errs.len(), 3, "{errs:?}");
        assert!(errs.iter().any(|e| e.starts_with("/verdict: ")), "{errs:?}");
        assert!(errs.iter().any(|e| e.starts_with("/score: ")), "{errs:?}");
        assert!(errs.iter().any(|e| e.starts_with("(root): ")), "{errs:?}");
        assert!(t.errors(&json!({"verdict": "pass", "score": 3})).is_empty());
    }

    #[test]
    fn misses_count_until_exhausted() {
        let h = StructuredOutputHandle::new(1);
        assert!(!h.exhausted());
        h.miss();
        assert!(!h.exhausted());
        h.miss();
        assert!(h.exhausted());
    }

    #[test]
    fn a_bad_schema_is_an_error_not_a_panic() {
        let h = StructuredOutputHandle::new(1);
        assert!(StructuredOutputTool::new(json!({"type": "object", "pattern": "("}), h).is_err());
    }
}
