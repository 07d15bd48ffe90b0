//! Many tasks in one run: which tasks run ([`mod@plan`]: `--shard`, `--skip-passed`), the gate that
//! decides whether the next task starts ([`gate`]: `--fail-fast`, `--max-total-cost-usd`), the
//! scheduler that runs them `--jobs` at a time and handles signals ([`scheduler`]; its isolated
//! tasks take their worktrees from a pool, `crate::git::pool`), and GitHub Actions log groups
//! ([`group`]).

pub(crate) mod gate;
pub(crate) mod group;
pub(crate) mod plan;
pub(crate) mod scheduler;
pub(crate) mod shard;

pub(crate) use gate::BatchGate;
pub(crate) use plan::{BatchOptions, plan, skipped_result};
pub(crate) use scheduler::{Schedule, run_all};
pub(crate) use shard::ShardArg;
