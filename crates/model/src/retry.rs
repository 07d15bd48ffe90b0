//! Retry policy for model calls: which provider failures are retried and how long to wait
//! (the rate limits a batch shares are the governor's: `runner::governor`).
//!
//! What is retried is the whole model response attempt (a failed attempt is recorded as
//! abandoned in the transcript); the agent loop asks [`RetryState::decide`] after every failed attempt and either waits the returned
//! delay and makes the attempt again, or ends the task with `api_error` and the message given.
//!
//! Backoff: `base_delay × 2^(n-1)` for the n-th retry, capped at `max_delay`, minus up to 25%
//! jitter; a `retry-after` header is a floor (and, beyond `max_wait`, fails at once). The sum
//! of all waits of one task is bounded by `budget`.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::ProviderError;

/// Proportional jitter: a delay is shortened by up to this fraction.
pub(crate) const JITTER_RATIO: f64 = 0.25;

/// Retry settings (spec `retry:`, CLI `--max-retries`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Most retries of one model request (not counting the first attempt).
    pub max_retries: u32,
    /// Delay before the first retry; doubles for each further retry.
    pub base_delay: Duration,
    /// Cap of the exponential delay.
    pub max_delay: Duration,
    /// Longest `retry-after` runner waits for; a longer one fails the task at once.
    pub max_wait: Duration,
    /// Most time spent waiting between retries over the whole task.
    pub budget: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: Self::DEFAULT_MAX_RETRIES,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(32),
            max_wait: Duration::from_secs(120),
            budget: Duration::from_secs(15 * 60),
        }
    }
}

impl RetryPolicy {
    /// Default `max_retries`.
    pub const DEFAULT_MAX_RETRIES: u32 = 10;

    /// The exponential delay before retry `n` (1-based), with `jitter` in `[0, 1)` taking off
    /// up to [`JITTER_RATIO`] of it, and `retry_after` as a floor.
    pub fn delay(&self, n: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        let exp = n.saturating_sub(1).min(30);
        let raw = self
            .base_delay
            .saturating_mul(1u32 << exp)
            .min(self.max_delay);
        let jitter = jitter.clamp(0.0, 1.0) * JITTER_RATIO;
        // Not `mul_f64`: it panics when the product rounds past `Duration::MAX` (a spec may set
        // `max_delay` to any number of seconds).
        let backoff =
            Duration::try_from_secs_f64(raw.as_secs_f64() * (1.0 - jitter)).unwrap_or(raw);
        match retry_after {
            Some(floor) => backoff.max(floor),
            None => backoff,
        }
    }
}

/// How a provider failure is handled.
#[derive(Debug, Clone, PartialEq)]
pub enum Class {
    /// Transient: retry after backoff (`retry_after` from the server is a floor).
    Retryable {
        /// The server's `retry-after`, if it sent one.
        retry_after: Option<Duration>,
    },
    /// The request asked for more output tokens than fit: retry at once with `max_tokens`
    /// lowered to this value.
    LowerMaxTokens(u32),
    /// Permanent: the task ends with `api_error` and this message.
    Fatal(String),
}

/// Output tokens kept free below the context limit when lowering `max_tokens`.
const CONTEXT_MARGIN: u64 = 1_000;
/// `max_tokens` is never lowered below this; the context is then exhausted.
pub const MIN_MAX_TOKENS: u32 = 1_024;

/// Whether a transport error message describes a TLS certificate failure (never retried:
/// the next attempt fails the same way).
fn is_certificate_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("certificate") || m.contains("unknownissuer") || m.contains("invalid peer cert")
}

/// Classify one failed attempt.
pub fn classify(err: &ProviderError) -> Class {
    use ProviderError::*;
    match err {
        Http {
            status,
            error_type,
            message,
            retry_after,
            should_retry,
            ..
        } => {
            if let Some(n) = lowered_max_tokens(*status, message) {
                return Class::LowerMaxTokens(n);
            }
            let retry = Class::Retryable {
                retry_after: *retry_after,
            };
            // The server knows best; x-should-retry wins over the status.
            match should_retry {
                Some(true) => return retry,
                Some(false) => return Class::Fatal(describe(err)),
                None => {}
            }
            match status {
                429 if retry_after.is_none() => Class::Fatal(format!(
                    "{} (a 429 without retry-after is a spend or credit limit that does not clear by waiting)",
                    describe(err)
                )),
                408 | 409 | 429 | 500 | 502 | 503 | 504 | 529 => retry,
                _ if error_type.as_deref() == Some("overloaded_error") => retry,
                _ => Class::Fatal(describe(err)),
            }
        }
        // Anthropic's transient stream errors, and Bedrock's transient stream exceptions.
        StreamError { error_type, .. } => match error_type.to_ascii_lowercase().as_str() {
            "overloaded_error"
            | "api_error"
            | "timeout_error"
            | "rate_limit_error"
            | "throttlingexception"
            | "modelstreamerrorexception"
            | "serviceunavailableexception"
            | "internalserverexception"
            | "modeltimeoutexception" => Class::Retryable { retry_after: None },
            _ => Class::Fatal(describe(err)),
        },
        Incomplete { .. } | UnclosedBlock { .. } | Stalled(_) => {
            Class::Retryable { retry_after: None }
        }
        Transport { message, .. } => {
            if is_certificate_error(message) {
                Class::Fatal(format!(
                    "{err} (TLS certificate failure: check the base URL and the system CA store; not retried)"
                ))
            } else {
                Class::Retryable { retry_after: None }
            }
        }
        Malformed(_) | Replay(_) | Config(_) => Class::Fatal(describe(err)),
    }
}

/// Whether the failure says the conversation no longer fits the context window: the loop
/// then compacts the conversation and retries, and ends with `context_exhausted` (not
/// `api_error`) when that does not help. Anthropic's `prompt is too long` and `exceed context
/// limit`, and the OpenAI-compatible wordings (OpenAI `context_length_exceeded`, vLLM
/// `maximum context length`, llama.cpp `exceeds the available context size`).
pub fn context_exhausted(err: &ProviderError) -> bool {
    match err {
        ProviderError::Http {
            status: 400 | 413,
            message,
            error_type,
            ..
        } => {
            let m = message.to_ascii_lowercase();
            [
                "prompt is too long",
                "exceed context limit",
                "maximum context length",
                "context_length_exceeded",
                "exceeds the available context size",
            ]
            .iter()
            .any(|p| m.contains(p))
                || error_type.as_deref() == Some("context_length_exceeded")
        }
        _ => false,
    }
}

/// Whether the failure says the model is overloaded (HTTP 529, an `overloaded_error` answer or
/// stream event, Bedrock's `ServiceUnavailableException`): the failure a fallback model is for.
pub fn overloaded(err: &ProviderError) -> bool {
    let named =
        |t: &str| t == "overloaded_error" || t.eq_ignore_ascii_case("ServiceUnavailableException");
    match err {
        ProviderError::Http {
            status, error_type, ..
        } => *status == 529 || error_type.as_deref().is_some_and(named),
        ProviderError::StreamError { error_type, .. } => named(error_type),
        _ => false,
    }
}

/// The HTTP status of a failure, if it was an HTTP error (stream-json `error_status`).
pub fn error_status(err: &ProviderError) -> Option<u16> {
    match err {
        ProviderError::Http { status, .. } => Some(*status),
        _ => None,
    }
}

/// The SDK's `SDKAssistantMessageError` category for a failure (stream-json `error`).
pub fn error_category(err: &ProviderError) -> &'static str {
    match err {
        ProviderError::Http { status, .. } => match status {
            401 => "authentication_failed",
            402 => "billing_error",
            429 => "rate_limit",
            400 | 404 | 413 => "invalid_request",
            s if *s >= 500 => "server_error",
            _ => "unknown",
        },
        ProviderError::StreamError { error_type, .. } if error_type == "rate_limit_error" => {
            "rate_limit"
        }
        ProviderError::StreamError { .. }
        | ProviderError::Incomplete { .. }
        | ProviderError::UnclosedBlock { .. }
        | ProviderError::Stalled(_)
        | ProviderError::Transport { .. } => "server_error",
        _ => "unknown",
    }
}

/// Whether the failure happened after the response started (the attempt is then abandoned,
/// with a `runner_attempt_abandoned` record).
pub fn mid_stream(err: &ProviderError) -> bool {
    match err {
        ProviderError::StreamError { .. }
        | ProviderError::Malformed(_)
        | ProviderError::UnclosedBlock { .. } => true,
        ProviderError::Incomplete { after_bytes } => *after_bytes,
        ProviderError::Transport {
            before_response, ..
        } => !before_response,
        _ => false,
    }
}

/// A message for a permanent API failure that names the cause and what to do.
pub fn describe(err: &ProviderError) -> String {
    match err {
        // A cloud platform's own error (Bedrock's `AccessDeniedException`, Vertex AI's
        // `PERMISSION_DENIED`): its name and message say more than Anthropic's wording.
        ProviderError::Http {
            error_type: Some(t),
            ..
        } if t.bytes().any(|b| b.is_ascii_uppercase()) => err.to_string(),
        ProviderError::Http {
            status, message, ..
        } => match status {
            401 => format!(
                "ANTHROPIC_API_KEY rejected (401 authentication_error): {message}. Check the key (or the provider's key variable)."
            ),
            403 => format!(
                "API key not permitted (403 permission_error): {message}. The key lacks access to this model or feature."
            ),
            404 => format!("not found (404): {message}. Check the model id and the base URL."),
            413 => format!(
                "request too large (413): {message}. The conversation exceeds the API's request size limit."
            ),
            400 => format!("invalid request (400 invalid_request_error): {message}"),
            _ => err.to_string(),
        },
        other => other.to_string(),
    }
}

/// For the two context errors that a smaller `max_tokens` fixes, the value to retry with:
/// `input length and `max_tokens` exceed context limit: A + B > C` → `C - A - margin`;
/// `` `max_tokens`: N > M, which is the maximum allowed ...`` → `M`.
pub fn lowered_max_tokens(status: u16, message: &str) -> Option<u32> {
    if status != 400 {
        return None;
    }
    let numbers = |s: &str| -> Vec<u64> {
        s.split(|c: char| !c.is_ascii_digit())
            .filter(|t| !t.is_empty())
            .filter_map(|t| t.parse().ok())
            .collect()
    };
    if let Some(pos) = message.find("exceed context limit") {
        let n = numbers(&message[pos..]);
        let (input, limit) = match n.as_slice() {
            [a, _b, c, ..] => (*a, *c),
            _ => return None,
        };
        let room = limit.checked_sub(input)?.saturating_sub(CONTEXT_MARGIN);
        return (room >= u64::from(MIN_MAX_TOKENS)).then(|| room.min(u64::from(u32::MAX)) as u32);
    }
    if let Some(pos) = message.find("`max_tokens`:") {
        let rest = &message[pos + "`max_tokens`:".len()..];
        if rest.contains("maximum allowed") {
            let n = numbers(rest);
            if let [_asked, max, ..] = n.as_slice() {
                return u32::try_from(*max).ok().filter(|m| *m >= 1);
            }
        }
    }
    None
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Wait `delay`, then make retry number `attempt` (1-based).
    Retry {
        /// 1-based retry number.
        attempt: u32,
        /// How long to wait first.
        delay: Duration,
    },
    /// Retry at once with a lower `max_tokens`.
    LowerMaxTokens(u32),
    /// End the task with `api_error` and this message.
    GiveUp(String),
}

/// Retry bookkeeping for one task: the policy, retries of the current request, total wait.
#[derive(Debug, Clone)]
pub struct RetryState {
    /// The settings.
    pub policy: RetryPolicy,
    retries: u32,
    waited: Duration,
    jitter: fn() -> f64,
}

/// A random number in `[0, 1)` from the OS-seeded uuid generator (no extra dependency).
fn random_unit() -> f64 {
    let bits = uuid::Uuid::new_v4().as_u128() as u64 >> 11;
    bits as f64 / (1u64 << 53) as f64
}

impl RetryState {
    /// Fresh state under `policy`.
    pub fn new(policy: RetryPolicy) -> Self {
        RetryState {
            policy,
            retries: 0,
            waited: Duration::ZERO,
            jitter: random_unit,
        }
    }

    /// Use a fixed jitter source (tests).
    #[cfg(test)]
    pub(crate) fn with_jitter(mut self, f: fn() -> f64) -> Self {
        self.jitter = f;
        self
    }

    /// A request succeeded: the next failure starts from the first retry again (the total
    /// wait budget keeps counting).
    pub fn succeeded(&mut self) {
        self.retries = 0;
    }

    /// Total time waited so far.
    #[cfg(test)]
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Decide what follows the failure `err`. A `Retry` is counted (retry number and wait)
    /// when returned.
    pub fn decide(&mut self, err: &ProviderError) -> Decision {
        let retry_after = match classify(err) {
            Class::Fatal(msg) => return Decision::GiveUp(msg),
            Class::LowerMaxTokens(n) => return Decision::LowerMaxTokens(n),
            Class::Retryable { retry_after } => retry_after,
        };
        let p = self.policy;
        let attempts = self.retries + 1;
        if self.retries >= p.max_retries {
            return Decision::GiveUp(format!(
                "{} (gave up after {attempts} attempt{}: retry.max_retries is {})",
                describe(err),
                if attempts == 1 { "" } else { "s" },
                p.max_retries
            ));
        }
        if let Some(ra) = retry_after
            && ra > p.max_wait
        {
            return Decision::GiveUp(format!(
                "{} (the server asks to retry after {}, longer than retry.max_wait {}s; not waiting)",
                describe(err),
                wait_text(ra),
                p.max_wait.as_secs()
            ));
        }
        let n = self.retries + 1;
        let delay = p.delay(n, retry_after, (self.jitter)());
        if self.waited.saturating_add(delay) > p.budget {
            return Decision::GiveUp(format!(
                "{} (gave up after {attempts} attempt{}: the retry time budget retry.budget {}s is spent)",
                describe(err),
                if attempts == 1 { "" } else { "s" },
                p.budget.as_secs()
            ));
        }
        self.retries = n;
        self.waited = self.waited.saturating_add(delay);
        Decision::Retry { attempt: n, delay }
    }
}

/// A server's requested wait for a message: seconds, or "more than a year" for the absurd
/// values a saturated `retry-after` carries.
fn wait_text(d: Duration) -> String {
    const YEAR: u64 = 365 * 24 * 3600;
    if d.as_secs() > YEAR {
        "more than a year".to_string()
    } else {
        format!("{}s", d.as_secs())
    }
}

/// Sleep `d`, or less if `cancel` fires; returns false when cancelled.
pub async fn sleep_unless_cancelled(d: Duration, cancel: &CancellationToken) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = cancel.cancelled() => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> ProviderError {
        ProviderError::Http {
            status,
            error_type: None,
            message: "m".into(),
            request_id: None,
            retry_after: None,
            should_retry: None,
        }
    }

    fn with_retry_after(status: u16, ra: Option<Duration>, sr: Option<bool>) -> ProviderError {
        match http(status) {
            ProviderError::Http {
                status,
                error_type,
                message,
                request_id,
                ..
            } => ProviderError::Http {
                status,
                error_type,
                message,
                request_id,
                retry_after: ra,
                should_retry: sr,
            },
            other => other,
        }
    }

    fn retryable(e: &ProviderError) -> bool {
        matches!(classify(e), Class::Retryable { .. })
    }

    #[test]
    fn classification_table() {
        for s in [408, 409, 500, 502, 503, 504, 529] {
            assert!(retryable(&http(s)), "{s}");
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!retryable(&http(s)), "{s}");
        }
        // 429: only with retry-after (without it: spend cap).
        assert!(!retryable(&http(429)));
        assert!(retryable(&with_retry_after(
            429,
            Some(Duration::from_secs(1)),
            None
        )));
        // x-should-retry wins both ways.
        assert!(retryable(&with_retry_after(400, None, Some(true))));
        assert!(!retryable(&with_retry_after(529, None, Some(false))));
        let se = |t: &str| ProviderError::StreamError {
            error_type: t.into(),
            message: "x".into(),
        };
        assert!(retryable(&se("overloaded_error")));
        assert!(retryable(&se("api_error")));
        assert!(!retryable(&se("invalid_request_error")));
        assert!(retryable(&ProviderError::Incomplete { after_bytes: true }));
        let unclosed = ProviderError::UnclosedBlock {
            index: 1,
            block_type: "tool_use".into(),
        };
        assert!(retryable(&unclosed));
        assert!(mid_stream(&unclosed));
        assert!(retryable(&ProviderError::Stalled(Duration::from_secs(1))));
        assert!(retryable(&ProviderError::Transport {
            message: "connection refused".into(),
            before_response: true
        }));
        assert!(!retryable(&ProviderError::Transport {
            message: "error sending request: invalid peer certificate: UnknownIssuer".into(),
            before_response: true
        }));
        assert!(!retryable(&ProviderError::Malformed("x".into())));
        assert!(!retryable(&ProviderError::Config("x".into())));
    }

    #[test]
    fn fatal_messages_name_the_cause() {
        let Class::Fatal(m) = classify(&http(401)) else {
            panic!()
        };
        assert!(m.contains("ANTHROPIC_API_KEY rejected (401"), "{m}");
        let Class::Fatal(m) = classify(&http(429)) else {
            panic!()
        };
        assert!(m.contains("spend or credit limit"), "{m}");
        let Class::Fatal(m) = classify(&http(413)) else {
            panic!()
        };
        assert!(m.contains("request too large (413)"), "{m}");
    }

    #[test]
    fn context_overflow_wordings_are_recognized() {
        let with = |status: u16, message: &str| match http(status) {
            ProviderError::Http {
                status,
                error_type,
                request_id,
                ..
            } => ProviderError::Http {
                status,
                error_type,
                message: message.into(),
                request_id,
                retry_after: None,
                should_retry: None,
            },
            other => other,
        };
        for m in [
            "prompt is too long: 210000 tokens > 200000 maximum",
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "the request exceeds the available context size, try increasing it",
        ] {
            assert!(context_exhausted(&with(400, m)), "{m}");
        }
        assert!(!context_exhausted(&with(
            400,
            "max_tokens must be positive"
        )));
        assert!(!context_exhausted(&with(500, "prompt is too long")));
    }

    #[test]
    fn context_errors_lower_max_tokens() {
        assert_eq!(
            lowered_max_tokens(
                400,
                "input length and `max_tokens` exceed context limit: 180000 + 32000 > 200000, decrease input length or `max_tokens` and try again"
            ),
            Some(19_000)
        );
        assert_eq!(
            lowered_max_tokens(
                400,
                "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5"
            ),
            None,
            "needs the backticks the API uses"
        );
        assert_eq!(
            lowered_max_tokens(
                400,
                "`max_tokens`: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929"
            ),
            Some(64_000)
        );
        // No room left: not lowered (the context is exhausted).
        assert_eq!(
            lowered_max_tokens(
                400,
                "input length and `max_tokens` exceed context limit: 199500 + 32000 > 200000"
            ),
            None
        );
        assert_eq!(lowered_max_tokens(400, "prompt is too long"), None);
        assert_eq!(
            lowered_max_tokens(500, "exceed context limit: 1 + 2 > 3"),
            None
        );
        let mut e = http(400);
        if let ProviderError::Http { message, .. } = &mut e {
            *message = "`max_tokens`: 9 > 8, which is the maximum allowed number".into();
        }
        assert_eq!(classify(&e), Class::LowerMaxTokens(8));
    }

    #[test]
    fn backoff_doubles_caps_and_jitters() {
        let p = RetryPolicy::default();
        let ms = |d: Duration| d.as_millis() as u64;
        assert_eq!(ms(p.delay(1, None, 0.0)), 500);
        assert_eq!(ms(p.delay(2, None, 0.0)), 1000);
        assert_eq!(ms(p.delay(3, None, 0.0)), 2000);
        assert_eq!(ms(p.delay(7, None, 0.0)), 32_000);
        assert_eq!(ms(p.delay(40, None, 0.0)), 32_000, "no overflow");
        // Jitter takes off up to 25%.
        assert_eq!(ms(p.delay(1, None, 0.999_999)), 375);
        assert_eq!(ms(p.delay(2, None, 0.5)), 875);
        // retry-after is a floor, and backoff is a floor for a small retry-after.
        assert_eq!(ms(p.delay(1, Some(Duration::from_secs(3)), 0.0)), 3000);
        assert_eq!(ms(p.delay(4, Some(Duration::from_millis(10)), 0.0)), 4000);
    }

    #[test]
    fn decide_counts_retries_and_gives_up() {
        let policy = RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(10),
            ..RetryPolicy::default()
        };
        let mut st = RetryState::new(policy).with_jitter(|| 0.0);
        let e = http(529);
        assert_eq!(
            st.decide(&e),
            Decision::Retry {
                attempt: 1,
                delay: Duration::from_millis(10)
            }
        );
        assert_eq!(
            st.decide(&e),
            Decision::Retry {
                attempt: 2,
                delay: Duration::from_millis(20)
            }
        );
        let Decision::GiveUp(m) = st.decide(&e) else {
            panic!()
        };
        assert!(
            m.contains("HTTP 529") && m.contains("after 3 attempts"),
            "{m}"
        );
        assert_eq!(st.waited(), Duration::from_millis(30));
        st.succeeded();
        assert!(matches!(st.decide(&e), Decision::Retry { attempt: 1, .. }));
        assert!(matches!(st.decide(&http(401)), Decision::GiveUp(_)));
    }

    #[test]
    fn long_retry_after_and_budget_fail_at_once() {
        let policy = RetryPolicy {
            max_wait: Duration::from_secs(5),
            budget: Duration::from_millis(1500),
            ..RetryPolicy::default()
        };
        let mut st = RetryState::new(policy).with_jitter(|| 0.0);
        let Decision::GiveUp(m) =
            st.decide(&with_retry_after(429, Some(Duration::from_secs(60)), None))
        else {
            panic!()
        };
        assert!(
            m.contains("retry after 60s") && m.contains("max_wait 5s"),
            "{m}"
        );
        let e = http(503);
        assert!(matches!(st.decide(&e), Decision::Retry { .. })); // 500 ms
        assert!(matches!(st.decide(&e), Decision::Retry { .. })); // 1000 ms → 1500
        let Decision::GiveUp(m) = st.decide(&e) else {
            panic!()
        };
        assert!(m.contains("retry time budget"), "{m}");
    }

    #[test]
    fn absurd_retry_after_gives_up_at_once() {
        let mut st = RetryState::new(RetryPolicy::default()).with_jitter(|| 0.0);
        let Decision::GiveUp(m) = st.decide(&with_retry_after(429, Some(Duration::MAX), None))
        else {
            panic!()
        };
        assert!(
            m.contains("retry after more than a year") && m.contains("max_wait 120s"),
            "{m}"
        );
        assert_eq!(st.waited(), Duration::ZERO);
        // Settings as large as a spec can write never overflow the arithmetic.
        let huge = RetryPolicy {
            base_delay: Duration::MAX,
            max_delay: Duration::MAX,
            max_wait: Duration::MAX,
            budget: Duration::MAX,
            ..RetryPolicy::default()
        };
        assert!(huge.delay(40, Some(Duration::MAX), 0.5) >= Duration::from_secs(1 << 40));
        assert_eq!(huge.delay(1, None, 0.0), Duration::MAX);
        let mut st = RetryState::new(huge).with_jitter(|| 0.0);
        assert!(matches!(
            st.decide(&with_retry_after(429, Some(Duration::MAX), None)),
            Decision::Retry { .. }
        ));
    }

    #[test]
    fn random_unit_in_range() {
        for _ in 0..100 {
            let r = random_unit();
            assert!((0.0..1.0).contains(&r));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn cancel_ends_waits() {
        let token = CancellationToken::new();
        token.cancel();
        assert!(!sleep_unless_cancelled(Duration::from_secs(3600), &token).await);
        let fresh = CancellationToken::new();
        let t1 = tokio::time::Instant::now();
        assert!(sleep_unless_cancelled(Duration::from_secs(30), &fresh).await);
        assert!(t1.elapsed() >= Duration::from_secs(30));
    }
}
