//! A checkout found clean once, for the whole run.
//!
//! Planning an isolated batch on `HEAD` must know whether the checkout has uncommitted changes
//! (the batch is refused if it has), and the worktree pool must know whether the checkout holds
//! exactly the base tree before it layers worktrees on it. Both are the same walk over every
//! tracked file (20,000 `lstat`s and a tree comparison on a 20,000-file repository), and both
//! sit before the first task can start. The plan makes the check once, with the watch set
//! before it ([`super::lower`]'s order), and leaves the evidence here; the pool takes it
//! instead of checking again. A change after the check is what the watch is for: the pool
//! looks at it before it hands out each worktree, as it does for a check of its own.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use super::clean::{self, Checked};
use super::error::LowerError;
use super::mask::Tracked;
use super::watch::Watch;

/// The evidence that a checkout held a tree: its index's entries as read, the tracked
/// directories, the watch started before the check, what the check looked at and the names
/// it found that the tree does not have.
pub(crate) struct CleanCheckout {
    pub entries: Vec<git2::IndexEntry>,
    pub tracked: Tracked,
    pub watch: Watch,
    pub checked: Checked,
    pub untracked: Vec<Vec<u8>>,
}

impl std::fmt::Debug for CleanCheckout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CleanCheckout")
            .field("entries", &self.checked.entries)
            .field("hashed", &self.checked.hashed)
            .finish_non_exhaustive()
    }
}

impl CleanCheckout {
    /// Whether the checkout `root` of `repo` holds exactly `tree` (`filters`: compare a
    /// file's content through git's filters). The index is read, then each tracked directory
    /// is watched and looked at (`super::clean`). `Err`: why not.
    pub(crate) fn verify(
        repo: &git2::Repository,
        root: &Path,
        tree: git2::Oid,
        filters: bool,
    ) -> Result<CleanCheckout, LowerError> {
        // Loaded by `index()`; read again only if the file changed since (a forced read
        // would parse and checksum a large index twice).
        let mut index = repo.index().map_err(LowerError::Index)?;
        index.read(false).map_err(LowerError::Index)?;
        let entries: Vec<git2::IndexEntry> = index.iter().collect();
        let tracked = Tracked::of(entries.iter().map(|e| e.path.as_slice()));
        let listed = clean::Entries {
            entries: &entries,
            tracked: &tracked,
        };
        let looked = clean::check(repo, root, &mut index, listed, tree, filters)?;
        Ok(CleanCheckout {
            entries,
            tracked,
            watch: looked.watch,
            checked: looked.checked,
            untracked: looked.untracked,
        })
    }
}

/// Checkouts found clean and not yet taken: by root (canonical), tree, and whether the check
/// went through git's filters.
type Entry = (PathBuf, git2::Oid, bool, CleanCheckout);

fn found() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    static FOUND: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    FOUND.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Keep `clean`, the evidence that `root` held `tree`, for [`take`].
pub(crate) fn keep(root: &Path, tree: git2::Oid, filters: bool, clean: CleanCheckout) {
    let root = canonical(root);
    let mut found = found();
    found.retain(|(r, t, _, _)| !(r == &root && *t == tree));
    found.push((root, tree, filters, clean));
}

/// The evidence kept for `root` and `tree`, taken (once). A check made with filters serves a
/// tree that needs none (it compared more carefully), not the other way round.
pub(crate) fn take(root: &Path, tree: git2::Oid, filters: bool) -> Option<CleanCheckout> {
    let root = canonical(root);
    let mut found = found();
    let at = found
        .iter()
        .position(|(r, t, f, _)| r == &root && *t == tree && (*f || !filters))?;
    Some(found.swap_remove(at).3)
}

/// Whether the tree a kept check found in `root` holds a `.gitattributes` file (from the
/// index's paths, which equal the tree's); `None` when no check of `root` and `tree` is kept.
pub(crate) fn has_attributes(root: &Path, tree: git2::Oid) -> Option<bool> {
    let root = canonical(root);
    let found = found();
    let (_, _, _, clean) = found.iter().find(|(r, t, _, _)| r == &root && *t == tree)?;
    Some(
        clean
            .entries
            .iter()
            .any(|e| e.path == b".gitattributes" || e.path.ends_with(b"/.gitattributes")),
    )
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::super::lower::{CheckoutLower, Lower};
    use super::super::test_git::git;
    use super::*;

    fn repo() -> (tempfile::TempDir, PathBuf, git2::Oid) {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.txt"), "a\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        let tree = git2::Repository::open(&root)
            .unwrap()
            .head()
            .unwrap()
            .peel_to_tree()
            .unwrap()
            .id();
        (t, root, tree)
    }

    #[test]
    fn a_kept_check_is_taken_once_and_only_for_its_tree_and_filters() {
        let (_t, root, tree) = repo();
        let repo = super::super::pinned::open_root(&root).unwrap();
        let other = git2::Oid::from_str("0123456789abcdef0123456789abcdef01234567").unwrap();
        // Checked without filters: does not serve a tree that needs them.
        keep(
            &root,
            tree,
            false,
            CleanCheckout::verify(&repo, &root, tree, false).unwrap(),
        );
        assert!(take(&root, other, false).is_none());
        assert!(take(&root, tree, true).is_none());
        let taken = take(&root, tree, false).unwrap();
        assert_eq!(taken.checked.entries, 1);
        assert!(take(&root, tree, false).is_none(), "taken once");
        // Checked through filters: serves both.
        keep(
            &root,
            tree,
            true,
            CleanCheckout::verify(&repo, &root, tree, true).unwrap(),
        );
        assert!(take(&root, tree, false).is_some());
    }

    #[test]
    fn a_change_after_the_kept_check_is_seen_by_the_lower_layer_that_takes_it() {
        let (_t, root, tree) = repo();
        let repo = super::super::pinned::open_root(&root).unwrap();
        keep(
            &root,
            tree,
            true,
            CleanCheckout::verify(&repo, &root, tree, true).unwrap(),
        );
        // Changed between the plan's check and the pool's use of it.
        std::fs::write(root.join("src/a.txt"), "changed\n").unwrap();
        let lower = CheckoutLower::new(&root, tree, false, &[], &[]).unwrap();
        assert!(
            take(&root, tree, false).is_none(),
            "the pool took the check"
        );
        let changed = Lower::Checkout(Box::new(lower)).changed();
        assert!(
            changed.as_deref().is_some_and(|c| c.contains("src/a.txt")),
            "{changed:?}"
        );
    }

    #[test]
    fn a_kept_check_tells_whether_the_tree_has_attributes() {
        let (_t, root, tree) = repo();
        let repo = super::super::pinned::open_root(&root).unwrap();
        assert_eq!(has_attributes(&root, tree), None, "nothing kept yet");
        keep(
            &root,
            tree,
            true,
            CleanCheckout::verify(&repo, &root, tree, true).unwrap(),
        );
        assert_eq!(has_attributes(&root, tree), Some(false));
        std::fs::write(root.join("src/.gitattributes"), "*.txt text\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "attributes"]);
        let with = repo.head().unwrap().peel_to_tree().unwrap().id();
        keep(
            &root,
            with,
            true,
            CleanCheckout::verify(&repo, &root, with, true).unwrap(),
        );
        assert_eq!(has_attributes(&root, with), Some(true));
        assert!(
            super::super::checkout::needs_filters(&repo, with, None),
            "the walk agrees"
        );
    }

    #[test]
    fn a_modified_checkout_is_not_clean() {
        let (_t, root, tree) = repo();
        std::fs::write(root.join("src/a.txt"), "changed, and longer\n").unwrap();
        let repo = super::super::pinned::open_root(&root).unwrap();
        let why = CleanCheckout::verify(&repo, &root, tree, true)
            .unwrap_err()
            .to_string();
        assert!(why.contains("src/a.txt"), "{why}");
    }
}
