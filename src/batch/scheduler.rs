//! Running a batch: at most `--jobs` tasks at once, started in the order the specs were given;
//! the gate decides before each start whether it still may; SIGINT/SIGTERM stop every task,
//! and a second signal cuts the wait short so the reports are written at once. The batch's
//! isolated tasks take their worktrees from a pool ([`crate::git::pool`]) that prepares them ahead.

use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, Semaphore};

use super::BatchGate;
use super::group::Groups;
use crate::agent::{StopCause, Stopper};
use crate::events::RunResult;
use crate::git::pool::WorktreePool;
use crate::outcome::{Outcome, OutcomeKind};
use crate::prepare::PreparedTask;
use crate::report::progress;
use crate::session::RunOptions;
use crate::spec::LoadedSpec;

/// How long tasks may still take to write their reports after a second signal (their
/// commands were killed).
const SECOND_SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_millis(1500);

/// Called with each task's result as soon as it is known (`true` for a task that was skipped).
pub(crate) type OnResult = Arc<dyn Fn(&RunResult, bool) + Send + Sync>;

/// How a batch runs.
pub(crate) struct Schedule {
    /// Most tasks at once (`--jobs`).
    pub jobs: u32,
    /// The start gate (`--fail-fast`, `--max-total-cost-usd`).
    pub gate: Arc<BatchGate>,
    /// Options every task's session is built with.
    pub opts: RunOptions,
    /// GitHub Actions log groups, when running there.
    pub groups: Option<Arc<Groups>>,
    /// What to do with each result as it comes (print it in the chosen format).
    pub on_result: OnResult,
}

/// How a batch ended.
pub(crate) struct BatchEnd {
    /// Every task's result, in the order given; a task a second signal cut short is
    /// `interrupted` ("cut short by a second signal").
    pub results: Vec<RunResult>,
    /// Indexes of the tasks that were cut short (their results were not reported yet).
    pub unfinished: Vec<usize>,
    /// Whether a second signal cut the batch short.
    pub cut_short: bool,
}

/// Run `tasks` (each with the reason it is skipped, if it is) under `schedule`.
pub(crate) async fn run_all(
    mut tasks: Vec<(PreparedTask, Option<String>)>,
    schedule: Schedule,
) -> BatchEnd {
    let pool = start_pool(&mut tasks, &schedule).await;
    let specs: Vec<LoadedSpec> = tasks.iter().map(|(t, _)| t.loaded.clone()).collect();
    let stoppers: Vec<Stopper> = tasks.iter().map(|_| Stopper::default()).collect();
    let second = Arc::new(Notify::new());
    let last_signal = Arc::new(Mutex::new(2));
    spawn_signal_listener(stoppers.clone(), second.clone(), last_signal.clone());
    let slots: Arc<Mutex<Vec<Option<RunResult>>>> = Arc::new(Mutex::new(vec![None; tasks.len()]));
    let run = dispatch(tasks, stoppers, &schedule, slots.clone());
    tokio::pin!(run);
    let cut_short = tokio::select! {
        _ = &mut run => false,
        _ = second.notified() => true,
    };
    if cut_short {
        // Nothing runner started outlives it: every process group still running is killed,
        // and the tasks get a moment to write their reports now that their commands are gone.
        crate::process::kill_all();
        if tokio::time::timeout(SECOND_SIGNAL_GRACE, &mut run)
            .await
            .is_err()
        {
            tracing::warn!("tasks still running after the second signal are reported as cut short");
        }
    }
    // After the tasks (or the grace a second signal gives them): worktrees still held are kept.
    if let Some(pool) = pool {
        let _ = tokio::task::spawn_blocking(move || pool.shutdown()).await;
    }
    let sig = last_signal.lock().map(|s| *s).unwrap_or(2);
    let slots = match slots.lock() {
        Ok(g) => g.clone(),
        Err(p) => p.into_inner().clone(),
    };
    let mut unfinished = Vec::new();
    let results = slots
        .into_iter()
        .zip(&specs)
        .enumerate()
        .map(|(i, (r, l))| {
            r.unwrap_or_else(|| {
                let mut o = Outcome::new(
                    OutcomeKind::Interrupted,
                    "cut short by a second signal before the task finished",
                );
                o.signal = Some(sig);
                unfinished.push(i);
                RunResult::not_run(l, o)
            })
        })
        .collect();
    BatchEnd {
        results,
        unfinished,
        cut_short,
    }
}

/// Start the worktree pool for the batch's isolated tasks (those not skipped already) and give
/// it to them; without one (fewer than two isolated tasks, or it cannot be made) each isolated
/// task creates a worktree of its own.
async fn start_pool(
    tasks: &mut [(PreparedTask, Option<String>)],
    s: &Schedule,
) -> Option<WorktreePool> {
    let isolated = WorktreePool::isolated(
        tasks
            .iter()
            .filter(|(_, skip)| skip.is_none())
            .map(|(t, _)| &t.git),
    );
    if isolated.len() < 2 {
        return None;
    }
    let jobs = s.jobs as usize;
    let dir = s.opts.transcript_dir.clone();
    let choice = crate::git::pool::Choice::from_env();
    let started =
        tokio::task::spawn_blocking(move || WorktreePool::start(&isolated, jobs, &dir, choice))
            .await;
    let pool = match started {
        Ok(Ok(p)) => p?,
        Ok(Err(e)) => {
            tracing::warn!("{e}; each isolated task checks out a worktree of its own");
            return None;
        }
        Err(e) => {
            tracing::warn!(
                "worktree pool: {e}; each isolated task checks out a worktree of its own"
            );
            return None;
        }
    };
    for (t, _) in tasks.iter_mut() {
        if t.git.isolate && t.git.repo_root.is_some() {
            t.git.worktrees = Some(pool.source());
        }
    }
    Some(pool)
}

/// Start the tasks in order as permits free up, and wait for all of them. Permits are taken
/// here, in the order the specs were given, before each task is spawned: acquiring them inside
/// the spawned tasks would let the runtime start them in any order.
async fn dispatch(
    tasks: Vec<(PreparedTask, Option<String>)>,
    stoppers: Vec<Stopper>,
    s: &Schedule,
    slots: Arc<Mutex<Vec<Option<RunResult>>>>,
) {
    let sem = Arc::new(Semaphore::new(s.jobs as usize));
    let mut handles = Vec::new();
    for (i, ((task, pre_skipped), stopper)) in tasks.into_iter().zip(stoppers).enumerate() {
        let Ok(permit) = sem.clone().acquire_owned().await else {
            break;
        };
        let put = {
            let slots = slots.clone();
            move |r: RunResult| {
                if let Ok(mut slots) = slots.lock() {
                    slots[i] = Some(r);
                }
            }
        };
        // Decided once the permit is held, so with --jobs 1 the previous task has finished.
        if let Some(why) = pre_skipped.or_else(|| s.gate.skip_reason()) {
            tracing::info!(task = %task.loaded.spec.name, "skipped: {why}");
            let result = super::skipped_result(&task.loaded, why);
            progress::task_finished(&result, false);
            (s.on_result)(&result, true);
            put(result);
            continue;
        }
        let (opts, gate, groups, on_result) = (
            s.opts.clone(),
            s.gate.clone(),
            s.groups.clone(),
            s.on_result.clone(),
        );
        handles.push(tokio::spawn(async move {
            let _permit = permit;
            let result = run_one(task, &opts, stopper, groups.as_deref()).await;
            gate.record(&result);
            on_result(&result, false);
            put(result);
        }));
    }
    futures_util::future::join_all(handles).await;
}

/// Run one task with the batch's log grouping (GitHub Actions) and progress accounting.
async fn run_one(
    task: PreparedTask,
    opts: &RunOptions,
    stopper: Stopper,
    groups: Option<&Groups>,
) -> RunResult {
    let name = task.loaded.spec.name.clone();
    progress::task_started();
    let result = match groups {
        Some(g) if g.buffered => {
            let buf = Arc::new(Mutex::new(Vec::new()));
            let r =
                crate::log::buffered(buf.clone(), crate::task::run_task(task, opts, stopper)).await;
            let log = std::mem::take(&mut *buf.lock().unwrap_or_else(|e| e.into_inner()));
            g.write_buffered(&name, r.outcome.name(), &log);
            r
        }
        Some(g) => {
            g.open(&name);
            let r = crate::task::run_task(task, opts, stopper).await;
            g.close();
            r
        }
        None => crate::task::run_task(task, opts, stopper).await,
    };
    progress::task_finished(&result, true);
    result
}

/// Listen for SIGINT/SIGTERM: the first stops every task; the second wakes `second`.
fn spawn_signal_listener(
    stoppers: Vec<Stopper>,
    second: Arc<Notify>,
    last_signal: Arc<Mutex<i32>>,
) {
    use tokio::signal::unix::{SignalKind, signal};
    tokio::spawn(async move {
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            tracing::warn!(
                "cannot install signal handlers; SIGINT/SIGTERM will kill runner without a report"
            );
            return;
        };
        let mut count = 0;
        loop {
            let sig = tokio::select! {
                _ = int.recv() => 2,
                _ = term.recv() => 15,
            };
            count += 1;
            if let Ok(mut l) = last_signal.lock() {
                *l = sig;
            }
            if count == 1 {
                tracing::warn!(
                    "received {}; stopping tasks and writing reports (send it again to cut this short)",
                    if sig == 15 { "SIGTERM" } else { "SIGINT" }
                );
                for s in &stoppers {
                    s.stop(StopCause::Signal(sig));
                }
            } else {
                tracing::warn!("second signal: writing reports now");
                second.notify_one();
            }
        }
    });
}
