//! A task given on the command line (`runner exec -p PROMPT`): a one-task spec built from
//! flags and loaded like a spec file, so it gets every check a file does. Its paths are relative
//! to the current directory, and an error in it names the flag the value came from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::errors::SpecError;
use super::load::load_text;
use super::loaded::LoadedSpec;
use super::mcp::McpServerSpec;
use super::types::ProviderKind;

pub use super::loaded::INLINE_PATH;

/// The task name when `--name` is not given.
pub const DEFAULT_INLINE_NAME: &str = "inline";

/// The flags of an inline task.
#[derive(Debug, Clone, Default)]
pub struct InlineTask {
    /// `-p/--prompt`.
    pub prompt: String,
    /// `--name` (default [`DEFAULT_INLINE_NAME`]).
    pub name: Option<String>,
    /// `-C/--cd`: the working directory.
    pub cd: Option<PathBuf>,
    /// `--tools`: the tools offered (default: the spec default).
    pub tools: Option<Vec<String>>,
    /// `--system-prompt`.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`.
    pub append_system_prompt: Option<String>,
    /// `--add-dir`: extra directories the agent may read.
    pub add_dirs: Vec<PathBuf>,
    /// `--output-schema FILE`: structured output against this JSON Schema.
    pub output_schema: Option<PathBuf>,
    /// `--provider` (or the provider inferred by [`infer_provider`]).
    pub provider: Option<ProviderKind>,
    /// `--fallback-model`.
    pub fallback_model: Option<String>,
    /// The servers of `--mcp-config FILE`.
    pub mcp_servers: BTreeMap<String, McpServerSpec>,
}

/// The provider of an inline task without `--provider`, and why: bedrock or vertex when Claude
/// Code's `CLAUDE_CODE_USE_BEDROCK` or `CLAUDE_CODE_USE_VERTEX` is set; else from the model's name
/// (`gpt-*`, `o1*`, `o3*`, `o4*`, `chatgpt-*` → openai; `claude-*` → anthropic), else, for a
/// model named on the command line, openai when only OpenAI's key or endpoint is set. `None`:
/// the spec default (anthropic). `is_set` tells whether an environment variable is set.
pub fn infer_provider(
    model: Option<&str>,
    is_set: impl Fn(&str) -> bool,
) -> Option<(ProviderKind, String)> {
    // Claude Code's switches for its cloud providers.
    for (var, kind) in [
        ("CLAUDE_CODE_USE_BEDROCK", ProviderKind::Bedrock),
        ("CLAUDE_CODE_USE_VERTEX", ProviderKind::Vertex),
    ] {
        if is_set(var) {
            return Some((kind, format!("{var} being set")));
        }
    }
    let model = model?;
    let openai_prefixes = ["gpt-", "o1", "o3", "o4", "chatgpt-"];
    if openai_prefixes.iter().any(|p| model.starts_with(p)) {
        return Some((ProviderKind::Openai, format!("the model name `{model}`")));
    }
    if model.starts_with("claude-") {
        return Some((ProviderKind::Anthropic, format!("the model name `{model}`")));
    }
    let openai = is_set("OPENAI_API_KEY") || is_set("OPENAI_BASE_URL");
    if openai && !is_set("ANTHROPIC_API_KEY") {
        return Some((
            ProviderKind::Openai,
            "OPENAI_API_KEY/OPENAI_BASE_URL being set and ANTHROPIC_API_KEY not".to_string(),
        ));
    }
    None
}

impl InlineTask {
    /// The spec as YAML text, one `key: value` line per flag (each value a JSON flow scalar or
    /// collection, which YAML reads as written), with the flag each line came from.
    fn source(&self) -> (String, Vec<&'static str>) {
        let mut lines: Vec<(&str, Value, &'static str)> = vec![
            (
                "name",
                json!(self.name.as_deref().unwrap_or(DEFAULT_INLINE_NAME)),
                "--name",
            ),
            ("prompt", json!(self.prompt), "--prompt"),
        ];
        if let Some(d) = &self.cd {
            lines.push(("workdir", json!(d.to_string_lossy()), "--cd"));
        }
        if let Some(t) = &self.tools {
            lines.push(("tools", json!(t), "--tools"));
        }
        if let Some(p) = self.provider {
            lines.push(("provider", json!(p.as_str()), "--provider"));
        }
        if let Some(m) = &self.fallback_model {
            lines.push(("fallback_model", json!(m), "--fallback-model"));
        }
        if !self.mcp_servers.is_empty() {
            lines.push(("mcp_servers", json!(self.mcp_servers), "--mcp-config"));
        }
        if let Some(a) = &self.system_prompt {
            lines.push(("system_prompt", json!(a), "--system-prompt"));
        }
        if let Some(a) = &self.append_system_prompt {
            lines.push(("system_prompt_append", json!(a), "--append-system-prompt"));
        }
        if !self.add_dirs.is_empty() {
            let dirs: Vec<_> = self.add_dirs.iter().map(|d| d.to_string_lossy()).collect();
            lines.push(("additional_directories", json!(dirs), "--add-dir"));
        }
        if let Some(s) = &self.output_schema {
            lines.push((
                "output",
                json!({"schema_file": s.to_string_lossy()}),
                "--output-schema",
            ));
        }
        let mut text = String::new();
        let mut flags = Vec::with_capacity(lines.len());
        for (key, value, flag) in lines {
            text.push_str(&format!("{key}: {value}\n"));
            flags.push(flag);
        }
        (text, flags)
    }

    /// Load the task as a spec whose directory is `cwd`. An error names the flag its value came
    /// from.
    pub fn load(&self, cwd: &Path) -> Result<LoadedSpec, SpecError> {
        let (source, flags) = self.source();
        let path = Path::new(INLINE_PATH);
        let attribute = |e: SpecError| {
            let flag = e
                .line
                .and_then(|l| flags.get(l.checked_sub(1)?))
                .copied()
                .unwrap_or("--prompt");
            e.with_flag(flag)
        };
        let mut all = load_text(path, cwd, source).map_err(attribute)?;
        match all.pop() {
            Some(task) if all.is_empty() => Ok(task),
            _ => Err(SpecError::file(path, "an inline task is one task").with_flag("--prompt")),
        }
    }
}

/// The flag of an inline task that sets the spec value at `key` (a key path).
pub fn flag_for_key(key: &str) -> Option<&'static str> {
    let top = key.split(['.', '[']).next().unwrap_or(key);
    Some(match top {
        "name" => "--name",
        "prompt" => "--prompt",
        "workdir" => "--cd",
        "tools" => "--tools",
        "system_prompt" => "--system-prompt",
        "system_prompt_append" => "--append-system-prompt",
        "additional_directories" => "--add-dir",
        "output" => "--output-schema",
        "provider" => "--provider",
        "fallback_model" => "--fallback-model",
        "mcp_servers" => "--mcp-config",
        _ => return None,
    })
}

/// The tool names of a `--tools` value: commas or spaces separate them.
pub fn split_tools(value: &str) -> Vec<String> {
    value
        .split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_spec_from_flags() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let t = InlineTask {
            prompt: "fix \"the\" tests\nplease".into(),
            cd: Some("sub".into()),
            tools: Some(vec!["Read".into(), "Bash".into()]),
            append_system_prompt: Some("be brief".into()),
            ..Default::default()
        };
        let l = t.load(dir.path()).unwrap();
        assert_eq!(l.spec.name, "inline");
        assert_eq!(l.prompt, "fix \"the\" tests\nplease");
        assert_eq!(l.spec.tools, vec!["Read", "Bash"]);
        assert_eq!(l.spec.system_prompt_append.as_deref(), Some("be brief"));
        assert_eq!(
            l.workdir,
            std::fs::canonicalize(dir.path().join("sub")).unwrap()
        );
        assert_eq!(l.path, Path::new(INLINE_PATH));
    }

    #[test]
    fn errors_name_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let t = InlineTask {
            prompt: "hi".into(),
            cd: Some("missing".into()),
            ..Default::default()
        };
        let e = t.load(dir.path()).unwrap_err();
        assert_eq!(e.flag(), Some("--cd"));
        assert!(e.to_string().starts_with("--cd: workdir missing"), "{e}");
        let t = InlineTask {
            prompt: "hi".into(),
            name: Some("a b".into()),
            ..Default::default()
        };
        let e = t.load(dir.path()).unwrap_err();
        assert!(e.to_string().starts_with("--name: `name` \"a b\""), "{e}");
        let t = InlineTask {
            prompt: " ".into(),
            ..Default::default()
        };
        assert!(
            t.load(dir.path())
                .unwrap_err()
                .to_string()
                .starts_with("--prompt: ")
        );
    }

    #[test]
    fn infers_the_provider() {
        let none = |_: &str| false;
        let openai_only = |v: &str| v == "OPENAI_API_KEY";
        let infer = |m, f: &dyn Fn(&str) -> bool| infer_provider(m, f).map(|(p, _)| p);
        assert_eq!(infer(Some("gpt-4o"), &none), Some(ProviderKind::Openai));
        assert_eq!(infer(Some("o3-mini"), &none), Some(ProviderKind::Openai));
        assert_eq!(
            infer(Some("claude-haiku-4-5"), &openai_only),
            Some(ProviderKind::Anthropic)
        );
        assert_eq!(
            infer(Some("llama3"), &openai_only),
            Some(ProviderKind::Openai)
        );
        assert_eq!(infer(Some("llama3"), &none), None);
        assert_eq!(infer(None, &openai_only), None);
        let bedrock = |v: &str| v == "CLAUDE_CODE_USE_BEDROCK";
        assert_eq!(infer(None, &bedrock), Some(ProviderKind::Bedrock));
        assert_eq!(
            infer(Some("claude-haiku-4-5"), &bedrock),
            Some(ProviderKind::Bedrock)
        );
        let vertex = |v: &str| v == "CLAUDE_CODE_USE_VERTEX";
        assert_eq!(infer(Some("claude-x"), &vertex), Some(ProviderKind::Vertex));
    }

    #[test]
    fn splits_tools() {
        assert_eq!(split_tools("Read, Bash Edit"), vec!["Read", "Bash", "Edit"]);
    }
}
