//! How structured output (`output:` in the spec) changes the end of the loop: a valid
//! `StructuredOutput` call ends the run successfully once its tool_result is appended; a turn
//! that ends without one is answered with a reminder; every miss counts against
//! `output.max_retries`, past which the task fails with `error_max_structured_output_retries`
//! (`runner_outcome: agent_error`, exit 1). Without `output:` every function here is a no-op.

use crate::outcome::{Outcome, OutcomeKind};
use crate::tools::structured_output::{MAX_RETRIES_SUBTYPE, REMINDER, StructuredOutputHandle};

/// What to do when the model ends its turn without tool calls.
#[derive(Debug)]
pub enum EndTurn {
    /// Not a structured-output task (or the value is in): finish as usual.
    Proceed,
    /// Send this user message and take another turn.
    Remind(String),
    /// Retries are exhausted: the task fails.
    Fail(Outcome),
}

/// At each entry into the loop (first prompt, verify feedback, resume): a new answer is
/// needed, so an earlier value no longer counts.
pub(crate) fn on_entry(handle: Option<&StructuredOutputHandle>) {
    if let Some(h) = handle {
        h.clear_value();
    }
}

/// The model ended its turn with no tool call.
pub(crate) fn on_end_turn(handle: Option<&StructuredOutputHandle>) -> EndTurn {
    let Some(h) = handle else {
        return EndTurn::Proceed;
    };
    if h.value().is_some() {
        return EndTurn::Proceed;
    }
    h.miss();
    if h.exhausted() {
        return EndTurn::Fail(exhausted(h));
    }
    tracing::warn!(
        misses = h.misses(),
        max_retries = h.max_retries(),
        "the model ended its turn without calling StructuredOutput; reminding it"
    );
    EndTurn::Remind(REMINDER.to_string())
}

/// After a response's tool calls were answered: the outcome that ends the run, if any.
pub(crate) fn after_tools(handle: Option<&StructuredOutputHandle>) -> Option<Outcome> {
    let h = handle?;
    if h.value().is_some() {
        return Some(Outcome::new(OutcomeKind::Success, "completed"));
    }
    h.exhausted().then(|| exhausted(h))
}

fn exhausted(h: &StructuredOutputHandle) -> Outcome {
    let mut o = Outcome::new(
        OutcomeKind::AgentError,
        format!(
            "the model did not produce structured output valid against the output schema \
             within {} retries (output.max_retries)",
            h.max_retries()
        ),
    );
    o.subtype_override = Some(MAX_RETRIES_SUBTYPE.to_string());
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_handle_changes_nothing() {
        assert!(matches!(on_end_turn(None), EndTurn::Proceed));
        assert!(after_tools(None).is_none());
    }

    #[test]
    fn reminders_count_as_retries() {
        let h = StructuredOutputHandle::new(1);
        assert!(matches!(on_end_turn(Some(&h)), EndTurn::Remind(_)));
        match on_end_turn(Some(&h)) {
            EndTurn::Fail(o) => {
                assert_eq!(o.subtype(), MAX_RETRIES_SUBTYPE);
                assert_eq!(o.name(), "agent_error");
                assert_eq!(o.exit_code(), 1);
            }
            other => panic!("expected Fail, got {other:?}"),
        }
    }
}
