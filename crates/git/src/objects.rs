//! runner's own writes to a repository's object store, made to hold up while `git gc` runs
//! next to them.
//!
//! A `git gc --prune=now` (or `git prune`) that runs while a task works removes what it finds
//! unreachable, including runner's temporary object files and the fan-out directories they
//! are renamed into. Three things follow:
//! - a write can fail part way with "failed to rename lockfile" or "failed to create locked
//!   file": such a failure is transient, and [`retry`] tries the write again a few times, with
//!   a short backoff, before giving up;
//! - an object written but not yet reachable from a reference can be removed before a
//!   reference holds it (`--prune=now` removes every unreachable object, however new). runner
//!   writes the objects, then the reference (see [`super::hold`]), then checks through a fresh
//!   handle on the repository (never the object cache of the handle that wrote them) that what
//!   the reference holds can be read ([`check_tree`], [`check_commit`]). What is missing
//!   becomes [`GitError::Lost`], naming the object and the likely cause; work that has nothing
//!   held yet is done again ([`again`]);
//! - a prune that read the references just before runner wrote one can still remove the
//!   objects after that check. Such a loss shows when the objects are next read, and is
//!   reported the same way ([`explain`], [`failed`]);
//! - while `git gc` repacks, libgit2 can miss an object that moved into a new pack for a
//!   moment: reading it again a little later finds it ([`reread`]).

use std::path::Path;
use std::time::Duration;

use git2::{ErrorCode, ObjectType, Oid, Repository, Tree};

use super::GitError;

/// How many times a write that failed on a lock is made in all.
const ATTEMPTS: u32 = 5;

/// The wait before the first retry; it doubles after each.
const FIRST_BACKOFF: Duration = Duration::from_millis(20);

/// Whether `e` is a transient failure to take or commit a lock file: another process holds the
/// lock, or the file or its directory was removed under it (a concurrent `git gc` removing
/// temporary files and empty object directories).
pub(crate) fn is_lock_failure(e: &git2::Error) -> bool {
    let m = e.message();
    e.code() == ErrorCode::Locked
        || m.contains("failed to rename lockfile")
        || m.contains("failed to create locked file")
        || m.contains("failed to lock file")
        // A concurrent deletion pruned the empty directory (`refs/runner/hold/`) this write
        // was making a reference in: made again on the next try.
        || (e.class() == git2::ErrorClass::Os && m.contains("failed to make directory"))
}

/// Run the write `f`, and run it again while it fails on a lock ([`is_lock_failure`]), up to
/// [`ATTEMPTS`] times with a doubling backoff. `what` names the write in the log.
pub(crate) fn retry<T>(
    what: &str,
    mut f: impl FnMut() -> Result<T, git2::Error>,
) -> Result<T, git2::Error> {
    let mut delay = FIRST_BACKOFF;
    let mut attempt = 1;
    loop {
        match f() {
            Err(e) if attempt < ATTEMPTS && is_lock_failure(&e) => {
                tracing::debug!(attempt, "cannot {what} ({e}); trying again");
                std::thread::sleep(delay);
                delay *= 2;
                attempt += 1;
            }
            r => return r,
        }
    }
}

/// How many times [`again`] and [`reread`] do their work in all.
const REWRITES: u32 = 3;

/// The pause before [`reread`] does its work once more.
const MISSING_PAUSE: Duration = Duration::from_millis(100);

/// Whether `e` is libgit2 not finding an object. Either it is gone, or a concurrent `git gc`
/// moved it into a new pack and removed the old one at a moment libgit2's one look for new
/// packs missed: a moment later it is found.
pub(crate) fn not_found(e: &GitError) -> bool {
    matches!(e, GitError::Git { source, .. }
        if source.code() == ErrorCode::NotFound && source.class() == git2::ErrorClass::Odb)
}

/// Run `f`, which writes objects and holds them with a reference, and run it again while what
/// it wrote is lost before the reference held it ([`GitError::Lost`]; nothing is held then,
/// so it is written again), up to [`REWRITES`] times in all. `what` names the work in the log.
pub(crate) fn again<T>(what: &str, f: impl FnMut() -> Result<T, GitError>) -> Result<T, GitError> {
    repeat(
        what,
        f,
        |e| matches!(e, GitError::Lost { .. }),
        "writing it again",
        None,
    )
}

/// Run `f`, which reads objects references hold, and run it again after a pause while an
/// object is not found (see [`not_found`]), up to [`REWRITES`] times in all. `what` names the
/// work in the log.
pub(crate) fn reread<T>(what: &str, f: impl FnMut() -> Result<T, GitError>) -> Result<T, GitError> {
    repeat(what, f, not_found, "trying again", Some(MISSING_PAUSE))
}

/// Run `f` up to [`REWRITES`] times while it fails with an error `again_on` accepts, logging
/// each failure with `then` and waiting `pause` between attempts.
fn repeat<T>(
    what: &str,
    mut f: impl FnMut() -> Result<T, GitError>,
    again_on: impl Fn(&GitError) -> bool,
    then: &str,
    pause: Option<std::time::Duration>,
) -> Result<T, GitError> {
    let mut attempt = 1;
    loop {
        match f() {
            Err(e) if attempt < REWRITES && again_on(&e) => {
                tracing::warn!("cannot {what} ({e}); {then}");
                if let Some(p) = pause {
                    std::thread::sleep(p);
                }
            }
            r => return r,
        }
        attempt += 1;
    }
}

/// The error for a write that failed: [`GitError::Lost`] when one of `inputs` (objects it
/// builds on, written moments before) is no longer in the object store, else the git error.
pub(crate) fn failed<'a>(
    repo: &'a Repository,
    inputs: &'a [Oid],
    what: &'a str,
) -> impl FnOnce(git2::Error) -> GitError + 'a {
    move |e| match inputs.iter().find(|id| !present(repo, **id)) {
        Some(id) => lost(what, *id),
        None => super::git_err(what)(e),
    }
}

/// `e`, or [`GitError::Lost`] when it is libgit2 not finding an object and one of `held`
/// (objects a reference held, which the work that failed read) is no longer in the object
/// store: removed by a prune that read the references just before the reference was written.
pub(crate) fn explain(repo_root: &Path, e: GitError, held: &[Oid], what: &str) -> GitError {
    if !not_found(&e) {
        return e;
    }
    let Ok(repo) = super::pinned::open_root(repo_root) else {
        return e;
    };
    match held.iter().find(|id| !present(&repo, **id)) {
        Some(id) => lost(what, *id),
        None => e,
    }
}

/// Whether object `id` of `repo` is in the object store now (read through a fresh handle).
pub(crate) fn present(repo: &Repository, id: Oid) -> bool {
    fresh(repo)
        .and_then(|r| r.odb().map(|odb| odb.exists(id)))
        .unwrap_or(false)
}

/// A handle on the repository of `repo` that shares nothing with it: what it reads comes from
/// the object store as it is now.
pub(crate) fn fresh(repo: &Repository) -> Result<Repository, git2::Error> {
    super::pinned::open_common(repo.commondir())
}

/// The error for an object that cannot be read back.
pub(crate) fn lost(what: impl Into<String>, object: Oid) -> GitError {
    GitError::Lost {
        what: what.into(),
        object: object.to_string(),
    }
}

/// Check commit `commit` of `repo`, just written and held by a reference: it, its parents, and
/// every object of its tree that its first parent's tree does not have must be readable now.
/// `what` names what holds the commit (the error says so).
pub(crate) fn check_commit(repo: &Repository, commit: Oid, what: &str) -> Result<(), GitError> {
    let store = Store::open(repo, what)?;
    let c = store
        .repo
        .find_commit(commit)
        .map_err(|_| lost(what, commit))?;
    let mut parent_tree = None;
    for id in c.parent_ids() {
        let p = store.repo.find_commit(id).map_err(|_| lost(what, id))?;
        if parent_tree.is_none() {
            parent_tree = Some(p.tree_id());
        }
    }
    store.check_tree(c.tree_id(), parent_tree, what)
}

/// Check tree `tree` of `repo`, just written and held by a reference: it and every object
/// under it that `known` (a tree held already) does not share must be readable now. The cost
/// is that of what differs.
pub(crate) fn check_tree(
    repo: &Repository,
    tree: Oid,
    known: Option<Oid>,
    what: &str,
) -> Result<(), GitError> {
    Store::open(repo, what)?.check_tree(tree, known, what)
}

/// The object store as it is now.
struct Store {
    repo: Repository,
}

impl Store {
    fn open(repo: &Repository, what: &str) -> Result<Store, GitError> {
        let repo = fresh(repo).map_err(super::git_err(format!("{what}: open the repository")))?;
        Ok(Store { repo })
    }

    fn check_tree(&self, tree: Oid, known: Option<Oid>, what: &str) -> Result<(), GitError> {
        if known == Some(tree) {
            return Ok(());
        }
        let odb = self
            .repo
            .odb()
            .map_err(super::git_err(format!("{what}: open the object store")))?;
        let new = self.repo.find_tree(tree).map_err(|_| lost(what, tree))?;
        let old = known.and_then(|k| self.repo.find_tree(k).ok());
        self.walk(&odb, &new, old.as_ref(), what)
    }

    fn walk(
        &self,
        odb: &git2::Odb<'_>,
        new: &Tree<'_>,
        old: Option<&Tree<'_>>,
        what: &str,
    ) -> Result<(), GitError> {
        for e in new.iter() {
            let before = old.and_then(|t| t.get_name_bytes(e.name_bytes()));
            if before.as_ref().is_some_and(|b| b.id() == e.id()) {
                continue;
            }
            match e.kind() {
                Some(ObjectType::Tree) => {
                    let sub = self
                        .repo
                        .find_tree(e.id())
                        .map_err(|_| lost(what, e.id()))?;
                    let sub_old = before
                        .filter(|b| b.kind() == Some(ObjectType::Tree))
                        .and_then(|b| self.repo.find_tree(b.id()).ok());
                    self.walk(odb, &sub, sub_old.as_ref(), what)?;
                }
                Some(ObjectType::Blob) if !odb.exists(e.id()) => return Err(lost(what, e.id())),
                // Blobs that are there, and submodule commits (not in this repository).
                _ => {}
            }
        }
        Ok(())
    }
}

/// The file a loose object of `repo` is stored in (for tests that take one away).
#[cfg(test)]
pub(crate) fn loose_path(repo: &Repository, id: Oid) -> std::path::PathBuf {
    let hex = id.to_string();
    repo.commondir()
        .join("objects")
        .join(&hex[..2])
        .join(&hex[2..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn repo() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        (dir, repo)
    }

    fn lock_error() -> git2::Error {
        git2::Error::new(
            ErrorCode::GenericError,
            git2::ErrorClass::Os,
            "failed to rename lockfile to '/r/.git/objects/ab/cdef': No such file or directory",
        )
    }

    #[test]
    fn a_lock_failure_is_tried_again() {
        let calls = Cell::new(0);
        let r = retry("write a blob", || {
            calls.set(calls.get() + 1);
            if calls.get() < 3 {
                Err(lock_error())
            } else {
                Ok(7)
            }
        });
        assert_eq!(r.unwrap(), 7);
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn a_lock_failure_that_persists_is_given_up_on() {
        let calls = Cell::new(0);
        let r: Result<(), _> = retry("write a blob", || {
            calls.set(calls.get() + 1);
            Err(lock_error())
        });
        assert!(is_lock_failure(&r.unwrap_err()));
        assert_eq!(calls.get(), ATTEMPTS);
    }

    #[test]
    fn other_failures_are_not_tried_again() {
        let calls = Cell::new(0);
        let r: Result<(), _> = retry("write a blob", || {
            calls.set(calls.get() + 1);
            Err(git2::Error::from_str("object not found"))
        });
        assert!(r.is_err());
        assert_eq!(calls.get(), 1);
        let locked = git2::Error::new(
            ErrorCode::Locked,
            git2::ErrorClass::Reference,
            "failed to lock file '/r/.git/refs/heads/x.lock' for writing",
        );
        assert!(is_lock_failure(&locked));
    }

    #[test]
    fn a_real_lock_failure_is_recognised() {
        // A ref whose lock file another process holds.
        let (dir, repo) = repo();
        let blob = repo.blob(b"x\n").unwrap();
        let refs = dir.path().join(".git/refs/runner");
        std::fs::create_dir_all(&refs).unwrap();
        std::fs::write(refs.join("x.lock"), "").unwrap();
        let e = repo
            .reference("refs/runner/x", blob, true, "test")
            .map(drop)
            .unwrap_err();
        assert!(is_lock_failure(&e), "{e}");
        // Taken away during the retries: the write goes through.
        let lock = refs.join("x.lock");
        let remover = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            std::fs::remove_file(lock).unwrap();
        });
        retry("hold", || {
            repo.reference("refs/runner/x", blob, true, "test")
                .map(drop)
        })
        .unwrap();
        remover.join().unwrap();
    }

    #[test]
    fn a_tree_with_a_lost_object_is_reported() {
        let (_dir, repo) = repo();
        let a = repo.blob(b"a\n").unwrap();
        let b = repo.blob(b"b\n").unwrap();
        let mut sub = repo.treebuilder(None).unwrap();
        sub.insert("b.txt", b, 0o100644).unwrap();
        let sub = sub.write().unwrap();
        let mut top = repo.treebuilder(None).unwrap();
        top.insert("a.txt", a, 0o100644).unwrap();
        top.insert("dir", sub, 0o040000).unwrap();
        let tree = top.write().unwrap();
        check_tree(&repo, tree, None, "test").unwrap();
        // The handle that wrote the objects may still have them cached: the check reads the
        // object store.
        repo.find_tree(sub).unwrap();
        std::fs::remove_file(loose_path(&repo, b)).unwrap();
        let e = check_tree(&repo, tree, None, "branch runner/t").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&b.to_string()), "{msg}");
        assert!(msg.contains("branch runner/t"), "{msg}");
        assert!(msg.contains("git gc --prune"), "{msg}");
        // Against a tree that already had it, nothing new is missing.
        check_tree(&repo, tree, Some(tree), "test").unwrap();
        std::fs::remove_file(loose_path(&repo, sub)).unwrap();
        assert!(matches!(
            check_tree(&repo, tree, None, "test"),
            Err(GitError::Lost { object, .. }) if object == sub.to_string()
        ));
    }
}
