//! Which of the prepared tasks a batch runs, and which it reports as skipped: `--shard`,
//! `--max-total-cost-usd`'s need for priced models, `--skip-passed`; and the refusal of tasks
//! that would edit one working tree at once under `--jobs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::shard::Shard;
use crate::events::RunResult;
use crate::outcome::{Outcome, OutcomeKind};
use crate::permissions::PermissionMode;
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
    /// `--jobs`: tasks at once.
    pub jobs: u32,
}

/// A `skipped` result for a task that was not started.
pub(crate) fn skipped_result(loaded: &LoadedSpec, why: impl Into<String>) -> RunResult {
    RunResult::not_run(loaded, Outcome::new(OutcomeKind::Skipped, why))
}

/// The error for two tasks that would edit one working tree at the same time: with `--jobs` above
/// 1, tasks that run (are not skipped), in place (`git.isolate: false`) in the same repository
/// — or, outside git, the same workdir — and may write (any mode but `plan`) would each see,
/// and put in its patch, the other's changes.
fn shared_working_tree<'a>(tasks: impl IntoIterator<Item = &'a PreparedTask>) -> Option<String> {
    let mut seen: HashMap<&Path, &PreparedTask> = HashMap::new();
    for t in tasks {
        if t.git.isolate || t.loaded.spec.permissions.mode == PermissionMode::Plan {
            continue;
        }
        let tree = t.git.repo_root.as_deref().unwrap_or(&t.loaded.workdir);
        if let Some(other) = seen.insert(tree, t) {
            return Some(format!(
                "{}:{}:1: tasks `{}` and `{}` both work in place in {} (git.isolate: false), and --jobs runs them at the same time: each would edit the other's files and report the other's changes as its own. Give them `git: {{isolate: true}}` (each gets its own worktree), or run with --jobs 1.",
                t.loaded.path.display(),
                t.loaded.name_line,
                other.loaded.spec.name,
                t.loaded.spec.name,
                tree.display()
            ));
        }
    }
    None
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
                    "{}:{}:1: --max-total-cost-usd {cap} needs a priced model, but task `{}` uses `{}`, which has no price in the model table; add it under `models:` in the spec",
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
    let planned: Vec<(PreparedTask, Option<String>)> = tasks
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
        .collect();
    let running = planned.iter().filter(|(_, skip)| skip.is_none());
    if args.jobs > 1
        && let Some(e) = shared_working_tree(running.map(|(t, _)| t))
    {
        return Err(vec![e]);
    }
    Ok(planned)
}
