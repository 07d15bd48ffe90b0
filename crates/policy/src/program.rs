//! Which program a command's name runs: a name given by a path is the file it names.
//!
//! `./timeout 5 ls`, `./bash -c '…'` and `tools/sh -c '…'` run files of the workdir, not the
//! system's `timeout` or `bash`: a program given by a relative path, or by an absolute path
//! outside the system's program directories, is never treated as the wrapper, shell or
//! read-only program of the same file name. It is code runner cannot see, allowed only by a
//! rule that names it (`Bash(./timeout:*)`).

use std::path::{Component, Path};

/// Directories whose programs are the system's own: a path there is the program it names.
pub const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/opt/homebrew/bin",
    "/run/current-system/sw/bin",
];

/// Whether the command name `name` is a program given by a path that is not one of the
/// system's programs: a relative path (`./x`, `tools/sh`), or an absolute one outside
/// [`SYSTEM_DIRS`] or with `.`/`..` components.
pub fn by_path(name: &str) -> bool {
    if !name.contains('/') {
        return false;
    }
    let path = Path::new(name);
    if !path.is_absolute() {
        return true;
    }
    let plain = path
        .components()
        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    let Some(dir) = path.parent() else {
        return true;
    };
    !(plain && SYSTEM_DIRS.iter().any(|d| dir == Path::new(d)))
}

/// The file name the command `name` is known by, when it is the system's program of that
/// name (`/usr/bin/timeout` is `timeout`); `None` for a program given by another path.
pub fn system_name(name: &str) -> Option<&str> {
    if by_path(name) {
        return None;
    }
    Some(name.rsplit('/').next().unwrap_or(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_system_directories_are_their_own_programs() {
        for n in [
            "./timeout",
            "tools/sh",
            "../bash",
            "/tmp/bash",
            "/usr/bin/../../w/sh",
            "/usr/bin/x/sh",
            "/w/bin/git",
        ] {
            assert!(by_path(n), "{n}");
            assert_eq!(system_name(n), None, "{n}");
        }
        for (n, base) in [
            ("timeout", "timeout"),
            ("/usr/bin/timeout", "timeout"),
            ("/bin/sh", "sh"),
            ("/usr/local/bin/zsh", "zsh"),
        ] {
            assert!(!by_path(n), "{n}");
            assert_eq!(system_name(n), Some(base), "{n}");
        }
    }
}
