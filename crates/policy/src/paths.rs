//! Path handling for permission decisions: resolving a tool's path the way the OS will see it,
//! and the protected-path list (writes there are denied in every mode, bypass included).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::autoexec;
use crate::roots::SessionRoots;

/// Resolve `path` against `base` the way the kernel walks it: component by component, a
/// symlink (dangling or not) replaced by its target as it is met, and `..` taken after the
/// symlinks before it (`dir/link/../x` is next to the link's target, not in `dir`). Past the
/// first component that does not exist the rest is taken as written (`..` pops it), which is
/// where a file created there would land. A symlink loop stops the walk where it is.
pub fn resolve(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut queue: VecDeque<OsString> = VecDeque::new();
    for c in joined.components() {
        match c {
            Component::Normal(s) => queue.push_back(s.to_os_string()),
            Component::ParentDir => queue.push_back("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    let mut missing = false;
    while let Some(c) = queue.pop_front() {
        if c == ".." {
            out.pop();
            continue;
        }
        out.push(&c);
        if missing {
            continue;
        }
        match std::fs::symlink_metadata(&out) {
            Ok(m) if m.file_type().is_symlink() => {
                hops += 1;
                let Ok(target) = std::fs::read_link(&out) else {
                    continue;
                };
                if hops > MAX_SYMLINK_HOPS {
                    // The kernel gives up too (ELOOP): nothing is opened.
                    missing = true;
                    continue;
                }
                out.pop();
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for t in target.components().rev() {
                    match t {
                        Component::Normal(s) => queue.push_front(s.to_os_string()),
                        Component::ParentDir => queue.push_front("..".into()),
                        _ => {}
                    }
                }
            }
            Ok(_) => {}
            Err(_) => missing = true,
        }
    }
    out
}

/// Symlinks followed in one path before the walk gives up (Linux's limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// Resolve a path from a file tool's input relative to the workdir.
pub fn resolve_in(roots: &SessionRoots, path: &Path) -> PathBuf {
    resolve(&roots.workdir, path)
}

/// Whether `path` lies inside the workdir (not the additional directories).
pub fn inside_workdir(roots: &SessionRoots, path: &Path) -> bool {
    path.starts_with(&roots.workdir)
}

/// Protected directories (besides the auto-executed ones of [`autoexec::TABLE`]): a path with
/// any of these component sequences is protected.
const PROTECTED_DIRS: &[&[&str]] = &[
    &[".git"],
    &[".runner"],
    &[".config", "git"],
    &[".mvn"],
    &[".claude"],
];

/// Protected file names at any depth (besides the auto-executed ones of [`autoexec::TABLE`]).
const PROTECTED_FILES: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".gitattributes",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".profile",
    ".bazelrc",
    "gradle-wrapper.properties",
    "maven-wrapper.properties",
    ".ripgreprc",
    "pyrightconfig.json",
    ".mcp.json",
    ".claude.json",
];

/// If `path` (absolute, resolved) is protected, the marker that makes it so (e.g. `.git`,
/// `.github/workflows`, `.bashrc`).
///
/// Protected names count below the writable root that holds the path (the workdir or an
/// additional directory; the deepest one when they nest), never in the root's own location:
/// a task's worktree under `.runner/…/worktree` is an ordinary workspace, while its own
/// `.git` or `.runner` is protected. A path outside every root is checked whole.
pub fn protected_marker(path: &Path, roots: &SessionRoots) -> Option<String> {
    protected_marker_rel(workspace_relative(path, roots))
}

/// `path` relative to the deepest workspace root (workdir or additional directory) that holds
/// it, or `path` itself when none does.
pub fn workspace_relative<'a>(path: &'a Path, roots: &SessionRoots) -> &'a Path {
    std::iter::once(&roots.workdir)
        .chain(roots.additional_dirs.iter())
        .filter_map(|root| path.strip_prefix(root).ok())
        .min_by_key(|rel| rel.components().count())
        .unwrap_or(path)
}

/// The protected marker of a path taken component by component as given (see
/// [`protected_marker`]). Names are compared without case and without the invisible
/// characters a case-insensitive or normalising file system ignores (`.GIT`, `.g\u{200c}it`
/// are `.git` on macOS), so the check holds wherever the file system folds them.
fn protected_marker_rel(path: &Path) -> Option<String> {
    let comps: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(fold(&s.to_string_lossy())),
            _ => None,
        })
        .collect();
    let dirs: Vec<&[&str]> = PROTECTED_DIRS
        .iter()
        .copied()
        .chain(autoexec::dirs())
        .collect();
    for (i, _) in comps.iter().enumerate() {
        for dir in &dirs {
            if comps.len() >= i + dir.len()
                && comps[i..i + dir.len()]
                    .iter()
                    .zip(dir.iter())
                    .all(|(a, b)| a.as_str() == fold(b))
            {
                // `.claude/worktrees` is where agents keep worktrees; not protected.
                if *dir == [".claude"] && comps.get(i + 1).map(String::as_str) == Some("worktrees")
                {
                    continue;
                }
                return Some(dir.join("/"));
            }
        }
    }
    let name = comps.last()?;
    PROTECTED_FILES
        .iter()
        .copied()
        .chain(autoexec::files())
        .find(|f| fold(f) == *name)
        .map(str::to_string)
}

/// A path component as a case-insensitive, normalising file system compares it: lower case,
/// without the characters HFS+ and APFS ignore.
pub fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| {
            !matches!(
                *c,
                '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
            )
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether `path` is `/dev/tcp/...` or `/dev/udp/...`: bash opens a network connection there.
pub fn is_network(path: &Path) -> bool {
    path.starts_with("/dev/tcp") || path.starts_with("/dev/udp")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_markers() {
        let cases: &[(&str, Option<&str>)] = &[
            ("/w/.git/config", Some(".git")),
            ("/w/.git", Some(".git")),
            ("/w/sub/.git/hooks/pre-commit", Some(".git")),
            ("/w/.github/workflows/ci.yml", Some(".github/workflows")),
            ("/w/.github/actions/x/action.yml", Some(".github/actions")),
            ("/w/.github/ISSUE_TEMPLATE.md", None),
            ("/w/.runner/t.jsonl", Some(".runner")),
            ("/home/u/.bashrc", Some(".bashrc")),
            ("/w/.envrc", Some(".envrc")),
            ("/w/.claude/settings.json", Some(".claude")),
            ("/w/.claude/worktrees/a/file.rs", None),
            ("/w/.mcp.json", Some(".mcp.json")),
            ("/w/src/main.rs", None),
            ("/w/.gitignore", None),
            ("/w/.GIT/config", Some(".git")),
            ("/w/.Git/hooks/x", Some(".git")),
            ("/w/.g\u{200c}it/hooks/x", Some(".git")),
            ("/w/.GitHub/Workflows/ci.yml", Some(".github/workflows")),
            ("/w/.gitlab-ci.yml", Some(".gitlab-ci.yml")),
            ("/w/.circleci/config.yml", Some(".circleci")),
            ("/w/.buildkite/pipeline.yml", Some(".buildkite")),
            ("/w/Jenkinsfile", Some("Jenkinsfile")),
            ("/w/azure-pipelines.yml", Some("azure-pipelines.yml")),
            ("/w/.husky/pre-commit", Some(".husky")),
            ("/w/.lefthook.yml", Some(".lefthook.yml")),
            ("/w/.devcontainer/devcontainer.json", Some(".devcontainer")),
            ("/w/.gitea/workflows/ci.yml", Some(".gitea/workflows")),
            ("/w/.travis.yml", Some(".travis.yml")),
        ];
        for (p, want) in cases {
            assert_eq!(
                protected_marker_rel(Path::new(p)).as_deref(),
                *want,
                "path {p}"
            );
        }
    }

    fn roots(workdir: &str, additional: &[&str]) -> SessionRoots {
        SessionRoots {
            spec_dir: "/repo/tasks".into(),
            repo_root: Some("/repo".into()),
            workdir: workdir.into(),
            additional_dirs: additional.iter().map(PathBuf::from).collect(),
            output_dir: "/repo/.runner/t".into(),
            source_root: None,
        }
    }

    #[test]
    fn protected_names_count_below_the_root_only() {
        // runner's own worktrees: the task's worktree lies under `.runner`, and so does the
        // pool's overlay and checkout.
        let cases: &[(&str, &[&str], &str, Option<&str>)] = &[
            ("/repo/.runner/t-1/worktree", &[], "src/lib.rs", None),
            ("/repo/.runner/t-1/worktree", &[], "new.txt", None),
            (
                "/repo/.runner/t-1/worktree",
                &[],
                ".git/config",
                Some(".git"),
            ),
            (
                "/repo/.runner/t-1/worktree",
                &[],
                ".runner/x",
                Some(".runner"),
            ),
            (
                "/repo/.runner/t-1/worktree",
                &[],
                ".github/workflows/a.yml",
                Some(".github/workflows"),
            ),
            (
                "/repo/.runner/.worktrees/s3/tree",
                &[],
                "crates/a/Cargo.toml",
                None,
            ),
            (
                "/repo/.runner/.worktrees/s3/tree",
                &[],
                "crates/a/.git/hooks/x",
                Some(".git"),
            ),
            // The root is `.github` itself: what is below it is judged from there.
            ("/w/.github", &[], "workflows/ci.yml", None),
            // Outside every root the whole path counts: runner's transcript next to the worktree.
            (
                "/repo/.runner/t-1/worktree",
                &[],
                "/repo/.runner/t-1/transcript.jsonl",
                Some(".runner"),
            ),
            (
                "/repo/.runner/t-1/worktree",
                &[],
                "/home/u/.bashrc",
                Some(".bashrc"),
            ),
            // Additional directories are roots too; the deepest root holding the path wins.
            (
                "/w",
                &["/cache/.cargo/registry"],
                "/cache/.cargo/registry/x.rs",
                None,
            ),
            ("/w", &["/w/.runner/extra"], "/w/.runner/extra/a", None),
            (
                "/w",
                &["/w/.runner/extra"],
                "/w/.runner/other",
                Some(".runner"),
            ),
            // A root that merely shares a prefix of letters is not a parent.
            (
                "/w/.runner/t/worktree",
                &[],
                "/w/.runner/t/worktree2/a",
                Some(".runner"),
            ),
        ];
        for (workdir, extra, path, want) in cases {
            let r = roots(workdir, extra);
            let abs = Path::new(workdir).join(path);
            assert_eq!(
                protected_marker(&abs, &r).as_deref(),
                *want,
                "{path} in {workdir} (+{extra:?})"
            );
        }
    }

    #[test]
    fn resolve_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let outside_root = std::fs::canonicalize(outside.path()).unwrap();
        std::os::unix::fs::symlink(&outside_root, root.join("link")).unwrap();
        assert_eq!(
            resolve(&root, Path::new("link/new.txt")),
            outside_root.join("new.txt")
        );
        assert_eq!(
            resolve(&root, Path::new("a/../b/c")),
            root.join("b").join("c")
        );
        // `..` after a symlink climbs from its target.
        std::fs::create_dir_all(outside_root.join("deep/er")).unwrap();
        std::os::unix::fs::symlink(outside_root.join("deep/er"), root.join("dl")).unwrap();
        assert_eq!(
            resolve(&root, Path::new("dl/../x")),
            outside_root.join("deep/x")
        );
        // A dangling symlink resolves to where a write through it lands.
        std::os::unix::fs::symlink(outside_root.join("nothing/yet"), root.join("dangling"))
            .unwrap();
        assert_eq!(
            resolve(&root, Path::new("dangling")),
            outside_root.join("nothing/yet")
        );
        // Relative targets, chains, loops.
        std::os::unix::fs::symlink("dl", root.join("chain")).unwrap();
        assert_eq!(
            resolve(&root, Path::new("chain/f")),
            outside_root.join("deep/er/f")
        );
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        let _ = resolve(&root, Path::new("loop/x"));
        // /dev/fd/.. climbs through /proc.
        assert!(resolve(Path::new("/"), Path::new("/dev/fd/../environ")).starts_with("/proc"));
    }
}
