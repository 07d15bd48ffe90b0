//! Which paths the integrity check watches for a task: the files that make a later git command
//! or CI step run code — the git directories' `config`, `hooks/` and `info/`, the work tree's
//! `.git` entry, `.gitmodules`, `.gitattributes` files and the GitHub workflow and action
//! directories.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

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
    for rel in repo
        .as_ref()
        .map(tracked_attributes)
        .unwrap_or_default()
        .iter()
    {
        let mut dir = root.clone();
        let parts: Vec<_> = Path::new(rel).components().collect();
        // Each directory on the way may not turn into a symlink.
        for c in &parts[..parts.len().saturating_sub(1)] {
            dir.push(c);
            add(dir.clone(), Depth::NoSymlink);
        }
        add(root.join(rel), Depth::Entry);
    }
    out
}

/// The tracked `.gitattributes` files below the root (the index's paths).
///
/// Reading a large index costs milliseconds of CPU (a 20,000-file index: parse, checksum and
/// path checks of every entry), and every task of a batch starts on a copy of the same index:
/// the list is kept per index content, keyed by the file's size and trailing checksum (see
/// [`index_key`]), and read again whenever the key is not known or the file changed while it
/// was read.
fn tracked_attributes(repo: &git2::Repository) -> Arc<[String]> {
    let file = repo.path().join("index");
    let key = index_key(&file);
    if let Some(k) = &key
        && let Some(hit) = known_attributes().get(k)
    {
        return hit.clone();
    }
    let list: Arc<[String]> = read_tracked_attributes(repo).into();
    if let Some(k) = key
        && index_key(&file).as_ref() == Some(&k)
    {
        let mut known = known_attributes();
        if known.len() >= KNOWN_INDEXES {
            known.clear();
        }
        known.insert(k, list.clone());
    }
    list
}

/// The index's paths that are `.gitattributes` files below the root: read from the index
/// file's paths alone (`runner_git::index_paths`), or by libgit2 when that reader does not
/// know the file.
fn read_tracked_attributes(repo: &git2::Repository) -> Vec<String> {
    let attributes = |paths: &mut dyn Iterator<Item = Vec<u8>>| -> Vec<String> {
        paths
            .filter(|p| p.ends_with(b"/.gitattributes"))
            .filter_map(|p| String::from_utf8(p).ok())
            .collect()
    };
    if let Ok(paths) = runner_git::index_paths(&repo.path().join("index")) {
        return attributes(&mut paths.into_iter());
    }
    let Ok(index) = repo.index() else {
        return Vec::new();
    };
    attributes(&mut index.iter().map(|e| e.path))
}

/// How many distinct indexes [`tracked_attributes`] remembers (a batch has one per base tree).
const KNOWN_INDEXES: usize = 64;

/// An index file's identity by content: its size and its last 32 bytes, which end with the
/// checksum git writes over the whole file (SHA-1 or SHA-256). `None` when the file cannot be
/// read or has no checksum (`index.skipHash` writes zeros), so that it is always read.
type IndexKey = (u64, [u8; 32]);

fn index_key(file: &Path) -> Option<IndexKey> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(file).ok()?;
    let len = f.metadata().ok()?.len();
    // Header (12 bytes) and a checksum at least.
    if len < 44 {
        return None;
    }
    f.seek(SeekFrom::Start(len - 32)).ok()?;
    let mut tail = [0u8; 32];
    f.read_exact(&mut tail).ok()?;
    if tail[12..].iter().all(|&b| b == 0) {
        return None;
    }
    Some((len, tail))
}

/// The lists [`tracked_attributes`] read, by index key.
fn known_attributes() -> std::sync::MutexGuard<'static, HashMap<IndexKey, Arc<[String]>>> {
    static KNOWN: OnceLock<Mutex<HashMap<IndexKey, Arc<[String]>>>> = OnceLock::new();
    KNOWN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `p` with its symlinks resolved, or as given when it does not exist.
fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
