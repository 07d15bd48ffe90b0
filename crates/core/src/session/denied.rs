//! No success for work the policy prevented: a task that tried to change files, had every such
//! attempt denied and changed nothing ends `denied` (exit 5), whether or not it sets
//! `permissions.fail_on_denial`. The model may well say "done" after its edits were refused;
//! a nightly job must not go green for it.
//!
//! A task that was denied something and still changed files keeps the ordinary rule (success,
//! or `denied` with `fail_on_denial`), and so does a task that never tried to write (a review
//! whose Bash command was denied).

use std::collections::HashSet;

use crate::events::RunResult;
use crate::model::{ContentBlock, Message, Role};
use crate::outcome::{Outcome, OutcomeKind};

/// Tools every call of which writes a file.
const FILE_TOOLS: &[&str] = &["Edit", "Write", "NotebookEdit", "MultiEdit"];

/// The `denied` outcome for a successful `result` whose every attempted file write was denied
/// and which changed nothing, or `None`. `messages` is the conversation (its tool calls tell
/// which file-tool calls were allowed).
pub(super) fn every_write_denied(result: &RunResult, messages: &[Message]) -> Option<Outcome> {
    if result.outcome.kind != OutcomeKind::Success {
        return None;
    }
    let is_file_tool = |name: &str| FILE_TOOLS.contains(&name);
    let writes: Vec<_> = result
        .permission_denials
        .iter()
        .filter(|d| d.write || is_file_tool(&d.tool_name))
        .collect();
    let first = writes.first()?;
    let denied: HashSet<&str> = result
        .permission_denials
        .iter()
        .map(|d| d.tool_use_id.as_str())
        .collect();
    let allowed_file_calls = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.content.iter())
        .filter(|b| {
            matches!(b, ContentBlock::ToolUse { id, name, .. }
                if is_file_tool(name) && !denied.contains(id.as_str()))
        })
        .count();
    if allowed_file_calls > 0 {
        return None;
    }
    // Git measures the change exactly; without it, any command that ran may have written.
    let changed = match &result.git {
        Some(g) => g.changed,
        None => !result.commands.is_empty(),
    };
    if changed {
        return None;
    }
    Some(Outcome::new(
        OutcomeKind::Denied,
        format!(
            "the task changed nothing: every file write it attempted was denied ({} in all). The first: {} Allow the writes the task needs (the denial says how).",
            writes.len(),
            first.reason
        ),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::events::Denial;

    fn call(id: &str, name: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: name.into(),
                input: json!({}),
            }],
            id: None,
        }
    }

    fn denial(id: &str, tool: &str, write: bool) -> Denial {
        Denial {
            uuid: String::new(),
            tool_name: tool.into(),
            tool_use_id: id.into(),
            tool_input: json!({}),
            reason: format!("{tool} denied"),
            write,
        }
    }

    fn result(denials: Vec<Denial>, changed: Option<bool>) -> RunResult {
        let mut r = crate::contract::fixtures::result(Outcome::new(OutcomeKind::Success, ""));
        r.permission_denials = denials;
        r.commands.clear();
        r.git = changed.map(|changed| crate::git::GitSummary {
            changed,
            ..Default::default()
        });
        r
    }

    #[test]
    fn every_write_denied_and_nothing_changed_is_denied() {
        let msgs = vec![call("a", "Bash"), call("b", "Edit")];
        let r = result(vec![denial("b", "Edit", true)], Some(false));
        let o = every_write_denied(&r, &msgs).unwrap();
        assert_eq!(o.kind, OutcomeKind::Denied);
        assert!(o.message.contains("Edit denied"), "{}", o.message);
        // A Bash redirection the policy refused counts as a write.
        let msgs = vec![call("c", "Bash")];
        let r = result(vec![denial("c", "Bash", true)], Some(false));
        assert!(every_write_denied(&r, &msgs).is_some());
        // Without git, nothing ran and no file tool was allowed: nothing changed.
        let msgs = vec![call("b", "Write")];
        let r = result(vec![denial("b", "Write", false)], None);
        assert!(every_write_denied(&r, &msgs).is_some());
    }

    #[test]
    fn work_done_or_never_attempted_keeps_success() {
        // Some edit was allowed.
        let msgs = vec![call("a", "Edit"), call("b", "Edit")];
        let r = result(vec![denial("b", "Edit", true)], Some(false));
        assert!(every_write_denied(&r, &msgs).is_none());
        // The task changed files (through an allowed command).
        let msgs = vec![call("b", "Edit")];
        let r = result(vec![denial("b", "Edit", true)], Some(true));
        assert!(every_write_denied(&r, &msgs).is_none());
        // Only a read-only command was denied: a review that never tried to write.
        let msgs = vec![call("c", "Bash")];
        let r = result(vec![denial("c", "Bash", false)], Some(false));
        assert!(every_write_denied(&r, &msgs).is_none());
        // No denial at all.
        let r = result(vec![], Some(false));
        assert!(every_write_denied(&r, &[]).is_none());
        // Not a success: the outcome it has says more.
        let mut r = result(vec![denial("b", "Edit", true)], Some(false));
        r.outcome = Outcome::new(OutcomeKind::MaxTurns, "max turns");
        assert!(every_write_denied(&r, &[call("b", "Edit")]).is_none());
    }
}
