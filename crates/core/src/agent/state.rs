//! The loop's state: the conversation and what has been counted so far.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use crate::events::{Denial, ModelUsage, TimingTotals};
use crate::model::{Message, StopReason, Usage};

/// Everything the loop carries from one iteration (and one `run` call) to the next.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// The stored conversation (never mutated for the API; see `normalize`).
    pub messages: Vec<Message>,
    /// Turns taken (successful main-loop model responses).
    pub turns: u32,
    /// Summed usage over all responses.
    pub usage: Usage,
    /// Usage and cost per model.
    pub model_usage: BTreeMap<String, ModelUsage>,
    /// Summed cost; None once any response had no price.
    pub cost_usd: Option<f64>,
    /// Whether any response so far was unpriced (cost then stays unknown).
    pub cost_unknown: bool,
    /// Denied tool calls.
    pub denials: Vec<Denial>,
    /// uuid of the last record in the conversation chain.
    pub last_uuid: Option<String>,
    /// Time spent waiting on the model.
    pub api_time: Duration,
    /// Stop reason of the last response.
    pub last_stop_reason: Option<StopReason>,
    /// Consecutive responses that had malformed tool input.
    pub malformed_streak: u32,
    /// Consecutive max_tokens continuations.
    pub max_tokens_streak: u32,
    /// Tokens of the last response's whole context (input + cache + output): the estimate of
    /// the next request's input, for the token budget.
    pub last_context_tokens: u64,
    /// Consecutive Stop-hook blocks (the loop continued because a Stop hook said so).
    pub stop_blocks: u32,
    /// Context management state (estimate calibration, cleared tool results, compactions).
    pub context: super::context::ContextState,
    /// Signatures of the thinking blocks the model before a switch to the fallback wrote:
    /// left out of every later request.
    pub foreign_thinking: HashSet<String>,
    /// Where the turns' time went, summed.
    pub timing: TimingTotals,
}

impl State {
    /// The final answer: all text blocks of the last assistant message.
    pub fn final_text(&self) -> String {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == crate::model::Role::Assistant)
            .map(|m| m.text())
            .unwrap_or_default()
    }

    /// Add one response's usage and cost (None = unpriced model).
    pub fn record_usage(
        &mut self,
        model: &str,
        usage: &Usage,
        cost: Option<f64>,
        info: Option<(u64, u32)>,
    ) {
        self.usage.add(usage);
        let entry = self.model_usage.entry(model.to_string()).or_default();
        entry.usage.add(usage);
        if let Some((cw, mo)) = info {
            entry.context_window = Some(cw);
            entry.max_output_tokens = Some(mo);
        }
        match cost {
            Some(c) if !self.cost_unknown => {
                self.cost_usd = Some(add_cost(self.cost_usd.unwrap_or(0.0), c));
                entry.cost_usd = Some(add_cost(entry.cost_usd.unwrap_or(0.0), c));
            }
            _ => {
                self.cost_unknown = true;
                self.cost_usd = None;
                entry.cost_usd = None;
            }
        }
    }
}

/// `a + b` in USD, saturating: an overflow (or a NaN from a nonsensical price) is `f64::MAX`,
/// so a cost budget trips instead of comparing against infinity or NaN.
fn add_cost(a: f64, b: f64) -> f64 {
    let sum = a + b;
    if sum.is_nan() {
        f64::MAX
    } else {
        sum.clamp(0.0, f64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_and_cost_saturate() {
        let mut s = State::default();
        let huge = Usage {
            input_tokens: 2,
            output_tokens: u64::MAX,
            ..Usage::default()
        };
        s.record_usage("m", &huge, Some(f64::MAX), None);
        s.record_usage("m", &huge, Some(f64::MAX), None);
        assert_eq!(s.usage.total(), u64::MAX);
        assert_eq!(s.model_usage["m"].usage.output_tokens, u64::MAX);
        assert_eq!(s.cost_usd, Some(f64::MAX));
        s.record_usage("m", &Usage::default(), Some(f64::NAN), None);
        assert_eq!(s.cost_usd, Some(f64::MAX));
        assert_eq!(add_cost(0.25, 0.5), 0.75);
    }
}
