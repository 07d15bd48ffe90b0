//! Argument-level risks of programs an allow rule, bypass mode or a hook lets run.
//!
//! A prefix rule such as `Bash(git diff:*)` matches `git diff --output=.git/hooks/pre-commit`
//! word for word, but that call writes a file. [`risks`] lists what such arguments do, so the
//! policy can check a file-writing flag as an Edit of its target, refuse a code-running flag
//! unless the rule names it, and keep protected paths protected from every program whose job
//! is writing files (`cp`, `mv`, `ln`, `chmod`, `rm`, `tar -x` ...). Defined as data per
//! program. Arguments runner cannot see (`xargs`, `find -exec ... {}`) are assumed to be the
//! worst: see [`unseen_risk`]. Options are read by one model, [`options`]: a table per
//! program says what each option's value is, and [`risks`] maps that onto a [`Risk`].

use super::options::{self, Compiled, Effect, Parsed, tables};
use super::word::ArgWord;
use super::{git, sed};

/// What a risky argument does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Risk {
    /// Runs other programs or changes what a program runs (`find -exec`, `git -c`, `rg --pre`,
    /// `make CC=...`). Allowed only by a rule whose text names `flag`, a bare `Bash` rule,
    /// bypass mode or a hook.
    Exec {
        /// The flag as written, for the reason and for matching against the rule text.
        flag: String,
        /// What it does.
        what: &'static str,
    },
    /// Writes the file `target` as a side output (checked like a redirection: as an Edit of
    /// that path).
    Write {
        /// The flag as written.
        flag: String,
        /// The target word; `None` when it is missing.
        target: Option<ArgWord>,
    },
    /// Writes, changes or removes `target` as the command's purpose (`cp`'s destination,
    /// `chmod`'s files, `sed -i`'s files): whatever allows the command, protected paths and
    /// Edit deny and ask rules still hold for the target.
    Modifies {
        /// What the command does to it.
        what: &'static str,
        /// The path word.
        target: ArgWord,
    },
    /// Like [`Risk::Modifies`] for everything under `target` (a recursive `rm`, `chmod -R`,
    /// `pytest --basetemp`), or what a recursive copy puts under `dest`: the tree is looked
    /// at for protected paths.
    Tree {
        /// What the command does.
        what: &'static str,
        /// The directory removed or changed (or copied from).
        target: ArgWord,
        /// For a copy or move: where the tree lands.
        dest: Option<ArgWord>,
        /// Only entries whose name matches all of these glob patterns are touched (`find
        /// -name P -delete`); empty: all of them.
        only: Vec<String>,
    },
    /// Writes files whose names runner cannot see (`tar -x`, `unzip`, `patch`, `git apply`):
    /// allowed only by a rule that names the command, never by bypass mode, a bare `Bash`
    /// rule or a hook, since any of them may be a protected path.
    UnknownWrites {
        /// What it does.
        what: &'static str,
    },
}

fn exec(flag: &str, what: &'static str) -> Risk {
    Risk::Exec {
        flag: flag.to_string(),
        what,
    }
}

fn modifies(what: &'static str, target: &ArgWord) -> Risk {
    Risk::Modifies {
        what,
        target: target.clone(),
    }
}

/// Programs whose arguments [`risks`] looks at: with arguments runner cannot see, a rule for
/// one of them cannot tell what it allows.
const WATCHED: &[&str] = &[
    "git", "find", "sed", "sort", "rg", "tar", "go", "npm", "pnpm", "yarn", "npx", "tee", "uniq",
    "perl", "ruby", "curl", "wget", "make", "gmake", "cargo", "pytest", "py.test", "python",
    "python3", "cp", "mv", "ln", "install", "rm", "rmdir", "unlink", "shred", "chmod", "chown",
    "chgrp", "chattr", "setfacl", "touch", "truncate", "mkdir", "mkfifo", "mknod", "dd", "unzip",
    "patch", "rsync", "cpio", "link", "split", "csplit",
];

/// The risk of a command that gets arguments runner cannot see (`xargs CMD`, `find -exec CMD
/// {}`): for a program whose arguments matter, an unseen one may be the worst of them.
pub fn unseen_risk(argv: &[ArgWord]) -> Option<Risk> {
    let name = argv.first()?;
    let prog = name.text.rsplit('/').next().unwrap_or_default();
    WATCHED.contains(&prog).then(|| {
        exec(
            prog,
            "gets arguments runner cannot see, and an argument of this program can write files or run commands",
        )
    })
}

/// The risky arguments of `argv` (after wrappers). Empty for programs not listed here.
pub fn risks(argv: &[ArgWord]) -> Vec<Risk> {
    let Some(name) = argv.first() else {
        return vec![];
    };
    let prog = name.text.rsplit('/').next().unwrap_or_default();
    let args = &argv[1..];
    let mut out = Vec::new();
    match prog {
        "git" => git_risks(args, &mut out),
        "find" => find_risks(args, &mut out),
        "perl" | "ruby" => perl_risks(args, &mut out),
        "python" | "python3" => {
            if let Some(k) = args.iter().position(|a| a.text == "-m")
                && args.get(k + 1).is_some_and(|m| m.text == "pytest")
            {
                table_risks("pytest", &args[k + 2..], &mut out);
            }
        }
        "chmod" | "chattr" => mode_risks(prog, args, &mut out),
        // `unzip -Z`: zipinfo, which lists; the words after it are zipinfo's.
        "unzip"
            if args
                .first()
                .is_some_and(|a| !a.dynamic && a.text.starts_with("-Z")) => {}
        "npm" | "pnpm" | "yarn" | "npx" => {
            // The package manager reads its options after `--` too (`npm test -- -c x`).
            let args: Vec<ArgWord> = args.iter().filter(|a| a.text != "--").cloned().collect();
            table_risks(prog, &args, &mut out);
        }
        _ => table_risks(prog, args, &mut out),
    }
    out
}

/// Read `args` against `prog`'s option table; its options' risks, then what its operands are.
fn table_risks(prog: &str, args: &[ArgWord], out: &mut Vec<Risk>) {
    let Some(table) = tables::find(prog) else {
        return;
    };
    let p = options::parse(table, args);
    option_risks(table, &p, out);
    operand_risks(prog, args, &p, out);
}

/// The risks the option table itself describes: each option by what its value is, response
/// files, options a complete table does not know, words expanded at run time.
fn option_risks(table: &Compiled, p: &Parsed, out: &mut Vec<Risk>) {
    for g in &p.given {
        let value = || g.value.clone().filter(|v| v.text != "-" || v.dynamic);
        match g.opt.effect {
            Effect::Plain | Effect::Reads | Effect::Network => {}
            Effect::Writes => out.push(Risk::Write {
                flag: g.opt.name.into(),
                target: g.value.clone(),
            }),
            Effect::Creates => out.extend(value().map(|v| modifies("writes", &v))),
            Effect::WritesInto => out.extend(value().map(|v| modifies("writes into", &v))),
            Effect::Recreates => {
                out.push(Risk::Write {
                    flag: g.opt.name.into(),
                    target: g.value.clone(),
                });
                out.extend(value().map(|v| Risk::Tree {
                    what: "removes and recreates",
                    target: v,
                    dest: None,
                    only: Vec::new(),
                }));
            }
            Effect::Runs => out.push(exec(&g.spelled, "runs another program")),
            Effect::Code => out.push(exec(
                &g.spelled,
                "runs code or sets configuration that names programs",
            )),
            Effect::ArgFile => out.push(exec(
                &g.spelled,
                "reads options or arguments from a file runner cannot check",
            )),
            Effect::Unchecked => out.push(exec(
                &g.spelled,
                "is an option runner does not analyse for this program",
            )),
        }
    }
    for f in &p.arg_files {
        out.push(exec(
            &f.raw,
            "reads arguments from a file runner cannot check (a response file)",
        ));
    }
    if table.table.complete {
        for u in &p.unknown {
            out.push(exec(
                u,
                "is an option runner does not know for this program",
            ));
        }
    }
    for e in &p.expanded {
        if table.table.expansions_risky || e.text.starts_with('-') {
            dynamic_flag(out, e);
        }
    }
}

/// What a program does to its operands and what its options mean together (exhaustive per
/// program with a table).
fn operand_risks(prog: &str, args: &[ArgWord], p: &Parsed, out: &mut Vec<Risk>) {
    let ops = &p.operands;
    match prog {
        "sed" => sed_risks(p, out),
        "tee" => out.extend(ops.iter().map(|a| Risk::Write {
            flag: "tee".into(),
            target: Some(a.clone()),
        })),
        "uniq" => out.extend(ops.get(1).map(|t| Risk::Write {
            flag: "uniq IN OUT".into(),
            target: Some(t.clone()),
        })),
        "cp" | "mv" | "install" => copy_risks(prog, p, out),
        "ln" => link_risks(p, out),
        "link" => out.extend(ops.get(1).map(|t| modifies("links a file to", t))),
        "split" => out.extend(ops.get(1).map(|t| modifies("writes files named after", t))),
        "csplit" => out.extend(
            p.values("--prefix")
                .last()
                .map(|t| modifies("writes files named after", t)),
        ),
        "rm" | "rmdir" | "unlink" | "shred" => {
            let tree = p.has("--recursive") || prog == "rmdir";
            out.extend(ops.iter().map(|a| removes(tree, "removes", a)));
        }
        "chown" | "chgrp" | "setfacl" => {
            // The owner comes first (setfacl takes its ACL as an option value).
            let skip = usize::from(prog != "setfacl" && !p.has("--reference"));
            let tree = p.has("--recursive");
            out.extend(
                ops.iter()
                    .skip(skip)
                    .map(|a| removes(tree, "changes the permissions of", a)),
            );
        }
        "touch" | "truncate" | "mkdir" | "mkfifo" => {
            out.extend(ops.iter().map(|a| modifies("creates or changes", a)))
        }
        "mknod" => out.extend(ops.first().map(|a| modifies("creates", a))),
        "unzip" => {
            let listing = ["-l", "-t", "-p", "-v", "-Z", "-z"]
                .iter()
                .any(|n| p.has(n));
            if !listing {
                out.push(Risk::UnknownWrites {
                    what: "writes the files named inside the archive",
                });
            }
        }
        "tar" => tar_risks(p, out),
        "patch" if !p.has("--dry-run") => out.push(Risk::UnknownWrites {
            what: "writes the files named inside the patch",
        }),
        "rsync" => out.push(Risk::UnknownWrites {
            what: "writes the files it copies, which runner does not list",
        }),
        "cpio" if p.has("--extract") => out.push(Risk::UnknownWrites {
            what: "writes the files named inside the archive",
        }),
        "wget" if !p.has("--output-document") => out.push(Risk::UnknownWrites {
            what: "writes a file named by the URL",
        }),
        "curl"
            if [
                "--remote-name",
                "--remote-header-name",
                "--remote-name-all",
                "--output-dir",
            ]
            .iter()
            .any(|n| p.has(n)) =>
        {
            out.push(Risk::UnknownWrites {
                what: "writes a file named by the server or the URL",
            })
        }
        "go" => go_env_risks(args, out),
        "npm" | "pnpm" | "yarn" | "npx" => npm_risks(args, out),
        _ => {}
    }
}

/// `go env -w` changes go's persistent settings.
fn go_env_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    if let Some(i) = args.iter().position(|a| a.text == "env")
        && args[i + 1..]
            .iter()
            .any(|x| matches!(x.text.as_str(), "-w" | "-u"))
    {
        out.push(exec(
            "env -w",
            "changes go's persistent settings (GOFLAGS can name a tool runner)",
        ));
    }
}

/// npm's `--config.NAME` settings and `config set`.
fn npm_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if t.starts_with("--config.") {
            out.push(exec(t, "changes which scripts or programs run"));
        }
        if t == "config"
            && args
                .get(i + 1)
                .is_some_and(|x| matches!(x.text.as_str(), "set" | "edit" | "delete"))
        {
            out.push(exec(
                "config set",
                "changes npm's configuration (which can name a script shell)",
            ));
        }
    }
}

/// A path removed or changed: the whole tree under it when `tree`.
fn removes(tree: bool, what: &'static str, target: &ArgWord) -> Risk {
    if tree {
        Risk::Tree {
            what,
            target: target.clone(),
            dest: None,
            only: Vec::new(),
        }
    } else {
        modifies(what, target)
    }
}

/// `chmod` and `chattr`: a mode may look like an option (`chmod -x f`, `chattr -i f`); it is
/// taken out before the options are read. The files after it are changed.
fn mode_risks(prog: &str, args: &[ArgWord], out: &mut Vec<Risk>) {
    let is_mode = |t: &str| {
        if prog == "chattr" {
            t.len() > 1
                && t.starts_with(['-', '+', '='])
                && t[1..].chars().all(|c| "aAcCdDeFijmPsStTux".contains(c))
        } else {
            t.len() > 1
                && t.trim_start_matches(['u', 'g', 'o', 'a'])
                    .starts_with(['-', '+', '='])
                && t.chars().all(|c| "ugoarwxXst+-=,0123456789".contains(c))
        }
    };
    let mode_at = args
        .iter()
        .position(|a| !a.dynamic && is_mode(&a.text) && a.text.starts_with('-'));
    let rest: Vec<ArgWord> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| Some(*i) != mode_at && !(prog == "chattr" && is_mode(&a.text)))
        .map(|(_, a)| a.clone())
        .collect();
    let Some(table) = tables::find(prog) else {
        return;
    };
    let p = options::parse(table, &rest);
    option_risks(table, &p, out);
    // The mode comes first, unless it was taken out or `--reference` stands for it.
    let skip = usize::from(prog == "chmod" && mode_at.is_none() && !p.has("--reference"));
    let tree = p.has("--recursive") || p.has("-R");
    for a in p.operands.iter().skip(skip) {
        out.push(removes(tree, "changes the permissions of", a));
    }
}

/// `find`: actions that run commands, delete files or write lists.
fn find_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        dynamic_flag(out, a);
        match t {
            "-exec" | "-execdir" | "-ok" | "-okdir" => out.push(exec(t, "runs a command per file")),
            "-delete" => {
                out.push(exec(t, "deletes files"));
                find_delete(args, out);
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => out.push(Risk::Write {
                flag: t.into(),
                target: args.get(i + 1).cloned(),
            }),
            _ => {}
        }
    }
}

/// What `find -delete` deletes lies under its start points; with only `-name` tests and
/// implicit `-and`, what matches them.
fn find_delete(args: &[ArgWord], out: &mut Vec<Risk>) {
    let starts: Vec<&ArgWord> = args
        .iter()
        .skip_while(|a| matches!(a.text.as_str(), "-H" | "-L" | "-P"))
        .take_while(|a| !a.text.starts_with('-') && a.text != "(" && a.text != "!")
        .collect();
    let dot = ArgWord::literal(".");
    let starts = if starts.is_empty() {
        vec![&dot]
    } else {
        starts
    };
    let plain = !args.iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-o" | "-or" | "!" | "-not" | "," | "(" | ")"
        )
    });
    let only: Vec<String> = if plain {
        args.windows(2)
            .filter(|w| matches!(w[0].text.as_str(), "-name" | "-iname"))
            .map(|w| w[1].text.clone())
            .collect()
    } else {
        Vec::new()
    };
    for s in starts {
        out.push(Risk::Tree {
            what: "deletes files under",
            target: s.clone(),
            dest: None,
            only: only.clone(),
        });
    }
}

/// `perl -i` and `ruby -i` edit the files after the script in place.
fn perl_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    let mut in_place = false;
    let mut files = Vec::new();
    let mut script_given = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if t.starts_with('-') && !t.starts_with("--") && t.len() > 1 {
            if t[1..].contains('i') && !t[1..].starts_with('I') {
                in_place = true;
            }
            if t.ends_with('e') || t.ends_with('E') {
                script_given = true;
                i += 1;
            }
        } else if !script_given {
            script_given = true;
        } else {
            files.push(a.clone());
        }
    }
    if in_place {
        out.push(exec("-i", "edits files in place"));
        for f in files {
            out.push(modifies("edits in place", &f));
        }
    }
}

/// A dynamic word could turn into any flag.
fn dynamic_flag(out: &mut Vec<Risk>, w: &ArgWord) {
    if w.expands {
        out.push(exec(
            &w.raw,
            "is expanded at run time and could become any option",
        ));
    }
}

/// `cp`, `mv`, `install`: the destination (and, for `mv`, the sources) are modified; a
/// directory copied or moved lands as a tree under the destination; hard and symbolic link
/// copies (`cp -l`, `cp -s`) make the source writable through the copy.
fn copy_risks(prog: &str, p: &Parsed, out: &mut Vec<Risk>) {
    let links = p.has("--link") || (prog == "cp" && p.has("--symbolic-link"));
    let recursive = prog == "mv" || p.has("--recursive") || p.has("--archive");
    if prog == "install" && p.has("--directory") {
        for o in &p.operands {
            out.push(modifies("creates", o));
        }
        return;
    }
    let ops = p.operands.clone();
    let (sources, dest) = match p.values("--target-directory").last() {
        Some(d) => (ops, d.clone()),
        None => match ops.split_last() {
            Some((d, s)) if !s.is_empty() => (s.to_vec(), d.clone()),
            _ => return,
        },
    };
    out.push(modifies("writes", &dest));
    for s in &sources {
        if prog == "mv" {
            out.push(modifies("moves away", s));
        }
        if links {
            out.push(modifies("links to", s));
        }
        if recursive {
            out.push(Risk::Tree {
                what: "copies a tree into",
                target: s.clone(),
                dest: Some(dest.clone()),
                only: Vec::new(),
            });
        }
    }
}

/// `ln`: the link is written, and its target becomes writable through it.
fn link_risks(p: &Parsed, out: &mut Vec<Risk>) {
    match (p.values("--target-directory").last(), p.operands.as_slice()) {
        (Some(d), targets) => {
            out.push(modifies("creates links in", d));
            for t in targets {
                out.push(Risk::Modifies {
                    what: "becomes writable through a link to",
                    target: link_target(t, d, true),
                });
            }
        }
        (None, [t]) => out.push(modifies("links to", t)),
        (None, [targets @ .., link]) => {
            out.push(modifies("creates the link", link));
            for t in targets {
                out.push(Risk::Modifies {
                    what: "becomes writable through a link to",
                    target: link_target(t, link, targets.len() > 1),
                });
            }
        }
        _ => {}
    }
}

/// A symlink's target text is read from the link's directory: `ln -s ../.git x/y` links to
/// `x/../.git`. For the check, the target word is rewritten relative to the command's
/// directory (an absolute target stays as it is).
fn link_target(target: &ArgWord, link: &ArgWord, link_is_dir: bool) -> ArgWord {
    if target.text.starts_with('/') || target.dynamic {
        return target.clone();
    }
    let dir = if link_is_dir {
        link.text.trim_end_matches('/').to_string()
    } else {
        match link.text.rsplit_once('/') {
            Some((d, _)) => d.to_string(),
            None => String::new(),
        }
    };
    let mut w = target.clone();
    if !dir.is_empty() && !link.dynamic {
        w.text = format!("{dir}/{}", target.text);
    }
    w
}

/// Whether `git config ARGS` writes (anything but a lookup or a listing).
fn config_writes(args: &[ArgWord]) -> bool {
    let mut operands = 0;
    for a in args {
        let t = a.text.as_str();
        match t {
            "get" | "list" | "--get" | "--get-all" | "--get-regexp" | "--get-urlmatch" | "-l"
            | "--list" | "--get-color" | "--get-colorbool" | "--show-origin" | "--show-scope"
            | "--name-only" | "-z" | "--null" | "--includes" | "--no-includes" | "--local"
            | "--worktree" | "--type=bool" | "--type=int" | "--type=path" | "--bool" | "--int"
            | "--path" => {
                if matches!(
                    t,
                    "get"
                        | "list"
                        | "--get"
                        | "--get-all"
                        | "--get-regexp"
                        | "-l"
                        | "--list"
                        | "--get-urlmatch"
                        | "--get-color"
                        | "--get-colorbool"
                ) {
                    return false;
                }
            }
            _ if t.starts_with('-') => return true,
            _ => operands += 1,
        }
    }
    operands != 1
}

/// git: configuration, hooks, other repositories and programs its subcommands can run, files
/// they write. Global options are read exactly (git takes no abbreviations there), each
/// subcommand's against its table.
fn git_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    let g = git::globals(args);
    let end = g.sub.unwrap_or(args.len());
    let global = tables::git_global();
    option_risks(global, &options::parse(global, &args[..end]), out);
    for a in args[..end].iter().filter(|a| a.dynamic) {
        out.push(exec(
            &a.raw,
            "is expanded at run time and could become any option",
        ));
    }
    let Some(sub_at) = g.sub else {
        if end < args.len() || args.iter().any(|a| a.text.starts_with('-')) {
            out.push(exec(
                "git",
                "has options runner does not know before its subcommand",
            ));
        }
        return;
    };
    let sub = args[sub_at].text.as_str();
    let rest = &args[sub_at + 1..];
    let Some(table) = tables::git_subcommand(sub) else {
        return;
    };
    let p = options::parse(table, rest);
    option_risks(table, &p, out);
    for a in rest {
        dynamic_flag(out, a);
    }
    git_subcommand_risks(sub, rest, &p, out);
}

/// What git subcommands do by their operands and words.
fn git_subcommand_risks(sub: &str, rest: &[ArgWord], p: &Parsed, out: &mut Vec<Risk>) {
    let ops = &p.operands;
    match sub {
        "submodule" if rest.iter().any(|a| a.text == "foreach") => out.push(exec(
            "submodule foreach",
            "runs a command in every submodule",
        )),
        "bisect" if rest.first().is_some_and(|a| a.text == "run") => {
            out.push(exec("bisect run", "runs a command on every step"))
        }
        "filter-branch" => out.push(exec("filter-branch", "runs filter commands")),
        "config" if config_writes(rest) => {
            out.push(exec(
                "config",
                "changes git configuration (hooks, pagers, aliases and filters are programs)",
            ));
            let file = if rest.iter().any(|a| a.text == "--global") {
                "~/.gitconfig"
            } else {
                ".git/config"
            };
            let mut w = ArgWord::literal(file);
            if file.starts_with('~') {
                w.home_rest = Some(".gitconfig".into());
            }
            out.push(modifies("changes", &w));
        }
        // `git clone [options] REPO DIR`.
        "clone" if ops.len() >= 2 => {
            out.extend(ops.last().map(|d| modifies("clones into", d)));
        }
        "init" => {
            for a in ops {
                out.push(modifies("creates a repository in", a));
            }
        }
        "apply" | "am"
            if !rest.iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "--check" | "--stat" | "--numstat" | "--summary"
                )
            }) =>
        {
            out.push(Risk::UnknownWrites {
                what: "writes the files named inside the patch",
            })
        }
        "worktree" if rest.first().is_some_and(|a| a.text == "add") => {
            if let Some(p) = rest[1..].iter().find(|a| !a.text.starts_with('-')) {
                out.push(modifies("creates a worktree in", p));
            }
        }
        "bundle" if rest.first().is_some_and(|a| a.text == "create") => {
            if let Some(p) = rest[1..].iter().find(|a| !a.text.starts_with('-')) {
                out.push(modifies("writes", p));
            }
        }
        _ => {}
    }
}

/// tar: extraction writes where `-C DIR` (or the current directory) points, with member names
/// runner cannot see; creation writes the archive.
fn tar_risks(p: &Parsed, out: &mut Vec<Risk>) {
    let extract = p.has("--extract");
    let create = ["--create", "--append", "--update", "--catenate", "--delete"]
        .iter()
        .any(|n| p.has(n));
    if extract {
        out.push(Risk::UnknownWrites {
            what: "extracts files named inside the archive",
        });
        let dot = ArgWord::literal(".");
        let dirs: Vec<&ArgWord> = p.values("--directory").collect();
        let dirs = if dirs.is_empty() { vec![&dot] } else { dirs };
        for d in dirs {
            out.push(modifies("extracts into", d));
        }
    } else if create && let Some(f) = p.values("--file").last().filter(|f| f.text != "-") {
        out.push(modifies("writes the archive", f));
    }
    if p.has("--remove-files") {
        // The members are removed once archived, directories with what they hold.
        for m in &p.operands {
            out.push(removes(true, "removes after archiving", m));
        }
    }
}

/// `sed -i` (any spelling) and script commands that run or write (`e`, `w`, `W`, `s///e`,
/// `s///w`; `r`/`R` read arbitrary files); the files `-i` edits are modified.
fn sed_risks(p: &Parsed, out: &mut Vec<Risk>) {
    let in_place = p.given.iter().find(|g| g.opt.name == "--in-place");
    if let Some(g) = in_place {
        out.push(exec(&g.spelled, "edits files in place"));
    }
    let mut scripts: Vec<ArgWord> = p.values("--expression").cloned().collect();
    let explicit = !scripts.is_empty() || p.has("--file");
    let mut files = p.operands.clone();
    if !explicit && !files.is_empty() {
        scripts.push(files.remove(0));
    }
    for s in &scripts {
        if s.expands {
            out.push(exec(
                &s.raw,
                "is expanded at run time and could become any option or script",
            ));
        }
        for e in sed::effects(&s.text) {
            let t = s.text.as_str();
            out.push(match e {
                sed::SedEffect::Runs => exec(t, "runs a shell command (sed `e`)"),
                sed::SedEffect::Writes(f) => Risk::Write {
                    flag: "sed w".into(),
                    target: Some(ArgWord::literal(&f)),
                },
                sed::SedEffect::Reads(_) => exec(t, "reads another file (sed `r`)"),
                sed::SedEffect::Unparsed(_) => exec(t, "is a sed script runner cannot follow"),
            });
        }
    }
    if in_place.is_some() {
        for f in &files {
            out.push(modifies("edits in place", f));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<ArgWord> {
        ArgWord::split(s)
    }

    fn kinds(cmd: &str) -> Vec<String> {
        risks(&words(cmd))
            .into_iter()
            .map(|r| match r {
                Risk::Exec { flag, .. } => format!("exec {flag}"),
                Risk::Write { target, .. } => {
                    format!("write {}", target.map(|t| t.text).unwrap_or_default())
                }
                Risk::Modifies { target, .. } => format!("modifies {}", target.text),
                Risk::Tree { target, dest, .. } => format!(
                    "tree {}{}",
                    target.text,
                    dest.map(|d| format!(" -> {}", d.text)).unwrap_or_default()
                ),
                Risk::UnknownWrites { .. } => "unknown".into(),
            })
            .collect()
    }

    #[test]
    fn the_table_covers_each_class_of_risky_argument() {
        let has = |cmd: &str, want: &str| {
            let k = kinds(cmd);
            assert!(k.iter().any(|x| x == want), "{cmd}: {k:?} lacks {want}");
        };
        has("git clone -u evil x", "exec -u");
        has("git clone --upload-pack=evil x", "exec --upload-pack=evil");
        has("git clone -c core.hooksPath=h x", "exec -c");
        has("git clone --template=t x", "exec --template=t");
        has("git clone --config x=y u", "exec --config");
        has("git rebase -x make", "exec -x");
        has("git rebase --exec=make", "exec --exec=make");
        has("git submodule foreach make", "exec submodule foreach");
        has("git bisect run make", "exec bisect run");
        has("git archive -o out.tar HEAD", "write out.tar");
        has("git archive --output=out.tar HEAD", "write out.tar");
        has("git config core.hooksPath h", "exec config");
        has("git config --add a.b c", "exec config");
        has("git -c x=y push", "exec -c");
        has("git --no-pager -C /x push", "exec -C");
        has("git apply fix.diff", "unknown");
        has("make --eval=x", "exec --eval=x");
        has("make SHELL=/tmp/x", "exec SHELL=/tmp/x");
        has("make CC=evil all", "exec CC=evil");
        has("make -C /tmp", "exec -C");
        has("cargo --config x=y build", "exec --config");
        has(
            "cargo build --config=target.x.runner=y",
            "exec --config=target.x.runner=y",
        );
        has("cargo -Zunstable-options build", "exec -Zunstable-options");
        has("cargo build --target-dir .git/x", "write .git/x");
        has("go test -toolexec=x ./...", "exec -toolexec=x");
        has("go env -w GOFLAGS=-toolexec=x", "exec env -w");
        has(
            "npm --node-options=--require=x run build",
            "exec --node-options=--require=x",
        );
        has("npm --prefix /tmp/x run build", "exec --prefix");
        has(
            "npm run x --script-shell=./evil",
            "exec --script-shell=./evil",
        );
        has("npm config set script-shell x", "exec config set");
        has("npm exec -c x", "exec -c");
        has("pytest --basetemp=.git", "tree .git");
        has("pytest --basetemp .", "tree .");
        has("python3 -m pytest --basetemp=/", "tree /");
        has("tar -xf a.tar -C .git/hooks", "modifies .git/hooks");
        has("tar xf a.tar", "unknown");
        has(
            "tar --extract --file=a.tar --directory=.github",
            "modifies .github",
        );
        has("tar -czf out.tgz src", "modifies out.tgz");
        has("sed -i s/a/b/ .envrc", "modifies .envrc");
        has("sed -i.bak -e s/a/b/ .git/config", "modifies .git/config");
        has(
            "cp evil .git/hooks/pre-commit",
            "modifies .git/hooks/pre-commit",
        );
        has("cp -t .git/hooks evil", "modifies .git/hooks");
        has("cp -r hooks/ .git/", "tree hooks/ -> .git/");
        has("cp -l .git/config x", "modifies .git/config");
        has("mv .git/hooks x", "modifies .git/hooks");
        has("ln -s .git/hooks h", "modifies .git/hooks");
        has("ln -s ../.git sub/link", "modifies sub/../.git");
        has("ln .git/config x", "modifies .git/config");
        has(
            "chmod +x .git/hooks/pre-commit",
            "modifies .git/hooks/pre-commit",
        );
        has("chmod -R 777 .", "tree .");
        has("rm -rf .", "tree .");
        has("rm .git/index", "modifies .git/index");
        has("touch .envrc", "modifies .envrc");
        has(
            "install -m 755 x .git/hooks/pre-commit",
            "modifies .git/hooks/pre-commit",
        );
        has("dd if=x of=.git/config", "modifies .git/config");
        has("unzip a.zip", "unknown");
        has("patch -p1", "unknown");
        has("rg --hostname-bin x y", "exec --hostname-bin");
        has("sed 1e f", "exec 1e");
    }

    #[test]
    fn harmless_arguments_have_no_risk() {
        for cmd in [
            "git diff --stat",
            "git config --get user.name",
            "git config user.name",
            "cargo test -- --nocapture",
            "make -j4 test",
            "npm run lint",
            "pytest -x tests",
            "tar -tf a.tar",
            "unzip -l a.zip",
            "sed -n 1,5p f",
        ] {
            assert!(kinds(cmd).is_empty(), "{cmd}: {:?}", kinds(cmd));
        }
    }
}
