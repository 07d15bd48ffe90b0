//! A worktree's own git administrative directory (its `HEAD` and index), kept beside the
//! worktree rather than registered under the repository's `.git/worktrees`.
//!
//! git finds it through the `.git` file at the worktree's root (`gitdir: ADMIN`), and the
//! repository through `ADMIN/commondir`, exactly as for a worktree made by `git worktree add`;
//! `git status`, `git diff` and `git commit` work in it as usual. Because nothing is written in
//! the repository, a batch that is killed leaves nothing there for `git` or a second run to
//! trip over, and no lock on the repository is needed to make or remove one.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::Oid;

/// Name of the administrative directory beside a worktree (`SLOT/git`, worktree `SLOT/tree`).
pub(crate) const ADMIN_DIR: &str = "git";

/// Write the administrative directory `admin` of the worktree at `worktree`, for the
/// repository whose common directory is `common_dir`, detached at `head`.
pub(crate) fn write(admin: &Path, common_dir: &Path, worktree: &Path, head: Oid) -> io::Result<()> {
    std::fs::create_dir_all(admin)?;
    std::fs::write(
        admin.join("commondir"),
        line(common_dir.as_os_str().as_bytes()),
    )?;
    std::fs::write(
        admin.join("gitdir"),
        line(worktree.join(".git").as_os_str().as_bytes()),
    )?;
    set_head(admin, head)
}

/// Detach the worktree's HEAD at `head`.
pub(crate) fn set_head(admin: &Path, head: Oid) -> io::Result<()> {
    std::fs::write(admin.join("HEAD"), format!("{head}\n"))
}

/// Write the `.git` file in `dir` that points git at `admin`.
pub(crate) fn write_gitfile(dir: &Path, admin: &Path) -> io::Result<()> {
    let mut text = b"gitdir: ".to_vec();
    text.extend_from_slice(&line(admin.as_os_str().as_bytes()));
    std::fs::write(dir.join(".git"), text)
}

/// What is not as [`write()`] and [`write_gitfile`] made it in the worktree at `worktree` (its
/// `.git` file) and its administrative directory `admin` (its `commondir` and `gitdir`), for
/// the repository whose common directory is `common_dir`: `None` when all is. Symbolic links
/// in their place count as changed.
pub(crate) fn changed(admin: &Path, common_dir: &Path, worktree: &Path) -> Option<String> {
    let dotgit = worktree.join(".git");
    let mut gitfile = b"gitdir: ".to_vec();
    gitfile.extend_from_slice(&line(admin.as_os_str().as_bytes()));
    let expected: [(&Path, Vec<u8>); 3] = [
        (&dotgit, gitfile),
        (
            &admin.join("commondir"),
            line(common_dir.as_os_str().as_bytes()),
        ),
        (&admin.join("gitdir"), line(dotgit.as_os_str().as_bytes())),
    ];
    for dir in [worktree, admin] {
        if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            return Some(format!("{} is no longer a directory", dir.display()));
        }
    }
    for (path, want) in expected {
        let is_file = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
        if !is_file || std::fs::read(path).ok().as_deref() != Some(want.as_slice()) {
            return Some(format!("{} was changed", path.display()));
        }
    }
    None
}

fn line(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.push(b'\n');
    v
}
