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
    env_ok(a)
        || INERT_SHELL_VARIABLES.contains(&a.name.as_str())
        || (!a.name.chars().any(|c| c.is_ascii_uppercase())
            && !LOWERCASE_ENV.contains(&a.name.as_str()))
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
        ] {
            assert!(!shell_variable_ok(&a(n, true)), "{n}");
            assert!(!env_ok(&a(n, true)), "{n}");
        }
        for n in ["f", "line", "x_1", "REPLY", "CI"] {
            assert!(shell_variable_ok(&a(n, false)) || n == "CI", "{n}");
        }
        assert!(env_ok(&a("CI", true)));
        assert!(!env_ok(&a("CI", false)));
        assert!(!env_ok(&a("f", true)));
    }
}
