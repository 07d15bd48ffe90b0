//! Whether a checkout holds exactly a tree, from its index's stat data.
//!
//! git records, for each file it checks out, the file's size, times and inode in the index. A
//! file whose stat data still match was not written since, so its content is what the index
//! says; only the entries that cannot be trusted that way are read and hashed: those whose
//! stat data differ (a file touched, or copied with its content unchanged) and the racily
//! clean ones (written in the same instant as the index, or later, so that a change after the
//! index was written could keep the same times and size). The index itself must equal the tree.
//!
//! This is what lets a batch use the repository's own checkout as the lower layer of its
//! overlay worktrees (`super::lower`): no file is read unless its stat data say it may have
//! changed.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use git2::{DiffOptions, Index, IndexEntry, ObjectType, Oid, Repository, Status};

use super::error::CleanError;

/// The file-type bits of a mode.
const TYPE_MASK: u32 = 0o170000;
/// A regular file's type bits.
const REGULAR: u32 = 0o100000;
/// A symbolic link's type bits.
const SYMLINK: u32 = 0o120000;
/// A submodule's type bits (a commit of another repository).
const GITLINK: u32 = 0o160000;
/// `CE_VALID` (assume-unchanged) in an entry's flags.
const ASSUME_VALID: u16 = 0x8000;
/// `CE_SKIP_WORKTREE` and `CE_INTENT_TO_ADD` in an entry's extended flags.
const SKIP_OR_INTENT: u16 = 0x4000 | 0x2000;

/// What a check that found the checkout clean looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Checked {
    /// Index entries.
    pub entries: usize,
    /// Entries whose content was read because their stat data could not be trusted.
    pub hashed: usize,
}

/// Whether the checkout `root` of `repo` (its index `index`) holds exactly `tree`. `filters`:
/// git's filters apply to this tree (a file's content is then compared through them).
/// `Err`: why not, in words for a log line.
pub(crate) fn check(
    repo: &Repository,
    root: &Path,
    index: &Index,
    tree: Oid,
    filters: bool,
) -> Result<Checked, CleanError> {
    if index.has_conflicts() {
        return Err(CleanError::Conflicts);
    }
    let t = repo.find_tree(tree).map_err(CleanError::Tree)?;
    let mut opts = DiffOptions::new();
    opts.ignore_submodules(false);
    let diff = repo
        .diff_tree_to_index(Some(&t), Some(index), Some(&mut opts))
        .map_err(CleanError::Compare)?;
    if diff.deltas().len() > 0 {
        return Err(CleanError::Staged);
    }
    let stamp = std::fs::metadata(repo.path().join("index")).map_err(CleanError::IndexFile)?;
    let index_time = (stamp.mtime(), stamp.mtime_nsec());
    let trust_ctime = repo
        .config()
        .and_then(|c| c.get_bool("core.trustctime"))
        .unwrap_or(true);
    let mut hashed = 0;
    for e in index.iter() {
        let rel = Path::new(std::ffi::OsStr::from_bytes(&e.path));
        if e.mode & TYPE_MASK == GITLINK {
            return Err(CleanError::Submodule(rel.to_path_buf()));
        }
        if e.flags & ASSUME_VALID != 0 || e.flags_extended & SKIP_OR_INTENT != 0 {
            return Err(CleanError::Flagged(rel.to_path_buf()));
        }
        let path = root.join(rel);
        let md =
            std::fs::symlink_metadata(&path).map_err(|_| CleanError::Missing(rel.to_path_buf()))?;
        if !same_kind(&e, &md) {
            return Err(CleanError::Kind(rel.to_path_buf()));
        }
        if stat_matches(&e, &md, trust_ctime) && !racy(&e, index_time) {
            continue;
        }
        if !filters && e.mode & TYPE_MASK == REGULAR && u64::from(e.file_size) != md.size() {
            return Err(CleanError::Modified(rel.to_path_buf()));
        }
        hashed += 1;
        if !content_matches(repo, &e, &path, rel, filters) {
            return Err(CleanError::Modified(rel.to_path_buf()));
        }
    }
    Ok(Checked {
        entries: index.len(),
        hashed,
    })
}

/// The entry and the file are of the same type, with the same executable bit for a file.
fn same_kind(e: &IndexEntry, md: &std::fs::Metadata) -> bool {
    let kind = md.mode() & TYPE_MASK;
    match e.mode & TYPE_MASK {
        REGULAR => kind == REGULAR && ((e.mode & 0o100 != 0) == (md.mode() & 0o100 != 0)),
        SYMLINK => kind == SYMLINK,
        _ => false,
    }
}

/// The file's size, modification and change times and inode are the ones the index recorded
/// (each as git keeps it: the low 32 bits).
fn stat_matches(e: &IndexEntry, md: &std::fs::Metadata, trust_ctime: bool) -> bool {
    let times = |s: i64, ns: i64, t: &git2::IndexTime| {
        s as i32 == t.seconds() && ns as u32 == t.nanoseconds()
    };
    e.file_size == md.size() as u32
        && e.ino == md.ino() as u32
        && times(md.mtime(), md.mtime_nsec(), &e.mtime)
        && (!trust_ctime || times(md.ctime(), md.ctime_nsec(), &e.ctime))
}

/// The entry was written no earlier than the index: a change in the same instant could leave
/// its stat data as recorded. An entry without times (never checked out) is racy too.
fn racy(e: &IndexEntry, (secs, nsecs): (i64, i64)) -> bool {
    let m = (
        i64::from(e.mtime.seconds()),
        i64::from(e.mtime.nanoseconds()),
    );
    m.0 == 0 || m >= (secs as i32 as i64, nsecs)
}

/// The file's content is the entry's blob: hashed as git would store it (through git's
/// filters when they apply).
fn content_matches(
    repo: &Repository,
    e: &IndexEntry,
    path: &Path,
    rel: &Path,
    filters: bool,
) -> bool {
    if filters {
        return repo.status_file(rel).is_ok_and(|s| s == Status::CURRENT);
    }
    let id = if e.mode & TYPE_MASK == SYMLINK {
        std::fs::read_link(path)
            .ok()
            .and_then(|t| Oid::hash_object(ObjectType::Blob, t.as_os_str().as_bytes()).ok())
    } else {
        Oid::hash_file(ObjectType::Blob, path).ok()
    };
    id == Some(e.id)
}

#[cfg(test)]
mod tests {
    use super::super::test_git::git;
    use super::*;

    fn repo(dir: &Path) -> (Repository, Oid) {
        git(dir, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/a.txt"), "a\n").unwrap();
        std::os::unix::fs::symlink("src/a.txt", dir.join("link")).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "init"]);
        let repo = Repository::open(dir).unwrap();
        let tree = repo.head().unwrap().peel_to_tree().unwrap().id();
        (repo, tree)
    }

    fn run(repo: &Repository, dir: &Path, tree: Oid) -> Result<Checked, String> {
        let mut index = repo.index().unwrap();
        index.read(true).unwrap();
        check(repo, dir, &index, tree, false).map_err(|e| e.to_string())
    }

    #[test]
    fn a_fresh_commit_is_clean_and_changes_are_found() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        let (repo, tree) = repo(&dir);
        assert_eq!(run(&repo, &dir, tree).unwrap().entries, 2);
        // Untracked files do not count.
        std::fs::write(dir.join("new.txt"), "n\n").unwrap();
        assert!(run(&repo, &dir, tree).is_ok());
        // Same size, new content: found by its stat data or, when racy, by its hash.
        std::fs::write(dir.join("src/a.txt"), "b\n").unwrap();
        let err = run(&repo, &dir, tree).unwrap_err();
        assert!(err.contains("src/a.txt"), "{err}");
        // Back to the committed content but touched: hashed, and clean.
        std::fs::write(dir.join("src/a.txt"), "a\n").unwrap();
        let ok = run(&repo, &dir, tree).unwrap();
        assert!(ok.hashed >= 1, "{ok:?}");
        // A mode change and a staged change are not clean.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.join("src/a.txt"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        assert!(run(&repo, &dir, tree).unwrap_err().contains("mode"));
        std::fs::set_permissions(
            dir.join("src/a.txt"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        std::fs::write(dir.join("staged.txt"), "s\n").unwrap();
        git(&dir, &["add", "staged.txt"]);
        assert!(run(&repo, &dir, tree).unwrap_err().contains("index"));
        git(&dir, &["rm", "-q", "--cached", "staged.txt"]);
        std::fs::remove_file(dir.join("link")).unwrap();
        assert!(run(&repo, &dir, tree).unwrap_err().contains("missing"));
    }
}
