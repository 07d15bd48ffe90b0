//! The task's integrity guard ([`crate::integrity`]) as the session uses it: made before the
//! task's first command, its changes recorded as `runner_integrity` events as they are found
//! (each stops the task), and any change at all ending the task `denied`.

use std::path::Path;
use std::sync::Arc;

use crate::agent::{StopCause, Stopper};
use crate::events::{RunEvent, Sinks, new_uuid};
use crate::integrity::{Integrity, IntegrityChange};
use crate::outcome::{Outcome, OutcomeKind};
use crate::permissions::{Access, Policy, ToolCall};
use crate::roots::SessionRoots;

/// Fingerprint the task's watched files. A change later counts as allowed when `policy` would
/// allow the Write tool to write that path (for these protected paths: an allow rule names
/// it). A fingerprint that cannot be taken keeps the task from running.
pub(super) fn start(
    workdir: &Path,
    policy: &Policy,
    roots: &Arc<SessionRoots>,
) -> Result<Arc<Integrity>, Outcome> {
    let policy = policy.clone();
    let roots = roots.clone();
    let allow = Box::new(move |path: &Path| {
        let access = Access::Write(vec![path.to_path_buf()]);
        let call = ToolCall {
            tool: "Write",
            access: &access,
            cwd: &roots.workdir,
        };
        policy.decide(&call, &roots).is_allow()
    });
    Integrity::new(workdir, allow).map(Arc::new).map_err(|e| {
        Outcome::new(
            OutcomeKind::AgentError,
            format!("the integrity check of the files that steer git and CI cannot start: {e}"),
        )
    })
}

/// Record each change `guard` finds as a `runner_integrity` event on `sinks` and stop the task
/// (those found before this call too).
pub(super) fn report_to(guard: &Integrity, sinks: Sinks, stopper: Stopper) {
    guard.on_change(Box::new(move |change| {
        let event = RunEvent::Integrity {
            uuid: new_uuid(),
            change: change.clone(),
        };
        if let Err(e) = sinks.emit(&event) {
            tracing::error!("writing run output failed: {e}");
        }
        stopper.stop(StopCause::Integrity);
    }));
}

/// The `denied` outcome of a task whose commands changed watched files, or `None`.
pub(super) fn outcome(changes: &[IntegrityChange]) -> Option<Outcome> {
    let first = changes.first()?;
    let undone = changes.iter().all(|c| c.restored);
    Some(Outcome::new(
        OutcomeKind::Denied,
        format!(
            "runner_integrity: {} change(s) to files that steer git and CI (git hooks and configuration, .gitmodules, .gitattributes, workflows) that no permission rule allows{}. The first: {}",
            changes.len(),
            if undone {
                ", undone"
            } else {
                "; NOT all could be undone: inspect the repository before any further git command"
            },
            first.message()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_change_is_denied_and_says_whether_it_was_undone() {
        assert!(outcome(&[]).is_none());
        let mut c = IntegrityChange {
            path: "/r/.git/hooks/pre-commit".into(),
            change: "added".into(),
            detail: "a file of 3 bytes, mode 755".into(),
            after: "Bash call t1 (`npm test`)".into(),
            restored: true,
            error: None,
        };
        let o = outcome(std::slice::from_ref(&c)).unwrap();
        assert_eq!(o.kind, OutcomeKind::Denied);
        assert_eq!(o.exit_code(), 5);
        assert!(
            o.message.contains(".git/hooks/pre-commit added"),
            "{}",
            o.message
        );
        assert!(o.message.contains("undone") && !o.message.contains("NOT"));
        c.restored = false;
        let o = outcome(&[c]).unwrap();
        assert!(
            o.message.contains("NOT all could be undone"),
            "{}",
            o.message
        );
    }
}
