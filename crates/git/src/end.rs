//! Ending a task's git work: its changes recorded (patch, counts, branch commit) and its
//! worktree given back, or kept for resume after an interrupt.

use std::path::Path;

use super::patch::{self, GitSummary};
use super::task::{Ending, GitTask};
use super::{GitError, objects, slot};

/// End a task: diff its end state against the base, write `PATCH_DIR/<task>.patch`, commit on
/// the branch on success, then give the worktree back unless the task was interrupted (then
/// it is kept for resume). On error the worktree is still given back (unless interrupted) and
/// the summary so far is returned with it.
pub fn finish(task: GitTask, end: Ending<'_>) -> (GitSummary, Option<GitError>) {
    let mut summary = GitSummary {
        isolated: task.worktree.is_some(),
        base_commit: task.base_commit.to_string(),
        ..Default::default()
    };
    let err = objects::reread("record the task's changes", || {
        summary.files.clear();
        patch::record_changes(&task, end, &mut summary)
    })
    .err()
    .map(|e| task.explain(e));
    if end.interrupted {
        summary.worktree = task.worktree_path().map(Path::to_path_buf);
    }
    if task.worktree.is_none() {
        // A task resumed in a kept overlay worktree ran there in place: unmount it again.
        slot::release_reattached(&task.repo_root);
    }
    task.end_worktree(end.interrupted);
    (summary, err)
}

/// Give back the worktree of a task that never started (the batch was interrupted while it
/// was being set up): nothing to record.
pub fn abandon(task: GitTask) {
    if task.worktree.is_none() {
        slot::release_reattached(&task.repo_root);
    }
    task.end_worktree(false);
}
