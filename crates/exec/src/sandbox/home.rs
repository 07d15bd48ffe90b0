//! The home directory is an allow list: a deny list of credential files is always one file
//! short (a token in `~/.gitconfig`'s `url.*.insteadOf`, `.pgpass`, `.terraformrc`, rclone,
//! `.s3cfg`, `pip.conf`, a self-hosted runner's `.credentials` …). Under `$HOME` — and under
//! `$RUNNER_TEMP`, where setup actions write `.npmrc` files with tokens — confined commands read
//! only the toolchain locations of [`TOOLCHAINS`] (less the credential files inside them), the
//! writable roots, and the spec's `sandbox.read`.

use std::path::{Path, PathBuf};

/// Locations under the home directory that toolchains read and that hold no credentials of
/// their own (the credential files some of them may hold are still denied, see
/// [`super::paths::HOME_CREDENTIALS`]).
pub const TOOLCHAINS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".npm",
    ".node-gyp",
    ".cache",
    ".local",
    ".pyenv",
    ".nvm",
    ".volta",
    ".fnm",
    ".bun",
    ".deno",
    ".yarn/berry/cache",
    ".pnpm-store",
    ".gradle/caches",
    ".gradle/wrapper",
    ".m2/repository",
    ".ivy2/cache",
    ".sbt",
    ".coursier",
    "go/pkg",
    "go/bin",
    ".rbenv",
    ".gem/ruby",
    ".nuget/packages",
    ".dotnet",
    ".elan",
    ".ghcup",
    ".cabal/packages",
    ".stack",
    ".opam",
    ".mix",
    ".hex",
    ".pub-cache",
    ".swiftpm",
    ".conda",
    "miniconda3",
    ".julia",
    ".sdkman",
    ".jdks",
    ".asdf",
    ".linuxbrew",
];

/// What is readable under the home directory and the other denied trees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HomeRules {
    /// The trees whose contents are denied but for the allowed paths (`$HOME`,
    /// `$RUNNER_TEMP`), canonical.
    pub closed: Vec<PathBuf>,
    /// The paths inside them that stay readable: the toolchain locations that exist, the
    /// writable roots and the spec's `sandbox.read`, canonical.
    pub open: Vec<PathBuf>,
    /// The toolchain locations that exist, relative to the home directory (for the reports).
    pub toolchains: Vec<String>,
}

impl HomeRules {
    /// The rules for `home` and `runner_temp`; `open` adds paths inside them that stay
    /// readable (the writable roots, `sandbox.read`).
    pub fn new(home: Option<&Path>, runner_temp: Option<&Path>, open: &[PathBuf]) -> HomeRules {
        let canon = |p: &Path| std::fs::canonicalize(p).ok();
        let mut rules = HomeRules::default();
        for tree in home.into_iter().chain(runner_temp).filter_map(canon) {
            // A home of `/` (some containers) cannot be closed without closing everything.
            if tree.parent().is_some() && !rules.closed.contains(&tree) {
                rules.closed.push(tree);
            }
        }
        if let Some(h) = home.and_then(canon) {
            for rel in TOOLCHAINS {
                if let Some(p) = canon(&h.join(rel))
                    && p.starts_with(&h)
                {
                    rules.toolchains.push((*rel).to_string());
                    rules.open.push(p);
                }
            }
        }
        for p in open.iter().filter_map(|p| canon(p)) {
            if !rules.open.contains(&p) {
                rules.open.push(p);
            }
        }
        rules
    }

    /// Whether `path` (canonical) lies in a closed tree and in no open path. (A directory on
    /// the way to an open path can be passed through, not listed.)
    pub fn denies(&self, path: &Path) -> bool {
        self.closed.iter().any(|c| path.starts_with(c))
            && !self.open.iter().any(|o| path.starts_with(o))
    }

    /// The open paths that lie inside a closed tree (the others need no grant of their own).
    pub fn open_inside(&self) -> impl Iterator<Item = &PathBuf> {
        self.open
            .iter()
            .filter(|o| self.closed.iter().any(|c| o.starts_with(c)))
    }
}

/// The files of a self-hosted GitHub Actions runner that hold its credentials, found from
/// `RUNNER_WORKSPACE` (`<runner>/_work/<repo>`): `<runner>/.credentials`,
/// `.credentials_rsaparams`, `.runner`, `.env`.
pub fn actions_runner_credentials() -> Vec<PathBuf> {
    let Some(ws) = std::env::var_os("RUNNER_WORKSPACE").map(PathBuf::from) else {
        return Vec::new();
    };
    let Some(root) = ws.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    [".credentials", ".credentials_rsaparams", ".runner", ".env"]
        .iter()
        .map(|f| root.join(f))
        .collect()
}

/// The settings of the user's global git configuration a confined command keeps, now that
/// `~/.gitconfig` is unreadable to it: who commits, which directories git trusts (container
/// jobs add `safe.directory`), and line endings. Tokens (`url.*`, `http.*`, `credential.*`)
/// and programs (`core.sshCommand`, `alias.*`, includes) stay out.
const GIT_KEPT: &[&str] = &[
    "user.name",
    "user.email",
    "safe.directory",
    "init.defaultbranch",
    "core.autocrlf",
    "core.eol",
    "core.longpaths",
];

/// Write the kept settings of the global git configuration of `home` to `dir/gitconfig` and
/// return its path (for `GIT_CONFIG_GLOBAL`), or None when there is nothing to keep.
pub fn kept_gitconfig(home: &Path, dir: &Path) -> Option<PathBuf> {
    let body = kept_settings(home)?;
    let path = dir.join("gitconfig");
    if let Err(e) = std::fs::write(&path, body) {
        tracing::warn!(path = %path.display(), error = %e, "cannot write the kept git settings: commands get no git identity");
        return None;
    }
    Some(path)
}

/// The kept settings of `home`'s global git configuration, in git's format; read once per
/// process and home directory (every task of a batch would read the same).
fn kept_settings(home: &Path) -> Option<String> {
    static READ: std::sync::Mutex<Option<(PathBuf, Option<String>)>> = std::sync::Mutex::new(None);
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((h, body)) = read.as_ref()
        && h == home
    {
        return body.clone();
    }
    let body = read_kept_settings(home);
    *read = Some((home.to_path_buf(), body.clone()));
    body
}

fn read_kept_settings(home: &Path) -> Option<String> {
    let out = match std::process::Command::new("git")
        .args(["config", "--global", "--list", "-z"])
        .env("HOME", home)
        .env_remove("GIT_CONFIG_GLOBAL")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            tracing::debug!(error = %e, "cannot run git to read the global git configuration");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut body = String::new();
    for entry in text.split('\0') {
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        let key = key.to_ascii_lowercase();
        if !GIT_KEPT.contains(&key.as_str()) || value.contains('\n') {
            continue;
        }
        let Some((section, name)) = key.split_once('.') else {
            continue;
        };
        let value = value.replace('\\', "\\\\").replace('"', "\\\"");
        body.push_str(&format!("[{section}]\n\t{name} = \"{value}\"\n"));
    }
    (!body.is_empty()).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_closed_but_for_toolchains_roots_and_listed_paths() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().canonicalize().unwrap();
        for p in [
            ".cargo/bin",
            ".config/gh",
            "work/repo",
            "notes",
            ".cache/pip",
        ] {
            std::fs::create_dir_all(home.join(p)).unwrap();
        }
        std::fs::write(home.join(".gitconfig"), "[url]").unwrap();
        std::fs::write(home.join(".pgpass"), "*:*:*:u:pw").unwrap();
        let rules = HomeRules::new(
            Some(&home),
            None,
            &[home.join("work/repo"), home.join("notes")],
        );
        assert_eq!(rules.closed, vec![home.clone()]);
        assert!(rules.toolchains.contains(&".cargo".to_string()));
        assert!(rules.toolchains.contains(&".cache".to_string()));
        assert!(!rules.toolchains.contains(&".rustup".to_string()));
        for denied in [".gitconfig", ".pgpass", ".config/gh", ".config"] {
            assert!(rules.denies(&home.join(denied)), "{denied}");
        }
        for allowed in [".cargo/bin", ".cache/pip", "work/repo", "notes"] {
            assert!(!rules.denies(&home.join(allowed)), "{allowed}");
        }
        assert!(!rules.denies(Path::new("/usr/bin")));
    }

    #[test]
    fn only_identity_trust_and_line_endings_of_the_global_git_config_are_kept() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path();
        std::fs::write(
            home.join(".gitconfig"),
            "[user]\n\tname = CI Bot\n\temail = ci@example.com\n[safe]\n\tdirectory = *\n\
             [url \"https://x-access-token:ghs_tok@github.com/\"]\n\tinsteadOf = https://github.com/\n\
             [core]\n\tsshCommand = ssh -i key\n",
        )
        .unwrap();
        let out = tempfile::tempdir().unwrap();
        let kept = kept_gitconfig(home, out.path()).unwrap();
        let text = std::fs::read_to_string(kept).unwrap();
        assert!(text.contains("name = \"CI Bot\""), "{text}");
        assert!(text.contains("directory = \"*\""), "{text}");
        assert!(
            !text.contains("ghs_tok") && !text.contains("sshCommand"),
            "{text}"
        );
    }
}
