//! Permission policy: modes, allow/deny rules and the decision for one tool call.
//! (Implemented by the permissions work.)
//! TEMP STUB (lead): replaced by the perms branch.
#![allow(missing_docs)]
use crate::session::SessionRoots;
use crate::spec::PermissionMode;
use std::path::Path;
#[derive(Debug, thiserror::Error)]
#[error("invalid rule")]
pub struct RuleError;
pub struct Policy;
pub struct ToolCall<'a> {
    pub tool: &'a str,
    pub input: &'a serde_json::Value,
    pub cwd: &'a Path,
}
pub enum Decision {
    Allow { reason: String },
    Deny { reason: String },
}
impl Policy {
    pub fn new(_m: PermissionMode, _a: &[String], _d: &[String]) -> Result<Policy, RuleError> {
        Ok(Policy)
    }
    pub fn decide(&self, _c: &ToolCall<'_>, _r: &SessionRoots) -> Decision {
        Decision::Deny {
            reason: String::new(),
        }
    }
    pub fn removed_tools(&self) -> Vec<String> {
        vec![]
    }
    pub fn mode(&self) -> PermissionMode {
        PermissionMode::DontAsk
    }
}
