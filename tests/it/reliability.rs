//! Reliability through the real binary: odd servers (absurd headers, corrupt or cut streams,
//! implausible usage), a broken stderr, deep specs and odd transcripts end as the outcome
//! they are, never as a panic, an abort or a wrong outcome.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::{Value, json};

/// The last JSON line of stdout (the result of `--output-format json`).
fn result_line(stdout: &str) -> Value {
    json_lines(stdout.as_bytes())
        .into_iter()
        .last()
        .unwrap_or_else(|| panic!("no result line on stdout:\n{stdout}"))
}

fn path_arg(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

// ---------------------------------------------------------------------------------------------
// A huge retry-after is "longer than any budget", never a panic reported as an interrupt.

fn assert_gave_up_on_retry_after(run: &Run, out: &OutDir) {
    run.expect_code(4);
    let r = result_line(&run.stdout);
    assert_eq!(r["runner_outcome"], "api_error", "{r}");
    let errors = r["errors"].to_string();
    assert!(
        errors.contains("retry after more than a year") && errors.contains("retry.max_wait"),
        "{errors}"
    );
    assert!(r["runner_transcript_path"].is_string(), "{r}");
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let junit = std::fs::read_to_string(out.junit()).expect("JUnit written");
    assert!(junit.contains("api_error"), "{junit}");
}

#[test]
fn huge_retry_after_from_anthropic_is_an_api_error() {
    for (header, value) in [
        ("retry-after", "99999999999999999999"),
        ("retry-after-ms", "1e300"),
    ] {
        let mock = MockAnthropic::start(vec![http_error(429).with_header(header, value)]);
        let repo = TestRepo::new();
        let out = OutDir::new();
        let spec = write_spec(repo.path(), "name: t\nprompt: hi\n");
        let run = exec(&mock, &repo, &out)
            .args([
                "--output-format",
                "json",
                "--junit",
                path_arg(&out.junit()),
                path_arg(&spec),
            ])
            .run();
        assert_gave_up_on_retry_after(&run, &out);
        assert_eq!(mock.requests().len(), 1, "{header}: not retried");
        mock.assert_clean();
    }
}

#[test]
fn huge_retry_after_from_an_openai_server_is_an_api_error() {
    for (header, value) in [
        ("retry-after", "99999999999999999999"),
        ("retry-after-ms", "1e300"),
    ] {
        let mock = MockOpenai::start(vec![oa_http_error(429).with_header(header, value)]);
        let repo = TestRepo::new();
        let out = OutDir::new();
        let spec = write_spec(
            repo.path(),
            "name: oa\nprompt: hi\nprovider: openai\nmodel: gpt-4o-mini\n",
        );
        let o = Runner::against(&mock)
            .current_dir(repo.path())
            .args(["exec", "--output-format", "json", "--transcript-dir"])
            .arg(out.transcripts())
            .arg("--junit")
            .arg(out.junit())
            .arg(&spec)
            .run();
        assert_gave_up_on_retry_after(&o, &out);
        mock.assert_clean();
    }
}

// ---------------------------------------------------------------------------------------------
// A broken or full stderr drops log lines; the run and its reports go on.

/// Wait for `child` at most `limit`; kill it (and fail) if it takes longer.
fn wait_at_most(mut child: std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for runner") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("runner still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A run with a tool call whose answer comes late, so runner logs long after it started.
fn slow_two_turns() -> Vec<MockTurn> {
    vec![
        Resp::new()
            .tool_use("toolu_1", "Read", json!({"file_path": "README.md"}))
            .turn()
            .delayed(Duration::from_millis(600)),
        text_turn("done").delayed(Duration::from_millis(300)),
    ]
}

fn assert_junit_success(out: &OutDir) {
    let junit = std::fs::read_to_string(out.junit()).expect("JUnit written");
    assert!(junit.contains("<testcase"), "{junit}");
    assert!(
        !junit.contains("<failure") && !junit.contains("<error"),
        "{junit}"
    );
}

#[test]
fn stderr_piped_into_a_reader_that_goes_away_does_not_crash_the_run() {
    use std::io::Read;
    let mock = MockAnthropic::start(slow_two_turns());
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: read the readme\n");
    // `runner exec … 2>&1 | head -c 50`
    let (mut reader, writer) = std::io::pipe().unwrap();
    let child = runner_std_cmd()
        .env("ANTHROPIC_BASE_URL", mock.url())
        .current_dir(repo.path())
        .arg("exec")
        .arg("--transcript-dir")
        .arg(out.transcripts())
        .arg("--junit")
        .arg(out.junit())
        .arg(&spec)
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    let mut head = [0u8; 50];
    reader.read_exact(&mut head).unwrap();
    drop(reader);
    let status = wait_at_most(child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_junit_success(&out);
    assert_eq!(mock.requests().len(), 2);
    mock.assert_clean();
}

#[test]
fn stderr_on_a_full_device_does_not_abort_the_run() {
    let mock = MockAnthropic::start(slow_two_turns());
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: read the readme\n");
    // `runner exec … 2>/dev/full`
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = runner_std_cmd()
        .env("ANTHROPIC_BASE_URL", mock.url())
        .current_dir(repo.path())
        .arg("exec")
        .args(["--output-format", "json", "--transcript-dir"])
        .arg(out.transcripts())
        .arg("--junit")
        .arg(out.junit())
        .arg(&spec)
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", o.status);
    let r = result_line(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(r["runner_outcome"], "success", "{r}");
    assert_junit_success(&out);
    mock.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// message_stop while a tool_use block is still open: an incomplete response, retried.

#[test]
fn a_tool_use_left_open_at_message_stop_is_retried_not_dropped() {
    let mut cut = Resp::new()
        .text("Listing.")
        .tool_use(
            "toolu_1",
            "Bash",
            json!({"command": "echo hi > marker.txt"}),
        )
        .build();
    let stop_of_tool = cut
        .iter()
        .position(|e| e.event == "content_block_stop" && e.data.contains("\"index\":1"))
        .expect("the tool_use block's stop");
    cut.remove(stop_of_tool);
    let mock = MockAnthropic::start(vec![
        MockTurn::Sse(cut),
        Resp::new()
            .text("Listing.")
            .tool_use(
                "toolu_2",
                "Bash",
                json!({"command": "echo hi > marker.txt"}),
            )
            .turn(),
        text_turn("done"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: t\nprompt: make the marker\npermissions:\n  mode: bypassPermissions\nretry:\n  base_delay: 1ms\n",
    );
    let run = exec(&mock, &repo, &out)
        .args(["--output-format", "json", path_arg(&spec)])
        .run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "success", "{r}");
    assert_eq!(mock.requests().len(), 3, "the cut response was retried");
    assert!(repo.exists("marker.txt"), "the tool call ran");
    // The second request answers the retried call, not the vanished one.
    assert!(mock.request(2).tool_result_text("toolu_2").is_some());
    assert!(mock.request(2).tool_result_text("toolu_1").is_none());
    let transcript = transcript_of(&r);
    let abandoned = events_of(&transcript, "system", Some("runner_attempt_abandoned"));
    assert_eq!(abandoned.len(), 1, "{transcript:#?}");
    assert!(
        abandoned[0].to_string().contains("still open"),
        "{}",
        abandoned[0]
    );
    mock.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// A `data:` line that is not JSON mid-stream is a corrupt stream: retried like a dropped one.

/// `events` with the data of the first `event` event cut to its first `keep` bytes.
fn corrupt_event(mut events: Vec<SseEvent>, event: &str, keep: usize) -> Vec<SseEvent> {
    let e = events
        .iter_mut()
        .find(|e| e.event == event)
        .unwrap_or_else(|| panic!("no {event} event"));
    e.data.truncate(keep);
    events
}

#[test]
fn a_corrupt_data_line_from_anthropic_is_retried() {
    let garbled = corrupt_event(
        Resp::new().text("partial answer").build(),
        "content_block_delta",
        30,
    );
    let mock = MockAnthropic::start(vec![MockTurn::Sse(garbled), text_turn("done")]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: t\nprompt: hi\nretry:\n  base_delay: 1ms\n",
    );
    let run = exec(&mock, &repo, &out)
        .args(["--output-format", "json", path_arg(&spec)])
        .run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "success", "{r}");
    assert_eq!(r["result"], "done");
    assert_eq!(mock.requests().len(), 2);
    // The same bookkeeping as a dropped stream: the attempt is recorded as abandoned.
    let transcript = transcript_of(&r);
    let abandoned = events_of(&transcript, "system", Some("runner_attempt_abandoned"));
    assert_eq!(abandoned.len(), 1, "{transcript:#?}");
    assert!(
        abandoned[0].to_string().contains("corrupt stream"),
        "{}",
        abandoned[0]
    );
    assert!(run.stderr.contains("retrying"), "{}", run.stderr);
    mock.assert_clean();
}

#[test]
fn a_corrupt_chunk_from_an_openai_server_is_retried() {
    let good = OaResp::new().text("partial answer").usage(Some((10, 3)));
    let mut chunks: Vec<String> = good
        .chunks()
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .collect();
    chunks[1] = format!("data: {}\n\n", &good.chunks()[1].to_string()[..20]);
    chunks.push("data: [DONE]\n\n".into());
    let mock = MockOpenai::start(vec![
        MockTurn::raw_sse(chunks.concat()),
        OaResp::new().text("done").usage(Some((10, 3))).turn(),
    ]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: oa\nprompt: hi\nprovider: openai\nmodel: gpt-4o-mini\nretry:\n  base_delay: 1ms\n",
    );
    let o = Runner::against(&mock)
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json"])
        .arg(&spec)
        .run();
    let stderr = o.stderr.clone();
    assert_eq!(o.code, Some(0), "{stderr}");
    let r = result_line(&o.stdout.clone());
    assert_eq!(r["runner_outcome"], "success", "{r}");
    assert_eq!(r["result"], "done");
    assert_eq!(mock.requests().len(), 2);
    mock.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Usage beyond any plausible count is the server's protocol error; counters never wrap.

#[test]
fn implausible_usage_is_an_api_error_not_a_wrapped_counter() {
    // 2 input + (2^64 - 1) output tokens used to wrap to a total of 1, so max_total_tokens
    // never stopped the run and the cost came out at 5.5e14 USD.
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Read", json!({"file_path": "README.md"}))
            .usage(2, u64::MAX)
            .turn(),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: t\nprompt: read\nmodel: claude-sonnet-4-5\nlimits:\n  max_total_tokens: 100000\n",
    );
    let run = exec(&mock, &repo, &out)
        .args(["--output-format", "json", path_arg(&spec)])
        .run();
    run.expect_code(4);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "api_error", "{r}");
    let errors = r["errors"].to_string();
    assert!(
        errors.contains("usage.output_tokens is 18446744073709551615")
            && errors.contains("beyond any plausible"),
        "{errors}"
    );
    // Nothing of the broken response was counted or run.
    assert_eq!(mock.requests().len(), 1);
    assert!(r["usage"]["output_tokens"].as_u64().unwrap() < 1000, "{r}");
    assert!(r["total_cost_usd"].as_f64().unwrap_or(0.0) < 1.0, "{r}");
    mock.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Deeply nested specs: a clear error at the place, quickly, blaming no aliases.

#[test]
fn a_deeply_nested_spec_is_refused_quickly_with_its_position() {
    let repo = TestRepo::new();
    let n = 100_000; // 200 KB of `[[[…]]]`: over a minute of parsing before the depth limit
    let spec = write_spec(
        repo.path(),
        &format!(
            "name: t\nprompt: hi\ntools: {}{}\n",
            "[".repeat(n),
            "]".repeat(n)
        ),
    );
    let start = Instant::now();
    let o = Runner::new().arg("validate").arg(&spec).run();
    let took = start.elapsed();
    let stderr = o.stderr.clone();
    assert_eq!(o.code, Some(2), "{stderr}");
    // The mapping is level 1, so the 64th `[` (column 8 + 63) is the 65th level.
    assert!(
        stderr.contains("task.yaml:3:71: the spec nests more than 64 levels deep here"),
        "{stderr}"
    );
    assert!(!stderr.contains("alias"), "no aliases to blame: {stderr}");
    assert!(took < Duration::from_secs(10), "took {took:?}");

    // An alias bomb is still called one.
    let bomb = write_spec_named(
        repo.path(),
        "bomb.yaml",
        "name: t\nprompt: hi\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
    );
    let o = Runner::new().arg("validate").arg(&bomb).run();
    let stderr = o.stderr.clone();
    assert_eq!(o.code, Some(2), "{stderr}");
    assert!(stderr.contains("aliases (`*name`)"), "{stderr}");

    // A megabyte of values is a data file, not a spec: refused before it is parsed.
    let many = write_spec_named(
        repo.path(),
        "many.yaml",
        &format!("name: t\nprompt: hi\nx: [{}1]\n", "1,".repeat(500_000)),
    );
    let start = Instant::now();
    let o = Runner::new().arg("validate").arg(&many).run();
    let took = start.elapsed();
    let stderr = o.stderr.clone();
    assert_eq!(o.code, Some(2), "{stderr}");
    assert!(
        stderr.contains("many.yaml:3:") && stderr.contains("more than 100000 values"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");

    // 64 levels are fine.
    let ok = write_spec_named(
        repo.path(),
        "ok.yaml",
        &format!(
            "name: t\nprompt: hi\nx: {}1{}\n",
            "[".repeat(63),
            "]".repeat(63)
        ),
    );
    let o = Runner::new().arg("validate").arg(&ok).run();
    let stderr = o.stderr.clone();
    assert!(!stderr.contains("nests more than"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// Prompt too long with nothing left to compact: one compaction call, then context_exhausted.

#[test]
fn a_task_too_long_for_a_llama_cpp_server_stops_after_one_compaction() {
    let too_long = || {
        MockTurn::Http {
        status: 400,
        body: json!({"error": {
            "code": 400,
            "message": "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 9000,
            "n_ctx": 8192
        }})
        .to_string(),
        headers: vec![],
    }
    };
    let mock = MockOpenai::start(vec![
        too_long(),
        OaResp::new().text("summary of nothing").turn(),
        too_long(),
    ]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: oa\nprompt: hi\nprovider: openai\nmodel: local-model\nretry:\n  base_delay: 1ms\n",
    );
    let o = Runner::against(&mock)
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json"])
        .arg(&spec)
        .run();
    let stderr = o.stderr.clone();
    assert_eq!(o.code, Some(3), "{stderr}");
    let r = result_line(&o.stdout.clone());
    assert_eq!(r["runner_outcome"], "context_exhausted", "{r}");
    assert!(
        r["errors"]
            .to_string()
            .contains("9000 tokens; the model takes at most 8192"),
        "{r}"
    );
    assert_eq!(mock.requests().len(), 3, "one compaction call, not three");
    mock.assert_clean();
}
// ---------------------------------------------------------------------------------------------
// A transcript saved with a UTF-8 byte order mark still resumes.

#[test]
fn a_transcript_with_a_byte_order_mark_resumes() {
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo one"})),
        text_turn("finished"),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: bom\nprompt: do the work\npermissions:\n  allow: [\"Bash(echo:*)\"]\nlimits:\n  max_turns: 1\n",
    );
    let first = exec(&mock, &repo, &out)
        .args(["--output-format", "json", path_arg(&spec)])
        .run();
    first.expect_code(3);
    let first = first.result();
    let path = first["runner_transcript_path"]
        .as_str()
        .unwrap()
        .to_string();
    let text = std::fs::read(&path).unwrap();
    let mut with_bom = b"\xef\xbb\xbf".to_vec();
    with_bom.extend_from_slice(&text);
    std::fs::write(&path, with_bom).unwrap();

    let o = Runner::against(&mock)
        .current_dir(repo.path())
        .args([
            "resume",
            &path,
            "--max-turns",
            "2",
            "--output-format",
            "json",
        ])
        .run();
    let stderr = o.stderr.clone();
    assert_eq!(o.code, Some(0), "{stderr}");
    assert!(!stderr.contains("not a runner transcript"), "{stderr}");
    let r = result_line(&o.stdout.clone());
    assert_eq!(r["runner_outcome"], "success", "{r}");
    assert_eq!(r["result"], "finished");
    assert_eq!(r["session_id"], first["session_id"]);
    mock.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// Messages that say what is allowed without contradicting themselves.

#[test]
fn a_zero_hook_timeout_is_refused_with_the_range_that_is_allowed() {
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: t\nprompt: hi\nhooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          command: \"true\"\n          timeout: 0\n",
    );
    let o = Runner::new()
        .current_dir(repo.path())
        .arg("exec")
        .arg(&spec)
        .run();
    let stderr = o.stderr.clone();
    assert_eq!(o.code, Some(2), "{stderr}");
    assert!(
        stderr.contains("hook timeout 0 must be more than 0 and at most 86400 seconds"),
        "{stderr}"
    );
    assert!(!stderr.contains("between 0 and"), "{stderr}");
}
