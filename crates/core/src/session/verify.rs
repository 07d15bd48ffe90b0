//! The verify checks after the loop: run them, feed failures back to the agent for another
//! attempt while `attempts` allows, and turn the last verdict into the outcome.

use super::Session;
use crate::agent::{self, Input, State};
use crate::events::{CheckResult, RunEvent};
use crate::outcome::{Outcome, OutcomeKind};
use crate::verify;

impl Session {
    /// Run the spec's verify checks after the loop ended with `outcome`. A success is checked
    /// (failed checks go back to the agent while attempts remain); a run a limit cut short is
    /// checked for the report only; any other outcome is left as it is.
    pub(crate) async fn verify(
        &mut self,
        mut outcome: Outcome,
        mut state: State,
    ) -> (Outcome, State) {
        let spec = &self.loaded.spec;
        let mut attempt = 1;
        while !spec.verify.is_empty() {
            let report_only = match outcome.kind {
                OutcomeKind::Success => false,
                // The work was left unfinished by a limit: show what state it is in.
                OutcomeKind::MaxTurns
                | OutcomeKind::BudgetTokens
                | OutcomeKind::BudgetCost
                | OutcomeKind::ContextExhausted => true,
                _ => break,
            };
            let ctx = self.agent.tools();
            let checks = verify::run_checks(
                &spec.verify,
                &self.loaded.workdir,
                &ctx.env,
                &spec.params,
                &ctx.cancel,
                &ctx.spill_dir,
                attempt,
                report_only,
                ctx.integrity.as_ref(),
            )
            .await;
            self.agent.emit(RunEvent::Checks {
                attempt,
                results: checks.clone(),
            });
            let failed: Vec<&CheckResult> = checks.iter().filter(|c| !c.passed).collect();
            let stopped = self.agent.stopper().cause().is_some();
            if !report_only && !failed.is_empty() && !stopped && attempt < spec.attempts {
                let feedback = self
                    .redactor
                    .redact(&verify::feedback(&failed, attempt, spec.attempts))
                    .into_owned();
                tracing::warn!(task = %spec.name, attempt, "verify checks failed; feeding their output back to the agent");
                attempt += 1;
                self.result.checks = checks;
                (outcome, state) = agent::run(&mut self.agent, state, Input::User(feedback)).await;
                continue;
            }
            if stopped && outcome.kind == OutcomeKind::Success {
                // The checks are commands: the run was stopped while they ran.
                outcome = self.agent.interrupted(true);
            } else if !report_only && !failed.is_empty() {
                outcome = Outcome::new(
                    OutcomeKind::ChecksFailed,
                    format!(
                        "verify check{} failed after {attempt} attempt{}: {}",
                        if failed.len() == 1 { "" } else { "s" },
                        if attempt == 1 { "" } else { "s" },
                        verify::summary(&failed)
                    ),
                );
            }
            self.result.checks = checks;
            break;
        }
        (outcome, state)
    }
}
