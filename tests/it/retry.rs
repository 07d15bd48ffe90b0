//! Retries, budgets, max_tokens recovery and cancellation, through the real binary against
//! the mock Anthropic server. Retry delays are configured to milliseconds in the
//! specs, so these run fast; no test asserts an upper time bound.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::support::*;
use serde_json::{Value, json};

/// Fast retries for tests.
const FAST_RETRY: &str = "retry:\n  base_delay: 1ms\n  max_delay: 5ms\n";

fn spec(extra: &str) -> String {
    format!("name: t1\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\n{extra}")
}

/// A stream-json run and the transcript and JUnit report it left in its repository.
struct Outputs {
    run: Run,
    transcript: Vec<Value>,
    junit: String,
}

impl std::ops::Deref for Outputs {
    type Target = Run;

    fn deref(&self) -> &Run {
        &self.run
    }
}

impl Outputs {
    fn transcript_system(&self, subtype: &str) -> Vec<&Value> {
        events_of(&self.transcript, "system", Some(subtype))
    }
}

/// `runner exec SPEC --output-format stream-json --junit REPO/junit.xml ARGS` in `repo`.
fn run_with(mock: &MockAnthropic, repo: &TestRepo, yaml: &str, args: &[&str]) -> Outputs {
    let spec = write_spec(repo.path(), yaml);
    let junit = repo.path().join("junit.xml");
    let run = exec_in(mock, repo)
        .arg(&spec)
        .stream_json()
        .junit(&junit)
        .args(args)
        .run();
    Outputs {
        run,
        transcript: repo.transcript().unwrap_or_default(),
        junit: std::fs::read_to_string(&junit).unwrap_or_default(),
    }
}

fn run(mock: &MockAnthropic, yaml: &str) -> Outputs {
    let repo = TestRepo::new();
    run_with(mock, &repo, yaml, &[])
}

/// Index just after the first `content_block_stop` of `events`.
fn after_first_block(events: &[SseEvent]) -> usize {
    events
        .iter()
        .position(|e| e.event == "content_block_stop")
        .expect("a block")
        + 1
}

#[test]
fn overloaded_three_times_then_success() {
    let mock = MockAnthropic::start(vec![
        http_error(529),
        http_error(529),
        http_error(529),
        text_turn("Done."),
    ]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_eq!(mock.requests().len(), 4);
    let retries = r.system("api_retry");
    assert_eq!(retries.len(), 3);
    for (i, f) in retries.iter().enumerate() {
        assert_eq!(f["attempt"], json!(i + 1));
        assert_eq!(f["max_retries"], json!(10));
        assert_eq!(f["error_status"], json!(529));
        assert_eq!(f["error"], json!("server_error"));
        assert!(f["retry_delay_ms"].is_u64());
        assert!(f["uuid"].is_string() && f["session_id"].is_string());
    }
    assert_eq!(r.transcript_system("runner_api_retry").len(), 3);
    // HTTP errors before the response abandon nothing.
    assert!(r.system("runner_attempt_abandoned").is_empty());
    assert_eq!(r.result_frame()["runner_outcome"], "success");
    assert!(
        r.stderr.matches("retrying").count() >= 3,
        "a warn line per retry: {}",
        r.stderr
    );
    mock.assert_clean();
}

#[test]
fn rate_limit_retry_after_is_honoured() {
    let mock = MockAnthropic::start(vec![
        http_error(429).with_header("retry-after", "1"),
        text_turn("Done."),
    ]);
    let started = Instant::now();
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(started.elapsed() >= Duration::from_secs(1));
    let reqs = mock.requests();
    let waited = reqs[1].received_at - reqs[0].received_at;
    assert!(waited >= Duration::from_secs(1), "retried after {waited:?}");
    let retries = r.system("api_retry");
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0]["error_status"], json!(429));
    assert_eq!(retries[0]["error"], json!("rate_limit"));
    assert!(retries[0]["retry_delay_ms"].as_u64().unwrap() >= 1000);
    mock.assert_clean();
}

#[test]
fn rate_limit_retry_after_beyond_max_wait_fails_at_once() {
    let mock = MockAnthropic::start(vec![http_error(429).with_header("retry-after", "3600")]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(4), "stderr: {}", r.stderr);
    let msg = r.result_frame()["errors"][0].as_str().unwrap().to_string();
    assert!(msg.contains("retry after 3600s"), "{msg}");
    mock.assert_clean();
}

#[test]
fn spend_cap_429_without_retry_after_is_not_retried() {
    let mock = MockAnthropic::start(vec![http_error(429).without_header("retry-after")]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(4), "stderr: {}", r.stderr);
    assert_eq!(mock.requests().len(), 1);
    mock.assert_clean();
}

#[test]
fn server_error_then_success() {
    let mock = MockAnthropic::start(vec![http_error(500), text_turn("Done.")]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_eq!(r.system("api_retry")[0]["error_status"], json!(500));
    mock.assert_clean();
}

/// The attempt that failed mid-stream is abandoned: one record, nothing in the chain, and
/// the retry's first assistant frame supersedes the abandoned frames.
fn assert_abandoned_and_superseded(r: &Outputs) {
    let abandoned = r.system("runner_attempt_abandoned");
    assert_eq!(abandoned.len(), 1, "frames: {:#?}", r.json());
    let streamed = abandoned[0]["streamed_uuids"].as_array().unwrap().clone();
    assert_eq!(streamed.len(), 1);
    let frames = r.json();
    let assistants = events_of(&frames, "assistant", None);
    assert_eq!(
        assistants.len(),
        2,
        "the partial block, then the retry's block"
    );
    assert_eq!(assistants[0]["uuid"], streamed[0]);
    assert_eq!(assistants[1]["supersedes"], json!(streamed));
    assert_eq!(assistants[1]["message"]["content"][0]["text"], "Done.");
    // Transcript: one abandoned record, one api_retry record, and only the retry's block.
    assert_eq!(r.transcript_system("runner_attempt_abandoned").len(), 1);
    assert_eq!(r.transcript_system("runner_api_retry").len(), 1);
    let blocks = events_of(&r.transcript, "assistant", None);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0]["message"]["content"][0]["text"], "Done.");
    assert_ne!(blocks[0]["uuid"], streamed[0]);
}

#[test]
fn stream_error_event_mid_stream_then_success() {
    let mut events = Resp::new().text("Partial answer").build();
    let k = after_first_block(&events);
    events.truncate(k);
    events.push(error_event("overloaded_error", "Overloaded"));
    let mock = MockAnthropic::start(vec![MockTurn::Sse(events), text_turn("Done.")]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_abandoned_and_superseded(&r);
    assert_eq!(r.system("api_retry")[0]["error_status"], Value::Null);
    mock.assert_clean();
}

#[test]
fn dropped_connection_mid_stream_then_success() {
    let events = Resp::new().text("Partial answer").build();
    let k = after_first_block(&events);
    let mock = MockAnthropic::start(vec![
        MockTurn::DropAfter { events, after: k },
        text_turn("Done."),
    ]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_abandoned_and_superseded(&r);
    mock.assert_clean();
}

#[test]
fn stall_before_headers_is_retried() {
    let mock = MockAnthropic::start(vec![
        text_turn("late").delayed(Duration::from_secs(5)),
        text_turn("Done."),
    ]);
    let repo = TestRepo::new();
    let spec_path = write_spec(repo.path(), &spec(FAST_RETRY));
    let run = exec_in(&mock, &repo)
        .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", "300")
        .arg(&spec_path)
        .stream_json()
        .run();
    run.expect_code(0);
    let retries = run.system("api_retry");
    assert_eq!(retries.len(), 1);
    assert!(
        retries[0]["runner_error_message"]
            .as_str()
            .unwrap()
            .contains("stalled")
    );
    mock.assert_clean();
}

#[test]
fn stall_mid_stream_is_retried_via_spec_idle_timeout() {
    let events = Resp::new().text("Partial answer").build();
    let k = after_first_block(&events);
    let mock = MockAnthropic::start(vec![
        MockTurn::Stall {
            events,
            after: k,
            stall: Duration::from_secs(5),
        },
        text_turn("Done."),
    ]);
    let r = run(
        &mock,
        &spec(&format!("{FAST_RETRY}  idle_timeout: 300ms\n")),
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_abandoned_and_superseded(&r);
    mock.assert_clean();
}

#[test]
fn unauthorized_is_not_retried() {
    let mock = MockAnthropic::start(vec![http_error(401)]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(4), "stderr: {}", r.stderr);
    assert_eq!(mock.requests().len(), 1);
    assert!(r.system("api_retry").is_empty());
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "api_error");
    assert_eq!(res["terminal_reason"], "api_error");
    let msg = res["errors"][0].as_str().unwrap();
    assert!(msg.contains("ANTHROPIC_API_KEY rejected (401"), "{msg}");
    assert!(r.junit.contains("<error"), "{}", r.junit);
    mock.assert_clean();
}

#[test]
fn retries_exhausted_is_api_error() {
    let mock = MockAnthropic::start(vec![http_error(529), http_error(529), http_error(529)]);
    let repo = TestRepo::new();
    let r = run_with(&mock, &repo, &spec(FAST_RETRY), &["--max-retries", "2"]);
    assert_eq!(r.code, Some(4), "stderr: {}", r.stderr);
    assert_eq!(r.system("api_retry").len(), 2);
    let msg = r.result_frame()["errors"][0].as_str().unwrap().to_string();
    assert!(
        msg.contains("HTTP 529") && msg.contains("after 3 attempts"),
        "{msg}"
    );
    mock.assert_clean();
}

#[test]
fn dropped_stream_after_complete_tool_use_runs_the_command_once() {
    let cmd = json!({"command": "echo ran >> count.txt"});
    let events = Resp::new().tool_use("toolu_1", "Bash", cmd.clone()).build();
    let k = after_first_block(&events);
    let mock = MockAnthropic::start(vec![
        MockTurn::DropAfter { events, after: k },
        tool_turn("toolu_1", "Bash", cmd),
        text_turn("Done."),
    ]);
    let repo = TestRepo::new();
    let r = run_with(
        &mock,
        &repo,
        &spec(&format!(
            "{FAST_RETRY}permissions:\n  mode: bypassPermissions\n"
        )),
        &[],
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_eq!(
        repo.read("count.txt"),
        "ran\n",
        "the command ran exactly once"
    );
    assert_eq!(mock.requests().len(), 3);
    mock.assert_clean();
}

#[test]
fn token_budget_stops_before_a_request_that_would_cross_it() {
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Read", json!({"file_path": "README.md"}))
            .usage(60, 10)
            .turn(),
    ]);
    let r = run(
        &mock,
        &spec(&format!("{FAST_RETRY}limits:\n  max_total_tokens: 100\n")),
    );
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "budget_tokens");
    assert_eq!(res["terminal_reason"], "budget_exhausted");
    let msg = res["errors"][0].as_str().unwrap();
    assert!(
        msg.contains("max_total_tokens 100") && msg.contains("not sent"),
        "{msg}"
    );
    assert_eq!(mock.requests().len(), 1);
    mock.assert_clean();
}

/// The pre-send check counts what the turn added (here a large tool result), not only the last
/// response's usage: 30 tokens used, but the next request would carry ~1,000 more.
#[test]
fn token_budget_counts_the_tool_results_the_next_request_would_carry() {
    let repo = TestRepo::new();
    let big = repo.write("big.txt", &"lorem ipsum dolor sit amet\n".repeat(150));
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Read", json!({"file_path": big}))
            .usage(20, 10)
            .turn(),
        text_turn("done"),
    ]);
    let r = run_with(
        &mock,
        &repo,
        &spec(&format!("{FAST_RETRY}limits:\n  max_total_tokens: 500\n")),
        &[],
    );
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "budget_tokens");
    let msg = res["errors"][0].as_str().unwrap();
    assert!(msg.contains("not sent"), "{msg}");
    assert_eq!(mock.requests().len(), 1, "the second request was not sent");
}

#[test]
fn cost_budget_ends_the_task() {
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Read", json!({"file_path": "README.md"}))
            .usage(100_000, 1_000)
            .turn(),
    ]);
    let r = run(
        &mock,
        &spec(&format!("{FAST_RETRY}limits:\n  max_cost_usd: 0.1\n")),
    );
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "budget_cost");
    assert_eq!(res["subtype"], "error_max_budget_usd");
    assert!(res["errors"][0].as_str().unwrap().contains("max_cost_usd"));
    mock.assert_clean();
}

#[test]
fn timeout_cancels_a_running_tool() {
    let mock = MockAnthropic::start(vec![tool_turn(
        "toolu_1",
        "Bash",
        json!({"command": "sleep 30"}),
    )]);
    let started = Instant::now();
    let r = run(
        &mock,
        &spec("limits:\n  timeout: 1s\npermissions:\n  mode: bypassPermissions\n"),
    );
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    assert!(started.elapsed() < Duration::from_secs(25), "sleep was cut");
    let res = r.result_frame();
    assert_eq!(res["runner_outcome"], "timeout");
    assert!(
        res["errors"][0]
            .as_str()
            .unwrap()
            .contains("limits.timeout")
    );
    // The call got a tool_result.
    let results = events_of(&r.transcript, "user", None)
        .into_iter()
        .filter(|u| u["message"]["content"][0]["type"] == "tool_result")
        .count();
    assert_eq!(results, 1);
    mock.assert_clean();
}

#[test]
fn max_turns_ends_the_task() {
    let mock = MockAnthropic::start(vec![tool_turn(
        "toolu_1",
        "Read",
        json!({"file_path": "README.md"}),
    )]);
    let r = run(&mock, &spec("limits:\n  max_turns: 1\n"));
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    assert_eq!(r.result_frame()["runner_outcome"], "max_turns");
    mock.assert_clean();
}

#[test]
fn max_tokens_escalates_once_then_continues() {
    let mock = MockAnthropic::start(vec![
        Resp::new().text("Cut off").stop("max_tokens").turn(),
        Resp::new().text("Still long").stop("max_tokens").turn(),
        text_turn("Finished."),
    ]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].body["max_tokens"], json!(32_000));
    // Escalation: the same request again, with the model's cap.
    assert_eq!(reqs[1].body["max_tokens"], json!(64_000));
    assert_eq!(reqs[1].messages(), reqs[0].messages());
    // Then a continuation message after the kept response.
    assert_eq!(reqs[2].body["max_tokens"], json!(64_000));
    let n = reqs[2].messages().len();
    assert!(reqs[2].message_text(n - 1).contains("output token limit"));
    assert!(reqs[2].message_text(n - 2).contains("Still long"));
    assert_eq!(r.system("runner_attempt_abandoned").len(), 1);
    assert_eq!(r.result_frame()["num_turns"], json!(2));
    mock.assert_clean();
}

fn http_400(message: &str) -> MockTurn {
    MockTurn::Http {
        status: 400,
        body:
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
                .to_string(),
        headers: vec![],
    }
}

#[test]
fn context_errors_lower_max_tokens_and_retry() {
    let mock = MockAnthropic::start(vec![
        http_400(
            "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000, decrease input length or `max_tokens` and try again",
        ),
        http_400(
            "`max_tokens`: 9000 > 8000, which is the maximum allowed number of output tokens for claude-sonnet-4-5",
        ),
        text_turn("Done."),
    ]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let reqs = mock.requests();
    assert_eq!(reqs[1].body["max_tokens"], json!(9_000));
    assert_eq!(reqs[2].body["max_tokens"], json!(8_000));
    mock.assert_clean();
}

#[test]
fn prompt_too_long_is_context_exhausted() {
    // The first answer triggers compaction; three failed compactions end the task.
    let ptl = || http_400("prompt is too long: 210000 tokens > 200000 maximum");
    let mock = MockAnthropic::start(vec![ptl(), ptl(), ptl(), ptl()]);
    let r = run(&mock, &spec(FAST_RETRY));
    assert_eq!(r.code, Some(3), "stderr: {}", r.stderr);
    assert_eq!(r.result_frame()["runner_outcome"], "context_exhausted");
    mock.assert_clean();
}

fn signal_mid_tool(sig: Signal, expected: i32) {
    let mock = MockAnthropic::start(vec![tool_turn(
        "toolu_1",
        "Bash",
        json!({"command": "touch started && sleep 30"}),
    )]);
    let repo = TestRepo::new();
    let spec_path = write_spec(
        repo.path(),
        &spec("permissions:\n  mode: bypassPermissions\n"),
    );
    let junit = repo.path().join("junit.xml");
    let started = exec_in(&mock, &repo)
        .arg(&spec_path)
        .stream_json()
        .junit(&junit)
        .spawn();
    wait_until("the tool's start", || repo.exists("started"));
    let signalled = Instant::now();
    started.signal(sig);
    let run = started.wait();
    run.expect_code(expected);
    assert!(
        signalled.elapsed() < Duration::from_secs(20),
        "ended long before the sleep would have"
    );
    let frames = run.json();
    let result = run.result_frame();
    assert_eq!(result["runner_outcome"], "interrupted");
    assert_eq!(result["terminal_reason"], "aborted_tools");
    // The unfinished call got a tool_result, in stream-json and the transcript.
    let tool_results: Vec<&Value> = events_of(&frames, "user", None)
        .into_iter()
        .filter(|u| u["message"]["content"][0]["type"] == "tool_result")
        .collect();
    assert_eq!(tool_results.len(), 1);
    let transcript = repo.transcript().unwrap();
    assert!(
        transcript
            .iter()
            .any(|r| r["message"]["content"][0]["type"] == "tool_result")
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<error"), "{xml}");
    mock.assert_clean();
}

#[test]
fn sigint_mid_tool_interrupts_cleanly() {
    signal_mid_tool(Signal::SIGINT, 130);
}

#[test]
fn sigterm_mid_tool_interrupts_cleanly() {
    signal_mid_tool(Signal::SIGTERM, 143);
}

#[test]
fn sigint_during_backoff_ends_promptly() {
    let mock = MockAnthropic::start(vec![http_error(529)]);
    let repo = TestRepo::new();
    let spec_path = write_spec(
        repo.path(),
        &spec("retry:\n  base_delay: 60s\n  max_delay: 60s\n"),
    );
    let started = exec_in(&mock, &repo).arg(&spec_path).stream_json().spawn();
    assert!(mock.wait_for_requests(1, Duration::from_secs(30)));
    // Give the binary a moment to enter the backoff wait.
    std::thread::sleep(Duration::from_millis(300));
    let signalled = Instant::now();
    started.signal(Signal::SIGINT);
    let run = started.wait();
    run.expect_code(130);
    assert!(signalled.elapsed() < Duration::from_secs(30));
    assert_eq!(run.system("api_retry").len(), 1);
    assert_eq!(run.result_frame()["runner_outcome"], "interrupted");
    mock.assert_clean();
}
