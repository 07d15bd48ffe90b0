//! One task run end to end: build its session, run the loop, run the verify checks, finish.
//! Every failure becomes an outcome in the task's [`RunResult`]; nothing here panics on input.

use crate::agent::Stopper;
use crate::events::RunResult;
use crate::prepare::PreparedTask;
use crate::session::{RunOptions, Session};

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
