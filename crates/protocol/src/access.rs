//! What a tool call touches. The permission policy decides on this, not on tool names: a new
//! tool that reads files is decided like Read, one that runs a command like Bash.

use std::path::PathBuf;

/// What one tool call touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Reads these paths (absolute, lexically normalized): a file, or a directory a search
    /// walks.
    Read(Vec<PathBuf>),
    /// Writes (creates or changes) these files (absolute, lexically normalized).
    Write(Vec<PathBuf>),
    /// Runs this shell command; the policy analyses it.
    Exec(String),
    /// Touches what runner cannot see (a tool served by another program): decided by the
    /// rules that name the tool.
    Other,
    /// Changes only runner's own state (a todo list, the structured output): always allowed,
    /// and no hooks run for it.
    Internal,
}
