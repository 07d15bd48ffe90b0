//! A task's end state as a git tree, built from what changed: the base tree with the changed
//! paths written over it and the deleted ones taken out, so the cost grows with the changes.
//!
//! What changed is found one of two ways:
//! - in an overlay worktree, from its upper directory ([`from_upper`]): every file the task
//!   wrote is there (copied up), every directory it touched, and a whiteout for every
//!   deletion. The merged view is the truth; the upper directory only says where to look;
//! - anywhere else, by one walk of the working tree against the base tree, with the index as
//!   a stat cache ([`from_workdir`]) — `git add -A`'s result without touching the index's
//!   content (in a worktree of its own, the refreshed stat data are written back, so the next
//!   walk does not read the files again).
//!
//! Either way, ignored files that are not in the base are left out, runner's own output
//! directories (`exclude`) too, and the changed files are hashed through git's filters like
//! `git add` would. The objects are written with [`retry`] (a concurrent `git gc` can make a
//! write fail part way); no reference holds them yet: the caller holds the tree it gets.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::build::TreeUpdateBuilder;
use git2::{Delta, DiffOptions, FileMode, Index, ObjectType, Oid, Repository, Tree};

use super::objects::{failed, retry};
use super::overlay;
use super::{GitError, git_err, io_err};

/// Paths to hash and paths gone, relative to the worktree's root.
#[derive(Debug, Default)]
struct Changes {
    written: Vec<PathBuf>,
    removed: Vec<PathBuf>,
}

/// The tree of overlay worktree `merged` (upper directory `upper`) after a task that started
/// from `base`. `repo` is the worktree's repository; `exclude` are paths relative to its root.
pub(crate) fn from_upper(
    repo: &Repository,
    base: &Tree<'_>,
    merged: &Path,
    upper: &Path,
    exclude: &[PathBuf],
) -> Result<Oid, GitError> {
    let mut walk = UpperWalk {
        repo,
        merged,
        upper,
        exclude,
        changes: Changes::default(),
    };
    walk.dir(Path::new(""), Some(base), false)?;
    apply(repo, base, walk.changes)
}

struct UpperWalk<'a> {
    repo: &'a Repository,
    merged: &'a Path,
    upper: &'a Path,
    exclude: &'a [PathBuf],
    changes: Changes,
}

impl UpperWalk<'_> {
    /// Look at directory `rel`, which is in the upper layer (or under a directory that is
    /// `whole`: new, or renamed, so that none of its content can be taken from the base at
    /// the same path). `base`: the base tree at `rel`, if it was a directory there.
    fn dir(&mut self, rel: &Path, base: Option<&Tree<'_>>, whole: bool) -> Result<(), GitError> {
        let merged_names = names(&self.merged.join(rel))?;
        if let Some(base) = base {
            for e in base.iter() {
                let name = OsStr::from_bytes(e.name_bytes());
                if !merged_names.contains(name) && e.kind() != Some(ObjectType::Commit) {
                    self.changes.removed.push(rel.join(name));
                }
            }
        }
        // Entries the upper layer does not have come from the base unchanged, unless the
        // directory's content does not come from the base at this path at all.
        let mut look: Vec<OsString> = if whole {
            merged_names.into_iter().collect()
        } else {
            names(&self.upper.join(rel))?
                .into_iter()
                .filter(|n| merged_names.contains(n))
                .collect()
        };
        look.sort();
        for name in look {
            if rel.as_os_str().is_empty() && name == ".git" {
                continue;
            }
            let path = rel.join(&name);
            if self.exclude.iter().any(|x| path.starts_with(x)) {
                continue;
            }
            let entry = base.and_then(|t| t.get_name_bytes(name.as_bytes()));
            let kind = entry.as_ref().and_then(|e| e.kind());
            if kind == Some(ObjectType::Commit) {
                // A submodule's commit is not the task's to change here.
                continue;
            }
            let meta = match std::fs::symlink_metadata(self.merged.join(&path)) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if entry.is_some() {
                        self.changes.removed.push(path);
                    }
                    continue;
                }
                Err(e) => {
                    return Err(io_err(format!(
                        "read {}",
                        self.merged.join(&path).display()
                    ))(e));
                }
            };
            let ft = meta.file_type();
            if ft.is_dir() {
                let sub_base = match (&entry, kind) {
                    (Some(e), Some(ObjectType::Tree)) => Some(
                        self.repo
                            .find_tree(e.id())
                            .map_err(git_err("read the base tree"))?,
                    ),
                    _ => None,
                };
                if entry.is_some() && sub_base.is_none() {
                    // A file replaced by a directory.
                    self.changes.removed.push(path.clone());
                }
                if sub_base.is_none() && self.ignored(&path, true) {
                    continue;
                }
                let sub_whole =
                    whole || sub_base.is_none() || overlay::is_redirect(&self.upper.join(&path));
                self.dir(&path, sub_base.as_ref(), sub_whole)?;
            } else if ft.is_file() || ft.is_symlink() {
                if kind == Some(ObjectType::Tree) {
                    // A directory replaced by a file.
                    self.changes.removed.push(path.clone());
                } else if entry.is_none() && self.ignored(&path, false) {
                    continue;
                }
                self.changes.written.push(path);
            }
        }
        Ok(())
    }

    /// Whether a path that is not in the base is ignored (`.gitignore` and friends).
    fn ignored(&self, path: &Path, dir: bool) -> bool {
        let mut p = path.as_os_str().to_os_string();
        if dir {
            p.push("/");
        }
        self.repo.is_path_ignored(Path::new(&p)).unwrap_or(false)
    }
}

/// The names in directory `dir`.
fn names(dir: &Path) -> Result<HashSet<OsString>, GitError> {
    let rd = std::fs::read_dir(dir).map_err(io_err(format!("read {}", dir.display())))?;
    rd.map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .map_err(io_err(format!("read {}", dir.display())))
}

/// The tree of the working tree of `repo` as `git add -A` would make it: the index's tree with
/// what one walk of the working tree finds different from the index (the index is only a stat
/// cache: content staged or not makes no difference). `refresh_index`: write the index's
/// refreshed stat data back (only in a worktree that is the task's own). An index with
/// conflicts has no tree: then the working tree is compared with `fallback` instead.
pub(crate) fn from_workdir(
    repo: &Repository,
    fallback: &Tree<'_>,
    exclude: &[PathBuf],
    refresh_index: bool,
) -> Result<Oid, GitError> {
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_typechange(true)
        .update_index(refresh_index);
    let mut index = repo.index().map_err(git_err("read the index"))?;
    // The index's tree comes from its cache of tree ids where that is valid: no tree is read.
    let (base, diff) = match retry("write the index's tree", || index.write_tree()) {
        Ok(tree) => {
            let base = repo
                .find_tree(tree)
                .map_err(git_err("read the index's tree"))?;
            let diff = repo
                .diff_index_to_workdir(Some(&index), Some(&mut opts))
                .map_err(git_err("compare the working tree with the index"))?;
            (base, diff)
        }
        Err(_) => {
            let diff = repo
                .diff_tree_to_workdir_with_index(Some(fallback), Some(&mut opts))
                .map_err(git_err("compare the working tree with the base"))?;
            (fallback.clone(), diff)
        }
    };
    let base = &base;
    let workdir = repo.workdir().unwrap_or(Path::new("."));
    let mut changes = Changes::default();
    for d in diff.deltas() {
        let Some(path) = d.new_file().path().or_else(|| d.old_file().path()) else {
            continue;
        };
        if exclude.iter().any(|x| path.starts_with(x))
            || d.new_file().mode() == FileMode::Commit
            || d.old_file().mode() == FileMode::Commit
        {
            continue;
        }
        match d.status() {
            // A file of the base that is not in the index but is in the working tree (an
            // untracked file of a snapshot) shows as deleted: look.
            Delta::Deleted if std::fs::symlink_metadata(workdir.join(path)).is_err() => {
                changes.removed.push(path.to_path_buf())
            }
            Delta::Deleted
            | Delta::Added
            | Delta::Modified
            | Delta::Untracked
            | Delta::Typechange => {
                let full = workdir.join(path);
                if full.is_dir() && !full.is_symlink() {
                    // A file of the base replaced by a directory: the file goes, what the
                    // directory holds comes in.
                    if base.get_path(path).is_ok() {
                        changes.removed.push(path.to_path_buf());
                    }
                    add_dir(repo, workdir, path, exclude, &mut changes.written)?;
                } else {
                    changes.written.push(path.to_path_buf());
                }
            }
            _ => {}
        }
    }
    apply(repo, base, changes)
}

/// The files under directory `rel` of the working tree that are not ignored, into `out`.
fn add_dir(
    repo: &Repository,
    workdir: &Path,
    rel: &Path,
    exclude: &[PathBuf],
    out: &mut Vec<PathBuf>,
) -> Result<(), GitError> {
    let dir = workdir.join(rel);
    let rd = std::fs::read_dir(&dir).map_err(io_err(format!("read {}", dir.display())))?;
    for e in rd {
        let e = e.map_err(io_err(format!("read {}", dir.display())))?;
        let path = rel.join(e.file_name());
        let Ok(ft) = e.file_type() else { continue };
        if exclude.iter().any(|x| path.starts_with(x)) {
            continue;
        }
        let mut probe = path.as_os_str().to_os_string();
        if ft.is_dir() {
            probe.push("/");
        }
        if repo.is_path_ignored(Path::new(&probe)).unwrap_or(false) {
            continue;
        }
        if ft.is_dir() {
            add_dir(repo, workdir, &path, exclude, out)?;
        } else if ft.is_file() || ft.is_symlink() {
            out.push(path);
        }
    }
    Ok(())
}

/// `base` with `changes` applied: removed paths taken out, written paths hashed (through
/// git's filters, as `git add` does; blobs written to the object store) and put in.
fn apply(repo: &Repository, base: &Tree<'_>, changes: Changes) -> Result<Oid, GitError> {
    if changes.written.is_empty() && changes.removed.is_empty() {
        return Ok(base.id());
    }
    let what = "record the task's changes as a tree";
    // An in-memory index owned by the repository: `add_path` reads the file from the working
    // tree and applies the filters its attributes ask for, without touching the index file.
    let mut index = Index::new().map_err(git_err(what))?;
    repo.set_index(&mut index).map_err(git_err(what))?;
    for p in &changes.written {
        let hash = format!("hash {} for the task's changes", p.display());
        retry(&hash, || index.add_path(p)).map_err(git_err(hash.clone()))?;
    }
    let mut removals = TreeUpdateBuilder::new();
    for p in &changes.removed {
        removals.remove(p);
    }
    let mid = retry(what, || removals.create_updated(repo, base)).map_err(failed(
        repo,
        &[base.id()],
        what,
    ))?;
    let mid = repo.find_tree(mid).map_err(git_err(what))?;
    let mut updates = TreeUpdateBuilder::new();
    let mut written = Vec::new();
    for e in index.iter() {
        let path = Path::new(OsStr::from_bytes(&e.path));
        let mode = match e.mode {
            0o100755 => FileMode::BlobExecutable,
            0o120000 => FileMode::Link,
            _ => FileMode::Blob,
        };
        let same = mid
            .get_path(path)
            .is_ok_and(|old| old.id() == e.id && old.filemode() == i32::from(mode));
        if !same {
            updates.upsert(path, e.id, mode);
            written.push(e.id);
        }
    }
    if written.is_empty() {
        return Ok(mid.id());
    }
    // A blob hashed above that a concurrent prune took is `Lost`: the caller writes it again.
    retry(what, || updates.create_updated(repo, &mid)).map_err(failed(repo, &written, what))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    use super::super::test_git::git;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// The paths that differ between two trees.
    fn changed(repo: &Repository, a: Oid, b: Oid) -> Vec<String> {
        let (a, b) = (repo.find_tree(a).unwrap(), repo.find_tree(b).unwrap());
        let diff = repo.diff_tree_to_tree(Some(&a), Some(&b), None).unwrap();
        diff.deltas()
            .map(|d| {
                let p = d.new_file().path().or(d.old_file().path()).unwrap();
                format!("{:?} {}", d.status(), p.display())
            })
            .collect()
    }

    #[test]
    fn a_walk_finds_what_add_all_would() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        write(root, "README.md", "# r\n");
        write(root, "src/lib.txt", "one\ntwo\n");
        write(root, "src/gone.txt", "bye\n");
        write(root, ".gitignore", "target/\n");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "init"]);
        // Untracked before the task: part of the base snapshot, not a change of the task.
        write(root, "task.yaml", "name: t\n");
        write(root, "target/out.o", "ignored\n");
        let repo = Repository::open(root).unwrap();
        let head = repo.head().unwrap().peel_to_tree().unwrap();
        let base = from_workdir(&repo, &head, &[], false).unwrap();
        assert_eq!(changed(&repo, head.id(), base), ["Added task.yaml"]);
        // The task's changes.
        write(root, "src/lib.txt", "one\nTWO\n");
        write(root, "src/new/deep.txt", "fresh\n");
        std::fs::remove_file(root.join("src/gone.txt")).unwrap();
        write(root, "target/more.o", "ignored\n");
        let repo = Repository::open(root).unwrap();
        let base_tree = repo.find_tree(base).unwrap();
        let end = from_workdir(&repo, &base_tree, &[], false).unwrap();
        assert_eq!(
            changed(&repo, base, end),
            [
                "Deleted src/gone.txt",
                "Modified src/lib.txt",
                "Added src/new/deep.txt"
            ]
        );
        // Nothing was staged.
        assert_eq!(git(root, &["diff", "--cached", "--name-only"]), "");
    }

    /// In place the user's index may hold staged work: the tree is still the working tree's,
    /// byte for byte what `git add -A && git write-tree` gives.
    #[test]
    fn staged_work_gives_the_tree_git_add_all_gives() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        write(root, "a.txt", "a\n");
        write(root, "b.txt", "b\n");
        write(root, "c.txt", "c\n");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "init"]);
        // Staged, then changed again; staged new file removed from the working tree; staged
        // deletion; a staged file; an untracked one.
        write(root, "a.txt", "a staged\n");
        git(root, &["add", "a.txt"]);
        write(root, "a.txt", "a in the working tree\n");
        write(root, "gone.txt", "staged only\n");
        git(root, &["add", "gone.txt"]);
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        git(root, &["rm", "-q", "b.txt"]);
        write(root, "new.txt", "new\n");
        git(root, &["add", "new.txt"]);
        write(root, "untracked.txt", "u\n");
        let repo = Repository::open(root).unwrap();
        let head = repo.head().unwrap().peel_to_tree().unwrap();
        let got = from_workdir(&repo, &head, &[], false).unwrap();
        git(root, &["add", "-A"]);
        let want = git(root, &["write-tree"]);
        assert_eq!(got.to_string(), want.trim());
    }

    /// Every kind of change a task can make, in a real overlay worktree: the tree read from
    /// the upper directory is the tree a full walk of the worktree finds. Needs mount rights
    /// (root); without them overlays are never used and there is nothing to check.
    #[test]
    fn the_upper_directory_gives_the_same_tree_as_a_full_walk() {
        use super::super::overlay;
        use super::super::slot::Slot;
        use super::super::template::Template;
        let dir = tempfile::tempdir().unwrap();
        let Ok(opts) = overlay::probe(dir.path()) else {
            eprintln!("no overlay mounts here; skipped");
            return;
        };
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        for (rel, text) in [
            ("README.md", "# r\n"),
            ("a/x.txt", "ax\n"),
            ("a/deep/y.txt", "ay\n"),
            ("b/x.txt", "bx\n"),
            ("b/only-b.txt", "b\n"),
            ("file-to-dir", "f\n"),
            ("dir-to-file/z.txt", "z\n"),
            ("opaque/old.txt", "old\n"),
            ("chmod.sh", "echo\n"),
            ("build/tracked.txt", "t\n"),
            (".gitignore", "build/\nnode_modules/\n"),
        ] {
            write(&root, rel, text);
        }
        git(&root, &["add", "-A", "-f"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        let repo = Repository::open(&root).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        let common = repo.commondir().to_path_buf();
        let template = Template::create(
            &dir.path().join("tpl"),
            &common,
            head.id(),
            head.tree_id(),
            false,
            &crate::checkout::Cancel::default(),
        )
        .unwrap();
        let template = std::sync::Arc::new(crate::lower::Lower::Template(template));
        let scripts = [
            "echo more >> README.md",
            "rm a/x.txt",
            "rm -r a",
            "mv a c",
            // A renamed directory over one of the base: its content is not the base's there.
            "rm -r b && mv a b",
            "rm file-to-dir && mkdir file-to-dir && echo in > file-to-dir/f",
            "rm -r dir-to-file && echo now-a-file > dir-to-file",
            "rm -r opaque && mkdir opaque && echo new > opaque/new.txt",
            "chmod +x chmod.sh",
            "ln -s README.md link",
            "mkdir -p node_modules/p && echo x > node_modules/p/i.js",
            "echo changed > build/tracked.txt && echo junk > build/new.o",
            "mkdir -p new/empty new/full && echo f > new/full/f",
            "echo same > tmp && rm tmp",
            "cp README.md README.md.bak && mv README.md.bak README.md",
        ];
        for (i, script) in scripts.iter().enumerate() {
            let slot = Slot::overlay(
                &dir.path().join(format!("s{i}")),
                &template,
                &common,
                head.id(),
                head.tree_id(),
                opts,
            )
            .unwrap();
            let work = slot.worktree();
            let out = Command::new("sh")
                .args(["-c", script])
                .current_dir(&work)
                .output()
                .unwrap();
            assert!(out.status.success(), "{script}: {out:?}");
            let wt = Repository::open(&work).unwrap();
            let base = wt.find_tree(head.tree_id()).unwrap();
            let upper = slot.upper().unwrap();
            let from_up = from_upper(&wt, &base, &work, &upper, &[]).unwrap();
            let walked =
                from_workdir(&Repository::open(&work).unwrap(), &base, &[], false).unwrap();
            assert_eq!(
                changed(&wt, head.tree_id(), from_up),
                changed(&wt, head.tree_id(), walked),
                "{script}"
            );
            assert_eq!(from_up, walked, "{script}");
            slot.destroy();
        }
    }
}
