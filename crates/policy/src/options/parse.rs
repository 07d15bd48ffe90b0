//! One parser for every option table: GNU `getopt_long` rules (short clusters, attached and
//! separate values, optional values only attached, unambiguous prefixes of long options, `--`
//! ends options) and the conventions a table's [`Style`] adds (single-dash long options,
//! `NAME=value` settings, tar's old-style first word, `@FILE` response files).

use super::model::{Compiled, Effect, Opt, Style, Takes};
use crate::word::{ArgWord, PROCESS_SUBSTITUTION};

/// One option found on a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given {
    /// The option.
    pub opt: Opt,
    /// How it reads in a reason and against a rule: the canonical name for a long option
    /// (`--upload-pack` for `--u`), the letter with its attached value for a short one
    /// (`-Zflag`), followed by `=VALUE` when the value was attached to a long option.
    pub spelled: String,
    /// Its value, when it has one.
    pub value: Option<ArgWord>,
}

/// A command line read against a table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The options, in order.
    pub given: Vec<Given>,
    /// The operands, in order.
    pub operands: Vec<ArgWord>,
    /// Options the table does not know, or ambiguous prefixes, as written.
    pub unknown: Vec<String>,
    /// Words expanded at run time where an option may stand.
    pub expanded: Vec<ArgWord>,
    /// `@FILE` words of a program that reads arguments from such files.
    pub arg_files: Vec<ArgWord>,
    /// Index in the arguments of the first operand (with POSIX rules, every word from there
    /// on is one: a wrapper's command starts there).
    pub first_operand: Option<usize>,
}

impl Parsed {
    /// Whether an option with canonical name `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.given.iter().any(|g| g.opt.name == name)
    }

    /// Whether any option named in `names` (canonical names) was given.
    pub fn has_any(&self, names: &[&str]) -> bool {
        self.given.iter().any(|g| names.contains(&g.opt.name))
    }

    /// The last value of the options named in `names`.
    pub fn last_value(&self, names: &[&str]) -> Option<&ArgWord> {
        self.given
            .iter()
            .rev()
            .filter(|g| names.contains(&g.opt.name))
            .find_map(|g| g.value.as_ref())
    }

    /// The first option that needs a value and has none (the command line ends after it).
    pub fn missing_value(&self) -> Option<&Given> {
        self.given
            .iter()
            .find(|g| g.opt.takes == Takes::Value && g.value.is_none())
    }

    /// The values of the options named `name`, in order.
    pub fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a ArgWord> + 'a {
        self.given
            .iter()
            .filter(move |g| g.opt.name == name)
            .filter_map(|g| g.value.as_ref())
    }
}

/// How a long option's name resolves.
enum Lookup {
    Found(Opt),
    Unknown,
}

/// Read `args` (the words after the program name) against `table`.
pub fn parse(table: &Compiled, args: &[ArgWord]) -> Parsed {
    let style = table.table.style;
    let mut out = Parsed::default();
    let mut i = 0;
    let mut end = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if end || !could_be_option(a) {
            out.first_operand.get_or_insert(i - 1);
            operand(table, a, i == 1 && !end, end, args, &mut i, &mut out);
            end |= style.posix;
            continue;
        }
        let t = a.text.as_str();
        if t == "--" && !a.dynamic {
            end = true;
            continue;
        }
        if style.single_dash_long || t.starts_with("--") {
            long(table, a, args, &mut i, &mut out);
        } else {
            cluster(table, a, args, &mut i, &mut out);
        }
    }
    out
}

/// An operand word: a response file, a setting, tar's old-style options, or an operand.
/// `end`: options have ended, so a word expanded at run time is an operand whatever it
/// becomes.
fn operand(
    table: &Compiled,
    a: &ArgWord,
    first: bool,
    end: bool,
    args: &[ArgWord],
    i: &mut usize,
    out: &mut Parsed,
) {
    let style: Style = table.table.style;
    let t = a.text.as_str();
    if style.response_files && t.starts_with('@') {
        out.arg_files.push(a.clone());
        return;
    }
    if style.assignments
        && let Some((name, value)) = t.split_once('=')
        && !name.is_empty()
        && !name.starts_with('-')
    {
        let opt = table.assign.get(name).copied().or(table.any_assign);
        match opt {
            Some(opt) => out.given.push(Given {
                opt,
                spelled: t.to_string(),
                value: Some(with_text(a, value)),
            }),
            None if table.table.complete => out.unknown.push(a.raw.clone()),
            None => out.operands.push(a.clone()),
        }
        return;
    }
    if style.old_tar && first && !a.dynamic && !t.is_empty() {
        for ch in t.chars() {
            let Some(opt) = table.short.get(&ch).copied() else {
                out.unknown.push(format!("{t} ({ch})"));
                continue;
            };
            let value = match opt.takes {
                Takes::Value => {
                    *i += 1;
                    args.get(*i - 1).cloned()
                }
                _ => None,
            };
            out.given.push(short_given(opt, ch, "", value));
        }
        return;
    }
    if a.dynamic && a.expands && t.is_empty() && !end && a.raw != PROCESS_SUBSTITUTION {
        // `$x` may be an option as well as an operand.
        out.expanded.push(a.clone());
    }
    out.operands.push(a.clone());
}

/// A long option (`--name`, `--name=value`, `--nam`; `-name` for single-dash tables).
fn long(table: &Compiled, a: &ArgWord, args: &[ArgWord], i: &mut usize, out: &mut Parsed) {
    let body = a.text.trim_start_matches('-');
    let (name, attached) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    if a.dynamic && attached.is_none() {
        out.expanded.push(a.clone());
        return;
    }
    let opt = match lookup(table, name) {
        Lookup::Found(o) => o,
        Lookup::Unknown => {
            out.unknown.push(a.raw.clone());
            return;
        }
    };
    let (value, spelled) = match (opt.takes, attached) {
        (Takes::Nothing, Some(v)) if table.table.style.single_dash_long => {
            // Go's `-v=true`.
            let _ = v;
            (None, opt.name.to_string())
        }
        (Takes::Nothing, Some(_)) => {
            out.unknown.push(a.raw.clone());
            return;
        }
        (_, Some(v)) => (Some(with_text(a, v)), format!("{}={v}", opt.name)),
        (Takes::Value, None) => {
            *i += 1;
            (args.get(*i - 1).cloned(), opt.name.to_string())
        }
        (_, None) => (None, opt.name.to_string()),
    };
    out.given.push(Given {
        opt,
        spelled,
        value,
    });
}

/// What `--no-NAME` is when `--NAME` is a flag of a table with negations.
const NEGATED: Opt = Opt {
    name: "--no-",
    takes: Takes::Nothing,
    effect: Effect::Plain,
};

/// Resolve a long option's name: exact, else (with prefixes) the one option it begins, else
/// the negation of a flag, else the table's `--*` entry.
fn lookup(table: &Compiled, name: &str) -> Lookup {
    match lookup_name(table, name) {
        Lookup::Unknown if table.table.style.negations => match name.strip_prefix("no-") {
            Some(flag) => match lookup_name(table, flag) {
                Lookup::Found(o) if o.takes == Takes::Nothing => Lookup::Found(NEGATED),
                _ => Lookup::Unknown,
            },
            None => Lookup::Unknown,
        },
        found => found,
    }
}

/// [`lookup`] without negations.
fn lookup_name(table: &Compiled, name: &str) -> Lookup {
    if let Some((_, o)) = table.long.iter().find(|(n, _)| *n == name) {
        return Lookup::Found(*o);
    }
    let any = || table.any_long.filter(|_| !name.is_empty());
    if !table.table.style.prefixes || name.is_empty() {
        return any().map_or(Lookup::Unknown, Lookup::Found);
    }
    let mut found: Option<Opt> = None;
    for (n, o) in &table.long {
        if n.starts_with(name) {
            match found {
                // Names of the same option are not ambiguous (getopt_long compares them).
                Some(f) if f != *o => return Lookup::Unknown,
                _ => found = Some(*o),
            }
        }
    }
    found.or_else(any).map_or(Lookup::Unknown, Lookup::Found)
}

/// A cluster of short options (`-xvf`, `-ofile`, `-o file`).
fn cluster(table: &Compiled, a: &ArgWord, args: &[ArgWord], i: &mut usize, out: &mut Parsed) {
    let letters = &a.text[1..];
    if table.table.style.numeric
        && !letters.is_empty()
        && letters.chars().all(|c| c.is_ascii_digit())
    {
        return;
    }
    for (k, ch) in letters.char_indices() {
        let Some(opt) = table.short.get(&ch).copied() else {
            out.unknown.push(a.raw.clone());
            return;
        };
        let rest = &letters[k + ch.len_utf8()..];
        match opt.takes {
            Takes::Nothing => out.given.push(short_given(opt, ch, "", None)),
            Takes::Optional => {
                let v = (!rest.is_empty() || a.dynamic).then(|| with_text(a, rest));
                out.given.push(short_given(opt, ch, rest, v));
                return;
            }
            Takes::Value => {
                let v = if rest.is_empty() && !a.dynamic {
                    *i += 1;
                    args.get(*i - 1).cloned()
                } else {
                    Some(with_text(a, rest))
                };
                out.given.push(short_given(opt, ch, rest, v));
                return;
            }
        }
    }
    if a.dynamic {
        // `-v$X`: the rest could be any option.
        out.expanded.push(a.clone());
    }
}

fn short_given(opt: Opt, ch: char, attached: &str, value: Option<ArgWord>) -> Given {
    Given {
        opt,
        spelled: format!("-{ch}{attached}"),
        value,
    }
}

/// Whether `a` may be read as an option: it starts with `-` (and is not `-` alone, which is
/// standard input, unless more is expanded after it).
fn could_be_option(a: &ArgWord) -> bool {
    a.raw != PROCESS_SUBSTITUTION && a.text.starts_with('-') && (a.text != "-" || a.dynamic)
}

fn with_text(a: &ArgWord, text: &str) -> ArgWord {
    let mut w = a.clone();
    w.text = text.to_string();
    w.home_rest = None;
    w
}

#[cfg(test)]
mod tests {
    use super::super::model::Table;
    use super::*;

    fn compiled(style: Style, complete: bool, options: &'static str) -> Compiled {
        let t: &'static Table = Box::leak(Box::new(Table {
            programs: &["x"],
            style,
            complete,
            expansions_risky: false,
            options,
        }));
        Compiled::new(t)
    }

    fn read(c: &Compiled, s: &str) -> Parsed {
        parse(c, &ArgWord::split(s))
    }

    fn given(p: &Parsed) -> Vec<String> {
        p.given
            .iter()
            .map(|g| match &g.value {
                Some(v) => format!("{} {}", g.opt.name, v.text),
                None => g.opt.name.to_string(),
            })
            .collect()
    }

    const GNU: Style = Style::GNU;

    #[test]
    fn gnu_rules() {
        let c = compiled(
            GNU,
            true,
            "-o|--output=w -c|--compress-program=x --color? --check -v|--verbose",
        );
        let p = read(
            &c,
            "--out=a --output b -ob -vo c --com=z a1 --col -- --check",
        );
        assert_eq!(
            given(&p),
            [
                "--output a",
                "--output b",
                "--output b",
                "--verbose",
                "--output c",
                "--compress-program z",
                "--color"
            ]
        );
        let ops: Vec<&str> = p.operands.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(ops, ["a1", "--check"]);
        // `--c` and `--co` begin several options: ambiguous, so unknown; `--check=1` takes no
        // value.
        assert_eq!(read(&c, "--co=z").unknown, ["--co=z"]);
        assert_eq!(read(&c, "--c x").unknown, ["--c"]);
        assert_eq!(read(&c, "--check=1").unknown, ["--check=1"]);
        assert_eq!(read(&c, "-vq").unknown, ["-vq"]);
        // An optional value is only attached.
        assert_eq!(given(&read(&c, "--color always")), ["--color"]);
        assert_eq!(p.given[5].spelled, "--compress-program=z");
        assert_eq!(read(&c, "-vcz").given[1].spelled, "-cz");
        assert_eq!(p.given[0].opt.effect, Effect::Writes);
    }

    #[test]
    fn other_conventions() {
        let go = compiled(
            Style {
                single_dash_long: true,
                prefixes: false,
                ..GNU
            },
            false,
            "-toolexec=x -o=m -v",
        );
        assert_eq!(
            given(&read(&go, "-v=true -toolexec=a --toolexec b -o c -tool d")),
            ["-v", "-toolexec a", "-toolexec b", "-o c"]
        );
        let tar = compiled(
            Style {
                old_tar: true,
                ..GNU
            },
            false,
            "-x|--extract -C|--directory= -f|--file=",
        );
        assert_eq!(
            given(&read(&tar, "xCf .git/hooks h.tar m")),
            ["--extract", "--directory .git/hooks", "--file h.tar"]
        );
        let dd = compiled(
            Style {
                assignments: true,
                ..GNU
            },
            true,
            "of=m *=c",
        );
        assert_eq!(given(&read(&dd, "of=x CC=y")), ["of x", "* y"]);
        let gcc = compiled(
            Style {
                response_files: true,
                ..GNU
            },
            false,
            "-o=m",
        );
        let p = read(&gcc, "@build.rsp -Wall a.c");
        assert_eq!(p.arg_files.len(), 1);
        assert_eq!(p.unknown, ["-Wall"]);
        let posix = compiled(Style { posix: true, ..GNU }, false, "-v");
        assert_eq!(read(&posix, "a -v").operands.len(), 2);
    }

    #[test]
    fn expanded_words() {
        let c = compiled(GNU, false, "-o|--output=w -v");
        let dynamic = |raw: &str, text: &str| ArgWord {
            text: text.into(),
            raw: raw.into(),
            dynamic: true,
            expands: true,
            ..ArgWord::default()
        };
        let p = parse(
            &c,
            &[dynamic("--output=$X", "--output="), dynamic("-v$Y", "-v")],
        );
        assert_eq!(p.given[0].value.as_ref().map(|v| v.dynamic), Some(true));
        assert_eq!(p.expanded.len(), 1);
        let p = parse(&c, &[dynamic("$X", ""), dynamic("-$Y", "-")]);
        assert_eq!(p.expanded.len(), 2);
        assert_eq!(p.operands.len(), 1);
    }
}
