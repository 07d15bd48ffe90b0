//! Run a shell script as a child (through [`super::spawn`]) to its end, its time limit or its
//! cancellation, with both output streams captured ([`super::capture`]); nothing of it outlives
//! the call. Used by the Bash tool and verify checks.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::capture::{Captured, SpillError, capture};
use super::identity::GroupIdentity;
use super::{ChildPolicy, KILL_GRACE, Program, Spawn, spawn};
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
    /// Stops the command (the whole group is killed).
    pub cancel: &'a CancellationToken,
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
pub async fn run_shell(r: ShellRun<'_>) -> Result<ShellDone, RunError> {
    tokio::fs::create_dir_all(r.spill_dir)
        .await
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
    let stop = CancellationToken::new();
    let out_task = tokio::spawn(capture(
        child.inner.stdout.take(),
        r.spill_dir.join(format!("{}.stdout", r.spill_name)),
        stop.clone(),
    ));
    let err_task = tokio::spawn(capture(
        child.inner.stderr.take(),
        r.spill_dir.join(format!("{}.stderr", r.spill_name)),
        stop.clone(),
    ));
    let end = tokio::select! {
        status = child.inner.wait() => match status {
            Ok(s) => End::Exited(s),
            Err(e) => {
                tracing::warn!(error = %e, "waiting for bash failed");
                End::Cancelled
            }
        },
        _ = tokio::time::sleep(r.timeout) => End::TimedOut,
        _ = r.cancel.cancelled() => End::Cancelled,
    };
    child.stop_group(KILL_GRACE).await;
    let status = match &end {
        End::Exited(s) => Some(*s),
        _ => child.inner.wait().await.ok(),
    };
    // Readers end when the pipes close; a process that escaped the group may keep them open.
    let stopper = stop.clone();
    let linger = tokio::spawn(async move {
        tokio::time::sleep(READER_GRACE).await;
        stopper.cancel();
    });
    let stdout = join_capture(out_task).await?;
    let mut stderr = join_capture(err_task).await?;
    if child.left_behind() > 0 {
        stderr
            .text
            .push_str(&super::orphans::left_behind_note(child.left_behind()));
    }
    let report = match report_reader {
        Some(r) => read_report(r).await,
        None => None,
    };
    linger.abort();
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
async fn read_report(fd: OwnedFd) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let std_stream = std::os::unix::net::UnixStream::from(fd);
    std_stream.set_nonblocking(true).ok()?;
    let mut rx = tokio::net::UnixStream::from_std(std_stream).ok()?;
    let mut buf = Vec::new();
    let read = tokio::time::timeout(READER_GRACE, async {
        let mut chunk = [0u8; 4096];
        loop {
            match rx.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) if buf.len() < 64 * 1024 => buf.extend_from_slice(&chunk[..n]),
                Ok(_) => break,
            }
        }
    })
    .await;
    if read.is_err() {
        tracing::debug!("report pipe still open after the command ended; using what it sent");
    }
    (!buf.is_empty()).then(|| String::from_utf8_lossy(&buf).into_owned())
}

async fn join_capture(
    task: tokio::task::JoinHandle<Result<Captured, SpillError>>,
) -> Result<Captured, RunError> {
    match task.await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(RunError::Output(e.to_string())),
        Err(e) => {
            tracing::warn!(error = %e, "output reader failed");
            Ok(Captured::default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An announced script does nothing until the announcement is made, however long that
    /// takes; its report still arrives on the same channel.
    #[tokio::test]
    async fn an_announced_script_waits_for_its_announcement() {
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
            cancel: &CancellationToken::new(),
            spill_dir: &dir.path().join("spill"),
            spill_name: "t",
            scope: Scope::Write,
            report: true,
            on_spawn: Some(&announce),
        })
        .await
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
