//! The mask layer: what hides a checkout's untracked and ignored files from the overlay
//! worktrees layered on it.
//!
//! overlayfs hides a name of a lower layer that a higher layer marks with a whiteout (a
//! character device 0/0). The mask is a directory, made once per batch, with a whiteout for
//! every entry of a tracked directory of the checkout that the base tree does not have (the
//! `.git` directory, build output, runner's own output directory), except the paths a task
//! asked to see (`git.share_untracked`). It sits between the task's upper directory and the
//! checkout, so a task sees the base tree and nothing else.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode};

/// The directories of a checkout's base tree, each with the index entries directly in it:
/// what the look at the checkout (`super::clean`) takes one directory at a time.
#[derive(Debug, Default)]
pub(crate) struct Tracked {
    /// Each directory (relative, bytes, `/`-separated; the root is the empty path) with the
    /// positions of the index entries in it, in the index's order.
    pub dirs: HashMap<Vec<u8>, Vec<usize>>,
}

impl Tracked {
    /// The directories of the index entries `paths` (in the index's order).
    pub(crate) fn of<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> Tracked {
        let mut dirs: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
        dirs.insert(Vec::new(), Vec::new());
        for (i, p) in paths.into_iter().enumerate() {
            let dir = parent(p);
            if let Some(files) = dirs.get_mut(dir) {
                files.push(i);
                continue;
            }
            dirs.insert(dir.to_vec(), vec![i]);
            // Every directory above, up to the first one already known.
            let mut up = parent(dir);
            while !dirs.contains_key(up) {
                dirs.insert(up.to_vec(), Vec::new());
                up = parent(up);
            }
        }
        Tracked { dirs }
    }

    /// Whether `rel` is a directory of the tree, or a file of it (`paths`: the index entries'
    /// paths by position, as given to [`Tracked::of`]).
    pub(crate) fn has<'a>(&self, rel: &[u8], path: impl Fn(usize) -> &'a [u8]) -> bool {
        self.dirs.contains_key(rel)
            || !rel.is_empty()
                && self
                    .dirs
                    .get(parent(rel))
                    .is_some_and(|files| files.iter().any(|&i| path(i) == rel))
    }
}

/// The directory `p` is in (the root, the empty path, for a name at the top).
pub(crate) fn parent(p: &[u8]) -> &[u8] {
    p.iter().rposition(|&b| b == b'/').map_or(&[], |i| &p[..i])
}

/// The last component of `p`.
pub(crate) fn base_name(p: &[u8]) -> &[u8] {
    p.iter()
        .rposition(|&b| b == b'/')
        .map_or(p, |i| &p[i + 1..])
}

/// Add every directory above `p` (not `p` itself) to `dirs`.
fn add_parents(dirs: &mut HashSet<Vec<u8>>, p: &[u8]) {
    for (i, b) in p.iter().enumerate() {
        if *b == b'/' {
            dirs.insert(p[..i].to_vec());
        }
    }
}

/// The mask of one checkout: the whiteouts made and the paths left visible.
#[derive(Debug, Default)]
pub(crate) struct Mask {
    /// Paths whited out (relative, bytes).
    pub hidden: HashSet<Vec<u8>>,
    /// Paths the tasks asked to see, and the directories above them.
    pub shared: HashSet<Vec<u8>>,
}

impl Mask {
    /// Whether a change to `rel` in the checkout is out of the tasks' sight (a whited-out
    /// name, or a path the tasks see as a cache).
    pub(crate) fn ignores(&self, rel: &[u8]) -> bool {
        self.hidden.contains(rel) || self.shared.contains(rel)
    }
}

/// Write the mask of the checkout `root` into `mask` (an empty directory): a whiteout for each
/// name of `found` (the names in the tree's directories that the tree does not have, as the
/// look at the checkout listed them) except `shared` (relative paths: those and what is under
/// them stay visible), for each name in an untracked directory above a shared path, and always
/// one for each of `hide` (relative paths of runner's own directories, which may not exist
/// yet). `tracked`: whether a relative path is a file or directory of the tree.
pub(crate) fn write(
    mask: &Path,
    root: &Path,
    found: &[Vec<u8>],
    tracked: &dyn Fn(&[u8]) -> bool,
    shared: &[PathBuf],
    hide: &[PathBuf],
) -> io::Result<Mask> {
    let mut out = Mask::default();
    let mut shared_above = HashSet::new();
    for s in shared {
        let b = s.as_os_str().as_bytes();
        out.shared.insert(b.to_vec());
        add_parents(&mut shared_above, b);
    }
    let visible = |rel: &[u8]| out.shared.contains(rel) || shared_above.contains(rel);
    let mut names: Vec<Vec<u8>> = found.iter().filter(|r| !visible(r)).cloned().collect();
    // An untracked directory on the way to a shared path is seen; what else it holds is not.
    let mut above: Vec<&Vec<u8>> = shared_above.iter().filter(|d| !tracked(d)).collect();
    above.sort();
    for dir in above {
        let Ok(entries) = std::fs::read_dir(root.join(OsStr::from_bytes(dir))) else {
            continue;
        };
        for e in entries.flatten() {
            let rel = join(dir, e.file_name().as_bytes());
            if !visible(&rel) {
                names.push(rel);
            }
        }
    }
    for rel in names {
        whiteout(mask, &rel)?;
        out.hidden.insert(rel);
    }
    for h in hide {
        let rel = h.as_os_str().as_bytes().to_vec();
        let mut above = HashSet::new();
        add_parents(&mut above, &rel);
        if tracked(&rel) || out.hidden.contains(&rel) || !out.hidden.is_disjoint(&above) {
            continue;
        }
        whiteout(mask, &rel)?;
        out.hidden.insert(rel);
    }
    out.shared.extend(shared_above);
    Ok(out)
}

/// `dir/name` as a relative path (`name` alone at the root).
pub(crate) fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut rel = Vec::with_capacity(dir.len() + 1 + name.len());
    join_into(&mut rel, dir, name);
    rel
}

/// [`join`] into `out` (cleared first), so that a walk can reuse one buffer.
pub(crate) fn join_into(out: &mut Vec<u8>, dir: &[u8], name: &[u8]) {
    out.clear();
    out.extend_from_slice(dir);
    if !dir.is_empty() {
        out.push(b'/');
    }
    out.extend_from_slice(name);
}

/// An overlay whiteout at `mask/rel` (its parent directories made as plain directories, which
/// overlayfs merges with the checkout's).
fn whiteout(mask: &Path, rel: &[u8]) -> io::Result<()> {
    let path = mask.join(OsStr::from_bytes(rel));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &path,
        FileType::CharacterDevice,
        Mode::empty(),
        rustix::fs::makedev(0, 0),
    )
    .map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileTypeExt;

    use super::*;

    fn names(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|n| n.as_bytes().to_vec()).collect()
    }

    #[test]
    fn untracked_names_are_whited_out_except_shared_ones() {
        let d = tempfile::tempdir().unwrap();
        let (root, mask) = (d.path().join("root"), d.path().join("mask"));
        for p in [
            "src/a.rs",
            "src/a.o",
            "target/debug/x",
            "junk/deep/y",
            ".git/HEAD",
            "build/cache/z",
            "build/out.bin",
        ] {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        std::fs::create_dir_all(&mask).unwrap();
        let paths: [&[u8]; 1] = [b"src/a.rs"];
        let tracked = Tracked::of(paths);
        let is_tracked = |rel: &[u8]| tracked.has(rel, |i| paths[i]);
        // What the look at the checkout's tracked directories (the root and `src`) listed.
        let found = names(&["src/a.o", "target", "junk", ".git", "build"]);
        let m = write(
            &mask,
            &root,
            &found,
            &is_tracked,
            &[PathBuf::from("target"), PathBuf::from("build/cache")],
            &[PathBuf::from(".runner"), PathBuf::from("junk/deep/z")],
        )
        .unwrap();
        let is_whiteout = |rel: &str| {
            std::fs::symlink_metadata(mask.join(rel)).is_ok_and(|m| m.file_type().is_char_device())
        };
        // Untracked names, runner's own directory, and what else an untracked directory
        // above a shared path holds.
        for rel in ["src/a.o", "junk", ".git", ".runner", "build/out.bin"] {
            assert!(is_whiteout(rel), "{rel}");
            assert!(m.ignores(rel.as_bytes()), "{rel}");
        }
        assert!(!mask.join("target").exists());
        assert!(!is_whiteout("build") && !is_whiteout("build/cache"));
        assert!(!is_whiteout("src/a.rs") && !is_whiteout("src"));
        assert!(m.ignores(b"target") && m.ignores(b"build/cache") && !m.ignores(b"src/a.rs"));
    }

    #[test]
    fn the_tree_s_directories_hold_their_entries_and_nothing_else_is_tracked() {
        let paths: [&[u8]; 4] = [b"README.md", b"src/a/one.rs", b"src/a/two.rs", b"src/b.rs"];
        let t = Tracked::of(paths);
        let mut dirs: Vec<(&[u8], Vec<usize>)> = t
            .dirs
            .iter()
            .map(|(d, f)| (d.as_slice(), f.clone()))
            .collect();
        dirs.sort();
        let want: Vec<(&[u8], Vec<usize>)> =
            vec![(b"", vec![0]), (b"src", vec![3]), (b"src/a", vec![1, 2])];
        assert_eq!(dirs, want);
        let has = |rel: &str| t.has(rel.as_bytes(), |i| paths[i]);
        for rel in ["", "src", "src/a", "src/a/two.rs", "README.md", "src/b.rs"] {
            assert!(has(rel), "{rel}");
        }
        for rel in ["src/c", "src/a/three.rs", "README", "src/b"] {
            assert!(!has(rel), "{rel}");
        }
    }
}
