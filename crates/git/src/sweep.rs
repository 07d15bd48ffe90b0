//! What a killed batch leaves behind, and cleaning it up.
//!
//! A batch keeps its templates and pooled worktrees in a directory of its own under the
//! transcript directory (`.worktrees/<pid>-<random>`), and holds a lock on `lock` there for as
//! long as it runs (the kernel drops it when the process dies, however it dies). A later batch
//! that can take that lock knows the directory's owner is gone: it unmounts what is still
//! mounted there and removes everything but the worktrees the batch kept for `runner resume`
//! (its interrupted tasks', whose results name them). The worktrees of tasks that were still
//! running when their batch was killed are removed too, with a log line: no result names
//! them. Overlay mounts of dead batches elsewhere (another transcript directory) are found
//! through /proc/self/mountinfo and unmounted too.

use std::fs::File;
use std::path::Path;

use rustix::fs::FlockOperation;

use super::layout::{remove_logged, was_kept, was_taken};
use super::overlay;

/// The lock file of a batch directory.
pub(crate) const LOCK: &str = "lock";

/// Create the batch directory's lock file and hold it (shared: a resumed task holds it too).
pub(crate) fn hold(dir: &Path) -> std::io::Result<File> {
    let f = File::create(dir.join(LOCK))?;
    rustix::fs::flock(&f, FlockOperation::LockShared)?;
    Ok(f)
}

/// Hold the lock of an existing batch directory, shared, if it has one.
pub(crate) fn hold_shared(dir: &Path) -> Option<File> {
    let f = File::open(dir.join(LOCK)).ok()?;
    rustix::fs::flock(&f, FlockOperation::LockShared).ok()?;
    Some(f)
}

/// Whether no live process holds the lock of batch directory `dir` (`Some(lock)`, held
/// exclusively until dropped), or `None` while one does.
fn abandoned(dir: &Path) -> Option<File> {
    let f = File::open(dir.join(LOCK)).ok()?;
    rustix::fs::flock(&f, FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(f)
}

/// Clean up the batch directories under `pool_root` whose batch is gone, and unmount every
/// worktree overlay of a dead batch anywhere.
pub(crate) fn sweep(pool_root: &Path) {
    unmount_dead_anywhere();
    let Ok(entries) = std::fs::read_dir(pool_root) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let Some(_lock) = abandoned(&dir) else {
            continue;
        };
        tracing::info!(dir = %dir.display(), "cleaning up after a batch that did not finish");
        for m in overlay::mounts_under(&dir) {
            let _ = overlay::unmount(&m.target);
        }
        let Ok(children) = std::fs::read_dir(&dir) else {
            continue;
        };
        let (mut kept, mut killed) = (0, 0);
        for child in children.flatten() {
            let p = child.path();
            if child.file_name() == LOCK {
                continue;
            }
            if p.is_dir() && was_kept(&p) {
                kept += 1;
                continue;
            }
            if p.is_dir() && was_taken(&p) {
                killed += 1;
            }
            remove_logged(&p);
        }
        if killed > 0 {
            tracing::warn!(dir = %dir.display(), worktrees = killed, "removed the worktrees of tasks that were still running when their batch was killed");
        }
        if kept == 0 {
            remove_logged(&dir);
        }
    }
}

/// Unmount runner's worktree overlays whose batch directory no live process holds.
fn unmount_dead_anywhere() {
    for m in overlay::runner_mounts() {
        // SLOT/tree → SLOT → the batch directory.
        let Some(batch) = m.target.parent().and_then(Path::parent) else {
            continue;
        };
        if abandoned(batch).is_some() {
            tracing::info!(worktree = %m.target.display(), "unmounting a worktree left by a batch that did not finish");
            let _ = overlay::unmount(&m.target);
        }
    }
}
