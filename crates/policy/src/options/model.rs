//! The option model: what a program's options are, what they take and what their values are,
//! compiled from a table entry (see [`super::tables`]).

use std::collections::HashMap;

/// What an option's value is (or, for a flag, what the flag does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing runner checks (a count, a pattern, a format).
    Plain,
    /// A path the program reads.
    Reads,
    /// A file the program writes besides its main output (a report, a log, a sorted copy).
    Writes,
    /// A file the program writes as its purpose (`curl -o`, `dd of=`, `gcc -o`).
    Creates,
    /// A directory the program writes files into (`wget -P`, `unzip -d`, `cp -t`).
    WritesInto,
    /// A directory the program removes and recreates (`pytest --basetemp`).
    Recreates,
    /// A program to run (or, for a flag, an option that makes the program run others).
    Runs,
    /// Code the program runs or configuration that names programs (`make --eval`, `git -c`).
    Code,
    /// A file the program reads its options or arguments from (`curl -K`, `wget --config`).
    ArgFile,
    /// Where the program fetches from over the network.
    Network,
    /// An option runner knows by name but does not analyse: like an option a complete table
    /// does not list, a call with it needs a rule naming it (`sudo --edit`, `sort -o` for the
    /// read-only set).
    Unchecked,
}

impl Effect {
    fn from_letter(c: char) -> Option<Effect> {
        Some(match c {
            'r' => Effect::Reads,
            'w' => Effect::Writes,
            'm' => Effect::Creates,
            'd' => Effect::WritesInto,
            't' => Effect::Recreates,
            'x' => Effect::Runs,
            'c' => Effect::Code,
            '@' => Effect::ArgFile,
            'n' => Effect::Network,
            'u' => Effect::Unchecked,
            _ => return None,
        })
    }
}

/// What an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// Nothing: a flag.
    Nothing,
    /// A value: attached (`-ofile`, `--output=file`) or the next word.
    Value,
    /// A value only when attached (`--color=always`, `-j4`).
    Optional,
}

/// One option of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt {
    /// Its canonical name, with dashes: the first long name of the entry, or its first name.
    pub name: &'static str,
    /// What it takes.
    pub takes: Takes,
    /// What the value (or the flag) is.
    pub effect: Effect,
}

/// The command-line conventions a program follows besides GNU `getopt_long`'s short clusters
/// and attached values, which every table gets.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// A long option may be given by any unambiguous prefix of its name (GNU, git, argparse).
    pub prefixes: bool,
    /// Options have one dash and no clusters (`-toolexec=x`, `-o out`), as Go's flag package
    /// reads them; two dashes mean the same.
    pub single_dash_long: bool,
    /// Options end at the first operand (POSIX `getopt`).
    pub posix: bool,
    /// `NAME=value` operands are settings looked up in the table (make's variables, dd's
    /// `of=`).
    pub assignments: bool,
    /// A first word without a dash is a cluster of short options whose values are the next
    /// words, in order (`tar xCf DIR FILE`).
    pub old_tar: bool,
    /// A word `@FILE` is replaced by the arguments written in FILE (gcc, javac, pytest).
    pub response_files: bool,
    /// `-NUM` is a number option (`split -1000`).
    pub numeric: bool,
    /// `--no-NAME` turns off the flag `--NAME` (curl, wget): a plain option.
    pub negations: bool,
}

impl Style {
    /// GNU `getopt_long`: short clusters, attached values, unambiguous prefixes of long
    /// options. For a table that lists every option of its program, so that an abbreviation
    /// resolves to the option the program itself takes.
    pub const GNU: Style = Style {
        prefixes: true,
        single_dash_long: false,
        posix: false,
        assignments: false,
        old_tar: false,
        response_files: false,
        numeric: false,
        negations: false,
    };

    /// Short clusters and long options by their full names only: for programs that take no
    /// abbreviations (clap, lexopt, popt, curl), and for tables that list only the harmless
    /// options (an abbreviation there could stand for an option the table does not list).
    pub const EXACT: Style = Style {
        prefixes: false,
        ..Style::GNU
    };
}

/// A program's options, as data.
///
/// `options` is a space-separated list of entries. An entry is the option's names joined by
/// `|` (`-o|--output`, `-toolexec` for a single-dash long option, `of` for an assignment,
/// `*` for every assignment), then `=` when it takes a value (attached or the next word) or
/// `?` when its value can only be attached, then a letter for what the value is: `r` a path
/// read, `w` a file written on the side, `m` a file the program makes, `d` a directory
/// written into, `t` a directory removed and recreated, `x` a program run, `c` code, `@` a
/// file of options or arguments, `n` a network source, `u` an option runner does not analyse
/// (none: a plain value). A flag may carry a letter after `!` (`--search-zip!x`: the flag
/// makes the program run others). `--*` stands for every long option the entry does not
/// name (valgrind's `--tool=memcheck`).
#[derive(Debug)]
pub struct Table {
    /// The program names the table is for.
    pub programs: &'static [&'static str],
    /// Its conventions.
    pub style: Style,
    /// Whether the table lists every option of the program: then an option it does not list
    /// is unknown, and a call with one needs a rule naming it.
    pub complete: bool,
    /// Whether a word expanded at run time where an option may stand is a risk (it could
    /// become one of the program's risky options).
    pub expansions_risky: bool,
    /// The options (see the type's documentation).
    pub options: &'static str,
}

/// A [`Table`] compiled for lookups.
#[derive(Debug)]
pub struct Compiled {
    /// The table.
    pub table: &'static Table,
    /// Short options by letter.
    pub short: HashMap<char, Opt>,
    /// Long options (single-dash ones too) by name without dashes, in table order.
    pub long: Vec<(&'static str, Opt)>,
    /// Assignment names (`of`).
    pub assign: HashMap<&'static str, Opt>,
    /// What any other `NAME=value` is (`*` entry).
    pub any_assign: Option<Opt>,
    /// What any other long option is (`--*` entry).
    pub any_long: Option<Opt>,
}

impl Compiled {
    /// Compile `table`. Entries that do not follow the syntax are left out (the table tests
    /// check that every entry compiles).
    pub fn new(table: &'static Table) -> Compiled {
        let mut c = Compiled {
            table,
            short: HashMap::new(),
            long: Vec::new(),
            assign: HashMap::new(),
            any_assign: None,
            any_long: None,
        };
        for entry in table.options.split_whitespace() {
            let Some((names, opt)) = entry_opt(entry) else {
                continue;
            };
            for n in names.split('|') {
                if n == "--*" {
                    c.any_long = Some(opt);
                } else if let Some(long) = n.strip_prefix("--") {
                    c.long.push((long, opt));
                } else if let Some(short) = n.strip_prefix('-') {
                    let mut chars = short.chars();
                    match (chars.next(), chars.next()) {
                        (Some(ch), None) if !table.style.single_dash_long => {
                            c.short.insert(ch, opt);
                        }
                        _ => c.long.push((short, opt)),
                    }
                } else if n == "*" {
                    c.any_assign = Some(opt);
                } else {
                    c.assign.insert(n, opt);
                }
            }
        }
        c
    }

    /// Every option of the table with each of its names (for the table tests).
    pub fn names(&self) -> Vec<(String, Opt)> {
        let mut out: Vec<(String, Opt)> = self
            .short
            .iter()
            .map(|(ch, o)| (format!("-{ch}"), *o))
            .collect();
        let dashes = if self.table.style.single_dash_long {
            "-"
        } else {
            "--"
        };
        out.extend(self.long.iter().map(|(n, o)| (format!("{dashes}{n}"), *o)));
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// Split an entry into its names and the option it describes.
pub fn entry_opt(entry: &'static str) -> Option<(&'static str, Opt)> {
    let (names, takes, letter) = if let Some((n, l)) = entry.split_once('=') {
        (n, Takes::Value, l)
    } else if let Some((n, l)) = entry.split_once('?') {
        (n, Takes::Optional, l)
    } else if let Some((n, l)) = entry.split_once('!') {
        (n, Takes::Nothing, l)
    } else {
        (entry, Takes::Nothing, "")
    };
    let effect = match letter.chars().next() {
        None => Effect::Plain,
        Some(ch) if letter.len() == ch.len_utf8() => Effect::from_letter(ch)?,
        Some(_) => return None,
    };
    if names.is_empty() {
        return None;
    }
    let name = names
        .split('|')
        .find(|n| n.starts_with("--"))
        .or_else(|| names.split('|').next())?;
    Some((
        names,
        Opt {
            name,
            takes,
            effect,
        },
    ))
}
