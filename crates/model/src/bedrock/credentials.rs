//! AWS credentials for Bedrock, from the standard chain, in the order the AWS SDKs use:
//!
//! 1. the environment: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`;
//! 2. a web identity token: `AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN` (optionally
//!    `AWS_ROLE_SESSION_NAME`) exchanged at STS (`AssumeRoleWithWebIdentity`), as
//!    `aws-actions/configure-aws-credentials` and EKS service accounts set up;
//! 3. the profile `AWS_PROFILE` (default `default`) of `~/.aws/credentials` and
//!    `~/.aws/config` (`AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`): static keys, or
//!    `role_arn` + `web_identity_token_file`;
//! 4. the ECS container endpoint (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `_FULL_URI`);
//! 5. the EC2 instance metadata service, IMDSv2 (off with `AWS_EC2_METADATA_DISABLED=true`).
//!
//! Temporary credentials are cached and fetched again five minutes before they expire.
//! Endpoints follow the standard overrides (`AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL`,
//! `AWS_EC2_METADATA_SERVICE_ENDPOINT`), which is also how the tests reach local fakes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Deserialize;

use crate::http::{call, form_body};
use crate::provider::ProviderError;

/// Credentials this close to expiry are fetched again before use.
const REFRESH_BEFORE: Duration = Duration::from_secs(300);
/// Bound on each credential endpoint call (STS, ECS, IMDS).
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// IMDS answers within a few milliseconds on EC2; off EC2 the address does not answer.
const IMDS_TIMEOUT: Duration = Duration::from_secs(2);
const IMDS_DEFAULT: &str = "http://169.254.169.254";
const ECS_HOST: &str = "http://169.254.170.2";

/// One set of AWS credentials.
#[derive(Clone)]
pub struct AwsCredentials {
    /// Access key id (`AKIA…`, `ASIA…`).
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: String,
    /// Session token of temporary credentials.
    pub session_token: Option<String>,
    /// When temporary credentials expire.
    pub expires: Option<SystemTime>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires", &self.expires)
            .finish()
    }
}

impl AwsCredentials {
    fn fresh(&self, now: SystemTime) -> bool {
        self.expires.is_none_or(|at| {
            at.duration_since(now)
                .is_ok_and(|left| left > REFRESH_BEFORE)
        })
    }
}

/// Where credentials come from, decided once from the environment.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    Static {
        access_key_id: String,
        secret_access_key: String,
        session_token: Option<String>,
    },
    WebIdentity {
        token_file: PathBuf,
        role_arn: String,
        session_name: String,
    },
    Container {
        url: String,
        authorization: Option<String>,
    },
    Imds,
}

/// The credential chain with its cache; cheap to clone.
#[derive(Clone)]
pub struct CredentialChain {
    inner: Arc<Inner>,
}

struct Inner {
    source: Source,
    sts_endpoint: String,
    imds_endpoint: String,
    cache: tokio::sync::Mutex<Option<AwsCredentials>>,
}

impl std::fmt::Debug for CredentialChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let source = match &self.inner.source {
            Source::Static { .. } => "static keys",
            Source::WebIdentity { .. } => "web identity",
            Source::Container { .. } => "container endpoint",
            Source::Imds => "instance metadata",
        };
        f.debug_struct("CredentialChain")
            .field("source", &source)
            .finish_non_exhaustive()
    }
}

fn non_empty(lookup: &dyn Fn(&str) -> Option<String>, key: &str) -> Option<String> {
    lookup(key)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// One `[section]` of an AWS INI file: its keys, lowercase.
fn ini_section(text: &str, wanted: &[String]) -> Option<Vec<(String, String)>> {
    let mut current: Option<bool> = None;
    let mut found: Option<Vec<(String, String)>> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let hit = wanted.iter().any(|w| w == name.trim());
            current = Some(hit);
            if hit && found.is_none() {
                found = Some(Vec::new());
            }
            continue;
        }
        if current == Some(true)
            && let (Some(entries), Some((k, v))) = (found.as_mut(), line.split_once('='))
        {
            entries.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    found
}

fn get<'a>(entries: &'a [(String, String)], key: &str) -> Option<&'a str> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// The profile's entries: the credentials file's `[name]` first, then the config file's
/// `[profile name]` (or `[default]`).
fn profile_entries(lookup: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let profile = non_empty(lookup, "AWS_PROFILE")
        .or_else(|| non_empty(lookup, "AWS_DEFAULT_PROFILE"))
        .unwrap_or_else(|| "default".into());
    let home = non_empty(lookup, "HOME").map(PathBuf::from);
    let file = |var: &str, name: &str| {
        non_empty(lookup, var)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(name)))
    };
    let mut entries = Vec::new();
    if let Some(text) =
        file("AWS_CONFIG_FILE", "config").and_then(|p| std::fs::read_to_string(p).ok())
    {
        let names = if profile == "default" {
            vec!["default".to_string(), "profile default".to_string()]
        } else {
            vec![format!("profile {profile}")]
        };
        entries.extend(ini_section(&text, &names).unwrap_or_default());
    }
    if let Some(text) = file("AWS_SHARED_CREDENTIALS_FILE", "credentials")
        .and_then(|p| std::fs::read_to_string(p).ok())
    {
        // Later entries win in `get`: the credentials file over the config file.
        entries.extend(ini_section(&text, &[profile]).unwrap_or_default());
    }
    entries
}

/// The region from `AWS_REGION`, `AWS_DEFAULT_REGION`, else the profile's `region`.
pub fn region(lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    non_empty(lookup, "AWS_REGION")
        .or_else(|| non_empty(lookup, "AWS_DEFAULT_REGION"))
        .or_else(|| get(&profile_entries(lookup), "region").map(str::to_string))
}

fn session_name(lookup: &dyn Fn(&str) -> Option<String>) -> String {
    non_empty(lookup, "AWS_ROLE_SESSION_NAME").unwrap_or_else(|| {
        format!(
            "runner-{}",
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        )
    })
}

fn source(lookup: &dyn Fn(&str) -> Option<String>) -> Option<Source> {
    if let (Some(id), Some(secret)) = (
        non_empty(lookup, "AWS_ACCESS_KEY_ID"),
        non_empty(lookup, "AWS_SECRET_ACCESS_KEY"),
    ) {
        return Some(Source::Static {
            access_key_id: id,
            secret_access_key: secret,
            session_token: non_empty(lookup, "AWS_SESSION_TOKEN"),
        });
    }
    if let (Some(file), Some(role)) = (
        non_empty(lookup, "AWS_WEB_IDENTITY_TOKEN_FILE"),
        non_empty(lookup, "AWS_ROLE_ARN"),
    ) {
        return Some(Source::WebIdentity {
            token_file: file.into(),
            role_arn: role,
            session_name: session_name(lookup),
        });
    }
    let profile = profile_entries(lookup);
    if let (Some(id), Some(secret)) = (
        get(&profile, "aws_access_key_id"),
        get(&profile, "aws_secret_access_key"),
    ) {
        return Some(Source::Static {
            access_key_id: id.into(),
            secret_access_key: secret.into(),
            session_token: get(&profile, "aws_session_token").map(str::to_string),
        });
    }
    if let (Some(file), Some(role)) = (
        get(&profile, "web_identity_token_file"),
        get(&profile, "role_arn"),
    ) {
        return Some(Source::WebIdentity {
            token_file: file.into(),
            role_arn: role.into(),
            session_name: get(&profile, "role_session_name")
                .map(str::to_string)
                .unwrap_or_else(|| session_name(lookup)),
        });
    }
    let authorization = non_empty(lookup, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
    if let Some(rel) = non_empty(lookup, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
        return Some(Source::Container {
            url: format!("{ECS_HOST}{rel}"),
            authorization,
        });
    }
    if let Some(url) = non_empty(lookup, "AWS_CONTAINER_CREDENTIALS_FULL_URI") {
        return Some(Source::Container { url, authorization });
    }
    if non_empty(lookup, "AWS_EC2_METADATA_DISABLED")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return None;
    }
    Some(Source::Imds)
}

fn config_error(what: impl std::fmt::Display) -> ProviderError {
    ProviderError::Config(format!("AWS credentials: {what}"))
}

/// The text of the first `<tag>…</tag>` in `xml`, with the five XML entities decoded.
fn xml_text(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = xml.find(&open)? + open.len();
    let len = xml.get(start..)?.find(&close)?;
    let raw = xml.get(start..start + len)?.trim();
    Some(
        raw.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

fn parse_time(s: &str) -> Option<SystemTime> {
    let t = chrono::DateTime::parse_from_rfc3339(s.trim()).ok()?;
    let secs = u64::try_from(t.timestamp()).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// The JSON the ECS and EC2 credential endpoints answer.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct EndpointCredentials {
    access_key_id: String,
    secret_access_key: String,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    expiration: Option<String>,
}

impl From<EndpointCredentials> for AwsCredentials {
    fn from(c: EndpointCredentials) -> Self {
        AwsCredentials {
            access_key_id: c.access_key_id,
            secret_access_key: c.secret_access_key,
            session_token: c.token,
            expires: c.expiration.as_deref().and_then(parse_time),
        }
    }
}

impl CredentialChain {
    /// The chain for this environment (read through `lookup`); `None` when no source applies.
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>, region: &str) -> Option<Self> {
        let source = source(lookup)?;
        let sts_endpoint = non_empty(lookup, "AWS_ENDPOINT_URL_STS")
            .or_else(|| non_empty(lookup, "AWS_ENDPOINT_URL"))
            .unwrap_or_else(|| format!("https://sts.{region}.amazonaws.com"));
        let imds_endpoint = non_empty(lookup, "AWS_EC2_METADATA_SERVICE_ENDPOINT")
            .unwrap_or_else(|| IMDS_DEFAULT.into());
        Some(CredentialChain {
            inner: Arc::new(Inner {
                source,
                sts_endpoint: sts_endpoint.trim_end_matches('/').to_string(),
                imds_endpoint: imds_endpoint.trim_end_matches('/').to_string(),
                cache: tokio::sync::Mutex::new(None),
            }),
        })
    }

    /// Fixed credentials (tests, embedding).
    pub fn fixed(
        access_key_id: &str,
        secret_access_key: &str,
        session_token: Option<&str>,
    ) -> Self {
        CredentialChain {
            inner: Arc::new(Inner {
                source: Source::Static {
                    access_key_id: access_key_id.into(),
                    secret_access_key: secret_access_key.into(),
                    session_token: session_token.map(str::to_string),
                },
                sts_endpoint: String::new(),
                imds_endpoint: String::new(),
                cache: tokio::sync::Mutex::new(None),
            }),
        }
    }

    /// The access key id of static credentials (the rate-limit governor's key), if static.
    pub fn static_key_id(&self) -> Option<&str> {
        match &self.inner.source {
            Source::Static { access_key_id, .. } => Some(access_key_id),
            _ => None,
        }
    }

    /// Current credentials: cached ones while fresh, else fetched from the source.
    pub async fn credentials(
        &self,
        client: &reqwest::Client,
    ) -> Result<AwsCredentials, ProviderError> {
        let mut cache = self.inner.cache.lock().await;
        if let Some(c) = cache.as_ref().filter(|c| c.fresh(SystemTime::now())) {
            return Ok(c.clone());
        }
        let fetched = self.fetch(client).await?;
        *cache = Some(fetched.clone());
        Ok(fetched)
    }

    async fn fetch(&self, client: &reqwest::Client) -> Result<AwsCredentials, ProviderError> {
        match &self.inner.source {
            Source::Static {
                access_key_id,
                secret_access_key,
                session_token,
            } => Ok(AwsCredentials {
                access_key_id: access_key_id.clone(),
                secret_access_key: secret_access_key.clone(),
                session_token: session_token.clone(),
                expires: None,
            }),
            Source::WebIdentity {
                token_file,
                role_arn,
                session_name,
            } => {
                self.web_identity(client, token_file, role_arn, session_name)
                    .await
            }
            Source::Container { url, authorization } => {
                let mut req = client.get(url).timeout(CALL_TIMEOUT);
                if let Some(a) = authorization {
                    req = req.header("authorization", a);
                }
                let body = call(req, "the container credentials endpoint").await?;
                let c: EndpointCredentials = serde_json::from_str(&body).map_err(|e| {
                    config_error(format!("the container credentials endpoint answered {e}"))
                })?;
                Ok(c.into())
            }
            Source::Imds => self.imds(client).await,
        }
    }

    async fn web_identity(
        &self,
        client: &reqwest::Client,
        token_file: &std::path::Path,
        role_arn: &str,
        session_name: &str,
    ) -> Result<AwsCredentials, ProviderError> {
        let token = std::fs::read_to_string(token_file).map_err(|e| {
            config_error(format!(
                "cannot read the web identity token file {}: {e}",
                token_file.display()
            ))
        })?;
        let form = [
            ("Action", "AssumeRoleWithWebIdentity"),
            ("Version", "2011-06-15"),
            ("RoleArn", role_arn),
            ("RoleSessionName", session_name),
            ("WebIdentityToken", token.trim()),
        ];
        let body = form_body(&form);
        let req = client
            .post(format!("{}/", self.inner.sts_endpoint))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .timeout(CALL_TIMEOUT);
        let xml = call(req, "STS AssumeRoleWithWebIdentity").await?;
        let field = |tag: &str| {
            xml_text(&xml, tag).ok_or_else(|| {
                config_error(format!(
                    "STS AssumeRoleWithWebIdentity answered without <{tag}>"
                ))
            })
        };
        tracing::debug!(role = role_arn, "assumed role with web identity");
        Ok(AwsCredentials {
            access_key_id: field("AccessKeyId")?,
            secret_access_key: field("SecretAccessKey")?,
            session_token: Some(field("SessionToken")?),
            expires: xml_text(&xml, "Expiration").as_deref().and_then(parse_time),
        })
    }

    async fn imds(&self, client: &reqwest::Client) -> Result<AwsCredentials, ProviderError> {
        let base = &self.inner.imds_endpoint;
        let token = call(
            client
                .put(format!("{base}/latest/api/token"))
                .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
                .timeout(IMDS_TIMEOUT),
            "the instance metadata service (IMDSv2)",
        )
        .await
        .map_err(|e| {
            config_error(format!(
                "no credentials found (environment, web identity, profile, container) and {e}"
            ))
        })?;
        let list = format!("{base}/latest/meta-data/iam/security-credentials/");
        let get = |url: String| {
            client
                .get(url)
                .header("x-aws-ec2-metadata-token", token.trim())
                .timeout(IMDS_TIMEOUT)
        };
        let roles = call(get(list.clone()), "the instance metadata service").await?;
        let role = roles
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .ok_or_else(|| config_error("the instance has no IAM role"))?
            .to_string();
        let body = call(
            get(format!("{list}{role}")),
            "the instance metadata service",
        )
        .await?;
        let c: EndpointCredentials = serde_json::from_str(&body)
            .map_err(|e| config_error(format!("the instance metadata service answered {e}")))?;
        Ok(c.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn environment_wins_then_web_identity_then_profile() {
        let e = [
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "sek"),
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
        ];
        assert!(
            matches!(source(&env(&e)), Some(Source::Static { access_key_id, .. }) if access_key_id == "AKID")
        );
        let e = [
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
            ("AWS_ROLE_SESSION_NAME", "ci"),
        ];
        assert_eq!(
            source(&env(&e)),
            Some(Source::WebIdentity {
                token_file: "/t".into(),
                role_arn: "arn:aws:iam::1:role/r".into(),
                session_name: "ci".into()
            })
        );
        let dir = tempfile::tempdir().unwrap();
        let creds = dir.path().join("credentials");
        let config = dir.path().join("config");
        std::fs::write(&creds, "[default]\naws_access_key_id = D\naws_secret_access_key = d\n\n[ci]\naws_access_key_id = C\naws_secret_access_key = c\naws_session_token = t\n").unwrap();
        std::fs::write(
            &config,
            "[profile ci]\nregion = eu-west-3\n[default]\nregion = us-west-2\n",
        )
        .unwrap();
        let (c, f) = (creds.to_str().unwrap(), config.to_str().unwrap());
        let e = [
            ("AWS_SHARED_CREDENTIALS_FILE", c),
            ("AWS_CONFIG_FILE", f),
            ("AWS_PROFILE", "ci"),
        ];
        assert_eq!(
            source(&env(&e)),
            Some(Source::Static {
                access_key_id: "C".into(),
                secret_access_key: "c".into(),
                session_token: Some("t".into())
            })
        );
        assert_eq!(region(&env(&e)).as_deref(), Some("eu-west-3"));
        let e = [("AWS_SHARED_CREDENTIALS_FILE", c), ("AWS_CONFIG_FILE", f)];
        assert_eq!(region(&env(&e)).as_deref(), Some("us-west-2"));
        let e = [("AWS_REGION", "ap-south-1"), ("AWS_CONFIG_FILE", f)];
        assert_eq!(region(&env(&e)).as_deref(), Some("ap-south-1"));
        // Nothing configured: the instance metadata service, unless disabled.
        assert_eq!(
            source(&env(&[("HOME", "/nonexistent")])),
            Some(Source::Imds)
        );
        assert_eq!(
            source(&env(&[
                ("HOME", "/nonexistent"),
                ("AWS_EC2_METADATA_DISABLED", "true")
            ])),
            None
        );
    }

    #[test]
    fn sts_xml_and_expiry() {
        let xml = "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA1</AccessKeyId><SessionToken>a&amp;b</SessionToken></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
        assert_eq!(xml_text(xml, "AccessKeyId").as_deref(), Some("ASIA1"));
        assert_eq!(xml_text(xml, "SessionToken").as_deref(), Some("a&b"));
        assert_eq!(xml_text(xml, "Expiration"), None);
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let c = |secs| AwsCredentials {
            access_key_id: "a".into(),
            secret_access_key: "s".into(),
            session_token: None,
            expires: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)),
        };
        assert!(c(1_000_000 + 3600).fresh(now));
        assert!(!c(1_000_000 + 60).fresh(now));
        assert!(!format!("{:?}", c(0)).contains("\"s\""));
    }
}
