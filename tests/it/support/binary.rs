//! Running the real `runner` binary: a clean environment, pointed at a mock model server,
//! run to completion ([`Runner::run`]) or started for a test that signals it
//! ([`Runner::spawn`]).

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::Value;

use runner_test_support::{ModelServer, json_lines, runner_command};

use super::harness::events_of;

/// How long [`Runner::run`] lets the binary run before killing it: a hung child fails the
/// test instead of hanging the suite.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// The `runner` binary under test ([`runner_binary`]) with the clean environment of
/// [`runner_command`].
pub fn runner_std_cmd() -> Command {
    runner_command(runner_binary())
}

/// The binary under test: the one cargo built, or `RUNNER_IT_BINARY` when set (`.ci/run`
/// runs the sandbox tests again as an unprivileged user, with copies of both binaries that
/// user can reach).
pub fn runner_binary() -> std::ffi::OsString {
    std::env::var_os("RUNNER_IT_BINARY").unwrap_or_else(|| env!("CARGO_BIN_EXE_runner").into())
}

/// A `runner` command line being put together ([`runner_std_cmd`]'s environment), run with
/// [`Runner::run`] or started with [`Runner::spawn`].
pub struct Runner {
    cmd: Command,
}

impl Runner {
    /// The binary, not pointed at any model server (the base URL is a closed port): for
    /// `validate`, `schema`, replay and the like.
    pub fn new() -> Runner {
        Runner {
            cmd: runner_std_cmd(),
        }
    }

    /// The binary pointed at `mock`.
    pub fn against(mock: &impl ModelServer) -> Runner {
        let mut r = Runner::new();
        for (k, v) in mock.runner_env() {
            r.cmd.env(k, v);
        }
        r
    }

    /// Add an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.cmd.arg(arg);
        self
    }

    /// Add arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Self {
        self.cmd.args(args);
        self
    }

    /// `--output-format json`.
    pub fn json(self) -> Self {
        self.args(["--output-format", "json"])
    }

    /// `--output-format stream-json`.
    pub fn stream_json(self) -> Self {
        self.args(["--output-format", "stream-json"])
    }

    /// `--junit PATH`.
    pub fn junit(self, path: impl AsRef<Path>) -> Self {
        self.arg("--junit").arg(path.as_ref())
    }

    /// Set an environment variable.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.cmd.env(key, value);
        self
    }

    /// Remove an environment variable.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.cmd.env_remove(key);
        self
    }

    /// Set environment variables.
    pub fn envs<K: AsRef<OsStr>, V: AsRef<OsStr>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.cmd.envs(vars);
        self
    }

    /// Limit the size of every file the binary (and what it starts) writes to `bytes`
    /// (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored so a write past it fails with `EFBIG`): a disk
    /// that fills up part way through a run.
    pub fn file_size_limit(mut self, bytes: u64) -> Self {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            self.cmd.pre_exec(move || {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let lim = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        self
    }

    /// Start runner as the child of a `sh -c` wrapper that stays (as `timeout` or a CI step's
    /// shell does), so runner has an ancestor whose environment holds everything runner was
    /// given.
    pub fn under_shell(self) -> Self {
        let mut sh = Command::new("sh");
        sh.arg("-c")
            .arg("\"$@\"; exit $?")
            .arg("sh")
            .arg(self.cmd.get_program())
            .args(self.cmd.get_args())
            .stdin(Stdio::null());
        sh.env_clear();
        for (k, v) in std::env::vars_os() {
            sh.env(k, v);
        }
        for (k, v) in self.cmd.get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        if let Some(dir) = self.cmd.get_current_dir() {
            sh.current_dir(dir);
        }
        Runner { cmd: sh }
    }

    /// Run in `dir`.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cmd.current_dir(dir);
        self
    }

    /// Run to completion with stdin at EOF (killed after a minute).
    pub fn run(self) -> Run {
        let mut cmd = assert_cmd::Command::from_std(self.cmd);
        // assert_cmd always gives the child a stdin pipe; writing nothing closes it at once, so
        // the child sees EOF (as with /dev/null).
        cmd.write_stdin(Vec::<u8>::new()).timeout(RUN_TIMEOUT);
        Run::from(cmd.output().expect("run runner"))
    }

    /// Run to completion with `input` piped to stdin (killed after a minute).
    pub fn run_with_stdin(self, input: impl Into<Vec<u8>>) -> Run {
        let mut cmd = assert_cmd::Command::from_std(self.cmd);
        cmd.write_stdin(input.into()).timeout(RUN_TIMEOUT);
        Run::from(cmd.output().expect("run runner"))
    }

    /// Start without waiting, stdout and stderr piped: for tests that signal the binary.
    pub fn spawn(mut self) -> Started {
        let child = self
            .cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start runner");
        Started { child }
    }
}

impl Default for Runner {
    fn default() -> Self {
        Self::new()
    }
}

/// A binary started by [`Runner::spawn`].
pub struct Started {
    child: Child,
}

impl Started {
    /// Send `signal` to the binary.
    pub fn signal(&self, signal: Signal) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, signal).expect("signal runner");
    }

    /// Wait for it to exit.
    pub fn wait(self) -> Run {
        Run::from(self.child.wait_with_output().expect("wait for runner"))
    }

    /// Wait at most `limit` for it to exit, reading its output meanwhile (so a full pipe never
    /// holds it up): `Ok` when it exited in time, else `Err` after killing it with SIGKILL, as
    /// a CI service does once its grace period is over (`code` is then `None`).
    pub fn wait_within(mut self, limit: Duration) -> Result<Run, Run> {
        fn drain(
            pipe: Option<impl std::io::Read + Send + 'static>,
        ) -> std::thread::JoinHandle<Vec<u8>> {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_end(&mut buf);
                }
                buf
            })
        }
        let (out, err) = (
            drain(self.child.stdout.take()),
            drain(self.child.stderr.take()),
        );
        let deadline = std::time::Instant::now() + limit;
        let mut in_time = true;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for runner") {
                break status;
            }
            if std::time::Instant::now() >= deadline {
                in_time = false;
                self.signal(Signal::SIGKILL);
                break self.child.wait().expect("wait for runner");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let run = Run {
            code: status.code(),
            stdout: String::from_utf8_lossy(&out.join().expect("stdout reader")).into_owned(),
            stderr: String::from_utf8_lossy(&err.join().expect("stderr reader")).into_owned(),
        };
        if in_time { Ok(run) } else { Err(run) }
    }
}

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Run {
    /// Exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// stdout, lossy UTF-8.
    pub stdout: String,
    /// stderr, lossy UTF-8.
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    /// stdout parsed as JSON lines (`--output-format json` results, stream-json frames), each
    /// frame checked against the committed schema ([`super::check_frames`]).
    pub fn json(&self) -> Vec<Value> {
        let lines = json_lines(self.stdout.as_bytes());
        super::check_frames(&lines);
        lines
    }

    /// The single JSON line of `--output-format json` (panics unless there is exactly one).
    pub fn result(&self) -> Value {
        let mut lines = self.json();
        assert_eq!(
            lines.len(),
            1,
            "expected one result line:\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        lines.remove(0)
    }

    /// The last `type: result` line of stdout (stream-json ends with one).
    pub fn result_frame(&self) -> Value {
        self.json()
            .into_iter()
            .rfind(|f| f["type"] == "result")
            .unwrap_or_else(|| panic!("no result frame; stderr: {}", self.stderr))
    }

    /// The `system` frames of stdout with this `subtype`.
    pub fn system(&self, subtype: &str) -> Vec<Value> {
        events_of(&self.json(), "system", Some(subtype))
            .into_iter()
            .cloned()
            .collect()
    }

    /// Panic with stdout and stderr unless the exit code is `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            Some(code),
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}
