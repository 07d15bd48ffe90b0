//! Expanding a word's braces and glob patterns against the file system, the way bash would
//! before the command runs, so that what a command reads or writes (`cat .e*`, `rm {a,.git}`)
//! and the options a file name can turn into (`rg x *` next to a file named `--pre=sh`) are
//! decided on the actual words.
//!
//! The expansion over-approximates where bash's depends on shell options: hidden files match,
//! letters match in either case, `**` matches at any depth. A pattern it cannot follow
//! (extended globs) or one that matches too much is `None`: the caller treats the word as
//! unknown.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

/// Most words one pattern may expand into before the expansion gives up.
pub const MAX_WORDS: usize = 512;

/// Most directory entries one expansion may look at.
const MAX_ENTRIES: usize = 20_000;

/// The words `pattern` expands into, run in any of `cwds`: brace expansion first (every
/// alternative, existing or not), then each alternative with a glob character matched against
/// the file system (kept as written when nothing matches, as bash does). `pattern` is the word
/// with quoted characters escaped by `\`; the words returned are unescaped.
pub fn expand(pattern: &str, cwds: &[PathBuf]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for alt in braces(pattern)? {
        if !has_glob(&alt) {
            out.push(unescape(&alt));
        } else {
            let mut found = Vec::new();
            for cwd in cwds {
                for m in glob(&alt, cwd)? {
                    if !found.contains(&m) {
                        found.push(m);
                    }
                }
            }
            if found.is_empty() {
                out.push(unescape(&alt));
            }
            out.extend(found);
        }
        if out.len() > MAX_WORDS {
            return None;
        }
    }
    Some(out)
}

/// Whether an escaped pattern has an unescaped glob character.
fn has_glob(p: &str) -> bool {
    let mut esc = false;
    for c in p.chars() {
        if esc {
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else if matches!(c, '*' | '?' | '[' | '(') {
            return true;
        }
    }
    false
}

fn unescape(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut esc = false;
    for c in p.chars() {
        if esc {
            out.push(c);
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// Bash brace expansion: `a{b,c}d` → `abd`, `acd`; `{1..3}`, `{a..c}`; nested braces. A brace
/// without a comma or a valid sequence is literal. `None` when it would make too many words.
fn braces(p: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = p.chars().collect();
    // The first `{` that has a matching `}` with a top-level `,` or `..` inside.
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == '{'
            && let Some((end, parts)) = brace_parts(&chars, i)?
        {
            let prefix: String = chars[..i].iter().collect();
            let suffix: String = chars[end + 1..].iter().collect();
            let mut out = Vec::new();
            for part in parts {
                for rest in braces(&format!("{prefix}{part}{suffix}"))? {
                    out.push(rest);
                    if out.len() > MAX_WORDS {
                        return None;
                    }
                }
            }
            return Some(out);
        }
        i += 1;
    }
    Some(vec![p.to_string()])
}

/// The alternatives of the brace starting at `open`, and where it closes (`Some(None)`: the
/// brace is literal; `None`: it would make too many words).
#[allow(clippy::type_complexity)]
fn brace_parts(chars: &[char], open: usize) -> Option<Option<(usize, Vec<String>)>> {
    let mut depth = 0;
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut i = open + 1;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = chars.get(i + 1) {
                    cur.push(*n);
                }
                i += 2;
                continue;
            }
            '{' => depth += 1,
            '}' if depth == 0 => {
                if parts.is_empty() {
                    return match sequence(&cur) {
                        Seq::Words(s) => Some(Some((i, s))),
                        Seq::NotOne => Some(None),
                        Seq::TooLong => None,
                    };
                }
                parts.push(cur);
                return Some(Some((i, parts)));
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                i += 1;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        i += 1;
    }
    Some(None)
}

/// A brace body read as a sequence.
enum Seq {
    Words(Vec<String>),
    /// Not a sequence: the brace is literal.
    NotOne,
    /// A sequence of more than [`MAX_WORDS`] words.
    TooLong,
}

/// `1..5`, `5..1..2`, `a..e`: the sequence's words.
fn sequence(body: &str) -> Seq {
    let parts: Vec<&str> = body.split("..").collect();
    if !(2..=3).contains(&parts.len()) {
        return Seq::NotOne;
    }
    let step: i64 = match parts.get(2).map(|s| s.parse::<i64>()) {
        Some(Ok(s)) => s.saturating_abs().max(1),
        Some(Err(_)) => return Seq::NotOne,
        None => 1,
    };
    let (a, b) = (parts[0], parts[1]);
    let mut out = Vec::new();
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let n = x.abs_diff(y) / step.unsigned_abs() + 1;
        if n > MAX_WORDS as u64 {
            return Seq::TooLong;
        }
        let dir = if y >= x { 1 } else { -1 };
        for k in 0..n as i64 {
            out.push((x + dir * k * step).to_string());
        }
        return Seq::Words(out);
    }
    let (mut ca, mut cb) = (a.chars(), b.chars());
    let (Some(x), None, Some(y), None) = (ca.next(), ca.next(), cb.next(), cb.next()) else {
        return Seq::NotOne;
    };
    if !x.is_ascii_alphabetic() || !y.is_ascii_alphabetic() {
        return Seq::NotOne;
    }
    let (x, y) = (x as i64, y as i64);
    let dir = if y >= x { 1 } else { -1 };
    let n = (x - y).abs() / step + 1;
    for k in 0..n {
        if let Some(ch) = char::from_u32((x + dir * k * step) as u32) {
            out.push(ch.to_string());
        }
    }
    Seq::Words(out)
}

/// File-system matches of one brace-free pattern, as words (relative patterns give relative
/// words). `None` for a pattern runner cannot follow or one that looks at too many entries.
fn glob(pattern: &str, cwd: &Path) -> Option<Vec<String>> {
    if pattern.contains("@(")
        || pattern.contains("!(")
        || pattern.contains("+(")
        || pattern.contains("*(")
        || pattern.contains("?(")
    {
        return None;
    }
    let absolute = pattern.starts_with('/');
    let comps: Vec<&str> = split_unescaped(pattern.trim_start_matches('/'));
    // (word so far, directory it names)
    let mut level: Vec<(String, PathBuf)> = vec![(
        if absolute { "/".into() } else { String::new() },
        if absolute {
            PathBuf::from("/")
        } else {
            cwd.to_path_buf()
        },
    )];
    let mut budget = MAX_ENTRIES;
    for (k, comp) in comps.iter().enumerate() {
        let last = k + 1 == comps.len();
        let mut next = Vec::new();
        for (word, dir) in &level {
            let join = |name: &str| {
                if word.is_empty() || word.ends_with('/') {
                    format!("{word}{name}")
                } else {
                    format!("{word}/{name}")
                }
            };
            if comp.is_empty() {
                next.push((format!("{word}/"), dir.clone()));
                continue;
            }
            if !has_glob(comp) {
                let name = unescape(comp);
                let p = dir.join(&name);
                if last || p.is_dir() {
                    if last && !p.exists() && !p.is_symlink() {
                        continue;
                    }
                    next.push((join(&name), p));
                }
                continue;
            }
            let recursive = *comp == "**";
            let matcher = GlobBuilder::new(comp)
                .literal_separator(true)
                .backslash_escape(true)
                .case_insensitive(true)
                .build()
                .ok()?
                .compile_matcher();
            let mut stack = vec![(word.clone(), dir.clone())];
            while let Some((w, d)) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in rd.flatten() {
                    budget = budget.checked_sub(1)?;
                    let name = e.file_name().to_string_lossy().into_owned();
                    let p = e.path();
                    let wj = if w.is_empty() || w.ends_with('/') {
                        format!("{w}{name}")
                    } else {
                        format!("{w}/{name}")
                    };
                    let is_dir = p.is_dir();
                    if recursive && is_dir && !e.file_type().is_ok_and(|t| t.is_symlink()) {
                        stack.push((wj.clone(), p.clone()));
                    }
                    if (recursive || matcher.is_match(&name)) && (last || is_dir) {
                        next.push((wj, p));
                    }
                }
            }
        }
        level = next;
        if level.len() > MAX_WORDS {
            return None;
        }
    }
    let mut words: Vec<String> = level.into_iter().map(|(w, _)| w).collect();
    words.sort();
    words.dedup();
    Some(words)
}

/// Split on `/` not preceded by `\`.
fn split_unescaped(p: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut esc = false;
    for (i, c) in p.char_indices() {
        if esc {
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else if c == '/' {
            out.push(&p[start..i]);
            start = i + 1;
        }
    }
    out.push(&p[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_like_bash() {
        assert_eq!(braces("a{b,c}d").unwrap(), ["abd", "acd"]);
        assert_eq!(braces("{x,{y,z}}").unwrap(), ["x", "y", "z"]);
        assert_eq!(braces("f{1..3}").unwrap(), ["f1", "f2", "f3"]);
        assert_eq!(braces("{c..a}").unwrap(), ["c", "b", "a"]);
        assert_eq!(braces("{a}").unwrap(), ["{a}"]);
        assert_eq!(braces("\\{a,b}").unwrap(), ["\\{a,b}"]);
        assert!(braces("{1..100000}").is_none());
    }

    #[test]
    fn globs_match_the_file_system() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().to_path_buf();
        for f in [".env", "a.rs", "b.rs", "sub/c.rs", "--pre=sh"] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let cwds = [root.clone()];
        assert_eq!(expand("*.rs", &cwds).unwrap(), ["a.rs", "b.rs"]);
        assert_eq!(expand(".e*", &cwds).unwrap(), [".env"]);
        assert_eq!(expand(".en?", &cwds).unwrap(), [".env"]);
        assert_eq!(expand(".[e]nv", &cwds).unwrap(), [".env"]);
        assert_eq!(expand(".{env,x}", &cwds).unwrap(), [".env", ".x"]);
        assert_eq!(expand("*/c.rs", &cwds).unwrap(), ["sub/c.rs"]);
        assert!(
            expand("*", &cwds)
                .unwrap()
                .contains(&"--pre=sh".to_string())
        );
        assert_eq!(expand("\\*.rs", &cwds).unwrap(), ["*.rs"]);
        assert_eq!(expand("*.none", &cwds).unwrap(), ["*.none"]);
        assert!(expand("@(a|b).rs", &cwds).is_none());
        let abs = format!("{}/*.rs", root.display());
        assert_eq!(expand(&abs, &cwds).unwrap().len(), 2);
    }
}
