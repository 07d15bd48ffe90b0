//! The one value that decides how a task ended: the result frame, the exit code, the JUnit
//! element and the GitHub Actions conclusion are all derived from it.

use serde::{Deserialize, Serialize};

/// How a task ended. The result frame, exit code, JUnit element and Actions conclusion all
/// derive from this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// Model finished and every check passed.
    Success,
    /// A verify check failed after the last attempt.
    ChecksFailed,
    /// Refusal, unrecoverable max_tokens, repeated malformed tool use, hook stop.
    AgentError,
    /// Turn limit reached.
    MaxTurns,
    /// Token budget exhausted.
    BudgetTokens,
    /// Cost budget exhausted.
    BudgetCost,
    /// Wall-clock limit reached.
    Timeout,
    /// Context window exhausted.
    ContextExhausted,
    /// Tool calls were denied and the task set `fail_on_denial`.
    Denied,
    /// Non-retryable API error, or retries exhausted.
    ApiError,
    /// SIGINT or SIGTERM.
    Interrupted,
    /// Not run: `--fail-fast`, `--max-total-cost-usd` or `--skip-passed`.
    Skipped,
    /// Not run: the batch was interrupted (SIGINT/SIGTERM) before the task started. Like
    /// `Skipped` in every report; the run's exit code is the interruption's.
    NotStarted,
}

/// JUnit element an outcome maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JunitKind {
    /// No child element.
    Pass,
    /// `<failure>`.
    Failure,
    /// `<error>`.
    Error,
    /// `<skipped>`.
    Skipped,
}

/// A task's outcome with its detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Which outcome.
    pub kind: OutcomeKind,
    /// Human-readable reason (shown in errors, JUnit message, text output).
    pub message: String,
    /// For `Interrupted` and `NotStarted`: the signal number (2 or 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// For `Interrupted`: whether tools were running (aborted_tools) rather than streaming.
    #[serde(default)]
    pub during_tools: bool,
    /// For `AgentError`: the terminal reason when it is not `model_error` (e.g. `hook_stopped`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_override: Option<String>,
    /// For `AgentError`: the result `subtype` when it is not `error_during_execution` (e.g.
    /// `error_max_structured_output_retries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtype_override: Option<String>,
}

impl Outcome {
    /// An outcome of `kind` with a message.
    pub fn new(kind: OutcomeKind, message: impl Into<String>) -> Self {
        Outcome {
            kind,
            message: message.into(),
            signal: None,
            during_tools: false,
            terminal_override: None,
            subtype_override: None,
        }
    }

    /// The outcome of a task a signal (2 or 15) kept from starting.
    pub fn not_started(signal: i32) -> Self {
        let name = if signal == 15 { "SIGTERM" } else { "SIGINT" };
        let mut o = Outcome::new(
            OutcomeKind::NotStarted,
            format!("not started: the batch was interrupted by {name} before this task started"),
        );
        o.signal = Some(signal);
        o
    }

    /// `runner_outcome` string.
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// Whether this is a failure of any kind (`is_error` in the result frame).
    pub fn is_error(&self) -> bool {
        self.kind != OutcomeKind::Success
    }

    /// The SDK's `terminal_reason`.
    pub fn terminal_reason(&self) -> &str {
        use OutcomeKind::*;
        match self.kind {
            Success | ChecksFailed | Denied => "completed",
            AgentError => self.terminal_override.as_deref().unwrap_or("model_error"),
            MaxTurns => "max_turns",
            BudgetTokens | BudgetCost | Timeout => "budget_exhausted",
            ContextExhausted => "prompt_too_long",
            ApiError => "api_error",
            Interrupted => {
                if self.during_tools {
                    "aborted_tools"
                } else {
                    "aborted_streaming"
                }
            }
            Skipped | NotStarted => "skipped",
        }
    }

    /// The SDK's result `subtype`.
    pub fn subtype(&self) -> &str {
        use OutcomeKind::*;
        if let (AgentError, Some(s)) = (self.kind, &self.subtype_override) {
            return s;
        }
        match self.kind {
            Success => "success",
            MaxTurns => "error_max_turns",
            BudgetCost => "error_max_budget_usd",
            _ => "error_during_execution",
        }
    }

    /// Process exit code for this outcome alone.
    pub fn exit_code(&self) -> i32 {
        use OutcomeKind::*;
        match self.kind {
            Success | Skipped | NotStarted => 0,
            ChecksFailed | AgentError => 1,
            MaxTurns | BudgetTokens | BudgetCost | Timeout | ContextExhausted => 3,
            Denied => 5,
            ApiError => 4,
            Interrupted => 128 + self.signal.unwrap_or(2),
        }
    }

    /// JUnit element.
    pub fn junit(&self) -> JunitKind {
        use OutcomeKind::*;
        match self.kind {
            Success => JunitKind::Pass,
            ApiError | Interrupted => JunitKind::Error,
            Skipped | NotStarted => JunitKind::Skipped,
            _ => JunitKind::Failure,
        }
    }
}

impl OutcomeKind {
    /// `runner_outcome` string.
    pub fn name(&self) -> &'static str {
        use OutcomeKind::*;
        match self {
            Success => "success",
            ChecksFailed => "checks_failed",
            AgentError => "agent_error",
            MaxTurns => "max_turns",
            BudgetTokens => "budget_tokens",
            BudgetCost => "budget_cost",
            Timeout => "timeout",
            ContextExhausted => "context_exhausted",
            Denied => "denied",
            ApiError => "api_error",
            Interrupted => "interrupted",
            Skipped => "skipped",
            NotStarted => "not_started",
        }
    }

    /// Whether the task never ran (`skipped`, `not_started`): nothing of it passed or failed.
    pub fn not_run(&self) -> bool {
        matches!(self, OutcomeKind::Skipped | OutcomeKind::NotStarted)
    }
}

/// Severity rank for combining several tasks' exit codes: 130/143 > 4 > 3 > 5 > 1 > 0.
fn severity(code: i32) -> u8 {
    match code {
        130 | 143 => 6,
        c if c > 128 => 6,
        4 => 5,
        3 => 4,
        5 => 3,
        2 => 2,
        1 => 1,
        _ => 0,
    }
}

/// The exit code of a run of several tasks: the most severe present.
pub fn combined_exit_code(codes: impl IntoIterator<Item = i32>) -> i32 {
    codes
        .into_iter()
        .max_by_key(|c| (severity(*c), *c))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_design() {
        let o = |k| Outcome::new(k, "");
        assert_eq!(o(OutcomeKind::Success).exit_code(), 0);
        assert_eq!(o(OutcomeKind::MaxTurns).subtype(), "error_max_turns");
        assert_eq!(o(OutcomeKind::BudgetCost).subtype(), "error_max_budget_usd");
        assert_eq!(o(OutcomeKind::ApiError).exit_code(), 4);
        assert_eq!(o(OutcomeKind::ApiError).junit(), JunitKind::Error);
        assert_eq!(o(OutcomeKind::Denied).exit_code(), 5);
        let mut i = o(OutcomeKind::Interrupted);
        i.signal = Some(15);
        assert_eq!(i.exit_code(), 143);
        // A task the interruption kept from starting adds nothing to the interruption's code.
        let mut n = o(OutcomeKind::NotStarted);
        n.signal = Some(15);
        assert_eq!(n.exit_code(), 0);
        assert_eq!(n.junit(), JunitKind::Skipped);
        assert_eq!(n.terminal_reason(), "skipped");
        assert_eq!(n.name(), "not_started");
        assert_eq!(combined_exit_code([0, n.exit_code(), i.exit_code()]), 143);
    }

    #[test]
    fn combined_picks_most_severe() {
        assert_eq!(combined_exit_code([0, 1, 5]), 5);
        assert_eq!(combined_exit_code([5, 3]), 3);
        assert_eq!(combined_exit_code([3, 4, 1]), 4);
        assert_eq!(combined_exit_code([4, 130]), 130);
        assert_eq!(combined_exit_code([]), 0);
    }
}
