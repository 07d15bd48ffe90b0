//! A scripted mock of the Anthropic Messages API on axum, for tests.
//!
//! [`MockAnthropic::start`] binds `127.0.0.1:0`, runs the server on its own thread (its own
//! current-thread tokio runtime), and answers the N-th `POST /v1/messages` with script turn N.
//! It works the same from a plain `#[test]` (driving the real binary) and from a
//! `#[tokio::test]`. Every request is captured and checked against the API's invariants
//! ([`super::invariants`]); violations are recorded, never silently passed:
//! [`MockAnthropic::assert_clean`] reports them, and dropping the mock with unreported
//! violations panics (unless the test is already panicking).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

use super::invariants::{Violation, check_request};
use super::sse_builder::{SseEvent, render_sse};

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

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct CapturedRequest {
    /// 0-based script turn that answered it (`None`: wrong route or beyond the script).
    pub turn: Option<usize>,
    /// HTTP method.
    pub method: String,
    /// URI path (no query).
    pub path: String,
    /// Headers in order, names lowercase.
    pub headers: Vec<(String, String)>,
    /// Body parsed as JSON (`Value::Null` if it is not JSON; see `raw_body`).
    pub body: Value,
    /// Body as text (lossy UTF-8).
    pub raw_body: String,
    /// When the mock's handler received the request (headers parsed, before reading the
    /// body); the benchmarks measure start-up and per-turn gaps with it.
    pub received_at: Instant,
}

impl CapturedRequest {
    /// First value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `body.messages` (empty if missing).
    pub fn messages(&self) -> &[Value] {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The last message, if any.
    pub fn last_message(&self) -> Option<&Value> {
        self.messages().last()
    }

    /// The `tool_result` blocks of the last message.
    pub fn tool_results(&self) -> Vec<&Value> {
        self.last_message()
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .map(|bs| {
                bs.iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `tool_result` answering `tool_use_id`, anywhere in the conversation.
    pub fn tool_result(&self, tool_use_id: &str) -> Option<&Value> {
        self.messages()
            .iter()
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
            .find(|b| {
                b.get("type").and_then(Value::as_str) == Some("tool_result")
                    && b.get("tool_use_id").and_then(Value::as_str) == Some(tool_use_id)
            })
    }

    /// The text of a tool_result's content (string content, or its text parts joined by `\n`).
    pub fn tool_result_text(&self, tool_use_id: &str) -> Option<String> {
        let c = self.tool_result(tool_use_id)?.get("content")?;
        Some(match c {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
    }

    /// The system prompt as text (string, or text blocks joined by `\n`).
    pub fn system_text(&self) -> String {
        match self.body.get("system") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(bs)) => bs
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }

    /// Names of the offered tools, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str).map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// All text of message `i` (string content or text blocks joined by `\n`).
    pub fn message_text(&self, i: usize) -> String {
        match self.messages().get(i).and_then(|m| m.get("content")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(bs)) => bs
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }
}

/// Per-mock options: which invariant checks to skip, for deliberately odd cases.
#[derive(Debug, Clone)]
pub struct MockOptions {
    ignored: Vec<String>,
    invariants: bool,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            ignored: Vec::new(),
            invariants: true,
        }
    }
}

impl MockOptions {
    /// All checks on.
    pub fn new() -> Self {
        Self::default()
    }

    /// Do not record violations with this code (see [`super::invariants`] for the codes).
    pub fn ignore(mut self, code: &str) -> Self {
        self.ignored.push(code.to_string());
        self
    }

    /// Do not check request invariants at all (script overruns are still recorded).
    pub fn no_invariants(mut self) -> Self {
        self.invariants = false;
        self
    }
}

#[derive(Default)]
struct State {
    requests: Vec<CapturedRequest>,
    violations: Vec<Violation>,
    served: usize,
}

struct Shared {
    script: Vec<MockTurn>,
    options: MockOptions,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, st: &mut State, v: Violation) {
        if !self.options.ignored.iter().any(|c| c == v.code) {
            st.violations.push(v);
        }
    }
}

/// A running mock server. Dropping it shuts the server down.
pub struct MockAnthropic {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockAnthropic {
    /// Start a mock that answers request N with `script[N]`, all invariant checks on.
    pub fn start(script: Vec<MockTurn>) -> MockAnthropic {
        Self::start_with(script, MockOptions::default())
    }

    /// Start a mock with options (e.g. `MockOptions::new().ignore("empty_text")`).
    pub fn start_with(script: Vec<MockTurn>, options: MockOptions) -> MockAnthropic {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("mock: bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("mock: set_nonblocking");
        let addr = listener.local_addr().expect("mock: local_addr");
        let shared = Arc::new(Shared {
            script,
            options,
            state: Mutex::new(State::default()),
        });
        let (shutdown_tx, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let for_server = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("mock-anthropic-{}", addr.port()))
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("runtime: {e}")));
                        return;
                    }
                };
                rt.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = ready_tx.send(Err(format!("listener: {e}")));
                            return;
                        }
                    };
                    let app = Router::new().fallback(move |req: Request| {
                        let shared = for_server.clone();
                        async move { handle(shared, req).await }
                    });
                    let _ = ready_tx.send(Ok(()));
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = shutdown_rx => {}
                    }
                });
                // Dropping the runtime here cancels in-flight connections (stalls included).
            })
            .expect("mock: spawn server thread");
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("mock: server failed to start: {e}"),
            Err(_) => panic!("mock: server thread died during startup"),
        }
        MockAnthropic {
            addr,
            shared,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        }
    }

    /// Base URL for `ANTHROPIC_BASE_URL`, e.g. `http://127.0.0.1:41234` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<CapturedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Request `i` (0-based); panics with the count if there is none.
    pub fn request(&self, i: usize) -> CapturedRequest {
        let reqs = self.requests();
        reqs.get(i).cloned().unwrap_or_else(|| {
            panic!(
                "mock: no request #{i} (0-based); received {} request(s)",
                reqs.len()
            )
        })
    }

    /// Number of script turns served so far.
    pub fn served(&self) -> usize {
        self.shared.lock().served
    }

    /// Recorded violations, rendered (`request #N: [code] message`).
    pub fn violations(&self) -> Vec<String> {
        self.shared
            .lock()
            .violations
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Take (and clear) the recorded violations, so a test that expects some can assert on
    /// them without the drop check firing.
    pub fn take_violations(&self) -> Vec<Violation> {
        std::mem::take(&mut self.shared.lock().violations)
    }

    /// Block (polling) until at least `n` requests arrived or `timeout` passed; returns
    /// whether they did.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.shared.lock().requests.len() >= n {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Panic unless every script turn was served exactly once and no violation was recorded.
    /// Clears the violations it reports.
    pub fn assert_clean(&self) {
        let (problems, nreq) = {
            let mut st = self.shared.lock();
            let mut problems: Vec<String> = st.violations.iter().map(|v| v.to_string()).collect();
            st.violations.clear();
            let total = self.shared.script.len();
            if st.served < total {
                problems.push(format!(
                    "unserved turns: served {} of {total} script turn(s); turn(s) {:?} never requested",
                    st.served,
                    (st.served..total).collect::<Vec<_>>()
                ));
            }
            (problems, st.requests.len())
        };
        if !problems.is_empty() {
            panic!(
                "mock Anthropic is not clean ({nreq} request(s) received):\n  - {}",
                problems.join("\n  - ")
            );
        }
    }
}

impl Drop for MockAnthropic {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if !std::thread::panicking() {
            let v = self.violations();
            if !v.is_empty() {
                panic!(
                    "mock Anthropic dropped with {} unreported violation(s) (call assert_clean or take_violations):\n  - {}",
                    v.len(),
                    v.join("\n  - ")
                );
            }
        }
    }
}

/// One piece of a planned response body (shared with the OpenAI mock).
pub(crate) enum Frame {
    Data(Bytes),
    Sleep(Duration),
    Until(Gate, Duration),
    Abort,
}

/// How a [`MockTurn`] is sent: latency, status, headers, body frames (shared with the OpenAI mock).
pub(crate) struct Plan {
    pub(crate) delay: Duration,
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) frames: Vec<Frame>,
    pub(crate) streamed: bool,
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
pub(crate) fn plan(turn: &MockTurn, n: usize) -> Plan {
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

fn error_response(status: StatusCode, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": "mock_error", "message": message}});
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// A streaming body that plays `frames` (sleeps, data, an abort).
pub(crate) fn body_stream(frames: Vec<Frame>) -> Body {
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

async fn handle(shared: Arc<Shared>, req: Request) -> Response {
    let received_at = Instant::now();
    let (parts, body) = req.into_parts();
    let method = parts.method.to_string();
    let path = parts.uri.path().to_string();
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let bytes = match axum::body::to_bytes(body, 64 * 1024 * 1024).await {
        Ok(b) => b,
        Err(e) => {
            let mut st = shared.lock();
            let n = st.requests.len() + 1;
            shared.record(
                &mut st,
                Violation {
                    request: n,
                    code: "mock_internal",
                    message: format!("could not read the request body of {method} {path}: {e}"),
                },
            );
            return error_response(StatusCode::BAD_REQUEST, "mock: unreadable request body");
        }
    };
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let routed = method == "POST" && path == "/v1/messages";

    let (n, turn) = {
        let mut st = shared.lock();
        let index = st.requests.len();
        let n = index + 1;
        if shared.options.invariants {
            for v in check_request(n, &method, &path, &headers, parsed.as_ref()) {
                shared.record(&mut st, v);
            }
        } else if !routed {
            shared.record(
                &mut st,
                Violation {
                    request: n,
                    code: "method_path",
                    message: format!("expected POST /v1/messages, got {method} {path}"),
                },
            );
        }
        let mut turn_index = None;
        let mut turn = None;
        if routed {
            if let Some(t) = shared.script.get(st.served) {
                turn_index = Some(st.served);
                turn = Some(t.clone());
                st.served += 1;
            } else {
                let total = shared.script.len();
                shared.record(
                    &mut st,
                    Violation {
                        request: n,
                        code: "script_exhausted",
                        message: format!(
                            "request beyond the script: all {total} turn(s) were already served"
                        ),
                    },
                );
            }
        }
        st.requests.push(CapturedRequest {
            turn: turn_index,
            method: method.clone(),
            path: path.clone(),
            headers,
            body: parsed.unwrap_or(Value::Null),
            raw_body: String::from_utf8_lossy(&bytes).into_owned(),
            received_at,
        });
        (n, turn)
    };

    if !routed {
        return error_response(
            StatusCode::NOT_FOUND,
            &format!("mock: no route for {method} {path} (only POST /v1/messages)"),
        );
    }
    let Some(turn) = turn else {
        let total = shared.script.len();
        return error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("mock: request #{n} is beyond the script ({total} turn(s))"),
        );
    };

    let p = plan(&turn, n);
    if !p.delay.is_zero() {
        tokio::time::sleep(p.delay).await;
    }
    let body = if p.streamed {
        body_stream(p.frames)
    } else {
        let mut all = Vec::new();
        for f in p.frames {
            if let Frame::Data(b) = f {
                all.extend_from_slice(&b);
            }
        }
        Body::from(all)
    };
    let mut resp = Response::new(body);
    match StatusCode::from_u16(p.status) {
        Ok(s) => *resp.status_mut() = s,
        Err(e) => return internal(&shared, n, format!("bad status {}: {e}", p.status)),
    }
    for (k, v) in &p.headers {
        match (
            HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            (Ok(k), Ok(v)) => {
                resp.headers_mut().append(k, v);
            }
            _ => return internal(&shared, n, format!("bad header in script: {k}: {v}")),
        }
    }
    resp
}

fn internal(shared: &Shared, n: usize, message: String) -> Response {
    let mut st = shared.lock();
    shared.record(
        &mut st,
        Violation {
            request: n,
            code: "mock_internal",
            message: message.clone(),
        },
    );
    error_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        &format!("mock: {message}"),
    )
}
