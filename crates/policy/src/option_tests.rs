//! Tests generated from the option tables: every option that writes, runs or reads arguments
//! is tried in each spelling its program accepts and must be found by [`args::risks`]; and the
//! escapes and benign commands that shaped the tables.

use super::args::{Risk, risks};
use super::options::{Compiled, Effect, Opt, Takes, tables};
use super::word::ArgWord;
use super::wrappers;

/// The value every generated option gets.
const V: &str = ".git/hooks/v";

fn words(s: &[&str]) -> Vec<ArgWord> {
    s.iter().map(|w| ArgWord::literal(w)).collect()
}

/// Whether `rs` hold the risk an option with `effect` named `names` must produce.
fn found(rs: &[Risk], effect: Effect, names: &[String]) -> bool {
    rs.iter().any(|r| match (effect, r) {
        (Effect::Writes, Risk::Write { target, .. }) => {
            target.as_ref().is_some_and(|t| t.text == V)
        }
        (Effect::Creates | Effect::WritesInto, Risk::Modifies { target, .. }) => target.text == V,
        (Effect::Recreates, Risk::Tree { target, .. }) => target.text == V,
        (
            Effect::Runs | Effect::Code | Effect::ArgFile | Effect::Unchecked,
            Risk::Exec { flag, .. },
        ) => names.iter().any(|n| flag.starts_with(n.as_str())),
        _ => false,
    })
}

/// The shortest prefix of long option `name` that names only `opt` in `c`.
fn prefix(c: &Compiled, name: &str, opt: Opt) -> Option<String> {
    (1..name.len()).map(|n| &name[..n]).find_map(|p| {
        c.long
            .iter()
            .filter(|(l, _)| l.starts_with(p))
            .all(|(_, o)| *o == opt)
            .then(|| p.to_string())
    })
}

/// Every spelling of option `name` (as in the table: `-x`, `--long`, `-long`) with value `V`.
fn spellings(c: &Compiled, name: &str, opt: Opt) -> Vec<Vec<String>> {
    let style = c.table.style;
    let s = |v: &[&str]| v.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let mut out = Vec::new();
    if let Some(long) = name.strip_prefix("--").filter(|_| !style.single_dash_long) {
        let mut forms = vec![long.to_string()];
        if style.prefixes {
            forms.extend(prefix(c, long, opt));
        }
        for f in forms {
            match opt.takes {
                Takes::Nothing => out.push(s(&[&format!("--{f}")])),
                Takes::Optional => out.push(s(&[&format!("--{f}={V}")])),
                Takes::Value => {
                    out.push(s(&[&format!("--{f}={V}")]));
                    out.push(s(&[&format!("--{f}"), V]));
                }
            }
        }
    } else if style.single_dash_long {
        let n = name.trim_start_matches('-');
        match opt.takes {
            Takes::Nothing => out.extend([s(&[&format!("-{n}")]), s(&[&format!("--{n}")])]),
            _ => out.extend([
                s(&[&format!("-{n}={V}")]),
                s(&[&format!("-{n}"), V]),
                s(&[&format!("--{n}={V}")]),
            ]),
        }
    } else if let Some(ch) = name.strip_prefix('-') {
        // A plain flag to cluster it with: the same one every run (`-v` or `-q` when the
        // program has one: a mode flag such as `unzip -Z` changes what follows).
        let mut flags: Vec<char> = c
            .short
            .iter()
            .filter(|(f, o)| {
                o.takes == Takes::Nothing
                    && o.effect == Effect::Plain
                    && **f != ch.chars().next().unwrap_or('-')
            })
            .map(|(f, _)| *f)
            .collect();
        flags.sort_by_key(|f| (!matches!(f, 'v' | 'q'), *f));
        let flag = flags.first().map(char::to_string);
        let mut clusters = vec![String::new()];
        clusters.extend(flag);
        for before in clusters {
            match opt.takes {
                Takes::Nothing => out.push(s(&[&format!("-{before}{ch}")])),
                Takes::Optional => out.push(s(&[&format!("-{before}{ch}{V}")])),
                Takes::Value => {
                    out.push(s(&[&format!("-{before}{ch}{V}")]));
                    out.push(s(&[&format!("-{before}{ch}"), V]));
                }
            }
        }
        if style.old_tar {
            let first = format!("t{ch}");
            out.push(match opt.takes {
                Takes::Value => s(&[&first, V]),
                _ => s(&[&first]),
            });
        }
    }
    out
}

/// Each table with the words that come before its options and after them.
fn tables_with_commands() -> Vec<(&'static Compiled, Vec<&'static str>, Vec<&'static str>)> {
    let mut out: Vec<(&'static Compiled, Vec<&'static str>, Vec<&'static str>)> = Vec::new();
    for t in tables::TABLES {
        let prog = t.programs[0];
        let Some(c) = tables::find(prog) else {
            continue;
        };
        let before = match prog {
            "go" => vec!["go", "build"],
            _ => vec![prog],
        };
        out.push((c, before, vec![]));
    }
    out.push((tables::git_global(), vec!["git"], vec!["status"]));
    for (sub, _) in tables::GIT_SUBCOMMANDS {
        let name = if *sub == "*" { "diff" } else { sub };
        if let Some(c) = tables::git_subcommand(name) {
            out.push((c, vec!["git", name], vec![]));
        }
    }
    out
}

#[test]
fn every_risky_option_is_found_in_every_spelling() {
    let mut tried = 0;
    let mut missed = Vec::new();
    for (c, before, after) in tables_with_commands() {
        for (name, opt) in c.names() {
            if matches!(opt.effect, Effect::Plain | Effect::Reads | Effect::Network) {
                continue;
            }
            let names: Vec<String> = c
                .names()
                .into_iter()
                .filter(|(_, o)| *o == opt)
                .map(|(n, _)| n)
                .collect();
            for spelled in spellings(c, &name, opt) {
                let mut argv: Vec<&str> = before.clone();
                argv.extend(spelled.iter().map(String::as_str));
                argv.extend(after.iter().copied());
                tried += 1;
                if !found(&risks(&words(&argv)), opt.effect, &names) {
                    missed.push(argv.join(" "));
                }
            }
        }
    }
    assert!(missed.is_empty(), "not found: {missed:#?}");
    eprintln!("{tried} spellings tried");
    assert!(tried > 500, "only {tried} spellings tried");
}

#[test]
fn every_table_entry_compiles() {
    for t in tables::TABLES
        .iter()
        .chain([&tables::GIT_GLOBAL])
        .chain(tables::GIT_SUBCOMMANDS.iter().map(|(_, t)| t))
    {
        for entry in t.options.split_whitespace() {
            assert!(
                super::options::model::entry_opt(entry).is_some(),
                "{:?}: {entry}",
                t.programs
            );
        }
    }
}

/// Risk summaries: `exec FLAG`, `write T`, `modifies T`, `tree T`, `unknown`.
fn kinds(argv: &[&str]) -> Vec<String> {
    risks(&words(argv))
        .into_iter()
        .map(|r| match r {
            Risk::Exec { flag, .. } => format!("exec {flag}"),
            Risk::Write { target, .. } => {
                format!("write {}", target.map(|t| t.text).unwrap_or_default())
            }
            Risk::Modifies { target, .. } => format!("modifies {}", target.text),
            Risk::Tree { target, .. } => format!("tree {}", target.text),
            Risk::UnknownWrites { .. } => "unknown".into(),
        })
        .collect()
}

#[test]
fn new_spellings_of_known_escapes_are_found() {
    for (argv, want) in [
        (
            &["git", "clone", "--u=touch x;", ".", "m"][..],
            "exec --upload-pack=touch x;",
        ),
        (&["sort", "--co=sh", "f"], "exec --compress-program=sh"),
        (&["sed", "--e=1e touch x", "f"], "exec 1e touch x"),
        (
            &["make", "test", "--ev=$(shell touch x)"],
            "exec --eval=$(shell touch x)",
        ),
        (
            &["tar", "xCf", ".git/hooks", "h.tar"],
            "modifies .git/hooks",
        ),
        (
            &["unzip", "-o", "-d.git/hooks", "z.zip"],
            "modifies .git/hooks",
        ),
        (&["make", "-kE", "x: ; touch y"], "exec -E"),
        (
            &["wget", "-P.git/hooks", "https://example.com/x"],
            "modifies .git/hooks",
        ),
        (&["cp", "--target=.git/hooks", "f"], "modifies .git/hooks"),
        (
            &[
                "git",
                "clone",
                "--depth",
                "1",
                "https://example.com/x",
                ".github/workflows/x",
            ],
            "modifies .github/workflows/x",
        ),
        (&["pytest", "@args.txt"], "exec @args.txt"),
        (&["gcc", "@build.rsp"], "exec @build.rsp"),
        (
            &["wget", "--config=f", "https://example.com/x"],
            "exec --config=f",
        ),
        (&["node", "--test", "--env-file=f"], "exec --env-file=f"),
        // More of the same kinds.
        (&["sort", "-uo.git/config", "x"], "write .git/config"),
        (&["sort", "--files0-from=list"], "exec --files0-from=list"),
        (&["tee", "--app", ".git/config"], "write .git/config"),
        (&["rm", "--rec", "-f", ".git"], "tree .git"),
        (&["cp", "--rec", "hooks", ".git/"], "tree hooks"),
        (
            &["install", "--strip-prog=./x", "a", "b"],
            "exec --strip-program=./x",
        ),
        (&["split", "--fil=sh", "x"], "exec --filter=sh"),
        (
            &["curl", "-sSo.git/config", "https://example.com/x"],
            "modifies .git/config",
        ),
        (&["curl", "-K", "cfg", "https://example.com/x"], "exec -K"),
        (
            &["curl", "--conf=cfg", "https://example.com/x"],
            "exec --config=cfg",
        ),
        (&["sort", "--frobnicate", "x"], "exec --frobnicate"),
        (&["rm", "-rfZ", "x"], "exec -rfZ"),
        (&["chattr", "-i", ".git/config"], "modifies .git/config"),
        (
            &["chmod", "-x", ".git/hooks/pre-commit"],
            "modifies .git/hooks/pre-commit",
        ),
        (
            &["go", "build", "-o", ".git/hooks/pre-commit", "."],
            "modifies .git/hooks/pre-commit",
        ),
        (&["git", "archive", "--out=x.tar", "HEAD"], "write x.tar"),
        (
            &["git", "grep", "--open=vi", "x"],
            "exec --open-files-in-pager=vi",
        ),
        (&["git", "rebase", "-ix", "make", "main"], "exec -x"),
        (
            &["tar", "--to-c=sh", "-xf", "a.tar"],
            "exec --to-command=sh",
        ),
        (
            &["tar", "-xvzf", "a.tar", "--direc=.github"],
            "modifies .github",
        ),
        (&["rustc", "@args", "x.rs"], "exec @args"),
        (&["dd", "if=x", "of=.git/config"], "modifies .git/config"),
        (&["pytest", "--base=.git"], "tree .git"),
        (
            &["cargo", "build", "-vZunstable-options"],
            "exec -Zunstable-options",
        ),
    ] {
        let k = kinds(argv);
        assert!(k.iter().any(|x| x == want), "{argv:?}: {k:?} lacks {want}");
    }
}

#[test]
fn ambiguous_prefixes_are_unknown() {
    // `--out` begins both `--output-document` and `--output-file`: wget refuses it.
    let k = kinds(&["wget", "--out=.git/config", "https://example.com/x"]);
    assert!(!k.iter().any(|x| x == "modifies .git/config"), "{k:?}");
    // On a complete table, unknown: a rule must name it.
    assert_eq!(kinds(&["sort", "--c=x", "f"]), ["exec --c=x"]);
}

#[test]
fn benign_commands_keep_their_risks_as_they_were() {
    for argv in [
        &["tar", "-tzf", "x.tgz"][..],
        &["curl", "-fsSL", "https://example.com/x"],
        &["cargo", "test"],
        &["sort", "-u", "-k2,2", "-t", ",", "f"],
        &["unzip", "-l", "a.zip"],
        &["unzip", "-Z1", "a.zip"],
        &["git", "clone", "--depth", "1", "https://example.com/x"],
        &["make", "-j4", "test"],
        &["gcc", "-Wall", "-O2", "-c", "x.c"],
    ] {
        assert!(kinds(argv).is_empty(), "{argv:?}: {:?}", kinds(argv));
    }
    assert_eq!(
        kinds(&["sort", "-o", "out.txt", "in.txt"]),
        ["write out.txt"]
    );
    assert_eq!(kinds(&["rm", "-f", "--", "-x"]), ["modifies -x"]);
    let w = wrappers::unwrap(&words(&["stdbuf", "-oL", "cargo", "test"]));
    assert_eq!(w.map(|u| (u.start, u.writes)), Ok((2, vec![])));
}

#[test]
fn every_complete_table_refuses_an_option_it_does_not_list() {
    let mut tried = 0;
    for (c, before, after) in tables_with_commands() {
        if !c.table.complete {
            continue;
        }
        let unknown = if c.table.style.single_dash_long {
            "-zz-unknown"
        } else {
            "--zz-unknown"
        };
        let mut argv = before.clone();
        argv.push(unknown);
        argv.extend(after.iter().copied());
        tried += 1;
        let k = kinds(&argv);
        assert!(
            k.iter().any(|x| x == &format!("exec {unknown}")),
            "{argv:?}: {k:?}"
        );
    }
    assert!(tried >= 15, "only {tried} complete tables");
}

#[test]
fn negations_turn_flags_off_and_take_no_value() {
    for (argv, want) in [
        (
            &["curl", "--no-progress-meter", "https://example.com/x"][..],
            vec![],
        ),
        (
            &["curl", "--no-location", "-s", "https://example.com/x"],
            vec![],
        ),
        (
            &["curl", "--no-output=x", "https://example.com/x"],
            vec!["exec --no-output=x"],
        ),
        (
            &["wget", "--no-check-cert", "-O-", "https://example.com/x"],
            vec![],
        ),
        (
            &["wget", "--no-frobnicate", "-O-", "https://example.com/x"],
            vec!["exec --no-frobnicate"],
        ),
    ] {
        assert_eq!(kinds(argv), want, "{argv:?}");
    }
}
