//! Property test of the sandbox's plan alone: for random writable roots, unreadable paths and
//! readable paths under a home directory, the grants the kernel is given never reach an
//! unreadable path (Landlock grants whole trees, so neither the path nor a directory above it
//! may be granted, for a path that exists), writes are granted inside the writable roots only, and the file tools'
//! rules agree. Host patterns of any text parse or are refused without a panic.
//! `PROPTEST_CASES` sets the number of cases (default 200; `.ci/run` runs more).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    unreachable_pub
)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use runner_exec::sandbox::hosts::{HostPattern, allowed};
use runner_exec::sandbox::{Network, Plan, PlanInput};

/// A tree on disk: a workdir with nested directories, a home with credential and toolchain
/// directories, and a directory outside both.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

/// The directories of the tree, relative to its root.
const DIRS: &[&str] = &[
    "work",
    "work/a",
    "work/a/x",
    "work/a/y",
    "work/b",
    "work/b/x",
    "work/c",
    "extra",
    "extra/deep",
    "home",
    "home/.ssh",
    "home/.aws",
    "home/.cargo",
    "home/proj",
    "other",
];

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in DIRS {
            std::fs::create_dir_all(root.join(d)).unwrap();
            std::fs::write(root.join(d).join("f.txt"), "x").unwrap();
        }
        Tree { _dir: dir, root }
    }

    fn at(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

thread_local! {
    static TREE: Tree = Tree::new();
}

/// What one case plans: writable roots, unreadable paths and readable paths under the home
/// directory (each relative to the tree's root).
#[derive(Debug, Clone)]
struct Case {
    writable: Vec<&'static str>,
    read_deny: Vec<&'static str>,
    read: Vec<&'static str>,
}

fn case() -> impl Strategy<Value = Case> {
    let writable = prop::sample::subsequence(vec!["work", "work/a", "work/b", "extra"], 1..=4);
    let deny = prop::sample::subsequence(
        vec![
            "work/a/x",
            "work/b",
            "work/c/f.txt",
            "extra/deep",
            "other",
            "work/missing",
        ],
        0..=4,
    );
    let read = prop::sample::subsequence(vec!["home/.cargo", "home/proj", "home/.ssh"], 0..=2);
    (writable, deny, read).prop_map(|(writable, read_deny, read)| Case {
        writable,
        read_deny,
        read,
    })
}

/// Whether the grant `g` reaches `p`: `p` is `g` or lies below it.
fn reaches(g: &Path, p: &Path) -> bool {
    p.starts_with(g)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn grants_never_reach_an_unreadable_path(c in case()) {
        TREE.with(|t| -> Result<(), TestCaseError> {
            let read_deny: Vec<PathBuf> = c.read_deny.iter().map(|p| t.at(p)).collect();
            let read: Vec<PathBuf> = c.read.iter().map(|p| t.at(p)).collect();
            let home = t.at("home");
            let plan = Plan::new(PlanInput {
                writable: c.writable.iter().map(|p| t.at(p)).collect(),
                read_deny: &read_deny,
                home: Some(&home),
                runner_temp: None,
                read: &read,
                network: Network::None,
            });
            // The unreadable paths: the spec's, and the home directory's credentials, which
            // `sandbox.read` does not open.
            let mut unreadable = read_deny.clone();
            unreadable.push(home.join(".ssh"));
            unreadable.push(home.join(".aws"));
            for d in &unreadable {
                // A path that does not exist holds nothing to read: the kernel needs no rule
                // for it (the file tools still refuse it, below).
                for g in plan.read_grants.iter().chain(&plan.write_grants).filter(|_| d.exists()) {
                    prop_assert!(!reaches(g, d), "{c:?}: grant {} reaches {}", g.display(), d.display());
                }
                prop_assert!(plan.may_read(&d.join("f.txt")).is_err(), "{c:?}: {} readable", d.display());
                prop_assert!(plan.may_write(&d.join("new.txt")).is_err(), "{c:?}: {} writable", d.display());
            }
            // Writes stay inside the writable roots.
            for g in &plan.write_grants {
                prop_assert!(
                    plan.writable.iter().any(|w| g.starts_with(w)),
                    "{c:?}: write grant {} outside the roots {:?}", g.display(), plan.writable
                );
            }
            let writable_at = |p: &Path| plan.writable.iter().any(|w| p.starts_with(w));
            for rel in DIRS {
                let file = t.at(rel).join("new.txt");
                let denied = unreadable.iter().any(|d| file.starts_with(d));
                if !writable_at(&file) || denied {
                    prop_assert!(plan.may_write(&file).is_err(), "{c:?}: {} writable", file.display());
                } else {
                    prop_assert!(plan.may_write(&file).is_ok(), "{c:?}: {} not writable", file.display());
                }
            }
            // The home directory is closed but for what is opened in it.
            prop_assert!(plan.may_read(&home.join("f.txt")).is_err(), "{c:?}: the home is open");
            if c.read.contains(&"home/proj") {
                prop_assert!(plan.may_read(&home.join("proj/f.txt")).is_ok(), "{c:?}: home/proj closed");
            }
            Ok(())
        })?;
    }

    #[test]
    fn host_patterns_of_any_text_parse_or_are_refused(raw in "[ -~]{0,40}", host in "[a-z0-9.*:-]{0,30}") {
        if let Ok(p) = HostPattern::parse(&raw) {
            // A pattern that parsed matches its own name (less a wildcard's `*.`).
            let name = raw.trim().trim_start_matches("*.").to_ascii_lowercase();
            prop_assert_eq!(p.matches(&name), !raw.trim().starts_with("*."), "{:?}", raw);
            let _ = allowed(&[p], &host);
        }
    }
}
