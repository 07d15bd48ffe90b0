//! Many tasks in one run: which tasks run ([`plan`]: `--shard`, `--skip-passed`), the gate that
//! decides whether the next task starts ([`gate`]: `--fail-fast`, `--max-total-cost-usd`), the
//! scheduler that runs them `--jobs` at a time and handles signals ([`scheduler`]), the pool of
//! worktrees its isolated tasks run in ([`pool`]), and GitHub Actions log groups ([`group`]).

pub mod gate;
pub mod group;
pub mod plan;
pub mod pool;
pub mod scheduler;
pub mod shard;

pub use gate::BatchGate;
pub use plan::{BatchOptions, plan, skipped_result};
pub use scheduler::{BatchEnd, Schedule, run_all};
pub use shard::Shard;
