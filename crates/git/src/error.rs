//! The errors of runner's git work, each naming what runner was doing.

use std::path::PathBuf;

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

/// Why `runner-base.json` in a task's output directory cannot be read ([`read_base`]).
///
/// [`read_base`]: crate::read_base
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The record's path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a record.
    #[error("{} cannot be read: {source}", path.display())]
    Parse {
        /// The record's path.
        path: PathBuf,
        /// What the JSON parser said.
        source: serde_json::Error,
    },
    /// The record was written by a runner with another layout.
    #[error("{} has layout version {found}; this runner reads version {expected}", path.display())]
    Version {
        /// The record's path.
        path: PathBuf,
        /// The layout version in the file.
        found: u32,
        /// The layout version this runner reads.
        expected: u32,
    },
}

/// Why a checkout does not hold exactly the base tree, in words for a log line.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CleanError {
    #[error("the index has unresolved conflicts")]
    Conflicts,
    #[error("the base tree cannot be read: {}", .0.message())]
    Tree(git2::Error),
    #[error("the index cannot be compared: {}", .0.message())]
    Compare(git2::Error),
    #[error("the index differs from the base commit (staged changes)")]
    Staged,
    #[error("the index file cannot be read: {0}")]
    IndexFile(std::io::Error),
    #[error("`{}` is a submodule", .0.display())]
    Submodule(PathBuf),
    #[error("`{}` is marked assume-unchanged, skip-worktree or intent-to-add", .0.display())]
    Flagged(PathBuf),
    #[error("`{}` is missing", .0.display())]
    Missing(PathBuf),
    #[error("`{}` changed type or mode", .0.display())]
    Kind(PathBuf),
    #[error("`{}` is modified", .0.display())]
    Modified(PathBuf),
    #[error("the check of its files stopped part way")]
    Interrupted,
    #[error("cannot watch `{}` for changes: {source}", path.display())]
    Watch {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot list `{}`: {source}", path.display())]
    List {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why the repository's checkout cannot be the lower layer of overlay worktrees (a template
/// checkout is made instead), in words for a log line.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LowerError {
    #[error("cannot open it: {}", .0.message())]
    Open(git2::Error),
    #[error("the base tree is not in the repository")]
    NoTree,
    #[error("cannot read its index: {}", .0.message())]
    Index(git2::Error),
    #[error(transparent)]
    Unclean(#[from] CleanError),
    #[error("cannot make a directory for its mask: {0}")]
    TempDir(std::io::Error),
    #[error("the temporary directory is inside the checkout")]
    TempInside,
    #[error("cannot create {}: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write its mask in {}: {source}", path.display())]
    Mask {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    WriteIndex {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why overlay worktrees cannot be used under a directory, in words for a log line.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbeError {
    #[error("cannot create {}: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write in {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("a write through a test overlay failed: {0}")]
    WriteThrough(std::io::Error),
    #[error("a test overlay did not keep its layers apart")]
    Mixed,
    /// A mount refused with `EINVAL` by every set of options tried: the last refusal.
    #[error("mount(2) of a test overlay failed: {0}")]
    Mount(std::io::Error),
    #[error("no overlay mount options to try")]
    NoOptions,
    #[error(
        "mount(2) of a test overlay failed: {0} (overlay worktrees need CAP_SYS_ADMIN: root, or a container that grants it)"
    )]
    Denied(std::io::Error),
}
