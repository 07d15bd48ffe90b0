//! Google Application Default Credentials for Vertex AI: an OAuth access token for the
//! `cloud-platform` scope, from the first source that applies:
//!
//! 1. the file `GOOGLE_APPLICATION_CREDENTIALS` names, else gcloud's
//!    `~/.config/gcloud/application_default_credentials.json`, of type
//!    - `service_account`: a JWT signed with the key (RS256) exchanged at its `token_uri`;
//!    - `external_account` (workload identity federation, as `google-github-actions/auth`
//!      writes it): the subject token from `credential_source` (a `file`, or a `url` with
//!      `headers`, as text or JSON with `subject_token_field_name`) exchanged at `token_url`
//!      (STS), then, with `service_account_impersonation_url`, for a service account's token;
//!    - `authorized_user` (`gcloud auth application-default login`): its refresh token;
//! 2. the metadata server (`GCE_METADATA_HOST`, default `metadata.google.internal`).
//!
//! Tokens are cached and fetched again five minutes before they expire. Every endpoint comes
//! from the credentials file or the standard variable, which is how tests reach local fakes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::http::{call, form_body};
use crate::provider::ProviderError;

/// The OAuth scope Vertex AI needs.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// Tokens this close to expiry are fetched again before use.
const REFRESH_BEFORE: Duration = Duration::from_secs(300);
/// Bound on each token endpoint call.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const METADATA_HOST: &str = "metadata.google.internal";

fn config_error(what: impl std::fmt::Display) -> ProviderError {
    ProviderError::Config(format!("Google credentials: {what}"))
}

/// Where the token comes from.
#[derive(Clone, Debug)]
enum Source {
    ServiceAccount(ServiceAccount),
    External(ExternalAccount),
    AuthorizedUser(AuthorizedUser),
    Metadata { host: String },
}

#[derive(Clone, Deserialize)]
struct ServiceAccount {
    client_email: String,
    private_key: String,
    #[serde(default)]
    token_uri: Option<String>,
    #[serde(default)]
    project_id: Option<String>,
}

impl std::fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Debug, Deserialize)]
struct ExternalAccount {
    audience: String,
    subject_token_type: String,
    token_url: String,
    credential_source: CredentialSource,
    #[serde(default)]
    service_account_impersonation_url: Option<String>,
    #[serde(default)]
    quota_project_id: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
struct CredentialSource {
    #[serde(default)]
    file: Option<PathBuf>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    format: Option<SourceFormat>,
}

#[derive(Clone, Debug, Deserialize)]
struct SourceFormat {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    subject_token_field_name: Option<String>,
}

#[derive(Clone, Deserialize)]
struct AuthorizedUser {
    client_id: String,
    client_secret: String,
    refresh_token: String,
    #[serde(default)]
    quota_project_id: Option<String>,
}

impl std::fmt::Debug for AuthorizedUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizedUser")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

#[derive(Clone)]
struct Token {
    value: String,
    expires: Instant,
}

/// Application Default Credentials with their token cache; cheap to clone.
#[derive(Clone)]
pub struct GoogleAuth {
    inner: Arc<Inner>,
}

struct Inner {
    source: Source,
    cache: tokio::sync::Mutex<Option<Token>>,
}

impl std::fmt::Debug for GoogleAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleAuth")
            .field("source", &self.inner.source)
            .finish_non_exhaustive()
    }
}

fn non_empty(lookup: &dyn Fn(&str) -> Option<String>, key: &str) -> Option<String> {
    lookup(key)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The JSON a token endpoint answers (OAuth and STS spellings).
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl GoogleAuth {
    /// The credentials for this environment (read through `lookup`).
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self, ProviderError> {
        let explicit = non_empty(lookup, "GOOGLE_APPLICATION_CREDENTIALS").map(PathBuf::from);
        let well_known = non_empty(lookup, "CLOUDSDK_CONFIG")
            .map(PathBuf::from)
            .or_else(|| non_empty(lookup, "HOME").map(|h| Path::new(&h).join(".config/gcloud")))
            .map(|d| d.join("application_default_credentials.json"))
            .filter(|p| p.is_file());
        let source = match explicit.or(well_known) {
            Some(path) => Self::from_file(&path)?,
            None => Source::Metadata {
                host: non_empty(lookup, "GCE_METADATA_HOST")
                    .unwrap_or_else(|| METADATA_HOST.into()),
            },
        };
        Ok(GoogleAuth {
            inner: Arc::new(Inner {
                source,
                cache: tokio::sync::Mutex::new(None),
            }),
        })
    }

    fn from_file(path: &Path) -> Result<Source, ProviderError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            config_error(format!(
                "cannot read the credentials file {}: {e}",
                path.display()
            ))
        })?;
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            config_error(format!(
                "the credentials file {} is not JSON: {e}",
                path.display()
            ))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let parse_err = |e: serde_json::Error| {
            config_error(format!(
                "the {kind} credentials file {}: {e}",
                path.display()
            ))
        };
        Ok(match kind.as_str() {
            "service_account" => {
                Source::ServiceAccount(serde_json::from_value(v).map_err(parse_err)?)
            }
            "external_account" => Source::External(serde_json::from_value(v).map_err(parse_err)?),
            "authorized_user" => {
                Source::AuthorizedUser(serde_json::from_value(v).map_err(parse_err)?)
            }
            other => {
                return Err(config_error(format!(
                    "the credentials file {} has type `{other}`; expected service_account, \
                     external_account or authorized_user",
                    path.display()
                )));
            }
        })
    }

    /// The project the credentials name (a service account's `project_id`), if any.
    pub fn project_id(&self) -> Option<&str> {
        match &self.inner.source {
            Source::ServiceAccount(sa) => sa.project_id.as_deref(),
            Source::External(ea) => ea.quota_project_id.as_deref(),
            Source::AuthorizedUser(u) => u.quota_project_id.as_deref(),
            Source::Metadata { .. } => None,
        }
    }

    /// A valid access token: the cached one while fresh, else a new one.
    pub async fn token(&self, client: &reqwest::Client) -> Result<String, ProviderError> {
        let mut cache = self.inner.cache.lock().await;
        if let Some(t) = cache
            .as_ref()
            .filter(|t| t.expires.saturating_duration_since(Instant::now()) > REFRESH_BEFORE)
        {
            return Ok(t.value.clone());
        }
        let (value, lifetime) = self.fetch(client).await?;
        *cache = Some(Token {
            value: value.clone(),
            expires: Instant::now() + lifetime,
        });
        Ok(value)
    }

    /// Drop the cached token (the API rejected it); the next call fetches a new one.
    pub async fn forget(&self) {
        *self.inner.cache.lock().await = None;
    }

    async fn fetch(&self, client: &reqwest::Client) -> Result<(String, Duration), ProviderError> {
        match &self.inner.source {
            Source::ServiceAccount(sa) => service_account_token(client, sa).await,
            Source::External(ea) => external_account_token(client, ea).await,
            Source::AuthorizedUser(u) => {
                let form = form_body(&[
                    ("grant_type", "refresh_token"),
                    ("client_id", &u.client_id),
                    ("client_secret", &u.client_secret),
                    ("refresh_token", &u.refresh_token),
                ]);
                token_call(client, GOOGLE_TOKEN_URI, form, "the OAuth token endpoint").await
            }
            Source::Metadata { host } => {
                let url = format!(
                    "http://{host}/computeMetadata/v1/instance/service-accounts/default/token"
                );
                let body = call(
                    client
                        .get(url)
                        .header("metadata-flavor", "Google")
                        .timeout(Duration::from_secs(3)),
                    "the metadata server",
                )
                .await
                .map_err(|e| {
                    config_error(format!(
                        "no credentials file (GOOGLE_APPLICATION_CREDENTIALS) and {e}"
                    ))
                })?;
                parse_token(&body, "the metadata server")
            }
        }
    }
}

fn parse_token(body: &str, what: &str) -> Result<(String, Duration), ProviderError> {
    let t: TokenResponse = serde_json::from_str(body)
        .map_err(|e| config_error(format!("{what} answered without an access token: {e}")))?;
    Ok((
        t.access_token,
        Duration::from_secs(t.expires_in.unwrap_or(3600)),
    ))
}

async fn token_call(
    client: &reqwest::Client,
    url: &str,
    form: String,
    what: &str,
) -> Result<(String, Duration), ProviderError> {
    let body = call(
        client
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .timeout(CALL_TIMEOUT),
        what,
    )
    .await?;
    parse_token(&body, what)
}

/// The DER of a PEM `PRIVATE KEY` (PKCS#8).
fn pem_to_der(pem: &str) -> Result<Vec<u8>, ProviderError> {
    let b64: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----"))
        .collect();
    STANDARD
        .decode(b64)
        .map_err(|e| config_error(format!("the service account's private_key is not PEM: {e}")))
}

/// A signed RS256 JWT asking `token_uri` for a `cloud-platform` token, issued at `now`
/// (seconds since the epoch).
pub fn service_account_jwt(
    client_email: &str,
    private_key_pem: &str,
    token_uri: &str,
    now: u64,
) -> Result<String, ProviderError> {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = json!({
        "iss": client_email,
        "scope": SCOPE,
        "aud": token_uri,
        "iat": now,
        "exp": now + 3600,
    });
    let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signing_input = format!("{header}.{claims}");
    let der = pem_to_der(private_key_pem)?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der).map_err(|e| {
        config_error(format!(
            "the service account's private_key is not a PKCS#8 RSA key: {e}"
        ))
    })?;
    let mut sig = vec![0u8; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut sig,
    )
    .map_err(|_| config_error("signing the service account JWT failed"))?;
    Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig)))
}

async fn service_account_token(
    client: &reqwest::Client,
    sa: &ServiceAccount,
) -> Result<(String, Duration), ProviderError> {
    let token_uri = sa.token_uri.as_deref().unwrap_or(GOOGLE_TOKEN_URI);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let jwt = service_account_jwt(&sa.client_email, &sa.private_key, token_uri, now)?;
    let form = form_body(&[
        ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
        ("assertion", &jwt),
    ]);
    tracing::debug!(account = %sa.client_email, "service account token");
    token_call(
        client,
        token_uri,
        form,
        "the service account token endpoint",
    )
    .await
}

/// The subject token of an external account's `credential_source`.
async fn subject_token(
    client: &reqwest::Client,
    src: &CredentialSource,
) -> Result<String, ProviderError> {
    let raw = if let Some(file) = &src.file {
        std::fs::read_to_string(file).map_err(|e| {
            config_error(format!(
                "cannot read the subject token file {}: {e}",
                file.display()
            ))
        })?
    } else if let Some(url) = &src.url {
        let mut req = client.get(url).timeout(CALL_TIMEOUT);
        for (k, v) in &src.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        call(req, "the subject token URL").await?
    } else {
        return Err(config_error(
            "the external_account credential_source has neither `file` nor `url` (executable \
             and AWS sources are not supported)",
        ));
    };
    match &src.format {
        Some(f) if f.kind == "json" => {
            let field = f.subject_token_field_name.as_deref().unwrap_or("");
            let v: Value = serde_json::from_str(&raw)
                .map_err(|e| config_error(format!("the subject token is not JSON: {e}")))?;
            v.get(field)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| config_error(format!("the subject token JSON has no `{field}`")))
        }
        _ => Ok(raw.trim().to_string()),
    }
}

async fn external_account_token(
    client: &reqwest::Client,
    ea: &ExternalAccount,
) -> Result<(String, Duration), ProviderError> {
    let subject = subject_token(client, &ea.credential_source).await?;
    let form = form_body(&[
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        ("audience", &ea.audience),
        ("scope", SCOPE),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:access_token",
        ),
        ("subject_token", &subject),
        ("subject_token_type", &ea.subject_token_type),
    ]);
    let (federated, lifetime) =
        token_call(client, &ea.token_url, form, "the STS token exchange").await?;
    let Some(url) = &ea.service_account_impersonation_url else {
        return Ok((federated, lifetime));
    };
    let body = call(
        client
            .post(url)
            .bearer_auth(&federated)
            .json(&json!({"scope": [SCOPE], "lifetime": "3600s"}))
            .timeout(CALL_TIMEOUT),
        "service account impersonation",
    )
    .await?;
    let v: Value = serde_json::from_str(&body)
        .map_err(|e| config_error(format!("service account impersonation answered {e}")))?;
    let token = v
        .get("accessToken")
        .and_then(Value::as_str)
        .ok_or_else(|| config_error("service account impersonation answered no accessToken"))?;
    let lifetime = v
        .get("expireTime")
        .and_then(Value::as_str)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .and_then(|t| {
            u64::try_from((t.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds()).ok()
        })
        .map_or(Duration::from_secs(3600), Duration::from_secs);
    tracing::debug!("impersonated service account token");
    Ok((token.to_string(), lifetime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_files_by_type() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.json");
        std::fs::write(
            &f,
            r#"{"type":"external_account","audience":"//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/gh","subject_token_type":"urn:ietf:params:oauth:token-type:jwt","token_url":"https://sts.googleapis.com/v1/token","credential_source":{"url":"http://x/token?audience=a","headers":{"Authorization":"Bearer t"},"format":{"type":"json","subject_token_field_name":"value"}},"service_account_impersonation_url":"https://iam/x:generateAccessToken"}"#,
        )
        .unwrap();
        let p = f.to_str().unwrap().to_string();
        let auth = GoogleAuth::from_lookup(&|k| {
            (k == "GOOGLE_APPLICATION_CREDENTIALS").then(|| p.clone())
        })
        .unwrap();
        assert!(matches!(auth.inner.source, Source::External(_)));
        std::fs::write(&f, r#"{"type":"impersonated_service_account"}"#).unwrap();
        let e = GoogleAuth::from_lookup(&|k| {
            (k == "GOOGLE_APPLICATION_CREDENTIALS").then(|| p.clone())
        })
        .unwrap_err();
        assert!(
            e.to_string().contains("impersonated_service_account"),
            "{e}"
        );
        let auth = GoogleAuth::from_lookup(&|k| match k {
            "HOME" => Some("/nonexistent".into()),
            "GCE_METADATA_HOST" => Some("127.0.0.1:9".into()),
            _ => None,
        })
        .unwrap();
        assert!(matches!(&auth.inner.source, Source::Metadata { host } if host == "127.0.0.1:9"));
    }
}
