//! AWS credentials for Bedrock, from the standard chain, in the order the AWS SDKs use:
//!
//! 1. the environment: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`;
//! 2. a web identity token: `AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN` (optionally
//!    `AWS_ROLE_SESSION_NAME`) exchanged at STS (`AssumeRoleWithWebIdentity`), as
//!    `aws-actions/configure-aws-credentials` and EKS service accounts set up;
//! 3. the profile `AWS_PROFILE` (default `default`) of `~/.aws/credentials` and
//!    `~/.aws/config` (`AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`): static keys, or
//!    `role_arn` + `web_identity_token_file`, or `credential_process` (a command printing
//!    credentials as JSON, run with `sh -c`, as the AWS CLI does). A profile that needs what
//!    runner does not read (SSO, `source_profile` role chains) is a configuration error that
//!    says how to export its credentials instead;
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
/// Bound on a profile's `credential_process` command.
const PROCESS_TIMEOUT: Duration = Duration::from_secs(60);
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
    Process {
        command: String,
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
            Source::Process { .. } => "credential process",
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

/// The profile settings of credential sources runner does not read, with what to do instead.
const UNSUPPORTED_PROFILE_KEYS: [(&str, &str); 4] = [
    ("sso_session", "an SSO profile"),
    ("sso_start_url", "an SSO profile"),
    (
        "source_profile",
        "a role chained from another profile (`source_profile`)",
    ),
    (
        "credential_source",
        "a role assumed with `credential_source`",
    ),
];

/// An AWS profile that gets its credentials in a way runner does not read (SSO, a role chained
/// from another profile, ...); the message says how to run anyway.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the AWS profile `{profile}` is {what}, which runner does not read: export its \
     credentials before running (`eval \"$(aws configure export-credentials \
     --profile {profile} --format env)\"`), or use static keys, a web identity token \
     file or `credential_process` in the profile"
)]
pub struct UnsupportedProfile {
    /// The profile's name (`AWS_PROFILE`, `AWS_DEFAULT_PROFILE` or `default`).
    pub profile: String,
    /// What the profile is (`an SSO profile`, ...).
    pub what: &'static str,
}

/// Where credentials come from: `Ok(None)` when no source applies (the instance metadata
/// service disabled), `Err` when the profile names a source runner does not read.
fn source(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Option<Source>, UnsupportedProfile> {
    let found = simple_source(lookup);
    if let Some(Source::Imds) | None = found {
        let profile = profile_entries(lookup);
        if let Some((_, what)) = UNSUPPORTED_PROFILE_KEYS
            .iter()
            .find(|(k, _)| get(&profile, k).is_some())
        {
            let name = non_empty(lookup, "AWS_PROFILE")
                .or_else(|| non_empty(lookup, "AWS_DEFAULT_PROFILE"))
                .unwrap_or_else(|| "default".into());
            return Err(UnsupportedProfile {
                profile: name,
                what,
            });
        }
    }
    Ok(found)
}

fn simple_source(lookup: &dyn Fn(&str) -> Option<String>) -> Option<Source> {
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
    if let Some(command) = get(&profile, "credential_process") {
        return Some(Source::Process {
            command: command.to_string(),
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

/// The JSON a `credential_process` prints (`Version` 1).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ProcessCredentials {
    version: u32,
    access_key_id: String,
    secret_access_key: String,
    #[serde(default)]
    session_token: Option<String>,
    #[serde(default)]
    expiration: Option<String>,
}

/// Run a profile's `credential_process` with `sh -c` and read the credentials it prints.
async fn process_credentials(command: &str) -> Result<AwsCredentials, ProviderError> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(PROCESS_TIMEOUT, cmd.output())
        .await
        .map_err(|_| {
            config_error(format!(
                "the profile's credential_process did not finish within {}s",
                PROCESS_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| config_error(format!("cannot run the profile's credential_process: {e}")))?;
    if !out.status.success() {
        let stderr: String = String::from_utf8_lossy(&out.stderr)
            .trim()
            .chars()
            .take(500)
            .collect();
        return Err(config_error(format!(
            "the profile's credential_process failed ({}): {stderr}",
            out.status
        )));
    }
    let c: ProcessCredentials = serde_json::from_slice(&out.stdout).map_err(|e| {
        config_error(format!(
            "the profile's credential_process printed no credentials JSON: {e}"
        ))
    })?;
    if c.version != 1 {
        return Err(config_error(format!(
            "the profile's credential_process printed Version {}; runner reads Version 1",
            c.version
        )));
    }
    Ok(AwsCredentials {
        access_key_id: c.access_key_id,
        secret_access_key: c.secret_access_key,
        session_token: c.session_token,
        expires: c.expiration.as_deref().and_then(parse_time),
    })
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
    /// The chain for this environment (read through `lookup`); `Ok(None)` when no source
    /// applies, `Err` (what to do) when the profile names a source runner does not read.
    pub fn from_lookup(
        lookup: &dyn Fn(&str) -> Option<String>,
        region: &str,
    ) -> Result<Option<Self>, UnsupportedProfile> {
        let Some(source) = source(lookup)? else {
            return Ok(None);
        };
        let sts_endpoint = non_empty(lookup, "AWS_ENDPOINT_URL_STS")
            .or_else(|| non_empty(lookup, "AWS_ENDPOINT_URL"))
            .unwrap_or_else(|| format!("https://sts.{region}.amazonaws.com"));
        let imds_endpoint = non_empty(lookup, "AWS_EC2_METADATA_SERVICE_ENDPOINT")
            .unwrap_or_else(|| IMDS_DEFAULT.into());
        Ok(Some(CredentialChain {
            inner: Arc::new(Inner {
                source,
                sts_endpoint: sts_endpoint.trim_end_matches('/').to_string(),
                imds_endpoint: imds_endpoint.trim_end_matches('/').to_string(),
                cache: tokio::sync::Mutex::new(None),
            }),
        }))
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
            Source::Process { command } => process_credentials(command).await,
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

    fn src(lookup: &dyn Fn(&str) -> Option<String>) -> Option<Source> {
        source(lookup).unwrap()
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
            matches!(src(&env(&e)), Some(Source::Static { access_key_id, .. }) if access_key_id == "AKID")
        );
        let e = [
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
            ("AWS_ROLE_SESSION_NAME", "ci"),
        ];
        assert_eq!(
            src(&env(&e)),
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
            src(&env(&e)),
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
        assert_eq!(src(&env(&[("HOME", "/nonexistent")])), Some(Source::Imds));
        assert_eq!(
            src(&env(&[
                ("HOME", "/nonexistent"),
                ("AWS_EC2_METADATA_DISABLED", "true")
            ])),
            None
        );
    }

    #[tokio::test]
    async fn credential_process_and_unsupported_profiles() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        let json = r#"{"Version": 1, "AccessKeyId": "ASIAP", "SecretAccessKey": "ps", "SessionToken": "pt", "Expiration": "2099-01-01T00:00:00Z"}"#;
        std::fs::write(
            &config,
            format!(
                "[profile proc]\ncredential_process = printf '%s' '{json}'\n\
                 [profile bad]\ncredential_process = echo nope >&2; exit 3\n\
                 [profile sso]\nsso_session = corp\nsso_account_id = 1\n\
                 [profile chained]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = proc\n"
            ),
        )
        .unwrap();
        let f = config.to_str().unwrap();
        let with = |profile: &'static str| {
            let f = f.to_string();
            move |k: &str| match k {
                "AWS_CONFIG_FILE" => Some(f.clone()),
                "AWS_PROFILE" => Some(profile.to_string()),
                "HOME" => Some("/nonexistent".to_string()),
                _ => None,
            }
        };
        // reqwest builds no client before a crypto provider is installed (the test must not
        // depend on another test having installed it first).
        crate::http::install_crypto_provider();
        let client = reqwest::Client::new();
        let chain = CredentialChain::from_lookup(&with("proc"), "us-east-1")
            .unwrap()
            .unwrap();
        let c = chain.credentials(&client).await.unwrap();
        assert_eq!(c.access_key_id, "ASIAP");
        assert_eq!(c.session_token.as_deref(), Some("pt"));
        assert!(c.expires.is_some());
        let chain = CredentialChain::from_lookup(&with("bad"), "us-east-1")
            .unwrap()
            .unwrap();
        let e = chain.credentials(&client).await.unwrap_err().to_string();
        assert!(
            e.contains("credential_process failed") && e.contains("nope"),
            "{e}"
        );
        for (profile, what) in [("sso", "SSO"), ("chained", "source_profile")] {
            let e = CredentialChain::from_lookup(&with(profile), "us-east-1")
                .unwrap_err()
                .to_string();
            assert!(e.contains(what) && e.contains("export-credentials"), "{e}");
            assert!(e.contains(&format!("--profile {profile}")), "{e}");
        }
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
