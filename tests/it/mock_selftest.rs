//! Self-tests of `support`: every `MockTurn` variant over real HTTP (reqwest), the SSE
//! builders, the invariant checks, and the harness helpers.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use crate::support::*;
use futures_util::StreamExt;
use serde_json::{Value, json};

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("reqwest client")
}

/// A request body that satisfies every invariant: a tool round trip with thinking.
fn good_body() -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 4096,
        "stream": true,
        "system": "You are a test.",
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [{
            "name": "Read",
            "description": "Read a file",
            "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}
        }],
        "messages": [
            {"role": "user", "content": "read a.txt"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "b.txt"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "", "is_error": true},
                {"type": "text", "text": "carry on"}
            ]}
        ]
    })
}

async fn post(mock: &MockAnthropic, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}/v1/messages", mock.url()))
        .header("x-api-key", "sk-test")
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("send")
}

fn header<'a>(resp: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    resp.headers().get(name).and_then(|v| v.to_str().ok())
}

fn types(events: &[SseEvent]) -> Vec<String> {
    events.iter().map(|e| e.event.clone()).collect()
}

/// Concatenate the deltas of kind `field` (`text`, `partial_json`, ...) of block `index`.
fn deltas(events: &[SseEvent], index: u64, field: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.event == "content_block_delta")
        .filter_map(|e| e.json())
        .filter(|d| d["index"] == index)
        .filter_map(|d| d["delta"][field].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn sse_turn_is_well_framed_with_headers() {
    let resp_events = Resp::new()
        .text("Hello there, world")
        .tool_use("toolu_1", "Read", json!({"file_path": "/x/y.txt"}))
        .usage(42, 17)
        .build();
    let mock = MockAnthropic::start(vec![MockTurn::Sse(resp_events.clone())]);
    let resp = post(&mock, &good_body()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        header(&resp, "content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert_eq!(header(&resp, "request-id"), Some("req_mock_1"));
    let text = resp.text().await.expect("body");
    assert!(text.ends_with("\n\n"), "stream ends with a blank line");
    let got = parse_sse(&text);
    assert_eq!(got, resp_events);
    // Every event's data.type equals its event name, as the real API sends.
    for e in &got {
        assert_eq!(e.json().expect("json data")["type"], e.event.as_str());
    }
    assert_eq!(got.first().map(|e| e.event.as_str()), Some("message_start"));
    assert_eq!(got.last().map(|e| e.event.as_str()), Some("message_stop"));

    let text_deltas = deltas(&got, 0, "text");
    assert!(text_deltas.len() > 1, "text is split: {text_deltas:?}");
    assert_eq!(text_deltas.concat(), "Hello there, world");

    let json_deltas = deltas(&got, 1, "partial_json");
    assert_eq!(json_deltas[0], "", "first input_json_delta is empty");
    assert!(
        json_deltas.len() > 2,
        "input JSON is split: {json_deltas:?}"
    );
    let input: Value = serde_json::from_str(&json_deltas.concat()).expect("input json");
    assert_eq!(input, json!({"file_path": "/x/y.txt"}));

    let start1 = got[types(&got)
        .iter()
        .position(|t| t == "content_block_start")
        .unwrap()]
    .json()
    .unwrap();
    assert_eq!(start1["content_block"]["type"], "text");
    let md = got
        .iter()
        .find(|e| e.event == "message_delta")
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(md["delta"]["stop_reason"], "tool_use");
    assert_eq!(md["usage"]["output_tokens"], 17);
    assert_eq!(md["usage"]["input_tokens"], 42);

    let reqs = mock.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].header("X-Api-Key"), Some("sk-test"));
    assert_eq!(reqs[0].body["model"], "claude-test");
    assert_eq!(reqs[0].tool_names(), vec!["Read".to_string()]);
    assert_eq!(reqs[0].tool_result_text("toolu_1").as_deref(), Some("A"));
    assert_eq!(reqs[0].tool_results().len(), 2);
    assert_eq!(reqs[0].system_text(), "You are a test.");
    assert_eq!(reqs[0].message_text(0), "read a.txt");
    mock.assert_clean();
}

#[test]
fn builder_blocks_and_stop_reasons() {
    let ev = Resp::new()
        .thinking("let me think about it", "sig_abc")
        .ping()
        .text("ok")
        .redacted_thinking("opaque")
        .stop("max_tokens")
        .build();
    let t = types(&ev);
    assert_eq!(
        t,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    assert_eq!(deltas(&ev, 0, "thinking").concat(), "let me think about it");
    // The signature_delta comes last, just before content_block_stop.
    let sig = ev[5].json().unwrap();
    assert_eq!(
        sig["delta"],
        json!({"type": "signature_delta", "signature": "sig_abc"})
    );
    assert_eq!(ev[12].json().unwrap()["content_block"]["data"], "opaque");
    assert_eq!(ev[12].json().unwrap()["index"], 2);
    assert_eq!(ev[14].json().unwrap()["delta"]["stop_reason"], "max_tokens");
    // Default stop reasons.
    assert_eq!(Resp::new().text("x").stop_reason(), "end_turn");
    assert_eq!(
        Resp::new().tool_use("t", "Bash", json!({})).stop_reason(),
        "tool_use"
    );
    for r in ["end_turn", "refusal", "tool_use"] {
        assert_eq!(Resp::new().stop(r).stop_reason(), r);
    }
    assert!(
        !types(&Resp::new().text("x").unfinished().build()).contains(&"message_stop".to_string())
    );
    // Raw tool input fragments, and a block the output cap cut off.
    let cut = Resp::new()
        .tool_use_fragments("t", "Bash", &["", "{\"command\": "])
        .cut_off()
        .build();
    assert_eq!(deltas(&cut, 0, "partial_json"), ["", "{\"command\": "]);
    assert!(!types(&cut).contains(&"content_block_stop".to_string()));
    assert_eq!(cut[4].json().unwrap()["delta"]["stop_reason"], "tool_use");
    assert_eq!(
        error_event("overloaded_error", "Overloaded")
            .json()
            .unwrap(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    assert_eq!(
        ping().render(),
        "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    );
}

#[tokio::test]
async fn raw_sse_is_sent_verbatim() {
    let raw = "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: ping\ndata: {\"type\": \"ping\"}";
    let mock = MockAnthropic::start(vec![MockTurn::raw_sse(raw)]);
    let resp = post(&mock, &good_body()).await;
    assert_eq!(resp.status(), 200);
    assert!(
        header(&resp, "content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert_eq!(resp.text().await.unwrap(), raw);
    mock.assert_clean();
}

#[tokio::test]
async fn http_error_turns_carry_real_bodies_and_headers() {
    let cases = [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
    ];
    let mut script: Vec<MockTurn> = cases.iter().map(|(s, _)| http_error(*s)).collect();
    script.push(http_error(429).with_header("retry-after", "7"));
    script.push(http_error(429).without_header("retry-after"));
    let mock = MockAnthropic::start(script);
    for (status, ty) in cases {
        let resp = post(&mock, &good_body()).await;
        assert_eq!(resp.status().as_u16(), status);
        assert_eq!(header(&resp, "content-type"), Some("application/json"));
        let rid = header(&resp, "request-id").map(String::from);
        let retry_after = header(&resp, "retry-after").map(String::from);
        let body: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
        assert_eq!(body["error"]["type"], ty, "HTTP {status}");
        assert_eq!(
            rid.as_deref(),
            body["request_id"].as_str(),
            "request-id header mirrors the body (HTTP {status})"
        );
        assert_eq!(retry_after.is_some(), status == 429, "HTTP {status}");
    }
    assert_eq!(
        header(&post(&mock, &good_body()).await, "retry-after"),
        Some("7")
    );
    assert_eq!(
        header(&post(&mock, &good_body()).await, "retry-after"),
        None
    );
    // 401's recorded body has no request_id.
    assert!(
        !error_body(401).contains("request_id"),
        "fixture sanity: 401 body has no request_id"
    );
    mock.assert_clean();
}

#[tokio::test]
async fn drop_after_closes_the_connection_mid_body() {
    let events = Resp::new().text("partial answer").build();
    let mock = MockAnthropic::start(vec![MockTurn::DropAfter {
        events: events.clone(),
        after: 3,
    }]);
    let mut resp = post(&mock, &good_body()).await;
    assert_eq!(resp.status(), 200);
    let mut received = Vec::new();
    let err = loop {
        match resp.chunk().await {
            Ok(Some(c)) => received.extend_from_slice(&c),
            Ok(None) => panic!("body ended cleanly; expected an abrupt close"),
            Err(e) => break e,
        }
    };
    assert!(err.is_body() || err.is_decode(), "body error, got {err:?}");
    let got = parse_sse(&String::from_utf8(received).unwrap());
    assert_eq!(got, events[..3].to_vec());
    mock.assert_clean();
}

#[tokio::test]
async fn stall_goes_silent_then_resumes() {
    let events = Resp::new().text("slow").build();
    // Long enough that a loaded machine cannot deliver the rest before the silence check.
    let stall = Duration::from_millis(1500);
    let mock = MockAnthropic::start(vec![MockTurn::Stall {
        events: events.clone(),
        after: 1,
        stall,
    }]);
    let mut resp = post(&mock, &good_body()).await;
    let first = resp.chunk().await.unwrap().expect("first chunk");
    assert_eq!(
        parse_sse(std::str::from_utf8(&first).unwrap()),
        events[..1].to_vec()
    );
    // Silence: nothing arrives for a while (this, not the elapsed time, is the assertion: the
    // client's clock starts late on a loaded machine).
    assert!(
        tokio::time::timeout(Duration::from_millis(100), resp.chunk())
            .await
            .is_err(),
        "no bytes during the stall"
    );
    let mut rest = Vec::new();
    while let Some(c) = resp.chunk().await.unwrap() {
        rest.extend_from_slice(&c);
    }
    assert_eq!(
        parse_sse(&String::from_utf8(rest).unwrap()),
        events[1..].to_vec()
    );
    mock.assert_clean();
}

#[tokio::test]
async fn delay_holds_back_the_headers() {
    let delay = Duration::from_millis(300);
    let mock = MockAnthropic::start(vec![text_turn("late").delayed(delay)]);
    let t0 = Instant::now();
    let resp = post(&mock, &good_body()).await;
    assert!(
        t0.elapsed() >= delay,
        "headers came after {:?}",
        t0.elapsed()
    );
    assert_eq!(resp.status(), 200);
    let got = parse_sse(&resp.text().await.unwrap());
    assert_eq!(deltas(&got, 0, "text").concat(), "late");
    mock.assert_clean();
}

#[tokio::test]
async fn chunked_splits_bytes_and_reassembles() {
    let events = Resp::new()
        .text("héllo wörld ✓ — multibyte")
        .tool_use(
            "toolu_9",
            "Write",
            json!({"file_path": "ü.txt", "content": "→"}),
        )
        .build();
    let full = render_sse(&events);
    let mock = MockAnthropic::start(vec![
        MockTurn::Sse(events.clone()).chunked(7),
        MockTurn::Chunked {
            turn: Box::new(MockTurn::Sse(events.clone())),
            chunk: 5,
            gap: Duration::ZERO,
        },
        http_error(529).chunked(3),
    ]);

    let mut resp = post(&mock, &good_body()).await;
    let mut chunks = Vec::new();
    while let Some(c) = resp.chunk().await.unwrap() {
        chunks.push(c);
    }
    assert!(
        chunks.iter().all(|c| c.len() <= 7),
        "pieces of at most 7 bytes"
    );
    assert!(chunks.len() >= full.len() / 7, "{} pieces", chunks.len());
    assert_eq!(chunks.concat(), full.as_bytes());

    // Through an SSE decoder, as runner parses it.
    let resp = post(&mock, &good_body()).await;
    let decoded: Vec<SseEvent> = sse_stream::SseByteStream::new(resp.bytes_stream())
        .map(|r| {
            let s = r.expect("sse");
            SseEvent::raw(s.event.unwrap_or_default(), s.data.unwrap_or_default())
        })
        .collect()
        .await;
    assert_eq!(decoded, events);

    let resp = post(&mock, &good_body()).await;
    assert_eq!(resp.status(), 529);
    assert_eq!(resp.text().await.unwrap(), error_body(529).trim());
    mock.assert_clean();
}

#[tokio::test]
async fn request_beyond_script_is_500_and_a_violation() {
    let mock = MockAnthropic::start(vec![text_turn("one")]);
    assert_eq!(post(&mock, &good_body()).await.status(), 200);
    let resp = post(&mock, &good_body()).await;
    assert_eq!(resp.status(), 500);
    assert!(resp.text().await.unwrap().contains("beyond the script"));
    let v = mock.take_violations();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].code, "script_exhausted");
    assert_eq!(v[0].request, 2);
    assert_eq!(mock.requests()[1].turn, None);
    mock.assert_clean();
}

#[tokio::test]
async fn wrong_route_is_404_and_does_not_consume_a_turn() {
    let mock = MockAnthropic::start(vec![text_turn("one")]);
    let resp = client()
        .get(format!("{}/v1/models", mock.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert_eq!(mock.served(), 0);
    let codes: Vec<_> = mock.take_violations().iter().map(|v| v.code).collect();
    assert!(codes.contains(&"method_path"), "{codes:?}");
    assert_eq!(post(&mock, &good_body()).await.status(), 200);
    assert_eq!(mock.requests()[1].turn, Some(0));
    mock.assert_clean();
}

#[tokio::test]
async fn good_conversation_has_no_violations() {
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    post(&mock, &good_body()).await.text().await.unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    mock.assert_clean();
}

#[tokio::test]
async fn bad_conversations_are_recorded_over_http() {
    let mut unanswered = good_body();
    unanswered["messages"][2]["content"] =
        json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"}]);
    let consecutive_users = json!({"model": "m", "max_tokens": 10, "stream": true, "messages": [
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"}]});
    let empty_text = json!({"model": "m", "max_tokens": 10, "stream": true, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "  \n"}]}]});
    let mock = MockAnthropic::start(vec![text_turn("1"), text_turn("2"), text_turn("3")]);
    for body in [&unanswered, &consecutive_users, &empty_text] {
        // The mock still answers: the test side reports the violation.
        assert_eq!(post(&mock, body).await.status(), 200);
    }
    let v = mock.take_violations();
    let got: Vec<(usize, &str)> = v.iter().map(|v| (v.request, v.code)).collect();
    assert_eq!(
        got,
        [
            (1, "tool_use_unanswered"),
            (2, "roles_alternate"),
            (3, "empty_text")
        ],
        "{v:#?}"
    );
    assert!(v[0].message.contains("toolu_2"), "{}", v[0]);
    mock.assert_clean();
}

fn codes_for(body: &Value) -> Vec<&'static str> {
    let headers = vec![
        ("x-api-key".to_string(), "k".to_string()),
        ("anthropic-version".to_string(), "2023-06-01".to_string()),
        ("content-type".to_string(), "application/json".to_string()),
    ];
    check_request(1, "POST", "/v1/messages", &headers, Some(body))
        .into_iter()
        .map(|v| v.code)
        .collect()
}

#[test]
fn invariant_table() {
    assert_eq!(codes_for(&good_body()), Vec::<&str>::new());
    type Edit = fn(&mut Value);
    let cases: Vec<(&str, Edit)> = vec![
        ("model", |b| b["model"] = json!("")),
        ("max_tokens", |b| b["max_tokens"] = json!(0)),
        ("stream", |b| b["stream"] = json!(false)),
        ("messages", |b| b["messages"] = json!([])),
        ("thinking_budget", |b| {
            b["thinking"]["budget_tokens"] = json!(5000)
        }),
        ("first_user", |b| {
            b["messages"]
                .as_array_mut()
                .unwrap()
                .insert(0, json!({"role": "assistant", "content": "hi"}))
        }),
        ("role", |b| b["messages"][0]["role"] = json!("system")),
        ("empty_content", |b| b["messages"][0]["content"] = json!([])),
        ("empty_content", |b| b["messages"][0]["content"] = json!("")),
        ("empty_text", |b| {
            b["messages"][1]["content"][1]["text"] = json!("")
        }),
        ("tool_use_caller", |b| {
            b["messages"][1]["content"][2]["caller"] = json!({"type": "direct"})
        }),
        ("duplicate_tool_use_id", |b| {
            b["messages"][1]["content"][3]["id"] = json!("toolu_1");
            b["messages"][2]["content"][1]["tool_use_id"] = json!("toolu_1");
        }),
        ("tool_use_shape", |b| {
            b["messages"][1]["content"][2]["input"] = json!("x")
        }),
        ("thinking_signature", |b| {
            b["messages"][1]["content"][0]
                .as_object_mut()
                .unwrap()
                .remove("signature");
        }),
        ("tool_result_order", |b| {
            b["messages"][2]["content"]
                .as_array_mut()
                .unwrap()
                .swap(1, 2)
        }),
        ("orphan_tool_result", |b| {
            b["messages"][2]["content"][1]["tool_use_id"] = json!("toolu_404");
        }),
        ("tools_shape", |b| {
            b["tools"][0].as_object_mut().unwrap().remove("description");
        }),
        ("tools_shape", |b| {
            b["tools"][0]["input_schema"] = json!({"type": "string"})
        }),
        ("duplicate_tool", |b| {
            let t = b["tools"][0].clone();
            b["tools"].as_array_mut().unwrap().push(t)
        }),
        (
            "block_role",
            |b| {
                b["messages"][0]["content"] =
                    json!([{"type": "tool_use", "id": "x", "name": "n", "input": {}}])
            },
        ),
        ("system_shape", |b| {
            b["system"] = json!([{"type": "text", "text": ""}])
        }),
        ("tool_use_unanswered", |b| {
            b["messages"].as_array_mut().unwrap().pop();
        }),
    ];
    for (code, edit) in cases {
        let mut b = good_body();
        edit(&mut b);
        let got = codes_for(&b);
        assert!(got.contains(&code), "expected `{code}` in {got:?} for {b}");
    }
    // The unanswered tool_use also names the missing id; orphan results are caught too.
    let mut b = good_body();
    b["messages"][2]["content"][1]["tool_use_id"] = json!("toolu_404");
    let got = codes_for(&b);
    assert!(got.contains(&"tool_use_unanswered") && got.contains(&"orphan_tool_result"));

    // Headers and route.
    let v: Vec<_> = check_request(3, "GET", "/v1/complete", &[], Some(&good_body()))
        .into_iter()
        .map(|v| v.code)
        .collect();
    assert_eq!(
        v,
        [
            "method_path",
            "header_api_key",
            "header_version",
            "header_content_type"
        ]
    );
    assert_eq!(
        check_request(1, "POST", "/v1/messages", &[], None)
            .last()
            .map(|v| v.code),
        Some("body_json")
    );
}

#[tokio::test]
async fn options_ignore_and_no_invariants() {
    let body = json!({"model": "m", "max_tokens": 10, "stream": true, "messages": [
        {"role": "user", "content": [{"type": "text", "text": ""}]}]});
    let mock = MockAnthropic::start_with(
        vec![text_turn("x")],
        MockOptions::new().ignore("empty_text"),
    );
    post(&mock, &body).await;
    assert_eq!(mock.violations(), Vec::<String>::new());
    mock.assert_clean();

    let mock = MockAnthropic::start_with(vec![text_turn("x")], MockOptions::new().no_invariants());
    client()
        .post(format!("{}/v1/messages", mock.url()))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(mock.violations(), Vec::<String>::new());
    assert_eq!(mock.request(0).raw_body, "not json");
    assert_eq!(mock.request(0).body, Value::Null);
    mock.assert_clean();
}

#[test]
fn assert_clean_reports_unserved_turns() {
    let mock = MockAnthropic::start(vec![text_turn("never asked")]);
    let err = catch_unwind(AssertUnwindSafe(|| mock.assert_clean())).expect_err("must panic");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("unserved turns: served 0 of 1"), "{msg}");
}

#[test]
fn drop_with_unreported_violations_panics() {
    let err = catch_unwind(|| {
        let mock = MockAnthropic::start(vec![]);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let status = rt.block_on(async { post(&mock, &good_body()).await.status() });
        assert_eq!(status, 500);
        drop(mock);
    })
    .expect_err("drop must panic");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("script_exhausted"), "{msg}");
}

#[test]
fn works_from_a_plain_test_and_waits_for_requests() {
    let mock = MockAnthropic::start(vec![text_turn("hi")]);
    assert!(mock.url().starts_with("http://127.0.0.1:"));
    assert!(!mock.wait_for_requests(1, Duration::from_millis(20)));
    let url = mock.url();
    let t = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let r = client()
                .post(format!("{url}/v1/messages"))
                .header("x-api-key", "k")
                .header("anthropic-version", "2023-06-01")
                .header("content-type", "application/json")
                .body(good_body().to_string())
                .send()
                .await
                .unwrap();
            r.text().await.unwrap()
        })
    });
    assert!(mock.wait_for_requests(1, Duration::from_secs(10)));
    assert!(t.join().unwrap().contains("message_stop"));
    mock.assert_clean();
}

#[test]
fn test_repo_has_an_initial_commit_and_file_helpers() {
    let repo = TestRepo::new();
    assert!(repo.path().join(".git").is_dir());
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
    assert_eq!(repo.git(&["config", "user.name"]).trim(), "Runner Test");
    assert_eq!(repo.status(), "");
    let p = repo.write("src/deep/a.txt", "hello\n");
    assert!(p.is_absolute() && p.starts_with(repo.path()));
    assert_eq!(repo.read("src/deep/a.txt"), "hello\n");
    assert!(repo.status().contains("src/"));
    repo.commit_all("add a");
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "2");
    let spec = write_spec(repo.path(), "prompt: hi\n");
    assert_eq!(spec, repo.path().join("task.yaml"));
    assert_eq!(std::fs::read_to_string(spec).unwrap(), "prompt: hi\n");
}

#[test]
fn runner_command_environment_is_clean() {
    let cmd = runner_std_cmd();
    assert_eq!(
        std::path::Path::new(cmd.get_program()),
        std::path::Path::new(env!("CARGO_BIN_EXE_runner"))
    );
    let envs: Vec<(String, Option<String>)> = cmd
        .get_envs()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.map(|v| v.to_string_lossy().into_owned()),
            )
        })
        .collect();
    let get = |k: &str| envs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("ANTHROPIC_API_KEY"), Some(Some(DUMMY_API_KEY.into())));
    assert_eq!(
        get("ANTHROPIC_BASE_URL"),
        Some(Some("http://127.0.0.1:9".into()))
    );
    assert_eq!(
        get("RUNNER_STREAM_IDLE_TIMEOUT_MS"),
        Some(Some(TEST_STREAM_IDLE_TIMEOUT_MS.into()))
    );
    assert_eq!(get("NO_COLOR"), Some(Some("1".into())));
    assert_eq!(get("RUST_LOG"), Some(None), "RUST_LOG removed");
    assert_eq!(get("HTTPS_PROXY"), Some(None), "proxies removed");
    // Every inherited ANTHROPIC_/RUNNER_ variable is either removed or set by the harness.
    for (k, _) in std::env::vars() {
        if k.starts_with("ANTHROPIC_") || k.starts_with("RUNNER_") {
            assert!(get(&k).is_some(), "{k} leaks into the child");
        }
    }
}

#[test]
fn json_lines_and_event_filters() {
    let out = b"{\"type\":\"system\",\"subtype\":\"init\"}\n\n{\"type\":\"result\",\"subtype\":\"success\"}\n";
    let lines = json_lines(out);
    assert_eq!(lines.len(), 2);
    assert_eq!(events_of(&lines, "result", None).len(), 1);
    assert_eq!(events_of(&lines, "system", Some("init")).len(), 1);
    assert_eq!(events_of(&lines, "system", Some("other")).len(), 0);
    let err = catch_unwind(|| json_lines(b"{}\nnot json\n")).expect_err("bad line panics");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("line 2"), "{msg}");
}
