//! Snapshots of the repository's own working tree — for a task run in place (its changes are
//! measured against the working tree as it was) and for the base of an isolated task with
//! `base: working-tree` — and the snapshot commits isolated tasks start from.
//!
//! A snapshot is the tree `git add -A && git write-tree` would make, without writing the
//! index: untracked files included, ignored files (and runner's own output directories) left
//! out, nothing in the user's index or HEAD moved. It is made in one walk of the working tree
//! ([`super::changes::from_workdir`]): only the files that differ from the starting tree are
//! read and hashed.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Signature};

use super::objects::retry;
use super::{GitError, changes, git_err, relative_excludes};

/// The tree of the working tree at `root`, found by comparing it with `from` (default: the
/// HEAD commit's tree); `exclude` are absolute paths left out.
pub(crate) fn snapshot_tree(
    root: &Path,
    exclude: &[PathBuf],
    from: Option<Oid>,
) -> Result<Oid, GitError> {
    let what = || format!("snapshot the working tree of {}", root.display());
    let repo = Repository::open(root).map_err(git_err(what()))?;
    let from = match from {
        Some(t) => repo.find_tree(t),
        None => repo.head().and_then(|h| h.peel_to_tree()),
    }
    .map_err(git_err(what()))?;
    changes::from_workdir(&repo, &from, &relative_excludes(root, exclude), false)
}

/// A commit whose tree is `tree`: `head` itself when its tree already is, else a new snapshot
/// commit on top of it (which no reference holds: the caller holds it).
pub(crate) fn commit_for_tree(
    repo: &Repository,
    head: &git2::Commit<'_>,
    tree: Oid,
    message: &str,
) -> Result<Oid, git2::Error> {
    if head.tree_id() == tree {
        return Ok(head.id());
    }
    let sig = default_signature(repo)?;
    let tree = repo.find_tree(tree)?;
    retry("write a snapshot commit", || {
        repo.commit(None, &sig, &sig, message, &tree, &[head])
    })
}

/// The repository's configured signature, else `runner <runner@localhost>`.
pub(crate) fn default_signature(repo: &Repository) -> Result<Signature<'static>, git2::Error> {
    repo.signature()
        .or_else(|_| Signature::now("runner", "runner@localhost"))
}
