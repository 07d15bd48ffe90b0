//! The `stream-json` output format: Claude Code's headless NDJSON frames (reference §2).
//!
//! | event | frame |
//! |---|---|
//! | `Init` | `system/init` |
//! | `UserText` | `user` (all but the first: Claude Code does not echo the prompt) |
//! | `AssistantBlockStreamed` | `assistant` with one block, `stop_reason: null` |
//! | `AssistantResponse` | nothing (its blocks were streamed) |
//! | `ToolResult` | `user` with the `tool_result` block and `tool_use_result` |
//! | `PermissionDenied` | `system/permission_denied` |
//! | `AttemptAbandoned` | `system/runner_attempt_abandoned` (consumers ignore unknown subtypes); the next `assistant` frame lists the abandoned frames' uuids in `supersedes` |
//! | `ApiRetry` | `system/api_retry` |
//! | `Result` | `result` ([`result_value`]) |

use std::io;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::events::{AssistantMeta, InitInfo, RunEvent, Sink};
use crate::model::ContentBlock;
use crate::redact::Redactor;
use crate::report::SharedOut;
use crate::report::json::{result_value, usage_value};

/// Writes one task's events as stream-json frames to a shared writer.
pub struct StreamJsonSink {
    out: SharedOut,
    redactor: Arc<Redactor>,
    session_id: String,
    user_texts_seen: usize,
    /// uuids of frames of abandoned attempts, listed by the next assistant frame.
    superseded: Vec<String>,
    new_uuid: Box<dyn FnMut() -> String + Send>,
}

impl StreamJsonSink {
    /// A sink writing to `out`, redacting with `redactor`.
    pub fn new(out: SharedOut, redactor: Arc<Redactor>) -> Self {
        StreamJsonSink {
            out,
            redactor,
            session_id: String::new(),
            user_texts_seen: 0,
            superseded: Vec::new(),
            new_uuid: Box::new(|| uuid::Uuid::new_v4().to_string()),
        }
    }

    /// Replace the uuid source for frames the events carry no uuid for (`system/init`,
    /// `permission_denied`); tests use it for stable output.
    pub fn with_uuid_source(mut self, f: impl FnMut() -> String + Send + 'static) -> Self {
        self.new_uuid = Box::new(f);
        self
    }

    /// The frame for `event`, if it has one (not redacted).
    pub fn frame(&mut self, event: &RunEvent) -> Option<Value> {
        match event {
            RunEvent::Init(info) => {
                self.session_id = info.session_id.clone();
                let uuid = if info.uuid.is_empty() {
                    (self.new_uuid)()
                } else {
                    info.uuid.clone()
                };
                Some(init_frame(info, &uuid))
            }
            RunEvent::UserText { uuid, text, .. } => {
                self.user_texts_seen += 1;
                (self.user_texts_seen > 1).then(|| {
                    json!({
                        "type": "user",
                        "message": {"role": "user", "content": text},
                        "parent_tool_use_id": null,
                        "session_id": self.session_id,
                        "uuid": uuid,
                    })
                })
            }
            RunEvent::AssistantBlockStreamed { uuid, meta, block } => {
                let mut frame = self.assistant_frame(uuid, meta, block);
                if !self.superseded.is_empty()
                    && let Some(m) = frame.as_object_mut()
                {
                    m.insert(
                        "supersedes".into(),
                        std::mem::take(&mut self.superseded).into(),
                    );
                }
                Some(frame)
            }
            RunEvent::AssistantResponse { .. } => None,
            // Transcript-only: the SDK has no such message.
            RunEvent::Worktree { .. } => None,
            RunEvent::ToolResult {
                uuid,
                block,
                tool_use_result,
                ..
            } => {
                let mut m = Map::new();
                m.insert("type".into(), "user".into());
                m.insert(
                    "message".into(),
                    json!({"role": "user", "content": [block.to_value()]}),
                );
                m.insert("parent_tool_use_id".into(), Value::Null);
                m.insert("session_id".into(), self.session_id.clone().into());
                m.insert("uuid".into(), uuid.clone().into());
                if let Some(r) = tool_use_result {
                    m.insert("tool_use_result".into(), r.clone());
                }
                Some(Value::Object(m))
            }
            RunEvent::PermissionDenied(d) => Some(json!({
                "type": "system",
                "subtype": "permission_denied",
                "tool_name": d.tool_name,
                "tool_use_id": d.tool_use_id,
                "decision_reason_type": "rule",
                "decision_reason": d.reason,
                "message": format!("Permission to use {} was denied: {}", d.tool_name, d.reason),
                "runner_tool_input": d.tool_input,
                "uuid": if d.uuid.is_empty() { (self.new_uuid)() } else { d.uuid.clone() },
                "session_id": self.session_id,
            })),
            RunEvent::AttemptAbandoned {
                uuid,
                attempt,
                error,
                streamed_uuids,
            } => {
                self.superseded.extend(streamed_uuids.iter().cloned());
                Some(json!({
                "type": "system",
                "subtype": "runner_attempt_abandoned",
                "attempt": attempt,
                "error": error,
                "streamed_uuids": streamed_uuids,
                "uuid": uuid,
                "session_id": self.session_id,
                }))
            }
            RunEvent::ApiRetry {
                uuid,
                attempt,
                max_retries,
                retry_delay_ms,
                error_status,
                error,
                message,
            } => Some(json!({
                "type": "system",
                "subtype": "api_retry",
                "attempt": attempt,
                "max_retries": max_retries,
                "retry_delay_ms": retry_delay_ms,
                "error_status": error_status,
                "error": error,
                "runner_error_message": message,
                "uuid": uuid,
                "session_id": self.session_id,
            })),
            RunEvent::Checks { attempt, results } => Some(json!({
                "type": "system",
                "subtype": "runner_checks",
                "attempt": attempt,
                "checks": results,
                "uuid": (self.new_uuid)(),
                "session_id": self.session_id,
            })),
            RunEvent::CompactBoundary {
                uuid,
                trigger,
                pre_tokens,
                ..
            } => Some(json!({
                "type": "system",
                "subtype": "compact_boundary",
                "compact_metadata": {"trigger": trigger, "pre_tokens": pre_tokens},
                "uuid": uuid,
                "session_id": self.session_id,
            })),
            RunEvent::CompactSummary { uuid, text, .. } => Some(json!({
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": null,
                "isSynthetic": true,
                "runner_compact_summary": true,
                "session_id": self.session_id,
                "uuid": uuid,
            })),
            RunEvent::Result(r) => Some(result_value(r)),
        }
    }

    fn assistant_frame(&self, uuid: &str, meta: &AssistantMeta, block: &ContentBlock) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), "assistant".into());
        m.insert(
            "message".into(),
            json!({
                "model": meta.model,
                "id": meta.message_id,
                "type": "message",
                "role": "assistant",
                "content": [block.to_value()],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage_value(&meta.usage),
            }),
        );
        m.insert("parent_tool_use_id".into(), Value::Null);
        m.insert("session_id".into(), self.session_id.clone().into());
        m.insert("uuid".into(), uuid.into());
        if let Some(req) = &meta.request_id {
            m.insert("request_id".into(), req.clone().into());
        }
        Value::Object(m)
    }
}

/// The `system/init` frame, with the SDK's required fields (`runner_version` stands in for
/// `claude_code_version`).
pub fn init_frame(info: &InitInfo, uuid: &str) -> Value {
    let api_key_source = if info.provider == "anthropic" {
        "ANTHROPIC_API_KEY"
    } else {
        "none"
    };
    json!({
        "type": "system",
        "subtype": "init",
        "cwd": info.cwd.display().to_string(),
        "session_id": info.session_id,
        "tools": info.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        "mcp_servers": [],
        "model": info.model,
        "permissionMode": info.permission_mode,
        "slash_commands": [],
        "apiKeySource": api_key_source,
        "runner_version": info.version,
        "output_style": "default",
        "skills": [],
        "plugins": [],
        "uuid": uuid,
        "runner_task": info.task_name,
        "runner_provider": info.provider,
    })
}

impl Sink for StreamJsonSink {
    fn emit(&mut self, event: &RunEvent) -> io::Result<()> {
        let Some(frame) = self.frame(event) else {
            return Ok(());
        };
        // One serialization, redacted only where a secret occurs (as the transcript does).
        let line = self
            .redactor
            .to_redacted_json(&frame)
            .map_err(io::Error::other)?;
        super::write_line(&self.out, line)
    }
}

#[cfg(test)]
mod tests;
