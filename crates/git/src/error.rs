//! The errors of runner's git work, each naming what runner was doing.

use crate::spec::SpecError;

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
