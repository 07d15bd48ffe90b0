//! Task spec v1: the YAML contract users write (documented field by field in the book's
//! spec chapter; the JSON Schema is generated from these types).
//!
//! Every struct denies unknown fields; defaults live here so `runner schema` shows them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::duration::SpecDuration;
use super::sandbox::{CheckSandbox, SandboxSettings};
pub use crate::model::settings::{ModelInfoOverride, OpenaiSettings, ReplayMode};
pub use crate::permissions::mode::PermissionMode;

/// One task: what to ask the agent, under which policy and limits, and how to check the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Unique task id; the JUnit testcase name. Letters, digits, `-`, `_`, `.`.
    pub name: String,
    /// The instruction for the agent. Exactly one of `prompt` and `prompt_file` is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// File holding the prompt, relative to the spec file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_file: Option<PathBuf>,
    /// Model id (see the built-in model table, or `models:` to add one).
    #[serde(default = "default_model")]
    pub model: String,
    /// Which model API to talk to.
    #[serde(default)]
    pub provider: ProviderKind,
    /// Cassette file for `provider: replay`, relative to the spec file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cassette: Option<PathBuf>,
    /// How replay checks each request against the cassette: `lenient` (default) or `strict`.
    /// Used whenever the task replays (`provider: replay` or `--replay FILE`).
    #[serde(default, skip_serializing_if = "ReplayMode::is_lenient")]
    pub replay_mode: ReplayMode,
    /// Settings for `provider: openai` (endpoint, API key variable, usage reporting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openai: Option<OpenaiSettings>,
    /// Model the task switches to, for the rest of the task, when the main model stays
    /// overloaded (HTTP 529 / `overloaded_error`) after its retries (`retry:`) are spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_model: Option<String>,
    /// Instructions that replace runner's own (the agent's role, how an unattended run works,
    /// the working rules). The environment facts (workdir, platform, date, tools) and
    /// `system_prompt_append` still follow. Claude Code's `--system-prompt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Text appended to the system prompt (runner's default or `system_prompt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_append: Option<String>,
    /// Project instruction files the first prompt carries (as a system reminder): `true` for
    /// AGENTS.md then CLAUDE.md, or a list of file names, looked for in the workdir and each
    /// directory above it up to the repository root, nearest first. Off by default: the files
    /// are text from the repository, which a pull request can change.
    #[serde(default, skip_serializing_if = "super::Instructions::is_off")]
    pub instructions: super::Instructions,
    /// Working directory for the agent, relative to the spec file.
    #[serde(default = "default_workdir")]
    pub workdir: PathBuf,
    /// Extra directories the agent may read, relative to the spec file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_directories: Vec<PathBuf>,
    /// Tools offered to the model. This only controls what is offered; permissions decide what runs.
    #[serde(default = "default_tools")]
    pub tools: Vec<String>,
    /// Environment variable names scrubbed from tool, check and hook environments and redacted
    /// from every output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// Permission policy.
    #[serde(default)]
    pub permissions: Permissions,
    /// MCP servers started for the task (over stdio, inside its sandbox); their tools are
    /// offered as `mcp__<server>__<tool>` and decided by rules naming them. Never read from
    /// the workdir (`.mcp.json`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_servers: BTreeMap<String, super::McpServerSpec>,
    /// A Claude Code settings.json (relative to this file) whose `permissions` rules,
    /// `additionalDirectories`, `defaultMode` and `hooks` are added to this spec's. Settings in
    /// the workdir (`.claude/`) are never loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<PathBuf>,
    /// Command hooks in Claude Code's settings shape: event (`PreToolUse`, `PostToolUse`,
    /// `PostToolUseFailure`, `Stop`, `UserPromptSubmit`, `SessionStart`, `SessionEnd`) → matcher
    /// groups.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hooks: super::hooks::HooksConfig,
    /// How the commands the task runs are confined by the kernel: mode, network, extra
    /// writable paths, extra unreadable paths.
    #[serde(default, skip_serializing_if = "SandboxSettings::is_unset")]
    pub sandbox: SandboxSettings,
    /// Turn, token, cost and time limits.
    #[serde(default)]
    pub limits: Limits,
    /// Retries of failed model requests (backoff, limits, stream watchdog).
    #[serde(default, skip_serializing_if = "Retry::is_unset")]
    pub retry: Retry,
    /// Context management: clearing old tool results and summarizing the conversation when
    /// it nears the model's context window.
    #[serde(default, skip_serializing_if = "ContextSettings::is_unset")]
    pub context: ContextSettings,
    /// Success checks run after the agent finishes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verify: Vec<VerifyCheck>,
    /// Git: worktree isolation, base, patches, branch commits, `require_changes`.
    #[serde(default, skip_serializing_if = "super::git::GitSettings::is_unset")]
    pub git: super::git::GitSettings,
    /// Agent attempts in all: a failing check's output is fed back up to `attempts - 1` times.
    #[serde(default = "default_attempts")]
    pub attempts: u32,
    /// Output token cap per model request (defaults to the model's cap, at most 32000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Extended thinking budget in tokens (omit to disable thinking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget_tokens: Option<u32>,
    /// Anthropic prompt caching: mark the system prompt, the last tool and the latest message
    /// as cache breakpoints (`cache_control`). `false` sends none. Other providers ignore it.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub prompt_caching: bool,
    /// Model table entries that add to or override the built-in table.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelInfoOverride>,
    /// Structured output: the final answer must be a JSON value valid against a JSON Schema.
    /// The model is offered a `StructuredOutput` tool with that schema and finishes by calling
    /// it; the value is reported as `structured_output`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputSpec>,
    /// Expand this spec into one task per parameter set: a list of maps
    /// (`[{crate: core}, {crate: cli}]`) or `{glob: "crates/*"}` (parameters `path` and
    /// `basename`). `{{param}}` is substituted in `name`, `prompt`/`prompt_file`, `workdir` and
    /// verify checks' `name` and `run` (shell-quoted there); checks also get
    /// `RUNNER_PARAM_<NAME>`. Without `{{…}}` in `name`, tasks are named `NAME[k=v,…]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<super::matrix::Matrix>,
    /// The matrix parameters this task was expanded with (set by loading; not a YAML field).
    #[serde(skip)]
    #[schemars(skip)]
    pub params: Vec<(String, String)>,
}

/// `output:`: the JSON Schema the agent's final answer must match. Exactly one of `schema` and
/// `schema_file` is required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// The JSON Schema, inline (a mapping whose root has `type: object`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<serde_json::Value>,
    /// A JSON (or YAML) file holding the JSON Schema, relative to the spec file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_file: Option<PathBuf>,
    /// How many invalid `StructuredOutput` calls (or turns ending without one) are answered
    /// with the validation errors before the task fails with
    /// `error_max_structured_output_retries` (default 3).
    #[serde(default = "default_output_retries")]
    pub max_retries: u32,
}

/// Default of `output.max_retries`.
pub(crate) const DEFAULT_OUTPUT_RETRIES: u32 = 3;

fn default_output_retries() -> u32 {
    DEFAULT_OUTPUT_RETRIES
}

/// Which model API a task uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Anthropic Messages API (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`).
    #[default]
    Anthropic,
    /// OpenAI-compatible Chat Completions (`OPENAI_API_KEY`, `OPENAI_BASE_URL`; see `openai:`).
    Openai,
    /// Anthropic models on Amazon Bedrock: AWS credentials from the standard chain
    /// (environment, web identity token, profile, instance metadata), region from `AWS_REGION`.
    Bedrock,
    /// Anthropic models on Google Vertex AI: Application Default Credentials, project from
    /// `ANTHROPIC_VERTEX_PROJECT_ID`, region from `CLOUD_ML_REGION`.
    Vertex,
    /// Replay a recorded cassette; no network, no key.
    Replay,
}

impl ProviderKind {
    /// The spec's spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
            ProviderKind::Bedrock => "bedrock",
            ProviderKind::Vertex => "vertex",
            ProviderKind::Replay => "replay",
        }
    }
}

/// Permission policy: mode plus allow/deny rules (`Tool` or `Tool(specifier)`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Permissions {
    /// Permission mode.
    #[serde(default)]
    pub mode: PermissionMode,
    /// Allow rules, e.g. `Edit`, `Bash(cargo test:*)`.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Deny rules; checked first, nothing removes them.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Ask rules, checked after deny rules and before allow rules. With nobody to ask, a call
    /// an ask rule matches is denied in every mode (bypassPermissions included).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ask: Vec<String>,
    /// Fail the task (outcome `denied`, exit 5) when any tool call was denied.
    #[serde(default)]
    pub fail_on_denial: bool,
}

/// Limits; each ends the task with its own outcome (exit 3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Most model turns (successful main-loop responses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Most tokens: sum over requests of input + cache write + cache read + output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_tokens: Option<u64>,
    /// Most spend in USD (needs a priced model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Wall-clock limit for the task, e.g. `30m`, `90s`, `1h30m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<SpecDuration>,
}

/// How failed model requests are retried. Every field is optional; unset fields keep the
/// defaults shown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    /// Most retries of one model request after the first attempt (default 10; 0 disables
    /// retries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Delay before the first retry; doubles per retry, minus up to 25% jitter (default 500ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_delay: Option<SpecDuration>,
    /// Cap of the exponential delay (default 32s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay: Option<SpecDuration>,
    /// Longest server `retry-after` runner waits for; a longer one fails the task at once
    /// (default 2m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait: Option<SpecDuration>,
    /// Most time spent waiting between retries over the whole task (default 15m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<SpecDuration>,
    /// Stream watchdog: an attempt with no response bytes for this long (before the headers
    /// or mid-stream) is abandoned and retried. Default by endpoint: 2m for Anthropic's public
    /// API (it sends pings), 5m for OpenAI's, 10m for any other base URL (a local model server
    /// may stay silent while it reads a long prompt); `RUNNER_STREAM_IDLE_TIMEOUT_MS` replaces
    /// the default, this setting wins over both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<SpecDuration>,
}

impl Retry {
    /// Whether nothing is set (the section is then left out of the resolved spec).
    pub fn is_unset(&self) -> bool {
        self == &Retry::default()
    }

    /// The retry policy these settings give: each one set over the default.
    pub(crate) fn policy(&self) -> crate::retry::RetryPolicy {
        let mut p = crate::retry::RetryPolicy::default();
        if let Some(n) = self.max_retries {
            p.max_retries = n;
        }
        if let Some(d) = self.base_delay {
            p.base_delay = d.0;
        }
        if let Some(d) = self.max_delay {
            p.max_delay = d.0;
        }
        if let Some(d) = self.max_wait {
            p.max_wait = d.0;
        }
        if let Some(d) = self.budget {
            p.budget = d.0;
        }
        p
    }
}

/// Context management. Every field is optional; unset fields keep the defaults shown.
/// Fractions are of the model's context window (the model table's `context_window`,
/// overridable under `models:`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextSettings {
    /// Summarize the conversation with one model call when the estimated context reaches
    /// `autocompact_threshold` (default true). A `prompt is too long` error compacts even when
    /// this is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autocompact: Option<bool>,
    /// Fraction of the context window at which autocompact runs (default 0.85).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autocompact_threshold: Option<f64>,
    /// Fraction of the context window above which old tool results are cleared from requests
    /// (default 0.5; 1 or more disables microcompact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microcompact_threshold: Option<f64>,
    /// Tool results of this many most recent turns are never cleared (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microcompact_keep_turns: Option<u32>,
    /// Clear only when it frees at least this many tokens (default 20000), so the one prompt
    /// cache miss that clearing causes pays off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microcompact_min_savings_tokens: Option<u64>,
}

impl ContextSettings {
    /// Whether nothing is set (the section is then left out of the resolved spec).
    pub fn is_unset(&self) -> bool {
        self == &ContextSettings::default()
    }
}

/// One success check: a shell command run in the workdir after the agent finishes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyCheck {
    /// Check name (JUnit testcase name); defaults to the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Shell command (`bash -c`).
    pub run: String,
    /// Time limit for the check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<SpecDuration>,
    /// Extra environment variables for the check.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// `off` runs this check outside the sandbox.
    #[serde(default, skip_serializing_if = "CheckSandbox::is_on")]
    pub sandbox: CheckSandbox,
    /// The check runs a file inside the workdir (a script the agent or the pull request can
    /// change) and that is intended. Without it such a check is refused at load; with it the
    /// check still gets no secret through `env:` and the script is protected from the agent's
    /// writes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trusted: bool,
}

fn default_model() -> String {
    "claude-sonnet-4-5".to_string()
}

fn default_workdir() -> PathBuf {
    PathBuf::from(".")
}

/// The tools a spec without `tools:` offers, in offer order.
pub(crate) const DEFAULT_TOOLS: &[&str] = &["Read", "Write", "Edit", "Bash", "Glob", "Grep"];

fn default_tools() -> Vec<String> {
    DEFAULT_TOOLS.iter().map(|s| s.to_string()).collect()
}

fn default_attempts() -> u32 {
    1
}

fn default_true() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}
