//! What a resumed session does before the loop continues.

use serde_json::Value;

use crate::agent::{Agent, State};
use crate::events::{RunEvent, new_uuid};
use crate::model::{ContentBlock, Message, Role};
use crate::process::identity::Leftover;
use crate::transcript::reader::ToolCallRecord;

/// Answer the calls the run never answered with error results, recorded in the transcript
/// like any tool result, so the conversation is valid before the loop continues. A call that
/// had started (a `runner_tool_started` record) is said to have maybe completed, and the
/// process group it started is killed if it still runs.
pub(crate) fn answer_unanswered(agent: &mut Agent, state: &mut State, calls: &[ToolCallRecord]) {
    if calls.is_empty() {
        return;
    }
    let started = calls.iter().filter(|c| c.started.is_some()).count();
    tracing::warn!(
        calls = calls.len(),
        started,
        "the run stopped before answering some tool calls; they get error results and are not run again"
    );
    for c in calls {
        stop_leftover(c);
    }
    let mut content = Vec::with_capacity(calls.len());
    for c in calls {
        let text = c.unanswered_text();
        let block = ContentBlock::ToolResult {
            tool_use_id: c.id.clone(),
            content: text.into(),
            is_error: true,
        };
        let uuid = new_uuid();
        agent.emit(RunEvent::ToolResult {
            uuid: uuid.clone(),
            parent_uuid: state.last_uuid.clone(),
            source_assistant_uuid: c.assistant_uuid.clone(),
            block: block.clone(),
            tool_use_result: Some(Value::String(format!("Error: {text}"))),
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

/// Kill what an unanswered command of the previous run left running.
fn stop_leftover(c: &ToolCallRecord) {
    let Some(group) = c.started.as_ref().and_then(|s| s.group.as_ref()) else {
        return;
    };
    match group.kill_if_running() {
        Leftover::Killed => tracing::warn!(
            tool = %c.name,
            id = %c.id,
            pgid = group.pgid,
            "the interrupted run's call was still running: its process group was killed"
        ),
        Leftover::Gone => tracing::debug!(
            pgid = group.pgid,
            "the interrupted call's process group is gone"
        ),
        Leftover::Reused => tracing::debug!(
            pgid = group.pgid,
            "the interrupted call's process group id now belongs to another process (or another boot); left alone"
        ),
    }
}
