//! [`RecordBuilder`]: run events to transcript records.

use std::borrow::Cow;

use crate::contract::lossy::DisplayPath;
use crate::contract::message::{AssistantMessage, UserMessage};
use crate::contract::result::ResultMessage;
use crate::contract::system::{
    ChecksFields, InstructionsFields, IntegrityFields, ModelFallbackFields, NetworkFields,
    TimingFields, denial_message, instructions_message, network_message,
};
use crate::contract::uuid_or;
use crate::events::RunEvent;

use super::{
    AbandonedFields, ApiRetryFields, AssistantRecord, CompactBoundaryRecord, CompactMetadata,
    DenialFields, ENTRYPOINT, Head, InitFields, InitRecord, Level, OffChain, Record, RecordBody,
    ResultFields, ResumeRecord, SystemRecord, ToolStartedFields, UserRecord, WorktreeFields,
};

/// Turns events into records; holds what every record repeats (from `Init`) and the last
/// conversation record's uuid.
pub struct RecordBuilder {
    session: SessionFields,
    last_chain_uuid: Option<String>,
    resuming: bool,
    clock: Box<dyn FnMut() -> String + Send>,
    new_uuid: Box<dyn FnMut() -> String + Send>,
}

/// The borrowed parts of a [`RecordBuilder`] (see [`RecordBuilder::parts`]).
type Parts<'a> = (
    Stamp<'a>,
    &'a mut Option<String>,
    bool,
    &'a mut Box<dyn FnMut() -> String + Send>,
);

/// Makes a record with the session's head and the clock's timestamp.
struct Stamp<'a> {
    session: &'a SessionFields,
    clock: &'a mut Box<dyn FnMut() -> String + Send>,
}

impl<'a> Stamp<'a> {
    fn record(
        &mut self,
        parent_uuid: Option<&'a str>,
        body: RecordBody<'a>,
        uuid: Cow<'a, str>,
    ) -> Record<'a> {
        Record {
            head: self.session.head(parent_uuid),
            body,
            uuid,
            timestamp: (self.clock)(),
        }
    }
}

/// The [`Head`] fields that stay the same for the whole run.
struct SessionFields {
    session_id: String,
    cwd: String,
    version: String,
    git_branch: String,
}

impl SessionFields {
    fn head<'a>(&'a self, parent_uuid: Option<&'a str>) -> Head<'a> {
        Head {
            parent_uuid,
            is_sidechain: false,
            user_type: "external",
            entrypoint: ENTRYPOINT,
            cwd: &self.cwd,
            session_id: &self.session_id,
            version: &self.version,
            git_branch: &self.git_branch,
        }
    }
}

impl Default for RecordBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// Now as RFC 3339 UTC with milliseconds (`2026-08-20T10:21:54.344Z`).
pub fn now_timestamp() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

impl RecordBuilder {
    /// A builder using the system clock and random uuids.
    pub fn new() -> Self {
        RecordBuilder {
            session: SessionFields {
                session_id: String::new(),
                cwd: String::new(),
                version: crate::VERSION.to_string(),
                git_branch: String::new(),
            },
            last_chain_uuid: None,
            resuming: false,
            clock: Box::new(now_timestamp),
            new_uuid: Box::new(|| uuid::Uuid::new_v4().to_string()),
        }
    }

    /// Replace the timestamp source (tests).
    pub fn with_clock(mut self, f: impl FnMut() -> String + Send + 'static) -> Self {
        self.clock = Box::new(f);
        self
    }

    /// Replace the uuid source for records the events carry no uuid for (init, denial,
    /// checks, worktree) (tests).
    pub fn with_uuid_source(mut self, f: impl FnMut() -> String + Send + 'static) -> Self {
        self.new_uuid = Box::new(f);
        self
    }

    /// A builder for a resumed run appending to an existing transcript: the `Init` event
    /// becomes a `runner_resume` record (the file already starts with its `runner_init`), and
    /// off-chain records point at `last_chain_uuid` until the conversation moves on.
    pub fn resuming(mut self, last_chain_uuid: Option<String>) -> Self {
        self.resuming = true;
        self.last_chain_uuid = last_chain_uuid;
        self
    }

    /// Take the session's fields from `Init`: every record repeats them.
    fn note_session(&mut self, event: &RunEvent) {
        if let RunEvent::Init(info) = event {
            self.session = SessionFields {
                session_id: info.session_id.clone(),
                cwd: info.cwd.display().to_string(),
                version: info.version.clone(),
                git_branch: info.git_branch.clone().unwrap_or_default(),
            };
        }
    }

    /// The builder's parts, borrowed apart: what stamps a record, the last conversation
    /// record's uuid, whether the run resumes, and the uuid source.
    fn parts(&mut self) -> Parts<'_> {
        let RecordBuilder {
            session,
            last_chain_uuid,
            resuming,
            clock,
            new_uuid,
        } = self;
        (
            Stamp { session, clock },
            last_chain_uuid,
            *resuming,
            new_uuid,
        )
    }

    /// The records for `event` (none, one, or one per assistant block), not redacted.
    pub fn records<'a>(&'a mut self, event: &'a RunEvent) -> Vec<Record<'a>> {
        self.note_session(event);
        let (mut stamp, last_chain_uuid, resuming, new_uuid) = self.parts();
        let mut record = |parent, body, uuid| stamp.record(parent, body, uuid);
        let system = RecordBody::System;
        match event {
            RunEvent::Init(info) => {
                let uuid = uuid_or(&info.uuid, new_uuid);
                let init = InitFields::from(&**info);
                let body = if resuming {
                    SystemRecord::RunnerResume(ResumeRecord {
                        init,
                        logical_parent_uuid: last_chain_uuid.as_deref(),
                        content: format!("runner {} resumed task {}", info.version, info.task_name),
                        level: Level::Info,
                    })
                } else {
                    SystemRecord::RunnerInit(InitRecord {
                        init,
                        content: format!("runner {} started task {}", info.version, info.task_name),
                        level: Level::Info,
                    })
                };
                vec![record(None, system(body), uuid)]
            }
            RunEvent::UserText {
                uuid,
                parent_uuid,
                text,
            } => {
                *last_chain_uuid = Some(uuid.clone());
                let body = UserRecord::Text {
                    message: UserMessage::text(text),
                    prompt_source: "sdk",
                };
                vec![record(
                    parent_uuid.as_deref(),
                    RecordBody::User(body),
                    uuid.into(),
                )]
            }
            RunEvent::AssistantBlockStreamed { .. } => Vec::new(),
            RunEvent::AssistantResponse { meta, blocks } => {
                if let Some(last) = blocks.last() {
                    *last_chain_uuid = Some(last.uuid.clone());
                }
                blocks
                    .iter()
                    .map(|b| {
                        let body = AssistantRecord {
                            message: AssistantMessage::completed(meta, &b.block),
                            request_id: meta.request_id.as_deref(),
                        };
                        let parent = b.parent_uuid.as_deref();
                        record(parent, RecordBody::Assistant(body), (&b.uuid).into())
                    })
                    .collect()
            }
            RunEvent::ToolResult {
                uuid,
                parent_uuid,
                source_assistant_uuid,
                block,
                tool_use_result,
            } => {
                *last_chain_uuid = Some(uuid.clone());
                let body = UserRecord::ToolResult {
                    message: UserMessage::blocks(std::slice::from_ref(block)),
                    tool_use_result: tool_use_result.as_ref(),
                    source_tool_assistant_uuid: source_assistant_uuid,
                };
                vec![record(
                    parent_uuid.as_deref(),
                    RecordBody::User(body),
                    uuid.into(),
                )]
            }
            RunEvent::PermissionDenied(d) => {
                let uuid = uuid_or(&d.uuid, new_uuid);
                let body = SystemRecord::RunnerPermissionDenied(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: denial_message(d),
                    level: Level::Warning,
                    fields: DenialFields::from(d),
                });
                vec![record(None, system(body), uuid)]
            }
            RunEvent::AttemptAbandoned {
                uuid,
                attempt,
                error,
                streamed_uuids,
            } => {
                let body = SystemRecord::RunnerAttemptAbandoned(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: format!("response attempt {attempt} abandoned: {error}"),
                    level: Level::Warning,
                    fields: AbandonedFields {
                        attempt: *attempt,
                        error,
                        streamed_uuids,
                    },
                });
                vec![record(None, system(body), uuid.into())]
            }
            RunEvent::Checks { attempt, results } => {
                let failed = results.iter().filter(|c| !c.passed).count();
                let passed = results.len() - failed;
                let body = SystemRecord::RunnerChecks(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: format!(
                        "verify checks for attempt {attempt}: {passed} passed, {failed} failed"
                    ),
                    level: if failed > 0 {
                        Level::Warning
                    } else {
                        Level::Info
                    },
                    fields: ChecksFields {
                        attempt: *attempt,
                        checks: results,
                    },
                });
                vec![record(None, system(body), new_uuid().into())]
            }
            RunEvent::Worktree {
                path,
                repo_root,
                base_commit,
            } => {
                let body = SystemRecord::RunnerWorktree(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: format!(
                        "task runs in git worktree {} (base commit {base_commit})",
                        path.display()
                    ),
                    level: Level::Info,
                    fields: WorktreeFields {
                        worktree: DisplayPath(path),
                        repo_root: DisplayPath(repo_root),
                        base_commit,
                    },
                });
                vec![record(None, system(body), new_uuid().into())]
            }
            RunEvent::ToolStarted {
                uuid,
                tool_use_id,
                tool_name,
                group,
            } => {
                let content = match group {
                    Some(g) => format!(
                        "{tool_name} call {tool_use_id} started (process group {})",
                        g.pgid
                    ),
                    None => format!("{tool_name} call {tool_use_id} started"),
                };
                let body = SystemRecord::RunnerToolStarted(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content,
                    level: Level::Info,
                    fields: ToolStartedFields {
                        tool_name,
                        tool_use_id,
                        process_group: group.as_ref(),
                    },
                });
                vec![record(None, system(body), uuid.as_str().into())]
            }
            RunEvent::Network { uuid, attempt } => {
                let body = SystemRecord::RunnerNetwork(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: network_message(attempt),
                    level: if attempt.allowed && attempt.error.is_none() {
                        Level::Info
                    } else {
                        Level::Warning
                    },
                    fields: NetworkFields::from(attempt),
                });
                vec![record(None, system(body), uuid.as_str().into())]
            }
            RunEvent::Integrity { uuid, change } => {
                let body = SystemRecord::RunnerIntegrity(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: format!("integrity: {}", change.message()),
                    level: Level::Error,
                    fields: IntegrityFields::from(change),
                });
                vec![record(None, system(body), uuid.as_str().into())]
            }
            RunEvent::ApiRetry {
                uuid,
                attempt,
                max_retries,
                retry_delay_ms,
                error_status,
                error,
                message,
            } => {
                let body = SystemRecord::RunnerApiRetry(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: format!(
                        "API request failed ({message}); retry {attempt}/{max_retries} in {retry_delay_ms} ms"
                    ),
                    level: Level::Warning,
                    fields: ApiRetryFields {
                        attempt: *attempt,
                        max_retries: *max_retries,
                        retry_delay_ms: *retry_delay_ms,
                        error_status: *error_status,
                        error,
                        error_message: message,
                    },
                });
                vec![record(None, system(body), uuid.into())]
            }
            RunEvent::CompactBoundary {
                uuid,
                logical_parent_uuid,
                trigger,
                pre_tokens,
            } => {
                *last_chain_uuid = Some(uuid.clone());
                let body = SystemRecord::CompactBoundary(CompactBoundaryRecord {
                    content: "Conversation compacted",
                    level: Level::Info,
                    logical_parent_uuid: logical_parent_uuid.as_deref(),
                    compact_metadata: CompactMetadata {
                        trigger,
                        pre_tokens: *pre_tokens,
                    },
                });
                vec![record(None, system(body), uuid.into())]
            }
            RunEvent::CompactSummary {
                uuid,
                parent_uuid,
                text,
            } => {
                *last_chain_uuid = Some(uuid.clone());
                let body = UserRecord::CompactSummary {
                    message: UserMessage::text(text),
                    is_compact_summary: true,
                };
                vec![record(
                    Some(parent_uuid),
                    RecordBody::User(body),
                    uuid.into(),
                )]
            }
            RunEvent::Instructions { uuid, files } => {
                let body = SystemRecord::RunnerInstructions(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: instructions_message(files),
                    level: Level::Info,
                    fields: InstructionsFields { files },
                });
                vec![record(None, system(body), uuid.into())]
            }
            RunEvent::ModelFallback {
                uuid,
                from,
                to,
                error,
            } => {
                let body = SystemRecord::RunnerModelFallback(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: format!(
                        "model {from} stayed overloaded; continuing with the fallback model {to}"
                    ),
                    level: Level::Warning,
                    fields: ModelFallbackFields {
                        from_model: from,
                        to_model: to,
                        error,
                    },
                });
                vec![record(None, system(body), uuid.into())]
            }
            RunEvent::Timing {
                uuid,
                turn,
                wall_ms,
                phases,
            } => {
                let body = SystemRecord::RunnerTiming(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: format!("turn {turn} took {wall_ms} ms"),
                    level: Level::Info,
                    fields: TimingFields {
                        turn: *turn,
                        wall_ms: *wall_ms,
                        phases,
                    },
                });
                vec![record(None, system(body), uuid.into())]
            }
            RunEvent::Result(r) => {
                let body = SystemRecord::RunnerResult(OffChain {
                    logical_parent_uuid: last_chain_uuid.as_deref(),
                    content: format!("task {} ended: {}", r.task_name, r.outcome.name()),
                    level: if r.outcome.is_error() {
                        Level::Error
                    } else {
                        Level::Info
                    },
                    fields: ResultFields {
                        result: Box::new(ResultMessage::new(r)),
                    },
                });
                vec![record(None, system(body), (&r.uuid).into())]
            }
        }
    }
}
