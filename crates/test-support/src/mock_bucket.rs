//! A mock Anthropic API behind a token-bucket rate limit, as the real API enforces it: a
//! request that finds a token gets a one-turn text answer; one that does not gets the API's
//! real 429 body (`tests/fixtures/errors/429_rate_limit_error_account.json`) with `retry-after`
//! (whole seconds, rounded up, as the API sends it) and `x-should-retry: true`. Every answer
//! carries `anthropic-ratelimit-requests-{limit,remaining,reset}` (limit per minute,
//! remaining tokens, the time the bucket is full again).
//!
//! Unlike [`crate::mock_server::MockServer`] it has no script: every admitted request gets the
//! same answer, so it serves a batch of any size. It counts what it admitted and refused.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;

use crate::sse::render_sse;
use crate::sse_builder::{Resp, error_body};

/// The bucket's settings.
#[derive(Debug, Clone, Copy)]
pub struct BucketConfig {
    /// Tokens added per second (the requests rate the API allows).
    pub rate: f64,
    /// The most tokens it holds (the burst it allows); it starts full.
    pub burst: f64,
    /// How long an admitted answer takes before its headers.
    pub latency: Duration,
}

/// What the mock saw.
#[derive(Debug, Clone, Default)]
pub struct BucketStats {
    /// When each admitted request came, from the mock's start.
    pub admitted: Vec<Duration>,
    /// When each refused request (429) came.
    pub refused: Vec<Duration>,
}

struct Bucket {
    config: BucketConfig,
    started: Instant,
    tokens: f64,
    last: Instant,
    stats: BucketStats,
}

impl Bucket {
    /// Take a token if there is one; the tokens left and the wait for the next one.
    fn take(&mut self) -> (bool, f64, Duration) {
        let now = Instant::now();
        let c = self.config;
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * c.rate).min(c.burst);
        self.last = now;
        let at = now.duration_since(self.started);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            self.stats.admitted.push(at);
            (true, self.tokens, Duration::ZERO)
        } else {
            self.stats.refused.push(at);
            let next = Duration::from_secs_f64((1.0 - self.tokens) / c.rate);
            (false, self.tokens, next)
        }
    }
}

/// A running token-bucket mock; dropping it stops the server.
pub struct MockBucket {
    addr: SocketAddr,
    bucket: Arc<Mutex<Bucket>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

fn answer(bucket: &Mutex<Bucket>) -> (bool, Vec<(String, String)>) {
    let mut b = bucket.lock().unwrap_or_else(|e| e.into_inner());
    let (admitted, left, next) = b.take();
    let c = b.config;
    let full_in = Duration::from_secs_f64(((c.burst - left) / c.rate).max(0.0));
    let reset = chrono::DateTime::<chrono::Utc>::from(SystemTime::now() + full_in)
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let mut h = vec![
        (
            "anthropic-ratelimit-requests-limit".to_string(),
            format!("{}", (c.rate * 60.0).round() as u64),
        ),
        (
            "anthropic-ratelimit-requests-remaining".to_string(),
            format!("{}", left.floor() as u64),
        ),
        ("anthropic-ratelimit-requests-reset".to_string(), reset),
        ("request-id".to_string(), "req_mock_bucket".to_string()),
    ];
    if !admitted {
        h.push((
            "retry-after".to_string(),
            format!("{}", next.as_secs_f64().ceil().max(1.0) as u64),
        ));
        h.push(("x-should-retry".to_string(), "true".to_string()));
    }
    (admitted, h)
}

impl MockBucket {
    /// Start the mock on `127.0.0.1:0`.
    pub fn start(config: BucketConfig) -> MockBucket {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("mock: bind");
        listener.set_nonblocking(true).expect("mock: nonblocking");
        let addr = listener.local_addr().expect("mock: addr");
        let now = Instant::now();
        let bucket = Arc::new(Mutex::new(Bucket {
            config,
            started: now,
            tokens: config.burst,
            last: now,
            stats: BucketStats::default(),
        }));
        let sse = render_sse(&Resp::new().text("Done.").build());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let for_server = bucket.clone();
        let thread = std::thread::Builder::new()
            .name(format!("mock-bucket-{}", addr.port()))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("mock: runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                    let app = Router::new().fallback(move |req: Request| {
                        let bucket = for_server.clone();
                        let sse = sse.clone();
                        async move {
                            // Read the body so the client's request completes.
                            let _ = axum::body::to_bytes(req.into_body(), usize::MAX).await;
                            let (admitted, headers) = answer(&bucket);
                            let mut r = Response::builder();
                            if admitted {
                                let latency =
                                    bucket.lock().map(|b| b.config.latency).unwrap_or_default();
                                tokio::time::sleep(latency).await;
                                r = r
                                    .status(StatusCode::OK)
                                    .header("content-type", "text/event-stream");
                            } else {
                                r = r
                                    .status(StatusCode::TOO_MANY_REQUESTS)
                                    .header("content-type", "application/json");
                            }
                            for (k, v) in headers {
                                r = r.header(k, v);
                            }
                            let body = if admitted {
                                sse
                            } else {
                                error_body(429).trim().to_string()
                            };
                            r.body(Body::from(body)).expect("response")
                        }
                    });
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = rx => {}
                    }
                });
            })
            .expect("mock: thread");
        MockBucket {
            addr,
            bucket,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The server's root URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// What it admitted and refused so far.
    pub fn stats(&self) -> BucketStats {
        self.bucket
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .stats
            .clone()
    }
}

impl Drop for MockBucket {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl crate::model_server::ModelServer for MockBucket {
    fn runner_env(&self) -> Vec<(&'static str, String)> {
        vec![("ANTHROPIC_BASE_URL", self.url())]
    }
}
