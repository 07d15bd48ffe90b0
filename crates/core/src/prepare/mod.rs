//! Preparing tasks before anything runs: command-line overrides and settings files applied
//! to each spec, every check that must pass before the first model request (rules, hooks,
//! provider key, cassette), and the facts derived from a resolved spec (secret names, digest).
//! A task that passes is a [`PreparedTask`]; `runner resume` prepares through the same
//! functions ([`resume`]).

pub mod cloud;
pub mod resume;
pub mod rules;
pub mod settings;
pub mod trust;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::hooks::Hooks;
use crate::model::cassette::Cassette;
use crate::model::openai::OpenaiConfig;
use crate::model::table::{self, ModelInfo};
use crate::permissions::Policy;
use crate::spec::{
    LoadedSpec, NetworkSetting, PermissionMode, ProviderKind, ReplayMode, SandboxMode,
    SpecDuration, SpecError,
};

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
    /// `--sandbox MODE` (replaces the spec's `sandbox.mode`).
    pub sandbox: Option<SandboxMode>,
    /// `--network none|allow` (replaces the spec's `sandbox.network`).
    pub network: Option<NetworkSetting>,
    /// `--system-prompt` (replaces the spec's `system_prompt`).
    pub system_prompt: Option<String>,
    /// `--append-system-prompt` (replaces the spec's `system_prompt_append`).
    pub system_prompt_append: Option<String>,
    /// `--base head|working-tree` (replaces the spec's `git.base`).
    pub git_base: Option<crate::spec::GitBase>,
    /// `--provider` (replaces the spec's `provider`; `--replay` wins over it).
    pub provider: Option<ProviderKind>,
}

impl Overrides {
    /// The flag that set the spec value at `key` (a key path such as `limits.max_turns`), when
    /// one did: an error about that value is the flag's.
    pub fn flag_for(&self, key: &str) -> Option<&'static str> {
        let set = |given: bool, flag: &'static str| given.then_some(flag);
        match key {
            "model" => set(self.model.is_some(), "--model"),
            "limits.max_turns" => set(self.max_turns.is_some(), "--max-turns"),
            "limits.max_cost_usd" => set(self.max_cost_usd.is_some(), "--max-cost-usd"),
            "limits.max_total_tokens" => set(self.max_total_tokens.is_some(), "--max-total-tokens"),
            "limits.timeout" => set(self.timeout.is_some(), "--timeout"),
            "permissions.mode" => set(self.permission_mode.is_some(), "--permission-mode"),
            "retry.max_retries" => set(self.max_retries.is_some(), "--max-retries"),
            "replay_mode" => set(self.replay_mode.is_some(), "--replay-mode"),
            "sandbox.mode" => set(self.sandbox.is_some(), "--sandbox"),
            "sandbox.network" => set(self.network.is_some(), "--network"),
            "system_prompt" => set(self.system_prompt.is_some(), "--system-prompt"),
            "git.base" => set(self.git_base.is_some(), "--base"),
            "system_prompt_append" => set(
                self.system_prompt_append.is_some(),
                "--append-system-prompt",
            ),
            "cassette" => set(self.replay.is_some(), "--replay"),
            "provider" if self.replay.is_some() => Some("--replay"),
            "provider" => set(self.provider.is_some(), "--provider"),
            _ => None,
        }
    }
}

/// Problems with the command-line overrides themselves, each naming its flag: allow and deny
/// rules that do not parse, limits that cannot be met. Checked once, before any spec, so a bad
/// flag is reported as the flag's, not as every spec's.
pub fn check_overrides(o: &Overrides) -> Vec<String> {
    let mut problems = Vec::new();
    for (flag, rules) in [
        ("--allowed-tools", &o.allowed_tools),
        ("--disallowed-tools", &o.disallowed_tools),
    ] {
        for rule in rules {
            if let Err(e) = crate::permissions::rule::Rule::parse(rule) {
                problems.push(format!("{flag}: {e}"));
            }
        }
    }
    if let Some(c) = o.max_cost_usd
        && !(c.is_finite() && c > 0.0)
    {
        problems.push(format!(
            "--max-cost-usd: `{c}` is not a positive amount in USD"
        ));
    }
    problems
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
    if let Some(m) = o.sandbox {
        spec.sandbox.mode = m;
    }
    if let Some(n) = &o.network {
        spec.sandbox.network = n.clone();
    }
    if let Some(p) = &o.system_prompt {
        spec.system_prompt = Some(p.clone());
    }
    if let Some(a) = &o.system_prompt_append {
        spec.system_prompt_append = Some(a.clone());
    }
    if let Some(b) = o.git_base {
        spec.git.base = b;
    }
    if let Some(p) = o.provider {
        // The settings only the spec's own provider reads go with it.
        if p != spec.provider {
            spec.openai = None;
            spec.cassette = None;
            loaded.cassette = None;
        }
        spec.provider = p;
    }
    if let Some(c) = &o.replay {
        spec.provider = ProviderKind::Replay;
        spec.cassette = Some(c.clone());
        loaded.cassette = Some(c.clone());
    }
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
    /// A cloud provider (Bedrock, Vertex AI) lacks its region, project or credentials.
    #[error("{spec}: provider `{provider}`: {message}")]
    ProviderConfig {
        /// Spec path.
        spec: String,
        /// Provider name.
        provider: String,
        /// What is missing and how to set it.
        message: String,
    },
    /// The cassette cannot be used.
    #[error("{0}")]
    Cassette(#[from] crate::model::cassette::CassetteError),
    /// A settings file cannot be used.
    #[error("{0}")]
    Settings(#[from] settings::SettingsError),
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
/// its tools, rules and hooks, its provider's key, its cassette.
pub fn prepare(loaded: LoadedSpec, o: &Overrides) -> Result<PreparedTask, PrepareError> {
    let mut task = check(loaded, o)?;
    let sup = crate::sandbox::support();
    if task.loaded.spec.sandbox.mode == SandboxMode::Enforce && !sup.can_confine() {
        let e = crate::sandbox::SandboxError::Unsupported(match sup.landlock_abi {
            None => "the kernel has no Landlock".into(),
            Some(_) => "seccomp filters are not available".into(),
        });
        return Err(SpecError::at(&task.loaded, "sandbox.mode", e.to_string()).into());
    }
    let spec = &task.loaded.spec;
    task.api_key = match spec.provider {
        ProviderKind::Anthropic | ProviderKind::Openai => match key_var(spec) {
            // A server that needs no key (`openai.api_key_env: ""`).
            None => None,
            Some(var) => match std::env::var(&var) {
                Ok(k) if !k.trim().is_empty() => Some(k),
                _ => {
                    return Err(PrepareError::MissingKey {
                        spec: task.loaded.path.display().to_string(),
                        provider: spec.provider.as_str().into(),
                        var,
                    });
                }
            },
        },
        ProviderKind::Bedrock | ProviderKind::Vertex => {
            cloud::check(spec.provider, |k| std::env::var(k).ok()).map_err(|e| {
                PrepareError::ProviderConfig {
                    spec: task.loaded.path.display().to_string(),
                    provider: spec.provider.as_str().into(),
                    message: e.to_string(),
                }
            })?;
            None
        }
        ProviderKind::Replay => None,
    };
    Ok(task)
}

/// Every check of [`prepare`] that does not depend on the environment (all but the provider's
/// key): what `runner validate` runs, so a spec it passes is one `exec` accepts.
pub fn check(mut loaded: LoadedSpec, o: &Overrides) -> Result<PreparedTask, PrepareError> {
    apply_overrides(&mut loaded, o);
    apply_settings(&mut loaded, o)?;
    loaded.check().map_err(|e| attribute(e, o))?;
    if let Some(e) = tool_errors(&loaded).into_iter().next() {
        return Err(attribute(e, o).into());
    }
    let hooks = Hooks::new(&loaded.spec.hooks)
        .map_err(|e| SpecError::at(&loaded, "hooks", format!("invalid hooks: {e}")))?;
    rules::check(&loaded)?;
    let protected = trust::check(&loaded, &secret_names(&loaded))?;
    let spec = &loaded.spec;
    let policy = Policy::with_ask(
        spec.permissions.mode,
        &spec.permissions.allow,
        &spec.permissions.deny,
        &spec.permissions.ask,
    )
    .map_err(|e| {
        let key = rule_key(&loaded, &e.to_string());
        SpecError::at(&loaded, &key, e.to_string())
    })?
    .with_protected(protected);
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
    if let (ProviderKind::Replay, Some(c)) = (&spec.provider, &loaded.cassette) {
        Cassette::load(c)?;
    }
    let model_info = table::lookup(&spec.model, &spec.models);
    Ok(PreparedTask {
        git: Default::default(),
        hooks,
        policy: Arc::new(policy),
        api_key: None,
        model_info,
        loaded,
        resume: None,
    })
}

/// An error for every entry of the spec's `tools` that names no built-in tool, with the
/// closest name when there is one.
pub fn tool_errors(loaded: &LoadedSpec) -> Vec<SpecError> {
    let known = crate::tools::builtin::names();
    let mut out = Vec::new();
    for (i, tool) in loaded.spec.tools.iter().enumerate() {
        if !known.contains(&tool.as_str()) {
            let e = SpecError::at(
                loaded,
                &format!("tools[{i}]"),
                format!(
                    "unknown tool `{tool}`; expected one of {}",
                    known.join(", ")
                ),
            );
            out.push(
                match crate::spec::errors::did_you_mean(tool, known.iter().copied()) {
                    Some(m) => e.with_help(format!("did you mean `{m}`?")),
                    None => e,
                },
            );
        }
    }
    out
}

/// Report `e` against the command-line flag its value came from, when one did: an override
/// (`--max-cost-usd`), or a flag of an inline task (`--tools`).
fn attribute(e: SpecError, o: &Overrides) -> SpecError {
    if e.flag().is_some() {
        return e;
    }
    let Some(key) = e.key().map(str::to_string) else {
        return e;
    };
    let flag = o.flag_for(&key).or_else(|| {
        (e.file == std::path::Path::new(crate::spec::inline::INLINE_PATH))
            .then(|| crate::spec::inline::flag_for_key(&key))
            .flatten()
    });
    match flag {
        Some(f) => e.with_flag(f),
        None => e,
    }
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

/// The environment variable holding the API key the spec's provider needs, if it needs one:
/// `ANTHROPIC_API_KEY` for anthropic; for openai `OPENAI_API_KEY` or `openai.api_key_env`
/// (`""` means no key); none for replay.
pub fn key_var(spec: &crate::spec::TaskSpec) -> Option<String> {
    match spec.provider {
        ProviderKind::Anthropic => Some(ANTHROPIC_KEY_VAR.to_string()),
        ProviderKind::Openai => OpenaiConfig::key_var(spec.openai.as_ref()),
        ProviderKind::Bedrock | ProviderKind::Vertex | ProviderKind::Replay => None,
    }
}

/// Names of variables always removed from tool environments and redacted: the spec's
/// `secrets`, both default key variables, the configured key variable, `GITHUB_TOKEN`, GitHub
/// Actions' runtime tokens, and the variables MCP servers' `env` values take (`${VAR}`).
pub fn secret_names(loaded: &LoadedSpec) -> Vec<String> {
    let mut names = loaded.spec.secrets.clone();
    for n in cloud::secret_vars(loaded.spec.provider) {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    }
    let configured = key_var(&loaded.spec);
    let always = [
        ANTHROPIC_KEY_VAR,
        OpenaiConfig::DEFAULT_KEY_VAR,
        "GITHUB_TOKEN",
        // GitHub Actions' runtime credentials (artifact and cache service, OIDC tokens).
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    ];
    // What an MCP server's `env` takes from runner's environment (tokens, mostly).
    let mcp: Vec<String> = loaded
        .spec
        .mcp_servers
        .values()
        .flat_map(|s| s.referenced_vars())
        .collect();
    let named = always
        .into_iter()
        .chain(configured.as_deref())
        .chain(mcp.iter().map(String::as_str));
    for n in named {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    }
    names
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

    /// The error `check` gives for a spec with this text.
    fn check_error(text: &str) -> SpecError {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task.yaml");
        std::fs::write(&path, text).unwrap();
        let loaded = crate::spec::load(&path).unwrap();
        match check(loaded, &Overrides::default()) {
            Err(PrepareError::Spec(e)) => e,
            Err(e) => panic!("not a spec error: {e}"),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn unknown_tool_points_at_the_item() {
        let e = check_error("name: t\nprompt: hi\ntools: [Read, Bashh]\n");
        assert_eq!((e.line, e.column), (Some(3), Some(15)));
        assert_eq!(
            e.message,
            "unknown tool `Bashh`; expected one of Read, Write, Edit, Bash, Glob, Grep, TodoWrite"
        );
        let e = check_error("name: t\nprompt: hi\ntools:\n  - Read\n  - WebFetch\n");
        assert_eq!((e.line, e.column), (Some(5), Some(5)));
    }
}
