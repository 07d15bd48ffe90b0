//! End-to-end: Anthropic prompt-cache breakpoints (`cache_control`) as the mock receives them
//! from the real binary, and the spec's `prompt_caching: false`.

use crate::support::*;
use serde_json::{Value, json};

/// Every `cache_control` object in `v`, as the JSON paths' parents (for counting).
fn count_cache_control(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            usize::from(m.contains_key("cache_control"))
                + m.values().map(count_cache_control).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_cache_control).sum(),
        _ => 0,
    }
}

fn two_turns() -> Vec<MockTurn> {
    vec![
        Resp::new()
            .tool_use("toolu_1", "Read", json!({"file_path": "README.md"}))
            .turn(),
        text_turn("done"),
    ]
}

#[test]
fn breakpoints_on_system_last_tool_and_latest_message() {
    let mock = MockAnthropic::start(two_turns());
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: t\nprompt: read the readme\nmodel: claude-sonnet-4-5\n",
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    mock.assert_clean();
    let eph = json!({"type": "ephemeral"});
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    for (i, req) in reqs.iter().enumerate() {
        let b = &req.body;
        assert_eq!(count_cache_control(b), 3, "request {i}: {b}");
        let system = b["system"].as_array().expect("system as blocks");
        assert_eq!(system.len(), 1);
        assert_eq!(system[0]["cache_control"], eph);
        assert!(req.system_text().contains("No human is watching"));
        let tools = b["tools"].as_array().expect("tools");
        assert_eq!(tools.last().unwrap()["cache_control"], eph);
        let msgs = req.messages();
        let last = msgs.last().unwrap()["content"].as_array().unwrap();
        assert_eq!(last.last().unwrap()["cache_control"], eph, "request {i}");
    }
    // The breakpoint moved to the tool result; the first message, stored and resent,
    // carries none.
    let second = reqs[1].messages();
    assert_eq!(second.len(), 3);
    assert_eq!(count_cache_control(&second[0]), 0);
    assert_eq!(second[2]["content"][0]["type"], "tool_result");
    // Breakpoints exist only on the wire, never in the transcript.
    let transcript = transcript_of(&run.result());
    assert!(!transcript.is_empty());
    for r in &transcript {
        assert_eq!(count_cache_control(r), 0, "{r}");
    }
}

#[test]
fn prompt_caching_false_sends_no_breakpoints() {
    let mock = MockAnthropic::start(two_turns());
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: t\nprompt: read the readme\nmodel: claude-sonnet-4-5\nprompt_caching: false\n",
    );
    exec(&mock, &repo, &out).arg(&spec).run().expect_code(0);
    mock.assert_clean();
    for req in mock.requests() {
        assert_eq!(count_cache_control(&req.body), 0, "{}", req.body);
        assert!(req.body["system"].is_string());
    }
}
