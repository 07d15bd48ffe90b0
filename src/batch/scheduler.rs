//! Running a batch: at most `--jobs` tasks at once, started in the order the specs were given;
//! the gate decides before each start whether it still may; SIGINT/SIGTERM stop every task,
//! and a second signal cuts the wait short so the reports are written at once. The batch's
//! isolated tasks take their worktrees from a pool ([`crate::git::pool`]) that prepares them ahead.
//!
//! From the first signal on no task starts: those that had not are `not_started`, at once, and
//! the pool makes no more worktrees (a checkout being made stops part way). The pool's files
//! are removed before the reports are written, unless a signal comes meanwhile or the batch
//! was cut short: then the next batch removes them.

use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, Semaphore};
use tokio_util::sync::CancellationToken;

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

/// Called with each task's result as soon as it is known (`true` for a task that did not run:
/// skipped or not started).
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
    /// Indexes of the tasks whose results were not reported yet (cut short, or never reached
    /// before a second signal).
    pub unfinished: Vec<usize>,
    /// Whether a second signal cut the batch short.
    pub cut_short: bool,
    /// The first signal the batch got (2 or 15), if any: the run ends with its exit code
    /// (130/143) even when no task was running then.
    pub signal: Option<i32>,
}

/// The signals a batch got, as its parts wait for them.
#[derive(Clone, Default)]
struct Signals {
    /// Cancelled at the first SIGINT/SIGTERM.
    first: CancellationToken,
    /// Woken at each signal after the first.
    again: Arc<Notify>,
    /// The first signal's number, and the last one's.
    numbers: Arc<Mutex<(Option<i32>, Option<i32>)>>,
    /// The batch's worktree pool, once it is there: the first signal stops it.
    pool: Arc<Mutex<Option<WorktreePool>>>,
}

impl Signals {
    fn numbers(&self) -> (Option<i32>, Option<i32>) {
        *self.numbers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Record signal `sig`; whether it is the first.
    fn record(&self, sig: i32) -> bool {
        let mut n = self.numbers.lock().unwrap_or_else(|e| e.into_inner());
        let first = n.0.is_none();
        if first {
            n.0 = Some(sig);
        }
        n.1 = Some(sig);
        first
    }

    /// Make `pool` the one the first signal stops (at once, when it has come already).
    fn set_pool(&self, pool: &WorktreePool) {
        *self.pool.lock().unwrap_or_else(|e| e.into_inner()) = Some(pool.clone());
        // After the pool is published: a signal that came before is seen here, one after it
        // finds the pool.
        if self.first.is_cancelled() {
            pool.cancel();
        }
    }

    /// Stop the pool, if there is one (the first signal has come).
    fn stop_pool(&self) {
        if let Some(pool) = &*self.pool.lock().unwrap_or_else(|e| e.into_inner()) {
            pool.cancel();
        }
    }

    /// Wait for the next signal.
    async fn next(&self) {
        if self.first.is_cancelled() {
            self.again.notified().await;
        } else {
            self.first.cancelled().await;
        }
    }
}

/// Where a task of the batch is.
#[derive(Clone)]
enum TaskState {
    /// Not started yet.
    Waiting,
    /// Started, no result yet.
    Running,
    /// Its result (reported).
    Done(Box<RunResult>),
}

/// Run `tasks` (each with the reason it is skipped, if it is) under `schedule`.
pub(crate) async fn run_all(
    mut tasks: Vec<(PreparedTask, Option<String>)>,
    schedule: Schedule,
) -> BatchEnd {
    let specs: Vec<LoadedSpec> = tasks.iter().map(|(t, _)| t.loaded.clone()).collect();
    let stoppers: Vec<Stopper> = tasks.iter().map(|_| Stopper::default()).collect();
    let signals = Signals::default();
    spawn_signal_listener(stoppers.clone(), signals.clone());
    let pool = start_pool(&mut tasks, &schedule, &signals).await;
    let states = Arc::new(Mutex::new(vec![TaskState::Waiting; tasks.len()]));
    let run = dispatch(tasks, stoppers, &schedule, states.clone(), &signals);
    tokio::pin!(run);
    let cut_short = tokio::select! {
        _ = &mut run => false,
        _ = signals.again.notified() => true,
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
        end_pool(pool, cut_short, &signals).await;
    }
    let (first, last) = signals.numbers();
    let states = states.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut unfinished = Vec::new();
    let results = states
        .into_iter()
        .zip(&specs)
        .enumerate()
        .map(|(i, (state, l))| match state {
            TaskState::Done(r) => *r,
            TaskState::Running => {
                let mut o = Outcome::new(
                    OutcomeKind::Interrupted,
                    "cut short by a second signal before the task finished",
                );
                o.signal = Some(last.unwrap_or(2));
                unfinished.push(i);
                RunResult::not_run(l, o)
            }
            TaskState::Waiting => {
                unfinished.push(i);
                RunResult::not_run(l, Outcome::not_started(first.unwrap_or(2)))
            }
        })
        .collect();
    BatchEnd {
        results,
        unfinished,
        cut_short,
        signal: first,
    }
}

/// End the batch's use of its worktree pool: stop it and keep the worktrees tasks still hold
/// (fast), then remove the rest — unless the batch was cut short, or a signal comes while the
/// files are being removed: the reports come first, and the next batch removes what is left.
async fn end_pool(pool: WorktreePool, cut_short: bool, signals: &Signals) {
    let closing = pool.clone();
    let _ = tokio::task::spawn_blocking(move || closing.close()).await;
    if cut_short {
        tracing::info!(
            "the worktree pool's files are left for the next batch in this transcript directory to remove"
        );
        return;
    }
    // A thread of its own, which the process does not wait for when it is left behind.
    let (done, removed) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        pool.clean_up();
        let _ = done.send(());
    });
    tokio::select! {
        _ = removed => {}
        _ = signals.next() => tracing::warn!(
            "signal while the worktree pool was being removed: writing the reports now; the next batch in this transcript directory removes what is left"
        ),
    }
}

/// Start the worktree pool for the batch's isolated tasks (those not skipped already) and give
/// it to them; without one (fewer than two isolated tasks, or it cannot be made) each isolated
/// task creates a worktree of its own. A signal ends the wait for it (cleaning up after
/// killed batches may take a while): no task starts then anyway.
async fn start_pool(
    tasks: &mut [(PreparedTask, Option<String>)],
    s: &Schedule,
    signals: &Signals,
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
    let published = signals.clone();
    let starting = tokio::task::spawn_blocking(move || {
        let started = WorktreePool::start(&isolated, jobs, &dir, choice);
        if let Ok(Some(pool)) = &started {
            published.set_pool(pool);
        }
        started
    });
    let started = tokio::select! {
        started = starting => started,
        _ = signals.first.cancelled() => {
            tracing::info!("signal while the worktree pool was being started: no task starts");
            return None;
        }
    };
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
/// the spawned tasks would let the runtime start them in any order. From the first signal on,
/// no task waits for a permit or starts: each is `not_started` (or `skipped`, if it was to be).
async fn dispatch(
    tasks: Vec<(PreparedTask, Option<String>)>,
    stoppers: Vec<Stopper>,
    s: &Schedule,
    states: Arc<Mutex<Vec<TaskState>>>,
    signals: &Signals,
) {
    let sem = Arc::new(Semaphore::new(s.jobs as usize));
    let mut handles = Vec::new();
    for (i, ((task, pre_skipped), stopper)) in tasks.into_iter().zip(stoppers).enumerate() {
        let permit = tokio::select! {
            biased;
            _ = signals.first.cancelled() => None,
            p = sem.clone().acquire_owned() => p.ok(),
        };
        let set = {
            let states = states.clone();
            move |state: TaskState| {
                if let Ok(mut states) = states.lock() {
                    states[i] = state;
                }
            }
        };
        let not_run = |result: RunResult| {
            progress::task_finished(&result, false);
            (s.on_result)(&result, true);
            set(TaskState::Done(Box::new(result)));
        };
        let permit = match permit {
            Some(p) if !signals.first.is_cancelled() => p,
            _ => {
                let result = match pre_skipped {
                    Some(why) => super::skipped_result(&task.loaded, why),
                    None => {
                        let sig = signals.numbers().0.unwrap_or(2);
                        RunResult::not_run(&task.loaded, Outcome::not_started(sig))
                    }
                };
                tracing::info!(task = %task.loaded.spec.name, "{}: {}", result.outcome.name(), result.outcome.message);
                not_run(result);
                continue;
            }
        };
        // Decided once the permit is held, so with --jobs 1 the previous task has finished.
        if let Some(why) = pre_skipped.or_else(|| s.gate.skip_reason()) {
            tracing::info!(task = %task.loaded.spec.name, "skipped: {why}");
            not_run(super::skipped_result(&task.loaded, why));
            continue;
        }
        set(TaskState::Running);
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
            // A task stopped while it was being set up never started: reported as one.
            on_result(&result, result.outcome.kind.not_run());
            set(TaskState::Done(Box::new(result)));
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

/// Listen for SIGINT/SIGTERM: the first stops every task and the worktree pool's preparation;
/// each later one wakes `signals.again`.
fn spawn_signal_listener(stoppers: Vec<Stopper>, signals: Signals) {
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
        loop {
            let sig = tokio::select! {
                _ = int.recv() => 2,
                _ = term.recv() => 15,
            };
            if signals.record(sig) {
                tracing::warn!(
                    "received {}; stopping tasks and writing reports (send it again to cut this short)",
                    if sig == 15 { "SIGTERM" } else { "SIGINT" }
                );
                for s in &stoppers {
                    s.stop(StopCause::Signal(sig));
                }
                signals.first.cancel();
                signals.stop_pool();
            } else {
                tracing::warn!("second signal: writing reports now");
                signals.again.notify_one();
            }
        }
    });
}
