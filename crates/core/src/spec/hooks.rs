//! Hook configuration in Claude Code's settings shape:
//! `{EVENT: [{matcher, hooks: [{type: command, command, args, timeout, if}]}]}`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Events runner fires hooks for.
pub(crate) const SUPPORTED_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "UserPromptSubmit",
    "SessionStart",
    "SessionEnd",
];

/// Hooks by event name (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `Stop`,
/// `UserPromptSubmit`, `SessionStart`, `SessionEnd`), each a list of matcher groups.
pub(crate) type HooksConfig = BTreeMap<String, Vec<MatcherGroup>>;

/// Hooks that run for the tools a matcher selects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatcherGroup {
    /// For tool events, tool names (for `SessionStart` the source, `startup`; for `SessionEnd`
    /// the reason, `other`; ignored for `Stop` and `UserPromptSubmit`): omitted, `""` or `"*"` = every tool; only letters, digits, `_`, `-`, spaces,
    /// `,` and `|` = an exact list (`Edit|Write`); anything else = an unanchored regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// The handlers.
    pub hooks: Vec<HookHandler>,
}

/// One handler. Only `type: command` is supported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookHandler {
    /// Handler type; must be `command`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Shell command (run with `bash -c`), or the program when `args` is given.
    pub command: String,
    /// Arguments: exec form, no shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Seconds before the hook is killed (with its process group); default 600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// One permission rule (`Bash(rm *)`): run the hook only for calls it matches.
    #[serde(default, rename = "if", skip_serializing_if = "Option::is_none")]
    pub if_rule: Option<String>,
    /// runner extension: the hook's working directory (relative to the workdir, absolute, or
    /// `$CLAUDE_PROJECT_DIR/…`). By default a hook runs in an empty directory outside the
    /// workdir, so it loads no code the pull request can change; a directory inside the
    /// workdir makes it workdir code (it needs `trusted: true` and gets no secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// runner extension: names of secrets (environment variables otherwise scrubbed from hook
    /// environments) this hook receives. Only the spec or a settings file it names can set it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_passthrough: Vec<String>,
    /// runner extension: the hook runs a file inside the workdir (a script the agent or the
    /// pull request can change) and that is intended. Without it such a hook is refused at
    /// load; with it the hook still gets no `env_passthrough` secret and the script is
    /// protected from the agent's writes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trusted: bool,
    /// Shown in Claude Code's UI; accepted and ignored.
    #[serde(
        default,
        rename = "statusMessage",
        skip_serializing_if = "Option::is_none"
    )]
    pub status_message: Option<String>,
}
