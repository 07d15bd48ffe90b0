//! Where a batch's overlay worktrees get their lower layer, run from a repository's root as
//! users do: the repository's own clean checkout (never written, its untracked files hidden
//! unless `git.share_untracked` names them), a template when the checkout differs from the
//! base, and a template kept in `RUNNER_CACHE_DIR` between batches, reused and updated by the
//! difference.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::*;

/// Each task runs one Bash command, then answers.
fn conversation(command: &str) -> Vec<MockTurn> {
    let bash = Resp::new().tool_use_fragments(
        "toolu_bash",
        "Bash",
        &[&json!({ "command": command }).to_string()],
    );
    vec![bash.turn(), text_turn("done")]
}

/// A repository with `tasks` committed specs (`git` settings as a YAML flow mapping), a
/// tracked `src/lib.rs`, and untracked and ignored files: `notes.txt` and `target/cache.txt`.
fn repo_with(tasks: usize, git: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".runner/\ntarget/\n");
    repo.write("src/lib.rs", "pub fn base() {}\n");
    for i in 0..tasks {
        repo.write(
            &format!("tasks/t{i}.yaml"),
            &named_task(
                &format!("t{i}"),
                &format!(
                    "workdir: ..\ntools: [Bash]\npermissions:\n  mode: bypassPermissions\ngit: {git}\n"
                ),
            ),
        );
    }
    repo.commit_all("tasks");
    repo.write("notes.txt", "untracked\n");
    repo.write("target/cache.txt", "warm\n");
    repo
}

/// Every file under `root` except `.git` and runner's `.runner`: its path, size, mode,
/// modification time and content, so that any write shows.
fn fingerprint(root: &Path) -> BTreeMap<PathBuf, (u64, u32, i64, i64, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if rel == Path::new(".git") || rel == Path::new(".runner") {
                continue;
            }
            let md = std::fs::symlink_metadata(&p).unwrap();
            if md.is_dir() {
                dirs.push(p.clone());
            }
            let content = if md.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            out.insert(
                rel,
                (md.size(), md.mode(), md.mtime(), md.mtime_nsec(), content),
            );
        }
    }
    out
}

/// Whether this machine cannot mount overlays (the pool then uses checkouts, and there is no
/// lower layer to test).
fn no_overlays(run: &Run) -> bool {
    let none = run
        .stderr
        .contains("overlay worktrees are not available here");
    if none {
        eprintln!("skipped: no overlay mounts here");
    }
    none
}

fn patch(repo: &TestRepo, task: &str) -> String {
    std::fs::read_to_string(repo.path().join(format!(".runner/patches/{task}.patch")))
        .unwrap_or_default()
}

#[test]
fn a_clean_checkout_is_the_lower_layer_and_is_never_written() {
    let repo = repo_with(3, "{share_untracked: [target]}");
    let before = fingerprint(repo.path());
    // Each task lists what it sees, reads and changes the shared cache, edits a tracked file
    // and renames a directory: all in its own upper directory.
    let mock = MockAnthropic::start_each(
        conversation(
            "ls -A > seen.txt && cat target/cache.txt > cache-copy.txt && echo task >> target/cache.txt \
             && echo edited > src/lib.rs && mv tasks tasks-moved",
        ),
        3,
    );
    let run = exec_in(&mock, &repo)
        .json()
        .args(["--jobs", "2", "tasks"])
        .run();
    if no_overlays(&run) {
        return;
    }
    run.expect_code(0);
    assert!(
        run.stderr
            .contains("worktrees are overlays on it (no template)"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("template checkout made"),
        "{}",
        run.stderr
    );
    for t in ["t0", "t1", "t2"] {
        let p = patch(&repo, t);
        // The base tree, and the shared cache; neither `.git`'s content, `.runner`, nor
        // the untracked `notes.txt`.
        assert!(p.contains("+++ b/seen.txt"), "{t}: {p}");
        let seen: Vec<&str> = p
            .split("+++ b/seen.txt")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .take_while(|l| !l.starts_with("diff --git"))
            .filter_map(|l| l.strip_prefix('+'))
            .collect();
        assert_eq!(
            seen,
            [
                ".git",
                ".gitignore",
                "README.md",
                "seen.txt",
                "src",
                "target",
                "tasks"
            ],
            "{t}: {p}"
        );
        assert!(
            p.contains("+warm"),
            "{t}: the shared cache is readable: {p}"
        );
        assert!(p.contains("+edited"), "{t}: {p}");
        assert!(p.contains("tasks-moved/t0.yaml"), "{t}: {p}");
    }
    // Not one byte, mode or time of the checkout changed; the shared cache included.
    assert_eq!(fingerprint(repo.path()), before);
    assert_eq!(repo.read("target/cache.txt"), "warm\n");
    assert_eq!(repo.status(), "?? notes.txt\n");
    mock.assert_clean();
}

#[test]
fn a_dirty_checkout_falls_back_to_the_template() {
    let repo = repo_with(2, "{}");
    // A spec edited after its commit: runner reads it from disk and warns, the tasks start
    // from HEAD, and the checkout no longer holds HEAD's tree.
    let spec = repo.read("tasks/t0.yaml");
    repo.write("tasks/t0.yaml", &format!("{spec}# edited\n"));
    let before = fingerprint(repo.path());
    let mock = MockAnthropic::start_each(conversation("cat tasks/t0.yaml > copy.txt"), 2);
    let run = exec_in(&mock, &repo)
        .json()
        .args(["--jobs", "2", "tasks"])
        .run();
    if no_overlays(&run) {
        return;
    }
    run.expect_code(0);
    assert!(
        run.stderr.contains(
            "the checkout cannot be the worktrees' lower layer (`tasks/t0.yaml` is modified)"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("template checkout"), "{}", run.stderr);
    // The tasks saw HEAD's spec, not the edited one.
    for t in ["t0", "t1"] {
        let p = patch(&repo, t);
        assert!(p.contains("+++ b/copy.txt"), "{t}: {p}");
        assert!(!p.contains("# edited"), "{t}: {p}");
    }
    assert_eq!(fingerprint(repo.path()), before);
    mock.assert_clean();
}

/// The cached templates of the repository: `RUNNER_CACHE_DIR/templates/<repo>/<id>`.
fn cached(cache: &Path) -> Vec<PathBuf> {
    let Ok(repos) = std::fs::read_dir(cache.join("templates")) else {
        return Vec::new();
    };
    repos
        .flatten()
        .filter_map(|r| std::fs::read_dir(r.path()).ok())
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect()
}

#[test]
fn a_warm_cache_is_reused_and_updated_by_difference() {
    let repo = repo_with(2, "{}");
    repo.write("src/other.rs", "pub fn other() {}\n");
    repo.commit_all("other");
    let cache = tempfile::tempdir().unwrap();
    let batch = |what: &str| {
        let mock = MockAnthropic::start_each(conversation("cat src/lib.rs > seen.txt"), 2);
        let run = exec_in(&mock, &repo)
            .env("RUNNER_WORKTREES", "template")
            .env("RUNNER_CACHE_DIR", cache.path())
            .json()
            .args(["--jobs", "2", "tasks"])
            .run();
        if no_overlays(&run) {
            return None;
        }
        run.expect_code(0);
        assert!(run.stderr.contains(what), "{what}:\n{}", run.stderr);
        mock.assert_clean();
        Some(run)
    };
    if batch("template checkout made in the cache").is_none() {
        return;
    }
    let made = cached(cache.path());
    assert_eq!(made.len(), 1, "{made:?}");
    let tree = made[0].join("tree");
    let ino = |rel: &str| std::fs::metadata(tree.join(rel)).unwrap().ino();
    let other_ino = ino("src/other.rs");
    // The same base again: the template as it is.
    batch("template checkout reused from the cache");
    // A new commit: the same template, only the changed file written again.
    repo.write("src/lib.rs", "pub fn changed() {}\n");
    repo.commit_all("change");
    batch("updated to the base commit by the difference");
    assert_eq!(cached(cache.path()), made);
    assert_eq!(
        ino("src/other.rs"),
        other_ino,
        "an unchanged file is not written"
    );
    assert_eq!(
        std::fs::read_to_string(tree.join("src/lib.rs")).unwrap(),
        "pub fn changed() {}\n"
    );
    for t in ["t0", "t1"] {
        assert!(patch(&repo, t).contains("+pub fn changed() {}"), "{t}");
    }
    assert_eq!(repo.status(), "");
}

#[test]
fn a_checkout_changed_during_the_batch_gives_the_next_tasks_a_template() {
    let repo = repo_with(3, "{}");
    let lib = repo.path().join("src/lib.rs");
    // The first task's first response is held until the checkout's tracked file has been
    // changed under it (as a build or an editor would); later tasks only list what they see.
    let changed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let gate = {
        let changed = changed.clone();
        Gate::new(move || {
            if !changed.swap(true, std::sync::atomic::Ordering::SeqCst) {
                std::fs::write(&lib, "pub fn changed() {}\n").unwrap();
            }
            true
        })
    };
    let bash = Resp::new()
        .tool_use_fragments(
            "toolu_bash",
            "Bash",
            &[&json!({ "command": "ls -A > seen.txt && cat src/lib.rs > lib.txt" }).to_string()],
        )
        .build();
    let first = MockTurn::Gated {
        events: bash,
        holds: vec![Hold {
            before: 0,
            gate,
            timeout: std::time::Duration::from_secs(30),
        }],
        drop_at: None,
    };
    let mock = MockAnthropic::start_each(vec![first, text_turn("done")], 3);
    let run = exec_in(&mock, &repo)
        .json()
        .args(["--jobs", "1", "tasks"])
        .run();
    if no_overlays(&run) {
        return;
    }
    run.expect_code(0);
    assert!(changed.load(std::sync::atomic::Ordering::SeqCst));
    assert!(
        run.stderr
            .contains("worktrees are overlays on it (no template)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "the repository's checkout is no longer the worktrees' lower layer (it changed: src/lib.rs)"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("the repository's checkout changed while a task ran on it"),
        "{}",
        run.stderr
    );
    // Whichever task ran on the checkout when it changed, the tasks after it saw the base
    // commit's file from a template; none saw the untracked `notes.txt` or `target`.
    let lib_of = |t: &str| {
        let p = patch(&repo, t);
        assert!(p.contains("+++ b/seen.txt"), "{t}: {p}");
        assert!(!p.contains("+notes.txt"), "{t}: {p}");
        assert!(!p.contains("+target"), "{t}: {p}");
        p.contains("+pub fn base() {}")
    };
    let bases: Vec<bool> = ["t0", "t1", "t2"].iter().map(|t| lib_of(t)).collect();
    assert!(
        bases.iter().filter(|b| **b).count() >= 2,
        "the tasks after the change see the base: {bases:?}"
    );
    // runner wrote nothing into the checkout: the change is the only one.
    assert_eq!(repo.status(), " M src/lib.rs\n?? notes.txt\n");
    mock.assert_clean();
}
