//! How a shell is invoked: `bash [long options] [-abefhkmnptuvxBCEHPT] [-o opt] [-O shopt]
//! [-c string | -s] [argument ...]`, parsed the way bash and dash parse it, so that the script
//! of `bash -o pipefail -c 'rm …'`, `bash -c -- 'rm …'` or `sh -c +e 'rm …'` is found and
//! analysed (deny rules hold for its commands). An option that makes the shell read startup
//! files, change how it parses, or that runner does not know, with a script, makes the
//! command unanalysable: runner cannot tell what runs.

use super::program;
use super::word::ArgWord;

/// A shell invocation whose script runner cannot find: an option it does not follow, or one
/// expanded at run time (the reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnfollowedShell(pub String);

/// Shells whose scripts are analysed: bash's language, and POSIX shells (checked for the
/// constructs bash reads differently, see [`crate::posix`]).
pub const SHELLS: &[&str] = &["bash", "rbash", "sh", "dash", "ash"];

/// Whether the shell `base` is a POSIX shell rather than bash (`sh` is dash on Debian and
/// Ubuntu).
pub fn is_posix(base: &str) -> bool {
    matches!(base, "sh" | "dash" | "ash")
}

/// What a shell invocation runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// `-c STRING`: the script.
    Script(ArgWord),
    /// Commands from its standard input (no operand, or `-s`).
    Stdin,
    /// A script file (an operand): workdir code, an ordinary command.
    File,
}

/// A shell invocation, understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The shell's file name (`bash`, `sh`).
    pub shell: String,
    /// What it runs.
    pub runs: Runs,
}

/// Single-letter options that change nothing about which code runs.
const HARMLESS_LETTERS: &str = "abefhmnptuvxBCEHPTIVq";

/// `set -o` names that change nothing about which code runs or how it is parsed.
const HARMLESS_SET_O: &[&str] = &[
    "allexport",
    "braceexpand",
    "emacs",
    "errexit",
    "errtrace",
    "functrace",
    "hashall",
    "histexpand",
    "history",
    "ignoreeof",
    "monitor",
    "noclobber",
    "noexec",
    "noglob",
    "nolog",
    "notify",
    "nounset",
    "onecmd",
    "physical",
    "pipefail",
    "posix",
    "privileged",
    "verbose",
    "vi",
    "xtrace",
];

/// `shopt` names (`-O`) that change nothing runner relies on.
const HARMLESS_SHOPT: &[&str] = &["nullglob", "failglob", "inherit_errexit"];

/// Long options that change nothing about which code runs.
const HARMLESS_LONG: &[&str] = &[
    "--norc",
    "--noprofile",
    "--noediting",
    "--posix",
    "--verbose",
];

/// Parse `argv` (a command after its wrappers) as a shell invocation. `Ok(None)`: not one of
/// [`SHELLS`] (or a program given by a path, see [`crate::program`]). `Err`: it runs a script
/// with an option runner does not follow (the reason).
pub fn parse(argv: &[ArgWord]) -> Result<Option<Invocation>, UnfollowedShell> {
    let Some(name) = argv.first() else {
        return Ok(None);
    };
    let Some(base) = program::system_name(&name.text).filter(|b| SHELLS.contains(b)) else {
        return Ok(None);
    };
    if name.dynamic {
        return Ok(None);
    }
    let mut command = false;
    let mut stdin = false;
    let mut unusual: Option<String> = None;
    let mut i = 1;
    let mut long_ok = true;
    while let Some(w) = argv.get(i) {
        let t = w.text.as_str();
        if w.dynamic {
            return match command {
                true => Err(UnfollowedShell(format!(
                    "`{base} {}` is expanded at run time",
                    w.raw
                ))),
                false => Ok(Some(invocation(base, Runs::File))),
            };
        }
        if t == "--" || t == "-" {
            i += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            if !long_ok || long.is_empty() {
                break;
            }
            if !HARMLESS_LONG.contains(&t) {
                unusual.get_or_insert_with(|| t.to_string());
                if matches!(t, "--rcfile" | "--init-file") {
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        let Some(letters) = t.strip_prefix('-').or_else(|| t.strip_prefix('+')) else {
            break;
        };
        if letters.is_empty() {
            break;
        }
        long_ok = false;
        i += 1;
        for c in letters.chars() {
            match c {
                'c' => command = true,
                's' => stdin = true,
                'o' | 'O' => {
                    let value = argv.get(i).map(|v| v.text.clone()).unwrap_or_default();
                    let known = if c == 'o' {
                        HARMLESS_SET_O
                    } else {
                        HARMLESS_SHOPT
                    };
                    if argv.get(i).is_some_and(|v| v.dynamic) || !known.contains(&value.as_str()) {
                        unusual.get_or_insert_with(|| format!("-{c} {value}"));
                    }
                    i += 1;
                }
                c if HARMLESS_LETTERS.contains(c) => {}
                c => {
                    unusual.get_or_insert_with(|| format!("-{c}"));
                }
            }
        }
    }
    let operand = argv.get(i);
    let runs = match (command, operand) {
        (true, Some(script)) => Runs::Script(script.clone()),
        // `-c` without a string: the shell refuses to start.
        (true, None) => return Ok(None),
        (false, Some(_)) if !stdin => Runs::File,
        (false, _) => Runs::Stdin,
    };
    match (unusual, &runs) {
        (Some(opt), Runs::Script(_) | Runs::Stdin) => Err(UnfollowedShell(format!(
            "`{base} {opt}` reads startup files, changes how the script is read, or is an option runner does not know, so runner cannot tell what the shell runs"
        ))),
        _ => Ok(Some(invocation(base, runs))),
    }
}

fn invocation(base: &str, runs: Runs) -> Invocation {
    Invocation {
        shell: base.to_string(),
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(cmd: &str) -> Result<Option<String>, UnfollowedShell> {
        parse(&ArgWord::split(cmd)).map(|i| {
            i.and_then(|i| match i.runs {
                Runs::Script(s) => Some(s.text),
                _ => None,
            })
        })
    }

    #[test]
    fn the_script_is_found_past_every_option() {
        for cmd in [
            "bash -c X",
            "bash -o pipefail -c X",
            "bash -c -- X",
            "sh -c +e X",
            "bash -ec X",
            "bash -ceu X",
            "bash +o posix -e -c X",
            "bash --norc --noprofile -c X",
            "/bin/sh -c X a b",
            "dash -c X",
            "bash -O nullglob -c X",
        ] {
            assert_eq!(script(cmd), Ok(Some("X".into())), "{cmd}");
        }
        for cmd in [
            "bash -O extglob -c X",
            "bash -o keyword -c X",
            "bash -k -c X",
            "bash -l -c X",
            "bash -i -c X",
            "bash --login -c X",
            "bash --rcfile r -c X",
            "bash -o $OPT -c X",
        ] {
            assert!(script(cmd).is_err(), "{cmd}");
        }
        assert_eq!(script("bash script.sh"), Ok(None));
        assert_eq!(script("./bash -c X"), Ok(None));
        assert_eq!(
            parse(&ArgWord::split("bash -e")).unwrap().map(|i| i.runs),
            Some(Runs::Stdin)
        );
        assert_eq!(
            parse(&ArgWord::split("sh -s a b")).unwrap().map(|i| i.runs),
            Some(Runs::Stdin)
        );
    }
}
