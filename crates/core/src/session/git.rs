//! The task's git isolation as a guard: created before anything of the task runs, finished
//! exactly once on every exit path ([`GitGuard::finish`]), so a worktree is never left behind
//! by a task that failed to start.

use std::path::Path;

use crate::agent::{StopCause, Stopper};
use crate::events::RunResult;
use crate::git::{GitError, GitTask};
use crate::outcome::{Outcome, OutcomeKind};
use crate::prepare::PreparedTask;

/// The task's git state (none outside git or when the spec leaves git alone).
#[derive(Default)]
pub(crate) struct GitGuard(Option<GitTask>);

impl GitGuard {
    /// Snapshot the task's git base and, when it is isolated, create its worktree. A signal
    /// meanwhile (`stopper`) ends the wait at once: the task is `not_started`, and a worktree
    /// still being made is given back as soon as it is there. Any other failure is the task's
    /// `agent_error`.
    pub(crate) async fn start(
        task: &PreparedTask,
        session_id: &str,
        run_dir: &Path,
        stopper: &Stopper,
    ) -> Result<GitGuard, Outcome> {
        if task.git.repo_root.is_none() {
            return Ok(GitGuard(None));
        }
        let plan = task.git.clone();
        let name = task.loaded.spec.name.clone();
        let sid = session_id.to_string();
        let workdir = task.loaded.workdir.clone();
        let run_dir = run_dir.to_path_buf();
        let (done, mut begun) = tokio::sync::oneshot::channel();
        tokio::task::spawn_blocking(crate::log::carried(move || {
            let r = crate::git::begin(&plan, &name, &sid, &workdir, &run_dir);
            // Nobody waits for it any more: the worktree goes back at once.
            if let Err(Ok(Some(task))) = done.send(r) {
                crate::git::abandon(task);
            }
        }));
        let agent_error = |m: String| Outcome::new(OutcomeKind::AgentError, m);
        let r = tokio::select! {
            biased;
            r = &mut begun => r.map_err(|e| agent_error(format!("git setup failed: {e}")))?,
            _ = stopper.token().cancelled() => {
                begun.close();
                if let Ok(Ok(Some(task))) = begun.try_recv() {
                    tokio::task::spawn_blocking(crate::log::carried(move || {
                        crate::git::abandon(task)
                    }));
                }
                return Err(not_started(stopper));
            }
        };
        match r {
            Ok(task) => Ok(GitGuard(task)),
            Err(GitError::Cancelled) => Err(not_started(stopper)),
            Err(e) => Err(agent_error(e.to_string())),
        }
    }

    /// The task's git state, if any.
    pub(crate) fn task(&self) -> Option<&GitTask> {
        self.0.as_ref()
    }

    /// Record the task's changes (patch, branch commit), remove its worktree unless it was
    /// interrupted, and apply `git.require_changes` to the outcome. A task that failed before
    /// the agent started still gets its (empty) patch and loses its worktree.
    pub(crate) async fn finish(self, result: &mut RunResult) {
        let Some(g) = self.0 else {
            return;
        };
        let require_changes = g.requires_changes();
        let name = result.task_name.clone();
        let sid = result.session_id.clone();
        let success = result.outcome.kind == OutcomeKind::Success;
        let interrupted = result.outcome.kind == OutcomeKind::Interrupted;
        // Its patch and commit lines belong to the task's log (its `::group::` in Actions).
        let joined = tokio::task::spawn_blocking(crate::log::carried(move || {
            let end = crate::git::Ending {
                task: &name,
                session_id: &sid,
                success,
                interrupted,
            };
            crate::git::finish(g, end)
        }))
        .await;
        let (summary, err) = match joined {
            Ok(r) => r,
            Err(e) => {
                tracing::error!("git finish failed: {e}");
                return;
            }
        };
        if let Some(e) = err {
            tracing::error!(task = %result.task_name, "{e}");
            if result.outcome.kind == OutcomeKind::Success {
                result.outcome = Outcome::new(OutcomeKind::AgentError, e.to_string());
            }
        }
        if let Some(wt) = &summary.worktree {
            tracing::warn!(task = %result.task_name, worktree = %wt.display(), "worktree kept for resume");
        }
        if require_changes && !summary.changed && result.outcome.kind == OutcomeKind::Success {
            let check = crate::verify::require_changes_check(&summary);
            result.outcome = Outcome::new(
                OutcomeKind::ChecksFailed,
                format!("{}: {}", check.name, check.output),
            );
            result.checks.push(check);
        }
        result.git = Some(summary);
    }
}

/// The outcome of a task stopped before it started (by the batch's first signal).
pub(crate) fn not_started(stopper: &Stopper) -> Outcome {
    match stopper.cause() {
        Some(StopCause::Signal(sig)) => Outcome::not_started(sig),
        _ => Outcome::not_started(2),
    }
}
