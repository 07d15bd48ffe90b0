//! Streaming tool execution: concurrency-safe calls start while the assistant message is
//! still streaming (seed 001 §二).
//!
//! The agent loop offers each tool_use block to a [`StreamingExecutor`] as soon as its
//! `content_block_stop` arrives. A call starts at once when all of these hold:
//!
//! - every tool call before it in the message was handled early too (answered without running,
//!   or started), so batches still run in the model's order;
//! - no PreToolUse, PostToolUse or PostToolUseFailure hook applies to it: hooks run user
//!   commands, and those must never run for a response that may yet be abandoned, so such a
//!   call (and every call after it) waits for the complete message;
//! - the pipeline's first half (input validation, `validate`, permission decision) allows it
//!   and it is concurrency-safe (Read, Glob, Grep, a Bash command the policy classifies as
//!   read-only), and the first batch is not full ([`MAX_CONCURRENT_CALLS`]).
//!
//! Anything else (Write, Edit, side-effecting Bash, a call with hooks, a call after any of
//! those) waits until the whole message has arrived, then goes through
//! [`super::executor::execute`]'s normal path, joining the batch the early calls started.
//! Results come back in the model's order, whatever started when.
//!
//! If the attempt fails (a stream error before `message_stop`, then a retry),
//! [`StreamingExecutor::abandon`] cancels the calls it started, waits until they stopped, and
//! discards their results: nothing of them reaches the transcript or the next request.

use tokio_util::sync::CancellationToken;

use super::executor::{
    Batch, CallOutcome, MAX_CONCURRENT_CALLS, PendingCall, Prepared, bash_cwd, execute,
    execute_from, prepare,
};
use super::{Registry, ToolContext, ToolFatal};
use crate::permissions::Policy;

/// The tool calls of one model response attempt that were handled while it streamed.
pub struct StreamingExecutor {
    /// Cancelled when the attempt is abandoned; the parent of every call started here.
    attempt: CancellationToken,
    /// ids of the calls handled early, in the model's order.
    ids: Vec<String>,
    /// Their outcomes where they were answered without running (`None`: started in `batch`).
    results: Vec<Option<CallOutcome>>,
    /// The first batch of concurrency-safe calls, started as they arrived.
    batch: Batch,
    /// Whether the next call may still be handled early.
    open: bool,
}

impl StreamingExecutor {
    /// An executor for one attempt; its calls stop when `ctx.cancel` is cancelled.
    pub fn new(ctx: &ToolContext) -> StreamingExecutor {
        let attempt = ctx.cancel.child_token();
        StreamingExecutor {
            batch: Batch::new(attempt.clone()),
            attempt,
            ids: Vec::new(),
            results: Vec::new(),
            open: true,
        }
    }

    /// How many calls were started while the message streamed.
    pub fn started(&self) -> usize {
        self.batch.len()
    }

    /// A tool_use block is complete: start the call now if it may start early (see the
    /// module doc); otherwise it, and every call after it, waits for [`Self::finish`].
    pub async fn offer(
        &mut self,
        call: &PendingCall,
        registry: &Registry,
        policy: &Policy,
        ctx: &ToolContext,
    ) {
        if !self.open {
            return;
        }
        if ctx
            .hooks
            .has_tool_hooks(&call.name, &call.input, &bash_cwd(ctx))
        {
            self.open = false;
            return;
        }
        match prepare(call, registry, policy, ctx).await {
            Prepared::Done(d) => {
                let (output, denial) = *d;
                self.results.push(Some(CallOutcome {
                    id: call.id.clone(),
                    output,
                    denial,
                }));
            }
            Prepared::Run {
                input,
                concurrent: true,
                context,
            } if self.batch.len() < MAX_CONCURRENT_CALLS => {
                tracing::debug!(tool = %call.name, id = %call.id, "starting a concurrency-safe call while the message streams");
                self.batch
                    .start(self.ids.len(), call, input, context, registry, ctx);
                self.results.push(None);
            }
            // Side-effecting, or the first batch is full: this call and the rest wait for the
            // whole message (and are prepared again then, after the calls before them ran).
            Prepared::Run { .. } => {
                self.open = false;
                return;
            }
        }
        self.ids.push(call.id.clone());
    }

    /// The message is complete: run the remaining calls through the normal pipeline and
    /// return every outcome in the model's order. `calls` are the message's tool calls.
    pub async fn finish(
        self,
        calls: &[PendingCall],
        registry: &Registry,
        policy: &Policy,
        ctx: &ToolContext,
    ) -> Result<Vec<CallOutcome>, ToolFatal> {
        let k = self.ids.len();
        let same = k <= calls.len() && self.ids.iter().zip(calls).all(|(id, c)| *id == c.id);
        if !same {
            // Blocks completed out of order: start over the plain way (what ran early only
            // read, so running it again is harmless).
            tracing::warn!(
                "tool calls handled while streaming do not match the message; running them again"
            );
            self.abandon().await;
            return execute(calls, registry, policy, ctx).await;
        }
        let mut results = vec![None; calls.len()];
        for (slot, r) in results.iter_mut().zip(self.results) {
            *slot = r;
        }
        execute_from(calls, k, results, self.batch, registry, policy, ctx).await
    }

    /// The attempt is abandoned: cancel the calls started for it, wait until they stopped and
    /// discard their results.
    pub async fn abandon(mut self) {
        if !self.batch.is_empty() {
            tracing::info!(
                calls = self.batch.len(),
                "cancelling tool calls started for an abandoned response attempt"
            );
        }
        self.attempt.cancel();
        self.batch.cancel().await;
    }
}
