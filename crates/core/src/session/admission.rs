//! How many tasks set themselves up at once.
//!
//! A task's set-up before its first request (its integrity snapshot, its sandbox's plan and
//! filter, its project instructions and output files) is a few milliseconds of CPU. When a
//! batch starts `--jobs` tasks at once, set-ups that all run interleaved all end at about the
//! same time, late: every first request waits for the slowest set-up, the tasks then run in
//! lockstep, and the next wave's set-ups meet in one burst again. Admitting as many set-ups at
//! a time as there are processors, in the order they asked, sends each first request as soon
//! as its own set-up is done and staggers the tasks, so that later set-ups run while other
//! tasks wait for the model.
//!
//! Waiting for the model is not set-up: the permit is held from the task's worktree being
//! ready to its first request, and given back while its MCP servers start (a server's start
//! can take seconds).

use std::sync::{Arc, OnceLock};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::agent::Stopper;

/// Most set-ups at a time, whatever the processors.
const MAX_AT_ONCE: usize = 16;

fn slots() -> Arc<Semaphore> {
    static SLOTS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    SLOTS
        .get_or_init(|| {
            let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
            Arc::new(Semaphore::new(cpus.clamp(1, MAX_AT_ONCE)))
        })
        .clone()
}

/// A set-up admitted: held until the set-up is done.
pub(super) struct Admitted {
    _permit: Option<OwnedSemaphorePermit>,
}

/// Wait for the task's turn to set itself up (first come, first admitted); `None` when the
/// task was stopped while it waited.
pub(super) async fn admit(stopper: &Stopper) -> Option<Admitted> {
    admit_from(slots(), stopper).await
}

async fn admit_from(slots: Arc<Semaphore>, stopper: &Stopper) -> Option<Admitted> {
    if stopper.cause().is_some() {
        return None;
    }
    tokio::select! {
        biased;
        _ = stopper.token().cancelled() => None,
        permit = slots.acquire_owned() => Some(Admitted { _permit: permit.ok() }),
    }
}

/// Run `f`, a set-up's blocking work, so that the runtime's other tasks go on meanwhile (on
/// a multi-threaded runtime the worker hands them to another thread while `f` runs; on any
/// other, `f` runs inline). Without this, two set-ups on a two-processor machine hold both
/// workers, and no other task's request goes out or stream is read until they are done.
pub(super) fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::StopCause;

    /// Set-ups beyond the limit wait and are admitted in the order they asked; a stopped
    /// task stops waiting.
    #[tokio::test]
    async fn set_ups_beyond_the_limit_wait_in_order_and_a_stop_ends_the_wait() {
        let slots = Arc::new(Semaphore::new(2));
        let held = [
            admit_from(slots.clone(), &Stopper::default())
                .await
                .unwrap(),
            admit_from(slots.clone(), &Stopper::default())
                .await
                .unwrap(),
        ];
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for n in 0..3 {
            let (slots, order) = (slots.clone(), order.clone());
            waiters.push(tokio::spawn(async move {
                let admitted = admit_from(slots, &Stopper::default()).await;
                order.lock().unwrap().push(n);
                drop(admitted);
            }));
            // Each asks after the one before.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let stopped = Stopper::default();
        let again = stopped.clone();
        let (s2, order2) = (slots.clone(), order.clone());
        let stopped_waiter = tokio::spawn(async move {
            let admitted = admit_from(s2, &again).await;
            order2.lock().unwrap().push(9);
            admitted.is_some()
        });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(
            order.lock().unwrap().is_empty(),
            "none admitted beyond the limit"
        );
        stopped.stop(StopCause::Signal(15));
        assert!(!stopped_waiter.await.unwrap(), "stopped while it waited");
        drop(held);
        for w in waiters {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [9, 0, 1, 2]);
        assert!(
            admit_from(slots, &stopped).await.is_none(),
            "a stopped task is not admitted"
        );
    }
}
