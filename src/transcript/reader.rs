//! Reading a JSONL transcript back (runner's own, or Claude Code's).
//!
//! Blank lines are skipped. A last line that does not parse is the trace of a killed run: it
//! is reported in [`Transcript::truncated`], not an error. A malformed line anywhere else is an
//! error naming the line.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::events::InitInfo;
use crate::model::{ContentBlock, Message, Role, ToolSpec};
use crate::transcript::record::{SUBTYPE_INIT, SUBTYPE_RESULT};

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
    /// A line that is not the last one is not valid JSON.
    #[error("{}:{line}: malformed transcript record: {source}", path.display())]
    Malformed {
        /// The transcript.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parse error.
        source: serde_json::Error,
    },
    /// A line holds JSON that is not an object.
    #[error("{}:{line}: transcript record is not a JSON object", path.display())]
    NotObject {
        /// The transcript.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
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

/// Parse transcript bytes (`path` only names the source in errors).
pub fn parse_transcript(path: &Path, bytes: &[u8]) -> Result<Transcript, TranscriptError> {
    let lines: Vec<(usize, &[u8])> = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix(b"\r").unwrap_or(l)))
        .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
        .collect();
    let last = lines.last().map(|(n, _)| *n);
    let mut records = Vec::with_capacity(lines.len());
    let mut truncated = None;
    for (line, text) in lines {
        match serde_json::from_slice::<Value>(text) {
            Ok(value @ Value::Object(_)) => records.push(Record { line, value }),
            Ok(_) => {
                return Err(TranscriptError::NotObject {
                    path: path.to_path_buf(),
                    line,
                });
            }
            Err(e) if Some(line) == last => {
                tracing::warn!(path = %path.display(), line, "transcript ends in a truncated record; ignoring it");
                truncated = Some(TruncatedLine {
                    line,
                    bytes: text.len(),
                    error: e.to_string(),
                });
            }
            Err(source) => {
                return Err(TranscriptError::Malformed {
                    path: path.to_path_buf(),
                    line,
                    source,
                });
            }
        }
    }
    Ok(Transcript {
        path: path.to_path_buf(),
        records,
        truncated,
    })
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

    /// The main conversation (sidechains and system records left out): per-block assistant
    /// records of one `message.id` merged into one message, consecutive user records (e.g.
    /// one per tool result) merged into one.
    pub fn messages(&self) -> Result<Vec<Message>, TranscriptError> {
        let mut out: Vec<Message> = Vec::new();
        for r in &self.records {
            let role = match r.kind() {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => continue,
            };
            if r.is_sidechain() {
                continue;
            }
            let Some(msg) = r.message() else { continue };
            let blocks = self.content_blocks(r, msg.get("content"))?;
            let id = msg.get("id").and_then(Value::as_str).map(str::to_string);
            let merge = match out.last() {
                Some(prev) if prev.role == role => match role {
                    Role::User => true,
                    Role::Assistant => id.is_some() && prev.id == id,
                },
                _ => false,
            };
            match out.last_mut() {
                Some(prev) if merge => prev.content.extend(blocks),
                _ => out.push(Message {
                    role,
                    content: blocks,
                    id,
                }),
            }
        }
        Ok(out)
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
                .map(|b| ContentBlock::from_value(b.clone()).map_err(bad))
                .collect(),
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(other) => Err(bad(format!("content is neither text nor blocks: {other}"))),
        }
    }
}
