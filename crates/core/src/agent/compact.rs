//! Compaction as the loop does it: the request view of the conversation before each request
//! (normalize, microcompact, autocompact past the threshold), the summarizing call, and the
//! recovery after a `prompt is too long` answer. The estimates and policies themselves are in
//! [`super::context`].

use super::context::{
    self, COMPACT_INSTRUCTION, COMPACT_MAX_TOKENS, COMPACT_SYSTEM, CompactError,
    RENDER_WINDOW_SHARE, Trigger, render_conversation, summary_message,
};
use super::core::Agent;
use super::normalize::normalize;
use super::request::request_with_retries;
use super::state::State;
use crate::events::{RunEvent, new_uuid};
use crate::model::{ContentBlock, Message, ModelRequest, Role, StopReason};
use crate::outcome::{Outcome, OutcomeKind};
use crate::retry::RetryState;

/// The API view of the stored conversation for the next request: normalized, microcompacted,
/// and autocompacted first when the estimate calls for it (module `context`).
pub(super) async fn prepare_context(
    agent: &mut Agent,
    state: &mut State,
    tools: &[crate::model::ToolSpec],
) -> Result<Vec<Message>, Outcome> {
    let window = agent.run.model_info.map(|m| m.context_window);
    let policy = agent.config.context;
    let fixed = || {
        context::text_tokens(&agent.config.system)
            + context::text_tokens(&serde_json::to_string(tools).unwrap_or_default())
    };
    let estimate = state.context.estimate(&state.messages, fixed);
    let mut messages = normalize(&state.messages);
    let freed = context::microcompact(&mut messages, &mut state.context, &policy, window, estimate);
    let estimate = estimate.saturating_sub(freed);
    if state.context.autocompact_failures < context::MAX_COMPACT_FAILURES
        && context::needs_autocompact(&policy, window, estimate, &state.messages)
    {
        let failures_before = state.context.autocompact_failures;
        match compact(agent, state, Trigger::Threshold, estimate).await {
            Ok(()) => {
                messages = normalize(&state.messages);
                // A compaction that leaves the request past the threshold (the system prompt
                // and tool schemas alone fill the window) did not help: count it as a failure,
                // so runner stops after three instead of compacting every turn.
                let fixed = context::text_tokens(&agent.config.system)
                    + context::text_tokens(&serde_json::to_string(tools).unwrap_or_default());
                let after = state.context.estimate(&state.messages, || fixed);
                if context::over_autocompact_threshold(&policy, window, after) {
                    state.context.autocompact_failures = failures_before + 1;
                    tracing::warn!(
                        failures = state.context.autocompact_failures,
                        after,
                        "the compacted conversation is still past the autocompact threshold"
                    );
                }
            }
            Err(context::CompactError::End(o)) => return Err(o),
            Err(context::CompactError::Failed(why)) => {
                state.context.autocompact_failures += 1;
                tracing::warn!(
                    failures = state.context.autocompact_failures,
                    "autocompact failed, sending the conversation as it is: {why}"
                );
            }
        }
    }
    Ok(messages)
}

/// After a `prompt is too long` answer: compact (up to [`context::MAX_COMPACT_FAILURES`]
/// failures in a row, counting a compaction the API still found too long), or end the task
/// with `context_exhausted` — at once when the last compaction did not shrink the request
/// below the size the server rejected before it.
pub(super) async fn compact_after_overflow(
    agent: &mut Agent,
    state: &mut State,
    error: &str,
) -> Result<(), Outcome> {
    tracing::warn!("the request does not fit the model's context window: {error}");
    let mut last = error.to_string();
    let tools = agent.run.registry.specs();
    let size = context::Rejected::new(
        error,
        context::request_estimate(&agent.config.system, &tools, &state.messages),
    );
    if std::mem::take(&mut state.context.just_compacted) {
        // A compaction that did not get the request below the size rejected before it never
        // will (the task itself does not fit): stop instead of paying for more.
        if let Some(before) = state.context.rejected
            && !size.smaller_than(&before)
        {
            return Err(context::not_shrunk(&before, &size));
        }
        state.context.compact_failures += 1;
        last = format!("the compacted conversation was still too long: {error}");
    }
    state.context.rejected = Some(size);
    let fixed = || context::text_tokens(&agent.config.system);
    let pre = state.context.estimate(&state.messages, fixed);
    while state.context.compact_failures < context::MAX_COMPACT_FAILURES {
        match compact(agent, state, Trigger::PromptTooLong, pre).await {
            Ok(()) => return Ok(()),
            Err(context::CompactError::End(o)) => return Err(o),
            Err(context::CompactError::Failed(why)) => {
                state.context.compact_failures += 1;
                tracing::warn!(
                    failures = state.context.compact_failures,
                    "compaction failed: {why}"
                );
                last = why;
            }
        }
    }
    Err(context::exhausted(&last))
}

/// Summarize the stored conversation with one model call and replace it with the summary
/// (see the module docs). `pre_tokens` is the estimate before compacting.
pub(super) async fn compact(
    agent: &mut Agent,
    state: &mut State,
    trigger: Trigger,
    pre_tokens: u64,
) -> Result<(), CompactError> {
    let share = RENDER_WINDOW_SHARE
        [(state.context.compact_failures as usize).min(RENDER_WINDOW_SHARE.len() - 1)];
    let full = render_conversation(&state.messages, usize::MAX);
    let budget = match agent.run.model_info.map(|m| m.context_window) {
        Some(w) => (w as f64 * share * 4.0) as usize,
        // Unknown window: halve the text per failure.
        None => full.len() >> state.context.compact_failures.min(8),
    };
    let rendered = render_conversation(&state.messages, budget.max(1_000));
    let request = ModelRequest {
        model: agent.run.model.clone(),
        system: COMPACT_SYSTEM.to_string(),
        messages: vec![Message::user_text(format!(
            "<conversation>\n{rendered}\n</conversation>\n\n{COMPACT_INSTRUCTION}"
        ))],
        tools: Default::default(),
        max_tokens: agent.run.max_tokens.min(COMPACT_MAX_TOKENS),
        thinking: None,
    };
    tracing::info!(
        trigger = match trigger {
            Trigger::Threshold => "threshold",
            Trigger::PromptTooLong => "prompt_too_long",
        },
        pre_tokens,
        input_bytes = rendered.len(),
        "compacting the conversation"
    );
    let mut retries = RetryState::new(agent.config.retry);
    let response = match request_with_retries(agent, state, &mut retries, request, false).await {
        Ok((r, _, _)) => r,
        Err(o) => {
            return Err(match o.kind {
                OutcomeKind::Interrupted | OutcomeKind::Timeout => CompactError::End(o),
                _ => CompactError::Failed(o.message),
            });
        }
    };
    agent.record_usage(state, &response);
    let summary = response
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if summary.trim().is_empty() {
        return Err(CompactError::Failed(format!(
            "the summarizing call returned no text (stop_reason {})",
            response
                .stop_reason
                .as_ref()
                .map_or("none", StopReason::as_str)
        )));
    }
    let prompt = state
        .context
        .task_prompt
        .clone()
        .or_else(|| {
            state
                .messages
                .iter()
                .find(|m| m.role == Role::User)
                .map(Message::text)
        })
        .unwrap_or_default();
    let text = summary_message(&prompt, &summary);
    let boundary = new_uuid();
    agent.emit(RunEvent::CompactBoundary {
        uuid: boundary.clone(),
        logical_parent_uuid: state.last_uuid.clone(),
        trigger: "auto",
        pre_tokens,
    });
    let summary_uuid = new_uuid();
    agent.emit(RunEvent::CompactSummary {
        uuid: summary_uuid.clone(),
        parent_uuid: boundary,
        text: text.clone(),
    });
    state.last_uuid = Some(summary_uuid);
    state.messages = vec![Message::user_text(text)];
    state.context.calibration = None;
    state.context.cleared.clear();
    state.context.just_compacted = true;
    state.context.autocompact_failures = 0;
    state.last_context_tokens = 0;
    tracing::info!(
        pre_tokens,
        summary_bytes = summary.len(),
        "conversation compacted"
    );
    Ok(())
}
