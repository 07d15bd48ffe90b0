//! Streaming tool execution: concurrency-safe calls start while the assistant message is
//! still streaming.
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
pub(crate) struct StreamingExecutor {
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
    pub(crate) fn new(ctx: &ToolContext) -> StreamingExecutor {
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
    #[cfg(test)]
    pub(crate) fn started(&self) -> usize {
        self.batch.len()
    }

    /// A tool_use block is complete: start the call now if it may start early (see the
    /// module doc); otherwise it, and every call after it, waits for [`Self::finish`].
    pub(crate) async fn offer(
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
            .session
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
            Prepared::Run(run) if run.concurrent && self.batch.len() < MAX_CONCURRENT_CALLS => {
                tracing::debug!(tool = %call.name, id = %call.id, "starting a concurrency-safe call while the message streams");
                self.batch.start(self.ids.len(), call, *run, ctx);
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
    pub(crate) async fn finish(
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
    pub(crate) async fn abandon(mut self) {
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::json;

    use super::*;
    use crate::tools::executor::SIBLING_CANCELLED;
    use crate::tools::executor::tests::{call, interval, setup};
    use crate::tools::util::test_support::ctx;

    /// Let the spawned calls run up to their first await (the tests run on a current-thread
    /// runtime, where a spawned task runs only when the test task yields).
    async fn let_run() {
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn safe_calls_start_when_offered_and_the_rest_wait_for_finish() {
        let (_d, ctx) = ctx();
        let (registry, policy, log) = setup();
        let calls = vec![
            call("Read", "r1", json!({ "ms": 30 })),
            call("Bash", "b", json!({ "ms": 30 })),
            call("Write", "w", json!({ "ms": 10 })),
            call("Read", "r2", json!({ "ms": 10 })),
        ];
        let mut ex = StreamingExecutor::new(&ctx);
        for c in &calls {
            ex.offer(c, &registry, &policy, &ctx).await;
        }
        assert_eq!(
            ex.started(),
            2,
            "r1 and the read-only Bash started; w and r2 wait"
        );
        let_run().await;
        let offered = Instant::now();
        let out = ex.finish(&calls, &registry, &policy, &ctx).await.unwrap();
        let ids: Vec<&str> = out.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["id-r1", "id-b", "id-w", "id-r2"]);
        assert!(out.iter().all(|o| !o.output.is_error));
        let [r1, b, w, r2] = ["r1", "b", "w", "r2"].map(|l| interval(&log, l));
        assert!(
            r1.0 < offered && b.0 < offered,
            "started before the message ended"
        );
        assert!(w.0 >= r1.1.max(b.1), "the Write ran after the early batch");
        assert!(r2.0 >= w.1, "the Read after the Write ran after it");
    }

    #[tokio::test]
    async fn abandon_cancels_started_calls_and_keeps_the_run_token() {
        let (_d, ctx) = ctx();
        let (registry, policy, log) = setup();
        let slow = call("Read", "slow", json!({ "ms": 60_000 }));
        let mut ex = StreamingExecutor::new(&ctx);
        ex.offer(&slow, &registry, &policy, &ctx).await;
        assert_eq!(ex.started(), 1);
        let_run().await;
        let started = Instant::now();
        ex.abandon().await;
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "cancelled, not waited out"
        );
        assert_eq!(
            log.lock().unwrap().len(),
            1,
            "the call had stopped when abandon returned"
        );
        assert!(!ctx.cancel.is_cancelled());
    }

    #[tokio::test]
    async fn a_call_joining_after_a_bash_sibling_failed_is_cancelled() {
        let (_d, ctx) = ctx();
        let (registry, policy, log) = setup();
        let calls = vec![
            call("Bash", "bad", json!({ "ms": 1, "fail": true })),
            call("Read", "late", json!({ "ms": 1 })),
        ];
        let mut ex = StreamingExecutor::new(&ctx);
        ex.offer(&calls[0], &registry, &policy, &ctx).await;
        // Let the failing call finish before the next block "arrives".
        while log.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        ex.offer(&calls[1], &registry, &policy, &ctx).await;
        let out = ex.finish(&calls, &registry, &policy, &ctx).await.unwrap();
        assert_eq!(out[0].output.content, "bad failed");
        assert_eq!(out[1].output.content, SIBLING_CANCELLED);
    }

    #[tokio::test]
    async fn out_of_order_blocks_fall_back_to_the_plain_path() {
        let (_d, ctx) = ctx();
        let (registry, policy, _log) = setup();
        let calls = vec![
            call("Read", "a", json!({ "ms": 1 })),
            call("Read", "b", json!({ "ms": 1 })),
        ];
        let mut ex = StreamingExecutor::new(&ctx);
        ex.offer(&calls[1], &registry, &policy, &ctx).await;
        let out = ex.finish(&calls, &registry, &policy, &ctx).await.unwrap();
        let ids: Vec<&str> = out.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["id-a", "id-b"]);
        assert!(out.iter().all(|o| !o.output.is_error));
    }
}
