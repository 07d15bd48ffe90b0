//! The lower layer of a batch's overlay worktrees: the repository's own checkout when it holds
//! exactly the base tree (no copy at all), else a template checkout of that tree.
//!
//! The checkout is used when its index equals the base tree and its files are the index's
//! (`super::clean`). Its untracked and ignored files are hidden by a mask layer above it
//! (`super::mask`), except the paths the tasks asked for (`git.share_untracked`); a watch
//! (`super::watch`) notices any change to it while the batch runs. overlayfs never writes a
//! lower layer: every write of a task lands in its own upper directory.

use std::path::{Path, PathBuf};

use super::error::LowerError;
use super::mask::{self, Mask};
use super::template::Template;
use super::verified::CleanCheckout;
use super::watch::Watch;

/// The repository's checkout as the lower layer, under its mask.
#[derive(Debug)]
pub(crate) struct CheckoutLower {
    /// The checkout's root.
    pub root: PathBuf,
    /// The directory of its mask and index (removed with it).
    dir: PathBuf,
    /// The mask layer (whiteouts).
    mask_dir: PathBuf,
    mask: Mask,
    /// An index of the base tree with the checkout's stat data, copied into each worktree.
    index: PathBuf,
    watch: Watch,
    filters: bool,
}

impl CheckoutLower {
    /// The checkout `root` as the lower layer for `tree`, with its mask and index written in a
    /// directory of their own outside the checkout (overlayfs refuses a layer inside another);
    /// `shared`: untracked paths the tasks see; `hide`: runner's own directories (relative to
    /// `root`), hidden even if they appear later. `Err`: why the checkout cannot be used (a
    /// template is made instead).
    pub(crate) fn new(
        root: &Path,
        tree: git2::Oid,
        filters: bool,
        shared: &[PathBuf],
        hide: &[PathBuf],
    ) -> Result<CheckoutLower, LowerError> {
        let repo = super::pinned::open_root(root).map_err(LowerError::Open)?;
        if repo.is_shallow() && repo.find_tree(tree).is_err() {
            return Err(LowerError::NoTree);
        }
        // The plan may have found the checkout clean already (`super::verified`).
        let clean = match super::verified::take(root, tree, filters) {
            Some(c) => c,
            None => CleanCheckout::verify(&repo, root, tree, filters)?,
        };
        let CleanCheckout {
            entries,
            tracked,
            watch,
            checked,
            untracked,
        } = clean;
        let dir = tempfile::Builder::new()
            .prefix("runner-lower-")
            .tempdir()
            .map_err(LowerError::TempDir)?
            .keep();
        let dir = super::absolute(&dir);
        if dir.starts_with(root) {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(LowerError::TempInside);
        }
        let mask_dir = dir.join("mask");
        std::fs::create_dir_all(&mask_dir).map_err(|source| LowerError::Create {
            path: mask_dir.clone(),
            source,
        })?;
        let is_tracked = |rel: &[u8]| tracked.has(rel, |i| entries[i].path.as_slice());
        let mask = mask::write(&mask_dir, root, &untracked, &is_tracked, shared, hide).map_err(
            |source| LowerError::Mask {
                path: mask_dir.clone(),
                source,
            },
        )?;
        // The base tree's entries with the checkout's stat data, copied into each worktree
        // (format 4, no extensions).
        let index_path = dir.join("index");
        super::index_file::write(&entries, &index_path).map_err(|source| {
            LowerError::WriteIndex {
                path: index_path.clone(),
                source,
            }
        })?;
        tracing::info!(
            checkout = %root.display(),
            files = checked.entries,
            hashed = checked.hashed,
            tree_cached = checked.tree_cached,
            hidden = mask.hidden.len(),
            "the checkout is clean at the base commit: worktrees are overlays on it (no template)"
        );
        Ok(CheckoutLower {
            root: root.to_path_buf(),
            dir,
            mask_dir,
            mask,
            index: index_path,
            watch,
            filters,
        })
    }
}

impl Drop for CheckoutLower {
    fn drop(&mut self) {
        super::layout::remove_logged(&self.dir);
    }
}

/// The lower layer of the overlay worktrees of one base tree.
#[derive(Debug)]
pub(crate) enum Lower {
    /// A template checkout of the tree.
    Template(Template),
    /// The repository's own checkout.
    Checkout(Box<CheckoutLower>),
}

impl Lower {
    /// The layers, highest first, as overlayfs takes them in `lowerdir`.
    pub(crate) fn layers(&self) -> Vec<PathBuf> {
        match self {
            Lower::Template(t) => vec![t.tree()],
            Lower::Checkout(c) => vec![c.mask_dir.clone(), c.root.clone()],
        }
    }

    /// The index with the lower files' stat data, copied into each worktree.
    pub(crate) fn index(&self) -> PathBuf {
        match self {
            Lower::Template(t) => t.index(),
            Lower::Checkout(c) => c.index.clone(),
        }
    }

    /// Whether git's filters are used for the tree.
    pub(crate) fn filters(&self) -> bool {
        match self {
            Lower::Template(t) => t.filters,
            Lower::Checkout(c) => c.filters,
        }
    }

    /// The template checkout the layers keep, which a resumed worktree may mount again;
    /// `None` for the repository's checkout and a cached template (either may have changed by
    /// then).
    pub(crate) fn template_tree(&self) -> Option<PathBuf> {
        match self {
            Lower::Template(t) if t.cached.is_none() => Some(t.tree()),
            _ => None,
        }
    }

    /// The directory to remove when the batch ends: a template of the batch's own (the
    /// checkout's mask and index are in the batch's directory; a cached template stays).
    pub(crate) fn owned_dir(&self) -> Option<PathBuf> {
        match self {
            Lower::Template(t) if t.cached.is_none() => Some(t.dir.clone()),
            _ => None,
        }
    }

    /// What changed in the checkout since it was found clean, if anything (never for a
    /// template: runner alone writes it, and not while it is in use).
    pub(crate) fn changed(&self) -> Option<String> {
        match self {
            Lower::Template(_) => None,
            Lower::Checkout(c) => c.watch.changed(&c.mask),
        }
    }
}
