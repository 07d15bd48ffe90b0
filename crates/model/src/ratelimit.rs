//! The rate-limit headers of a model API's response, read into one provider-neutral
//! [`RateLimitHeaders`]: Anthropic's `anthropic-ratelimit-{requests,tokens,input-tokens,
//! output-tokens}-{limit,remaining,reset}` (reset: an RFC 3339 time) and OpenAI's
//! `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset: a duration such as `1s`,
//! `6m0s` or `250ms`). Both describe a bucket that refills continuously up to `limit` per
//! minute; the rate-limit governor paces a whole batch with them.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// One limit's state as a response reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bucket {
    /// The most allowed per minute (`limit`).
    pub limit: Option<u64>,
    /// What is left now (`remaining`).
    pub remaining: Option<u64>,
    /// Time from the response until the bucket is full again (`reset`).
    pub reset: Option<Duration>,
}

impl Bucket {
    /// Whether the response said nothing about this limit.
    pub fn is_empty(&self) -> bool {
        self.limit.is_none() && self.remaining.is_none() && self.reset.is_none()
    }

    /// The bucket is drained: nothing remains.
    pub fn exhausted(&self) -> bool {
        self.remaining == Some(0)
    }
}

/// The rate-limit headers of one response (empty buckets when the server sends none).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RateLimitHeaders {
    /// The requests limit.
    pub requests: Bucket,
    /// The tightest of the token limits (tokens, input tokens, output tokens): the one with the
    /// least remaining.
    pub tokens: Bucket,
}

impl RateLimitHeaders {
    /// Read the headers of `headers` at `now` (for Anthropic's absolute reset times).
    pub fn from_headers(headers: &HeaderMap, now: SystemTime) -> Self {
        let get = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let num = |name: &str| get(name).and_then(|v| v.parse::<u64>().ok());
        let anthropic = |kind: &str| Bucket {
            limit: num(&format!("anthropic-ratelimit-{kind}-limit")),
            remaining: num(&format!("anthropic-ratelimit-{kind}-remaining")),
            reset: get(&format!("anthropic-ratelimit-{kind}-reset"))
                .and_then(|v| until_rfc3339(v, now)),
        };
        let openai = |kind: &str| Bucket {
            limit: num(&format!("x-ratelimit-limit-{kind}")),
            remaining: num(&format!("x-ratelimit-remaining-{kind}")),
            reset: get(&format!("x-ratelimit-reset-{kind}")).and_then(parse_go_duration),
        };
        let first = |a: Bucket, b: Bucket| if a.is_empty() { b } else { a };
        let requests = first(anthropic("requests"), openai("requests"));
        let tokens = [
            anthropic("tokens"),
            anthropic("input-tokens"),
            anthropic("output-tokens"),
            openai("tokens"),
        ]
        .into_iter()
        .filter(|b| !b.is_empty())
        .min_by_key(|b| b.remaining.unwrap_or(u64::MAX))
        .unwrap_or_default();
        RateLimitHeaders { requests, tokens }
    }

    /// Whether the response carried no rate-limit header at all.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.tokens.is_empty()
    }
}

/// Time from `now` until the RFC 3339 time `value` (zero when it has passed).
fn until_rfc3339(value: &str, now: SystemTime) -> Option<Duration> {
    let at = chrono::DateTime::parse_from_rfc3339(value).ok()?;
    let at =
        SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(at.timestamp_millis()).ok()?);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A Go-style duration as OpenAI writes it: `1s`, `6m0s`, `1h2m3.5s`, `250ms`, `20ms`.
fn parse_go_duration(value: &str) -> Option<Duration> {
    let mut total = 0f64;
    let mut rest = value;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest.get(..digits)?.parse().ok()?;
        rest = rest.get(digits..)?;
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let secs = match rest.get(..unit_len)? {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            _ => return None,
        };
        rest = rest.get(unit_len..)?;
        total += n * secs;
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_error::tests::headers;

    #[test]
    fn anthropic_headers() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let h = headers(&[
            ("anthropic-ratelimit-requests-limit", "50"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            (
                "anthropic-ratelimit-requests-reset",
                "2023-11-14T22:13:21.5Z",
            ),
            ("anthropic-ratelimit-input-tokens-remaining", "900"),
            ("anthropic-ratelimit-output-tokens-remaining", "80"),
            ("anthropic-ratelimit-tokens-remaining", "1000"),
        ]);
        let r = RateLimitHeaders::from_headers(&h, now);
        assert_eq!(r.requests.limit, Some(50));
        assert!(r.requests.exhausted());
        assert_eq!(r.requests.reset, Some(Duration::from_millis(1500)));
        assert_eq!(r.tokens.remaining, Some(80), "the tightest token limit");
        let past = headers(&[("anthropic-ratelimit-requests-reset", "2000-01-01T00:00:00Z")]);
        let r = RateLimitHeaders::from_headers(&past, now);
        assert_eq!(r.requests.reset, Some(Duration::ZERO));
    }

    #[test]
    fn openai_headers() {
        let h = headers(&[
            ("x-ratelimit-limit-requests", "60"),
            ("x-ratelimit-remaining-requests", "59"),
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "6m0.5s"),
        ]);
        let r = RateLimitHeaders::from_headers(&h, SystemTime::now());
        assert_eq!(r.requests.limit, Some(60));
        assert_eq!(r.requests.reset, Some(Duration::from_secs(1)));
        assert!(r.tokens.exhausted());
        assert_eq!(r.tokens.reset, Some(Duration::from_millis(360_500)));
        assert!(RateLimitHeaders::from_headers(&HeaderMap::new(), SystemTime::now()).is_empty());
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_go_duration("1h2m3s"), Some(Duration::from_secs(3723)));
        assert_eq!(parse_go_duration(""), None);
        assert_eq!(parse_go_duration("5x"), None);
        assert_eq!(parse_go_duration("s"), None);
    }
}
