//! runner-git: git for task runs (git2): per-task worktrees, patches, branch commits, change
//! detection, and the worktree pool a batch prepares ahead.
//!
//! Before any task starts, [`plan()`] decides for each task whether it runs isolated (in a
//! worktree, checked out from the base commit) or in place, and refuses a dirty working tree
//! for isolated tasks with `base: head`. [`begin`] snapshots the base and gets the worktree;
//! [`finish`] diffs the end state against the base, writes the patch file, commits on the
//! task's branch on success and gives the worktree back (kept after an interrupt so the run
//! can be resumed there).
//!
//! - `plan`: [`plan()`] and [`Planner`]; `task`: a task's git state ([`GitTask`]); `start`:
//!   [`begin`]; `end`: [`finish`] and [`abandon`]; `patch`: the patch, counts and branch commit;
//! - `error`: [`GitError`]; `repo`: the lock on shared repository state and [`repo_info`];
//! - `record`: the base a task started from, written to its output directory; `resumed`: a
//!   resumed task going on from that base, in its kept worktree;
//! - `objects`, `hold` and `refs`: runner's own writes to the object store and references,
//!   made to hold up while `git gc` runs beside them (lock failures tried again, temporary
//!   references under `refs/runner/hold/` for what nothing else reaches, a check after each
//!   reference is written, deletion that takes no other reference with it);
//! - `pinned`: how runner's own work opens a repository: by what it recorded before any task
//!   ran (git directory, working tree, a few settings), never by what a task wrote since;
//! - [`credential`]: the checkout credential taken out of the repository's configuration for
//!   the length of a run, and put back;
//! - `snapshot`: snapshots of the repository's own working tree; `changes`: end states as
//!   trees, from what changed;
//! - `worktree`: a worktree of a task's own (a task run alone);
//! - [`source`]: worktrees handed out by a batch's [`pool`], which makes
//!   them with `slot` (pooled worktrees and templates), `checkout`, `overlay` and `admin`
//!   (a worktree's own git directory), and cleans up after killed batches with `sweep`; `layout`
//!   is the slots' on-disk layout both sides share.
//!
//! Snapshots are trees made as `git add -A` would, without touching the index file, so
//! untracked files count as changes, ignored files (and runner's own output directories)
//! never do, and nothing in the user's index or HEAD moves.
//!
//! It knows the spec (`runner-spec`: the `git:` settings a task is planned from), the
//! redaction of patches and the atomic file writes (`runner-report`) and lexical path
//! normalisation (`runner-protocol`), not the agent loop or the sessions that call it:
//! runner-core re-exports it as `runner_core::git`.

#![deny(missing_docs)]

pub(crate) use runner_protocol::roots;
pub(crate) use runner_report::{atomic_file, redact};
pub(crate) use runner_spec as spec;

mod admin;
mod changes;
pub(crate) mod checkout;
mod clean;
pub mod credential;
mod end;
mod error;
mod hold;
mod index_file;
mod layout;
mod lower;
mod mask;
mod objects;
pub(crate) mod overlay;
mod patch;
mod pinned;
mod plan;
pub mod pool;
mod record;
mod refs;
mod repo;
mod resumed;
mod shares;
pub(crate) mod slot;
mod snapshot;
pub mod source;
mod start;
pub(crate) mod sweep;
mod task;
pub(crate) mod template;
pub(crate) mod template_cache;
#[cfg(any(test, feature = "test-support"))]
pub mod test_git;
mod tree_delta;
mod verified;
mod watch;
mod worktree;

pub use end::{abandon, finish};
pub use error::{GitError, RecordError};
pub(crate) use error::{git_err, io_err};
pub use index_file::paths as index_paths;
pub use patch::{FileChange, GitSummary};
pub use pinned::{Recorded as RecordedRepo, config_file, open_root as open_recorded};
pub use plan::{GitPlan, Planner, absolute, dirty_paths, plan, repo_root_of, resumed_plan};
pub use record::{BASE_FILE, BaseRecord, RecordedWorktree, read as read_base};
pub(crate) use repo::{DIRTY_PATHS_SHOWN, relative_excludes};
pub use repo::{RepoInfo, fast_object_reads, repo_info};
pub use slot::reattach;
pub use source::{Lease, LeaseKind, WorktreeSource};
pub use start::begin;
pub use task::{Ending, GitTask};

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    #[test]
    fn branch_names() {
        use crate::spec::GitBranch;
        assert_eq!(GitBranch::Enabled(false).name_for("t"), None);
        assert_eq!(
            GitBranch::Enabled(true).name_for("fix-x").as_deref(),
            Some("runner/fix-x")
        );
        assert_eq!(
            GitBranch::Named("bot/y".into()).name_for("t").as_deref(),
            Some("bot/y")
        );
    }

    #[test]
    fn absolute_resolves_the_existing_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(absolute(&link.join("a/../b/c")), real.join("b/c"));
        assert_eq!(absolute(&real), real);
    }

    #[test]
    fn excludes_are_relative_to_the_root() {
        let ex = relative_excludes(
            Path::new("/r"),
            &[
                PathBuf::from("/r/.runner"),
                PathBuf::from("/elsewhere"),
                PathBuf::from("/r"),
            ],
        );
        assert_eq!(ex, vec![PathBuf::from(".runner")]);
    }
}
