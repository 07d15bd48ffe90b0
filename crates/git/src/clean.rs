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
    /// Whether the index's own record of its tree (git's cache tree) showed it equals the
    /// tree, so that the index and the tree were not compared entry by entry.
    pub tree_cached: bool,
}

/// Whether the checkout `root` of `repo` (its index `index`, whose entries are `entries`)
/// holds exactly `tree`. `filters`: git's filters apply to this tree (a file's content is then
/// compared through them). `Err`: why not, in words for a log line.
///
/// The files' stat data are looked at on other threads (a share of the entries each) while
/// this one compares the index with the tree; the few files whose stat data cannot be trusted
/// are hashed afterwards.
pub(crate) fn check(
    repo: &Repository,
    root: &Path,
    index: &mut Index,
    entries: &[IndexEntry],
    tree: Oid,
    filters: bool,
) -> Result<Checked, CleanError> {
    if index.has_conflicts() {
        return Err(CleanError::Conflicts);
    }
    let tree_cached = cached_tree(index) == Some(tree);
    let index = &*index;
    let stamp = std::fs::metadata(repo.path().join("index")).map_err(CleanError::IndexFile)?;
    let look = Look {
        root,
        index_time: (stamp.mtime(), stamp.mtime_nsec()),
        trust_ctime: repo
            .config()
            .and_then(|c| c.get_bool("core.trustctime"))
            .unwrap_or(true),
        filters,
    };
    let threads = super::shares::threads(entries.len(), PER_THREAD);
    let share = entries.len().div_ceil(threads).max(1);
    let (compared, looked) = std::thread::scope(|s| {
        let workers: Vec<_> = entries
            .chunks(share)
            .map(|part| s.spawn(move || look.part(part)))
            .collect();
        let compared = if tree_cached {
            Ok(())
        } else {
            same_as_tree(repo, index, tree)
        };
        // In the entries' order: the first problem found is the first in the index.
        let mut doubtful = Vec::new();
        let mut looked = Ok(());
        for (n, w) in workers.into_iter().enumerate() {
            match w.join() {
                Ok(Ok(found)) => doubtful.extend(found.into_iter().map(|i| n * share + i)),
                Ok(Err(e)) => {
                    looked = Err(e);
                    break;
                }
                Err(_) => {
                    looked = Err(CleanError::Interrupted);
                    break;
                }
            }
        }
        (compared, looked.map(|()| doubtful))
    });
    compared?;
    let doubtful = looked?;
    for &i in &doubtful {
        let e = &entries[i];
        let rel = Path::new(std::ffi::OsStr::from_bytes(&e.path));
        if !content_matches(repo, e, &root.join(rel), rel, filters) {
            return Err(CleanError::Modified(rel.to_path_buf()));
        }
    }
    Ok(Checked {
        entries: entries.len(),
        hashed: doubtful.len(),
        tree_cached,
    })
}

/// The tree the index records it holds: the root of git's cache-tree extension, when git
/// left it valid (a commit, a checkout or a reset does; any change to an entry since marks it
/// invalid). libgit2 answers from that record alone, and writes the index's trees only when
/// it is missing or invalid: the repository it is given here has an object database with no
/// backend, so that write fails (`None`) and nothing is written anywhere.
fn cached_tree(index: &mut Index) -> Option<Oid> {
    let scratch = Repository::from_odb(git2::Odb::new().ok()?).ok()?;
    index.write_tree_to(&scratch).ok()
}

/// Below this many entries the files are looked at on one thread.
const PER_THREAD: usize = 4096;

/// The index holds exactly `tree`.
fn same_as_tree(repo: &Repository, index: &Index, tree: Oid) -> Result<(), CleanError> {
    let t = repo.find_tree(tree).map_err(CleanError::Tree)?;
    let mut opts = DiffOptions::new();
    opts.ignore_submodules(false);
    let diff = repo
        .diff_tree_to_index(Some(&t), Some(index), Some(&mut opts))
        .map_err(CleanError::Compare)?;
    if diff.deltas().len() > 0 {
        return Err(CleanError::Staged);
    }
    Ok(())
}

/// What looking at a file's stat data needs.
#[derive(Clone, Copy)]
struct Look<'a> {
    root: &'a Path,
    /// The index file's modification time (for racily clean entries).
    index_time: (i64, i64),
    trust_ctime: bool,
    filters: bool,
}

impl Look<'_> {
    /// The positions in `part` of the entries whose content must be hashed to tell; `Err`
    /// for the first entry that is certainly not the file's.
    fn part(self, part: &[IndexEntry]) -> Result<Vec<usize>, CleanError> {
        let mut doubtful = Vec::new();
        for (i, e) in part.iter().enumerate() {
            let rel = Path::new(std::ffi::OsStr::from_bytes(&e.path));
            if e.mode & TYPE_MASK == GITLINK {
                return Err(CleanError::Submodule(rel.to_path_buf()));
            }
            if e.flags & ASSUME_VALID != 0 || e.flags_extended & SKIP_OR_INTENT != 0 {
                return Err(CleanError::Flagged(rel.to_path_buf()));
            }
            let md = std::fs::symlink_metadata(self.root.join(rel))
                .map_err(|_| CleanError::Missing(rel.to_path_buf()))?;
            if !same_kind(e, &md) {
                return Err(CleanError::Kind(rel.to_path_buf()));
            }
            if stat_matches(e, &md, self.trust_ctime) && !racy(e, self.index_time) {
                continue;
            }
            if !self.filters && e.mode & TYPE_MASK == REGULAR && u64::from(e.file_size) != md.size()
            {
                return Err(CleanError::Modified(rel.to_path_buf()));
            }
            doubtful.push(i);
        }
        Ok(doubtful)
    }
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
        let entries: Vec<IndexEntry> = index.iter().collect();
        check(repo, dir, &mut index, &entries, tree, false).map_err(|e| e.to_string())
    }

    #[test]
    fn a_large_checkout_is_looked_at_in_shares_and_each_finding_names_its_file() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        let files = PER_THREAD + 904;
        for i in 0..files {
            let sub = dir.join(format!("d{}", i / 100));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
        }
        git(&dir, &["add", "-A"]);
        // Not racily clean: the index is written after the files' times.
        std::thread::sleep(std::time::Duration::from_millis(20));
        git(&dir, &["commit", "-q", "-m", "many"]);
        git(&dir, &["update-index", "--really-refresh"]);
        let repo = Repository::open(&dir).unwrap();
        let tree = repo.head().unwrap().peel_to_tree().unwrap().id();
        let ok = run(&repo, &dir, tree).unwrap();
        assert_eq!(ok.entries, files);
        // A file near the end, rewritten with its own content: hashed (it is in a later
        // share than the first), and clean.
        let last = dir.join(format!("d{}/f{}.txt", (files - 2) / 100, files - 2));
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&last, format!("{}\n", files - 2)).unwrap();
        let ok = run(&repo, &dir, tree).unwrap();
        assert_eq!(ok.hashed, 1, "{ok:?}");
        // The same file with other content of the same size: named.
        let other = format!("{}\n", files - 3);
        assert_eq!(other.len(), format!("{}\n", files - 2).len());
        std::fs::write(&last, other).unwrap();
        let err = run(&repo, &dir, tree).unwrap_err();
        assert!(err.contains(&format!("f{}.txt", files - 2)), "{err}");
        // A file of the first share missing: that is what is said.
        std::fs::remove_file(dir.join("d0/f1.txt")).unwrap();
        let err = run(&repo, &dir, tree).unwrap_err();
        assert_eq!(err, "`d0/f1.txt` is missing");
    }

    fn loose_objects(dir: &Path) -> usize {
        std::fs::read_dir(dir.join(".git/objects"))
            .unwrap()
            .flatten()
            .filter_map(|d| std::fs::read_dir(d.path()).ok())
            .map(|files| files.count())
            .sum()
    }

    /// A commit leaves git's record of the index's tree valid: the index is then not compared
    /// with the tree entry by entry. A record of another tree, or an invalid one, is not
    /// trusted (the comparison finds the difference), and nothing is written to the
    /// repository either way.
    #[test]
    fn the_index_record_of_its_tree_spares_the_comparison_only_for_that_tree() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        let (repo, tree) = repo(&dir);
        assert!(run(&repo, &dir, tree).unwrap().tree_cached);
        // A commit on top: the record is of the new tree, not the base one.
        std::fs::write(dir.join("b.txt"), "b\n").unwrap();
        git(&dir, &["add", "b.txt"]);
        git(&dir, &["commit", "-q", "-m", "b"]);
        let err = run(&repo, &dir, tree).unwrap_err();
        assert!(err.contains("index differs"), "{err}");
        let head = repo.head().unwrap().peel_to_tree().unwrap().id();
        assert!(run(&repo, &dir, head).unwrap().tree_cached);
        // A staged change leaves the record invalid: compared, found, nothing written.
        std::fs::write(dir.join("c.txt"), "c\n").unwrap();
        git(&dir, &["add", "c.txt"]);
        let before = loose_objects(&dir);
        let err = run(&repo, &dir, head).unwrap_err();
        assert!(err.contains("index differs"), "{err}");
        assert_eq!(loose_objects(&dir), before, "no tree was written");
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
