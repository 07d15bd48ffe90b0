//! Which paths the integrity check watches for a task: the files that make a later git command
//! or CI step run code — the git directories' `config`, `hooks/` and `info/`, the work tree's
//! `.git` entry, `.gitmodules`, `.gitattributes` files and the GitHub workflow and action
//! directories.

use std::path::{Path, PathBuf};

/// How much of a watched path is fingerprinted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The entry itself: a file's bytes and mode, a symlink's target, a directory's mode.
    Entry,
    /// The entry and everything below it (a directory, walked; symlinks are not followed).
    Tree,
    /// Only whether the entry is a symlink: a directory on the way to a watched path (a
    /// symlink there would send the watched path, and a restore, elsewhere).
    NoSymlink,
}

/// One watched path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    /// Absolute path, its directories resolved when the watch was made.
    pub path: PathBuf,
    /// How much of it is fingerprinted.
    pub depth: Depth,
}

/// Files of a git directory that steer what git runs: its configuration (`config.worktree`
/// for a worktree with `extensions.worktreeConfig`), `commondir` (which repository a worktree
/// uses), the hooks, and the files of `info/` that change what git reads (attributes, which
/// switch on configured filters and diff drivers; exclude; sparse-checkout; grafts). `info/refs`
/// and `info/packs` are not watched: git itself rewrites them (`git gc`, `repack`,
/// `update-server-info`), and no git command runs anything from them.
const GIT_DIR_ENTRIES: &[(&str, Depth)] = &[
    ("config", Depth::Entry),
    ("config.worktree", Depth::Entry),
    ("commondir", Depth::Entry),
    ("hooks", Depth::Tree),
    ("info", Depth::NoSymlink),
    ("info/attributes", Depth::Entry),
    ("info/exclude", Depth::Entry),
    ("info/sparse-checkout", Depth::Entry),
    ("info/grafts", Depth::Entry),
];

/// The watched paths for a task working in `workdir`. In a repository: its work tree root's
/// `.git` entry, `.gitmodules`, root `.gitattributes` and every tracked one (from the index,
/// once, here), `.github/workflows/` and `.github/actions/`, and the [`GIT_DIR_ENTRIES`] of
/// the git directory and, for a worktree, of the common one. Outside a repository the same
/// work-tree files of `workdir` (a `.git` appearing there is a change).
pub fn paths(workdir: &Path) -> Vec<Watched> {
    let workdir = canonical(workdir);
    let repo = git2::Repository::discover(&workdir).ok();
    let root = repo
        .as_ref()
        .and_then(|r| r.workdir())
        .map(canonical)
        .unwrap_or_else(|| workdir.clone());
    let mut out = Vec::new();
    let mut add = |path: PathBuf, depth: Depth| {
        if !out.iter().any(|w: &Watched| w.path == path) {
            out.push(Watched { path, depth });
        }
    };
    add(root.join(".git"), Depth::Entry);
    if let Some(r) = &repo {
        for dir in [r.path(), r.commondir()] {
            let dir = canonical(dir);
            add(dir.clone(), Depth::Entry);
            for (name, depth) in GIT_DIR_ENTRIES {
                add(dir.join(name), *depth);
            }
        }
    }
    add(root.join(".gitmodules"), Depth::Entry);
    add(root.join(".gitattributes"), Depth::Entry);
    add(root.join(".github"), Depth::NoSymlink);
    add(root.join(".github/workflows"), Depth::Tree);
    add(root.join(".github/actions"), Depth::Tree);
    for rel in repo.as_ref().map(tracked_attributes).unwrap_or_default() {
        let mut dir = root.clone();
        let parts: Vec<_> = Path::new(&rel).components().collect();
        // Each directory on the way may not turn into a symlink.
        for c in &parts[..parts.len().saturating_sub(1)] {
            dir.push(c);
            add(dir.clone(), Depth::NoSymlink);
        }
        add(root.join(&rel), Depth::Entry);
    }
    out
}

/// The tracked `.gitattributes` files below the root (the index's paths).
fn tracked_attributes(repo: &git2::Repository) -> Vec<String> {
    let Ok(index) = repo.index() else {
        return Vec::new();
    };
    index
        .iter()
        .filter_map(|e| String::from_utf8(e.path).ok())
        .filter(|p| p.ends_with("/.gitattributes"))
        .collect()
}

/// `p` with its symlinks resolved, or as given when it does not exist.
fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
