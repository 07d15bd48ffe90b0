//! One model request: stream a response attempt (showing blocks live and starting
//! concurrency-safe tool calls as their blocks complete), and retry whole attempts per the
//! retry policy.

use std::time::Instant;

use futures_util::StreamExt;

use super::core::Agent;
use super::state::State;
use super::timing::Phase;
use crate::events::{AssistantMeta, RunEvent, new_uuid};
use crate::governor::Permit;
use crate::model::assembler::Assembler;
use crate::model::{ContentBlock, ModelRequest, ModelResponse, ProviderError};
use crate::outcome::{Outcome, OutcomeKind};
use crate::retry::{self, Decision, RetryState};
use crate::tools::executor::PendingCall;
use crate::tools::streaming::StreamingExecutor;

/// A complete response attempt: the response, the uuids of its streamed blocks, and the
/// tool calls started while it streamed.
pub(super) type Attempt = (ModelResponse, Vec<String>, StreamingExecutor);

/// How many times one request may lower `max_tokens` after a context error.
const MAX_TOKENS_LOWERINGS: u32 = 3;

impl Agent {
    /// One model response attempt: stream it, show blocks live (unless `show` is false, as
    /// for a compaction call), start concurrency-safe tool calls as their blocks complete,
    /// return the whole response with those calls. A failed attempt's calls are cancelled and
    /// discarded before this returns.
    async fn attempt(
        &mut self,
        request: &ModelRequest,
        show: bool,
        permit: &Permit,
    ) -> Result<Attempt, (ProviderError, Vec<String>)> {
        let mut early = StreamingExecutor::new(&self.tool_ctx);
        match self
            .stream_response(request, show, &mut early, permit)
            .await
        {
            Ok((response, streamed)) => Ok((response, streamed, early)),
            Err(e) => {
                early.abandon().await;
                Err(e)
            }
        }
    }

    /// Stream one response attempt, offering each complete tool_use block to `early` (only
    /// when `show`: a compaction call offers no tools and shows nothing). The response's
    /// rate-limit headers go to the governor as soon as they are in.
    async fn stream_response(
        &mut self,
        request: &ModelRequest,
        show: bool,
        early: &mut StreamingExecutor,
        permit: &Permit,
    ) -> Result<(ModelResponse, Vec<String>), (ProviderError, Vec<String>)> {
        let provider = self.provider.clone();
        let token = self.stopper.token().clone();
        if show {
            self.run.clock.switch(Phase::Ttfb);
        }
        let call = tokio::select! {
            r = provider.stream(request) => r.map_err(|e| (e, Vec::new()))?,
            _ = token.cancelled() => return Err((ProviderError::Transport { message: "cancelled".into(), before_response: true }, Vec::new())),
        };
        permit.headers(&call.meta.rate_limit);
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
            if show {
                self.run.clock.switch(Phase::Stream);
            }
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
                            .offer(&call, &self.run.registry, &self.policy, &self.tool_ctx)
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

/// Make one model request, retrying the whole response attempt per the retry policy.
/// Returns the complete response, its streamed block uuids and the tool calls started while
/// it streamed, or the outcome that ends the task (`api_error`, `context_exhausted`,
/// `interrupted`). `show` streams blocks live to the sinks (false for a compaction call).
pub(crate) async fn request_with_retries(
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
        let Some(permit) = agent.governor.acquire(&token).await else {
            return Err(agent.interrupted(false));
        };
        let started = Instant::now();
        let result = agent.attempt(&request, show, &permit).await;
        state.api_time += started.elapsed();
        let (err, streamed) = match result {
            Ok(r) => {
                permit.succeeded();
                retries.succeeded();
                return Ok(r);
            }
            Err(e) => e,
        };
        if show {
            agent.run.clock.attempt_failed();
        }
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
        match governed_retry(agent, retries, &err, permit) {
            Governed::Retry(pause) => {
                agent.emit(RunEvent::ApiRetry {
                    uuid: new_uuid(),
                    attempt: attempt_no - 1,
                    max_retries: retries.policy.max_retries,
                    retry_delay_ms: pause.as_millis() as u64,
                    error_status: retry::error_status(&err),
                    error: retry::error_category(&err).to_string(),
                    message: err.to_string(),
                });
                tracing::warn!(
                    delay_ms = pause.as_millis() as u64,
                    "model request rate limited; waiting for the batch's rate-limit governor (not counted against retry.max_retries): {err}"
                );
                continue;
            }
            Governed::GiveUp(msg) => return Err(Outcome::new(OutcomeKind::ApiError, msg)),
            Governed::No => {}
        }
        match retries.decide(&err) {
            Decision::GiveUp(msg) if retry::overloaded(&err) && agent.fall_back(state, &msg) => {
                // The same attempt on the fallback model, with retries of its own.
                request.model = agent.run.model.clone();
                request.max_tokens = request.max_tokens.min(agent.run.max_tokens);
                super::fallback::drop_foreign_thinking(
                    &mut request.messages,
                    &state.foreign_thinking,
                );
                *retries = RetryState::new(retries.policy);
            }
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
                agent.run.max_tokens = n;
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
                    agent.governor.pause(delay);
                }
                if !retry::sleep_unless_cancelled(delay, &token).await {
                    return Err(agent.interrupted(false));
                }
            }
        }
    }
}

/// What the rate-limit governor makes of a failed attempt.
enum Governed {
    /// A rate limit the governor absorbs: retry once it lets the request go (after at least
    /// this pause, which holds back every task of the governor), not counted as a retry.
    Retry(std::time::Duration),
    /// A rate limit that does not clear: end the task with `api_error` and this message.
    GiveUp(String),
    /// Not the governor's: the retry policy decides.
    No,
}

/// Hand the failure `err` of the request of `permit` to the governor: a 429 (or a
/// `rate_limit_error` event) is the governor's while it is on, the server's `retry-after` is
/// within `retry.max_wait`, and some request through the governor succeeded within
/// [`crate::governor::STALLED_AFTER`]; a 529 lowers its limit and is left to the retry policy.
fn governed_retry(
    agent: &Agent,
    retries: &RetryState,
    err: &ProviderError,
    permit: Permit,
) -> Governed {
    let gov = &agent.governor;
    let rate_limited = match err {
        ProviderError::Http { status: 429, .. } => true,
        ProviderError::StreamError { error_type, .. } => error_type == "rate_limit_error",
        _ => false,
    };
    let retry_after = match retry::classify(err) {
        retry::Class::Retryable { retry_after } => retry_after,
        _ => None,
    };
    if !rate_limited
        || !gov.governs()
        || !matches!(retry::classify(err), retry::Class::Retryable { .. })
    {
        // Counted for the reports; a governor that is off neither lowers nor pauses here.
        if rate_limited {
            gov.rate_limited(permit, None);
        } else if retry::overloaded(err) {
            gov.overloaded(permit);
        }
        return Governed::No;
    }
    let p = retries.policy;
    if retry_after.is_some_and(|ra| ra > p.max_wait) {
        // The retry policy gives up with its message.
        gov.rate_limited(permit, None);
        return Governed::No;
    }
    let stalled = gov.since_success();
    if stalled > crate::governor::STALLED_AFTER {
        gov.rate_limited(permit, None);
        return Governed::GiveUp(format!(
            "{} (rate limited, and no request with this API key has succeeded for {} min: the limit does not clear by waiting)",
            retry::describe(err),
            stalled.as_secs() / 60
        ));
    }
    let pause = retry_after.unwrap_or(p.base_delay);
    gov.rate_limited(permit, Some(pause));
    Governed::Retry(pause)
}
