//! The git work of a resumed task whose run recorded its base ([`super::record`]): the task
//! goes on against the base it started from, held again, in the worktree it started in, so
//! that when it ends its patch and branch commit hold its whole change — what it did before
//! the interruption and after — not only what the resumed run did.

use std::path::Path;

use git2::Oid;

use super::objects::lost;
use super::record::{BASE_FILE, BaseRecord, RecordedWorktree};
use super::task::{GitTask, Worktree};
use super::{GitError, GitPlan, git_err, hold};

/// Take a resumed task's recorded base and worktree back. `workdir`: where it works (the
/// recorded worktree, mounted again if it was an overlay, or the recorded workdir).
pub(super) fn begin(
    plan: &GitPlan,
    recorded: &BaseRecord,
    workdir: &Path,
) -> Result<GitTask, GitError> {
    let root = &recorded.repo_root;
    let repo =
        super::pinned::open_root(root).map_err(git_err(format!("open {}", root.display())))?;
    let parse = |hex: &str, what: &str| {
        Oid::from_str(hex).map_err(git_err(format!("read the {what} in {BASE_FILE}")))
    };
    let base_commit = parse(&recorded.base_commit, "base commit")?;
    let base_tree = parse(&recorded.base_tree, "base tree")?;
    // The run's hold kept the base; it is written again in case it was deleted since.
    let what = format!("resume from the base the task started from (recorded in {BASE_FILE})",);
    let commit = repo
        .find_commit(base_commit)
        .map_err(|_| lost(what.as_str(), base_commit))?;
    if commit.tree_id() == base_tree {
        hold::hold(&repo, &recorded.hold, base_commit)?;
    } else {
        hold::hold_tree(&repo, &recorded.hold, base_tree, Some(commit.tree_id())).map_err(|e| {
            match e {
                GitError::Lost { object, .. } => GitError::Lost {
                    what: what.clone(),
                    object,
                },
                other => other,
            }
        })?;
    }
    let worktree = recorded.worktree.as_ref().map(|w| match w {
        RecordedWorktree::Own { name, path } => Worktree::Own {
            name: name.clone(),
            path: path.clone(),
        },
        RecordedWorktree::Overlay { path, upper } => Worktree::Kept {
            path: path.clone(),
            upper: Some(upper.clone()),
        },
        RecordedWorktree::Checkout { path } => Worktree::Kept {
            path: path.clone(),
            upper: None,
        },
    });
    tracing::info!(
        base_commit = %base_commit,
        patch_dir = %plan.patch_dir.display(),
        "resumed task: its changes are measured from the base it started from"
    );
    Ok(GitTask {
        plan: plan.clone(),
        repo_root: root.clone(),
        base_commit,
        base_tree,
        base_hold: recorded.hold.clone(),
        worktree,
        workdir: workdir.to_path_buf(),
    })
}
