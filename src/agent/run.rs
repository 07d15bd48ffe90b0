//! The agent loop: one iteration per model turn. Each iteration checks the stop requests,
//! limits and budgets, prepares the context, makes the request (with retries), records the
//! response, and either ends the run (no tool calls) or answers the tool calls and goes on.

use super::answer::answer_calls;
use super::compact::{compact_after_overflow, prepare_context};
use super::core::{Agent, Input, hook_stopped};
use super::state::State;
use crate::events::{AssistantMeta, BlockRecord, RunEvent, new_uuid};
use crate::hooks::StopOutcome;
use crate::model::{ContentBlock, Message, ModelRequest, ProviderError, Role, StopReason};
use crate::outcome::{Outcome, OutcomeKind};
use crate::retry::{self, RetryState};
use crate::tools::executor::PendingCall;

/// How many times in a row a `max_tokens` stop is continued before giving up.
pub const MAX_TOKENS_CONTINUATIONS: u32 = 3;
/// How many responses in a row may carry malformed tool input before the run fails.
pub const MALFORMED_TOOL_USE_LIMIT: u32 = 3;
/// How many `pause_turn` resends in a row are allowed.
pub const PAUSE_TURN_LIMIT: u32 = 8;
/// How many times in a row Stop hooks may make the loop continue (reference §6.4).
pub const STOP_HOOK_BLOCK_LIMIT: u32 = 8;

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
    loop {
        if agent.stopper.cause().is_some() {
            let o = agent.interrupted(false);
            return (o, state);
        }
        if let Some(max) = agent.config.limits.max_turns
            && state.turns >= max
        {
            return (
                Outcome::new(
                    OutcomeKind::MaxTurns,
                    format!("Reached maximum number of turns ({max})"),
                ),
                state,
            );
        }
        if let Some(o) = agent.budget_exceeded(&state) {
            return (o, state);
        }

        let tools = agent.registry.specs();
        let messages = match prepare_context(agent, &mut state, &tools).await {
            Ok(m) => m,
            Err(o) => return (o, state),
        };
        let request = ModelRequest {
            model: agent.config.model.clone(),
            system: agent.config.system.clone(),
            messages,
            tools,
            max_tokens: agent.max_tokens,
            thinking: agent.config.thinking.clone(),
        };
        let (response, streamed_uuids, early) = match super::request::request_with_retries(
            agent,
            &mut state,
            &mut retries,
            request,
            true,
        )
        .await
        {
            Ok(r) => r,
            Err(o) if o.kind == OutcomeKind::ContextExhausted => {
                // `prompt is too long`: compact and make the request again.
                if let Err(o) = compact_after_overflow(agent, &mut state, &o.message).await {
                    return (o, state);
                }
                continue;
            }
            Err(o) => return (o, state),
        };

        // The response is complete: it is one unit in the transcript.
        agent.record_usage(&mut state, &response);
        state.last_context_tokens = response.usage.total();

        // max_tokens with nothing to run: make the same request once more with the model's
        // output cap (not a turn; the cut response is abandoned, its tokens still count).
        if response.stop_reason == Some(StopReason::MaxTokens)
            && !response
                .content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolUse { .. }))
            && let Some(cap) = agent.escalate_max_tokens_to.take()
            && cap > agent.max_tokens
        {
            tracing::warn!(
                from = agent.max_tokens,
                to = cap,
                "response hit max_tokens; retrying once with the model's output cap"
            );
            agent.emit(RunEvent::AttemptAbandoned {
                uuid: new_uuid(),
                attempt: 1,
                error: format!(
                    "stop_reason max_tokens at max_tokens {}; retrying with max_tokens {cap}",
                    agent.max_tokens
                ),
                streamed_uuids,
            });
            agent.max_tokens = cap;
            continue;
        }
        let meta = AssistantMeta {
            message_id: response.id.clone(),
            model: response.model.clone(),
            request_id: response.request_id.clone(),
            usage: response.usage,
            stop_reason: response.stop_reason.clone(),
            stop_sequence: response.stop_sequence.clone(),
        };
        let mut blocks = Vec::with_capacity(response.content.len());
        let mut tool_use_uuids = std::collections::HashMap::new();
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

        let calls: Vec<PendingCall> = response
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
            .collect();

        if response.stop_reason == Some(StopReason::PauseTurn) && calls.is_empty() {
            pause_resends += 1;
            if pause_resends > PAUSE_TURN_LIMIT {
                return (
                    Outcome::new(
                        OutcomeKind::AgentError,
                        format!(
                            "the model paused its turn more than {PAUSE_TURN_LIMIT} times in a row"
                        ),
                    ),
                    state,
                );
            }
            continue; // resent as is; not a new turn
        }
        pause_resends = 0;
        state.turns += 1;

        if calls.is_empty() {
            match &response.stop_reason {
                Some(StopReason::Refusal) => {
                    return (
                        Outcome::new(
                            OutcomeKind::AgentError,
                            "the model refused the request (stop_reason: refusal)",
                        ),
                        state,
                    );
                }
                Some(StopReason::MaxTokens) | Some(StopReason::ModelContextWindowExceeded) => {
                    if response.stop_reason == Some(StopReason::ModelContextWindowExceeded) {
                        // The window filled while the model answered: compact, then go on from
                        // the summary (three failed compactions end with context_exhausted).
                        let why = "the model's context window is full (stop_reason: model_context_window_exceeded)";
                        if let Err(o) = compact_after_overflow(agent, &mut state, why).await {
                            return (o, state);
                        }
                        continue;
                    }
                    state.max_tokens_streak += 1;
                    if state.max_tokens_streak > MAX_TOKENS_CONTINUATIONS {
                        return (
                            Outcome::new(
                                OutcomeKind::AgentError,
                                format!(
                                    "the response hit the output token limit ({}) {} times in a row",
                                    agent.max_tokens, state.max_tokens_streak
                                ),
                            ),
                            state,
                        );
                    }
                    let text = if response.dropped_blocks.iter().any(|(_, t)| t == "tool_use") {
                        "Your last response hit the output token limit in the middle of a tool call, so that call did not run. Make the call again with smaller input: split long content across several smaller tool calls."
                    } else {
                        "Your last response hit the output token limit. Continue directly from where it stopped, without repeating or apologizing; break the remaining work into smaller pieces."
                    };
                    agent.push_user_text(&mut state, text.to_string());
                    continue;
                }
                _ => {
                    match super::structured::on_end_turn(agent.structured.as_ref()) {
                        super::structured::EndTurn::Fail(o) => return (o, state),
                        super::structured::EndTurn::Remind(text) => {
                            agent.push_user_text(&mut state, text);
                            continue;
                        }
                        super::structured::EndTurn::Proceed => {}
                    }
                    let hooks = agent.tool_ctx.hooks.clone();
                    let last = state.final_text();
                    let active = state.stop_blocks > 0;
                    match hooks.stop(active, Some(&last)).await {
                        StopOutcome::Halt(why) => return (hook_stopped(why), state),
                        StopOutcome::Block(reason) if state.stop_blocks < STOP_HOOK_BLOCK_LIMIT => {
                            state.stop_blocks += 1;
                            tracing::info!(
                                blocks = state.stop_blocks,
                                "a Stop hook blocked the stop; continuing"
                            );
                            agent.push_user_text(&mut state, reason);
                            continue;
                        }
                        StopOutcome::Block(_) => tracing::warn!(
                            "Stop hooks blocked {STOP_HOOK_BLOCK_LIMIT} times in a row; ending the run anyway"
                        ),
                        StopOutcome::Proceed => {}
                    }
                    state.stop_blocks = 0;
                    return (Outcome::new(OutcomeKind::Success, "completed"), state);
                }
            }
        }
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
                if let Err(o) =
                    answer_calls(agent, &mut state, &calls, &tool_use_uuids, early, false).await
                {
                    return (o, state);
                }
                return (outcome, state);
            }
        }

        if let Err(fatal) =
            answer_calls(agent, &mut state, &calls, &tool_use_uuids, early, true).await
        {
            return (fatal, state);
        }
        if let Some(why) = agent.tool_ctx.hooks.halted() {
            return (hook_stopped(why), state);
        }
        if agent.stopper.cause().is_some() {
            let o = agent.interrupted(true);
            return (o, state);
        }
        if let Some(o) = super::structured::after_tools(agent.structured.as_ref()) {
            return (o, state);
        }
    }
}

/// A message for an API failure that tells the reader what to do.
pub fn describe_provider_error(err: &ProviderError) -> String {
    retry::describe(err)
}
