//! The scripted HTTP server both mock model APIs run on.
//!
//! [`MockServer::start`] binds `127.0.0.1:0`, runs axum on its own thread (its own
//! current-thread tokio runtime, so it works the same from a plain `#[test]` driving the real
//! binary and from a `#[tokio::test]`), and answers the N-th request to the API's one route
//! with script turn N. Every request is captured and checked by the API's invariant checks;
//! violations are recorded, never silently passed: [`MockServer::assert_clean`] reports them,
//! and dropping the server with unreported violations panics (unless the test is already
//! panicking). What differs between APIs is an [`Api`].

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

use crate::invariants::Violation;
use crate::mock_turn::{Frame, MockTurn, body_stream, plan};
use crate::sse::SseEvent;

/// Checks one request: its 1-based number, method, path, headers (lowercase names) and body
/// (`None`: not JSON).
pub type Check = Box<
    dyn Fn(usize, &str, &str, &[(String, String)], Option<&Value>) -> Vec<Violation> + Send + Sync,
>;

/// What makes a [`MockServer`] one API's mock.
pub struct Api {
    /// For messages and the thread name, e.g. `Anthropic`.
    pub name: &'static str,
    /// The one route the script answers, e.g. `/v1/messages` (always `POST`).
    pub route: &'static str,
    /// The invariant checks (`None`: only the route is checked).
    pub check: Option<Check>,
    /// Codes of violations not to record.
    pub ignored: Vec<String>,
    /// The API's error body for `message`, for the mock's own errors (no route, no turn).
    pub error_body: fn(&str) -> String,
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
}

#[derive(Default)]
struct State {
    requests: Vec<CapturedRequest>,
    violations: Vec<Violation>,
    served: usize,
}

struct Shared {
    api: Api,
    script: Vec<MockTurn>,
    /// `Some(n)`: the script is one conversation that each of `n` tasks has, whatever order
    /// their requests arrive in: a request is answered with the turn its conversation is at
    /// (the number of assistant messages it carries). `None`: request N gets turn N.
    conversations: Option<usize>,
    state: Mutex<State>,
}

impl Shared {
    /// The script turn for a request with `body`, when it has one.
    fn turn_for(&self, served: usize, body: Option<&Value>) -> Option<usize> {
        let i = match self.conversations {
            None => served,
            Some(n) => {
                if served >= self.script.len() * n {
                    return None;
                }
                body.and_then(|b| b.get("messages"))
                    .and_then(Value::as_array)
                    .map_or(0, |m| {
                        m.iter()
                            .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
                            .count()
                    })
            }
        };
        (i < self.script.len()).then_some(i)
    }

    /// Script turns a clean run serves.
    fn total(&self) -> usize {
        self.script.len() * self.conversations.unwrap_or(1)
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, st: &mut State, v: Violation) {
        if !self.api.ignored.iter().any(|c| c == v.code) {
            st.violations.push(v);
        }
    }
}

/// A running mock server. Dropping it shuts the server down.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Start a server for `api` that answers request N to its route with `script[N]`.
    pub fn start(api: Api, script: Vec<MockTurn>) -> MockServer {
        Self::start_serving(api, script, None)
    }

    /// Start a server for `api` at which each of `tasks` concurrent tasks has the conversation
    /// `script`: a request is answered with the turn its own conversation has reached, so the
    /// tasks of a batch can interleave in any order.
    pub fn start_each(api: Api, script: Vec<MockTurn>, tasks: usize) -> MockServer {
        Self::start_serving(api, script, Some(tasks))
    }

    fn start_serving(api: Api, script: Vec<MockTurn>, conversations: Option<usize>) -> MockServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("mock: bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("mock: set_nonblocking");
        let addr = listener.local_addr().expect("mock: local_addr");
        let name = format!("mock-{}-{}", api.name.to_lowercase(), addr.port());
        let shared = Arc::new(Shared {
            api,
            script,
            conversations,
            state: Mutex::new(State::default()),
        });
        let (shutdown_tx, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let for_server = shared.clone();
        let thread = std::thread::Builder::new()
            .name(name)
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
        MockServer {
            addr,
            shared,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        }
    }

    /// The server's root, e.g. `http://127.0.0.1:41234` (no trailing slash).
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
            let mut problems: Vec<String> =
                st.violations.drain(..).map(|v| v.to_string()).collect();
            let total = self.shared.total();
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
                "mock {} is not clean ({nreq} request(s) received):\n  - {}",
                self.shared.api.name,
                problems.join("\n  - ")
            );
        }
    }
}

impl Drop for MockServer {
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
                    "mock {} dropped with {} unreported violation(s) (call assert_clean or take_violations):\n  - {}",
                    self.shared.api.name,
                    v.len(),
                    v.join("\n  - ")
                );
            }
        }
    }
}

fn error_response(shared: &Shared, status: StatusCode, message: &str) -> Response {
    let mut resp = Response::new(Body::from((shared.api.error_body)(message)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// Record a violation of the mock's own (`mock_internal`) and answer 500.
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
    drop(st);
    error_response(
        shared,
        StatusCode::INTERNAL_SERVER_ERROR,
        &format!("mock: {message}"),
    )
}

/// The token a scripted turn writes for the working directory the request's system prompt
/// names ("- Working directory: …"): a task's worktree path is known only when it runs.
pub const WORKDIR: &str = "@WORKDIR@";

/// The working directory named in the system prompt of request `n` (1-based).
fn parsed_workdir(shared: &Shared, n: usize) -> Option<String> {
    let st = shared.lock();
    let system = st.requests.get(n - 1)?.body.get("system")?.to_string();
    let start = system.find("Working directory: ")? + "Working directory: ".len();
    let rest = &system[start..];
    let end = rest.find("\\n").unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

/// `turn` with [`WORKDIR`] replaced by `workdir` in its SSE data.
fn with_workdir(turn: MockTurn, workdir: Option<String>) -> MockTurn {
    match (turn, workdir) {
        (MockTurn::Sse(events), Some(w)) => MockTurn::Sse(
            events
                .into_iter()
                .map(|e| SseEvent {
                    event: e.event,
                    data: e.data.replace(WORKDIR, &w),
                })
                .collect(),
        ),
        (turn, _) => turn,
    }
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
            let n = shared.lock().requests.len() + 1;
            return internal(
                &shared,
                n,
                format!("could not read the request body of {method} {path}: {e}"),
            );
        }
    };
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let route = shared.api.route;
    let routed = method == "POST" && path == route;

    let (n, turn) = {
        let mut st = shared.lock();
        let n = st.requests.len() + 1;
        let found = match &shared.api.check {
            Some(check) => check(n, &method, &path, &headers, parsed.as_ref()),
            None if !routed => vec![Violation {
                request: n,
                code: "method_path",
                message: format!("expected POST {route}, got {method} {path}"),
            }],
            None => Vec::new(),
        };
        for v in found {
            shared.record(&mut st, v);
        }
        let mut turn_index = None;
        let mut turn = None;
        if routed {
            if let Some(i) = shared.turn_for(st.served, parsed.as_ref()) {
                turn_index = Some(i);
                turn = Some(shared.script[i].clone());
                st.served += 1;
            } else {
                let total = shared.total();
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
            &shared,
            StatusCode::NOT_FOUND,
            &format!("mock: no route for {method} {path} (only POST {route})"),
        );
    }
    let Some(turn) = turn else {
        let total = shared.total();
        return error_response(
            &shared,
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("mock: request #{n} is beyond the script ({total} turn(s))"),
        );
    };

    let turn = with_workdir(turn, parsed_workdir(&shared, n));
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
