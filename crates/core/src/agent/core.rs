//! The [`Agent`]: what the loop works with for one task — its fixed [`LoopConfig`], the
//! model provider, the tools and policy, the event sinks — and the small operations every part
//! of the loop shares (emit an event, add a user message, account usage, check budgets).

use std::sync::Arc;

use serde_json::Value;

use super::context::ContextPolicy;
use super::state::State;
use super::stop::{StopCause, Stopper};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::events::{NetworkTally, RunEvent, Sinks, new_uuid};
use crate::governor::TaskGovernor;
use crate::model::table::ModelInfo;
use crate::model::{Message, ModelResponse, Provider};
use crate::outcome::{Outcome, OutcomeKind};
use crate::permissions::Policy;
use crate::retry::RetryPolicy;
use crate::sandbox::NetworkAttempt;
use crate::tools::structured_output::StructuredOutputHandle;
use crate::tools::{Registry, ToolContext, ToolSession};

/// The `agent_error` outcome for a hook that stopped the run (`continue: false`).
pub fn hook_stopped(reason: impl Into<String>) -> Outcome {
    let mut o = Outcome::new(OutcomeKind::AgentError, reason);
    o.terminal_override = Some("hook_stopped".into());
    o
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

/// What the loop sends and enforces: fixed for the whole task.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    /// Model id.
    pub model: String,
    /// Model table entry (context, output cap, prices).
    pub model_info: Option<ModelInfo>,
    /// Exact system prompt.
    pub system: String,
    /// Output cap per request at the start (see [`Running::max_tokens`]).
    pub max_tokens: u32,
    /// The cap a `max_tokens` stop escalates to, once (None: no escalation, e.g. the spec set
    /// `max_tokens` itself).
    pub escalate_max_tokens_to: Option<u32>,
    /// Retry settings.
    pub retry: RetryPolicy,
    /// Thinking configuration, passed through.
    pub thinking: Option<Value>,
    /// Limits.
    pub limits: LoopLimits,
    /// Context management (microcompact, autocompact).
    pub context: ContextPolicy,
    /// The model to switch to when this one stays overloaded, with its table entry.
    pub fallback: Option<(String, Option<ModelInfo>)>,
}

/// What the loop works with for one task: built once per task run by the session (with
/// [`super::builder::AgentBuilder`]); what it is given never changes after, and what the run
/// changes (the tools offered, the model, the output cap, the clock) is its [`Running`] part.
pub struct Agent {
    /// Fixed settings.
    pub(super) config: LoopConfig,
    /// The model backend.
    pub(super) provider: Arc<dyn Provider>,
    /// Permission policy.
    pub(super) policy: Arc<Policy>,
    /// The base context of the task's tool calls: the shared [`ToolSession`] (roots, read
    /// state, hooks), read-only, cancelled with the run; each call gets its own from it.
    pub(super) tool_ctx: ToolContext,
    /// The task's handle on the rate-limit governor it shares with the other tasks.
    pub(super) governor: TaskGovernor,
    /// Where events go.
    pub(super) sinks: Sinks,
    /// Stop requests (signals, timeout).
    pub(super) stopper: Stopper,
    /// The `StructuredOutput` state when the spec sets `output:` (see [`super::structured`]).
    pub(super) structured: Option<StructuredOutputHandle>,
    /// The task's MCP servers (their tools are listed again between turns when they change).
    pub(super) mcp: Option<Arc<crate::mcp::McpServers>>,
    /// What the run changes.
    pub(super) run: Running,
}

/// The part of an [`Agent`] the run changes as it goes.
pub(super) struct Running {
    /// Tools offered (an MCP server's are replaced when it lists them again).
    pub(super) registry: Registry,
    /// Output cap of the next request: lowered after a context error, raised once after a
    /// `max_tokens` stop.
    pub(super) max_tokens: u32,
    /// The escalation still available (taken when used).
    pub(super) escalate_max_tokens_to: Option<u32>,
    /// Connection attempts the sandbox's egress proxy reports.
    pub(super) network: Option<UnboundedReceiver<NetworkAttempt>>,
    /// The attempts recorded so far.
    pub(super) network_tally: NetworkTally,
    /// The model requests go to: the spec's, or the fallback once switched to.
    pub(super) model: String,
    /// The model table entry of [`Running::model`] (prices, window, output cap).
    pub(super) model_info: Option<ModelInfo>,
    /// The fallback model, until it is switched to.
    pub(super) fallback: Option<super::fallback::Fallback>,
    /// The current turn's clock.
    pub(super) clock: super::timing::TurnClock,
    /// Distinct errors of the sinks (a transcript that cannot be written), for the result.
    pub(super) output_errors: Vec<String>,
}

impl Running {
    /// The start of a run with `config`, offering `registry`, hearing of connection
    /// attempts on `network`; its turn clock counts the time `busy` reports.
    pub(super) fn start(
        config: &LoopConfig,
        registry: Registry,
        network: Option<UnboundedReceiver<NetworkAttempt>>,
        busy: Arc<crate::hooks::busy::BusyClock>,
    ) -> Running {
        Running {
            registry,
            max_tokens: config.max_tokens,
            escalate_max_tokens_to: config.escalate_max_tokens_to,
            network,
            network_tally: NetworkTally::default(),
            model: config.model.clone(),
            model_info: config.model_info,
            fallback: config
                .fallback
                .clone()
                .map(|(model, info)| super::fallback::Fallback { model, info }),
            clock: super::timing::TurnClock::new(busy),
            output_errors: Vec::new(),
        }
    }
}

/// What starts or resumes the loop.
#[derive(Debug, Clone)]
pub enum Input {
    /// A user message (the task prompt, or feedback such as failing check output).
    User(String),
    /// Continue from the stored conversation as it is.
    Continue,
}

impl Agent {
    /// Record the connection attempts the egress proxy reported since the last call (each a
    /// `runner_network` event), and count them.
    pub(crate) fn drain_network(&mut self) {
        let mut attempts = Vec::new();
        if let Some(rx) = self.run.network.as_mut() {
            while let Ok(a) = rx.try_recv() {
                attempts.push(a);
            }
        }
        for attempt in attempts {
            self.run.network_tally.add(&attempt);
            self.emit(RunEvent::Network {
                uuid: new_uuid(),
                attempt,
            });
        }
    }

    /// What the task's tool calls share (roots, hooks, environment policy, the commands run).
    pub fn tools(&self) -> &ToolSession {
        &self.tool_ctx.session
    }

    /// The task's handle on the rate-limit governor (what it held the task back, for the
    /// result).
    pub(crate) fn governor(&self) -> &TaskGovernor {
        &self.governor
    }

    /// The stop requests the run answers.
    pub(crate) fn stopper(&self) -> &Stopper {
        &self.stopper
    }

    /// The connection attempts recorded so far.
    pub(crate) fn network_tally(&self) -> NetworkTally {
        self.run.network_tally
    }

    /// Send an event to every sink (output errors are logged and kept for the result, not
    /// fatal).
    pub fn emit(&mut self, ev: RunEvent) {
        if let Err(e) = self.sinks.emit(&ev) {
            let e = e.to_string();
            if !self.run.output_errors.contains(&e) {
                tracing::error!("writing run output failed: {e}");
                self.run.output_errors.push(e);
            }
        }
    }

    /// The output errors since the last call (each distinct message once).
    pub(crate) fn take_output_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.run.output_errors)
    }

    pub(crate) fn push_user_text(&mut self, state: &mut State, text: String) {
        // Hook context and feedback may quote a secret; the model sees none.
        let text = self.tool_ctx.session.redactor.redact(&text).into_owned();
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
            Some(StopCause::Integrity) => Outcome::new(
                OutcomeKind::Denied,
                "a command changed files that steer git and CI (see runner_integrity)",
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

    pub(crate) fn budget_exceeded(&self, state: &State) -> Option<Outcome> {
        if let Some(max) = self.config.limits.max_total_tokens {
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
        if let (Some(max), Some(cost)) = (self.config.limits.max_cost_usd, state.cost_usd)
            && cost >= max
        {
            return Some(Outcome::new(
                OutcomeKind::BudgetCost,
                format!(
                    "cost budget exhausted: {} spent of max_cost_usd {}",
                    crate::report::money::usd(cost),
                    crate::report::money::usd(max)
                ),
            ));
        }
        None
    }

    /// Add a complete response's usage (and its cost, at the prices of the model that
    /// answered, when it is priced) to the run's totals: main turns and compaction calls alike
    /// count toward the budgets.
    pub(crate) fn record_usage(&self, state: &mut State, response: &ModelResponse) {
        let info = self.run.model_info.as_ref();
        let cost = info.and_then(|m| m.cost_usd(&response.usage));
        let window = info.map(|m| (m.context_window, m.max_output_tokens));
        state.record_usage(&response.model, &response.usage, cost, window);
    }
}

impl Agent {
    /// Switch to the fallback model after the main model's overload `error`: record it (a
    /// `runner_model_fallback` event), mark the thinking so far as the other model's, and use
    /// the fallback's limits. False when there is no fallback (left).
    pub(crate) fn fall_back(&mut self, state: &mut State, error: &str) -> bool {
        let Some(f) = self.run.fallback.take() else {
            return false;
        };
        tracing::warn!(
            from = %self.run.model,
            to = %f.model,
            "the model stayed overloaded; continuing with the fallback model: {error}"
        );
        self.emit(RunEvent::ModelFallback {
            uuid: new_uuid(),
            from: self.run.model.clone(),
            to: f.model.clone(),
            error: error.to_string(),
        });
        state
            .foreign_thinking
            .extend(super::fallback::thinking_keys(&state.messages));
        if let Some(cap) = f.info.map(|i| i.max_output_tokens) {
            self.run.max_tokens = self.run.max_tokens.min(cap);
        }
        self.run.model = f.model;
        self.run.model_info = f.info;
        true
    }
}
