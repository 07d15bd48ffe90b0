//! The GitHub step outputs (`$GITHUB_OUTPUT`) of a run, as one typed value: the Action's
//! `outputs:` forward them, and `schema/step-outputs.schema.json` is generated from it.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use crate::events::RunResult;

/// Whether every task succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Conclusion {
    /// Every task succeeded.
    Success,
    /// At least one did not.
    Failure,
}

/// The step outputs, each a string as `$GITHUB_OUTPUT` holds it, in the order written.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StepOutputs {
    /// `success` when every task succeeded, otherwise `failure`.
    pub conclusion: Conclusion,
    /// Path of the JUnit report; empty when none was written.
    pub junit: String,
    /// Directory holding the transcripts.
    pub transcripts: String,
    /// Total cost in USD with six decimals, or `unknown` when any task's cost is unknown.
    #[schemars(regex(pattern = r"^([0-9]+\.[0-9]{6}|unknown)$"))]
    pub cost_usd: String,
    /// The structured output (JSON text) of tasks whose spec sets `output:`: the value for one
    /// task, an object keyed by task name for several (absent when no task produced one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<String>,
}

impl StepOutputs {
    /// The outputs of a run with `results`, its JUnit report and transcript directory.
    pub fn new(results: &[RunResult], junit: Option<&Path>, transcripts: &Path) -> Self {
        let ok = results.iter().all(|r| !r.outcome.is_error());
        let cost: Option<f64> = results
            .iter()
            .map(|r| r.total_cost_usd)
            .try_fold(0.0, |acc, c| c.map(|c| acc + c));
        StepOutputs {
            conclusion: if ok {
                Conclusion::Success
            } else {
                Conclusion::Failure
            },
            junit: junit.map(|j| j.display().to_string()).unwrap_or_default(),
            transcripts: transcripts.display().to_string(),
            cost_usd: cost.map_or("unknown".to_string(), |c| format!("{c:.6}")),
            structured_output: crate::report::structured::any(results)
                .then(|| crate::report::structured::combined(results).to_string()),
        }
    }

    /// The outputs as `name`, `value` pairs, in the order written: the fields as serialized,
    /// so the file and the schema cannot disagree.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let Ok(serde_json::Value::Object(map)) = serde_json::to_value(self) else {
            return Vec::new();
        };
        map.into_iter()
            .map(|(name, value)| match value {
                serde_json::Value::String(s) => (name, s),
                other => (name, other.to_string()),
            })
            .collect()
    }
}
