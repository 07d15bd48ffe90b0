//! Amazon Bedrock provider for Anthropic models (`provider: bedrock`).
//!
//! `POST {endpoint}/model/{modelId}/invoke-model-with-response-stream`, signed with SigV4
//! (`aws-sigv4`, service `bedrock`), the body the Anthropic Messages body with
//! `anthropic_version: bedrock-2023-05-31` instead of `model` and `stream`. The response is
//! AWS event-stream framing ([`frames`]) carrying Anthropic stream events, so the assembler,
//! retries and cassettes treat it like the Anthropic API. Credentials come from the standard
//! AWS chain ([`credentials`]); the region from `AWS_REGION`/`AWS_DEFAULT_REGION` or the
//! profile; the endpoint from `ANTHROPIC_BEDROCK_BASE_URL`, `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`
//! or `AWS_ENDPOINT_URL`, else `https://bedrock-runtime.{region}.amazonaws.com`.
//!
//! Errors: Bedrock names them in the `x-amzn-ErrorType` header. Throttling, service
//! unavailable, model not ready, model timeout and internal errors are retried (a Bedrock 429
//! carries no `retry-after`, so it is marked retryable explicitly); validation, access and
//! not-found errors are not, and their message says what to check.

pub mod credentials;
pub mod frames;

use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_smithy_runtime_api::client::identity::Identity;
use reqwest::header::HeaderMap;

use self::credentials::CredentialChain;
use super::anthropic::{Platform, RequestBody};
use super::http;
use super::provider::{ModelCall, Provider, ProviderError, ResponseMeta};
use super::types::ModelRequest;

/// The content type of an event-stream body.
const EVENT_STREAM: &str = "application/vnd.amazon.eventstream";

/// How to reach Bedrock.
#[derive(Clone, Debug)]
pub struct BedrockConfig {
    /// AWS region (`us-east-1`), used in the default endpoint and the signature.
    pub region: String,
    /// Endpoint base URL without the `/model/…` path.
    pub endpoint: String,
    /// Where credentials come from.
    pub credentials: CredentialChain,
    /// Longest wait for response headers and for each chunk of the stream.
    pub idle_timeout: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Send prompt-cache breakpoints (Bedrock supports them for the models that cache).
    pub prompt_caching: bool,
}

impl BedrockConfig {
    /// Default idle timeout against the AWS endpoint (Bedrock sends no keep-alive events, so
    /// this is longer than the Anthropic API's).
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
    /// Env vars naming the endpoint, first set wins.
    pub const ENV_ENDPOINTS: [&'static str; 3] = [
        "ANTHROPIC_BEDROCK_BASE_URL",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        "AWS_ENDPOINT_URL",
    ];

    /// The public endpoint of `region`.
    pub fn default_endpoint(region: &str) -> String {
        format!("https://bedrock-runtime.{region}.amazonaws.com")
    }

    /// The configuration from the environment (read through `lookup`): region, endpoint,
    /// credentials and `RUNNER_STREAM_IDLE_TIMEOUT_MS`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ProviderError> {
        let region = credentials::region(&lookup).ok_or_else(|| {
            ProviderError::Config(
                "provider bedrock needs a region: set AWS_REGION (or AWS_DEFAULT_REGION, or \
                 `region` in the AWS profile)"
                    .into(),
            )
        })?;
        let default = Self::default_endpoint(&region);
        let endpoint = Self::ENV_ENDPOINTS
            .iter()
            .find_map(|k| {
                lookup(k)
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
            })
            .unwrap_or_else(|| default.clone());
        let credentials = CredentialChain::from_lookup(&lookup, &region)
            .map_err(|e| ProviderError::Config(format!("provider bedrock: {e}")))?
            .ok_or_else(|| {
                ProviderError::Config(
                    "provider bedrock found no AWS credentials: set AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY, AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, or \
                 AWS_PROFILE (the instance metadata service is disabled)"
                        .into(),
                )
            })?;
        let mut idle_timeout =
            http::default_idle_timeout(&endpoint, &default, Self::DEFAULT_IDLE_TIMEOUT);
        if let Some(t) = http::idle_timeout_override(&lookup) {
            idle_timeout = t;
        }
        Ok(BedrockConfig {
            region,
            endpoint,
            credentials,
            idle_timeout,
            connect_timeout: Duration::from_secs(30),
            prompt_caching: true,
        })
    }

    /// The invoke URL for `model` (already a Bedrock model id; see [`model_id`]).
    pub fn invoke_url(&self, model: &str) -> String {
        format!(
            "{}/model/{}/invoke-model-with-response-stream",
            self.endpoint.trim_end_matches('/'),
            encode_segment(model)
        )
    }
}

/// Percent-encode a path segment (a model id has `:`, an inference profile ARN has `/`).
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The Bedrock model id for `model` in `region`: an id that already is one (it has a `.`,
/// `:` or is an ARN) is kept; a model of the built-in table (`claude-sonnet-4-5`, dated or not)
/// becomes its cross-region inference profile for the region's geography
/// (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`), which on-demand use of current models
/// requires; anything else is kept.
pub fn model_id(model: &str, region: &str) -> String {
    if model.contains('.') || model.contains(':') || model.starts_with("arn:") {
        return model.to_string();
    }
    match crate::table::bedrock_id(model) {
        Some(id) => format!("{}.{id}", geography(region, model)),
        None => model.to_string(),
    }
}

/// The models with Japan (`jp.`) and Australia (`au.`) inference profiles; the others are
/// offered there through the Asia-Pacific (`apac.`) ones.
const JP_AU_MODELS: [&str; 2] = ["claude-sonnet-4-5", "claude-haiku-4-5"];

/// The inference-profile prefix of `region`'s geography for `model`.
fn geography(region: &str, model: &str) -> &'static str {
    let national = JP_AU_MODELS.contains(&crate::table::canonical_id(model));
    if region.starts_with("us-gov-") {
        "us-gov"
    } else if region.starts_with("eu-") {
        "eu"
    } else if national && (region == "ap-northeast-1" || region == "ap-northeast-3") {
        "jp"
    } else if national && (region == "ap-southeast-2" || region == "ap-southeast-4") {
        "au"
    } else if region.starts_with("ap-") {
        "apac"
    } else {
        "us"
    }
}

/// Whether a Bedrock error type is transient.
fn retryable_type(t: &str) -> bool {
    let t = t.to_ascii_lowercase();
    [
        "throttlingexception",
        "serviceunavailableexception",
        "internalserverexception",
        "modelnotreadyexception",
        "modeltimeoutexception",
        "modelstreamerrorexception",
    ]
    .iter()
    .any(|r| *r == t)
}

/// Bedrock's error classes onto runner's: retryable types get `should_retry`, the others a
/// hint of what to check.
fn classify_http(err: ProviderError) -> ProviderError {
    let ProviderError::Http {
        status,
        error_type,
        mut message,
        request_id,
        retry_after,
        should_retry,
    } = err
    else {
        return err;
    };
    let t = error_type.as_deref().unwrap_or("");
    let should_retry = if retryable_type(t) {
        Some(true)
    } else if t.is_empty() {
        // No type (a proxy's answer): 429 and 5xx are transient on Bedrock.
        should_retry.or((status == 429 || status >= 500).then_some(true))
    } else {
        // Validation, access, not-found: the next attempt fails the same way. (The agent loop
        // still treats `prompt is too long` validation errors as context exhaustion.)
        let hint = match t.to_ascii_lowercase().as_str() {
            "accessdeniedexception" => Some(
                "check the role's bedrock:InvokeModelWithResponseStream permission and that \
                 model access is granted in this account and region",
            ),
            "resourcenotfoundexception" => {
                Some("check the model id and that the model is offered in this region")
            }
            "validationexception" if message.contains("on-demand throughput") => Some(
                "use an inference profile id such as `us.anthropic.…` (runner maps table models \
                 to one)",
            ),
            "validationexception" if message.contains("model identifier is invalid") => Some(
                "this region offers no such model or inference profile: set `model` to an id \
                 that `aws bedrock list-inference-profiles` lists (`global.anthropic.…`, \
                 `us.anthropic.…`) or to an inference profile ARN",
            ),
            "unrecognizedclientexception"
            | "invalidsignatureexception"
            | "expiredtokenexception" => Some("check the AWS credentials"),
            _ => None,
        };
        if let Some(h) = hint {
            message = format!("{message} ({h})");
        }
        Some(false)
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

/// Amazon Bedrock as a [`Provider`].
pub struct BedrockProvider {
    config: BedrockConfig,
    client: reqwest::Client,
}

impl std::fmt::Debug for BedrockProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BedrockProvider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl BedrockProvider {
    /// Build the provider and its HTTP client.
    pub fn new(config: BedrockConfig) -> Result<Self, ProviderError> {
        let probe = config.invoke_url("m");
        let base = http::endpoint_url(&probe, &config.endpoint)?;
        let client = http::build_client(HeaderMap::new(), config.connect_timeout, &base)?;
        Ok(BedrockProvider { config, client })
    }

    /// The configuration in use.
    pub fn config(&self) -> &BedrockConfig {
        &self.config
    }

    /// The SigV4 headers for a POST of `body` to `url` with `headers`.
    fn signature(
        &self,
        creds: &credentials::AwsCredentials,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Vec<(String, String)>, ProviderError> {
        let identity: Identity = Credentials::new(
            creds.access_key_id.clone(),
            creds.secret_access_key.clone(),
            creds.session_token.clone(),
            creds.expires,
            "runner",
        )
        .into();
        let params = aws_sigv4::sign::v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.config.region)
            .name("bedrock")
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| ProviderError::Config(format!("SigV4 parameters: {e}")))?
            .into();
        let signable = SignableRequest::new(
            "POST",
            url,
            headers.iter().copied(),
            SignableBody::Bytes(body),
        )
        .map_err(|e| ProviderError::Config(format!("SigV4 request: {e}")))?;
        let (instructions, _) = sign(signable, &params)
            .map_err(|e| ProviderError::Config(format!("SigV4 signing: {e}")))?
            .into_parts();
        Ok(instructions
            .headers()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }
}

#[async_trait]
impl Provider for BedrockProvider {
    fn name(&self) -> &str {
        "bedrock"
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelCall, ProviderError> {
        let body = RequestBody::new(request, self.config.prompt_caching)
            .for_platform(Platform::Bedrock)
            .to_vec()
            .map_err(|e| ProviderError::Config(format!("request body: {e}")))?;
        let model = model_id(&request.model, &self.config.region);
        let url_text = self.config.invoke_url(&model);
        let url = http::endpoint_url(&url_text, &self.config.endpoint)?;
        let creds = self.config.credentials.credentials(&self.client).await?;
        let host = match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            (None, _) => String::new(),
        };
        let headers = [
            ("host", host.as_str()),
            ("content-type", "application/json"),
            ("accept", EVENT_STREAM),
        ];
        let signed = self.signature(&creds, url.as_str(), &headers, &body)?;
        let mut req = self
            .client
            .post(url.clone())
            .header("content-type", "application/json")
            .header("accept", EVENT_STREAM);
        for (k, v) in &signed {
            let mut value = http::secret_header(v)?;
            value.set_sensitive(k != "x-amz-date");
            req = req.header(k.as_str(), value);
        }
        tracing::debug!(url = %url, model = %model, bytes = body.len(), "POST invoke-model-with-response-stream");
        let (resp, request_id) =
            http::send_stream(req.body(body), EVENT_STREAM, self.config.idle_timeout)
                .await
                .map_err(classify_http)?;
        Ok(ModelCall {
            meta: ResponseMeta {
                request_id,
                rate_limit: Default::default(),
            },
            events: frames::event_stream(resp.bytes_stream(), self.config.idle_timeout),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_and_urls() {
        assert_eq!(
            model_id("claude-sonnet-4-5", "us-east-1"),
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
        );
        assert_eq!(
            model_id("claude-sonnet-4-5-20250929", "eu-central-1"),
            "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
        );
        assert_eq!(
            model_id("claude-haiku-4-5", "ap-southeast-1"),
            "apac.anthropic.claude-haiku-4-5-20251001-v1:0"
        );
        assert_eq!(
            model_id("claude-sonnet-4-5", "ap-northeast-1"),
            "jp.anthropic.claude-sonnet-4-5-20250929-v1:0"
        );
        assert_eq!(
            model_id("claude-haiku-4-5-20251001", "ap-southeast-2"),
            "au.anthropic.claude-haiku-4-5-20251001-v1:0"
        );
        assert_eq!(
            model_id("claude-sonnet-4", "ap-northeast-1"),
            "apac.anthropic.claude-sonnet-4-20250514-v1:0"
        );
        assert_eq!(
            model_id("claude-3-5-haiku", "us-gov-west-1"),
            "us-gov.anthropic.claude-3-5-haiku-20241022-v1:0"
        );
        assert_eq!(
            model_id("anthropic.claude-3-5-haiku-20241022-v1:0", "us-west-2"),
            "anthropic.claude-3-5-haiku-20241022-v1:0"
        );
        assert_eq!(model_id("my-model", "us-west-2"), "my-model");
        let cfg = BedrockConfig::from_lookup(|k| match k {
            "AWS_REGION" => Some("us-west-2".into()),
            "AWS_ACCESS_KEY_ID" => Some("AKID".into()),
            "AWS_SECRET_ACCESS_KEY" => Some("s".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            cfg.invoke_url("us.anthropic.claude-x-v1:0"),
            "https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-x-v1%3A0/invoke-model-with-response-stream"
        );
        assert_eq!(cfg.idle_timeout, BedrockConfig::DEFAULT_IDLE_TIMEOUT);
        assert!(!format!("{cfg:?}").contains("\"s\""));
        let none = BedrockConfig::from_lookup(|k| (k == "HOME").then(|| "/nonexistent".into()));
        assert!(matches!(none, Err(ProviderError::Config(m)) if m.contains("AWS_REGION")));
    }

    #[test]
    fn error_classes() {
        let http = |status, t: Option<&str>, msg: &str| ProviderError::Http {
            status,
            error_type: t.map(str::to_string),
            message: msg.into(),
            request_id: None,
            retry_after: None,
            should_retry: None,
        };
        let retry = |e: ProviderError| match classify_http(e) {
            ProviderError::Http {
                should_retry,
                message,
                ..
            } => (should_retry, message),
            _ => unreachable!(),
        };
        assert_eq!(
            retry(http(429, Some("ThrottlingException"), "slow")).0,
            Some(true)
        );
        assert_eq!(
            retry(http(503, Some("ServiceUnavailableException"), "x")).0,
            Some(true)
        );
        assert_eq!(retry(http(502, None, "bad gateway")).0, Some(true));
        let (r, m) = retry(http(403, Some("AccessDeniedException"), "denied"));
        assert_eq!(r, Some(false));
        assert!(m.contains("bedrock:InvokeModelWithResponseStream"), "{m}");
        assert_eq!(
            retry(http(400, Some("ValidationException"), "bad")).0,
            Some(false)
        );
        let (r, m) = retry(http(
            400,
            Some("ValidationException"),
            "The provided model identifier is invalid.",
        ));
        assert_eq!(r, Some(false));
        assert!(m.contains("list-inference-profiles"), "{m}");
    }
}
