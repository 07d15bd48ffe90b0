//! What each task does with git, decided before any task starts: isolated or in place, base,
//! branch, patch directory; a dirty working tree refused for isolated tasks with `base: head`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::{Repository, Signature, StatusOptions};

use super::record::BaseRecord;
use super::{DIRTY_PATHS_SHOWN, GitError, WorktreeSource, git_err, relative_excludes};
use crate::roots::normalize_lexically;
use crate::spec::{GitAuthor, GitBase, LoadedSpec, SpecError};

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
    /// A resumed task: the base and worktree its run recorded when it started, which it goes
    /// on with (see [`resumed_plan`]).
    pub resume_from: Option<BaseRecord>,
    /// Untracked paths of the repository's checkout the task sees when its worktree is
    /// layered on the checkout (`git.share_untracked`, relative to the repository root).
    pub share_untracked: Vec<PathBuf>,
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
/// default). `patch_dir` and `exclude` are runner's output locations. (One task; for the tasks
/// of a run, [`Planner`] reads each repository's state once.)
pub fn plan(
    loaded: &LoadedSpec,
    multi: bool,
    patch_dir: &Path,
    exclude: &[PathBuf],
) -> Result<GitPlan, GitError> {
    Planner::default().plan(loaded, multi, patch_dir, exclude)
}

/// The plan of a resumed task whose run recorded its git base: the run's repository, base,
/// worktree, excluded directories and patch directory (`patch_dir` instead, when one is given
/// to the resume), with branch, author and `require_changes` from the spec. Nothing is
/// checked again: the run's plan was, when it started.
pub fn resumed_plan(
    loaded: &LoadedSpec,
    recorded: BaseRecord,
    patch_dir: Option<&Path>,
) -> GitPlan {
    let g = &loaded.spec.git;
    if let Some(repo) = &recorded.repository {
        super::pinned::adopt(repo.clone());
    }
    GitPlan {
        repo_root: Some(recorded.repo_root.clone()),
        isolate: recorded.worktree.is_some(),
        base: g.base,
        require_changes: g.require_changes,
        branch: g.branch.name_for(&loaded.spec.name),
        author: g.author.clone(),
        patch_dir: patch_dir.map_or_else(|| recorded.patch_dir.clone(), absolute),
        exclude: recorded.exclude.clone(),
        worktrees: None,
        resume_from: Some(recorded),
        share_untracked: Vec::new(),
    }
}

/// Plans the git work of the tasks of one run ([`plan`] for each), reading what they share —
/// a repository's uncommitted changes, which take a walk of its working tree — once.
#[derive(Debug, Default)]
pub struct Planner {
    /// Dirty paths by repository root and excluded directories.
    dirty: HashMap<(PathBuf, Vec<PathBuf>), Vec<String>>,
    /// Files whose uncommitted changes are a warning, not a dirty tree (absolute).
    tolerated: Vec<PathBuf>,
    /// Repositories whose tolerated changes were already warned about.
    warned: Vec<PathBuf>,
    /// The repository root of each workdir planned (the tasks of a batch mostly share one).
    roots: HashMap<PathBuf, Option<PathBuf>>,
}

impl Planner {
    /// Let `files` (the run's own spec files, which runner reads from disk) differ from HEAD:
    /// their uncommitted changes are logged as a warning, once per repository.
    pub fn tolerate(&mut self, files: impl IntoIterator<Item = PathBuf>) {
        self.tolerated
            .extend(files.into_iter().map(|f| absolute(&f)));
    }

    /// `dirty` (paths relative to `root`) without the tolerated files, warning about those.
    fn untolerated(&mut self, root: &Path, dirty: Vec<String>) -> Vec<String> {
        let (tolerated, rest): (Vec<String>, Vec<String>) = dirty
            .into_iter()
            .partition(|p| self.tolerated.contains(&absolute(&root.join(p))));
        if !tolerated.is_empty() && !self.warned.iter().any(|w| w == root) {
            self.warned.push(root.to_path_buf());
            tracing::warn!(
                "spec files of this run have uncommitted changes ({}); runner reads them as they are on disk, while isolated tasks start from HEAD",
                tolerated.join(", ")
            );
        }
        rest
    }

    /// [`plan`] for one task of the run.
    pub fn plan(
        &mut self,
        loaded: &LoadedSpec,
        multi: bool,
        patch_dir: &Path,
        exclude: &[PathBuf],
    ) -> Result<GitPlan, GitError> {
        let g = &loaded.spec.git;
        let repo_root = self
            .roots
            .entry(loaded.workdir.clone())
            .or_insert_with(|| repo_root_of(&loaded.workdir))
            .clone();
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
        // What runner's own git work will use, recorded before any task runs.
        super::pinned::record(&root)
            .map_err(git_err(format!("record the repository {}", root.display())))?;
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
        if let Some(p) = g.share_untracked.iter().find(|p| {
            p.components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        }) {
            return Err(SpecError::at(
                loaded,
                "git.share_untracked",
                format!(
                    "`{}` must be a path relative to the repository root, without `.` or `..`",
                    p.display()
                ),
            )
            .into());
        }
        let isolate = g.isolate.unwrap_or(multi);
        let exclude: Vec<PathBuf> = exclude.iter().map(|p| absolute(p)).collect();
        if isolate && g.base == GitBase::Head {
            let dirty = match self.dirty.get(&(root.clone(), exclude.clone())) {
                Some(d) => d.clone(),
                None => {
                    let d = dirty_at_head(&root, &exclude)
                        .map_err(git_err(format!("read the status of {}", root.display())))?;
                    self.dirty
                        .insert((root.clone(), exclude.clone()), d.clone());
                    d
                }
            };
            let dirty = self.untolerated(&root, dirty);
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
            resume_from: None,
            share_untracked: g.share_untracked.clone(),
        })
    }
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

/// [`dirty_paths`] for an isolated batch on HEAD. The checkout is first checked the way the
/// worktree pool checks it before layering worktrees on it (`super::verified`): when it holds
/// exactly HEAD's tree nothing is dirty, and the pool takes this check instead of making its
/// own; otherwise git's status lists what differs.
fn dirty_at_head(root: &Path, exclude: &[PathBuf]) -> Result<Vec<String>, git2::Error> {
    if let Ok(repo) = super::pinned::open_root(root)
        && let Ok(tree) = repo.head().and_then(|h| h.peel_to_tree()).map(|t| t.id())
    {
        // Through git's filters: a check that compared that carefully serves either kind
        // of tree.
        match super::verified::CleanCheckout::verify(&repo, root, tree, true) {
            Ok(clean) => {
                super::verified::keep(root, tree, true, clean);
                // The repository holds the index it read: freeing a large one entry by
                // entry takes milliseconds, not on the way to the first task.
                std::thread::spawn(move || drop(repo));
                return Ok(Vec::new());
            }
            Err(why) => {
                tracing::debug!(root = %root.display(), %why, "the checkout is not HEAD's tree as it stands")
            }
        }
    }
    dirty_paths(root, exclude)
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
