//! One task's session: everything a run of one prepared task works with — its output directory
//! and transcript, its git isolation, the model provider, the tools, policy and hooks, the event
//! sinks and the [`Agent`] — built in one place ([`Session::build`]) and finished in one place
//! ([`Session::finish`]). A build that fails part way finishes what it started (the git guard)
//! and becomes the task's result, so every exit path reports and cleans up the same way.
//!
//! - `output`: the run's output directory and transcript; `provider`: the model backend;
//!   `tools`: the offered tools; `git`: the git guard; `resume`: what a resumed run does first;
//!   `verify`: the verify checks and the attempts they feed back; `instructions`: the project
//!   instruction files the first prompt carries; `denied`: the `denied` outcome of a task
//!   whose every attempted write was refused; `integrity`: the check of the files that steer
//!   git and CI around every command.
//!
//! The session owns the task's MCP servers: they are stopped by [`Session::finish`], by a
//! build that fails after starting them, and (killed with their process groups) when a
//! session is dropped unfinished.

mod admission;
mod denied;
mod git;
mod instructions;
mod integrity;
mod output;
mod provider;
mod resume;
mod sandbox;
mod tools;
mod verify;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Local};

use crate::agent::{
    self, Agent, AgentBuilder, Input, LoopConfig, LoopLimits, State, StopCause, Stopper,
};
use crate::events::{InitInfo, RunEvent, RunResult, Sinks, new_uuid};
use crate::governor::{Governors, TaskGovernor};
use crate::hooks::{HookSession, Hooks};
use crate::mcp::McpServers;
use crate::outcome::{Outcome, OutcomeKind};
use crate::prepare::{PreparedTask, secret_names, spec_digest};
use crate::process::ChildPolicy;
use crate::redact::Redactor;
use crate::report::SharedOut;
use crate::report::stream_json::StreamJsonSink;
use crate::roots::SessionRoots;
use crate::spec::LoadedSpec;
use crate::tools::ToolSession;
use crate::tools::journal::Journal;
use crate::tools::structured_output::StructuredOutputHandle;
use crate::transcript::TranscriptSink;
use crate::transcript::resume::Resume;
use git::GitGuard;

/// Options shared by every task of one `runner exec`.
#[derive(Clone)]
pub struct RunOptions {
    /// Where run outputs go (`--transcript-dir`, default `.runner`).
    pub transcript_dir: PathBuf,
    /// `--record FILE`.
    pub record: Option<PathBuf>,
    /// stdout for stream-json frames, when that is the output format.
    pub stream_out: Option<SharedOut>,
    /// The rate-limit governors every task of this run shares, one per provider and key.
    pub governors: Arc<Governors>,
    /// The run's OpenTelemetry export, when configured.
    pub telemetry: Option<Arc<runner_telemetry::Telemetry>>,
}

/// A task ready to run: built by [`Session::build`], run by [`Session::run`] and
/// [`Session::verify`], ended by [`Session::finish`].
pub(crate) struct Session {
    agent: Agent,
    hooks: Arc<Hooks>,
    redactor: Arc<Redactor>,
    /// The spec; its `workdir` is the task's worktree when the task is isolated.
    loaded: LoadedSpec,
    git: GitGuard,
    /// The result so far (identity, transcript, checks); completed by `finish`.
    result: RunResult,
    run_dir: PathBuf,
    started: Instant,
    /// How the loop starts: `None` for a fresh run, the resume point for a resumed one.
    resume: Option<Box<Resume>>,
    structured: Option<StructuredOutputHandle>,
    /// What `result.json` records besides the result: spec digest, base commit, and for a
    /// resumed run the session id of the run it continues.
    digest: String,
    base_commit: Option<String>,
    resumed_from: Option<String>,
    /// Ends the task at `limits.timeout`.
    timer: Option<tokio::task::JoinHandle<()>>,
    /// The task's sandbox (its private TMPDIR and proxy live until the session ends).
    sandbox: Arc<crate::sandbox::Sandbox>,
    /// The task's MCP servers.
    mcp: Arc<McpServers>,
    /// The project instructions the first prompt starts with (a fresh run with
    /// `instructions:` only).
    instructions: Option<String>,
    /// The check of the files that steer git and CI around every command.
    integrity: Arc<crate::integrity::Integrity>,
}

/// What exists of a session while it is built: enough to finish it if the build fails.
struct Partial {
    result: RunResult,
    git: GitGuard,
    mcp: Option<Arc<McpServers>>,
}

impl Partial {
    /// End a build that failed with `outcome`: stop the MCP servers, finish git (empty
    /// patch, worktree removed) and make the task's result.
    async fn fail(mut self, outcome: Outcome) -> RunResult {
        if let Some(mcp) = self.mcp.take() {
            mcp.stop().await;
        }
        self.result.errors = vec![outcome.message.clone()];
        self.result.outcome = outcome;
        self.git.finish(&mut self.result).await;
        self.result
    }
}

impl Session {
    /// Build the session of `task`: output directory, git isolation, provider, tools,
    /// transcript and sinks, and the agent; the `init` event is emitted. On failure the task's
    /// final result is returned instead (nothing of the session is left behind).
    pub(crate) async fn build(
        task: PreparedTask,
        opts: &RunOptions,
        stopper: Stopper,
    ) -> Result<Session, Box<RunResult>> {
        let now = Local::now();
        let session_id = task
            .resume
            .as_ref()
            .map_or_else(new_uuid, |r| r.session_id.clone());
        let mut result = RunResult::not_run(
            &task.loaded,
            Outcome::new(OutcomeKind::AgentError, "not started"),
        );
        result.session_id = session_id;
        result.started_at = now.format("%Y-%m-%dT%H:%M:%S").to_string();
        let mut partial = Partial {
            result,
            git: GitGuard::default(),
            mcp: None,
        };
        match Session::assemble(task, opts, stopper, &mut partial, now).await {
            Ok(s) => Ok(s),
            Err(outcome) => Err(Box::new(partial.fail(outcome).await)),
        }
    }

    /// The steps of [`Session::build`]; whatever they start is held in `partial` until the
    /// session owns it.
    async fn assemble(
        mut task: PreparedTask,
        opts: &RunOptions,
        stopper: Stopper,
        partial: &mut Partial,
        now: DateTime<Local>,
    ) -> Result<Session, Outcome> {
        let started = Instant::now();
        // A signal before anything of the task was made: it never starts.
        if stopper.cause().is_some() {
            return Err(git::not_started(&stopper));
        }
        let session_id = partial.result.session_id.clone();
        let resume = task.resume.take();
        let paths = output::create_run_dir(
            &opts.transcript_dir,
            &task.loaded.spec.name,
            &session_id,
            &now,
            resume.as_ref().map(|r| r.transcript_path.as_path()),
        )
        .map_err(agent_error)?;
        let place = isolate(&mut task, &session_id, &paths.dir, &stopper, partial).await?;
        // From here to the first request, as many set-ups at a time as there are processors.
        let Some(admitted) = admission::admit(&stopper).await else {
            return Err(git::not_started(&stopper));
        };
        let roots = place.roots.clone();
        let (attempts, network) = tokio::sync::mpsc::unbounded_channel();
        let worktree = partial.git.task().and_then(|g| g.worktree_path());
        let Confined {
            guard,
            redactor,
            sandbox,
            env,
        } = admission::blocking(|| confine(&task, &roots, worktree, attempts))?;
        // A server's start is no set-up of runner's: others go on meanwhile.
        let _admitted = task.loaded.spec.mcp_servers.is_empty().then_some(admitted);
        let (mcp, mcp_tools) = start_mcp(&task, &env, &guard, &stopper).await?;
        let mcp = Arc::new(mcp);
        partial.mcp = Some(mcp.clone());
        let hooks = Arc::new(
            task.hooks
                .clone()
                .with_session(
                    hook_session(&task, &session_id, &paths.transcript, &stopper),
                    env.clone(),
                )
                .with_integrity(guard.clone()),
        );
        let tools = ToolSession::new(roots.clone(), env, stopper.token().clone())
            .with_hooks(hooks.clone())
            .with_integrity(guard.clone())
            .with_redactor(redactor.clone());
        let (registry, structured) = tools::registry(
            &task.loaded,
            &task.policy,
            mcp_tools,
            resume.as_deref(),
            &tools,
        )
        .map_err(agent_error)?;
        // Read once, for a fresh run (a resumed one has them in its conversation already).
        let instructions = match resume {
            Some(_) => None,
            None => project_instructions(&task, &roots, &sandbox),
        };
        let system = match resume.as_ref().and_then(|r| r.system_prompt.clone()) {
            // A resumed run sends exactly the system prompt the run started with.
            Some(recorded) => recorded,
            None => system_prompt(
                &task.loaded,
                &registry.names(),
                &now,
                roots.repo_root.is_some(),
                structured.is_some(),
            ),
        };
        let (provider, governor_key) = provider::build_provider(&task, &redactor, opts)
            .map_err(|e| Outcome::new(OutcomeKind::ApiError, e.to_string()))?;
        let governor = TaskGovernor::new(opts.governors.get(&governor_key));
        let sinks = sinks(&task, opts, &redactor, &paths.transcript, resume.as_deref())
            .map_err(agent_error)?;
        partial.result.transcript_path = Some(paths.transcript.clone());

        let spec = &task.loaded.spec;
        let digest = spec_digest(spec);
        let init = InitInfo {
            uuid: new_uuid(),
            session_id,
            task_name: spec.name.clone(),
            spec_path: task.loaded.path.clone(),
            spec: serde_json::to_value(spec).unwrap_or_default(),
            spec_digest: digest.clone(),
            system_prompt: system.clone(),
            tools: registry.specs().as_ref().clone(),
            model: spec.model.clone(),
            provider: spec.provider.as_str().to_string(),
            permission_mode: spec.permissions.mode.as_str().to_string(),
            cwd: task.loaded.workdir.clone(),
            git_branch: place.git_branch,
            git_base_commit: place.git_commit.clone(),
            version: crate::VERSION.to_string(),
            sandbox: Some(sandbox.report().clone()),
            mcp_servers: mcp.statuses().to_vec(),
        };
        let tools = Arc::new(tools.with_journal(Journal::new(sinks.clone())));
        integrity::report_to(&guard, sinks.clone(), stopper.clone());
        let mut agent = AgentBuilder::new(
            loop_config(&task, system),
            provider,
            governor.clone(),
            task.policy.clone(),
            tools,
        )
        .registry(registry)
        .sinks(sinks)
        .stopper(stopper.clone())
        .structured(structured.clone())
        .network(network)
        .mcp(mcp.clone())
        .build();
        announce(&mut agent, init, &partial.git, instructions.as_ref());
        let timer = spec
            .limits
            .timeout
            .map(|t| end_at(t.0, stopper.clone(), &governor));
        tracing::info!(task = %spec.name, model = %spec.model, workdir = %task.loaded.workdir.display(), "task started");
        Ok(Session {
            agent,
            hooks,
            redactor,
            loaded: task.loaded,
            git: std::mem::take(&mut partial.git),
            result: partial.result.clone(),
            run_dir: paths.dir,
            started,
            resumed_from: resume.as_ref().map(|r| r.session_id.clone()),
            resume,
            structured,
            digest,
            base_commit: place.git_commit,
            timer,
            sandbox,
            mcp,
            instructions: instructions.map(|i| i.reminder),
            integrity: guard,
        })
    }

    /// Run the loop from the start: the task prompt (after the SessionStart and
    /// UserPromptSubmit hooks), or, for a resumed run, from where it stopped.
    pub(crate) async fn run(&mut self) -> (Outcome, State) {
        match self.resume.take() {
            Some(r) => {
                let r = *r;
                let mut state = r.state;
                resume::answer_unanswered(&mut self.agent, &mut state, &r.unanswered);
                agent::run(&mut self.agent, state, r.input).await
            }
            None => match first_prompt(&self.hooks, &self.loaded.prompt, &self.loaded.spec.model)
                .await
            {
                Ok(prompt) => {
                    // Project instructions come first, as Claude Code sends CLAUDE.md.
                    let prompt = match self.instructions.take() {
                        Some(reminder) => format!("{reminder}\n\n{prompt}"),
                        None => prompt,
                    };
                    agent::run(&mut self.agent, State::default(), Input::User(prompt)).await
                }
                Err(o) => (o, State::default()),
            },
        }
    }

    /// End the session with `outcome`: complete the result (`fail_on_denial`, git patch and
    /// worktree, redaction), write `result.json`, emit the `result` event, run the SessionEnd
    /// hooks. The one place a built session ends.
    pub(crate) async fn finish(mut self, mut outcome: Outcome, state: State) -> RunResult {
        if let Some(t) = self.timer.take() {
            t.abort();
        }
        // Before the changes are measured: nothing a server does comes after.
        self.mcp.stop().await;
        // The last check: before git's own commands of the task's end.
        self.integrity
            .check("the task's commands (checked when the task ended)");
        let spec = &self.loaded.spec;
        if spec.permissions.fail_on_denial
            && outcome.kind == OutcomeKind::Success
            && !state.denials.is_empty()
        {
            outcome = Outcome::new(
                OutcomeKind::Denied,
                format!(
                    "{} tool call(s) were denied and the task sets permissions.fail_on_denial",
                    state.denials.len()
                ),
            );
        }
        // Attempts made by the last commands (verify checks) are recorded before the result.
        self.agent.drain_network();
        let result = &mut self.result;
        result.outcome = outcome;
        result.integrity = self.integrity.changes();
        if let Some(o) = integrity::outcome(&result.integrity) {
            result.outcome = o;
        }
        result.num_turns = state.turns;
        result.duration_ms = self.started.elapsed().as_millis() as u64;
        result.duration_api_ms = state.api_time.as_millis() as u64;
        result.usage = state.usage;
        result.model_usage = state.model_usage.clone();
        result.total_cost_usd = state.cost_usd;
        if spec.provider == crate::spec::ProviderKind::Replay {
            // A replay spends nothing: its figures are the recording's, not a cost.
            result.total_cost_usd = None;
            for mu in result.model_usage.values_mut() {
                mu.cost_usd = None;
            }
        }
        result.permission_denials = state.denials.clone();
        result.stop_reason = state.last_stop_reason.clone();
        result.result_text = state.final_text();
        result.structured_output = self.structured.as_ref().and_then(|h| h.value());
        result.network = self.agent.network_tally();
        result.commands = std::mem::take(
            &mut *self
                .agent
                .tools()
                .commands
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        result.timing = state.timing;
        result.rate_limit = self.agent.governor().tally();
        result.sandbox = Some(self.sandbox.report().clone());
        std::mem::take(&mut self.git).finish(result).await;
        if let Some(o) = denied::every_write_denied(result, &state.messages) {
            tracing::warn!(task = %result.task_name, "{}", o.message);
            result.outcome = o;
        }
        result.report_errors = self.agent.take_output_errors();
        reports_lost(result, &self.redactor);
        result.errors = if result.outcome.is_error() {
            vec![self.redactor.redact(&result.outcome.message).into_owned()]
        } else {
            vec![]
        };
        let mut result = result.redacted(&self.redactor);
        let written = self.write_result_file(&mut result);
        self.agent.emit(RunEvent::Result(Box::new(result.clone())));
        // The result record itself may not have been written.
        let mut more = false;
        for e in self.agent.take_output_errors() {
            if !result.report_errors.contains(&e) {
                result.report_errors.push(e);
                more = true;
            }
        }
        if more && reports_lost(&mut result, &self.redactor) {
            // result.json said success: say what the run's exit code says, if it still can.
            if written {
                self.write_result_file(&mut result);
            }
        }
        log_finished(&result);
        let found = result.integrity.len();
        self.hooks.session_end("other").await;
        // A SessionEnd hook that changed watched files: the result says so after all.
        let changes = self.integrity.changes();
        if changes.len() > found
            && let Some(o) = integrity::outcome(&changes)
        {
            result.integrity = changes;
            result.errors = vec![o.message.clone()];
            result.outcome = o;
            result = result.redacted(&self.redactor);
            self.write_result_file(&mut result);
        }
        result
    }
}

impl Session {
    /// Write `result.json`; a failure is logged, added to the result's report errors and ends
    /// a successful task as not successful. Returns whether it was written.
    fn write_result_file(&self, result: &mut RunResult) -> bool {
        let written = crate::report::result_file::write(
            &self.run_dir,
            result,
            &self.digest,
            self.base_commit.as_deref(),
            self.resumed_from.as_deref(),
        );
        let Err(e) = written else {
            return true;
        };
        let why = format!(
            "cannot write {}: {e}",
            self.run_dir
                .join(crate::report::result_file::RESULT_FILE)
                .display()
        );
        tracing::error!("{why}");
        result.report_errors.push(why);
        reports_lost(result, &self.redactor);
        false
    }
}

/// A task whose own reports (transcript, `result.json`) could not be written is not a success,
/// whatever its work did: the evidence a CI job keeps of it is missing. Turns a successful
/// outcome into `agent_error` naming the files (and its `errors`, redacted by `redactor`, with
/// it); returns whether it did.
fn reports_lost(result: &mut RunResult, redactor: &Redactor) -> bool {
    if result.report_errors.is_empty() || result.outcome.kind != OutcomeKind::Success {
        return false;
    }
    result.outcome = Outcome::new(
        OutcomeKind::AgentError,
        format!(
            "the task's work finished, but its reports could not be written: {}",
            result.report_errors.join("; ")
        ),
    );
    result.errors = vec![redactor.redact(&result.outcome.message).into_owned()];
    true
}

/// The one log line of a finished task, with its final outcome (after `fail_on_denial`, git's
/// `require_changes` and every report).
fn log_finished(r: &RunResult) {
    let cost = crate::report::money::usd_or_unknown(r.total_cost_usd);
    let reason = r.outcome.is_error().then(|| {
        let first = r.outcome.message.lines().next().unwrap_or_default();
        crate::report::xml_text::truncate(first, 300)
    });
    match reason {
        Some(reason) => {
            tracing::info!(task = %r.task_name, outcome = %r.outcome.name(), turns = r.num_turns, duration_ms = r.duration_ms, cost = %cost, reason = %reason, "task finished")
        }
        None => {
            tracing::info!(task = %r.task_name, outcome = %r.outcome.name(), turns = r.num_turns, duration_ms = r.duration_ms, cost = %cost, "task finished")
        }
    }
}

/// The `agent_error` outcome for `e`.
fn agent_error(e: impl std::fmt::Display) -> Outcome {
    Outcome::new(OutcomeKind::AgentError, e.to_string())
}

/// Start the task's MCP servers (inside its sandbox, with `env`), checking the files that
/// steer git and CI around their start: the servers and the tools they offer.
async fn start_mcp(
    task: &PreparedTask,
    env: &ChildPolicy,
    guard: &Arc<crate::integrity::Integrity>,
    stopper: &Stopper,
) -> Result<crate::mcp::Started, Outcome> {
    // No server, nothing runs: no files to check around it.
    let guard = (!task.loaded.spec.mcp_servers.is_empty()).then_some(guard);
    let starting = crate::integrity::around(guard, || "the MCP servers' start".into());
    let started = McpServers::start(
        &task.loaded.spec.mcp_servers,
        &task.loaded.workdir,
        env,
        task.policy.removed_tools(),
        stopper.token(),
    )
    .await
    .map_err(agent_error);
    drop(starting);
    started
}

/// How the task's commands start: without the secrets `names`, inside `sandbox`, with git's
/// workspace the repository (or the workdir outside one).
fn child_policy(
    names: Vec<String>,
    sandbox: &Arc<crate::sandbox::Sandbox>,
    roots: &SessionRoots,
) -> ChildPolicy {
    ChildPolicy {
        remove: names,
        sandbox: Some(sandbox.clone()),
        git_workspace: Some(
            roots
                .repo_root
                .clone()
                .unwrap_or_else(|| roots.workdir.clone()),
        ),
    }
}

/// The timer that ends the task after `limit` (not counting the time the rate-limit governor
/// held its requests back, as `governor` counts it).
fn end_at(
    limit: std::time::Duration,
    stopper: Stopper,
    governor: &TaskGovernor,
) -> tokio::task::JoinHandle<()> {
    let credit = governor.credit();
    tokio::spawn(async move {
        crate::governor::sleep_excluding(limit, &credit).await;
        stopper.stop(StopCause::Timeout);
    })
}

/// Where a task works, once git has set it up: its roots, and the branch and commit the
/// `init` record names.
struct Place {
    roots: Arc<SessionRoots>,
    git_branch: Option<String>,
    git_commit: Option<String>,
}

/// Start the task's git isolation (held in `partial`) and point `task` at its worktree when
/// it has one. A task that never started leaves no output directory `run_dir` behind (when it
/// is still empty).
async fn isolate(
    task: &mut PreparedTask,
    session_id: &str,
    run_dir: &std::path::Path,
    stopper: &Stopper,
    partial: &mut Partial,
) -> Result<Place, Outcome> {
    let repo = crate::git::repo_info(&task.loaded.workdir);
    partial.git = match GitGuard::start(task, session_id, run_dir, stopper).await {
        Ok(g) => g,
        Err(o) => {
            if o.kind == OutcomeKind::NotStarted {
                let _ = std::fs::remove_dir(run_dir);
            }
            return Err(o);
        }
    };
    let (git_branch, git_commit) = match partial.git.task() {
        // An isolated task works in its worktree: every path below resolves through it.
        Some(g) if g.worktree_path().is_some() => {
            task.loaded.workdir = g.workdir.clone();
            (Some("HEAD".to_string()), Some(g.base_commit.to_string()))
        }
        Some(g) => (repo.branch.clone(), Some(g.base_commit.to_string())),
        None => (repo.branch.clone(), repo.commit.clone()),
    };
    let roots = Arc::new(session_roots(task, &partial.git, repo.root, run_dir));
    Ok(Place {
        roots,
        git_branch,
        git_commit,
    })
}

/// What confines a task's tools and commands, made before its first command.
struct Confined {
    guard: Arc<crate::integrity::Integrity>,
    redactor: Arc<Redactor>,
    sandbox: Arc<crate::sandbox::Sandbox>,
    env: ChildPolicy,
}

/// The blocking part of a task's set-up: after git's own (the worktree), before the task's
/// first command (its MCP servers), the integrity guard is started, then the sandbox.
fn confine(
    task: &PreparedTask,
    roots: &Arc<SessionRoots>,
    worktree: Option<&std::path::Path>,
    attempts: tokio::sync::mpsc::UnboundedSender<crate::sandbox::NetworkAttempt>,
) -> Result<Confined, Outcome> {
    let guard = integrity::start(&task.loaded.workdir, &task.policy, roots)?;
    let names = secret_names(&task.loaded);
    let redactor = redactor(&names, roots);
    let sandbox = sandbox::start(task, roots, worktree, attempts)
        .map(Arc::new)
        .map_err(agent_error)?;
    let env = child_policy(names, &sandbox, roots);
    Ok(Confined {
        guard,
        redactor,
        sandbox,
        env,
    })
}

/// The task's redactor: the secrets named by `names` in the environment, the repository's
/// git credentials, and the checkout credential taken out of the configuration for the run;
/// registered for the logs too.
fn redactor(names: &[String], roots: &SessionRoots) -> Arc<Redactor> {
    let credentials = roots
        .repo_root
        .as_deref()
        .map(crate::redact::git_credentials)
        .unwrap_or_default()
        .into_iter()
        .chain(crate::git::credential::secrets())
        .collect();
    let redactor = Arc::new(Redactor::from_env_and(names, credentials));
    crate::redact::register_for_logs(&redactor);
    redactor
}

/// What the task's hooks are told about its session.
fn hook_session(
    task: &PreparedTask,
    session_id: &str,
    transcript: &std::path::Path,
    stopper: &Stopper,
) -> HookSession {
    HookSession {
        session_id: session_id.to_string(),
        transcript_path: transcript.to_path_buf(),
        permission_mode: task.loaded.spec.permissions.mode.as_str().to_string(),
        workdir: task.loaded.workdir.clone(),
        stop: stopper.token().clone(),
    }
}

/// The project instruction files of a fresh run (those the sandbox lets the task read), when
/// the spec names any.
fn project_instructions(
    task: &PreparedTask,
    roots: &SessionRoots,
    sandbox: &crate::sandbox::Sandbox,
) -> Option<instructions::Instructions> {
    let names = task.loaded.spec.instructions.file_names();
    if names.is_empty() {
        return None;
    }
    let readable = |p: &std::path::Path| sandbox.files().may_read(p).is_ok();
    instructions::load(
        &names,
        &task.loaded.workdir,
        roots.repo_root.as_deref(),
        &readable,
    )
}

/// The records a task starts with: `init`, its worktree when it has one, and its project
/// instructions when they were read.
fn announce(
    agent: &mut Agent,
    init: InitInfo,
    git: &GitGuard,
    instructions: Option<&instructions::Instructions>,
) {
    agent.emit(RunEvent::Init(Box::new(init)));
    if let Some(g) = git.task()
        && let Some(path) = g.worktree_path()
    {
        agent.emit(RunEvent::Worktree {
            path: path.to_path_buf(),
            repo_root: g.repo_root().to_path_buf(),
            base_commit: g.base_commit.to_string(),
        });
    }
    if let Some(i) = instructions {
        agent.emit(RunEvent::Instructions {
            uuid: new_uuid(),
            files: i.files.clone(),
        });
    }
}

/// The roots of the task's paths: the spec's directories, mapped into the worktree when the
/// task is isolated.
fn session_roots(
    task: &PreparedTask,
    git: &GitGuard,
    repo_root: Option<PathBuf>,
    run_dir: &std::path::Path,
) -> SessionRoots {
    let loaded = &task.loaded;
    let map = |p: &PathBuf| git.task().map_or_else(|| p.clone(), |g| g.map_path(p));
    SessionRoots {
        spec_dir: map(&loaded.dir),
        repo_root: git.task().map(|g| g.root().to_path_buf()).or(repo_root),
        workdir: loaded.workdir.clone(),
        additional_dirs: loaded.additional_directories.iter().map(map).collect(),
        output_dir: run_dir.to_path_buf(),
        source_root: git
            .task()
            .filter(|g| g.worktree_path().is_some())
            .map(|g| g.repo_root().to_path_buf()),
    }
}

/// The system prompt for a fresh run.
fn system_prompt(
    loaded: &LoadedSpec,
    tools: &[String],
    now: &DateTime<Local>,
    in_git: bool,
    structured: bool,
) -> String {
    let date = now.format("%Y-%m-%d").to_string();
    let append = loaded.spec.system_prompt_append.as_deref();
    let mut system = match &loaded.spec.system_prompt {
        Some(own) => {
            agent::prompt::with_instructions(own, &loaded.workdir, tools, &date, in_git, append)
        }
        None => agent::prompt::system_prompt(&loaded.workdir, tools, &date, in_git, append),
    };
    if structured {
        system.push('\n');
        system.push_str(crate::tools::structured_output::SYSTEM_PROMPT_NOTE);
        system.push('\n');
    }
    system
}

/// Where the task's events go: its transcript (appended to, for a resumed run), stream-json on
/// stdout when chosen, OpenTelemetry when exported, and the batch progress line when it is shown.
fn sinks(
    task: &PreparedTask,
    opts: &RunOptions,
    redactor: &Arc<Redactor>,
    transcript: &std::path::Path,
    resume: Option<&Resume>,
) -> Result<Sinks, output::OutputError> {
    let sinks = Sinks::default();
    let sink = TranscriptSink::create(transcript, redactor.clone()).map_err(|source| {
        output::OutputError::Transcript {
            path: transcript.to_path_buf(),
            source,
        }
    })?;
    let sink = match resume {
        Some(r) => sink.with_builder(
            crate::transcript::RecordBuilder::new().resuming(r.state.last_uuid.clone()),
        ),
        None => sink,
    };
    sinks.push(Box::new(sink));
    if let Some(out) = &opts.stream_out {
        sinks.push(Box::new(StreamJsonSink::new(out.clone(), redactor.clone())));
    }
    sinks.push(Box::new(crate::report::tool_log::ToolLogSink::new(
        &task.loaded.spec.name,
        &task.loaded.workdir,
    )));
    let otel = &task.loaded.spec.telemetry;
    if let Some(t) = opts.telemetry.as_ref().filter(|_| otel.export) {
        sinks.push(Box::new(crate::report::telemetry::TelemetrySink::new(
            t.clone(),
            redactor.clone(),
            t.content() || otel.content,
        )));
    }
    if crate::report::progress::active() {
        sinks.push(Box::new(crate::report::progress::ProgressSink::new(
            task.model_info,
        )));
    }
    Ok(sinks)
}

/// The loop's fixed settings from the spec and the model table.
fn loop_config(task: &PreparedTask, system: String) -> LoopConfig {
    let spec = &task.loaded.spec;
    let model_cap = task
        .model_info
        .as_ref()
        .map_or(32_000, |m| m.max_output_tokens);
    let max_tokens = spec.max_tokens.unwrap_or(model_cap.min(32_000));
    LoopConfig {
        model: spec.model.clone(),
        model_info: task.model_info,
        system,
        max_tokens,
        // A `max_tokens` stop escalates once to the model's cap, unless the spec chose the cap.
        escalate_max_tokens_to: (spec.max_tokens.is_none() && model_cap > max_tokens)
            .then_some(model_cap),
        retry: spec.retry.policy(),
        thinking: spec
            .thinking_budget_tokens
            .map(|b| serde_json::json!({"type": "enabled", "budget_tokens": b})),
        limits: LoopLimits {
            max_turns: spec.limits.max_turns,
            max_total_tokens: spec.limits.max_total_tokens,
            max_cost_usd: spec.limits.max_cost_usd,
        },
        context: agent::context::ContextPolicy::from_settings(&spec.context),
        fallback: spec
            .fallback_model
            .as_ref()
            .map(|f| (f.clone(), crate::model::table::lookup(f, &spec.models))),
    }
}

/// The first user message: the prompt after the SessionStart and UserPromptSubmit hooks, with
/// their context appended as system reminders; or the `hook_stopped` outcome if one blocked it.
async fn first_prompt(hooks: &Hooks, prompt: &str, model: &str) -> Result<String, Outcome> {
    let start = hooks.session_start(model).await;
    if let Some(why) = start.stop {
        return Err(agent::hook_stopped(why));
    }
    let submit = hooks.user_prompt_submit(prompt).await;
    if let Some(why) = submit.stop {
        tracing::warn!("{why}");
        return Err(agent::hook_stopped(why));
    }
    let mut text = prompt.to_string();
    for c in start.context.iter().chain(submit.context.iter()) {
        text.push_str("\n\n<system-reminder>\n");
        text.push_str(c.trim_end());
        text.push_str("\n</system-reminder>");
    }
    Ok(text)
}
