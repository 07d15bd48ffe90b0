//! The on-disk layout of the pool's slots and templates, shared by the code that makes them
//! (`slot`, `checkout`) and the code that cleans up after killed batches (`sweep`): the
//! worktree's place inside a slot and the markers a slot carries.

use std::path::Path;

/// The worktree inside a slot or template directory.
pub(crate) const TREE: &str = "tree";
/// The marker of a slot a task has started in.
pub(super) const TAKEN: &str = "taken";
/// The marker of a slot kept for resume.
pub(super) const KEPT: &str = "kept";

/// Remove a directory tree, logging (never failing on) what cannot be removed.
pub(crate) fn remove_logged(dir: &Path) {
    if let Err(e) = std::fs::remove_dir_all(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %dir.display(), "cannot remove: {e}");
    }
}

/// Whether the slot directory `dir` was taken by a task.
pub(crate) fn was_taken(dir: &Path) -> bool {
    dir.join(TAKEN).exists()
}

/// Whether the slot directory `dir` was kept for resume by its batch.
pub(crate) fn was_kept(dir: &Path) -> bool {
    dir.join(KEPT).exists()
}
