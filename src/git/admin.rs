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

fn line(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.push(b'\n');
    v
}
