//! Helpers to read what the binary wrote (transcripts, events) and to wait for it; the places
//! it runs in (a temporary git repository, spec files) are runner-test-support's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use runner_test_support::mock_server::CapturedRequest;
use runner_test_support::{TestRepo, json_lines};
use serde_json::Value;

/// The transcript a run left in a [`TestRepo`].
pub trait RepoTranscript {
    /// The records of the transcript a run without `--transcript-dir` left in the
    /// repository (`.runner/<run>/transcript.jsonl`; the first one found), if any, checked
    /// against the committed schema.
    fn transcript(&self) -> Option<Vec<Value>>;
}

impl RepoTranscript for TestRepo {
    fn transcript(&self) -> Option<Vec<Value>> {
        find_transcript(&self.path().join(".runner")).map(|p| read_json_lines(&p))
    }
}

/// The first `<dir>/<run>/transcript.jsonl`, if any.
pub fn find_transcript(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.find_map(|e| {
        let p = e.ok()?.path().join("transcript.jsonl");
        p.exists().then_some(p)
    })
}

/// Poll until `ready` holds; panics naming `what` after 30 s. A readiness wait (a marker
/// file a tool touched, ...), not a timing claim.
pub fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The spec lines that make `dir` writable for the task's confined commands (for tests whose
/// hooks or commands keep files outside the workdir on purpose).
pub fn sandbox_write(dir: &Path) -> String {
    format!("sandbox:\n  write: [{:?}]\n", dir.display().to_string())
}

/// Read a JSONL file (e.g. a transcript) with [`json_lines`]; a transcript's records are
/// checked against the committed schema ([`super::check_records`]).
pub fn read_json_lines(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let lines = json_lines(&bytes);
    super::check_records(path, &lines);
    lines
}

/// The events of `lines` whose `type` is `ty` (and, if given, whose `subtype` is `subtype`).
pub fn events_of<'a>(lines: &'a [Value], ty: &str, subtype: Option<&str>) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|v| v.get("type").and_then(Value::as_str) == Some(ty))
        .filter(|v| subtype.is_none_or(|s| v.get("subtype").and_then(Value::as_str) == Some(s)))
        .collect()
}

/// A task spec named `name` whose prompt is `task NAME` (so [`task_of`] can tell which task a
/// request belongs to), plus `extra` YAML lines.
pub fn named_task(name: &str, extra: &str) -> String {
    format!("name: {name}\nprompt: \"task {name}\"\nmodel: claude-sonnet-4-5\n{extra}")
}

/// The task a request belongs to: its first user message is `task NAME` ([`named_task`]).
pub fn task_of(req: &CapturedRequest) -> String {
    req.message_text(0)
        .strip_prefix("task ")
        .unwrap_or_default()
        .to_string()
}
