//! Where a turn's wall time goes: a [`TurnClock`] the loop switches from phase to phase
//! (request build → time to first byte → stream → tools, with failed attempts and their waits
//! as retry), and the hooks' [`BusyClock`], whose time is taken out of the phase it
//! fell in. The phases follow each other without gaps, so they add up to the turn.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::events::Phases;
use crate::hooks::busy::BusyClock;

/// A phase of a turn (hooks are counted apart, by [`BusyClock`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Checks, context preparation, compaction, the request itself.
    Build,
    /// Failed attempts and the waits before their retries.
    Retry,
    /// From sending the request to its first event.
    Ttfb,
    /// From the first event to the end of the response.
    Stream,
    /// Everything after the response: tool calls, Stop hooks.
    Tools,
}

/// The current turn's clock.
#[derive(Debug)]
pub(crate) struct TurnClock {
    start: Instant,
    last: Instant,
    phase: Phase,
    /// Time per phase: Build, Retry, Ttfb, Stream, Tools.
    spent: [Duration; 5],
    hooks: Duration,
    busy: Arc<BusyClock>,
    busy_at_last: Duration,
    /// Ttfb and Stream time of the attempt running now, moved to Retry if it fails.
    attempt: Duration,
}

fn slot(p: Phase) -> usize {
    match p {
        Phase::Build => 0,
        Phase::Retry => 1,
        Phase::Ttfb => 2,
        Phase::Stream => 3,
        Phase::Tools => 4,
    }
}

impl TurnClock {
    /// A clock starting now, in the build phase, counting `busy` as hook time.
    pub(crate) fn new(busy: Arc<BusyClock>) -> TurnClock {
        let now = Instant::now();
        TurnClock {
            start: now,
            last: now,
            phase: Phase::Build,
            spent: [Duration::ZERO; 5],
            hooks: Duration::ZERO,
            busy_at_last: busy.total(),
            busy,
            attempt: Duration::ZERO,
        }
    }

    /// Start over (a new turn, or the loop entered again).
    pub(crate) fn restart(&mut self) {
        *self = TurnClock::new(self.busy.clone());
    }

    /// Close the running phase at `now`: its time since the last switch, less the hook time
    /// in that span, which goes to hooks.
    fn close(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.last);
        let busy = self.busy.total();
        let hooks = busy.saturating_sub(self.busy_at_last).min(elapsed);
        let own = elapsed - hooks;
        self.spent[slot(self.phase)] += own;
        if matches!(self.phase, Phase::Ttfb | Phase::Stream) {
            self.attempt += own;
        }
        self.hooks += hooks;
        self.busy_at_last = busy;
        self.last = now;
    }

    /// Switch to phase `next` (nothing happens when it is the running one).
    pub(crate) fn switch(&mut self, next: Phase) {
        if next == self.phase {
            return;
        }
        self.close(Instant::now());
        if next == Phase::Ttfb {
            self.attempt = Duration::ZERO;
        }
        self.phase = next;
    }

    /// The running attempt failed: its time is retry time, and so is the wait that follows.
    pub(crate) fn attempt_failed(&mut self) {
        self.close(Instant::now());
        let moved = self.attempt;
        self.attempt = Duration::ZERO;
        let ttfb = moved.min(self.spent[slot(Phase::Ttfb)]);
        self.spent[slot(Phase::Ttfb)] -= ttfb;
        self.spent[slot(Phase::Stream)] -= (moved - ttfb).min(self.spent[slot(Phase::Stream)]);
        self.spent[slot(Phase::Retry)] += moved;
        self.phase = Phase::Retry;
    }

    /// End the turn: its wall time and phases (in milliseconds, rounded so that they add up
    /// to the wall time), and the clock starts over for the next turn.
    pub(crate) fn finish(&mut self) -> (u64, Phases) {
        let now = Instant::now();
        self.close(now);
        let wall = now.saturating_duration_since(self.start);
        let parts = [
            self.spent[0],
            self.spent[1],
            self.spent[2],
            self.spent[3],
            self.spent[4],
            self.hooks,
        ];
        let ms = to_millis_adding_up(&parts);
        self.restart();
        (
            millis(wall),
            Phases {
                request_build_ms: ms[0],
                retry_ms: ms[1],
                ttfb_ms: ms[2],
                stream_ms: ms[3],
                tools_ms: ms[4],
                hooks_ms: ms[5],
            },
        )
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Each duration in whole milliseconds, rounded so that their sum is the rounded sum of the
/// durations (largest remainders round up).
fn to_millis_adding_up(parts: &[Duration; 6]) -> [u64; 6] {
    let micros: Vec<u128> = parts.iter().map(Duration::as_micros).collect();
    let total: u128 = micros.iter().sum::<u128>() / 1000;
    let mut ms: Vec<u128> = micros.iter().map(|m| m / 1000).collect();
    let mut short = total.saturating_sub(ms.iter().sum());
    let mut order: Vec<usize> = (0..micros.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(micros[i] % 1000));
    for i in order {
        if short == 0 {
            break;
        }
        ms[i] += 1;
        short -= 1;
    }
    let mut out = [0u64; 6];
    for (o, m) in out.iter_mut().zip(ms) {
        *o = u64::try_from(m).unwrap_or(u64::MAX);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_up_and_hooks_are_taken_out_of_their_phase() {
        let busy = Arc::new(BusyClock::default());
        let mut c = TurnClock::new(busy.clone());
        std::thread::sleep(Duration::from_millis(20));
        c.switch(Phase::Ttfb);
        std::thread::sleep(Duration::from_millis(100));
        c.attempt_failed();
        std::thread::sleep(Duration::from_millis(10));
        c.switch(Phase::Ttfb);
        std::thread::sleep(Duration::from_millis(20));
        c.switch(Phase::Stream);
        std::thread::sleep(Duration::from_millis(20));
        c.switch(Phase::Tools);
        {
            let _h = busy.enter();
            let _overlapping = busy.enter();
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_millis(10));
        let (wall, p) = c.finish();
        assert_eq!(p.total_ms(), wall, "{p:?}");
        assert!(p.request_build_ms >= 20, "{p:?}");
        // The bounds that tell the phases apart leave room for a loaded machine's late wake-ups:
        // the failed attempt (100 ms) is retry, not time to first byte; the overlapping hooks
        // (100 ms) count once and are not tools.
        assert!(p.retry_ms >= 110, "{p:?}");
        assert!((20..100).contains(&p.ttfb_ms), "{p:?}");
        assert!(p.stream_ms >= 20, "{p:?}");
        assert!(p.hooks_ms >= 100 && p.hooks_ms < 200, "{p:?}");
        assert!(p.tools_ms >= 10 && p.tools_ms < 100, "{p:?}");
    }

    #[test]
    fn rounding_keeps_the_sum() {
        let d = |us| Duration::from_micros(us);
        let parts = [d(1_600), d(1_600), d(1_600), d(0), d(999), d(1)];
        let ms = to_millis_adding_up(&parts);
        assert_eq!(ms.iter().sum::<u64>(), 5);
    }
}
