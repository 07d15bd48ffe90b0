//! Option parsing for the read-only command set, from a per-program list of the options its
//! manual documents as harmless. Anything not on the list — an unknown option, an abbreviation,
//! a value where none belongs, a word expanded at run time where an option may stand — makes
//! the command not read-only, and the reason names the word.

use std::collections::HashMap;

use super::word::ArgWord;

/// What an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nothing.
    Flag,
    /// A value (attached, `=VALUE`, or the next word).
    Value,
    /// A value only when attached (`-M50%`, `--color=always`).
    Optional,
    /// The name of a file the program reads (attached, `=FILE` or the next word).
    Path,
}

/// The harmless options of one program, compiled from a spec string.
///
/// Spec syntax, space separated: `-x` a short flag, `-x=` a short option with a value, `-x?`
/// a short option whose value can only be attached, `--name`, `--name=`, `--name?` the same
/// for long options; a trailing `@` (`-f=@`, `--file=@`) marks the value as a file the program
/// reads; `#` accepts `-NUM` (`head -5`); `*` makes every word an operand (a program with no
/// option that matters, such as `echo`); `--*` accepts any long option, whose value can only be
/// attached (`--tool=memcheck`, as valgrind reads them).
#[derive(Debug, Clone, Default)]
pub struct Options {
    short: HashMap<char, Kind>,
    long: HashMap<&'static str, Kind>,
    numeric: bool,
    any: bool,
    any_long: bool,
}

impl Options {
    /// Compile a spec (see the type's documentation).
    pub fn parse(spec: &'static str) -> Options {
        let mut o = Options::default();
        for tok in spec.split_whitespace() {
            if tok == "#" {
                o.numeric = true;
                continue;
            }
            if tok == "*" {
                o.any = true;
                continue;
            }
            if tok == "--*" {
                o.any_long = true;
                continue;
            }
            let (name, kind) = if let Some(n) = tok.strip_suffix("=@") {
                (n, Kind::Path)
            } else if let Some(n) = tok.strip_suffix('=') {
                (n, Kind::Value)
            } else if let Some(n) = tok.strip_suffix('?') {
                (n, Kind::Optional)
            } else {
                (tok, Kind::Flag)
            };
            if let Some(long) = name.strip_prefix("--") {
                o.long.insert(long, kind);
            } else if let Some(c) = name.strip_prefix('-').and_then(|s| s.chars().next()) {
                o.short.insert(c, kind);
            }
        }
        o
    }
}

/// A command line parsed against [`Options`].
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// Operands, in order (after `--` too).
    pub operands: Vec<ArgWord>,
    /// Values of [`Kind::Path`] options: files the program reads.
    pub paths: Vec<ArgWord>,
    /// Options given, as `-x` or `--name` (with their values, when they have one).
    pub given: Vec<(String, Option<ArgWord>)>,
    /// Index in the arguments of the first operand (for [`Mode::posix`] parsing, where every
    /// word from there on is an operand).
    pub first_operand: Option<usize>,
}

impl Parsed {
    /// Whether any of `names` (`-r`, `--recursive`) was given.
    pub fn has(&self, names: &[&str]) -> bool {
        self.given.iter().any(|(n, _)| names.contains(&n.as_str()))
    }

    /// The value of the last of `names` given with a value.
    pub fn value(&self, names: &[&str]) -> Option<&ArgWord> {
        self.given
            .iter()
            .rev()
            .find(|(n, v)| names.contains(&n.as_str()) && v.is_some())
            .and_then(|(_, v)| v.as_ref())
    }
}

/// How [`parse`] treats words.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mode {
    /// Every option of the program is harmless, so a word expanded at run time may stand where
    /// an option could (`echo $x`).
    pub expansions_ok: bool,
    /// Options end at the first operand (POSIX), as for `find` or `printf`.
    pub posix: bool,
}

/// Parse `args` (after the program name) against `opts`. `Err` names the word that is not a
/// harmless option of `prog`.
pub fn parse(prog: &str, args: &[ArgWord], opts: &Options, mode: Mode) -> Result<Parsed, String> {
    let mut out = Parsed::default();
    if opts.any {
        out.operands = args.to_vec();
        out.first_operand = (!args.is_empty()).then_some(0);
        return Ok(out);
    }
    let mut i = 0;
    let mut options_end = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if options_end || !could_be_option(a) {
            out.first_operand.get_or_insert(i - 1);
            out.operands.push(a.clone());
            if mode.posix {
                options_end = true;
            }
            continue;
        }
        if a.dynamic {
            if mode.expansions_ok {
                out.first_operand.get_or_insert(i - 1);
                out.operands.push(a.clone());
                continue;
            }
            return Err(format!(
                "`{}` is expanded at run time and could become any option of `{prog}`",
                a.raw
            ));
        }
        if t == "--" {
            options_end = true;
            if mode.posix && i < args.len() {
                out.first_operand.get_or_insert(i);
            }
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let kind = match opts.long.get(name) {
                Some(k) => k,
                None if opts.any_long => &Kind::Optional,
                None => return Err(unknown(prog, &a.raw)),
            };
            let value = match (kind, attached) {
                (Kind::Flag, Some(_)) => return Err(unknown(prog, &a.raw)),
                (Kind::Flag | Kind::Optional, None) => None,
                (_, Some(v)) => Some(with_text(a, v)),
                (Kind::Value | Kind::Path, None) => {
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| format!("`{}` needs a value", a.raw))?;
                    i += 1;
                    Some(v)
                }
            };
            if *kind == Kind::Path
                && let Some(v) = &value
            {
                out.paths.push(v.clone());
            }
            out.given.push((format!("--{name}"), value));
            continue;
        }
        let cluster = &t[1..];
        if opts.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
            out.given.push(("-#".into(), Some(with_text(a, cluster))));
            continue;
        }
        for (k, c) in cluster.char_indices() {
            let Some(kind) = opts.short.get(&c) else {
                return Err(unknown(prog, &a.raw));
            };
            let rest = &cluster[k + c.len_utf8()..];
            match kind {
                Kind::Flag => {
                    out.given.push((format!("-{c}"), None));
                    continue;
                }
                Kind::Optional => {
                    let v = (!rest.is_empty()).then(|| with_text(a, rest));
                    out.given.push((format!("-{c}"), v));
                }
                Kind::Value | Kind::Path => {
                    let value = if rest.is_empty() {
                        let v = args
                            .get(i)
                            .cloned()
                            .ok_or_else(|| format!("`{}` needs a value", a.raw))?;
                        i += 1;
                        v
                    } else {
                        with_text(a, rest)
                    };
                    if *kind == Kind::Path {
                        out.paths.push(value.clone());
                    }
                    out.given.push((format!("-{c}"), Some(value)));
                }
            }
            break;
        }
    }
    Ok(out)
}

/// Whether `a` may be read as an option: it starts with `-` (and is not `-` alone), or is
/// expanded at run time (it could start with one).
fn could_be_option(a: &ArgWord) -> bool {
    if a.raw == super::word::PROCESS_SUBSTITUTION {
        // `/dev/fd/N`.
        return false;
    }
    if a.dynamic {
        return (a.expands && a.text.is_empty()) || a.text.starts_with('-');
    }
    a.text.starts_with('-') && a.text != "-"
}

fn with_text(a: &ArgWord, text: &str) -> ArgWord {
    let mut w = a.clone();
    w.text = text.to_string();
    w.home_rest = None;
    w
}

fn unknown(prog: &str, raw: &str) -> String {
    format!("`{prog} {raw}` is not an option runner knows to be read-only")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<ArgWord> {
        ArgWord::split(s)
    }

    #[test]
    fn clusters_values_and_unknowns() {
        let o = Options::parse("-n= -q -v -f=@ --lines= --file=@ --quiet #");
        let p = parse(
            "x",
            &words("-qv -n5 -n 3 --lines=2 -fpat --file p2 a -5 -- -z"),
            &o,
            Mode::default(),
        )
        .unwrap();
        let ops: Vec<&str> = p.operands.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(ops, ["a", "-z"]);
        let paths: Vec<&str> = p.paths.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(paths, ["pat", "p2"]);
        assert!(p.has(&["-q"]) && p.has(&["--lines"]));
        for bad in ["-x", "-qx", "--lin=3", "--quiet=1", "--unknown", "-n"] {
            assert!(
                parse("x", &words(bad), &o, Mode::default()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn expansions_may_be_options() {
        let o = Options::parse("-n");
        let w = vec![ArgWord {
            raw: "$X".into(),
            dynamic: true,
            expands: true,
            ..ArgWord::default()
        }];
        assert!(parse("x", &w, &o, Mode::default()).is_err());
        let ok = Mode {
            expansions_ok: true,
            ..Mode::default()
        };
        assert_eq!(parse("x", &w, &o, ok).unwrap().operands.len(), 1);
    }
}
