//! Places to run the binary in: a temporary git repository ([`TestRepo`], [`git`]) and task
//! spec files ([`write_spec`]); and reading JSON lines back ([`json_lines`]).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

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
