//! One task run end to end: build its session, run the loop, run the verify checks, finish.
//! Every failure becomes an outcome in the task's [`RunResult`]; nothing here panics on input.

use crate::agent::Stopper;
use crate::events::{RunResult, new_uuid};
use crate::outcome::Outcome;
use crate::prepare::PreparedTask;
use crate::session::{RunOptions, Session};
use crate::spec::LoadedSpec;

/// Run one prepared task to its outcome: build → run → verify → finish. A session that cannot
/// be built is the one failure exit: its result says why.
pub async fn run_task(task: PreparedTask, opts: &RunOptions, stopper: Stopper) -> RunResult {
    let mut session = match Session::build(task, opts, stopper).await {
        Ok(s) => s,
        Err(failed) => return *failed,
    };
    let (outcome, state) = session.run().await;
    let (outcome, state) = session.verify(outcome, state).await;
    session.finish(outcome, state).await
}

/// A result for a task that never ran (e.g. the run was interrupted before it started).
pub fn not_run_result(loaded: &LoadedSpec, outcome: Outcome) -> RunResult {
    RunResult {
        session_id: new_uuid(),
        task_name: loaded.spec.name.clone(),
        spec_path: loaded.path.clone(),
        spec_line: loaded.name_line,
        model: loaded.spec.model.clone(),
        errors: if outcome.is_error() {
            vec![outcome.message.clone()]
        } else {
            vec![]
        },
        outcome,
        num_turns: 0,
        duration_ms: 0,
        duration_api_ms: 0,
        usage: Default::default(),
        model_usage: Default::default(),
        total_cost_usd: None,
        permission_denials: vec![],
        stop_reason: None,
        result_text: String::new(),
        transcript_path: None,
        started_at: chrono::Local::now().format("%Y-%m-%dT%H:%M:%S").to_string(),
        uuid: new_uuid(),
        checks: vec![],
        structured_output: None,
        git: None,
    }
}
