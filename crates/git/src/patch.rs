//! A finished task's changes: the patch file, the change counts, and the commit on the task's
//! branch.

use git2::{DiffOptions, Oid, Repository, Signature};

use super::objects::{self, retry};
use super::repo::REPO_LOCK;
use super::snapshot::{commit_for_tree, default_signature};
use super::task::{Ending, GitTask};
use super::{GitError, git_err, hold, io_err};

pub use runner_protocol::summary::{FileChange, GitSummary};

/// The [`FileChange`] of one delta of a diff, with the line counts of its `patch`.
fn file_change(delta: &git2::DiffDelta<'_>, patch: Option<&git2::Patch<'_>>) -> FileChange {
    let file = delta.new_file().path().or_else(|| delta.old_file().path());
    let status = match delta.status() {
        git2::Delta::Added | git2::Delta::Untracked => "added",
        git2::Delta::Deleted => "deleted",
        git2::Delta::Renamed => "renamed",
        git2::Delta::Typechange => "typechange",
        _ => "modified",
    };
    let (insertions, deletions) = patch
        .and_then(|p| p.line_stats().ok())
        .map_or((0, 0), |(_, add, del)| (add, del));
    FileChange {
        path: file.map_or_else(String::new, |p| p.to_string_lossy().into_owned()),
        status: status.to_string(),
        insertions,
        deletions,
        binary: delta.flags().is_binary(),
    }
}

/// Find the task's end state, hold it (see [`super::hold`]) while the patch is written and,
/// on success, the changes are committed on the task's branch, then let it go.
pub(super) fn record_changes(
    task: &GitTask,
    end: Ending<'_>,
    summary: &mut GitSummary,
) -> Result<(), GitError> {
    let root = task.root();
    let repo = task
        .open_root()
        .map_err(git_err(format!("open {}", root.display())))?;
    let end_hold = hold::name(end.session_id, "end");
    let end_tree = objects::again("hold the task's end state", || {
        let end_tree = task.end_tree(&repo)?;
        // Unchanged: held as the base already.
        if end_tree != task.base_tree {
            hold::hold_tree(&repo, &end_hold, end_tree, Some(task.base_tree))?;
        }
        Ok(end_tree)
    })?;
    let written = write_changes(&repo, task, end, end_tree, summary);
    if end_tree != task.base_tree {
        hold::release(&repo, &end_hold);
    }
    written
}

/// The patch of the change from the task's base tree to `end_tree`, the summary's counts and
/// files, and on success the commit on the task's branch.
fn write_changes(
    repo: &Repository,
    task: &GitTask,
    end: Ending<'_>,
    end_tree: Oid,
    summary: &mut GitSummary,
) -> Result<(), GitError> {
    let old = repo
        .find_tree(task.base_tree)
        .map_err(git_err("read the base tree"))?;
    let new = repo
        .find_tree(end_tree)
        .map_err(git_err("read the end tree"))?;
    // Only the paths that differ: the diff then skips every unchanged directory instead of
    // parsing the whole repository's trees (see `tree_delta`).
    let paths =
        super::tree_delta::changed_paths(repo, &old, &new).map_err(git_err("compare the trees"))?;
    let mut opts = DiffOptions::new();
    opts.show_binary(true).disable_pathspec_match(true);
    for p in &paths {
        opts.pathspec(p.clone());
    }
    let diff = if paths.is_empty() {
        repo.diff_tree_to_tree(None, None, Some(&mut opts))
    } else {
        repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
    }
    .map_err(git_err("diff the task's changes"))?;
    let stats = diff.stats().map_err(git_err("count the task's changes"))?;
    summary.files_changed = stats.files_changed();
    summary.insertions = stats.insertions();
    summary.deletions = stats.deletions();
    summary.changed = diff.deltas().len() > 0;
    let mut text = Vec::new();
    for i in 0..diff.deltas().len() {
        let patch = git2::Patch::from_diff(&diff, i).map_err(git_err("format the patch"))?;
        if let Some(delta) = diff.get_delta(i) {
            summary.files.push(file_change(&delta, patch.as_ref()));
        }
        if let Some(mut p) = patch {
            let buf = p.to_buf().map_err(git_err("format the patch"))?;
            text.extend_from_slice(&buf);
        }
    }
    let path = task.plan.patch_dir.join(format!("{}.patch", end.task));
    // A file the task wrote may hold a secret (a copy of a credentials file): the patch and
    // the branch commit get the redacted changes.
    let redacted = crate::redact::registered().redact_bytes(&text).into_owned();
    let holds_secret = redacted != text;
    // Whole or not at all: a failed write (a full disk) leaves no empty or partial patch that
    // a later step could apply.
    if let Err(e) = crate::atomic_file::write(&path, &redacted) {
        // Nor a stale patch of an earlier run under the same name.
        let _ = std::fs::remove_file(&path);
        return Err(io_err(format!("write the patch {}", path.display()))(e));
    }
    summary.patch = Some(path.clone());
    if summary.changed {
        tracing::info!(task = end.task, files = summary.files_changed, insertions = summary.insertions, deletions = summary.deletions, patch = %path.display(), "task changes written as a patch");
    } else {
        tracing::info!(task = end.task, patch = %path.display(), "task changed nothing (empty patch)");
    }
    if let Some(branch) = &task.plan.branch
        && end.success
    {
        if !summary.changed {
            tracing::info!(task = end.task, branch = %branch, "nothing to commit; branch not created");
            return Ok(());
        }
        let commit = if holds_secret {
            let Some((diff, tree)) = redacted_changes(repo, &old, &redacted) else {
                tracing::warn!(task = end.task, branch = %branch, "the task's changes hold a secret and their redacted patch does not apply to the base; not committed on the branch");
                return Ok(());
            };
            commit_on_branch(repo, task, branch, &diff, &tree, end)?
        } else {
            commit_on_branch(repo, task, branch, &diff, &new, end)?
        };
        tracing::info!(task = end.task, branch = %branch, commit = %commit, "changes committed");
        summary.branch = Some(branch.clone());
        summary.commit = Some(commit.to_string());
    }
    Ok(())
}

/// The diff of the redacted patch `patch` and the tree it gives applied to `base`; `None`
/// when it does not apply (a secret on a line the base already had).
fn redacted_changes<'r>(
    repo: &'r Repository,
    base: &git2::Tree<'_>,
    patch: &[u8],
) -> Option<(git2::Diff<'static>, git2::Tree<'r>)> {
    let diff = git2::Diff::from_buffer(patch)
        .map_err(|e| tracing::warn!("the redacted patch does not parse: {e}"))
        .ok()?;
    let tree = repo
        .apply_to_tree(base, &diff, None)
        .and_then(|mut index| retry("write the redacted tree", || index.write_tree_to(repo)))
        .and_then(|oid| repo.find_tree(oid))
        .map_err(|e| tracing::warn!("the redacted patch does not apply: {e}"))
        .ok()?;
    Some((diff, tree))
}

/// Commit the task's changes on `branch`, on top of the base commit. When the base tree is not
/// the base commit's (a task run in place in a working tree with uncommitted changes), the
/// commit holds the base commit plus the task's diff; if that diff does not apply without the
/// uncommitted changes, they are committed first as a snapshot commit underneath. The branch
/// is read back once it is set ([`hold::set_branch`]): a commit whose objects a concurrent
/// prune took is an error, never a dangling branch.
fn commit_on_branch(
    repo: &Repository,
    task: &GitTask,
    branch: &str,
    diff: &git2::Diff<'_>,
    end_tree: &git2::Tree<'_>,
    end: Ending<'_>,
) -> Result<Oid, GitError> {
    let what = || format!("commit the changes on branch {branch}");
    let mut parent = repo
        .find_commit(task.base_commit)
        .map_err(git_err(what()))?;
    let mut tree = repo.find_tree(end_tree.id()).map_err(git_err(what()))?;
    if parent.tree_id() != task.base_tree {
        let applied = repo
            .apply_to_tree(&parent.tree().map_err(git_err(what()))?, diff, None)
            .and_then(|mut index| retry(&what(), || index.write_tree_to(repo)))
            .and_then(|oid| repo.find_tree(oid));
        match applied {
            Ok(t) => tree = t,
            Err(e) => {
                tracing::warn!(
                    task = end.task,
                    "the task's changes need the uncommitted changes they were made on ({e}); committing those first"
                );
                let snapshot = commit_for_tree(
                    repo,
                    &parent,
                    task.base_tree,
                    &format!("runner: working tree before task {}", end.task),
                )
                .map_err(git_err(what()))?;
                parent = repo.find_commit(snapshot).map_err(git_err(what()))?;
            }
        }
    }
    let sig = match &task.plan.author {
        Some(a) => Signature::now(&a.name, &a.email).map_err(git_err(what()))?,
        None => default_signature(repo).map_err(git_err(what()))?,
    };
    let message = format!(
        "runner: {}\n\nChanges made by runner task `{}`.\n\nRunner-Session: {}\n",
        end.task, end.task, end.session_id
    );
    let message = crate::redact::registered().redact(&message).into_owned();
    let _guard = REPO_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let inputs = [tree.id(), parent.id()];
    objects::again(&what(), || {
        let oid = retry(&what(), || {
            repo.commit(None, &sig, &sig, &message, &tree, &[&parent])
        })
        .map_err(objects::failed(repo, &inputs, &what()))?;
        hold::set_branch(repo, branch, oid, &format!("runner: task {}", end.task))?;
        Ok(oid)
    })
}
