//! Reading a JSONL transcript back (runner's own, or Claude Code's).
//!
//! Blank lines are skipped. A last line that does not parse is the trace of a killed run: it
//! is reported in [`Transcript::truncated`]. A malformed line anywhere else (not JSON, or not a
//! JSON object) is skipped with a warning naming the line and kept in [`Transcript::skipped`].
//!
//! [`Transcript::conversation`] rebuilds the conversation to resume: it follows the
//! `parentUuid` chain back from the last conversation record, leaving out sidechains,
//! abandoned attempts, off-chain system records and everything before the last compact
//! boundary.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::events::InitInfo;
use crate::model::{ContentBlock, Message, Role, ToolSpec};
use crate::process::identity::GroupIdentity;
use crate::transcript::record::{
    SUBTYPE_ATTEMPT_ABANDONED, SUBTYPE_COMPACT_BOUNDARY, SUBTYPE_INIT, SUBTYPE_RESULT,
    SUBTYPE_TOOL_STARTED,
};

/// Why a transcript could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The file could not be read.
    #[error("cannot read transcript {}: {source}", path.display())]
    Io {
        /// The transcript.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A message's content could not be turned into content blocks.
    #[error("{}:{line}: bad message content: {message}", path.display())]
    BadContent {
        /// The transcript.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
}

/// One record with the line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// 1-based line number.
    pub line: usize,
    /// The record (a JSON object).
    pub value: Value,
}

impl Record {
    fn str_field(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Value::as_str)
    }

    /// `type` (`user`, `assistant`, `system`, `summary`, ...).
    pub fn kind(&self) -> Option<&str> {
        self.str_field("type")
    }

    /// `subtype` of system records.
    pub fn subtype(&self) -> Option<&str> {
        self.str_field("subtype")
    }

    /// `uuid`.
    pub fn uuid(&self) -> Option<&str> {
        self.str_field("uuid")
    }

    /// `parentUuid` (None for roots and runner's off-chain records).
    pub fn parent_uuid(&self) -> Option<&str> {
        self.str_field("parentUuid")
    }

    /// Whether the record belongs to a subagent (`isSidechain: true`).
    pub fn is_sidechain(&self) -> bool {
        self.value
            .get("isSidechain")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `message`, for user and assistant records.
    pub fn message(&self) -> Option<&Value> {
        self.value.get("message")
    }
}

/// A last line that did not parse (a run killed mid-write).
#[derive(Debug, Clone, PartialEq)]
pub struct TruncatedLine {
    /// 1-based line number.
    pub line: usize,
    /// Its length in bytes.
    pub bytes: usize,
    /// Why it did not parse.
    pub error: String,
}

/// A transcript read from disk.
#[derive(Debug, Clone)]
pub struct Transcript {
    /// The file read.
    pub path: PathBuf,
    /// Every complete record, in file order.
    pub records: Vec<Record>,
    /// The truncated last line, if the file ended in one.
    pub truncated: Option<TruncatedLine>,
    /// Malformed lines before the last one, skipped.
    pub skipped: Vec<TruncatedLine>,
}

/// Read the transcript at `path`.
pub fn read_transcript(path: impl AsRef<Path>) -> Result<Transcript, TranscriptError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| TranscriptError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_transcript(path, &bytes)
}

/// Parse transcript bytes (`path` only names the source in errors). A UTF-8 byte order mark
/// at the start (left by some editors and Windows tools) is ignored.
pub fn parse_transcript(path: &Path, bytes: &[u8]) -> Result<Transcript, TranscriptError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let lines: Vec<(usize, &[u8])> = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix(b"\r").unwrap_or(l)))
        .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
        .collect();
    let last = lines.last().map(|(n, _)| *n);
    let mut records = Vec::with_capacity(lines.len());
    let mut truncated = None;
    let mut skipped = Vec::new();
    for (line, text) in lines {
        let error = match serde_json::from_slice::<Value>(text) {
            Ok(value @ Value::Object(_)) => {
                records.push(Record { line, value });
                continue;
            }
            Ok(_) => "not a JSON object".to_string(),
            Err(e) => e.to_string(),
        };
        let bad = TruncatedLine {
            line,
            bytes: text.len(),
            error,
        };
        if Some(line) == last {
            tracing::warn!(
                "{}:{line}: transcript ends in a truncated record ({}); ignoring it",
                path.display(),
                bad.error
            );
            truncated = Some(bad);
        } else {
            tracing::warn!(
                "{}:{line}: malformed transcript record skipped ({})",
                path.display(),
                bad.error
            );
            skipped.push(bad);
        }
    }
    Ok(Transcript {
        path: path.to_path_buf(),
        records,
        truncated,
        skipped,
    })
}

/// The messages of a conversation's records, the tool calls they make, and each call's
/// index in `calls` by its id.
struct Messages {
    msgs: Vec<Message>,
    calls: Vec<ToolCallRecord>,
    call_index: HashMap<String, usize>,
}

impl Transcript {
    /// The `runner_init` record, if this is a runner transcript.
    pub fn init_record(&self) -> Option<&Record> {
        self.records
            .iter()
            .find(|r| r.kind() == Some("system") && r.subtype() == Some(SUBTYPE_INIT))
    }

    /// The run's [`InitInfo`] rebuilt from its `runner_init` record.
    pub fn init_info(&self) -> Option<InitInfo> {
        let r = self.init_record()?;
        let v = &r.value;
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let tools: Vec<ToolSpec> = v
            .get("tools")
            .cloned()
            .and_then(|t| serde_json::from_value(t).ok())
            .unwrap_or_default();
        Some(InitInfo {
            uuid: s("uuid").unwrap_or_default(),
            session_id: s("sessionId")?,
            task_name: s("taskName")?,
            spec_path: PathBuf::from(s("specPath").unwrap_or_default()),
            spec: v.get("spec").cloned().unwrap_or(Value::Null),
            spec_digest: s("specDigest").unwrap_or_default(),
            system_prompt: s("systemPrompt").unwrap_or_default(),
            tools,
            model: s("model").unwrap_or_default(),
            provider: s("provider").unwrap_or_default(),
            permission_mode: s("permissionMode").unwrap_or_default(),
            cwd: PathBuf::from(s("cwd").unwrap_or_default()),
            git_branch: s("gitBranch").filter(|b| !b.is_empty()),
            git_base_commit: s("gitBaseCommit"),
            version: s("version").unwrap_or_default(),
            sandbox: v
                .get("sandbox")
                .cloned()
                .and_then(|x| serde_json::from_value(x).ok()),
            mcp_servers: v
                .get("mcpServers")
                .cloned()
                .and_then(|x| serde_json::from_value(x).ok())
                .unwrap_or_default(),
        })
    }

    /// The result object of the `runner_result` record, if the run finished.
    pub fn result(&self) -> Option<&Value> {
        self.records
            .iter()
            .rev()
            .find(|r| r.kind() == Some("system") && r.subtype() == Some(SUBTYPE_RESULT))
            .and_then(|r| r.value.get("result"))
    }

    /// The conversation's messages ([`Transcript::conversation`] without the details).
    pub fn messages(&self) -> Result<Vec<Message>, TranscriptError> {
        Ok(self.conversation()?.messages)
    }

    /// Rebuild the conversation to resume from: follow the `parentUuid` chain back from the
    /// last conversation record (user or assistant, not a sidechain, not part of an abandoned
    /// attempt) to its root, a compact boundary (`system`/`compact_boundary`, whose summary
    /// record starts the conversation), or a parent missing from the file. Per-block assistant
    /// records of one `message.id` become one message; consecutive user records become one.
    ///
    /// Tool calls answered nowhere are repaired: in the middle of the conversation they get a
    /// synthetic error result in memory; calls of the last exchange are listed in
    /// [`Conversation::unanswered`] for the caller to answer (and record). tool_result blocks
    /// whose call is not in the message before them are dropped.
    pub fn conversation(&self) -> Result<Conversation, TranscriptError> {
        let abandoned: HashSet<&str> = self
            .records
            .iter()
            .filter(|r| {
                r.kind() == Some("system") && r.subtype() == Some(SUBTYPE_ATTEMPT_ABANDONED)
            })
            .filter_map(|r| r.value.get("streamedUuids").and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let by_uuid: HashMap<&str, usize> = self
            .records
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.uuid().map(|u| (u, i)))
            .collect();
        let is_turn = |r: &Record| {
            crate::agent::normalize::is_api_record(&r.value)
                && r.message().is_some()
                && r.uuid().is_some_and(|u| !abandoned.contains(u))
        };
        let mut conv = Conversation::default();
        let Some(leaf) = self.records.iter().rposition(is_turn) else {
            return Ok(conv);
        };
        let chain = self.chain(leaf, &is_turn, &by_uuid, &mut conv);
        conv.records = chain.len();
        let Messages {
            mut msgs,
            mut calls,
            call_index,
        } = self.chain_messages(&chain)?;
        self.mark_started(&mut calls, &call_index);
        conv.last_uuid = chain
            .last()
            .and_then(|&i| self.records[i].uuid())
            .map(str::to_string);
        conv.unanswered = repair_tool_pairs(&mut msgs, &calls);
        conv.messages = msgs;
        conv.tool_calls = calls;
        Ok(conv)
    }

    /// The records of the conversation, root first: the `parentUuid` chain back from `leaf`
    /// to its root, a compact boundary (noted in `conv`), or a parent missing from the file.
    fn chain(
        &self,
        leaf: usize,
        is_turn: &dyn Fn(&Record) -> bool,
        by_uuid: &HashMap<&str, usize>,
        conv: &mut Conversation,
    ) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut seen = HashSet::new();
        let mut cur = Some(leaf);
        while let Some(i) = cur {
            if !seen.insert(i) {
                tracing::warn!(
                    "{}:{}: the parentUuid chain loops; the conversation starts after this record",
                    self.path.display(),
                    self.records[i].line
                );
                break;
            }
            let r = &self.records[i];
            if r.kind() == Some("system") && r.subtype() == Some(SUBTYPE_COMPACT_BOUNDARY) {
                conv.compact_boundary = Some(r.line);
                break;
            }
            if is_turn(r) {
                chain.push(i);
            }
            if r.value.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
                let boundary = r
                    .parent_uuid()
                    .and_then(|p| by_uuid.get(p))
                    .map(|&j| &self.records[j])
                    .filter(|b| b.subtype() == Some(SUBTYPE_COMPACT_BOUNDARY));
                conv.compact_boundary = Some(boundary.map_or(r.line, |b| b.line));
                break;
            }
            cur = match r.parent_uuid() {
                None => None,
                Some(p) => match by_uuid.get(p) {
                    Some(&j) => Some(j),
                    None => {
                        tracing::warn!(
                            "{}:{}: parent record {p} is not in the transcript; the conversation starts at this record",
                            self.path.display(),
                            r.line
                        );
                        None
                    }
                },
            };
        }
        chain.reverse();
        chain
    }

    /// The messages of `chain` (per-block assistant records of one `message.id` merged,
    /// consecutive user records merged), the tool calls they make, and each call's index by id.
    fn chain_messages(&self, chain: &[usize]) -> Result<Messages, TranscriptError> {
        // Messages, with the uuid of each block's record (for tool calls).
        let mut msgs: Vec<Message> = Vec::new();
        let mut calls: Vec<ToolCallRecord> = Vec::new();
        let mut call_index: HashMap<String, usize> = HashMap::new();
        for &i in chain {
            let r = &self.records[i];
            let role = if r.kind() == Some("user") {
                Role::User
            } else {
                Role::Assistant
            };
            let msg = r.message().unwrap_or(&Value::Null);
            let blocks = self.content_blocks(r, msg.get("content"))?;
            let uuid = r.uuid().unwrap_or_default().to_string();
            for b in &blocks {
                match b {
                    ContentBlock::ToolUse { id, name, input } if role == Role::Assistant => {
                        call_index.insert(id.clone(), calls.len());
                        calls.push(ToolCallRecord {
                            id: id.clone(),
                            name: name.clone(),
                            input: input.clone(),
                            assistant_uuid: uuid.clone(),
                            result_is_error: None,
                            result_timestamp: None,
                            started: None,
                        });
                    }
                    ContentBlock::ToolResult {
                        tool_use_id,
                        is_error,
                        ..
                    } if role == Role::User => {
                        if let Some(&k) = call_index.get(tool_use_id) {
                            calls[k].result_is_error = Some(*is_error);
                            calls[k].result_timestamp = r
                                .value
                                .get("timestamp")
                                .and_then(Value::as_str)
                                .map(str::to_string);
                        }
                    }
                    _ => {}
                }
            }
            let id = msg.get("id").and_then(Value::as_str).map(str::to_string);
            let merge = match msgs.last() {
                Some(prev) if prev.role == role => match role {
                    Role::User => true,
                    Role::Assistant => id.is_some() && prev.id == id,
                },
                _ => false,
            };
            match msgs.last_mut() {
                Some(prev) if merge => prev.content.extend(blocks),
                _ => msgs.push(Message {
                    role,
                    content: blocks,
                    id,
                }),
            }
        }
        Ok(Messages {
            msgs,
            calls,
            call_index,
        })
    }

    /// Mark the calls a `runner_tool_started` record says had started, with their process group.
    fn mark_started(&self, calls: &mut [ToolCallRecord], call_index: &HashMap<String, usize>) {
        for r in &self.records {
            if r.kind() != Some("system") || r.subtype() != Some(SUBTYPE_TOOL_STARTED) {
                continue;
            }
            let Some(id) = r.value.get("toolUseId").and_then(Value::as_str) else {
                continue;
            };
            if let Some(&k) = call_index.get(id) {
                let group = r
                    .value
                    .get("processGroup")
                    .and_then(|g| serde_json::from_value(g.clone()).ok());
                calls[k].started = Some(StartedCall { group });
            }
        }
    }

    fn content_blocks(
        &self,
        r: &Record,
        content: Option<&Value>,
    ) -> Result<Vec<ContentBlock>, TranscriptError> {
        let bad = |message: String| TranscriptError::BadContent {
            path: self.path.clone(),
            line: r.line,
            message,
        };
        match content {
            Some(Value::String(s)) => Ok(vec![ContentBlock::text(s.clone())]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|b| ContentBlock::from_value(b.clone()).map_err(|e| bad(e.to_string())))
                .collect(),
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(other) => Err(bad(format!("content is neither text nor blocks: {other}"))),
        }
    }
}

/// The text of a synthetic result for a tool call the run never answered.
pub(crate) const UNANSWERED_RESULT: &str =
    "Not run: the run stopped before this tool call finished. Run it again if you still need it.";

/// Make every tool_use answered by the next user message and every tool_result answer a
/// tool_use of the message before it. Results missing in the middle get [`UNANSWERED_RESULT`]
/// in memory; the calls missing a result in the last exchange are returned.
fn repair_tool_pairs(msgs: &mut Vec<Message>, calls: &[ToolCallRecord]) -> Vec<ToolCallRecord> {
    let mut unanswered = Vec::new();
    let mut i = 0;
    while i < msgs.len() {
        if msgs[i].role == Role::User {
            let asked: HashSet<String> = match i.checked_sub(1).map(|p| &msgs[p]) {
                Some(prev) if prev.role == Role::Assistant => tool_use_ids(prev).collect(),
                _ => HashSet::new(),
            };
            msgs[i].content.retain(|b| match b {
                ContentBlock::ToolResult { tool_use_id, .. } => asked.contains(tool_use_id),
                _ => true,
            });
            i += 1;
            continue;
        }
        let ids: Vec<String> = tool_use_ids(&msgs[i]).collect();
        if ids.is_empty() {
            i += 1;
            continue;
        }
        let answered: HashSet<String> = match msgs.get(i + 1) {
            Some(next) if next.role == Role::User => next
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                    _ => None,
                })
                .collect(),
            _ => HashSet::new(),
        };
        let missing: Vec<String> = ids
            .into_iter()
            .filter(|id| !answered.contains(id))
            .collect();
        let last_exchange =
            i + 1 >= msgs.len() || (i + 2 >= msgs.len() && msgs[i + 1].role == Role::User);
        if last_exchange {
            unanswered.extend(
                missing
                    .iter()
                    .filter_map(|id| calls.iter().find(|c| &c.id == id))
                    .cloned(),
            );
        } else if !missing.is_empty() {
            let synthetic: Vec<ContentBlock> = missing
                .iter()
                .map(|id| ContentBlock::ToolResult {
                    tool_use_id: id.clone(),
                    content: calls
                        .iter()
                        .find(|c| &c.id == id)
                        .map_or(UNANSWERED_RESULT, ToolCallRecord::unanswered_text)
                        .into(),
                    is_error: true,
                })
                .collect();
            if msgs[i + 1].role == Role::User {
                let next = &mut msgs[i + 1].content;
                next.splice(0..0, synthetic);
            } else {
                msgs.insert(
                    i + 1,
                    Message {
                        role: Role::User,
                        content: synthetic,
                        id: None,
                    },
                );
            }
        }
        i += 1;
    }
    unanswered
}

fn tool_use_ids(m: &Message) -> impl Iterator<Item = String> + '_ {
    m.content.iter().filter_map(|b| match b {
        ContentBlock::ToolUse { id, .. } => Some(id.clone()),
        _ => None,
    })
}

/// A tool call found in the conversation, with what is known of its result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRecord {
    /// tool_use id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// The input the model gave.
    pub input: Value,
    /// uuid of the assistant record holding the call.
    pub assistant_uuid: String,
    /// Whether its result was an error; None when it has no result.
    pub result_is_error: Option<bool>,
    /// `timestamp` of the record holding its result.
    pub result_timestamp: Option<String>,
    /// Whether a `runner_tool_started` record says it started (a call allowed to write), with
    /// the process group it started, for a command.
    pub started: Option<StartedCall>,
}

/// A call's `runner_tool_started` record.
#[derive(Debug, Clone, PartialEq)]
pub struct StartedCall {
    /// The process group the command started.
    pub group: Option<GroupIdentity>,
}

/// The text of a synthetic result for a call that started and never got its result: it may
/// have done its work.
pub(crate) const STARTED_UNANSWERED_RESULT: &str = "Interrupted: the run stopped while this tool call was running. It was started and may have completed: check its effects before running it again.";

impl ToolCallRecord {
    /// The synthetic result text for this call when it has no result.
    pub(crate) fn unanswered_text(&self) -> &'static str {
        if self.started.is_some() {
            STARTED_UNANSWERED_RESULT
        } else {
            UNANSWERED_RESULT
        }
    }
}

/// The conversation rebuilt from a transcript ([`Transcript::conversation`]).
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    /// The messages, oldest first (mid-conversation gaps repaired).
    pub messages: Vec<Message>,
    /// uuid of the chain's last record: new records chain onto it.
    pub last_uuid: Option<String>,
    /// Line of the compact boundary (or summary record) the conversation starts at.
    pub compact_boundary: Option<usize>,
    /// Every tool call in the conversation, in order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Calls of the last exchange that have no result.
    pub unanswered: Vec<ToolCallRecord>,
    /// How many records the chain holds.
    pub records: usize,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(lines: &[Value]) -> Transcript {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        parse_transcript(Path::new("t.jsonl"), text.as_bytes()).unwrap()
    }

    #[test]
    fn a_byte_order_mark_at_the_start_is_ignored() {
        let first = json!({"type": "system", "subtype": "runner_init", "uuid": "u0"});
        let text = format!("\u{feff}{first}\n{}\n", json!({"type": "summary"}));
        let t = parse_transcript(Path::new("t.jsonl"), text.as_bytes()).unwrap();
        assert_eq!(t.records.len(), 2);
        assert_eq!(t.records[0].value, first);
        assert!(t.init_record().is_some());
        assert!(t.skipped.is_empty() && t.truncated.is_none());
    }

    fn user(uuid: &str, parent: Option<&str>, content: Value) -> Value {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "isSidechain": false,
            "message": {"role": "user", "content": content}})
    }

    fn assistant(uuid: &str, parent: &str, id: &str, block: Value) -> Value {
        json!({"type": "assistant", "uuid": uuid, "parentUuid": parent,
            "message": {"id": id, "role": "assistant", "content": [block]}})
    }

    fn tool_use(id: &str) -> Value {
        json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "true"}})
    }

    fn result(id: &str) -> Value {
        json!([{"type": "tool_result", "tool_use_id": id, "content": "ok"}])
    }

    fn texts(c: &Conversation) -> Vec<String> {
        c.messages.iter().map(Message::text).collect()
    }

    #[test]
    fn malformed_lines_are_skipped_and_a_cut_last_line_is_truncated() {
        let text = "{\"type\":\"user\"}\nnot json\n[1]\n\n{\"type\":\"assistant\"}\n{\"type\":\"us";
        let t = parse_transcript(Path::new("t.jsonl"), text.as_bytes()).unwrap();
        assert_eq!(t.records.len(), 2);
        assert_eq!(
            t.skipped.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(t.truncated.as_ref().map(|s| s.line), Some(6));
    }

    #[test]
    fn chain_skips_sidechains_abandoned_attempts_and_other_branches() {
        let t = parse(&[
            user("u1", None, json!("first")),
            assistant(
                "a1",
                "u1",
                "m1",
                json!({"type": "text", "text": "old branch"}),
            ),
            assistant("a2", "u1", "m2", json!({"type": "text", "text": "answer"})),
            json!({"type": "user", "uuid": "s1", "parentUuid": "a2", "isSidechain": true,
                "message": {"role": "user", "content": "subagent"}}),
            json!({"type": "system", "subtype": "runner_attempt_abandoned", "uuid": "x",
                "parentUuid": null, "streamedUuids": ["a3"]}),
            assistant(
                "a3",
                "a2",
                "m3",
                json!({"type": "text", "text": "abandoned"}),
            ),
            json!({"type": "system", "subtype": "runner_result", "uuid": "r", "parentUuid": null}),
        ]);
        let c = t.conversation().unwrap();
        assert_eq!(texts(&c), vec!["first", "answer"]);
        assert_eq!(c.last_uuid.as_deref(), Some("a2"));
        assert_eq!(c.records, 2);
    }

    #[test]
    fn chain_restarts_at_the_last_compact_boundary() {
        let t = parse(&[
            user("u1", None, json!("before")),
            assistant("a1", "u1", "m1", json!({"type": "text", "text": "old"})),
            json!({"type": "system", "subtype": "compact_boundary", "uuid": "b1",
                "parentUuid": null, "logicalParentUuid": "a1"}),
            json!({"type": "user", "uuid": "u2", "parentUuid": "b1", "isCompactSummary": true,
                "message": {"role": "user", "content": "summary of the work"}}),
            assistant("a2", "u2", "m2", json!({"type": "text", "text": "after"})),
        ]);
        let c = t.conversation().unwrap();
        assert_eq!(texts(&c), vec!["summary of the work", "after"]);
        assert_eq!(c.compact_boundary, Some(3));
    }

    #[test]
    fn tool_calls_are_paired_and_the_tail_reported() {
        let t = parse(&[
            user("u1", None, json!("go")),
            // Mid-conversation: t1 answered, t2 never.
            assistant("a1", "u1", "m1", tool_use("t1")),
            assistant("a2", "a1", "m1", tool_use("t2")),
            user("u2", Some("a2"), result("t1")),
            // A result for a call that is not in the message before it is dropped.
            user("u3", Some("u2"), result("t9")),
            // Tail: t3 answered, t4 not.
            assistant("a3", "u3", "m2", tool_use("t3")),
            assistant("a4", "a3", "m2", tool_use("t4")),
            user("u4", Some("a4"), result("t3")),
        ]);
        let c = t.conversation().unwrap();
        assert_eq!(c.messages.len(), 5);
        let ids = |m: &Message| -> Vec<String> {
            m.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(ids(&c.messages[2]), vec!["t2", "t1"]);
        assert_eq!(ids(&c.messages[4]), vec!["t3"]);
        let tail: Vec<&str> = c.unanswered.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(tail, vec!["t4"]);
        assert_eq!(c.unanswered[0].assistant_uuid, "a4");
        assert_eq!(c.tool_calls.len(), 4);
        assert_eq!(c.tool_calls[0].result_is_error, Some(false));
        assert_eq!(c.tool_calls[1].result_is_error, None);
    }

    #[test]
    fn started_calls_without_a_result_may_have_completed() {
        let started = |id: &str, group: Value| {
            json!({"type": "system", "subtype": "runner_tool_started", "uuid": format!("s-{id}"),
                "parentUuid": null, "toolName": "Bash", "toolUseId": id, "processGroup": group})
        };
        let t = parse(&[
            user("u1", None, json!("go")),
            // Mid-conversation: t1 started and never answered, t2 never started.
            assistant("a1", "u1", "m1", tool_use("t1")),
            started("t1", Value::Null),
            assistant("a2", "a1", "m1", tool_use("t2")),
            user("u2", Some("a2"), json!("next")),
            // Tail: t3 started with a process group, t4 did not start.
            assistant("a3", "u2", "m2", tool_use("t3")),
            started("t3", json!({"pgid": 4242, "startTicks": 77, "bootId": "b"})),
            assistant("a4", "a3", "m2", tool_use("t4")),
        ]);
        let c = t.conversation().unwrap();
        let text = |id: &str| {
            c.messages[2]
                .content
                .iter()
                .find_map(|b| match b {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } if tool_use_id == id => Some(content.as_str()),
                    _ => None,
                })
                .unwrap()
        };
        assert_eq!(text("t1"), STARTED_UNANSWERED_RESULT);
        assert_eq!(text("t2"), UNANSWERED_RESULT);
        let tail: Vec<(&str, &str)> = c
            .unanswered
            .iter()
            .map(|u| (u.id.as_str(), u.unanswered_text()))
            .collect();
        assert_eq!(
            tail,
            vec![("t3", STARTED_UNANSWERED_RESULT), ("t4", UNANSWERED_RESULT)]
        );
        let group = c.unanswered[0].started.as_ref().unwrap().group.as_ref();
        assert_eq!(group.map(|g| (g.pgid, g.start_ticks)), Some((4242, 77)));
    }

    #[test]
    fn claude_code_fixture_loads() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../tests/fixtures/transcripts/claude-code-viewer_session_fe5e1c67_v1.0.98_first40lines.jsonl",
        );
        let t = read_transcript(p).unwrap();
        assert!(t.init_info().is_none());
        let c = t.conversation().unwrap();
        assert_eq!(c.unanswered.len(), 2, "{:?}", c.unanswered);
        assert!(c.messages.iter().all(|m| !m.content.is_empty()));
    }
}
