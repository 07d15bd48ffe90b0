//! OpenAI-compatible Chat Completions provider (streaming).
//!
//! `POST {base_url}/chat/completions` with `stream: true` (and, by default,
//! `stream_options.include_usage`). `base_url` already ends in `/v1`, as in the official SDKs,
//! so the same setting serves OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio and most
//! gateways. [`request`] maps runner's conversation to OpenAI's shape, [`wire`] maps the chunk
//! stream back to provider-neutral events. HTTP errors, timeouts and dropped streams are the
//! same [`ProviderError`]s as the Anthropic provider's, so one retry policy serves both.

pub mod request;
pub mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, HeaderMap};

use super::http;
use super::provider::{ModelCall, Provider, ProviderError, ResponseMeta};
use super::settings::OpenaiSettings;
use super::types::ModelRequest;

pub use request::{MaxTokensField, request_body};
pub use wire::{ChunkMapper, Estimate, event_stream};

/// How to reach an OpenAI-compatible server.
#[derive(Clone)]
pub struct OpenaiConfig {
    /// Base URL ending in `/v1` (a trailing slash is tolerated); `/chat/completions` is appended.
    pub base_url: String,
    /// Bearer token; `None` sends no `Authorization` header.
    pub api_key: Option<String>,
    /// Send `stream_options.include_usage`.
    pub include_usage: bool,
    /// Longest wait for response headers and for each chunk of the stream.
    pub idle_timeout: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
}

impl std::fmt::Debug for OpenaiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenaiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("include_usage", &self.include_usage)
            .field("idle_timeout", &self.idle_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

impl OpenaiConfig {
    /// The public API.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";
    /// Env var overriding the base URL (the spec's `openai.base_url` wins over it).
    pub const ENV_BASE_URL: &'static str = "OPENAI_BASE_URL";
    /// Default API key variable.
    pub const DEFAULT_KEY_VAR: &'static str = "OPENAI_API_KEY";
    /// Default stream idle timeout for the public API (5 minutes: Chat Completions sends no
    /// keep-alive while a reasoning model thinks before its first token). Another base URL
    /// (a local model server) defaults to [`http::LOCAL_IDLE_TIMEOUT`].
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
    /// Default connect timeout.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

    /// Defaults for the public API, ignoring the environment.
    pub fn new(api_key: Option<String>) -> Self {
        OpenaiConfig {
            base_url: Self::DEFAULT_BASE_URL.to_string(),
            api_key,
            include_usage: true,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// The spec's settings over the environment (`OPENAI_BASE_URL`,
    /// `RUNNER_STREAM_IDLE_TIMEOUT_MS`) over the defaults, reading variables through `lookup`.
    pub fn from_settings(
        settings: Option<&OpenaiSettings>,
        api_key: Option<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Self {
        let mut cfg = Self::new(api_key);
        let from_spec = settings
            .and_then(|s| s.base_url.clone())
            .filter(|u| !u.trim().is_empty());
        let from_env = || lookup(Self::ENV_BASE_URL).filter(|u| !u.trim().is_empty());
        if let Some(url) = from_spec.or_else(from_env) {
            cfg.base_url = url.trim().to_string();
        }
        if let Some(b) = settings.and_then(|s| s.include_usage) {
            cfg.include_usage = b;
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

    /// The environment variable holding the key for `settings`: `OPENAI_API_KEY` unless
    /// `api_key_env` names another; `None` when `api_key_env` is `""` (no key).
    pub fn key_var(settings: Option<&OpenaiSettings>) -> Option<String> {
        match settings.and_then(|s| s.api_key_env.as_deref()) {
            None => Some(Self::DEFAULT_KEY_VAR.to_string()),
            Some("") => None,
            Some(v) => Some(v.to_string()),
        }
    }

    /// The full Chat Completions endpoint URL.
    pub fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }

    /// `max_completion_tokens` for api.openai.com (its reasoning models reject `max_tokens`),
    /// `max_tokens` for every other server (the field they all read).
    pub fn max_tokens_field(&self) -> MaxTokensField {
        let host = reqwest::Url::parse(&self.base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
        match host.as_deref() {
            Some("api.openai.com") => MaxTokensField::MaxCompletionTokens,
            _ => MaxTokensField::MaxTokens,
        }
    }
}

/// An OpenAI-compatible Chat Completions endpoint as a [`Provider`].
pub struct OpenaiProvider {
    config: OpenaiConfig,
    url: reqwest::Url,
    client: reqwest::Client,
    max_field: MaxTokensField,
    /// Whether the "usage is estimated" warning was logged (once per provider).
    warned_estimate: Arc<AtomicBool>,
}

impl std::fmt::Debug for OpenaiProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenaiProvider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OpenaiProvider {
    /// Build the provider and its HTTP client.
    pub fn new(config: OpenaiConfig) -> Result<Self, ProviderError> {
        let url = http::endpoint_url(&config.completions_url(), &config.base_url)?;
        let mut headers = HeaderMap::new();
        if let Some(key) = &config.api_key {
            headers.insert(
                AUTHORIZATION,
                http::secret_header(&format!("Bearer {key}"))?,
            );
        }
        let client = http::build_client(headers, config.connect_timeout, &url)?;
        Ok(OpenaiProvider {
            max_field: config.max_tokens_field(),
            config,
            url,
            client,
            warned_estimate: Arc::new(AtomicBool::new(false)),
        })
    }
}

#[async_trait]
impl Provider for OpenaiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    async fn stream(&self, req: &ModelRequest) -> Result<ModelCall, ProviderError> {
        let (bytes, prompt_chars) = request::encode(req, self.config.include_usage, self.max_field)
            .map_err(|e| ProviderError::Config(format!("request body: {e}")))?;
        let estimate = Estimate { prompt_chars };
        tracing::debug!(url = %self.url, model = %req.model, bytes = bytes.len(), "POST chat/completions");
        let (resp, request_id) =
            http::post_event_stream(&self.client, &self.url, bytes, self.config.idle_timeout)
                .await?;
        let rate_limit = super::ratelimit::RateLimitHeaders::from_headers(
            resp.headers(),
            std::time::SystemTime::now(),
        );
        let warned = self.warned_estimate.clone();
        let include_usage = self.config.include_usage;
        let on_estimate = move || {
            if !warned.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    include_usage,
                    "the server reported no token usage; token figures (and token budgets) are \
                     estimates at ~{} characters per token",
                    wire::CHARS_PER_TOKEN
                );
            }
        };
        Ok(ModelCall {
            meta: ResponseMeta {
                request_id,
                rate_limit,
            },
            events: event_stream(
                resp.bytes_stream(),
                self.config.idle_timeout,
                ChunkMapper::new(&req.model, Some(estimate)),
                on_estimate,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_precedence_and_key_var() {
        let env = |k: &str| match k {
            "OPENAI_BASE_URL" => Some("http://env:1/v1".to_string()),
            "RUNNER_STREAM_IDLE_TIMEOUT_MS" => Some("250".to_string()),
            _ => None,
        };
        let c = OpenaiConfig::from_settings(None, Some("k".into()), env);
        assert_eq!(c.completions_url(), "http://env:1/v1/chat/completions");
        assert_eq!(c.idle_timeout, Duration::from_millis(250));
        assert!(c.include_usage);
        assert_eq!(c.max_tokens_field(), MaxTokensField::MaxTokens);
        assert!(!format!("{c:?}").contains("\"k\""));
        // Without the env override: the public API gets 5 minutes, a local server 10.
        let hosted = OpenaiConfig::from_settings(None, None, |_| None);
        assert_eq!(hosted.idle_timeout, Duration::from_secs(300));
        let local = OpenaiConfig::from_settings(None, None, |k| {
            (k == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:11434/v1".to_string())
        });
        assert_eq!(local.idle_timeout, Duration::from_secs(600));

        let s = OpenaiSettings {
            base_url: Some("http://localhost:11434/v1/".into()),
            api_key_env: Some(String::new()),
            include_usage: Some(false),
        };
        let c = OpenaiConfig::from_settings(Some(&s), None, env);
        assert_eq!(
            c.completions_url(),
            "http://localhost:11434/v1/chat/completions"
        );
        assert!(!c.include_usage);
        assert_eq!(OpenaiConfig::key_var(Some(&s)), None);
        assert_eq!(
            OpenaiConfig::key_var(None).as_deref(),
            Some("OPENAI_API_KEY")
        );

        let d = OpenaiConfig::from_settings(None, None, |_| None);
        assert_eq!(
            d.completions_url(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(d.max_tokens_field(), MaxTokensField::MaxCompletionTokens);
        let p = OpenaiProvider::new(d).unwrap();
        assert_eq!(p.name(), "openai");
    }

    #[test]
    fn bad_config_is_config_error() {
        let mut c = OpenaiConfig::new(None);
        c.base_url = "ftp://x/v1".into();
        assert!(matches!(
            OpenaiProvider::new(c),
            Err(ProviderError::Config(_))
        ));
        assert!(matches!(
            OpenaiProvider::new(OpenaiConfig::new(Some("bad\nkey".into()))),
            Err(ProviderError::Config(_))
        ));
    }
}
