//! Claude Code-compatible command hooks for `PreToolUse`, `PostToolUse`,
//! `PostToolUseFailure`, `Stop`, `UserPromptSubmit`, `SessionStart` and `SessionEnd`.
//! JSON `continue: false` from any hook stops the run (see [`Hooks::halted`]).
//!
//! Hooks come only from the task spec (`hooks:`) or a settings file named by the spec or
//! `--settings`; never from the workdir. Each matching hook runs with the scrubbed tool
//! environment, JSON on stdin, an empty directory outside the workdir as its directory (unless
//! its `cwd` names one, see [`isolation`]) and a timeout (its process group is killed). Exit 0 with JSON on stdout decides through the JSON; exit 2 blocks with stderr as the
//! reason; other exit codes are logged and ignored (unless stdout is valid JSON, which decides).

pub(crate) mod busy;
pub(crate) mod isolation;
pub(crate) mod launchers;
pub(crate) mod trust;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub(crate) use crate::spec::hooks::{HooksConfig, SUPPORTED_EVENTS};

use crate::permissions::Scope;
use crate::permissions::bash;
use crate::permissions::rule::{Rule, Specifier, Tail};
use crate::process::{self, ChildPolicy, Program, Spawn};

/// Default hook timeout (Claude Code's).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The most a hook may take once the run was stopped (the SessionEnd hooks after a signal):
/// CI sends SIGKILL a few seconds after its SIGINT/SIGTERM.
pub(crate) const AFTER_STOP: Duration = Duration::from_secs(2);

/// Most bytes kept of a hook's stdout or stderr.
const OUTPUT_CAP: usize = 1 << 20;

/// A hook configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HookConfigError(pub String);

/// Which tools a matcher group selects.
#[derive(Debug, Clone)]
enum Matcher {
    All,
    Names(Vec<String>),
    Regex(regex::Regex),
}

impl Matcher {
    fn parse(m: Option<&str>) -> Result<Matcher, HookConfigError> {
        let m = m.map(str::trim).unwrap_or_default();
        if m.is_empty() || m == "*" {
            return Ok(Matcher::All);
        }
        if m.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'))
        {
            let names = m
                .split([',', '|'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            return Ok(Matcher::Names(names));
        }
        regex::Regex::new(m)
            .map(Matcher::Regex)
            .map_err(|e| HookConfigError(format!("hook matcher `{m}` is not a valid regex: {e}")))
    }

    fn matches(&self, tool: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(n) => n.iter().any(|n| n == tool),
            Matcher::Regex(r) => r.is_match(tool),
        }
    }
}

/// One runnable hook.
#[derive(Debug, Clone)]
struct Hook {
    matcher: Matcher,
    if_rule: Option<Rule>,
    command: String,
    args: Option<Vec<String>>,
    timeout: Duration,
    /// Scrubbed variables this hook gets anyway (`env_passthrough`).
    passthrough: Vec<String>,
    /// The spec's `cwd` (`None`: the task's empty directory outside the workdir).
    cwd: Option<String>,
}

impl Hook {
    /// A short name for logs and reasons.
    fn name(&self) -> String {
        let mut s: String = self.command.chars().take(80).collect();
        if let Some(a) = &self.args {
            for x in a {
                s.push(' ');
                s.push_str(x);
            }
        }
        s
    }

    fn applies(&self, tool: &str, input: &Value, cwd: &Path) -> bool {
        if !self.matcher.matches(tool) {
            return false;
        }
        let Some(rule) = &self.if_rule else {
            return true;
        };
        if !rule.names_tool(tool) {
            return false;
        }
        match &rule.spec {
            Specifier::Bash(p) => {
                let Some(cmd) = input.get("command").and_then(Value::as_str) else {
                    return true;
                };
                match bash::analyse(cmd, cwd) {
                    // A command runner cannot analyse might match: run the hook.
                    Err(_) => true,
                    Ok(a) => a.commands.iter().any(|c| {
                        [c.start, 0].iter().any(|&from| {
                            let (text, dynamic) = c.match_text(from);
                            let tail = if dynamic {
                                Tail::SomeContinuation
                            } else {
                                Tail::Exact
                            };
                            p.matches(&text, tail)
                        })
                    }),
                }
            }
            // Path and other specifiers: the tool name decides.
            _ => true,
        }
    }
}

/// Session facts every hook's stdin carries.
#[derive(Debug, Clone, Default)]
pub struct HookSession {
    /// Session id.
    pub session_id: String,
    /// Transcript file.
    pub transcript_path: PathBuf,
    /// Permission mode name.
    pub permission_mode: String,
    /// The workdir (`cwd` for hooks, `CLAUDE_PROJECT_DIR`).
    pub workdir: PathBuf,
    /// Cancelled when the run is stopped (a signal, the time limit): running hooks are stopped
    /// too, and later ones get at most [`AFTER_STOP`].
    pub stop: tokio_util::sync::CancellationToken,
}

/// The configured hooks of one task.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pre: Vec<Hook>,
    post: Vec<Hook>,
    post_failure: Vec<Hook>,
    stop: Vec<Hook>,
    prompt_submit: Vec<Hook>,
    session_start: Vec<Hook>,
    session_end: Vec<Hook>,
    session: HookSession,
    env: ChildPolicy,
    /// Set by the first hook that answers `continue: false`: the run stops with this reason.
    halt: Arc<Mutex<Option<String>>>,
    /// Counts the time hooks run (each turn's `hooks_ms`).
    busy: Arc<busy::BusyClock>,
    /// The empty directory hooks run in by default (made by [`Hooks::with_session`]).
    start_dir: Option<Arc<tempfile::TempDir>>,
    /// Checks the files that steer git and CI before and after each hook.
    integrity: Option<Arc<crate::integrity::Integrity>>,
}

/// What the Stop hooks decided when the model finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopOutcome {
    /// Let the run end.
    Proceed,
    /// Continue the loop with this reason as a user message (exit 2, `decision: block`).
    Block(String),
    /// `continue: false`: end the run with `hook_stopped` and this reason.
    Halt(String),
}

/// What `UserPromptSubmit` or `SessionStart` hooks decided about the first prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptOutcome {
    /// The prompt is blocked (UserPromptSubmit exit 2 or `decision: block`) or the run is
    /// stopped (`continue: false`): end the task with this reason.
    pub stop: Option<String>,
    /// Context for the model (exit-0 plain stdout, `additionalContext`).
    pub context: Vec<String>,
}

/// What the PreToolUse hooks decided about one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolOutcome {
    /// The strongest decision (deny > ask > allow), if any hook gave one.
    pub decision: Option<HookDecision>,
    /// Replacement input from `updatedInput` (the last hook's wins).
    pub updated_input: Option<Value>,
    /// `additionalContext` texts, for the model.
    pub context: Vec<String>,
}

/// A PreToolUse hook's permission decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookDecision {
    /// Allowed (still subject to deny/ask rules and safety checks).
    Allow,
    /// Would prompt: denied, with nobody to ask.
    Ask(String),
    /// Blocked (exit 2, `permissionDecision: deny`, `decision: block`).
    Deny(String),
}

impl HookDecision {
    fn rank(&self) -> u8 {
        match self {
            HookDecision::Allow => 0,
            HookDecision::Ask(_) => 1,
            HookDecision::Deny(_) => 2,
        }
    }
}

/// What the PostToolUse hooks add to a tool result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostToolOutcome {
    /// Feedback for the model (exit-2 stderr, `decision: block` reasons, `additionalContext`).
    pub feedback: Vec<String>,
}

/// One hook process's result.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Hooks {
    /// Build from configuration; unsupported events, handler types and bad matchers are errors.
    pub fn new(config: &HooksConfig) -> Result<Hooks, HookConfigError> {
        let mut hooks = Hooks::default();
        for (event, groups) in config {
            let list = match event.as_str() {
                "PreToolUse" => &mut hooks.pre,
                "PostToolUse" => &mut hooks.post,
                "PostToolUseFailure" => &mut hooks.post_failure,
                "Stop" => &mut hooks.stop,
                "UserPromptSubmit" => &mut hooks.prompt_submit,
                "SessionStart" => &mut hooks.session_start,
                "SessionEnd" => &mut hooks.session_end,
                other => {
                    return Err(HookConfigError(format!(
                        "hook event `{other}` is not supported (runner runs {} hooks)",
                        SUPPORTED_EVENTS.join(", ")
                    )));
                }
            };
            for g in groups {
                let matcher = Matcher::parse(g.matcher.as_deref())?;
                for h in &g.hooks {
                    if h.kind != "command" {
                        return Err(HookConfigError(format!(
                            "hook type `{}` is not supported (only `command`)",
                            h.kind
                        )));
                    }
                    if h.command.trim().is_empty() {
                        return Err(HookConfigError("a hook's `command` is empty".into()));
                    }
                    let if_rule = match &h.if_rule {
                        None => None,
                        Some(r) => Some(
                            Rule::parse(r)
                                .map_err(|e| HookConfigError(format!("hook `if`: {e}")))?,
                        ),
                    };
                    let timeout = match h.timeout {
                        None => DEFAULT_TIMEOUT,
                        Some(t) if t.is_finite() && t > 0.0 && t <= 86_400.0 => {
                            Duration::from_secs_f64(t)
                        }
                        Some(t) => {
                            return Err(HookConfigError(format!(
                                "hook timeout {t} must be more than 0 and at most 86400 seconds"
                            )));
                        }
                    };
                    list.push(Hook {
                        matcher: matcher.clone(),
                        if_rule,
                        command: h.command.clone(),
                        args: h.args.clone(),
                        timeout,
                        passthrough: h.env_passthrough.clone(),
                        cwd: h.cwd.clone(),
                    });
                }
            }
        }
        Ok(hooks)
    }

    /// Attach the session facts and the environment policy hooks run under.
    /// Hooks inherit no variable that loads code from the workdir, and run in an empty
    /// directory made here.
    pub fn with_session(mut self, session: HookSession, mut env: ChildPolicy) -> Hooks {
        env.remove
            .extend(isolation::removed_from_inherited(&session.workdir, |k| {
                std::env::var(k).ok()
            }));
        if !self.is_empty() {
            match isolation::empty_dir() {
                Ok(d) => self.start_dir = Some(Arc::new(d)),
                Err(e) => tracing::warn!("cannot make the hooks' empty directory: {e}"),
            }
        }
        self.session = session;
        self.env = env;
        self.halt = Arc::default();
        self
    }

    /// Check the files that steer git and CI around every hook (see `crate::integrity`).
    pub(crate) fn with_integrity(mut self, guard: Arc<crate::integrity::Integrity>) -> Hooks {
        self.integrity = Some(guard);
        self
    }

    /// The clock that counts the time hooks run.
    pub(crate) fn busy(&self) -> Arc<busy::BusyClock> {
        self.busy.clone()
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        [
            &self.pre,
            &self.post,
            &self.post_failure,
            &self.stop,
            &self.prompt_submit,
            &self.session_start,
            &self.session_end,
        ]
        .iter()
        .all(|l| l.is_empty())
    }

    /// Whether a PreToolUse, PostToolUse or PostToolUseFailure hook applies to this call
    /// (such a call runs user commands around it, so the streaming executor never starts it
    /// before the whole assistant message has arrived).
    pub fn has_tool_hooks(&self, tool: &str, input: &Value, cwd: &Path) -> bool {
        [&self.pre, &self.post, &self.post_failure]
            .iter()
            .any(|l| l.iter().any(|h| h.applies(tool, input, cwd)))
    }

    /// The reason a hook gave with `continue: false`, if one did: the run must stop.
    pub fn halted(&self) -> Option<String> {
        self.halt.lock().ok().and_then(|h| h.clone())
    }

    /// Record a `continue: false` (the first reason wins).
    fn set_halt(&self, why: String) {
        if let Ok(mut h) = self.halt.lock() {
            h.get_or_insert(why);
        }
    }

    /// The `continue: false` reason in one hook's JSON output, if it has one.
    fn halt_reason(name: &str, event: &str, j: &Value) -> Option<String> {
        if j.get("continue").and_then(Value::as_bool) != Some(false) {
            return None;
        }
        Some(
            j.get("stopReason")
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(String::from)
                .unwrap_or_else(|| format!("the {event} hook `{name}` said not to continue")),
        )
    }

    /// Run the hooks of a non-tool event whose matcher selects `target` (all if `None`).
    async fn run_all(
        &self,
        list: &[Hook],
        target: Option<&str>,
        stdin: &serde_json::Map<String, Value>,
    ) -> Vec<(String, Ran)> {
        let selected: Vec<&Hook> = list
            .iter()
            .filter(|h| target.is_none_or(|t| h.matcher.matches(t)))
            .collect();
        if selected.is_empty() {
            return Vec::new();
        }
        let stdin = Value::Object(stdin.clone()).to_string();
        let runs = join_all(selected.iter().map(|h| self.run(h, &stdin))).await;
        selected
            .iter()
            .zip(runs)
            .filter_map(|(h, r)| r.map(|r| (h.name(), r)))
            .collect()
    }

    /// Run the Stop hooks when the model has finished.
    pub async fn stop(
        &self,
        stop_hook_active: bool,
        last_assistant_message: Option<&str>,
    ) -> StopOutcome {
        if self.stop.is_empty() {
            return StopOutcome::Proceed;
        }
        let cwd = self.session.workdir.clone();
        let mut stdin = self.base_input("Stop", &cwd);
        stdin.insert("stop_hook_active".into(), json!(stop_hook_active));
        if let Some(m) = last_assistant_message {
            stdin.insert("last_assistant_message".into(), json!(m));
        }
        let mut blocks = Vec::new();
        for (name, ran) in self.run_all(&self.stop, None, &stdin).await {
            let json = parse_json(&ran.stdout);
            if let Some(why) = json
                .as_ref()
                .and_then(|j| Self::halt_reason(&name, "Stop", j))
            {
                tracing::warn!(hook = %name, "Stop hook stopped the run: {why}");
                return StopOutcome::Halt(why);
            }
            if ran.code == Some(2) {
                let msg = ran.stderr.trim();
                blocks.push(if msg.is_empty() {
                    json.as_ref()
                        .and_then(|j| j.get("reason"))
                        .and_then(Value::as_str)
                        .map(String::from)
                        .unwrap_or_else(|| format!("The Stop hook `{name}` asks you to continue."))
                } else {
                    msg.to_string()
                });
                continue;
            }
            let Some(j) = json else {
                if ran.code != Some(0) {
                    non_blocking(&name, &ran);
                }
                continue;
            };
            if j.get("decision").and_then(Value::as_str) == Some("block") {
                blocks.push(
                    j.get("reason")
                        .and_then(Value::as_str)
                        .filter(|s| !s.trim().is_empty())
                        .map(String::from)
                        .unwrap_or_else(|| format!("The Stop hook `{name}` asks you to continue.")),
                );
            } else if let Some(c) = j
                .pointer("/hookSpecificOutput/additionalContext")
                .and_then(Value::as_str)
            {
                blocks.push(c.to_string());
            }
        }
        if blocks.is_empty() {
            StopOutcome::Proceed
        } else {
            StopOutcome::Block(blocks.join("\n\n"))
        }
    }

    /// Run the UserPromptSubmit hooks for the task prompt.
    pub async fn user_prompt_submit(&self, prompt: &str) -> PromptOutcome {
        let cwd = self.session.workdir.clone();
        let mut stdin = self.base_input("UserPromptSubmit", &cwd);
        stdin.insert("prompt".into(), json!(prompt));
        stdin.insert("source".into(), json!("sdk"));
        let runs = self.run_all(&self.prompt_submit, None, &stdin).await;
        prompt_outcome("UserPromptSubmit", runs, true)
    }

    /// Run the SessionStart hooks (source `startup`).
    pub async fn session_start(&self, model: &str) -> PromptOutcome {
        let cwd = self.session.workdir.clone();
        let mut stdin = self.base_input("SessionStart", &cwd);
        stdin.insert("source".into(), json!("startup"));
        stdin.insert("model".into(), json!(model));
        let runs = self
            .run_all(&self.session_start, Some("startup"), &stdin)
            .await;
        prompt_outcome("SessionStart", runs, false)
    }

    /// Run the SessionEnd hooks after the result; their output only reaches the log.
    pub async fn session_end(&self, reason: &str) {
        let cwd = self.session.workdir.clone();
        let mut stdin = self.base_input("SessionEnd", &cwd);
        stdin.insert("reason".into(), json!(reason));
        for (name, ran) in self.run_all(&self.session_end, Some(reason), &stdin).await {
            if ran.code != Some(0) {
                non_blocking(&name, &ran);
            }
        }
    }

    fn base_input(&self, event: &str, cwd: &Path) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("session_id".into(), json!(self.session.session_id));
        m.insert(
            "transcript_path".into(),
            json!(self.session.transcript_path.display().to_string()),
        );
        m.insert("cwd".into(), json!(cwd.display().to_string()));
        m.insert("hook_event_name".into(), json!(event));
        m.insert(
            "permission_mode".into(),
            json!(self.session.permission_mode),
        );
        m
    }

    /// Run the PreToolUse hooks for one call (in parallel) and combine their decisions.
    pub async fn pre_tool_use(
        &self,
        tool: &str,
        input: &Value,
        tool_use_id: &str,
        cwd: &Path,
    ) -> PreToolOutcome {
        let selected: Vec<&Hook> = self
            .pre
            .iter()
            .filter(|h| h.applies(tool, input, cwd))
            .collect();
        let mut out = PreToolOutcome::default();
        if selected.is_empty() {
            return out;
        }
        let mut stdin = self.base_input("PreToolUse", cwd);
        stdin.insert("tool_name".into(), json!(tool));
        stdin.insert("tool_input".into(), input.clone());
        stdin.insert("tool_use_id".into(), json!(tool_use_id));
        let stdin = Value::Object(stdin).to_string();
        let runs = join_all(selected.iter().map(|h| self.run(h, &stdin))).await;
        for (h, ran) in selected.iter().zip(runs) {
            let Some(ran) = ran else { continue };
            let name = h.name();
            if let Some(why) =
                parse_json(&ran.stdout).and_then(|j| Self::halt_reason(&name, "PreToolUse", &j))
            {
                tracing::warn!(hook = %name, "PreToolUse hook stopped the run: {why}");
                self.set_halt(why);
            }
            let decision = pre_decision(&name, &ran, &mut out);
            if let Some(d) = decision {
                let decision = match &d {
                    HookDecision::Allow => "allow".to_string(),
                    HookDecision::Ask(why) => format!("ask: {why}"),
                    HookDecision::Deny(why) => format!("deny: {why}"),
                };
                tracing::info!(hook = %name, tool, decision = %decision, "PreToolUse hook decision");
                if out
                    .decision
                    .as_ref()
                    .is_none_or(|cur| d.rank() > cur.rank())
                {
                    out.decision = Some(d);
                }
            }
        }
        out
    }

    /// Run the PostToolUse hooks for one finished call.
    pub async fn post_tool_use(
        &self,
        tool: &str,
        input: &Value,
        tool_use_id: &str,
        response: &Value,
        cwd: &Path,
        duration: Duration,
    ) -> PostToolOutcome {
        let call = (tool, input, tool_use_id);
        self.post(
            &self.post,
            "PostToolUse",
            call,
            ("tool_response", response.clone()),
            cwd,
            duration,
        )
        .await
    }

    /// Run the PostToolUseFailure hooks for one call whose result is an error.
    pub async fn post_tool_use_failure(
        &self,
        tool: &str,
        input: &Value,
        tool_use_id: &str,
        error: &str,
        cwd: &Path,
        duration: Duration,
    ) -> PostToolOutcome {
        let call = (tool, input, tool_use_id);
        self.post(
            &self.post_failure,
            "PostToolUseFailure",
            call,
            ("error", json!(error)),
            cwd,
            duration,
        )
        .await
    }

    async fn post(
        &self,
        list: &[Hook],
        event: &str,
        (tool, input, tool_use_id): (&str, &Value, &str),
        (key, value): (&str, Value),
        cwd: &Path,
        duration: Duration,
    ) -> PostToolOutcome {
        let selected: Vec<&Hook> = list
            .iter()
            .filter(|h| h.applies(tool, input, cwd))
            .collect();
        let mut out = PostToolOutcome::default();
        if selected.is_empty() {
            return out;
        }
        let mut stdin = self.base_input(event, cwd);
        stdin.insert("tool_name".into(), json!(tool));
        stdin.insert("tool_input".into(), input.clone());
        stdin.insert("tool_use_id".into(), json!(tool_use_id));
        stdin.insert(key.into(), value);
        stdin.insert("duration_ms".into(), json!(duration.as_millis() as u64));
        let stdin = Value::Object(stdin).to_string();
        let runs = join_all(selected.iter().map(|h| self.run(h, &stdin))).await;
        for (h, ran) in selected.iter().zip(runs) {
            let Some(ran) = ran else { continue };
            let name = h.name();
            let json = parse_json(&ran.stdout);
            if ran.code == Some(2) && json.is_none() {
                let msg = ran.stderr.trim();
                out.feedback.push(if msg.is_empty() {
                    format!("{event} hook `{name}` reported a problem (exit 2).")
                } else {
                    format!("{event} hook feedback: {msg}")
                });
                continue;
            }
            let Some(j) = json else {
                if ran.code != Some(0) {
                    non_blocking(&name, &ran);
                }
                continue;
            };
            if let Some(why) = Self::halt_reason(&name, event, &j) {
                tracing::warn!(hook = %name, "{event} hook stopped the run: {why}");
                self.set_halt(why);
            }
            if j.get("decision").and_then(Value::as_str) == Some("block") {
                let reason = j
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("blocked by a hook");
                out.feedback
                    .push(format!("{event} hook feedback: {reason}"));
            }
            if let Some(c) = j
                .pointer("/hookSpecificOutput/additionalContext")
                .and_then(Value::as_str)
            {
                out.feedback.push(c.to_string());
            }
        }
        out
    }

    /// Run one hook with `stdin`; `None` if it could not run or timed out (no decision).
    async fn run(&self, h: &Hook, stdin: &str) -> Option<Ran> {
        let _busy = self.busy.enter();
        let name = h.name();
        let program = match &h.args {
            Some(args) => Program::Exec {
                program: &h.command,
                args,
            },
            None => Program::Shell(&h.command),
        };
        let mut extra_env = vec![(
            "CLAUDE_PROJECT_DIR".to_string(),
            self.session.workdir.to_string_lossy().into_owned(),
        )];
        extra_env.extend(
            isolation::SAFE_ENV
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        for name in &h.passthrough {
            if let Ok(v) = std::env::var(name) {
                extra_env.push((name.clone(), v));
            }
        }
        // Never the workdir unless the spec says so: code there is the pull request's.
        let cwd = match isolation::spec_cwd(h.cwd.as_deref(), &self.session.workdir) {
            Some(c) => c,
            None => self
                .start_dir
                .as_ref()
                .map_or_else(|| PathBuf::from("/"), |d| d.path().to_path_buf()),
        };
        let started = Instant::now();
        let _integrity =
            crate::integrity::around(self.integrity.as_ref(), || format!("hook `{name}`"));
        let spawned = process::spawn(&Spawn {
            program,
            cwd: &cwd,
            env: &self.env,
            inherit_env: true,
            extra_env: &extra_env,
            stdin: true,
            scope: Scope::Write,
            report_fd: None,
        });
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(hook = %name, "hook could not start: {e}");
                return None;
            }
        };
        let mut child_in = child.inner.stdin.take();
        let mut child_out = child.inner.stdout.take();
        let mut child_err = child.inner.stderr.take();
        let input = stdin.as_bytes().to_vec();
        let inner = &mut child.inner;
        let work = async {
            let write = async {
                if let Some(mut w) = child_in.take() {
                    // A hook that ignores stdin may close it early: not an error.
                    let _ = w.write_all(&input).await;
                    let _ = w.shutdown().await;
                }
            };
            let (_, out, err) = tokio::join!(
                write,
                read_capped(&mut child_out),
                read_capped(&mut child_err)
            );
            let status = inner.wait().await;
            (status, out, err)
        };
        // Once the run is stopped (a signal, the time limit), hooks get no more time than the
        // task's commands: one started before is stopped like them, one started after (the
        // SessionEnd hooks) gets at most AFTER_STOP.
        let stopped_before = self.session.stop.is_cancelled();
        let limit = if stopped_before {
            h.timeout.min(AFTER_STOP)
        } else {
            h.timeout
        };
        let done = tokio::select! {
            r = tokio::time::timeout(limit, work) => Some(r),
            _ = self.session.stop.cancelled(), if !stopped_before => None,
        };
        let Some(done) = done else {
            child.stop_group(process::KILL_GRACE).await;
            tracing::warn!(hook = %name, "the run was stopped; the hook was stopped with it (no decision)");
            return None;
        };
        // Background children of the hook do not outlive it.
        child.kill_group();
        match done {
            Ok((status, stdout, stderr)) => {
                let code = status.ok().and_then(|s| s.code());
                tracing::debug!(hook = %name, ?code, ms = started.elapsed().as_millis() as u64, "hook finished");
                Some(Ran {
                    code,
                    stdout,
                    stderr,
                })
            }
            Err(_) => {
                tracing::warn!(hook = %name, timeout_s = limit.as_secs_f64(), "hook timed out and was killed; no decision");
                None
            }
        }
    }
}

async fn read_capped<R: tokio::io::AsyncRead + Unpin>(r: &mut Option<R>) -> String {
    let Some(r) = r else {
        return String::new();
    };
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if buf.len() < OUTPUT_CAP {
                    let take = n.min(OUTPUT_CAP - buf.len());
                    buf.extend_from_slice(&chunk[..take]);
                }
            }
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

fn parse_json(stdout: &str) -> Option<Value> {
    let t = stdout.trim();
    if !t.starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(t)
        .ok()
        .filter(Value::is_object)
}

fn non_blocking(name: &str, ran: &Ran) {
    let first = ran.stderr.lines().next().unwrap_or_default();
    tracing::warn!(
        hook = %name,
        code = %ran.code.map_or_else(|| "none".to_string(), |c| c.to_string()),
        "hook error: Failed with non-blocking status code: {first}"
    );
}

/// Combine UserPromptSubmit (`blocking`) or SessionStart results.
fn prompt_outcome(event: &str, runs: Vec<(String, Ran)>, blocking: bool) -> PromptOutcome {
    let mut out = PromptOutcome::default();
    for (name, ran) in runs {
        let json = parse_json(&ran.stdout);
        if let Some(why) = json
            .as_ref()
            .and_then(|j| Hooks::halt_reason(&name, event, j))
        {
            out.stop.get_or_insert(why);
            continue;
        }
        if ran.code == Some(2) {
            let msg = ran.stderr.trim();
            if blocking {
                out.stop.get_or_insert(if msg.is_empty() {
                    format!("the prompt was blocked by the {event} hook `{name}`")
                } else {
                    format!("the prompt was blocked by a {event} hook: {msg}")
                });
            } else {
                non_blocking(&name, &ran);
            }
            continue;
        }
        let Some(j) = json else {
            if ran.code == Some(0) {
                let text = ran.stdout.trim();
                if !text.is_empty() {
                    out.context.push(text.to_string());
                }
            } else {
                non_blocking(&name, &ran);
            }
            continue;
        };
        if blocking && j.get("decision").and_then(Value::as_str) == Some("block") {
            let reason = j
                .get("reason")
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(|r| format!("the prompt was blocked by a {event} hook: {r}"))
                .unwrap_or_else(|| format!("the prompt was blocked by the {event} hook `{name}`"));
            out.stop.get_or_insert(reason);
            continue;
        }
        if let Some(c) = j
            .pointer("/hookSpecificOutput/additionalContext")
            .and_then(Value::as_str)
        {
            out.context.push(c.to_string());
        }
    }
    out
}

/// The decision one PreToolUse hook's result carries; collects `updatedInput` and context.
fn pre_decision(name: &str, ran: &Ran, out: &mut PreToolOutcome) -> Option<HookDecision> {
    let json = parse_json(&ran.stdout);
    if ran.code == Some(2) {
        // Exit 2 blocks; a JSON "allow" cannot override it.
        let msg = ran.stderr.trim();
        let reason = if msg.is_empty() {
            json.as_ref()
                .and_then(|j| {
                    j.pointer("/hookSpecificOutput/permissionDecisionReason")
                        .or_else(|| j.get("reason"))
                })
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_else(|| format!("blocked by the hook `{name}`"))
        } else {
            msg.to_string()
        };
        return Some(HookDecision::Deny(reason));
    }
    let Some(j) = json else {
        if ran.code != Some(0) {
            non_blocking(name, ran);
        } else if !ran.stdout.trim().is_empty() {
            tracing::debug!(hook = %name, "hook stdout: {}", ran.stdout.trim());
        }
        return None;
    };
    if let Some(c) = j
        .pointer("/hookSpecificOutput/additionalContext")
        .and_then(Value::as_str)
    {
        out.context.push(c.to_string());
    }
    if let Some(u) = j.pointer("/hookSpecificOutput/updatedInput")
        && u.is_object()
    {
        out.updated_input = Some(u.clone());
    }
    let reason = j
        .pointer("/hookSpecificOutput/permissionDecisionReason")
        .or_else(|| j.get("reason"))
        .and_then(Value::as_str)
        .map(String::from);
    if j.get("continue").and_then(Value::as_bool) == Some(false) {
        let why = j
            .get("stopReason")
            .and_then(Value::as_str)
            .map(String::from)
            .or(reason)
            .unwrap_or_else(|| format!("the hook `{name}` said not to continue"));
        return Some(HookDecision::Deny(why));
    }
    let specific = j
        .pointer("/hookSpecificOutput/permissionDecision")
        .and_then(Value::as_str);
    let legacy = j.get("decision").and_then(Value::as_str);
    match (specific, legacy) {
        (Some("deny"), _) | (None, Some("block")) => Some(HookDecision::Deny(
            reason.unwrap_or_else(|| format!("denied by the hook `{name}`")),
        )),
        (Some("ask" | "defer"), _) => {
            Some(HookDecision::Ask(reason.unwrap_or_else(|| {
                format!("the hook `{name}` asked for approval")
            })))
        }
        (Some("allow"), _) | (None, Some("approve")) => Some(HookDecision::Allow),
        (Some(other), _) => {
            tracing::warn!(hook = %name, "unknown permissionDecision `{other}` ignored");
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod trust_table;
