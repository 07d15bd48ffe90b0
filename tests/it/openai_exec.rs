//! End-to-end: the real binary with `provider: openai` against the mock Chat Completions server.

use crate::support::*;
use serde_json::{Value, json};

fn spec_text(prompt: &str, extra: &str) -> String {
    format!("name: oa\nprompt: {prompt:?}\nprovider: openai\nmodel: gpt-4o-mini\n{extra}")
}

#[test]
fn text_answer() {
    let mock = MockOpenai::start(vec![
        OaResp::new()
            .text("Hello from the mock.")
            .usage(Some((120, 7)))
            .turn(),
    ]);
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &spec_text("say hi", ""));
    let out = Runner::against(&mock)
        // Not needed for openai: the check asks for the provider's own key only.
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json"])
        .arg(&spec)
        .run();
    out.expect_code(0);
    let r = out.result();
    assert_eq!(r["result"], "Hello from the mock.", "{r}");
    assert_eq!(r["usage"]["input_tokens"], 120, "{r}");
    assert_eq!(r["usage"]["output_tokens"], 7, "{r}");
    let req = mock.request(0);
    assert_eq!(req.body["model"], "gpt-4o-mini");
    let msgs = req.oa_messages();
    assert_eq!(msgs[0]["role"], "system");
    assert!(
        msgs[0]["content"]
            .as_str()
            .unwrap()
            .contains("No human is watching")
    );
    assert_eq!(msgs[1], json!({"role": "user", "content": "say hi"}));
    assert!(req.oa_tool_names().contains(&"Read".to_string()));
    assert_eq!(
        req.body["max_tokens"],
        json!(32000),
        "non-OpenAI host: max_tokens"
    );
    mock.assert_clean();
}

#[test]
fn tool_call_round_trip() {
    let repo = TestRepo::new();
    let file = repo.write("notes.txt", "alpha\nbeta\n");
    let mock = MockOpenai::start(vec![
        OaResp::new()
            .text("Reading it.")
            .tool_call("call_read_1", "Read", json!({"file_path": file}))
            .turn(),
        oa_text_turn("It says alpha and beta."),
    ]);
    let spec = write_spec(repo.path(), &spec_text("read notes.txt", ""));
    let out = exec_in(&mock, &repo).arg(&spec).run();
    out.expect_code(0);
    assert_eq!(out.stdout, "It says alpha and beta.\n");
    let req = mock.request(1);
    let msgs = req.oa_messages();
    let assistant = &msgs[2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"], "Reading it.");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_read_1");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "Read");
    let args: Value = serde_json::from_str(
        assistant["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(args["file_path"], json!(file));
    let result = req.tool_message("call_read_1").expect("tool message");
    assert!(
        result.contains("alpha") && result.contains("beta"),
        "{result}"
    );
    mock.assert_clean();
}

#[test]
fn two_parallel_tool_calls_interleaved() {
    let repo = TestRepo::new();
    let a = repo.write("a.txt", "AAA\n");
    let b = repo.write("b.txt", "BBB\n");
    let mock = MockOpenai::start(vec![
        OaResp::new()
            .tool_call("call_a", "Read", json!({"file_path": a}))
            .tool_call("call_b", "Read", json!({"file_path": b}))
            .interleaved()
            .turn()
            .chunked(9),
        oa_text_turn("Both read."),
    ]);
    let spec = write_spec(repo.path(), &spec_text("read both", ""));
    let out = exec_in(&mock, &repo).arg(&spec).run();
    out.expect_code(0);
    let req = mock.request(1);
    assert!(req.tool_message("call_a").unwrap().contains("AAA"));
    assert!(req.tool_message("call_b").unwrap().contains("BBB"));
    let msgs = req.oa_messages();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
    assert_eq!(msgs[2]["content"], Value::Null);
    mock.assert_clean();
}

#[test]
fn finish_reason_length_continues() {
    let mock = MockOpenai::start(vec![
        OaResp::new().text("The answer is").finish("length").turn(),
        oa_text_turn(" 42."),
    ]);
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &spec_text("answer", ""));
    let out = exec_in(&mock, &repo).arg(&spec).run();
    out.expect_code(0);
    let msgs = mock.request(1).oa_messages();
    assert_eq!(
        msgs[2],
        json!({"role": "assistant", "content": "The answer is"})
    );
    assert_eq!(msgs[3]["role"], "user");
    assert!(
        msgs[3]["content"]
            .as_str()
            .unwrap()
            .contains("output token limit")
    );
    mock.assert_clean();
}

#[test]
fn http_401_is_an_api_error() {
    let mock = MockOpenai::start(vec![oa_http_error(401)]);
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &spec_text("hi", ""));
    let out = exec_in(&mock, &repo).json().arg(&spec).run();
    out.expect_code(4);
    let r = out.result();
    assert_eq!(r["runner_outcome"], "api_error", "{r}");
    let errors = r["errors"].to_string();
    assert!(errors.contains("Incorrect API key provided"), "{errors}");
    assert!(!errors.contains(DUMMY_OPENAI_KEY), "{errors}");
    mock.assert_clean();
}

#[test]
fn missing_key_is_caught_before_running() {
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &spec_text("hi", ""));
    let out = Runner::new()
        .current_dir(repo.path())
        .args(["exec"])
        .arg(&spec)
        .run();
    assert_eq!(out.code, Some(2));
    let stderr = &out.stderr;
    assert!(stderr.contains("needs OPENAI_API_KEY"), "{stderr}");

    let spec = write_spec(
        repo.path(),
        &spec_text("hi", "openai:\n  api_key_env: GATEWAY_KEY\n"),
    );
    let out = Runner::new()
        .env("OPENAI_API_KEY", "set-but-not-the-configured-one")
        .current_dir(repo.path())
        .args(["exec"])
        .arg(&spec)
        .run();
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("needs GATEWAY_KEY"));
}

/// A local server without a key (`api_key_env: ""`) and without usage reporting: no
/// Authorization header, no stream_options, estimated usage; the base URL from the spec.
#[test]
fn keyless_local_server_without_usage() {
    let mock = MockOpenai::start_with(
        vec![OaResp::new().text("ok").usage(None).turn()],
        OaMockOptions {
            expect_key: None,
            expect_include_usage: false,
        },
    );
    let repo = TestRepo::new();
    let extra = format!(
        "openai:\n  base_url: {}\n  api_key_env: \"\"\n  include_usage: false\n",
        mock.base_url()
    );
    let spec = write_spec(repo.path(), &spec_text("hi", &extra));
    let out = Runner::new()
        .env("RUNNER_LOG", "warn")
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json"])
        .arg(&spec)
        .run();
    out.expect_code(0);
    let stderr = &out.stderr;
    let r = out.result();
    assert!(r["usage"]["input_tokens"].as_u64().unwrap() > 100, "{r}");
    assert_eq!(r["usage"]["output_tokens"], 1, "\"ok\" is ~1 token: {r}");
    assert!(stderr.contains("estimates"), "stderr: {stderr}");
    mock.assert_clean();
}

/// The configured key variable is scrubbed from the Bash tool's environment.
#[test]
fn configured_key_is_removed_from_tool_env() {
    let mock = MockOpenai::start_with(
        vec![
            OaResp::new()
                .tool_call(
                    "call_env",
                    "Bash",
                    json!({"command": "echo \"key=${GATEWAY_KEY:-unset}\""}),
                )
                .turn(),
            oa_text_turn("done"),
        ],
        OaMockOptions {
            expect_key: Some("gw-secret-123".into()),
            ..Default::default()
        },
    );
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        &spec_text(
            "print the key",
            "openai:\n  api_key_env: GATEWAY_KEY\npermissions:\n  allow: [\"Bash(echo:*)\"]\n",
        ),
    );
    let out = exec_in(&mock, &repo)
        .env("GATEWAY_KEY", "gw-secret-123")
        .arg(&spec)
        .run();
    out.expect_code(0);
    let result = mock.request(1).tool_message("call_env").unwrap();
    assert!(result.contains("key=unset"), "{result}");
    mock.assert_clean();
}
