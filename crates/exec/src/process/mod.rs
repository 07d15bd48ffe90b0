//! Every child process runner starts — the Bash tool's commands, hooks, verify checks, MCP
//! servers — is started by [`spawn`], the one place that decides how a child is made: its
//! environment (secrets removed by the [`ChildPolicy`], or only [`BASE_ENV`] for a child that
//! gets nothing else), its confinement (the task's sandbox, for the
//! permission scope the call was allowed with), its own process group (so it and everything
//! it starts can be stopped together), stdout and stderr captured, and killed if its handle is
//! dropped. Every live group is registered, so an interrupted run can kill what is left
//! ([`kill_all`]).
//!
//! Everything here blocks the calling thread (waits end early through a [`Cancel`]); an async
//! caller runs it on a thread of its own and polls the child's pipes and its
//! [`Child::pidfd`] itself.
//!
//! - [`run`]: run a shell script to its end, timeout or cancellation, with bounded capture.
//! - [`capture`]: bounded capture of an output stream (head and tail kept, the rest spilled).
//! - [`identity`]: a started group as the transcript records it, so a resumed run can kill
//!   what an earlier, killed run left running.

pub mod capture;
pub mod git_env;
pub mod identity;
pub mod orphans;
pub mod run;

use std::collections::HashSet;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::cancel::{Cancel, FALLBACK_TICK, wait_readable};
use crate::sandbox::Sandbox;
use runner_protocol::Scope;

/// What is done to a file of spilled output before anyone reads it (runner: redact the
/// secrets it knows), set once for the process by [`set_spill_filter`].
static SPILL_FILTER: std::sync::OnceLock<fn(&Path) -> std::io::Result<()>> =
    std::sync::OnceLock::new();

/// Have `filter` rewrite every file of spilled command output in place before anyone reads it
/// (the first filter set stays). runner sets its redaction here, so output a command wrote
/// to disk holds no secret.
pub fn set_spill_filter(filter: fn(&Path) -> std::io::Result<()>) {
    let _ = SPILL_FILTER.set(filter);
}

/// Apply the spill filter to `path`, when one is set.
fn filter_spill(path: &Path) -> std::io::Result<()> {
    match SPILL_FILTER.get() {
        Some(f) => f(path),
        None => Ok(()),
    }
}

/// Time between SIGTERM and SIGKILL when a process group is stopped.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// What every child of a task gets: its environment without the task's secrets, its sandbox,
/// and the workspace's repository for git in read-only children.
#[derive(Clone, Default)]
pub struct ChildPolicy {
    /// Names removed from child environments (secrets, API keys, GITHUB_TOKEN).
    pub remove: Vec<String>,
    /// The task's sandbox (None: children run unconfined, e.g. a verify check with
    /// `sandbox: off`).
    pub sandbox: Option<Arc<Sandbox>>,
    /// The workspace's repository root (or the workdir): git in a read-only child finds no
    /// repository above it and trusts it whoever owns it (see [`git_env::read_only_env`]).
    pub git_workspace: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for ChildPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildPolicy")
            .field("remove", &self.remove)
            .field("sandbox", &self.sandbox.as_ref().map(|s| s.report()))
            .field("git_workspace", &self.git_workspace)
            .finish()
    }
}

impl ChildPolicy {
    /// The same policy without the sandbox.
    pub fn unconfined(&self) -> ChildPolicy {
        ChildPolicy {
            remove: self.remove.clone(),
            sandbox: None,
            git_workspace: self.git_workspace.clone(),
        }
    }

    /// Remove the secrets from the child's environment.
    fn remove_secrets(&self, cmd: &mut std::process::Command) {
        for name in &self.remove {
            cmd.env_remove(name);
        }
    }

    /// The sandbox's confinement (when there is one) for `scope`, with its variables set on
    /// `cmd`; [`enter_in_child`] has the child enter it.
    fn confine(
        &self,
        cmd: &mut std::process::Command,
        scope: Scope,
    ) -> std::io::Result<Option<crate::sandbox::Confinement>> {
        let Some(sandbox) = &self.sandbox else {
            return Ok(None);
        };
        let Some(confinement) = sandbox.confine(scope).map_err(std::io::Error::other)? else {
            return Ok(None);
        };
        for (k, v) in &confinement.env {
            cmd.env(k, v);
        }
        for k in &confinement.remove {
            cmd.env_remove(k);
        }
        Ok(Some(confinement))
    }
}

/// Have the child enter `confinement` between fork and exec. Called once `cmd`'s program,
/// arguments and environment are complete: a confinement that starts the command itself
/// (namespaces) is given its image here, with the report descriptor `report_fd`.
fn enter_in_child(
    cmd: &mut std::process::Command,
    mut confinement: crate::sandbox::Confinement,
    inherit_env: bool,
    report_fd: Option<std::os::fd::RawFd>,
) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    if confinement.execs() {
        let mut image = crate::sandbox::exec_image::ExecImage::new(cmd, inherit_env)?;
        if let Some(fd) = report_fd {
            image = image.with_fd(fd, REPORT_FD);
        }
        confinement.set_exec(image);
        // The standard library never `exec`s this command (the confinement does, from the
        // image): it need not copy the environment for it.
        cmd.env_clear();
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (inherit_env, report_fd);
    // SAFETY: `enter` makes only system calls (namespaces, Landlock, prctl, seccomp, and with
    // namespaces `clone` and `exec`), and allocates nothing: it is safe between fork and exec.
    unsafe {
        cmd.pre_exec(move || confinement.enter());
    }
    Ok(())
}

/// What a child runs.
#[derive(Debug, Clone, Copy)]
pub enum Program<'a> {
    /// `bash -c SCRIPT`.
    Shell(&'a str),
    /// A program and its arguments, with no shell in between.
    Exec {
        /// The program (looked up on PATH when it has no `/`).
        program: &'a str,
        /// Its arguments.
        args: &'a [String],
    },
}

/// A child process to start.
#[derive(Debug, Clone, Copy)]
pub struct Spawn<'a> {
    /// What it runs.
    pub program: Program<'a>,
    /// Its working directory.
    pub cwd: &'a Path,
    /// Variables removed from the environment it inherits.
    pub env: &'a ChildPolicy,
    /// Whether it inherits runner's environment (less the secrets); when false it starts from
    /// the [`BASE_ENV`] variables alone (a long-lived server that gets only what its spec names).
    pub inherit_env: bool,
    /// Variables set for it (after the removals).
    pub extra_env: &'a [(String, String)],
    /// Whether it gets a pipe on stdin (else /dev/null).
    pub stdin: bool,
    /// What it may do: read only, or write in the workspace.
    pub scope: Scope,
    /// An open file descriptor the child gets as [`REPORT_FD`] (a pipe it reports on).
    pub report_fd: Option<std::os::fd::RawFd>,
}

/// What a child that does not inherit runner's environment ([`Spawn::inherit_env`] false)
/// still gets, when set: enough to find programs and run them in the user's locale.
pub const BASE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM",
];

/// The descriptor number a child gets [`Spawn::report_fd`] as.
pub const REPORT_FD: std::os::fd::RawFd = 62;

/// A started child: the leader of its own process group. Dropped, it kills its group.
pub struct Child {
    /// The process (stdout and stderr piped; stdin piped when asked for).
    pub inner: std::process::Child,
    /// A descriptor that becomes readable when the process exits (Linux 5.3 and newer).
    pidfd: Option<OwnedFd>,
    pgid: Option<Pid>,
    /// The call id its processes carry ([`orphans::CALL_VAR`]), until the call is over.
    call: Option<u64>,
    /// How many processes it left running that runner killed when it ended.
    left_behind: u32,
}

/// Process groups started and not yet known to be gone.
static LIVE_GROUPS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

fn live_groups(f: impl FnOnce(&mut HashSet<i32>)) {
    let mut g = LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(HashSet::new));
}

/// Start a child as `s` describes, in its own process group.
pub fn spawn(s: &Spawn<'_>) -> std::io::Result<Child> {
    let mut cmd = match s.program {
        Program::Shell(script) => {
            let mut c = std::process::Command::new("bash");
            c.arg("-c").arg(script);
            c
        }
        Program::Exec { program, args } => {
            let mut c = std::process::Command::new(program);
            c.args(args);
            c
        }
    };
    cmd.current_dir(s.cwd)
        .stdin(if s.stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A session of its own (so a group of its own, led by the child): no controlling terminal,
    // so nothing it runs can push input into the user's terminal (TIOCSTI) or read from it.
    // SAFETY: setsid is async-signal-safe; it runs in the child between fork and exec, first.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    if s.inherit_env {
        s.env.remove_secrets(&mut cmd);
        // Sockets to agents and daemons (the SSH agent, Docker): a confined command's sandbox
        // gives back those the spec opted in.
        for name in crate::sandbox::SOCKET_VARS {
            cmd.env_remove(name);
        }
        if matches!(s.program, Program::Shell(_)) {
            // `cd DIR` must go where the permission policy expects, not to `$CDPATH/DIR`.
            cmd.env_remove("CDPATH");
        }
        if s.scope == Scope::ReadOnly {
            // Allowed with no rule: git reads no global configuration and runs none of the
            // programs repository configuration can name; read-only programs read no
            // configuration files of their own.
            for name in git_env::REMOVED {
                cmd.env_remove(name);
            }
            for (k, v) in git_env::read_only_env(s.env.git_workspace.as_deref()) {
                cmd.env(k, v);
            }
        }
    } else {
        cmd.env_clear();
        for name in BASE_ENV {
            if let Some(v) = std::env::var_os(name) {
                cmd.env(name, v);
            }
        }
    }
    for (k, v) in s.extra_env {
        cmd.env(k, v);
    }
    let call = orphans::begin();
    cmd.env(orphans::CALL_VAR, call.to_string());
    let confined = s.env.confine(&mut cmd, s.scope).and_then(|c| match c {
        Some(c) => enter_in_child(&mut cmd, c, s.inherit_env, s.report_fd),
        None => Ok(()),
    });
    if let Err(e) = confined {
        orphans::forget(call);
        return Err(e);
    }
    if let Some(fd) = s.report_fd {
        // Registered after the confinement, so it runs last before exec: the confinement still
        // needs its ruleset's descriptor, which may have any number, REPORT_FD included; once
        // it is applied, no descriptor but the child's stdio matters any more. (A confinement
        // that starts the command itself does the same, last.)
        // SAFETY: `install_report_fd` makes only the dup2 and fcntl system calls, which are
        // async-signal-safe; it runs in the child between fork and exec.
        unsafe {
            cmd.pre_exec(move || install_report_fd(fd));
        }
    }
    let spawning = orphans::SPAWNING.read().unwrap_or_else(|e| e.into_inner());
    let inner = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if spawn_may_retry(&e) => {
            tracing::warn!(error = %e, "starting a command failed; trying once more");
            match cmd.spawn() {
                Ok(c) => c,
                Err(e) => {
                    orphans::forget(call);
                    return Err(e);
                }
            }
        }
        Err(e) => {
            orphans::forget(call);
            return Err(e);
        }
    };
    let pgid = Pid::from_raw(inner.id() as i32);
    live_groups(|g| {
        g.insert(pgid.as_raw());
    });
    drop(spawning);
    Ok(Child {
        pidfd: pidfd_open(inner.id()),
        inner,
        pgid: Some(pgid),
        call: Some(call),
        left_behind: 0,
    })
}

/// Give the child `fd` as [`REPORT_FD`], inheritable across exec. Runs between fork and exec.
fn install_report_fd(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    if fd == REPORT_FD {
        // dup2 onto itself changes nothing, close-on-exec included: clear that flag instead.
        // SAFETY: fcntl on a descriptor the child holds; async-signal-safe.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        return Ok(());
    }
    // SAFETY: dup2 of a descriptor the child holds; async-signal-safe. The copy is not
    // close-on-exec.
    if unsafe { libc::dup2(fd, REPORT_FD) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether a failed start may be runner's own, passing trouble (a descriptor, memory or process
/// table running short, the confinement failing to apply) rather than the program's: then it
/// is tried once more. A missing or unexecutable program (`ENOENT`, `EACCES`, `ENOEXEC`,
/// `ENOTDIR`) is not. `ECHILD` is no program's answer to being started: it is a failure of
/// runner's own start-up whose `errno` was overwritten (see the sandbox's namespace init).
fn spawn_may_retry(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::EPERM
                | libc::EBADF
                | libc::EBADFD
                | libc::EMFILE
                | libc::ENFILE
                | libc::EAGAIN
                | libc::ENOMEM
                | libc::EINTR
                | libc::ECHILD
        )
    )
}

impl Child {
    /// The process group id (the child's pid), while known.
    pub fn pgid(&self) -> Option<i32> {
        self.pgid.map(Pid::as_raw)
    }

    /// Whether any process of the group still runs (reaping the leader first; a zombie no
    /// one reaps — a grandchild whose parent died, in a container whose init does not reap —
    /// does not count).
    fn group_alive(&mut self, pgid: Pid) -> bool {
        let _ = self.inner.try_wait();
        if matches!(killpg(pgid, None), Err(Errno::ESRCH)) {
            return false;
        }
        group_has_running_member(pgid.as_raw())
    }

    /// Stop every process in the group: SIGTERM, up to `grace` for them to go, then SIGKILL.
    /// Blocks the calling thread up to `grace`.
    pub fn stop_group(&mut self, grace: Duration) {
        let Some(pgid) = self.pgid else {
            return;
        };
        if self.group_alive(pgid) {
            tracing::debug!(pgid = pgid.as_raw(), "stopping process group");
            let _ = killpg(pgid, Signal::SIGTERM);
            let start = Instant::now();
            let mut gone = false;
            while start.elapsed() < grace {
                std::thread::sleep(Duration::from_millis(20));
                if !self.group_alive(pgid) {
                    gone = true;
                    break;
                }
            }
            if !gone {
                tracing::debug!(
                    pgid = pgid.as_raw(),
                    "process group ignored SIGTERM; SIGKILL"
                );
                let _ = killpg(pgid, Signal::SIGKILL);
            }
        }
        self.forget();
    }

    /// A descriptor that becomes readable once the process has exited (then
    /// [`std::process::Child::try_wait`] reaps it), where the kernel gives one: for a caller
    /// that waits on it in its own event loop.
    pub fn pidfd(&self) -> Option<BorrowedFd<'_>> {
        self.pidfd.as_ref().map(AsFd::as_fd)
    }

    /// Block until the process exits (and is reaped), `deadline` passes or `cancel` is set,
    /// whichever comes first.
    pub fn wait_until(&mut self, deadline: Instant, cancel: &Cancel) -> Waited {
        loop {
            match self.inner.try_wait() {
                Ok(Some(status)) => return Waited::Exited(status),
                Ok(None) => {}
                Err(e) => return Waited::Failed(e),
            }
            if cancel.is_cancelled() {
                return Waited::Cancelled;
            }
            if Instant::now() >= deadline {
                return Waited::TimedOut;
            }
            // Without a descriptor for the exit or for the flag, look again every tick.
            let until = if self.pidfd.is_some() && cancel.fd().is_some() {
                deadline
            } else {
                deadline.min(Instant::now() + FALLBACK_TICK)
            };
            if let Err(e) = wait_readable(&[self.pidfd(), cancel.fd()], Some(until)) {
                return Waited::Failed(e);
            }
        }
    }

    /// SIGKILL every process in the group at once.
    pub fn kill_group(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
        self.forget();
    }

    /// How many processes the child left running that runner killed when it ended (those
    /// that escaped its process group; see [`orphans`]).
    pub fn left_behind(&self) -> u32 {
        self.left_behind
    }

    fn forget(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            live_groups(|g| {
                g.remove(&pgid.as_raw());
            });
        }
        if let Some(call) = self.call.take() {
            self.left_behind += orphans::end(call, || {
                let mut leaders = HashSet::new();
                live_groups(|g| leaders.clone_from(g));
                leaders
            });
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // A handle dropped without being stopped (its task was cancelled): nothing of the
        // group outlives it.
        self.kill_group();
        if !matches!(self.inner.try_wait(), Ok(None)) {
            return;
        }
        // Killed but not yet gone: reaped through its pidfd by a thread of its own rather than
        // left a zombie (without a pidfd, the next sweep of orphans reaps it).
        let Some(pidfd) = self.pidfd.take() else {
            return;
        };
        let reaper = std::thread::Builder::new()
            .name("runner-reap".into())
            .spawn(move || reap_pidfd(&pidfd));
        if let Err(e) = reaper {
            tracing::debug!(error = %e, "no thread to reap a killed command; the next sweep does");
        }
    }
}

/// Wait for and reap the process `pidfd` stands for (`waitid(P_PIDFD)`, Linux 5.4).
fn reap_pidfd(pidfd: &OwnedFd) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: an all-zero siginfo_t is valid; waitid fills it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on a pidfd owned by the caller, writing one siginfo_t.
        unsafe {
            libc::waitid(
                libc::P_PIDFD,
                pidfd.as_raw_fd() as libc::id_t,
                &mut info,
                libc::WEXITED,
            )
        };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pidfd;
}

/// How a [`Child::wait_until`] ended.
#[derive(Debug)]
pub enum Waited {
    /// The process exited (and was reaped).
    Exited(ExitStatus),
    /// The deadline passed first.
    TimedOut,
    /// The [`Cancel`] was set first.
    Cancelled,
    /// Waiting failed.
    Failed(std::io::Error),
}

/// A descriptor for the exit of process `pid` (runner's own, unreaped child, so the pid
/// cannot name another process yet), where the kernel has `pidfd_open` (Linux 5.3).
fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open with integer arguments; it returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if fd >= 0 {
            // SAFETY: the descriptor was just opened (close-on-exec) and is owned here alone.
            return Some(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Whether a process of group `pgid` is in any state but zombie (`/proc/<pid>/stat`); true
/// when `/proc` cannot be read, so the caller keeps waiting rather than assume the worst.
fn group_has_running_member(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.as_encoded_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // state (3), ppid (4), pgrp (5).
        let Some(mut f) = stat_fields(&stat) else {
            continue;
        };
        let state = f.next().unwrap_or("Z");
        let pgrp = f.nth(1).and_then(|p| p.parse::<i32>().ok());
        if pgrp == Some(pgid) && state != "Z" {
            return true;
        }
    }
    false
}

/// The fields of a `/proc/<pid>/stat` line from field 3 (state) on. The command name before
/// them (field 2) may hold spaces and parentheses, so they start after its last `)`.
fn stat_fields(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(stat.rsplit_once(") ")?.1.split_whitespace())
}

/// Kill what the commands of finished calls left running and was re-parented to runner after
/// their call ended (see [`orphans`]); returns how many. For the end of a run.
pub fn stop_orphans() -> u32 {
    orphans::sweep_finished(|| {
        let mut leaders = HashSet::new();
        live_groups(|g| leaders.clone_from(g));
        leaders
    })
}

/// SIGKILL every process group runner started that may still be running (for a run that ends
/// before its tasks could stop their children).
pub fn kill_all() {
    live_groups(|g| {
        for pgid in g.drain() {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::spawn_may_retry;

    #[test]
    fn runner_own_start_failures_are_tried_again_the_program_s_are_not() {
        let e = std::io::Error::from_raw_os_error;
        for retried in [
            libc::EAGAIN,
            libc::EMFILE,
            libc::ENOMEM,
            libc::EINTR,
            libc::ECHILD,
        ] {
            assert!(spawn_may_retry(&e(retried)), "{retried}");
        }
        for final_ in [libc::ENOENT, libc::EACCES, libc::ENOEXEC, libc::ENOTDIR] {
            assert!(!spawn_may_retry(&e(final_)), "{final_}");
        }
    }
}
