//! Which variable assignments a command may make: an environment variable steers the programs
//! that see it (`PATH`, `LD_PRELOAD`, `GIT_DIR`, `GOFLAGS=-toolexec=...`), a shell variable the
//! rest of the command (`PATH`, `IFS`, `HOME`, `PS4`, `CDPATH`).

use super::bash::{EnvAssignment, INERT_SHELL_VARIABLES};

/// Environment variables a leading `NAME=value` (or `env NAME=value`) may set on an allowed
/// command, with a static value.
pub const HARMLESS_ENV: &[&str] = &[
    "CI",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "TERM",
    "LANG",
    "LC_ALL",
    "TZ",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "CARGO_TERM_COLOR",
    "CARGO_INCREMENTAL",
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "DEBUG",
    "VERBOSE",
];

/// bash's special variables that are integer-typed or evaluated as arithmetic (or as a
/// number) when assigned: a value such as `a[$(cmd)]` assigned to an integer variable runs the
/// command. None may be set, whatever the value; a variable a command declares integer itself
/// (`declare -i`, `local -i`, `typeset -i`) makes that command unanalysable.
pub const ARITHMETIC_SPECIALS: &[&str] = &[
    "OPTIND",
    "OPTERR",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "HISTCMD",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "BASHPID",
    "COLUMNS",
    "LINES",
    "HISTSIZE",
    "HISTFILESIZE",
    "TMOUT",
    "SHLVL",
    "PPID",
    "UID",
    "EUID",
    "BASH_ARGC",
    "BASH_LINENO",
    "BASH_SUBSHELL",
    "COMP_CWORD",
    "COMP_POINT",
    "COMP_TYPE",
    "COMP_KEY",
    "MAILCHECK",
    "BASH_COMPAT",
];

/// Lower-case variables programs read from the environment.
const LOWERCASE_ENV: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "ftp_proxy",
    "all_proxy",
    "no_proxy",
    "rsync_proxy",
    "auto_resume",
    "histchars",
];

/// Whether a command's own environment assignment is harmless: a static value for a name in
/// [`HARMLESS_ENV`].
pub fn env_ok(a: &EnvAssignment) -> bool {
    a.static_value && HARMLESS_ENV.contains(&a.name.as_str())
}

/// Whether a shell variable the command sets (`x=1` alone, `for x in`, `read x`, `declare x`,
/// `printf -v x`) is harmless: a lower-case name no program or bash feature reads, a variable
/// bash sets for those builtins anyway (`REPLY`), or a harmless environment variable.
pub fn shell_variable_ok(a: &EnvAssignment) -> bool {
    if ARITHMETIC_SPECIALS.contains(&a.name.as_str()) {
        return false;
    }
    env_ok(a)
        || INERT_SHELL_VARIABLES.contains(&a.name.as_str())
        || (!a.name.chars().any(|c| c.is_ascii_uppercase())
            && !LOWERCASE_ENV.contains(&a.name.as_str()))
}

/// Prefixes of lower-case environment variables package managers and tools read as their
/// configuration (`npm_config_script_shell` names the shell npm runs scripts with).
const LOWERCASE_ENV_PREFIXES: &[&str] = &[
    "npm_", "yarn_", "pnpm_", "bun_", "pip_", "uv_", "cargo_", "rustup_", "git_", "docker_",
    "node_", "ld_", "lc_", "gem_", "bundle_", "go", "java_", "maven_", "gradle_", "sdkman_",
];

/// Whether a variable a command exports (`export NAME=…`, `declare -x NAME`) is harmless in the
/// environment of every later command: a harmless environment variable, or a lower-case name
/// no program is known to read ([`LOWERCASE_ENV`] and the configuration prefixes of package
/// managers excluded).
pub fn export_ok(a: &EnvAssignment) -> bool {
    env_ok(a)
        || (shell_variable_ok(a)
            && !INERT_SHELL_VARIABLES.contains(&a.name.as_str())
            && !LOWERCASE_ENV_PREFIXES
                .iter()
                .any(|p| a.name.to_ascii_lowercase().starts_with(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(name: &str, static_value: bool) -> EnvAssignment {
        EnvAssignment {
            name: name.into(),
            static_value,
        }
    }

    #[test]
    fn names_that_steer_programs_are_refused() {
        for n in [
            "PATH",
            "HOME",
            "IFS",
            "PS4",
            "CDPATH",
            "BASH_ENV",
            "GIT_DIR",
            "LD_PRELOAD",
            "GOFLAGS",
            "Path",
            "http_proxy",
            "OPTIND",
            "OPTERR",
            "RANDOM",
            "SECONDS",
            "LINENO",
            "HISTCMD",
            "COLUMNS",
        ] {
            assert!(!shell_variable_ok(&a(n, true)), "{n}");
            assert!(!env_ok(&a(n, true)), "{n}");
        }
        for n in ["f", "line", "x_1", "REPLY", "CI"] {
            assert!(shell_variable_ok(&a(n, false)) || n == "CI", "{n}");
        }
        assert!(env_ok(&a("CI", true)));
        assert!(export_ok(&a("CI", true)));
        assert!(export_ok(&a("out_dir", false)));
        for n in [
            "npm_config_script_shell",
            "PATH",
            "OPTIND",
            "http_proxy",
            "REPLY",
        ] {
            assert!(!export_ok(&a(n, true)), "{n}");
        }
        assert!(!env_ok(&a("CI", false)));
        assert!(!env_ok(&a("f", true)));
    }
}
