//! Every real SSE stream in tests/fixtures/sse/ through SSE framing → Anthropic event mapping →
//! assembler, whole and in 1-byte and 7-byte chunks, checked against expected_summary.json and
//! the fixtures README.

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::StreamExt;
use runner::model::anthropic::event_stream;
use runner::model::assembler::Assembler;
use runner::model::sse::SseEvents;
use runner::model::{ContentBlock, ModelResponse, ProviderError, StopReason, StreamEvent};
use serde_json::{Value, json};

use crate::support::{byte_chunks, fixture_bytes, fixture_path};

fn read(name: &str) -> Vec<u8> {
    fixture_bytes(&format!("sse/{name}"))
}

fn summary() -> serde_json::Map<String, Value> {
    let v: Value = serde_json::from_slice(&read("expected_summary.json")).unwrap();
    v.as_object().unwrap().clone()
}

fn sse_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture_path("sse"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sse"))
        .collect();
    v.sort();
    assert_eq!(v.len(), 16, "expected the 16 shared .sse fixtures");
    v
}

const CHUNKINGS: [usize; 3] = [0, 1, 7];

struct Outcome {
    events: Vec<StreamEvent>,
    error: Option<ProviderError>,
    response: Option<ModelResponse>,
}

async fn run(bytes: &[u8], chunk: usize) -> Outcome {
    let mut stream = event_stream(
        futures_util::stream::iter(byte_chunks(bytes, chunk)),
        Duration::from_secs(10),
    );
    let mut events = Vec::new();
    let mut error = None;
    let mut asm = Assembler::new();
    while let Some(item) = stream.next().await {
        assert!(error.is_none(), "stream yielded after an error");
        match item {
            Ok(ev) => {
                events.push(ev.clone());
                if let Err(e) = asm.push(ev) {
                    error = Some(e);
                    break;
                }
            }
            Err(e) => error = Some(e),
        }
    }
    let response = if error.is_none() {
        match asm.finish(Some("req_test".into())) {
            Ok(r) => Some(r),
            Err(e) => {
                error = Some(e);
                None
            }
        }
    } else {
        None
    };
    Outcome {
        events,
        error,
        response,
    }
}

/// Raw SSE events of a file: (count, set of event names).
async fn raw_sse(bytes: &[u8], chunk: usize) -> (usize, BTreeSet<String>) {
    let events: Vec<_> = SseEvents::new(
        futures_util::stream::iter(byte_chunks(bytes, chunk)),
        Duration::from_secs(10),
    )
    .collect()
    .await;
    let names = events
        .iter()
        .map(|e| e.as_ref().unwrap().event.clone().unwrap_or_default())
        .collect();
    (events.len(), names)
}

#[tokio::test]
async fn sse_framing_matches_summary_for_every_file_and_chunking() {
    let summary = summary();
    for name in sse_files() {
        let exp = &summary[&name];
        let bytes = read(&name);
        for chunk in CHUNKINGS {
            let (count, names) = raw_sse(&bytes, chunk).await;
            assert_eq!(
                count as u64,
                exp["event_count"].as_u64().unwrap(),
                "{name} chunk {chunk}: event count"
            );
            let want: BTreeSet<String> = exp["event_types"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            assert_eq!(names, want, "{name} chunk {chunk}: event types");
            assert_eq!(
                names.contains("message_stop"),
                exp["has_message_stop"].as_bool().unwrap(),
                "{name}"
            );
        }
    }
}

fn check_block(name: &str, got: &ContentBlock, exp: &Value) {
    let ty = exp["type"].as_str().unwrap();
    assert_eq!(got.type_name(), ty, "{name}: block {exp}");
    match got {
        ContentBlock::Text { text, .. } => {
            assert_eq!(
                text.chars().count() as u64,
                exp["text_len"].as_u64().unwrap(),
                "{name}: text length of {exp}"
            );
        }
        ContentBlock::Thinking {
            thinking,
            signature,
        } => {
            assert_eq!(
                thinking.chars().count() as u64,
                exp["thinking_len"].as_u64().unwrap(),
                "{name}: thinking length"
            );
            assert_eq!(
                !signature.is_empty(),
                exp["has_signature"].as_bool().unwrap(),
                "{name}: signature"
            );
        }
        ContentBlock::RedactedThinking { data } => assert!(!data.is_empty(), "{name}"),
        ContentBlock::ToolUse { id, name: n, input } => {
            assert_eq!(id, exp["id"].as_str().unwrap(), "{name}");
            assert_eq!(n, exp["name"].as_str().unwrap(), "{name}");
            assert_eq!(input, &exp["input"], "{name}: tool input");
        }
        ContentBlock::Other(v) => {
            for k in ["id", "name", "input"] {
                if let Some(e) = exp.get(k) {
                    assert_eq!(&v[k], e, "{name}: server block field {k}");
                }
            }
        }
        ContentBlock::ToolResult { .. } => panic!("{name}: tool_result in an assistant stream"),
    }
}

#[tokio::test]
async fn every_fixture_assembles_as_the_summary_says() {
    let summary = summary();
    for name in sse_files() {
        let exp = &summary[&name];
        let bytes = read(&name);
        for chunk in CHUNKINGS {
            let out = run(&bytes, chunk).await;
            let ctx = format!("{name} chunk {chunk}");
            if name.contains("ELIDED") {
                // Data that is not JSON is a corrupt stream: a transport fault, retried.
                match &out.error {
                    Some(ProviderError::Transport {
                        message,
                        before_response: false,
                    }) => {
                        assert!(message.starts_with("corrupt stream"), "{ctx}: {message}");
                        assert!(message.contains("content_block_start"), "{ctx}: {message}");
                        assert!(message.contains("not valid JSON"), "{ctx}: {message}");
                    }
                    other => panic!("{ctx}: expected a corrupt stream, got {other:?}"),
                }
                continue;
            }
            if let Some(e) = exp["error"].as_object() {
                match &out.error {
                    Some(ProviderError::StreamError {
                        error_type,
                        message,
                    }) => {
                        assert_eq!(error_type, e["type"].as_str().unwrap(), "{ctx}");
                        assert_eq!(message, e["message"].as_str().unwrap(), "{ctx}");
                    }
                    other => panic!("{ctx}: expected StreamError, got {other:?}"),
                }
                assert!(out.response.is_none());
                continue;
            }
            assert!(out.error.is_none(), "{ctx}: {:?}", out.error);
            let r = out.response.unwrap();
            assert_eq!(r.id, exp["message_id"].as_str().unwrap(), "{ctx}");
            assert_eq!(r.request_id.as_deref(), Some("req_test"));
            assert_eq!(
                r.stop_reason.as_ref().map(StopReason::as_str),
                exp["stop_reason"].as_str(),
                "{ctx}"
            );
            assert!(matches!(out.events.last(), Some(StreamEvent::MessageStop)));
            // Blocks that never completed are dropped; the rest are in index order.
            let (dropped, kept): (Vec<&Value>, Vec<&Value>) = exp["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .partition(|b| b.get("input_incomplete_json").is_some());
            assert_eq!(r.content.len(), kept.len(), "{ctx}: block count");
            for (got, want) in r.content.iter().zip(&kept) {
                check_block(&ctx, got, want);
            }
            let want_dropped: Vec<(usize, String)> = dropped
                .iter()
                .map(|b| {
                    (
                        b["index"].as_u64().unwrap() as usize,
                        b["type"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            assert_eq!(r.dropped_blocks, want_dropped, "{ctx}");
            assert!(r.invalid_tool_inputs.is_empty(), "{ctx}");
            // Final usage: every non-zero count the summary lists. (Zero counts are skipped:
            // `Usage::merge_cumulative` keeps the message_start value when an update is 0.)
            if let Some(u) = exp["final_usage"].as_object() {
                let got = serde_json::to_value(r.usage).unwrap();
                for (k, v) in u {
                    if let Some(n) = v.as_u64().filter(|n| *n > 0) {
                        assert_eq!(got[k].as_u64(), Some(n), "{ctx}: usage {k}");
                    }
                }
            }
        }
    }
}

async fn assembled(name: &str, chunk: usize) -> ModelResponse {
    let out = run(&read(name), chunk).await;
    assert!(out.error.is_none(), "{name}: {:?}", out.error);
    out.response.unwrap()
}

#[tokio::test]
async fn exact_text_and_tool_inputs() {
    for chunk in CHUNKINGS {
        let r = assembled("sdkpy_basic_response.sse", chunk).await;
        assert_eq!(r.content, vec![ContentBlock::text("Hello there!")]);
        assert_eq!(r.usage.input_tokens, 11);
        assert_eq!(r.usage.output_tokens, 6);

        let r = assembled("docs_text_then_tool_use.sse", chunk).await;
        let ContentBlock::Text { text, .. } = &r.content[0] else {
            panic!()
        };
        assert_eq!(text, "Okay, let's check the weather for San Francisco, CA:");

        // The `caller` field of the tool_use block_start is not kept.
        let r = assembled("sdkpy_text_then_tool_use.sse", chunk).await;
        assert_eq!(
            r.content[1].to_value(),
            json!({"type":"tool_use","id":"toolu_01NRLabsLyVHZPKxbKvkfSMn","name":"get_weather","input":{"location":"Paris"}})
        );
    }
}

#[tokio::test]
async fn thinking_signature_and_redacted_data_survive() {
    let raw = String::from_utf8(read("pydanticai_recorded_thinking_then_text.sse")).unwrap();
    for chunk in CHUNKINGS {
        let r = assembled("pydanticai_recorded_thinking_then_text.sse", chunk).await;
        let ContentBlock::Thinking { signature, .. } = &r.content[0] else {
            panic!("{:?}", r.content[0])
        };
        assert!(signature.len() > 100, "a real signature: {signature}");
        assert!(raw.contains(signature.as_str()));

        let raw_r = String::from_utf8(read("pydanticai_recorded_redacted_thinking.sse")).unwrap();
        let r = assembled("pydanticai_recorded_redacted_thinking.sse", chunk).await;
        for b in &r.content[..2] {
            let ContentBlock::RedactedThinking { data } = b else {
                panic!("{b:?}")
            };
            assert!(data.len() > 20 && raw_r.contains(data.as_str()));
        }
    }
}

#[tokio::test]
async fn server_tool_blocks_kept_verbatim_with_citations() {
    for chunk in CHUNKINGS {
        let r = assembled(
            "pydanticai_recorded_thinking_web_search_server_tool.sse",
            chunk,
        )
        .await;
        let ContentBlock::Other(result) = &r.content[2] else {
            panic!()
        };
        assert_eq!(result["type"], "web_search_tool_result");
        assert_eq!(result["tool_use_id"], "srvtoolu_01FYcUbzEaqqQh1WBRj1QX3h");
        assert!(!result["content"].as_array().unwrap().is_empty());
        let cited = r
            .content
            .iter()
            .filter(|b| matches!(b, ContentBlock::Text { citations: Some(c), .. } if !c.is_empty()))
            .count();
        assert!(cited >= 1, "citations_delta must attach to text blocks");
    }
}

#[tokio::test]
async fn truncated_tool_use_is_dropped() {
    for chunk in CHUNKINGS {
        let r = assembled("sdkpy_max_tokens_truncated_tool_input.sse", chunk).await;
        assert_eq!(r.stop_reason, Some(StopReason::MaxTokens));
        assert_eq!(r.content.len(), 1);
        assert_eq!(r.content[0].type_name(), "text");
        assert_eq!(r.dropped_blocks, vec![(1, "tool_use".to_string())]);
        assert_eq!(
            r.content
                .iter()
                .filter(|b| b.type_name() == "tool_use")
                .count(),
            0
        );
    }
}

#[tokio::test]
async fn midstream_error_yields_partial_events_then_stream_error() {
    for chunk in CHUNKINGS {
        let out = run(&read("COMPOSED_midstream_overloaded_error.sse"), chunk).await;
        assert_eq!(
            out.events.len(),
            4,
            "message_start, block_start, ping, delta"
        );
        assert!(matches!(out.events[0], StreamEvent::MessageStart { .. }));
        assert!(matches!(
            out.error,
            Some(ProviderError::StreamError { ref error_type, .. }) if error_type == "overloaded_error"
        ));
    }
}

#[tokio::test]
async fn eof_before_message_stop_is_incomplete() {
    let bytes = read("sdkpy_basic_response.sse");
    let text = String::from_utf8(bytes).unwrap();
    let cut = text.find("event: message_stop").unwrap();
    for chunk in CHUNKINGS {
        let out = run(&text.as_bytes()[..cut], chunk).await;
        assert!(
            matches!(
                out.error,
                Some(ProviderError::Incomplete { after_bytes: true })
            ),
            "{:?}",
            out.error
        );
    }
    let out = run(b"", 0).await;
    assert!(matches!(
        out.error,
        Some(ProviderError::Incomplete { after_bytes: false })
    ));
}
