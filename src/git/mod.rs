//! git for task runs (git2): per-task worktrees, patches, branch commits, change detection.
//!
//! Before any task starts, [`plan()`] decides for each task whether it runs isolated (in a
//! worktree, checked out from the base commit) or in place, and refuses a dirty working tree
//! for isolated tasks with `base: head`. [`begin`] snapshots the base and gets the worktree;
//! [`finish`] diffs the end state against the base, writes the patch file, commits on the
//! task's branch on success and gives the worktree back (kept after an interrupt so the run
//! can be resumed there).
//!
//! - `plan`: [`plan()`] and [`Planner`]; `task`: [`begin`] and [`finish`]; `patch`: the patch,
//!   counts and branch commit;
//! - `record`: the base a task started from, written to its output directory; `resumed`: a
//!   resumed task going on from that base, in its kept worktree;
//! - `objects`, `hold` and `refs`: runner's own writes to the object store and references,
//!   made to hold up while `git gc` runs beside them (lock failures tried again, temporary
//!   references under `refs/runner/hold/` for what nothing else reaches, a check after each
//!   reference is written, deletion that takes no other reference with it);
//! - `snapshot`: snapshots of the repository's own working tree; `changes`: end states as
//!   trees, from what changed;
//! - `worktree`: a worktree of a task's own (a task run alone);
//! - [`source`]: worktrees handed out by a batch's [`pool`], which makes
//!   them with `slot` (pooled worktrees and templates), `checkout`, `overlay` and `admin`
//!   (a worktree's own git directory), and cleans up after killed batches with `sweep`.
//!
//! Snapshots are trees made as `git add -A` would, without touching the index file, so
//! untracked files count as changes, ignored files (and runner's own output directories)
//! never do, and nothing in the user's index or HEAD moves.

mod admin;
mod changes;
pub(crate) mod checkout;
mod hold;
mod objects;
pub(crate) mod overlay;
mod patch;
mod plan;
pub mod pool;
mod record;
mod refs;
mod resumed;
pub(crate) mod slot;
mod snapshot;
pub mod source;
pub(crate) mod sweep;
mod task;
mod tree_delta;
mod worktree;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use patch::{FileChange, GitSummary};
pub use plan::{GitPlan, Planner, absolute, dirty_paths, plan, repo_root_of, resumed_plan};
pub use record::{BASE_FILE, BaseRecord, RecordedWorktree, read as read_base};
pub use slot::reattach;
pub use source::{Lease, LeaseKind, WorktreeSource};
pub use task::{Ending, GitTask, abandon, begin, finish};

use crate::spec::SpecError;

/// Serializes operations that change shared repository state (worktree admin files, refs)
/// between tasks running at once.
static REPO_LOCK: Mutex<()> = Mutex::new(());

/// Most dirty paths named in the error for a dirty working tree.
pub(crate) const DIRTY_PATHS_SHOWN: usize = 5;

/// A git failure, naming what runner was doing.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// A spec setting cannot be honoured (exit 2, nothing runs).
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// Isolated tasks with `base: head` need committed work.
    #[error(
        "{spec}: the working tree of {repo} has uncommitted changes ({paths}); isolated tasks start from the HEAD commit and would not see them. Commit or stash them, or set `git.base: working-tree` to start from the working tree as it is"
    )]
    Dirty {
        /// Spec path.
        spec: String,
        /// Repository root.
        repo: String,
        /// Some of the changed paths.
        paths: String,
    },
    /// A libgit2 operation failed.
    #[error("git: cannot {what}: {source}")]
    Git {
        /// What runner was doing.
        what: String,
        /// The libgit2 error.
        source: git2::Error,
    },
    /// An object runner wrote cannot be read back: something removed it before a reference
    /// held it.
    #[error(
        "git: {what}: object {object} is gone from the repository; a concurrent `git gc --prune` (or `git prune`) may have removed it before a reference held it. Run the task again, and do not prune the repository while runner works in it"
    )]
    Lost {
        /// What holds (or was to hold) the object: a branch, a hold reference.
        what: String,
        /// The missing object (hex).
        object: String,
    },
    /// A file operation failed.
    #[error("cannot {what}: {source}")]
    Io {
        /// What runner was doing.
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The batch was interrupted while the task's worktree was being made: it was abandoned.
    #[error("the batch was interrupted before the task's worktree was ready")]
    Cancelled,
}

pub(crate) fn git_err(what: impl Into<String>) -> impl FnOnce(git2::Error) -> GitError {
    let what = what.into();
    move |source| GitError::Git { what, source }
}

pub(crate) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> GitError {
    let what = what.into();
    move |source| GitError::Io { what, source }
}

/// `exclude` (absolute) as paths relative to `root`, for those inside it.
pub(crate) fn relative_excludes(root: &Path, exclude: &[PathBuf]) -> Vec<PathBuf> {
    exclude
        .iter()
        .filter_map(|p| p.strip_prefix(root).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect()
}

/// Stop libgit2 from hashing every object it reads again to check it (process-wide; git does
/// not do it either). A batch turns it off before its checkouts: it was a third of their CPU.
pub fn fast_object_reads() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| git2::opts::strict_hash_verification(false));
}

/// Where a workdir stands in git: the repository root, the branch (`HEAD` when detached) and
/// the HEAD commit; all None outside git (the commit also on an unborn branch).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoInfo {
    /// Root of the work tree holding the workdir.
    pub root: Option<PathBuf>,
    /// Branch name, or `HEAD` when detached.
    pub branch: Option<String>,
    /// HEAD commit id (hex).
    pub commit: Option<String>,
}

/// [`RepoInfo`] for `workdir`.
pub fn repo_info(workdir: &Path) -> RepoInfo {
    let Ok(repo) = git2::Repository::discover(workdir) else {
        return RepoInfo::default();
    };
    let root = repo.workdir().map(Path::to_path_buf);
    let head = repo.head().ok();
    let branch = head.as_ref().and_then(|h| {
        if h.is_branch() {
            h.shorthand().ok().map(String::from)
        } else {
            Some("HEAD".to_string())
        }
    });
    let commit = head
        .and_then(|h| h.peel_to_commit().ok())
        .map(|c| c.id().to_string());
    RepoInfo {
        root,
        branch,
        commit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names() {
        use crate::spec::GitBranch;
        assert_eq!(GitBranch::Enabled(false).name_for("t"), None);
        assert_eq!(
            GitBranch::Enabled(true).name_for("fix-x").as_deref(),
            Some("runner/fix-x")
        );
        assert_eq!(
            GitBranch::Named("bot/y".into()).name_for("t").as_deref(),
            Some("bot/y")
        );
    }

    #[test]
    fn absolute_resolves_the_existing_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(absolute(&link.join("a/../b/c")), real.join("b/c"));
        assert_eq!(absolute(&real), real);
    }

    #[test]
    fn excludes_are_relative_to_the_root() {
        let ex = relative_excludes(
            Path::new("/r"),
            &[
                PathBuf::from("/r/.runner"),
                PathBuf::from("/elsewhere"),
                PathBuf::from("/r"),
            ],
        );
        assert_eq!(ex, vec![PathBuf::from(".runner")]);
    }
}
