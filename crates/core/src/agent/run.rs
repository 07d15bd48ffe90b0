//! The agent loop: one iteration per model turn. Each iteration checks the stop requests,
//! limits and budgets ([`limit_reached`]), makes the request with retries and compaction
//! ([`request_turn`]), records the response ([`record_response`]), and either ends the run or
//! goes on: a response without tool calls ends the turn ([`end_without_calls`]); one with
//! calls has them answered ([`answer_turn`]).

use std::collections::HashMap;

use super::answer::answer_calls;
use super::compact::{compact_after_overflow, prepare_context};
use super::core::{Agent, Input, hook_stopped};
use super::request::Attempt;
use super::state::State;
use super::timing::Phase;
use crate::events::{AssistantMeta, BlockRecord, RunEvent, new_uuid};
use crate::hooks::StopOutcome;
use crate::model::{ContentBlock, Message, ModelRequest, ModelResponse, Role, StopReason};
use crate::outcome::{Outcome, OutcomeKind};
use crate::retry::RetryState;
use crate::tools::executor::PendingCall;
use crate::tools::streaming::StreamingExecutor;

/// How many times in a row a `max_tokens` stop is continued before giving up.
pub(crate) const MAX_TOKENS_CONTINUATIONS: u32 = 3;
/// How many responses in a row may carry malformed tool input before the run fails.
pub(crate) const MALFORMED_TOOL_USE_LIMIT: u32 = 3;
/// How many `pause_turn` resends in a row are allowed.
pub(crate) const PAUSE_TURN_LIMIT: u32 = 8;
/// How many times in a row Stop hooks may make the loop continue (Claude Code's limit).
pub(crate) const STOP_HOOK_BLOCK_LIMIT: u32 = 8;

/// What the loop does after a step.
enum Step {
    /// Go on with the next iteration.
    Next,
    /// The run ends with this outcome.
    End(Outcome),
}

/// Run the loop from `state` with `input` until the model is done or a limit ends it.
/// Re-entrant: verify attempts, Stop hooks and resume call it again with the returned state.
pub async fn run(agent: &mut Agent, mut state: State, input: Input) -> (Outcome, State) {
    if let Input::User(text) = input {
        state
            .context
            .task_prompt
            .get_or_insert_with(|| text.clone());
        agent.push_user_text(&mut state, text);
    }
    super::structured::on_entry(agent.structured.as_ref());
    let mut pause_resends = 0u32;
    let mut retries = RetryState::new(agent.config.retry);
    agent.run.clock.restart();
    loop {
        if let Some(o) = limit_reached(agent, &state) {
            return (o, state);
        }
        refresh_tools(agent).await;
        let (response, streamed_uuids, early) =
            match request_turn(agent, &mut state, &mut retries).await {
                Ok(Some(attempt)) => attempt,
                Ok(None) => continue,
                Err(o) => return (o, state),
            };
        // The response is complete: it is one unit in the transcript.
        agent.record_usage(&mut state, &response);
        state.last_context_tokens = response.usage.total();
        if escalate_max_tokens(agent, &response, &streamed_uuids) {
            continue;
        }
        let tool_use_uuids = record_response(agent, &mut state, &response, streamed_uuids);
        let calls = pending_calls(&response);
        if response.stop_reason == Some(StopReason::PauseTurn) && calls.is_empty() {
            pause_resends += 1;
            if pause_resends > PAUSE_TURN_LIMIT {
                let o = Outcome::new(
                    OutcomeKind::AgentError,
                    format!(
                        "the model paused its turn more than {PAUSE_TURN_LIMIT} times in a row"
                    ),
                );
                return (o, state);
            }
            continue; // resent as is; not a new turn
        }
        pause_resends = 0;
        state.turns += 1;
        agent.run.clock.switch(Phase::Tools);
        let step = if calls.is_empty() {
            end_without_calls(agent, &mut state, &response).await
        } else {
            answer_turn(agent, &mut state, &response, &calls, &tool_use_uuids, early).await
        };
        record_timing(agent, &mut state);
        if let Step::End(o) = step {
            return (o, state);
        }
    }
}

/// The outcome that ends the run before the next request, if one does: a stop request, the
/// turn limit, or a budget.
fn limit_reached(agent: &Agent, state: &State) -> Option<Outcome> {
    if agent.stopper.cause().is_some() {
        return Some(agent.interrupted(false));
    }
    if let Some(max) = agent.config.limits.max_turns
        && state.turns >= max
    {
        return Some(Outcome::new(
            OutcomeKind::MaxTurns,
            format!("Reached maximum number of turns ({max})"),
        ));
    }
    agent.budget_exceeded(state)
}

/// Between turns: when an MCP server said its tools changed, list them again (the request
/// then offers the new schemas).
async fn refresh_tools(agent: &mut Agent) {
    let Some(mcp) = agent.mcp.clone() else {
        return;
    };
    if mcp.changed() {
        let refreshed = mcp.refresh(&mut agent.run.registry).await;
        if !refreshed.is_empty() {
            tracing::info!(servers = ?refreshed, tools = ?agent.run.registry.names(), "tools offered from now on");
        }
    }
}

/// End the turn's clock: its `runner_timing` event, and the totals.
fn record_timing(agent: &mut Agent, state: &mut State) {
    let (wall_ms, phases) = agent.run.clock.finish();
    state.timing.add(wall_ms, &phases);
    agent.emit(RunEvent::Timing {
        uuid: new_uuid(),
        turn: state.turns,
        wall_ms,
        phases,
    });
}

/// Make the turn's request: the complete response, or `None` when the request did not fit and
/// the conversation was compacted (the loop makes it again), or the outcome that ends the run.
async fn request_turn(
    agent: &mut Agent,
    state: &mut State,
    retries: &mut RetryState,
) -> Result<Option<Attempt>, Outcome> {
    let tools = agent.run.registry.specs();
    let mut messages = prepare_context(agent, state, &tools).await?;
    super::fallback::drop_foreign_thinking(&mut messages, &state.foreign_thinking);
    let request = ModelRequest {
        model: agent.run.model.clone(),
        system: agent.config.system.clone(),
        messages,
        tools,
        max_tokens: agent.run.max_tokens,
        thinking: agent.config.thinking.clone(),
    };
    match super::request::request_with_retries(agent, state, retries, request, true).await {
        Ok(r) => Ok(Some(r)),
        Err(o) if o.kind == OutcomeKind::ContextExhausted => {
            // `prompt is too long`: compact and make the request again.
            compact_after_overflow(agent, state, &o.message).await?;
            Ok(None)
        }
        Err(o) => Err(o),
    }
}

/// A `max_tokens` stop with nothing to run: make the same request once more with the model's
/// output cap (not a turn; the cut response is abandoned, its tokens still count). Returns
/// whether it will.
fn escalate_max_tokens(agent: &mut Agent, response: &ModelResponse, streamed: &[String]) -> bool {
    if response.stop_reason != Some(StopReason::MaxTokens)
        || response
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse { .. }))
    {
        return false;
    }
    let Some(cap) = agent.run.escalate_max_tokens_to.take() else {
        return false;
    };
    if cap <= agent.run.max_tokens {
        return false;
    }
    tracing::warn!(
        from = agent.run.max_tokens,
        to = cap,
        "response hit max_tokens; retrying once with the model's output cap"
    );
    agent.emit(RunEvent::AttemptAbandoned {
        uuid: new_uuid(),
        attempt: 1,
        error: format!(
            "stop_reason max_tokens at max_tokens {}; retrying with max_tokens {cap}",
            agent.run.max_tokens
        ),
        streamed_uuids: streamed.to_vec(),
    });
    agent.run.max_tokens = cap;
    true
}

/// Append a complete response to the conversation and every sink (its blocks keep the uuids
/// they streamed with). Returns the uuid of each tool_use block by call id.
fn record_response(
    agent: &mut Agent,
    state: &mut State,
    response: &ModelResponse,
    streamed_uuids: Vec<String>,
) -> HashMap<String, String> {
    let meta = AssistantMeta {
        message_id: response.id.clone(),
        model: response.model.clone(),
        request_id: response.request_id.clone(),
        usage: response.usage,
        stop_reason: response.stop_reason.clone(),
        stop_sequence: response.stop_sequence.clone(),
    };
    let mut blocks = Vec::with_capacity(response.content.len());
    let mut tool_use_uuids = HashMap::new();
    for (i, block) in response.content.iter().enumerate() {
        let uuid = streamed_uuids.get(i).cloned().unwrap_or_else(new_uuid);
        if let ContentBlock::ToolUse { id, .. } = block {
            tool_use_uuids.insert(id.clone(), uuid.clone());
        }
        blocks.push(BlockRecord {
            uuid: uuid.clone(),
            parent_uuid: state.last_uuid.clone(),
            block: block.clone(),
        });
        state.last_uuid = Some(uuid);
    }
    agent.emit(RunEvent::AssistantResponse { meta, blocks });
    state.last_stop_reason = response.stop_reason.clone();
    if !response.content.is_empty() {
        state.messages.push(Message {
            role: Role::Assistant,
            content: response.content.clone(),
            id: Some(response.id.clone()),
        });
    }
    state
        .context
        .calibrate(response.usage.total(), state.messages.len());
    tool_use_uuids
}

/// The response's tool calls, each with the reason its input did not parse, if it did not.
fn pending_calls(response: &ModelResponse) -> Vec<PendingCall> {
    response
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => Some(PendingCall {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
                invalid_input: response
                    .invalid_tool_inputs
                    .iter()
                    .find(|(tid, _)| tid == id)
                    .map(|(_, e)| e.clone()),
            }),
            _ => None,
        })
        .collect()
}

/// A turn whose response has no tool calls: the run ends (success, refusal, a Stop hook's
/// verdict) or goes on (a cut response is continued, a full context compacted, a Stop hook or
/// the structured-output protocol asks for more).
async fn end_without_calls(agent: &mut Agent, state: &mut State, response: &ModelResponse) -> Step {
    match &response.stop_reason {
        Some(StopReason::Refusal) => Step::End(Outcome::new(
            OutcomeKind::AgentError,
            "the model refused the request (stop_reason: refusal)",
        )),
        Some(StopReason::ModelContextWindowExceeded) => {
            // The window filled while the model answered: compact, then go on from the summary
            // (three failed compactions end with context_exhausted).
            let why =
                "the model's context window is full (stop_reason: model_context_window_exceeded)";
            match compact_after_overflow(agent, state, why).await {
                Ok(()) => Step::Next,
                Err(o) => Step::End(o),
            }
        }
        Some(StopReason::MaxTokens) => continue_cut_response(agent, state, response),
        _ => {
            match super::structured::on_end_turn(agent.structured.as_ref()) {
                super::structured::EndTurn::Fail(o) => return Step::End(o),
                super::structured::EndTurn::Remind(text) => {
                    agent.push_user_text(state, text);
                    return Step::Next;
                }
                super::structured::EndTurn::Proceed => {}
            }
            stop_hooks(agent, state).await
        }
    }
}

/// A response cut at the output token limit: ask the model to continue (up to
/// [`MAX_TOKENS_CONTINUATIONS`] times in a row).
fn continue_cut_response(agent: &mut Agent, state: &mut State, response: &ModelResponse) -> Step {
    state.max_tokens_streak += 1;
    if state.max_tokens_streak > MAX_TOKENS_CONTINUATIONS {
        return Step::End(Outcome::new(
            OutcomeKind::AgentError,
            format!(
                "the response hit the output token limit ({}) {} times in a row",
                agent.run.max_tokens, state.max_tokens_streak
            ),
        ));
    }
    let text = if response.dropped_blocks.iter().any(|(_, t)| t == "tool_use") {
        "Your last response hit the output token limit in the middle of a tool call, so that call did not run. Make the call again with smaller input: split long content across several smaller tool calls."
    } else {
        "Your last response hit the output token limit. Continue directly from where it stopped, without repeating or apologizing; break the remaining work into smaller pieces."
    };
    agent.push_user_text(state, text.to_string());
    Step::Next
}

/// The model is done: the Stop hooks may end the run (`continue: false`), make it go on
/// (up to [`STOP_HOOK_BLOCK_LIMIT`] times in a row), or let it succeed.
async fn stop_hooks(agent: &mut Agent, state: &mut State) -> Step {
    let hooks = agent.tool_ctx.session.hooks.clone();
    let last = state.final_text();
    let active = state.stop_blocks > 0;
    match hooks.stop(active, Some(&last)).await {
        StopOutcome::Halt(why) => return Step::End(hook_stopped(why)),
        StopOutcome::Block(reason) if state.stop_blocks < STOP_HOOK_BLOCK_LIMIT => {
            state.stop_blocks += 1;
            tracing::info!(
                blocks = state.stop_blocks,
                "a Stop hook blocked the stop; continuing"
            );
            agent.push_user_text(state, reason);
            return Step::Next;
        }
        StopOutcome::Block(_) => tracing::warn!(
            "Stop hooks blocked {STOP_HOOK_BLOCK_LIMIT} times in a row; ending the run anyway"
        ),
        StopOutcome::Proceed => {}
    }
    state.stop_blocks = 0;
    Step::End(Outcome::new(OutcomeKind::Success, "completed"))
}

/// A turn whose response has tool calls: answer them (or, after too many malformed inputs in
/// a row, answer them as not run and end), then check what may end the run after tools.
async fn answer_turn(
    agent: &mut Agent,
    state: &mut State,
    response: &ModelResponse,
    calls: &[PendingCall],
    tool_use_uuids: &HashMap<String, String>,
    early: StreamingExecutor,
) -> Step {
    state.max_tokens_streak = 0;
    if response.invalid_tool_inputs.is_empty() {
        state.malformed_streak = 0;
    } else {
        state.malformed_streak += 1;
        if state.malformed_streak >= MALFORMED_TOOL_USE_LIMIT {
            // Answer the calls so the stored conversation stays valid, then stop.
            let outcome = Outcome::new(
                OutcomeKind::AgentError,
                format!(
                    "the model sent malformed tool input {} times in a row",
                    state.malformed_streak
                ),
            );
            if let Err(o) = answer_calls(agent, state, calls, tool_use_uuids, early, false).await {
                return Step::End(o);
            }
            return Step::End(outcome);
        }
    }
    if let Err(fatal) = answer_calls(agent, state, calls, tool_use_uuids, early, true).await {
        return Step::End(fatal);
    }
    if let Some(why) = agent.tool_ctx.session.hooks.halted() {
        return Step::End(hook_stopped(why));
    }
    if agent.stopper.cause().is_some() {
        return Step::End(agent.interrupted(true));
    }
    match super::structured::after_tools(agent.structured.as_ref()) {
        Some(o) => Step::End(o),
        None => Step::Next,
    }
}
