//! Scripts a POSIX shell runs (`sh -c`, `dash`, `watch CMD`, `su -c`, a git alias body): on
//! Debian and Ubuntu `/bin/sh` is dash, which reads some text differently from bash (`$'…'` is
//! a `$` and a single-quoted string to dash, one ANSI-C word to bash). runner analyses
//! scripts with a bash parser, so a script meant for a POSIX shell is first read the way dash
//! reads it, and refused when it uses a construct whose meaning differs between the two.
//! What is left reads the same in both.

/// A construct a POSIX shell such as dash reads differently from bash (shown as the
/// construct, e.g. "`[[ … ]]`"), or a quote the script leaves open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BashOnly(pub String);

impl From<&str> for BashOnly {
    fn from(s: &str) -> Self {
        BashOnly(s.to_string())
    }
}

/// Why `script` may mean different things to bash and to a POSIX shell (the construct), or
/// `Ok` when it uses none of bash's extensions.
pub fn check(script: &str) -> Result<(), BashOnly> {
    let s: Vec<char> = script.chars().collect();
    let mut i = 0;
    let mut word_start = true;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        let starts = word_start;
        word_start = c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>');
        match c {
            '\\' => i += 2,
            '\'' => i = skip_single(&s, i)?,
            '"' => i = double_quoted(&s, i)?,
            '#' if starts => {
                while i < s.len() && s[i] != '\n' {
                    i += 1;
                }
            }
            '$' => {
                dollar(&s, i)?;
                i += 1;
            }
            _ => {
                unquoted(&s, i, starts)?;
                if c == '{' && next.is_some() {
                    brace_expansion(&s, i)?;
                }
                i += 1;
            }
        }
    }
    Ok(())
}

/// The index after the single-quoted string starting at `i`.
fn skip_single(s: &[char], i: usize) -> Result<usize, BashOnly> {
    match s[i + 1..].iter().position(|c| *c == '\'') {
        Some(end) => Ok(i + 1 + end + 1),
        None => Err("an unterminated single quote".into()),
    }
}

/// Check a double-quoted string starting at `i`; the index after it.
fn double_quoted(s: &[char], i: usize) -> Result<usize, BashOnly> {
    let mut j = i + 1;
    while j < s.len() {
        match s[j] {
            '\\' => j += 2,
            '"' => return Ok(j + 1),
            '$' => {
                if s.get(j + 1) == Some(&'{') {
                    parameter(s, j + 1)?;
                } else if s.get(j + 1) == Some(&'[') {
                    return Err("`$[…]` arithmetic".into());
                }
                j += 1;
            }
            _ => j += 1,
        }
    }
    Err("an unterminated double quote".into())
}

/// `$` outside quotes: `$'…'`, `$"…"`, `$[…]` are bash's; `${…}` is checked.
fn dollar(s: &[char], i: usize) -> Result<(), BashOnly> {
    match s.get(i + 1) {
        Some('\'') => Err("`$'…'` (ANSI-C quoting; to dash a `$` and a quoted string)".into()),
        Some('"') => Err("`$\"…\"` (locale quoting)".into()),
        Some('[') => Err("`$[…]` arithmetic".into()),
        Some('{') => parameter(s, i + 1),
        _ => Ok(()),
    }
}

/// A `${…}` expansion whose `{` is at `open`: POSIX forms only (`${x}`, `${#x}`, `${x:-w}`,
/// `${x%p}` …), no arrays, indirection, substrings, replacement or case changes.
fn parameter(s: &[char], open: usize) -> Result<(), BashOnly> {
    let body: String = s[open + 1..].iter().take_while(|c| **c != '}').collect();
    let bash_only = || Err(BashOnly(format!("`${{{body}}}` (a bash-only expansion)")));
    let rest = body
        .strip_prefix('#')
        .filter(|r| !r.is_empty())
        .unwrap_or(&body);
    if rest.starts_with('!') {
        return bash_only();
    }
    let name_len = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .count()
        .max(usize::from(
            rest.starts_with(|c: char| "@*#?$!-".contains(c)),
        ));
    let op = &rest[name_len..];
    let posix = ["", ":-", ":=", ":?", ":+", "-", "=", "?", "+", "%", "#"];
    if posix.iter().any(|p| {
        if p.is_empty() {
            op.is_empty()
        } else {
            op.starts_with(p)
        }
    }) {
        Ok(())
    } else {
        bash_only()
    }
}

/// Unquoted syntax that only bash has, at `i` (`starts`: a word starts there).
fn unquoted(s: &[char], i: usize, starts: bool) -> Result<(), BashOnly> {
    let at = |k: usize| s.get(i + k).copied();
    let text: String = s[i..s.len().min(i + 9)].iter().collect();
    let found = match s[i] {
        '<' if at(1) == Some('(') => Some("`<(…)` process substitution"),
        '>' if at(1) == Some('(') => Some("`>(…)` process substitution"),
        '<' if text.starts_with("<<<") => Some("`<<<` here-string"),
        '&' if at(1) == Some('>') => Some("`&>` redirection"),
        '|' if at(1) == Some('&') => Some("`|&` pipe"),
        ';' if at(1) == Some('&') || text.starts_with(";;&") => Some("`;&` case fall-through"),
        '=' if at(1) == Some('(') => Some("an array assignment `=(…)`"),
        '(' if starts && at(1) == Some('(') => Some("an arithmetic command `((…))`"),
        _ if starts => {
            let word: String = s[i..]
                .iter()
                .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '&' | '|' | '(' | ')'))
                .collect();
            match word.as_str() {
                "[[" => Some("`[[ … ]]`"),
                "function" => Some("`function`"),
                "select" => Some("`select`"),
                "coproc" => Some("`coproc`"),
                _ => None,
            }
        }
        _ => None,
    };
    match found {
        Some(what) => Err(BashOnly(what.to_string())),
        None => Ok(()),
    }
}

/// An unquoted `{a,b}` or `{1..3}` brace expansion starting at `i`.
fn brace_expansion(s: &[char], i: usize) -> Result<(), BashOnly> {
    let inner: String = s[i + 1..]
        .iter()
        .take_while(|c| !c.is_whitespace() && !matches!(c, '}' | ';' | '&' | '|' | '\'' | '"'))
        .collect();
    let closed = s.get(i + 1 + inner.chars().count()) == Some(&'}');
    if closed && (inner.contains(',') || inner.contains("..")) {
        return Err(BashOnly(format!("`{{{inner}}}` brace expansion")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_only_constructs_are_found() {
        for script in [
            "echo $'\\'; touch x #\\''",
            "echo $\"x\"",
            "[[ -f x ]] && ls",
            "a=(1 2)",
            "function f { ls; }",
            "cat <(ls)",
            "ls >(cat)",
            "echo {a,b}",
            "echo x{1..3}",
            "ls &> out",
            "ls |& cat",
            "cat <<< x",
            "echo ${x//a/b}",
            "echo \"${x/a/b}\"",
            "echo ${!x}",
            "echo ${x:1:2}",
            "echo ${x^^}",
            "echo ${a[0]}",
            "echo $[1+1]",
            "((x++))",
            "case a in a) ls;& b) ls;; esac",
            "echo 'unterminated",
        ] {
            assert!(check(script).is_err(), "{script}");
        }
        for script in [
            "ls -la && echo \"$x\" | grep a",
            "echo '$'\"'\"",
            "echo '${x//a}' \"\\$'\"",
            "echo ${x:-d} ${x%.rs} ${#x} ${x##*/} $1 $@ ${10}",
            "# a comment with $'x' and [[",
            "test -f x && { ls; }",
            "for f in *.rs; do echo \"$f\"; done",
            "echo {} {a} a,b",
            "x=$(ls) y=`pwd`; echo $((1 + 2))",
        ] {
            assert_eq!(check(script), Ok(()), "{script}");
        }
    }
}
