//! Denial hints in an isolated task name the task's own files: a rule relative to the workdir,
//! never a path into the checkout the task's worktree was made from; and protected names count
//! below the task's roots only.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    unreachable_pub
)]

use std::path::{Path, PathBuf};

use runner_policy::roots::SessionRoots;
use runner_policy::{Access, Decision, PermissionMode, Policy, ToolCall};

/// A checkout at `repo`, and an isolated task's worktree inside its `.runner/` (the default
/// layout), working in the subdirectory `app`.
fn layout() -> (tempfile::TempDir, PathBuf, SessionRoots) {
    let dir = tempfile::tempdir().unwrap();
    let repo = std::fs::canonicalize(dir.path()).unwrap();
    let worktree = repo.join(".runner/task-1/worktree");
    for d in ["app/src", ".runner/task-1/worktree/app/src"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    let roots = SessionRoots {
        spec_dir: worktree.join("tasks"),
        repo_root: Some(worktree.clone()),
        workdir: worktree.join("app"),
        additional_dirs: vec![],
        output_dir: repo.join(".runner/task-1"),
        source_root: Some(repo.clone()),
    };
    (dir, repo, roots)
}

fn edit(policy: &Policy, roots: &SessionRoots, path: &Path) -> Decision {
    let access = Access::Write(vec![path.to_path_buf()]);
    policy.decide(
        &ToolCall {
            tool: "Edit",
            access: &access,
            cwd: &roots.workdir,
        },
        roots,
    )
}

#[test]
fn an_edit_of_the_source_checkout_names_the_worktree_file() {
    let (_d, repo, roots) = layout();
    for mode in [PermissionMode::Default, PermissionMode::AcceptEdits] {
        let policy = Policy::new(mode, &[], &[]).unwrap();
        let d = edit(&policy, &roots, &repo.join("app/src/lib.rs"));
        assert!(!d.is_allow(), "{mode:?}: {}", d.reason());
        let reason = d.reason();
        assert!(
            reason.contains("is in the checkout this task's git worktree was made from")
                && reason.ends_with("Edit ./src/lib.rs instead."),
            "{mode:?}: {reason}"
        );
        assert!(
            !reason.contains(&format!("Edit(/{}", repo.display())),
            "{reason}"
        );
    }
}

#[test]
fn the_worktree_itself_is_an_ordinary_workspace() {
    let (_d, _repo, roots) = layout();
    let policy = Policy::new(PermissionMode::AcceptEdits, &[], &[]).unwrap();
    let ok = edit(&policy, &roots, &roots.workdir.join("src/lib.rs"));
    assert!(ok.is_allow(), "{}", ok.reason());
    // Its own `.git` and `.runner` stay protected, with a hint relative to the workdir.
    for (rel, marker) in [(".git/config", ".git"), (".runner/x.patch", ".runner")] {
        let d = edit(&policy, &roots, &roots.workdir.join(rel));
        assert!(!d.is_allow(), "{rel}");
        assert!(
            d.reason()
                .contains(&format!("`{marker}` is a protected path"))
                && d.reason().contains(&format!("Edit(./{rel})")),
            "{}",
            d.reason()
        );
    }
    // A denial without a rule suggests the workdir-relative rule.
    let strict = Policy::new(PermissionMode::Default, &[], &[]).unwrap();
    let d = edit(&strict, &roots, &roots.workdir.join("src/lib.rs"));
    assert!(d.reason().contains("Edit(./src/lib.rs)"), "{}", d.reason());
}
