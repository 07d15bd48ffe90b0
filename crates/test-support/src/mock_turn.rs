//! What a mock model server answers with: a script of [`MockTurn`]s (well-framed SSE, raw
//! bytes, HTTP errors, drops, stalls, delays, chunking, gated streams), and how a turn becomes
//! a timed sequence of body frames. Both mocks ([`crate::MockAnthropic`],
//! [`crate::MockOpenai`]) play their scripts through this.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use bytes::Bytes;

use crate::sse::{SseEvent, render_sse};

/// Default gap between chunks for [`MockTurn::chunked`].
pub const DEFAULT_CHUNK_GAP: Duration = Duration::from_millis(1);

/// A condition the mock polls while it holds a stream ([`MockTurn::Gated`]), e.g. "a process
/// has the FIFO open". It runs on the mock's thread every few milliseconds and must not block.
#[derive(Clone)]
pub struct Gate(Arc<dyn Fn() -> bool + Send + Sync>);

impl Gate {
    /// A gate that opens when `f` returns true.
    pub fn new(f: impl Fn() -> bool + Send + Sync + 'static) -> Gate {
        Gate(Arc::new(f))
    }

    /// Whether the gate is open now.
    pub fn is_open(&self) -> bool {
        (self.0)()
    }
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Gate(..)")
    }
}

/// One pause of a [`MockTurn::Gated`] stream.
#[derive(Debug, Clone)]
pub struct Hold {
    /// Index of the event the mock holds back (`events.len()`: the end of the body).
    pub before: usize,
    /// Send on once this opens...
    pub gate: Gate,
    /// ...or once this much time has passed (the test then sees the gate's own record).
    pub timeout: Duration,
}

/// How the mock answers one request.
#[derive(Debug, Clone)]
pub enum MockTurn {
    /// Send `events`, holding before chosen events until a [`Gate`] opens (or its timeout
    /// passes); with `drop_at`, close the connection abruptly instead of sending that event
    /// and the rest. Lets a test prove ordering: "the runner did X before the stream went on".
    Gated {
        /// The whole stream.
        events: Vec<SseEvent>,
        /// Pauses, by the index of the event they hold back.
        holds: Vec<Hold>,
        /// Drop the connection before this event (after any hold at that index).
        drop_at: Option<usize>,
    },
    /// A well-framed SSE stream (`content-type: text/event-stream`, a `request-id` header).
    Sse(Vec<SseEvent>),
    /// SSE headers, then these bytes verbatim (a fixture file, a stream without its final
    /// blank line, garbage...).
    RawSse(String),
    /// A plain HTTP response (e.g. `401` with Anthropic's error body, `429` with
    /// `retry-after`). `content-type` is added as `application/json` unless given.
    Http {
        /// Status code.
        status: u16,
        /// Body, verbatim.
        body: String,
        /// Extra headers (name, value).
        headers: Vec<(String, String)>,
    },
    /// Send the first `after` events, then close the connection abruptly mid-body.
    DropAfter {
        /// The whole stream that would have been sent.
        events: Vec<SseEvent>,
        /// How many events to send before dropping.
        after: usize,
    },
    /// Send `after` events, go silent for `stall`, then send the rest.
    Stall {
        /// The whole stream.
        events: Vec<SseEvent>,
        /// How many events to send before going silent.
        after: usize,
        /// How long to stay silent.
        stall: Duration,
    },
    /// Wait this long before sending the response headers.
    Delay(Duration, Box<MockTurn>),
    /// Send the inner turn's body in `chunk`-byte pieces (each its own HTTP chunk, so the
    /// client sees frames split mid-line, mid-JSON and mid-UTF-8) with `gap` between them
    /// (`Duration::ZERO`: no pause).
    Chunked {
        /// The turn whose body is chunked.
        turn: Box<MockTurn>,
        /// Bytes per piece (at least 1).
        chunk: usize,
        /// Pause between pieces.
        gap: Duration,
    },
}

impl MockTurn {
    /// `RawSse` from anything string-like.
    pub fn raw_sse(text: impl Into<String>) -> Self {
        MockTurn::RawSse(text.into())
    }

    /// This turn, after `delay` of latency before the headers.
    pub fn delayed(self, delay: Duration) -> Self {
        MockTurn::Delay(delay, Box::new(self))
    }

    /// This turn's body in `chunk`-byte pieces, [`DEFAULT_CHUNK_GAP`] apart.
    pub fn chunked(self, chunk: usize) -> Self {
        MockTurn::Chunked {
            turn: Box::new(self),
            chunk,
            gap: DEFAULT_CHUNK_GAP,
        }
    }

    /// Add or replace a header on an `Http` turn (also through `Delay`/`Chunked`).
    /// Panics on other variants.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        match &mut self {
            MockTurn::Http { headers, .. } => {
                headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
                headers.push((name.to_string(), value.to_string()));
            }
            MockTurn::Delay(_, inner) | MockTurn::Chunked { turn: inner, .. } => {
                let t = std::mem::replace(inner.as_mut(), MockTurn::RawSse(String::new()));
                **inner = t.with_header(name, value);
            }
            other => panic!("with_header: only Http turns carry custom headers, not {other:?}"),
        }
        self
    }

    /// Remove a header from an `Http` turn (also through `Delay`/`Chunked`).
    pub fn without_header(mut self, name: &str) -> Self {
        match &mut self {
            MockTurn::Http { headers, .. } => {
                headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
            }
            MockTurn::Delay(_, inner) | MockTurn::Chunked { turn: inner, .. } => {
                let t = std::mem::replace(inner.as_mut(), MockTurn::RawSse(String::new()));
                **inner = t.without_header(name);
            }
            _ => {}
        }
        self
    }
}

/// One piece of a planned response body .
pub(super) enum Frame {
    Data(Bytes),
    Sleep(Duration),
    Until(Gate, Duration),
    Abort,
}

/// How a [`MockTurn`] is sent: latency, status, headers, body frames .
pub(super) struct Plan {
    pub(super) delay: Duration,
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) frames: Vec<Frame>,
    pub(super) streamed: bool,
}

fn sse_headers(n: usize) -> Vec<(String, String)> {
    vec![
        (
            "content-type".into(),
            "text/event-stream; charset=utf-8".into(),
        ),
        ("cache-control".into(), "no-cache".into()),
        ("request-id".into(), format!("req_mock_{n}")),
    ]
}

fn sse_plan(n: usize, frames: Vec<Frame>) -> Plan {
    Plan {
        delay: Duration::ZERO,
        status: 200,
        headers: sse_headers(n),
        frames,
        streamed: true,
    }
}

fn data(s: String) -> Frame {
    Frame::Data(Bytes::from(s))
}

/// `n` is the 1-based request number, used for the `request-id` header.
pub(super) fn plan(turn: &MockTurn, n: usize) -> Plan {
    match turn {
        MockTurn::Sse(events) => sse_plan(n, vec![data(render_sse(events))]),
        MockTurn::RawSse(text) => sse_plan(n, vec![data(text.clone())]),
        MockTurn::Http {
            status,
            body,
            headers,
        } => {
            let mut headers = headers.clone();
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                headers.push(("content-type".into(), "application/json".into()));
            }
            Plan {
                delay: Duration::ZERO,
                status: *status,
                headers,
                frames: vec![data(body.clone())],
                streamed: false,
            }
        }
        MockTurn::DropAfter { events, after } => {
            let k = (*after).min(events.len());
            // The pause lets hyper flush headers and the sent events before the abort
            // (it would otherwise discard its write buffer along with the connection).
            sse_plan(
                n,
                vec![
                    data(render_sse(&events[..k])),
                    Frame::Sleep(Duration::from_millis(10)),
                    Frame::Abort,
                ],
            )
        }
        MockTurn::Stall {
            events,
            after,
            stall,
        } => {
            let k = (*after).min(events.len());
            sse_plan(
                n,
                vec![
                    data(render_sse(&events[..k])),
                    Frame::Sleep(*stall),
                    data(render_sse(&events[k..])),
                ],
            )
        }
        MockTurn::Gated {
            events,
            holds,
            drop_at,
        } => {
            let mut frames = Vec::new();
            for k in 0..=events.len() {
                for h in holds.iter().filter(|h| h.before == k) {
                    frames.push(Frame::Until(h.gate.clone(), h.timeout));
                }
                if *drop_at == Some(k) {
                    // As in DropAfter: let hyper flush what was sent before the abort.
                    frames.push(Frame::Sleep(Duration::from_millis(10)));
                    frames.push(Frame::Abort);
                    break;
                }
                if let Some(e) = events.get(k) {
                    frames.push(data(e.render()));
                }
            }
            sse_plan(n, frames)
        }
        MockTurn::Delay(d, inner) => {
            let mut p = plan(inner, n);
            p.delay += *d;
            p
        }
        MockTurn::Chunked { turn, chunk, gap } => {
            let mut p = plan(turn, n);
            let size = (*chunk).max(1);
            let mut frames = Vec::new();
            for f in p.frames {
                match f {
                    Frame::Data(b) => {
                        let mut off = 0;
                        while off < b.len() {
                            let end = (off + size).min(b.len());
                            if !gap.is_zero() && (off > 0 || !frames.is_empty()) {
                                frames.push(Frame::Sleep(*gap));
                            }
                            frames.push(Frame::Data(b.slice(off..end)));
                            off = end;
                        }
                    }
                    other => frames.push(other),
                }
            }
            p.frames = frames;
            p.streamed = true;
            p
        }
    }
}

/// A streaming body that plays `frames` (sleeps, data, an abort).
pub(super) fn body_stream(frames: Vec<Frame>) -> Body {
    let stream = futures_util::stream::unfold(VecDeque::from(frames), |mut q| async move {
        loop {
            match q.pop_front()? {
                Frame::Sleep(d) => tokio::time::sleep(d).await,
                Frame::Until(gate, timeout) => {
                    let deadline = Instant::now() + timeout;
                    while !gate.is_open() && Instant::now() < deadline {
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                }
                Frame::Data(b) => return Some((Ok::<Bytes, std::io::Error>(b), q)),
                Frame::Abort => {
                    q.clear();
                    return Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "mock: connection dropped mid-body (DropAfter)",
                        )),
                        q,
                    ));
                }
            }
        }
    });
    Body::from_stream(stream)
}
