//! Commands that change the file system under the decision: a command line is decided before
//! any of it runs, against the file system as it is, so a path an earlier command of the same
//! line creates (`ln -s ../home h && cat h/.netrc`, `tar -xf v.tar && cat v/cfg/passwd`,
//! `echo > --pre=sh; rg -l . *`) would be judged in its old state. Such later paths are
//! unknown instead: see [`Change`].

use super::word::ArgWord;
use super::{git, program};

/// How far a command changes what later paths of the same command line mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// It creates new names (`mkdir`, `touch`, an output redirection, a download): a glob
    /// later in the line may expand to one of them (a file named `--pre=sh`), so later globs
    /// are unknown.
    Names,
    /// It may create symbolic links or move entries (`ln`, `cp`, `mv`, unpacking an archive,
    /// `git apply`, `patch`, `git checkout`): every later path may lead elsewhere, so later
    /// paths are unknown (reads are not read-only and, with a Read deny rule, denied; writes
    /// and file operands are denied).
    Links,
}

/// Programs that may create links or move entries.
const LINKS: &[&str] = &[
    "ln",
    "link",
    "cp",
    "mv",
    "install",
    "rsync",
    "unzip",
    "bsdtar",
    "7z",
    "7za",
    "7zr",
    "7zz",
    "cpio",
    "pax",
    "ar",
    "patch",
    "unsquashfs",
    "unrar",
    "cabextract",
    "rename",
];

/// Programs that create names only.
const NAMES: &[&str] = &[
    "mkdir", "touch", "mkfifo", "mknod", "mktemp", "split", "csplit", "dd", "tee", "curl", "wget",
    "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "truncate",
];

/// git subcommands that write the work tree (checked-out content may hold symbolic links).
const GIT_LINKS: &[&str] = &[
    "apply",
    "am",
    "checkout",
    "restore",
    "switch",
    "stash",
    "reset",
    "clone",
    "pull",
    "merge",
    "rebase",
    "cherry-pick",
    "revert",
    "worktree",
    "mv",
    "submodule",
    "sparse-checkout",
    "read-tree",
    "checkout-index",
    "bisect",
    "init",
];

/// How the command `argv` (after its wrappers) changes later paths, if it does.
pub fn of(argv: &[ArgWord]) -> Option<Change> {
    let name = argv.first()?;
    let base = program::system_name(&name.text)?;
    let args = &argv[1..];
    match base {
        "tar" => tar(args),
        "git" => {
            let sub = git::globals(args).sub?;
            GIT_LINKS
                .contains(&args[sub].text.as_str())
                .then_some(Change::Links)
        }
        b if LINKS.contains(&b) => Some(Change::Links),
        b if NAMES.contains(&b) => Some(Change::Names),
        _ => None,
    }
}

/// `tar`: extracting may create links; creating writes an archive (a new name); listing
/// changes nothing.
fn tar(args: &[ArgWord]) -> Option<Change> {
    let mode = |c: char| {
        args.iter().enumerate().any(|(i, a)| {
            let t = a.text.as_str();
            let cluster =
                (i == 0 && !t.starts_with('-')) || (t.starts_with('-') && !t.starts_with("--"));
            (cluster && t.contains(c))
                || match c {
                    'x' => matches!(t, "--extract" | "--get"),
                    't' => t == "--list",
                    _ => false,
                }
        })
    };
    if mode('x') || args.iter().any(|a| a.dynamic) {
        Some(Change::Links)
    } else if mode('t') {
        None
    } else {
        Some(Change::Names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_text(s: &str) -> Option<Change> {
        of(&ArgWord::split(s))
    }

    #[test]
    fn commands_that_change_paths() {
        for cmd in [
            "ln -s ../home h",
            "cp -s a b",
            "tar -xf v.tar",
            "tar xzf v.tgz",
            "tar --extract -f v.tar",
            "unzip a.zip",
            "git apply fix.diff",
            "git -C . checkout main",
            "patch -p1",
            "mv a b",
        ] {
            assert_eq!(of_text(cmd), Some(Change::Links), "{cmd}");
        }
        for cmd in [
            "mkdir -p out",
            "touch x",
            "tar -cf a.tar src",
            "curl -o x https://h",
        ] {
            assert_eq!(of_text(cmd), Some(Change::Names), "{cmd}");
        }
        for cmd in [
            "tar -tf a.tar",
            "cat x",
            "git status",
            "git add .",
            "./ln -s a b",
        ] {
            assert_eq!(of_text(cmd), None, "{cmd}");
        }
    }
}
