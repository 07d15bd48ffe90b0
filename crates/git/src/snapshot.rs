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
    let repo = super::pinned::open_root(root).map_err(git_err(what()))?;
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

#[cfg(test)]
mod tests {
    use super::super::test_git::git;
    use super::*;

    /// A repository with `src/a.txt`, and a directory outside it holding a fake private key.
    fn setup(dir: &Path) -> (PathBuf, PathBuf) {
        let root = dir.join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("src/a.txt"), "a\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        let secret = dir.join("home/.ssh");
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("id_rsa"), "FAKE-PRIVATE-KEY\n").unwrap();
        (std::fs::canonicalize(&root).unwrap(), secret)
    }

    /// Every blob of `tree`, as text.
    fn contents(repo: &Repository, tree: Oid) -> String {
        let tree = repo.find_tree(tree).unwrap();
        let mut out = String::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |_, e| {
            if let Ok(blob) = repo.find_blob(e.id()) {
                out.push_str(&String::from_utf8_lossy(blob.content()));
            }
            git2::TreeWalkResult::Ok
        })
        .unwrap();
        out
    }

    /// `core.worktree` written after the repository was recorded does not move the snapshot.
    #[test]
    fn a_planted_core_worktree_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (root, secret) = setup(dir.path());
        super::super::pinned::record(&root).unwrap();
        git(
            &root,
            &["config", "core.worktree", secret.to_str().unwrap()],
        );
        std::fs::write(root.join("src/a.txt"), "changed\n").unwrap();
        let tree = snapshot_tree(&root, &[], None).unwrap();
        let repo = Repository::open_bare(root.join(".git")).unwrap();
        let text = contents(&repo, tree);
        assert!(!text.contains("FAKE-PRIVATE-KEY"), "{text}");
        assert!(text.contains("changed"), "{text}");
    }

    /// A tracked file, and a tracked directory, replaced by symbolic links to the key: recorded
    /// as links (their target's path), never as what they point to.
    #[test]
    fn a_symlink_is_recorded_as_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let (root, secret) = setup(dir.path());
        std::fs::remove_file(root.join("src/a.txt")).unwrap();
        std::os::unix::fs::symlink(secret.join("id_rsa"), root.join("src/a.txt")).unwrap();
        std::os::unix::fs::symlink(&secret, root.join("keys")).unwrap();
        let tree = snapshot_tree(&root, &[], None).unwrap();
        let repo = Repository::open_bare(root.join(".git")).unwrap();
        let t = repo.find_tree(tree).unwrap();
        for path in ["src/a.txt", "keys"] {
            let e = t.get_path(Path::new(path)).unwrap();
            assert_eq!(e.filemode(), 0o120000, "{path}");
        }
        let text = contents(&repo, tree);
        assert!(!text.contains("FAKE-PRIVATE-KEY"), "{text}");
    }
}
