//! git for task runs (git2): per-task worktrees, patches, branch commits, change detection.
//!
//! Before any task starts, [`plan`] decides for each task whether it runs isolated (in a
//! worktree, checked out from the base commit) or in place, and refuses a dirty working tree
//! for isolated tasks with `base: head`. [`begin`] snapshots the base and gets the worktree;
//! [`finish`] diffs the end state against the base, writes the patch file, commits on the
//! task's branch on success and gives the worktree back (kept after an interrupt so the run
//! can be resumed there).
//!
//! - `task`: [`begin`] and [`finish`]; `patch`: the patch, counts and branch commit;
//! - `snapshot`: snapshots of the repository's own working tree; `changes`: end states as
//!   trees, from what changed;
//! - `worktree`: a worktree of a task's own (a task run alone);
//! - [`source`]: worktrees handed out by a batch's pool (`crate::batch::pool`), which makes
//!   them with `slot` (pooled worktrees and templates), `checkout`, `overlay` and `admin`
//!   (a worktree's own git directory), and cleans up after killed batches with `sweep`.
//!
//! Snapshots are trees made as `git add -A` would, without touching the index file, so
//! untracked files count as changes, ignored files (and runner's own output directories)
//! never do, and nothing in the user's index or HEAD moves.

mod admin;
mod changes;
pub(crate) mod checkout;
pub(crate) mod overlay;
mod patch;
pub(crate) mod slot;
mod snapshot;
pub mod source;
pub(crate) mod sweep;
mod task;
mod worktree;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use git2::{Repository, Signature, StatusOptions};

pub use patch::GitSummary;
pub use slot::reattach;
pub use source::{Lease, LeaseKind, WorktreeSource};
pub use task::{Ending, GitTask, begin, finish};

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

pub(crate) fn git_err(what: impl Into<String>) -> impl FnOnce(git2::Error) -> GitError {
    let what = what.into();
    move |source| GitError::Git { what, source }
}

pub(crate) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> GitError {
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
    /// Where an isolated task's worktree comes from in a batch that prepares them ahead (its
    /// pool); `None`: the task creates a worktree of its own.
    pub worktrees: Option<Arc<dyn WorktreeSource>>,
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
        worktrees: None,
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

/// `exclude` (absolute) as paths relative to `root`, for those inside it.
fn relative_excludes(root: &Path, exclude: &[PathBuf]) -> Vec<PathBuf> {
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
