//! git for task runs (git2): per-task worktrees, patches, branch commits, change detection.
//!
//! Before any task starts, [`plan`] decides for each task whether it runs isolated (its own
//! worktree under the output directory, checked out from the base commit) or in place, and
//! refuses a dirty working tree for isolated tasks with `base: head`. [`begin`] snapshots the
//! base and creates the worktree; [`finish`] diffs the end state against the base, writes the
//! patch file, commits on the task's branch on success and removes the worktree (kept after an
//! interrupt so the run can be resumed there).
//!
//! Snapshots are trees written from an in-memory index (`git add -A` without touching the
//! index file), so untracked files count as changes, ignored files (and runner's own output
//! directories) never do, and nothing in the user's index or HEAD moves.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use git2::{
    DiffOptions, IndexAddOption, Oid, Repository, Signature, StatusOptions, WorktreeAddOptions,
    WorktreePruneOptions,
};
use serde::{Deserialize, Serialize};

use crate::roots::normalize_lexically;
use crate::spec::{GitAuthor, GitBase, LoadedSpec, SpecError};

/// Serializes operations that change shared repository state (worktree admin files, refs)
/// between tasks running at once.
static REPO_LOCK: Mutex<()> = Mutex::new(());

/// Most dirty paths named in the error for a dirty working tree.
const DIRTY_PATHS_SHOWN: usize = 5;

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
    /// A file operation failed.
    #[error("cannot {what}: {source}")]
    Io {
        /// What runner was doing.
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

fn git_err(what: impl Into<String>) -> impl FnOnce(git2::Error) -> GitError {
    let what = what.into();
    move |source| GitError::Git { what, source }
}

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> GitError {
    let what = what.into();
    move |source| GitError::Io { what, source }
}

/// What one task does with git, decided before any task starts.
#[derive(Debug, Clone, Default)]
pub struct GitPlan {
    /// Root of the repository holding the workdir (canonical); `None`: no git at all.
    pub repo_root: Option<PathBuf>,
    /// Run in a worktree of its own.
    pub isolate: bool,
    /// What the worktree starts from.
    pub base: GitBase,
    /// Fail a task that changed nothing.
    pub require_changes: bool,
    /// Branch to commit on after success.
    pub branch: Option<String>,
    /// Author of branch commits.
    pub author: Option<GitAuthor>,
    /// Where the patch file goes (absolute).
    pub patch_dir: PathBuf,
    /// runner's output directories (absolute); never part of a snapshot or patch.
    pub exclude: Vec<PathBuf>,
}

/// Make `p` absolute (against the current directory) and lexically normal, resolving symlinks
/// in the longest part of it that exists (so it compares with canonical repository roots).
pub fn absolute(p: &Path) -> PathBuf {
    let abs = normalize_lexically(&std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(existing) {
            return rest
                .iter()
                .rev()
                .fold(c, |acc: PathBuf, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return abs,
        }
    }
}

/// The canonical root of the (non-bare) repository containing `dir`, if any.
pub fn repo_root_of(dir: &Path) -> Option<PathBuf> {
    let repo = Repository::discover(dir).ok()?;
    let root = repo.workdir()?;
    std::fs::canonicalize(root).ok()
}

/// Decide what `loaded` does with git. `multi`: the run has more than one task (the isolation
/// default). `patch_dir` and `exclude` are runner's output locations.
pub fn plan(
    loaded: &LoadedSpec,
    multi: bool,
    patch_dir: &Path,
    exclude: &[PathBuf],
) -> Result<GitPlan, GitError> {
    let g = &loaded.spec.git;
    let repo_root = repo_root_of(&loaded.workdir);
    let Some(root) = repo_root else {
        let needs = [
            (g.isolate == Some(true), "git.isolate"),
            (!g.branch.is_off(), "git.branch"),
            (g.require_changes, "git.require_changes"),
            (!g.base.is_head(), "git.base"),
        ];
        if let Some((_, key)) = needs.iter().find(|(set, _)| *set) {
            return Err(SpecError::at(
                loaded,
                key,
                format!(
                    "`{key}` needs a git repository, but the workdir {} is not in one",
                    loaded.workdir.display()
                ),
            )
            .into());
        }
        return Ok(GitPlan::default());
    };
    let branch = g.branch.name_for(&loaded.spec.name);
    if let Some(b) = &branch
        && !git2::Branch::name_is_valid(b).unwrap_or(false)
    {
        return Err(SpecError::at(
            loaded,
            "git.branch",
            format!("`{b}` is not a valid git branch name"),
        )
        .into());
    }
    if let Some(b) = &branch
        && let Some(wt) = checked_out_at(&root, b)
    {
        return Err(SpecError::at(
            loaded,
            "git.branch",
            format!(
                "branch `{b}` is checked out in {}; runner commits on a branch of its own and will not move a checked-out one. Choose another name",
                wt.display()
            ),
        )
        .into());
    }
    if let Some(a) = &g.author
        && Signature::now(&a.name, &a.email).is_err()
    {
        return Err(SpecError::at(
            loaded,
            "git.author",
            "git.author needs a non-empty name and email without `<`, `>` or newlines",
        )
        .into());
    }
    let isolate = g.isolate.unwrap_or(multi);
    let exclude: Vec<PathBuf> = exclude.iter().map(|p| absolute(p)).collect();
    if isolate && g.base == GitBase::Head {
        let dirty = dirty_paths(&root, &exclude)
            .map_err(git_err(format!("read the status of {}", root.display())))?;
        if !dirty.is_empty() {
            let mut paths = dirty
                .iter()
                .take(DIRTY_PATHS_SHOWN)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if dirty.len() > DIRTY_PATHS_SHOWN {
                paths.push_str(&format!(" and {} more", dirty.len() - DIRTY_PATHS_SHOWN));
            }
            return Err(GitError::Dirty {
                spec: loaded.path.display().to_string(),
                repo: root.display().to_string(),
                paths,
            });
        }
    }
    if isolate && g.base == GitBase::Head {
        check_workdir_in_head(loaded, &root)?;
    }
    Ok(GitPlan {
        repo_root: Some(root),
        isolate,
        base: g.base,
        require_changes: g.require_changes,
        branch,
        author: g.author.clone(),
        patch_dir: absolute(patch_dir),
        exclude,
    })
}

/// Where `branch` is checked out: the repository's working tree or one of its worktrees.
fn checked_out_at(root: &Path, branch: &str) -> Option<PathBuf> {
    let repo = Repository::open(root).ok()?;
    let on = |r: &Repository| {
        r.head()
            .ok()
            .is_some_and(|h| h.is_branch() && h.shorthand().ok() == Some(branch))
    };
    if on(&repo) {
        return Some(root.to_path_buf());
    }
    let names = repo.worktrees().ok()?;
    names
        .iter()
        .flatten()
        .flatten()
        .filter_map(|n| repo.find_worktree(n).ok())
        .find(|wt| Repository::open_from_worktree(wt).is_ok_and(|r| on(&r)))
        .map(|wt| wt.path().to_path_buf())
}

/// An isolated task's worktree starts from HEAD: its workdir must be a directory there.
fn check_workdir_in_head(loaded: &LoadedSpec, root: &Path) -> Result<(), GitError> {
    let Ok(rel) = loaded.workdir.strip_prefix(root) else {
        return Ok(());
    };
    if rel.as_os_str().is_empty() {
        return Ok(());
    }
    let what = || {
        format!(
            "look up the workdir in the HEAD commit of {}",
            root.display()
        )
    };
    let repo = Repository::open(root).map_err(git_err(what()))?;
    let tree = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .map_err(git_err(what()))?;
    let is_dir = tree
        .get_path(rel)
        .is_ok_and(|e| e.kind() == Some(git2::ObjectType::Tree));
    if is_dir {
        return Ok(());
    }
    Err(SpecError::at(
        loaded,
        "workdir",
        format!(
            "the task runs isolated in a git worktree checked out from HEAD, but its workdir `{}` is not a directory in HEAD (untracked?). Commit it, set `git.base: working-tree`, or `git.isolate: false`",
            rel.display()
        ),
    )
    .into())
}

/// Tracked paths whose working-tree or index state differs from HEAD (untracked files do not
/// count: isolated tasks simply do not see them), outside runner's output directories.
pub fn dirty_paths(root: &Path, exclude: &[PathBuf]) -> Result<Vec<String>, git2::Error> {
    let repo = Repository::open(root)?;
    let mut opts = StatusOptions::new();
    opts.include_untracked(false)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut opts))?;
    let rel_excludes = relative_excludes(root, exclude);
    Ok(statuses
        .iter()
        .filter(|e| e.status() != git2::Status::CURRENT)
        .filter_map(|e| e.path().ok().map(String::from))
        .filter(|p| !rel_excludes.iter().any(|x| Path::new(p).starts_with(x)))
        .collect())
}

fn relative_excludes(root: &Path, exclude: &[PathBuf]) -> Vec<PathBuf> {
    exclude
        .iter()
        .filter_map(|p| p.strip_prefix(root).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect()
}

/// The tree of the working tree at `root` as `git add -A && git write-tree` would make it,
/// without writing the index file: untracked files included, ignored files and `exclude`
/// left out.
fn snapshot_tree(root: &Path, exclude: &[PathBuf]) -> Result<Oid, git2::Error> {
    // A fresh handle, so the in-memory index changes below die with it.
    let repo = Repository::open(root)?;
    let mut index = repo.index()?;
    let rel = relative_excludes(root, exclude);
    let mut skip = |path: &Path, _spec: &[u8]| -> i32 {
        if rel.iter().any(|x| path.starts_with(x)) {
            1
        } else {
            0
        }
    };
    index.add_all(["*"], IndexAddOption::DEFAULT, Some(&mut skip))?;
    index.update_all(["*"], Some(&mut skip))?;
    index.write_tree()
}

/// A commit whose tree is `tree`: `head` itself when its tree already is, else a new snapshot
/// commit on top of it.
fn commit_for_tree(
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
    repo.commit(None, &sig, &sig, message, &tree, &[head])
}

fn default_signature(repo: &Repository) -> Result<Signature<'static>, git2::Error> {
    repo.signature()
        .or_else(|_| Signature::now("runner", "runner@localhost"))
}

/// A task's git state while it runs.
#[derive(Debug, Clone)]
pub struct GitTask {
    plan: GitPlan,
    repo_root: PathBuf,
    /// The commit the task starts from (HEAD, or a snapshot commit of the working tree).
    pub base_commit: Oid,
    /// The tree the task's changes are measured against.
    base_tree: Oid,
    /// The worktree, when isolated: (name, path).
    worktree: Option<(String, PathBuf)>,
    /// Where the agent works (inside the worktree when isolated).
    pub workdir: PathBuf,
}

impl GitTask {
    /// The worktree's path, when the task is isolated.
    pub fn worktree_path(&self) -> Option<&Path> {
        self.worktree.as_ref().map(|(_, p)| p.as_path())
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
        match (&self.worktree, p.strip_prefix(&self.repo_root)) {
            (Some((_, wt)), Ok(rel)) if rel.as_os_str().is_empty() => wt.clone(),
            (Some((_, wt)), Ok(rel)) => wt.join(rel),
            _ => p.to_path_buf(),
        }
    }
}

/// Start a task: snapshot its base and, when isolated, create its worktree at
/// `run_dir/worktree` (detached at the base commit). `Ok(None)`: no git for this task.
pub fn begin(
    plan: &GitPlan,
    task: &str,
    session_id: &str,
    workdir: &Path,
    run_dir: &Path,
) -> Result<Option<GitTask>, GitError> {
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
    let (base_tree, base_commit) = if plan.isolate && plan.base == GitBase::Head {
        (head.tree_id(), head.id())
    } else {
        let tree =
            snapshot_tree(&root, &plan.exclude).map_err(git_err("snapshot the working tree"))?;
        if plan.isolate {
            // The worktree is checked out from a commit of the working tree as it is.
            let commit = commit_for_tree(
                &repo,
                &head,
                tree,
                &format!("runner: working tree before task {task}"),
            )
            .map_err(git_err("record the working tree as a snapshot commit"))?;
            (tree, commit)
        } else {
            // In place: changes are measured against the working tree as it was, and a branch
            // commit goes on top of HEAD (see `commit_on_branch`).
            (tree, head.id())
        }
    };
    let mut out = GitTask {
        plan: plan.clone(),
        repo_root: root.clone(),
        base_commit,
        base_tree,
        worktree: None,
        workdir: workdir.to_path_buf(),
    };
    if !plan.isolate {
        return Ok(Some(out));
    }
    let name = format!("runner-{task}-{short}");
    let path = run_dir.join("worktree");
    add_worktree(&repo, &name, &path, base_commit)?;
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    out.worktree = Some((name, path));
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
        remove_worktree(&out);
        return Err(err);
    }
    Ok(Some(out))
}

/// `git worktree add --detach PATH COMMIT`. libgit2 always checks a worktree out on a branch,
/// so a temporary branch is made, the worktree's HEAD detached, and the branch deleted.
fn add_worktree(repo: &Repository, name: &str, path: &Path, commit: Oid) -> Result<(), GitError> {
    let _guard = REPO_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let what = || format!("create the worktree {}", path.display());
    let c = repo.find_commit(commit).map_err(git_err(what()))?;
    let tmp = format!("runner-tmp/{name}");
    let mut branch = repo.branch(&tmp, &c, true).map_err(git_err(what()))?;
    let result = (|| {
        let mut opts = WorktreeAddOptions::new();
        opts.reference(Some(branch.get()));
        let wt = repo.worktree(name, path, Some(&opts))?;
        Repository::open_from_worktree(&wt)?.set_head_detached(commit)
    })();
    let deleted = branch.delete();
    result.map_err(git_err(what()))?;
    deleted.map_err(git_err(format!("delete the temporary branch {tmp}")))
}

/// Remove the task's worktree and its administrative files (logged, never fatal).
fn remove_worktree(task: &GitTask) {
    let Some((name, path)) = &task.worktree else {
        return;
    };
    let _guard = REPO_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let r = Repository::open(&task.repo_root)
        .and_then(|repo| repo.find_worktree(name))
        .and_then(|wt| {
            wt.prune(Some(
                WorktreePruneOptions::new()
                    .valid(true)
                    .locked(false)
                    .working_tree(true),
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

/// What git made of a finished task (the result's `runner_git`, JUnit `git.*` properties).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GitSummary {
    /// The task ran in a worktree of its own.
    pub isolated: bool,
    /// The commit its changes are measured against.
    pub base_commit: String,
    /// Whether it changed any file.
    pub changed: bool,
    /// Files changed, added or deleted.
    pub files_changed: usize,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// The patch file (`git apply`-able against the base commit).
    pub patch: Option<PathBuf>,
    /// Branch the changes were committed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// That commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The worktree, when it was kept (after an interrupt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<PathBuf>,
    /// Each file changed, with its lines added and removed, in the patch's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
}

/// One file a task changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Its path, relative to the repository root.
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed` or `typechange`.
    pub status: String,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// A binary file (no line counts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

/// The [`FileChange`] of delta `i` of `diff`, with the line counts of its `patch`.
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
/// the branch on success, then remove the worktree unless the task was interrupted. On error
/// the worktree is still removed (unless interrupted) and the summary so far is returned with it.
pub fn finish(task: &GitTask, end: Ending<'_>) -> (GitSummary, Option<GitError>) {
    let mut summary = GitSummary {
        isolated: task.worktree.is_some(),
        base_commit: task.base_commit.to_string(),
        ..Default::default()
    };
    let err = record_changes(task, end, &mut summary).err();
    if end.interrupted {
        summary.worktree = task.worktree_path().map(Path::to_path_buf);
    } else {
        remove_worktree(task);
    }
    (summary, err)
}

fn record_changes(
    task: &GitTask,
    end: Ending<'_>,
    summary: &mut GitSummary,
) -> Result<(), GitError> {
    let root = task.root();
    let end_tree = snapshot_tree(root, &task.plan.exclude).map_err(git_err(format!(
        "snapshot the changes in {}",
        root.display()
    )))?;
    let repo = Repository::open(root).map_err(git_err(format!("open {}", root.display())))?;
    let old = repo
        .find_tree(task.base_tree)
        .map_err(git_err("read the base tree"))?;
    let new = repo
        .find_tree(end_tree)
        .map_err(git_err("read the end tree"))?;
    let mut opts = DiffOptions::new();
    opts.show_binary(true);
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
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
    let dir = &task.plan.patch_dir;
    std::fs::create_dir_all(dir).map_err(io_err(format!(
        "create the patch directory {}",
        dir.display()
    )))?;
    let path = dir.join(format!("{}.patch", end.task));
    std::fs::write(&path, &text).map_err(io_err(format!("write the patch {}", path.display())))?;
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
        let commit = commit_on_branch(&repo, task, branch, &diff, &new, end)?;
        tracing::info!(task = end.task, branch = %branch, commit = %commit, "changes committed");
        summary.branch = Some(branch.clone());
        summary.commit = Some(commit.to_string());
    }
    Ok(())
}

/// Commit the task's changes on `branch`, on top of the base commit. When the base tree is not
/// the base commit's (a task run in place in a working tree with uncommitted changes), the
/// commit holds the base commit plus the task's diff; if that diff does not apply without the
/// uncommitted changes, they are committed first as a snapshot commit underneath.
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
            .and_then(|mut index| index.write_tree_to(repo))
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
    let _guard = REPO_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let oid = repo
        .commit(None, &sig, &sig, &message, &tree, &[&parent])
        .map_err(git_err(what()))?;
    let commit = repo.find_commit(oid).map_err(git_err(what()))?;
    repo.branch(branch, &commit, true)
        .map_err(git_err(what()))?;
    Ok(oid)
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
