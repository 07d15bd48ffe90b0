//! The environment of a command that runs read-only (allowed with no rule): git in it reads no
//! global or system configuration and has the repository keys that run programs overridden,
//! and the programs of the read-only set read no configuration file of their own.
//!
//! git takes configuration from its command line and environment before the repository's own
//! files, so `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` overrides win over
//! `.git/config`. What cannot be overridden that way (`diff.external`, diff and filter
//! drivers) the permission policy finds in the repository's configuration before it allows
//! the command (`runner_policy::git::config_risk`).

use std::path::Path;

/// Configuration every read-only git run gets, over whatever the repository sets.
pub const GIT_OVERRIDES: &[(&str, &str)] = &[
    // Hook programs git would start to list changed files.
    ("core.fsmonitor", "false"),
    ("core.fsmonitorHookVersion", "0"),
    ("core.untrackedCache", "false"),
    // Pagers (there is no terminal, but a pager named per command is still a program).
    ("core.pager", "cat"),
    ("pager.status", "false"),
    ("pager.diff", "false"),
    ("pager.log", "false"),
    ("pager.show", "false"),
    ("pager.branch", "false"),
    ("pager.grep", "false"),
    ("pager.blame", "false"),
    // Hooks, signatures, transports.
    ("core.hooksPath", "/dev/null"),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("core.sshCommand", "false"),
    ("protocol.allow", "never"),
    ("credential.helper", ""),
    ("core.askPass", "false"),
    // Repositories a pull request can plant.
    ("safe.bareRepository", "explicit"),
    // Attribute files outside the repository (they pick diff and filter drivers).
    ("core.attributesFile", "/dev/null"),
];

/// Variables removed from a read-only command's environment: they point git or a read-only
/// program at other repositories, configuration or programs.
pub const REMOVED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_SYSTEM",
    "GIT_EXTERNAL_DIFF",
    "GIT_EXEC_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PROXY_COMMAND",
    "GIT_ATTR_SOURCE",
    "RIPGREP_CONFIG_PATH",
    "CDPATH",
    "BASH_ENV",
    "ENV",
];

/// The variables set for a read-only command. `workspace`: the workspace's repository root (or
/// workdir); git looks for no repository above it (`GIT_CEILING_DIRECTORIES` at its parent) and
/// trusts it whoever owns the files (`safe.directory`, which the global configuration a CI
/// checkout sets would otherwise have given).
pub fn read_only_env(workspace: Option<&Path>) -> Vec<(String, String)> {
    let mut overrides: Vec<(String, String)> = GIT_OVERRIDES
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    if let Some(w) = workspace {
        overrides.push(("safe.directory".into(), w.to_string_lossy().into_owned()));
    }
    let mut env: Vec<(String, String)> = vec![
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ("GIT_ATTR_NOSYSTEM".into(), "1".into()),
        ("GIT_NO_LAZY_FETCH".into(), "1".into()),
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
        ("GIT_OPTIONAL_LOCKS".into(), "0".into()),
        ("GIT_PAGER".into(), "cat".into()),
        ("PAGER".into(), "cat".into()),
        ("GIT_CONFIG_COUNT".into(), overrides.len().to_string()),
    ];
    for (i, (k, v)) in overrides.into_iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), k));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), v));
    }
    if let Some(c) = workspace.and_then(Path::parent) {
        env.push((
            "GIT_CEILING_DIRECTORIES".into(),
            c.to_string_lossy().into_owned(),
        ));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    /// git, run with the read-only environment, sees the overrides over the repository's own
    /// values and no global configuration.
    #[test]
    fn overrides_win_over_the_repository() {
        let d = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".gitconfig"),
            "[user]\n\tname = from-home\n",
        )
        .unwrap();
        let git = |args: &[&str], read_only: bool| {
            let mut c = std::process::Command::new("git");
            c.args(args).current_dir(d.path()).env("HOME", home.path());
            c.env_remove("GIT_CONFIG_GLOBAL")
                .env_remove("GIT_CONFIG_NOSYSTEM");
            if read_only {
                for n in REMOVED {
                    c.env_remove(n);
                }
                c.envs(read_only_env(Some(d.path())));
            }
            let out = c.output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        git(&["init", "-q"], false);
        git(&["config", "core.fsmonitor", "./evil.sh"], false);
        git(&["config", "core.hooksPath", "hooks"], false);
        assert_eq!(git(&["config", "user.name"], false), "from-home");
        assert_eq!(git(&["config", "core.fsmonitor"], true), "false");
        assert_eq!(git(&["config", "core.hooksPath"], true), "/dev/null");
        assert_eq!(git(&["config", "safe.bareRepository"], true), "explicit");
        assert_eq!(git(&["config", "user.name"], true), "");
        assert_eq!(
            git(&["config", "safe.directory"], true),
            d.path().to_string_lossy()
        );
    }
}
