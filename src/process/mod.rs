//! Every child process runner starts — the Bash tool's commands, hooks, verify checks — is
//! started by [`spawn`], the one place that decides how a child is made: its environment
//! (secrets removed by the [`EnvPolicy`]), its own process group (so it and everything it
//! starts can be stopped together), stdout and stderr captured, and killed if its handle is
//! dropped. Every live group is registered, so an interrupted run can kill what is left
//! ([`kill_all`]).
//!
//! - [`run`]: run a shell script to its end, timeout or cancellation, with bounded capture.
//! - [`capture`]: bounded capture of an output stream (head and tail kept, the rest spilled).

pub mod capture;
pub mod git_env;
pub mod run;

use std::collections::HashSet;
use std::path::Path;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::permissions::Scope;

/// Time between SIGTERM and SIGKILL when a process group is stopped.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// Which environment variables child processes must not see, and the workspace's repository
/// for git in read-only children.
#[derive(Debug, Clone, Default)]
pub struct EnvPolicy {
    /// Names removed from child environments (secrets, API keys, GITHUB_TOKEN).
    pub remove: Vec<String>,
    /// The workspace's repository root (or the workdir): git in a read-only child finds no
    /// repository above it and trusts it whoever owns it (see [`git_env::read_only_env`]).
    pub git_workspace: Option<std::path::PathBuf>,
}

impl EnvPolicy {
    fn apply(&self, cmd: &mut tokio::process::Command) {
        for name in &self.remove {
            cmd.env_remove(name);
        }
    }
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
    pub env: &'a EnvPolicy,
    /// Variables set for it (after the removals).
    pub extra_env: &'a [(String, String)],
    /// Whether it gets a pipe on stdin (else /dev/null).
    pub stdin: bool,
    /// What it may do: read only, or write in the workspace.
    pub scope: Scope,
}

/// A started child: the leader of its own process group.
pub struct Child {
    /// The process (stdout and stderr piped; stdin piped when asked for).
    pub inner: tokio::process::Child,
    pgid: Option<Pid>,
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
            let mut c = tokio::process::Command::new("bash");
            c.arg("-c").arg(script);
            c
        }
        Program::Exec { program, args } => {
            let mut c = tokio::process::Command::new(program);
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
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    s.env.apply(&mut cmd);
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
    for (k, v) in s.extra_env {
        cmd.env(k, v);
    }
    let inner = cmd.spawn()?;
    let pgid = inner.id().map(|pid| Pid::from_raw(pid as i32));
    if let Some(p) = pgid {
        live_groups(|g| {
            g.insert(p.as_raw());
        });
    }
    Ok(Child { inner, pgid })
}

impl Child {
    /// The process group id (the child's pid), while known.
    pub fn pgid(&self) -> Option<i32> {
        self.pgid.map(Pid::as_raw)
    }

    /// Whether any process of the group is still there (reaping the leader first, so that a
    /// zombie leader does not count).
    fn group_alive(&mut self, pgid: Pid) -> bool {
        let _ = self.inner.try_wait();
        !matches!(killpg(pgid, None), Err(Errno::ESRCH))
    }

    /// Stop every process in the group: SIGTERM, up to `grace` for them to go, then SIGKILL.
    pub async fn stop_group(&mut self, grace: Duration) {
        let Some(pgid) = self.pgid else {
            return;
        };
        if self.group_alive(pgid) {
            tracing::debug!(pgid = pgid.as_raw(), "stopping process group");
            let _ = killpg(pgid, Signal::SIGTERM);
            let start = Instant::now();
            let mut gone = false;
            while start.elapsed() < grace {
                tokio::time::sleep(Duration::from_millis(20)).await;
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

    /// SIGKILL every process in the group at once.
    pub fn kill_group(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
        self.forget();
    }

    fn forget(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            live_groups(|g| {
                g.remove(&pgid.as_raw());
            });
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // A handle dropped without being stopped (its task was cancelled): nothing of the
        // group outlives it.
        self.kill_group();
    }
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
