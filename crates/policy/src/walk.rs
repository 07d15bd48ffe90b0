//! Bounded walks of a directory tree, for the checks that must look inside one: a recursive
//! reader over a directory that holds a denied path, symlinks a recursive reader follows out
//! of the workspace, a protected path inside a tree a command removes or copies.

use std::path::{Path, PathBuf};

/// Most entries one walk looks at before the caller is told the tree is too large (and
/// treats it as the worst case).
pub const MAX_ENTRIES: usize = 50_000;

/// The tree under `dir` is larger than [`MAX_ENTRIES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

/// One entry: its path and whether it is a symlink.
pub struct Entry<'a> {
    /// The entry's path (under the walked directory).
    pub path: &'a Path,
    /// Whether it is a symbolic link (not followed).
    pub symlink: bool,
}

/// Walk `dir` (not following symlinks), calling `visit` on every entry until it returns
/// `Some`. A `dir` that is not a directory visits nothing.
pub fn find<T>(
    dir: &Path,
    mut visit: impl FnMut(&Entry<'_>) -> Option<T>,
) -> Result<Option<T>, TooLarge> {
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(TooLarge);
            }
            let path = e.path();
            let symlink = e.file_type().is_ok_and(|t| t.is_symlink());
            if let Some(t) = visit(&Entry {
                path: &path,
                symlink,
            }) {
                return Ok(Some(t));
            }
            if !symlink && e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    Ok(None)
}
