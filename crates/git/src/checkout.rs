//! Checking a tree out into a directory of its own — a batch's template, a pooled worktree,
//! a resumed task's lower layer — and resetting such a directory to another tree.
//!
//! Each of those directories is `DIR/tree` (the files) with its own git administrative
//! directory `DIR/git` ([`super::admin`]), so the checkout needs no lock on the repository and
//! several run at once. Two things make libgit2's checkout slower than git's and are turned
//! off where they do not change the result: the attribute look-up for every file (needed only
//! when the repository has attribute, end-of-line or filter rules, see [`needs_filters`]) and
//! re-hashing every object read (see [`super::fast_object_reads`]).
//!
//! A new checkout is written a few hundred files at a time, and a [`Cancel`] set meanwhile
//! stops it before the next step: an interrupted batch does not wait for a full checkout of
//! a large repository it no longer needs.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use git2::build::CheckoutBuilder;
use git2::{IndexTime, ObjectType, Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};

use super::{GitError, admin, git_err, pinned};

/// Files written per step of a new checkout; [`Cancel`] is looked at between two steps.
const STEP_FILES: usize = 256;

/// The mode of a submodule's entry (a commit of another repository): no file of its own.
const GITLINK_MODE: u32 = 0o160000;

/// Stops the checkouts that watch it before their next step (the batch was interrupted).
/// Clones share the flag.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Stop every checkout watching this flag (for good).
    pub(crate) fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Whether files of `tree` may need git's filters between the object store and the working
/// tree (end-of-line conversion, `ident`, filter drivers such as LFS): a `.gitattributes` file
/// anywhere in the tree, `info/attributes`, a global attributes file, or `core.autocrlf`,
/// `core.eol` or a `filter.*` driver in the configuration.
pub(crate) fn needs_filters(repo: &Repository, tree: Oid) -> bool {
    if let Ok(cfg) = repo.config() {
        let autocrlf = cfg.get_string("core.autocrlf").ok();
        if autocrlf.is_some_and(|v| !v.eq_ignore_ascii_case("false")) {
            return true;
        }
        if cfg.get_entry("core.eol").is_ok() || cfg.get_entry("core.attributesFile").is_ok() {
            return true;
        }
        if cfg
            .entries(Some("^filter\\."))
            .is_ok_and(|mut e| e.next().is_some())
        {
            return true;
        }
    }
    if repo.commondir().join("info/attributes").exists() || global_attributes_file() {
        return true;
    }
    let Ok(tree) = repo.find_tree(tree) else {
        return true;
    };
    let mut found = false;
    let walked = tree.walk(TreeWalkMode::PreOrder, |_, entry| {
        if entry.name_bytes() == b".gitattributes" {
            found = true;
            TreeWalkResult::Abort
        } else {
            TreeWalkResult::Ok
        }
    });
    // A walk that failed part way cannot tell: assume filters are needed.
    found || walked.is_err()
}

/// git's default global attributes file (`$XDG_CONFIG_HOME/git/attributes`, else
/// `~/.config/git/attributes`) exists.
fn global_attributes_file() -> bool {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")));
    base.is_some_and(|b| b.join("git/attributes").exists())
}

/// Make `dir/tree` a checkout of `tree` with its own administrative directory `dir/git`
/// (HEAD detached at `commit`) for the repository whose common directory is `common_dir`.
/// [`GitError::Cancelled`] when `cancel` was set before it was complete (what was written
/// stays; the caller removes `dir`).
pub(crate) fn create(
    dir: &Path,
    common_dir: &Path,
    commit: Oid,
    tree: Oid,
    filters: bool,
    cancel: &Cancel,
) -> Result<(), GitError> {
    let work = dir.join(super::layout::TREE);
    let admin_dir = dir.join(admin::ADMIN_DIR);
    let what = || format!("create the worktree {}", work.display());
    std::fs::create_dir_all(&work).map_err(super::io_err(what()))?;
    admin::write(&admin_dir, common_dir, &work, commit).map_err(super::io_err(what()))?;
    admin::write_gitfile(&work, &admin_dir).map_err(super::io_err(what()))?;
    let repo = pinned::open_worktree(&admin_dir, &work, common_dir).map_err(git_err(what()))?;
    let tree = repo.find_tree(tree).map_err(git_err(what()))?;
    let mut files = Vec::new();
    file_paths(&repo, &tree, &[], &mut files).map_err(git_err(what()))?;
    for step in files.chunks(STEP_FILES) {
        if cancel.is_cancelled() {
            return Err(GitError::Cancelled);
        }
        // Only these paths: the files of earlier steps are left alone (not in the index yet,
        // they are untracked to libgit2, and untracked files are kept).
        let mut cb = CheckoutBuilder::new();
        cb.force()
            .disable_filters(!filters)
            .update_index(false)
            .disable_pathspec_match(true);
        for path in step {
            cb.path(path.as_slice());
        }
        repo.checkout_tree(tree.as_object(), Some(&mut cb))
            .map_err(git_err(what()))?;
    }
    write_index(&repo, &work, &tree).map_err(git_err(what()))
}

/// The paths of every entry of `tree` that is not a directory (files, symbolic links,
/// submodules), below `prefix`, in tree order.
fn file_paths(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<(), git2::Error> {
    for entry in tree.iter() {
        let mut path = prefix.to_vec();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(entry.name_bytes());
        if entry.kind() == Some(ObjectType::Tree) {
            file_paths(repo, &repo.find_tree(entry.id())?, &path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// Write the index of the checkout of `tree` at `work`: `tree`'s entries with the stat data
/// of the files just written, as a checkout records them, so that git finds them clean
/// without reading them.
fn write_index(repo: &Repository, work: &Path, tree: &Tree<'_>) -> Result<(), git2::Error> {
    let mut index = repo.index()?;
    index.read_tree(tree)?;
    let entries: Vec<git2::IndexEntry> = index.iter().collect();
    for mut e in entries {
        if e.mode == GITLINK_MODE {
            continue;
        }
        let path = work.join(std::ffi::OsStr::from_bytes(&e.path));
        let Ok(md) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        // The index keeps the low 32 bits of each, as git does.
        e.ctime = IndexTime::new(md.ctime() as i32, md.ctime_nsec() as u32);
        e.mtime = IndexTime::new(md.mtime() as i32, md.mtime_nsec() as u32);
        e.dev = md.dev() as u32;
        e.ino = md.ino() as u32;
        e.uid = md.uid();
        e.gid = md.gid();
        e.file_size = md.size() as u32;
        index.add(&e)?;
    }
    index.write()
}

/// Make the worktree `dir/tree` (with its own index in `dir/git`, of the repository whose
/// common directory is `common_dir`) exactly `tree`: changed and deleted files are written
/// again, files that are not in `tree` removed, ignored ones included; the index is rewritten
/// to match. The repository is opened by `dir/git`, never through the worktree's `.git` file
/// (the caller checks that file first: [`admin::changed`]).
pub(crate) fn reset(
    dir: &Path,
    common_dir: &Path,
    tree: Oid,
    filters: bool,
) -> Result<(), git2::Error> {
    let work = dir.join(super::layout::TREE);
    let repo = pinned::open_worktree(&dir.join(admin::ADMIN_DIR), &work, common_dir)?;
    let tree = repo.find_tree(tree)?;
    // libgit2 writes a file through a symbolic link that stands where `tree` has a directory:
    // every link `tree` does not have as such goes first.
    remove_foreign_links(&repo, &work, Path::new(""), &tree).map_err(|e| {
        git2::Error::from_str(&format!(
            "remove the symbolic links a task left in {}: {e}",
            work.display()
        ))
    })?;
    let mut cb = CheckoutBuilder::new();
    cb.force()
        .remove_untracked(true)
        .remove_ignored(true)
        .disable_filters(!filters);
    repo.checkout_tree(tree.as_object(), Some(&mut cb))
}

/// Remove every symbolic link under `work/rel` that `tree` does not have at its path with the
/// same target; never follows one.
fn remove_foreign_links(
    repo: &Repository,
    work: &Path,
    rel: &Path,
    tree: &Tree<'_>,
) -> std::io::Result<()> {
    for e in std::fs::read_dir(work.join(rel))? {
        let e = e?;
        let path = rel.join(e.file_name());
        if rel.as_os_str().is_empty() && e.file_name() == ".git" {
            continue;
        }
        let ft = e.file_type()?;
        if ft.is_dir() {
            remove_foreign_links(repo, work, &path, tree)?;
        } else if ft.is_symlink() {
            let target = std::fs::read_link(e.path())?;
            let same = tree.get_path(&path).ok().is_some_and(|entry| {
                entry.filemode() == 0o120000
                    && repo
                        .find_blob(entry.id())
                        .is_ok_and(|b| b.content() == target.as_os_str().as_bytes())
            });
            if !same {
                std::fs::remove_file(e.path())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    use super::*;

    use super::super::test_git::git;

    /// A repository with `n` files in directories of 100 (and a few special entries).
    fn repo_with(root: &Path, n: usize) -> (PathBuf, Oid, Oid) {
        git(root, &["init", "-q", "-b", "main"]);
        for i in 0..n {
            let p = root.join(format!("d{:03}/f{i}.txt", i / 100));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("file {i}\n")).unwrap();
        }
        std::fs::write(root.join("run.sh"), "echo hi\n").unwrap();
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::os::unix::fs::symlink("run.sh", root.join("link")).unwrap();
        std::fs::write(
            root.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")),
            "latin-1\n",
        )
        .unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "init"]);
        let repo = Repository::open(root).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        (repo.commondir().to_path_buf(), head.id(), head.tree_id())
    }

    /// Files under `dir` (not `.git`).
    fn count_files(dir: &Path) -> usize {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .flatten()
            .filter(|e| e.file_name() != ".git")
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => count_files(&e.path()),
                _ => 1,
            })
            .sum()
    }

    /// A checkout written in several steps is the tree, byte for byte, modes and links
    /// included, and git finds it clean from the stat data in its index.
    #[test]
    fn a_checkout_in_steps_is_the_tree_and_clean() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        let n = STEP_FILES * 2 + 10;
        let (common, commit, tree) = repo_with(&root, n);
        let slot = dir.path().join("slot");
        create(&slot, &common, commit, tree, false, &Cancel::default()).unwrap();
        let work = slot.join(super::super::layout::TREE);
        assert_eq!(
            count_files(&work),
            n + 3,
            "the files, run.sh, link and café"
        );
        assert_eq!(
            std::fs::read_to_string(work.join("d002/f250.txt")).unwrap(),
            "file 250\n"
        );
        let mode = std::fs::metadata(work.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111);
        assert_eq!(
            std::fs::read_link(work.join("link")).unwrap(),
            Path::new("run.sh")
        );
        assert!(
            work.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt"))
                .exists()
        );
        assert_eq!(git(&work, &["status", "--porcelain", "--ignored"]), "");
        // Clean from the stat data alone: no file's size or time is left at zero.
        let repo = Repository::open(&work).unwrap();
        let index = repo.index().unwrap();
        assert_eq!(index.len(), n + 3);
        assert!(index.iter().all(|e| e.mtime.seconds() != 0 && e.ino != 0));
        assert!(repo.statuses(None).unwrap().is_empty());
        // A reset after a task's changes brings it back.
        std::fs::write(work.join("d000/f1.txt"), "changed\n").unwrap();
        std::fs::write(work.join("new.txt"), "new\n").unwrap();
        reset(&slot, &common, tree, false).unwrap();
        assert_eq!(git(&work, &["status", "--porcelain", "--ignored"]), "");
    }

    /// A cancel set while a checkout is being written stops it before the next step.
    #[test]
    fn a_cancelled_checkout_stops_part_way() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        let n = STEP_FILES * 12;
        let (common, commit, tree) = repo_with(&root, n);
        let slot = dir.path().join("slot");
        let work = slot.join(super::super::layout::TREE);
        let cancel = Cancel::default();
        let watcher = {
            let (cancel, work) = (cancel.clone(), work.clone());
            std::thread::spawn(move || {
                while count_files(&work.join("d000")) == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                cancel.cancel();
            })
        };
        let made = create(&slot, &common, commit, tree, false, &cancel);
        watcher.join().unwrap();
        assert!(matches!(made, Err(GitError::Cancelled)), "{made:?}");
        let written = count_files(&work);
        assert!(written < n, "{written} of {n} files written");
        // Stopped before anything is written.
        let slot2 = dir.path().join("slot2");
        let made = create(&slot2, &common, commit, tree, false, &cancel);
        assert!(matches!(made, Err(GitError::Cancelled)), "{made:?}");
        assert_eq!(count_files(&slot2.join(super::super::layout::TREE)), 0);
    }
}
