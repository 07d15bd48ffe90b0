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
    /// Told the started group as soon as the shell runs (before its output is read), so a
    /// side-effecting call is on record while it runs.
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
        Some(report_pipe().map_err(RunError::Spawn)?)
    } else {
        None
    };
    let mut child = spawn(&Spawn {
        program: Program::Shell(r.script),
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
    // The child holds its own copy of the write end now.
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

/// A pipe for [`super::REPORT_FD`]: (read end, write end), both close-on-exec (the child's
/// `dup2` copy is not).
fn report_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are owned here alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// What the script reported: everything written on the pipe until every writer closed it
/// (the process group is gone by now), or [`READER_GRACE`] passed.
async fn read_report(fd: OwnedFd) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut rx = tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()?;
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
