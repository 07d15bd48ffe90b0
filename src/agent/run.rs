//! The agent loop: one iteration per model turn (DESIGN.md "Data flow").

use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures_util::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::{self, ContextPolicy, Trigger};
use super::normalize::normalize;
use super::outcome::{Outcome, OutcomeKind};
use super::state::State;
use crate::events::{AssistantMeta, BlockRecord, RunEvent, Sinks};
use crate::hooks::StopOutcome;
use crate::model::assembler::Assembler;
use crate::model::table::ModelInfo;
use crate::model::{
    ContentBlock, Message, ModelRequest, ModelResponse, Provider, ProviderError, Role, StopReason,
};
use crate::permissions::Policy;
use crate::retry::{self, Decision, RateGate, RetryPolicy, RetryState};
use crate::tools::executor::PendingCall;
use crate::tools::streaming::StreamingExecutor;
use crate::tools::structured_output::StructuredOutputHandle;
use crate::tools::{Registry, ToolContext};

/// How many times in a row a `max_tokens` stop is continued before giving up.
pub const MAX_TOKENS_CONTINUATIONS: u32 = 3;
/// How many responses in a row may carry malformed tool input before the run fails.
pub const MALFORMED_TOOL_USE_LIMIT: u32 = 3;
/// How many `pause_turn` resends in a row are allowed.
pub const PAUSE_TURN_LIMIT: u32 = 8;
/// How many times in a row Stop hooks may make the loop continue (reference §6.4).
pub const STOP_HOOK_BLOCK_LIMIT: u32 = 8;

/// The `agent_error` outcome for a hook that stopped the run (`continue: false`).
pub fn hook_stopped(reason: impl Into<String>) -> Outcome {
    let mut o = Outcome::new(OutcomeKind::AgentError, reason);
    o.terminal_override = Some("hook_stopped".into());
    o
}

/// Why the run was asked to stop from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// SIGINT (2) or SIGTERM (15).
    Signal(i32),
    /// The task's wall-clock limit.
    Timeout,
}

/// A cancellation token plus the reason it was cancelled.
#[derive(Debug, Clone, Default)]
pub struct Stopper {
    token: CancellationToken,
    cause: Arc<Mutex<Option<StopCause>>>,
}

impl Stopper {
    /// Request a stop; the first cause wins.
    pub fn stop(&self, cause: StopCause) {
        if let Ok(mut c) = self.cause.lock() {
            c.get_or_insert(cause);
        }
        self.token.cancel();
    }

    /// The token tools and streams watch.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Why it stopped, if it did.
    pub fn cause(&self) -> Option<StopCause> {
        if !self.token.is_cancelled() {
            return None;
        }
        self.cause
            .lock()
            .ok()
            .and_then(|c| *c)
            .or(Some(StopCause::Signal(2)))
    }
}

/// Limits the loop enforces itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoopLimits {
    /// Most turns.
    pub max_turns: Option<u32>,
    /// Most total tokens.
    pub max_total_tokens: Option<u64>,
    /// Most USD.
    pub max_cost_usd: Option<f64>,
}

/// What the loop needs for one task. Built once per task run.
pub struct Agent {
    /// The model backend.
    pub provider: Arc<dyn Provider>,
    /// Tools offered.
    pub registry: Registry,
    /// Permission policy.
    pub policy: Arc<Policy>,
    /// Tool context (roots, read state, cancellation).
    pub tool_ctx: ToolContext,
    /// Model id.
    pub model: String,
    /// Model table entry (context, output cap, prices).
    pub model_info: Option<ModelInfo>,
    /// Exact system prompt.
    pub system: String,
    /// Output cap per request (lowered after a context error, raised once after `max_tokens`).
    pub max_tokens: u32,
    /// The cap a `max_tokens` stop escalates to, once (None: no escalation, e.g. the spec set
    /// `max_tokens` itself).
    pub escalate_max_tokens_to: Option<u32>,
    /// Retry settings.
    pub retry: RetryPolicy,
    /// The rate-limit gate shared with the other tasks of this run.
    pub gate: Arc<RateGate>,
    /// Thinking configuration, passed through.
    pub thinking: Option<Value>,
    /// Limits.
    pub limits: LoopLimits,
    /// Where events go.
    pub sinks: Sinks,
    /// Stop requests (signals, timeout).
    pub stopper: Stopper,
    /// Context management (microcompact, autocompact).
    pub context: ContextPolicy,
    /// The `StructuredOutput` state when the spec sets `output:` (see [`super::structured`]).
    pub structured: Option<StructuredOutputHandle>,
}

/// A complete response attempt: the response, the uuids of its streamed blocks, and the
/// tool calls started while it streamed.
pub(super) type Attempt = (ModelResponse, Vec<String>, StreamingExecutor);

/// What starts or resumes the loop.
#[derive(Debug, Clone)]
pub enum Input {
    /// A user message (the task prompt, or feedback such as failing check output).
    User(String),
    /// Continue from the stored conversation as it is.
    Continue,
}

impl Agent {
    /// Send an event to every sink (output errors are logged, not fatal).
    pub fn emit(&mut self, ev: RunEvent) {
        if let Err(e) = self.sinks.emit(&ev) {
            tracing::error!("writing run output failed: {e}");
        }
    }

    fn push_user_text(&mut self, state: &mut State, text: String) {
        let uuid = new_uuid();
        self.emit(RunEvent::UserText {
            uuid: uuid.clone(),
            parent_uuid: state.last_uuid.clone(),
            text: text.clone(),
        });
        state.last_uuid = Some(uuid);
        state.messages.push(Message::user_text(text));
    }

    /// The outcome for a stop requested from outside (signal or timeout).
    pub fn interrupted(&self, during_tools: bool) -> Outcome {
        match self.stopper.cause() {
            Some(StopCause::Timeout) => Outcome::new(
                OutcomeKind::Timeout,
                "the task's time limit (limits.timeout) was reached",
            ),
            Some(StopCause::Signal(sig)) => {
                let name = if sig == 15 { "SIGTERM" } else { "SIGINT" };
                let mut o =
                    Outcome::new(OutcomeKind::Interrupted, format!("interrupted by {name}"));
                o.signal = Some(sig);
                o.during_tools = during_tools;
                o
            }
            None => Outcome::new(OutcomeKind::Interrupted, "interrupted"),
        }
    }

    fn budget_exceeded(&self, state: &State) -> Option<Outcome> {
        if let Some(max) = self.limits.max_total_tokens {
            let used = state.usage.total();
            if used >= max {
                return Some(Outcome::new(
                    OutcomeKind::BudgetTokens,
                    format!("token budget exhausted: {used} tokens used of max_total_tokens {max}"),
                ));
            }
            // The next request's input: the last response's real context plus a rough size of
            // what was added since (tool results, continuations); see `context::estimate`.
            let next = state
                .context
                .estimate(&state.messages, || 0)
                .max(state.last_context_tokens);
            if used.saturating_add(next) > max {
                return Some(Outcome::new(
                    OutcomeKind::BudgetTokens,
                    format!(
                        "token budget exhausted: {used} tokens used of max_total_tokens {max}, and the next request (about {next} input tokens) would cross the limit, so it was not sent"
                    ),
                ));
            }
        }
        if let (Some(max), Some(cost)) = (self.limits.max_cost_usd, state.cost_usd)
            && cost >= max
        {
            return Some(Outcome::new(
                OutcomeKind::BudgetCost,
                format!("cost budget exhausted: ${cost:.4} spent of max_cost_usd ${max:.4}"),
            ));
        }
        None
    }

    /// Add a complete response's usage (and its cost, when the model is priced) to the run's
    /// totals: main turns and compaction calls alike count toward the budgets.
    pub(super) fn record_usage(&self, state: &mut State, response: &ModelResponse) {
        let info = self.model_info.as_ref();
        let cost = info.and_then(|m| m.cost_usd(&response.usage));
        let window = info.map(|m| (m.context_window, m.max_output_tokens));
        state.record_usage(&response.model, &response.usage, cost, window);
    }

    /// One model response attempt: stream it, show blocks live (unless `show` is false, as
    /// for a compaction call), start concurrency-safe tool calls as their blocks complete,
    /// return the whole response with those calls. A failed attempt's calls are cancelled and
    /// discarded before this returns.
    async fn attempt(
        &mut self,
        request: &ModelRequest,
        show: bool,
    ) -> Result<Attempt, (ProviderError, Vec<String>)> {
        let mut early = StreamingExecutor::new(&self.tool_ctx);
        match self.stream_response(request, show, &mut early).await {
            Ok((response, streamed)) => Ok((response, streamed, early)),
            Err(e) => {
                early.abandon().await;
                Err(e)
            }
        }
    }

    /// Stream one response attempt, offering each complete tool_use block to `early` (only
    /// when `show`: a compaction call offers no tools and shows nothing).
    async fn stream_response(
        &mut self,
        request: &ModelRequest,
        show: bool,
        early: &mut StreamingExecutor,
    ) -> Result<(ModelResponse, Vec<String>), (ProviderError, Vec<String>)> {
        let provider = self.provider.clone();
        let token = self.stopper.token().clone();
        let call = tokio::select! {
            r = provider.stream(request) => r.map_err(|e| (e, Vec::new()))?,
            _ = token.cancelled() => return Err((ProviderError::Transport { message: "cancelled".into(), before_response: true }, Vec::new())),
        };
        let mut events = call.events;
        let mut asm = Assembler::new();
        let mut streamed: Vec<String> = Vec::new();
        let mut meta = AssistantMeta {
            message_id: String::new(),
            model: request.model.clone(),
            request_id: call.meta.request_id.clone(),
            usage: Default::default(),
            stop_reason: None,
            stop_sequence: None,
        };
        loop {
            let next = tokio::select! {
                n = events.next() => n,
                _ = token.cancelled() => return Err((ProviderError::Transport { message: "cancelled".into(), before_response: false }, streamed)),
            };
            let Some(item) = next else { break };
            let ev = item.map_err(|e| (e, streamed.clone()))?;
            if let crate::model::StreamEvent::MessageStart { id, model, usage } = &ev {
                meta.message_id = id.clone();
                meta.model = model.clone();
                meta.usage = *usage;
            }
            match asm.push(ev) {
                Ok(Some((_index, block))) if show => {
                    let call = match &block {
                        ContentBlock::ToolUse { id, name, input } => Some(PendingCall {
                            id: id.clone(),
                            name: name.clone(),
                            input: input.clone(),
                            invalid_input: asm.invalid_input(id).map(str::to_owned),
                        }),
                        _ => None,
                    };
                    let uuid = new_uuid();
                    streamed.push(uuid.clone());
                    self.emit(RunEvent::AssistantBlockStreamed {
                        uuid,
                        meta: meta.clone(),
                        block,
                    });
                    if let Some(call) = call {
                        early
                            .offer(&call, &self.registry, &self.policy, &self.tool_ctx)
                            .await;
                    }
                }
                Ok(_) => {}
                Err(e) => return Err((e, streamed)),
            }
        }
        match asm.finish(call.meta.request_id.clone()) {
            Ok(resp) => Ok((resp, streamed)),
            Err(e) => Err((e, streamed)),
        }
    }
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
    let mut retries = RetryState::new(agent.retry);
    loop {
        if agent.stopper.cause().is_some() {
            let o = agent.interrupted(false);
            return (o, state);
        }
        if let Some(max) = agent.limits.max_turns
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
            model: agent.model.clone(),
            system: agent.system.clone(),
            messages,
            tools,
            max_tokens: agent.max_tokens,
            thinking: agent.thinking.clone(),
        };
        let (response, streamed_uuids, early) =
            match request_with_retries(agent, &mut state, &mut retries, request, true).await {
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

/// How many times one request may lower `max_tokens` after a context error.
const MAX_TOKENS_LOWERINGS: u32 = 3;

/// The API view of the stored conversation for the next request: normalized, microcompacted,
/// and autocompacted first when the estimate calls for it (module `context`).
async fn prepare_context(
    agent: &mut Agent,
    state: &mut State,
    tools: &[crate::model::ToolSpec],
) -> Result<Vec<Message>, Outcome> {
    let window = agent.model_info.map(|m| m.context_window);
    let policy = agent.context;
    let fixed = || {
        context::text_tokens(&agent.system)
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
        match context::compact(agent, state, Trigger::Threshold, estimate).await {
            Ok(()) => {
                messages = normalize(&state.messages);
                // A compaction that leaves the request past the threshold (the system prompt
                // and tool schemas alone fill the window) did not help: count it as a failure,
                // so runner stops after three instead of compacting every turn.
                let fixed = context::text_tokens(&agent.system)
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
async fn compact_after_overflow(
    agent: &mut Agent,
    state: &mut State,
    error: &str,
) -> Result<(), Outcome> {
    tracing::warn!("the request does not fit the model's context window: {error}");
    let mut last = error.to_string();
    let tools = agent.registry.specs();
    let size = context::Rejected::new(
        error,
        context::request_estimate(&agent.system, &tools, &state.messages),
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
    let fixed = || context::text_tokens(&agent.system);
    let pre = state.context.estimate(&state.messages, fixed);
    while state.context.compact_failures < context::MAX_COMPACT_FAILURES {
        match context::compact(agent, state, Trigger::PromptTooLong, pre).await {
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

/// Make one model request, retrying the whole response attempt per the retry policy.
/// Returns the complete response, its streamed block uuids and the tool calls started while
/// it streamed, or the outcome that ends the task (`api_error`, `context_exhausted`,
/// `interrupted`). `show` streams blocks live to the sinks (false for a compaction call).
pub(super) async fn request_with_retries(
    agent: &mut Agent,
    state: &mut State,
    retries: &mut RetryState,
    mut request: ModelRequest,
    show: bool,
) -> Result<Attempt, Outcome> {
    let mut attempt_no = 1u32;
    let mut lowered = 0u32;
    loop {
        let token = agent.stopper.token().clone();
        if !agent.gate.wait(&token).await {
            return Err(agent.interrupted(false));
        }
        let started = Instant::now();
        let result = agent.attempt(&request, show).await;
        state.api_time += started.elapsed();
        let (err, streamed) = match result {
            Ok(r) => {
                retries.succeeded();
                return Ok(r);
            }
            Err(e) => e,
        };
        if agent.stopper.cause().is_some() {
            if !streamed.is_empty() {
                agent.emit(RunEvent::AttemptAbandoned {
                    uuid: new_uuid(),
                    attempt: attempt_no,
                    error: "interrupted".into(),
                    streamed_uuids: streamed,
                });
            }
            return Err(agent.interrupted(false));
        }
        if !streamed.is_empty() || retry::mid_stream(&err) {
            agent.emit(RunEvent::AttemptAbandoned {
                uuid: new_uuid(),
                attempt: attempt_no,
                error: err.to_string(),
                streamed_uuids: streamed,
            });
        }
        attempt_no += 1;
        match retries.decide(&err) {
            Decision::GiveUp(msg) => {
                let kind = if retry::context_exhausted(&err) {
                    OutcomeKind::ContextExhausted
                } else {
                    OutcomeKind::ApiError
                };
                return Err(Outcome::new(kind, msg));
            }
            Decision::LowerMaxTokens(n) => {
                lowered += 1;
                if lowered > MAX_TOKENS_LOWERINGS || n >= request.max_tokens {
                    return Err(Outcome::new(
                        OutcomeKind::ContextExhausted,
                        format!(
                            "{} (lowering max_tokens did not help)",
                            retry::describe(&err)
                        ),
                    ));
                }
                tracing::warn!(
                    from = request.max_tokens,
                    to = n,
                    "the request's max_tokens does not fit; retrying with a lower max_tokens"
                );
                agent.max_tokens = n;
                request.max_tokens = n;
            }
            Decision::Retry { attempt, delay } => {
                let status = retry::error_status(&err);
                let max_retries = retries.policy.max_retries;
                tracing::warn!(
                    attempt,
                    max_retries,
                    delay_ms = delay.as_millis() as u64,
                    "model request failed, retrying: {err}"
                );
                agent.emit(RunEvent::ApiRetry {
                    uuid: new_uuid(),
                    attempt,
                    max_retries,
                    retry_delay_ms: delay.as_millis() as u64,
                    error_status: status,
                    error: retry::error_category(&err).to_string(),
                    message: err.to_string(),
                });
                if status == Some(429) {
                    agent.gate.pause(delay);
                }
                if !retry::sleep_unless_cancelled(delay, &token).await {
                    return Err(agent.interrupted(false));
                }
            }
        }
    }
}

/// Execute `calls`, continuing what `early` started while the message streamed (or, with
/// `run == false`, cancel that and answer them all as not run) and append the results.
async fn answer_calls(
    agent: &mut Agent,
    state: &mut State,
    calls: &[PendingCall],
    tool_use_uuids: &std::collections::HashMap<String, String>,
    early: StreamingExecutor,
    run: bool,
) -> Result<(), Outcome> {
    let outcomes = if run {
        match early
            .finish(calls, &agent.registry, &agent.policy, &agent.tool_ctx)
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
            .map(|c| crate::tools::executor::CallOutcome {
                id: c.id.clone(),
                output: crate::tools::ToolOutput::error("not run: the run stopped"),
                denial: None,
            })
            .collect()
    };
    let mut content = Vec::with_capacity(outcomes.len());
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

/// A message for an API failure that tells the reader what to do.
pub fn describe_provider_error(err: &ProviderError) -> String {
    retry::describe(err)
}

/// A fresh record uuid.
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}
