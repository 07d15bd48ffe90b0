//! StreamJsonSink frames.

use std::sync::Arc;

use runner::events::{RunEvent, Sink};
use runner::report::stream_json::StreamJsonSink;
use serde_json::Value;

use crate::support::{Buf, counter, feed};
use runner_test_support::script;

fn frames(events: &[RunEvent]) -> (Vec<Value>, String) {
    let buf = Buf::default();
    let mut sink = StreamJsonSink::new(buf.shared(), Arc::new(script::redactor()))
        .with_uuid_source(counter("gen"));
    feed(&mut sink, events);
    (buf.lines(), buf.text())
}

#[test]
fn frames_follow_headless_protocol() {
    let (f, raw) = frames(&script::events());
    let kinds: Vec<(&str, Option<&str>)> = f
        .iter()
        .map(|v| (v["type"].as_str().unwrap(), v["subtype"].as_str()))
        .collect();
    // init; prompt not echoed; 2 streamed blocks; tool result; 1 streamed block; result.
    assert_eq!(
        kinds,
        vec![
            ("system", Some("init")),
            ("assistant", None),
            ("assistant", None),
            ("user", None),
            ("assistant", None),
            ("result", Some("success")),
        ]
    );
    assert!(!raw.contains(script::SECRET));
    assert!(raw.contains("[REDACTED:ANTHROPIC_API_KEY]"));
    for v in &f {
        assert_eq!(v["session_id"], script::SESSION);
        assert!(v["uuid"].as_str().is_some());
    }

    let init = &f[0];
    for key in [
        "cwd",
        "session_id",
        "tools",
        "mcp_servers",
        "model",
        "permissionMode",
        "slash_commands",
        "apiKeySource",
        "output_style",
        "skills",
        "plugins",
        "uuid",
    ] {
        assert!(init.get(key).is_some(), "init lacks {key}");
    }
    assert_eq!(init["tools"], serde_json::json!(["Read"]));
    assert_eq!(init["apiKeySource"], "ANTHROPIC_API_KEY");
    assert_eq!(init["permissionMode"], "dontAsk");
    assert_eq!(init["runner_version"], "0.1.0");

    for a in [&f[1], &f[2], &f[4]] {
        assert_eq!(a["message"]["stop_reason"], Value::Null);
        assert_eq!(a["message"]["content"].as_array().unwrap().len(), 1);
        assert_eq!(a["parent_tool_use_id"], Value::Null);
        assert_eq!(a["message"]["role"], "assistant");
    }
    assert_eq!(f[1]["uuid"], "a-0001");
    assert_eq!(f[2]["message"]["content"][0]["type"], "tool_use");
    assert_eq!(f[2]["request_id"], "req_01");

    let user = &f[3];
    assert_eq!(user["message"]["content"][0]["tool_use_id"], "toolu_01");
    assert_eq!(user["tool_use_result"]["file"]["numLines"], 1);

    let res = &f[5];
    assert_eq!(res["is_error"], false);
    assert_eq!(res["result"], "Fixed the typo: `teh` → `the`.");
    assert_eq!(res["terminal_reason"], "completed");
    assert_eq!(res["runner_outcome"], "success");
    assert_eq!(res["runner_exit_code"], 0);
}

#[test]
fn later_user_texts_and_off_chain_events_are_framed() {
    let mut events = script::events();
    events.truncate(2); // init + prompt
    events.extend(script::off_chain_events());
    let (f, _) = frames(&events);
    let kinds: Vec<(&str, Option<&str>)> = f
        .iter()
        .map(|v| (v["type"].as_str().unwrap(), v["subtype"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("system", Some("init")),
            ("system", Some("runner_attempt_abandoned")),
            ("system", Some("permission_denied")),
            ("user", None),
        ]
    );
    assert_eq!(f[1]["attempt"], 1);
    assert_eq!(f[1]["streamed_uuids"][0], "a-0009");
    assert_eq!(f[2]["tool_name"], "Bash");
    assert_eq!(f[2]["tool_use_id"], "toolu_02");
    assert_eq!(
        f[3]["message"]["content"],
        "Please also update CHANGELOG.md"
    );
    assert_eq!(f[3]["uuid"], "u-0002");
}

#[test]
fn two_tasks_interleave_without_tearing() {
    let buf = Buf::default();
    let out = buf.shared();
    let handles: Vec<_> = (0..2)
        .map(|n| {
            let out = out.clone();
            std::thread::spawn(move || {
                let mut events = script::events();
                let session = format!("session-{n}");
                if let RunEvent::Init(info) = &mut events[0] {
                    info.session_id = session.clone();
                }
                for _ in 0..50 {
                    // One sink per run, as for one task run each.
                    let mut sink = StreamJsonSink::new(out.clone(), Arc::new(script::redactor()));
                    for e in &events {
                        sink.emit(e).unwrap();
                    }
                }
                session
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // Every line parses (nothing torn), and each session's frame order is intact.
    let lines = buf.lines();
    assert_eq!(lines.len(), 2 * 50 * 6);
    for n in 0..2 {
        let session = format!("session-{n}");
        let types: Vec<&str> = lines
            .iter()
            .filter(|v| v["session_id"] == session.as_str() && v["type"] != "result")
            .map(|v| v["type"].as_str().unwrap())
            .collect();
        let one = ["system", "assistant", "assistant", "user", "assistant"];
        assert_eq!(types.len(), 50 * one.len());
        for chunk in types.chunks(one.len()) {
            assert_eq!(chunk, one);
        }
    }
}
