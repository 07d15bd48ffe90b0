//! End-to-end: the real binary against the mock Anthropic server — the basic loop: a text
//! answer, Read then Edit, parallel tool calls, thinking blocks sent back unchanged.

use crate::support::*;
use serde_json::{Value, json};

fn spec(prompt: &str, extra: &str) -> String {
    format!("name: t1\nprompt: {prompt:?}\nmodel: claude-sonnet-4-5\n{extra}")
}

#[test]
fn text_only_answer_succeeds() {
    let mock = MockAnthropic::start(vec![text_turn("All done.")]);
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &spec("say hi", ""));
    let out = exec_in(&mock, &repo).arg(&spec).run();
    out.expect_code(0);
    assert_eq!(out.stdout, "All done.\n");
    let req = mock.request(0);
    assert_eq!(req.body["model"], json!("claude-sonnet-4-5"));
    assert_eq!(req.body["stream"], json!(true));
    assert!(req.system_text().contains("No human is watching"));
    assert_eq!(req.messages().len(), 1);
    assert_eq!(req.message_text(0), "say hi");
    mock.assert_clean();
}

#[test]
fn text_only_answer_json_result_fields() {
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .text("All done.")
            .usage(1000, 200)
            .cache(100, 50)
            .turn(),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec("say hi", ""));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["type"], "result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["is_error"], false);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["result"], "All done.");
    assert!(r.get("errors").is_none(), "no errors on success: {r}");
    assert_eq!(r["stop_reason"], "end_turn");
    assert_eq!(r["terminal_reason"], "completed");
    assert_eq!(r["runner_outcome"], "success");
    assert_eq!(r["runner_exit_code"], 0);
    assert_eq!(r["runner_task"], "t1");
    assert_eq!(
        r["usage"],
        json!({"input_tokens": 1000, "cache_creation_input_tokens": 100,
               "cache_read_input_tokens": 50, "output_tokens": 200})
    );
    // claude-sonnet-4-5: $3 in, $15 out, $3.75 cache write, $0.30 cache read per MTok.
    let expected = (1000.0 * 3.0 + 200.0 * 15.0 + 100.0 * 3.75 + 50.0 * 0.30) / 1e6;
    let cost = r["total_cost_usd"]
        .as_f64()
        .expect("priced model has a cost");
    assert!((cost - expected).abs() < 1e-9, "cost {cost} != {expected}");
    let mu = &r["modelUsage"]["claude-mock"];
    assert_eq!(
        mu["inputTokens"], 1000,
        "modelUsage keyed by answering model: {r}"
    );
    assert_eq!(r["permission_denials"], json!([]));
    assert!(r["session_id"].as_str().is_some_and(|s| s.len() == 36));
    assert!(r["duration_ms"].is_u64() && r["duration_api_ms"].is_u64());
    let tp = r["runner_transcript_path"].as_str().unwrap();
    assert!(
        std::path::Path::new(tp).starts_with(std::fs::canonicalize(out.transcripts()).unwrap()),
        "transcript {tp} is under --transcript-dir"
    );
    assert_eq!(
        std::fs::read_to_string(out.transcripts().join(".gitignore")).unwrap(),
        "*\n"
    );
    assert!(!repo.exists(".runner"), "nothing written into the repo");
    mock.assert_clean();
}

#[test]
fn read_then_edit_changes_the_file() {
    let repo = TestRepo::new();
    let file = repo.write("src/lib.txt", "alpha\nbeta\ngamma\n");
    let file = std::fs::canonicalize(file).unwrap();
    let fp = file.to_str().unwrap();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .id("msg_1")
            .text("Reading it.")
            .tool_use("toolu_r", "Read", json!({"file_path": fp}))
            .turn(),
        Resp::new()
            .id("msg_2")
            .tool_use(
                "toolu_e",
                "Edit",
                json!({"file_path": fp, "old_string": "beta", "new_string": "BETA"}),
            )
            .turn(),
        Resp::new().id("msg_3").text("Edited.").usage(40, 7).turn(),
    ]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec("fix beta", "permissions:\n  allow: [Edit]\n"),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert_eq!(repo.read("src/lib.txt"), "alpha\nBETA\ngamma\n");
    assert_eq!(
        mock.request(1).tool_result_text("toolu_r").as_deref(),
        Some("     1\talpha\n     2\tbeta\n     3\tgamma")
    );
    let edit_result = mock.request(2).tool_result("toolu_e").cloned().unwrap();
    assert_ne!(edit_result["is_error"], json!(true), "{edit_result}");

    let r = run.result();
    assert_eq!(r["num_turns"], 3);
    assert_eq!(r["result"], "Edited.");
    let t = transcript_of(&r);
    assert_chain(&t);

    // First record: the resolved spec, system prompt and tools.
    let first = &t[0];
    assert_eq!(first["type"], "system");
    assert_eq!(first["subtype"], "runner_init");
    assert_eq!(first["spec"]["name"], "t1");
    assert_eq!(first["spec"]["permissions"]["allow"], json!(["Edit"]));
    assert_eq!(
        first["systemPrompt"].as_str(),
        Some(mock.request(0).system_text().as_str())
    );
    let tool_names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tool_names, mock.request(0).tool_names());
    assert!(first["specDigest"].as_str().is_some_and(|d| d.len() == 64));
    assert_eq!(
        first["gitBaseCommit"].as_str().map(str::to_string),
        Some(repo.git(&["rev-parse", "HEAD"]).trim().to_string())
    );
    assert_eq!(first["gitBranch"], "main");

    // Assistant records: one per block, with requestId and the final usage.
    let assistants = records_of(&t, "assistant");
    assert_eq!(assistants.len(), 4, "text+tool_use, tool_use, text");
    for a in &assistants {
        assert_eq!(a["message"]["content"].as_array().unwrap().len(), 1);
        assert!(
            a["requestId"]
                .as_str()
                .is_some_and(|s| s.starts_with("req_mock_")),
            "{a}"
        );
    }
    assert_eq!(assistants[0]["message"]["id"], "msg_1");
    assert_eq!(assistants[1]["message"]["id"], "msg_1");
    assert_eq!(assistants[0]["requestId"], assistants[1]["requestId"]);
    assert_eq!(assistants[0]["message"]["stop_reason"], "tool_use");
    let last = assistants[3];
    assert_eq!(
        last["message"]["usage"]["output_tokens"], 7,
        "final usage, not the start's"
    );
    assert_eq!(last["message"]["usage"]["input_tokens"], 40);

    // Tool results: user records with toolUseResult and sourceToolAssistantUUID.
    let results: Vec<&Value> = records_of(&t, "user")
        .into_iter()
        .filter(|u| u["message"]["content"].is_array())
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0]["message"]["content"][0]["tool_use_id"],
        "toolu_r"
    );
    assert_eq!(results[0]["sourceToolAssistantUUID"], assistants[1]["uuid"]);
    assert!(results[0]["toolUseResult"].is_object(), "{}", results[0]);
    assert_eq!(
        results[1]["message"]["content"][0]["tool_use_id"],
        "toolu_e"
    );
    assert_eq!(results[1]["sourceToolAssistantUUID"], assistants[2]["uuid"]);
    assert!(results[1]["toolUseResult"].is_object());
    let last_rec = t.last().unwrap();
    assert_eq!(last_rec["subtype"], "runner_result");
    assert_eq!(last_rec["result"]["runner_outcome"], "success");
    mock.assert_clean();
}

#[test]
fn three_parallel_tool_uses_answered_in_one_message_in_order() {
    let repo = TestRepo::new();
    repo.write("a.txt", "needle one\n");
    repo.write("b.txt", "haystack\n");
    let a = std::fs::canonicalize(repo.path().join("a.txt")).unwrap();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use(
                "toolu_1",
                "Grep",
                json!({"pattern": "needle", "output_mode": "content"}),
            )
            .tool_use("toolu_2", "Read", json!({"file_path": a.to_str().unwrap()}))
            .tool_use("toolu_3", "Glob", json!({"pattern": "*.txt"}))
            .turn(),
        text_turn("found it"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec("find the needle", ""));
    let run = exec(&mock, &repo, &out).arg(&spec).run();
    run.expect_code(0);
    assert_eq!(run.stdout, "found it\n");
    let req = mock.request(1);
    assert_eq!(req.messages().len(), 3, "user, assistant, user");
    let ids: Vec<&str> = req
        .tool_results()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_3"]);
    for b in req.tool_results() {
        assert_ne!(b["is_error"], json!(true), "{b}");
    }
    assert!(
        req.tool_result_text("toolu_1")
            .unwrap()
            .contains("needle one")
    );
    assert_eq!(
        req.tool_result_text("toolu_2").unwrap(),
        "     1\tneedle one"
    );
    let glob = req.tool_result_text("toolu_3").unwrap();
    assert!(glob.contains("a.txt") && glob.contains("b.txt"), "{glob}");
    mock.assert_clean();
}

#[test]
fn thinking_and_redacted_thinking_go_back_unchanged() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .thinking("Let me look at the files.", "sig_EqQBCkgIAR_abc==")
            .tool_use("toolu_1", "Glob", json!({"pattern": "*.md"}))
            .turn(),
        Resp::new()
            .redacted_thinking("EmwKAhgBEgy3va3pzix/LafPsn4a")
            .tool_use("toolu_2", "Glob", json!({"pattern": "*.txt"}))
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec("look", "thinking_budget_tokens: 2048\nmax_tokens: 8000\n"),
    );
    let run = exec(&mock, &repo, &out).arg(&spec).run();
    run.expect_code(0);
    let req0 = mock.request(0);
    assert_eq!(
        req0.body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    let thinking = json!({"type": "thinking", "thinking": "Let me look at the files.",
                          "signature": "sig_EqQBCkgIAR_abc=="});
    let req1 = mock.request(1);
    assert_eq!(req1.messages()[1]["content"][0], thinking);
    let req2 = mock.request(2);
    assert_eq!(
        req2.messages()[1]["content"][0],
        thinking,
        "still unchanged later"
    );
    assert_eq!(
        req2.messages()[3]["content"][0],
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"})
    );
    mock.assert_clean();
}

#[test]
fn a_failed_tool_calls_log_line_says_why() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn(
            "toolu_1",
            "Read",
            json!({"file_path": repo.path().join("does-not-exist.txt")}),
        ),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).args(["-p", "read it"]).run();
    run.expect_code(0);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("Read") && l.contains("does-not-exist.txt"))
        .unwrap_or_else(|| panic!("no tool line in {}", run.stderr));
    let told = mock.request(1).tool_result_text("toolu_1").unwrap();
    let first = told
        .split_whitespace()
        .take(4)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(line.contains(&first), "{line:?} lacks {first:?}");
    mock.assert_clean();
}
