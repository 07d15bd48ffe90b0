//! What runner's git work shares: the lock on shared repository state, where a workdir stands
//! in git, and small path and option helpers.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Serializes operations that change shared repository state (worktree admin files, refs)
/// between tasks running at once.
pub(crate) static REPO_LOCK: Mutex<()> = Mutex::new(());

/// Most dirty paths named in the error for a dirty working tree.
pub(crate) const DIRTY_PATHS_SHOWN: usize = 5;

/// `exclude` (absolute) as paths relative to `root`, for those inside it.
pub(crate) fn relative_excludes(root: &Path, exclude: &[PathBuf]) -> Vec<PathBuf> {
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
