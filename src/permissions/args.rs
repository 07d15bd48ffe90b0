//! Argument-level risks of programs an allow rule lets run.
//!
//! A prefix rule such as `Bash(git diff:*)` matches `git diff --output=.git/hooks/pre-commit`
//! word for word, but that call writes a file. [`risks`] lists what such arguments do, so the
//! policy can check a file-writing flag as an Edit of its target and refuse a code-running flag
//! unless the rule names it. Defined as data per program.

use super::bash::ArgWord;

/// What a risky argument does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Risk {
    /// Runs other programs or deletes files (`find -exec`, `git -c`, `rg --pre`, `sed -i`...).
    /// Allowed only by a rule whose text names `flag`, a bare `Bash` rule, or bypass mode.
    Exec {
        /// The flag as written, for the reason and for matching against the rule text.
        flag: String,
        /// What it does.
        what: &'static str,
    },
    /// Writes the file `target` (checked like a redirection: as an Edit of that path).
    Write {
        /// The flag as written.
        flag: String,
        /// The target word; `None` when it is missing.
        target: Option<ArgWord>,
    },
}

fn exec(flag: &str, what: &'static str) -> Risk {
    Risk::Exec {
        flag: flag.to_string(),
        what,
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

/// The risky arguments of `argv` (after wrappers). Empty for programs not listed here.
pub fn risks(argv: &[ArgWord]) -> Vec<Risk> {
    let Some(name) = argv.first() else {
        return vec![];
    };
    let prog = name.text.rsplit('/').next().unwrap_or_default();
    let args = &argv[1..];
    let mut out = Vec::new();
    // A dynamic word could turn into any flag.
    let dynamic_flag = |out: &mut Vec<Risk>, w: &ArgWord| {
        if w.expands {
            out.push(exec(
                &w.raw,
                "is expanded at run time and could become any option",
            ));
        }
    };
    match prog {
        "git" => {
            let mut sub_seen = false;
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                if !sub_seen {
                    if !t.starts_with('-') {
                        sub_seen = true;
                        continue;
                    }
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
                            || t.starts_with("--work-tree=") =>
                        {
                            out.push(exec(t, "changes git's configuration or repository"))
                        }
                        _ => {}
                    }
                    continue;
                }
                dynamic_flag(&mut out, a);
                if long_is(t, "--output") {
                    out.push(Risk::Write {
                        flag: "--output".into(),
                        target: value_of(args, i, usize::MAX),
                    });
                } else if long_is(t, "--ext-diff")
                    || long_is(t, "--upload-pack")
                    || long_is(t, "--receive-pack")
                    || t == "--exec"
                    || t.starts_with("--exec=")
                    || long_is(t, "--open-files-in-pager")
                    || (t.starts_with("-O") && t != "-O0")
                {
                    out.push(exec(t, "runs another program"));
                }
            }
        }
        "find" => {
            for (i, a) in args.iter().enumerate() {
                let t = a.text.as_str();
                dynamic_flag(&mut out, a);
                match t {
                    "-exec" | "-execdir" | "-ok" | "-okdir" => {
                        out.push(exec(t, "runs a command per file"))
                    }
                    "-delete" => out.push(exec(t, "deletes files")),
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
                if long_is(&a.text, "--pre") {
                    out.push(exec(&a.text, "runs a preprocessor program on every file"));
                }
            }
        }
        "tar" => {
            for a in args {
                let t = a.text.as_str();
                dynamic_flag(&mut out, a);
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
            }
        }
        "go" => {
            for a in args {
                let t = a.text.as_str();
                if t == "-exec"
                    || t.starts_with("-exec=")
                    || t.starts_with("-toolexec")
                    || t.starts_with("--exec")
                    || t.starts_with("--toolexec")
                {
                    out.push(exec(t, "runs test binaries through another program"));
                }
            }
        }
        "npm" | "pnpm" | "yarn" | "npx" => {
            for a in args {
                if long_is(&a.text, "--script-shell") {
                    out.push(exec(&a.text, "runs scripts with another shell"));
                }
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
        _ => {}
    }
    out
}

/// `sed -i` (any spelling) and script commands that run or write (`e`, `w`, `W`, `s///e`,
/// `s///w`; `r`/`R` read arbitrary files).
fn sed_risks(args: &[ArgWord], out: &mut Vec<Risk>) {
    let mut scripts: Vec<&str> = Vec::new();
    let mut explicit_script = false;
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
                    _ => {}
                }
            }
        } else {
            positional.push(a);
        }
        i += 1;
    }
    if !explicit_script && let Some(first) = positional.first() {
        scripts.push(&first.text);
    }
    for s in scripts {
        if let Some(what) = sed_script_risk(s) {
            out.push(exec(s, what));
        }
    }
}

/// Whether a sed script uses a command that runs, writes or reads other files. Conservative:
/// anything that looks like one counts.
fn sed_script_risk(script: &str) -> Option<&'static str> {
    for part in script.split([';', '\n', '{', '}']) {
        let body = part.trim_start_matches(|c: char| {
            c.is_ascii_digit() || c.is_whitespace() || matches!(c, '$' | ',' | '!' | '~' | '+')
        });
        // Skip a /regex/ address.
        let body = match body.strip_prefix('/') {
            Some(rest) => match rest.find('/') {
                Some(end) => rest[end + 1..].trim_start_matches([' ', '!']),
                None => rest,
            },
            None => body,
        };
        let mut chars = body.chars();
        match chars.next() {
            Some('e') => return Some("runs a shell command (sed `e`)"),
            Some('w' | 'W') => return Some("writes a file (sed `w`)"),
            Some('r' | 'R') => return Some("reads another file (sed `r`)"),
            Some('s') => {
                let Some(delim) = chars.next() else { continue };
                let rest: String = chars.collect();
                let mut fields = 0;
                let mut escaped = false;
                let mut flags = String::new();
                for c in rest.chars() {
                    if fields >= 2 {
                        flags.push(c);
                    } else if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == delim {
                        fields += 1;
                    }
                }
                if flags.contains('e') {
                    return Some("runs the replacement as a command (sed `s///e`)");
                }
                if flags.contains('w') {
                    return Some("writes a file (sed `s///w`)");
                }
            }
            _ => {}
        }
    }
    None
}
