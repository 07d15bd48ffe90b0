//! The Bedrock and Vertex AI providers against the fake cloud (`mock_cloud` of
//! runner-test-support): the request each sends (SigV4-signed event-stream call,
//! bearer-token SSE call), every credential source (static keys, web identity via STS,
//! profile, IMDSv2; service-account JWT, workload
//! identity federation with and without impersonation, metadata server), token caching, and
//! the faults the Anthropic provider's tests cover (HTTP errors, mid-stream exceptions,
//! dropped and stalled streams) with their retry classes; then whole runs of the binary:
//! retries, cost, recording and replaying a cassette.

use std::time::Duration;

use futures_util::StreamExt;
use runner::model::assembler::Assembler;
use runner::model::bedrock::{BedrockConfig, BedrockProvider};
use runner::model::retry::{Class, classify, overloaded};
use runner::model::vertex::{VertexConfig, VertexProvider};
use runner::model::{
    ContentBlock, Message, ModelCall, ModelRequest, ModelResponse, Provider, ProviderError,
    StopReason, ToolSpec,
};
use serde_json::json;

use crate::support::mock_cloud::creds;
use crate::support::*;

fn request() -> ModelRequest {
    ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: "You are a CI agent.".into(),
        messages: vec![Message::user_text("read a.txt")],
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type":"object"}),
        }]
        .into(),
        max_tokens: 4096,
        thinking: None,
    }
}

async fn drain(call: ModelCall) -> Result<ModelResponse, ProviderError> {
    let mut events = call.events;
    let mut asm = Assembler::new();
    while let Some(ev) = events.next().await {
        asm.push(ev?)?;
    }
    asm.finish(call.meta.request_id)
}

async fn attempt(p: &dyn Provider) -> Result<ModelResponse, ProviderError> {
    drain(p.stream(&request()).await?).await
}

fn lookup(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
    move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
}

fn bedrock(env: Vec<(&'static str, String)>) -> BedrockProvider {
    let mut env = env;
    env.push(("HOME", "/nonexistent".into()));
    env.push(("RUNNER_STREAM_IDLE_TIMEOUT_MS", "1500".into()));
    BedrockProvider::new(BedrockConfig::from_lookup(lookup(env)).unwrap()).unwrap()
}

fn vertex(mock: &MockCloud, env: Vec<(&'static str, String)>) -> VertexProvider {
    let mut all = mock.runner_env();
    all.extend(env);
    all.push(("HOME", "/nonexistent".into()));
    all.push(("RUNNER_STREAM_IDLE_TIMEOUT_MS", "1500".into()));
    VertexProvider::new(VertexConfig::from_lookup(lookup(all)).unwrap()).unwrap()
}

fn text_events(text: &str) -> Vec<SseEvent> {
    Resp::new().text(text).usage(12, 5).build()
}

fn tool_events() -> Vec<SseEvent> {
    Resp::new()
        .text("Reading.")
        .tool_use("toolu_1", "Read", json!({"file_path": "a.txt"}))
        .build()
}

fn start(cloud: Cloud, script: Vec<CloudTurn>) -> MockCloud {
    MockCloud::start(cloud, script)
}

fn retryable(e: &ProviderError) -> bool {
    matches!(classify(e), Class::Retryable { .. })
}

// ---- Bedrock ----

#[tokio::test]
async fn bedrock_streams_a_signed_request_and_assembles_the_events() {
    let mock = start(Cloud::Bedrock, vec![CloudTurn::Events(tool_events())]);
    let p = bedrock(mock.bedrock_env());
    let r = attempt(&p).await.unwrap();
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(r.request_id.as_deref(), Some("aws-req-1"));
    assert_eq!(
        r.content[1],
        ContentBlock::ToolUse {
            id: "toolu_1".into(),
            name: "Read".into(),
            input: json!({"file_path": "a.txt"}),
        }
    );
    let reqs = mock.model_requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(
        req.path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-model-with-response-stream"
    );
    assert_eq!(
        req.header("accept"),
        Some("application/vnd.amazon.eventstream")
    );
    assert_eq!(req.header("content-type"), Some("application/json"));
    let body = req.json();
    assert_eq!(body["anthropic_version"], "bedrock-2023-05-31");
    assert!(
        body.get("model").is_none() && body.get("stream").is_none(),
        "{body}"
    );
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["tools"][0]["name"], "Read");
    assert_eq!(body["messages"][0]["content"][0]["text"], "read a.txt");
    assert_eq!(mock.signature_failures(), 0);
    mock.assert_clean();
}

#[tokio::test]
async fn bedrock_signature_with_the_wrong_secret_is_rejected_and_not_retried() {
    let mock = start(Cloud::Bedrock, vec![CloudTurn::Events(text_events("x"))]);
    let mut env = mock.bedrock_env();
    env.retain(|(k, _)| *k != "AWS_SECRET_ACCESS_KEY");
    env.push(("AWS_SECRET_ACCESS_KEY", "not-the-secret".into()));
    let e = attempt(&bedrock(env)).await.unwrap_err();
    assert_eq!(mock.signature_failures(), 1);
    match &e {
        ProviderError::Http {
            status: 403,
            error_type,
            message,
            ..
        } => {
            assert_eq!(error_type.as_deref(), Some("InvalidSignatureException"));
            assert!(message.contains("check the AWS credentials"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(classify(&e), Class::Fatal(_)));
}

#[tokio::test]
async fn bedrock_http_errors_have_the_anthropic_error_classes() {
    let mock = start(
        Cloud::Bedrock,
        vec![
            CloudTurn::Error(
                429,
                "ThrottlingException",
                "Too many requests, please wait.",
            ),
            CloudTurn::Error(
                503,
                "ServiceUnavailableException",
                "Bedrock is unable to process your request.",
            ),
            CloudTurn::Error(400, "ValidationException", "messages: field required"),
            CloudTurn::Error(
                400,
                "ValidationException",
                "prompt is too long: 210000 tokens > 200000 maximum",
            ),
            CloudTurn::Error(
                403,
                "AccessDeniedException",
                "You don't have access to the model.",
            ),
            CloudTurn::Error(500, "InternalServerException", "internal"),
        ],
    );
    let p = bedrock(mock.bedrock_env());
    let throttled = attempt(&p).await.unwrap_err();
    assert!(retryable(&throttled), "{throttled:?}");
    assert!(
        matches!(&throttled, ProviderError::Http { request_id: Some(r), .. } if r == "aws-req-err")
    );
    let unavailable = attempt(&p).await.unwrap_err();
    assert!(
        retryable(&unavailable) && overloaded(&unavailable),
        "{unavailable:?}"
    );
    let invalid = attempt(&p).await.unwrap_err();
    match classify(&invalid) {
        Class::Fatal(m) => assert!(
            m.contains("ValidationException: messages: field required"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    let too_long = attempt(&p).await.unwrap_err();
    assert!(runner::model::retry::context_exhausted(&too_long));
    let denied = attempt(&p).await.unwrap_err();
    match classify(&denied) {
        Class::Fatal(m) => assert!(m.contains("bedrock:InvokeModelWithResponseStream"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(retryable(&attempt(&p).await.unwrap_err()));
    mock.assert_clean();
}

#[tokio::test]
async fn bedrock_mid_stream_faults() {
    let partial = || Resp::new().text("partial").build()[..3].to_vec();
    let mock = start(
        Cloud::Bedrock,
        vec![
            CloudTurn::EventsThenError(
                partial(),
                "modelStreamErrorException",
                "The model stream failed",
            ),
            CloudTurn::EventsThenError(partial(), "throttlingException", "slow down"),
            CloudTurn::EventsThenError(partial(), "validationException", "bad"),
            CloudTurn::EventsThenDrop(partial()),
            CloudTurn::EventsThenStall(partial(), Duration::from_secs(5)),
            CloudTurn::Events(partial()),
        ],
    );
    let p = bedrock(mock.bedrock_env());
    let e = attempt(&p).await.unwrap_err();
    assert!(
        matches!(&e, ProviderError::StreamError { error_type, .. } if error_type == "modelStreamErrorException"),
        "{e:?}"
    );
    assert!(retryable(&e));
    assert!(retryable(&attempt(&p).await.unwrap_err()));
    assert!(matches!(
        classify(&attempt(&p).await.unwrap_err()),
        Class::Fatal(_)
    ));
    let dropped = attempt(&p).await.unwrap_err();
    assert!(
        matches!(
            dropped,
            ProviderError::Transport {
                before_response: false,
                ..
            } | ProviderError::Incomplete { .. }
        ),
        "{dropped:?}"
    );
    assert!(retryable(&dropped));
    assert!(matches!(
        attempt(&p).await.unwrap_err(),
        ProviderError::Stalled(_)
    ));
    assert!(matches!(
        attempt(&p).await.unwrap_err(),
        ProviderError::Incomplete { after_bytes: true }
    ));
}

#[tokio::test]
async fn bedrock_web_identity_credentials_come_from_sts_and_are_cached() {
    let mock = start(
        Cloud::Bedrock,
        vec![
            CloudTurn::Events(text_events("one")),
            CloudTurn::Events(text_events("two")),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{}\n", creds::OIDC_TOKEN)).unwrap();
    let p = bedrock(vec![
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", mock.url()),
        ("AWS_ENDPOINT_URL_STS", mock.url()),
        (
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            token_file.display().to_string(),
        ),
        ("AWS_ROLE_ARN", creds::ROLE_ARN.into()),
    ]);
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("one")
    );
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("two")
    );
    assert_eq!(
        mock.requests_to("/")
            .iter()
            .filter(|r| r.path == "/")
            .count(),
        1
    );
    let m = mock.model_requests();
    assert!(
        m.iter()
            .all(|r| r.header("x-amz-security-token") == Some("sts-session&token"))
    );
    assert!(
        m[0].header("authorization")
            .unwrap()
            .contains("Credential=ASIASTS/")
    );
    assert_eq!(mock.signature_failures(), 0);
    mock.assert_clean();
    // A token STS rejects is a configuration error, not retried.
    std::fs::write(&token_file, "stale").unwrap();
    let p = bedrock(vec![
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ENDPOINT_URL", mock.url()),
        (
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            token_file.display().to_string(),
        ),
        ("AWS_ROLE_ARN", creds::ROLE_ARN.into()),
    ]);
    let e = attempt(&p).await.unwrap_err();
    assert!(
        matches!(&e, ProviderError::Config(m) if m.contains("InvalidIdentityToken")),
        "{e:?}"
    );
}

#[tokio::test]
async fn bedrock_profile_and_instance_metadata_credentials() {
    let mock = start(
        Cloud::Bedrock,
        vec![
            CloudTurn::Events(text_events("profile")),
            CloudTurn::Events(text_events("imds")),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let creds_file = dir.path().join("credentials");
    std::fs::write(
        &creds_file,
        format!(
            "[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n[ci]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            creds::AWS_KEY_ID,
            creds::AWS_SECRET
        ),
    )
    .unwrap();
    let config_file = dir.path().join("config");
    std::fs::write(&config_file, "[profile ci]\nregion = us-east-1\n").unwrap();
    let p = bedrock(vec![
        ("AWS_PROFILE", "ci".into()),
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            creds_file.display().to_string(),
        ),
        ("AWS_CONFIG_FILE", config_file.display().to_string()),
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", mock.url()),
    ]);
    assert_eq!(p.config().region, "us-east-1");
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("profile")
    );
    let p = bedrock(vec![
        ("AWS_DEFAULT_REGION", "us-east-1".into()),
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", mock.url()),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", mock.url()),
    ]);
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("imds")
    );
    assert_eq!(mock.requests_to("/latest/api/token").len(), 1);
    assert_eq!(mock.requests_to("/latest/api/token")[0].method, "PUT");
    assert_eq!(mock.signature_failures(), 0);
    mock.assert_clean();
}

// ---- Vertex AI ----

#[tokio::test]
async fn vertex_service_account_token_streams_and_is_cached() {
    let mock = start(
        Cloud::Vertex,
        vec![
            CloudTurn::Events(tool_events()),
            CloudTurn::Events(text_events("again")),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let sa = mock.service_account_file(dir.path());
    let p = vertex(
        &mock,
        vec![("GOOGLE_APPLICATION_CREDENTIALS", sa.display().to_string())],
    );
    let r = attempt(&p).await.unwrap();
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(r.content[0], ContentBlock::text("Reading."));
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("again")
    );
    assert_eq!(mock.tokens_issued(), 1, "the token is cached");
    let reqs = mock.model_requests();
    assert_eq!(
        reqs[0].path,
        "/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
    );
    assert_eq!(reqs[0].header("authorization"), Some("Bearer ya29.sa.1"));
    let body = reqs[0].json();
    assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
    assert_eq!(body["stream"], true);
    assert!(body.get("model").is_none(), "{body}");
    assert_eq!(body["system"][0]["text"], "You are a CI agent.");
    mock.assert_clean();
}

#[tokio::test]
async fn vertex_tokens_near_expiry_are_fetched_again_and_a_401_drops_the_token() {
    // Tokens living 200 s are inside the five-minute refresh margin: each call gets a new one.
    let mock = MockCloud::start_with(
        Cloud::Vertex,
        vec![
            CloudTurn::Events(text_events("a")),
            CloudTurn::Events(text_events("b")),
        ],
        200,
    );
    let dir = tempfile::tempdir().unwrap();
    let sa = mock.service_account_file(dir.path());
    let p = vertex(
        &mock,
        vec![("GOOGLE_APPLICATION_CREDENTIALS", sa.display().to_string())],
    );
    attempt(&p).await.unwrap();
    attempt(&p).await.unwrap();
    assert_eq!(mock.tokens_issued(), 2);
    let reqs = mock.model_requests();
    assert_eq!(reqs[1].header("authorization"), Some("Bearer ya29.sa.2"));

    // A token the API rejects (401) is dropped: the next attempt fetches a new one (here from
    // the metadata server).
    let mock = start(
        Cloud::Vertex,
        vec![
            CloudTurn::Events(text_events("ok")),
            CloudTurn::Events(text_events("renewed")),
        ],
    );
    let p = vertex(&mock, vec![]);
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("ok")
    );
    mock.revoke_tokens();
    let e = attempt(&p).await.unwrap_err();
    assert!(
        matches!(e, ProviderError::Http { status: 401, .. }),
        "{e:?}"
    );
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("renewed")
    );
    assert_eq!(mock.requests_to("/computeMetadata/").len(), 2);
    mock.assert_clean();
}

#[tokio::test]
async fn vertex_workload_identity_federation_with_and_without_impersonation() {
    let mock = start(
        Cloud::Vertex,
        vec![
            CloudTurn::Events(text_events("wif")),
            CloudTurn::Events(text_events("direct")),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let f = mock.external_account_file(dir.path(), true);
    let p = vertex(
        &mock,
        vec![("GOOGLE_APPLICATION_CREDENTIALS", f.display().to_string())],
    );
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("wif")
    );
    let auth = mock.model_requests()[0]
        .header("authorization")
        .unwrap()
        .to_string();
    assert!(auth.starts_with("Bearer ya29.impersonated."), "{auth}");
    assert_eq!(mock.requests_to("/oidc").len(), 1);
    assert_eq!(mock.requests_to("/sts/v1/token").len(), 1);

    let d2 = tempfile::tempdir().unwrap();
    let f = mock.external_account_file(d2.path(), false);
    let p = vertex(
        &mock,
        vec![("GOOGLE_APPLICATION_CREDENTIALS", f.display().to_string())],
    );
    assert_eq!(
        attempt(&p).await.unwrap().content[0],
        ContentBlock::text("direct")
    );
    let auth = mock.model_requests()[1]
        .header("authorization")
        .unwrap()
        .to_string();
    assert!(auth.starts_with("Bearer federated."), "{auth}");
    mock.assert_clean();
}

#[tokio::test]
async fn vertex_errors_and_mid_stream_faults() {
    let partial = || Resp::new().text("partial").build()[..3].to_vec();
    let mock = start(
        Cloud::Vertex,
        vec![
            CloudTurn::Error(
                429,
                "RESOURCE_EXHAUSTED",
                "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model",
            ),
            CloudTurn::Error(503, "UNAVAILABLE", "The service is currently unavailable."),
            CloudTurn::Error(400, "INVALID_ARGUMENT", "max_tokens: must be positive"),
            CloudTurn::Error(404, "NOT_FOUND", "Publisher Model was not found"),
            CloudTurn::EventsThenError(partial(), "overloaded_error", "Overloaded"),
            CloudTurn::EventsThenDrop(partial()),
            CloudTurn::EventsThenStall(partial(), Duration::from_secs(5)),
        ],
    );
    let p = vertex(&mock, vec![]);
    let quota = attempt(&p).await.unwrap_err();
    assert!(
        matches!(&quota, ProviderError::Http { status: 429, error_type: Some(t), .. } if t == "RESOURCE_EXHAUSTED")
    );
    assert!(retryable(&quota), "{quota:?}");
    assert!(retryable(&attempt(&p).await.unwrap_err()));
    match classify(&attempt(&p).await.unwrap_err()) {
        Class::Fatal(m) => assert!(m.contains("INVALID_ARGUMENT: max_tokens"), "{m}"),
        other => panic!("{other:?}"),
    }
    match classify(&attempt(&p).await.unwrap_err()) {
        Class::Fatal(m) => assert!(m.contains("Model Garden"), "{m}"),
        other => panic!("{other:?}"),
    }
    let over = attempt(&p).await.unwrap_err();
    assert!(retryable(&over) && overloaded(&over), "{over:?}");
    assert!(retryable(&attempt(&p).await.unwrap_err()));
    assert!(matches!(
        attempt(&p).await.unwrap_err(),
        ProviderError::Stalled(_)
    ));
    mock.assert_clean();
}

// ---- Whole runs ----

const FAST_RETRY: &str = "retry:\n  base_delay: 1ms\n  max_delay: 5ms\n";

fn run_spec(
    mock: &MockCloud,
    repo: &TestRepo,
    provider: &str,
    extra_env: &[(&str, String)],
    args: &[&str],
) -> Run {
    let spec = write_spec(
        repo.path(),
        &format!(
            "name: t1\nprompt: \"say done\"\nprovider: {provider}\nmodel: claude-sonnet-4-5\n{FAST_RETRY}"
        ),
    );
    let mut r = exec_in(mock, repo)
        .arg(&spec)
        .json()
        .env_remove("ANTHROPIC_API_KEY");
    for (k, v) in extra_env {
        r = r.env(k, v);
    }
    r.args(args).run()
}

#[test]
fn bedrock_run_retries_throttling_and_stream_exceptions_records_and_replays() {
    let mock = start(
        Cloud::Bedrock,
        vec![
            CloudTurn::Error(429, "ThrottlingException", "Too many requests"),
            CloudTurn::EventsThenError(
                Resp::new().text("x").build()[..2].to_vec(),
                "modelStreamErrorException",
                "stream failed",
            ),
            CloudTurn::Events(text_events("done")),
        ],
    );
    let repo = TestRepo::new();
    let cassette = repo.path().join("bedrock.cassette.jsonl");
    let run = run_spec(
        &mock,
        &repo,
        "bedrock",
        &[],
        &["--record", cassette.to_str().unwrap()],
    );
    run.expect_code(0);
    let result = run.result();
    assert_eq!(result["result"], "done", "{result}");
    assert_eq!(mock.model_requests().len(), 3);
    assert_eq!(mock.signature_failures(), 0);
    // Priced from the model table: 12 input and 5 output tokens of Sonnet 4.5.
    let cost = result["total_cost_usd"].as_f64().unwrap();
    assert!(
        (cost - (12.0 * 3.0 + 5.0 * 15.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    // The AWS secret never reaches the transcript or the cassette.
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(text.contains("done") && !text.contains(creds::AWS_SECRET));
    // The cassette replays offline.
    let spec = write_spec(
        repo.path(),
        "name: t1\nprompt: \"say done\"\nmodel: claude-sonnet-4-5\n",
    );
    let replay = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "--replay", cassette.to_str().unwrap()])
        .arg(&spec)
        .json()
        .run();
    replay.expect_code(0);
    assert_eq!(replay.result()["result"], "done");
    mock.assert_clean();
}

#[test]
fn vertex_run_with_workload_identity_retries_quota_and_overload() {
    let mock = start(
        Cloud::Vertex,
        vec![
            CloudTurn::Error(429, "RESOURCE_EXHAUSTED", "Quota exceeded"),
            CloudTurn::EventsThenError(
                Resp::new().text("x").build()[..2].to_vec(),
                "overloaded_error",
                "Overloaded",
            ),
            CloudTurn::Events(text_events("done")),
        ],
    );
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().unwrap();
    let f = mock.external_account_file(dir.path(), true);
    let run = run_spec(
        &mock,
        &repo,
        "vertex",
        &[("GOOGLE_APPLICATION_CREDENTIALS", f.display().to_string())],
        &[],
    );
    run.expect_code(0);
    assert_eq!(run.result()["result"], "done");
    assert_eq!(mock.model_requests().len(), 3);
    // One token for the whole run.
    assert_eq!(mock.requests_to("/sts/v1/token").len(), 1);
    mock.assert_clean();
}

#[test]
fn missing_region_or_project_stops_before_any_request() {
    let mock = start(Cloud::Bedrock, vec![]);
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), "name: t1\nprompt: hi\nprovider: bedrock\n");
    let run = Runner::new()
        .current_dir(repo.path())
        .env("HOME", repo.path())
        .args(["exec"])
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(run.stderr.contains("AWS_REGION"), "{}", run.stderr);
    let spec = write_spec(repo.path(), "name: t1\nprompt: hi\nprovider: vertex\n");
    let run = Runner::new()
        .current_dir(repo.path())
        .env("HOME", repo.path())
        .args(["exec"])
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("ANTHROPIC_VERTEX_PROJECT_ID"),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
}

#[test]
fn an_sso_profile_stops_before_any_request_with_the_export_command() {
    let mock = start(Cloud::Bedrock, vec![]);
    let repo = TestRepo::new();
    let config = repo.path().join("aws-config");
    std::fs::write(
        &config,
        "[profile corp]\nregion = eu-west-1\nsso_session = corp\nsso_account_id = 1\n",
    )
    .unwrap();
    let spec = write_spec(repo.path(), "name: t1\nprompt: hi\nprovider: bedrock\n");
    let run = Runner::new()
        .current_dir(repo.path())
        .env("HOME", repo.path())
        .env("AWS_CONFIG_FILE", &config)
        .env("AWS_PROFILE", "corp")
        .args(["exec"])
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("SSO")
            && run
                .stderr
                .contains("aws configure export-credentials --profile corp"),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
}

#[test]
fn runner_init_for_bedrock_writes_a_spec_that_runs_and_an_oidc_workflow() {
    let mock = start(Cloud::Bedrock, vec![CloudTurn::Events(text_events("done"))]);
    let repo = TestRepo::new();
    let init = Runner::new()
        .current_dir(repo.path())
        .args(["init", "triage", "--workflow", "--provider", "bedrock"])
        .run();
    init.expect_code(0);
    assert!(
        init.stderr.contains("needs AWS credentials and AWS_REGION"),
        "{}",
        init.stderr
    );
    let spec = repo.read("tasks/triage.yaml");
    assert!(spec.contains("\nprovider: bedrock "), "{spec}");
    let wf: serde_json::Value =
        yaml_serde::from_str(&repo.read(".github/workflows/runner.yml")).unwrap();
    assert_eq!(wf["permissions"]["id-token"], "write");
    let steps = wf["jobs"]["tasks"]["steps"].as_array().unwrap();
    let aws = steps
        .iter()
        .position(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("aws-actions/configure-aws-credentials@"))
        })
        .expect("a configure-aws-credentials step");
    let run_step = steps.iter().position(|s| s["id"] == "runner").unwrap();
    assert!(aws < run_step);
    assert_eq!(
        steps[aws]["with"]["role-to-assume"],
        "${{ vars.AWS_ROLE_ARN }}"
    );
    assert!(steps[run_step]["env"]["ANTHROPIC_API_KEY"].is_null());
    // The spec runs as written against Bedrock, with no Anthropic key.
    let run = exec_in(&mock, &repo)
        .arg("tasks/triage.yaml")
        .json()
        .env_remove("ANTHROPIC_API_KEY")
        .run();
    run.expect_code(0);
    assert_eq!(run.result()["result"], "done");
    assert_eq!(mock.model_requests().len(), 1);
    assert_eq!(mock.signature_failures(), 0);
    mock.assert_clean();
}

#[test]
fn runner_init_for_vertex_writes_a_workload_identity_workflow() {
    let repo = TestRepo::new();
    let init = Runner::new()
        .current_dir(repo.path())
        .args(["init", "review", "--workflow", "--provider", "vertex"])
        .run();
    init.expect_code(0);
    let spec = repo.read("tasks/review.yaml");
    assert!(spec.contains("\nprovider: vertex "), "{spec}");
    assert!(spec.contains("needs Google credentials"), "{spec}");
    let wf: serde_json::Value =
        yaml_serde::from_str(&repo.read(".github/workflows/runner.yml")).unwrap();
    assert_eq!(wf["permissions"]["id-token"], "write");
    let steps = wf["jobs"]["tasks"]["steps"].as_array().unwrap();
    let auth = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("google-github-actions/auth@"))
        })
        .expect("a google-github-actions/auth step");
    assert_eq!(
        auth["with"]["workload_identity_provider"],
        "${{ vars.GCP_WORKLOAD_IDENTITY_PROVIDER }}"
    );
    let run_step = steps.iter().find(|s| s["id"] == "runner").unwrap();
    assert_eq!(
        run_step["env"]["ANTHROPIC_VERTEX_PROJECT_ID"],
        "${{ vars.GCP_PROJECT }}"
    );
    let v = Runner::new()
        .current_dir(repo.path())
        .args(["validate", "tasks/review.yaml"])
        .run();
    assert_eq!(v.code, Some(0), "{}", v.stderr);
}

#[test]
fn provider_flag_moves_specs_written_for_other_apis_onto_bedrock() {
    let mock = start(
        Cloud::Bedrock,
        vec![
            CloudTurn::Events(text_events("one")),
            CloudTurn::Events(text_events("two")),
        ],
    );
    let repo = TestRepo::new();
    let anthropic = write_spec(
        repo.path(),
        "name: t1\nprompt: \"say one\"\nmodel: claude-sonnet-4-5\n",
    );
    let openai = repo.path().join("t2.yaml");
    std::fs::write(
        &openai,
        "name: t2\nprompt: \"say two\"\nprovider: openai\nmodel: claude-haiku-4-5\nopenai:\n  base_url: http://127.0.0.1:9/v1\n",
    )
    .unwrap();
    let run = exec_in(&mock, &repo)
        .args(["--provider", "bedrock"])
        .arg(&anthropic)
        .arg(&openai)
        .json()
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .run();
    run.expect_code(0);
    let results = run.json();
    let texts: Vec<_> = results
        .iter()
        .map(|r| r["result"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, ["one", "two"]);
    let paths: Vec<String> = mock
        .model_requests()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(
        paths.iter().any(|p| p.contains("claude-haiku-4-5")),
        "{paths:?}"
    );
    assert_eq!(mock.signature_failures(), 0);
    mock.assert_clean();
}
