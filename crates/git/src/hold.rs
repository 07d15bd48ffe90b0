//! The references runner writes, each written after the objects it points at and checked
//! after it is written (see [`super::objects`]):
//! - holds: temporary references under `refs/runner/hold/<session>/`, which keep objects
//!   nothing else reaches out of a `git gc`'s way — a task's base (a snapshot of the working
//!   tree, or the commit it started from, which HEAD may leave) for as long as the task may be
//!   resumed, and its end state from the walk that writes it until its branch commit. Deleted
//!   when no longer needed; a task killed outright leaves its base hold for `runner resume`;
//! - a task's branch ([`set_branch`]): pointed at the commit, then read back; when what it
//!   points at cannot be read, it is put back where it was (or deleted), never left dangling.

use git2::{Oid, Repository};

use super::objects::{check_commit, check_tree, lost, present, retry};
use super::{GitError, git_err, refs};

/// Where holds live.
pub(crate) const HOLD_PREFIX: &str = "refs/runner/hold";

/// The hold of `what` (`base`, `end`) for session `session_id`.
pub(crate) fn name(session_id: &str, what: &str) -> String {
    format!("{HOLD_PREFIX}/{session_id}/{what}")
}

/// Hold tree `tree`, just written, with hold `name`, then check that it can be read with
/// every object `known` (a tree held already) does not have (see [`check_tree`]). On failure
/// nothing is held.
pub(crate) fn hold_tree(
    repo: &Repository,
    name: &str,
    tree: Oid,
    known: Option<Oid>,
) -> Result<(), GitError> {
    hold(repo, name, tree)?;
    let checked = check_tree(repo, tree, known, &format!("hold {name}"));
    if checked.is_err() {
        release(repo, name);
    }
    checked
}

/// Hold commit `commit`, just written, with hold `name`, then check it as [`hold_tree`] checks
/// a tree (see [`check_commit`]).
pub(crate) fn hold_commit(repo: &Repository, name: &str, commit: Oid) -> Result<(), GitError> {
    hold(repo, name, commit)?;
    let checked = check_commit(repo, commit, &format!("hold {name}"));
    if checked.is_err() {
        release(repo, name);
    }
    checked
}

/// Point hold `name` at `target`: as it is, for an object runner did not write (HEAD's commit,
/// which HEAD may leave while the task runs); [`hold_tree`] and [`hold_commit`] for objects it
/// wrote. A target that is not in the repository is [`GitError::Lost`].
pub(crate) fn hold(repo: &Repository, name: &str, target: Oid) -> Result<(), GitError> {
    write_ref(repo, name, target, "runner: hold", &format!("hold {name}"))?;
    tracing::debug!(reference = name, object = %target, "held");
    Ok(())
}

/// Point reference `refname` at `target` (created or moved); `what` names it in errors.
fn write_ref(
    repo: &Repository,
    refname: &str,
    target: Oid,
    message: &str,
    what: &str,
) -> Result<(), GitError> {
    let write = format!("write the reference {refname}");
    let written = retry(&write, || {
        repo.reference(refname, target, true, message).map(drop)
    });
    match written {
        Ok(()) => {}
        // libgit2 refuses a reference to an object it cannot find.
        Err(_) if !present(repo, target) => return Err(lost(what, target)),
        Err(e) => return Err(git_err(write)(e)),
    }
    after_write(repo, target);
    Ok(())
}

/// Delete hold `name` (logged, never fatal; a hold that is gone already is fine).
pub(crate) fn release(repo: &Repository, name: &str) {
    match refs::delete(repo, name) {
        Ok(()) => tracing::debug!(reference = name, "released"),
        Err(e) => {
            tracing::warn!(
                reference = name,
                "cannot delete runner's temporary reference: {e}"
            )
        }
    }
}

/// Point branch `branch` at `commit` (created or moved), then read the branch back through a
/// fresh handle and check its commit and tree (see [`check_commit`]). When they cannot be read
/// the branch is put back where it was, or deleted if it is new, and [`GitError::Lost`] names
/// it. `message`: the reflog message.
pub(crate) fn set_branch(
    repo: &Repository,
    branch: &str,
    commit: Oid,
    message: &str,
) -> Result<(), GitError> {
    let refname = format!("refs/heads/{branch}");
    let what = format!("branch {branch}");
    let before = repo.refname_to_id(&refname).ok();
    write_ref(repo, &refname, commit, message, &what)?;
    let checked = super::objects::fresh(repo)
        .and_then(|r| r.refname_to_id(&refname))
        .map_err(git_err(format!("read branch {branch} back")))
        .and_then(|now| check_commit(repo, now, &format!("branch {branch}")));
    if let Err(e) = checked {
        let undone = match before {
            Some(old) => retry(&format!("put branch {branch} back"), || {
                repo.reference(&refname, old, true, "runner: put back")
                    .map(drop)
            })
            .map_err(git_err(format!("put branch {branch} back"))),
            None => refs::delete(repo, &refname),
        };
        if let Err(u) = undone {
            tracing::error!(branch, "cannot undo the branch after a failed check: {u}");
        }
        return Err(e);
    }
    Ok(())
}

/// A test's hook on a written reference.
#[cfg(test)]
type Hook = Box<dyn Fn(&Repository, Oid)>;

#[cfg(test)]
thread_local! {
    /// Called after a reference is written and before what it holds is checked (tests take
    /// an object away there, as a concurrent prune would).
    pub(crate) static AFTER_WRITE: std::cell::RefCell<Option<Hook>> =
        const { std::cell::RefCell::new(None) };
}

#[cfg(test)]
fn after_write(repo: &Repository, target: Oid) {
    AFTER_WRITE.with(|h| {
        if let Some(f) = h.borrow().as_ref() {
            f(repo, target);
        }
    });
}

#[cfg(not(test))]
fn after_write(_: &Repository, _: Oid) {}

#[cfg(test)]
mod tests {
    use super::super::objects::loose_path;
    use super::*;

    /// A repository with a first commit and a second one on top that adds `new.txt`.
    fn repo() -> (tempfile::TempDir, Repository, Oid, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let commit = |files: &[(&str, &[u8])], parents: &[Oid]| {
            let mut tb = repo.treebuilder(None).unwrap();
            for (name, content) in files {
                tb.insert(name, repo.blob(content).unwrap(), 0o100644)
                    .unwrap();
            }
            let tree = repo.find_tree(tb.write().unwrap()).unwrap();
            let parents: Vec<git2::Commit<'_>> = parents
                .iter()
                .map(|p| repo.find_commit(*p).unwrap())
                .collect();
            let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
            repo.commit(None, &sig, &sig, "c", &tree, &refs).unwrap()
        };
        let first = commit(&[("a.txt", b"a\n")], &[]);
        let second = commit(&[("a.txt", b"a\n"), ("new.txt", b"new\n")], &[first]);
        (dir, repo, first, second)
    }

    /// Take the blob of `new.txt` away once the next reference is written.
    fn lose_new_txt_after_the_write(repo: &Repository, second: Oid) -> Oid {
        let blob = repo
            .find_commit(second)
            .unwrap()
            .tree()
            .unwrap()
            .get_name("new.txt")
            .unwrap()
            .id();
        let path = loose_path(repo, blob);
        AFTER_WRITE.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |_, _| {
                let _ = std::fs::remove_file(&path);
            }))
        });
        blob
    }

    fn no_hook() {
        AFTER_WRITE.with(|h| *h.borrow_mut() = None);
    }

    #[test]
    fn a_branch_is_set_and_read_back() {
        let (_d, repo, first, second) = repo();
        set_branch(&repo, "runner/t", first, "test").unwrap();
        set_branch(&repo, "runner/t", second, "test").unwrap();
        assert_eq!(repo.refname_to_id("refs/heads/runner/t").unwrap(), second);
    }

    #[test]
    fn a_new_branch_whose_objects_are_lost_is_not_left_behind() {
        let (_d, repo, _first, second) = repo();
        let blob = lose_new_txt_after_the_write(&repo, second);
        let e = set_branch(&repo, "runner/t", second, "test").unwrap_err();
        no_hook();
        let msg = e.to_string();
        assert!(msg.contains("branch runner/t"), "{msg}");
        assert!(msg.contains(&blob.to_string()), "{msg}");
        assert!(msg.contains("concurrent `git gc --prune`"), "{msg}");
        assert!(
            repo.find_reference("refs/heads/runner/t").is_err(),
            "no dangling branch"
        );
    }

    #[test]
    fn a_moved_branch_whose_objects_are_lost_is_put_back() {
        let (_d, repo, first, second) = repo();
        set_branch(&repo, "runner/t", first, "test").unwrap();
        lose_new_txt_after_the_write(&repo, second);
        assert!(matches!(
            set_branch(&repo, "runner/t", second, "test"),
            Err(GitError::Lost { .. })
        ));
        no_hook();
        assert_eq!(repo.refname_to_id("refs/heads/runner/t").unwrap(), first);
    }

    #[test]
    fn holds_are_checked_and_released() {
        let (_d, repo, first, second) = repo();
        let base = name("s1", "base");
        hold_commit(&repo, &base, first).unwrap();
        assert_eq!(repo.refname_to_id(&base).unwrap(), first);
        let tree = repo.find_commit(second).unwrap().tree_id();
        let end = name("s1", "end");
        hold_tree(&repo, &end, tree, None).unwrap();
        release(&repo, &end);
        release(&repo, &end);
        assert!(repo.find_reference(&end).is_err());
        // An end state whose new blob is lost is refused, and not held.
        lose_new_txt_after_the_write(&repo, second);
        let known = repo.find_commit(first).unwrap().tree_id();
        let e = hold_tree(&repo, &end, tree, Some(known)).unwrap_err();
        no_hook();
        assert!(e.to_string().contains(&format!("hold {end}")), "{e}");
        assert!(repo.find_reference(&end).is_err());
    }
}
