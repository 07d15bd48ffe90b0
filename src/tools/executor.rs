//! Runs one message's tool calls through the pipeline (seed 001 §一): input validation →
//! `validate` → PreToolUse hooks → permission decision → call → PostToolUse hooks, with
//! concurrency for consecutive concurrency-safe calls and results in the model's order.

use futures_util::future::join_all;
use serde_json::Value;

use super::{Registry, ToolContext, ToolFatal, ToolOutput};
use crate::events::Denial;
use crate::hooks::HookDecision;
use crate::permissions::{Decision, Policy, ToolCall};

/// One tool_use block to execute.
#[derive(Debug, Clone)]
pub struct PendingCall {
    /// tool_use id.
    pub id: String,
    /// Tool name the model called.
    pub name: String,
    /// Input the model gave.
    pub input: Value,
    /// Set when the input JSON did not parse (the call is answered with this error).
    pub invalid_input: Option<String>,
}

/// What one call produced.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// tool_use id.
    pub id: String,
    /// The result for the model.
    pub output: ToolOutput,
    /// Set when the policy denied the call.
    pub denial: Option<Denial>,
}

enum Prepared {
    Done(Box<(ToolOutput, Option<Denial>)>),
    Run {
        /// The input to run with (a PreToolUse hook may have replaced it).
        input: Value,
        concurrent: bool,
        /// `additionalContext` from PreToolUse hooks, added to the result.
        context: Vec<String>,
    },
}

fn done(out: ToolOutput, denial: Option<Denial>) -> Prepared {
    Prepared::Done(Box::new((out, denial)))
}

fn denied(call: &PendingCall, input: &Value, reason: String) -> Prepared {
    tracing::warn!(tool = %call.name, id = %call.id, "denied: {reason}");
    done(
        ToolOutput::error(format!("Permission denied: {reason}")),
        Some(Denial {
            tool_name: call.name.clone(),
            tool_use_id: call.id.clone(),
            tool_input: input.clone(),
            reason,
        }),
    )
}

fn bash_cwd(ctx: &ToolContext) -> std::path::PathBuf {
    ctx.bash_cwd
        .lock()
        .map(|c| c.clone())
        .unwrap_or_else(|p| p.into_inner().clone())
}

/// The pipeline up to the call: input validation → `validate` → PreToolUse hooks → permission
/// decision.
async fn prepare(
    call: &PendingCall,
    registry: &Registry,
    policy: &Policy,
    ctx: &ToolContext,
) -> Prepared {
    if let Some(err) = &call.invalid_input {
        return done(
            ToolOutput::error(format!(
                "InputValidationError: the input for {} was not valid JSON ({err}). The call did not run; send the input as a JSON object.",
                call.name
            )),
            None,
        );
    }
    let Some(tool) = registry.get(&call.name) else {
        let offered = registry.names().join(", ");
        return done(
            ToolOutput::error(format!(
                "No such tool available: {}. Available tools: {offered}",
                call.name
            )),
            None,
        );
    };
    if let Err(e) = tool.validate(&call.input, ctx) {
        return done(
            ToolOutput::error(format!("InputValidationError: {e}")),
            None,
        );
    }
    if !tool.needs_permission() {
        // Changes only runner's own state (TodoWrite): no hooks, no policy.
        return Prepared::Run {
            input: call.input.clone(),
            concurrent: tool.is_concurrency_safe(&call.input),
            context: Vec::new(),
        };
    }
    let cwd = bash_cwd(ctx);
    let hook = ctx
        .hooks
        .pre_tool_use(&call.name, &call.input, &call.id, &cwd)
        .await;
    let mut input = call.input.clone();
    if let Some(updated) = hook.updated_input {
        if let Err(e) = tool.validate(&updated, ctx) {
            return done(
                ToolOutput::error(format!(
                    "InputValidationError: a PreToolUse hook's updatedInput is not valid: {e}"
                )),
                None,
            );
        }
        tracing::info!(tool = %call.name, id = %call.id, "a PreToolUse hook replaced the input");
        input = updated;
    }
    let tc = ToolCall {
        tool: &call.name,
        input: &input,
        cwd: &cwd,
    };
    let decision = match hook.decision {
        Some(HookDecision::Deny(reason)) => {
            return denied(
                call,
                &input,
                format!("{} call blocked by a PreToolUse hook: {reason}", call.name),
            );
        }
        Some(HookDecision::Ask(reason)) => {
            return denied(
                call,
                &input,
                format!(
                    "a PreToolUse hook asked for approval of this {} call ({reason}), and runner runs unattended with nobody to ask.",
                    call.name
                ),
            );
        }
        Some(HookDecision::Allow) => policy.decide_hook_allowed(&tc, &ctx.roots),
        None => policy.decide(&tc, &ctx.roots),
    };
    match decision {
        Decision::Allow { .. } => Prepared::Run {
            concurrent: tool.is_concurrency_safe(&input),
            input,
            context: hook.context,
        },
        Decision::Deny { reason } => denied(call, &input, reason),
    }
}

/// The call itself, then the PostToolUse hooks.
async fn run_one(
    call: &PendingCall,
    input: &Value,
    context: &[String],
    registry: &Registry,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolFatal> {
    let started = std::time::Instant::now();
    let mut out = match registry.get(&call.name) {
        Some(tool) => tool.call(input.clone(), ctx).await?,
        None => ToolOutput::error(format!("No such tool available: {}", call.name)),
    };
    let response = out
        .structured
        .clone()
        .unwrap_or_else(|| Value::String(out.content.clone()));
    let (cwd, took) = (bash_cwd(ctx), started.elapsed());
    // An error result goes to the PostToolUseFailure hooks instead.
    let hooks = &ctx.hooks;
    let post = if out.is_error {
        let err = out.content.clone();
        hooks
            .post_tool_use_failure(&call.name, input, &call.id, &err, &cwd, took)
            .await
    } else {
        hooks
            .post_tool_use(&call.name, input, &call.id, &response, &cwd, took)
            .await
    };
    for note in context.iter().chain(post.feedback.iter()) {
        if !out.content.is_empty() {
            out.content.push_str("\n\n");
        }
        out.content.push_str(note);
    }
    Ok(out)
}

/// Execute `calls` in order, each through the whole pipeline. Consecutive allowed calls that
/// are concurrency-safe run at the same time; any other call runs alone, after the calls
/// before it. Results come back in the model's order. A [`ToolFatal`] ends the run.
pub async fn execute(
    calls: &[PendingCall],
    registry: &Registry,
    policy: &Policy,
    ctx: &ToolContext,
) -> Result<Vec<CallOutcome>, ToolFatal> {
    let mut results: Vec<Option<CallOutcome>> = vec![None; calls.len()];
    // Allowed concurrency-safe calls waiting to run together: (index, input, context).
    let mut batch: Vec<(usize, Value, Vec<String>)> = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        match prepare(call, registry, policy, ctx).await {
            Prepared::Done(d) => {
                let (out, denial) = *d;
                results[i] = Some(CallOutcome {
                    id: call.id.clone(),
                    output: out,
                    denial,
                });
            }
            Prepared::Run {
                input,
                concurrent: true,
                context,
            } => batch.push((i, input, context)),
            Prepared::Run {
                input,
                concurrent: false,
                context,
            } => {
                run_batch(&mut batch, calls, registry, ctx, &mut results).await?;
                let out = run_one(call, &input, &context, registry, ctx).await?;
                results[i] = Some(CallOutcome {
                    id: call.id.clone(),
                    output: out,
                    denial: None,
                });
            }
        }
    }
    run_batch(&mut batch, calls, registry, ctx, &mut results).await?;
    Ok(results.into_iter().flatten().collect())
}

async fn run_batch(
    batch: &mut Vec<(usize, Value, Vec<String>)>,
    calls: &[PendingCall],
    registry: &Registry,
    ctx: &ToolContext,
    results: &mut [Option<CallOutcome>],
) -> Result<(), ToolFatal> {
    let outs = join_all(
        batch
            .iter()
            .map(|(j, input, context)| run_one(&calls[*j], input, context, registry, ctx)),
    )
    .await;
    for ((j, _, _), out) in batch.drain(..).zip(outs) {
        results[j] = Some(CallOutcome {
            id: calls[j].id.clone(),
            output: out?,
            denial: None,
        });
    }
    Ok(())
}
