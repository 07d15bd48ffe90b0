//! One task run end to end: build its session, run the loop, run the verify checks, finish.
//! Every failure becomes an outcome in the task's [`RunResult`]; nothing here panics on input,
//! and a panic anywhere in runner's own code becomes an `agent_error` naming it — never an
//! interrupt, and with every report still written.

use std::any::Any;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;

use crate::agent::{State, Stopper};
use crate::events::RunResult;
use crate::outcome::{Outcome, OutcomeKind};
use crate::prepare::PreparedTask;
use crate::session::{RunOptions, Session};

/// Run one prepared task to its outcome: build → run → verify → finish. A session that cannot
/// be built is the one failure exit: its result says why.
pub async fn run_task(task: PreparedTask, opts: &RunOptions, stopper: Stopper) -> RunResult {
    let loaded = task.loaded.clone();
    let started = std::time::Instant::now();
    let whole = AssertUnwindSafe(async {
        let mut session = match Session::build(task, opts, stopper).await {
            Ok(s) => s,
            Err(failed) => return *failed,
        };
        // A panic in the loop or the checks still ends through `finish`: the transcript,
        // result.json and the result frame are written, the worktree cleaned up.
        let ran = AssertUnwindSafe(async {
            let (outcome, state) = session.run().await;
            session.verify(outcome, state).await
        })
        .catch_unwind()
        .await;
        let (outcome, state) = match ran {
            Ok(done) => done,
            Err(payload) => (
                panicked(&loaded.spec.name, payload.as_ref()),
                State::default(),
            ),
        };
        session.finish(outcome, state).await
    })
    .catch_unwind()
    .await;
    match whole {
        Ok(result) => result,
        // A panic while the session was built or finished: what can still be reported is.
        Err(payload) => {
            let outcome = panicked(&loaded.spec.name, payload.as_ref());
            let mut result = RunResult::not_run(&loaded, outcome);
            result.duration_ms = started.elapsed().as_millis() as u64;
            let names = crate::prepare::secret_names(&loaded);
            let result = result.redacted(&crate::redact::Redactor::from_env(&names));
            if let Some(out) = &opts.stream_out {
                let frame = crate::report::json::result_value(&result);
                if let Err(e) = crate::report::write_json_line(out, &frame) {
                    tracing::error!("writing to stdout failed: {e}");
                }
            }
            result
        }
    }
}

/// The `agent_error` outcome of a panic in task `name`.
fn panicked(name: &str, payload: &(dyn Any + Send)) -> Outcome {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    let message = format!("runner failed internally (this is a bug in runner): panic: {what}");
    tracing::error!(task = %name, "{message}");
    Outcome::new(OutcomeKind::AgentError, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_an_agent_error_naming_it() {
        let caught = std::panic::catch_unwind(|| {
            panic!("index out of bounds: the len is 0 but the index is 3")
        });
        let o = panicked("boom", caught.unwrap_err().as_ref());
        assert_eq!(o.kind, OutcomeKind::AgentError);
        assert_eq!(o.exit_code(), 1);
        assert!(
            o.message.contains("panic: index out of bounds") && o.message.contains("bug in runner"),
            "{}",
            o.message
        );
        let caught = std::panic::catch_unwind(|| panic!("{}", String::from("formatted")));
        assert!(
            panicked("t", caught.unwrap_err().as_ref())
                .message
                .contains("panic: formatted")
        );
    }
}
