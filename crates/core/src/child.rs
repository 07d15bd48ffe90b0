//! The async face of runner-exec's blocking process API, for the tools, hooks, verify checks
//! and MCP servers: a shell run on a blocking thread that a [`CancellationToken`] stops (and
//! that dropping its future kills), and a started child whose pipes are tokio's and whose exit
//! is awaited through its pidfd.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio_util::sync::CancellationToken;

use crate::process::identity::GroupIdentity;
use crate::process::run::{RunError, ShellDone, ShellRun};
use crate::process::{self, ChildPolicy, Spawn};
use runner_exec::cancel::Cancel;
use runner_protocol::Scope;

/// How often the exit of a child is looked at where the kernel gives no pidfd.
const EXIT_TICK: Duration = Duration::from_millis(20);

/// What a shell run announces as soon as its shell runs (see [`ShellRun::on_spawn`]).
pub(crate) type OnSpawn = Box<dyn Fn(Option<GroupIdentity>) + Send + Sync>;

/// A shell script to run (the owned form of [`ShellRun`], for a run on another thread).
pub(crate) struct ShellJob {
    /// Script for `bash -c`.
    pub(crate) script: String,
    /// Working directory.
    pub(crate) cwd: PathBuf,
    /// The environment and confinement of the child.
    pub(crate) env: ChildPolicy,
    /// Variables added to the environment.
    pub(crate) extra_env: Vec<(String, String)>,
    /// Time limit.
    pub(crate) timeout: Duration,
    /// Where long output is spilled.
    pub(crate) spill_dir: PathBuf,
    /// File name stem for spilled output.
    pub(crate) spill_name: String,
    /// What the script may do.
    pub(crate) scope: Scope,
    /// Whether the script reports a line on the report descriptor.
    pub(crate) report: bool,
    /// Told the started group before the script does anything.
    pub(crate) on_spawn: Option<OnSpawn>,
}

/// Abandons the run when dropped unarmed: a caller that stops waiting kills the command.
struct AbandonOnDrop(Option<Cancel>);

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.abandon();
        }
    }
}

/// Run `job` to completion, timeout or cancellation (`cancel`) on a blocking thread, logging
/// where the calling task logs. Dropping the future kills the command and everything it
/// started.
pub(crate) async fn run_shell(
    job: ShellJob,
    cancel: &CancellationToken,
) -> Result<ShellDone, RunError> {
    let stop = Cancel::new();
    let mut abandon = AbandonOnDrop(Some(stop.clone()));
    let worker_stop = stop.clone();
    let work = tokio::task::spawn_blocking(crate::log::carried(move || {
        process::run::run_shell(ShellRun {
            script: &job.script,
            cwd: &job.cwd,
            env: &job.env,
            extra_env: &job.extra_env,
            timeout: job.timeout,
            cancel: &worker_stop,
            spill_dir: &job.spill_dir,
            spill_name: &job.spill_name,
            scope: job.scope,
            report: job.report,
            on_spawn: job
                .on_spawn
                .as_ref()
                .map(|f| f.as_ref() as &(dyn Fn(Option<GroupIdentity>) + Sync)),
        })
    }));
    tokio::pin!(work);
    let joined = tokio::select! {
        r = &mut work => r,
        _ = cancel.cancelled() => {
            stop.cancel();
            (&mut work).await
        }
    };
    abandon.0 = None;
    joined.map_err(|e| RunError::Output(format!("the command's worker failed: {e}")))?
}

/// A started child ([`process::Child`]) with tokio pipes, its exit awaited through its pidfd.
/// Dropped, it kills its group.
pub(crate) struct AsyncChild {
    /// The child (taken only while a blocking stop runs on another thread).
    child: Option<process::Child>,
    /// Its stdin, when it got a pipe.
    pub(crate) stdin: Option<ChildStdin>,
    /// Its stdout.
    pub(crate) stdout: Option<ChildStdout>,
    /// Its stderr.
    pub(crate) stderr: Option<ChildStderr>,
    /// Readable once the process has exited (a copy of the child's pidfd).
    exit: Option<AsyncFd<OwnedFd>>,
}

/// Start a child as `s` describes ([`process::spawn`]), its pipes registered with the
/// runtime. Must be called within a tokio runtime.
pub(crate) fn spawn(s: &Spawn<'_>) -> std::io::Result<AsyncChild> {
    let mut child = process::spawn(s)?;
    let stdin = child
        .inner
        .stdin
        .take()
        .map(ChildStdin::from_std)
        .transpose()?;
    let stdout = child
        .inner
        .stdout
        .take()
        .map(ChildStdout::from_std)
        .transpose()?;
    let stderr = child
        .inner
        .stderr
        .take()
        .map(ChildStderr::from_std)
        .transpose()?;
    let exit = child
        .pidfd()
        .and_then(|fd| fd.try_clone_to_owned().ok())
        .and_then(|fd| {
            // SAFETY: an OwnedFd is open until dropped, and always returns the same descriptor;
            // the AsyncFd owns it.
            unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()
        });
    Ok(AsyncChild {
        child: Some(child),
        stdin,
        stdout,
        stderr,
        exit,
    })
}

impl AsyncChild {
    /// The exit status, if the process has exited (reaping it).
    pub(crate) fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        match self.child.as_mut() {
            Some(c) => c.inner.try_wait(),
            None => Ok(None),
        }
    }

    /// Wait for the process to exit (and reap it).
    pub(crate) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        if self.child.is_none() {
            return Err(std::io::Error::other(
                "the process was stopped by a worker that failed",
            ));
        }
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            match &self.exit {
                Some(fd) => {
                    let mut ready = fd.readable().await?;
                    // Exited means reapable; a readiness without it is looked at again.
                    let reaped = match self.child.as_mut() {
                        Some(c) => c.inner.try_wait()?,
                        None => None,
                    };
                    match reaped {
                        Some(status) => return Ok(status),
                        None => ready.clear_ready(),
                    }
                }
                None => tokio::time::sleep(EXIT_TICK).await,
            }
        }
    }

    /// Stop every process in the group: SIGTERM, up to `grace` for them to go, then SIGKILL
    /// (on a blocking thread).
    pub(crate) async fn stop_group(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let stopped = tokio::task::spawn_blocking(crate::log::carried(move || {
            child.stop_group(grace);
            child
        }))
        .await;
        // A worker that failed dropped the child, which killed its group.
        self.child = stopped.ok();
    }

    /// SIGKILL every process in the group at once.
    pub(crate) fn kill_group(&mut self) {
        if let Some(c) = self.child.as_mut() {
            c.kill_group();
        }
    }
}
