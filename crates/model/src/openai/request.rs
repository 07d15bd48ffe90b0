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

use std::borrow::Cow;

use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use serde_json::Value;

use crate::types::{ContentBlock, Message, ModelRequest, Role, ToolSpec};

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

/// The JSON body of one streaming Chat Completions request as a `Value` (tests); the provider
/// sends [`encode`]'s bytes, which are the same JSON.
pub fn request_body(req: &ModelRequest, include_usage: bool, max_field: MaxTokensField) -> Value {
    encode(req, include_usage, max_field)
        .ok()
        .and_then(|(bytes, _)| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null)
}

/// The compact JSON body of one streaming Chat Completions request, serialized straight from
/// the typed request, and the number of characters of its `messages` and `tools` (what the
/// usage estimate counts when the server reports no usage).
///
/// Key order: `model`, `messages`, `tools` (omitted when empty), the token cap field,
/// `stream: true`, `stream_options` (with `include_usage`).
pub(crate) fn encode(
    req: &ModelRequest,
    include_usage: bool,
    max_field: MaxTokensField,
) -> serde_json::Result<(Vec<u8>, usize)> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"{\"model\":");
    serde_json::to_writer(&mut out, &req.model)?;
    out.extend_from_slice(b",\"messages\":");
    let start = out.len();
    serde_json::to_writer(&mut out, &Messages(req))?;
    let mut prompt_chars = char_count(&out[start..]);
    if !req.tools.is_empty() {
        out.extend_from_slice(b",\"tools\":");
        let start = out.len();
        serde_json::to_writer(&mut out, &Tools(&req.tools))?;
        prompt_chars += char_count(&out[start..]);
    }
    out.push(b',');
    serde_json::to_writer(&mut out, max_field.as_str())?;
    out.push(b':');
    serde_json::to_writer(&mut out, &req.max_tokens)?;
    out.extend_from_slice(b",\"stream\":true");
    if include_usage {
        out.extend_from_slice(b",\"stream_options\":{\"include_usage\":true}");
    }
    out.push(b'}');
    if req.thinking.is_some() {
        tracing::debug!("thinking_budget_tokens has no Chat Completions equivalent; not sent");
    }
    Ok((out, prompt_chars))
}

/// Characters (not bytes) of UTF-8 text.
fn char_count(utf8: &[u8]) -> usize {
    utf8.iter().filter(|b| (**b & 0xC0) != 0x80).count()
}

/// The `tools` array.
struct Tools<'a>(&'a [ToolSpec]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|t| ToolEntry {
            ty: "function",
            function: ToolFunction {
                name: &t.name,
                description: &t.description,
                parameters: &t.input_schema,
            },
        }))
    }
}

#[derive(Serialize)]
struct ToolEntry<'a> {
    #[serde(rename = "type")]
    ty: &'static str,
    function: ToolFunction<'a>,
}

#[derive(Serialize)]
struct ToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// `{"role","content"}` (system and user messages).
#[derive(Serialize)]
struct TextMessage<'a> {
    role: &'static str,
    content: &'a str,
}

/// One tool result.
#[derive(Serialize)]
struct ToolMessage<'a> {
    role: &'static str,
    tool_call_id: &'a str,
    content: &'a str,
}

/// One assistant message: its text (null when none) and its tool calls.
#[derive(Serialize)]
struct AssistantMessage<'a> {
    role: &'static str,
    content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall<'a>>,
}

/// A tool call; `arguments` is the input as a JSON string.
#[derive(Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    ty: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: String,
}

/// The `messages` array: system first, then the conversation.
struct Messages<'a>(&'a ModelRequest);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let req = self.0;
        let mut seq = s.serialize_seq(None)?;
        if !req.system.is_empty() {
            seq.serialize_element(&TextMessage {
                role: "system",
                content: &req.system,
            })?;
        }
        for msg in &req.messages {
            match msg.role {
                Role::User => {
                    let mut texts: Vec<&str> = Vec::new();
                    for b in &msg.content {
                        match b {
                            ContentBlock::ToolResult {
                                tool_use_id,
                                content,
                                is_error,
                            } => {
                                let content: Cow<'_, str> =
                                    if *is_error && !content.starts_with("Error") {
                                        Cow::Owned(format!("Error: {content}"))
                                    } else {
                                        Cow::Borrowed(content)
                                    };
                                seq.serialize_element(&ToolMessage {
                                    role: "tool",
                                    tool_call_id: tool_use_id,
                                    content: &content,
                                })?;
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
                        seq.serialize_element(&TextMessage {
                            role: "user",
                            content: &texts.join("\n"),
                        })?;
                    }
                }
                Role::Assistant => {
                    if let Some(m) = assistant_message(msg) {
                        seq.serialize_element(&m)?;
                    }
                }
            }
        }
        seq.end()
    }
}

/// `None` when the message has neither text nor tool calls (thinking and server blocks have
/// no Chat Completions form).
fn assistant_message(msg: &Message) -> Option<AssistantMessage<'_>> {
    let mut texts: Vec<&str> = Vec::new();
    let mut tool_calls = Vec::new();
    for b in &msg.content {
        match b {
            ContentBlock::Text { text, .. } => texts.push(text),
            ContentBlock::ToolUse { id, name, input } => tool_calls.push(ToolCall {
                id,
                ty: "function",
                function: CallFunction {
                    name,
                    arguments: input.to_string(),
                },
            }),
            _ => {}
        }
    }
    if texts.is_empty() && tool_calls.is_empty() {
        return None;
    }
    Some(AssistantMessage {
        role: "assistant",
        content: (!texts.is_empty()).then(|| texts.join("\n")),
        tool_calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            }]
            .into(),
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
        let (bytes, chars) = encode(&req, false, MaxTokensField::MaxCompletionTokens).unwrap();
        // Characters of `messages` and `tools` as JSON, as the usage estimate counts them.
        let expected =
            v["messages"].to_string().chars().count() + v["tools"].to_string().chars().count();
        assert_eq!(chars, expected);
        assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), v);
    }
}
