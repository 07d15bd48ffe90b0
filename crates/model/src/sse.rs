//! SSE framing on top of `sse-stream`, with an EOF flush and an idle watchdog.
//!
//! [`SseEvents::new`] turns any byte stream (`reqwest::Response::bytes_stream()` or chunks fed
//! by a test) into raw SSE events. Two things are added to what `sse-stream` does:
//!
//! * at EOF a final `b"\n\n"` is chained on, so a stream whose last event lacks its closing
//!   blank line (the Python SDK's fixtures, some proxies) still yields that event;
//! * an idle watchdog: when no chunk arrives for `idle_timeout`, the stream yields
//!   [`ProviderError::Stalled`] and ends.
//!
//! A transport error from the byte stream becomes
//! `ProviderError::Transport { before_response: false }`; so do bytes that cannot be decoded
//! (invalid UTF-8: a garbled or truncated chunk, see [`corrupt`]). After any error the stream
//! yields nothing more.

use std::error::Error as StdError;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sse_stream::{Sse, SseByteStream};

use super::provider::ProviderError;

/// What the byte layer can fail with; carried through `sse-stream`'s boxed body error.
#[derive(Debug, thiserror::Error)]
enum ByteError {
    /// No chunk within the idle timeout.
    #[error("stream stalled: no data for {0:?}")]
    Stalled(Duration),
    /// The underlying byte stream failed.
    #[error("{0}")]
    Transport(String),
}

/// The error for a corrupt stream: a `data:` line that is not JSON, bytes that are not UTF-8.
/// That is a transport fault (a proxy cutting or garbling a chunk), not the server breaking
/// the protocol, so it is retried like a dropped stream, with the same attempt bookkeeping.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> ProviderError {
    ProviderError::Transport {
        message: format!("corrupt stream: {what}"),
        before_response: false,
    }
}

/// Render an error with its `source()` chain, `a: b: c`.
pub(crate) fn error_chain(e: &(dyn StdError + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = inner.source();
    }
    s
}

type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, ByteError>> + Send>>;

/// The watchdog + EOF-flush layer under the SSE parser.
fn watched<S, E>(bytes: S, idle_timeout: Duration, seen: Arc<AtomicBool>) -> ByteStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: StdError + Send + Sync + 'static,
{
    /// Where the byte layer is.
    enum State<S> {
        /// Reading chunks.
        Reading(Pin<Box<S>>),
        /// EOF seen and flushed, or an error yielded.
        Done,
    }
    let stream = futures_util::stream::unfold(State::Reading(Box::pin(bytes)), move |state| {
        let seen = Arc::clone(&seen);
        async move {
            let State::Reading(mut inner) = state else {
                return None;
            };
            match tokio::time::timeout(idle_timeout, inner.next()).await {
                Ok(Some(Ok(chunk))) => {
                    if !chunk.is_empty() {
                        seen.store(true, Ordering::Relaxed);
                    }
                    Some((Ok(chunk), State::Reading(inner)))
                }
                Ok(Some(Err(e))) => {
                    let message = error_chain(&e);
                    tracing::debug!(error = %message, "SSE byte stream failed");
                    Some((Err(ByteError::Transport(message)), State::Done))
                }
                // EOF: terminate a last event that lacks its closing blank line.
                Ok(None) => Some((Ok(Bytes::from_static(b"\n\n")), State::Done)),
                Err(_elapsed) => {
                    tracing::debug!(?idle_timeout, "SSE stream idle timeout");
                    Some((Err(ByteError::Stalled(idle_timeout)), State::Done))
                }
            }
        }
    });
    Box::pin(stream)
}

/// A stream of raw SSE events decoded from a byte stream, with EOF flush and idle watchdog.
pub struct SseEvents {
    inner: SseByteStream<ByteStream>,
    seen: Arc<AtomicBool>,
    done: bool,
}

impl SseEvents {
    /// Decode `bytes` as SSE. `idle_timeout` bounds the wait for each chunk (including the
    /// first one).
    pub fn new<S, E>(bytes: S, idle_timeout: Duration) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: StdError + Send + Sync + 'static,
    {
        let seen = Arc::new(AtomicBool::new(false));
        SseEvents {
            inner: SseByteStream::new(watched(bytes, idle_timeout, Arc::clone(&seen))),
            seen,
            done: false,
        }
    }

    /// Whether any (non-empty) chunk of bytes has arrived so far.
    pub fn received_bytes(&self) -> bool {
        self.seen.load(Ordering::Relaxed)
    }
}

/// Map `sse-stream`'s terminal error to ours.
fn map_error(e: sse_stream::Error) -> ProviderError {
    match e {
        sse_stream::Error::Body(boxed) => match boxed.downcast::<ByteError>() {
            Ok(b) => match *b {
                ByteError::Stalled(d) => ProviderError::Stalled(d),
                ByteError::Transport(message) => ProviderError::Transport {
                    message,
                    before_response: false,
                },
            },
            Err(other) => ProviderError::Transport {
                message: error_chain(other.as_ref()),
                before_response: false,
            },
        },
        sse_stream::Error::Utf8Parse(u) => corrupt(format!("SSE field is not valid UTF-8: {u}")),
        other => corrupt(format!("SSE decoding failed: {other}")),
    }
}

impl Stream for SseEvents {
    type Item = Result<Sse, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(ev))) => Poll::Ready(Some(Ok(ev))),
            Poll::Ready(Some(Err(e))) => {
                self.done = true;
                Poll::Ready(Some(Err(map_error(e))))
            }
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;
    use std::convert::Infallible;

    fn chunks(parts: Vec<&'static [u8]>) -> impl Stream<Item = Result<Bytes, Infallible>> + Send {
        stream::iter(parts.into_iter().map(|p| Ok(Bytes::from_static(p))))
    }

    async fn collect(s: SseEvents) -> Vec<Result<Sse, ProviderError>> {
        s.collect().await
    }

    fn ok_events(v: Vec<Result<Sse, ProviderError>>) -> Vec<(Option<String>, Option<String>)> {
        v.into_iter()
            .map(|r| {
                let e = r.unwrap();
                (e.event, e.data)
            })
            .collect()
    }

    #[tokio::test]
    async fn last_event_without_blank_line_is_flushed() {
        let s = SseEvents::new(
            chunks(vec![b"event: a\ndata: 1\n\nevent: b\ndata: 2"]),
            Duration::from_secs(5),
        );
        let got = ok_events(collect(s).await);
        assert_eq!(
            got,
            vec![
                (Some("a".into()), Some("1".into())),
                (Some("b".into()), Some("2".into()))
            ]
        );
    }

    #[tokio::test]
    async fn bom_crlf_comments_and_split_utf8() {
        let body = "\u{feff}: comment\r\nevent: x\r\ndata: h\u{e9}llo \u{1F600}\r\n\r\n";
        let bytes = body.as_bytes();
        // 1-byte chunks split the BOM and the multi-byte characters.
        let parts: Vec<Result<Bytes, Infallible>> = bytes
            .iter()
            .map(|b| Ok(Bytes::copy_from_slice(&[*b])))
            .collect();
        let s = SseEvents::new(stream::iter(parts), Duration::from_secs(5));
        let got = ok_events(collect(s).await);
        assert_eq!(
            got,
            vec![(Some("x".into()), Some("h\u{e9}llo \u{1F600}".into()))]
        );
    }

    #[tokio::test]
    async fn received_bytes_tracks_non_empty_chunks() {
        let mut s = SseEvents::new(chunks(vec![b"", b"data: 1\n\n"]), Duration::from_secs(5));
        assert!(!s.received_bytes());
        let first = s.next().await.unwrap().unwrap();
        assert_eq!(first.data.as_deref(), Some("1"));
        assert!(s.received_bytes());
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn idle_timeout_yields_stalled_then_ends() {
        let pending = stream::iter(vec![Ok::<_, Infallible>(Bytes::from_static(
            b"data: 1\n\n",
        ))])
        .chain(stream::pending());
        let mut s = SseEvents::new(pending, Duration::from_millis(50));
        assert_eq!(s.next().await.unwrap().unwrap().data.as_deref(), Some("1"));
        match s.next().await {
            Some(Err(ProviderError::Stalled(d))) => assert_eq!(d, Duration::from_millis(50)),
            other => panic!("expected Stalled, got {other:?}"),
        }
        assert!(s.next().await.is_none());
    }

    #[derive(Debug, thiserror::Error)]
    #[error("connection reset")]
    struct Reset;

    #[tokio::test]
    async fn transport_error_mid_stream() {
        let parts: Vec<Result<Bytes, Reset>> =
            vec![Ok(Bytes::from_static(b"data: 1\n\ndata: par")), Err(Reset)];
        let mut s = SseEvents::new(stream::iter(parts), Duration::from_secs(5));
        assert_eq!(s.next().await.unwrap().unwrap().data.as_deref(), Some("1"));
        match s.next().await {
            Some(Err(ProviderError::Transport {
                message,
                before_response: false,
            })) => assert!(message.contains("connection reset"), "{message}"),
            other => panic!("expected Transport, got {other:?}"),
        }
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn invalid_utf8_is_a_corrupt_stream() {
        let mut s = SseEvents::new(chunks(vec![b"data: \xff\xfe\n\n"]), Duration::from_secs(5));
        match s.next().await {
            Some(Err(ProviderError::Transport {
                message,
                before_response: false,
            })) => assert!(message.starts_with("corrupt stream: "), "{message}"),
            other => panic!("expected a corrupt stream, got {other:?}"),
        }
        assert!(s.next().await.is_none());
    }
}
