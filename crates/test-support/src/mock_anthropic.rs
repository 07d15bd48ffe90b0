//! The mock Anthropic Messages API: a [`MockServer`] answering `POST /v1/messages` from a
//! script of [`MockTurn`]s, checking every request against the API's invariants
//! ([`crate::invariants`]), plus accessors for the Messages request body.

use std::ops::Deref;

use serde_json::{Value, json};

use crate::invariants::check_request;
use crate::mock_server::{Api, CapturedRequest, MockServer};
use crate::mock_turn::MockTurn;
use crate::model_server::ModelServer;

/// Per-mock options: which invariant checks to skip, for deliberately odd cases.
#[derive(Debug, Clone)]
pub struct MockOptions {
    ignored: Vec<String>,
    invariants: bool,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            ignored: Vec::new(),
            invariants: true,
        }
    }
}

impl MockOptions {
    /// All checks on.
    pub fn new() -> Self {
        Self::default()
    }

    /// Do not record violations with this code (see [`crate::invariants`] for the codes).
    pub fn ignore(mut self, code: &str) -> Self {
        self.ignored.push(code.to_string());
        self
    }

    /// Do not check request invariants at all (the route and script overruns are still
    /// checked).
    pub fn no_invariants(mut self) -> Self {
        self.invariants = false;
        self
    }
}

/// A running mock Anthropic server; the [`MockServer`] methods (`url`, `request`,
/// `assert_clean`, ...) come through `Deref`. Dropping it shuts the server down.
pub struct MockAnthropic(MockServer);

impl MockAnthropic {
    /// Start a mock that answers request N with `script[N]`, all invariant checks on.
    pub fn start(script: Vec<MockTurn>) -> MockAnthropic {
        Self::start_with(script, MockOptions::default())
    }

    /// Start a mock at which each of `tasks` tasks has the conversation `script`, in whatever
    /// order their requests arrive ([`MockServer::start_each`]).
    pub fn start_each(script: Vec<MockTurn>, tasks: usize) -> MockAnthropic {
        MockAnthropic(MockServer::start_each(
            Self::api(MockOptions::default()),
            script,
            tasks,
        ))
    }

    /// Start a mock with options (e.g. `MockOptions::new().ignore("empty_text")`).
    pub fn start_with(script: Vec<MockTurn>, options: MockOptions) -> MockAnthropic {
        MockAnthropic(MockServer::start(Self::api(options), script))
    }

    fn api(options: MockOptions) -> Api {
        let check: Option<crate::mock_server::Check> = if options.invariants {
            Some(Box::new(check_request))
        } else {
            None
        };
        Api {
            name: "Anthropic",
            route: "/v1/messages",
            check,
            ignored: options.ignored,
            error_body: |message| {
                json!({"type": "error", "error": {"type": "mock_error", "message": message}})
                    .to_string()
            },
        }
    }
}

impl ModelServer for MockAnthropic {
    fn runner_env(&self) -> Vec<(&'static str, String)> {
        vec![("ANTHROPIC_BASE_URL", self.url())]
    }
}

impl Deref for MockAnthropic {
    type Target = MockServer;

    fn deref(&self) -> &MockServer {
        &self.0
    }
}

/// Accessors for a Messages API request body.
impl CapturedRequest {
    /// `body.messages` (empty if missing).
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The last message, if any.
    pub fn last_message(&self) -> Option<&Value> {
        self.messages().last()
    }

    /// The `tool_result` blocks of the last message.
    pub fn tool_results(&self) -> Vec<&Value> {
        self.last_message()
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .map(|bs| {
                bs.iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `tool_result` answering `tool_use_id`, anywhere in the conversation.
    pub fn tool_result(&self, tool_use_id: &str) -> Option<&Value> {
        self.messages()
            .iter()
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
            .find(|b| {
                b.get("type").and_then(Value::as_str) == Some("tool_result")
                    && b.get("tool_use_id").and_then(Value::as_str) == Some(tool_use_id)
            })
    }

    /// The text of a tool_result's content (string content, or its text parts joined by `\n`).
    pub fn tool_result_text(&self, tool_use_id: &str) -> Option<String> {
        let c = self.tool_result(tool_use_id)?.get("content")?;
        Some(match c {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
    }

    /// The system prompt as text (string, or text blocks joined by `\n`).
    pub fn system_text(&self) -> String {
        match self.body.get("system") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(bs)) => bs
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }

    /// Names of the offered tools, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str).map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// All text of message `i` (string content or text blocks joined by `\n`).
    pub fn message_text(&self, i: usize) -> String {
        match self.messages().get(i).and_then(|m| m.get("content")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(bs)) => bs
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }
}
