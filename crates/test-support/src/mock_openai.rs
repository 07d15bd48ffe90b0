//! A scripted mock of an OpenAI-compatible Chat Completions server on axum, for tests.
//!
//! The same [`MockServer`] as [`crate::MockAnthropic`], on `POST /v1/chat/completions`:
//! script turn N (a [`MockTurn`], so HTTP errors, chunking and delays work the same) answers
//! request N, and every request is checked against Chat Completions' invariants.
//!
//! Build turns with [`OaResp`]: `OaResp::new().text("hi").turn()`,
//! `OaResp::new().tool_call("call_1", "Read", json!({...})).turn()`.

use std::collections::HashSet;
use std::ops::Deref;

use serde_json::{Value, json};

use crate::invariants::Violation;
use crate::mock_server::{Api, CapturedRequest, MockServer};
use crate::mock_turn::MockTurn;
use crate::model_server::ModelServer;

/// Dummy key the OpenAI harness puts in `OPENAI_API_KEY`.
pub const DUMMY_OPENAI_KEY: &str = "sk-openai-test-dummy";

/// An OpenAI error body (`{"error":{"message","type","param","code"}}`) for `status`.
pub fn oa_error_body(status: u16) -> String {
    let (message, ty, code) = match status {
        401 => (
            "Incorrect API key provided: sk-opena*****ummy. You can find your API key at https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            json!("invalid_api_key"),
        ),
        429 => (
            "Rate limit reached for requests",
            "requests",
            json!("rate_limit_exceeded"),
        ),
        500 => (
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            Value::Null,
        ),
        _ => ("mock error", "invalid_request_error", Value::Null),
    };
    json!({"error": {"message": message, "type": ty, "param": null, "code": code}}).to_string()
}

/// An HTTP error turn with OpenAI's error body and an `x-request-id`.
pub fn oa_http_error(status: u16) -> MockTurn {
    MockTurn::Http {
        status,
        body: oa_error_body(status),
        headers: vec![("x-request-id".into(), format!("req_oa_{status}"))],
    }
}

/// Builds one streamed Chat Completions response as `chat.completion.chunk`s.
#[derive(Debug, Clone)]
pub struct OaResp {
    id: String,
    model: String,
    text: Vec<String>,
    calls: Vec<(String, String, String)>,
    interleave: bool,
    finish: String,
    usage: Option<(u64, u64)>,
}

impl Default for OaResp {
    fn default() -> Self {
        Self::new()
    }
}

impl OaResp {
    /// An empty response: model `gpt-mock`, usage 10/5, finish reason decided by content.
    pub fn new() -> Self {
        OaResp {
            id: "chatcmpl-mock".into(),
            model: "gpt-mock".into(),
            text: Vec::new(),
            calls: Vec::new(),
            interleave: false,
            finish: String::new(),
            usage: Some((10, 5)),
        }
    }

    /// Text content, sent as fragments of about 4 characters.
    pub fn text(mut self, text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        self.text
            .extend(chars.chunks(4).map(|c| c.iter().collect::<String>()));
        self
    }

    /// A tool call; its arguments stream in fragments of about 5 characters.
    pub fn tool_call(mut self, id: &str, name: &str, args: Value) -> Self {
        self.calls.push((id.into(), name.into(), args.to_string()));
        self
    }

    /// Stream the tool calls' argument fragments round-robin (interleaved by index).
    pub fn interleaved(mut self) -> Self {
        self.interleave = true;
        self
    }

    /// Force the `finish_reason`.
    pub fn finish(mut self, reason: &str) -> Self {
        self.finish = reason.into();
        self
    }

    /// The usage chunk's prompt/completion tokens (`None`: no usage chunk).
    pub fn usage(mut self, usage: Option<(u64, u64)>) -> Self {
        self.usage = usage;
        self
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id, "object": "chat.completion.chunk", "created": 1_727_346_178,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
        })
    }

    /// The chunks, in order (without `[DONE]`).
    pub fn chunks(&self) -> Vec<Value> {
        let mut out = vec![self.chunk(json!({"role": "assistant", "content": null}), None)];
        for t in &self.text {
            out.push(self.chunk(json!({"content": t}), None));
        }
        let frags: Vec<Vec<String>> = self
            .calls
            .iter()
            .map(|(_, _, a)| {
                let cs: Vec<char> = a.chars().collect();
                cs.chunks(5).map(|c| c.iter().collect()).collect()
            })
            .collect();
        let start = |i: usize| {
            let (id, name, _) = &self.calls[i];
            json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]})
        };
        let frag =
            |i: usize, f: &str| json!({"tool_calls": [{"index": i, "function": {"arguments": f}}]});
        if self.interleave {
            for i in 0..self.calls.len() {
                out.push(self.chunk(start(i), None));
            }
            let longest = frags.iter().map(Vec::len).max().unwrap_or(0);
            for k in 0..longest {
                for (i, f) in frags.iter().enumerate() {
                    if let Some(f) = f.get(k) {
                        out.push(self.chunk(frag(i, f), None));
                    }
                }
            }
        } else {
            for (i, f) in frags.iter().enumerate() {
                out.push(self.chunk(start(i), None));
                for piece in f {
                    out.push(self.chunk(frag(i, piece), None));
                }
            }
        }
        let finish = if !self.finish.is_empty() {
            self.finish.clone()
        } else if self.calls.is_empty() {
            "stop".into()
        } else {
            "tool_calls".into()
        };
        out.push(self.chunk(json!({}), Some(&finish)));
        if let Some((p, c)) = self.usage {
            out.push(json!({
                "id": self.id, "object": "chat.completion.chunk", "created": 1_727_346_178,
                "model": self.model, "choices": [],
                "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
            }));
        }
        out
    }

    /// The SSE body: one `data:` line per chunk, then `data: [DONE]`.
    pub fn sse(&self) -> String {
        let mut s: String = self
            .chunks()
            .iter()
            .map(|c| format!("data: {c}\n\n"))
            .collect();
        s.push_str("data: [DONE]\n\n");
        s
    }

    /// As a mock turn.
    pub fn turn(self) -> MockTurn {
        MockTurn::RawSse(self.sse())
    }
}

/// A text answer turn.
pub fn oa_text_turn(text: &str) -> MockTurn {
    OaResp::new().text(text).turn()
}

/// What the OpenAI mock expects of every request.
#[derive(Debug, Clone)]
pub struct OaMockOptions {
    /// The bearer token expected; `None`: no `Authorization` header at all.
    pub expect_key: Option<String>,
    /// Whether `stream_options.include_usage: true` is expected (else it must be absent).
    pub expect_include_usage: bool,
}

impl Default for OaMockOptions {
    fn default() -> Self {
        OaMockOptions {
            expect_key: Some(DUMMY_OPENAI_KEY.into()),
            expect_include_usage: true,
        }
    }
}

/// A running OpenAI-compatible mock; the [`MockServer`] methods (`request`, `assert_clean`,
/// ...) come through `Deref`. Dropping it shuts the server down.
pub struct MockOpenai(MockServer);

impl MockOpenai {
    /// Start a mock answering request N with `script[N]`, default expectations.
    pub fn start(script: Vec<MockTurn>) -> MockOpenai {
        Self::start_with(script, OaMockOptions::default())
    }

    /// Start a mock at which each of `tasks` tasks has the conversation `script`, in whatever
    /// order their requests arrive ([`MockServer::start_each`]).
    pub fn start_each(script: Vec<MockTurn>, tasks: usize) -> MockOpenai {
        MockOpenai(MockServer::start_each(
            Self::api(OaMockOptions::default()),
            script,
            tasks,
        ))
    }

    /// Start a mock with expectations.
    pub fn start_with(script: Vec<MockTurn>, options: OaMockOptions) -> MockOpenai {
        MockOpenai(MockServer::start(Self::api(options), script))
    }

    fn api(options: OaMockOptions) -> Api {
        Api {
            name: "OpenAI",
            route: "/v1/chat/completions",
            check: Some(Box::new(move |n, method, path, headers, body| {
                check_oa_request(n, method, path, headers, body, &options)
            })),
            ignored: Vec::new(),
            error_body: |message| {
                json!({"error": {"message": message, "type": "mock_error"}}).to_string()
            },
        }
    }

    /// Base URL for `OPENAI_BASE_URL` / `openai.base_url`, ending in `/v1`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.0.url())
    }
}

impl ModelServer for MockOpenai {
    fn runner_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("OPENAI_BASE_URL", self.base_url()),
            ("OPENAI_API_KEY", DUMMY_OPENAI_KEY.into()),
        ]
    }
}

impl Deref for MockOpenai {
    type Target = MockServer;

    fn deref(&self) -> &MockServer {
        &self.0
    }
}

/// Chat Completions helpers on a captured request.
pub trait OaRequestExt {
    /// `body.messages`.
    fn oa_messages(&self) -> Vec<Value>;
    /// The content of the `tool` message answering `call_id`.
    fn tool_message(&self, call_id: &str) -> Option<String>;
    /// Names of the offered function tools.
    fn oa_tool_names(&self) -> Vec<String>;
}

impl OaRequestExt for CapturedRequest {
    fn oa_messages(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    fn tool_message(&self, call_id: &str) -> Option<String> {
        self.oa_messages()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
            .and_then(|m| m["content"].as_str().map(String::from))
    }

    fn oa_tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Check one request against Chat Completions' invariants.
pub fn check_oa_request(
    n: usize,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&Value>,
    options: &OaMockOptions,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut push = |code: &'static str, message: String| {
        out.push(Violation {
            request: n,
            code,
            message,
        })
    };
    if method != "POST" || path != "/v1/chat/completions" {
        push(
            "method_path",
            format!("expected POST /v1/chat/completions, got {method} {path}"),
        );
    }
    let auth = headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone());
    match (&options.expect_key, auth) {
        (Some(k), Some(a)) if a == format!("Bearer {k}") => {}
        (None, None) => {}
        (want, got) => push(
            "authorization",
            format!("expected Authorization for {want:?}, got {got:?}"),
        ),
    }
    let Some(body) = body else {
        push("body_json", "body is not JSON".into());
        return out;
    };
    if body["stream"] != json!(true) {
        push("stream", "`stream` is not true".into());
    }
    let usage = body["stream_options"]["include_usage"] == json!(true);
    if usage != options.expect_include_usage {
        push(
            "include_usage",
            format!(
                "stream_options.include_usage is {usage}, expected {}",
                options.expect_include_usage
            ),
        );
    }
    if body["model"].as_str().is_none_or(|m| m.is_empty()) {
        push("model", "no model".into());
    }
    if let Some(tools) = body.get("tools") {
        for t in tools.as_array().into_iter().flatten() {
            if t["type"] != "function"
                || !t["function"]["name"].is_string()
                || !t["function"]["parameters"].is_object()
            {
                push("tool_shape", format!("bad tool: {t}"));
            }
        }
    }
    let Some(messages) = body["messages"].as_array().filter(|m| !m.is_empty()) else {
        push("messages", "no messages".into());
        return out;
    };
    let mut open: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role != "tool" && !open.is_empty() {
            push(
                "tool_call_unanswered",
                format!("message {i} ({role}) comes before tool messages answer {open:?}"),
            );
            open.clear();
        }
        match role {
            "system" if i == 0 => {}
            "system" => push("system_position", format!("system message at {i}")),
            "user" => {
                if m["content"].as_str().is_none_or(|c| c.trim().is_empty()) {
                    push("empty_content", format!("user message {i} has no text"));
                }
            }
            "assistant" => {
                let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
                if !(m["content"].is_string() || m["content"].is_null()) {
                    push(
                        "assistant_content",
                        format!("message {i}: content {}", m["content"]),
                    );
                }
                if m["content"].is_null() && calls.is_empty() {
                    push("empty_content", format!("assistant message {i} is empty"));
                }
                for c in &calls {
                    let id = c["id"].as_str().unwrap_or("").to_string();
                    let args = c["function"]["arguments"].as_str();
                    if c["type"] != "function"
                        || id.is_empty()
                        || !c["function"]["name"].is_string()
                    {
                        push("tool_call_shape", format!("message {i}: bad tool call {c}"));
                    }
                    match args.map(serde_json::from_str::<Value>) {
                        Some(Ok(Value::Object(_))) => {}
                        _ => push(
                            "tool_call_arguments",
                            format!("message {i}: arguments are not a JSON object string: {c}"),
                        ),
                    }
                    open.push(id);
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap_or("").to_string();
                if let Some(pos) = open.iter().position(|o| *o == id) {
                    open.remove(pos);
                    answered.insert(id);
                } else {
                    push(
                        "tool_orphan",
                        format!(
                            "tool message {i} answers {id:?}, which no preceding assistant call left open"
                        ),
                    );
                }
                if !m["content"].is_string() {
                    push(
                        "tool_content",
                        format!("tool message {i} content is not a string"),
                    );
                }
            }
            other => push("role", format!("message {i} has role {other:?}")),
        }
    }
    if !open.is_empty() {
        push(
            "tool_call_unanswered",
            format!("the request ends with unanswered tool calls {open:?}"),
        );
    }
    out
}
