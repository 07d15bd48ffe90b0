//! Test helper shared by the unit tests of this crate and of runner-core's integrity checks
//! (feature `test-support`): the git command line, run without the host's configuration.

use std::path::Path;
use std::process::Command;

/// `git ARGS` in `dir`, without the host's configuration; its stdout (panics on failure: a
/// test's setup).
#[allow(clippy::unwrap_used)]
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}
