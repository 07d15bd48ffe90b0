//! Run a shell script as a child (through [`super::spawn`]) to its end, its time limit or its
//! cancellation, with both output streams captured ([`super::capture`], each on a thread of
//! its own); nothing of it outlives the call. Used by the Bash tool and verify checks.
//! [`run_shell`] blocks the calling thread until the script and its readers are done.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::capture::{Captured, SpillError, capture};
use super::identity::GroupIdentity;
use super::{ChildPolicy, KILL_GRACE, Program, Spawn, Waited, spawn};
use crate::cancel::Cancel;
use runner_protocol::Scope;

/// How long output readers may linger after the process group is gone (a process that left
/// the group may still hold the pipes).
const READER_GRACE: Duration = Duration::from_secs(1);

/// How a shell run ended.
pub enum End {
    /// The process exited.
    Exited(ExitStatus),
    /// The time limit was reached.
    TimedOut,
    /// The run was cancelled.
    Cancelled,
}

/// A shell script to run in its own process group, with bounded output capture.
pub struct ShellRun<'a> {
    /// Script for `bash -c`.
    pub script: &'a str,
    /// Working directory.
    pub cwd: &'a Path,
    /// Variables removed from the environment.
    pub env: &'a ChildPolicy,
    /// Variables added to the environment.
    pub extra_env: &'a [(String, String)],
    /// Time limit.
    pub timeout: Duration,
    /// Stops the command (the whole group is stopped; at once when it is abandoned).
    pub cancel: &'a Cancel,
    /// Where long output is spilled.
    pub spill_dir: &'a Path,
    /// File name stem for spilled output.
    pub spill_name: &'a str,
    /// What the script may do.
    pub scope: Scope,
    /// Whether the script reports a line on [`super::REPORT_FD`] (see [`ShellDone::report`]).
    pub report: bool,
    /// Told the started group as soon as the shell runs, before the script does anything: with
    /// [`ShellRun::report`], the shell waits on the report channel until this returns, so a
    /// side-effecting call is on record before it acts (and does nothing if runner dies first).
    pub on_spawn: Option<&'a (dyn Fn(Option<GroupIdentity>) + Sync)>,
}

/// How a [`ShellRun`] ended and what it printed.
pub struct ShellDone {
    /// Exited, timed out or cancelled.
    pub end: End,
    /// Exit code (128 + signal when killed by a signal).
    pub exit_code: Option<i32>,
    /// Captured stdout.
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// What the script wrote on [`super::REPORT_FD`], when [`ShellRun::report`] asked for it.
    pub report: Option<String>,
}

/// Why a [`ShellRun`] produced no result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The shell could not be started (reportable to whoever asked for the run): the command
    /// did not run at all.
    #[error(
        "runner could not start the command ({0}); it did not run, so nothing it would have done happened"
    )]
    Spawn(std::io::Error),
    /// Output could not be written to the spill directory (runner's own output is broken).
    #[error("{0}")]
    Output(String),
}

/// Run a script to completion, timeout or cancellation; nothing of it outlives the call.
/// Blocks the calling thread.
pub fn run_shell(r: ShellRun<'_>) -> Result<ShellDone, RunError> {
    std::fs::create_dir_all(r.spill_dir)
        .map_err(|e| RunError::Output(format!("cannot create {}: {e}", r.spill_dir.display())))?;
    let pipe = if r.report {
        Some(report_channel().map_err(RunError::Spawn)?)
    } else {
        None
    };
    // A script whose start is announced first waits for runner's go on the report channel;
    // end of file there (runner gone before it said go) ends it before it does anything.
    let gated = r.on_spawn.is_some() && pipe.is_some();
    let script = if gated {
        format!(
            "IFS= read -r _ <&{fd} || exit {GATE_CLOSED}\n{}",
            r.script,
            fd = super::REPORT_FD
        )
    } else {
        r.script.to_string()
    };
    let mut child = spawn(&Spawn {
        program: Program::Shell(&script),
        cwd: r.cwd,
        env: r.env,
        inherit_env: true,
        extra_env: r.extra_env,
        stdin: false,
        scope: r.scope,
        report_fd: pipe.as_ref().map(|(_, w)| w.as_raw_fd()),
    })
    .map_err(RunError::Spawn)?;
    if let Some(started) = r.on_spawn {
        started(child.pgid().and_then(GroupIdentity::read));
    }
    if gated && let Some((ours, _)) = &pipe {
        say_go(ours);
    }
    // The child holds its own copy of its end now.
    let report_reader = pipe.map(|(r, _w)| r);
    let stop = Cancel::new();
    let (tx, rx) = mpsc::channel();
    let readers = [
        (child.inner.stdout.take().map(OwnedFd::from), "stdout"),
        (child.inner.stderr.take().map(OwnedFd::from), "stderr"),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (reader, stream))| {
        let path = r.spill_dir.join(format!("{}.{stream}", r.spill_name));
        let (tx, stop) = (tx.clone(), stop.clone());
        std::thread::Builder::new()
            .name(format!("runner-{stream}"))
            .spawn(move || {
                let _ = tx.send((i, capture(reader, path, &stop)));
            })
    })
    .collect::<Result<Vec<_>, _>>();
    drop(tx);
    if let Err(e) = readers {
        // The child (dropped) is killed with its group.
        stop.cancel();
        return Err(RunError::Output(format!(
            "cannot start a reader of the command's output: {e}"
        )));
    }
    let end = match child.wait_until(Instant::now() + r.timeout, r.cancel) {
        Waited::Exited(s) => End::Exited(s),
        Waited::TimedOut => End::TimedOut,
        Waited::Cancelled => End::Cancelled,
        Waited::Failed(e) => {
            tracing::warn!(error = %e, "waiting for bash failed");
            End::Cancelled
        }
    };
    if r.cancel.is_abandoned() {
        child.kill_group();
    } else {
        child.stop_group(KILL_GRACE);
    }
    let status = match &end {
        End::Exited(s) => Some(*s),
        _ => child.inner.wait().ok(),
    };
    // Readers end when the pipes close; a process that escaped the group may keep them open.
    let [stdout, mut stderr] = join_captures(&rx, &stop)?;
    if child.left_behind() > 0 {
        stderr
            .text
            .push_str(&super::orphans::left_behind_note(child.left_behind()));
    }
    let report = report_reader.and_then(read_report);
    for c in [&stdout, &stderr] {
        if let Some(p) = &c.spill_path
            && let Err(e) = super::filter_spill(p)
        {
            return Err(RunError::Output(format!(
                "cannot redact secrets in {}: {e}",
                p.display()
            )));
        }
    }
    let exit_code = status.map(|s| s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)));
    Ok(ShellDone {
        end,
        exit_code,
        stdout,
        stderr,
        report,
    })
}

/// The exit code of a gated script whose go never came (runner ended first).
const GATE_CLOSED: i32 = 125;

/// The report channel: runner's end and the script's (a stream socket pair, both ends
/// close-on-exec; the script's is moved to [`super::REPORT_FD`] by the spawn). The script
/// writes its report on it, and a gated script reads runner's go from it first.
fn report_channel() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned here alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Tell a gated script to go (one line on runner's end of the report channel). A failure
/// leaves the script to end at its read, as if runner had gone.
fn say_go(ours: &OwnedFd) {
    // SAFETY: sends one byte from a live buffer on a socket owned by the caller (no SIGPIPE).
    let n = unsafe {
        libc::send(
            ours.as_raw_fd(),
            b"\n".as_ptr().cast(),
            1,
            libc::MSG_NOSIGNAL,
        )
    };
    if n != 1 {
        tracing::warn!(
            error = %std::io::Error::last_os_error(),
            "could not tell the command to start; it ends without running"
        );
    }
}

/// What the script reported: everything written on the channel until every copy of the
/// script's end closed (the process group is gone by now), or [`READER_GRACE`] passed.
fn read_report(fd: OwnedFd) -> Option<String> {
    use std::io::Read;
    let mut rx = std::os::unix::net::UnixStream::from(fd);
    let deadline = Instant::now() + READER_GRACE;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            tracing::debug!("report pipe still open after the command ended; using what it sent");
            break;
        }
        rx.set_read_timeout(Some(left)).ok()?;
        match rx.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) if buf.len() < 64 * 1024 => buf.extend_from_slice(&chunk[..n]),
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                tracing::debug!(
                    "report pipe still open after the command ended; using what it sent"
                );
                break;
            }
            Err(_) => break,
        }
    }
    (!buf.is_empty()).then(|| String::from_utf8_lossy(&buf).into_owned())
}

/// Both streams' captures, in order: the readers get [`READER_GRACE`] to see their pipes
/// close, then are stopped. A reader that died leaves its stream empty.
fn join_captures(
    rx: &mpsc::Receiver<(usize, Result<Captured, SpillError>)>,
    stop: &Cancel,
) -> Result<[Captured; 2], RunError> {
    let linger = Instant::now() + READER_GRACE;
    let mut got: [Option<Captured>; 2] = [None, None];
    loop {
        let next = if stop.is_cancelled() {
            rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(linger.saturating_duration_since(Instant::now()))
        };
        match next {
            Ok((i, Ok(c))) => got[i] = Some(c),
            Ok((_, Err(e))) => {
                stop.cancel();
                return Err(RunError::Output(e.to_string()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => stop.cancel(),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(got.map(|c| {
        c.unwrap_or_else(|| {
            tracing::warn!("output reader failed");
            Captured::default()
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An announced script does nothing until the announcement is made, however long that
    /// takes; its report still arrives on the same channel.
    #[test]
    fn an_announced_script_waits_for_its_announcement() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("acted");
        let script = format!(
            "touch {}; printf done >&{}",
            marker.display(),
            super::super::REPORT_FD
        );
        let seen = std::sync::Mutex::new(None);
        let announce = |group: Option<GroupIdentity>| {
            std::thread::sleep(Duration::from_millis(300));
            *seen.lock().unwrap() = Some((group.is_some(), marker.exists()));
        };
        let done = run_shell(ShellRun {
            script: &script,
            cwd: dir.path(),
            env: &ChildPolicy::default(),
            extra_env: &[],
            timeout: Duration::from_secs(30),
            cancel: &Cancel::new(),
            spill_dir: &dir.path().join("spill"),
            spill_name: "t",
            scope: Scope::Write,
            report: true,
            on_spawn: Some(&announce),
        })
        .unwrap();
        assert_eq!(done.exit_code, Some(0), "{}", done.stderr.text);
        assert_eq!(
            *seen.lock().unwrap(),
            Some((true, false)),
            "acted before its announcement"
        );
        assert!(marker.exists());
        assert_eq!(done.report.as_deref(), Some("done"));
    }
}
