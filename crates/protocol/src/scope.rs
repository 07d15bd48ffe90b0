//! The scope an allowed call runs with: decided by the policy, enforced by the sandbox.

/// What an allowed call may do when it runs: the sandbox confines a command to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Scope {
    /// Read only: every command it runs was allowed as read-only, by no rule or mode.
    #[default]
    ReadOnly,
    /// Write in the workspace: a rule, the permission mode or a hook allowed it.
    Write,
}
