//! Runs one message's tool calls through the pipeline: input validation →
//! `validate` → PreToolUse hooks → permission decision → call → PostToolUse hooks, with
//! concurrency for consecutive concurrency-safe calls and results in the model's order.

use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Access, CheckedCall, Registry, ToolContext, ToolFatal, ToolOutput};
use crate::events::Denial;
use crate::hooks::HookDecision;
use crate::permissions::{Decision, Policy, Scope, ToolCall};

/// One tool_use block to execute.
#[derive(Debug, Clone)]
pub(crate) struct PendingCall {
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
pub(crate) struct CallOutcome {
    /// tool_use id.
    pub id: String,
    /// The result for the model.
    pub output: ToolOutput,
    /// Set when the policy denied the call.
    pub denial: Option<Denial>,
}

/// A call after the pipeline's first half ([`prepare`]).
pub(super) enum Prepared {
    /// Answered without running (invalid input, unknown tool, denied, ...).
    Done(Box<(ToolOutput, Option<Denial>)>),
    /// Allowed: run it.
    Run(Box<Runnable>),
}

/// An allowed call, ready to run.
pub(super) struct Runnable {
    /// The input it runs with (a PreToolUse hook may have replaced the model's), for the
    /// PostToolUse hooks.
    pub(super) input: Value,
    /// The parsed and checked call.
    pub(super) call: Box<dyn CheckedCall>,
    /// Whether it may run concurrently with its safe neighbours.
    pub(super) concurrent: bool,
    /// What it may do when it runs (the policy's decision).
    pub(super) scope: Scope,
    /// `additionalContext` from PreToolUse hooks, added to the result.
    pub(super) context: Vec<String>,
}

fn done(out: ToolOutput, denial: Option<Denial>) -> Prepared {
    Prepared::Done(Box::new((out, denial)))
}

fn denied(call: &PendingCall, input: &Value, reason: String, write: bool) -> Prepared {
    // Logged as the call's one line by the tool log (`report::tool_log`).
    tracing::debug!(tool = %call.name, id = %call.id, "denied: {reason}");
    done(
        ToolOutput::error(format!("Permission denied: {reason}")),
        Some(Denial {
            uuid: crate::events::new_uuid(),
            tool_name: call.name.clone(),
            tool_use_id: call.id.clone(),
            tool_input: input.clone(),
            reason,
            write,
        }),
    )
}

pub(super) fn bash_cwd(ctx: &ToolContext) -> std::path::PathBuf {
    ctx.session
        .bash_cwd
        .lock()
        .map(|c| c.clone())
        .unwrap_or_else(|p| p.into_inner().clone())
}

/// Most concurrency-safe calls run at once in one batch; a longer run of consecutive safe calls
/// is split into batches of this size, run one after another in the model's order.
pub(crate) const MAX_CONCURRENT_CALLS: usize = 10;

/// Whether an allowed call may run concurrently with its safe neighbours. A command is decided
/// here, not in the tool, because it takes the permission engine: it is safe when the policy
/// classifies it as entirely read-only and it does not change directory (a `cd` would move the
/// persistent shell cwd under its siblings).
fn concurrency_safe(
    call: &dyn CheckedCall,
    policy: &Policy,
    cwd: &std::path::Path,
    ctx: &ToolContext,
) -> bool {
    match call.access() {
        Access::Exec(cmd) => policy.is_read_only_bash(cmd, cwd, &ctx.session.roots),
        _ => call.concurrency_safe(),
    }
}

/// The pipeline up to the call: parse and check the input → PreToolUse hooks → permission
/// decision on what the call touches.
pub(super) async fn prepare(
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
    let checked = match tool.parse(&call.input, ctx) {
        Ok(c) => c,
        Err(e) => {
            return done(
                ToolOutput::error(format!("InputValidationError: {e}")),
                None,
            );
        }
    };
    if *checked.access() == Access::Internal {
        // Changes only runner's own state (TodoWrite): no hooks, no policy.
        return Prepared::Run(Box::new(Runnable {
            input: call.input.clone(),
            concurrent: checked.concurrency_safe(),
            scope: Scope::ReadOnly,
            call: checked,
            context: Vec::new(),
        }));
    }
    let cwd = bash_cwd(ctx);
    let hook = ctx
        .session
        .hooks
        .pre_tool_use(&call.name, &call.input, &call.id, &cwd)
        .await;
    let (input, checked) = match hook.updated_input {
        Some(updated) => match tool.parse(&updated, ctx) {
            Ok(c) => {
                tracing::info!(tool = %call.name, id = %call.id, "a PreToolUse hook replaced the input");
                (updated, c)
            }
            Err(e) => {
                return done(
                    ToolOutput::error(format!(
                        "InputValidationError: a PreToolUse hook's updatedInput is not valid: {e}"
                    )),
                    None,
                );
            }
        },
        None => (call.input.clone(), checked),
    };
    let tc = ToolCall {
        tool: &call.name,
        access: checked.access(),
        cwd: &cwd,
    };
    let decision = match hook.decision {
        Some(HookDecision::Deny(reason)) => {
            return denied(
                call,
                &input,
                format!("{} call blocked by a PreToolUse hook: {reason}", call.name),
                false,
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
                false,
            );
        }
        Some(HookDecision::Allow) => policy.decide_hook_allowed(&tc, &ctx.session.roots),
        None => policy.decide(&tc, &ctx.session.roots),
    };
    if let Decision::Allow { .. } = decision
        && let Err((reason, write)) = super::file_rules::check_access(ctx, checked.access())
    {
        // The sandbox's file rules bind the file tools whatever the policy allowed.
        return denied(call, &input, reason, write);
    }
    match decision {
        Decision::Allow { scope, .. } => Prepared::Run(Box::new(Runnable {
            concurrent: concurrency_safe(checked.as_ref(), policy, &cwd, ctx),
            scope,
            input,
            call: checked,
            context: hook.context,
        })),
        Decision::Deny { reason, write } => denied(call, &input, reason, write),
    }
}

/// The call itself, then the PostToolUse hooks.
async fn run_one(
    call: &PendingCall,
    run: Runnable,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolFatal> {
    if ctx.cancel.is_cancelled() {
        // The run was interrupted (or a sibling failed) before this call started.
        return Ok(ToolOutput::error(
            "Not run: the run was interrupted before this tool call started.",
        ));
    }
    let Runnable {
        input,
        call: checked,
        context,
        scope,
        ..
    } = run;
    let input = &input;
    let command_line = match checked.access() {
        Access::Exec(c) => Some(c.clone()),
        _ => None,
    };
    // A call allowed to write is on record before it acts: a command once its shell runs
    // (with its process group), any other call now.
    let start = match &ctx.session.journal {
        Some(j) if scope == Scope::Write => Some(j.call(&call.id, &call.name)),
        _ => None,
    };
    let (now, at_spawn) = match command_line {
        Some(_) => (None, start),
        None => (start, None),
    };
    let scoped;
    let ctx = if ctx.scope == scope && at_spawn.is_none() {
        ctx
    } else {
        let mut c = ctx.clone();
        c.scope = scope;
        c.started = at_spawn;
        scoped = c;
        &scoped
    };
    if let Some(s) = now {
        s.announce(None);
    }
    let started = std::time::Instant::now();
    let integrity = match checked.access() {
        Access::Read(_) | Access::Internal => None,
        _ => ctx.session.integrity.as_ref(),
    };
    let check = crate::integrity::around(integrity, || call_label(call, command_line.as_deref()));
    let mut out = checked.run(ctx).await?;
    integrity_note(&mut out, &check.end());
    if let Some(line) = command_line {
        log_command(ctx, line, &out, started.elapsed());
    }
    let response = out
        .structured
        .clone()
        .unwrap_or_else(|| Value::String(out.content.clone()));
    let (cwd, took) = (bash_cwd(ctx), started.elapsed());
    // An error result goes to the PostToolUseFailure hooks instead.
    let hooks = &ctx.session.hooks;
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

/// How a call is named in a `runner_integrity` record.
fn call_label(call: &PendingCall, command: Option<&str>) -> String {
    match command {
        Some(c) => {
            let short: String = c.chars().take(200).collect();
            let more = if short.len() < c.len() { "…" } else { "" };
            format!("{} call {} (`{short}{more}`)", call.name, call.id)
        }
        None => format!("{} call {}", call.name, call.id),
    }
}

/// Tell the model what the integrity check undid after its call (the task ends `denied`).
fn integrity_note(out: &mut ToolOutput, undone: &[crate::integrity::IntegrityChange]) {
    if undone.is_empty() {
        return;
    }
    out.is_error = true;
    out.content.push_str(
        "\n\nrunner undid changes to files that steer git and CI, which no permission rule allows; the task ends denied:",
    );
    for c in undone {
        out.content.push_str("\n- ");
        out.content.push_str(&c.message());
    }
}

/// Add a command that ran to the task's list, with how it ended (as the tool reports it) and
/// its duration.
fn log_command(ctx: &ToolContext, command: String, out: &ToolOutput, took: std::time::Duration) {
    let end = out.command.unwrap_or(super::CommandEnd {
        exit_code: None,
        timed_out: false,
    });
    let run = crate::events::CommandRun {
        command,
        exit_code: end.exit_code,
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        timed_out: end.timed_out,
    };
    ctx.session
        .commands
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(run);
}

/// Execute `calls` in order, each through the whole pipeline. Consecutive allowed calls that
/// are concurrency-safe run at the same time; any other call runs alone, after the calls
/// before it. Results come back in the model's order. A [`ToolFatal`] ends the run.
pub(crate) async fn execute(
    calls: &[PendingCall],
    registry: &Registry,
    policy: &Policy,
    ctx: &ToolContext,
) -> Result<Vec<CallOutcome>, ToolFatal> {
    let results = vec![None; calls.len()];
    let batch = Batch::new(ctx.cancel.clone());
    execute_from(calls, 0, results, batch, registry, policy, ctx).await
}

/// [`execute`] for `calls[from..]`, after the calls before `from` were handled already:
/// their outcomes are in `results`, or they are running in `batch` (the streaming executor
/// starts calls while the message still streams; see `super::streaming`). `batch` is the
/// open batch later concurrency-safe calls join, up to [`MAX_CONCURRENT_CALLS`].
pub(super) async fn execute_from(
    calls: &[PendingCall],
    from: usize,
    mut results: Vec<Option<CallOutcome>>,
    mut batch: Batch,
    registry: &Registry,
    policy: &Policy,
    ctx: &ToolContext,
) -> Result<Vec<CallOutcome>, ToolFatal> {
    for (i, call) in calls.iter().enumerate().skip(from) {
        match prepare(call, registry, policy, ctx).await {
            Prepared::Done(d) => {
                let (out, denial) = *d;
                results[i] = Some(CallOutcome {
                    id: call.id.clone(),
                    output: out,
                    denial,
                });
            }
            Prepared::Run(run) if run.concurrent => {
                if batch.len() == MAX_CONCURRENT_CALLS {
                    batch.finish(calls, &mut results).await?;
                }
                batch.start(i, call, *run, ctx);
            }
            Prepared::Run(run) => {
                batch.finish(calls, &mut results).await?;
                let out = run_one(call, *run, ctx).await?;
                results[i] = Some(CallOutcome {
                    id: call.id.clone(),
                    output: out,
                    denial: None,
                });
            }
        }
    }
    batch.finish(calls, &mut results).await?;
    let mut outcomes: Vec<CallOutcome> = results.into_iter().flatten().collect();
    // Before anything keeps them: no secret reaches the model (a third party, and a model can
    // copy what it sees into a file), the transcript or the spill file of a large result.
    for o in &mut outcomes {
        o.output.content = ctx.session.redactor.redact(&o.output.content).into_owned();
        if let Some(s) = o.output.structured.as_mut() {
            ctx.session.redactor.redact_value(s);
        }
    }
    budget_results(&mut outcomes, ctx).await;
    Ok(outcomes)
}

/// Largest tool result content, in characters, sent as is. A longer one is replaced by its
/// first [`PREVIEW_CHARS`] characters and the path of the full text under `ctx.session.spill_dir`.
pub(crate) const MAX_RESULT_CHARS: usize = 50_000;
/// Largest total content, in characters, of one message's tool results. Over it, the largest
/// results are replaced by previews first, until the total fits.
pub(crate) const MAX_MESSAGE_CHARS: usize = 200_000;
/// Characters kept from the start of a replaced result.
pub(crate) const PREVIEW_CHARS: usize = 2_000;

/// Apply the size budgets to one message's results. This is the one place result size is
/// budgeted: once, as the results are created, so the replaced form is what the transcript
/// records and every later request sends (prompt caching and replay stay byte-stable).
async fn budget_results(outcomes: &mut [CallOutcome], ctx: &ToolContext) {
    let mut replaced = vec![false; outcomes.len()];
    for (k, o) in outcomes.iter_mut().enumerate() {
        let n = o.output.content.chars().count();
        if n > MAX_RESULT_CHARS {
            let why = format!("over the {MAX_RESULT_CHARS}-character limit for one tool result");
            replace_with_preview(o, n, &why, ctx).await;
            replaced[k] = true;
        }
    }
    let mut sizes: Vec<usize> = outcomes
        .iter()
        .map(|o| o.output.content.chars().count())
        .collect();
    while sizes.iter().sum::<usize>() > MAX_MESSAGE_CHARS {
        let Some(k) = (0..outcomes.len())
            .filter(|&k| !replaced[k] && sizes[k] > PREVIEW_CHARS)
            .max_by_key(|&k| (sizes[k], std::cmp::Reverse(k)))
        else {
            break;
        };
        let why = format!(
            "this message's tool results together were over the {MAX_MESSAGE_CHARS}-character limit, and this was the largest"
        );
        replace_with_preview(&mut outcomes[k], sizes[k], &why, ctx).await;
        replaced[k] = true;
        sizes[k] = outcomes[k].output.content.chars().count();
    }
}

/// Save the full content of `o` under `ctx.session.spill_dir` and replace it by a preview and the path.
async fn replace_with_preview(o: &mut CallOutcome, chars: usize, why: &str, ctx: &ToolContext) {
    let name: String =
        o.id.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
    let path = ctx
        .session
        .spill_dir
        .join(format!("tool-result-{name}.txt"));
    let saved = async {
        tokio::fs::create_dir_all(&ctx.session.spill_dir).await?;
        tokio::fs::write(&path, o.output.content.as_bytes()).await
    }
    .await;
    let head: String = o.output.content.chars().take(PREVIEW_CHARS).collect();
    let where_ = match saved {
        Ok(()) => format!(
            "The full output is saved to {}; read it with the Read tool (offset/limit) or search it with Grep.",
            path.display()
        ),
        Err(e) => {
            tracing::warn!(id = %o.id, "cannot save a large tool result: {e}");
            format!(
                "The full output could not be saved ({e}); rerun the call with narrower output."
            )
        }
    };
    tracing::info!(id = %o.id, chars, "tool result replaced by a preview: {why}");
    o.output.content = format!(
        "{head}\n\n[Output too long: {chars} characters ({why}); only the first {PREVIEW_CHARS} are shown above. {where_}]"
    );
}

/// The result a call gets when a failing Bash sibling cancelled it.
pub(crate) const SIBLING_CANCELLED: &str = "Cancelled because a sibling Bash call failed: this call was stopped before it finished. Run it again if you still need it.";

/// One batch of concurrency-safe calls: each starts (as its own task) when it joins, and
/// [`Batch::finish`] waits for them all. Each call gets a child token of the batch's token,
/// itself a child of `parent`; when a Bash call fails (an error result), the batch's token is
/// cancelled, so the siblings still running (or joining later) are answered with
/// [`SIBLING_CANCELLED`]. A failing Read (or Glob, Grep) cancels nothing: its failure says
/// nothing about its siblings. Dropping a batch with calls still running cancels them.
pub(super) struct Batch {
    /// Cancelled by an interrupt (the run's token) or an abandoned attempt.
    parent: CancellationToken,
    /// Cancelled when a Bash call of this batch fails.
    token: CancellationToken,
    /// Started calls: (index in the message's calls, task).
    running: Vec<(usize, JoinHandle<Result<ToolOutput, ToolFatal>>)>,
}

impl Batch {
    /// An empty batch whose calls stop when `parent` is cancelled.
    pub(super) fn new(parent: CancellationToken) -> Batch {
        Batch {
            token: parent.child_token(),
            parent,
            running: Vec::new(),
        }
    }

    /// How many calls the batch holds.
    pub(super) fn len(&self) -> usize {
        self.running.len()
    }

    /// Whether the batch holds no call.
    pub(super) fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Start `call` (index `i`), prepared as `run`, now.
    pub(super) fn start(&mut self, i: usize, call: &PendingCall, run: Runnable, ctx: &ToolContext) {
        let call = call.clone();
        // A failed command says something about its siblings (they may depend on what it
        // should have done); a failed read does not.
        let command = matches!(run.call.access(), Access::Exec(_));
        let (parent, batch) = (self.parent.clone(), self.token.clone());
        let mine = batch.child_token();
        let mut call_ctx = ctx.clone();
        call_ctx.cancel = mine.clone();
        let task = tokio::spawn(async move {
            let out = run_one(&call, run, &call_ctx).await;
            if mine.is_cancelled() && !parent.is_cancelled() {
                // A sibling failed while this call ran: whatever it produced is discarded.
                return out.map(|_| ToolOutput::error(SIBLING_CANCELLED));
            }
            if command && matches!(&out, Ok(o) if o.is_error) {
                tracing::info!(id = %call.id, "a command failed; cancelling its running siblings");
                batch.cancel();
            }
            out
        });
        self.running.push((i, task));
    }

    /// Wait for every call of the batch, put their outcomes in `results`, and leave the batch
    /// empty (with a fresh token) for the next run of safe calls.
    pub(super) async fn finish(
        &mut self,
        calls: &[PendingCall],
        results: &mut [Option<CallOutcome>],
    ) -> Result<(), ToolFatal> {
        let running = std::mem::take(&mut self.running);
        self.token = self.parent.child_token();
        let mut fatal = None;
        for (j, task) in running {
            let out = match task.await {
                Ok(out) => out,
                Err(e) => Err(ToolFatal {
                    tool: calls[j].name.clone(),
                    message: format!("the tool's task failed: {e}"),
                }),
            };
            match out {
                Ok(output) => {
                    results[j] = Some(CallOutcome {
                        id: calls[j].id.clone(),
                        output,
                        denial: None,
                    });
                }
                // Keep waiting for the others, so nothing outlives the batch.
                Err(e) => {
                    fatal.get_or_insert(e);
                }
            }
        }
        match fatal {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Cancel every call of the batch and wait until they have all stopped; their results are
    /// discarded.
    pub(super) async fn cancel(&mut self) {
        self.token.cancel();
        for (_, task) in std::mem::take(&mut self.running) {
            let _ = task.await;
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if !self.running.is_empty() {
            // Not waited for (the run is being torn down): stop them rather than leave them.
            self.token.cancel();
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use serde_json::json;

    use super::*;
    use crate::permissions::PermissionMode;
    use crate::tools::util::test_support::ctx;
    use crate::tools::{DynTool, Erased, Tool, ToolOutput};

    pub(crate) type Log = Arc<Mutex<Vec<(String, Instant, Instant)>>>;

    /// A stand-in tool: sleeps `ms` (or until cancelled), records when it ran, fails when
    /// the input says `fail`, and echoes `out` (or its id) as its result.
    struct Probe {
        name: &'static str,
        safe: bool,
        log: Log,
    }

    #[async_trait::async_trait]
    impl Tool for Probe {
        type Input = Value;
        type Call = Value;
        fn name(&self) -> &'static str {
            self.name
        }
        fn description(&self) -> &'static str {
            "probe"
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn check(
            &self,
            input: Value,
            _ctx: &ToolContext,
        ) -> Result<Value, crate::tools::CallError> {
            Ok(input)
        }
        /// A `Bash` probe runs its `command`; the others read or write `file_path`.
        fn access(&self, input: &Value) -> Access {
            let path = std::path::PathBuf::from(input["file_path"].as_str().unwrap_or("/"));
            match self.name {
                "Bash" => Access::Exec(input["command"].as_str().unwrap_or("").to_string()),
                _ if self.safe => Access::Read(vec![path]),
                _ => Access::Write(vec![path]),
            }
        }
        async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
            let label = input["label"].as_str().unwrap_or("").to_string();
            let ms = input["ms"].as_u64().unwrap_or(0);
            let start = Instant::now();
            let cancelled = tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => false,
                _ = ctx.cancel.cancelled() => true,
            };
            self.log
                .lock()
                .unwrap()
                .push((label.clone(), start, Instant::now()));
            if cancelled {
                return Ok(ToolOutput::error("interrupted"));
            }
            if input["fail"].as_bool().unwrap_or(false) {
                return Ok(ToolOutput::error(format!("{label} failed")));
            }
            let out = match input["out"].as_str() {
                Some(o) => o.to_string(),
                None => label,
            };
            Ok(ToolOutput::ok(out, None))
        }
    }

    /// A registry of probes standing in for Bash (safe when read-only), Read (always safe)
    /// and Write (never safe), and a bypass policy so every call is allowed.
    pub(crate) fn setup() -> (Registry, Policy, Log) {
        let log: Log = Arc::default();
        let probe = |name, safe| -> Arc<dyn DynTool> {
            Arc::new(Erased(Arc::new(Probe {
                name,
                safe,
                log: log.clone(),
            })))
        };
        let registry = Registry {
            tools: vec![
                probe("Bash", false),
                probe("Read", true),
                probe("Write", false),
            ],
            ..Registry::default()
        };
        let policy = Policy::new(PermissionMode::BypassPermissions, &[], &[]).unwrap();
        (registry, policy, log)
    }

    pub(crate) fn call(name: &str, label: &str, extra: Value) -> PendingCall {
        let mut input = json!({ "label": label, "file_path": "/tmp/x" });
        if name == "Bash" {
            input["command"] = json!("cat a.txt");
        }
        if let (Some(obj), Value::Object(extra)) = (input.as_object_mut(), extra) {
            obj.extend(extra);
        }
        PendingCall {
            id: format!("id-{label}"),
            name: name.into(),
            input,
            invalid_input: None,
        }
    }

    pub(crate) fn interval(log: &Log, label: &str) -> (Instant, Instant) {
        let log = log.lock().unwrap();
        let (_, s, e) = log.iter().find(|(l, _, _)| l == label).unwrap();
        (*s, *e)
    }

    #[tokio::test]
    async fn read_only_bash_calls_overlap_and_answer_in_order() {
        let (_d, ctx) = ctx();
        let (registry, policy, log) = setup();
        // Later calls finish first: the results must still be in the model's order.
        let calls: Vec<PendingCall> = (0..10)
            .map(|i| call("Bash", &format!("b{i}"), json!({ "ms": 200 - i * 15 })))
            .collect();
        let out = execute(&calls, &registry, &policy, &ctx).await.unwrap();
        let ids: Vec<&str> = out.iter().map(|o| o.id.as_str()).collect();
        let want: Vec<String> = (0..10).map(|i| format!("id-b{i}")).collect();
        assert_eq!(ids, want);
        assert!(out.iter().all(|o| !o.output.is_error));
        // Every call started before any call ended: they all ran at once.
        let first_end = (0..10)
            .map(|i| interval(&log, &format!("b{i}")).1)
            .min()
            .unwrap();
        for i in 0..10 {
            assert!(interval(&log, &format!("b{i}")).0 < first_end, "b{i}");
        }
    }

    #[tokio::test]
    async fn side_effecting_or_cd_bash_runs_alone_between_batches() {
        let (_d, ctx) = ctx();
        let (registry, policy, log) = setup();
        let calls = vec![
            call("Bash", "a", json!({ "ms": 50 })),
            call("Read", "b", json!({ "ms": 50 })),
            call("Bash", "c", json!({ "ms": 20, "command": "cargo build" })),
            call("Bash", "d", json!({ "ms": 20, "command": "cd sub && ls" })),
            call("Read", "e", json!({ "ms": 50 })),
            call("Write", "f", json!({ "ms": 20 })),
            call("Bash", "g", json!({ "ms": 50 })),
        ];
        let out = execute(&calls, &registry, &policy, &ctx).await.unwrap();
        let ids: Vec<&str> = out.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(
            ids,
            ["id-a", "id-b", "id-c", "id-d", "id-e", "id-f", "id-g"]
        );
        let [a, b, c, d, e, f, g] = ["a", "b", "c", "d", "e", "f", "g"].map(|l| interval(&log, l));
        // a and b (read-only Bash and Read) overlap.
        assert!(a.0 < b.1 && b.0 < a.1);
        // c (not read-only) and d (cd) each run alone, in order.
        assert!(c.0 >= a.1.max(b.1));
        assert!(d.0 >= c.1);
        assert!(e.0 >= d.1);
        assert!(f.0 >= e.1);
        assert!(g.0 >= f.1);
    }

    #[tokio::test]
    async fn batches_are_capped() {
        let (_d, ctx) = ctx();
        let (registry, policy, log) = setup();
        let n = MAX_CONCURRENT_CALLS + 2;
        let calls: Vec<PendingCall> = (0..n)
            .map(|i| call("Read", &format!("r{i}"), json!({ "ms": 40 })))
            .collect();
        let out = execute(&calls, &registry, &policy, &ctx).await.unwrap();
        assert_eq!(out.len(), n);
        let first: Vec<_> = (0..MAX_CONCURRENT_CALLS)
            .map(|i| interval(&log, &format!("r{i}")))
            .collect();
        let first_end = first.iter().map(|x| x.1).min().unwrap();
        let last_end = first.iter().map(|x| x.1).max().unwrap();
        assert!(first.iter().all(|x| x.0 < first_end));
        for i in MAX_CONCURRENT_CALLS..n {
            assert!(interval(&log, &format!("r{i}")).0 >= last_end, "r{i}");
        }
    }

    #[tokio::test]
    async fn failing_bash_cancels_running_siblings() {
        let (_d, ctx) = ctx();
        let (registry, policy, log) = setup();
        let calls = vec![
            call("Read", "quick", json!({ "ms": 1 })),
            call("Bash", "slow", json!({ "ms": 10_000 })),
            call("Bash", "bad", json!({ "ms": 50, "fail": true })),
            call("Read", "slow-read", json!({ "ms": 10_000 })),
        ];
        let started = Instant::now();
        let out = execute(&calls, &registry, &policy, &ctx).await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        // The call that finished before the failure keeps its result.
        assert!(!out[0].output.is_error);
        assert_eq!(out[0].output.content, "quick");
        assert_eq!(out[1].output.content, SIBLING_CANCELLED);
        assert!(out[1].output.is_error);
        assert_eq!(out[2].output.content, "bad failed");
        assert_eq!(out[3].output.content, SIBLING_CANCELLED);
        // The siblings stopped after the failure, not at their own pace.
        let bad_end = interval(&log, "bad").1;
        assert!(interval(&log, "slow").1 >= bad_end);
        assert!(
            !ctx.cancel.is_cancelled(),
            "only the batch's tokens are cancelled"
        );
    }

    #[tokio::test]
    async fn failing_read_cancels_nothing() {
        let (_d, ctx) = ctx();
        let (registry, policy, _log) = setup();
        let calls = vec![
            call("Read", "bad", json!({ "ms": 1, "fail": true })),
            call("Bash", "b", json!({ "ms": 100 })),
            call("Read", "r", json!({ "ms": 100 })),
        ];
        let out = execute(&calls, &registry, &policy, &ctx).await.unwrap();
        assert!(out[0].output.is_error);
        assert_eq!(out[1].output.content, "b");
        assert_eq!(out[2].output.content, "r");
    }

    #[tokio::test]
    async fn real_bash_failure_stops_a_running_read_only_sibling() {
        let (_d, ctx) = ctx();
        let work = ctx.session.roots.workdir.clone();
        std::fs::write(work.join("log.txt"), "line\n").unwrap();
        let registry = Registry::from_names(&["Bash"]).unwrap();
        let policy = Policy::new(PermissionMode::Default, &[], &[]).unwrap();
        let bash = |id: &str, command: &str| PendingCall {
            id: id.into(),
            name: "Bash".into(),
            input: json!({ "command": command }),
            invalid_input: None,
        };
        // `tail -f` is read-only and never ends by itself.
        let calls = vec![bash("t", "tail -f log.txt"), bash("c", "cat missing.txt")];
        let started = Instant::now();
        let out = execute(&calls, &registry, &policy, &ctx).await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(30));
        assert_eq!(out[0].output.content, SIBLING_CANCELLED);
        assert!(out[1].output.is_error);
        assert!(
            out[1].output.content.contains("missing.txt"),
            "{}",
            out[1].output.content
        );
    }

    #[tokio::test]
    async fn large_results_are_replaced_by_a_preview_and_saved_once() {
        let (_d, ctx) = ctx();
        let (registry, policy, _log) = setup();
        let big = "x".repeat(MAX_RESULT_CHARS + 1);
        let calls = vec![
            call("Read", "small", json!({ "out": "ok" })),
            call("Read", "big", json!({ "out": big })),
        ];
        let out = execute(&calls, &registry, &policy, &ctx).await.unwrap();
        assert_eq!(out[0].output.content, "ok");
        let c = &out[1].output.content;
        assert!(c.starts_with(&"x".repeat(PREVIEW_CHARS)), "preview first");
        assert!(c.chars().count() < PREVIEW_CHARS + 1_000);
        assert!(
            c.contains(&format!("{} characters", MAX_RESULT_CHARS + 1)),
            "{c}"
        );
        let path = ctx.session.spill_dir.join("tool-result-id-big.txt");
        assert!(c.contains(&path.display().to_string()), "{c}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), big);
    }

    #[tokio::test]
    async fn message_total_is_budgeted_largest_first() {
        let (_d, ctx) = ctx();
        let (registry, policy, _log) = setup();
        // Five results under the per-result limit whose total is over the message limit:
        // 217k in all > 200k, so replacing the largest one is enough.
        let sizes = [40_000, 45_000, 44_000, 45_000, 43_000];
        let calls: Vec<PendingCall> = sizes
            .iter()
            .enumerate()
            .map(|(i, n)| call("Read", &format!("r{i}"), json!({ "out": "y".repeat(*n) })))
            .collect();
        let out = execute(&calls, &registry, &policy, &ctx).await.unwrap();
        let replaced: Vec<bool> = out
            .iter()
            .map(|o| o.output.content.contains("[Output too long"))
            .collect();
        // The largest (the first of the two 45k ones) is replaced; the rest are sent as is.
        assert_eq!(replaced, [false, true, false, false, false]);
        let total: usize = out.iter().map(|o| o.output.content.chars().count()).sum();
        assert!(total <= MAX_MESSAGE_CHARS);
        assert!(ctx.session.spill_dir.join("tool-result-id-r1.txt").exists());
    }
}
