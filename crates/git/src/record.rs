//! What a task's git work starts from, written to its output directory (`git-base.json`) when
//! the task starts, before the agent changes anything: the repository, the base commit and
//! tree, the reference that holds them, the worktree and where the patch goes. `runner resume`
//! reads it back ([`read`]), so a resumed task measures its whole change against that same
//! base, in the same worktree, and writes its patch where the run's patch goes — whatever
//! directory the resume is started from and whatever the repository's HEAD is by then.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::RecordError;

/// The record's file name in a task's output directory.
pub const BASE_FILE: &str = "git-base.json";

/// Version of the record's layout.
const VERSION: u32 = 1;

/// A task's git base as recorded when it started (`git-base.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseRecord {
    /// Layout version.
    pub version: u32,
    /// The repository's root (canonical).
    pub repo_root: PathBuf,
    /// The commit the task started from (hex).
    pub base_commit: String,
    /// The tree its changes are measured against (hex): the base commit's, or for a task run
    /// in place, a snapshot of the working tree.
    pub base_tree: String,
    /// The reference under `refs/runner/hold/` that keeps the base out of `git gc`'s way
    /// until the task ends.
    pub hold: String,
    /// Where the task's patch goes (absolute).
    pub patch_dir: PathBuf,
    /// runner's output directories, never part of the task's changes (absolute).
    pub exclude: Vec<PathBuf>,
    /// The worktree the task runs in, when it is isolated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<RecordedWorktree>,
    /// The repository as runner recorded it before the run's tasks ran (see
    /// `crate::pinned`): a resumed task's git work opens it the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<super::pinned::Recorded>,
}

/// The worktree of an isolated task, and how its changes are found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecordedWorktree {
    /// A worktree of its own, registered in the repository under `name`.
    Own {
        /// Its name in `git worktree list`.
        name: String,
        /// Its path.
        path: PathBuf,
    },
    /// A batch's overlay worktree: the changes are in `upper`.
    Overlay {
        /// The worktree (the mount point).
        path: PathBuf,
        /// The overlay's upper directory.
        upper: PathBuf,
    },
    /// A batch's checked-out worktree, with its own index.
    Checkout {
        /// The worktree.
        path: PathBuf,
    },
}

impl BaseRecord {
    /// A record of the current layout.
    pub(crate) fn new(
        repo_root: PathBuf,
        base_commit: String,
        base_tree: String,
        hold: String,
        patch_dir: PathBuf,
        exclude: Vec<PathBuf>,
        worktree: Option<RecordedWorktree>,
    ) -> BaseRecord {
        let repository = super::pinned::recorded(&repo_root);
        BaseRecord {
            version: VERSION,
            repo_root,
            base_commit,
            base_tree,
            hold,
            patch_dir,
            exclude,
            worktree,
            repository,
        }
    }
}

/// Write `record` into the output directory `run_dir` (a temporary file renamed into place).
pub(crate) fn write(run_dir: &Path, record: &BaseRecord) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)?;
    text.push('\n');
    let tmp = run_dir.join(format!(".{BASE_FILE}.tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, run_dir.join(BASE_FILE))
}

/// The record in the output directory `run_dir`: `Ok(None)` when there is none (a run outside
/// git, or one made before runner recorded it), `Err` (why) when it cannot be read.
pub fn read(run_dir: &Path) -> Result<Option<BaseRecord>, RecordError> {
    let path = run_dir.join(BASE_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(RecordError::Read { path, source }),
    };
    let record: BaseRecord = match serde_json::from_str(&text) {
        Ok(r) => r,
        Err(source) => return Err(RecordError::Parse { path, source }),
    };
    if record.version != VERSION {
        return Err(RecordError::Version {
            path,
            found: record.version,
            expected: VERSION,
        });
    }
    Ok(Some(record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        let r = BaseRecord::new(
            "/r".into(),
            "a".repeat(40),
            "b".repeat(40),
            "refs/runner/hold/s/base".into(),
            "/out/patches".into(),
            vec!["/out".into()],
            Some(RecordedWorktree::Overlay {
                path: "/out/.worktrees/1/s1/tree".into(),
                upper: "/out/.worktrees/1/s1/upper".into(),
            }),
        );
        write(dir.path(), &r).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(r));
        let text = std::fs::read_to_string(dir.path().join(BASE_FILE)).unwrap();
        assert!(text.contains("\"kind\": \"overlay\""), "{text}");
        std::fs::write(dir.path().join(BASE_FILE), "{").unwrap();
        assert!(
            read(dir.path())
                .unwrap_err()
                .to_string()
                .contains(BASE_FILE)
        );
    }
}
