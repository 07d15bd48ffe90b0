//! End-to-end: Anthropic prompt-cache breakpoints (`cache_control`) as the mock receives them
//! from the real binary, what they cost under a model of the API's cache
//! ([`PromptCache`]), and the spec's `prompt_caching: false`.

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

/// Three turns of eleven parallel Reads, then the answer: each turn adds 22 blocks, more than
/// the API's cache lookup reaches back from the last block. The previous request's last block
/// carries the fourth breakpoint, so every request reads the previous one's cache write and
/// the run costs what an unlimited lookup would.
#[test]
fn wide_turns_keep_reading_the_previous_cache_write() {
    let repo = TestRepo::new();
    let files: Vec<String> = (0..11)
        .map(|i| {
            let rel = format!("src/f{i}.txt");
            repo.write(&rel, &format!("line of file {i}\n").repeat(150));
            repo.path().join(rel).display().to_string()
        })
        .collect();
    let reads = |turn: usize| {
        files
            .iter()
            .enumerate()
            .fold(Resp::new(), |r, (i, f)| {
                r.tool_use(
                    &format!("toolu_{turn}_{i}"),
                    "Read",
                    json!({"file_path": f}),
                )
            })
            .turn()
    };
    let mock = MockAnthropic::start(vec![reads(0), reads(1), reads(2), text_turn("done")]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: t\nprompt: read every file, three times\nmodel: claude-sonnet-4-5\n",
    );
    exec(&mock, &repo, &out).arg(&spec).run().expect_code(0);
    mock.assert_clean();
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    let bodies: Vec<&Value> = reqs.iter().map(|r| &r.body).collect();
    let api = total_cost(bodies.iter().copied(), API_LOOKBACK_BLOCKS);
    let ideal = total_cost(bodies.iter().copied(), usize::MAX);
    let ratio = api / ideal;
    eprintln!("3 turns of 11 parallel Reads: cost {api:.0} vs {ideal:.0} ideal: {ratio:.2}x");
    assert!(ratio < 1.01, "the cache missed: {ratio:.2}x the ideal cost");
    let eph = json!({"type": "ephemeral"});
    for (i, req) in reqs.iter().enumerate().skip(1) {
        assert_eq!(count_cache_control(&req.body), 4, "request {i}");
        // The bridge: the last block of the message the previous request ended with.
        let msgs = req.messages();
        let prev_last = msgs[msgs.len() - 3]["content"].as_array().unwrap();
        assert_eq!(
            prev_last.last().unwrap()["cache_control"],
            eph,
            "request {i}"
        );
    }
}

#[test]
fn the_cache_model_bills_reads_writes_and_misses() {
    let body = |msgs: Value| json!({"system": [{"type": "text", "text": "s".repeat(400), "cache_control": {"type": "ephemeral"}}], "messages": msgs});
    let text = |t: &str, cached: bool| {
        let mut b = json!({"type": "text", "text": t});
        if cached {
            b["cache_control"] = json!({"type": "ephemeral"});
        }
        b
    };
    let first = body(json!([{"role": "user", "content": [text(&"a".repeat(400), true)]}]));
    let mut cache = PromptCache::new(API_LOOKBACK_BLOCKS);
    let b = cache.bill(&first);
    assert_eq!((b.cache_read, b.input), (0, 0));
    assert!(b.cache_write > 200);
    // The same request again: all read.
    let again = cache.bill(&first);
    assert_eq!((again.cache_read, again.cache_write), (b.cache_write, 0));
    // 25 more blocks, breakpoint on the last: the lookup cannot reach the first write; only
    // the system prompt's is found.
    let mut content = vec![text(&"a".repeat(400), false)];
    content.extend((0..24).map(|i| text(&format!("block {i}"), false)));
    content.push(text("end", true));
    let wide = body(json!([{"role": "user", "content": content}]));
    let w = PromptCache::new(API_LOOKBACK_BLOCKS).bill(&wide);
    let mut warm = PromptCache::new(API_LOOKBACK_BLOCKS);
    warm.bill(&first);
    let miss = warm.bill(&wide);
    assert!(
        miss.cache_read > 0 && miss.cache_read < b.cache_write,
        "{miss:?}"
    );
    let mut ideal = PromptCache::new(usize::MAX);
    ideal.bill(&first);
    let hit = ideal.bill(&wide);
    assert_eq!(hit.cache_read, b.cache_write);
    assert!(hit.cost() < miss.cost() && miss.cost() < w.cost() + 1.0);
}
