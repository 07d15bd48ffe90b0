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
use std::path::{Path, PathBuf};

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use git2::{DiffOptions, Index, IndexEntry, ObjectType, Oid, Repository, Status};
use rustix::fs::{AtFlags, Mode, OFlags};

use super::error::CleanError;
use super::mask::{Tracked, base_name, join_into};
use super::watch::Watch;

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

/// What a look at a checkout that found it clean saw besides: the names in the tree's
/// directories that the tree does not have (relative paths, in the directories' sorted order),
/// which the overlay worktrees' mask hides.
#[derive(Debug)]
pub(crate) struct Looked {
    pub checked: Checked,
    pub untracked: Vec<Vec<u8>>,
    /// The watch on the tree's directories, set as each was looked at.
    pub watch: Watch,
}

/// An index's entries as read, and the directories they are in.
#[derive(Clone, Copy)]
pub(crate) struct Entries<'a> {
    pub entries: &'a [IndexEntry],
    pub tracked: &'a Tracked,
}

/// Whether the checkout `root` of `repo` (its index `index`, whose entries and directories
/// are `listed`) holds exactly `tree`. `filters`: git's filters apply to this
/// tree (a file's content is then compared through them). `Err`: why not, in words for a log
/// line.
///
/// The checkout is looked at one directory at a time, on one thread per processor taking
/// chunks of directories from a queue (this one too, once it has compared the index with the
/// tree, when git's record of the index's tree does not spare that): the directory is
/// watched (so that a change after the look is seen), opened (a symbolic link in
/// its place is refused), its tracked files' stat data read relative to it, and its names
/// listed. The few files whose stat data cannot be trusted are hashed afterwards.
pub(crate) fn check(
    repo: &Repository,
    root: &Path,
    index: &mut Index,
    listed: Entries<'_>,
    tree: Oid,
    filters: bool,
) -> Result<Looked, CleanError> {
    let Entries { entries, tracked } = listed;
    if index.has_conflicts() {
        return Err(CleanError::Conflicts);
    }
    let tree_cached = cached_tree(index) == Some(tree);
    let index = &*index;
    let stamp = std::fs::metadata(repo.path().join("index")).map_err(CleanError::IndexFile)?;
    let mut dirs: Vec<(&[u8], &[usize])> = tracked
        .dirs
        .iter()
        .map(|(d, files)| (d.as_slice(), files.as_slice()))
        .collect();
    dirs.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let threads = super::shares::threads(entries.len() + DIR_WEIGHT * dirs.len(), PER_THREAD);
    let watch = Watch::new(threads).map_err(|source| CleanError::Watch {
        path: PathBuf::from("."),
        source,
    })?;
    let look = Look {
        root,
        entries,
        tracked,
        watch: &watch,
        index_time: (stamp.mtime(), stamp.mtime_nsec()),
        trust_ctime: repo
            .config()
            .and_then(|c| c.get_bool("core.trustctime"))
            .unwrap_or(true),
        filters,
    };
    let chunks: Vec<&[(&[u8], &[usize])]> = dirs.chunks(DIRS_PER_CHUNK).collect();
    let queue = Queue::default();
    let (compared, looked) = std::thread::scope(|s| {
        // Threads besides this one; one that cannot be started leaves its chunks to the
        // others (this one takes from the queue too).
        let workers: Vec<_> = (1..threads)
            .filter_map(|n| {
                let (chunks, queue) = (&chunks, &queue);
                std::thread::Builder::new()
                    .spawn_scoped(s, move || look.chunks(n, chunks, queue))
                    .ok()
            })
            .collect();
        let compared = if tree_cached {
            Ok(())
        } else {
            same_as_tree(repo, index, tree)
        };
        let own = look.chunks(0, &chunks, &queue);
        let mut parts = Vec::new();
        let mut failed: Option<(usize, CleanError)> = None;
        let joined = workers.into_iter().map(|w| {
            w.join().unwrap_or_else(|_| Share {
                done: Vec::new(),
                failed: Some((0, CleanError::Interrupted)),
            })
        });
        for share in std::iter::once(own).chain(joined) {
            parts.extend(share.done);
            if let Some((at, e)) = share.failed
                && failed.as_ref().is_none_or(|(first, _)| at < *first)
            {
                failed = Some((at, e));
            }
        }
        // In the directories' order: the first problem found is the first directory's.
        let looked = match failed {
            Some((_, e)) => Err(e),
            None => {
                parts.sort_unstable_by_key(|(at, _)| *at);
                let mut found = Found::default();
                for (_, part) in parts {
                    found.doubtful.extend(part.doubtful);
                    found.untracked.extend(part.untracked);
                }
                Ok(found)
            }
        };
        (compared, looked)
    });
    compared?;
    let found = looked?;
    for &i in &found.doubtful {
        let e = &entries[i];
        let rel = Path::new(std::ffi::OsStr::from_bytes(&e.path));
        if !content_matches(repo, e, &root.join(rel), rel, filters) {
            return Err(CleanError::Modified(rel.to_path_buf()));
        }
    }
    Ok(Looked {
        checked: Checked {
            entries: entries.len(),
            hashed: found.doubtful.len(),
            tree_cached,
        },
        untracked: found.untracked,
        watch,
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

/// Below this much work (an entry counts one, a directory [`DIR_WEIGHT`]) the checkout is
/// looked at on one thread.
const PER_THREAD: usize = 4096;

/// What looking at a directory costs besides its files (a watch, an open and a listing), in
/// files.
const DIR_WEIGHT: usize = 4;

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

/// What looking at the checkout needs.
#[derive(Clone, Copy)]
struct Look<'a> {
    root: &'a Path,
    entries: &'a [IndexEntry],
    tracked: &'a Tracked,
    watch: &'a Watch,
    /// The index file's modification time (for racily clean entries).
    index_time: (i64, i64),
    trust_ctime: bool,
    filters: bool,
}

/// What a look at some directories found.
#[derive(Default)]
struct Found {
    /// Positions of the entries whose content must be hashed to tell.
    doubtful: Vec<usize>,
    /// Names the tree does not have.
    untracked: Vec<Vec<u8>>,
}

/// A file's stat data, as the checks use them.
struct Stat {
    mode: u32,
    size: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl From<rustix::fs::Stat> for Stat {
    #[allow(clippy::unnecessary_cast)]
    fn from(s: rustix::fs::Stat) -> Stat {
        Stat {
            mode: s.st_mode as u32,
            size: s.st_size as u64,
            ino: s.st_ino as u64,
            mtime: (s.st_mtime as i64, s.st_mtime_nsec as i64),
            ctime: (s.st_ctime as i64, s.st_ctime_nsec as i64),
        }
    }
}

/// What one thread's look found: by chunk, and the first problem in its chunks (with the
/// chunk).
struct Share {
    done: Vec<(usize, Found)>,
    failed: Option<(usize, CleanError)>,
}

/// How many directories a thread takes from the queue at a time.
const DIRS_PER_CHUNK: usize = 64;

/// The chunks of directories not yet taken by a thread, in order, up to the first one where a
/// problem was found (the chunks after it need not be looked at: the first problem in the
/// directories' order is the one reported).
#[derive(Default)]
struct Queue {
    next: AtomicUsize,
    end: AtomicUsize,
}

impl Queue {
    /// The next chunk to look at, if there is one before the end and the first failure.
    fn next(&self, chunks: usize) -> Option<usize> {
        let at = self.next.fetch_add(1, Ordering::Relaxed);
        let end = match self.end.load(Ordering::Relaxed) {
            0 => chunks,
            failed => failed - 1,
        };
        (at < end.min(chunks)).then_some(at)
    }

    /// A problem was found in the chunk `at`.
    fn failed_at(&self, at: usize) {
        // Stored plus one: zero is "none yet".
        let _ = self
            .end
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |end| {
                (end == 0 || at + 1 < end).then_some(at + 1)
            });
    }
}

/// A directory's tracked files above this many are looked up by hash when it is listed.
const LINEAR_NAMES: usize = 8;

impl Look<'_> {
    /// Look at the chunks of directories `chunks` (relative, with their entries' positions)
    /// that `queue` hands this thread, the `n`th; what each chunk found, and the first entry
    /// that is certainly not the file's in this thread's chunks (with its chunk).
    fn chunks(self, n: usize, chunks: &[&[(&[u8], &[usize])]], queue: &Queue) -> Share {
        let mut done = Vec::new();
        let mut buf = Vec::new();
        while let Some(at) = queue.next(chunks.len()) {
            let mut found = Found::default();
            for &(rel, files) in chunks[at] {
                if let Err(e) = self.dir(n, rel, files, &mut found, &mut buf) {
                    queue.failed_at(at);
                    return Share {
                        done,
                        failed: Some((at, e)),
                    };
                }
            }
            done.push((at, found));
        }
        Share { done, failed: None }
    }

    /// Watch (in the watch's instance `share`), open, check and list one directory.
    fn dir(
        self,
        share: usize,
        rel: &[u8],
        files: &[usize],
        found: &mut Found,
        buf: &mut Vec<u8>,
    ) -> Result<(), CleanError> {
        let shown = || match rel {
            [] => PathBuf::from("."),
            _ => Path::new(std::ffi::OsStr::from_bytes(rel)).to_path_buf(),
        };
        let path = self.root.join(std::ffi::OsStr::from_bytes(rel));
        // Watched first: a change after this is seen.
        self.watch
            .add(share, &path, rel)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => CleanError::Missing(shown()),
                std::io::ErrorKind::NotADirectory => CleanError::Kind(shown()),
                _ => CleanError::Watch {
                    path: shown(),
                    source: e,
                },
            })?;
        let dir = rustix::fs::open(
            &path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|_| CleanError::Kind(shown()))?;
        for &i in files {
            let e = &self.entries[i];
            let entry_rel = || Path::new(std::ffi::OsStr::from_bytes(&e.path)).to_path_buf();
            if e.mode & TYPE_MASK == GITLINK {
                return Err(CleanError::Submodule(entry_rel()));
            }
            if e.flags & ASSUME_VALID != 0 || e.flags_extended & SKIP_OR_INTENT != 0 {
                return Err(CleanError::Flagged(entry_rel()));
            }
            let st: Stat = rustix::fs::statat(&dir, base_name(&e.path), AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|_| CleanError::Missing(entry_rel()))?
                .into();
            if !same_kind(e, &st) {
                return Err(CleanError::Kind(entry_rel()));
            }
            if stat_matches(e, &st, self.trust_ctime) && !racy(e, self.index_time) {
                continue;
            }
            if !self.filters && e.mode & TYPE_MASK == REGULAR && u64::from(e.file_size) != st.size {
                return Err(CleanError::Modified(entry_rel()));
            }
            found.doubtful.push(i);
        }
        let names: Option<HashSet<&[u8]>> = (files.len() > LINEAR_NAMES).then(|| {
            files
                .iter()
                .map(|&i| base_name(&self.entries[i].path))
                .collect()
        });
        let is_file = |name: &[u8]| match &names {
            Some(set) => set.contains(name),
            None => files
                .iter()
                .any(|&i| base_name(&self.entries[i].path) == name),
        };
        let list_err = |source: rustix::io::Errno| CleanError::List {
            path: shown(),
            source: source.into(),
        };
        for item in rustix::fs::Dir::new(dir).map_err(list_err)? {
            let item = item.map_err(list_err)?;
            let name = item.file_name().to_bytes();
            if name == b"." || name == b".." || is_file(name) {
                continue;
            }
            join_into(buf, rel, name);
            if !self.tracked.dirs.contains_key(buf.as_slice()) {
                found.untracked.push(buf.clone());
            }
        }
        Ok(())
    }
}

/// The entry and the file are of the same type, with the same executable bit for a file.
fn same_kind(e: &IndexEntry, st: &Stat) -> bool {
    let kind = st.mode & TYPE_MASK;
    match e.mode & TYPE_MASK {
        REGULAR => kind == REGULAR && ((e.mode & 0o100 != 0) == (st.mode & 0o100 != 0)),
        SYMLINK => kind == SYMLINK,
        _ => false,
    }
}

/// The file's size, modification and change times and inode are the ones the index recorded
/// (each as git keeps it: the low 32 bits).
fn stat_matches(e: &IndexEntry, st: &Stat, trust_ctime: bool) -> bool {
    let times = |(s, ns): (i64, i64), t: &git2::IndexTime| {
        s as i32 == t.seconds() && ns as u32 == t.nanoseconds()
    };
    e.file_size == st.size as u32
        && e.ino == st.ino as u32
        && times(st.mtime, &e.mtime)
        && (!trust_ctime || times(st.ctime, &e.ctime))
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

    fn look(repo: &Repository, dir: &Path, tree: Oid) -> Result<Looked, String> {
        let mut index = repo.index().unwrap();
        index.read(true).unwrap();
        let entries: Vec<IndexEntry> = index.iter().collect();
        let tracked = Tracked::of(entries.iter().map(|e| e.path.as_slice()));
        let listed = Entries {
            entries: &entries,
            tracked: &tracked,
        };
        check(repo, dir, &mut index, listed, tree, false).map_err(|e| e.to_string())
    }

    fn run(repo: &Repository, dir: &Path, tree: Oid) -> Result<Checked, String> {
        look(repo, dir, tree).map(|l| l.checked)
    }

    /// A checkout with more directories than one thread looks at: every untracked name of
    /// every share is found, nothing tracked, and a tracked directory replaced by a symbolic
    /// link to a copy of it is refused.
    #[test]
    fn the_untracked_names_of_every_share_are_found_and_a_linked_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        let dirs = PER_THREAD / DIR_WEIGHT + 3;
        for i in 0..dirs {
            let sub = dir.join(format!("d{i:04}"));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join("kept.rs"), "").unwrap();
        }
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", "init"]);
        let mut want = vec![b".git".to_vec()];
        for i in (0..dirs).step_by(7) {
            let built = format!("d{i:04}/built.o");
            std::fs::write(dir.join(&built), "").unwrap();
            want.push(built.into_bytes());
        }
        std::fs::create_dir_all(dir.join("target/debug")).unwrap();
        want.push(b"target".to_vec());
        want.sort();
        let repo = Repository::open(&dir).unwrap();
        let tree = repo.head().unwrap().peel_to_tree().unwrap().id();
        let mut found = look(&repo, &dir, tree).unwrap().untracked;
        found.sort();
        assert_eq!(found, want);
        let last = format!("d{:04}", dirs - 1);
        std::fs::rename(dir.join(&last), dir.join("copy")).unwrap();
        std::os::unix::fs::symlink("copy", dir.join(&last)).unwrap();
        assert_eq!(
            look(&repo, &dir, tree).unwrap_err(),
            format!("`{last}` changed type or mode")
        );
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
