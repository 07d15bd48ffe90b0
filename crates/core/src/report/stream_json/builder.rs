//! [`FrameBuilder`]: run events to stream-json frames.

use std::borrow::Cow;

use crate::contract::message::{AssistantMessage, UserMessage};
use crate::contract::result::ResultMessage;
use crate::contract::system::{
    ChecksFields, InstructionsFields, IntegrityFields, ModelFallbackFields, NetworkFields,
    TimingFields,
};
use crate::contract::uuid_or;
use crate::events::RunEvent;

use super::frame::{
    AbandonedFrame, ApiRetryFrame, AssistantFrame, CompactBoundaryFrame, CompactMetadataFrame,
    Frame, InitFrame, Stamped, SystemFrame, UserFrame,
};

/// Turns events into frames; holds the session id (from `Init`) and what later frames refer
/// back to.
pub struct FrameBuilder {
    session_id: String,
    user_texts_seen: usize,
    /// uuids of frames of abandoned attempts, listed by the next assistant frame.
    superseded: Vec<String>,
    new_uuid: Box<dyn FnMut() -> String + Send>,
}

impl Default for FrameBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameBuilder {
    /// A builder drawing random uuids.
    pub fn new() -> Self {
        FrameBuilder {
            session_id: String::new(),
            user_texts_seen: 0,
            superseded: Vec::new(),
            new_uuid: Box::new(|| uuid::Uuid::new_v4().to_string()),
        }
    }

    /// Replace the uuid source for frames the events carry no uuid for (`system/init`,
    /// `permission_denied`, `runner_checks`); tests use it for stable output.
    pub fn with_uuid_source(mut self, f: impl FnMut() -> String + Send + 'static) -> Self {
        self.new_uuid = Box::new(f);
        self
    }

    /// Take the session id from `Init`: every frame repeats it.
    fn note_session(&mut self, event: &RunEvent) {
        if let RunEvent::Init(info) = event {
            self.session_id = info.session_id.clone();
        }
    }

    /// The frame for `event`, if it has one (not redacted).
    pub fn frame<'a>(&'a mut self, event: &'a RunEvent) -> Option<Frame<'a>> {
        self.note_session(event);
        let FrameBuilder {
            session_id,
            user_texts_seen,
            superseded,
            new_uuid,
        } = self;
        let session_id: &'a str = session_id;
        match event {
            RunEvent::Init(info) => {
                let uuid = uuid_or(&info.uuid, new_uuid);
                Some(Frame::System(SystemFrame::Init(InitFrame::new(info, uuid))))
            }
            RunEvent::UserText { uuid, text, .. } => {
                *user_texts_seen += 1;
                (*user_texts_seen > 1).then(|| {
                    Frame::User(UserFrame::Text {
                        message: UserMessage::text(text),
                        parent_tool_use_id: None,
                        session_id,
                        uuid,
                    })
                })
            }
            RunEvent::AssistantBlockStreamed { uuid, meta, block } => {
                Some(Frame::Assistant(AssistantFrame {
                    message: AssistantMessage::streamed(meta, block),
                    parent_tool_use_id: None,
                    session_id,
                    uuid,
                    request_id: meta.request_id.as_deref(),
                    supersedes: std::mem::take(superseded),
                }))
            }
            RunEvent::AssistantResponse { .. } => None,
            // Transcript-only: the SDK has no such message.
            RunEvent::Worktree { .. } | RunEvent::ToolStarted { .. } => None,
            RunEvent::Network { uuid, attempt } => {
                Some(Frame::System(SystemFrame::RunnerNetwork(Stamped {
                    fields: NetworkFields::from(attempt),
                    uuid: Cow::Borrowed(uuid),
                    session_id,
                })))
            }
            RunEvent::Integrity { uuid, change } => {
                Some(Frame::System(SystemFrame::RunnerIntegrity(Stamped {
                    fields: IntegrityFields::from(change),
                    uuid: Cow::Borrowed(uuid),
                    session_id,
                })))
            }
            RunEvent::ToolResult {
                uuid,
                block,
                tool_use_result,
                ..
            } => Some(Frame::User(UserFrame::ToolResult {
                message: UserMessage::blocks(std::slice::from_ref(block)),
                parent_tool_use_id: None,
                session_id,
                uuid,
                tool_use_result: tool_use_result.as_ref(),
            })),
            RunEvent::PermissionDenied(d) => {
                let uuid = uuid_or(&d.uuid, new_uuid);
                system(SystemFrame::PermissionDenied, d.into(), uuid, session_id)
            }
            RunEvent::AttemptAbandoned {
                uuid,
                attempt,
                error,
                streamed_uuids,
            } => {
                superseded.extend(streamed_uuids.iter().cloned());
                let fields = AbandonedFrame {
                    attempt: *attempt,
                    error,
                    streamed_uuids,
                };
                system(
                    SystemFrame::RunnerAttemptAbandoned,
                    fields,
                    uuid.into(),
                    session_id,
                )
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
                let fields = ApiRetryFrame {
                    attempt: *attempt,
                    max_retries: *max_retries,
                    retry_delay_ms: *retry_delay_ms,
                    error_status: *error_status,
                    error,
                    runner_error_message: message,
                };
                system(SystemFrame::ApiRetry, fields, uuid.into(), session_id)
            }
            RunEvent::Checks { attempt, results } => {
                let fields = ChecksFields {
                    attempt: *attempt,
                    checks: results,
                };
                let uuid = new_uuid().into();
                system(SystemFrame::RunnerChecks, fields, uuid, session_id)
            }
            RunEvent::CompactBoundary {
                uuid,
                trigger,
                pre_tokens,
                ..
            } => {
                let fields = CompactBoundaryFrame {
                    compact_metadata: CompactMetadataFrame {
                        trigger,
                        pre_tokens: *pre_tokens,
                    },
                };
                system(
                    SystemFrame::CompactBoundary,
                    fields,
                    uuid.into(),
                    session_id,
                )
            }
            RunEvent::CompactSummary { uuid, text, .. } => {
                Some(Frame::User(UserFrame::CompactSummary {
                    message: UserMessage::text(text),
                    parent_tool_use_id: None,
                    is_synthetic: true,
                    runner_compact_summary: true,
                    session_id,
                    uuid,
                }))
            }
            RunEvent::Instructions { uuid, files } => system(
                SystemFrame::RunnerInstructions,
                InstructionsFields { files },
                uuid.into(),
                session_id,
            ),
            RunEvent::ModelFallback {
                uuid,
                from,
                to,
                error,
            } => system(
                SystemFrame::RunnerModelFallback,
                ModelFallbackFields {
                    from_model: from,
                    to_model: to,
                    error,
                },
                uuid.into(),
                session_id,
            ),
            RunEvent::Timing {
                uuid,
                turn,
                wall_ms,
                phases,
            } => system(
                SystemFrame::RunnerTiming,
                TimingFields {
                    turn: *turn,
                    wall_ms: *wall_ms,
                    phases,
                },
                uuid.into(),
                session_id,
            ),
            RunEvent::Result(r) => Some(Frame::Result(Box::new(ResultMessage::new(r)))),
        }
    }
}

/// A `system` frame of `variant` holding `fields`, `uuid` and `session_id`.
fn system<'a, F>(
    variant: fn(Stamped<'a, F>) -> SystemFrame<'a>,
    fields: F,
    uuid: Cow<'a, str>,
    session_id: &'a str,
) -> Option<Frame<'a>> {
    Some(Frame::System(variant(Stamped {
        fields,
        uuid,
        session_id,
    })))
}
