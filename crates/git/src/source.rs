//! Where an isolated task's worktree comes from when a batch prepares them ahead: a
//! [`WorktreeSource`] (the batch's pool, [`super::pool`]) hands out [`Lease`]s of clean
//! worktrees and takes them back when the task is done.

use std::fmt;
use std::path::PathBuf;

use git2::Oid;

use super::GitError;

/// Hands out clean worktrees of a base tree, and takes them back.
pub trait WorktreeSource: Send + Sync + fmt::Debug {
    /// A worktree of the repository at `repo_root` holding exactly `tree`, its HEAD detached
    /// at `commit` (blocks until one is ready); `shared`: untracked paths of the checkout the
    /// task sees where the worktree is layered on the checkout (`git.share_untracked`).
    fn take(
        &self,
        repo_root: &std::path::Path,
        commit: Oid,
        tree: Oid,
        shared: &[PathBuf],
    ) -> Result<Lease, GitError>;
    /// The task is done with the worktree: it is removed, or made clean for the next task.
    fn release(&self, lease: Lease);
    /// The task was interrupted: the worktree stays for resume (an overlay is unmounted;
    /// `runner resume` mounts it again).
    fn keep(&self, lease: Lease);
}

/// A worktree a task holds.
#[derive(Debug)]
pub struct Lease {
    /// The worktree's root.
    pub path: PathBuf,
    /// How its changes are found at the end.
    pub kind: LeaseKind,
    /// The source's own handle on it.
    pub id: u64,
}

/// How a leased worktree is made, as far as finding its changes goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseKind {
    /// An overlay mount: the changes are in `upper`.
    Overlay {
        /// The overlay's upper directory.
        upper: PathBuf,
    },
    /// A checkout of its own, with its own index: one walk of the tree finds the changes.
    Checkout,
}
