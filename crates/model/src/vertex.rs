//! Google Vertex AI provider for Anthropic models (`provider: vertex`).
//!
//! `POST {base}/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:streamRawPredict`
//! with a bearer token from Application Default Credentials ([`adc`]); the body is the
//! Anthropic Messages body with `anthropic_version: vertex-2023-10-16` instead of `model`, and
//! the response the Anthropic API's SSE, decoded by [`crate::anthropic::event_stream`].
//!
//! Project: `ANTHROPIC_VERTEX_PROJECT_ID`, `GOOGLE_CLOUD_PROJECT`, `GCLOUD_PROJECT`, else the
//! credentials' project. Region: `CLOUD_ML_REGION`, `GOOGLE_CLOUD_LOCATION`, else `global`. Base URL:
//! `ANTHROPIC_VERTEX_BASE_URL`, else `https://{region}-aiplatform.googleapis.com`
//! (`https://aiplatform.googleapis.com` for `global`). A 429 (`RESOURCE_EXHAUSTED`, a quota)
//! is retried, as are 5xx answers; a 401 drops the cached token so the next attempt gets a new
//! one.

pub mod adc;

use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::HeaderMap;

use self::adc::GoogleAuth;
use super::anthropic::{Platform, RequestBody, event_stream};
use super::http;
use super::provider::{ModelCall, Provider, ProviderError, ResponseMeta};
use super::types::ModelRequest;

/// How to reach Vertex AI.
#[derive(Clone, Debug)]
pub struct VertexConfig {
    /// Google Cloud project id.
    pub project: String,
    /// Region (`us-east5`, `europe-west1`) or `global`.
    pub region: String,
    /// Base URL without `/v1/…`.
    pub base_url: String,
    /// Where tokens come from.
    pub auth: GoogleAuth,
    /// Longest wait for response headers and for each chunk of the stream.
    pub idle_timeout: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Send prompt-cache breakpoints.
    pub prompt_caching: bool,
}

impl VertexConfig {
    /// Default idle timeout against Google's endpoint (it relays Anthropic's `ping` events).
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
    /// Env vars naming the project, first set wins.
    pub const ENV_PROJECT: [&'static str; 3] = [
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
    ];
    /// Env vars naming the region, first set wins (Claude Code's, then Google's SDKs').
    pub const ENV_REGION: [&'static str; 2] = ["CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION"];
    /// Env var overriding the base URL (an LLM gateway, a test).
    pub const ENV_BASE_URL: &'static str = "ANTHROPIC_VERTEX_BASE_URL";

    /// The public endpoint of `region`.
    pub fn default_base_url(region: &str) -> String {
        if region == "global" {
            "https://aiplatform.googleapis.com".into()
        } else {
            format!("https://{region}-aiplatform.googleapis.com")
        }
    }

    /// The configuration from the environment (read through `lookup`).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ProviderError> {
        let get = |k: &str| {
            lookup(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let auth = GoogleAuth::from_lookup(&lookup)?;
        let project = Self::ENV_PROJECT
            .iter()
            .find_map(|k| get(k))
            .or_else(|| auth.project_id().map(str::to_string))
            .ok_or_else(|| {
                ProviderError::Config(
                    "provider vertex needs a project: set ANTHROPIC_VERTEX_PROJECT_ID (or \
                     GOOGLE_CLOUD_PROJECT)"
                        .into(),
                )
            })?;
        let region = Self::ENV_REGION
            .iter()
            .find_map(|k| get(k))
            .unwrap_or_else(|| "global".into());
        let default = Self::default_base_url(&region);
        let base_url = get(Self::ENV_BASE_URL).unwrap_or_else(|| default.clone());
        let mut idle_timeout =
            http::default_idle_timeout(&base_url, &default, Self::DEFAULT_IDLE_TIMEOUT);
        if let Some(t) = http::idle_timeout_override(&lookup) {
            idle_timeout = t;
        }
        Ok(VertexConfig {
            project,
            region,
            base_url,
            auth,
            idle_timeout,
            connect_timeout: Duration::from_secs(30),
            prompt_caching: true,
        })
    }

    /// The `streamRawPredict` URL for `model` (already a Vertex id; see [`model_id`]).
    pub fn predict_url(&self, model: &str) -> String {
        format!(
            "{}/v1/projects/{}/locations/{}/publishers/anthropic/models/{model}:streamRawPredict",
            self.base_url.trim_end_matches('/'),
            self.project,
            self.region
        )
    }
}

/// The Vertex AI model id for `model`: a model of the built-in table (`claude-sonnet-4-5`,
/// dated or not) becomes its Vertex id (`claude-sonnet-4-5@20250929`); an id with `@` or one
/// the table does not know is kept.
pub fn model_id(model: &str) -> String {
    if model.contains('@') {
        return model.to_string();
    }
    crate::table::vertex_id(model).unwrap_or_else(|| model.to_string())
}

/// Vertex's error classes onto runner's: 429 (a quota, no `retry-after`) and 5xx retried.
fn classify_http(err: ProviderError) -> ProviderError {
    match err {
        ProviderError::Http {
            status,
            error_type,
            message,
            request_id,
            retry_after,
            should_retry,
        } => {
            let should_retry = should_retry.or(match status {
                429 | 500..=599 => Some(true),
                _ => None,
            });
            let message = match status {
                401 | 403 => format!(
                    "{message} (check the credentials and that the account has \
                     aiplatform.endpoints.predict on the project)"
                ),
                404 => format!(
                    "{message} (check the model id, the region and that the model is enabled \
                     in Model Garden)"
                ),
                _ => message,
            };
            ProviderError::Http {
                status,
                error_type,
                message,
                request_id,
                retry_after,
                should_retry,
            }
        }
        other => other,
    }
}

/// Google Vertex AI as a [`Provider`].
pub struct VertexProvider {
    config: VertexConfig,
    client: reqwest::Client,
}

impl std::fmt::Debug for VertexProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VertexProvider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl VertexProvider {
    /// Build the provider and its HTTP client.
    pub fn new(config: VertexConfig) -> Result<Self, ProviderError> {
        let base = http::endpoint_url(&config.predict_url("m"), &config.base_url)?;
        let client = http::build_client(HeaderMap::new(), config.connect_timeout, &base)?;
        Ok(VertexProvider { config, client })
    }

    /// The configuration in use.
    pub fn config(&self) -> &VertexConfig {
        &self.config
    }
}

#[async_trait]
impl Provider for VertexProvider {
    fn name(&self) -> &str {
        "vertex"
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelCall, ProviderError> {
        let body = RequestBody::new(request, self.config.prompt_caching)
            .for_platform(Platform::Vertex)
            .to_vec()
            .map_err(|e| ProviderError::Config(format!("request body: {e}")))?;
        let model = model_id(&request.model);
        let url = http::endpoint_url(&self.config.predict_url(&model), &self.config.base_url)?;
        let token = self.config.auth.token(&self.client).await?;
        let auth = http::secret_header(&format!("Bearer {token}"))?;
        tracing::debug!(url = %url, model = %model, bytes = body.len(), "POST streamRawPredict");
        let req = self
            .client
            .post(url)
            .header("authorization", auth)
            .body(body);
        let (resp, request_id) =
            match http::send_stream(req, "text/event-stream", self.config.idle_timeout).await {
                Ok(r) => r,
                Err(e) => {
                    if matches!(e, ProviderError::Http { status: 401, .. }) {
                        self.config.auth.forget().await;
                    }
                    return Err(classify_http(e));
                }
            };
        Ok(ModelCall {
            meta: ResponseMeta {
                request_id,
                rate_limit: Default::default(),
            },
            events: event_stream(resp.bytes_stream(), self.config.idle_timeout),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_urls_and_model_ids() {
        let cfg = VertexConfig::from_lookup(|k| match k {
            "ANTHROPIC_VERTEX_PROJECT_ID" => Some("proj".into()),
            "CLOUD_ML_REGION" => Some("us-east5".into()),
            "GCE_METADATA_HOST" => Some("127.0.0.1:9".into()),
            "HOME" => Some("/nonexistent".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            cfg.predict_url(&model_id("claude-sonnet-4-5")),
            "https://us-east5-aiplatform.googleapis.com/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
        );
        assert_eq!(cfg.idle_timeout, VertexConfig::DEFAULT_IDLE_TIMEOUT);
        let cfg = VertexConfig::from_lookup(|k| match k {
            "GOOGLE_CLOUD_PROJECT" => Some("p2".into()),
            "GOOGLE_CLOUD_LOCATION" => Some("europe-west1".into()),
            "GCE_METADATA_HOST" => Some("127.0.0.1:9".into()),
            "HOME" => Some("/nonexistent".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            (cfg.project.as_str(), cfg.region.as_str()),
            ("p2", "europe-west1")
        );
        assert_eq!(model_id("claude-x@1"), "claude-x@1");
        assert_eq!(
            VertexConfig::default_base_url("global"),
            "https://aiplatform.googleapis.com"
        );
        let e = VertexConfig::from_lookup(|k| (k == "HOME").then(|| "/nonexistent".into()));
        assert!(
            matches!(e, Err(ProviderError::Config(m)) if m.contains("ANTHROPIC_VERTEX_PROJECT_ID"))
        );
    }
}
