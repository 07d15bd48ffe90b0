//! One pooled worktree on disk.
//!
//! A slot is a directory `SLOT` holding the worktree at `SLOT/tree` and its own git
//! administrative directory at `SLOT/git` ([`super::admin`]); an overlay slot also has its
//! layers `SLOT/upper` and `SLOT/work`, and `SLOT/slot.json` says what it was made from, so
//! that a task kept for resume can be mounted again ([`reattach`]). `SLOT/taken` marks a slot
//! a task has started in, `SLOT/kept` one its batch kept for `runner resume` (the task was
//! interrupted and its result names the worktree). A later batch removes every slot of a batch
//! that is gone except the kept ones ([`super::sweep`]).
//!
//! An overlay slot's lower layer is a template checkout of its tree or the repository's own
//! checkout (`super::lower`); each slot gets a copy of the lower layer's index, so `git status`
//! in the task finds the files clean without reading them.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use git2::Oid;
use serde::{Deserialize, Serialize};

use super::checkout::{self, Cancel};
use super::layout::{KEPT, TAKEN};
use super::layout::{TREE, remove_logged};
use super::lower::Lower;
use super::overlay::{self, Layers, Options};
use super::{GitError, admin, git_err, io_err};

/// What an overlay slot was made from.
const META: &str = "slot.json";

/// What an overlay slot was made from (`SLOT/slot.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Meta {
    /// The repository's common git directory.
    common_dir: PathBuf,
    /// The base tree (hex).
    tree: String,
    /// The commit HEAD was detached at (hex).
    commit: String,
    /// The lower layer it was mounted on (the batch's template, which is gone after the batch).
    lower: PathBuf,
    /// Whether git's filters are used for this tree ([`checkout::needs_filters`]).
    filters: bool,
}

/// How a slot's worktree is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotKind {
    /// An overlay mount on a template.
    Overlay(Options),
    /// A checkout of its own.
    Checkout,
}

/// A pooled worktree on disk.
#[derive(Debug)]
pub(crate) struct Slot {
    /// `SLOT`.
    pub dir: PathBuf,
    pub kind: SlotKind,
    /// The tree it holds now.
    pub tree: Oid,
    /// Whether git's filters are used for that tree.
    pub filters: bool,
    /// The common git directory of its repository.
    pub common_dir: PathBuf,
    /// The lower layer of an overlay slot.
    pub lower: Option<Arc<Lower>>,
}

impl Slot {
    /// The worktree.
    pub(crate) fn worktree(&self) -> PathBuf {
        self.dir.join(TREE)
    }

    /// The overlay's upper directory (overlay slots only).
    pub(crate) fn upper(&self) -> Option<PathBuf> {
        matches!(self.kind, SlotKind::Overlay(_)).then(|| self.dir.join("upper"))
    }

    fn admin(&self) -> PathBuf {
        self.dir.join(admin::ADMIN_DIR)
    }

    /// Make an overlay slot at `dir` on `lower`, HEAD detached at `commit`, and mount it.
    pub(crate) fn overlay(
        dir: &Path,
        lower: &Arc<Lower>,
        common_dir: &Path,
        commit: Oid,
        tree: Oid,
        opts: Options,
    ) -> Result<Slot, GitError> {
        let slot = Slot {
            dir: dir.to_path_buf(),
            kind: SlotKind::Overlay(opts),
            tree,
            filters: lower.filters(),
            common_dir: common_dir.to_path_buf(),
            lower: Some(lower.clone()),
        };
        let what = || format!("prepare the overlay worktree {}", slot.worktree().display());
        let (upper, work, tree_dir, admin_dir) = (
            dir.join("upper"),
            dir.join("work"),
            slot.worktree(),
            slot.admin(),
        );
        for d in [&upper, &work, &tree_dir] {
            std::fs::create_dir_all(d).map_err(io_err(what()))?;
        }
        admin::write(&admin_dir, common_dir, &tree_dir, commit).map_err(io_err(what()))?;
        std::fs::copy(lower.index(), admin_dir.join("index")).map_err(io_err(what()))?;
        // The task's `.git` file, in its upper layer: it hides the template's own.
        admin::write_gitfile(&upper, &admin_dir).map_err(io_err(what()))?;
        let meta = Meta {
            common_dir: common_dir.to_path_buf(),
            tree: tree.to_string(),
            commit: commit.to_string(),
            // The repository's own checkout is not recorded: it may have changed by the time
            // the worktree is mounted again, which then checks out a lower layer of its own.
            lower: lower
                .template_tree()
                .unwrap_or_else(|| dir.join("lower").join(TREE)),
            filters: lower.filters(),
        };
        let json = serde_json::to_vec(&meta).unwrap_or_default();
        std::fs::write(dir.join(META), json).map_err(io_err(what()))?;
        let lowers = lower.layers();
        let layers = Layers {
            lower: &lowers,
            upper: &upper,
            work: &work,
        };
        overlay::mount(&layers, &tree_dir, opts).map_err(io_err(format!(
            "mount the overlay worktree {}",
            tree_dir.display()
        )))?;
        Ok(slot)
    }

    /// Make a checkout slot at `dir`: a full checkout of `tree`, HEAD detached at `commit`,
    /// unless `cancel` stops it.
    pub(crate) fn checkout(
        dir: &Path,
        common_dir: &Path,
        commit: Oid,
        tree: Oid,
        filters: bool,
        cancel: &Cancel,
    ) -> Result<Slot, GitError> {
        checkout::create(dir, common_dir, commit, tree, filters, cancel)?;
        Ok(Slot {
            dir: dir.to_path_buf(),
            kind: SlotKind::Checkout,
            tree,
            filters,
            common_dir: common_dir.to_path_buf(),
            lower: None,
        })
    }

    /// A task starts in the slot: HEAD detached at `commit`, and the slot marked as taken.
    pub(crate) fn take(&self, commit: Oid) -> Result<(), GitError> {
        let what = || format!("start a task in {}", self.worktree().display());
        admin::set_head(&self.admin(), commit).map_err(io_err(what()))?;
        std::fs::write(self.dir.join(TAKEN), b"").map_err(io_err(what()))
    }

    /// Make a checkout slot a clean checkout of `tree` again for the next task (commit `commit`).
    /// A slot whose `.git` file or administrative directory is no longer as runner made it (a
    /// task pointed it elsewhere) is not reset: the error says so, and the caller removes it.
    pub(crate) fn reset(&mut self, commit: Oid, tree: Oid, filters: bool) -> Result<(), GitError> {
        let work = self.worktree();
        let what = || format!("reset the worktree {}", work.display());
        if let Some(why) = admin::changed(&self.admin(), &self.common_dir, &work) {
            return Err(GitError::Io {
                what: what(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{why}; runner does not follow it, the worktree is made anew"),
                ),
            });
        }
        checkout::reset(&self.dir, &self.common_dir, tree, filters).map_err(git_err(what()))?;
        admin::set_head(&self.admin(), commit).map_err(io_err(what()))?;
        self.given_back();
        self.tree = tree;
        self.filters = filters;
        Ok(())
    }

    /// The task that had the slot is done with it: no later batch keeps it for resume.
    pub(crate) fn given_back(&self) {
        let _ = std::fs::remove_file(self.dir.join(TAKEN));
    }

    /// Keep the slot for resume: marked kept, and an overlay unmounted (`runner resume` mounts
    /// it again); its layers and administrative directory stay.
    pub(crate) fn keep(self) {
        if let Err(e) = std::fs::write(self.dir.join(KEPT), b"") {
            tracing::warn!(worktree = %self.worktree().display(), "cannot mark the worktree kept for resume ({e}); the next batch may remove it");
        }
        self.unmount();
    }

    /// Unmount an overlay slot (its files stay); nothing for a checkout.
    pub(crate) fn unmount(&self) {
        if matches!(self.kind, SlotKind::Overlay(_)) {
            unmount_logged(&self.worktree());
        }
    }

    /// Remove the slot: unmount an overlay, delete its files.
    pub(crate) fn destroy(self) {
        self.unmount();
        remove_logged(&self.dir);
    }
}

fn unmount_logged(path: &Path) {
    if overlay::is_mounted(path)
        && let Err(e) = overlay::unmount(path)
    {
        tracing::warn!(worktree = %path.display(), "cannot unmount the worktree: {e}");
    }
}

/// Overlay worktrees this process mounted again for `runner resume`, with the lock that
/// tells a sweeping batch they are in use; unmounted when the resumed task finishes.
static REATTACHED: Mutex<Vec<(PathBuf, Option<File>)>> = Mutex::new(Vec::new());

/// If `path` is the worktree of an overlay slot kept for resume and not mounted, mount it
/// again, on its batch's template if that still exists, else on a checkout of its base tree
/// made in the slot (`SLOT/lower`, reused by later resumes). Anything else is left alone.
pub fn reattach(path: &Path) -> Result<(), GitError> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    let Ok(json) = std::fs::read(dir.join(META)) else {
        return Ok(());
    };
    if path.file_name() != Some(std::ffi::OsStr::new(TREE)) || overlay::is_mounted(path) {
        return Ok(());
    }
    let what = || format!("mount the kept worktree {} again", path.display());
    let meta: Meta = serde_json::from_slice(&json).map_err(|e| GitError::Io {
        what: what(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })?;
    let lock = super::sweep::hold_shared(dir.parent().unwrap_or(dir));
    let lower = if meta.lower.join(".git").exists() {
        meta.lower.clone()
    } else {
        let own = dir.join("lower");
        if !own.join(TREE).join(".git").exists() {
            let parse = |s: &str| Oid::from_str(s).map_err(git_err(what()));
            remove_logged(&own);
            tracing::info!(worktree = %path.display(), "checking the base tree out again for the kept worktree");
            checkout::create(
                &own,
                &meta.common_dir,
                parse(&meta.commit)?,
                parse(&meta.tree)?,
                meta.filters,
                &Cancel::default(),
            )?;
        }
        own.join(TREE)
    };
    let (upper, work) = (dir.join("upper"), dir.join("work"));
    overlay::clear_volatile_marker(&work);
    let lowers = [lower];
    let layers = Layers {
        lower: &lowers,
        upper: &upper,
        work: &work,
    };
    let mut last = None;
    for opts in overlay::CANDIDATES {
        match overlay::mount(&layers, path, opts) {
            Ok(()) => {
                last = None;
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    if let Some(e) = last {
        return Err(io_err(what())(e));
    }
    tracing::info!(worktree = %path.display(), "kept overlay worktree mounted again");
    REATTACHED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((path.to_path_buf(), lock));
    Ok(())
}

/// A resumed task in the kept slot worktree `worktree` has ended: an overlay is unmounted
/// (whoever mounted it: [`reattach`], or a batch that was killed), and unless the worktree is
/// `keep`t again for another resume, the slot is removed.
pub(crate) fn end_kept(worktree: &Path, keep: bool) {
    release_reattached(worktree);
    unmount_logged(worktree);
    let Some(dir) = worktree.parent() else {
        return;
    };
    let is_slot = worktree.file_name() == Some(std::ffi::OsStr::new(TREE))
        && dir.join(admin::ADMIN_DIR).is_dir();
    if !keep && is_slot {
        remove_logged(dir);
    }
}

/// Unmount `root` if [`reattach`] mounted it (a resumed task has finished).
pub(crate) fn release_reattached(root: &Path) {
    let mut list = REATTACHED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = list.iter().position(|(p, _)| p == root) {
        let (path, _lock) = list.remove(i);
        unmount_logged(&path);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_git::git;
    use super::*;

    /// A checkout slot of a repository with `src/a.txt`, and a directory outside both.
    fn setup(dir: &Path) -> (Slot, Oid, Oid, PathBuf) {
        let root = dir.join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("src/a.txt"), "a\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        let common = std::fs::canonicalize(root.join(".git")).unwrap();
        let repo = git2::Repository::open(&root).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        let slot = Slot::checkout(
            &dir.join("s1"),
            &common,
            head.id(),
            head.tree_id(),
            false,
            &Cancel::default(),
        )
        .unwrap();
        let outside = dir.join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep.txt"), "keep\n").unwrap();
        (slot, head.id(), head.tree_id(), outside)
    }

    /// What a task may do to a slot's `.git` file or administrative directory: each is
    /// refused before the reset touches any file, and what is outside stays.
    #[test]
    fn a_slot_pointed_elsewhere_is_not_reset() {
        let dir = tempfile::tempdir().unwrap();
        let (mut slot, commit, tree, outside) = setup(dir.path());
        slot.reset(commit, tree, false).unwrap();
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        git(&other, &["init", "-q"]);
        git(
            &other,
            &["config", "core.worktree", outside.to_str().unwrap()],
        );
        let gitfile = slot.worktree().join(".git");
        let admin = slot.admin();
        type Change<'a> = (&'a str, Box<dyn Fn() + 'a>);
        let changes: [Change<'_>; 4] = [
            (
                "gitdir file",
                Box::new(|| {
                    std::fs::write(
                        &gitfile,
                        format!("gitdir: {}\n", other.join(".git").display()),
                    )
                    .unwrap()
                }),
            ),
            (
                "symlink",
                Box::new(|| {
                    std::fs::remove_file(&gitfile).unwrap();
                    std::os::unix::fs::symlink(other.join(".git"), &gitfile).unwrap();
                }),
            ),
            (
                "commondir",
                Box::new(|| {
                    std::fs::write(
                        admin.join("commondir"),
                        format!("{}\n", other.join(".git").display()),
                    )
                    .unwrap()
                }),
            ),
            (
                "admin gitdir",
                Box::new(|| {
                    std::fs::write(admin.join("gitdir"), format!("{}\n", outside.display()))
                        .unwrap()
                }),
            ),
        ];
        for (what, change) in changes {
            let snap = |p: &Path| std::fs::read(p).ok();
            let (g, c, d) = (
                snap(&gitfile),
                snap(&admin.join("commondir")),
                snap(&admin.join("gitdir")),
            );
            change();
            std::fs::write(slot.worktree().join("src/a.txt"), "task\n").unwrap();
            let err = slot.reset(commit, tree, false).unwrap_err().to_string();
            assert!(err.contains("does not follow"), "{what}: {err}");
            assert_eq!(
                std::fs::read_to_string(slot.worktree().join("src/a.txt")).unwrap(),
                "task\n",
                "{what}: nothing is reset"
            );
            let names: Vec<_> = std::fs::read_dir(&outside).unwrap().flatten().collect();
            assert_eq!(names.len(), 1, "{what}");
            let _ = std::fs::remove_file(&gitfile);
            for (p, bytes) in [
                (gitfile.clone(), g),
                (admin.join("commondir"), c),
                (admin.join("gitdir"), d),
            ] {
                std::fs::write(p, bytes.unwrap()).unwrap();
            }
            slot.reset(commit, tree, false).unwrap();
        }
    }

    /// A tracked directory replaced by a symbolic link to a directory outside: the reset puts
    /// the directory back and writes nothing through the link.
    #[test]
    fn a_reset_does_not_write_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let (mut slot, commit, tree, outside) = setup(dir.path());
        let src = slot.worktree().join("src");
        std::fs::remove_dir_all(&src).unwrap();
        std::os::unix::fs::symlink(&outside, &src).unwrap();
        slot.reset(commit, tree, false).unwrap();
        assert!(!src.is_symlink());
        assert_eq!(std::fs::read_to_string(src.join("a.txt")).unwrap(), "a\n");
        let names: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["keep.txt"]);
    }
}
