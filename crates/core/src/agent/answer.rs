//! Answering one response's tool calls: run them (continuing what started while the response
//! streamed) and append their results to the conversation and every sink.

use std::collections::HashMap;

use super::core::Agent;
use super::state::State;
use crate::events::{RunEvent, new_uuid};
use crate::model::{ContentBlock, Message, Role};
use crate::outcome::{Outcome, OutcomeKind};
use crate::tools::ToolOutput;
use crate::tools::executor::{CallOutcome, PendingCall};
use crate::tools::streaming::StreamingExecutor;

/// Execute `calls`, continuing what `early` started while the message streamed (or, with
/// `run == false`, cancel that and answer them all as not run) and append the results.
pub(super) async fn answer_calls(
    agent: &mut Agent,
    state: &mut State,
    calls: &[PendingCall],
    tool_use_uuids: &HashMap<String, String>,
    early: StreamingExecutor,
    run: bool,
) -> Result<(), Outcome> {
    let outcomes = if run {
        match early
            .finish(calls, &agent.run.registry, &agent.policy, &agent.tool_ctx)
            .await
        {
            Ok(o) => o,
            Err(fatal) => {
                return Err(Outcome::new(
                    OutcomeKind::AgentError,
                    format!("tool failure ended the run: {fatal}"),
                ));
            }
        }
    } else {
        early.abandon().await;
        calls
            .iter()
            .map(|c| CallOutcome {
                id: c.id.clone(),
                output: ToolOutput::error("not run: the run stopped"),
                denial: None,
            })
            .collect()
    };
    // Connection attempts the calls made through the egress proxy come before their results.
    agent.drain_network();
    let mut content = Vec::with_capacity(outcomes.len());
    // The results are redacted already (`tools::executor`), before a large one was spilled.
    for out in outcomes {
        if let Some(d) = out.denial {
            agent.emit(RunEvent::PermissionDenied(d.clone()));
            state.denials.push(d);
        }
        let block = ContentBlock::ToolResult {
            tool_use_id: out.id.clone(),
            content: if out.output.content.is_empty() {
                "(no output)".to_string()
            } else {
                out.output.content
            },
            is_error: out.output.is_error,
        };
        let uuid = new_uuid();
        let source = tool_use_uuids.get(&out.id).cloned().unwrap_or_default();
        agent.emit(RunEvent::ToolResult {
            uuid: uuid.clone(),
            parent_uuid: state.last_uuid.clone(),
            source_assistant_uuid: source,
            block: block.clone(),
            tool_use_result: out.output.structured,
        });
        state.last_uuid = Some(uuid);
        content.push(block);
    }
    state.messages.push(Message {
        role: Role::User,
        content,
        id: None,
    });
    Ok(())
}
