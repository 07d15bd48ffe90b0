//! One task run end to end: CLI overrides, checks before anything runs, session assembly,
//! the loop, and the final [`RunResult`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::agent::{self, Agent, Input, LoopLimits, State, StopCause, Stopper};
use crate::events::{InitInfo, RunEvent, RunResult, Sinks};
use crate::hooks::{HookSession, Hooks};
use crate::model::Provider;
use crate::model::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::model::cassette::Cassette;
use crate::model::openai::{OpenaiConfig, OpenaiProvider};
use crate::model::record::RecordingProvider;
use crate::model::replay::ReplayProvider;
use crate::model::table::{self, ModelInfo};
use crate::outcome::{Outcome, OutcomeKind};
use crate::permissions::{Policy, settings};
use crate::redact::Redactor;
use crate::report::SharedOut;
use crate::report::stream_json::StreamJsonSink;
use crate::retry::RateGate;
use crate::session::SessionRoots;
use crate::spec::{LoadedSpec, PermissionMode, ProviderKind, ReplayMode, SpecDuration, SpecError};
use crate::tools::structured_output::{StructuredOutputHandle, StructuredOutputTool};
use crate::tools::{EnvPolicy, Registry, ToolContext};
use crate::transcript::TranscriptSink;
use crate::verify;

/// The environment variable holding the Anthropic API key.
pub const ANTHROPIC_KEY_VAR: &str = "ANTHROPIC_API_KEY";

/// Settings from the command line that change a spec. Allow/deny rules are added to the
/// spec's; everything else replaces the spec's value.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--model`.
    pub model: Option<String>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--max-cost-usd`.
    pub max_cost_usd: Option<f64>,
    /// `--max-total-tokens`.
    pub max_total_tokens: Option<u64>,
    /// `--timeout`.
    pub timeout: Option<SpecDuration>,
    /// `--permission-mode`.
    pub permission_mode: Option<PermissionMode>,
    /// `--allowed-tools`, split into rules.
    pub allowed_tools: Vec<String>,
    /// `--disallowed-tools`, split into rules.
    pub disallowed_tools: Vec<String>,
    /// `--replay FILE`: use the replay provider with this cassette.
    pub replay: Option<PathBuf>,
    /// `--max-retries`.
    pub max_retries: Option<u32>,
    /// `--settings FILE`: a Claude Code settings.json added to every spec (relative to the
    /// current directory).
    pub settings: Option<PathBuf>,
    /// `--replay-mode strict|lenient` (replaces the spec's `replay_mode`).
    pub replay_mode: Option<ReplayMode>,
}

/// Apply CLI overrides to a loaded spec.
pub fn apply_overrides(loaded: &mut LoadedSpec, o: &Overrides) {
    let spec = &mut loaded.spec;
    if let Some(m) = &o.model {
        spec.model = m.clone();
    }
    if let Some(n) = o.max_turns {
        spec.limits.max_turns = Some(n);
    }
    if let Some(c) = o.max_cost_usd {
        spec.limits.max_cost_usd = Some(c);
    }
    if let Some(t) = o.max_total_tokens {
        spec.limits.max_total_tokens = Some(t);
    }
    if let Some(t) = o.timeout {
        spec.limits.timeout = Some(t);
    }
    if let Some(m) = o.permission_mode {
        spec.permissions.mode = m;
    }
    if let Some(n) = o.max_retries {
        spec.retry.max_retries = Some(n);
    }
    spec.permissions
        .allow
        .extend(o.allowed_tools.iter().cloned());
    spec.permissions
        .deny
        .extend(o.disallowed_tools.iter().cloned());
    if let Some(m) = o.replay_mode {
        spec.replay_mode = m;
    }
    if let Some(c) = &o.replay {
        spec.provider = ProviderKind::Replay;
        spec.cassette = Some(c.clone());
        loaded.cassette = Some(c.clone());
    }
}

/// Split a `--allowed-tools` value on commas and spaces outside parentheses:
/// `"Read,Bash(git diff *)"` → `["Read", "Bash(git diff *)"]`.
pub fn split_tool_rules(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth -= 1;
                cur.push(c);
            }
            ',' | ' ' | '\t' | '\n' if depth <= 0 => {
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_string());
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Why a task cannot start (exit 2, before any task runs).
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The spec is invalid.
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// The provider needs a key that is not set.
    #[error(
        "{spec}: provider `{provider}` needs {var}, which is not set (or empty). Export it, or run with `--replay CASSETTE` / `provider: replay` for an offline run."
    )]
    MissingKey {
        /// Spec path.
        spec: String,
        /// Provider name.
        provider: String,
        /// The variable.
        var: String,
    },
    /// The cassette cannot be used.
    #[error("{0}")]
    Cassette(#[from] crate::model::cassette::CassetteError),
    /// A settings file cannot be used.
    #[error("{0}")]
    Settings(#[from] crate::permissions::settings::SettingsError),
}

/// A task that passed every check and can run.
pub struct PreparedTask {
    /// The spec with overrides applied.
    pub loaded: LoadedSpec,
    /// Its permission policy.
    pub policy: Arc<Policy>,
    /// The API key for its provider.
    pub api_key: Option<String>,
    /// The model table entry.
    pub model_info: Option<ModelInfo>,
    /// Hooks from the spec and settings files (session facts are attached when it runs).
    pub hooks: Hooks,
    /// Set when the task continues a transcript (`runner resume`) instead of starting fresh.
    pub resume: Option<Box<crate::transcript::resume::Resume>>,
    /// What the task does with git (set by the caller once the whole run is known; default:
    /// nothing).
    pub git: crate::git::GitPlan,
}

/// Check everything a task needs before any task starts: the spec (again, after overrides),
/// its rules, its provider's key, its cassette.
pub fn prepare(mut loaded: LoadedSpec, o: &Overrides) -> Result<PreparedTask, PrepareError> {
    apply_overrides(&mut loaded, o);
    apply_settings(&mut loaded, o)?;
    loaded.check()?;
    let hooks = Hooks::new(&loaded.spec.hooks)
        .map_err(|e| SpecError::at(&loaded, "hooks", format!("invalid hooks: {e}")))?;
    let spec = &loaded.spec;
    let policy = Policy::with_ask(
        spec.permissions.mode,
        &spec.permissions.allow,
        &spec.permissions.deny,
        &spec.permissions.ask,
    )
    .map_err(|e| {
        let key = rule_key(&loaded, &e.to_string());
        SpecError::at(&loaded, &key, format!("invalid permission rule: {e}"))
    })?;
    if spec.output.is_some()
        && policy
            .removed_tools()
            .iter()
            .any(|t| t == crate::tools::structured_output::STRUCTURED_OUTPUT_TOOL)
    {
        return Err(SpecError::at(
            &loaded,
            "output",
            format!(
                "`output:` asks for a final answer through the {0} tool, but a deny rule removes {0}; drop the rule or the `output:` section",
                crate::tools::structured_output::STRUCTURED_OUTPUT_TOOL
            ),
        )
        .into());
    }
    let api_key = match spec.provider {
        ProviderKind::Anthropic | ProviderKind::Openai => match key_var(spec) {
            // A server that needs no key (`openai.api_key_env: ""`).
            None => None,
            Some(var) => match std::env::var(&var) {
                Ok(k) if !k.trim().is_empty() => Some(k),
                _ => {
                    return Err(PrepareError::MissingKey {
                        spec: loaded.path.display().to_string(),
                        provider: spec.provider.as_str().into(),
                        var,
                    });
                }
            },
        },
        ProviderKind::Replay => {
            if let Some(c) = &loaded.cassette {
                Cassette::load(c)?;
            }
            None
        }
    };
    let model_info = table::lookup(&spec.model, &spec.models);
    Ok(PreparedTask {
        git: Default::default(),
        hooks,
        policy: Arc::new(policy),
        api_key,
        model_info,
        loaded,
        resume: None,
    })
}

/// Merge the settings files (`--settings`, then the spec's `settings:`) into the spec: rules
/// and hooks are added, additional directories appended; `defaultMode` applies when neither
/// `--permission-mode` nor the spec chose a mode other than the default (dontAsk).
fn apply_settings(loaded: &mut LoadedSpec, o: &Overrides) -> Result<(), PrepareError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut files = Vec::new();
    if let Some(p) = &o.settings {
        files.push(settings::load(&cwd, p)?);
    }
    if let Some(p) = loaded.spec.settings.clone() {
        files.push(settings::load(&loaded.dir, &p)?);
    }
    for s in files {
        tracing::info!(file = %s.path.display(), "loading settings");
        let perms = &mut loaded.spec.permissions;
        perms.allow.extend(s.allow);
        perms.deny.extend(s.deny);
        perms.ask.extend(s.ask);
        if let Some(m) = s.default_mode
            && o.permission_mode.is_none()
            && perms.mode == PermissionMode::DontAsk
        {
            perms.mode = m;
        }
        for d in s.additional_directories {
            if !loaded.additional_directories.contains(&d) {
                loaded.additional_directories.push(d);
            }
        }
        for (event, groups) in s.hooks {
            loaded.spec.hooks.entry(event).or_default().extend(groups);
        }
    }
    Ok(())
}

/// Which spec key a rule error most likely belongs to (for its file:line:col).
fn rule_key(loaded: &LoadedSpec, message: &str) -> String {
    let p = &loaded.spec.permissions;
    for (list, name) in [(&p.allow, "allow"), (&p.deny, "deny"), (&p.ask, "ask")] {
        for (i, r) in list.iter().enumerate() {
            if message.contains(r.as_str()) {
                return format!("permissions.{name}[{i}]");
            }
        }
    }
    "permissions".into()
}

/// Options shared by every task of one `runner exec`.
#[derive(Clone)]
pub struct RunOptions {
    /// Where run outputs go (`--transcript-dir`, default `.runner`).
    pub transcript_dir: PathBuf,
    /// `--record FILE`.
    pub record: Option<PathBuf>,
    /// stdout for stream-json frames, when that is the output format.
    pub stream_out: Option<SharedOut>,
    /// The rate-limit gate every task of this run shares (a 429 pauses them all).
    pub gate: Arc<RateGate>,
}

/// The environment variable holding the API key the spec's provider needs, if it needs one:
/// `ANTHROPIC_API_KEY` for anthropic; for openai `OPENAI_API_KEY` or `openai.api_key_env`
/// (`""` means no key); none for replay.
pub fn key_var(spec: &crate::spec::TaskSpec) -> Option<String> {
    match spec.provider {
        ProviderKind::Anthropic => Some(ANTHROPIC_KEY_VAR.to_string()),
        ProviderKind::Openai => OpenaiConfig::key_var(spec.openai.as_ref()),
        ProviderKind::Replay => None,
    }
}

/// Names of variables always removed from tool environments and redacted: the spec's
/// `secrets`, both default key variables, the configured key variable, and `GITHUB_TOKEN`.
pub fn secret_names(loaded: &LoadedSpec) -> Vec<String> {
    let mut names = loaded.spec.secrets.clone();
    let configured = key_var(&loaded.spec);
    let always = [
        ANTHROPIC_KEY_VAR,
        OpenaiConfig::DEFAULT_KEY_VAR,
        "GITHUB_TOKEN",
    ];
    for n in always.into_iter().chain(configured.as_deref()) {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    }
    names
}

/// The repository root, branch (`HEAD` when detached) and HEAD commit for `workdir`; all None
/// outside git.
pub(crate) fn git_info(workdir: &Path) -> (Option<PathBuf>, Option<String>, Option<String>) {
    let Ok(repo) = git2::Repository::discover(workdir) else {
        return (None, None, None);
    };
    let root = repo.workdir().map(Path::to_path_buf);
    let head = repo.head().ok();
    let branch = head.as_ref().and_then(|h| {
        if h.is_branch() {
            h.shorthand().ok().map(String::from)
        } else {
            Some("HEAD".to_string())
        }
    });
    let commit = head
        .and_then(|h| h.peel_to_commit().ok())
        .map(|c| c.id().to_string());
    (root, branch, commit)
}

/// Make sure the output directory exists and git ignores it.
fn prepare_output_root(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let gi = dir.join(".gitignore");
    if !gi.exists() {
        std::fs::write(gi, "*\n")?;
    }
    Ok(())
}

/// The spec digest recorded in the transcript and `result.json`: SHA-256 of the resolved spec
/// (after command-line overrides) as JSON.
pub fn spec_digest(spec: &crate::spec::TaskSpec) -> String {
    let spec_json = serde_json::to_value(spec).unwrap_or(Value::Null);
    sha256_hex(spec_json.to_string().as_bytes())
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A result for a task that never ran (e.g. the run was interrupted before it started).
pub fn not_run_result(loaded: &LoadedSpec, outcome: Outcome) -> RunResult {
    RunResult {
        session_id: crate::events::new_uuid(),
        task_name: loaded.spec.name.clone(),
        spec_path: loaded.path.clone(),
        spec_line: loaded.name_line,
        model: loaded.spec.model.clone(),
        errors: if outcome.is_error() {
            vec![outcome.message.clone()]
        } else {
            vec![]
        },
        outcome,
        num_turns: 0,
        duration_ms: 0,
        duration_api_ms: 0,
        usage: Default::default(),
        model_usage: Default::default(),
        total_cost_usd: None,
        permission_denials: vec![],
        stop_reason: None,
        result_text: String::new(),
        transcript_path: None,
        started_at: chrono::Local::now().format("%Y-%m-%dT%H:%M:%S").to_string(),
        uuid: crate::events::new_uuid(),
        checks: vec![],
        structured_output: None,
        git: None,
    }
}

/// Run one prepared task to its outcome. Never panics on input; every failure becomes an
/// outcome in the result.
pub async fn run_task(mut task: PreparedTask, opts: &RunOptions, stopper: Stopper) -> RunResult {
    let started = Instant::now();
    let now = chrono::Local::now();
    let loaded = &task.loaded;
    let spec = &loaded.spec;
    let resume = task.resume.clone();
    let session_id = resume
        .as_ref()
        .map_or_else(crate::events::new_uuid, |r| r.session_id.clone());
    let mut result = not_run_result(loaded, Outcome::new(OutcomeKind::AgentError, "not started"));
    result.session_id = session_id.clone();
    result.started_at = now.format("%Y-%m-%dT%H:%M:%S").to_string();

    let run_dir = match resume.as_ref().and_then(|r| r.transcript_path.parent()) {
        // A resumed run appends to its transcript and keeps its output directory.
        Some(dir) => dir.to_path_buf(),
        None => opts.transcript_dir.join(format!(
            "{}-{}-{}",
            crate::batch::file_safe(&spec.name),
            now.format("%Y%m%dT%H%M%S"),
            session_id.get(..8).unwrap_or(&session_id)
        )),
    };
    let made = if resume.is_some() {
        std::fs::create_dir_all(&run_dir)
    } else {
        prepare_output_root(&opts.transcript_dir).and_then(|_| std::fs::create_dir_all(&run_dir))
    };
    if let Err(e) = made {
        let msg = format!(
            "cannot create the output directory {}: {e}",
            run_dir.display()
        );
        result.outcome = Outcome::new(OutcomeKind::AgentError, msg.clone());
        result.errors = vec![msg];
        return result;
    }
    let run_dir = std::fs::canonicalize(&run_dir).unwrap_or(run_dir);
    let transcript_path = match &resume {
        Some(r) => r.transcript_path.clone(),
        None => run_dir.join("transcript.jsonl"),
    };

    let (repo_root, mut git_branch, mut git_commit) = git_info(&loaded.workdir);
    let git_task = match start_git(&task, &session_id, &run_dir).await {
        Ok(g) => g,
        Err(msg) => {
            result.outcome = Outcome::new(OutcomeKind::AgentError, msg.clone());
            result.errors = vec![msg];
            return result;
        }
    };
    // An isolated task works in its worktree: every path below resolves through it.
    if let Some(g) = &git_task {
        git_commit = Some(g.base_commit.to_string());
        if g.worktree_path().is_some() {
            git_branch = Some("HEAD".to_string());
            task.loaded.workdir = g.workdir.clone();
        }
    }
    let loaded = &task.loaded;
    let spec = &loaded.spec;
    let map = |p: &PathBuf| {
        git_task
            .as_ref()
            .map_or_else(|| p.clone(), |g| g.map_path(p))
    };
    let roots = Arc::new(SessionRoots {
        spec_dir: map(&loaded.dir),
        repo_root: git_task
            .as_ref()
            .map(|g| g.root().to_path_buf())
            .or(repo_root.clone()),
        workdir: loaded.workdir.clone(),
        additional_dirs: loaded.additional_directories.iter().map(map).collect(),
        output_dir: run_dir.clone(),
    });
    let names = secret_names(loaded);
    let redactor = Arc::new(Redactor::from_env(&names));
    crate::redact::register_for_logs(&redactor);
    let env_policy = EnvPolicy {
        remove: names.clone(),
    };
    let mut tool_ctx = ToolContext::new(roots.clone(), env_policy.clone(), stopper.token().clone());
    tool_ctx.hooks = Arc::new(task.hooks.clone().with_session(
        HookSession {
            session_id: session_id.clone(),
            transcript_path: transcript_path.clone(),
            permission_mode: spec.permissions.mode.as_str().to_string(),
            workdir: loaded.workdir.clone(),
        },
        env_policy,
    ));

    let mut registry = match Registry::from_names(&spec.tools) {
        Ok(r) => r,
        Err(e) => {
            result.outcome = Outcome::new(OutcomeKind::AgentError, e.clone());
            result.errors = vec![e];
            abandon_git(git_task, &mut result).await;
            return result;
        }
    };
    for t in task.policy.removed_tools() {
        registry.remove(&t);
    }
    let structured = match structured_output_tool(loaded) {
        Ok(Some(tool)) => {
            let handle = tool.handle();
            registry.add(Arc::new(tool));
            Some(handle)
        }
        Ok(None) => None,
        Err(e) => {
            result.outcome = Outcome::new(OutcomeKind::AgentError, e.clone());
            result.errors = vec![e];
            return result;
        }
    };
    if let Some(r) = &resume {
        resume_tool_state(r, &tool_ctx, &mut registry);
    }
    let mut system = agent::prompt::system_prompt(
        &loaded.workdir,
        &registry.names(),
        &now.format("%Y-%m-%d").to_string(),
        repo_root.is_some(),
        spec.system_prompt_append.as_deref(),
    );
    if structured.is_some() {
        system.push('\n');
        system.push_str(crate::tools::structured_output::SYSTEM_PROMPT_NOTE);
        system.push('\n');
    }
    // A resumed run sends exactly the system prompt the run started with.
    let system = match resume.as_ref().and_then(|r| r.system_prompt.clone()) {
        Some(recorded) => recorded,
        None => system,
    };

    let provider: Arc<dyn Provider> = match build_provider(&task, &redactor, opts) {
        Ok(p) => p,
        Err(msg) => {
            result.outcome = Outcome::new(OutcomeKind::ApiError, msg.clone());
            result.errors = vec![msg];
            abandon_git(git_task, &mut result).await;
            return result;
        }
    };

    let mut sinks = Sinks::default();
    let sink = TranscriptSink::create(&transcript_path, redactor.clone()).map(|t| match &resume {
        Some(r) => t.with_builder(
            crate::transcript::RecordBuilder::new().resuming(r.state.last_uuid.clone()),
        ),
        None => t,
    });
    match sink {
        Ok(t) => {
            sinks.push(Box::new(t));
            result.transcript_path = Some(transcript_path.clone());
        }
        Err(e) => {
            let msg = format!(
                "cannot create the transcript {}: {e}",
                transcript_path.display()
            );
            result.outcome = Outcome::new(OutcomeKind::AgentError, msg.clone());
            result.errors = vec![msg];
            abandon_git(git_task, &mut result).await;
            return result;
        }
    }
    if let Some(out) = &opts.stream_out {
        sinks.push(Box::new(StreamJsonSink::new(out.clone(), redactor.clone())));
    }
    if crate::batch::progress::active() {
        sinks.push(Box::new(crate::batch::progress::ProgressSink::new(
            task.model_info,
        )));
    }

    let spec_json = serde_json::to_value(spec).unwrap_or(Value::Null);
    let spec_digest = sha256_hex(spec_json.to_string().as_bytes());
    let result_file_facts = (spec_digest.clone(), git_commit.clone());
    let init = InitInfo {
        uuid: crate::events::new_uuid(),
        session_id: session_id.clone(),
        task_name: spec.name.clone(),
        spec_path: loaded.path.clone(),
        spec: spec_json,
        spec_digest,
        system_prompt: system.clone(),
        tools: registry.specs().as_ref().clone(),
        model: spec.model.clone(),
        provider: spec.provider.as_str().to_string(),
        permission_mode: spec.permissions.mode.as_str().to_string(),
        cwd: loaded.workdir.clone(),
        git_branch,
        git_base_commit: git_commit,
        version: crate::VERSION.to_string(),
    };
    if let Err(e) = sinks.emit(&RunEvent::Init(Box::new(init))) {
        tracing::error!("writing run output failed: {e}");
    }
    if let Some(g) = &git_task
        && let Some(path) = g.worktree_path()
    {
        let event = RunEvent::Worktree {
            path: path.to_path_buf(),
            repo_root: g.repo_root().to_path_buf(),
            base_commit: g.base_commit.to_string(),
        };
        if let Err(e) = sinks.emit(&event) {
            tracing::error!("writing run output failed: {e}");
        }
    }

    let model_cap = task
        .model_info
        .as_ref()
        .map_or(32_000, |m| m.max_output_tokens);
    let max_tokens = spec.max_tokens.unwrap_or(model_cap.min(32_000));
    // A `max_tokens` stop escalates once to the model's cap, unless the spec chose the cap.
    let escalate_max_tokens_to =
        (spec.max_tokens.is_none() && model_cap > max_tokens).then_some(model_cap);
    let thinking = spec
        .thinking_budget_tokens
        .map(|b| serde_json::json!({"type": "enabled", "budget_tokens": b}));
    let mut agent = Agent {
        provider,
        registry,
        policy: task.policy.clone(),
        tool_ctx,
        model: spec.model.clone(),
        model_info: task.model_info,
        system,
        max_tokens,
        escalate_max_tokens_to,
        retry: spec.retry.policy(),
        gate: opts.gate.clone(),
        thinking,
        limits: LoopLimits {
            max_turns: spec.limits.max_turns,
            max_total_tokens: spec.limits.max_total_tokens,
            max_cost_usd: spec.limits.max_cost_usd,
        },
        sinks,
        stopper: stopper.clone(),
        context: spec.context.policy(),
        structured: structured.clone(),
    };

    let timer = spec.limits.timeout.map(|t| {
        let s = stopper.clone();
        tokio::spawn(async move {
            tokio::time::sleep(t.0).await;
            s.stop(StopCause::Timeout);
        })
    });
    tracing::info!(task = %spec.name, model = %spec.model, workdir = %loaded.workdir.display(), "task started");
    let hooks = agent.tool_ctx.hooks.clone();
    let (mut outcome, mut state) = match resume {
        Some(r) => {
            let r = *r;
            let mut state = r.state;
            crate::transcript::resume::answer_unanswered(&mut agent, &mut state, &r.unanswered);
            agent::run(&mut agent, state, r.input).await
        }
        None => match first_prompt(&hooks, &loaded.prompt, &spec.model).await {
            Ok(prompt) => agent::run(&mut agent, State::default(), Input::User(prompt)).await,
            Err(o) => (o, State::default()),
        },
    };
    let mut attempt = 1;
    while !spec.verify.is_empty() {
        let report_only = match outcome.kind {
            OutcomeKind::Success => false,
            // The work was left unfinished by a limit: show what state it is in.
            OutcomeKind::MaxTurns
            | OutcomeKind::BudgetTokens
            | OutcomeKind::BudgetCost
            | OutcomeKind::ContextExhausted => true,
            _ => break,
        };
        let checks = verify::run_checks(
            &spec.verify,
            &loaded.workdir,
            &agent.tool_ctx.env,
            &spec.params,
            stopper.token(),
            &agent.tool_ctx.spill_dir,
            attempt,
            report_only,
        )
        .await;
        agent.emit(RunEvent::Checks {
            attempt,
            results: checks.clone(),
        });
        let failed: Vec<&crate::events::CheckResult> =
            checks.iter().filter(|c| !c.passed).collect();
        let stopped = stopper.cause().is_some();
        if !report_only && !failed.is_empty() && !stopped && attempt < spec.attempts {
            let feedback = verify::feedback(&failed, attempt, spec.attempts);
            tracing::warn!(task = %spec.name, attempt, "verify checks failed; feeding their output back to the agent");
            attempt += 1;
            result.checks = checks;
            let (o, s) = agent::run(&mut agent, state, Input::User(feedback)).await;
            outcome = o;
            state = s;
            continue;
        }
        if stopped && outcome.kind == OutcomeKind::Success {
            outcome = agent.interrupted(false);
        } else if !report_only && !failed.is_empty() {
            outcome = Outcome::new(
                OutcomeKind::ChecksFailed,
                format!(
                    "verify check{} failed after {attempt} attempt{}: {}",
                    if failed.len() == 1 { "" } else { "s" },
                    if attempt == 1 { "" } else { "s" },
                    verify::summary(&failed)
                ),
            );
        }
        result.checks = checks;
        break;
    }
    if let Some(t) = timer {
        t.abort();
    }
    tracing::info!(task = %spec.name, outcome = outcome.name(), turns = state.turns, "task finished");

    result.outcome = outcome;
    result.num_turns = state.turns;
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.duration_api_ms = state.api_time.as_millis() as u64;
    result.usage = state.usage;
    result.model_usage = state.model_usage.clone();
    result.total_cost_usd = state.cost_usd;
    result.permission_denials = state.denials.clone();
    result.stop_reason = state.last_stop_reason.clone();
    result.result_text = state.final_text();
    result.structured_output = structured.as_ref().and_then(|h| h.value());
    if spec.permissions.fail_on_denial
        && result.outcome.kind == OutcomeKind::Success
        && !result.permission_denials.is_empty()
    {
        result.outcome = Outcome::new(
            OutcomeKind::Denied,
            format!(
                "{} tool call(s) were denied and the task sets permissions.fail_on_denial",
                result.permission_denials.len()
            ),
        );
    }
    if let Some(g) = git_task {
        finish_git(g, &mut result).await;
    }
    result.errors = if result.outcome.is_error() {
        vec![redactor.redact(&result.outcome.message).into_owned()]
    } else {
        vec![]
    };
    let result = redactor.redact_result(&result);
    let (digest, base) = &result_file_facts;
    if let Err(e) = crate::batch::write_result_file(&run_dir, &result, digest, base.as_deref()) {
        tracing::error!(
            "cannot write {}: {e}",
            run_dir.join(crate::batch::RESULT_FILE).display()
        );
    }
    agent.emit(RunEvent::Result(Box::new(result.clone())));
    hooks.session_end("other").await;
    result
}

/// Restore what a resumed run's tools knew: read-before-write state, todos, and the tool
/// schemas that were sent (kept when the same tools are offered).
fn resume_tool_state(
    r: &crate::transcript::resume::Resume,
    ctx: &ToolContext,
    registry: &mut Registry,
) {
    if let Ok(mut state) = ctx.read_state.lock() {
        for (path, record) in &r.read_files {
            state.record(path.clone(), record.clone());
        }
    }
    if let (Some(todos), Ok(mut t)) = (&r.todos, ctx.todos.lock()) {
        *t = todos.clone();
    }
    if let Some(specs) = &r.tool_specs {
        let recorded: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        if recorded == registry.names() {
            registry.set_specs(specs.clone());
        } else {
            tracing::warn!(
                recorded = ?recorded,
                now = ?registry.names(),
                "the tools offered differ from the run's; sending the current tool schemas"
            );
        }
    }
}

/// The `StructuredOutput` tool for a spec with `output:` (its handle is [`StructuredOutputTool::handle`]).
fn structured_output_tool(loaded: &LoadedSpec) -> Result<Option<StructuredOutputTool>, String> {
    let (Some(out), Some(schema)) = (&loaded.spec.output, &loaded.output_schema) else {
        return Ok(None);
    };
    let handle = StructuredOutputHandle::new(out.max_retries);
    StructuredOutputTool::new(schema.clone(), handle).map(Some)
}

/// Snapshot the task's git base and, when it is isolated, create its worktree.
async fn start_git(
    task: &PreparedTask,
    session_id: &str,
    run_dir: &Path,
) -> Result<Option<crate::git::GitTask>, String> {
    if task.git.repo_root.is_none() {
        return Ok(None);
    }
    let plan = task.git.clone();
    let name = task.loaded.spec.name.clone();
    let sid = session_id.to_string();
    let workdir = task.loaded.workdir.clone();
    let run_dir = run_dir.to_path_buf();
    tokio::task::spawn_blocking(move || crate::git::begin(&plan, &name, &sid, &workdir, &run_dir))
        .await
        .map_err(|e| format!("git setup failed: {e}"))?
        .map_err(|e| e.to_string())
}

/// A task that failed before the agent started: still write its (empty) patch and remove its
/// worktree.
async fn abandon_git(g: Option<crate::git::GitTask>, result: &mut RunResult) {
    if let Some(g) = g {
        finish_git(g, result).await;
    }
}

/// Record the task's changes (patch, branch commit), remove its worktree unless it was
/// interrupted, and apply `git.require_changes` to the outcome.
async fn finish_git(g: crate::git::GitTask, result: &mut RunResult) {
    let require_changes = g.requires_changes();
    let name = result.task_name.clone();
    let sid = result.session_id.clone();
    let success = result.outcome.kind == OutcomeKind::Success;
    let interrupted = result.outcome.kind == OutcomeKind::Interrupted;
    let joined = tokio::task::spawn_blocking(move || {
        let end = crate::git::Ending {
            task: &name,
            session_id: &sid,
            success,
            interrupted,
        };
        crate::git::finish(&g, end)
    })
    .await;
    let (summary, err) = match joined {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("git finish failed: {e}");
            return;
        }
    };
    if let Some(e) = err {
        tracing::error!(task = %result.task_name, "{e}");
        if result.outcome.kind == OutcomeKind::Success {
            result.outcome = Outcome::new(OutcomeKind::AgentError, e.to_string());
        }
    }
    if let Some(wt) = &summary.worktree {
        tracing::warn!(task = %result.task_name, worktree = %wt.display(), "worktree kept for resume");
    }
    if require_changes && !summary.changed && result.outcome.kind == OutcomeKind::Success {
        let check = crate::git::require_changes_check(&summary);
        result.outcome = Outcome::new(
            OutcomeKind::ChecksFailed,
            format!("{}: {}", check.name, check.output),
        );
        result.checks.push(check);
    }
    result.git = Some(summary);
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

fn build_provider(
    task: &PreparedTask,
    redactor: &Arc<Redactor>,
    opts: &RunOptions,
) -> Result<Arc<dyn Provider>, String> {
    let loaded = &task.loaded;
    let base: Arc<dyn Provider> = match loaded.spec.provider {
        ProviderKind::Anthropic => {
            let key = task.api_key.clone().unwrap_or_default();
            let mut config = AnthropicConfig::from_env(key);
            if let Some(t) = loaded.spec.retry.idle_timeout {
                config.idle_timeout = t.0;
            }
            config.prompt_caching = loaded.spec.prompt_caching;
            let p = AnthropicProvider::new(config).map_err(|e| e.to_string())?;
            Arc::new(p)
        }
        ProviderKind::Openai => {
            let mut cfg = OpenaiConfig::from_settings(
                loaded.spec.openai.as_ref(),
                task.api_key.clone(),
                |k| std::env::var(k).ok(),
            );
            if let Some(t) = loaded.spec.retry.idle_timeout {
                cfg.idle_timeout = t.0;
            }
            tracing::debug!(config = ?cfg, "openai provider");
            Arc::new(OpenaiProvider::new(cfg).map_err(|e| e.to_string())?)
        }
        ProviderKind::Replay => {
            let path = loaded
                .cassette
                .clone()
                .ok_or_else(|| "provider replay needs a cassette".to_string())?;
            let replay = ReplayProvider::open(&path, &loaded.workdir).map_err(|e| e.to_string())?;
            match loaded.spec.replay_mode {
                ReplayMode::Lenient => Arc::new(replay),
                ReplayMode::Strict => Arc::new(
                    replay.strict(redactor.clone(), loaded.spec.system_prompt_append.clone()),
                ),
            }
        }
    };
    match &opts.record {
        Some(path) => RecordingProvider::create(
            base,
            path,
            &loaded.workdir,
            redactor.clone(),
            loaded.spec.system_prompt_append.clone(),
        )
        .map(|p| Arc::new(p) as Arc<dyn Provider>)
        .map_err(|e| format!("cannot create the cassette {}: {e}", path.display())),
        None => Ok(base),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_var_per_provider() {
        let mut spec: crate::spec::TaskSpec =
            yaml_serde::from_str("name: t\nprompt: hi\n").unwrap();
        assert_eq!(key_var(&spec).as_deref(), Some("ANTHROPIC_API_KEY"));
        spec.provider = ProviderKind::Openai;
        assert_eq!(key_var(&spec).as_deref(), Some("OPENAI_API_KEY"));
        spec.openai = Some(crate::spec::OpenaiSettings {
            api_key_env: Some("GROQ_API_KEY".into()),
            ..Default::default()
        });
        assert_eq!(key_var(&spec).as_deref(), Some("GROQ_API_KEY"));
        spec.openai = Some(crate::spec::OpenaiSettings {
            api_key_env: Some(String::new()),
            ..Default::default()
        });
        assert_eq!(key_var(&spec), None);
        spec.provider = ProviderKind::Replay;
        assert_eq!(key_var(&spec), None);
    }

    #[test]
    fn splits_rules_outside_parens() {
        assert_eq!(
            split_tool_rules("Read,Bash(git diff *) Edit, Bash(npm run test:*)"),
            vec!["Read", "Bash(git diff *)", "Edit", "Bash(npm run test:*)"]
        );
        assert!(split_tool_rules(" , ").is_empty());
    }
}
