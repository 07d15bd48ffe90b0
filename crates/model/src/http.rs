//! HTTP plumbing shared by the streaming providers (Anthropic, OpenAI-compatible, Bedrock,
//! Vertex AI): the rustls
//! crypto provider, the client, the endpoint URL check, and one streaming POST that turns
//! non-2xx statuses and non-SSE bodies into [`ProviderError`]s.

use std::sync::Once;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};

use super::http_error;
use super::provider::ProviderError;
use super::sse::error_chain;

/// Error bodies are read up to this many bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Install rustls's `ring` crypto provider as the process default. Idempotent; reqwest
/// (built with `rustls-no-provider`) panics in `Client::build` without it.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Err means another thread installed one first, which is fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}

/// Env var overriding every provider's stream idle timeout, in milliseconds.
pub(crate) const ENV_IDLE_TIMEOUT_MS: &str = "RUNNER_STREAM_IDLE_TIMEOUT_MS";

/// The idle timeout from [`ENV_IDLE_TIMEOUT_MS`] read through `lookup`, if set and valid
/// (a warning is logged when it is set but not a positive integer).
pub(crate) fn idle_timeout_override(lookup: impl Fn(&str) -> Option<String>) -> Option<Duration> {
    let raw = lookup(ENV_IDLE_TIMEOUT_MS)?;
    match raw.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Some(Duration::from_millis(ms)),
        _ => {
            tracing::warn!(
                value = %raw,
                "ignoring {ENV_IDLE_TIMEOUT_MS}: not a positive integer of milliseconds"
            );
            None
        }
    }
}

/// Stream idle timeout for a local or self-hosted server (any base URL other than the
/// provider's public API): such a server may stay silent for minutes while it reads a long
/// prompt, and sends no keep-alive.
pub(crate) const LOCAL_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The default stream idle timeout for `base_url`: `hosted` for the provider's public API
/// (`hosted_url`), [`LOCAL_IDLE_TIMEOUT`] for anything else (localhost, a proxy, a gateway).
pub(crate) fn default_idle_timeout(base_url: &str, hosted_url: &str, hosted: Duration) -> Duration {
    let norm = |u: &str| u.trim().trim_end_matches('/').to_ascii_lowercase();
    if norm(base_url) == norm(hosted_url) {
        hosted
    } else {
        LOCAL_IDLE_TIMEOUT
    }
}

/// Parse an endpoint URL built from a configured base URL; only http(s) is accepted.
pub(crate) fn endpoint_url(full: &str, base_url: &str) -> Result<reqwest::Url, ProviderError> {
    let url = reqwest::Url::parse(full)
        .map_err(|e| ProviderError::Config(format!("invalid base URL {base_url:?}: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ProviderError::Config(format!(
            "base URL {base_url:?} must be http or https"
        )));
    }
    Ok(url)
}

/// A header value for a secret (marked sensitive so it never shows in debug output).
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, ProviderError> {
    let mut v = HeaderValue::from_str(value).map_err(|_| {
        ProviderError::Config("API key contains characters not allowed in a header".into())
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// Build a client that sends `headers` (plus JSON content type and SSE accept) on every
/// request to `base`. Installs the crypto provider if needed.
pub(crate) fn build_client(
    mut headers: HeaderMap,
    connect_timeout: Duration,
    base: &reqwest::Url,
) -> Result<reqwest::Client, ProviderError> {
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .tls_backend_rustls()
        .connect_timeout(connect_timeout)
        .user_agent(format!("runner/{}", crate::VERSION))
        .default_headers(headers);
    if base.scheme() == "http" {
        // A plain-http base URL (a local model server, proxy or mock) never does TLS, so do
        // not load and parse the system CA store (about 10 ms per client; BENCHMARKS.md).
        // An https redirect from it then fails verification rather than going unchecked.
        builder = builder.tls_certs_only(Vec::<reqwest::Certificate>::new());
    }
    builder
        .build()
        .map_err(|e| ProviderError::Config(format!("HTTP client: {}", error_chain(&e))))
}

/// POST `body` to `url` and return the response once its headers are in, with its request id.
///
/// `idle_timeout` bounds the wait for the headers ([`ProviderError::Stalled`]). A non-2xx
/// status becomes [`ProviderError::Http`] (body parsed by [`http_error`]); a 2xx response
/// that is not `text/event-stream` becomes [`ProviderError::Malformed`].
pub(crate) async fn post_event_stream(
    client: &reqwest::Client,
    url: &reqwest::Url,
    body: Vec<u8>,
    idle_timeout: Duration,
) -> Result<(reqwest::Response, Option<String>), ProviderError> {
    send_stream(
        client.post(url.clone()).body(body),
        "text/event-stream",
        idle_timeout,
    )
    .await
}

/// Send `request` and return the response once its headers are in, with its request id, as
/// [`post_event_stream`] does, expecting a 2xx body of `content_type` (an empty content type
/// is tolerated).
pub(crate) async fn send_stream(
    request: reqwest::RequestBuilder,
    expected_content_type: &str,
    idle_timeout: Duration,
) -> Result<(reqwest::Response, Option<String>), ProviderError> {
    let send = request.send();
    let mut resp = match tokio::time::timeout(idle_timeout, send).await {
        Err(_) => return Err(ProviderError::Stalled(idle_timeout)),
        Ok(Err(e)) => {
            return Err(ProviderError::Transport {
                message: error_chain(&e),
                before_response: true,
            });
        }
        Ok(Ok(r)) => r,
    };
    let status = resp.status();
    let request_id = http_error::request_id_header(resp.headers());
    tracing::debug!(%status, request_id = ?request_id, "response headers");
    if !status.is_success() {
        let headers = resp.headers().clone();
        let body = read_error_body(&mut resp, idle_timeout).await;
        return Err(http_error::http_error(status.as_u16(), &headers, &body));
    }
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !content_type.is_empty() && !content_type.starts_with(expected_content_type) {
        let body = read_error_body(&mut resp, idle_timeout).await;
        let snippet: String = String::from_utf8_lossy(&body).chars().take(500).collect();
        return Err(ProviderError::Malformed(format!(
            "expected a {expected_content_type} response, got {content_type}: {}",
            snippet.trim()
        )));
    }
    Ok((resp, request_id))
}

/// `application/x-www-form-urlencoded` of `pairs`.
pub(crate) fn form_body(pairs: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        let mut out = String::with_capacity(s.len());
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Send `req` (a credential or token endpoint call) and return its body text. A transport
/// failure, 429 or 5xx is transient ([`ProviderError::Transport`], retried); any other non-2xx
/// (a role that cannot be assumed, an expired token) is [`ProviderError::Config`]. Messages
/// name `what`.
pub(crate) async fn call(
    req: reqwest::RequestBuilder,
    what: &str,
) -> Result<String, ProviderError> {
    let resp = req
        .send()
        .await
        .map_err(|e| endpoint_error(what, None, &error_chain(&e)))?;
    let status = resp.status();
    let text = resp
        .text()
        .await
        .map_err(|e| endpoint_error(what, None, &error_chain(&e)))?;
    if !status.is_success() {
        let detail: String = text.trim().chars().take(500).collect();
        return Err(endpoint_error(what, Some(status.as_u16()), &detail));
    }
    Ok(text)
}

/// A failed credential or token endpoint call (see [`call`]).
fn endpoint_error(what: &str, status: Option<u16>, detail: &str) -> ProviderError {
    match status {
        Some(s) if (400..500).contains(&s) && s != 429 => {
            ProviderError::Config(format!("{what} answered HTTP {s}: {detail}"))
        }
        _ => ProviderError::Transport {
            message: format!("{what} failed: {detail}"),
            before_response: true,
        },
    }
}

/// Read at most [`MAX_ERROR_BODY`] bytes of an error response.
pub(crate) async fn read_error_body(
    resp: &mut reqwest::Response,
    idle_timeout: Duration,
) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        match tokio::time::timeout(idle_timeout, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                let room = MAX_ERROR_BODY.saturating_sub(body.len());
                body.extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or(&[]));
                if body.len() >= MAX_ERROR_BODY {
                    break;
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                tracing::debug!(error = %error_chain(&e), "reading error body failed");
                break;
            }
            Err(_) => {
                tracing::debug!("reading error body timed out");
                break;
            }
        }
    }
    body
}
