//! The roots every path in a task run resolves through.

use std::path::{Path, PathBuf};

/// The directories one task run works with. Isolating a task (git worktree) changes `workdir`
/// only; everything else resolves through this value.
#[derive(Debug, Clone)]
pub struct SessionRoots {
    /// Directory holding the task spec (rules starting with `/` are relative to it).
    pub spec_dir: PathBuf,
    /// Root of the git repository containing the workdir, if any.
    pub repo_root: Option<PathBuf>,
    /// Where tools run and paths resolve (absolute, canonical).
    pub workdir: PathBuf,
    /// Extra directories the agent may read (and, with rules, write).
    pub additional_dirs: Vec<PathBuf>,
    /// Output directory for this run (transcripts, spilled tool output); never inside the workdir's tracked tree.
    pub output_dir: PathBuf,
    /// The root of the checkout an isolated task's worktree was made from (`None` when the
    /// task works in place). Paths there are the user's checkout, not the task's files.
    pub source_root: Option<PathBuf>,
}

impl SessionRoots {
    /// Whether `path` (absolute) lies inside the workdir or an additional directory.
    pub fn is_inside_workspace(&self, path: &Path) -> bool {
        std::iter::once(&self.workdir)
            .chain(self.additional_dirs.iter())
            .any(|root| path.starts_with(root))
    }

    /// For an isolated task, the place in its own worktree of `path` (absolute), when `path`
    /// lies in the checkout the worktree was made from and outside the worktree: where the
    /// task meant to work. `None` otherwise.
    pub fn in_worktree(&self, path: &Path) -> Option<PathBuf> {
        let source = self.source_root.as_deref()?;
        let worktree = self.repo_root.as_deref()?;
        if path.starts_with(worktree) || path.starts_with(&self.workdir) {
            return None;
        }
        let rel = path.strip_prefix(source).ok()?;
        Some(worktree.join(rel))
    }

    /// Resolve a possibly relative path against the workdir, lexically normalizing `.` and `..`.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.workdir.join(path)
        };
        normalize_lexically(&joined)
    }
}

/// Remove `.` and `..` components without touching the filesystem.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_normalizes_dotdot() {
        let r = SessionRoots {
            spec_dir: "/s".into(),
            repo_root: None,
            workdir: "/w/x".into(),
            additional_dirs: vec![],
            output_dir: "/o".into(),
            source_root: None,
        };
        assert_eq!(r.resolve(Path::new("../y/./z")), PathBuf::from("/w/y/z"));
        assert!(!r.is_inside_workspace(&r.resolve(Path::new("../y"))));
        assert!(r.is_inside_workspace(&r.resolve(Path::new("a/b"))));
    }

    #[test]
    fn in_worktree_maps_the_source_checkout() {
        let r = SessionRoots {
            spec_dir: "/repo/.runner/t/worktree/tasks".into(),
            repo_root: Some("/repo/.runner/t/worktree".into()),
            workdir: "/repo/.runner/t/worktree/app".into(),
            additional_dirs: vec![],
            output_dir: "/repo/.runner/t".into(),
            source_root: Some("/repo".into()),
        };
        assert_eq!(
            r.in_worktree(Path::new("/repo/app/src/lib.rs")),
            Some(PathBuf::from("/repo/.runner/t/worktree/app/src/lib.rs"))
        );
        // The worktree itself (which lies inside the source checkout) is not mapped again.
        assert_eq!(
            r.in_worktree(Path::new("/repo/.runner/t/worktree/app/x")),
            None
        );
        assert_eq!(r.in_worktree(Path::new("/elsewhere/x")), None);
        let in_place = SessionRoots {
            source_root: None,
            ..r
        };
        assert_eq!(
            in_place.in_worktree(Path::new("/repo/app/src/lib.rs")),
            None
        );
    }
}
