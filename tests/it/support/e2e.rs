//! Helpers for the `exec_*` end-to-end tests: run the binary in a [`TestRepo`] with its own
//! output directory, and look at what it left behind (result object, transcript).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::harness::{TestRepo, json_lines, read_json_lines, runner_cmd_for, runner_std_cmd};
use super::mock_anthropic::MockAnthropic;

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

impl Run {
    /// stdout parsed as JSON lines.
    pub fn json(&self) -> Vec<Value> {
        json_lines(self.stdout.as_bytes())
    }

    /// The single JSON line of `--output-format json` (panics unless there is exactly one).
    pub fn result(&self) -> Value {
        let mut lines = self.json();
        assert_eq!(lines.len(), 1, "expected one result line:\n{}", self.stdout);
        lines.remove(0)
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

/// A scratch directory outside the repository for `--transcript-dir` and `--junit`.
pub struct OutDir {
    dir: tempfile::TempDir,
}

impl OutDir {
    /// A fresh directory.
    pub fn new() -> OutDir {
        OutDir {
            dir: tempfile::Builder::new()
                .prefix("runner-out-")
                .tempdir()
                .expect("tempdir"),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The transcript directory passed to `--transcript-dir`.
    pub fn transcripts(&self) -> PathBuf {
        self.dir.path().join("transcripts")
    }

    /// The JUnit file path.
    pub fn junit(&self) -> PathBuf {
        self.dir.path().join("junit.xml")
    }
}

impl Default for OutDir {
    fn default() -> Self {
        Self::new()
    }
}

/// Run `runner exec --transcript-dir OUT/transcripts ARGS...` in `repo` against `mock`.
pub fn exec_in(mock: &MockAnthropic, repo: &TestRepo, out: &OutDir, args: &[&str]) -> Run {
    exec_env(mock, repo, out, args, &[])
}

/// [`exec_in`] with extra environment variables.
pub fn exec_env(
    mock: &MockAnthropic,
    repo: &TestRepo,
    out: &OutDir,
    args: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let mut cmd = runner_cmd_for(mock);
    cmd.current_dir(repo.path())
        .arg("exec")
        .arg("--transcript-dir")
        .arg(out.transcripts())
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("run runner");
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Start `runner exec --transcript-dir OUT/transcripts --junit OUT/junit.xml --output-format
/// json SPEC` in `repo` against `mock` without waiting, stdout and stderr piped: for tests that
/// signal the running binary.
pub fn spawn_exec(
    mock: &MockAnthropic,
    repo: &TestRepo,
    out: &OutDir,
    spec: &Path,
) -> std::process::Child {
    runner_std_cmd()
        .env("ANTHROPIC_BASE_URL", mock.url())
        .current_dir(repo.path())
        .arg("exec")
        .arg("--transcript-dir")
        .arg(out.transcripts())
        .arg("--junit")
        .arg(out.junit())
        .args(["--output-format", "json"])
        .arg(spec)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start runner")
}

/// The transcript named by a result object's `runner_transcript_path`.
pub fn transcript_of(result: &Value) -> Vec<Value> {
    let p = result["runner_transcript_path"]
        .as_str()
        .unwrap_or_else(|| panic!("no runner_transcript_path in {result}"));
    read_json_lines(Path::new(p))
}

/// Records of `records` whose `type` is `ty`.
pub fn records_of<'a>(records: &'a [Value], ty: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == ty).collect()
}

/// Check the conversation chain: every user/assistant record's `parentUuid` is the uuid of
/// the conversation record before it (null for the first), and uuids are unique.
pub fn assert_chain(records: &[Value]) {
    let mut seen = std::collections::HashSet::new();
    let mut prev: Option<&str> = None;
    for r in records {
        let uuid = r["uuid"].as_str().expect("every record has a uuid");
        assert!(seen.insert(uuid.to_string()), "duplicate uuid {uuid}");
        if r["type"] == "user" || r["type"] == "assistant" {
            assert_eq!(
                r["parentUuid"].as_str(),
                prev,
                "broken parentUuid chain at {r}"
            );
            prev = Some(uuid);
        }
    }
}
