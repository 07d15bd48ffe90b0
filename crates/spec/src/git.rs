//! The spec's `git:` section: worktree isolation, base, patches/branches, `require_changes`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a task uses git (only when its workdir is in a git repository).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitSettings {
    /// Run the task in its own git worktree under the output directory. Default: isolated
    /// when the run has more than one task and the workdir is in a git repository; in place
    /// (editing the working tree) for a single task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolate: Option<bool>,
    /// What an isolated worktree starts from: `head` (the HEAD commit; a working tree with
    /// uncommitted changes to tracked files is then an error) or `working-tree` (the current
    /// working tree, uncommitted and untracked files included).
    #[serde(default, skip_serializing_if = "GitBase::is_head")]
    pub base: GitBase,
    /// Fail the task (`checks_failed`, with a failed `git.require_changes` check) when it
    /// finished successfully but changed no file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_changes: bool,
    /// On success, commit the task's changes on a branch: `true` for `runner/<task>`, or a
    /// branch name. `false` or absent: no branch (the patch file is still written).
    #[serde(default, skip_serializing_if = "GitBranch::is_off")]
    pub branch: GitBranch,
    /// Author (and committer) of branch commits. Default: the repository's `user.name` /
    /// `user.email`, else `runner <runner@localhost>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<GitAuthor>,
    /// Untracked or ignored paths of the repository's checkout (relative to the repository
    /// root, e.g. `target` or `node_modules`) that an isolated task sees, as a warm cache it
    /// may read and change in its own worktree without the checkout ever being written. Only
    /// where the batch layers worktrees on the checkout itself (see "Worktrees" in ci.md);
    /// elsewhere a worktree has the base commit's files alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub share_untracked: Vec<std::path::PathBuf>,
}

impl GitSettings {
    /// Whether nothing is set (the section is then left out of the resolved spec).
    pub fn is_unset(&self) -> bool {
        self == &GitSettings::default()
    }
}

/// What an isolated task's worktree is checked out from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GitBase {
    /// The HEAD commit.
    #[default]
    Head,
    /// The working tree as it is when the run starts (a snapshot commit on top of HEAD).
    WorkingTree,
}

impl GitBase {
    /// Whether this is the default (`head`).
    pub fn is_head(&self) -> bool {
        *self == GitBase::Head
    }
}

/// `git.branch`: off, on (default name), or a branch name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum GitBranch {
    /// `true`: commit on `runner/<task>`; `false`: no branch.
    Enabled(bool),
    /// Commit on this branch.
    Named(String),
}

impl Default for GitBranch {
    fn default() -> Self {
        GitBranch::Enabled(false)
    }
}

impl GitBranch {
    /// Whether no branch is wanted.
    pub fn is_off(&self) -> bool {
        *self == GitBranch::Enabled(false)
    }

    /// The branch name for task `task`, if a branch is wanted.
    pub fn name_for(&self, task: &str) -> Option<String> {
        match self {
            GitBranch::Enabled(false) => None,
            GitBranch::Enabled(true) => Some(format!("runner/{task}")),
            GitBranch::Named(n) => Some(n.clone()),
        }
    }
}

/// Name and email of branch commits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitAuthor {
    /// Author name.
    pub name: String,
    /// Author email.
    pub email: String,
}
