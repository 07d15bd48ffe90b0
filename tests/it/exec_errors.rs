//! End-to-end: API errors (HTTP errors with Anthropic's real bodies) and malformed streams
//! through the real binary.

use crate::support::*;

fn spec(extra: &str) -> String {
    format!("name: errs\nprompt: do it\nmodel: claude-sonnet-4-5\n{extra}")
}

#[test]
fn http_401_is_an_api_error_with_a_clear_message() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![http_error(401)]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let junit = out.junit();
    let run = exec(&mock, &repo, &out).junit(&junit).arg(&spec).run();
    run.expect_code(4);
    assert!(
        run.stdout.contains("ANTHROPIC_API_KEY rejected (401"),
        "stdout: {}",
        run.stdout
    );
    assert!(run.stdout.contains("invalid x-api-key"), "{}", run.stdout);
    assert!(
        run.stdout.contains("ANTHROPIC_API_KEY"),
        "says what to check"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<error type=\"api_error\""), "{xml}");
    assert!(xml.contains("ANTHROPIC_API_KEY rejected (401"), "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");
    assert_eq!(mock.requests().len(), 1, "401 is not retried");
    mock.assert_clean();
}

#[test]
fn http_401_json_result() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![http_error(401)]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(4);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "api_error");
    assert_eq!(r["terminal_reason"], "api_error");
    assert_eq!(r["subtype"], "error_during_execution");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 0);
    assert!(
        r["errors"][0]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY rejected (401")
    );
    mock.assert_clean();
}

#[test]
fn http_529_overloaded_is_exit_4() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![http_error(529)]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out)
        .args(["--max-retries", "0"])
        .json()
        .arg(&spec)
        .run();
    run.expect_code(4);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "api_error");
    let err = r["errors"][0].as_str().unwrap();
    assert!(err.contains("529") && err.contains("Overloaded"), "{err}");
    mock.assert_clean();
}

#[test]
fn tool_use_with_unparsable_input_gets_an_error_result_and_the_loop_continues() {
    let repo = TestRepo::new();
    let bad = Resp::new().id("msg_bad").tool_use_fragments(
        "toolu_bad",
        "Bash",
        &["", "{\"command\": \"touch marker.txt", "\", oops}"],
    );
    let mock = MockAnthropic::start(vec![bad.turn(), text_turn("recovered")]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec("permissions:\n  mode: bypassPermissions\n"),
    );
    let run = exec(&mock, &repo, &out).arg(&spec).run();
    run.expect_code(0);
    assert_eq!(run.stdout, "recovered\n");
    assert!(!repo.exists("marker.txt"), "malformed call must not run");
    let req = mock.request(1);
    let tr = req.tool_result("toolu_bad").cloned().unwrap();
    assert_eq!(tr["is_error"], true);
    let text = req.tool_result_text("toolu_bad").unwrap();
    assert!(text.contains("not valid JSON"), "{text}");
    mock.assert_clean();
}

#[test]
fn error_event_mid_stream_is_exit_4_with_a_clear_message() {
    let repo = TestRepo::new();
    let mut events = Resp::new().text("Working on it").build();
    // message_start, block start, one text delta, then the error.
    events.truncate(3);
    events.push(error_event("overloaded_error", "Overloaded"));
    let mock = MockAnthropic::start(vec![MockTurn::Sse(events)]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out)
        .args(["--max-retries", "0"])
        .json()
        .arg(&spec)
        .run();
    run.expect_code(4);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "api_error");
    let err = r["errors"][0].as_str().unwrap();
    assert!(
        err.contains("overloaded_error") && err.contains("Overloaded"),
        "{err}"
    );
    // The abandoned attempt leaves one system record and nothing in the chain.
    let t = transcript_of(&r);
    assert!(records_of(&t, "assistant").is_empty(), "{t:?}");
    assert_eq!(
        t.iter()
            .filter(|x| x["subtype"] == "runner_attempt_abandoned")
            .count(),
        1
    );
    mock.assert_clean();
}

#[test]
fn tool_use_cut_off_by_max_tokens_never_runs_and_the_model_is_asked_to_continue() {
    let repo = TestRepo::new();
    let cut = Resp::new()
        .id("msg_cut")
        .text("Writing the file.")
        .tool_use_fragments(
            "toolu_cut",
            "Bash",
            &["", "{\"command\": \"touch marker.txt\"}"],
        )
        // no content_block_stop: the output cap cut the block off
        .cut_off()
        .stop("max_tokens");
    let mock = MockAnthropic::start(vec![cut.turn(), text_turn("finished")]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        // An explicit max_tokens: no escalation retry, straight to the continuation.
        &spec("max_tokens: 1024\npermissions:\n  mode: bypassPermissions\n"),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert!(!repo.exists("marker.txt"), "the cut-off tool_use ran");
    let req = mock.request(1);
    assert!(
        !req.raw_body.contains("toolu_cut"),
        "the dropped tool_use is not sent back: {}",
        req.raw_body
    );
    let last = req.messages().len() - 1;
    assert_eq!(req.messages()[last]["role"], "user");
    let text = req.message_text(last);
    assert!(text.contains("output token limit"), "{text}");
    let r = run.result();
    assert_eq!(r["result"], "finished");
    assert_eq!(r["num_turns"], 2, "a max_tokens continuation is a turn");
    mock.assert_clean();
}

#[test]
fn dropped_connection_is_exit_4() {
    let repo = TestRepo::new();
    let events = Resp::new().text("partial answer").build();
    let mock = MockAnthropic::start(vec![MockTurn::DropAfter { events, after: 3 }]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out)
        .args(["--max-retries", "0"])
        .json()
        .arg(&spec)
        .run();
    run.expect_code(4);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "api_error");
    assert!(!r["errors"][0].as_str().unwrap().is_empty());
    mock.assert_clean();
}

fn malformed_turn(id: &str) -> MockTurn {
    Resp::new()
        .id(&format!("msg_{id}"))
        .tool_use_fragments(id, "Glob", &["{\"pattern\": "])
        .turn()
}

#[test]
fn malformed_tool_input_repeated_is_an_agent_error() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        malformed_turn("toolu_a"),
        malformed_turn("toolu_b"),
        malformed_turn("toolu_c"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(1);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "agent_error");
    assert_eq!(r["terminal_reason"], "model_error");
    assert!(
        r["errors"][0]
            .as_str()
            .unwrap()
            .contains("malformed tool input")
    );
    // Every call was answered, so the stored conversation stays valid.
    let t = transcript_of(&r);
    assert_chain(&t);
    let answered: Vec<_> = records_of(&t, "user")
        .into_iter()
        .filter_map(|u| u["message"]["content"][0]["tool_use_id"].as_str())
        .collect();
    assert_eq!(answered, ["toolu_a", "toolu_b", "toolu_c"]);
    mock.assert_clean();
}

#[test]
fn refusal_is_an_agent_error() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        Resp::new().text("I can't help").stop("refusal").turn(),
    ]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(1);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "agent_error");
    assert_eq!(r["stop_reason"], "refusal");
    mock.assert_clean();
}
