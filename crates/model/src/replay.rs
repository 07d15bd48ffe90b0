//! The replay provider: serves a cassette's responses in order while the real tools run.
//!
//! Lenient replay (the default): requests are served in order; before each one runner checks
//! that the conversation still fits the recording (same number of messages, and the tool
//! results answer the same tool_use ids), so a cassette that drifted fails with a clear error
//! instead of feeding the model's old answers to a different conversation.
//!
//! Strict replay (a prompt regression test): each request's normalized digest
//! ([`super::cassette::normalize_request`], redacted as when recording) must equal the recorded
//! one; otherwise the call fails with [`ProviderError::Replay`] and a diff of what changed
//! ([`super::cassette_diff::describe`]), and the run ends as `api_error` (exit 4).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::stream;
use serde_json::Value;

use super::cassette::{
    Cassette, CassetteError, Exchange, SystemParts, WORKDIR_TOKEN, digest, normalize_request,
    replace_in_strings,
};
use super::cassette_diff;
use super::settings::ReplayMode;
use super::{ModelCall, ModelRequest, Provider, ProviderError, ResponseMeta, StreamEvent};
use crate::ContentBlock;
use runner_protocol::redact::Redactor;

/// Serves recorded responses.
pub struct ReplayProvider {
    path: PathBuf,
    cassette: Cassette,
    workdir: PathBuf,
    mode: ReplayMode,
    redactor: Arc<Redactor>,
    system: SystemParts,
    next: Mutex<usize>,
    /// Where a lenient replay's conversation first departed from the recording (request
    /// number and what differed), kept to explain a replay that later stops fitting. A change
    /// between success and error replaces an earlier change of text only.
    divergence: Mutex<Option<(usize, bool, String)>>,
}

impl ReplayProvider {
    /// Open a cassette for lenient replay in `workdir`.
    pub fn open(path: &Path, workdir: &Path) -> Result<Self, CassetteError> {
        Ok(ReplayProvider {
            path: path.to_path_buf(),
            cassette: Cassette::load(path)?,
            workdir: workdir.to_path_buf(),
            mode: ReplayMode::Lenient,
            redactor: Arc::new(Redactor::new(Vec::new())),
            system: SystemParts::default(),
            next: Mutex::new(0),
            divergence: Mutex::new(None),
        })
    }

    /// Check requests strictly: normalize them like the recorder did (workdir masked, the
    /// spec's `system` parts included, secrets redacted by `redactor`) and compare digests.
    pub fn strict(mut self, redactor: Arc<Redactor>, system: SystemParts) -> Self {
        self.mode = ReplayMode::Strict;
        self.redactor = redactor;
        self.system = system;
        self
    }

    /// Strict check of request `seq` against its exchange.
    fn check_digest(
        &self,
        seq: usize,
        ex: &Exchange,
        request: &ModelRequest,
    ) -> Result<(), ProviderError> {
        let mut current = normalize_request(request, &self.workdir, &self.system);
        self.redactor.redact_value(&mut current);
        let now = digest(&current);
        if now == ex.request_digest {
            return Ok(());
        }
        let mut diff = cassette_diff::describe(&ex.request, &current);
        if diff.is_empty() {
            diff = "the recorded request itself does not hash to its digest (was the cassette edited by hand?)".into();
        }
        Err(ProviderError::Replay(format!(
            "strict replay: request {} does not match cassette {} (recorded {}, now {now}). What changed:\n{diff}\nIf the change is intended, re-record the cassette with `runner exec --record FILE`.",
            seq + 1,
            self.path.display(),
            ex.request_digest,
        )))
    }
}

impl ReplayProvider {
    /// Note where request `seq` departs from the recorded one (lenient replay). Only the
    /// newest message and the calls it answers are compared, so a turn costs the same however
    /// long the conversation is.
    fn note_divergence(&self, seq: usize, ex: &Exchange, request: &ModelRequest) {
        let tail = |m: &[Value]| Value::Array(m[m.len().saturating_sub(2)..].to_vec());
        let Some(recorded) = ex.request.get("messages").and_then(Value::as_array) else {
            return;
        };
        let from = request.messages.len().saturating_sub(2);
        let Ok(mut now) = serde_json::to_value(&request.messages[from..]) else {
            return;
        };
        // The recording masks the workdir (normalize_request): so does the comparison.
        replace_in_strings(&mut now, &self.workdir.to_string_lossy(), WORKDIR_TOKEN);
        let Some((status, why)) = cassette_diff::tool_result_divergence(&tail(recorded), &now)
        else {
            return;
        };
        let mut d = self.divergence.lock().unwrap_or_else(|p| p.into_inner());
        let replace = match &*d {
            None => true,
            Some((_, earlier_status, _)) => status && !earlier_status,
        };
        if replace {
            *d = Some((seq, status, why));
        }
    }

    /// " The conversation first departed from the recording at request N: …", or nothing.
    fn divergence_note(&self) -> String {
        let d = self.divergence.lock().unwrap_or_else(|p| p.into_inner());
        match &*d {
            Some((seq, _, why)) => format!(
                " The conversation first departed from the recording at request {}: {why}",
                seq + 1
            ),
            None => String::new(),
        }
    }
}

fn tool_result_ids(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                .filter_map(|b| {
                    b.get("tool_use_id")
                        .and_then(Value::as_str)
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[async_trait::async_trait]
impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        "replay"
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelCall, ProviderError> {
        let seq = {
            let mut next = self
                .next
                .lock()
                .map_err(|_| ProviderError::Replay("replay state poisoned".into()))?;
            let seq = *next;
            *next += 1;
            seq
        };
        let Some(ex) = self.cassette.exchanges.get(seq) else {
            return Err(ProviderError::Replay(format!(
                "cassette {} is exhausted: it holds {} recorded responses and the run asked for response {}. The conversation went further than the recording.{} If the run is right and the recording old, re-record it with `runner exec --record`.",
                self.path.display(),
                self.cassette.exchanges.len(),
                seq + 1,
                self.divergence_note()
            )));
        };
        if self.mode == ReplayMode::Strict {
            self.check_digest(seq, ex, request)?;
        } else {
            self.note_divergence(seq, ex, request);
        }
        let recorded_msgs = ex.request.get("messages").cloned().unwrap_or(Value::Null);
        let recorded_len = recorded_msgs.as_array().map_or(0, Vec::len);
        if recorded_len != request.messages.len() {
            return Err(ProviderError::Replay(format!(
                "cassette {} no longer fits the conversation at response {}: the request has {} messages, the recording had {}.{}",
                self.path.display(),
                seq + 1,
                request.messages.len(),
                recorded_len,
                self.divergence_note()
            )));
        }
        let current: Vec<String> = request
            .messages
            .last()
            .map(|m| {
                m.content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let recorded = tool_result_ids(&recorded_msgs);
        if current != recorded {
            return Err(ProviderError::Replay(format!(
                "cassette {} no longer fits the conversation at response {}: the request answers tool calls {:?}, the recording answered {:?}.{}",
                self.path.display(),
                seq + 1,
                current,
                recorded,
                self.divergence_note()
            )));
        }
        let mut events = Vec::with_capacity(ex.events.len());
        for ev in &ex.events {
            let mut v = serde_json::to_value(ev)
                .map_err(|e| ProviderError::Replay(format!("cannot re-encode event: {e}")))?;
            replace_in_strings(&mut v, WORKDIR_TOKEN, &self.workdir.to_string_lossy());
            let ev: StreamEvent = serde_json::from_value(v)
                .map_err(|e| ProviderError::Replay(format!("cannot decode event: {e}")))?;
            events.push(Ok(ev));
        }
        Ok(ModelCall {
            meta: ResponseMeta {
                request_id: ex.request_id.clone(),
                ..ResponseMeta::default()
            },
            events: Box::pin(stream::iter(events)),
        })
    }
}
