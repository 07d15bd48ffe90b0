//! Which of the prepared tasks a batch runs, and which it reports as skipped: `--shard`,
//! `--max-total-cost-usd`'s need for priced models, `--skip-passed`.

use std::path::PathBuf;

use super::shard::Shard;
use crate::events::RunResult;
use crate::outcome::{Outcome, OutcomeKind};
use crate::prepare::PreparedTask;
use crate::spec::LoadedSpec;

/// The batch options that choose tasks (from the command line).
#[derive(Debug, Clone, Default)]
pub(crate) struct BatchOptions {
    /// `--shard i/n`.
    pub shard: Option<Shard>,
    /// `--max-total-cost-usd`.
    pub max_total_cost_usd: Option<f64>,
    /// `--skip-passed DIR`.
    pub skip_passed: Option<PathBuf>,
}

/// A `skipped` result for a task that was not started.
pub(crate) fn skipped_result(loaded: &LoadedSpec, why: impl Into<String>) -> RunResult {
    RunResult::not_run(loaded, Outcome::new(OutcomeKind::Skipped, why))
}

/// Apply the batch options to the prepared tasks, in order: `--shard` drops the tasks of other
/// shards; `--max-total-cost-usd` needs every task's model to have a price (an unknown cost
/// cannot count towards the cap); `--skip-passed` marks tasks that passed before with the same
/// spec digest and base commit (the second element: why the task is skipped).
pub(crate) fn plan(
    tasks: Vec<PreparedTask>,
    args: &BatchOptions,
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
        .map(crate::report::result_file::passed_results)
        .unwrap_or_default();
    Ok(tasks
        .into_iter()
        .map(|t| {
            let why = args.skip_passed.as_ref().and_then(|_| {
                let key = (
                    t.loaded.spec.name.clone(),
                    crate::prepare::spec_digest(&t.loaded.spec),
                    crate::git::repo_info(&t.loaded.workdir).commit,
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
