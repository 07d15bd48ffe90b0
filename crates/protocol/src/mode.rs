//! The permission modes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Permission mode (Claude Code's names). With no human to ask, "would prompt" means deny.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PermissionMode {
    /// Same as dontAsk: reads need no rule, everything else needs an allow rule.
    #[serde(rename = "default")]
    Default,
    /// dontAsk plus file edits inside the workdir.
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    /// Reads and read-only commands only.
    #[serde(rename = "plan")]
    Plan,
    /// Reads inside the workspace and read-only Bash need no rule; everything else needs an allow rule.
    #[default]
    #[serde(rename = "dontAsk")]
    DontAsk,
    /// Everything runs except what a deny rule or a safety check blocks.
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
}

impl PermissionMode {
    /// The spec's spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }

    /// Parse the spec/CLI spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "default" => PermissionMode::Default,
            "acceptEdits" => PermissionMode::AcceptEdits,
            "plan" => PermissionMode::Plan,
            "dontAsk" => PermissionMode::DontAsk,
            "bypassPermissions" => PermissionMode::BypassPermissions,
            _ => return None,
        })
    }
}
