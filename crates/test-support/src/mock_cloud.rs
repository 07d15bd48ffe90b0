//! A fake of Amazon Bedrock and Google Vertex AI on 127.0.0.1, with the credential endpoints
//! both clouds' providers call: AWS STS (`AssumeRoleWithWebIdentity`) and IMDSv2, Google's
//! OAuth token endpoint (service-account JWT), STS token exchange, service-account
//! impersonation, a GitHub-style OIDC token URL and the metadata server.
//!
//! The model routes play a script of [`CloudTurn`]s in the cloud's wire format: Bedrock's AWS
//! event-stream frames (each Anthropic event base64 in a `chunk`), Vertex's SSE. Bedrock
//! requests are accepted only with a valid SigV4 signature, recomputed here from the request
//! with the secret of the access key (an implementation of its own, not the provider's crate);
//! Vertex requests only with a bearer token one of the token endpoints issued. Service-account
//! JWTs are verified with the fixture key's public half.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::fixtures::{fixture_bytes, fixture_text};
use crate::mock_turn::{Frame, body_stream};
use crate::model_server::ModelServer;
use crate::sse::SseEvent;

/// Which cloud's model route the script answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    /// `POST /model/{id}/invoke-model-with-response-stream`, event-stream frames.
    Bedrock,
    /// `POST /v1/projects/…:streamRawPredict`, SSE.
    Vertex,
}

/// One scripted answer of the model route.
#[derive(Debug, Clone)]
pub enum CloudTurn {
    /// These Anthropic events, then the end of the body.
    Events(Vec<SseEvent>),
    /// These events, then a mid-stream error: a Bedrock `exception` message of this type, or
    /// a Vertex `event: error` of this type.
    EventsThenError(Vec<SseEvent>, &'static str, &'static str),
    /// These events, then the connection dropped.
    EventsThenDrop(Vec<SseEvent>),
    /// These events, then silence this long.
    EventsThenStall(Vec<SseEvent>, Duration),
    /// An HTTP error: status, error type (Bedrock's `x-amzn-ErrorType`, Vertex's `status`),
    /// message.
    Error(u16, &'static str, &'static str),
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct CloudRequest {
    /// HTTP method.
    pub method: String,
    /// Raw path (percent-encoding as sent).
    pub path: String,
    /// Headers, names lowercase.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl CloudRequest {
    /// First value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as form fields.
    pub fn form(&self) -> BTreeMap<String, String> {
        form_decode(&String::from_utf8_lossy(&self.body))
    }
}

fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn form_decode(s: &str) -> BTreeMap<String, String> {
    s.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (pct_decode(k), pct_decode(v)))
        .collect()
}

/// What the credential endpoints issue and accept.
pub mod creds {
    /// Static AWS keys the fake accepts.
    pub const AWS_KEY_ID: &str = "AKIDSTATIC";
    /// Their secret.
    pub const AWS_SECRET: &str = "static-secret/with+chars";
    /// The web identity (OIDC) token the STS fake and the OIDC URL expect and serve.
    pub const OIDC_TOKEN: &str = "gh-oidc-token";
    /// The role STS lets that token assume.
    pub const ROLE_ARN: &str = "arn:aws:iam::123456789012:role/runner-ci";
    /// GitHub's request token for the OIDC URL.
    pub const ACTIONS_REQUEST_TOKEN: &str = "actions-request-token";
    /// The service account of the key fixture.
    pub const SA_EMAIL: &str = "runner@proj.iam.gserviceaccount.com";
    /// The workload identity audience.
    pub const WIF_AUDIENCE: &str =
        "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/gh/providers/gh";
}

#[derive(Default)]
struct State {
    requests: Vec<CloudRequest>,
    model_served: usize,
    /// Access key id → (secret, session token required).
    aws_keys: BTreeMap<String, (String, Option<String>)>,
    /// Bearer tokens Vertex accepts.
    tokens: Vec<String>,
    issued: usize,
    signature_failures: usize,
    problems: Vec<String>,
}

struct Shared {
    cloud: Cloud,
    script: Vec<CloudTurn>,
    /// `expires_in` of issued Google tokens, seconds.
    token_lifetime: u64,
    state: Mutex<State>,
}

/// The running fake. Dropping it shuts it down.
pub struct MockCloud {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockCloud {
    /// Start a fake of `cloud` playing `script` on its model route.
    pub fn start(cloud: Cloud, script: Vec<CloudTurn>) -> MockCloud {
        Self::start_with(cloud, script, 3600)
    }

    /// Like [`MockCloud::start`], issuing Google tokens that live `token_lifetime` seconds.
    pub fn start_with(cloud: Cloud, script: Vec<CloudTurn>, token_lifetime: u64) -> MockCloud {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut state = State::default();
        state
            .aws_keys
            .insert(creds::AWS_KEY_ID.into(), (creds::AWS_SECRET.into(), None));
        let shared = Arc::new(Shared {
            cloud,
            script,
            token_lifetime,
            state: Mutex::new(state),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let for_server = shared.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = Router::new().fallback(move |req: Request| {
                    let shared = for_server.clone();
                    async move { handle(shared, addr, req).await }
                });
                ready_tx.send(()).unwrap();
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = rx => {}
                }
            });
        });
        ready_rx.recv().unwrap();
        MockCloud {
            addr,
            shared,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The root URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request, in order.
    pub fn requests(&self) -> Vec<CloudRequest> {
        self.shared.state.lock().unwrap().requests.clone()
    }

    /// The requests whose path starts with `prefix`.
    pub fn requests_to(&self, prefix: &str) -> Vec<CloudRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.starts_with(prefix))
            .collect()
    }

    /// The model requests (Bedrock's or Vertex's route).
    pub fn model_requests(&self) -> Vec<CloudRequest> {
        self.requests()
            .into_iter()
            .filter(|r| is_model_route(&r.path))
            .collect()
    }

    /// Requests rejected for a bad SigV4 signature.
    pub fn signature_failures(&self) -> usize {
        self.shared.state.lock().unwrap().signature_failures
    }

    /// Make every token issued so far invalid (the API answers 401 for them).
    pub fn revoke_tokens(&self) {
        self.shared.state.lock().unwrap().tokens.clear();
    }

    /// Tokens the Google token endpoints issued.
    pub fn tokens_issued(&self) -> usize {
        self.shared.state.lock().unwrap().issued
    }

    /// Panic with what the credential endpoints found wrong, if anything.
    pub fn assert_clean(&self) {
        let p = self.shared.state.lock().unwrap().problems.clone();
        assert!(p.is_empty(), "fake cloud problems: {p:#?}");
    }

    /// The environment pointing the binary's Bedrock provider here with static keys.
    pub fn bedrock_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", self.url()),
            ("AWS_ACCESS_KEY_ID", creds::AWS_KEY_ID.into()),
            ("AWS_SECRET_ACCESS_KEY", creds::AWS_SECRET.into()),
            ("AWS_EC2_METADATA_DISABLED", "true".into()),
        ]
    }

    /// A Vertex `service_account` credentials file in `dir` whose `token_uri` is this fake.
    pub fn service_account_file(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let p = dir.join("sa.json");
        let v = json!({
            "type": "service_account",
            "project_id": "proj",
            "private_key_id": "k1",
            "private_key": fixture_text("cloud/service_account_key.pem"),
            "client_email": creds::SA_EMAIL,
            "token_uri": format!("{}/token", self.url()),
        });
        std::fs::write(&p, v.to_string()).unwrap();
        p
    }

    /// A Vertex `external_account` file as `google-github-actions/auth` writes it (subject
    /// token from a URL with GitHub's request token, JSON `value`), exchanged at this fake's
    /// STS, impersonating a service account when `impersonate`.
    pub fn external_account_file(
        &self,
        dir: &std::path::Path,
        impersonate: bool,
    ) -> std::path::PathBuf {
        let p = dir.join("wif.json");
        let mut v = json!({
            "type": "external_account",
            "audience": creds::WIF_AUDIENCE,
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": format!("{}/sts/v1/token", self.url()),
            "credential_source": {
                "url": format!("{}/oidc?audience=https://iam.googleapis.com/x", self.url()),
                "headers": {"Authorization": format!("Bearer {}", creds::ACTIONS_REQUEST_TOKEN)},
                "format": {"type": "json", "subject_token_field_name": "value"}
            }
        });
        if impersonate {
            v["service_account_impersonation_url"] = json!(format!(
                "{}/iam/v1/projects/-/serviceAccounts/{}:generateAccessToken",
                self.url(),
                creds::SA_EMAIL
            ));
        }
        std::fs::write(&p, v.to_string()).unwrap();
        p
    }
}

impl ModelServer for MockCloud {
    fn runner_env(&self) -> Vec<(&'static str, String)> {
        match self.shared.cloud {
            Cloud::Bedrock => self.bedrock_env(),
            Cloud::Vertex => vec![
                ("ANTHROPIC_VERTEX_PROJECT_ID", "proj".into()),
                ("CLOUD_ML_REGION", "us-east5".into()),
                ("ANTHROPIC_VERTEX_BASE_URL", self.url()),
                ("GCE_METADATA_HOST", self.addr.to_string()),
            ],
        }
    }
}

impl Drop for MockCloud {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn is_model_route(path: &str) -> bool {
    path.ends_with("/invoke-model-with-response-stream") || path.ends_with(":streamRawPredict")
}

fn reply(status: u16, headers: &[(&str, &str)], body: impl Into<Body>) -> Response {
    let mut b = Response::builder().status(status);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(body.into()).unwrap()
}

async fn handle(shared: Arc<Shared>, addr: SocketAddr, req: Request) -> Response {
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = axum::body::to_bytes(req.into_body(), 16 << 20)
        .await
        .unwrap_or_default()
        .to_vec();
    let r = CloudRequest {
        method,
        path,
        headers,
        body,
    };
    shared.state.lock().unwrap().requests.push(r.clone());
    let url = format!("http://{addr}");
    if is_model_route(&r.path) {
        return model_route(&shared, &r, &query);
    }
    match (r.method.as_str(), r.path.as_str()) {
        ("POST", "/") => aws_sts(&shared, &r),
        ("PUT", "/latest/api/token") => reply(200, &[], "imds-session-token"),
        ("GET", p) if p.starts_with("/latest/meta-data/iam/security-credentials/") => {
            imds(&shared, &r)
        }
        ("POST", "/token") => google_jwt(&shared, &r, &url),
        ("POST", "/sts/v1/token") => google_sts(&shared, &r),
        ("POST", p) if p.ends_with(":generateAccessToken") => google_impersonate(&shared, &r),
        ("GET", "/oidc") => {
            if r.header("authorization")
                != Some(&format!("Bearer {}", creds::ACTIONS_REQUEST_TOKEN))
            {
                problem(&shared, "OIDC URL called without GitHub's request token");
                return reply(401, &[], "no");
            }
            reply(200, &[], json!({"value": creds::OIDC_TOKEN}).to_string())
        }
        ("GET", "/computeMetadata/v1/instance/service-accounts/default/token") => {
            if r.header("metadata-flavor") != Some("Google") {
                problem(&shared, "metadata server called without Metadata-Flavor");
                return reply(403, &[], "no");
            }
            issue(&shared, "ya29.metadata")
        }
        _ => {
            problem(&shared, &format!("unexpected {} {}", r.method, r.path));
            reply(404, &[], "no route")
        }
    }
}

fn problem(shared: &Shared, what: &str) {
    shared.state.lock().unwrap().problems.push(what.to_string());
}

fn issue(shared: &Shared, token: &str) -> Response {
    let mut st = shared.state.lock().unwrap();
    st.issued += 1;
    let token = format!("{token}.{}", st.issued);
    st.tokens.push(token.clone());
    reply(
        200,
        &[("content-type", "application/json")],
        json!({"access_token": token, "expires_in": shared.token_lifetime, "token_type": "Bearer"})
            .to_string(),
    )
}

fn aws_sts(shared: &Shared, r: &CloudRequest) -> Response {
    let f = r.form();
    let ok = f.get("Action").map(String::as_str) == Some("AssumeRoleWithWebIdentity")
        && f.get("RoleArn").map(String::as_str) == Some(creds::ROLE_ARN)
        && f.get("WebIdentityToken").map(String::as_str) == Some(creds::OIDC_TOKEN)
        && f.get("RoleSessionName").is_some_and(|s| !s.is_empty());
    if !ok {
        return reply(
            400,
            &[],
            "<ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>bad token</Message></Error></ErrorResponse>",
        );
    }
    shared.state.lock().unwrap().aws_keys.insert(
        "ASIASTS".into(),
        ("sts-secret".into(), Some("sts-session&token".into())),
    );
    let exp = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
    reply(
        200,
        &[("content-type", "text/xml")],
        format!(
            "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIASTS</AccessKeyId><SecretAccessKey>sts-secret</SecretAccessKey><SessionToken>sts-session&amp;token</SessionToken><Expiration>{exp}</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"
        ),
    )
}

fn imds(shared: &Shared, r: &CloudRequest) -> Response {
    if r.header("x-aws-ec2-metadata-token") != Some("imds-session-token") {
        problem(shared, "IMDS called without the IMDSv2 session token");
        return reply(401, &[], "");
    }
    if r.path.ends_with('/') {
        return reply(200, &[], "ci-instance-role\n");
    }
    shared.state.lock().unwrap().aws_keys.insert(
        "ASIAIMDS".into(),
        ("imds-secret".into(), Some("imds-session".into())),
    );
    let exp = (chrono::Utc::now() + chrono::Duration::hours(6)).to_rfc3339();
    reply(
        200,
        &[],
        json!({"Code":"Success","Type":"AWS-HMAC","AccessKeyId":"ASIAIMDS","SecretAccessKey":"imds-secret","Token":"imds-session","Expiration":exp}).to_string(),
    )
}

fn google_jwt(shared: &Shared, r: &CloudRequest, url: &str) -> Response {
    let f = r.form();
    if f.get("grant_type").map(String::as_str)
        != Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    {
        problem(shared, "token endpoint: wrong grant_type");
        return reply(400, &[], r#"{"error":"unsupported_grant_type"}"#);
    }
    let jwt = f.get("assertion").cloned().unwrap_or_default();
    let parts: Vec<&str> = jwt.split('.').collect();
    if parts.len() != 3 {
        problem(shared, "token endpoint: assertion is not a JWT");
        return reply(400, &[], r#"{"error":"invalid_grant"}"#);
    }
    let public = fixture_bytes("cloud/service_account_key.pub.der");
    let key = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        public,
    );
    let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap_or_default();
    let signed = format!("{}.{}", parts[0], parts[1]);
    if key.verify(signed.as_bytes(), &sig).is_err() {
        return reply(
            400,
            &[],
            r#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#,
        );
    }
    let header: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap_or_default())
            .unwrap_or_default();
    let claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap_or_default())
            .unwrap_or_default();
    let now = chrono::Utc::now().timestamp();
    let iat = claims["iat"].as_i64().unwrap_or(0);
    if header["alg"] != "RS256"
        || claims["iss"] != creds::SA_EMAIL
        || claims["aud"] != format!("{url}/token")
        || claims["scope"] != "https://www.googleapis.com/auth/cloud-platform"
        || (now - iat).abs() > 300
        || claims["exp"].as_i64() != Some(iat + 3600)
    {
        problem(
            shared,
            &format!("token endpoint: bad JWT {header} {claims}"),
        );
        return reply(400, &[], r#"{"error":"invalid_grant"}"#);
    }
    issue(shared, "ya29.sa")
}

fn google_sts(shared: &Shared, r: &CloudRequest) -> Response {
    let f = r.form();
    let get = |k: &str| f.get(k).map(String::as_str).unwrap_or("");
    if get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange"
        || get("audience") != creds::WIF_AUDIENCE
        || get("subject_token") != creds::OIDC_TOKEN
        || get("subject_token_type") != "urn:ietf:params:oauth:token-type:jwt"
        || get("requested_token_type") != "urn:ietf:params:oauth:token-type:access_token"
        || get("scope") != "https://www.googleapis.com/auth/cloud-platform"
    {
        problem(shared, &format!("STS: bad exchange {f:?}"));
        return reply(400, &[], r#"{"error":"invalid_request"}"#);
    }
    issue(shared, "federated")
}

fn google_impersonate(shared: &Shared, r: &CloudRequest) -> Response {
    let bearer = r.header("authorization").unwrap_or("").to_string();
    let known = {
        let st = shared.state.lock().unwrap();
        st.tokens
            .iter()
            .any(|t| bearer == format!("Bearer {t}") && t.starts_with("federated"))
    };
    let body = r.json();
    if !known || body["scope"][0] != "https://www.googleapis.com/auth/cloud-platform" {
        problem(
            shared,
            &format!("impersonation: bad request {bearer} {body}"),
        );
        return reply(401, &[], "{}");
    }
    let mut st = shared.state.lock().unwrap();
    st.issued += 1;
    let token = format!("ya29.impersonated.{}", st.issued);
    st.tokens.push(token.clone());
    let exp = (chrono::Utc::now() + chrono::Duration::seconds(shared.token_lifetime as i64))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    reply(
        200,
        &[],
        json!({"accessToken": token, "expireTime": exp}).to_string(),
    )
}

/// URI-encode as SigV4 does (unreserved kept; `/` kept when `keep_slash`).
fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let k = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    ring::hmac::sign(&k, data.as_bytes()).as_ref().to_vec()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Check the request's SigV4 signature; `Err` says what is wrong.
fn verify_sigv4(shared: &Shared, r: &CloudRequest, query: &str) -> Result<(), String> {
    let auth = r.header("authorization").ok_or("no authorization header")?;
    let rest = auth
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("not AWS4-HMAC-SHA256")?;
    let mut fields = BTreeMap::new();
    for part in rest.split(", ") {
        let (k, v) = part.split_once('=').ok_or("bad authorization field")?;
        fields.insert(k.trim(), v.trim());
    }
    let credential = fields.get("Credential").ok_or("no Credential")?;
    let signed_headers = fields.get("SignedHeaders").ok_or("no SignedHeaders")?;
    let signature = fields.get("Signature").ok_or("no Signature")?;
    let scope: Vec<&str> = credential.split('/').collect();
    let [key_id, date, region, service, term] = scope[..] else {
        return Err(format!("bad credential scope {credential}"));
    };
    if region != "us-east-1" || service != "bedrock" || term != "aws4_request" {
        return Err(format!("wrong scope {credential}"));
    }
    let (secret, token) = shared
        .state
        .lock()
        .unwrap()
        .aws_keys
        .get(key_id)
        .cloned()
        .ok_or_else(|| format!("unknown access key {key_id}"))?;
    if let Some(t) = token
        && r.header("x-amz-security-token") != Some(t.as_str())
    {
        return Err("missing or wrong x-amz-security-token".into());
    }
    let amz_date = r.header("x-amz-date").ok_or("no x-amz-date")?;
    if !amz_date.starts_with(date) {
        return Err("x-amz-date does not match the scope date".into());
    }
    let when = chrono::NaiveDateTime::parse_from_str(amz_date, "%Y%m%dT%H%M%SZ")
        .map_err(|e| format!("x-amz-date: {e}"))?;
    if (chrono::Utc::now().naive_utc() - when).num_seconds().abs() > 300 {
        return Err("x-amz-date too far from now".into());
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    for required in ["host", "x-amz-date"] {
        if !names.contains(&required) {
            return Err(format!("{required} not signed"));
        }
    }
    let mut canonical_headers = String::new();
    for n in &names {
        let v = r
            .header(n)
            .ok_or_else(|| format!("signed header {n} missing"))?;
        canonical_headers.push_str(&format!(
            "{n}:{}\n",
            v.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    // Services other than S3 encode the path again (each `%` of the sent path as `%25`).
    let canonical_uri = uri_encode(&r.path, true);
    let canonical = format!(
        "POST\n{canonical_uri}\n{query}\n{canonical_headers}\n{signed_headers}\n{}",
        hex(&Sha256::digest(&r.body))
    );
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{date}/{region}/{service}/aws4_request\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let k = hmac(format!("AWS4{secret}").as_bytes(), date);
    let k = hmac(&k, region);
    let k = hmac(&k, service);
    let k = hmac(&k, "aws4_request");
    let expected = hex(&hmac(&k, &to_sign));
    if expected != *signature {
        return Err(format!(
            "signature mismatch; canonical request was:\n{canonical}"
        ));
    }
    Ok(())
}

fn model_route(shared: &Shared, r: &CloudRequest, query: &str) -> Response {
    match shared.cloud {
        Cloud::Bedrock => {
            if let Err(e) = verify_sigv4(shared, r, query) {
                eprintln!("fake bedrock: {e}");
                shared.state.lock().unwrap().signature_failures += 1;
                return reply(
                    403,
                    &[("x-amzn-errortype", "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/")],
                    json!({"message": "The request signature we calculated does not match the signature you provided."}).to_string(),
                );
            }
        }
        Cloud::Vertex => {
            let bearer = r.header("authorization").unwrap_or("");
            let ok = {
                let st = shared.state.lock().unwrap();
                st.tokens.iter().any(|t| bearer == format!("Bearer {t}"))
            };
            if !ok {
                return reply(
                    401,
                    &[("content-type", "application/json")],
                    json!({"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}).to_string(),
                );
            }
        }
    }
    let turn = {
        let mut st = shared.state.lock().unwrap();
        let n = st.model_served;
        st.model_served += 1;
        shared.script.get(n).cloned()
    };
    let Some(turn) = turn else {
        problem(shared, "model route: beyond the script");
        return reply(500, &[], "beyond the script");
    };
    let (events, tail) = match turn {
        CloudTurn::Error(status, kind, message) => {
            return match shared.cloud {
                Cloud::Bedrock => reply(
                    status,
                    &[
                        (
                            "x-amzn-errortype",
                            &format!("{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"),
                        ),
                        ("x-amzn-requestid", "aws-req-err"),
                        ("content-type", "application/json"),
                    ],
                    json!({"message": message}).to_string(),
                ),
                Cloud::Vertex => reply(
                    status,
                    &[("content-type", "application/json")],
                    json!({"error":{"code":status,"message":message,"status":kind}}).to_string(),
                ),
            };
        }
        CloudTurn::Events(e) => (e, None),
        CloudTurn::EventsThenError(e, t, m) => {
            (e, Some(Frame::Data(error_frame(shared.cloud, t, m))))
        }
        CloudTurn::EventsThenDrop(e) => (e, Some(Frame::Abort)),
        CloudTurn::EventsThenStall(e, d) => (e, Some(Frame::Sleep(d))),
    };
    let mut frames: Vec<Frame> = Vec::new();
    for ev in &events {
        let bytes = match shared.cloud {
            Cloud::Bedrock => chunk_frame(ev),
            Cloud::Vertex => Bytes::from(ev.render()),
        };
        // Split every frame in two writes, so the decoder sees partial frames.
        let mid = bytes.len() / 2;
        frames.push(Frame::Data(bytes.slice(..mid)));
        frames.push(Frame::Data(bytes.slice(mid..)));
    }
    if let Some(tail) = tail {
        // Let the events reach the client before the fault (an abort could otherwise
        // close the connection before the response headers are written).
        frames.push(Frame::Sleep(Duration::from_millis(50)));
        frames.push(tail);
    }
    let content_type = match shared.cloud {
        Cloud::Bedrock => "application/vnd.amazon.eventstream",
        Cloud::Vertex => "text/event-stream",
    };
    reply(
        200,
        &[
            ("content-type", content_type),
            ("x-amzn-requestid", "aws-req-1"),
        ],
        body_stream(frames),
    )
}

fn encode(msg: &Message) -> Bytes {
    let mut out = Vec::new();
    aws_smithy_eventstream::frame::write_message_to(msg, &mut out).unwrap();
    Bytes::from(out)
}

fn string_header(name: &str, value: &str) -> Header {
    Header::new(
        name.to_string(),
        HeaderValue::String(value.to_string().into()),
    )
}

/// One Anthropic event as a Bedrock `chunk` frame.
fn chunk_frame(ev: &SseEvent) -> Bytes {
    let payload = json!({"bytes": STANDARD.encode(ev.data.as_bytes()), "p": "abcd"}).to_string();
    encode(
        &Message::new(Bytes::from(payload))
            .add_header(string_header(":message-type", "event"))
            .add_header(string_header(":event-type", "chunk"))
            .add_header(string_header(":content-type", "application/json")),
    )
}

fn error_frame(cloud: Cloud, kind: &str, message: &str) -> Bytes {
    match cloud {
        Cloud::Bedrock => encode(
            &Message::new(Bytes::from(json!({"message": message}).to_string()))
                .add_header(string_header(":message-type", "exception"))
                .add_header(string_header(":exception-type", kind))
                .add_header(string_header(":content-type", "application/json")),
        ),
        Cloud::Vertex => Bytes::from(
            SseEvent::new(
                "error",
                &json!({"type":"error","error":{"type":kind,"message":message}}),
            )
            .render(),
        ),
    }
}
