//! Deleting a reference the way git does, so that no other reference goes with it.
//!
//! libgit2 deletes a packed reference by writing back the `packed-refs` file it read before it
//! took that file's lock: references a concurrent `git gc` (`git pack-refs`) packed in the
//! meantime — and removed as loose files — are lost, a task's branch or another task's hold
//! among them. [`delete`] does what git does instead: it locks the loose reference, then
//! `packed-refs`; under both locks it removes the loose file and writes `packed-refs` back, as
//! read under its lock, without the reference's line (the reference's reflog goes too).

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::Repository;

use super::{GitError, io_err};

/// How long a lock file another process holds is waited for (git's own default for
/// `packed-refs` is one second).
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// A lock file taken with `O_EXCL`, removed when dropped unless committed.
struct Lock {
    path: PathBuf,
    done: bool,
}

impl Lock {
    /// Take the lock of `file` (`file.lock`), waiting up to [`LOCK_WAIT`] for another holder
    /// (and making the directory again when a concurrent `git pack-refs` removes it as empty).
    fn take(file: &Path) -> std::io::Result<Lock> {
        let mut path = file.as_os_str().to_os_string();
        path.push(".lock");
        let path = PathBuf::from(path);
        let mut waited = Duration::ZERO;
        let mut delay = Duration::from_millis(5);
        loop {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => return Ok(Lock { path, done: false }),
                Err(e)
                    if matches!(e.kind(), ErrorKind::AlreadyExists | ErrorKind::NotFound)
                        && waited < LOCK_WAIT =>
                {
                    std::thread::sleep(delay);
                    waited += delay;
                    delay = (delay * 2).min(Duration::from_millis(100));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Replace `file` with `content`, through the lock file.
    fn commit(mut self, file: &Path, content: &[u8]) -> std::io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&self.path)?;
        f.write_all(content)?;
        f.sync_all()?;
        std::fs::rename(&self.path, file)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `packed-refs` without the line of `name` (and the peeled line after it); `None` when it
/// has no such line.
fn without(packed: &[u8], name: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(packed.len());
    let mut found = false;
    let mut skip_peel = false;
    for line in packed.split_inclusive(|b| *b == b'\n') {
        if skip_peel && line.first() == Some(&b'^') {
            continue;
        }
        skip_peel = false;
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let named = text.first() != Some(&b'#')
            && text
                .splitn(2, |b| *b == b' ')
                .nth(1)
                .is_some_and(|r| r == name.as_bytes());
        if named {
            found = true;
            skip_peel = true;
            continue;
        }
        out.extend_from_slice(line);
    }
    found.then_some(out)
}

/// Delete reference `name` (`refs/...`, shared by all worktrees) of `repo`, loose and packed,
/// with its reflog. A reference that does not exist is not an error.
pub(crate) fn delete(repo: &Repository, name: &str) -> Result<(), GitError> {
    let common = repo.commondir().to_path_buf();
    let what = || format!("delete the reference {name}");
    let loose = common.join(name);
    let loose_lock = Lock::take(&loose).map_err(io_err(what()))?;
    let packed_file = common.join("packed-refs");
    let packed_lock = Lock::take(&packed_file).map_err(io_err(what()))?;
    let packed = match std::fs::read(&packed_file) {
        Ok(packed) => without(&packed, name),
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(what())(e)),
    };
    // Both files change under both locks: a `git pack-refs` waiting for `packed-refs` finds
    // the reference in neither when it gets it.
    match std::fs::remove_file(&loose) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(what())(e)),
    }
    if let Some(rest) = packed {
        packed_lock
            .commit(&packed_file, &rest)
            .map_err(io_err(what()))?;
    } else {
        drop(packed_lock);
    }
    drop(loose_lock);
    let log = common.join("logs").join(name);
    let _ = std::fs::remove_file(&log);
    remove_empty_parents(&common.join("refs"), &loose);
    remove_empty_parents(&common.join("logs").join("refs"), &log);
    Ok(())
}

/// Remove the directories of `path` that are empty, up to (not including) `top`.
fn remove_empty_parents(top: &Path, path: &Path) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == top || !d.starts_with(top) || std::fs::remove_dir(d).is_err() {
            return;
        }
        dir = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_line_and_its_peel_go() {
        let packed = b"# pack-refs with: peeled fully-peeled sorted \n\
aaaa refs/heads/main\n\
bbbb refs/runner/hold/s/base\n\
^cccc\n\
dddd refs/runner/hold/s/base2\n";
        let rest = without(packed, "refs/runner/hold/s/base").unwrap();
        assert_eq!(
            String::from_utf8(rest).unwrap(),
            "# pack-refs with: peeled fully-peeled sorted \naaaa refs/heads/main\ndddd refs/runner/hold/s/base2\n"
        );
        assert_eq!(without(packed, "refs/heads/other"), None);
    }

    #[test]
    fn packed_and_loose_references_are_deleted_and_the_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let blob = repo.blob(b"x\n").unwrap();
        for n in [
            "refs/runner/hold/s/base",
            "refs/runner/hold/s/end",
            "refs/heads/keep",
        ] {
            repo.reference(n, blob, true, "test").unwrap();
        }
        // Pack them as `git pack-refs --all --prune` does, then make one loose again.
        let git = dir.path().join(".git");
        let packed = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{blob} refs/heads/keep\n{blob} refs/runner/hold/s/base\n{blob} refs/runner/hold/s/end\n"
        );
        std::fs::write(git.join("packed-refs"), packed).unwrap();
        for n in ["refs/runner/hold/s/base", "refs/heads/keep"] {
            std::fs::remove_file(git.join(n)).unwrap();
        }
        delete(&repo, "refs/runner/hold/s/base").unwrap();
        delete(&repo, "refs/runner/hold/s/end").unwrap();
        delete(&repo, "refs/runner/hold/s/gone").unwrap();
        let repo = Repository::open(dir.path()).unwrap();
        assert!(repo.find_reference("refs/runner/hold/s/base").is_err());
        assert!(repo.find_reference("refs/runner/hold/s/end").is_err());
        assert_eq!(repo.refname_to_id("refs/heads/keep").unwrap(), blob);
        assert!(!git.join("refs/runner").exists(), "empty directories go");
        assert!(!git.join("packed-refs.lock").exists());
    }
}
