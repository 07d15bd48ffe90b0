//! The read-only command set: commands that run without a rule in every mode.
//!
//! Defined as data: a program name and the arguments that make it write or run other code.
//! [`check`] says why a command is *not* read-only, so the denial reason can name the flag.

use std::path::Path;

use super::bash::ArgWord;
use crate::roots::SessionRoots;

/// How a read-only program's arguments are checked.
struct Entry {
    /// Program name.
    name: &'static str,
    /// Arguments (exact, or `prefix=` forms) that make it write files or run code.
    forbidden: &'static [&'static str],
    /// Short-option letters that are forbidden anywhere in a `-xyz` cluster.
    forbidden_short: &'static [char],
    /// Whether every argument must be static (a glob or `$VAR` could become a flag).
    static_args: bool,
}

const fn e(
    name: &'static str,
    forbidden: &'static [&'static str],
    forbidden_short: &'static [char],
    static_args: bool,
) -> Entry {
    Entry {
        name,
        forbidden,
        forbidden_short,
        static_args,
    }
}

/// Simple read-only programs.
const PROGRAMS: &[Entry] = &[
    e("ls", &[], &[], false),
    e("cat", &[], &[], false),
    e("echo", &[], &[], false),
    e("printf", &["-v"], &['v'], false),
    e("pwd", &[], &[], false),
    e("head", &[], &[], false),
    e("tail", &[], &[], false),
    e("grep", &[], &[], false),
    e("egrep", &[], &[], false),
    e("fgrep", &[], &[], false),
    e("rg", &["--pre", "--pre-glob", "--search-zip"], &['z'], true),
    e(
        "find",
        &[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ],
        &[],
        true,
    ),
    e("wc", &["--files0-from"], &[], false),
    e("which", &[], &[], false),
    e("diff", &[], &[], false),
    e("stat", &[], &[], false),
    e("du", &["--files0-from", "-X", "--exclude-from"], &[], false),
    e("file", &["-C", "--compile"], &['C'], true),
    e("tree", &["-o", "-R"], &['o', 'R'], true),
    e(
        "sort",
        &["-o", "--output", "--compress-program", "--files0-from"],
        &['o'],
        true,
    ),
    e("uniq", &[], &[], true),
    e("cut", &[], &[], false),
    e("tr", &[], &[], false),
    e("true", &[], &[], false),
    e("false", &[], &[], false),
    e("test", &["-v", "-R"], &[], false),
    e("[", &["-v", "-R"], &[], false),
    e("[[", &[], &[], false),
    e("basename", &[], &[], false),
    e("dirname", &[], &[], false),
    e("realpath", &[], &[], false),
    // Only waits: no files, no other programs (durations and --help/--version are its only
    // arguments). A long sleep is bounded by the Bash tool's timeout like any other command.
    e("sleep", &[], &[], false),
];

/// Read-only git subcommands.
const GIT_SUBCOMMANDS: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "branch",
    "rev-parse",
    "ls-files",
    "grep",
    "blame",
];

/// Git options that write files or run programs (long options may be abbreviated, so these
/// are matched by prefix as git's option parser would).
const GIT_FORBIDDEN_LONG: &[&str] = &[
    "--output",
    "--ext-diff",
    "--open-files-in-pager",
    "--exec-path",
    "--upload-pack",
    "--exec",
    "--paginate",
    "--no-index",
];

/// Global git options allowed before the subcommand.
const GIT_GLOBAL_OK: &[&str] = &["--no-pager", "-P", "--no-optional-locks"];

/// Whether `argv` (after wrappers) is read-only. `Err` says why not.
pub fn check(argv: &[ArgWord], cwd: &Path, roots: &SessionRoots) -> Result<(), String> {
    let Some(name) = argv.first() else {
        return Err("it has no command".into());
    };
    let args = &argv[1..];
    match name.text.as_str() {
        "cd" => check_cd(args, cwd, roots),
        "git" => check_git(args),
        other => {
            let Some(entry) = PROGRAMS.iter().find(|e| e.name == other) else {
                return Err(format!("`{other}` is not in the read-only command set"));
            };
            check_entry(entry, args)
        }
    }
}

fn check_entry(entry: &Entry, args: &[ArgWord]) -> Result<(), String> {
    let mut positional = 0;
    for a in args {
        if a.dynamic && entry.static_args {
            return Err(format!(
                "`{}` arguments must be static for the read-only set, and `{}` is expanded at run time",
                entry.name, a.raw
            ));
        }
        let t = a.text.as_str();
        if !t.starts_with('-') {
            positional += 1;
        }
        let flag = t.split('=').next().unwrap_or(t);
        if entry.forbidden.contains(&flag)
            || entry.forbidden.iter().any(|f| {
                f.starts_with("--") && f.len() > 2 && flag.len() > 3 && f.starts_with(flag)
            })
        {
            return Err(format!(
                "`{} {}` can write files or run commands",
                entry.name, t
            ));
        }
        if t.len() > 1
            && t.starts_with('-')
            && !t.starts_with("--")
            && entry.name != "find"
            && t[1..].chars().any(|c| entry.forbidden_short.contains(&c))
        {
            return Err(format!(
                "`{} {}` can write files or run commands",
                entry.name, t
            ));
        }
    }
    // `uniq IN OUT` writes OUT.
    if entry.name == "uniq" && positional > 1 {
        return Err("`uniq` with two file arguments writes the second".into());
    }
    Ok(())
}

fn check_git(args: &[ArgWord]) -> Result<(), String> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.dynamic {
            return Err(format!(
                "git arguments must be static for the read-only set, and `{}` is expanded at run time",
                a.raw
            ));
        }
        if !a.text.starts_with('-') {
            break;
        }
        if !GIT_GLOBAL_OK.contains(&a.text.as_str()) {
            return Err(format!(
                "the git option `{}` before the subcommand is not read-only",
                a.text
            ));
        }
        i += 1;
    }
    let Some(sub) = args.get(i) else {
        return Err("`git` without a subcommand is not read-only".into());
    };
    if !GIT_SUBCOMMANDS.contains(&sub.text.as_str()) {
        return Err(format!("`git {}` is not a read-only git command", sub.text));
    }
    let rest = &args[i + 1..];
    let mut positional = false;
    let mut listing = false;
    for a in rest {
        if a.dynamic {
            return Err(format!(
                "git arguments must be static for the read-only set, and `{}` is expanded at run time",
                a.raw
            ));
        }
        let t = a.text.as_str();
        let flag = t.split('=').next().unwrap_or(t);
        if flag.starts_with("--")
            && flag.len() > 3
            && GIT_FORBIDDEN_LONG.iter().any(|f| f.starts_with(flag))
        {
            return Err(format!(
                "`git {} {t}` can write files or run commands",
                sub.text
            ));
        }
        if sub.text == "grep" && t.starts_with("-O") {
            return Err(format!("`git grep {t}` runs a pager command"));
        }
        if sub.text == "branch" {
            match t {
                "--list" | "-l" => listing = true,
                "-a" | "--all" | "-r" | "--remotes" | "-v" | "-vv" | "--verbose"
                | "--show-current" | "--no-color" | "--color" | "--no-column" => {}
                _ if t.starts_with("--sort=") || t.starts_with("--format=") => {}
                _ if t.starts_with('-') => {
                    return Err(format!("`git branch {t}` is not read-only"));
                }
                _ => positional = true,
            }
        }
    }
    if sub.text == "branch" && positional && !listing {
        return Err("`git branch NAME` creates a branch".into());
    }
    Ok(())
}

fn check_cd(args: &[ArgWord], cwd: &Path, roots: &SessionRoots) -> Result<(), String> {
    match args {
        [dir] if !dir.dynamic && dir.text != "-" => {
            let target = super::paths::resolve(cwd, Path::new(&dir.text));
            if roots.is_inside_workspace(&target) {
                Ok(())
            } else {
                Err(format!(
                    "`cd {}` leaves the workspace ({})",
                    dir.raw,
                    target.display()
                ))
            }
        }
        _ => Err("`cd` is read-only only with one static directory inside the workspace".into()),
    }
}

/// Programs in the read-only set whose operands are files they read.
const FILE_READERS: &[&str] = &[
    "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "rg", "find", "wc", "diff", "stat",
    "du", "file", "tree", "sort", "uniq", "cut",
];

/// The words of `argv` that name files the command reads, for path confinement; `None` when
/// the program is not a known file reader. Operands count, and so do the values of
/// `--name=VALUE` options that look like paths and of `-f FILE`-style pattern files. The first
/// operand of `grep`/`rg` is the pattern (unless `-e`/`-f` gives one); `find`'s operands end
/// at its first expression word.
pub fn read_paths(argv: &[ArgWord]) -> Option<Vec<ArgWord>> {
    let name = argv.first()?;
    let prog = name.text.as_str();
    if name.dynamic || !FILE_READERS.contains(&prog) {
        return None;
    }
    let grep_like = matches!(prog, "grep" | "egrep" | "fgrep" | "rg");
    let mut out = Vec::new();
    let mut operands = Vec::new();
    let mut pattern_given = false;
    let mut end_of_options = false;
    let mut find_expr = false;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let t = a.text.as_str();
        i += 1;
        if prog == "find" {
            if find_expr || (!a.dynamic && (t.starts_with('-') || t == "(" || t == "!")) {
                find_expr = true;
                continue;
            }
            operands.push(a.clone());
            continue;
        }
        if end_of_options || a.expands || !t.starts_with('-') || t == "-" {
            if t != "-" || a.dynamic {
                operands.push(a.clone());
            }
            continue;
        }
        if t == "--" {
            end_of_options = true;
            continue;
        }
        if let Some((flag, v)) = t.split_once('=').filter(|_| t.starts_with("--")) {
            if matches!(flag, "--regexp" | "--file") {
                pattern_given = true;
            }
            if v.contains('/') || v.starts_with('.') || v.starts_with('~') || flag == "--file" {
                let mut w = a.clone();
                w.text = v.to_string();
                out.push(w);
            }
            continue;
        }
        if grep_like {
            match t {
                "-e" | "--regexp" => {
                    pattern_given = true;
                    i += 1;
                }
                "-f" | "--file" => {
                    pattern_given = true;
                    if let Some(n) = argv.get(i) {
                        out.push(n.clone());
                    }
                    i += 1;
                }
                _ if t.starts_with("-f") || t.starts_with("-e") => {
                    pattern_given = true;
                    if let Some(file) = t.strip_prefix("-f") {
                        let mut w = a.clone();
                        w.text = file.to_string();
                        out.push(w);
                    }
                }
                // Options that take a separate value that is not a file.
                "-m" | "-A" | "-B" | "-C" | "-t" | "-T" | "-g" | "--glob" | "--type" | "-j"
                | "--max-count" | "--context" | "--include" | "--exclude" => i += 1,
                _ => {}
            }
        }
    }
    if grep_like && !pattern_given && !operands.is_empty() {
        operands.remove(0);
    }
    out.extend(operands);
    Some(out)
}
