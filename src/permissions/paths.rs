//! Path handling for permission decisions: resolving a tool's path the way the OS will see it,
//! and the protected-path list (writes there are denied in every mode, bypass included).

use std::path::{Component, Path, PathBuf};

use crate::roots::{SessionRoots, normalize_lexically};

/// Resolve `path` against `base`: lexical `.`/`..` normalisation, then symlinks of the longest
/// existing prefix, so a symlink inside the workdir pointing at `/etc` resolves to `/etc`.
pub fn resolve(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let lexical = normalize_lexically(&joined);
    // Canonicalize the deepest existing ancestor and re-append the rest.
    let mut existing = lexical.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(canon) = std::fs::canonicalize(&existing) {
            let mut out = canon;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize_lexically(&out);
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return lexical,
        }
    }
}

/// Resolve a path from a file tool's input relative to the workdir.
pub fn resolve_in(roots: &SessionRoots, path: &Path) -> PathBuf {
    resolve(&roots.workdir, path)
}

/// Whether `path` lies inside the workdir (not the additional directories).
pub fn inside_workdir(roots: &SessionRoots, path: &Path) -> bool {
    path.starts_with(&roots.workdir)
}

/// Protected directories: a path with any of these component sequences is protected.
const PROTECTED_DIRS: &[&[&str]] = &[
    &[".git"],
    &[".runner"],
    &[".github", "workflows"],
    &[".github", "actions"],
    &[".config", "git"],
    &[".vscode"],
    &[".idea"],
    &[".husky"],
    &[".cargo"],
    &[".devcontainer"],
    &[".yarn"],
    &[".mvn"],
    &[".claude"],
];

/// Protected file names (at any depth).
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
    ".envrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnp.cjs",
    "bunfig.toml",
    ".bazelrc",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "gradle-wrapper.properties",
    "maven-wrapper.properties",
    ".devcontainer.json",
    ".ripgreprc",
    "pyrightconfig.json",
    ".mcp.json",
    ".claude.json",
];

/// If `path` is protected, the marker that makes it so (e.g. `.git`, `.github/workflows`,
/// `.bashrc`).
pub fn protected_marker(path: &Path) -> Option<String> {
    let comps: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    for (i, _) in comps.iter().enumerate() {
        for dir in PROTECTED_DIRS {
            if comps.len() >= i + dir.len() && comps[i..i + dir.len()] == **dir {
                // `.claude/worktrees` is where agents keep worktrees; not protected.
                if dir == &[".claude"] && comps.get(i + 1) == Some(&"worktrees") {
                    continue;
                }
                return Some(dir.join("/"));
            }
        }
    }
    let name = comps.last()?;
    PROTECTED_FILES
        .iter()
        .find(|f| *f == name)
        .map(|f| f.to_string())
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
        ];
        for (p, want) in cases {
            assert_eq!(protected_marker(Path::new(p)).as_deref(), *want, "path {p}");
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
    }
}
