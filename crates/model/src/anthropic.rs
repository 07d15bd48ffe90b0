//! Anthropic Messages API provider (streaming).
//!
//! `POST {base}/v1/messages` with `stream: true`; the response body is decoded by
//! [`wire::event_stream`]. One [`Provider::stream`] call is one attempt: it returns once the
//! response headers are in, with non-2xx statuses already turned into
//! [`ProviderError::Http`].

pub mod request;
pub mod wire;

use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue};

use super::http;
use super::provider::{ModelCall, Provider, ProviderError, ResponseMeta};
use super::types::ModelRequest;

pub use super::http::install_crypto_provider;
pub use super::http_error::{self, parse_retry_after};
pub use request::{Platform, RequestBody, request_body};
pub use wire::{event_stream, parse_event};

/// How to reach the Anthropic API.
#[derive(Clone)]
pub struct AnthropicConfig {
    /// API base URL without `/v1/messages` (a trailing slash is tolerated).
    pub base_url: String,
    /// The API key sent as `x-api-key`.
    pub api_key: String,
    /// Longest wait for response headers and for each chunk of the stream.
    pub idle_timeout: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// `anthropic-version` header value.
    pub anthropic_version: String,
    /// Send prompt-cache breakpoints (`cache_control`) on the system prompt, the last tool and
    /// the latest message (see [`RequestBody`]). On by default.
    pub prompt_caching: bool,
}

impl std::fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("idle_timeout", &self.idle_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("anthropic_version", &self.anthropic_version)
            .field("prompt_caching", &self.prompt_caching)
            .finish()
    }
}

impl AnthropicConfig {
    /// The public API.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";
    /// The API version runner speaks.
    pub const DEFAULT_VERSION: &'static str = "2023-06-01";
    /// Default stream idle timeout for the public API (2 minutes: it sends `ping` events
    /// every few seconds, so a longer silence is a dead stream). Another base URL defaults to
    /// [`http::LOCAL_IDLE_TIMEOUT`].
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
    /// Default connect timeout.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
    /// Env var overriding the base URL.
    pub const ENV_BASE_URL: &'static str = "ANTHROPIC_BASE_URL";
    /// Env var overriding the idle timeout, in milliseconds.
    pub const ENV_IDLE_TIMEOUT_MS: &'static str = http::ENV_IDLE_TIMEOUT_MS;

    /// Defaults for the public API, ignoring the environment.
    pub fn new(api_key: impl Into<String>) -> Self {
        AnthropicConfig {
            base_url: Self::DEFAULT_BASE_URL.to_string(),
            api_key: api_key.into(),
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            anthropic_version: Self::DEFAULT_VERSION.to_string(),
            prompt_caching: true,
        }
    }

    /// Defaults plus `ANTHROPIC_BASE_URL` and `RUNNER_STREAM_IDLE_TIMEOUT_MS` from the
    /// environment.
    pub fn from_env(api_key: impl Into<String>) -> Self {
        Self::from_lookup(api_key, |k| std::env::var(k).ok())
    }

    /// Like [`AnthropicConfig::from_env`], reading variables through `lookup`.
    pub fn from_lookup(
        api_key: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Self {
        let mut cfg = Self::new(api_key);
        if let Some(url) = lookup(Self::ENV_BASE_URL).filter(|u| !u.trim().is_empty()) {
            cfg.base_url = url.trim().to_string();
        }
        cfg.idle_timeout = http::default_idle_timeout(
            &cfg.base_url,
            Self::DEFAULT_BASE_URL,
            Self::DEFAULT_IDLE_TIMEOUT,
        );
        if let Some(t) = http::idle_timeout_override(&lookup) {
            cfg.idle_timeout = t;
        }
        cfg
    }

    /// The full Messages endpoint URL.
    pub fn messages_url(&self) -> String {
        format!("{}/v1/messages", self.base_url.trim_end_matches('/'))
    }
}

/// The Anthropic Messages API as a [`Provider`].
pub struct AnthropicProvider {
    config: AnthropicConfig,
    url: reqwest::Url,
    client: reqwest::Client,
}

impl std::fmt::Debug for AnthropicProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicProvider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl AnthropicProvider {
    /// Build the provider and its HTTP client (installs the crypto provider if needed).
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let url = http::endpoint_url(&config.messages_url(), &config.base_url)?;
        let version = HeaderValue::from_str(&config.anthropic_version)
            .map_err(|_| ProviderError::Config("invalid anthropic-version value".into()))?;
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", http::secret_header(&config.api_key)?);
        headers.insert("anthropic-version", version);
        let client = http::build_client(headers, config.connect_timeout, &url)?;
        Ok(AnthropicProvider {
            config,
            url,
            client,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelCall, ProviderError> {
        let bytes = RequestBody::new(request, self.config.prompt_caching)
            .to_vec()
            .map_err(|e| ProviderError::Config(format!("request body: {e}")))?;
        tracing::debug!(url = %self.url, model = %request.model, bytes = bytes.len(), "POST messages");
        let (resp, request_id) =
            http::post_event_stream(&self.client, &self.url, bytes, self.config.idle_timeout)
                .await?;
        let rate_limit = super::ratelimit::RateLimitHeaders::from_headers(
            resp.headers(),
            std::time::SystemTime::now(),
        );
        Ok(ModelCall {
            meta: ResponseMeta {
                request_id,
                rate_limit,
            },
            events: wire::event_stream(resp.bytes_stream(), self.config.idle_timeout),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ContentBlock, Message, Role, ToolSpec};
    use serde_json::json;

    #[test]
    fn client_builds_without_panicking() {
        let p = AnthropicProvider::new(AnthropicConfig::new("sk-test")).unwrap();
        assert_eq!(p.name(), "anthropic");
        assert_eq!(p.url.as_str(), "https://api.anthropic.com/v1/messages");
        // Idempotent.
        install_crypto_provider();
        install_crypto_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }

    #[test]
    fn config_from_lookup() {
        let env = |k: &str| match k {
            "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:9/".to_string()),
            "RUNNER_STREAM_IDLE_TIMEOUT_MS" => Some("250".to_string()),
            _ => None,
        };
        let c = AnthropicConfig::from_lookup("k", env);
        assert_eq!(c.messages_url(), "http://127.0.0.1:9/v1/messages");
        assert_eq!(c.idle_timeout, Duration::from_millis(250));
        assert_eq!(c.anthropic_version, "2023-06-01");
        let d = AnthropicConfig::from_lookup("k", |k| {
            (k == "RUNNER_STREAM_IDLE_TIMEOUT_MS").then(|| "abc".to_string())
        });
        assert_eq!(d.idle_timeout, Duration::from_secs(120));
        assert_eq!(d.messages_url(), "https://api.anthropic.com/v1/messages");
        // A local server or proxy gets the long default.
        let l = AnthropicConfig::from_lookup("k", |k| {
            (k == "ANTHROPIC_BASE_URL").then(|| "http://localhost:4000/".to_string())
        });
        assert_eq!(l.idle_timeout, Duration::from_secs(600));
        assert!(!format!("{c:?}").contains("\"k\""));
    }

    #[test]
    fn bad_config_is_config_error() {
        let mut c = AnthropicConfig::new("k");
        c.base_url = "not a url".into();
        assert!(matches!(
            AnthropicProvider::new(c),
            Err(ProviderError::Config(_))
        ));
        assert!(matches!(
            AnthropicProvider::new(AnthropicConfig::new("bad\nkey")),
            Err(ProviderError::Config(_))
        ));
    }

    #[test]
    fn body_shape() {
        let req = ModelRequest {
            model: "claude-x".into(),
            system: "sys".into(),
            messages: vec![
                Message::user_text("hi"),
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::Thinking {
                        thinking: "t".into(),
                        signature: "s".into(),
                    }],
                    id: Some("msg_1".into()),
                },
            ],
            tools: vec![].into(),
            max_tokens: 100,
            thinking: None,
        };
        let v = request_body(&req, false);
        assert_eq!(
            v,
            json!({
                "model":"claude-x","max_tokens":100,"system":"sys",
                "messages":[
                    {"role":"user","content":[{"type":"text","text":"hi"}]},
                    {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"}]}
                ],
                "stream":true
            })
        );
        let mut req = req;
        std::sync::Arc::make_mut(&mut req.tools).push(ToolSpec {
            name: "Read".into(),
            description: "d".into(),
            input_schema: json!({"type":"object"}),
        });
        req.thinking = Some(json!({"type":"enabled","budget_tokens":1024}));
        let v = request_body(&req, false);
        assert_eq!(
            v["tools"],
            json!([{"name":"Read","description":"d","input_schema":{"type":"object"}}])
        );
        assert_eq!(v["thinking"]["budget_tokens"], 1024);
    }
}
