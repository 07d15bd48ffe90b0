//! Runs one message's tool calls: validation, permission decision, execution with
//! concurrency for consecutive concurrency-safe calls, results in the model's order.

use futures_util::future::join_all;
use serde_json::Value;

use super::{Registry, ToolContext, ToolFatal, ToolOutput};
use crate::events::Denial;
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
    Run { concurrent: bool },
}

fn done(out: ToolOutput, denial: Option<Denial>) -> Prepared {
    Prepared::Done(Box::new((out, denial)))
}

fn prepare(
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
        return Prepared::Run {
            concurrent: tool.is_concurrency_safe(&call.input),
        };
    }
    let cwd = ctx
        .bash_cwd
        .lock()
        .map(|c| c.clone())
        .unwrap_or_else(|p| p.into_inner().clone());
    let decision = policy.decide(
        &ToolCall {
            tool: &call.name,
            input: &call.input,
            cwd: &cwd,
        },
        &ctx.roots,
    );
    match decision {
        Decision::Allow { .. } => Prepared::Run {
            concurrent: tool.is_concurrency_safe(&call.input),
        },
        Decision::Deny { reason } => {
            tracing::warn!(tool = %call.name, id = %call.id, "denied: {reason}");
            done(
                ToolOutput::error(format!("Permission denied: {reason}")),
                Some(Denial {
                    tool_name: call.name.clone(),
                    tool_use_id: call.id.clone(),
                    tool_input: call.input.clone(),
                    reason,
                }),
            )
        }
    }
}

async fn run_one(
    call: &PendingCall,
    registry: &Registry,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolFatal> {
    match registry.get(&call.name) {
        Some(tool) => tool.call(call.input.clone(), ctx).await,
        None => Ok(ToolOutput::error(format!(
            "No such tool available: {}",
            call.name
        ))),
    }
}

/// Execute `calls` in order. Consecutive allowed calls that are concurrency-safe run at the
/// same time; any other call runs alone. Results come back in the model's order.
/// A [`ToolFatal`] ends the run.
pub async fn execute(
    calls: &[PendingCall],
    registry: &Registry,
    policy: &Policy,
    ctx: &ToolContext,
) -> Result<Vec<CallOutcome>, ToolFatal> {
    let prepared: Vec<Prepared> = calls
        .iter()
        .map(|c| prepare(c, registry, policy, ctx))
        .collect();
    let mut results: Vec<Option<CallOutcome>> = vec![None; calls.len()];
    let mut i = 0;
    while i < calls.len() {
        match &prepared[i] {
            Prepared::Done(done) => {
                let (out, denial) = done.as_ref();
                results[i] = Some(CallOutcome {
                    id: calls[i].id.clone(),
                    output: out.clone(),
                    denial: denial.clone(),
                });
                i += 1;
            }
            Prepared::Run { concurrent: false } => {
                let out = run_one(&calls[i], registry, ctx).await?;
                results[i] = Some(CallOutcome {
                    id: calls[i].id.clone(),
                    output: out,
                    denial: None,
                });
                i += 1;
            }
            Prepared::Run { concurrent: true } => {
                let start = i;
                while i < calls.len() && matches!(prepared[i], Prepared::Run { concurrent: true }) {
                    i += 1;
                }
                let outs = join_all((start..i).map(|j| run_one(&calls[j], registry, ctx))).await;
                for (j, out) in (start..i).zip(outs) {
                    results[j] = Some(CallOutcome {
                        id: calls[j].id.clone(),
                        output: out?,
                        denial: None,
                    });
                }
            }
        }
    }
    Ok(results.into_iter().flatten().collect())
}
