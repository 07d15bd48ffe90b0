//! Semantic checks on a parsed spec, each error pointing at the offending key.
//!
//! [`static_errors`] holds the checks that depend only on the file; [`LoadedSpec::check`] the
//! ones that depend on fields the command line can replace (model, limits, permission mode),
//! so the caller can run it again after applying overrides.

use std::path::Path;

use super::errors::SpecError;
use super::loaded::LoadedSpec;
use super::types::{ProviderKind, TaskSpec};
use crate::model::table;

/// Longest task name (it becomes a file name).
pub(crate) const MAX_NAME_LEN: usize = 128;

/// Smallest thinking budget the Anthropic API accepts.
pub(crate) const MIN_THINKING_BUDGET: u32 = 1024;

/// Output cap used when the spec sets no `max_tokens` (the model's cap, at most this).
pub(crate) const DEFAULT_MAX_TOKENS_CAP: u32 = 32_000;

/// Why `name` is not a valid task name, if it is not.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("`name` is empty; expected letters, digits, `-`, `_` or `.`".into());
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Some(format!(
            "`name` {name:?} contains {bad:?}; expected only letters, digits, `-`, `_` and `.` \
             (it becomes a file name and the JUnit testcase name)"
        ));
    }
    if name.chars().all(|c| c == '.') {
        return Some(format!(
            "`name` {name:?} is only dots; expected at least one letter or digit"
        ));
    }
    if name.len() > MAX_NAME_LEN {
        return Some(format!(
            "`name` is {} characters long; expected at most {MAX_NAME_LEN}",
            name.len()
        ));
    }
    None
}

/// Why the name of a task expanded from `matrix:` is not valid, if it is not: parameter
/// values may add any printable characters (the output directory uses a file-safe form).
pub(crate) fn expanded_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some(
            "the expanded task name is empty; expected a `name` with letters or digits".into(),
        );
    }
    if name.chars().any(char::is_control) {
        return Some(format!(
            "the expanded task name {name:?} holds a control character"
        ));
    }
    if name.len() > 2 * MAX_NAME_LEN {
        return Some(format!(
            "the expanded task name is {} characters long; expected at most {}",
            name.len(),
            2 * MAX_NAME_LEN
        ));
    }
    None
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Every error of the checks that depend only on the spec file, in the order of the file's
/// sections.
pub(crate) fn static_errors(path: &Path, source: &str, spec: &TaskSpec) -> Vec<SpecError> {
    let at = |key: &str, msg: String| SpecError::in_source(path, source, key, msg);
    let mut errs = Vec::new();
    check_name_and_prompt(spec, &at, &mut errs);
    check_provider(spec, &at, &mut errs);
    check_lists(spec, &at, &mut errs);
    check_context(spec, &at, &mut errs);
    check_mcp_servers(spec, &at, &mut errs);
    if let Err(why) = spec.instructions.check() {
        errs.push(at("instructions", why));
    }
    check_models(spec, &at, &mut errs);
    errs
}

/// The `mcp_servers:` entries: names usable in `mcp__<server>__<tool>`, a command, variable
/// names and `${VAR}` references, positive timeouts.
fn check_mcp_servers(spec: &TaskSpec, at: At<'_>, errs: &mut Vec<SpecError>) {
    use super::mcp::{is_server_name, parse_template};
    for (name, server) in &spec.mcp_servers {
        let key = |k: &str| format!("mcp_servers.{name}{k}");
        if !is_server_name(name) {
            errs.push(at(
                &key(""),
                format!(
                    "MCP server name {name:?} is not valid; expected at most 32 letters, digits,                      `-` or `_`, without `__` (its tools are named mcp__{name}__<tool>)"
                ),
            ));
        }
        if server.command.trim().is_empty() {
            errs.push(at(
                &key(".command"),
                "`command` is empty; expected the program that runs the server, e.g. `npx`".into(),
            ));
        }
        for (var, value) in &server.env {
            if !is_env_name(var) {
                errs.push(at(
                    &key(".env"),
                    format!("{var:?} is not an environment variable name"),
                ));
            }
            if let Err(why) = parse_template(value) {
                errs.push(at(&key(&format!(".env.{var}")), why));
            }
        }
        for (field, d) in [
            ("startup_timeout", server.startup_timeout),
            ("tool_timeout", server.tool_timeout),
        ] {
            if d.is_some_and(|d| d.0.is_zero()) {
                errs.push(at(
                    &key(&format!(".{field}")),
                    format!("`{field}` is 0; expected a positive duration such as `30s`"),
                ));
            }
        }
    }
}

/// Makes the error for a key of the spec.
type At<'a> = &'a dyn Fn(&str, String) -> SpecError;

/// The task name and its prompt.
fn check_name_and_prompt(spec: &TaskSpec, at: At<'_>, errs: &mut Vec<SpecError>) {
    let name_check = if spec.params.is_empty() {
        name_problem(&spec.name)
    } else {
        expanded_name_problem(&spec.name)
    };
    if let Some(why) = name_check {
        errs.push(at("name", why));
    }

    match (&spec.prompt, &spec.prompt_file) {
        (None, None) => {
            errs.push(at(
                "prompt",
                "missing prompt: expected `prompt` (the instruction text) or `prompt_file` \
                 (a file relative to the spec)"
                    .into(),
            ));
        }
        (Some(_), Some(_)) => {
            errs.push(at(
                "prompt_file",
                "both `prompt` and `prompt_file` are set; expected exactly one of them".into(),
            ));
        }
        (Some(p), None) if p.trim().is_empty() => {
            errs.push(at(
                "prompt",
                "`prompt` is empty; expected the instruction for the agent".into(),
            ));
        }
        _ => {}
    }
}

/// The provider and the settings only some providers use.
fn check_provider(spec: &TaskSpec, at: At<'_>, errs: &mut Vec<SpecError>) {
    match spec.provider {
        ProviderKind::Anthropic
        | ProviderKind::Openai
        | ProviderKind::Bedrock
        | ProviderKind::Vertex
            if spec.cassette.is_some() =>
        {
            errs.push(at(
                "cassette",
                "`cassette` is only used with `provider: replay`; set `provider: replay` or \
                 remove `cassette` (to record, use `runner exec --record FILE`)"
                    .into(),
            ));
        }
        _ => {}
    }

    if let Some(o) = &spec.openai {
        if spec.provider != ProviderKind::Openai {
            errs.push(at(
                "openai",
                format!(
                    "`openai:` settings are only used with `provider: openai`, but the provider is \
                     `{}`; set `provider: openai` or remove `openai:`",
                    spec.provider.as_str()
                ),
            ));
        }
        if let Some(var) = &o.api_key_env
            && !var.is_empty()
            && !is_env_name(var)
        {
            errs.push(at(
                "openai.api_key_env",
                format!(
                    "`api_key_env` {var:?} is not an environment variable name; expected letters, \
                     digits and `_` (e.g. `OPENAI_API_KEY`), or \"\" for a server that needs no key"
                ),
            ));
        }
        if let Some(url) = &o.base_url {
            let u = url.trim();
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                errs.push(at(
                    "openai.base_url",
                    format!(
                        "`base_url` {url:?} is not an http(s) URL; expected e.g. \
                         `https://api.openai.com/v1` or `http://localhost:11434/v1`"
                    ),
                ));
            }
        }
    }
}

/// `attempts`, `secrets` and `verify`.
fn check_lists(spec: &TaskSpec, at: At<'_>, errs: &mut Vec<SpecError>) {
    if spec.attempts == 0 {
        errs.push(at(
            "attempts",
            "`attempts` is 0; expected at least 1 (the number of agent attempts in all)".into(),
        ));
    }

    for (i, name) in spec.secrets.iter().enumerate() {
        if !is_env_name(name) {
            errs.push(at(
                &format!("secrets[{i}]"),
                format!(
                    "secret {name:?} is not an environment variable name; expected letters, \
                     digits and `_`, not starting with a digit"
                ),
            ));
        }
    }

    for (i, check) in spec.verify.iter().enumerate() {
        if check.run.trim().is_empty() {
            errs.push(at(
                &format!("verify[{i}].run"),
                "`run` is empty; expected a shell command".into(),
            ));
        }
        if check.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            errs.push(at(
                &format!("verify[{i}].name"),
                "`name` is empty; expected a check name or no `name` key".into(),
            ));
        }
        if check.timeout.is_some_and(|t| t.0.is_zero()) {
            errs.push(at(
                &format!("verify[{i}].timeout"),
                "`timeout` is 0; expected a positive duration such as `5m`".into(),
            ));
        }
    }
}

/// The `context:` thresholds.
fn check_context(spec: &TaskSpec, at: At<'_>, errs: &mut Vec<SpecError>) {
    let ctx = &spec.context;
    for (field, v) in [
        ("autocompact_threshold", ctx.autocompact_threshold),
        ("microcompact_threshold", ctx.microcompact_threshold),
    ] {
        if let Some(v) = v
            && !(v.is_finite() && v > 0.0)
        {
            errs.push(at(
                &format!("context.{field}"),
                format!(
                    "`{field}` is {v}; expected a fraction of the context window above 0, \
                     e.g. 0.85"
                ),
            ));
        }
    }
    if let Some(v) = ctx.autocompact_threshold
        && v > 1.0
    {
        errs.push(at(
            "context.autocompact_threshold",
            format!(
                "`autocompact_threshold` is {v}; expected a fraction of the context window \
                 of at most 1 (set `autocompact: false` to turn autocompact off)"
            ),
        ));
    }
}

/// The `models:` overrides: prices, windows, output caps.
fn check_models(spec: &TaskSpec, at: At<'_>, errs: &mut Vec<SpecError>) {
    for (model, o) in &spec.models {
        let key = |field: &str| format!("models[\"{model}\"].{field}");
        let prices = [
            ("input_usd_per_mtok", o.input_usd_per_mtok),
            ("output_usd_per_mtok", o.output_usd_per_mtok),
            ("cache_write_usd_per_mtok", o.cache_write_usd_per_mtok),
            ("cache_read_usd_per_mtok", o.cache_read_usd_per_mtok),
        ];
        for (field, v) in prices {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                errs.push(at(
                    &key(field),
                    format!(
                        "`{field}` is {v}; expected a price of 0 or more (USD per million tokens)"
                    ),
                ));
            }
        }
        if o.context_window == Some(0) {
            errs.push(at(
                &key("context_window"),
                "`context_window` is 0; expected a positive number of tokens".into(),
            ));
        }
        if o.max_output_tokens == Some(0) {
            errs.push(at(
                &key("max_output_tokens"),
                "`max_output_tokens` is 0; expected a positive number of tokens".into(),
            ));
        }
        let builtin_priced = table::builtin(model).is_some_and(|m| m.prices.is_some());
        if !builtin_priced && o.input_usd_per_mtok.is_some() != o.output_usd_per_mtok.is_some() {
            errs.push(at(
                &format!("models[\"{model}\"]"),
                format!(
                    "model `{model}` sets only one of `input_usd_per_mtok` and \
                     `output_usd_per_mtok`; expected both (or neither) for a model the built-in \
                     table does not price"
                ),
            ));
        }
    }
}

/// The built-in model ids.
fn builtin_names() -> impl Iterator<Item = &'static str> {
    table::BUILTIN_MODELS.iter().map(|(name, _)| *name)
}

/// The built-in model `model` is most likely a misspelling of: at most two edits from it
/// (dated and `-latest` ids compared without the suffix), and not the same version number with
/// another family digit (`claude-opus-5` is a new model, not a typo).
fn near_builtin_model(model: &str) -> Option<&'static str> {
    let id = table::canonical_id(model);
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    builtin_names()
        .filter(|b| digits(b) == digits(id))
        .map(|b| (strsim::levenshtein(b, id), b))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, b)| b)
}

impl LoadedSpec {
    /// What the model table (built-in plus the spec's `models:`) knows about the spec's model.
    pub fn model_info(&self) -> Option<table::ModelInfo> {
        table::lookup(&self.spec.model, &self.spec.models)
    }

    /// The checks that depend on fields the command line can replace (`model`, `limits`,
    /// `permissions.mode`, `max_tokens`): the first error of [`Self::errors`].
    /// [`fn@super::load`] runs them; run them again after applying overrides.
    pub fn check(&self) -> Result<(), SpecError> {
        match self.errors().into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Every error of [`Self::check`]'s checks. Errors point at the spec's key, or line 1 when
    /// the spec lacks it.
    pub fn errors(&self) -> Vec<SpecError> {
        let mut errs = Vec::new();
        let spec = &self.spec;
        let at = |key: &str, msg: String| SpecError::at(self, key, msg);

        if spec.model.trim().is_empty() {
            errs.push(at(
                "model",
                "`model` is empty; expected a model id such as `claude-sonnet-4-5`".into(),
            ));
        }
        let info = self.model_info();
        if info.is_none()
            && matches!(
                spec.provider,
                ProviderKind::Anthropic | ProviderKind::Bedrock | ProviderKind::Vertex
            )
            && let Some(near) = near_builtin_model(&spec.model)
        {
            let model = &spec.model;
            errs.push(at(
                "model",
                format!("model `{model}` is not in the model table; the API would answer 404"),
            )
            .with_help(format!(
                "did you mean `{near}`? (for a model the table does not know yet, add it under \
                 `models:`, e.g. `models: {{\"{model}\": {{input_usd_per_mtok: 3, output_usd_per_mtok: 15}}}}`)"
            )));
        }
        let limits = &spec.limits;
        let fallback = spec.fallback_model.as_deref();
        if fallback.is_some_and(|f| f.trim().is_empty()) {
            errs.push(at(
                "fallback_model",
                "`fallback_model` is empty; expected a model id or no `fallback_model` key".into(),
            ));
        }
        if fallback == Some(spec.model.as_str()) {
            errs.push(at(
                "fallback_model",
                format!(
                    "`fallback_model` is the task's own model `{}`; expected another model",
                    spec.model
                ),
            ));
        }

        if limits.max_turns == Some(0) {
            errs.push(at(
                "limits.max_turns",
                "`max_turns` is 0; expected at least 1".into(),
            ));
        }
        if limits.max_total_tokens == Some(0) {
            errs.push(at(
                "limits.max_total_tokens",
                "`max_total_tokens` is 0; expected a positive number of tokens".into(),
            ));
        }
        if limits.timeout.is_some_and(|t| t.0.is_zero()) {
            errs.push(at(
                "limits.timeout",
                "`timeout` is 0; expected a positive duration such as `30m`".into(),
            ));
        }
        if let Some(cost) = limits.max_cost_usd {
            if !(cost.is_finite() && cost > 0.0) {
                errs.push(at(
                    "limits.max_cost_usd",
                    format!("`max_cost_usd` is {cost}; expected a positive amount in USD"),
                ));
            }
            if let Some(f) = fallback
                && table::lookup(f, &spec.models)
                    .and_then(|i| i.prices)
                    .is_none()
            {
                errs.push(at(
                    "fallback_model",
                    format!(
                        "`max_cost_usd` needs priced models, but the fallback model `{f}` has no \
                         price in the model table; add it under `models:` or remove the limit"
                    ),
                ));
            }
            // A misspelt model already has its error (with the same advice).
            let misspelt = errs.iter().any(|e| e.key() == Some("model"));
            if info.and_then(|i| i.prices).is_none() && !misspelt {
                let model = &spec.model;
                // On the `model:` line when the spec has one (else the model came from
                // `--model` and the limit is what the spec says).
                let key = if self.source.lines().any(|l| l.starts_with("model:")) {
                    "model"
                } else {
                    "limits.max_cost_usd"
                };
                let e = at(
                    key,
                    format!(
                        "`max_cost_usd` needs a priced model, but `{model}` has no price in the \
                         model table; add `models: {{\"{model}\": {{input_usd_per_mtok: …, \
                         output_usd_per_mtok: …}}}}` or remove the limit"
                    ),
                );
                errs.push(match super::errors::did_you_mean(model, builtin_names()) {
                    Some(near) => e.with_help(format!(
                        "did you mean `{near}`? A custom model needs its prices under `models:` when a cost limit is set"
                    )),
                    None => e,
                });
            }
        }

        self.check_output(info, &mut errs);
        errs
    }

    /// The checks of the output cap: `max_tokens` against the model's, and the thinking budget
    /// below the cap per request.
    fn check_output(&self, info: Option<table::ModelInfo>, errs: &mut Vec<SpecError>) {
        let spec = &self.spec;
        let at = |key: &str, msg: String| SpecError::at(self, key, msg);
        let cap = info.map(|i| i.max_output_tokens);
        if let Some(max_tokens) = spec.max_tokens {
            if max_tokens == 0 {
                errs.push(at(
                    "max_tokens",
                    "`max_tokens` is 0; expected a positive number of tokens".into(),
                ));
            }
            if let Some(cap) = cap
                && max_tokens > cap
            {
                errs.push(at(
                    "max_tokens",
                    format!(
                        "`max_tokens` is {max_tokens} but model `{}` outputs at most {cap}; \
                         expected {cap} or less",
                        spec.model
                    ),
                ));
            }
        }
        if let Some(budget) = spec.thinking_budget_tokens {
            if budget < MIN_THINKING_BUDGET {
                errs.push(at(
                    "thinking_budget_tokens",
                    format!(
                        "`thinking_budget_tokens` is {budget}; expected at least \
                         {MIN_THINKING_BUDGET} (the API's minimum)"
                    ),
                ));
            }
            let effective = spec
                .max_tokens
                .or(cap.map(|c| c.min(DEFAULT_MAX_TOKENS_CAP)));
            if let Some(max) = effective
                && budget >= max
            {
                errs.push(at(
                    "thinking_budget_tokens",
                    format!(
                        "`thinking_budget_tokens` is {budget} but the output cap per request is \
                         {max}; expected less than that (raise `max_tokens` or lower the budget)"
                    ),
                ));
            }
        }
    }
}
