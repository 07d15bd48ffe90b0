//! Stopping blocking work from another thread: a [`Cancel`] is a flag that a waiting thread
//! also sees through a descriptor it polls, so a wait on a child, a pipe or a socket ends as
//! soon as the flag is set (where no descriptor could be made, waits look at the flag every
//! [`FALLBACK_TICK`]).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// How often a wait looks at what it waits for when it has no descriptor to poll.
pub const FALLBACK_TICK: Duration = Duration::from_millis(20);

const LIVE: u8 = 0;
const CANCELLED: u8 = 1;
const ABANDONED: u8 = 2;

/// A cancellation flag shared by its clones: [`Cancel::cancel`] asks the work to stop as it
/// would at its time limit; [`Cancel::abandon`] says no one waits for its result any more, so
/// what it started is killed at once.
#[derive(Clone, Debug)]
pub struct Cancel(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    state: AtomicU8,
    /// A pipe whose read end becomes readable (for good) once the flag is set.
    wake: Option<(OwnedFd, OwnedFd)>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel::new()
    }
}

impl Cancel {
    /// A flag not yet set.
    pub fn new() -> Cancel {
        Cancel(Arc::new(Inner {
            state: AtomicU8::new(LIVE),
            wake: wake_pipe().ok(),
        }))
    }

    /// Ask the work to stop.
    pub fn cancel(&self) {
        self.set(CANCELLED);
    }

    /// Say no one waits for the work any more: it stops, and kills what it started without
    /// a grace period (as dropping it would).
    pub fn abandon(&self) {
        self.set(ABANDONED);
    }

    fn set(&self, to: u8) {
        let before = self.0.state.fetch_max(to, Ordering::SeqCst);
        if before == LIVE
            && let Some((_, w)) = &self.0.wake
        {
            // SAFETY: writes one byte from a live buffer to a pipe owned here; the pipe is
            // non-blocking, so a full pipe (impossible: one byte is ever written) cannot block.
            unsafe { libc::write(w.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        }
    }

    /// Whether the flag is set ([`Cancel::cancel`] or [`Cancel::abandon`]).
    pub fn is_cancelled(&self) -> bool {
        self.0.state.load(Ordering::SeqCst) != LIVE
    }

    /// Whether [`Cancel::abandon`] was called.
    pub fn is_abandoned(&self) -> bool {
        self.0.state.load(Ordering::SeqCst) == ABANDONED
    }

    /// The descriptor that becomes readable when the flag is set, if one could be made.
    pub(crate) fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.0.wake.as_ref().map(|(r, _)| r.as_fd())
    }
}

/// A pipe, both ends close-on-exec and non-blocking.
fn wake_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // Made close-on-exec at once where the kernel can (no child started meanwhile by another
    // thread inherits it).
    #[cfg(target_os = "linux")]
    // SAFETY: pipe2 writes two descriptors into `fds`.
    let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
    #[cfg(not(target_os = "linux"))]
    // SAFETY: pipe writes two descriptors into `fds`.
    let made = unsafe { libc::pipe(fds.as_mut_ptr()) };
    if made != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[cfg(not(target_os = "linux"))]
    for fd in [&r, &w] {
        // SAFETY: fcntl on a descriptor owned here, with integer arguments.
        let ok = unsafe {
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) == 0
                && libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) == 0
        };
        if !ok {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((r, w))
}

/// Wait until one of `fds` is readable (or has hung up), or until `deadline`; returns which
/// are ready (all false at the deadline). A `None` entry is never ready. `None` deadline:
/// wait without limit. Interrupted waits are resumed.
pub(crate) fn wait_readable(
    fds: &[Option<BorrowedFd<'_>>],
    deadline: Option<Instant>,
) -> std::io::Result<Vec<bool>> {
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|fd| libc::pollfd {
            fd: fd.map_or(-1, |f| f.as_raw_fd()),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    loop {
        let timeout = match deadline {
            None => -1,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                // Rounded up: a wait never ends just before its deadline.
                let ms = left.as_micros().div_ceil(1000);
                libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX)
            }
        };
        // SAFETY: `polled` is a live array of `polled.len()` pollfd entries.
        let n = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, timeout) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        return Ok(polled.iter().map(|p| p.fd >= 0 && p.revents != 0).collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_when_the_flag_is_set_from_another_thread() {
        let c = Cancel::new();
        assert!(!c.is_cancelled());
        let other = c.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            other.cancel();
        });
        let started = Instant::now();
        let ready =
            wait_readable(&[c.fd()], Some(Instant::now() + Duration::from_secs(10))).unwrap();
        assert!(ready[0]);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(c.is_cancelled() && !c.is_abandoned());
        t.join().unwrap();
        c.abandon();
        assert!(c.is_abandoned());
    }

    #[test]
    fn a_wait_ends_at_its_deadline() {
        let c = Cancel::new();
        let started = Instant::now();
        let ready = wait_readable(&[c.fd()], Some(started + Duration::from_millis(30))).unwrap();
        assert_eq!(ready, vec![false]);
        assert!(started.elapsed() >= Duration::from_millis(30));
    }
}
