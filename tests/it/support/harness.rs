//! Helpers for integration tests that drive the real `runner` binary.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use super::mock_anthropic::MockAnthropic;

/// Dummy API key the harness puts in `ANTHROPIC_API_KEY`.
pub const DUMMY_API_KEY: &str = "sk-ant-test-dummy";

/// `RUNNER_STREAM_IDLE_TIMEOUT_MS` the harness sets (small, so stall tests are quick; long
/// enough not to fire on a loaded 2-core machine). Override with `.env(...)`.
pub const TEST_STREAM_IDLE_TIMEOUT_MS: &str = "3000";

/// Environment variable prefixes removed from the child's environment.
const SCRUBBED_PREFIXES: &[&str] = &["ANTHROPIC_", "RUNNER_", "OPENAI_", "CLAUDE_"];

/// Individual variables removed from the child's environment.
const SCRUBBED_VARS: &[&str] = &[
    "RUST_LOG",
    "RUST_BACKTRACE",
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
];

/// A temporary git repository with a local user config and one initial commit
/// (`README.md`). Deleted on drop.
pub struct TestRepo {
    dir: tempfile::TempDir,
}

/// Run `git` in `dir` isolated from the host's global/system config; panics with its stderr
/// on failure. Returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .expect("spawn git");
    assert!(
        out.status.success(),
        "git {args:?} failed in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl TestRepo {
    /// A fresh repository on branch `main` with one commit.
    pub fn new() -> TestRepo {
        let dir = tempfile::Builder::new()
            .prefix("runner-test-")
            .tempdir()
            .expect("tempdir");
        let p = dir.path();
        git(p, &["init", "-q", "-b", "main"]);
        git(p, &["config", "user.name", "Runner Test"]);
        git(p, &["config", "user.email", "runner-test@example.invalid"]);
        git(p, &["config", "commit.gpgsign", "false"]);
        std::fs::write(p.join("README.md"), "# test repo\n").expect("write README.md");
        git(p, &["add", "-A"]);
        git(p, &["commit", "-q", "-m", "initial commit"]);
        TestRepo { dir }
    }

    /// The repository root.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write `content` to `rel` (creating parent directories); returns the absolute path.
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent dirs");
        }
        std::fs::write(&p, content).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
        p
    }

    /// Read `rel` as UTF-8; panics if missing.
    pub fn read(&self, rel: &str) -> String {
        let p = self.path().join(rel);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
    }

    /// Whether `rel` exists.
    pub fn exists(&self, rel: &str) -> bool {
        self.path().join(rel).exists()
    }

    /// `git add -A && git commit -m msg`.
    pub fn commit_all(&self, msg: &str) {
        git(self.path(), &["add", "-A"]);
        git(self.path(), &["commit", "-q", "-m", msg]);
    }

    /// `git status --porcelain` output.
    pub fn status(&self) -> String {
        git(self.path(), &["status", "--porcelain"])
    }

    /// Run `git` in the repository.
    pub fn git(&self, args: &[&str]) -> String {
        git(self.path(), args)
    }
}

impl Default for TestRepo {
    fn default() -> Self {
        Self::new()
    }
}

/// Write a task spec to `dir/task.yaml`; returns its path.
pub fn write_spec(dir: &Path, yaml: &str) -> PathBuf {
    write_spec_named(dir, "task.yaml", yaml)
}

/// Write a task spec to `dir/name`; returns its path.
pub fn write_spec_named(dir: &Path, name: &str, yaml: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, yaml).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    p
}

/// The `runner` binary as a `std::process::Command` with a clean environment: every
/// `ANTHROPIC_*`, `RUNNER_*`, `OPENAI_*`, `CLAUDE_*` variable, `RUST_LOG` and proxy variables
/// removed; `ANTHROPIC_API_KEY` set to [`DUMMY_API_KEY`]; `ANTHROPIC_BASE_URL` set to a closed
/// local port (so nothing can reach the network by accident);
/// `RUNNER_STREAM_IDLE_TIMEOUT_MS` = [`TEST_STREAM_IDLE_TIMEOUT_MS`]; `NO_COLOR=1`;
/// `NO_PROXY=127.0.0.1,localhost`; stdin null.
pub fn runner_std_cmd() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_runner"));
    for (k, _) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        if SCRUBBED_PREFIXES.iter().any(|p| k.starts_with(p)) || SCRUBBED_VARS.contains(&k) {
            cmd.env_remove(k);
        }
    }
    for k in SCRUBBED_VARS {
        cmd.env_remove(k);
    }
    cmd.env("ANTHROPIC_API_KEY", DUMMY_API_KEY)
        // Port 9 (discard) on loopback: refused, never the real API.
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", TEST_STREAM_IDLE_TIMEOUT_MS)
        .env("NO_COLOR", "1")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .stdin(Stdio::null());
    cmd
}

/// [`runner_std_cmd`] as an `assert_cmd::Command` (no mock: the base URL is a closed port),
/// with stdin at EOF and a 60 s kill timeout.
pub fn runner_cmd() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::from_std(runner_std_cmd());
    // assert_cmd always gives the child a stdin pipe; writing nothing closes it at once, so the
    // child sees EOF (as with /dev/null). Tests may override with their own `write_stdin`.
    cmd.write_stdin(Vec::<u8>::new());
    // Safety net: a hung child fails the test instead of hanging the suite.
    cmd.timeout(std::time::Duration::from_secs(60));
    cmd
}

/// [`runner_cmd`] with `ANTHROPIC_BASE_URL` pointing at `mock`.
pub fn runner_cmd_for(mock: &MockAnthropic) -> assert_cmd::Command {
    let mut cmd = runner_cmd();
    cmd.env("ANTHROPIC_BASE_URL", mock.url());
    cmd
}

/// Parse every non-empty line of `bytes` as JSON; panics naming the first bad line.
pub fn json_lines(bytes: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("line {} is not JSON ({e}): {l}", i + 1))
        })
        .collect()
}

/// Read a JSONL file (e.g. a transcript) with [`json_lines`].
pub fn read_json_lines(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    json_lines(&bytes)
}

/// The events of `lines` whose `type` is `ty` (and, if given, whose `subtype` is `subtype`).
pub fn events_of<'a>(lines: &'a [Value], ty: &str, subtype: Option<&str>) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|v| v.get("type").and_then(Value::as_str) == Some(ty))
        .filter(|v| subtype.is_none_or(|s| v.get("subtype").and_then(Value::as_str) == Some(s)))
        .collect()
}

/// A task spec named `name` whose prompt is `task NAME` (so [`task_of`] can tell which task a
/// request belongs to), plus `extra` YAML lines.
pub fn named_task(name: &str, extra: &str) -> String {
    format!("name: {name}\nprompt: \"task {name}\"\nmodel: claude-sonnet-4-5\n{extra}")
}

/// The task a request belongs to: its first user message is `task NAME` ([`named_task`]).
pub fn task_of(req: &super::mock_anthropic::CapturedRequest) -> String {
    req.message_text(0)
        .strip_prefix("task ")
        .unwrap_or_default()
        .to_string()
}
