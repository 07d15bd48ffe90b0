//! The spec's `mcp_servers:` section: MCP servers runner starts for a task, over stdio, and
//! whose tools it offers as `mcp__<server>__<tool>`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::duration::SpecDuration;

/// How long a server may take to start and answer the MCP handshake and the tool list, when
/// the spec gives no `startup_timeout`.
pub const DEFAULT_STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// How long one tool call may take, when the spec gives no `tool_timeout`.
pub const DEFAULT_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// One MCP server: a program speaking the Model Context Protocol on its stdin and stdout.
///
/// It starts inside the task's sandbox like a command allowed to write (its network is the
/// task's `sandbox.network`), with a minimal environment plus the variables `env` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerSpec {
    /// The program (looked up on `PATH` when it has no `/`), e.g. `npx`.
    pub command: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables set for the server; `${VAR}` in a value is replaced by runner's own `VAR`
    /// (a variable that is not set fails the server's start). Only these and a minimal base
    /// (`PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `LANG`, `LC_ALL`, `TZ`, `TERM`) reach it;
    /// the variables named in `${…}` are treated as secrets (redacted, removed from commands).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The server's working directory (relative to the workdir, absolute, or
    /// `$CLAUDE_PROJECT_DIR/…`). By default it runs in an empty directory outside the workdir,
    /// so it loads no code the pull request can change; a directory inside the workdir makes
    /// it workdir code, which may not receive a `${…}` secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Most time from start to the tool list (default 30s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout: Option<SpecDuration>,
    /// Most time one tool call may take (default 2m); a call that takes longer is a tool error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout: Option<SpecDuration>,
    /// A server that fails to start fails the task (default false: it is reported and its
    /// tools are not offered).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

impl McpServerSpec {
    /// The startup timeout in effect.
    pub fn startup_timeout(&self) -> std::time::Duration {
        self.startup_timeout
            .map_or(DEFAULT_STARTUP_TIMEOUT, |d| d.0)
    }

    /// The tool call timeout in effect.
    pub fn tool_timeout(&self) -> std::time::Duration {
        self.tool_timeout.map_or(DEFAULT_TOOL_TIMEOUT, |d| d.0)
    }

    /// The names of runner's variables the `env` values refer to with `${VAR}`.
    pub fn referenced_vars(&self) -> Vec<String> {
        let mut out = Vec::new();
        for v in self.env.values() {
            if let Ok(parts) = parse_template(v) {
                for p in parts {
                    if let Part::Var(name) = p
                        && !out.iter().any(|n| n == name)
                    {
                        out.push(name.to_string());
                    }
                }
            }
        }
        out
    }
}

/// A piece of an `env` value: literal text or a `${VAR}` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part<'a> {
    /// Literal text (`$$` stands for one `$`).
    Text(std::borrow::Cow<'a, str>),
    /// `${NAME}`.
    Var(&'a str),
}

/// Split an `env` value into text and `${VAR}` references. `$$` is a literal `$`; any other
/// `$` must start a well-formed `${NAME}` with NAME of letters, digits and `_`, not starting
/// with a digit.
pub fn parse_template(value: &str) -> Result<Vec<Part<'_>>, String> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        text.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('$') {
            text.push('$');
            rest = r;
            continue;
        }
        let Some(body) = after.strip_prefix('{') else {
            return Err(format!(
                "`$` must start `${{NAME}}` (write `$$` for a literal `$`) in `{value}`"
            ));
        };
        let Some(end) = body.find('}') else {
            return Err(format!("unclosed `${{` in `{value}`"));
        };
        let name = &body[..end];
        if !is_var_name(name) {
            return Err(format!(
                "`${{{name}}}` in `{value}` is not a variable name (letters, digits and `_`, not starting with a digit)"
            ));
        }
        if !text.is_empty() {
            out.push(Part::Text(std::mem::take(&mut text).into()));
        }
        out.push(Part::Var(name));
        rest = &body[end + 1..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        out.push(Part::Text(text.into()));
    }
    Ok(out)
}

/// Whether `s` is an environment variable name runner accepts.
pub fn is_var_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `s` is a server name: letters, digits, `-` and `_`, without `__` (the separator of
/// `mcp__<server>__<tool>`), at most 32 characters.
pub fn is_server_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 32
        && !s.contains("__")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_split_into_text_and_variables() {
        assert_eq!(
            parse_template("Bearer ${GH_TOKEN}!").unwrap(),
            vec![
                Part::Text("Bearer ".into()),
                Part::Var("GH_TOKEN"),
                Part::Text("!".into())
            ]
        );
        assert_eq!(
            parse_template("a$$b").unwrap(),
            vec![Part::Text("a$b".into())]
        );
        for bad in ["$X", "${", "${1A}", "${A-B}", "x$"] {
            assert!(parse_template(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn server_names() {
        assert!(is_server_name("github"));
        assert!(is_server_name("my-fs_2"));
        for bad in ["", "a__b", "a.b", "a b", &"x".repeat(33)] {
            assert!(!is_server_name(bad), "{bad}");
        }
    }

    #[test]
    fn referenced_variables_are_listed_once() {
        let s: McpServerSpec =
            yaml_serde::from_str("command: x\nenv: {A: '${T}', B: 'x${T}${U}'}").unwrap();
        assert_eq!(s.referenced_vars(), ["T", "U"]);
    }
}
