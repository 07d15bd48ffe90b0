//! Many tasks in one run: `--shard i/n` selection, `--skip-passed DIR`, the `--fail-fast` and
//! `--max-total-cost-usd` gate that decides whether the next task starts, and the
//! `result.json` file each task leaves in its output directory.
//!
//! Decisions (README "Nightly batch"):
//! - A shard is chosen by a hash of the task name, so a task stays in its shard when spec files
//!   are reordered or other tasks are added.
//! - The batch cost cap is checked before each task starts, against the summed cost of the tasks
//!   that have finished. Tasks already running finish under their own limits (`--max-cost-usd`
//!   bounds each), so the batch can overshoot the cap by at most what the running tasks spend.

pub mod group;
pub mod progress;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::agent::{Outcome, OutcomeKind};
use crate::cli::ExecArgs;
use crate::events::RunResult;
use crate::spec::LoadedSpec;
use crate::task::PreparedTask;

/// File name of the per-task result record in its output directory.
pub const RESULT_FILE: &str = "result.json";

/// Version of the `result.json` layout.
pub const RESULT_FILE_VERSION: u32 = 1;

/// `--shard i/n`: run the i-th (1-based) of n shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard index.
    pub index: u32,
    /// Number of shards.
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard `{s}`; expected I/N with 1 <= I <= N, e.g. 2/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The 1-based shard a task named `name` belongs to among `count` shards: the first eight
    /// bytes of SHA-256 of the name, modulo `count`. Depends on nothing but the name.
    pub fn of(name: &str, count: u32) -> u32 {
        let digest = Sha256::digest(name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        (u64::from_be_bytes(first) % u64::from(count.max(1))) as u32 + 1
    }

    /// Whether the task named `name` is in this shard.
    pub fn contains(&self, name: &str) -> bool {
        Shard::of(name, self.count) == self.index
    }
}

/// `name` as one file name component: characters other than letters, digits, `-`, `_`, `.`,
/// `=`, `,`, `[` and `]` become `_` (a `matrix:` parameter may hold `/`).
pub fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=' | ',' | '[' | ']') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.chars().all(|c| c == '.') {
        s.replace('.', "_")
    } else {
        s
    }
}

/// What each task leaves in its output directory as `result.json`, and what `--skip-passed`
/// reads back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    /// Layout version ([`RESULT_FILE_VERSION`]).
    pub version: u32,
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
}

/// One check in a [`ResultFile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckSummary {
    /// Check name.
    pub name: String,
    /// Whether it exited 0.
    pub passed: bool,
}

impl ResultFile {
    /// The record for a finished task.
    pub fn new(r: &RunResult, spec_digest: &str, base_commit: Option<&str>) -> ResultFile {
        ResultFile {
            version: RESULT_FILE_VERSION,
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
        }
    }

    /// Whether this records a passed task.
    pub fn passed(&self) -> bool {
        self.outcome == OutcomeKind::Success.name()
    }
}

/// Write `result.json` for a finished task into its output directory `dir` (temp file +
/// rename, so a reader never sees half a file). `r` must already be redacted.
pub fn write_result_file(
    dir: &Path,
    r: &RunResult,
    spec_digest: &str,
    base_commit: Option<&str>,
) -> std::io::Result<PathBuf> {
    let record = ResultFile::new(r, spec_digest, base_commit);
    let mut text = serde_json::to_string_pretty(&record).map_err(std::io::Error::other)?;
    text.push('\n');
    let path = dir.join(RESULT_FILE);
    let tmp = dir.join(format!(".{RESULT_FILE}.tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &path)?;
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

/// HEAD commit of the repository holding `workdir`, or None outside git (or on an unborn
/// branch).
pub fn base_commit(workdir: &Path) -> Option<String> {
    crate::task::git_info(workdir).2
}

/// A `skipped` result for a task that was not started.
pub fn skipped_result(loaded: &LoadedSpec, why: impl Into<String>) -> RunResult {
    crate::task::not_run_result(loaded, Outcome::new(OutcomeKind::Skipped, why))
}

/// Apply the batch options to the prepared tasks, in order: `--shard` drops the tasks of other
/// shards; `--max-total-cost-usd` needs every task's model to have a price (an unknown cost
/// cannot count towards the cap); `--skip-passed` marks tasks that passed before with the same
/// spec digest and base commit (the second element: why the task is skipped).
pub fn plan(
    tasks: Vec<PreparedTask>,
    args: &ExecArgs,
) -> Result<Vec<(PreparedTask, Option<String>)>, Vec<String>> {
    let total = tasks.len();
    let tasks: Vec<PreparedTask> = match args.shard {
        Some(shard) => {
            let kept: Vec<PreparedTask> = tasks
                .into_iter()
                .filter(|t| shard.contains(&t.loaded.spec.name))
                .collect();
            tracing::info!(
                "shard {}/{}: {} of {total} task(s)",
                shard.index,
                shard.count,
                kept.len()
            );
            kept
        }
        None => tasks,
    };
    if let Some(cap) = args.max_total_cost_usd {
        let errors: Vec<String> = tasks
            .iter()
            .filter(|t| t.model_info.and_then(|m| m.prices).is_none())
            .map(|t| {
                format!(
                    "{}:{}:1: --max-total-cost-usd {cap} needs a priced model, but task `{}` uses                      `{}`, which has no price in the model table; add it under `models:` in the spec",
                    t.loaded.path.display(),
                    t.loaded.name_line,
                    t.loaded.spec.name,
                    t.loaded.spec.model
                )
            })
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
    }
    let passed = args
        .skip_passed
        .as_deref()
        .map(passed_results)
        .unwrap_or_default();
    Ok(tasks
        .into_iter()
        .map(|t| {
            let why = args.skip_passed.as_ref().and_then(|_| {
                let key = (
                    t.loaded.spec.name.clone(),
                    crate::task::spec_digest(&t.loaded.spec),
                    base_commit(&t.loaded.workdir),
                );
                passed.get(&key).map(|file| {
                    format!(
                        "passed before with the same spec digest and base commit ({})",
                        file.display()
                    )
                })
            });
            (t, why)
        })
        .collect())
}

/// Run one task with the batch's log grouping (GitHub Actions) and progress accounting.
pub async fn run_one(
    task: PreparedTask,
    opts: &crate::task::RunOptions,
    stopper: crate::agent::Stopper,
    groups: Option<&group::Groups>,
) -> RunResult {
    let name = task.loaded.spec.name.clone();
    progress::task_started();
    let loaded = task.loaded.clone();
    let run = catch_panic(&loaded, opts, crate::task::run_task(task, opts, stopper));
    let result = match groups {
        Some(g) if g.buffered => {
            let buf = std::sync::Arc::new(Mutex::new(Vec::new()));
            let r = group::buffered(buf.clone(), run).await;
            let log = std::mem::take(&mut *buf.lock().unwrap_or_else(|e| e.into_inner()));
            g.write_buffered(&name, r.outcome.name(), &log);
            r
        }
        Some(g) => {
            g.open(&name);
            let r = run.await;
            g.close();
            r
        }
        None => run.await,
    };
    progress::task_finished(&result, true);
    result
}

/// Await a task's run, turning a panic anywhere in it into an `agent_error` result that names
/// the panic. A panic is a bug in runner, never an interrupt: without this the task's result
/// would be missing and the run would report it as cut short by a signal. The result still
/// reaches every report built from results (stdout, JUnit, step summary, output file); with
/// stream-json its `result` frame is written here, since the task's own sink is gone.
pub async fn catch_panic(
    loaded: &LoadedSpec,
    opts: &crate::task::RunOptions,
    run: impl std::future::Future<Output = RunResult>,
) -> RunResult {
    use futures_util::FutureExt;

    let started = std::time::Instant::now();
    let payload = match std::panic::AssertUnwindSafe(run).catch_unwind().await {
        Ok(result) => return result,
        Err(payload) => payload,
    };
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    let message = format!("runner failed internally (this is a bug in runner): panic: {what}");
    tracing::error!(task = %loaded.spec.name, "{message}");
    let mut result =
        crate::task::not_run_result(loaded, Outcome::new(OutcomeKind::AgentError, message));
    result.duration_ms = started.elapsed().as_millis() as u64;
    let redactor = crate::redact::Redactor::from_env(&crate::task::secret_names(loaded));
    let result = redactor.redact_result(&result);
    if let Some(out) = &opts.stream_out {
        let frame = crate::report::json::result_value(&result);
        if let Err(e) = crate::report::write_json_line(out, &frame) {
            tracing::error!("writing to stdout failed: {e}");
        }
    }
    result
}

/// Decides whether the next task starts: `--fail-fast` after a failure, `--max-total-cost-usd`
/// once the finished tasks' costs reach the cap. Shared by every task of the run.
#[derive(Debug)]
pub struct BatchGate {
    fail_fast: bool,
    max_total_cost_usd: Option<f64>,
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
struct GateState {
    first_failure: Option<String>,
    spent_usd: f64,
}

impl BatchGate {
    /// A gate with the run's settings.
    pub fn new(fail_fast: bool, max_total_cost_usd: Option<f64>) -> BatchGate {
        BatchGate {
            fail_fast,
            max_total_cost_usd,
            state: Mutex::new(GateState::default()),
        }
    }

    /// Why the next task must not start, if it must not.
    pub fn skip_reason(&self) -> Option<String> {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if self.fail_fast
            && let Some(name) = &s.first_failure
        {
            return Some(format!(
                "not started: --fail-fast after task `{name}` failed"
            ));
        }
        if let Some(cap) = self.max_total_cost_usd
            && s.spent_usd >= cap
        {
            return Some(format!(
                "not started: the batch spent ${:.4}, reaching --max-total-cost-usd {cap}",
                s.spent_usd
            ));
        }
        None
    }

    /// Account for a finished task.
    pub fn record(&self, r: &RunResult) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.spent_usd += r.total_cost_usd.unwrap_or(0.0);
        let failed = !matches!(r.outcome.kind, OutcomeKind::Success | OutcomeKind::Skipped);
        if failed && s.first_failure.is_none() {
            s.first_failure = Some(r.task_name.clone());
        }
    }

    /// Summed cost of the finished tasks.
    pub fn spent_usd(&self) -> f64 {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spent_usd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator for the property tests (no extra dependency).
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
    }

    fn names(rng: &mut XorShift, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("task-{}-{i}[crate=c{}]", rng.next() % 1000, rng.next() % 50))
            .collect()
    }

    /// A writer whose bytes the test can read back.
    #[derive(Clone, Default)]
    struct Captured(std::sync::Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn explode() -> RunResult {
        panic!("index out of bounds: the len is 0 but the index is 3")
    }

    #[tokio::test]
    async fn a_panicking_task_is_an_agent_error_not_an_interrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.yaml");
        std::fs::write(&path, "name: boom\nprompt: hi\n").unwrap();
        let loaded = crate::spec::load(&path).unwrap();
        let out = Captured::default();
        let opts = crate::task::RunOptions {
            transcript_dir: dir.path().join("out"),
            record: None,
            stream_out: Some(crate::report::shared_out(out.clone())),
            gate: std::sync::Arc::new(crate::retry::RateGate::new()),
        };
        let r = catch_panic(&loaded, &opts, async { explode() }).await;
        assert_eq!(r.outcome.kind, OutcomeKind::AgentError);
        assert_eq!(r.outcome.exit_code(), 1);
        assert!(
            r.outcome.message.contains("panic: index out of bounds")
                && r.outcome.message.contains("bug in runner"),
            "{}",
            r.outcome.message
        );
        assert_eq!(r.task_name, "boom");
        // The stream-json result frame is written in place of the task's own.
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let frame: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(frame["type"], "result");
        assert_eq!(frame["runner_outcome"], "agent_error");
        // A task that does not panic passes through untouched.
        let fine = crate::task::not_run_result(&loaded, Outcome::new(OutcomeKind::Success, "ok"));
        let r = catch_panic(&loaded, &opts, async { fine.clone() }).await;
        assert_eq!(r.outcome.kind, OutcomeKind::Success);
    }

    #[test]
    fn parses_shards() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x/2", "3", "", "1/2/3", "-1/2"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("expected I/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn property_every_task_in_exactly_one_shard() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            let count = (rng.next() % 9 + 1) as u32;
            let n = (rng.next() % 40) as usize;
            let tasks = names(&mut rng, n);
            for t in &tasks {
                let holders: Vec<u32> = (1..=count)
                    .filter(|i| Shard { index: *i, count }.contains(t))
                    .collect();
                assert_eq!(holders.len(), 1, "{t} in shards {holders:?} of {count}");
            }
        }
    }

    #[test]
    fn property_stable_under_reordering_and_additions() {
        let mut rng = XorShift(42);
        for _ in 0..200 {
            let count = (rng.next() % 8 + 1) as u32;
            let n = (rng.next() % 30 + 1) as usize;
            let mut tasks = names(&mut rng, n);
            let before: HashMap<String, u32> = tasks
                .iter()
                .map(|t| (t.clone(), Shard::of(t, count)))
                .collect();
            // Reverse, rotate and add tasks: nobody moves.
            tasks.reverse();
            let k = (rng.next() as usize) % tasks.len();
            tasks.rotate_left(k);
            tasks.extend(names(&mut rng, 5));
            for t in &tasks {
                if let Some(s) = before.get(t) {
                    assert_eq!(Shard::of(t, count), *s, "{t} moved");
                }
            }
        }
    }

    #[test]
    fn shards_are_not_degenerate() {
        let tasks: Vec<String> = (0..400).map(|i| format!("t{i}")).collect();
        for s in 1..=4 {
            let n = tasks.iter().filter(|t| Shard::of(t, 4) == s).count();
            assert!((50..=150).contains(&n), "shard {s} has {n} of 400");
        }
    }
}
