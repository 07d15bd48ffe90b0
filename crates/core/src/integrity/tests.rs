use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::git::test_git::git;

/// A repository with a hook, a workflow, a nested tracked `.gitattributes`, one commit.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap().join("r");
    std::fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join(".git/hooks/pre-push"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::create_dir_all(root.join(".github/workflows")).unwrap();
    std::fs::write(root.join(".github/workflows/ci.yml"), "on: push\n").unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/.gitattributes"), "*.bin binary\n").unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "one"]);
    (t, root)
}

fn guard(root: &Path) -> Integrity {
    Integrity::new(root, Box::new(|_| false)).unwrap()
}

fn changes(g: &Integrity) -> Vec<(String, String)> {
    g.check("test")
        .into_iter()
        .map(|c| {
            assert!(c.restored, "{c:?}");
            let rel = c.path.file_name().unwrap().to_string_lossy().into_owned();
            (rel, c.change)
        })
        .collect()
}

#[test]
fn nothing_changed_is_nothing_found_and_touch_is_not_a_change() {
    let (_t, root) = repo();
    let g = guard(&root);
    assert!(g.check("x").is_empty());
    // Same bytes, new stat data: not a change (and the new stat data is kept).
    let hook = root.join(".git/hooks/pre-push");
    let bytes = std::fs::read(&hook).unwrap();
    std::fs::write(&hook, &bytes).unwrap();
    assert!(g.check("x").is_empty());
    // What git's ordinary work changes is not watched: index, refs, objects.
    std::fs::write(root.join("a.txt"), "b\n").unwrap();
    git(&root, &["commit", "-qam", "two"]);
    git(&root, &["status"]);
    assert!(g.check("x").is_empty());
    assert!(g.changes().is_empty());
}

#[test]
fn an_added_hook_is_removed() {
    let (_t, root) = repo();
    let g = guard(&root);
    let hook = root.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\ncurl evil\n").unwrap();
    assert_eq!(changes(&g), [("pre-commit".into(), "added".into())]);
    assert!(!hook.exists());
    assert!(
        g.check("again").is_empty(),
        "the restore is the fingerprint"
    );
    assert_eq!(g.changes().len(), 1);
}

#[test]
fn a_modified_config_gets_its_bytes_back() {
    let (_t, root) = repo();
    let config = root.join(".git/config");
    let before = std::fs::read(&config).unwrap();
    let g = guard(&root);
    git(&root, &["config", "core.fsmonitor", "./evil"]);
    git(&root, &["config", "core.hooksPath", "x"]);
    let found = g.check("git config");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].change, "modified");
    assert_eq!(found[0].after, "git config");
    assert!(found[0].restored);
    assert_eq!(std::fs::read(&config).unwrap(), before);
}

#[test]
fn chmod_x_is_undone() {
    let (_t, root) = repo();
    let wf = root.join(".github/workflows/ci.yml");
    let g = guard(&root);
    std::fs::set_permissions(&wf, std::fs::Permissions::from_mode(0o755)).unwrap();
    let found = g.check("chmod");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].change, "mode_changed");
    assert!(
        found[0].detail.contains("644 -> 755"),
        "{}",
        found[0].detail
    );
    let mode = std::fs::metadata(&wf).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn a_planted_symlink_is_removed_not_followed() {
    let (t, root) = repo();
    let outside = t.path().join("outside");
    std::fs::write(&outside, "keep me\n").unwrap();
    let g = guard(&root);
    // A hook replaced by a symlink: the link goes, the hook comes back, the target stays.
    let hook = root.join(".git/hooks/pre-push");
    std::fs::remove_file(&hook).unwrap();
    std::os::unix::fs::symlink(&outside, &hook).unwrap();
    assert_eq!(changes(&g), [("pre-push".into(), "replaced".into())]);
    assert!(!hook.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap(),
        "#!/bin/sh\nexit 0\n"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
    // The whole hooks directory swapped for a symlink to a directory of hooks.
    let evil = t.path().join("evil-hooks");
    std::fs::create_dir(&evil).unwrap();
    std::fs::write(evil.join("pre-commit"), "x").unwrap();
    let hooks = root.join(".git/hooks");
    std::fs::rename(&hooks, t.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(&evil, &hooks).unwrap();
    assert_eq!(changes(&g), [("hooks".into(), "replaced".into())]);
    assert!(hooks.symlink_metadata().unwrap().is_dir());
    assert!(hooks.join("pre-push").is_file());
    assert!(!hooks.join("pre-commit").exists());
    assert!(
        evil.join("pre-commit").exists(),
        "the symlink's target is not touched"
    );
    // `.github` swapped for a symlink: removed.
    std::fs::rename(root.join(".github"), t.path().join("gh")).unwrap();
    std::os::unix::fs::symlink(t.path().join("gh"), root.join(".github")).unwrap();
    let found = g.check("swap");
    assert!(
        found.iter().any(|c| c.path.ends_with(".github")),
        "{found:?}"
    );
    assert!(
        !root
            .join(".github")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(t.path().join("gh/workflows/ci.yml").exists());
}

#[test]
fn a_deleted_workflow_comes_back_and_an_added_one_goes() {
    let (_t, root) = repo();
    let g = guard(&root);
    let wf = root.join(".github/workflows/ci.yml");
    std::fs::remove_file(&wf).unwrap();
    std::fs::write(root.join(".github/workflows/x.yml"), "on: push\n").unwrap();
    let mut found = changes(&g);
    found.sort();
    assert_eq!(
        found,
        [
            ("ci.yml".into(), "removed".into()),
            ("x.yml".into(), "added".into())
        ]
    );
    assert_eq!(std::fs::read_to_string(&wf).unwrap(), "on: push\n");
    assert!(!root.join(".github/workflows/x.yml").exists());
    // The whole directory removed: it comes back with what it held.
    std::fs::remove_dir_all(root.join(".github/workflows")).unwrap();
    assert_eq!(changes(&g), [("workflows".into(), "removed".into())]);
    assert!(wf.is_file());
}

#[test]
fn gitmodules_info_and_nested_attributes_are_watched() {
    let (_t, root) = repo();
    let g = guard(&root);
    std::fs::write(root.join(".gitmodules"), "[submodule \"x\"]\n").unwrap();
    std::fs::create_dir_all(root.join(".git/info")).unwrap();
    std::fs::write(root.join(".git/info/attributes"), "* filter=evil\n").unwrap();
    std::fs::write(root.join("sub/.gitattributes"), "* filter=evil\n").unwrap();
    let found = g.check("t");
    let names: Vec<_> = found
        .iter()
        .map(|c| {
            c.path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(names.contains(&".gitmodules".to_string()), "{names:?}");
    assert!(
        names.contains(&"sub/.gitattributes".to_string()),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with(".git/info")),
        "{names:?}"
    );
    assert!(!root.join(".gitmodules").exists());
    assert!(!root.join(".git/info/attributes").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("sub/.gitattributes")).unwrap(),
        "*.bin binary\n"
    );
}

#[test]
fn a_change_the_policy_allows_is_kept() {
    let (_t, root) = repo();
    let allowed = root.join(".git/hooks/pre-commit");
    let a = allowed.clone();
    let g = Integrity::new(&root, Box::new(move |p| p == a)).unwrap();
    std::fs::write(&allowed, "#!/bin/sh\n").unwrap();
    std::fs::write(root.join(".git/hooks/post-checkout"), "#!/bin/sh\n").unwrap();
    let found = g.check("t");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].path.ends_with("post-checkout"));
    assert!(allowed.exists());
    // Part of the fingerprint now: changing it again is a change it is measured against.
    assert!(g.check("t").is_empty());
}

#[test]
fn command_checks_before_and_after() {
    let (_t, root) = repo();
    let g = Arc::new(guard(&root));
    std::fs::write(root.join(".git/hooks/early"), "x").unwrap();
    let c = around(Some(&g), || "Bash `make`".to_string());
    assert_eq!(g.changes().len(), 1);
    assert!(g.changes()[0].after.starts_with("before Bash `make`"));
    std::fs::write(root.join(".git/hooks/late"), "x").unwrap();
    let found = c.end();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].after, "Bash `make`");
    // Dropped without end: the check still runs.
    {
        let _c = around(Some(&g), || "hook".to_string());
        std::fs::write(root.join(".git/hooks/dropped"), "x").unwrap();
    }
    assert!(!root.join(".git/hooks/dropped").exists());
    assert_eq!(g.changes().len(), 3);
    assert!(around(None, || unreachable!()).end().is_empty());
}

#[test]
fn a_worktree_watches_its_admin_dir_and_the_common_dir() {
    let (t, root) = repo();
    let wt = t.path().join("wt");
    git(&root, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    let g = guard(&wt);
    let paths: Vec<_> = watch::paths(&wt).into_iter().map(|w| w.path).collect();
    assert!(paths.contains(&root.join(".git/hooks")), "{paths:?}");
    assert!(paths.contains(&root.join(".git/worktrees/wt/config.worktree")));
    assert!(paths.contains(&wt.join(".git")));
    // The common dir's hooks run for the worktree's git commands too.
    std::fs::write(root.join(".git/hooks/post-commit"), "x").unwrap();
    // The worktree's `.git` file pointed at another git dir.
    let gitfile = std::fs::read(wt.join(".git")).unwrap();
    std::fs::write(wt.join(".git"), "gitdir: /tmp/evil\n").unwrap();
    // A per-worktree configuration.
    std::fs::write(root.join(".git/worktrees/wt/config.worktree"), "[core]\n").unwrap();
    let found = g.check("t");
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found.iter().all(|c| c.restored));
    assert_eq!(std::fs::read(wt.join(".git")).unwrap(), gitfile);
    assert!(!root.join(".git/hooks/post-commit").exists());
}

#[test]
fn outside_a_repository_a_new_git_dir_is_a_change() {
    let t = tempfile::tempdir().unwrap();
    let g = guard(t.path());
    std::fs::create_dir_all(t.path().join(".git/hooks")).unwrap();
    let found = g.check("git init");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(!t.path().join(".git").exists());
}

#[test]
fn absurd_sizes_fail_closed() {
    let (_t, root) = repo();
    let big = vec![b'x'; (snapshot::MAX_FILE_BYTES + 1) as usize];
    std::fs::write(root.join(".git/hooks/huge"), &big).unwrap();
    let e = Integrity::new(&root, Box::new(|_| false)).unwrap_err();
    assert!(matches!(e, IntegrityError::TooLarge(_)), "{e}");
    // Grown over the cap after the start: a change, put back.
    std::fs::remove_file(root.join(".git/hooks/huge")).unwrap();
    let g = guard(&root);
    std::fs::write(root.join(".git/hooks/pre-push"), &big).unwrap();
    let found = g.check("t");
    assert_eq!(found[0].change, "modified");
    assert!(
        std::fs::metadata(root.join(".git/hooks/pre-push"))
            .unwrap()
            .len()
            < 100
    );
}

#[test]
fn tracked_attributes_follow_the_index_when_it_changes() {
    let (_t, root) = repo();
    let attrs = |root: &Path| -> Vec<PathBuf> {
        watch::paths(root)
            .into_iter()
            .map(|w| w.path)
            .filter(|p| p.ends_with(".gitattributes"))
            .collect()
    };
    let before = attrs(&root);
    assert!(
        before.contains(&root.join("sub/.gitattributes")),
        "{before:?}"
    );
    assert!(
        !before.contains(&root.join("other/.gitattributes")),
        "{before:?}"
    );
    // The same index again: the same list (from the list kept for it).
    assert_eq!(attrs(&root), before);
    std::fs::create_dir_all(root.join("other")).unwrap();
    std::fs::write(root.join("other/.gitattributes"), "* filter=evil\n").unwrap();
    git(&root, &["add", "other/.gitattributes"]);
    let after = attrs(&root);
    assert!(
        after.contains(&root.join("other/.gitattributes")),
        "{after:?}"
    );
    assert!(
        after.contains(&root.join("sub/.gitattributes")),
        "{after:?}"
    );
}
