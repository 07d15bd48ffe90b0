//! runner's [`ModelRequest`] → an OpenAI Chat Completions request body.
//!
//! * the system prompt → a leading `system` message;
//! * user text → a `user` message (text blocks joined by a newline);
//! * `tool_result` blocks → one `tool` message each with its `tool_call_id`, placed right after
//!   the assistant message that made the calls (failed calls are prefixed `Error: `, since Chat
//!   Completions has no `is_error`);
//! * assistant text + `tool_use` → one `assistant` message with `content` (null when there is
//!   no text) and `tool_calls` (`type: function`, arguments as a JSON string);
//! * thinking, redacted thinking and unknown blocks are dropped (Chat Completions has no place
//!   for them);
//! * tools → `{"type":"function","function":{"name","description","parameters"}}`.

use serde_json::{Map, Value, json};

use crate::model::types::{ContentBlock, Message, ModelRequest, Role};

/// Which field carries the output token cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_completion_tokens`: what api.openai.com wants (its reasoning models reject
    /// `max_tokens`).
    MaxCompletionTokens,
    /// `max_tokens`: what every compatible server (Ollama, vLLM, llama.cpp, LM Studio) reads.
    MaxTokens,
}

impl MaxTokensField {
    /// The JSON field name.
    pub fn as_str(&self) -> &'static str {
        match self {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        }
    }
}

/// The JSON body of one streaming Chat Completions request.
pub fn request_body(req: &ModelRequest, include_usage: bool, max_field: MaxTokensField) -> Value {
    let mut m = Map::new();
    m.insert("model".into(), req.model.clone().into());
    m.insert("messages".into(), Value::Array(messages(req)));
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    }
                })
            })
            .collect();
        m.insert("tools".into(), Value::Array(tools));
    }
    m.insert(max_field.as_str().into(), req.max_tokens.into());
    m.insert("stream".into(), true.into());
    if include_usage {
        m.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if req.thinking.is_some() {
        tracing::debug!("thinking_budget_tokens has no Chat Completions equivalent; not sent");
    }
    Value::Object(m)
}

/// The `messages` array: system first, then the conversation.
pub fn messages(req: &ModelRequest) -> Vec<Value> {
    let mut out = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        out.push(json!({"role": "system", "content": req.system}));
    }
    for msg in &req.messages {
        match msg.role {
            Role::User => user_messages(msg, &mut out),
            Role::Assistant => {
                if let Some(v) = assistant_message(msg) {
                    out.push(v);
                }
            }
        }
    }
    out
}

fn user_messages(msg: &Message, out: &mut Vec<Value>) {
    let mut texts: Vec<&str> = Vec::new();
    for b in &msg.content {
        match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let content = if *is_error && !content.starts_with("Error") {
                    format!("Error: {content}")
                } else {
                    content.clone()
                };
                out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
            }
            ContentBlock::Text { text, .. } => texts.push(text),
            other => {
                tracing::debug!(
                    block_type = other.type_name(),
                    "dropping a user block Chat Completions cannot carry"
                );
            }
        }
    }
    if !texts.is_empty() {
        out.push(json!({"role": "user", "content": texts.join("\n")}));
    }
}

fn assistant_message(msg: &Message) -> Option<Value> {
    let mut texts: Vec<&str> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    for b in &msg.content {
        match b {
            ContentBlock::Text { text, .. } => texts.push(text),
            ContentBlock::ToolUse { id, name, input } => calls.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": input.to_string()},
            })),
            // Thinking and server blocks have no Chat Completions form.
            _ => {}
        }
    }
    if texts.is_empty() && calls.is_empty() {
        return None;
    }
    let mut m = Map::new();
    m.insert("role".into(), "assistant".into());
    m.insert(
        "content".into(),
        if texts.is_empty() {
            Value::Null
        } else {
            texts.join("\n").into()
        },
    );
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(m))
}

/// Characters of everything the request sends as prompt (for the usage estimate).
pub fn prompt_chars(body: &Value) -> usize {
    let count = |v: Option<&Value>| v.map_or(0, |v| v.to_string().chars().count());
    count(body.get("messages")) + count(body.get("tools"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::types::ToolSpec;

    #[test]
    fn maps_messages_and_tools() {
        let req = ModelRequest {
            model: "gpt-x".into(),
            system: "sys".into(),
            messages: vec![
                Message::user_text("read a"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Thinking {
                            thinking: "t".into(),
                            signature: String::new(),
                        },
                        ContentBlock::text("reading"),
                        ContentBlock::ToolUse {
                            id: "call_1".into(),
                            name: "Read".into(),
                            input: json!({"file_path": "/w/a"}),
                        },
                        ContentBlock::ToolUse {
                            id: "call_2".into(),
                            name: "Glob".into(),
                            input: json!({"pattern": "*"}),
                        },
                    ],
                    id: Some("chatcmpl-1".into()),
                },
                Message {
                    role: Role::User,
                    content: vec![
                        ContentBlock::ToolResult {
                            tool_use_id: "call_1".into(),
                            content: "1\tx".into(),
                            is_error: false,
                        },
                        ContentBlock::ToolResult {
                            tool_use_id: "call_2".into(),
                            content: "denied".into(),
                            is_error: true,
                        },
                        ContentBlock::text("go on"),
                    ],
                    id: None,
                },
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::Thinking {
                        thinking: "only thinking".into(),
                        signature: String::new(),
                    }],
                    id: None,
                },
            ],
            tools: vec![ToolSpec {
                name: "Read".into(),
                description: "d".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_tokens: 100,
            thinking: None,
        };
        let v = request_body(&req, true, MaxTokensField::MaxTokens);
        assert_eq!(
            v,
            json!({
                "model": "gpt-x",
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "read a"},
                    {"role": "assistant", "content": "reading", "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"/w/a\"}"}},
                        {"id": "call_2", "type": "function", "function": {"name": "Glob", "arguments": "{\"pattern\":\"*\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "1\tx"},
                    {"role": "tool", "tool_call_id": "call_2", "content": "Error: denied"},
                    {"role": "user", "content": "go on"}
                ],
                "tools": [{"type": "function", "function": {"name": "Read", "description": "d", "parameters": {"type": "object"}}}],
                "max_tokens": 100,
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
        let v = request_body(&req, false, MaxTokensField::MaxCompletionTokens);
        assert!(v.get("stream_options").is_none());
        assert_eq!(v["max_completion_tokens"], 100);
        assert!(prompt_chars(&v) > 100);
    }
}
