//! The Anthropic provider against the mock Anthropic server: real HTTP, chunked SSE, error
//! bodies from tests/fixtures/errors, dropped connections and stalls.

use std::time::Duration;

use futures_util::StreamExt;
use runner::model::anthropic::{AnthropicConfig, AnthropicProvider};
use runner::model::assembler::Assembler;
use runner::model::{
    ContentBlock, Message, ModelCall, ModelRequest, ModelResponse, Provider, ProviderError, Role,
    StopReason, ToolSpec,
};
use serde_json::json;

use crate::support::*;

/// A mock answering once with the recorded stream `sse/NAME`, in 7-byte chunks.
fn fixture_stream(name: &str) -> MockAnthropic {
    MockAnthropic::start(vec![
        MockTurn::raw_sse(fixture_text(&format!("sse/{name}"))).chunked(7),
    ])
}

/// The provider against `mock`; the base URL's trailing slash is on purpose: it must be
/// tolerated.
fn provider(mock: &MockAnthropic, idle: Duration) -> AnthropicProvider {
    provider_at(&format!("{}/", mock.url()), idle)
}

fn provider_at(base_url: &str, idle: Duration) -> AnthropicProvider {
    let mut cfg = AnthropicConfig::new("sk-ant-test-key");
    cfg.base_url = base_url.to_string();
    cfg.idle_timeout = idle;
    AnthropicProvider::new(cfg).unwrap()
}

fn request() -> ModelRequest {
    let tool_use = ContentBlock::from_value(json!({
        "type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"a.txt"},
        "caller":{"type":"direct"}
    }))
    .unwrap();
    ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: "You are a CI agent.".into(),
        messages: vec![
            Message::user_text("read a.txt"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking {
                        thinking: "Let me read it.".into(),
                        signature: "EqQBCkYIBRgCKkA=".into(),
                    },
                    ContentBlock::RedactedThinking {
                        data: "EmwKAhgBEgy3".into(),
                    },
                    tool_use,
                ],
                id: Some("msg_prev".into()),
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: "hello".into(),
                    is_error: false,
                }],
                id: None,
            },
        ],
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}),
        }]
        .into(),
        max_tokens: 4096,
        thinking: Some(json!({"type":"enabled","budget_tokens":1024})),
    }
}

async fn drain(call: ModelCall) -> Result<ModelResponse, ProviderError> {
    let mut events = call.events;
    let mut asm = Assembler::new();
    while let Some(ev) = events.next().await {
        asm.push(ev?)?;
    }
    asm.finish(call.meta.request_id)
}

#[tokio::test]
async fn streams_a_response_and_sends_what_the_api_expects() {
    let mock = fixture_stream("sdkgo_recorded_text_then_tool_use.sse");
    let p = provider(&mock, Duration::from_secs(10));
    let call = p.stream(&request()).await.unwrap();
    assert_eq!(call.meta.request_id.as_deref(), Some("req_mock_1"));
    let r = drain(call).await.unwrap();
    assert_eq!(r.request_id.as_deref(), Some("req_mock_1"));
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        r.content[1],
        ContentBlock::ToolUse {
            id: "toolu_01RaX2WYWRWCbaeFHssmGJXG".into(),
            name: "get_weather".into(),
            input: json!({"city":"San Francisco","units":"fahrenheit"}),
        }
    );

    let cap = mock.requests();
    assert_eq!(cap.len(), 1);
    let h = |name| cap[0].header(name);
    assert_eq!(h("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(h("anthropic-version"), Some("2023-06-01"));
    assert_eq!(h("content-type"), Some("application/json"));
    assert_eq!(h("accept"), Some("text/event-stream"));
    let b = &cap[0].body;
    assert_eq!(b["model"], "claude-sonnet-4-5");
    assert_eq!(b["max_tokens"], 4096);
    assert_eq!(b["stream"], true);
    // Prompt caching is on by default: breakpoints on the system prompt, the last tool and
    // the last block of the last message (checked below), and nowhere else.
    assert_eq!(
        b["system"],
        json!([{"type":"text","text":"You are a CI agent.","cache_control":{"type":"ephemeral"}}])
    );
    assert_eq!(b.to_string().matches("cache_control").count(), 3);
    assert_eq!(
        b["thinking"],
        json!({"type":"enabled","budget_tokens":1024})
    );
    assert_eq!(b["tools"][0]["name"], "Read");
    assert_eq!(b["tools"][0]["cache_control"], json!({"type":"ephemeral"}));
    assert_eq!(
        b["tools"][0]["input_schema"]["required"],
        json!(["file_path"])
    );
    assert_eq!(
        b["messages"],
        json!([
            {"role":"user","content":[{"type":"text","text":"read a.txt"}]},
            {"role":"assistant","content":[
                {"type":"thinking","thinking":"Let me read it.","signature":"EqQBCkYIBRgCKkA="},
                {"type":"redacted_thinking","data":"EmwKAhgBEgy3"},
                {"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"a.txt"}}
            ]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"hello",
                "cache_control":{"type":"ephemeral"}}]}
        ])
    );
    assert!(!b.to_string().contains("caller"));
    mock.assert_clean();
}

#[tokio::test]
async fn prompt_caching_off_sends_no_breakpoints() {
    let mock = fixture_stream("sdkpy_basic_response.sse");
    let mut cfg = AnthropicConfig::new("sk-ant-test-key");
    cfg.base_url = mock.url();
    cfg.prompt_caching = false;
    let p = AnthropicProvider::new(cfg).unwrap();
    drain(p.stream(&request()).await.unwrap()).await.unwrap();
    let b = mock.request(0).body;
    assert_eq!(b["system"], "You are a CI agent.");
    assert!(!b.to_string().contains("cache_control"));
    mock.assert_clean();
}

#[tokio::test]
async fn no_tools_means_no_tools_key() {
    let mock = fixture_stream("sdkpy_basic_response.sse");
    let p = provider(&mock, Duration::from_secs(10));
    let mut req = request();
    req.tools = Default::default();
    req.thinking = None;
    let r = drain(p.stream(&req).await.unwrap()).await.unwrap();
    assert_eq!(r.content, vec![ContentBlock::text("Hello there!")]);
    let b = mock.request(0).body;
    assert!(b.get("tools").is_none());
    assert!(b.get("thinking").is_none());
    mock.assert_clean();
}

/// The provider's error for an HTTP `status` answer with the recorded body `errors/FILE`
/// and `headers`.
async fn http_error(status: u16, file: &str, headers: &[(&str, &str)]) -> ProviderError {
    let mut headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    headers.push(("content-type".into(), "application/json".into()));
    let mock = MockAnthropic::start(vec![MockTurn::Http {
        status,
        body: fixture_text(&format!("errors/{file}")),
        headers,
    }]);
    let p = provider(&mock, Duration::from_secs(10));
    let e = match p.stream(&request()).await {
        Ok(_) => panic!("{file}: expected an error"),
        Err(e) => e,
    };
    mock.assert_clean();
    e
}

#[tokio::test]
async fn http_401_429_529_bodies_and_headers_are_parsed() {
    let e = http_error(401, "401_authentication_error.json", &[]).await;
    let ProviderError::Http {
        status,
        error_type,
        message,
        request_id,
        retry_after,
        should_retry,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*status, 401);
    assert_eq!(error_type.as_deref(), Some("authentication_error"));
    assert_eq!(message, "invalid x-api-key");
    assert_eq!(*request_id, None);
    assert_eq!(*retry_after, None);
    assert_eq!(*should_retry, None);
    assert_eq!(
        e.to_string(),
        "HTTP 401 authentication_error: invalid x-api-key"
    );

    let e = http_error(
        429,
        "429_rate_limit_error_account.json",
        &[("retry-after", "7"), ("x-should-retry", "true")],
    )
    .await;
    let ProviderError::Http {
        status,
        error_type,
        message,
        request_id,
        retry_after,
        should_retry,
    } = e
    else {
        panic!()
    };
    assert_eq!(status, 429);
    assert_eq!(error_type.as_deref(), Some("rate_limit_error"));
    assert!(message.starts_with("This request would exceed your account's rate limit"));
    assert_eq!(request_id.as_deref(), Some("req_011CcR9mkMvXdaiWP4739PSN"));
    assert_eq!(retry_after, Some(Duration::from_secs(7)));
    assert_eq!(should_retry, Some(true));

    let e = http_error(
        529,
        "529_overloaded_error.json",
        &[
            ("request-id", "req_from_header"),
            ("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
        ],
    )
    .await;
    let ProviderError::Http {
        status,
        error_type,
        message,
        request_id,
        retry_after,
        ..
    } = e
    else {
        panic!()
    };
    assert_eq!(status, 529);
    assert_eq!(error_type.as_deref(), Some("overloaded_error"));
    assert_eq!(message, "Overloaded");
    assert_eq!(request_id.as_deref(), Some("req_from_header"));
    // A date in the past: retry now.
    assert_eq!(retry_after, Some(Duration::ZERO));

    let e = http_error(529, "529_overloaded_error_null_request_id.json", &[]).await;
    assert!(matches!(
        e,
        ProviderError::Http {
            request_id: None,
            status: 529,
            ..
        }
    ));

    let e = http_error(413, "413_request_too_large.json", &[]).await;
    assert!(matches!(
        e,
        ProviderError::Http { status: 413, ref error_type, .. } if error_type.as_deref() == Some("request_too_large")
    ));
}

#[tokio::test]
async fn non_json_error_body_falls_back_to_trimmed_text() {
    let mock = MockAnthropic::start(vec![MockTurn::Http {
        status: 502,
        body: "\n  upstream connect error  \n".into(),
        headers: vec![("content-type".into(), "text/plain".into())],
    }]);
    let p = provider(&mock, Duration::from_secs(10));
    let Err(ProviderError::Http {
        status,
        error_type,
        message,
        ..
    }) = p.stream(&request()).await
    else {
        panic!()
    };
    assert_eq!(
        (status, error_type, message.as_str()),
        (502, None, "upstream connect error")
    );
    mock.assert_clean();
}

#[tokio::test]
async fn connection_dropped_mid_stream_fails_the_attempt() {
    let events = parse_sse(&fixture_text("sse/sdkpy_basic_response.sse"));
    // Send the first half of the events, then abort the body: hyper ends the chunked
    // response without its terminating chunk.
    let mock = MockAnthropic::start(vec![MockTurn::DropAfter {
        after: events.len() / 2,
        events,
    }]);
    let p = provider(&mock, Duration::from_secs(10));
    let call = p.stream(&request()).await.unwrap();
    let mut events = call.events;
    let mut seen = 0;
    let err = loop {
        match events.next().await {
            Some(Ok(_)) => seen += 1,
            Some(Err(e)) => break e,
            None => panic!("stream ended without an error"),
        }
    };
    assert!(seen >= 1, "events before the drop were delivered");
    // hyper reports the missing terminating chunk as a body error.
    match &err {
        ProviderError::Transport {
            before_response: false,
            message,
        } => assert!(message.contains("EOF"), "{message}"),
        other => panic!("expected Transport mid-stream, got {other:?}"),
    }
    assert!(events.next().await.is_none(), "nothing after the error");
    mock.assert_clean();
}

#[tokio::test]
async fn stall_mid_stream_is_stalled() {
    let mock = MockAnthropic::start(vec![MockTurn::Stall {
        events: parse_sse(&fixture_text("sse/sdkpy_basic_response.sse")),
        after: 2,
        stall: Duration::from_secs(60),
    }]);
    let p = provider(&mock, Duration::from_millis(300));
    let call = p.stream(&request()).await.unwrap();
    let started = std::time::Instant::now();
    let err = drain(call).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::Stalled(d) if d == Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    mock.assert_clean();
}

#[tokio::test]
async fn stall_before_headers_is_stalled() {
    let mock = MockAnthropic::start(vec![
        MockTurn::raw_sse(fixture_text("sse/sdkpy_basic_response.sse"))
            .delayed(Duration::from_secs(3)),
    ]);
    let p = provider(&mock, Duration::from_millis(200));
    let err = p.stream(&request()).await.err().unwrap();
    assert!(matches!(err, ProviderError::Stalled(_)), "{err:?}");
    mock.assert_clean();
}

#[tokio::test]
async fn connection_refused_is_transport_before_response() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let p = provider_at(&format!("http://{addr}"), Duration::from_secs(5));
    let err = p.stream(&request()).await.err().unwrap();
    assert!(
        matches!(
            err,
            ProviderError::Transport {
                before_response: true,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn error_event_after_200_is_stream_error() {
    let mock = fixture_stream("COMPOSED_midstream_overloaded_error.sse");
    let p = provider(&mock, Duration::from_secs(10));
    let err = drain(p.stream(&request()).await.unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::StreamError { ref error_type, .. } if error_type == "overloaded_error"),
        "{err:?}"
    );
    mock.assert_clean();
}

#[tokio::test]
async fn json_200_is_malformed_not_silently_empty() {
    let mock = MockAnthropic::start(vec![MockTurn::Http {
        status: 200,
        body: r#"{"type":"message"}"#.into(),
        headers: vec![],
    }]);
    let p = provider(&mock, Duration::from_secs(10));
    let err = p.stream(&request()).await.err().unwrap();
    assert!(
        matches!(err, ProviderError::Malformed(ref m) if m.contains("application/json")),
        "{err:?}"
    );
    mock.assert_clean();
}

#[tokio::test]
async fn body_ending_before_message_stop_is_incomplete() {
    let text = fixture_text("sse/sdkpy_basic_response.sse");
    let cut = text.find("event: message_delta").unwrap();
    let mock = MockAnthropic::start(vec![MockTurn::raw_sse(&text[..cut]).chunked(7)]);
    let p = provider(&mock, Duration::from_secs(10));
    let err = drain(p.stream(&request()).await.unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Incomplete { after_bytes: true }),
        "{err:?}"
    );
    mock.assert_clean();
}
