//! A task's git state from start to end ([`GitTask`]): its repository, base and worktree.
//! [`super::start::begin`] makes it: snapshots the base, holds it (see [`super::hold`]), for
//! an isolated task gets its worktree (from the batch's pool, or a worktree of its own), and
//! records all that in the task's output directory ([`super::record`]); a resumed task takes
//! its recorded base and worktree back instead ([`super::resumed`]). [`super::end::finish`]
//! records the changes ([`super::patch`]) and gives the worktree back and lets the base go, or
//! keeps both for resume.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use super::pinned;
use super::record::RecordedWorktree;
use super::snapshot::snapshot_tree;
use super::source::{Lease, LeaseKind};
use super::{
    GitError, GitPlan, changes, git_err, hold, objects, relative_excludes, slot, worktree,
};

/// A task's git state while it runs.
#[derive(Debug)]
pub struct GitTask {
    pub(super) plan: GitPlan,
    pub(super) repo_root: PathBuf,
    /// The commit the task starts from (HEAD, or a snapshot commit of the working tree).
    pub base_commit: Oid,
    /// The tree the task's changes are measured against.
    pub(super) base_tree: Oid,
    /// The reference that holds the base until the task ends.
    pub(super) base_hold: String,
    /// The worktree, when isolated.
    pub(super) worktree: Option<Worktree>,
    /// Where the agent works (inside the worktree when isolated).
    pub workdir: PathBuf,
}

/// Where an isolated task runs.
#[derive(Debug)]
pub(super) enum Worktree {
    /// A worktree of its own, registered in the repository (`git worktree list`), checked
    /// out at `run_dir/worktree`: a task run on its own.
    Own { name: String, path: PathBuf },
    /// One from the batch's pool (`plan.worktrees`).
    Leased(Lease),
    /// One of a batch's pool kept for resume, the batch gone: the resumed task has it alone.
    /// `upper`: an overlay's upper directory (its changes are there).
    Kept {
        path: PathBuf,
        upper: Option<PathBuf>,
    },
}

impl Worktree {
    fn path(&self) -> &Path {
        match self {
            Worktree::Own { path, .. } | Worktree::Kept { path, .. } => path,
            Worktree::Leased(l) => &l.path,
        }
    }

    /// How the worktree is recorded for resume.
    pub(super) fn recorded(&self) -> RecordedWorktree {
        match self {
            Worktree::Own { name, path } => RecordedWorktree::Own {
                name: name.clone(),
                path: path.clone(),
            },
            Worktree::Leased(Lease {
                path,
                kind: LeaseKind::Overlay { upper },
                ..
            })
            | Worktree::Kept {
                path,
                upper: Some(upper),
            } => RecordedWorktree::Overlay {
                path: path.clone(),
                upper: upper.clone(),
            },
            Worktree::Leased(Lease { path, .. }) | Worktree::Kept { path, .. } => {
                RecordedWorktree::Checkout { path: path.clone() }
            }
        }
    }
}

impl GitTask {
    /// The worktree's path, when the task is isolated.
    pub fn worktree_path(&self) -> Option<&Path> {
        self.worktree.as_ref().map(Worktree::path)
    }

    /// The root the task's changes are made in (the worktree, or the repository).
    pub fn root(&self) -> &Path {
        self.worktree_path().unwrap_or(&self.repo_root)
    }

    /// The repository of the task's root, opened by the git directory and working tree runner
    /// recorded (see [`super::pinned`]): the repository's own, a worktree of the task's own
    /// by its administrative directory under the common directory, a pooled one by the
    /// administrative directory beside it.
    pub(super) fn open_root(&self) -> Result<Repository, git2::Error> {
        let path = match &self.worktree {
            None => return pinned::open_root(&self.repo_root),
            Some(wt) => wt.path(),
        };
        let rec = pinned::record(&self.repo_root)?;
        let admin = match &self.worktree {
            Some(Worktree::Own { name, .. }) => rec.common_dir.join("worktrees").join(name),
            _ => path.parent().unwrap_or(path).join(super::admin::ADMIN_DIR),
        };
        pinned::open_worktree(&admin, path, &rec.common_dir)
    }

    /// Whether the task fails when it changed nothing.
    pub fn requires_changes(&self) -> bool {
        self.plan.require_changes
    }

    /// The repository's root.
    pub fn repo_root(&self) -> &Path {
        &self.repo_root
    }

    /// Map a path inside the repository to the same place in the task's worktree (unchanged
    /// when in place or outside the repository).
    pub fn map_path(&self, p: &Path) -> PathBuf {
        match (self.worktree_path(), p.strip_prefix(&self.repo_root)) {
            (Some(wt), Ok(rel)) if rel.as_os_str().is_empty() => wt.to_path_buf(),
            (Some(wt), Ok(rel)) => wt.join(rel),
            _ => p.to_path_buf(),
        }
    }

    /// The tree of the task's root as it is now.
    pub(super) fn end_tree(&self, repo: &Repository) -> Result<Oid, GitError> {
        let root = self.root();
        let base = repo
            .find_tree(self.base_tree)
            .map_err(git_err("read the base tree"))?;
        let exclude = relative_excludes(root, &self.plan.exclude);
        match &self.worktree {
            Some(
                Worktree::Leased(Lease {
                    kind: LeaseKind::Overlay { upper },
                    ..
                })
                | Worktree::Kept {
                    upper: Some(upper), ..
                },
            ) => changes::from_upper(repo, &base, root, upper, &exclude),
            // A worktree of the task's own: its index is its own, so the walk may write the
            // refreshed stat data back.
            Some(_) => changes::from_workdir(repo, &base, &exclude, true),
            None => snapshot_tree(root, &self.plan.exclude, Some(self.base_tree)),
        }
    }

    /// `e`, or [`GitError::Lost`] when it is an object not found and the task's base is gone
    /// (see [`objects::explain`]).
    pub(super) fn explain(&self, e: GitError) -> GitError {
        let what = format!("the task's base, held by {}", self.base_hold);
        objects::explain(
            &self.repo_root,
            e,
            &[self.base_commit, self.base_tree],
            &what,
        )
    }

    /// Give the worktree back (removed, or made clean for the next task) and let the base go,
    /// or keep both for resume.
    pub(super) fn end_worktree(self, keep: bool) {
        if !keep {
            match super::pinned::open_root(&self.repo_root) {
                Ok(repo) => hold::release(&repo, &self.base_hold),
                Err(e) => tracing::warn!(
                    reference = %self.base_hold,
                    "cannot delete runner's temporary reference: {e}"
                ),
            }
        }
        let source = self.plan.worktrees.clone();
        match (self.worktree, source) {
            (Some(Worktree::Leased(lease)), Some(source)) if keep => source.keep(lease),
            (Some(Worktree::Leased(lease)), Some(source)) => source.release(lease),
            (Some(Worktree::Own { name, path }), _) if !keep => {
                worktree::remove(&self.repo_root, &name, &path)
            }
            (Some(Worktree::Kept { path, .. }), _) => slot::end_kept(&path, keep),
            _ => {}
        }
    }
}

/// How a task ended, as far as [`super::end::finish`] cares.
#[derive(Debug, Clone, Copy)]
pub struct Ending<'a> {
    /// Task name (patch file name, commit message).
    pub task: &'a str,
    /// Session id (commit message).
    pub session_id: &'a str,
    /// The outcome is `success`: commit on the branch.
    pub success: bool,
    /// The task was interrupted: keep the worktree for resume.
    pub interrupted: bool,
}
