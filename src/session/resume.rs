//! What a resumed session does before the loop continues.

use serde_json::Value;

use crate::agent::{Agent, State};
use crate::events::{RunEvent, new_uuid};
use crate::model::{ContentBlock, Message, Role};
use crate::transcript::reader::{ToolCallRecord, UNANSWERED_RESULT};

/// Answer the calls the run never answered with error results, recorded in the transcript
/// like any tool result, so the conversation is valid before the loop continues.
pub(crate) fn answer_unanswered(agent: &mut Agent, state: &mut State, calls: &[ToolCallRecord]) {
    if calls.is_empty() {
        return;
    }
    tracing::warn!(
        calls = calls.len(),
        "the run stopped before answering some tool calls; they get error results and are not run again"
    );
    let mut content = Vec::with_capacity(calls.len());
    for c in calls {
        let block = ContentBlock::ToolResult {
            tool_use_id: c.id.clone(),
            content: UNANSWERED_RESULT.into(),
            is_error: true,
        };
        let uuid = new_uuid();
        agent.emit(RunEvent::ToolResult {
            uuid: uuid.clone(),
            parent_uuid: state.last_uuid.clone(),
            source_assistant_uuid: c.assistant_uuid.clone(),
            block: block.clone(),
            tool_use_result: Some(Value::String(format!("Error: {UNANSWERED_RESULT}"))),
        });
        state.last_uuid = Some(uuid);
        content.push(block);
    }
    state.messages.push(Message {
        role: Role::User,
        content,
        id: None,
    });
}
