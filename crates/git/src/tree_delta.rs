//! The paths two trees differ in, found by descending only into subtrees whose ids differ.
//!
//! libgit2's tree-to-tree diff walks (and parses, and caches) every tree of both sides, even
//! where a whole subtree is unchanged: for a task that edits two files of a 20,000-file
//! repository that is every one of its ~8,000 trees, per task. Handing the diff the changed
//! paths as an exact path list lets its iterators skip every other directory, so a task's patch
//! costs what it changed, not the size of the repository.

use std::collections::BTreeMap;

use git2::{ObjectType, Oid, Repository, Tree, TreeEntry};

/// Every path (bytes, `/`-separated, relative to the root) at which `old` and `new` differ: a
/// file added, removed, changed in content or mode, or a file on one side where the other has a
/// directory (then every file under that directory too). Sorted, without duplicates.
pub(super) fn changed_paths(
    repo: &Repository,
    old: &Tree<'_>,
    new: &Tree<'_>,
) -> Result<Vec<Vec<u8>>, git2::Error> {
    let mut out = Vec::new();
    if old.id() != new.id() {
        compare(repo, Some(old), Some(new), &[], &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// One side's entry: its id, mode and whether it is a directory.
struct Side {
    id: Oid,
    mode: i32,
    tree: bool,
}

impl Side {
    fn of(e: &TreeEntry<'_>) -> Side {
        Side {
            id: e.id(),
            mode: e.filemode(),
            tree: e.kind() == Some(ObjectType::Tree),
        }
    }
}

fn compare(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: Option<&Tree<'_>>,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<(), git2::Error> {
    let mut entries: BTreeMap<Vec<u8>, (Option<Side>, Option<Side>)> = BTreeMap::new();
    for e in old.into_iter().flat_map(Tree::iter) {
        entries.entry(e.name_bytes().to_vec()).or_default().0 = Some(Side::of(&e));
    }
    for e in new.into_iter().flat_map(Tree::iter) {
        entries.entry(e.name_bytes().to_vec()).or_default().1 = Some(Side::of(&e));
    }
    for (name, (a, b)) in entries {
        if let (Some(a), Some(b)) = (&a, &b)
            && a.id == b.id
            && a.mode == b.mode
        {
            continue;
        }
        let path = join(prefix, &name);
        let subtree = |s: &Option<Side>| -> Result<Option<Tree<'_>>, git2::Error> {
            match s {
                Some(s) if s.tree => repo.find_tree(s.id).map(Some),
                _ => Ok(None),
            }
        };
        let (ta, tb) = (subtree(&a)?, subtree(&b)?);
        if ta.is_some() || tb.is_some() {
            compare(repo, ta.as_ref(), tb.as_ref(), &path, out)?;
        }
        let file = |s: &Option<Side>| s.as_ref().is_some_and(|s| !s.tree);
        if file(&a) || file(&b) {
            out.push(path);
        }
    }
    Ok(())
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(prefix.len() + 1 + name.len());
    if !prefix.is_empty() {
        p.extend_from_slice(prefix);
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{DiffOptions, Signature};
    use std::path::Path;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn commit_all(repo: &Repository) -> Oid {
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = index.write_tree().unwrap();
        let sig = Signature::now("t", "t@example.com").unwrap();
        let parents: Vec<git2::Commit<'_>> = repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(
            Some("HEAD"),
            &sig,
            &sig,
            "c",
            &repo.find_tree(tree).unwrap(),
            &refs,
        )
        .unwrap();
        tree
    }

    fn patch_text(diff: &git2::Diff<'_>) -> String {
        let mut s = String::new();
        diff.print(git2::DiffFormat::Patch, |_, _, l| {
            s.push(l.origin());
            s.push_str(std::str::from_utf8(l.content()).unwrap());
            true
        })
        .unwrap();
        s
    }

    #[test]
    fn the_limited_diff_equals_the_full_diff() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let repo = Repository::init(root).unwrap();
        for i in 0..30 {
            write(root, &format!("deep/a{i}/b/c.txt"), &format!("{i}\n"));
        }
        write(root, "top.txt", "top\n");
        write(root, "gone/x.txt", "x\n");
        write(root, "becomes_dir", "file\n");
        write(root, "becomes_file/y.txt", "y\n");
        write(root, "script.sh", "echo\n");
        let base = commit_all(&repo);

        write(root, "deep/a7/b/c.txt", "seven\n");
        write(root, "deep/a9/b/new.txt", "new\n");
        std::fs::remove_dir_all(root.join("gone")).unwrap();
        std::fs::remove_file(root.join("becomes_dir")).unwrap();
        write(root, "becomes_dir/z.txt", "z\n");
        std::fs::remove_dir_all(root.join("becomes_file")).unwrap();
        write(root, "becomes_file", "now a file\n");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            root.join("script.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let end = commit_all(&repo);

        let (old, new) = (repo.find_tree(base).unwrap(), repo.find_tree(end).unwrap());
        let paths = changed_paths(&repo, &old, &new).unwrap();
        let names: Vec<String> = paths
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "becomes_dir",
                "becomes_dir/z.txt",
                "becomes_file",
                "becomes_file/y.txt",
                "deep/a7/b/c.txt",
                "deep/a9/b/new.txt",
                "gone/x.txt",
                "script.sh",
            ]
        );
        let full = repo
            .diff_tree_to_tree(Some(&old), Some(&new), None)
            .unwrap();
        let mut opts = DiffOptions::new();
        opts.disable_pathspec_match(true);
        for p in &paths {
            opts.pathspec(p.clone());
        }
        let limited = repo
            .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
            .unwrap();
        assert_eq!(patch_text(&limited), patch_text(&full));
        assert!(
            changed_paths(&repo, &old, &old).unwrap().is_empty(),
            "a tree does not differ from itself"
        );
    }
}
