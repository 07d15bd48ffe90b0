//! Non-2xx responses of a model API → [`ProviderError::Http`], shared by every HTTP provider.
//!
//! Parses Anthropic's error body (`{"type":"error","error":{"type","message"},"request_id"}`)
//! and OpenAI's (`{"error":{"message","type","param","code"}}`; `type` may be null, then
//! `code` names the error), falling back to the raw body text, and the headers a retry policy
//! needs: `request-id` (Anthropic) or `x-request-id` (OpenAI and most compatible servers),
//! `retry-after` (seconds or HTTP date; `retry-after-ms` wins when present) and
//! `x-should-retry`.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::provider::ProviderError;

/// At most this many characters of a non-JSON error body go into the message.
const MAX_RAW_MESSAGE_CHARS: usize = 2000;

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The `request-id` header (Anthropic), else `x-request-id` (OpenAI), else
/// `x-amzn-requestid` (Bedrock), if present.
pub(crate) fn request_id_header(headers: &HeaderMap) -> Option<String> {
    header_str(headers, "request-id")
        .or_else(|| header_str(headers, "x-request-id"))
        .or_else(|| header_str(headers, "x-amzn-requestid"))
        .map(str::to_string)
}

/// `secs` seconds as a delay, saturating: a value too large for a [`Duration`] (say
/// `99999999999999999999` or `inf`) is [`Duration::MAX`], which is longer than any
/// `retry.max_wait`, so the retry policy gives up instead of waiting. Negative and NaN are
/// not delays.
fn saturating_secs(secs: f64) -> Option<Duration> {
    if secs.is_nan() || secs < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// Parse a `retry-after` value: delay seconds (integer or decimal) or an HTTP date, relative
/// to `now`. A date in the past is a zero delay; a delay too large to represent saturates to
/// [`Duration::MAX`].
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return saturating_secs(secs);
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    // In whole milliseconds since the epoch, so no SystemTime arithmetic can overflow.
    let at_ms = i128::from(date.timestamp()) * 1000;
    let now_ms = match now.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => i128::try_from(d.as_millis()).unwrap_or(i128::MAX),
        Err(e) => -i128::try_from(e.duration().as_millis()).unwrap_or(i128::MAX),
    };
    let ms = at_ms.saturating_sub(now_ms).max(0);
    Some(Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX)))
}

fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(delay) = header_str(headers, "retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .and_then(|ms| saturating_secs(ms / 1000.0))
    {
        return Some(delay);
    }
    header_str(headers, "retry-after").and_then(|v| parse_retry_after(v, now))
}

fn should_retry(headers: &HeaderMap) -> Option<bool> {
    match header_str(headers, "x-should-retry")?
        .to_ascii_lowercase()
        .as_str()
    {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Build the error for a non-2xx response from its status, headers and (bounded) body.
pub(crate) fn http_error(status: u16, headers: &HeaderMap, body: &[u8]) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let err = parsed.as_ref().and_then(|v| v.get("error"));
    let field = |k: &str| {
        err.and_then(|e| e.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    // OpenAI sends `"type": null` with a `code` for some errors (e.g. `invalid_api_key`).
    // Google APIs (Vertex AI) name the error in `status` (`RESOURCE_EXHAUSTED`); AWS in the
    // `x-amzn-ErrorType` header (`ThrottlingException:http://internal.amazon.com/…`).
    let error_type = field("type")
        .or_else(|| field("code"))
        .or_else(|| field("status"))
        .or_else(|| {
            header_str(headers, "x-amzn-errortype")
                .and_then(|t| t.split(':').next())
                .map(str::to_string)
        });
    // Bedrock's error body is `{"message": "..."}` (or `Message`), the type in a header.
    let top = |k: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let message = field("message")
        .or_else(|| top("message"))
        .or_else(|| top("Message"))
        .unwrap_or_else(|| {
            let text = String::from_utf8_lossy(body);
            let text = text.trim();
            if text.is_empty() {
                format!("empty response body (HTTP {status})")
            } else {
                text.chars().take(MAX_RAW_MESSAGE_CHARS).collect()
            }
        });
    let request_id = request_id_header(headers).or_else(|| {
        parsed
            .as_ref()
            .and_then(|v| v.get("request_id"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    ProviderError::Http {
        status,
        error_type,
        message,
        request_id,
        retry_after: retry_after(headers, SystemTime::now()),
        should_retry: should_retry(headers),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    /// A header map of `pairs` (also for the rate-limit header tests).
    pub(crate) fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_seconds_and_http_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 07:27:50 GMT
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after(" 0.5 ", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("NaN", now), None);
    }

    #[test]
    fn huge_retry_after_saturates_instead_of_panicking() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
        for v in [
            "99999999999999999999",
            "1e300",
            "inf",
            "18446744073709551616",
        ] {
            assert_eq!(parse_retry_after(v, now), Some(Duration::MAX), "{v}");
        }
        assert_eq!(
            parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now).map(|d| d.as_secs() > 1 << 37),
            Some(true)
        );
        assert_eq!(
            parse_retry_after("Mon, 1 Jan 0001 00:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        for (name, value) in [
            ("retry-after-ms", "1e300"),
            ("retry-after", "99999999999999999999"),
        ] {
            let e = http_error(429, &headers(&[(name, value)]), b"");
            let ProviderError::Http { retry_after, .. } = e else {
                panic!()
            };
            assert_eq!(retry_after, Some(Duration::MAX), "{name}");
        }
        // A bad retry-after-ms falls back to retry-after.
        let e = http_error(
            429,
            &headers(&[("retry-after-ms", "-5"), ("retry-after", "2")]),
            b"",
        );
        let ProviderError::Http { retry_after, .. } = e else {
            panic!()
        };
        assert_eq!(retry_after, Some(Duration::from_secs(2)));
    }

    #[test]
    fn body_fields_header_request_id_wins() {
        let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_body"}"#;
        let e = http_error(
            529,
            &headers(&[("request-id", "req_hdr"), ("x-should-retry", "true")]),
            body,
        );
        let ProviderError::Http {
            status,
            error_type,
            message,
            request_id,
            retry_after,
            should_retry,
        } = e
        else {
            panic!()
        };
        assert_eq!(status, 529);
        assert_eq!(error_type.as_deref(), Some("overloaded_error"));
        assert_eq!(message, "Overloaded");
        assert_eq!(request_id.as_deref(), Some("req_hdr"));
        assert_eq!(retry_after, None);
        assert_eq!(should_retry, Some(true));
    }

    #[test]
    fn openai_error_body_and_x_request_id() {
        let body = br#"{"error":{"message":"Incorrect API key provided: sk-xx.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
        let e = http_error(401, &headers(&[("x-request-id", "req_oa")]), body);
        let ProviderError::Http {
            error_type,
            message,
            request_id,
            ..
        } = e
        else {
            panic!()
        };
        assert_eq!(error_type.as_deref(), Some("invalid_request_error"));
        assert_eq!(message, "Incorrect API key provided: sk-xx.");
        assert_eq!(request_id.as_deref(), Some("req_oa"));
        let body =
            br#"{"error":{"message":"Rate limit","type":null,"code":"rate_limit_exceeded"}}"#;
        let ProviderError::Http { error_type, .. } = http_error(429, &HeaderMap::new(), body)
        else {
            panic!()
        };
        assert_eq!(error_type.as_deref(), Some("rate_limit_exceeded"));
    }

    #[test]
    fn raw_body_fallback_and_retry_after_ms() {
        let e = http_error(
            502,
            &headers(&[
                ("retry-after-ms", "250"),
                ("retry-after", "9"),
                ("x-should-retry", "false"),
            ]),
            b"  <html>Bad gateway</html>\n",
        );
        let ProviderError::Http {
            error_type,
            message,
            request_id,
            retry_after,
            should_retry,
            ..
        } = e
        else {
            panic!()
        };
        assert_eq!(error_type, None);
        assert_eq!(message, "<html>Bad gateway</html>");
        assert_eq!(request_id, None);
        assert_eq!(retry_after, Some(Duration::from_millis(250)));
        assert_eq!(should_retry, Some(false));
        let e = http_error(503, &HeaderMap::new(), b"");
        assert!(
            e.to_string().contains("empty response body (HTTP 503)"),
            "{e}"
        );
    }
}
