//! Anthropic SSE events → provider-neutral [`StreamEvent`]s.
//!
//! [`parse_event`] maps one decoded SSE event; [`event_stream`] drives a whole response body:
//! it ends after `message_stop`, turns `event: error` into [`ProviderError::StreamError`], an
//! EOF before `message_stop` into [`ProviderError::Incomplete`], and a `data:` line that is not
//! JSON into a transport fault (a corrupt stream, retried like a dropped one). After an error
//! it yields nothing more.

use std::error::Error as StdError;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use crate::provider::{EventStream, ProviderError, StreamEvent};
use crate::sse::{SseEvents, corrupt};
use crate::types::{StopReason, Usage};

fn malformed(event: &str, what: impl std::fmt::Display) -> ProviderError {
    ProviderError::Malformed(format!("`{event}` event: {what}"))
}

fn get_index(event: &str, v: &Value) -> Result<usize, ProviderError> {
    v.get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| malformed(event, "missing or invalid `index`"))
}

fn get_str(event: &str, v: &Value, key: &str) -> Result<String, ProviderError> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(malformed(event, format!("missing string field `{key}`"))),
    }
}

fn opt_str(event: &str, v: &Value, key: &str) -> Result<Option<String>, ProviderError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(malformed(
            event,
            format!("field `{key}` is not a string: {other}"),
        )),
    }
}

/// Usage counts; missing or null fields are zero, unknown fields (server_tool_use, ...) ignored.
fn parse_usage(event: &str, v: Option<&Value>) -> Result<Usage, ProviderError> {
    let m = match v {
        None | Some(Value::Null) => return Ok(Usage::default()),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(malformed(
                event,
                format!("`usage` is not an object: {other}"),
            ));
        }
    };
    let n = |k: &str| m.get(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(Usage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_creation_input_tokens: n("cache_creation_input_tokens"),
        cache_read_input_tokens: n("cache_read_input_tokens"),
    })
}

/// The names of the events this module understands.
const KNOWN: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
];

/// Map one SSE event (its `event:` name and `data:`) to a [`StreamEvent`].
///
/// `Ok(None)` means "ignore" (unknown event or delta type, an event without data).
/// `event: error` yields `Err(StreamError)`; data that is not JSON yields `Err(Transport)` (a
/// corrupt stream); JSON without the expected fields yields `Err(Malformed)`.
pub fn parse_event(
    name: Option<&str>,
    data: Option<&str>,
) -> Result<Option<StreamEvent>, ProviderError> {
    let name = name.filter(|n| !n.is_empty());
    if let Some(n) = name
        && !KNOWN.contains(&n)
    {
        tracing::debug!(event = n, "ignoring unknown SSE event type");
        return Ok(None);
    }
    let Some(data) = data else {
        if name == Some("ping") {
            return Ok(Some(StreamEvent::Ping));
        }
        tracing::debug!(event = ?name, "ignoring SSE event without data");
        return Ok(None);
    };
    let parsed: Result<Value, _> = serde_json::from_str(data);
    let v = match (parsed, name) {
        (Ok(v), _) => v,
        (Err(_), Some("error")) => {
            return Err(ProviderError::StreamError {
                error_type: "unknown".into(),
                message: data.trim().to_string(),
            });
        }
        (Err(e), n) => {
            return Err(corrupt(format!(
                "`{}` event: data is not valid JSON: {e}",
                n.unwrap_or("(unnamed)")
            )));
        }
    };
    let name = match name {
        Some(n) => n.to_string(),
        None => match v.get("type").and_then(Value::as_str) {
            Some(t) if KNOWN.contains(&t) => t.to_string(),
            Some(t) => {
                tracing::debug!(event = t, "ignoring unknown SSE data type");
                return Ok(None);
            }
            None => {
                return Err(malformed(
                    "(unnamed)",
                    "no event name and no `type` in data",
                ));
            }
        },
    };
    let ev = name.as_str();
    let out = match ev {
        "message_start" => {
            let msg = v
                .get("message")
                .ok_or_else(|| malformed(ev, "missing `message`"))?;
            StreamEvent::MessageStart {
                id: get_str(ev, msg, "id")?,
                model: get_str(ev, msg, "model")?,
                usage: parse_usage(ev, msg.get("usage"))?,
            }
        }
        "content_block_start" => {
            let index = get_index(ev, &v)?;
            let block = match v.get("content_block") {
                Some(b @ Value::Object(m)) if m.get("type").is_some_and(Value::is_string) => {
                    b.clone()
                }
                _ => {
                    return Err(malformed(
                        ev,
                        "missing `content_block` object with a `type`",
                    ));
                }
            };
            StreamEvent::BlockStart { index, block }
        }
        "content_block_delta" => {
            let index = get_index(ev, &v)?;
            let delta = v
                .get("delta")
                .ok_or_else(|| malformed(ev, "missing `delta`"))?;
            let ty = delta
                .get("type")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(ev, "`delta` without a string `type`"))?;
            let Some(event) = block_delta(index, delta, ty)? else {
                return Ok(None);
            };
            event
        }
        "content_block_stop" => StreamEvent::BlockStop {
            index: get_index(ev, &v)?,
        },
        "message_delta" => {
            let delta = match v.get("delta") {
                Some(d @ Value::Object(_)) => d,
                _ => return Err(malformed(ev, "missing `delta` object")),
            };
            StreamEvent::MessageDelta {
                stop_reason: opt_str(ev, delta, "stop_reason")?.map(|s| StopReason::parse(&s)),
                stop_sequence: opt_str(ev, delta, "stop_sequence")?,
                usage: parse_usage(ev, v.get("usage"))?,
            }
        }
        "message_stop" => StreamEvent::MessageStop,
        "ping" => StreamEvent::Ping,
        "error" => {
            let err = v.get("error");
            let field = |k: &str| err.and_then(|e| e.get(k)).and_then(Value::as_str);
            return Err(ProviderError::StreamError {
                error_type: field("type").unwrap_or("unknown").to_string(),
                message: field("message")
                    .map(str::to_string)
                    .unwrap_or_else(|| data.trim().to_string()),
            });
        }
        // KNOWN is exhaustive above; anything else is ignored.
        other => {
            tracing::debug!(event = other, "ignoring SSE event");
            return Ok(None);
        }
    };
    Ok(Some(out))
}

/// The event of a `content_block_delta` of type `ty` at `index`; `None` for an unknown type.
fn block_delta(
    index: usize,
    delta: &Value,
    ty: &str,
) -> Result<Option<StreamEvent>, ProviderError> {
    let event = match ty {
        "text_delta" => StreamEvent::TextDelta {
            index,
            text: get_str(ty, delta, "text")?,
        },
        "input_json_delta" => StreamEvent::InputJsonDelta {
            index,
            partial_json: get_str(ty, delta, "partial_json")?,
        },
        "thinking_delta" => StreamEvent::ThinkingDelta {
            index,
            thinking: get_str(ty, delta, "thinking")?,
        },
        "signature_delta" => StreamEvent::SignatureDelta {
            index,
            signature: get_str(ty, delta, "signature")?,
        },
        "citations_delta" => StreamEvent::CitationDelta {
            index,
            citation: delta
                .get("citation")
                .filter(|c| c.is_object())
                .cloned()
                .ok_or_else(|| malformed(ty, "missing `citation` object"))?,
        },
        other => {
            tracing::debug!(delta_type = other, index, "ignoring unknown delta type");
            return Ok(None);
        }
    };
    Ok(Some(event))
}

/// Where [`event_stream`] is.
enum State {
    /// Reading events.
    Reading(Box<SseEvents>),
    /// Ended (message_stop seen or an error yielded).
    Done,
}

/// Turn an Anthropic response body into provider-neutral events.
///
/// Ends after `MessageStop`. Ends with one `Err` on: `event: error` (`StreamError`), a bad
/// event (`Malformed`), EOF before `message_stop` (`Incomplete`), a transport failure or a
/// corrupt stream (`Transport { before_response: false }`) or no bytes for `idle_timeout`
/// (`Stalled`).
pub fn event_stream<S, E>(bytes: S, idle_timeout: Duration) -> EventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: StdError + Send + Sync + 'static,
{
    let sse = Box::new(SseEvents::new(bytes, idle_timeout));
    let s = futures_util::stream::unfold(State::Reading(sse), |state| async move {
        let State::Reading(mut sse) = state else {
            return None;
        };
        loop {
            match sse.next().await {
                None => {
                    let after_bytes = sse.received_bytes();
                    tracing::debug!(after_bytes, "SSE stream ended before message_stop");
                    return Some((Err(ProviderError::Incomplete { after_bytes }), State::Done));
                }
                Some(Err(e)) => return Some((Err(e), State::Done)),
                Some(Ok(raw)) => match parse_event(raw.event.as_deref(), raw.data.as_deref()) {
                    Ok(None) => continue,
                    Ok(Some(StreamEvent::MessageStop)) => {
                        return Some((Ok(StreamEvent::MessageStop), State::Done));
                    }
                    Ok(Some(ev)) => return Some((Ok(ev), State::Reading(sse))),
                    Err(e) => {
                        tracing::debug!(error = %e, "SSE event rejected");
                        return Some((Err(e), State::Done));
                    }
                },
            }
        }
    });
    Box::pin(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_each_event_kind() {
        let ev = parse_event(
            Some("message_start"),
            Some(r#"{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":3,"cache_read_input_tokens":null}}}"#),
        )
        .unwrap();
        assert_eq!(
            ev,
            Some(StreamEvent::MessageStart {
                id: "m".into(),
                model: "x".into(),
                usage: Usage {
                    input_tokens: 3,
                    ..Usage::default()
                }
            })
        );
        let ev = parse_event(
            Some("content_block_delta"),
            Some(r#"{"index":2,"delta":{"type":"citations_delta","citation":{"url":"u"}}}"#),
        )
        .unwrap();
        assert_eq!(
            ev,
            Some(StreamEvent::CitationDelta {
                index: 2,
                citation: json!({"url":"u"})
            })
        );
        let ev = parse_event(
            Some("message_delta"),
            Some(r#"{"delta":{"stop_reason":"pause_turn","stop_sequence":null}}"#),
        )
        .unwrap();
        assert_eq!(
            ev,
            Some(StreamEvent::MessageDelta {
                stop_reason: Some(StopReason::PauseTurn),
                stop_sequence: None,
                usage: Usage::default()
            })
        );
        // Event name from data when there is no `event:` line.
        assert_eq!(
            parse_event(None, Some(r#"{"type":"message_stop"}"#)).unwrap(),
            Some(StreamEvent::MessageStop)
        );
    }

    #[test]
    fn unknown_events_and_deltas_are_ignored() {
        assert_eq!(
            parse_event(Some("future_event"), Some("not json")).unwrap(),
            None
        );
        assert_eq!(
            parse_event(
                Some("content_block_delta"),
                Some(r#"{"index":0,"delta":{"type":"compaction_delta","x":1}}"#)
            )
            .unwrap(),
            None
        );
    }

    #[test]
    fn error_event_is_stream_error() {
        let e = parse_event(
            Some("error"),
            Some(r#"{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}"#),
        )
        .unwrap_err();
        assert!(matches!(
            e,
            ProviderError::StreamError { ref error_type, ref message }
                if error_type == "overloaded_error" && message == "Overloaded"
        ));
    }

    #[test]
    fn malformed_names_event_and_problem() {
        let cases = [
            (
                "content_block_delta",
                r#"{"index":0,"delta":{"type":"text_delta"}}"#,
                "`text_delta` event: missing string field `text`",
            ),
            (
                "content_block_stop",
                r#"{"index":-1}"#,
                "`content_block_stop` event: missing or invalid `index`",
            ),
            (
                "message_start",
                r#"{"message":{"model":"x"}}"#,
                "`message_start` event: missing string field `id`",
            ),
            (
                "content_block_start",
                r#"{"index":0}"#,
                "`content_block_start` event: missing `content_block`",
            ),
        ];
        for (name, data, needle) in cases {
            match parse_event(Some(name), Some(data)) {
                Err(ProviderError::Malformed(m)) => assert!(m.contains(needle), "{m}"),
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn data_that_is_not_json_is_a_corrupt_stream() {
        for (name, data) in [
            (Some("message_delta"), "{\"delta\": {}, ..."),
            (
                Some("content_block_delta"),
                "{\"index\":0,\"delta\":{\"type\":\"text_d",
            ),
            (None, "garbage"),
        ] {
            match parse_event(name, Some(data)) {
                Err(ProviderError::Transport {
                    message,
                    before_response: false,
                }) => {
                    assert!(message.starts_with("corrupt stream: "), "{message}");
                    assert!(message.contains("data is not valid JSON"), "{message}");
                }
                other => panic!("{name:?}: {other:?}"),
            }
        }
    }
}
