//! The mask layer: what hides a checkout's untracked and ignored files from the overlay
//! worktrees layered on it.
//!
//! overlayfs hides a name of a lower layer that a higher layer marks with a whiteout (a
//! character device 0/0). The mask is a directory, made once per batch, with a whiteout for
//! every entry of a tracked directory of the checkout that the base tree does not have (the
//! `.git` directory, build output, runner's own output directory), except the paths a task
//! asked to see (`git.share_untracked`). It sits between the task's upper directory and the
//! checkout, so a task sees the base tree and nothing else.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode};

/// The names a checkout's base tree has: its files (and links) and its directories, as paths
/// relative to the root (bytes, `/`-separated; the root is the empty path).
#[derive(Debug, Default)]
pub(crate) struct Tracked {
    pub files: HashSet<Vec<u8>>,
    pub dirs: HashSet<Vec<u8>>,
}

impl Tracked {
    /// The names of the index entries `paths`.
    pub(crate) fn of<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> Tracked {
        let mut t = Tracked::default();
        t.dirs.insert(Vec::new());
        for p in paths {
            add_parents(&mut t.dirs, p);
            t.files.insert(p.to_vec());
        }
        t
    }

    /// Whether `rel` is a file or directory of the tree.
    pub(crate) fn has(&self, rel: &[u8]) -> bool {
        self.files.contains(rel) || self.dirs.contains(rel)
    }
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
/// name in a tracked directory that `tracked` does not have, except `shared` (relative paths:
/// those and what is under them stay visible) and always one for each of `hide` (relative
/// paths of runner's own directories, which may not exist yet).
pub(crate) fn write(
    mask: &Path,
    root: &Path,
    tracked: &Tracked,
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
    let mut dirs: Vec<&Vec<u8>> = tracked.dirs.iter().chain(shared_above.iter()).collect();
    dirs.sort();
    dirs.dedup();
    let foreign =
        |rel: &[u8]| !(tracked.has(rel) || out.shared.contains(rel) || shared_above.contains(rel));
    for rel in untracked(root, &dirs, &foreign) {
        whiteout(mask, &rel)?;
        out.hidden.insert(rel);
    }
    for h in hide {
        let rel = h.as_os_str().as_bytes().to_vec();
        let mut above = HashSet::new();
        add_parents(&mut above, &rel);
        if tracked.has(&rel) || out.hidden.contains(&rel) || !out.hidden.is_disjoint(&above) {
            continue;
        }
        whiteout(mask, &rel)?;
        out.hidden.insert(rel);
    }
    out.shared.extend(shared_above);
    Ok(out)
}

/// Below this many directories one thread lists them.
const DIRS_PER_THREAD: usize = 512;

/// The names in the directories `dirs` of `root` (relative paths, sorted) that `foreign`
/// says the tree does not have, in the directories' order. A directory that cannot be listed
/// has none. A large checkout's directories are listed on several threads, a share each.
fn untracked(
    root: &Path,
    dirs: &[&Vec<u8>],
    foreign: &(dyn Fn(&[u8]) -> bool + Sync),
) -> Vec<Vec<u8>> {
    let list = |part: &[&Vec<u8>]| {
        let mut found = Vec::new();
        for dir in part {
            let Ok(entries) = std::fs::read_dir(root.join(OsStr::from_bytes(dir))) else {
                continue;
            };
            for e in entries.flatten() {
                let rel = join(dir, e.file_name().as_bytes());
                if foreign(&rel) {
                    found.push(rel);
                }
            }
        }
        found
    };
    let threads = super::shares::threads(dirs.len(), DIRS_PER_THREAD);
    if threads == 1 {
        return list(dirs);
    }
    let share = dirs.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let workers: Vec<_> = dirs
            .chunks(share)
            .map(|part| s.spawn(move || list(part)))
            .collect();
        // A share whose thread failed to run is listed here instead.
        let mut found = Vec::new();
        for (w, part) in workers.into_iter().zip(dirs.chunks(share)) {
            found.extend(w.join().unwrap_or_else(|_| list(part)));
        }
        found
    })
}

/// `dir/name` as a relative path (`name` alone at the root).
pub(crate) fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut rel = dir.to_vec();
    if !rel.is_empty() {
        rel.push(b'/');
    }
    rel.extend_from_slice(name);
    rel
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
        ] {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        std::fs::create_dir_all(&mask).unwrap();
        let tracked = Tracked::of([b"src/a.rs".as_slice()]);
        let m = write(
            &mask,
            &root,
            &tracked,
            &[PathBuf::from("target")],
            &[PathBuf::from(".runner"), PathBuf::from("junk/deep/z")],
        )
        .unwrap();
        let is_whiteout = |rel: &str| {
            std::fs::symlink_metadata(mask.join(rel)).is_ok_and(|m| m.file_type().is_char_device())
        };
        for rel in ["src/a.o", "junk", ".git", ".runner"] {
            assert!(is_whiteout(rel), "{rel}");
            assert!(m.ignores(rel.as_bytes()), "{rel}");
        }
        assert!(!mask.join("target").exists());
        assert!(!is_whiteout("src/a.rs") && !is_whiteout("src"));
        assert!(m.ignores(b"target") && !m.ignores(b"src/a.rs"));
    }

    /// A checkout with more directories than one thread lists: every untracked name of every
    /// share is whited out, and nothing tracked.
    #[test]
    fn a_large_checkout_is_listed_in_shares() {
        let d = tempfile::tempdir().unwrap();
        let (root, mask) = (d.path().join("root"), d.path().join("mask"));
        let dirs = DIRS_PER_THREAD * 2 + 3;
        let mut tracked = Vec::new();
        for i in 0..dirs {
            let dir = root.join(format!("d{i:04}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("kept.rs"), "").unwrap();
            tracked.push(format!("d{i:04}/kept.rs"));
            if i % 7 == 0 {
                std::fs::write(dir.join("built.o"), "").unwrap();
            }
        }
        std::fs::create_dir_all(&mask).unwrap();
        let tracked = Tracked::of(tracked.iter().map(|p| p.as_bytes()));
        let m = write(&mask, &root, &tracked, &[], &[]).unwrap();
        assert_eq!(m.hidden.len(), dirs.div_ceil(7));
        for i in 0..dirs {
            let built = format!("d{i:04}/built.o");
            assert_eq!(m.hidden.contains(built.as_bytes()), i % 7 == 0, "{built}");
            assert_eq!(
                std::fs::symlink_metadata(mask.join(&built)).is_ok(),
                i % 7 == 0
            );
            assert!(!m.hidden.contains(format!("d{i:04}/kept.rs").as_bytes()));
        }
    }
}
