//! Every real OpenAI chat-completions stream in tests/fixtures/openai/ through SSE framing →
//! chunk mapping → assembler, whole and in 1-, 7- and 64-byte chunks, plus truncated and
//! usage-less variants.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use runner::model::assembler::Assembler;
use runner::model::openai::{ChunkMapper, Estimate, event_stream};
use runner::model::{ContentBlock, ModelResponse, ProviderError, StopReason, Usage};
use serde_json::{Value, json};

use crate::support::{byte_chunks, fixture_text};

const CHUNKINGS: [usize; 4] = [0, 1, 7, 64];

/// Run `text` through the stream; returns the response or the error, and how often the
/// "usage is estimated" callback fired.
async fn run(text: &str, chunk: usize) -> (Result<ModelResponse, ProviderError>, usize) {
    let estimated = Arc::new(AtomicUsize::new(0));
    let e2 = estimated.clone();
    let mut stream = event_stream(
        futures_util::stream::iter(byte_chunks(text.as_bytes(), chunk)),
        Duration::from_secs(10),
        ChunkMapper::new("requested-model", Some(Estimate { prompt_chars: 400 })),
        move || {
            e2.fetch_add(1, Ordering::Relaxed);
        },
    );
    let mut asm = Assembler::new();
    let mut result = None;
    while let Some(item) = stream.next().await {
        assert!(result.is_none(), "stream yielded after an error");
        match item.and_then(|ev| asm.push(ev).map(|_| ())) {
            Ok(()) => {}
            Err(e) => result = Some(Err(e)),
        }
    }
    let r = result.unwrap_or_else(|| asm.finish(None));
    (r, estimated.load(Ordering::Relaxed))
}

fn tool_uses(r: &ModelResponse) -> Vec<(String, String, Value)> {
    r.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => {
                Some((id.clone(), name.clone(), input.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn parallel_tool_calls() {
    let text = fixture_text("openai/openai_python_parallel_tool_calls.sse");
    for chunk in CHUNKINGS {
        let (r, est) = run(&text, chunk).await;
        let r = r.unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
        assert_eq!(r.id, "chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63");
        assert_eq!(r.model, "gpt-4o-2024-08-06");
        assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(
            tool_uses(&r),
            vec![
                (
                    "call_JMW1whyEaYG438VE1OIflxA2".into(),
                    "GetWeatherArgs".into(),
                    json!({"city": "Edinburgh", "country": "GB", "units": "c"})
                ),
                (
                    "call_DNYTawLBoN8fj3KN6qU9N1Ou".into(),
                    "get_stock_price".into(),
                    json!({"ticker": "AAPL", "exchange": "NASDAQ"})
                ),
            ],
            "chunk {chunk}"
        );
        assert_eq!(r.content.len(), 2, "no text block for `content: null`");
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 149,
                output_tokens: 60,
                ..Usage::default()
            }
        );
        assert!(r.invalid_tool_inputs.is_empty() && r.dropped_blocks.is_empty());
        assert_eq!(est, 0, "real usage, not an estimate");
    }
}

#[tokio::test]
async fn single_tool_call() {
    let text = fixture_text("openai/openai_python_single_tool_call.sse");
    for chunk in CHUNKINGS {
        let r = run(&text, chunk).await.0.unwrap();
        assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(
            tool_uses(&r),
            vec![(
                "call_c91SqDXlYFuETYv8mUHzz6pp".into(),
                "GetWeatherArgs".into(),
                json!({"city": "Edinburgh", "country": "UK", "units": "c"})
            )]
        );
        assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (76, 24));
    }
}

#[tokio::test]
async fn finish_reason_length() {
    let text = fixture_text("openai/openai_python_finish_reason_length.sse");
    for chunk in CHUNKINGS {
        let r = run(&text, chunk).await.0.unwrap();
        assert_eq!(r.stop_reason, Some(StopReason::MaxTokens));
        assert_eq!(r.content, vec![ContentBlock::text("{\"")]);
        assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (79, 1));
    }
}

/// The fixture without its usage chunk (what `include_usage: false` gets): estimated usage.
#[tokio::test]
async fn without_usage_the_figures_are_estimated() {
    let text: String = fixture_text("openai/openai_python_parallel_tool_calls.sse")
        .split("\n\n")
        .filter(|ev| !ev.contains("\"usage\""))
        .map(|ev| format!("{ev}\n\n"))
        .collect();
    let (r, est) = run(&text, 7).await;
    let r = r.unwrap();
    assert_eq!(est, 1);
    assert_eq!(r.usage.input_tokens, 100, "400 prompt chars / 4");
    assert!(r.usage.output_tokens > 10, "{:?}", r.usage);
    assert_eq!(tool_uses(&r).len(), 2);
}

/// Cut at every event boundary before the finish_reason: always `Incomplete`, never a
/// truncated success. Cut after the finish_reason (no `[DONE]`): accepted.
#[tokio::test]
async fn truncated_streams() {
    let text = fixture_text("openai/openai_python_parallel_tool_calls.sse");
    let events: Vec<&str> = text
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .collect();
    let finish_at = events
        .iter()
        .position(|e| e.contains("\"finish_reason\":\"tool_calls\""))
        .unwrap();
    for cut in 0..events.len() {
        let prefix: String = events[..cut].iter().map(|e| format!("{e}\n\n")).collect();
        let (r, _) = run(&prefix, 0).await;
        if cut <= finish_at {
            assert!(
                matches!(r, Err(ProviderError::Incomplete { .. })),
                "cut {cut}: {r:?}"
            );
        } else {
            let r = r.unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            assert_eq!(tool_uses(&r).len(), 2);
        }
    }
    // Cut mid-line (no blank line at all) before finish: Incomplete too.
    let (r, _) = run(&text[..text.len() / 2], 3).await;
    assert!(
        matches!(r, Err(ProviderError::Incomplete { after_bytes: true })),
        "{r:?}"
    );
}

#[tokio::test]
async fn in_stream_error_chunk() {
    let first = fixture_text("openai/openai_python_finish_reason_length.sse")
        .split("\n\n")
        .next()
        .unwrap()
        .to_string();
    let text = format!(
        "{first}\n\ndata: {{\"error\":{{\"message\":\"The server had an error\",\"type\":\"server_error\",\"code\":null}}}}\n\n"
    );
    let (r, _) = run(&text, 5).await;
    match r {
        Err(ProviderError::StreamError {
            error_type,
            message,
        }) => {
            assert_eq!(error_type, "server_error");
            assert_eq!(message, "The server had an error");
        }
        other => panic!("{other:?}"),
    }
}
