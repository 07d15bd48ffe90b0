//! What a finished task's report says about the parts of runner that ran it: git's changes
//! ([`GitSummary`]), the rate-limit governor ([`RateLimitTally`]) and the integrity guard
//! ([`IntegrityChange`]). Data only: the crates that do the work fill them in, the reports
//! render them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What git made of a finished task (the result's `runner_git`, JUnit `git.*` properties).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GitSummary {
    /// The task ran in a worktree of its own.
    pub isolated: bool,
    /// The commit its changes are measured against.
    pub base_commit: String,
    /// Whether it changed any file.
    pub changed: bool,
    /// Files changed, added or deleted.
    pub files_changed: usize,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// The patch file (`git apply`-able against the base commit).
    pub patch: Option<PathBuf>,
    /// Branch the changes were committed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// That commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The worktree, when it was kept (after an interrupt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<PathBuf>,
    /// Each file changed, with its lines added and removed, in the patch's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
}

/// One file a task changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FileChange {
    /// Its path, relative to the repository root.
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed` or `typechange`.
    pub status: String,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// A binary file (no line counts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

/// What the rate-limit governor did to one task (the result's `runner_rate_limit`, JUnit's
/// `rate_limit.*` properties), with the governor's limit when the task ended.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct RateLimitTally {
    /// The task's requests that waited for the governor before they were sent.
    pub waits: u64,
    /// Those waits and the waits after its 429s, summed: not charged to `retry.budget` or
    /// `limits.timeout`.
    pub wait_ms: u64,
    /// Rate-limited responses (429) the task got.
    pub rate_limited: u64,
    /// Overloaded responses (529) the task got.
    pub overloaded: u64,
    /// Requests in flight the governor allowed when the task ended.
    pub limit: u32,
    /// The lowest it allowed until then.
    pub min_limit: u32,
    /// Its ceiling (`--jobs`).
    pub max_limit: u32,
}

impl RateLimitTally {
    /// Whether the governor never held the task back and the task met no rate limit.
    pub fn is_empty(&self) -> bool {
        self.waits == 0 && self.rate_limited == 0 && self.overloaded == 0
    }
}

/// One change to a watched file that no permission rule allowed (the `runner_integrity`
/// record, and the result's `integrity` list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct IntegrityChange {
    /// The path that changed.
    pub path: PathBuf,
    /// `added`, `removed`, `modified`, `mode_changed`, `replaced`, or `unreadable` (the
    /// fingerprint could not be taken).
    pub change: String,
    /// What changed, in words (e.g. `mode 100644 -> 100755`).
    pub detail: String,
    /// The command after which it was found (`before …` when it was there before that
    /// command started: made by something still running, or between commands).
    pub after: String,
    /// Whether the change was undone.
    pub restored: bool,
    /// Why it could not be undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl IntegrityChange {
    /// The line that describes it.
    pub fn message(&self) -> String {
        let undone = match (&self.error, self.restored) {
            (_, true) => "undone".to_string(),
            (Some(e), false) => format!("NOT undone: {e}"),
            (None, false) => "NOT undone".to_string(),
        };
        format!(
            "{} {} ({}) after {}; {undone}",
            self.path.display(),
            self.change.replace('_', " "),
            self.detail,
            self.after
        )
    }
}
