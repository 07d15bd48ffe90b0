//! Which paths confined commands may read and write.
//!
//! Landlock only grants access, it cannot carve an exception out of a grant. So "everything but
//! `~/.ssh`" is granted as every sibling of `.ssh` in the home directory plus every sibling of
//! the home directory in its parent, and so on up to `/` ([`grants_except`]). Symbolic links are
//! never granted themselves: Landlock checks the path a link resolves to, so a link in the home
//! directory that points into `~/.ssh` stays unreadable.

use std::path::{Path, PathBuf};

/// Credential locations under the home directory that no confined command may read.
pub(crate) const HOME_CREDENTIALS: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".password-store",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/op",
    ".config/git/credentials",
    ".config/containers/auth.json",
    ".docker",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".terraform.d",
    ".vault-token",
    ".local/share/keyrings",
    ".claude",
    ".codex",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
];

/// System files that hold credentials.
pub(crate) const SYSTEM_CREDENTIALS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key",
];

/// Character devices every command may write (writing them changes nothing on disk).
pub(crate) const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The existing credential locations for `home`, plus `extra`, canonicalized (a path that does
/// not exist cannot be read, so it needs no rule).
pub(crate) fn credential_paths(home: Option<&Path>, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let candidates = home
        .into_iter()
        .flat_map(|h| HOME_CREDENTIALS.iter().map(move |rel| h.join(rel)))
        .chain(SYSTEM_CREDENTIALS.iter().map(PathBuf::from))
        .chain(extra.iter().cloned());
    for p in candidates {
        if let Ok(c) = std::fs::canonicalize(&p)
            && !out.contains(&c)
        {
            out.push(c);
        }
    }
    out
}

/// Paths whose grants together cover everything under `root` except the paths in `deny` (and
/// what lies under them). `root` itself when nothing is denied below it; nothing when `root`
/// is denied; otherwise the grants of each entry of `root`. Symbolic links are not granted.
pub(crate) fn grants_except(root: &Path, deny: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    expand(root, deny, &mut out);
    out
}

fn expand(dir: &Path, deny: &[PathBuf], out: &mut Vec<PathBuf>) {
    if deny.iter().any(|d| d == dir) {
        return;
    }
    if !deny.iter().any(|d| d.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        // Unreadable: nothing under it can be granted one by one, so nothing is.
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_symlink() => {}
            Ok(t) if t.is_dir() => expand(&path, deny, out),
            Ok(_) => {
                if !deny.contains(&path) {
                    out.push(path);
                }
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_open_up_only_the_ancestors_of_denied_paths() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for p in [
            "home/.ssh",
            "home/.config/gh",
            "home/.config/other",
            "home/src",
            "etc",
        ] {
            std::fs::create_dir_all(root.join(p)).unwrap();
        }
        std::fs::write(root.join("home/.netrc"), "machine x").unwrap();
        std::fs::write(root.join("home/notes"), "n").unwrap();
        std::os::unix::fs::symlink(root.join("home/.ssh"), root.join("home/link")).unwrap();
        let deny = vec![
            root.join("home/.ssh"),
            root.join("home/.config/gh"),
            root.join("home/.netrc"),
        ];
        let mut got = grants_except(&root, &deny);
        got.sort();
        let want: Vec<PathBuf> = ["etc", "home/.config/other", "home/notes", "home/src"]
            .iter()
            .map(|p| root.join(p))
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            grants_except(&root.join("etc"), &deny),
            vec![root.join("etc")]
        );
        assert!(grants_except(&root.join("home/.ssh"), &deny).is_empty());
    }

    #[test]
    fn credential_paths_keep_what_exists() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".npmrc"), "//registry/:_authToken=x").unwrap();
        let extra = home.join("secret.env");
        std::fs::write(&extra, "K=V").unwrap();
        let got = credential_paths(Some(&home), std::slice::from_ref(&extra));
        assert!(got.contains(&home.join(".ssh")));
        assert!(got.contains(&home.join(".npmrc")));
        assert!(got.contains(&extra));
        assert!(!got.contains(&home.join(".aws")));
    }
}
