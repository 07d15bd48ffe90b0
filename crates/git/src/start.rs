//! Starting a task's git work: the base it starts from (a snapshot of the working tree when
//! `base: working-tree`), held by a reference, its worktree when isolated, and the record of
//! both in its output directory; or, for a resumed task, the base and worktree its run recorded.

use std::path::Path;

use git2::{Oid, Repository};

use super::pinned;

use super::record::{self, BaseRecord};
use super::snapshot::{commit_for_tree, snapshot_tree};
use super::{GitError, GitPlan, git_err, hold, io_err, objects, worktree};
use crate::spec::GitBase;

use super::task::{GitTask, Worktree};

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
    let repo = pinned::open_root(&root).map_err(git_err(format!("open {}", root.display())))?;
    let head = match repo.head().and_then(|h| h.peel_to_commit()) {
        Ok(c) => c,
        Err(e) if !plan.isolate => {
            let why = if e.code() == git2::ErrorCode::UnbornBranch {
                "the repository has no commit yet; commit once to get patches".to_string()
            } else {
                format!("no HEAD commit: {}", e.message())
            };
            tracing::warn!(repo = %root.display(), "{why}; no patch will be written");
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
                .take(&root, base_commit, base_tree, &plan.share_untracked)
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
