//! Argument-level risks of programs an allow rule, bypass mode or a hook lets run.
//!
//! A prefix rule such as `Bash(git diff:*)` matches `git diff --output=.git/hooks/pre-commit`
//! word for word, but that call writes a file. [`risks`] lists what such arguments do, so the
//! policy can check a file-writing flag as an Edit of its target, refuse a code-running flag
//! unless the rule names it, and keep protected paths protected from every program whose job
//! is writing files (`cp`, `mv`, `ln`, `chmod`, `rm`, `tar -x` ...). Defined as data per
//! program. Arguments runner cannot see (`xargs`, `find -exec ... {}`) are assumed to be the
//! worst: see [`unseen_risk`].

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

/// The value of `--name=VALUE` or the next word for `--name VALUE` / `-x VALUE`, or the rest of
/// a `-xVALUE` cluster.
fn value_of(args: &[ArgWord], i: usize, flag_len: usize) -> Option<ArgWord> {
    let t = &args[i].text;
    if let Some((_, v)) = t.split_once('=').filter(|_| t.starts_with("--")) {
        let mut w = args[i].clone();
        w.text = v.to_string();
        w.home_rest = None;
        return Some(w);
    }
    if !t.starts_with("--") && t.len() > flag_len {
        let mut w = args[i].clone();
        w.text = t[flag_len..].to_string();
        w.home_rest = None;
        return Some(w);
    }
    args.get(i + 1).cloned()
}

/// Long option `t` is `name` or an unambiguous abbreviation of it (at least 4 characters),
/// with or without `=VALUE`.
fn long_is(t: &str, name: &str) -> bool {
    let flag = t.split('=').next().unwrap_or(t);
    flag == name || (flag.len() >= 5 && name.starts_with(flag) && flag.starts_with("--"))
}

/// Whether short-option cluster `t` (`-rf`) holds `c`.
fn short_has(t: &str, c: char) -> bool {
    t.len() > 1 && t.starts_with('-') && !t.starts_with("--") && t[1..].contains(c)
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
        "find" => {
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                dynamic_flag(&mut out, a);
                match t {
                    "-exec" | "-execdir" | "-ok" | "-okdir" => {
                        out.push(exec(t, "runs a command per file"))
                    }
                    "-delete" => {
                        out.push(exec(t, "deletes files"));
                        // What it deletes lies under its start points.
                        let starts: Vec<&ArgWord> = args
                            .iter()
                            .skip_while(|a| matches!(a.text.as_str(), "-H" | "-L" | "-P"))
                            .take_while(|a| {
                                !a.text.starts_with('-') && a.text != "(" && a.text != "!"
                            })
                            .collect();
                        let dot = ArgWord::literal(".");
                        let starts = if starts.is_empty() {
                            vec![&dot]
                        } else {
                            starts
                        };
                        // With only `-name` tests and implicit `-and`, what matches them.
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
                    "-fprint" | "-fprint0" | "-fprintf" | "-fls" => out.push(Risk::Write {
                        flag: t.into(),
                        target: args.get(i + 1).cloned(),
                    }),
                    _ => {}
                }
            }
        }
        "sed" => sed_risks(args, &mut out),
        "sort" => {
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                dynamic_flag(&mut out, a);
                if long_is(t, "--output") {
                    out.push(Risk::Write {
                        flag: "--output".into(),
                        target: value_of(args, i, usize::MAX),
                    });
                } else if long_is(t, "--compress-program") {
                    out.push(exec(t, "runs a compression program"));
                } else if t.starts_with('-') && !t.starts_with("--") {
                    // `-o FILE` may end a cluster: `-ro out`, `-rout`.
                    if let Some(pos) = t.find('o') {
                        out.push(Risk::Write {
                            flag: "-o".into(),
                            target: value_of(args, i, pos + 1),
                        });
                    }
                }
            }
        }
        "rg" => {
            for a in args {
                dynamic_flag(&mut out, a);
                if long_is(&a.text, "--pre") || long_is(&a.text, "--hostname-bin") {
                    out.push(exec(&a.text, "runs another program"));
                } else if long_is(&a.text, "--search-zip") || short_has(&a.text, 'z') {
                    out.push(exec(&a.text, "runs decompression programs"));
                }
            }
        }
        "tar" => tar_risks(args, &mut out),
        "go" => {
            for (i, a) in args.iter().enumerate() {
                let t = a.text.trim_start_matches('-');
                if a.text.starts_with('-')
                    && (t == "exec"
                        || t.starts_with("exec=")
                        || t.starts_with("toolexec")
                        || t.starts_with("vettool"))
                {
                    out.push(exec(&a.text, "runs programs through another program"));
                }
                if a.text == "env"
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
        }
        "npm" | "pnpm" | "yarn" | "npx" => {
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                if [
                    "--script-shell",
                    "--node-options",
                    "--prefix",
                    "--userconfig",
                    "--globalconfig",
                    "--call",
                    "--dir",
                    "--cwd",
                    "--global-dir",
                ]
                .iter()
                .any(|f| long_is(t, f))
                    || t.starts_with("--config.")
                    || long_is(t, "--use-yarnrc")
                    || long_is(t, "--rc-filename")
                    || t == "-c"
                    || t == "-C"
                {
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
        "make" | "gmake" => {
            for a in args {
                let t = a.text.as_str();
                if long_is(t, "--eval") || t == "-E" || t.starts_with("-E") {
                    out.push(exec(t, "evaluates make code given on the command line"));
                } else if long_is(t, "--directory")
                    || t == "-C"
                    || (t.starts_with("-C") && !t.starts_with("--"))
                {
                    out.push(exec(t, "runs the makefile of another directory"));
                } else if long_is(t, "--file")
                    || long_is(t, "--makefile")
                    || t == "-f"
                    || (t.starts_with("-f") && !t.starts_with("--"))
                    || long_is(t, "--include-dir")
                    || t == "-I"
                    || (t.starts_with("-I") && !t.starts_with("--"))
                {
                    out.push(exec(t, "runs a makefile named on the command line"));
                } else if !t.starts_with('-')
                    && t.split_once('=').is_some_and(|(n, _)| !n.is_empty())
                {
                    // Any `NAME=value` (make variable names may hold dots: `.SHELLFLAGS`).
                    out.push(exec(t, "overrides a make variable (SHELL, CC and others choose the programs make runs)"));
                } else {
                    dynamic_flag(&mut out, a);
                }
            }
        }
        "cargo" => {
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                if long_is(t, "--config") || t == "-Z" || t.starts_with("-Z") {
                    out.push(exec(
                        t,
                        "sets cargo configuration (runners and wrappers are programs)",
                    ));
                } else if t == "-C" || long_is(t, "--manifest-path") {
                    out.push(exec(t, "builds another package"));
                } else if long_is(t, "--target-dir") {
                    out.push(Risk::Write {
                        flag: "--target-dir".into(),
                        target: value_of(args, i, usize::MAX),
                    });
                }
            }
        }
        "pytest" | "py.test" => pytest_risks(args, &mut out),
        "python" | "python3" => {
            if let Some(k) = args.iter().position(|a| a.text == "-m")
                && args.get(k + 1).is_some_and(|m| m.text == "pytest")
            {
                pytest_risks(&args[k + 2..], &mut out);
            }
        }
        "perl" | "ruby" => {
            // `-i` edits the files after the script in place.
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
        "curl" => {
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                if t == "-o"
                    || long_is(t, "--output")
                    || (t.starts_with("-o") && !t.starts_with("--"))
                {
                    if let Some(v) = value_of(args, i, 2) {
                        out.push(modifies("writes", &v));
                    }
                } else if t == "-O"
                    || long_is(t, "--remote-name")
                    || long_is(t, "--remote-name-all")
                    || long_is(t, "--output-dir")
                    || t == "-J"
                {
                    out.push(Risk::UnknownWrites {
                        what: "writes a file named by the server or the URL",
                    });
                } else if long_is(t, "--config") || t == "-K" {
                    out.push(exec(t, "reads options from a file"));
                }
            }
        }
        "wget" => {
            let mut named = false;
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                if t == "-O"
                    || long_is(t, "--output-document")
                    || t == "-o"
                    || long_is(t, "--output-file")
                    || t == "-a"
                    || long_is(t, "--append-output")
                {
                    named |= t == "-O" || long_is(t, "--output-document");
                    if let Some(v) = value_of(args, i, 2).filter(|v| v.text != "-") {
                        out.push(modifies("writes", &v));
                    }
                } else if t == "-P" || long_is(t, "--directory-prefix") {
                    if let Some(v) = value_of(args, i, 2) {
                        out.push(modifies("writes into", &v));
                    }
                } else if long_is(t, "--execute") || t == "-e" {
                    out.push(exec(t, "runs wgetrc commands"));
                }
            }
            if !named {
                out.push(Risk::UnknownWrites {
                    what: "writes a file named by the URL",
                });
            }
        }
        "tee" => {
            for a in args.iter().filter(|a| !a.text.starts_with('-')) {
                out.push(Risk::Write {
                    flag: "tee".into(),
                    target: Some(a.clone()),
                });
            }
        }
        "uniq" => {
            let pos: Vec<&ArgWord> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
            if let Some(t) = pos.get(1) {
                out.push(Risk::Write {
                    flag: "uniq IN OUT".into(),
                    target: Some((*t).clone()),
                });
            }
        }
        "cp" | "mv" | "install" => copy_risks(prog, args, &mut out),
        "ln" => link_risks(args, &mut out),
        "link" => {
            if let Some(t) = operands(args, &[]).get(1) {
                out.push(modifies("links a file to", t));
            }
        }
        "split" | "csplit" => {
            // The output prefix: split's second operand, csplit's `-f PREFIX`.
            let prefix = if prog == "split" {
                operands(
                    args,
                    &["-a", "-b", "-C", "-l", "-n", "-t", "--additional-suffix"],
                )
                .get(1)
                .cloned()
            } else {
                args.iter()
                    .position(|a| {
                        (a.text.starts_with("-f") && !a.text.starts_with("--"))
                            || long_is(&a.text, "--prefix")
                    })
                    .and_then(|i| {
                        value_of(
                            args,
                            i,
                            if args[i].text.starts_with("--") {
                                usize::MAX
                            } else {
                                2
                            },
                        )
                    })
            };
            if let Some(p) = prefix {
                out.push(modifies("writes files named after", &p));
            }
        }
        "rm" | "rmdir" | "unlink" | "shred" => {
            let recursive = args.iter().any(|a| {
                short_has(&a.text, 'r')
                    || short_has(&a.text, 'R')
                    || long_is(&a.text, "--recursive")
            });
            for a in operands(args, &[]) {
                if recursive || prog == "rmdir" {
                    out.push(Risk::Tree {
                        what: "removes",
                        target: a,
                        dest: None,
                        only: Vec::new(),
                    });
                } else {
                    out.push(modifies("removes", &a));
                }
            }
        }
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
            let recursive = args
                .iter()
                .any(|a| short_has(&a.text, 'R') || long_is(&a.text, "--recursive"));
            let has_ref = args.iter().any(|a| long_is(&a.text, "--reference"));
            // A symbolic mode may look like an option (`chmod -x f`).
            let is_mode = |t: &str| {
                prog == "chmod"
                    && t.len() > 1
                    && t.trim_start_matches(['u', 'g', 'o', 'a'])
                        .starts_with(['-', '+', '='])
                    && t.chars().all(|c| "ugoarwxXst+-=,0123456789".contains(c))
            };
            let mode_word = args
                .iter()
                .position(|a| is_mode(&a.text) && a.text.starts_with('-'));
            let mut ops = operands(args, &["--reference"]);
            if let Some(m) = mode_word {
                ops.insert(0, args[m].clone());
            }
            // The mode, owner or ACL comes first (setfacl takes it as an option value).
            if !has_ref && prog != "setfacl" && !ops.is_empty() {
                ops.remove(0);
            }
            for a in ops {
                if recursive {
                    out.push(Risk::Tree {
                        what: "changes the permissions of",
                        target: a,
                        dest: None,
                        only: Vec::new(),
                    });
                } else {
                    out.push(modifies("changes the permissions of", &a));
                }
            }
        }
        "touch" | "truncate" | "mkdir" | "mkfifo" => {
            for a in operands(
                args,
                &[
                    "-r",
                    "--reference",
                    "-d",
                    "--date",
                    "-t",
                    "-s",
                    "--size",
                    "-m",
                    "--mode",
                ],
            ) {
                out.push(modifies("creates or changes", &a));
            }
        }
        "mknod" => {
            if let Some(a) = operands(args, &["-m", "--mode"]).first() {
                out.push(modifies("creates", a));
            }
        }
        "dd" => {
            for a in args {
                if let Some(f) = a.text.strip_prefix("of=") {
                    let mut w = a.clone();
                    w.text = f.to_string();
                    w.home_rest = None;
                    out.push(modifies("writes", &w));
                }
            }
        }
        "unzip" => {
            let listing = args
                .iter()
                .any(|a| matches!(a.text.as_str(), "-l" | "-t" | "-p" | "-v" | "-Z" | "-z"));
            if !listing {
                out.push(Risk::UnknownWrites {
                    what: "writes the files named inside the archive",
                });
                for (i, a) in args.iter().enumerate() {
                    if a.text == "-d"
                        && let Some(d) = args.get(i + 1)
                    {
                        out.push(modifies("extracts into", d));
                    }
                }
            }
        }
        "patch" if !args.iter().any(|a| long_is(&a.text, "--dry-run")) => {
            out.push(Risk::UnknownWrites {
                what: "writes the files named inside the patch",
            });
        }
        "rsync" => {
            for a in args {
                if long_is(&a.text, "--rsh") || long_is(&a.text, "--rsync-path") || a.text == "-e" {
                    out.push(exec(&a.text, "runs another program"));
                }
            }
            out.push(Risk::UnknownWrites {
                what: "writes the files it copies, which runner does not list",
            });
        }
        "cpio"
            if args
                .iter()
                .any(|a| short_has(&a.text, 'i') || long_is(&a.text, "--extract")) =>
        {
            out.push(Risk::UnknownWrites {
                what: "writes the files named inside the archive",
            });
        }
        _ => {}
    }
    out
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

/// The operands of a command with GNU-style options; options in `with_value` take the next word
/// (or `=VALUE`).
fn operands(args: &[ArgWord], with_value: &[&str]) -> Vec<ArgWord> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut end = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if end || !t.starts_with('-') || t == "-" || (a.dynamic && !t.starts_with('-')) {
            out.push(a.clone());
            continue;
        }
        if t == "--" {
            end = true;
            continue;
        }
        if with_value.contains(&t) {
            i += 1;
        }
    }
    out
}

/// `cp`, `mv`, `install`: the destination (and, for `mv`, the sources) are modified; a
/// directory copied or moved lands as a tree under the destination; hard and symbolic link
/// copies (`cp -l`, `cp -s`) make the source writable through the copy.
fn copy_risks(prog: &str, args: &[ArgWord], out: &mut Vec<Risk>) {
    let mut target_dir: Option<ArgWord> = None;
    let mut ops = Vec::new();
    let mut links = false;
    let mut recursive = prog == "mv";
    let mut make_dirs = false;
    let mut i = 0;
    let mut end = false;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if end || !t.starts_with('-') || t == "-" {
            ops.push(a.clone());
            continue;
        }
        if t == "--" {
            end = true;
        } else if t == "-t" || t == "--target-directory" {
            target_dir = args.get(i).cloned();
            i += 1;
        } else if let Some(v) = t.strip_prefix("--target-directory=") {
            let mut w = a.clone();
            w.text = v.to_string();
            target_dir = Some(w);
        } else if matches!(
            t,
            "-S" | "--suffix" | "-m" | "--mode" | "-o" | "--owner" | "-g" | "--group"
        ) {
            i += 1;
        } else if long_is(t, "--strip-program") {
            out.push(exec(t, "runs a strip program"));
        } else if t.starts_with("--") {
            links |= long_is(t, "--link") || long_is(t, "--symbolic-link");
            recursive |= long_is(t, "--recursive") || long_is(t, "--archive");
        } else {
            if t.len() > 2 && t.starts_with("-t") {
                let mut w = a.clone();
                w.text = t[2..].to_string();
                target_dir = Some(w);
                continue;
            }
            links |= short_has(t, 'l') || (prog == "cp" && short_has(t, 's'));
            recursive |= short_has(t, 'r') || short_has(t, 'R') || short_has(t, 'a');
            make_dirs |= prog == "install" && short_has(t, 'd');
        }
    }
    if make_dirs {
        for o in &ops {
            out.push(modifies("creates", o));
        }
        return;
    }
    let (sources, dest) = match target_dir {
        Some(d) => (ops, d),
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
fn link_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    let mut target_dir: Option<ArgWord> = None;
    let mut ops = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let t = a.text.as_str();
        if !t.starts_with('-') || t == "-" {
            ops.push(a.clone());
        } else if t == "-t" || t == "--target-directory" {
            target_dir = args.get(i).cloned();
            i += 1;
        } else if let Some(v) = t.strip_prefix("--target-directory=") {
            let mut w = a.clone();
            w.text = v.to_string();
            target_dir = Some(w);
        } else if t == "-S" || t == "--suffix" {
            i += 1;
        }
    }
    match (&target_dir, ops.as_slice()) {
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

/// git: configuration, hooks, other repositories and programs its subcommands can run, files
/// they write.
fn git_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    let g = git::globals(args);
    // Global options.
    let end = g.sub.unwrap_or(args.len());
    for a in &args[..end] {
        let t = a.text.as_str();
        match t {
            "-c" | "--config-env" => out.push(exec(
                t,
                "sets git configuration (pagers, hooks, aliases run programs)",
            )),
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => {
                out.push(exec(t, "points git at another repository"))
            }
            "-p" | "--paginate" => out.push(exec(t, "runs a pager program")),
            _ if t.starts_with("--exec-path") => {
                out.push(exec(t, "runs git programs from another directory"))
            }
            _ if t.starts_with("--config-env=")
                || t.starts_with("--git-dir=")
                || t.starts_with("--work-tree=")
                || (t.starts_with("-c") && t.len() > 2)
                || (t.starts_with("-C") && t.len() > 2) =>
            {
                out.push(exec(t, "changes git's configuration or repository"))
            }
            _ if a.dynamic => out.push(exec(
                &a.raw,
                "is expanded at run time and could become any option",
            )),
            _ => {}
        }
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
    for (i, a) in rest.iter().enumerate() {
        let t = a.text.as_str();
        dynamic_flag(out, a);
        if long_is(t, "--output") || (sub == "archive" && (t == "-o" || t.starts_with("-o"))) {
            out.push(Risk::Write {
                flag: "--output".into(),
                target: if t.starts_with("--") {
                    value_of(rest, i, usize::MAX)
                } else {
                    value_of(rest, i, 2)
                },
            });
        } else if long_is(t, "--ext-diff")
            || long_is(t, "--upload-pack")
            || long_is(t, "--receive-pack")
            || t == "--exec"
            || t.starts_with("--exec=")
            || long_is(t, "--open-files-in-pager")
            || (t.starts_with("-O") && t != "-O0" && sub == "grep")
        {
            out.push(exec(t, "runs another program"));
        }
        match sub {
            "clone" | "init"
                if t == "-u"
                    || long_is(t, "--template")
                    || long_is(t, "--config")
                    || t.starts_with("-c") =>
            {
                out.push(exec(
                    t,
                    "makes the new repository run programs (upload-pack, hooks, configuration)",
                ));
            }
            "rebase" if t == "-x" || t.starts_with("-x") || long_is(t, "--exec") => {
                out.push(exec(t, "runs a command after each commit"))
            }
            "difftool" | "mergetool"
                if t == "-x" || long_is(t, "--extcmd") || long_is(t, "--tool") || t == "-t" =>
            {
                out.push(exec(t, "runs a diff or merge program"))
            }
            "format-patch" if t == "-o" || long_is(t, "--output-directory") => {
                out.push(Risk::Write {
                    flag: t.into(),
                    target: value_of(rest, i, usize::MAX),
                })
            }
            _ => {}
        }
    }
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
        "clone" => {
            let ops: Vec<&ArgWord> = rest.iter().filter(|a| !a.text.starts_with('-')).collect();
            if let [_, dir] = ops.as_slice() {
                out.push(modifies("clones into", dir));
            }
        }
        "init" => {
            for (i, a) in rest.iter().enumerate() {
                if long_is(&a.text, "--separate-git-dir") {
                    if let Some(v) = value_of(rest, i, usize::MAX) {
                        out.push(modifies("creates a repository in", &v));
                    }
                } else if !a.text.starts_with('-') {
                    out.push(modifies("creates a repository in", a));
                }
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

/// `pytest --basetemp` removes the directory it is given; its report files are writes.
fn pytest_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if long_is(t, "--basetemp") {
            if let Some(v) = value_of(args, i, usize::MAX) {
                // Removing a directory is at least an edit of it.
                out.push(Risk::Write {
                    flag: "--basetemp".into(),
                    target: Some(v.clone()),
                });
                out.push(Risk::Tree {
                    what: "removes and recreates",
                    target: v,
                    dest: None,
                    only: Vec::new(),
                });
            }
        } else if long_is(t, "--junitxml")
            || long_is(t, "--junit-xml")
            || long_is(t, "--log-file")
            || long_is(t, "--resultlog")
        {
            out.push(Risk::Write {
                flag: t.split('=').next().unwrap_or(t).to_string(),
                target: value_of(args, i, usize::MAX),
            });
        }
    }
}

/// tar: programs it can run, where extraction writes (`-C DIR` or the current directory, with
/// member names runner cannot see), the archive a creation writes.
fn tar_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    let mut extract = false;
    let mut create = false;
    let mut file: Option<ArgWord> = None;
    let mut dir: Option<ArgWord> = None;
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        dynamic_flag(out, a);
        if [
            "--checkpoint-action",
            "--to-command",
            "--use-compress-program",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
        ]
        .iter()
        .any(|f| long_is(t, f))
            || t == "-I"
            || t == "-F"
        {
            out.push(exec(t, "runs another program"));
        }
        let bundled = i == 0 && !t.starts_with('-');
        let cluster = if bundled {
            Some(t)
        } else if t.starts_with('-') && !t.starts_with("--") {
            Some(&t[1..])
        } else {
            None
        };
        if let Some(c) = cluster {
            extract |= c.contains('x');
            create |= c.contains('c') || c.contains('r') || c.contains('u') || c.contains('A');
            if let Some(pos) = c.find('f') {
                file = if pos + 1 < c.len() && !bundled {
                    let mut w = a.clone();
                    w.text = c[pos + 1..].to_string();
                    Some(w)
                } else {
                    args.get(i + 1).cloned()
                };
            }
            if !bundled && c.starts_with('C') {
                dir = if c.len() > 1 {
                    let mut w = a.clone();
                    w.text = c[1..].to_string();
                    Some(w)
                } else {
                    args.get(i + 1).cloned()
                };
            }
        } else {
            extract |= long_is(t, "--extract") || t == "--get";
            create |= long_is(t, "--create")
                || long_is(t, "--append")
                || long_is(t, "--update")
                || long_is(t, "--delete")
                || long_is(t, "--concatenate");
            if long_is(t, "--file") {
                file = value_of(args, i, usize::MAX);
            }
            if long_is(t, "--directory") {
                dir = value_of(args, i, usize::MAX);
            }
        }
    }
    if extract {
        out.push(Risk::UnknownWrites {
            what: "extracts files named inside the archive",
        });
        out.push(modifies(
            "extracts into",
            &dir.unwrap_or_else(|| ArgWord::literal(".")),
        ));
    } else if create && let Some(f) = file.filter(|f| f.text != "-") {
        out.push(modifies("writes the archive", &f));
    }
}

/// `sed -i` (any spelling) and script commands that run or write (`e`, `w`, `W`, `s///e`,
/// `s///w`; `r`/`R` read arbitrary files); the files `-i` edits are modified.
fn sed_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    let mut scripts: Vec<&str> = Vec::new();
    let mut explicit_script = false;
    let mut in_place = false;
    let mut positional: Vec<&ArgWord> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if a.expands {
            out.push(exec(
                &a.raw,
                "is expanded at run time and could become any option or script",
            ));
        }
        if t.starts_with("--") {
            if long_is(t, "--in-place") {
                in_place = true;
                out.push(exec(t, "edits files in place"));
            } else if long_is(t, "--expression") {
                explicit_script = true;
                if let Some((_, v)) = t.split_once('=') {
                    scripts.push(v);
                } else if let Some(n) = args.get(i + 1) {
                    scripts.push(&n.text);
                    i += 1;
                }
            } else if long_is(t, "--file") {
                explicit_script = true;
                out.push(exec(t, "reads its script from a file runner cannot check"));
            }
        } else if t.len() > 1 && t.starts_with('-') {
            for (k, c) in t[1..].char_indices() {
                match c {
                    'i' => {
                        in_place = true;
                        out.push(exec(t, "edits files in place"));
                        break;
                    }
                    'e' | 'f' => {
                        explicit_script = true;
                        let rest = &t[1 + k + 1..];
                        let script = if rest.is_empty() {
                            i += 1;
                            args.get(i).map(|n| n.text.as_str()).unwrap_or_default()
                        } else {
                            rest
                        };
                        if c == 'e' {
                            scripts.push(script);
                        } else {
                            out.push(exec(t, "reads its script from a file runner cannot check"));
                        }
                        break;
                    }
                    'l' => {
                        if t[1 + k + 1..].is_empty() {
                            i += 1;
                        }
                        break;
                    }
                    _ => {}
                }
            }
        } else {
            positional.push(a);
        }
        i += 1;
    }
    if !explicit_script && !positional.is_empty() {
        let first = positional.remove(0);
        scripts.push(&first.text);
    }
    for s in scripts {
        for e in sed::effects(s) {
            out.push(match e {
                sed::SedEffect::Runs => exec(s, "runs a shell command (sed `e`)"),
                sed::SedEffect::Writes(f) => Risk::Write {
                    flag: "sed w".into(),
                    target: Some(ArgWord::literal(&f)),
                },
                sed::SedEffect::Reads(_) => exec(s, "reads another file (sed `r`)"),
                sed::SedEffect::Unparsed(_) => exec(s, "is a sed script runner cannot follow"),
            });
        }
    }
    if in_place {
        for f in positional {
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
