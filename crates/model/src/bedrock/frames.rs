//! Bedrock's `InvokeModelWithResponseStream` body → provider-neutral [`StreamEvent`]s.
//!
//! The body is AWS event-stream framing (`application/vnd.amazon.eventstream`), decoded with
//! `aws-smithy-eventstream` (lengths and CRCs checked). Each `chunk` event carries
//! `{"bytes": BASE64}`, the base64 of one Anthropic stream event's JSON, which
//! [`crate::anthropic::parse_event`] maps as it maps the Anthropic API's SSE. An `exception`
//! message (`throttlingException`, `modelStreamErrorException`, …) or an `error` message
//! becomes [`ProviderError::StreamError`] named by its type. Like the SSE stream, this one ends
//! after `message_stop`, with `Incomplete` at an early EOF, `Stalled` after `idle_timeout`
//! without bytes, and a transport fault for a corrupt frame; after an error it yields nothing.

use std::error::Error as StdError;
use std::pin::Pin;
use std::time::Duration;

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::{HeaderValue, Message};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use crate::anthropic::parse_event;
use crate::provider::{EventStream, ProviderError, StreamEvent};
use crate::sse::{corrupt, error_chain};

/// The value of string header `name`, if present.
fn header<'m>(msg: &'m Message, name: &str) -> Option<&'m str> {
    msg.headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| match h.value() {
            HeaderValue::String(s) => Some(s.as_str()),
            _ => None,
        })
}

/// The message text of an exception payload (`{"message": …}`), with the model's own status
/// and message for a `modelStreamErrorException`.
fn exception_message(payload: &[u8]) -> String {
    let v: Option<Value> = serde_json::from_slice(payload).ok();
    let s = |k: &str| {
        v.as_ref().and_then(|v| v.get(k)).and_then(|x| match x {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    let mut text = s("message").or_else(|| s("Message")).unwrap_or_else(|| {
        String::from_utf8_lossy(payload)
            .trim()
            .chars()
            .take(500)
            .collect()
    });
    if let Some(status) = s("originalStatusCode") {
        text.push_str(&format!(" (model status {status}"));
        if let Some(m) = s("originalMessage") {
            text.push_str(&format!(": {m}"));
        }
        text.push(')');
    }
    text
}

/// Map one decoded event-stream message. `Ok(None)`: nothing to yield (an event type this
/// module does not use).
pub fn parse_message(msg: &Message) -> Result<Option<StreamEvent>, ProviderError> {
    match header(msg, ":message-type").unwrap_or("event") {
        "event" => {
            let event_type = header(msg, ":event-type").unwrap_or("");
            if event_type != "chunk" {
                tracing::debug!(event_type, "ignoring Bedrock event");
                return Ok(None);
            }
            let v: Value = serde_json::from_slice(msg.payload())
                .map_err(|e| corrupt(format!("`chunk` event: payload is not JSON: {e}")))?;
            let b64 = v.get("bytes").and_then(Value::as_str).ok_or_else(|| {
                ProviderError::Malformed("`chunk` event without a `bytes` string".into())
            })?;
            let raw = STANDARD
                .decode(b64)
                .map_err(|e| corrupt(format!("`chunk` event: `bytes` is not base64: {e}")))?;
            let text = String::from_utf8(raw)
                .map_err(|e| corrupt(format!("`chunk` event: `bytes` is not UTF-8: {e}")))?;
            parse_event(None, Some(&text))
        }
        "exception" => Err(ProviderError::StreamError {
            error_type: header(msg, ":exception-type")
                .unwrap_or("unknownException")
                .to_string(),
            message: exception_message(msg.payload()),
        }),
        "error" => Err(ProviderError::StreamError {
            error_type: header(msg, ":error-code")
                .unwrap_or("unknownError")
                .to_string(),
            message: header(msg, ":error-message").unwrap_or("").to_string(),
        }),
        other => Err(ProviderError::Malformed(format!(
            "event-stream message of unknown type `{other}`"
        ))),
    }
}

type Body = Pin<Box<dyn Stream<Item = Result<Bytes, ProviderError>> + Send>>;

/// Where [`event_stream`] is.
struct Reading {
    body: Body,
    buf: BytesMut,
    decoder: MessageFrameDecoder,
    received: bool,
    idle_timeout: Duration,
}

impl Reading {
    /// The next event to yield, `None` when the stream is over (after `message_stop`).
    async fn next_event(&mut self) -> Result<StreamEvent, ProviderError> {
        loop {
            match self.decoder.decode_frame(&mut self.buf) {
                Ok(DecodedFrame::Complete(msg)) => match parse_message(&msg)? {
                    Some(ev) => return Ok(ev),
                    None => continue,
                },
                Ok(DecodedFrame::Incomplete) => {}
                Err(e) => return Err(corrupt(format!("event-stream frame: {e}"))),
            }
            match tokio::time::timeout(self.idle_timeout, self.body.next()).await {
                Err(_) => return Err(ProviderError::Stalled(self.idle_timeout)),
                Ok(None) => {
                    tracing::debug!(
                        after_bytes = self.received,
                        "event stream ended before message_stop"
                    );
                    return Err(ProviderError::Incomplete {
                        after_bytes: self.received,
                    });
                }
                Ok(Some(Err(e))) => return Err(e),
                Ok(Some(Ok(chunk))) => {
                    self.received |= !chunk.is_empty();
                    self.buf.extend_from_slice(&chunk);
                }
            }
        }
    }
}

/// Turn a Bedrock response body into provider-neutral events (see the module docs).
pub fn event_stream<S, E>(bytes: S, idle_timeout: Duration) -> EventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: StdError + Send + Sync + 'static,
{
    let body: Body = Box::pin(bytes.map(|r| {
        r.map_err(|e| ProviderError::Transport {
            message: error_chain(&e),
            before_response: false,
        })
    }));
    let state = Some(Box::new(Reading {
        body,
        buf: BytesMut::new(),
        decoder: MessageFrameDecoder::new(),
        received: false,
        idle_timeout,
    }));
    let s = futures_util::stream::unfold(state, |state| async move {
        let mut reading = state?;
        match reading.next_event().await {
            Ok(StreamEvent::MessageStop) => Some((Ok(StreamEvent::MessageStop), None)),
            Ok(ev) => Some((Ok(ev), Some(reading))),
            Err(e) => {
                tracing::debug!(error = %e, "Bedrock event stream failed");
                Some((Err(e), None))
            }
        }
    });
    Box::pin(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::Header;
    use serde_json::json;

    fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
        let mut msg = Message::new(Bytes::copy_from_slice(payload));
        for (k, v) in headers {
            msg = msg.add_header(Header::new(
                k.to_string(),
                HeaderValue::String(v.to_string().into()),
            ));
        }
        let mut out = Vec::new();
        write_message_to(&msg, &mut out).unwrap();
        out
    }

    fn chunk(event: Value) -> Vec<u8> {
        let payload = json!({"bytes": STANDARD.encode(event.to_string())}).to_string();
        frame(
            &[
                (":message-type", "event"),
                (":event-type", "chunk"),
                (":content-type", "application/json"),
            ],
            payload.as_bytes(),
        )
    }

    async fn collect(bytes: Vec<u8>, split: usize) -> Vec<Result<StreamEvent, ProviderError>> {
        let chunks: Vec<Result<Bytes, std::io::Error>> = bytes
            .chunks(split)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        event_stream(futures_util::stream::iter(chunks), Duration::from_secs(5))
            .collect()
            .await
    }

    #[tokio::test]
    async fn chunks_split_anywhere_decode_to_events() {
        let mut body = chunk(
            json!({"type":"message_start","message":{"id":"m","model":"claude","usage":{"input_tokens":5}}}),
        );
        body.extend(chunk(json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})));
        body.extend(chunk(json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}})));
        body.extend(chunk(
            json!({"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":5}}),
        ));
        body.extend(chunk(json!({"type":"ping"})));
        for split in [1, 3, 7, 4096] {
            let evs = collect(body.clone(), split).await;
            assert_eq!(evs.len(), 4, "split {split}: {evs:?}");
            assert!(matches!(&evs[2], Ok(StreamEvent::TextDelta { text, .. }) if text == "hi"));
            assert!(matches!(evs[3], Ok(StreamEvent::MessageStop)));
        }
    }

    #[tokio::test]
    async fn exceptions_eof_and_corruption() {
        let mut body = chunk(json!({"type":"message_start","message":{"id":"m","model":"c"}}));
        body.extend(frame(
            &[
                (":message-type", "exception"),
                (":exception-type", "modelStreamErrorException"),
            ],
            br#"{"message":"boom","originalStatusCode":529,"originalMessage":"Overloaded"}"#,
        ));
        let evs = collect(body.clone(), 5).await;
        match &evs[1] {
            Err(ProviderError::StreamError {
                error_type,
                message,
            }) => {
                assert_eq!(error_type, "modelStreamErrorException");
                assert_eq!(message, "boom (model status 529: Overloaded)");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(evs.len(), 2);
        let start = chunk(json!({"type":"message_start","message":{"id":"m","model":"c"}}));
        let evs = collect(start.clone(), 5).await;
        assert!(matches!(
            evs[1],
            Err(ProviderError::Incomplete { after_bytes: true })
        ));
        let mut bad = start.clone();
        let n = bad.len();
        bad[n - 1] ^= 0xff; // message CRC
        let evs = collect(bad, 64).await;
        assert!(
            matches!(&evs[0], Err(ProviderError::Transport { message, .. }) if message.contains("corrupt")),
            "{evs:?}"
        );
    }
}
