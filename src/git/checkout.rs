//! Checking a tree out into a directory of its own — a batch's template, a pooled worktree,
//! a resumed task's lower layer — and resetting such a directory to another tree.
//!
//! Each of those directories is `DIR/tree` (the files) with its own git administrative
//! directory `DIR/git` ([`super::admin`]), so the checkout needs no lock on the repository and
//! several run at once. Two things make libgit2's checkout slower than git's and are turned
//! off where they do not change the result: the attribute look-up for every file (needed only
//! when the repository has attribute, end-of-line or filter rules, see [`needs_filters`]) and
//! re-hashing every object read (see [`super::fast_object_reads`]).

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{Oid, Repository, TreeWalkMode, TreeWalkResult};

use super::admin;

/// Whether files of `tree` may need git's filters between the object store and the working
/// tree (end-of-line conversion, `ident`, filter drivers such as LFS): a `.gitattributes` file
/// anywhere in the tree, `info/attributes`, a global attributes file, or `core.autocrlf`,
/// `core.eol` or a `filter.*` driver in the configuration.
pub(crate) fn needs_filters(repo: &Repository, tree: Oid) -> bool {
    if let Ok(cfg) = repo.config() {
        let autocrlf = cfg.get_string("core.autocrlf").ok();
        if autocrlf.is_some_and(|v| !v.eq_ignore_ascii_case("false")) {
            return true;
        }
        if cfg.get_entry("core.eol").is_ok() || cfg.get_entry("core.attributesFile").is_ok() {
            return true;
        }
        if cfg
            .entries(Some("^filter\\."))
            .is_ok_and(|mut e| e.next().is_some())
        {
            return true;
        }
    }
    if repo.commondir().join("info/attributes").exists() || global_attributes_file() {
        return true;
    }
    let Ok(tree) = repo.find_tree(tree) else {
        return true;
    };
    let mut found = false;
    let walked = tree.walk(TreeWalkMode::PreOrder, |_, entry| {
        if entry.name_bytes() == b".gitattributes" {
            found = true;
            TreeWalkResult::Abort
        } else {
            TreeWalkResult::Ok
        }
    });
    // A walk that failed part way cannot tell: assume filters are needed.
    found || walked.is_err()
}

/// git's default global attributes file (`$XDG_CONFIG_HOME/git/attributes`, else
/// `~/.config/git/attributes`) exists.
fn global_attributes_file() -> bool {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")));
    base.is_some_and(|b| b.join("git/attributes").exists())
}

/// Make `dir/tree` a checkout of `tree` with its own administrative directory `dir/git`
/// (HEAD detached at `commit`) for the repository whose common directory is `common_dir`.
pub(crate) fn create(
    dir: &Path,
    common_dir: &Path,
    commit: Oid,
    tree: Oid,
    filters: bool,
) -> Result<(), super::GitError> {
    let work = dir.join(super::slot::TREE);
    let admin_dir = dir.join(admin::ADMIN_DIR);
    let what = || format!("create the worktree {}", work.display());
    std::fs::create_dir_all(&work).map_err(super::io_err(what()))?;
    admin::write(&admin_dir, common_dir, &work, commit).map_err(super::io_err(what()))?;
    admin::write_gitfile(&work, &admin_dir).map_err(super::io_err(what()))?;
    reset(&work, tree, filters).map_err(super::git_err(what()))
}

/// Make the worktree at `work` (with its own index) exactly `tree`: changed and deleted files
/// are written again, files that are not in `tree` removed, ignored ones included; the index
/// is rewritten to match.
pub(crate) fn reset(work: &Path, tree: Oid, filters: bool) -> Result<(), git2::Error> {
    let repo = Repository::open(work)?;
    let tree = repo.find_tree(tree)?;
    let mut cb = CheckoutBuilder::new();
    cb.force()
        .remove_untracked(true)
        .remove_ignored(true)
        .disable_filters(!filters);
    repo.checkout_tree(tree.as_object(), Some(&mut cb))
}
