//! The resume point of a run, rebuilt from its transcript (`runner resume`, `runner exec
//! --resume`; the spec is chosen in [`crate::prepare::resume`]).
//!
//! From the transcript this rebuilds what the loop carries: the
//! conversation, turn/usage/cost totals (so budgets continue), denials, read-before-write
//! state and todos, the exact system prompt and tool schemas that were sent, and the workdir
//! (the recorded worktree, if any). The task then runs as usual, appending to the same
//! transcript. Claude Code's own transcripts resume too, with the spec given on the command
//! line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::agent::{Input, State};
use crate::events::Denial;
use crate::model::table;
use crate::model::{StopReason, ToolSpec, Usage};
use crate::spec::{LoadedSpec, TaskSpec};
use crate::tools::ReadRecord;
use crate::tools::todo::Todo;
use crate::transcript::reader::{Record, ToolCallRecord, Transcript};
use crate::transcript::record::{SUBTYPE_PERMISSION_DENIED, SUBTYPE_WORKTREE};

/// The user message a resumed run sends when the conversation ends with the model's answer
/// and no `--prompt` was given.
pub(crate) const DEFAULT_CONTINUATION: &str = "The run was interrupted and has been resumed. Continue the task from where it stopped; do not repeat work that is already done.";

/// What a resumed task starts from; [`crate::task::run_task`] uses it instead of a fresh start.
#[derive(Debug, Clone)]
pub struct Resume {
    /// The transcript appended to.
    pub transcript_path: PathBuf,
    /// The session id the run keeps.
    pub session_id: String,
    /// The loop state: conversation and totals so far.
    pub state: State,
    /// How the loop continues.
    pub input: Input,
    /// The system prompt that was sent (None: build it, e.g. for Claude Code transcripts).
    pub system_prompt: Option<String>,
    /// The tool schemas that were sent.
    pub tool_specs: Option<Vec<ToolSpec>>,
    /// Files whose read (or write) is still valid, for the read-before-write rule.
    pub read_files: Vec<(PathBuf, ReadRecord)>,
    /// The last todo list written.
    pub todos: Option<Vec<Todo>>,
    /// Tool calls of the last exchange that never got a result.
    pub unanswered: Vec<ToolCallRecord>,
    /// For a runner transcript: the transcript directory its run wrote to (the one holding the
    /// run's output directory), where the resumed run's outputs go too.
    pub transcript_dir: Option<PathBuf>,
    /// The git base the run recorded when it started (`git-base.json` in its output
    /// directory), which the resumed task's changes are measured against.
    pub git_base: Option<crate::git::BaseRecord>,
}

/// Make sure the file ends with a newline, so appended records start on their own line (a run
/// killed mid-write leaves a partial last line, which then stays a skipped malformed line).
pub(crate) fn end_last_line(path: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)?;
    if f.metadata()?.len() == 0 {
        return Ok(());
    }
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    if last[0] != b'\n' {
        f.write_all(b"\n")?;
    }
    Ok(())
}

/// Why a resumed run cannot continue in the setting its transcript recorded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordedRunError {
    /// The recorded overlay worktree could not be mounted again.
    #[error("{0}")]
    Reattach(#[from] crate::git::GitError),
    /// The recorded workdir is gone.
    #[error(
        "the run's workdir {} no longer exists; resume where it is, or give the spec with --use-current-spec",
        .0.display()
    )]
    WorkdirGone(PathBuf),
    /// A recorded additional directory cannot be resolved.
    #[error("additional directory {} ({source})", path.display())]
    Directory {
        /// The directory, joined to the spec's.
        path: PathBuf,
        /// What resolving it reported.
        source: std::io::Error,
    },
    /// The recorded output schema's file cannot be read.
    #[error("{0}")]
    Output(#[from] crate::spec::SpecError),
}

/// The workdir to continue in: the worktree named by the last `runner_worktree` record (an
/// overlay worktree kept by a batch is mounted again), else the recorded workdir. It must
/// still exist.
pub(crate) fn workdir(
    t: &Transcript,
    info: &crate::events::InitInfo,
) -> Result<PathBuf, RecordedRunError> {
    let worktree = t
        .records
        .iter()
        .rev()
        .find(|r| r.kind() == Some("system") && r.subtype() == Some(SUBTYPE_WORKTREE))
        .and_then(|r| {
            ["worktreePath", "path", "worktree"]
                .iter()
                .find_map(|k| r.value.get(*k).and_then(Value::as_str))
        })
        .map(PathBuf::from);
    let dir = worktree.unwrap_or_else(|| info.cwd.clone());
    // A batch's overlay worktree is unmounted when the batch ends: mount it again.
    crate::git::reattach(&dir)?;
    match std::fs::canonicalize(&dir) {
        Ok(d) if d.is_dir() => Ok(d),
        _ => Err(RecordedRunError::WorkdirGone(dir)),
    }
}

/// A [`LoadedSpec`] from the run's recorded resolved spec. Settings files were merged into it
/// when the run started, so they are not read again.
pub(crate) fn recorded_loaded(
    spec_path: &Path,
    mut spec: TaskSpec,
    workdir: PathBuf,
) -> Result<LoadedSpec, RecordedRunError> {
    spec.settings = None;
    let dir = std::path::absolute(spec_path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| workdir.clone());
    let additional_directories = spec
        .additional_directories
        .iter()
        .map(|d| {
            std::fs::canonicalize(dir.join(d)).map_err(|source| RecordedRunError::Directory {
                path: dir.join(d),
                source,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cassette = spec.cassette.as_ref().map(|c| dir.join(c));
    let prompt = spec.prompt.clone().unwrap_or_default();
    // The structured-output schema, as the run resolved it (inline, or the file beside the spec).
    let output_schema = match &spec.output {
        None => None,
        Some(o) => Some(crate::spec::output::resolve(
            spec_path,
            "",
            &dir,
            o,
            |file, what| {
                std::fs::read_to_string(file).map_err(|e| {
                    crate::spec::load::SpecError::file(file, format!("{what} cannot be read: {e}"))
                })
            },
        )?),
    };
    Ok(LoadedSpec {
        path: spec_path.to_path_buf(),
        dir,
        spec,
        prompt,
        workdir,
        additional_directories,
        cassette,
        output_schema,
        name_line: 1,
        source: String::new(),
    })
}

/// Turn, usage, cost and denial totals over the whole file (every completed response of every
/// earlier run and resume), so budgets continue where they stopped. A response is written as
/// one record per block: consecutive assistant records with the same `message.id` are one
/// response, counted once.
pub(crate) fn totals(t: &Transcript, spec: &TaskSpec) -> State {
    let mut state = State::default();
    let mut prev_id: Option<&str> = None;
    let mut last: Option<&Record> = None;
    for r in &t.records {
        if r.kind() == Some("system") && r.subtype() == Some(SUBTYPE_PERMISSION_DENIED) {
            let s = |k: &str| {
                r.value
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            state.denials.push(Denial {
                uuid: s("uuid"),
                tool_name: s("toolName"),
                tool_use_id: s("toolUseId"),
                tool_input: r.value.get("toolInput").cloned().unwrap_or(Value::Null),
                reason: s("reason"),
                // Not recorded: a resumed task counts its earlier file-tool denials by name.
                write: false,
            });
            continue;
        }
        if r.is_sidechain() {
            continue;
        }
        if r.kind() == Some("user") {
            prev_id = None;
        }
        if r.kind() != Some("assistant") {
            continue;
        }
        let Some(msg) = r.message() else { continue };
        let id = msg.get("id").and_then(Value::as_str);
        if id.is_some() && id == prev_id {
            continue;
        }
        prev_id = id;
        last = Some(r);
        let usage: Usage = msg
            .get("usage")
            .cloned()
            .and_then(|u| serde_json::from_value(u).ok())
            .unwrap_or_default();
        let model = msg
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(&spec.model);
        let info = table::lookup(model, &spec.models);
        let cost = info.as_ref().and_then(|m| m.cost_usd(&usage));
        let window = info
            .as_ref()
            .map(|m| (m.context_window, m.max_output_tokens));
        state.record_usage(model, &usage, cost, window);
        if msg.get("stop_reason").and_then(Value::as_str) != Some("pause_turn") {
            state.turns += 1;
        }
    }
    if let Some(msg) = last.and_then(Record::message) {
        let usage: Usage = msg
            .get("usage")
            .cloned()
            .and_then(|u| serde_json::from_value(u).ok())
            .unwrap_or_default();
        state.last_context_tokens = usage.total();
        state.last_stop_reason = msg
            .get("stop_reason")
            .cloned()
            .and_then(|s| serde_json::from_value::<StopReason>(s).ok());
    }
    state
}

/// Files read (or written) by successful Read/Write/Edit calls and not changed on disk since
/// the call's result was recorded: the read-before-write rule continues for them. A file
/// changed since must be read again.
pub(crate) fn read_files(calls: &[ToolCallRecord]) -> Vec<(PathBuf, ReadRecord)> {
    let mut out: HashMap<PathBuf, ReadRecord> = HashMap::new();
    for c in calls {
        if c.result_is_error != Some(false) {
            continue;
        }
        let full = match c.name.as_str() {
            "Read" => {
                c.input.get("offset").is_none_or(Value::is_null)
                    && c.input.get("limit").is_none_or(Value::is_null)
            }
            "Write" | "Edit" => true,
            _ => continue,
        };
        let Some(p) = c.input.get("file_path").and_then(Value::as_str) else {
            continue;
        };
        let path = Path::new(p);
        if !path.is_absolute() {
            continue;
        }
        let path = crate::roots::normalize_lexically(path);
        let Some(at) = c
            .result_timestamp
            .as_deref()
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        else {
            continue;
        };
        // Timestamps have millisecond precision: allow the rest of that millisecond.
        let at = SystemTime::from(at) + Duration::from_millis(1);
        let mtime = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        match mtime {
            Some(m) if m <= at => {
                out.insert(
                    path,
                    ReadRecord {
                        mtime: Some(m),
                        full,
                    },
                );
            }
            _ => {
                out.remove(&path);
            }
        }
    }
    let mut v: Vec<_> = out.into_iter().collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The todo list of the last successful TodoWrite call.
pub(crate) fn todos(calls: &[ToolCallRecord]) -> Option<Vec<Todo>> {
    calls
        .iter()
        .rev()
        .filter(|c| c.name == "TodoWrite" && c.result_is_error == Some(false))
        .find_map(|c| {
            c.input
                .get("todos")
                .cloned()
                .and_then(|t| serde_json::from_value(t).ok())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::reader::parse_transcript;

    fn transcript(lines: &[Value]) -> Transcript {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        parse_transcript(Path::new("t.jsonl"), text.as_bytes()).unwrap()
    }

    fn assistant(uuid: &str, parent: &str, id: &str, block: Value, stop: &str, out: u64) -> Value {
        serde_json::json!({"type": "assistant", "uuid": uuid, "parentUuid": parent,
            "message": {"id": id, "model": "claude-sonnet-4-5", "role": "assistant",
                "content": [block], "stop_reason": stop,
                "usage": {"input_tokens": 10, "output_tokens": out}}})
    }

    #[test]
    fn totals_count_each_message_once_and_skip_pause_turn() {
        let t = transcript(&[
            serde_json::json!({"type": "user", "uuid": "u1", "parentUuid": null, "message": {"role": "user", "content": "hi"}}),
            assistant(
                "a1",
                "u1",
                "m1",
                serde_json::json!({"type": "text", "text": "x"}),
                "tool_use",
                5,
            ),
            assistant(
                "a2",
                "a1",
                "m1",
                serde_json::json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}),
                "tool_use",
                5,
            ),
            assistant(
                "a3",
                "a2",
                "m2",
                serde_json::json!({"type": "text", "text": "y"}),
                "pause_turn",
                1,
            ),
            assistant(
                "a4",
                "a3",
                "m3",
                serde_json::json!({"type": "text", "text": "z"}),
                "end_turn",
                2,
            ),
            serde_json::json!({"type": "system", "subtype": "runner_permission_denied", "uuid": "d1", "toolName": "Bash", "toolUseId": "t1", "toolInput": {"command": "rm"}, "reason": "no"}),
        ]);
        let spec: TaskSpec = yaml_serde::from_str("name: t\nprompt: hi\n").unwrap();
        let s = totals(&t, &spec);
        assert_eq!(s.turns, 2);
        assert_eq!(s.usage.input_tokens, 30);
        assert_eq!(s.usage.output_tokens, 8);
        assert_eq!(s.last_context_tokens, 12);
        assert_eq!(s.denials.len(), 1);
        assert_eq!(s.denials[0].tool_name, "Bash");
        assert!(s.cost_usd.is_some_and(|c| c > 0.0));
    }

    #[test]
    fn read_state_survives_only_for_unchanged_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let now = chrono::Utc::now();
        let later = (now + chrono::Duration::seconds(5)).to_rfc3339();
        let earlier = (now - chrono::Duration::seconds(5)).to_rfc3339();
        let call = |name: &str, path: &Path, ts: &str, input: Value| ToolCallRecord {
            id: format!("t-{name}"),
            name: name.into(),
            input: {
                let mut i = input;
                i["file_path"] = path.display().to_string().into();
                i
            },
            assistant_uuid: "a".into(),
            result_is_error: Some(false),
            result_timestamp: Some(ts.into()),
            started: None,
        };
        let calls = vec![
            call("Read", &a, &later, serde_json::json!({"limit": 3})),
            // b was read before its current contents were written: stale.
            call("Read", &b, &earlier, serde_json::json!({})),
            call("Bash", &a, &later, serde_json::json!({})),
        ];
        let files = read_files(&calls);
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(files[0].0, a);
        assert!(!files[0].1.full);
    }

    #[test]
    fn last_successful_todo_list_wins() {
        let todo = |items: Value, err: bool| ToolCallRecord {
            id: "t".into(),
            name: "TodoWrite".into(),
            input: serde_json::json!({ "todos": items }),
            assistant_uuid: "a".into(),
            result_is_error: Some(err),
            result_timestamp: None,
            started: None,
        };
        let one =
            serde_json::json!([{"content": "one", "status": "pending", "activeForm": "doing one"}]);
        let two = serde_json::json!([{"content": "two", "status": "completed", "activeForm": "doing two"}]);
        let t = todos(&[todo(one, false), todo(two, true)]).unwrap();
        assert_eq!(t[0].content, "one");
    }
}
