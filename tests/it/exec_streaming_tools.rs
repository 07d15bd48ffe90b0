//! End-to-end streaming tool execution (src/tools/streaming.rs): the real binary against the
//! mock Anthropic server, which holds the rest of a stream until it observes (or fails to
//! observe) a tool's effect. Ordering is proven by what the mock saw while it held the
//! stream, never by wall time.
//!
//! The read-only probe is `cat pipe`, a FIFO in the workdir: the policy classifies it as a
//! read-only Bash command, and while `cat` is in `open()` the FIFO has a reader, which the
//! mock detects by opening it for writing with `O_NONBLOCK` (that fails with ENXIO until a
//! reader is there).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::*;
use serde_json::{Value, json};

/// How long the mock waits for an effect that should happen (only a failing run waits this).
const EXPECTED: Duration = Duration::from_secs(20);
/// How long the mock watches for an effect that must not happen before the stream goes on.
const FORBIDDEN: Duration = Duration::from_millis(400);

fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
}

/// Open `fifo` for writing without blocking: succeeds only while some process has it open
/// for reading.
fn open_writer(fifo: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(fifo)
}

/// A gate that opens once a reader has `fifo` open, recording it in `seen`. With `data`, it
/// writes `data` and closes the FIFO (the reader then finishes); without, it keeps the write
/// end open in `keep`, so the reader stays blocked until something kills it.
fn reader_gate(
    fifo: PathBuf,
    data: Option<&'static str>,
    seen: Arc<AtomicBool>,
    keep: Arc<Mutex<Option<File>>>,
) -> Gate {
    Gate::new(move || {
        let Ok(mut f) = open_writer(&fifo) else {
            return false;
        };
        match data {
            Some(d) => {
                let _ = f.write_all(d.as_bytes());
            }
            None => *keep.lock().unwrap() = Some(f),
        }
        seen.store(true, Ordering::SeqCst);
        true
    })
}

/// A gate that opens as soon as `path` exists, recording it in `seen`.
fn exists_gate(path: PathBuf, seen: Arc<AtomicBool>) -> Gate {
    Gate::new(move || {
        let there = path.exists();
        if there {
            seen.store(true, Ordering::SeqCst);
        }
        there
    })
}

/// Index just after the `content_block_stop` of block `index`.
fn after_block(events: &[SseEvent], index: usize) -> usize {
    events
        .iter()
        .position(|e| {
            e.event == "content_block_stop" && e.json().is_some_and(|j| j["index"] == json!(index))
        })
        .expect("the block")
        + 1
}

fn stream_json(mock: &MockAnthropic, repo: &TestRepo, out: &OutDir, yaml: &str) -> Run {
    let spec = write_spec(repo.path(), yaml);
    exec(mock, repo, out).stream_json().arg(&spec).run()
}

fn result_frame(frames: &[Value]) -> &Value {
    frames
        .iter()
        .rev()
        .find(|f| f["type"] == "result")
        .expect("a result frame")
}

/// `tool_use_id`s of the tool_result blocks in `records` (stream-json frames or transcript
/// records), in order.
fn tool_result_ids(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["type"] == "user")
        .filter_map(|r| r["message"]["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["tool_use_id"].as_str().unwrap_or_default().to_string())
        .collect()
}

const SPEC: &str = "name: stream\nprompt: look\nmodel: claude-sonnet-4-5\n";

#[test]
fn read_only_calls_start_before_the_message_ends_and_answer_in_order() {
    let repo = TestRepo::new();
    repo.write("notes.txt", "alpha\nbeta\n");
    let fifo = repo.path().join("pipe");
    mkfifo(&fifo);
    let notes = repo.path().join("notes.txt");
    // text, Bash `cat pipe`, [hold until cat has the FIFO open], Read, Grep, message end.
    let events = Resp::new()
        .text("Looking.")
        .tool_use(
            "toolu_1",
            "Bash",
            json!({"command": "cat pipe", "timeout": 10000}),
        )
        .tool_use(
            "toolu_2",
            "Read",
            json!({"file_path": notes.to_str().unwrap()}),
        )
        .tool_use(
            "toolu_3",
            "Grep",
            json!({"pattern": "beta", "path": repo.path().to_str().unwrap(), "output_mode": "content", "glob": "*.txt"}),
        )
        .build();
    let seen = Arc::new(AtomicBool::new(false));
    let keep = Arc::default();
    let hold = Hold {
        before: after_block(&events, 1),
        gate: reader_gate(fifo.clone(), Some("from-the-pipe\n"), seen.clone(), keep),
        timeout: EXPECTED,
    };
    let mock = MockAnthropic::start(vec![
        MockTurn::Gated {
            events,
            holds: vec![hold],
            drop_at: None,
        },
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let run = stream_json(&mock, &repo, &out, SPEC);
    run.expect_code(0);
    assert!(
        seen.load(Ordering::SeqCst),
        "the read-only Bash call did not start while the message was still streaming"
    );
    let req = mock.request(1);
    let ids: Vec<&str> = req
        .tool_results()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_3"]);
    for b in req.tool_results() {
        assert_ne!(b["is_error"], true, "{b}");
    }
    assert!(
        req.tool_result_text("toolu_1")
            .unwrap()
            .contains("from-the-pipe")
    );
    assert!(req.tool_result_text("toolu_2").unwrap().contains("alpha"));
    assert!(req.tool_result_text("toolu_3").unwrap().contains("beta"));
    // stream-json: the message's block frames first, then the results in the model's order.
    let frames = run.json();
    let last_assistant = frames
        .iter()
        .rposition(|f| f["type"] == "assistant" && f["message"]["content"][0]["type"] == "tool_use")
        .expect("tool_use frames");
    let first_result = frames
        .iter()
        .position(|f| f["type"] == "user")
        .expect("a user frame");
    assert!(last_assistant < first_result, "results after the message");
    assert_eq!(tool_result_ids(&frames), ["toolu_1", "toolu_2", "toolu_3"]);
    assert_eq!(result_frame(&frames)["runner_outcome"], "success");
    mock.assert_clean();
}

#[test]
fn side_effecting_bash_waits_for_message_stop() {
    let repo = TestRepo::new();
    let fifo = repo.path().join("pipe");
    mkfifo(&fifo);
    let made = repo.path().join("made.txt");
    // Bash `cat pipe` (read-only), [hold until it runs], Bash `touch made.txt`,
    // [watch for made.txt before going on], message end.
    let events = Resp::new()
        .tool_use(
            "toolu_1",
            "Bash",
            json!({"command": "cat pipe", "timeout": 10000}),
        )
        .tool_use("toolu_2", "Bash", json!({"command": "touch made.txt"}))
        .build();
    let (reader_seen, made_early) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let holds = vec![
        Hold {
            before: after_block(&events, 0),
            gate: reader_gate(fifo, Some("x\n"), reader_seen.clone(), Arc::default()),
            timeout: EXPECTED,
        },
        Hold {
            before: after_block(&events, 1),
            gate: exists_gate(made.clone(), made_early.clone()),
            timeout: FORBIDDEN,
        },
    ];
    let mock = MockAnthropic::start(vec![
        MockTurn::Gated {
            events,
            holds,
            drop_at: None,
        },
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = format!("{SPEC}permissions:\n  allow: [\"Bash(touch:*)\"]\n");
    let run = stream_json(&mock, &repo, &out, &yaml);
    run.expect_code(0);
    assert!(
        reader_seen.load(Ordering::SeqCst),
        "the read-only call before it started early"
    );
    assert!(
        !made_early.load(Ordering::SeqCst),
        "the side-effecting Bash call ran before message_stop"
    );
    assert!(made.exists(), "it ran after the message ended");
    let req = mock.request(1);
    let ids: Vec<&str> = req
        .tool_results()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"]);
    assert_ne!(req.tool_result("toolu_2").unwrap()["is_error"], true);
    mock.assert_clean();
}

#[test]
fn a_call_with_a_matching_hook_waits_for_the_whole_message() {
    let repo = TestRepo::new();
    repo.write("a.txt", "alpha\n");
    let hook_ran = repo.path().join("hook-ran");
    let events = Resp::new()
        .tool_use("toolu_1", "Bash", json!({"command": "cat a.txt"}))
        .build();
    let early = Arc::new(AtomicBool::new(false));
    let hold = Hold {
        before: after_block(&events, 0),
        gate: exists_gate(hook_ran.clone(), early.clone()),
        timeout: FORBIDDEN,
    };
    let mock = MockAnthropic::start(vec![
        MockTurn::Gated {
            events,
            holds: vec![hold],
            drop_at: None,
        },
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = format!(
        "{SPEC}hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: {:?}\n",
        format!("touch {}", hook_ran.display())
    );
    let run = stream_json(&mock, &repo, &out, &yaml);
    run.expect_code(0);
    assert!(
        !early.load(Ordering::SeqCst),
        "the PreToolUse hook ran before message_stop"
    );
    assert!(
        hook_ran.exists(),
        "the hook ran once the message was complete"
    );
    assert!(
        mock.request(1)
            .tool_result_text("toolu_1")
            .unwrap()
            .contains("alpha")
    );
    mock.assert_clean();
}

#[test]
fn a_read_only_call_started_in_a_dropped_stream_is_cancelled_and_its_result_discarded() {
    let repo = TestRepo::new();
    repo.write("b.txt", "second attempt\n");
    let fifo = repo.path().join("pipe");
    mkfifo(&fifo);
    // Attempt 1: Bash `cat pipe` starts (the mock waits until it has the FIFO open and keeps
    // the write end open, so it blocks), then the connection drops. Attempt 2 reuses the id
    // with another command.
    let first = Resp::new()
        .tool_use(
            "toolu_1",
            "Bash",
            json!({"command": "cat pipe", "timeout": 60000}),
        )
        .build();
    let cut = after_block(&first, 0);
    let seen = Arc::new(AtomicBool::new(false));
    let keep: Arc<Mutex<Option<File>>> = Arc::default();
    let mock = MockAnthropic::start(vec![
        MockTurn::Gated {
            events: first,
            holds: vec![Hold {
                before: cut,
                gate: reader_gate(fifo.clone(), None, seen.clone(), keep.clone()),
                timeout: EXPECTED,
            }],
            drop_at: Some(cut),
        },
        tool_turn("toolu_1", "Bash", json!({"command": "cat b.txt"})),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = format!("{SPEC}retry:\n  base_delay: 1ms\n  max_delay: 5ms\n");
    let run = stream_json(&mock, &repo, &out, &yaml);
    run.expect_code(0);
    assert!(seen.load(Ordering::SeqCst), "the call started in attempt 1");
    // The abandoned attempt's `cat` was killed: nothing has the FIFO open for reading.
    let err = open_writer(&fifo).expect_err("no reader left");
    assert_eq!(err.raw_os_error(), Some(nix::libc::ENXIO), "{err}");
    drop(keep.lock().unwrap().take());

    // The retry was sent as the first request was: no result from the abandoned attempt.
    assert_eq!(mock.request(1).messages(), mock.request(0).messages());
    let req = mock.request(2);
    assert_eq!(req.tool_results().len(), 1);
    let text = req.tool_result_text("toolu_1").unwrap();
    assert!(text.contains("second attempt"), "{text}");
    assert_ne!(req.tool_result("toolu_1").unwrap()["is_error"], true);

    let frames = run.json();
    assert_eq!(tool_result_ids(&frames), ["toolu_1"], "one result frame");
    let transcript = transcript_of(result_frame(&frames));
    assert_eq!(
        tool_result_ids(&transcript),
        ["toolu_1"],
        "one result record"
    );
    assert_chain(&transcript);
    let abandoned = events_of(&transcript, "system", Some("runner_attempt_abandoned"));
    assert_eq!(abandoned.len(), 1, "one abandoned attempt");
    mock.assert_clean();
}
