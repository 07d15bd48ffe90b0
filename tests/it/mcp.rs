//! End-to-end: MCP servers through the real binary — the small stdio server of the test
//! support (listing, calling, denying, refreshing, crashing, slow and failed starts, stopping)
//! and the real filesystem server from npm.

use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::support::*;

fn spec(extra: &str) -> String {
    format!("name: mcp\nprompt: use the tools\nmodel: claude-sonnet-4-5\n{extra}")
}

/// The tool spec named `name` of request `i`.
fn offered(mock: &MockAnthropic, i: usize, name: &str) -> Option<Value> {
    mock.request(i).body["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
}

#[test]
fn tools_are_listed_called_and_denied_by_rules_naming_them() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_echo", "mcp__stub__echo", json!({"text": "hi"}))
            .tool_use("toolu_env", "mcp__stub__env", json!({"var": "HOME"}))
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = spec(&format!(
        "{}permissions:\n  allow: [mcp__stub__echo]\n",
        stub_servers("stub", &[], &[])
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).stream_json().arg(&spec).run();
    run.expect_code(0);

    // Offered with the server's own schema.
    let echo = offered(&mock, 0, "mcp__stub__echo").expect("echo offered");
    assert_eq!(echo["description"], "Echo the text back.");
    assert_eq!(echo["input_schema"]["required"], json!(["text"]));
    assert!(offered(&mock, 0, "mcp__stub__crash").is_some());
    // Called through the server; the other call needs an allow rule (dontAsk).
    assert_eq!(
        mock.request(1).tool_result_text("toolu_echo").as_deref(),
        Some("echo: hi")
    );
    let denied = mock.request(1).tool_result_text("toolu_env").unwrap();
    assert!(denied.contains("Permission denied"), "{denied}");
    assert!(denied.contains("mcp__stub__env"), "{denied}");

    let frames = run.json();
    let init = events_of(&frames, "system", Some("init"))[0];
    assert_eq!(
        init["mcp_servers"],
        json!([{"name": "stub", "status": "connected"}])
    );
    assert!(
        init["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__stub__echo"))
    );
    let r = events_of(&frames, "result", None)[0];
    assert_eq!(r["permission_denials"][0]["tool_name"], "mcp__stub__env");
    let t = transcript_of(r);
    assert_eq!(t[0]["mcpServers"][0]["status"], "connected");
    assert!(
        t[0]["mcpServers"][0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp__stub__add_tool"))
    );
    mock.assert_clean();
}

#[test]
fn only_the_variables_named_reach_the_server_and_their_sources_are_secrets() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_named", "mcp__stub__env", json!({"var": "GREETING"}))
            .tool_use("toolu_other", "mcp__stub__env", json!({"var": "OTHER_VAR"}))
            .tool_use("toolu_path", "mcp__stub__env", json!({"var": "PATH"}))
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let token = "tok-0123456789-abcdef";
    let yaml = spec(&format!(
        "{}permissions:\n  allow: [mcp__stub]\n",
        stub_servers(
            "stub",
            &[],
            &["env: {GREETING: \"hello ${MCP_TEST_TOKEN}\"}"]
        )
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out)
        .env("MCP_TEST_TOKEN", token)
        .env("OTHER_VAR", "not for the server")
        .json()
        .arg(&spec)
        .run();
    run.expect_code(0);
    let req = mock.request(1);
    // The server got the expanded value (it answered with it), and the model sees the
    // secret redacted like any tool result.
    assert_eq!(
        req.tool_result_text("toolu_named").as_deref(),
        Some("hello [REDACTED:MCP_TEST_TOKEN]")
    );
    assert_eq!(
        req.tool_result_text("toolu_other").as_deref(),
        Some("(unset)")
    );
    assert_ne!(
        req.tool_result_text("toolu_path").as_deref(),
        Some("(unset)")
    );
    // The variable the value came from is a secret: redacted from the outputs.
    let transcript =
        std::fs::read_to_string(run.result()["runner_transcript_path"].as_str().unwrap()).unwrap();
    assert!(!transcript.contains(token));
    assert!(
        transcript.contains("[REDACTED:MCP_TEST_TOKEN]"),
        "{transcript}"
    );
    mock.assert_clean();
}

#[test]
fn list_changed_refreshes_the_tools_between_turns() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_add", "mcp__stub__add_tool", json!({})),
        tool_turn("toolu_echo", "mcp__stub__echo", json!({"text": "x"})),
        tool_turn("toolu_late", "mcp__stub__late_tool", json!({})),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = spec(&format!(
        "{}permissions:\n  allow: [mcp__stub]\n",
        stub_servers("stub", &[], &[])
    ));
    let spec = write_spec(repo.path(), &yaml);
    exec(&mock, &repo, &out)
        .json()
        .arg(&spec)
        .run()
        .expect_code(0);
    assert!(offered(&mock, 0, "mcp__stub__late_tool").is_none());
    let late = offered(&mock, 2, "mcp__stub__late_tool").expect("offered after the change");
    assert_eq!(late["description"], "Offered after add_tool.");
    assert_eq!(
        mock.request(3).tool_result_text("toolu_late").as_deref(),
        Some("late tool ran")
    );
    mock.assert_clean();
}

#[test]
fn a_crashed_server_turns_its_calls_into_tool_errors() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_crash", "mcp__stub__crash", json!({})),
        tool_turn(
            "toolu_echo",
            "mcp__stub__echo",
            json!({"text": "still there?"}),
        ),
        text_turn("the server is gone"),
    ]);
    let out = OutDir::new();
    let yaml = spec(&format!(
        "{}permissions:\n  allow: [mcp__stub]\n",
        stub_servers("stub", &[], &[])
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert_eq!(run.result()["runner_outcome"], "success");
    let crash = mock.request(1).tool_result("toolu_crash").cloned().unwrap();
    assert_eq!(crash["is_error"], true, "{crash}");
    let after = mock.request(2).tool_result("toolu_echo").cloned().unwrap();
    assert_eq!(after["is_error"], true, "{after}");
    let text = mock.request(2).tool_result_text("toolu_echo").unwrap();
    assert!(
        text.contains("MCP server `stub` is not running") && text.contains("crashing as asked"),
        "{text}"
    );
    mock.assert_clean();
}

#[test]
fn a_server_that_does_not_start_in_time_is_reported_and_left_out() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    let yaml = spec(&stub_servers(
        "slow",
        &["--slow-start", "20"],
        &["startup_timeout: 1s"],
    ));
    let spec = write_spec(repo.path(), &yaml);
    let started = std::time::Instant::now();
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(
        !mock
            .request(0)
            .tool_names()
            .iter()
            .any(|n| n.starts_with("mcp__"))
    );
    let t = transcript_of(&run.result());
    let status = &t[0]["mcpServers"][0];
    assert_eq!(status["name"], "slow");
    assert_eq!(status["status"], "failed");
    let error = status["error"].as_str().unwrap();
    assert!(error.contains("within 1s"), "{error}");
    assert!(
        run.stderr.contains("MCP server `slow` did not start"),
        "{}",
        run.stderr
    );
    mock.assert_clean();
}

#[test]
fn a_required_server_that_fails_fails_the_task() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let yaml = spec(&stub_servers("gh", &["--fail-start"], &["required: true"]));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(1);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "agent_error");
    let error = r["errors"][0].as_str().unwrap();
    assert!(
        error.contains("MCP server `gh` did not start")
            && error.contains("failing at start as asked")
            && error.contains("required"),
        "{error}"
    );
    assert_eq!(
        mock.served(),
        0,
        "no model request for a task that failed to start"
    );
}

#[test]
fn servers_are_stopped_when_the_task_ends() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    let pid_file = repo.path().join("stub.pid");
    let yaml = spec(&stub_servers(
        "stub",
        &["--pid-file", pid_file.to_str().unwrap()],
        &[],
    ));
    let spec = write_spec(repo.path(), &yaml);
    exec(&mock, &repo, &out)
        .json()
        .arg(&spec)
        .run()
        .expect_code(0);
    assert!(pid_file.exists(), "the server never started");
    assert!(
        !running_with_arg(pid_file.to_str().unwrap()),
        "the server outlived the task"
    );
    mock.assert_clean();
}

#[test]
fn servers_are_stopped_when_the_run_is_interrupted() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![MockTurn::Stall {
        events: Resp::new().text("slow answer").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }]);
    let out = OutDir::new();
    let pid_file = repo.path().join("stub.pid");
    let yaml = spec(&stub_servers(
        "stub",
        &["--pid-file", pid_file.to_str().unwrap()],
        &[],
    ));
    let spec = write_spec(repo.path(), &yaml);
    let started = spawn_exec(&mock, &repo, &out, &spec);
    assert!(mock.wait_for_requests(1, Duration::from_secs(30)));
    assert!(running_with_arg(pid_file.to_str().unwrap()));
    started.signal(Signal::SIGTERM);
    started.wait().expect_code(143);
    assert!(
        !running_with_arg(pid_file.to_str().unwrap()),
        "the server outlived the interrupted run"
    );
    mock.assert_clean();
}

#[test]
fn servers_in_the_workdir_are_never_started() {
    let repo = TestRepo::new();
    let marker = repo.path().join("started.pid");
    repo.write(
        ".mcp.json",
        &json!({"mcpServers": {"evil": {"command": "bash", "args": [mcp_stub(), "--pid-file", marker]}}})
            .to_string(),
    );
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert!(!marker.exists());
    assert!(
        !mock
            .request(0)
            .tool_names()
            .iter()
            .any(|n| n.starts_with("mcp__"))
    );
    mock.assert_clean();
}

#[test]
fn the_filesystem_server_from_npm_reads_and_writes_in_the_sandbox() {
    let Some(server) = filesystem_server() else {
        return;
    };
    let repo = TestRepo::new();
    repo.write("notes.txt", "alpha\nbeta\n");
    repo.commit_all("notes");
    let work = repo.path().to_str().unwrap().to_string();
    let outside = tempfile::tempdir().unwrap();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use(
                "toolu_read",
                "mcp__fs__read_text_file",
                json!({"path": format!("{work}/notes.txt")}),
            )
            .tool_use(
                "toolu_write",
                "mcp__fs__write_file",
                json!({"path": format!("{work}/made-by-mcp.txt"), "content": "one\ntwo\n"}),
            )
            .tool_use(
                "toolu_outside",
                "mcp__fs__write_file",
                json!({"path": format!("{}/escaped.txt", outside.path().display()), "content": "x"}),
            )
            .tool_use(
                "toolu_move",
                "mcp__fs__move_file",
                json!({"source": format!("{work}/notes.txt"), "destination": format!("{work}/moved.txt")}),
            )
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = format!(
        "{}mcp_servers:\n  fs:\n    command: node\n    args: [{:?}, {work:?}, {:?}]\n    startup_timeout: 60s\npermissions:\n  allow: [mcp__fs__read_text_file, mcp__fs__write_file]\n",
        spec(""),
        server.display().to_string(),
        outside.path().display().to_string(),
    );
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let req = mock.request(1);
    let read = req.tool_result_text("toolu_read").unwrap();
    assert_eq!(read, "alpha\nbeta\n");
    assert_eq!(repo.read("made-by-mcp.txt"), "one\ntwo\n");
    // The server may write there (its own rules allow it), the sandbox does not.
    let escaped = req.tool_result("toolu_outside").cloned().unwrap();
    assert_eq!(escaped["is_error"], true, "{escaped}");
    assert!(!outside.path().join("escaped.txt").exists());
    // No allow rule names move_file: denied, and the file stays.
    assert!(
        req.tool_result_text("toolu_move")
            .unwrap()
            .contains("Permission denied")
    );
    assert!(repo.exists("notes.txt"));
    let r = run.result();
    let tools = &transcript_of(&r)[0]["mcpServers"][0]["tools"];
    assert!(
        tools
            .as_array()
            .unwrap()
            .contains(&json!("mcp__fs__list_directory")),
        "{tools}"
    );
    // What the server wrote is among the task's changes.
    let files = &r["runner_git"]["files"];
    assert_eq!(files[0]["path"], "made-by-mcp.txt", "{r}");
    assert_eq!(files[0]["insertions"], 2);
    mock.assert_clean();
}

#[test]
fn ci_installs_the_filesystem_server_version_the_tests_use() {
    let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")).unwrap();
    assert!(
        ci.contains(&format!("mcp_fs_version={FILESYSTEM_SERVER_VERSION}\n")),
        ".ci/run installs another version than tests/it/support/mcp.rs names"
    );
}
