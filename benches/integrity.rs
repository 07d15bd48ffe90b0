//! The integrity check's cost (a `harness = false` bench; `cargo bench --bench integrity`):
//! the fingerprint comparison that runs before and after every command, on a repository with
//! 50 hooks, 50 workflows, 10 `info/` files and 20 tracked nested `.gitattributes`, unchanged
//! (the stat fast path, the case of nearly every command) and with one planted hook (content
//! read, restored, compared again); and the fingerprint taken once when a task starts.
//!
//! Each figure is the median per-iteration time over several samples.

// Test and benchmark code may unwrap, panic and print (the library may not: Cargo.toml [lints]).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

#[path = "common/mod.rs"]
mod common;
#[path = "common/cpu.rs"]
mod cpu;

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{Table, fmt_dur, time_per_iter};
use cpu::thread_cpu;
use runner::integrity::Integrity;

const SAMPLES: usize = 9;
const TARGET: Duration = Duration::from_millis(300);

/// The median wall time per iteration of `f` (see `common::time_per_iter`), and its CPU time
/// per iteration over 200 more iterations.
fn measure(mut f: impl FnMut()) -> (String, String) {
    let (wall, _) = time_per_iter(SAMPLES, TARGET, &mut f);
    let n = 200;
    let cpu = thread_cpu(|| {
        for _ in 0..n {
            f();
        }
    });
    (fmt_dur(wall), fmt_dur(cpu / n))
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@example.invalid")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@example.invalid")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// A repository with 50 hooks, 50 workflows, 10 info files and 20 nested `.gitattributes`.
fn repo(root: &Path) {
    git(root, &["init", "-q", "-b", "main"]);
    let hooks = root.join(".git/hooks");
    for i in 0..50 {
        std::fs::write(
            hooks.join(format!("hook-{i:02}")),
            format!("#!/bin/sh\n# hook {i}\n{}", "exit 0\n".repeat(200)),
        )
        .unwrap();
    }
    let info = root.join(".git/info");
    std::fs::create_dir_all(&info).unwrap();
    for i in 0..10 {
        std::fs::write(info.join(format!("file-{i}")), "*.bin binary\n").unwrap();
    }
    let wf = root.join(".github/workflows");
    std::fs::create_dir_all(&wf).unwrap();
    for i in 0..50 {
        std::fs::write(
            wf.join(format!("wf-{i:02}.yml")),
            format!(
                "name: wf{i}\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n{}",
                "    steps: []\n".repeat(50)
            ),
        )
        .unwrap();
    }
    for i in 0..20 {
        let d = root.join(format!("pkg{i}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(".gitattributes"), "*.png binary\n").unwrap();
        std::fs::write(d.join("lib.rs"), "fn main() {}\n").unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "bench"]);
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    repo(&root);
    let watched = runner::integrity::watch::paths(&root).len();
    println!(
        "integrity check: median of {SAMPLES} samples of ~{} ms each; {watched} watched paths (50 hooks, 50 workflows, 10 info files, 20 nested .gitattributes)\n",
        TARGET.as_millis()
    );
    let mut t = Table::new(&["integrity", "median wall", "CPU"]);
    let (wall, cpu) = measure(|| {
        black_box(Integrity::new(&root, Box::new(|_| false)).unwrap());
    });
    t.row(vec![
        "fingerprint at the task's start (once)".into(),
        wall,
        cpu,
    ]);
    let guard = Integrity::new(&root, Box::new(|_| false)).unwrap();
    let (wall, cpu) = measure(|| {
        assert!(black_box(guard.check("bench")).is_empty());
    });
    t.row(vec![
        "one check, nothing changed (a command: two)".into(),
        wall,
        cpu,
    ]);
    let planted = root.join(".git/hooks/pre-commit");
    let (wall, cpu) = measure(|| {
        std::fs::write(&planted, "#!/bin/sh\ncurl evil\n").unwrap();
        assert_eq!(black_box(guard.check("bench")).len(), 1);
    });
    t.row(vec![
        "one check finding and undoing a planted hook (incl. writing it)".into(),
        wall,
        cpu,
    ]);
    let config = root.join(".git/config");
    let original = std::fs::read(&config).unwrap();
    let (wall, cpu) = measure(|| {
        let mut c = original.clone();
        c.extend_from_slice(b"[core]\n\tfsmonitor = evil\n");
        std::fs::write(&config, c).unwrap();
        assert_eq!(black_box(guard.check("bench")).len(), 1);
    });
    t.row(vec![
        "one check restoring a modified .git/config (incl. writing it)".into(),
        wall,
        cpu,
    ]);
    println!("{}", t.render());
}
