//! Micro-benchmarks (a `harness = false` bench; run with `cargo bench --bench micro`).
//!
//! - SSE parse + block assembly throughput on the recorded streams in tests/fixtures/sse/ and
//!   on a large synthetic stream (the path `AnthropicProvider` uses: `wire::event_stream` over
//!   a byte stream, then `Assembler`);
//! - normalize-for-API (and building + serializing the request body) on a 200-message
//!   conversation;
//! - transcript append per record (`TranscriptSink`);
//! - JUnit rendering and writing for 1,000 tasks;
//! - opening a repository as runner's git work does (recorded git directory and settings,
//!   `runner::git::open_recorded`) against a plain `git2::Repository::open`;
//! - redaction of a 10 MB tool output with 10 secrets (every form, src/redact/);
//! - Bedrock's event-stream decoding + assembly (`bedrock::frames::event_stream`) on the
//!   synthetic stream re-framed as Bedrock sends it, against the same events as SSE.
//!
//! The permission engine and the sandbox have benchmarks of their own, in their crates:
//! `cargo bench -p runner-policy` and `cargo bench -p runner-exec`.
//!
//! Each figure is the median per-iteration time over several samples. Pass a substring as the
//! first argument to run only the matching groups (`cargo bench --bench micro -- sse`).

// Test and benchmark code may unwrap, panic and print (the library may not: Cargo.toml [lints]).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

#[path = "common/mod.rs"]
mod common;
#[path = "common/cpu.rs"]
mod cpu;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};

use common::{Table, fmt_dur, time_per_iter};
use cpu::thread_cpu;
use runner::agent::normalize::normalize;
use runner::events::{RunEvent, RunResult, Sink};
use runner::model::anthropic::wire::event_stream;
use runner::model::anthropic::{RequestBody, request_body};
use runner::model::assembler::Assembler;
use runner::model::{ContentBlock, Message, ModelRequest, Role};
use runner::outcome::{Outcome, OutcomeKind};
use runner::redact::Redactor;
use runner::transcript::TranscriptSink;
use runner_test_support::script;

const SAMPLES: usize = 7;
const TARGET: Duration = Duration::from_millis(200);

fn main() {
    // `cargo bench` passes `--bench`; the first other argument filters groups.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let want = |g: &str| filter.as_deref().is_none_or(|f| g.contains(f));
    println!(
        "runner micro-benchmarks: median of {SAMPLES} samples of ~{} ms each\n",
        TARGET.as_millis()
    );
    if want("sse") {
        bench_sse();
    }
    if want("normalize") {
        bench_normalize();
    }
    if want("transcript") {
        bench_transcript();
    }
    if want("junit") {
        bench_junit();
    }
    if want("git") {
        bench_git_open();
    }
    if want("redact") {
        bench_redact();
    }
    if want("bedrock") {
        bench_bedrock();
    }
}

// ---------------------------------------------------------------- bedrock

/// The synthetic stream's events as Bedrock frames them: one event-stream `chunk` message per
/// event, its JSON base64 in `{"bytes": …}`.
fn bedrock_body(sse: &str) -> Vec<u8> {
    use aws_smithy_types::event_stream::{Header, HeaderValue, Message as Frame};
    use base64::Engine;
    let header =
        |k: &str, v: &str| Header::new(k.to_string(), HeaderValue::String(v.to_string().into()));
    let mut out = Vec::new();
    for event in sse.split("\n\n") {
        let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) else {
            continue;
        };
        let payload = json!({"bytes": base64::engine::general_purpose::STANDARD.encode(data)});
        let frame = Frame::new(Bytes::from(payload.to_string()))
            .add_header(header(":message-type", "event"))
            .add_header(header(":event-type", "chunk"))
            .add_header(header(":content-type", "application/json"));
        aws_smithy_eventstream::frame::write_message_to(&frame, &mut out).unwrap();
    }
    out
}

fn bench_bedrock() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let sse = synthetic_stream();
    let body = bedrock_body(&sse);
    let mut t = Table::new(&[
        "same events as",
        "bytes",
        "chunking",
        "median / stream",
        "MB/s of events",
    ]);
    for chunk in [16 * 1024, 1500] {
        let label = if chunk == 1500 { "1500-byte" } else { "16 KiB" };
        let sse_chunks = split(sse.as_bytes(), chunk);
        let (ds, _) = time_per_iter(SAMPLES, TARGET, || {
            black_box(parse_and_assemble(&rt, &sse_chunks));
        });
        let frame_chunks = split(&body, chunk);
        let (db, _) = time_per_iter(SAMPLES, TARGET, || {
            black_box(rt.block_on(async {
                let stream = futures_util::stream::iter(
                    frame_chunks
                        .iter()
                        .cloned()
                        .map(Ok::<Bytes, std::io::Error>)
                        .collect::<Vec<_>>(),
                );
                let mut events =
                    runner::model::bedrock::frames::event_stream(stream, Duration::from_secs(60));
                let mut asm = Assembler::new();
                while let Some(Ok(ev)) = events.next().await {
                    if asm.push(ev).is_err() {
                        break;
                    }
                }
                asm.finish(None).is_ok()
            }));
        });
        let mb = sse.len() as f64 / 1e6;
        t.row(vec![
            "SSE (Anthropic, Vertex AI)".into(),
            sse.len().to_string(),
            label.into(),
            fmt_dur(ds),
            format!("{:.1}", mb / ds.as_secs_f64()),
        ]);
        t.row(vec![
            "event-stream (Bedrock)".into(),
            body.len().to_string(),
            label.into(),
            fmt_dur(db),
            format!("{:.1}", mb / db.as_secs_f64()),
        ]);
    }
    println!("{}", t.render());
}

// ---------------------------------------------------------------- git open

/// A repository opened the way runner's own git work opens it (by the recorded git directory,
/// with a configuration of the recorded settings only), against libgit2's own open.
fn bench_git_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "user.name", "bench"]);
    git(&["config", "user.email", "bench@example.invalid"]);
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "init"]);
    runner::git::open_recorded(root).unwrap();
    let mut t = Table::new(&["open a repository", "median / open"]);
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(git2::Repository::open(root).unwrap());
    });
    t.row(vec!["git2::Repository::open".into(), fmt_dur(d)]);
    let (d2, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(runner::git::open_recorded(root).unwrap());
    });
    t.row(vec![
        "runner::git::open_recorded (pinned)".into(),
        fmt_dur(d2),
    ]);
    println!("{}", t.render());
}

// ---------------------------------------------------------------- SSE + assembly

/// Parse `body` (split into `chunk`-byte pieces, as the network would deliver it) and
/// assemble the blocks; returns the number of blocks (so nothing is optimized away).
fn parse_and_assemble(rt: &tokio::runtime::Runtime, chunks: &[Bytes]) -> usize {
    rt.block_on(async {
        let stream = futures_util::stream::iter(
            chunks
                .iter()
                .cloned()
                .map(Ok::<Bytes, std::io::Error>)
                .collect::<Vec<_>>(),
        );
        let mut events = event_stream(stream, Duration::from_secs(60));
        let mut asm = Assembler::new();
        let mut blocks = 0;
        while let Some(item) = events.next().await {
            let Ok(ev) = item else { break };
            match asm.push(ev) {
                Ok(Some(_)) => blocks += 1,
                Ok(None) => {}
                Err(_) => break,
            }
        }
        let _ = black_box(asm.finish(None));
        blocks
    })
}

fn split(body: &[u8], chunk: usize) -> Vec<Bytes> {
    body.chunks(chunk.max(1))
        .map(Bytes::copy_from_slice)
        .collect()
}

/// A long response: thinking, ~2 MB of text in ~20-byte deltas (as the API sends them), and a
/// tool_use whose ~300 KB JSON input arrives in ~40-byte partial_json pieces.
fn synthetic_stream() -> String {
    let mut s = String::new();
    let ev = |s: &mut String, name: &str, data: Value| {
        s.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    ev(
        &mut s,
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_synthetic","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":1}}}),
    );
    ev(
        &mut s,
        "content_block_start",
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
    );
    for i in 0..2000 {
        ev(
            &mut s,
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":format!("step {i}: consider the files. ")}}),
        );
    }
    ev(
        &mut s,
        "content_block_delta",
        json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM".repeat(20)}}),
    );
    ev(
        &mut s,
        "content_block_stop",
        json!({"type":"content_block_stop","index":0}),
    );
    ev(
        &mut s,
        "content_block_start",
        json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}),
    );
    let words = [
        "The ",
        "function ",
        "returns ",
        "an ",
        "error ",
        "when ",
        "the ",
        "input ",
        "is ",
        "empty; ",
        "fix ",
        "it ",
        "by ",
        "checking ",
        "`len()` ",
        "first. ",
        "日本語 ",
        "✓ ",
    ];
    for i in 0..20_000 {
        ev(
            &mut s,
            "content_block_delta",
            json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":format!("{}{}", words[i % words.len()], words[(i * 7) % words.len()])}}),
        );
        if i % 1000 == 0 {
            ev(&mut s, "ping", json!({"type":"ping"}));
        }
    }
    ev(
        &mut s,
        "content_block_stop",
        json!({"type":"content_block_stop","index":1}),
    );
    ev(
        &mut s,
        "content_block_start",
        json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_synthetic","name":"Write","input":{}}}),
    );
    let content: String = (0..6000)
        .map(|i| format!("    let x{i} = compute({i}, \"q\\\"uoted\");\n"))
        .collect();
    let input = json!({"file_path": "/work/repo/src/generated.rs", "content": content}).to_string();
    let bytes = input.as_bytes();
    let mut off = 0;
    while off < bytes.len() {
        let mut end = (off + 40).min(bytes.len());
        while !input.is_char_boundary(end) {
            end += 1;
        }
        ev(
            &mut s,
            "content_block_delta",
            json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":&input[off..end]}}),
        );
        off = end;
    }
    ev(
        &mut s,
        "content_block_stop",
        json!({"type":"content_block_stop","index":2}),
    );
    ev(
        &mut s,
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":90000}}),
    );
    ev(&mut s, "message_stop", json!({"type":"message_stop"}));
    s
}

fn bench_sse() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sse");
    let mut fixtures: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/sse")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sse"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    fixtures.sort();

    let mut t = Table::new(&[
        "SSE parse + assembly",
        "bytes",
        "chunking",
        "median / stream",
        "MB/s",
    ]);
    let mut row = |name: &str, body: &[u8], chunk: usize, label: &str| {
        let chunks = split(body, chunk);
        let (d, _) = time_per_iter(SAMPLES, TARGET, || {
            black_box(parse_and_assemble(&rt, &chunks));
        });
        let mbps = body.len() as f64 / d.as_secs_f64() / 1e6;
        t.row(vec![
            name.to_string(),
            body.len().to_string(),
            label.to_string(),
            fmt_dur(d),
            format!("{mbps:.1}"),
        ]);
        (body.len(), d)
    };
    // All fixtures, one after the other, as whole bodies and in 7-byte network chunks.
    let mut total_bytes = 0usize;
    let mut total_time = Duration::ZERO;
    for (name, body) in &fixtures {
        let (b, d) = row(name, body, usize::MAX, "1 chunk");
        total_bytes += b;
        total_time += d;
    }
    let mut total_7 = Duration::ZERO;
    for (name, body) in &fixtures {
        let (_, d) = row(name, body, 7, "7-byte");
        total_7 += d;
    }
    let synthetic = synthetic_stream();
    let (sb, sd) = row(
        "synthetic (thinking+text+tool_use)",
        synthetic.as_bytes(),
        16 * 1024,
        "16 KiB",
    );
    println!("{}", t.render());
    println!(
        "fixtures total: {total_bytes} bytes in {} per pass = {:.1} MB/s (1 chunk), {:.1} MB/s (7-byte chunks)",
        fmt_dur(total_time),
        total_bytes as f64 / total_time.as_secs_f64() / 1e6,
        total_bytes as f64 / total_7.as_secs_f64() / 1e6
    );
    println!(
        "synthetic: {:.1} MB in {} = {:.1} MB/s\n",
        sb as f64 / 1e6,
        fmt_dur(sd),
        sb as f64 / sd.as_secs_f64() / 1e6
    );
}

// ---------------------------------------------------------------- normalize

/// A 200-message conversation: the prompt, then 99 rounds of assistant text + tool_use and a
/// user tool_result of ~2 KB (file contents), plus a final assistant text.
fn conversation() -> Vec<Message> {
    let mut m = vec![Message::user_text(
        "Fix the failing test in src/parser.rs and make sure cargo test passes.",
    )];
    let file: String = (0..40)
        .map(|i| format!("{i:>6}\tfn item_{i}() -> Result<(), Error> {{ todo!() }}\n"))
        .collect();
    for i in 0..99 {
        m.push(Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text(format!("Let me look at file number {i} to find the bug.")),
                ContentBlock::ToolUse {
                    id: format!("toolu_{i:04}"),
                    name: "Read".into(),
                    input: json!({"file_path": format!("/work/repo/src/mod_{i}.rs")}),
                },
            ],
            id: Some(format!("msg_{i:04}")),
        });
        m.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: format!("toolu_{i:04}"),
                content: file.clone(),
                is_error: false,
            }],
            id: None,
        });
    }
    m.push(Message {
        role: Role::Assistant,
        content: vec![ContentBlock::text("Done: the test passes now.")],
        id: Some("msg_last".into()),
    });
    m
}

fn bench_normalize() {
    let msgs = conversation();
    assert_eq!(msgs.len(), 200);
    let registry =
        runner::tools::Registry::from_names(&["Read", "Write", "Edit", "Bash", "Glob", "Grep"])
            .expect("registry");
    let req = ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: "You are runner, an unattended coding agent.".repeat(20),
        messages: normalize(&msgs),
        tools: registry.specs(),
        max_tokens: 16000,
        thinking: None,
    };
    let body_len = RequestBody::new(&req, true).to_vec().unwrap().len();

    let mut t = Table::new(&[
        "per-turn request work (200 messages)",
        "median / call",
        "MB/s of body",
    ]);
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(normalize(black_box(&msgs)));
    });
    t.row(vec!["normalize()".into(), fmt_dur(d), "".into()]);
    let (d2, _) = time_per_iter(SAMPLES, TARGET, || {
        let v = request_body(black_box(&req), true);
        black_box(serde_json::to_vec(&v).unwrap());
    });
    t.row(vec![
        "request_body() Value tree + to_vec (the old way)".into(),
        fmt_dur(d2),
        format!("{:.0}", body_len as f64 / d2.as_secs_f64() / 1e6),
    ]);
    let (d3, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(RequestBody::new(black_box(&req), true).to_vec().unwrap());
    });
    t.row(vec![
        "RequestBody::to_vec (typed, what is sent)".into(),
        fmt_dur(d3),
        format!("{:.0}", body_len as f64 / d3.as_secs_f64() / 1e6),
    ]);
    let (d4, _) = time_per_iter(SAMPLES, TARGET, || {
        let r = ModelRequest {
            model: req.model.clone(),
            system: req.system.clone(),
            messages: normalize(black_box(&msgs)),
            tools: registry.specs(),
            max_tokens: 16000,
            thinking: None,
        };
        black_box(RequestBody::new(&r, true).to_vec().unwrap());
    });
    t.row(vec![
        "whole request (normalize + shared specs + to_vec)".into(),
        fmt_dur(d4),
        format!("{:.0}", body_len as f64 / d4.as_secs_f64() / 1e6),
    ]);
    println!("{}", t.render());
    println!("request body: {body_len} bytes\n");
}

// ---------------------------------------------------------------- transcript

fn bench_transcript() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("session.jsonl");
    let redactor = Arc::new(Redactor::new(vec![(
        "ANTHROPIC_API_KEY".into(),
        script::SECRET.into(),
    )]));
    let mut sink = TranscriptSink::create(&path, redactor).expect("transcript");
    let events: Vec<RunEvent> = script::events();
    // How many records one pass over the scripted events writes.
    let before = std::fs::read(&path).map(|b| b.len()).unwrap_or(0);
    for ev in &events {
        sink.emit(ev).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let records = text[before..].lines().count();
    let bytes = text.len() - before;
    // A large tool result (a 64 KB file read), the worst common record.
    let big = RunEvent::ToolResult {
        uuid: "t-big".into(),
        parent_uuid: Some("a-0002".into()),
        source_assistant_uuid: "a-0002".into(),
        block: ContentBlock::ToolResult {
            tool_use_id: "toolu_01".into(),
            content: "     1\tsome line of source code that is moderately long\n".repeat(1200),
            is_error: false,
        },
        tool_use_result: Some(json!({"type": "text", "file": {"content": "x".repeat(64 * 1024)}})),
    };

    let mut t = Table::new(&["transcript append", "median / record", "records/s"]);
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        for ev in &events {
            sink.emit(ev).unwrap();
        }
    });
    let per = d / records as u32;
    t.row(vec![
        format!("scripted run ({records} records, {bytes} bytes/pass)"),
        fmt_dur(per),
        format!("{:.0}", 1.0 / per.as_secs_f64()),
    ]);
    let (d2, _) = time_per_iter(SAMPLES, TARGET, || {
        sink.emit(&big).unwrap();
    });
    t.row(vec![
        "128 KB tool_result record".into(),
        fmt_dur(d2),
        format!("{:.0}", 1.0 / d2.as_secs_f64()),
    ]);
    println!("{}", t.render());
}

// ---------------------------------------------------------------- JUnit

fn bench_junit() {
    let kinds = [
        OutcomeKind::Success,
        OutcomeKind::ChecksFailed,
        OutcomeKind::ApiError,
        OutcomeKind::MaxTurns,
    ];
    let results: Vec<RunResult> = (0..1000)
        .map(|i| {
            let mut r = script::result(Outcome::new(kinds[i % kinds.len()], "scripted outcome"));
            r.task_name = format!("task-{i:04}");
            r.spec_path = PathBuf::from(format!("tasks/task-{i:04}.yaml"));
            r.result_text = format!("Result of task {i}: <fixed> & \"done\"\n").repeat(5);
            r
        })
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("junit.xml");
    let xml_len = runner::report::junit::render_junit(&results, "bench-host").len();
    let mut t = Table::new(&["JUnit, 1,000 tasks", "bytes", "median / report"]);
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(runner::report::junit::render_junit(
            black_box(&results),
            "bench-host",
        ));
    });
    t.row(vec!["render_junit".into(), xml_len.to_string(), fmt_dur(d)]);
    let (d2, _) = time_per_iter(SAMPLES, TARGET, || {
        runner::report::junit::write_junit(&path, black_box(&results)).unwrap();
    });
    t.row(vec![
        "write_junit (render + file)".into(),
        xml_len.to_string(),
        fmt_dur(d2),
    ]);
    println!("{}", t.render());
}

// ---------------------------------------------------------------- redaction

/// 10 secrets of the usual shapes: API keys and tokens of 20 to 64 characters, a password, and
/// a 3-line PEM-like value.
fn bench_secrets() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = vec![
        (
            "ANTHROPIC_API_KEY".into(),
            format!("sk-ant-api03-{}", "Zq9xW2vB7nK4mP1s".repeat(4)),
        ),
        (
            "GITHUB_TOKEN".into(),
            "ghs_16C7e42F292c6912E7710c838347Ae178B4a".into(),
        ),
        (
            "NPM_TOKEN".into(),
            "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8".into(),
        ),
        ("DB_PASSWORD".into(), "correct-horse-battery".into()),
        (
            "AWS_SECRET".into(),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
        ),
        (
            "SLACK_HOOK".into(),
            "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX".into(),
        ),
        (
            "JWT".into(),
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N".into(),
        ),
        ("SHORT_PIN".into(), "9f3k2".into()),
    ];
    v.push((
        "DEPLOY_KEY".into(),
        "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZH\n-----END KEY-----".into(),
    ));
    v.push((
        "SIGNING_SECRET".into(),
        "8f14e45fceea167a5a36dedd4bea2543".into(),
    ));
    v
}

/// About `size` bytes of command output: build logs, source lines, hashes, numbers, JSON.
fn bench_output(size: usize) -> String {
    let lines = [
        "   Compiling serde_json v1.0.154 (/home/ci/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde_json-1.0.154)\n",
        "test tools::bash::tests::long_output_is_truncated_and_spilled ... ok\n",
        "    let mut out = String::with_capacity(s.len()); // the text, redacted\n",
        "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 Author: CI <ci@example.com>\n",
        "{\"level\":\"info\",\"ts\":1733580000.123,\"msg\":\"request done\",\"status\":200,\"bytes\":18342}\n",
        "0000040   l   o   ,       w   o   r   l   d  \\n\n",
        "2026-12-07T07:00:01Z INFO fetched 1287 objects (4.2 MiB) in 312 ms from https://example.com/repo.git\n",
        "        assert_eq!(red.redact(\"x a b c\"), \"x a b c\"); // 104 101 108 108 111\n",
    ];
    let mut s = String::with_capacity(size + 200);
    let mut i = 0;
    while s.len() < size {
        s.push_str(lines[i % lines.len()]);
        i += 1;
    }
    s
}

fn bench_redact() {
    let secrets = bench_secrets();
    let mut t = Table::new(&["redaction (10 secrets, every form)", "median", "MB/s"]);
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(Redactor::new(black_box(secrets.clone())));
    });
    t.row(vec!["build the redactor".into(), fmt_dur(d), "-".into()]);
    let red = Redactor::new(secrets.clone());
    let clean = bench_output(10 << 20);
    let mb = clean.len() as f64 / 1e6;
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        let out = red.redact(black_box(&clean));
        assert!(matches!(out, std::borrow::Cow::Borrowed(_)));
    });
    t.row(vec![
        "10 MB output, no secret (common case)".into(),
        fmt_dur(d),
        format!("{:.0}", mb / d.as_secs_f64()),
    ]);
    // CPU time of this thread: what the wall clock shows on a loaded machine is the share of a
    // core the scheduler gave, not the work.
    let cpu = thread_cpu(|| {
        for _ in 0..5 {
            black_box(red.redact(black_box(&clean)));
        }
    }) / 5;
    t.row(vec![
        "  same, thread CPU time".into(),
        fmt_dur(cpu),
        format!("{:.0}", mb / cpu.as_secs_f64()),
    ]);
    // The same output with 100 occurrences in assorted forms.
    let mut dirty = clean.clone();
    let step = dirty.len() / 101;
    for k in (1..=100).rev() {
        let (_, v) = &secrets[k % secrets.len()];
        let form = match k % 4 {
            0 => v.clone(),
            1 => v.to_uppercase(),
            2 => v.bytes().map(|b| format!("{b:02x}")).collect(),
            _ => v.chars().rev().collect(),
        };
        let mut at = k * step;
        while !dirty.is_char_boundary(at) {
            at += 1;
        }
        dirty.insert_str(at, &format!(" {form} "));
    }
    let mb2 = dirty.len() as f64 / 1e6;
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        let out = red.redact(black_box(&dirty));
        assert!(matches!(out, std::borrow::Cow::Owned(_)));
    });
    t.row(vec![
        "10 MB output, 100 secrets in 4 forms".into(),
        fmt_dur(d),
        format!("{:.0}", mb2 / d.as_secs_f64()),
    ]);
    let cpu = thread_cpu(|| {
        for _ in 0..5 {
            black_box(red.redact(black_box(&dirty)));
        }
    }) / 5;
    t.row(vec![
        "  same, thread CPU time".into(),
        fmt_dur(cpu),
        format!("{:.0}", mb2 / cpu.as_secs_f64()),
    ]);
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(runner::redact::Redactor::default().redact(black_box(&clean)));
    });
    t.row(vec![
        "10 MB output, no secrets declared".into(),
        fmt_dur(d),
        format!("{:.0}", mb / d.as_secs_f64()),
    ]);
    println!("{}", t.render());
}
