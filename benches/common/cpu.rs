//! CPU time for the benches of the root package (which have `libc`): on a shared machine the
//! wall time per iteration grows with the load, the CPU time much less.

use std::time::Duration;

/// The CPU time this thread spent in `f` (user + system).
pub fn thread_cpu(f: impl FnOnce()) -> Duration {
    let now = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    };
    let t = now();
    f();
    now() - t
}
