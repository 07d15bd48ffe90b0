//! `result.json`: the record each task leaves in its output directory, and the reader
//! `--skip-passed` uses to find tasks that passed before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::events::{CommandRun, NetworkTally, RunResult, TimingTotals};
use crate::git::FileChange;
use crate::outcome::OutcomeKind;
use crate::sandbox::SandboxReport;

/// File name of the per-task result record in its output directory.
pub(crate) const RESULT_FILE: &str = "result.json";

/// Version of the `result.json` layout.
pub(crate) const RESULT_FILE_VERSION: u32 = 1;

/// What each task leaves in its output directory as `result.json`, and what `--skip-passed`
/// reads back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct ResultFile {
    /// Layout version ([`RESULT_FILE_VERSION`]).
    pub version: u32,
    /// The version of runner's event schemas this file follows (semver; `schema/` in the
    /// repository and each release publishes them).
    #[serde(default)]
    pub schema_version: String,
    /// Task name.
    pub task: String,
    /// The `runner_outcome`.
    pub outcome: String,
    /// The exit code the outcome maps to.
    pub exit_code: i32,
    /// SHA-256 of the resolved spec (after command-line overrides), as in the transcript.
    pub spec_digest: String,
    /// HEAD commit of the workdir's repository when the task started; null outside git.
    pub base_commit: Option<String>,
    /// Spec file as given.
    pub spec_path: PathBuf,
    /// Session id.
    pub session_id: String,
    /// Model id.
    pub model: String,
    /// Turns taken.
    pub num_turns: u32,
    /// Total cost in USD, null when unknown.
    pub total_cost_usd: Option<f64>,
    /// Input tokens (uncached).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache write tokens.
    pub cache_creation_input_tokens: u64,
    /// Cache read tokens.
    pub cache_read_input_tokens: u64,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Local start time.
    pub started_at: String,
    /// Transcript file.
    pub transcript_path: Option<PathBuf>,
    /// Verify checks: name and whether each passed.
    pub checks: Vec<CheckSummary>,
    /// The outcome's message.
    pub message: String,
    /// How the task's commands were confined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxReport>,
    /// Connection attempts through the sandbox's egress proxy.
    #[serde(default)]
    pub network: NetworkTally,
    /// The files the task changed, with lines added and removed (a task in git only).
    #[serde(default)]
    pub files: Vec<FileChange>,
    /// The commands it ran, with exit codes and durations.
    #[serde(default)]
    pub commands: Vec<CommandRun>,
    /// Changes to the files that steer git and CI that runner undid (the task ended
    /// `denied`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrity: Vec<crate::integrity::IntegrityChange>,
    /// The tool calls denied: tool and reason.
    #[serde(default)]
    pub denials: Vec<DenialSummary>,
    /// Where the turns' time went.
    #[serde(default)]
    pub timing: TimingTotals,
    /// The run continued an interrupted one (`runner resume`); `files` and the patch are still
    /// the task's whole change since `base_commit`, before and after the interruption.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resumed: bool,
    /// For a resumed run: the session id of the run it continued (a resume keeps it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_session_id: Option<String>,
}

/// One denied call in a [`ResultFile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct DenialSummary {
    /// The tool.
    pub tool: String,
    /// Why it was denied.
    pub reason: String,
}

/// One check in a [`ResultFile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct CheckSummary {
    /// Check name.
    pub name: String,
    /// Whether it exited 0.
    pub passed: bool,
}

impl ResultFile {
    /// The record for a finished task; `resumed`: the session id of the run it continued.
    pub(crate) fn new(
        r: &RunResult,
        spec_digest: &str,
        base_commit: Option<&str>,
        resumed: Option<&str>,
    ) -> ResultFile {
        ResultFile {
            version: RESULT_FILE_VERSION,
            schema_version: crate::contract::SCHEMA_VERSION.to_string(),
            task: r.task_name.clone(),
            outcome: r.outcome.name().to_string(),
            exit_code: r.outcome.exit_code(),
            spec_digest: spec_digest.to_string(),
            base_commit: base_commit.map(String::from),
            spec_path: r.spec_path.clone(),
            session_id: r.session_id.clone(),
            model: r.model.clone(),
            num_turns: r.num_turns,
            total_cost_usd: r.total_cost_usd,
            input_tokens: r.usage.input_tokens,
            output_tokens: r.usage.output_tokens,
            cache_creation_input_tokens: r.usage.cache_creation_input_tokens,
            cache_read_input_tokens: r.usage.cache_read_input_tokens,
            duration_ms: r.duration_ms,
            started_at: r.started_at.clone(),
            transcript_path: r.transcript_path.clone(),
            checks: r
                .checks
                .iter()
                .map(|c| CheckSummary {
                    name: c.name.clone(),
                    passed: c.passed,
                })
                .collect(),
            message: r.outcome.message.clone(),
            sandbox: r.sandbox.clone(),
            network: r.network,
            files: r.git.as_ref().map(|g| g.files.clone()).unwrap_or_default(),
            commands: r.commands.clone(),
            integrity: r.integrity.clone(),
            denials: r
                .permission_denials
                .iter()
                .map(|d| DenialSummary {
                    tool: d.tool_name.clone(),
                    reason: d.reason.clone(),
                })
                .collect(),
            timing: r.timing,
            resumed: resumed.is_some(),
            original_session_id: resumed.map(String::from),
        }
    }

    /// Whether this records a passed task.
    pub(crate) fn passed(&self) -> bool {
        self.outcome == OutcomeKind::Success.name()
    }
}

/// Write `result.json` for a finished task into its output directory `dir` (temp file +
/// rename, so a reader never sees half a file). `r` must already be redacted; `resumed`: the
/// session id of the run a resumed run continued.
pub fn write(
    dir: &Path,
    r: &RunResult,
    spec_digest: &str,
    base_commit: Option<&str>,
    resumed: Option<&str>,
) -> std::io::Result<PathBuf> {
    let record = ResultFile::new(r, spec_digest, base_commit, resumed);
    let mut text = serde_json::to_string_pretty(&record).map_err(std::io::Error::other)?;
    text.push('\n');
    let path = dir.join(RESULT_FILE);
    crate::atomic_file::write(&path, text.as_bytes())?;
    Ok(path)
}

/// Passed results found under `dir` (its `result.json` files up to three levels down), by task
/// name, keyed further by `(spec_digest, base_commit)`. Unreadable or foreign files are skipped
/// with a debug log.
pub fn passed_results(dir: &Path) -> HashMap<(String, String, Option<String>), PathBuf> {
    let mut found = HashMap::new();
    collect_results(dir, 3, &mut found);
    found
}

fn collect_results(
    dir: &Path,
    depth: u32,
    found: &mut HashMap<(String, String, Option<String>), PathBuf>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() && depth > 0 {
            collect_results(&path, depth - 1, found);
        } else if ft.is_file() && e.file_name() == RESULT_FILE {
            match std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<ResultFile>(&t).ok())
            {
                Some(r) if r.passed() => {
                    found.insert((r.task, r.spec_digest, r.base_commit), path);
                }
                Some(_) => {}
                None => {
                    tracing::debug!(file = %path.display(), "not a runner result.json; ignored")
                }
            }
        }
    }
}
