//! Invariant checks the mock applies to every request it receives.
//!
//! Each violation carries a short `code` so a test can opt out of one deliberately broken
//! aspect ([`crate::MockOptions::ignore`]) without disabling the rest. Codes:
//!
//! | code | what is checked |
//! |---|---|
//! | `method_path` | `POST /v1/messages` |
//! | `header_api_key` | `x-api-key` present and non-empty |
//! | `header_version` | `anthropic-version: 2023-06-01` |
//! | `header_content_type` | `content-type` is `application/json` |
//! | `body_json` | body is a JSON object |
//! | `model` | `model` is a non-empty string |
//! | `max_tokens` | `max_tokens` is a positive integer |
//! | `stream` | `stream: true` |
//! | `messages` | `messages` is a non-empty array |
//! | `system_shape` | `system` is a string or an array of non-empty text blocks |
//! | `thinking_budget` | enabled thinking: `budget_tokens` ≥ 1024 and < `max_tokens` |
//! | `role` | every role is `user` or `assistant` |
//! | `first_user` | the first message is `user` |
//! | `roles_alternate` | no two consecutive messages share a role |
//! | `empty_content` | no message has empty content |
//! | `content_shape` | content is a string or an array of objects with a `type` |
//! | `empty_text` | no text block (or string content) is empty or whitespace-only |
//! | `block_role` | tool_use/thinking only in assistant messages, tool_result only in user ones |
//! | `tool_use_shape` | tool_use has a non-empty `id`, a `name` and an object `input` |
//! | `tool_use_caller` | tool_use blocks carry no `caller` field |
//! | `duplicate_tool_use_id` | tool_use ids are unique across the conversation |
//! | `tool_use_unanswered` | every tool_use is answered in the immediately following user message |
//! | `tool_result_order` | tool_result blocks come first in their message |
//! | `orphan_tool_result` | every tool_result answers a tool_use of the previous assistant message |
//! | `duplicate_tool_result` | no tool_use is answered twice |
//! | `thinking_signature` | thinking blocks carry a non-empty `signature` |
//! | `tools_shape` | `tools` is an array; each custom tool has name, description, object `input_schema` |
//! | `duplicate_tool` | tool names are unique |
//!
//! The mock itself adds `script_exhausted` (a request beyond the script) and `mock_internal`.

use std::collections::HashSet;
use std::fmt;

use serde_json::Value;

/// One broken invariant in one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// 1-based number of the request (in arrival order) that broke it.
    pub request: usize,
    /// Short machine-readable code (see the module docs).
    pub code: &'static str,
    /// What exactly was wrong.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "request #{}: [{}] {}",
            self.request, self.code, self.message
        )
    }
}

struct Out {
    request: usize,
    list: Vec<Violation>,
}

impl Out {
    fn push(&mut self, code: &'static str, message: impl Into<String>) {
        self.list.push(Violation {
            request: self.request,
            code,
            message: message.into(),
        });
    }
}

/// Check one request. `headers` names are lowercase; `body` is `None` when it is not JSON.
pub fn check_request(
    request: usize,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&Value>,
) -> Vec<Violation> {
    let mut out = Out {
        request,
        list: Vec::new(),
    };
    if method != "POST" || path != "/v1/messages" {
        out.push(
            "method_path",
            format!("expected POST /v1/messages, got {method} {path}"),
        );
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    match header("x-api-key") {
        None => out.push("header_api_key", "no x-api-key header"),
        Some(v) if v.trim().is_empty() => out.push("header_api_key", "x-api-key is empty"),
        Some(_) => {}
    }
    match header("anthropic-version") {
        Some("2023-06-01") => {}
        other => out.push(
            "header_version",
            format!("anthropic-version should be 2023-06-01, got {other:?}"),
        ),
    }
    match header("content-type") {
        Some(v) if v.starts_with("application/json") => {}
        other => out.push(
            "header_content_type",
            format!("content-type should be application/json, got {other:?}"),
        ),
    }
    match body {
        Some(Value::Object(_)) => check_body(&mut out, body.unwrap_or(&Value::Null)),
        Some(other) => out.push(
            "body_json",
            format!("body is JSON but not an object: {other}"),
        ),
        None => out.push("body_json", "body is not valid JSON"),
    }
    out.list
}

fn check_body(out: &mut Out, body: &Value) {
    match body.get("model") {
        Some(Value::String(s)) if !s.is_empty() => {}
        other => out.push(
            "model",
            format!("model should be a non-empty string, got {other:?}"),
        ),
    }
    let max_tokens = body.get("max_tokens").and_then(Value::as_u64);
    match max_tokens {
        Some(n) if n > 0 => {}
        _ => out.push(
            "max_tokens",
            format!(
                "max_tokens should be a positive integer, got {:?}",
                body.get("max_tokens")
            ),
        ),
    }
    if body.get("stream") != Some(&Value::Bool(true)) {
        out.push(
            "stream",
            format!("stream should be true, got {:?}", body.get("stream")),
        );
    }
    match body.get("system") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(blocks)) => {
            for (i, b) in blocks.iter().enumerate() {
                let ok = b.get("type").and_then(Value::as_str) == Some("text")
                    && b.get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| !t.trim().is_empty());
                if !ok {
                    out.push(
                        "system_shape",
                        format!("system[{i}] is not a non-empty text block: {b}"),
                    );
                }
            }
        }
        Some(other) => out.push(
            "system_shape",
            format!("system should be a string or array, got {other}"),
        ),
    }
    if let Some(thinking) = body.get("thinking")
        && thinking.get("type").and_then(Value::as_str) == Some("enabled")
    {
        match thinking.get("budget_tokens").and_then(Value::as_u64) {
            Some(b) if b >= 1024 && max_tokens.is_none_or(|m| b < m) => {}
            other => out.push(
                "thinking_budget",
                format!(
                    "thinking.budget_tokens should be >= 1024 and < max_tokens ({max_tokens:?}), got {other:?}"
                ),
            ),
        }
    }
    check_tools(out, body.get("tools"));
    match body.get("messages") {
        Some(Value::Array(msgs)) if !msgs.is_empty() => check_messages(out, msgs),
        other => out.push(
            "messages",
            format!(
                "messages should be a non-empty array, got {}",
                other.map_or("nothing".to_string(), |v| v.to_string())
            ),
        ),
    }
}

fn check_tools(out: &mut Out, tools: Option<&Value>) {
    let tools = match tools {
        None => return,
        Some(Value::Array(t)) => t,
        Some(other) => {
            out.push(
                "tools_shape",
                format!("tools should be an array, got {other}"),
            );
            return;
        }
    };
    let mut names = HashSet::new();
    for (i, t) in tools.iter().enumerate() {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            out.push("tools_shape", format!("tools[{i}] has no name"));
        } else if !names.insert(name.to_string()) {
            out.push("duplicate_tool", format!("tool `{name}` offered twice"));
        }
        // Server tools (`type: web_search_20250305`, ...) have no schema.
        if t.get("type")
            .and_then(Value::as_str)
            .is_some_and(|ty| ty != "custom")
        {
            continue;
        }
        if t.get("description")
            .and_then(Value::as_str)
            .is_none_or(|d| d.trim().is_empty())
        {
            out.push(
                "tools_shape",
                format!("tool `{name}` (tools[{i}]) has no description"),
            );
        }
        let schema_ok = t
            .get("input_schema")
            .is_some_and(|s| s.is_object() && s.get("type") == Some(&Value::from("object")));
        if !schema_ok {
            out.push(
                "tools_shape",
                format!(
                    "tool `{name}` (tools[{i}]) input_schema should be an object schema with type \"object\", got {:?}",
                    t.get("input_schema")
                ),
            );
        }
    }
}

fn blocks(m: &Value) -> &[Value] {
    m.get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn block_type(b: &Value) -> &str {
    b.get("type").and_then(Value::as_str).unwrap_or("")
}

fn tool_use_ids(m: &Value) -> Vec<&str> {
    blocks(m)
        .iter()
        .filter(|b| block_type(b) == "tool_use")
        .filter_map(|b| b.get("id").and_then(Value::as_str))
        .collect()
}

fn tool_result_ids(m: &Value) -> Vec<&str> {
    blocks(m)
        .iter()
        .filter(|b| block_type(b) == "tool_result")
        .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
        .collect()
}

fn check_messages(out: &mut Out, msgs: &[Value]) {
    let mut seen_tool_use_ids: HashSet<String> = HashSet::new();
    let mut prev_role: Option<&str> = None;
    for (i, m) in msgs.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if role != "user" && role != "assistant" {
            out.push(
                "role",
                format!("messages[{i}] has role {:?}", m.get("role")),
            );
        }
        if i == 0 && role != "user" {
            out.push("first_user", format!("messages[0] has role `{role}`"));
        }
        if prev_role == Some(role) {
            out.push(
                "roles_alternate",
                format!("messages[{}] and messages[{i}] are both `{role}`", i - 1),
            );
        }
        prev_role = Some(role);

        match m.get("content") {
            Some(Value::String(s)) => {
                if s.is_empty() {
                    out.push("empty_content", format!("messages[{i}] content is \"\""));
                } else if s.trim().is_empty() {
                    out.push(
                        "empty_text",
                        format!("messages[{i}] content is whitespace only: {s:?}"),
                    );
                }
            }
            Some(Value::Array(bs)) => {
                if bs.is_empty() {
                    out.push("empty_content", format!("messages[{i}] content is []"));
                }
                for (j, b) in bs.iter().enumerate() {
                    check_block(out, i, j, role, b, &mut seen_tool_use_ids);
                }
            }
            other => out.push(
                "content_shape",
                format!("messages[{i}] content should be a string or array, got {other:?}"),
            ),
        }

        // Pairing: tool_use in assistant i must be answered first thing in user i+1.
        if role == "assistant" {
            let uses = tool_use_ids(m);
            if !uses.is_empty() {
                match msgs.get(i + 1) {
                    None => out.push(
                        "tool_use_unanswered",
                        format!(
                            "messages[{i}] (the last message) has unanswered tool_use {uses:?}"
                        ),
                    ),
                    Some(next) => {
                        let answered = tool_result_ids(next);
                        for id in &uses {
                            if !answered.contains(id) {
                                out.push(
                                    "tool_use_unanswered",
                                    format!(
                                        "tool_use `{id}` in messages[{i}] has no tool_result in messages[{}]",
                                        i + 1
                                    ),
                                );
                            }
                        }
                    }
                }
            }
        }
        if role == "user" {
            let results = tool_result_ids(m);
            if !results.is_empty() {
                let prev_uses: Vec<&str> = match i.checked_sub(1).map(|p| &msgs[p]) {
                    Some(p) if p.get("role").and_then(Value::as_str) == Some("assistant") => {
                        tool_use_ids(p)
                    }
                    _ => Vec::new(),
                };
                let mut answered = HashSet::new();
                for id in results {
                    if !prev_uses.contains(&id) {
                        out.push(
                            "orphan_tool_result",
                            format!(
                                "tool_result for `{id}` in messages[{i}] answers no tool_use of the previous assistant message"
                            ),
                        );
                    }
                    if !answered.insert(id) {
                        out.push(
                            "duplicate_tool_result",
                            format!("tool_use `{id}` answered twice in messages[{i}]"),
                        );
                    }
                }
                let bs = blocks(m);
                let first_other = bs.iter().position(|b| block_type(b) != "tool_result");
                if let Some(k) = first_other
                    && bs[k..].iter().any(|b| block_type(b) == "tool_result")
                {
                    out.push(
                        "tool_result_order",
                        format!(
                            "messages[{i}] has a `{}` block before a tool_result; tool_result blocks must come first",
                            block_type(&bs[k])
                        ),
                    );
                }
            }
        }
    }
}

fn check_block(
    out: &mut Out,
    i: usize,
    j: usize,
    role: &str,
    b: &Value,
    seen_ids: &mut HashSet<String>,
) {
    let at = format!("messages[{i}].content[{j}]");
    let Some(ty) = b.get("type").and_then(Value::as_str) else {
        out.push("content_shape", format!("{at} has no string `type`: {b}"));
        return;
    };
    match ty {
        "text" => match b.get("text").and_then(Value::as_str) {
            Some(t) if !t.trim().is_empty() => {}
            other => out.push(
                "empty_text",
                format!("{at} is an empty or whitespace-only text block: {other:?}"),
            ),
        },
        "tool_use" => {
            if role != "assistant" {
                out.push(
                    "block_role",
                    format!("{at}: tool_use in a `{role}` message"),
                );
            }
            let id = b.get("id").and_then(Value::as_str).unwrap_or("");
            if id.is_empty() {
                out.push("tool_use_shape", format!("{at}: tool_use without an id"));
            } else if !seen_ids.insert(id.to_string()) {
                out.push(
                    "duplicate_tool_use_id",
                    format!("{at}: tool_use id `{id}` was used before"),
                );
            }
            if b.get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                out.push("tool_use_shape", format!("{at}: tool_use without a name"));
            }
            if !b.get("input").is_some_and(Value::is_object) {
                out.push(
                    "tool_use_shape",
                    format!(
                        "{at}: tool_use input is not an object: {:?}",
                        b.get("input")
                    ),
                );
            }
            if b.get("caller").is_some() {
                out.push(
                    "tool_use_caller",
                    format!("{at}: tool_use carries a `caller` field (strip it before resending)"),
                );
            }
        }
        "tool_result" if role != "user" => {
            out.push(
                "block_role",
                format!("{at}: tool_result in a `{role}` message"),
            );
        }
        "thinking" => {
            if role != "assistant" {
                out.push(
                    "block_role",
                    format!("{at}: thinking in a `{role}` message"),
                );
            }
            if b.get("signature")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                out.push(
                    "thinking_signature",
                    format!("{at}: thinking block without a signature"),
                );
            }
        }
        "redacted_thinking" if role != "assistant" => {
            out.push(
                "block_role",
                format!("{at}: redacted_thinking in a `{role}` message"),
            );
        }
        _ => {}
    }
}
