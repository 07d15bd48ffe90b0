//! A template: a checkout of one tree (`TEMPLATE/tree`, with `TEMPLATE/git/index` holding the
//! files' stat data) that overlay worktrees of that tree use as their lower layer, made for one
//! batch or kept in the template cache (`super::template_cache`).

use std::fs::File;
use std::path::{Path, PathBuf};

use git2::Oid;

use super::checkout::{self, Cancel};
use super::layout::TREE;
use super::{GitError, admin};

/// A checkout of one tree that overlay slots use as their lower layer.
#[derive(Debug)]
pub(crate) struct Template {
    /// `TEMPLATE`: `TEMPLATE/tree` is the checkout.
    pub dir: PathBuf,
    /// Whether git's filters are used for this tree.
    pub filters: bool,
    /// A template of the cache (`super::template_cache`): the lock that keeps it as it is
    /// while this batch uses it; such a template stays after the batch.
    pub cached: Option<File>,
}

impl Template {
    /// Check `tree` out into `dir` (which must not exist yet), unless `cancel` stops it.
    pub(crate) fn create(
        dir: &Path,
        common_dir: &Path,
        commit: Oid,
        tree: Oid,
        filters: bool,
        cancel: &Cancel,
    ) -> Result<Template, GitError> {
        checkout::create(dir, common_dir, commit, tree, filters, cancel)?;
        Ok(Template {
            dir: dir.to_path_buf(),
            filters,
            cached: None,
        })
    }

    /// The checkout.
    pub(crate) fn tree(&self) -> PathBuf {
        self.dir.join(TREE)
    }

    /// Its index, with the stat data of its files.
    pub(crate) fn index(&self) -> PathBuf {
        self.dir.join(admin::ADMIN_DIR).join("index")
    }
}
