//! A worktree of a task's own, registered in the repository like `git worktree add --detach`
//! makes one, checked out under the task's output directory: what an isolated task gets when
//! it is not part of a batch with a worktree pool.

use std::path::Path;

use git2::{Oid, Repository, WorktreeAddOptions, WorktreePruneOptions};

use super::objects::retry;
use super::repo::REPO_LOCK;
use super::{GitError, git_err, refs};

/// `git worktree add --detach PATH COMMIT`. libgit2 always checks a worktree out on a branch,
/// so a temporary branch is made, the worktree's HEAD detached, and the branch deleted.
pub(crate) fn add(repo: &Repository, name: &str, path: &Path, commit: Oid) -> Result<(), GitError> {
    let _guard = REPO_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let what = || format!("create the worktree {}", path.display());
    let c = repo.find_commit(commit).map_err(git_err(what()))?;
    let tmp = format!("runner-tmp/{name}");
    let branch = retry(&what(), || repo.branch(&tmp, &c, true)).map_err(git_err(what()))?;
    let result = (|| {
        let mut opts = WorktreeAddOptions::new();
        opts.reference(Some(branch.get()));
        let wt = repo.worktree(name, path, Some(&opts))?;
        Repository::open_from_worktree(&wt)?.set_head_detached(commit)
    })();
    // Not libgit2's delete: see `refs`.
    let deleted = refs::delete(repo, &format!("refs/heads/{tmp}"));
    result.map_err(git_err(what()))?;
    deleted
}

/// Remove the worktree `name` at `path` of the repository at `repo_root`, and its
/// administrative files (logged, never fatal).
pub(crate) fn remove(repo_root: &Path, name: &str, path: &Path) {
    let _guard = REPO_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let r = super::pinned::open_root(repo_root)
        .and_then(|repo| repo.find_worktree(name))
        .and_then(|wt| {
            wt.prune(Some(
                WorktreePruneOptions::new()
                    .valid(true)
                    .locked(false)
                    // The working tree goes below, by its recorded path: not by the path the
                    // administrative directory names now.
                    .working_tree(false),
            ))
        });
    if let Err(e) = r {
        tracing::warn!(worktree = %path.display(), "cannot remove the worktree: {e}");
    }
    if path.exists()
        && let Err(e) = std::fs::remove_dir_all(path)
    {
        tracing::warn!(worktree = %path.display(), "cannot remove the worktree directory: {e}");
    }
}
