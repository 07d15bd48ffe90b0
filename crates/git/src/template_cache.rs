//! Template checkouts kept between batches, in `$RUNNER_CACHE_DIR`.
//!
//! When the repository's own checkout cannot be the lower layer of a batch's overlay
//! worktrees, a template checkout of the base tree is. With `RUNNER_CACHE_DIR` set, templates
//! live in `$RUNNER_CACHE_DIR/templates/<repository>/<n>/` (`<repository>`: a digest of the
//! repository's git directory) and outlive the batch: the next batch of the same base tree uses
//! one as it is; a batch of another base brings the most recently used one to its tree with a
//! checkout of the difference (only the files that differ are written), instead of checking
//! out every file again. At most `RUNNER_CACHE_TEMPLATES` (default 2) templates are kept per
//! repository; the least recently used that no batch uses go first.
//!
//! Locks (`flock`, dropped by the kernel however a batch ends): the repository's directory
//! `lock` is held while a batch chooses, updates or makes a template; each template's own
//! `lock` is held shared by every batch mounting it (for the batch's life) and exclusively
//! while it is updated, so a template is never changed under a running batch.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use git2::Oid;
use rustix::fs::FlockOperation;

use super::checkout::{self, Cancel};
use super::layout::{TREE, remove_logged};
use super::template::Template;
use super::{GitError, admin, git_err, io_err};

/// The environment variable naming the cache directory.
pub(crate) const CACHE_ENV: &str = "RUNNER_CACHE_DIR";
/// The environment variable with the most templates kept per repository.
pub(crate) const KEEP_ENV: &str = "RUNNER_CACHE_TEMPLATES";
/// Templates kept per repository unless `RUNNER_CACHE_TEMPLATES` says otherwise.
const KEEP_DEFAULT: usize = 2;
/// A template's lock, and the file whose content is its tree (written once it is complete).
const LOCK: &str = "lock";
const META: &str = "tree-id";

/// The cache directory (`RUNNER_CACHE_DIR`, made absolute), if one is set.
pub(crate) fn dir() -> Option<PathBuf> {
    let d = std::env::var_os(CACHE_ENV).filter(|v| !v.is_empty())?;
    Some(super::absolute(Path::new(&d)))
}

fn keep() -> usize {
    std::env::var(KEEP_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(KEEP_DEFAULT)
        .max(1)
}

/// One template of the cache.
#[derive(Debug)]
struct Entry {
    dir: PathBuf,
    /// Its tree, when it is complete.
    tree: Option<Oid>,
    /// When a batch last used it.
    used: SystemTime,
}

fn lock(path: &Path, op: FlockOperation) -> std::io::Result<File> {
    let f = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    rustix::fs::flock(&f, op)?;
    Ok(f)
}

/// A template of `tree` from the cache under `cache`, for the repository whose common
/// directory is `common_dir` (HEAD of its administrative directory at `commit`), held for the
/// caller's use (its lock is in [`Template::cached`]).
pub(crate) fn take(
    cache: &Path,
    common_dir: &Path,
    commit: Oid,
    tree: Oid,
    filters: bool,
    cancel: &Cancel,
) -> Result<Template, GitError> {
    let digest = Oid::hash_object(
        git2::ObjectType::Blob,
        common_dir.as_os_str().as_encoded_bytes(),
    )
    .map_err(git_err("name the template cache"))?;
    let repo_dir = cache
        .join("templates")
        .join(format!("{:.16}", digest.to_string()));
    let what = || format!("use the template cache {}", repo_dir.display());
    std::fs::create_dir_all(&repo_dir).map_err(io_err(what()))?;
    let _repo_lock =
        lock(&repo_dir.join(LOCK), FlockOperation::LockExclusive).map_err(io_err(what()))?;
    let mut entries = list(&repo_dir);
    entries.sort_by_key(|e| std::cmp::Reverse(e.used));
    let started = std::time::Instant::now();
    let mut chosen = None;
    if let Some(e) = entries.iter().find(|e| e.tree == Some(tree)) {
        let held = lock(&e.dir.join(LOCK), FlockOperation::LockShared).map_err(io_err(what()))?;
        tracing::info!(template = %e.dir.display(), "template checkout reused from the cache");
        chosen = Some((e.dir.clone(), held));
    }
    if chosen.is_none() {
        // The most recently used template no batch is using, brought to `tree` by a checkout
        // of the difference.
        for e in &entries {
            let Ok(held) = lock(&e.dir.join(LOCK), FlockOperation::NonBlockingLockExclusive) else {
                continue;
            };
            match update(&e.dir, common_dir, commit, tree, filters) {
                Ok(()) => {
                    tracing::info!(template = %e.dir.display(), ms = started.elapsed().as_millis() as u64, "template checkout in the cache updated to the base commit by the difference");
                    chosen = Some((e.dir.clone(), held));
                    break;
                }
                Err(err) => {
                    tracing::warn!(template = %e.dir.display(), "cannot update the cached template ({err}); removing it");
                    remove_logged(&e.dir);
                }
            }
        }
    }
    let (dir, held) = match chosen {
        Some(c) => c,
        None => {
            let dir = new_entry(&repo_dir);
            let held = {
                std::fs::create_dir_all(&dir).map_err(io_err(what()))?;
                lock(&dir.join(LOCK), FlockOperation::LockExclusive).map_err(io_err(what()))?
            };
            if let Err(e) = checkout::create(&dir, common_dir, commit, tree, filters, cancel) {
                remove_logged(&dir);
                return Err(e);
            }
            std::fs::write(dir.join(META), tree.to_string()).map_err(io_err(what()))?;
            tracing::info!(template = %dir.display(), ms = started.elapsed().as_millis() as u64, "template checkout made in the cache");
            (dir, held)
        }
    };
    // Used now; shared from here on (other batches of this tree may use it too).
    let _ = std::fs::write(dir.join(META), tree.to_string());
    rustix::fs::flock(&held, FlockOperation::LockShared).map_err(|e| io_err(what())(e.into()))?;
    evict(&repo_dir, &dir);
    Ok(Template {
        dir,
        filters,
        cached: Some(held),
    })
}

/// The templates under `repo_dir`.
fn list(repo_dir: &Path) -> Vec<Entry> {
    let Ok(rd) = std::fs::read_dir(repo_dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let dir = e.path();
            let meta = std::fs::read_to_string(dir.join(META)).ok();
            let used = std::fs::metadata(dir.join(META))
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            Entry {
                tree: meta.and_then(|m| Oid::from_str(m.trim()).ok()),
                dir,
                used,
            }
        })
        .collect()
}

/// A new template directory's name under `repo_dir`.
fn new_entry(repo_dir: &Path) -> PathBuf {
    let id = uuid::Uuid::new_v4().simple().to_string();
    repo_dir.join(&id[..12])
}

/// Bring the template at `dir` to `tree` (HEAD at `commit`) by a checkout of what differs
/// from the tree it holds: libgit2 compares against the template's index and HEAD, so only the
/// changed files are written (and anything else found there is removed).
fn update(
    dir: &Path,
    common_dir: &Path,
    commit: Oid,
    tree: Oid,
    filters: bool,
) -> Result<(), GitError> {
    let what = || format!("update the template {}", dir.display());
    let _ = std::fs::remove_file(dir.join(META));
    let work = dir.join(TREE);
    let admin_dir = dir.join(admin::ADMIN_DIR);
    if let Some(why) = admin::changed(&admin_dir, common_dir, &work) {
        return Err(GitError::Io {
            what: what(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, why),
        });
    }
    checkout::reset(dir, common_dir, tree, filters).map_err(git_err(what()))?;
    admin::set_head(&admin_dir, commit).map_err(io_err(what()))
}

/// Remove the least recently used templates beyond the most kept, except `current` and any a
/// batch is using.
fn evict(repo_dir: &Path, current: &Path) {
    let mut entries = list(repo_dir);
    entries.sort_by_key(|e| std::cmp::Reverse(e.used));
    let mut kept = 1;
    for e in entries {
        if e.dir == current {
            continue;
        }
        if kept < keep() && e.tree.is_some() {
            kept += 1;
            continue;
        }
        if let Ok(_held) = lock(&e.dir.join(LOCK), FlockOperation::NonBlockingLockExclusive) {
            tracing::info!(template = %e.dir.display(), "cached template removed (least recently used)");
            remove_logged(&e.dir);
        }
    }
}
