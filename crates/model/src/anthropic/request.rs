//! runner's [`ModelRequest`] → the Anthropic Messages request body, serialized straight from
//! the typed request (no intermediate `serde_json::Value` tree).
//!
//! Key order: `model`, `max_tokens`, `system` (omitted when empty), `messages`, `tools`
//! (omitted when empty), `stream: true`, `thinking` (when set). Blocks are written as
//! [`ContentBlock::to_value`] writes them. For Bedrock and Vertex ([`Platform`]) `model` gives
//! way to `anthropic_version` (the model is in the URL), and Bedrock sends no `stream`.
//!
//! With prompt caching on, `cache_control: {"type":"ephemeral"}` breakpoints are added: the
//! system prompt (sent as one text block), the last tool, and the last cacheable block of the
//! last message (thinking, redacted thinking and empty text blocks cannot carry one; they are
//! skipped). The API looks for an earlier cache write only about 20 blocks back from a
//! breakpoint, so after a wide turn (ten parallel tool calls and their results are over twenty
//! blocks) the last-message breakpoint cannot reach the previous request's write and the whole
//! conversation would be written to the cache again. So when more than [`BRIDGE_AFTER_BLOCKS`]
//! blocks follow the previous request's last block (the last cacheable block before the latest
//! assistant message), it gets the fourth breakpoint the API allows, where the previous write
//! is found exactly. Breakpoints exist only in the bytes sent: the stored messages,
//! transcripts and cassette digests never see them.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use crate::types::{
    ContentBlock, Ephemeral, Message, ModelRequest, Role, ToolSpec, serialize_block,
};

/// The body of one streaming Messages request; serialize it with serde.
#[derive(Debug, Clone, Copy)]
pub struct RequestBody<'a> {
    req: &'a ModelRequest,
    prompt_caching: bool,
    platform: Platform,
}

/// Where the Messages body goes: the Anthropic API, or a cloud platform serving the same
/// format with the model in the URL and an `anthropic_version` in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// The Anthropic API: `model` and `stream: true` in the body.
    Api,
    /// Amazon Bedrock (`InvokeModelWithResponseStream`): `anthropic_version` first, no `model`
    /// and no `stream` (the operation streams).
    Bedrock,
    /// Google Vertex AI (`streamRawPredict`): `anthropic_version` first, no `model`, and
    /// `stream: true`.
    Vertex,
}

impl Platform {
    /// The `anthropic_version` body field the platform requires, if any.
    pub fn anthropic_version(self) -> Option<&'static str> {
        match self {
            Platform::Api => None,
            Platform::Bedrock => Some("bedrock-2023-05-31"),
            Platform::Vertex => Some("vertex-2023-10-16"),
        }
    }
}

impl<'a> RequestBody<'a> {
    /// The body for `req`, with `cache_control` breakpoints when `prompt_caching` is set.
    pub fn new(req: &'a ModelRequest, prompt_caching: bool) -> Self {
        RequestBody {
            req,
            prompt_caching,
            platform: Platform::Api,
        }
    }

    /// The same body shaped for `platform`.
    pub fn for_platform(mut self, platform: Platform) -> Self {
        self.platform = platform;
        self
    }

    /// The compact JSON bytes sent to the API.
    pub fn to_vec(&self) -> serde_json::Result<Vec<u8>> {
        serde_json::to_vec(self)
    }
}

/// The JSON body of one streaming Messages request as a `Value` (tests, tools); the provider
/// sends [`RequestBody::to_vec`], which is the same JSON.
pub fn request_body(req: &ModelRequest, prompt_caching: bool) -> Value {
    serde_json::to_value(RequestBody::new(req, prompt_caching)).unwrap_or(Value::Null)
}

/// More blocks than this after the previous request's last block get it a breakpoint of its
/// own (the API's cache lookup reaches about 20 blocks back; a little margin).
pub(crate) const BRIDGE_AFTER_BLOCKS: usize = 18;

/// Whether a block can carry `cache_control`.
fn cacheable(b: &ContentBlock) -> bool {
    match b {
        ContentBlock::Text { text, .. } => !text.trim().is_empty(),
        ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => false,
        ContentBlock::ToolUse { .. } | ContentBlock::ToolResult { .. } => true,
        ContentBlock::Other(v) => v.is_object(),
    }
}

/// The last cacheable block of `messages[index]`: (message index, block index).
fn last_cacheable(messages: &[Message], index: usize) -> Option<(usize, usize)> {
    let block = messages.get(index)?.content.iter().rposition(cacheable)?;
    Some((index, block))
}

/// Where the message breakpoint goes: (message index, block index).
fn message_breakpoint(messages: &[Message]) -> Option<(usize, usize)> {
    last_cacheable(messages, messages.len().checked_sub(1)?)
}

/// Where the bridge breakpoint goes, if the request needs one: the previous request's last
/// block (the last cacheable block before the latest assistant message), when more than
/// [`BRIDGE_AFTER_BLOCKS`] blocks follow it.
fn bridge_breakpoint(messages: &[Message]) -> Option<(usize, usize)> {
    let assistant = messages.iter().rposition(|m| m.role == Role::Assistant)?;
    let (mi, bi) = last_cacheable(messages, assistant.checked_sub(1)?)?;
    let after = messages[mi].content.len() - bi - 1
        + messages[mi + 1..]
            .iter()
            .map(|m| m.content.len())
            .sum::<usize>();
    (after > BRIDGE_AFTER_BLOCKS).then_some((mi, bi))
}

impl Serialize for RequestBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let req = self.req;
        let mut m = s.serialize_map(None)?;
        match self.platform.anthropic_version() {
            Some(version) => m.serialize_entry("anthropic_version", version)?,
            None => m.serialize_entry("model", &req.model)?,
        }
        m.serialize_entry("max_tokens", &req.max_tokens)?;
        if !req.system.is_empty() {
            if self.prompt_caching {
                m.serialize_entry("system", &[CachedText(&req.system)])?;
            } else {
                m.serialize_entry("system", &req.system)?;
            }
        }
        let breakpoints = if self.prompt_caching {
            [
                bridge_breakpoint(&req.messages),
                message_breakpoint(&req.messages),
            ]
        } else {
            [None, None]
        };
        m.serialize_entry(
            "messages",
            &Messages {
                messages: &req.messages,
                breakpoints,
            },
        )?;
        if !req.tools.is_empty() {
            m.serialize_entry(
                "tools",
                &Tools {
                    tools: &req.tools,
                    cache_last: self.prompt_caching,
                },
            )?;
        }
        if self.platform != Platform::Bedrock {
            m.serialize_entry("stream", &true)?;
        }
        if let Some(thinking) = &req.thinking {
            m.serialize_entry("thinking", thinking)?;
        }
        m.end()
    }
}

/// A text block with a cache breakpoint (the system prompt).
struct CachedText<'a>(&'a str);

impl Serialize for CachedText<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("type", "text")?;
        m.serialize_entry("text", self.0)?;
        m.serialize_entry("cache_control", &Ephemeral)?;
        m.end()
    }
}

struct Messages<'a> {
    messages: &'a [Message],
    /// (message index, block index) of each message breakpoint (bridge, last message).
    breakpoints: [Option<(usize, usize)>; 2],
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.messages.len()))?;
        for (i, msg) in self.messages.iter().enumerate() {
            let cached = self
                .breakpoints
                .map(|b| b.and_then(|(mi, bi)| (mi == i).then_some(bi)));
            seq.serialize_element(&MessageBody { msg, cached })?;
        }
        seq.end()
    }
}

struct MessageBody<'a> {
    msg: &'a Message,
    /// Indexes of this message's blocks that carry a breakpoint.
    cached: [Option<usize>; 2],
}

impl Serialize for MessageBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        let role = match self.msg.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        m.serialize_entry("role", role)?;
        m.serialize_entry(
            "content",
            &Blocks {
                blocks: &self.msg.content,
                cached: self.cached,
            },
        )?;
        m.end()
    }
}

struct Blocks<'a> {
    blocks: &'a [ContentBlock],
    cached: [Option<usize>; 2],
}

impl Serialize for Blocks<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.blocks.len()))?;
        for (i, block) in self.blocks.iter().enumerate() {
            if self.cached.contains(&Some(i)) {
                seq.serialize_element(&CachedBlock(block))?;
            } else {
                seq.serialize_element(block)?;
            }
        }
        seq.end()
    }
}

struct CachedBlock<'a>(&'a ContentBlock);

impl Serialize for CachedBlock<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_block(self.0, true, s)
    }
}

struct Tools<'a> {
    tools: &'a [ToolSpec],
    cache_last: bool,
}

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.tools.len()))?;
        let last = self.tools.len().saturating_sub(1);
        for (i, tool) in self.tools.iter().enumerate() {
            seq.serialize_element(&Tool {
                tool,
                cached: self.cache_last && i == last,
            })?;
        }
        seq.end()
    }
}

struct Tool<'a> {
    tool: &'a ToolSpec,
    cached: bool,
}

impl Serialize for Tool<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3 + usize::from(self.cached)))?;
        m.serialize_entry("name", &self.tool.name)?;
        m.serialize_entry("description", &self.tool.description)?;
        m.serialize_entry("input_schema", &self.tool.input_schema)?;
        if self.cached {
            m.serialize_entry("cache_control", &Ephemeral)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req() -> ModelRequest {
        ModelRequest {
            model: "claude-x".into(),
            system: "sys".into(),
            messages: vec![
                Message::user_text("hi"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Thinking {
                            thinking: "t".into(),
                            signature: "s".into(),
                        },
                        ContentBlock::ToolUse {
                            id: "toolu_1".into(),
                            name: "Read".into(),
                            input: json!({"file_path": "a"}),
                        },
                    ],
                    id: Some("msg_1".into()),
                },
                Message {
                    role: Role::User,
                    content: vec![
                        ContentBlock::ToolResult {
                            tool_use_id: "toolu_1".into(),
                            content: "x".into(),
                            is_error: true,
                        },
                        ContentBlock::text("go on"),
                    ],
                    id: None,
                },
            ],
            tools: vec![
                ToolSpec {
                    name: "Read".into(),
                    description: "d".into(),
                    input_schema: json!({"type":"object"}),
                },
                ToolSpec {
                    name: "Glob".into(),
                    description: "g".into(),
                    input_schema: json!({"type":"object","properties":{}}),
                },
            ]
            .into(),
            max_tokens: 100,
            thinking: Some(json!({"type":"enabled","budget_tokens":1024})),
        }
    }

    /// The body as the old `Value`-tree builder made it (the byte-for-byte reference).
    fn reference(req: &ModelRequest) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("model".into(), req.model.clone().into());
        m.insert("max_tokens".into(), req.max_tokens.into());
        if !req.system.is_empty() {
            m.insert("system".into(), req.system.clone().into());
        }
        let msgs = req
            .messages
            .iter()
            .map(|msg| {
                let role = if msg.role == Role::User {
                    "user"
                } else {
                    "assistant"
                };
                json!({"role": role, "content": msg.content.iter().map(ContentBlock::to_value).collect::<Vec<_>>()})
            })
            .collect();
        m.insert("messages".into(), Value::Array(msgs));
        if !req.tools.is_empty() {
            let tools = req
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
                .collect();
            m.insert("tools".into(), Value::Array(tools));
        }
        m.insert("stream".into(), true.into());
        if let Some(t) = &req.thinking {
            m.insert("thinking".into(), t.clone());
        }
        Value::Object(m)
    }

    #[test]
    fn without_caching_bytes_equal_the_value_tree() {
        let mut r = req();
        r.messages[0].content.push(ContentBlock::Other(
            json!({"type":"server_tool_use","id":"s","z":1,"a":2}),
        ));
        let typed = RequestBody::new(&r, false).to_vec().unwrap();
        let tree = serde_json::to_vec(&reference(&r)).unwrap();
        assert_eq!(
            String::from_utf8(typed).unwrap(),
            String::from_utf8(tree).unwrap()
        );
        // Empty system and tools, no thinking.
        r.system.clear();
        r.tools = Default::default();
        r.thinking = None;
        let typed = RequestBody::new(&r, false).to_vec().unwrap();
        let tree = serde_json::to_vec(&reference(&r)).unwrap();
        assert_eq!(typed, tree);
    }

    #[test]
    fn breakpoints_on_system_last_tool_and_last_block() {
        let r = req();
        let v = request_body(&r, true);
        let eph = json!({"type":"ephemeral"});
        assert_eq!(
            v["system"],
            json!([{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}])
        );
        assert!(v["tools"][0].get("cache_control").is_none());
        assert_eq!(v["tools"][1]["cache_control"], eph);
        let msgs = v["messages"].as_array().unwrap();
        assert_eq!(msgs[2]["content"][1]["cache_control"], eph);
        assert!(msgs[2]["content"][0].get("cache_control").is_none());
        // Exactly three breakpoints in the whole body.
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(text.matches("cache_control").count(), 3);
        // Everything else is as without caching.
        let mut plain = request_body(&r, false);
        let mut v = v;
        v["system"] = plain["system"].take();
        v["tools"][1]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        v["messages"][2]["content"][1]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        plain["system"] = v["system"].clone();
        assert_eq!(v, plain);
        // The request itself is untouched.
        assert_eq!(r, req());
    }

    #[test]
    fn message_breakpoint_skips_uncacheable_blocks() {
        let mut r = req();
        r.system.clear();
        r.tools = Default::default();
        // The last message ends with thinking and an empty text: the tool_use gets it.
        r.messages.truncate(2);
        r.messages[1].content.swap(0, 1);
        r.messages[1].content.push(ContentBlock::text(" "));
        let v = request_body(&r, true);
        assert!(v.get("system").is_none());
        assert!(v.get("tools").is_none());
        let blocks = v["messages"][1]["content"].as_array().unwrap();
        assert_eq!(blocks[0]["type"], "tool_use");
        assert_eq!(blocks[0]["cache_control"], json!({"type":"ephemeral"}));
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(text.matches("cache_control").count(), 1);
        // Only thinking: no breakpoint at all.
        r.messages[1].content = vec![ContentBlock::Thinking {
            thinking: "t".into(),
            signature: "s".into(),
        }];
        let text = serde_json::to_string(&request_body(&r, true)).unwrap();
        assert!(!text.contains("cache_control"));
    }

    /// A conversation whose last turn made `calls` parallel tool calls.
    fn wide_turn(calls: usize) -> ModelRequest {
        let mut r = req();
        r.messages.truncate(1);
        let ids: Vec<String> = (0..calls).map(|i| format!("toolu_{i}")).collect();
        r.messages.push(Message {
            role: Role::Assistant,
            content: ids
                .iter()
                .map(|id| ContentBlock::ToolUse {
                    id: id.clone(),
                    name: "Read".into(),
                    input: json!({"file_path": id}),
                })
                .collect(),
            id: Some("msg_w".into()),
        });
        r.messages.push(Message {
            role: Role::User,
            content: ids
                .iter()
                .map(|id| ContentBlock::ToolResult {
                    tool_use_id: id.clone(),
                    content: "x".into(),
                    is_error: false,
                })
                .collect(),
            id: None,
        });
        r
    }

    #[test]
    fn a_wide_turn_gets_a_breakpoint_on_the_previous_requests_last_block() {
        // 11 calls and 11 results after the prompt: the lookup from the last result cannot
        // reach the prompt's cache write, so the prompt carries the fourth breakpoint.
        let v = request_body(&wide_turn(11), true);
        let eph = json!({"type":"ephemeral"});
        let msgs = v["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["content"][0]["cache_control"], eph);
        assert_eq!(msgs[2]["content"][10]["cache_control"], eph);
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(text.matches("cache_control").count(), 4, "{text}");
        // 9 calls (18 blocks after the prompt): the lookup reaches it; three breakpoints.
        let v = request_body(&wide_turn(9), true);
        assert!(
            v["messages"][0]["content"][0]
                .get("cache_control")
                .is_none()
        );
        assert_eq!(
            serde_json::to_string(&v)
                .unwrap()
                .matches("cache_control")
                .count(),
            3
        );
        // The bridge skips uncacheable blocks, and there is none without caching.
        let mut r = wide_turn(11);
        r.messages[0].content.push(ContentBlock::text(" "));
        let v = request_body(&r, true);
        assert_eq!(v["messages"][0]["content"][0]["cache_control"], eph);
        assert!(
            v["messages"][0]["content"][1]
                .get("cache_control")
                .is_none()
        );
        assert!(
            !serde_json::to_string(&request_body(&r, false))
                .unwrap()
                .contains("cache_control")
        );
    }

    #[test]
    fn unknown_block_keeps_its_fields_and_gets_one_breakpoint() {
        let mut r = req();
        r.messages[2].content.push(ContentBlock::Other(
            json!({"type":"x_future","b":1,"cache_control":{"type":"old"}}),
        ));
        let v = request_body(&r, true);
        assert_eq!(
            v["messages"][2]["content"][2],
            json!({"type":"x_future","b":1,"cache_control":{"type":"ephemeral"}})
        );
        // The stored block still has its own field.
        assert_eq!(
            r.messages[2].content[2].to_value()["cache_control"]["type"],
            "old"
        );
    }
}
