//! Helpers for the `exec_*` end-to-end tests: run `runner exec` in a [`TestRepo`] with its own
//! output directory, and look at what it left behind (result object, transcript).

use std::path::{Path, PathBuf};

use serde_json::Value;

use runner_test_support::{ModelServer, TestRepo};

use super::binary::{Runner, Started};
use super::harness::{find_transcript, read_json_lines};

/// A scratch directory outside the repository for `--transcript-dir`, `--junit` and files a
/// test's hooks write.
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

    /// The records of the first transcript in [`OutDir::transcripts`].
    pub fn transcript(&self) -> Vec<Value> {
        let p = find_transcript(&self.transcripts())
            .unwrap_or_else(|| panic!("no transcript in {}", self.transcripts().display()));
        read_json_lines(&p)
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

/// `runner exec --transcript-dir OUT/transcripts` in `repo` against `mock`; add the rest
/// (`.json()`, `.arg(&spec)`, ...) and [`Runner::run`] it.
pub fn exec(mock: &impl ModelServer, repo: &TestRepo, out: &OutDir) -> Runner {
    Runner::against(mock)
        .current_dir(repo.path())
        .arg("exec")
        .arg("--transcript-dir")
        .arg(out.transcripts())
}

/// `runner exec` in `repo` against `mock`, with the default transcript directory (the
/// repository's `.runner/`, read back with [`TestRepo::transcript`]).
pub fn exec_in(mock: &impl ModelServer, repo: &TestRepo) -> Runner {
    Runner::against(mock).current_dir(repo.path()).arg("exec")
}

/// Start `runner exec --transcript-dir OUT/transcripts --junit OUT/junit.xml --output-format
/// json SPEC` in `repo` against `mock` without waiting: for tests that signal the binary.
pub fn spawn_exec(mock: &impl ModelServer, repo: &TestRepo, out: &OutDir, spec: &Path) -> Started {
    exec(mock, repo, out)
        .junit(out.junit())
        .json()
        .arg(spec)
        .spawn()
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
