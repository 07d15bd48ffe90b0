//! The gate that decides whether the next task starts: `--fail-fast` after a failure,
//! `--max-total-cost-usd` once the finished tasks' costs reach the cap.
//!
//! The cap is checked before each task starts, against the summed cost of the tasks that have
//! finished. Tasks already running finish under their own limits (`--max-cost-usd` bounds
//! each), so the batch can overshoot the cap by at most what the running tasks spend.

use std::sync::Mutex;

use crate::events::RunResult;
use crate::outcome::OutcomeKind;

/// Decides whether the next task starts: `--fail-fast` after a failure, `--max-total-cost-usd`
/// once the finished tasks' costs reach the cap. Shared by every task of the run.
#[derive(Debug)]
pub(crate) struct BatchGate {
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
    pub(crate) fn new(fail_fast: bool, max_total_cost_usd: Option<f64>) -> BatchGate {
        BatchGate {
            fail_fast,
            max_total_cost_usd,
            state: Mutex::new(GateState::default()),
        }
    }

    /// Why the next task must not start, if it must not.
    pub(crate) fn skip_reason(&self) -> Option<String> {
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
                "not started: the batch spent {}, reaching --max-total-cost-usd {cap}",
                crate::report::money::usd(s.spent_usd)
            ));
        }
        None
    }

    /// Account for a finished task.
    pub(crate) fn record(&self, r: &RunResult) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.spent_usd += r.total_cost_usd.unwrap_or(0.0);
        let failed = r.outcome.kind != OutcomeKind::Success && !r.outcome.kind.not_run();
        if failed && s.first_failure.is_none() {
            s.first_failure = Some(r.task_name.clone());
        }
    }
}
