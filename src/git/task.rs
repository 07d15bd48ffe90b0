//! A task's git work from start to end: [`begin`] snapshots the base, holds it (see
//! [`super::hold`]), for an isolated task gets its worktree (from the batch's pool, or a
//! worktree of its own), and records all that in the task's output directory
//! ([`super::record`]); a resumed task takes its recorded base and worktree back instead
//! ([`super::resumed`]). [`finish`] records the changes ([`super::patch`]) and gives the
//! worktree back and lets the base go, or keeps both for resume.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use super::patch::{self, GitSummary};
use super::record::{self, BaseRecord, RecordedWorktree};
use super::snapshot::{commit_for_tree, snapshot_tree};
use super::source::{Lease, LeaseKind};
use super::{
    GitError, GitPlan, changes, git_err, hold, io_err, objects, relative_excludes, slot, worktree,
};
use crate::spec::GitBase;

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
    fn recorded(&self) -> RecordedWorktree {
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
    fn explain(&self, e: GitError) -> GitError {
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
    fn end_worktree(self, keep: bool) {
        if !keep {
            match Repository::open(&self.repo_root) {
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

/// Start a task: snapshot its base and hold it, when isolated get its worktree (detached at the
/// base commit): from the batch's pool when the plan has one, else a worktree of its own
/// created at `run_dir/worktree`; and record the base in `run_dir`. A resumed task whose run
/// recorded its base (`plan.resume_from`) takes that base and worktree back instead.
/// `Ok(None)`: no git for this task.
pub fn begin(
    plan: &GitPlan,
    task: &str,
    session_id: &str,
    workdir: &Path,
    run_dir: &Path,
) -> Result<Option<GitTask>, GitError> {
    if let Some(recorded) = &plan.resume_from {
        return super::resumed::begin(plan, recorded, workdir).map(Some);
    }
    let Some(root) = plan.repo_root.clone() else {
        return Ok(None);
    };
    let repo = Repository::open(&root).map_err(git_err(format!("open {}", root.display())))?;
    let head = match repo.head().and_then(|h| h.peel_to_commit()) {
        Ok(c) => c,
        Err(e) if !plan.isolate => {
            tracing::warn!(repo = %root.display(), "no HEAD commit ({e}); no patch will be written");
            return Ok(None);
        }
        Err(e) => {
            return Err(git_err("find the HEAD commit to start the worktree from")(
                e,
            ));
        }
    };
    let short = session_id.get(..8).unwrap_or(session_id);
    let base_hold = hold::name(session_id, "base");
    let (base_tree, base_commit) = objects::again("record the task's base", || {
        base(plan, &repo, &root, &head, task, &base_hold)
    })?;
    let mut out = GitTask {
        plan: plan.clone(),
        repo_root: root.clone(),
        base_commit,
        base_tree,
        base_hold,
        worktree: None,
        workdir: workdir.to_path_buf(),
    };
    if plan.isolate {
        let wt = objects::reread("check the base out", || match &plan.worktrees {
            Some(source) => source
                .take(&root, base_commit, base_tree)
                .map(Worktree::Leased),
            None => {
                let name = format!("runner-{task}-{short}");
                let path = run_dir.join("worktree");
                worktree::add(&repo, &name, &path, base_commit).map(|()| {
                    let path = std::fs::canonicalize(&path).unwrap_or(path);
                    Worktree::Own { name, path }
                })
            }
        })
        .map_err(|e| out.explain(e));
        match wt {
            Ok(wt) => out.worktree = Some(wt),
            Err(e) => {
                out.end_worktree(false);
                return Err(e);
            }
        }
        out.workdir = out.map_path(workdir);
        if !out.workdir.is_dir() {
            let rel = workdir.strip_prefix(&root).unwrap_or(workdir);
            let err = GitError::Io {
                what: format!(
                    "use the workdir: `{}` does not exist in commit {}",
                    rel.display(),
                    base_commit
                ),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            };
            out.end_worktree(false);
            return Err(err);
        }
    }
    let recorded = BaseRecord::new(
        root,
        base_commit.to_string(),
        base_tree.to_string(),
        out.base_hold.clone(),
        plan.patch_dir.clone(),
        plan.exclude.clone(),
        out.worktree.as_ref().map(Worktree::recorded),
    );
    if let Err(e) = record::write(run_dir, &recorded) {
        let what = format!(
            "record the task's git base in {}",
            run_dir.join(record::BASE_FILE).display()
        );
        out.end_worktree(false);
        return Err(io_err(what)(e));
    }
    Ok(Some(out))
}

/// The task's base, held (see [`super::hold`]) before anything reads it — a snapshot is
/// reachable from nothing else, and HEAD may move away from the commit while the task runs:
/// `(tree, commit)`. An isolated task with `base: head` starts from HEAD; any other from a
/// snapshot of the working tree (an isolated one from a snapshot commit on top of HEAD; one run
/// in place measures its changes against the snapshot, and a branch commit goes on top of
/// HEAD, see `patch::commit_on_branch`).
fn base(
    plan: &GitPlan,
    repo: &Repository,
    root: &Path,
    head: &git2::Commit<'_>,
    task: &str,
    base_hold: &str,
) -> Result<(Oid, Oid), GitError> {
    if plan.isolate && plan.base == GitBase::Head {
        hold::hold(repo, base_hold, head.id())?;
        return Ok((head.tree_id(), head.id()));
    }
    let tree = snapshot_tree(root, &plan.exclude, None)?;
    if !plan.isolate {
        if tree == head.tree_id() {
            hold::hold(repo, base_hold, head.id())?;
        } else {
            hold::hold_tree(repo, base_hold, tree, Some(head.tree_id()))?;
        }
        return Ok((tree, head.id()));
    }
    let commit = commit_for_tree(
        repo,
        head,
        tree,
        &format!("runner: working tree before task {task}"),
    )
    .map_err(objects::failed(
        repo,
        &[tree],
        "record the working tree as a snapshot commit",
    ))?;
    if commit == head.id() {
        hold::hold(repo, base_hold, commit)?;
    } else {
        hold::hold_commit(repo, base_hold, commit)?;
    }
    Ok((tree, commit))
}

/// How a task ended, as far as [`finish`] cares.
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
