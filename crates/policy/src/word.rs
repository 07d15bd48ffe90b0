//! A word of a simple command as the Bash analysis sees it after unquoting: the unit every
//! argument table (`options`, `wrappers`, `args`, `readonly`, `git`) reads.

/// How a process substitution (`<(...)`, `>(...)`) word is shown; its commands are analysed.
pub const PROCESS_SUBSTITUTION: &str = "<(…)";

/// One word of a simple command after unquoting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArgWord {
    /// The word's text; when `dynamic`, only the static prefix before the first expansion.
    pub text: String,
    /// Whether part of the word is only known at run time (parameter expansion, substitution,
    /// glob, brace, tilde, ANSI-C escapes).
    pub dynamic: bool,
    /// The word as written in the command.
    pub raw: String,
    /// Whether something other than a glob or brace pattern makes it dynamic (parameter
    /// expansion, substitution, tilde, ANSI-C escapes): its value cannot be bounded statically.
    pub expands: bool,
    /// Whether an unquoted expansion in it is split into words (and globbed) at run time: it
    /// may become several arguments.
    pub splits: bool,
    /// For `~` or `~/rest` with nothing else dynamic: `rest` (the path relative to `$HOME`).
    pub home_rest: Option<String>,
    /// For a word that is dynamic only through glob and brace patterns: the pattern, with its
    /// quoted characters escaped by `\` (see [`super::globs::expand`]).
    pub glob: Option<String>,
}

impl ArgWord {
    /// A static word.
    pub fn literal(text: &str) -> ArgWord {
        ArgWord {
            text: text.into(),
            raw: text.into(),
            ..ArgWord::default()
        }
    }

    /// The static words of `s`, split at white space (for tests of the argument tables).
    #[cfg(test)]
    pub(crate) fn split(s: &str) -> Vec<ArgWord> {
        s.split_whitespace().map(ArgWord::literal).collect()
    }

    /// A word runner cannot see (a file name `find` substitutes for `{}`).
    pub(crate) fn unseen(raw: &str) -> ArgWord {
        ArgWord {
            raw: raw.into(),
            dynamic: true,
            expands: true,
            ..ArgWord::default()
        }
    }
}
