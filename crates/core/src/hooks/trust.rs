//! Hooks and verify checks whose command runs a file inside the workdir: code the model, or the
//! pull request under review, can change. Such a command is refused when the task loads unless
//! the spec marks it `trusted: true`; a trusted one still gets no secret, and its script is a
//! protected path the agent cannot write.
//!
//! "Runs a file inside the workdir": the program is named by a path that lies there
//! (`./check.sh`, `$CLAUDE_PROJECT_DIR/.claude/hooks/guard.py`), or an interpreter (`bash`,
//! `python3 -m`, `node`, ...) or `source` is given one. Build tools that read their
//! instructions from the repository (`cargo test`, `npm test`, `make`) run its code by design
//! and are not counted.

use std::path::{Path, PathBuf};

use super::{isolation, launchers};
use crate::permissions::bash;
use crate::permissions::paths;

/// Programs that run the script file given as their first operand.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python2", "python3", "pypy", "pypy3",
    "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "tsx", "ts-node", "lua", "Rscript",
    "pwsh", "awk", "gawk", "tclsh", "elixir", "groovy", "source", ".", "uv", "uvx", "poetry",
    "pipenv", "npx", "bunx", "pnpx", "java", "jshell", "php-cgi", "julia", "dotnet",
];

/// Interpreters whose operand is a package name unless written as a path.
const PACKAGE_RUNNERS: &[&str] = &["npx", "bunx", "pnpx", "uvx"];

/// Script file extensions: a word with one is taken for a script even without a `/`.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "py", "js", "mjs", "cjs", "ts", "mts", "rb", "pl", "php", "lua", "ps1",
    "r", "tcl",
];

/// The first file inside `workdir` that a hook or check command runs as code, if any. `args`:
/// the exec form's arguments (no shell); otherwise `command` is a `bash -c` script. The
/// command runs in `workdir` (a verify check), with `CLAUDE_PROJECT_DIR` set to it.
pub(crate) fn workdir_script(
    command: &str,
    args: Option<&[String]>,
    workdir: &Path,
) -> Option<PathBuf> {
    find_script(command, args, workdir, true)
}

/// [`workdir_script`] of a command that runs outside the workdir (a hook, an MCP server): a
/// module (`python -m x`) or package (`npx @scope/x`) is then not looked for in the workdir
/// unless it is there (the launcher table judges the rest).
pub(crate) fn script_outside(
    command: &str,
    args: Option<&[String]>,
    workdir: &Path,
) -> Option<PathBuf> {
    find_script(command, args, workdir, false)
}

fn find_script(
    command: &str,
    args: Option<&[String]>,
    workdir: &Path,
    in_workdir: bool,
) -> Option<PathBuf> {
    let inside = |word: &str, cwd: &Path| -> Option<PathBuf> {
        let p = paths::resolve(cwd, Path::new(word));
        (p.starts_with(workdir)
            || paths::fold(&p.to_string_lossy())
                .starts_with(&paths::fold(&workdir.to_string_lossy())))
        .then_some(p)
    };
    let expanded = expand_project_dir(command, workdir);
    if let Some(args) = args {
        let words: Vec<String> = std::iter::once(expanded.clone())
            .chain(args.iter().map(|a| expand_project_dir(a, workdir)))
            .collect();
        return script_in(&words, workdir, &inside, in_workdir);
    }
    match bash::analyse(&expanded, workdir) {
        Ok(a) => {
            for c in &a.commands {
                let argv = c.argv();
                if argv.is_empty() {
                    continue;
                }
                if argv.iter().take(2).any(|w| w.expands && !w.raw.is_empty()) {
                    // `"$SCRIPT"`, `bash "$F"`: which file is not known; a file the hook's
                    // author means to trust can be marked `trusted: true`.
                    let first = &argv[0];
                    if first.dynamic || is_interpreter(&first.text) {
                        return Some(workdir.join(&argv[argv.len().min(2) - 1].raw));
                    }
                }
                let words: Vec<String> = argv.iter().map(|w| w.text.clone()).collect();
                if let Some(p) = script_in(&words, &c.cwd, &inside, in_workdir) {
                    return Some(p);
                }
            }
            // An interpreter reading its program from its input (`bash < ci/x.sh`,
            // `cat ci/x.sh | sh`): any workdir file the command reads may be that program.
            let reads_input = a.commands.iter().any(|c| {
                c.argv().first().is_some_and(|w| is_interpreter(&w.text))
                    && c.argv()[1..].iter().all(|w| {
                        w.text.starts_with('-') && !matches!(w.text.as_str(), "-c" | "-e" | "-m")
                    })
            });
            if !reads_input {
                return None;
            }
            let redirected = a.reads.iter().filter_map(|r| inside(&r.word.text, &r.cwd));
            let operands = a.commands.iter().flat_map(|c| {
                c.argv()
                    .iter()
                    .skip(1)
                    .filter(|w| !w.text.starts_with('-'))
                    .filter_map(|w| inside(&w.text, &c.cwd).filter(|p| p.is_file()))
                    .collect::<Vec<_>>()
            });
            redirected.chain(operands).next()
        }
        // `source x`, `. x` and what the walk refuses: look at every word.
        Err(_) => expanded
            .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')'))
            .map(|t| t.trim_matches(|c| c == '"' || c == '\''))
            .filter(|t| !t.is_empty() && looks_like_script(t))
            .find_map(|t| inside(t, workdir)),
    }
}

/// How a hook or an MCP server starts, for [`workdir_code`].
pub(crate) struct Start<'a> {
    /// The command (a `bash -c` script, or the program when `args` is given).
    pub command: &'a str,
    /// The exec form's arguments.
    pub args: Option<&'a [String]>,
    /// The working directory the spec names (`None`: runner's empty directory outside the
    /// workdir).
    pub cwd: Option<&'a Path>,
    /// Variables the spec sets for it.
    pub env: &'a [(String, String)],
    /// The `PATH` it looks programs up in.
    pub path: Option<&'a str>,
}

/// Why a hook or an MCP server runs code from the workdir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WorkdirCode {
    /// It runs a file inside the workdir, or runs inside it: the repository's own code, run
    /// only when the spec trusts it, and never with a secret.
    File(String),
    /// It runs a launcher that finds its code for itself (`python -c`, `npx`) and is not
    /// pinned to code outside the workdir: no secret may reach it.
    Unpinned(String),
}

impl WorkdirCode {
    /// The reason, for the refusal.
    pub(crate) fn reason(&self) -> &str {
        match self {
            WorkdirCode::File(r) | WorkdirCode::Unpinned(r) => r,
        }
    }
}

/// Shell builtins and keywords: run by bash itself, never looked up on `PATH`.
const BUILTINS: &[&str] = &[
    "echo", "printf", "test", "[", "[[", "true", "false", "exit", "return", "cd", "read", "set",
    "unset", "export", "local", "declare", "shift", "if", "then", "else", "fi", "for", "while",
    "do", "done", "case", "esac", "break", "continue", "wait", "trap", ":", "eval", "exec",
    "command", "type", "source", ".", "pwd", "let", "readonly", "getopts", "kill", "builtin",
];

/// Whether the start of a hook or an MCP server runs code from `workdir`, and why: it runs
/// there (`cwd`), sets a code variable into it (`NODE_OPTIONS`, `PYTHONPATH`, …), runs a
/// file there ([`workdir_script`]), finds a program on a `PATH` entry that is relative or
/// inside it, or runs an unpinned launcher (see [`super::launchers`]).
pub(crate) fn workdir_code(s: &Start<'_>, workdir: &Path) -> Option<WorkdirCode> {
    let cwd_inside = s.cwd.is_some_and(|c| isolation::inside(c, workdir));
    if let Some(c) = s.cwd.filter(|_| cwd_inside) {
        return Some(WorkdirCode::File(format!(
            "runs inside the workdir (`cwd: {}`)",
            c.display()
        )));
    }
    if let Some((k, v)) = s
        .env
        .iter()
        .find(|(k, v)| isolation::points_into_workdir(k, v, workdir))
    {
        return Some(WorkdirCode::File(format!(
            "sets `{k}={v}`, which loads code from the workdir"
        )));
    }
    if let Some(script) = script_outside(s.command, s.args, workdir) {
        return Some(WorkdirCode::File(format!(
            "runs {}, a file inside the workdir",
            script.display()
        )));
    }
    let expanded = expand_project_dir(s.command, workdir);
    let script = match s.args {
        Some(args) => std::iter::once(expanded.as_str())
            .chain(args.iter().map(String::as_str))
            .map(|w| shell_quote(&expand_project_dir(w, workdir)))
            .collect::<Vec<_>>()
            .join(" "),
        None => expanded,
    };
    let analysis = match bash::analyse(&script, workdir) {
        Ok(a) => a,
        Err(e) => {
            return Some(WorkdirCode::Unpinned(format!(
                "runs a command runner cannot analyse ({e}), so it may run anything"
            )));
        }
    };
    for c in &analysis.commands {
        if c.foreign_shell.is_some() {
            return Some(WorkdirCode::Unpinned(
                "runs code through a shell runner does not analyse".to_string(),
            ));
        }
        let argv: Vec<String> = c.argv().iter().map(|w| w.text.clone()).collect();
        let Some(program) = argv.first() else {
            continue;
        };
        if c.argv()[0].dynamic {
            return Some(WorkdirCode::Unpinned(format!(
                "runs a program named by a variable (`{}`)",
                c.argv()[0].raw
            )));
        }
        if let Some(entry) = path_entry_into(program, s.path, workdir) {
            return Some(WorkdirCode::File(format!(
                "finds `{program}` on PATH through `{entry}`, which is relative or inside the workdir"
            )));
        }
        if let Some(why) = launchers::unpinned(&argv, cwd_inside, workdir) {
            // `go run ./cmd/x`, `npx ./tool`: what it runs is named as a workdir path.
            let names_path = argv[1..]
                .iter()
                .any(|w| w.starts_with("./") || w.starts_with("../"));
            return Some(if names_path {
                WorkdirCode::File(why)
            } else {
                WorkdirCode::Unpinned(why)
            });
        }
    }
    None
}

/// The `PATH` entry that makes a bare `program` resolve into the workdir, the way the OS
/// looks it up: an empty or relative entry, or one inside `workdir`, met before the program
/// is found elsewhere (or a program found outside that is a link into the workdir).
fn path_entry_into(program: &str, path: Option<&str>, workdir: &Path) -> Option<String> {
    if program.contains('/') || BUILTINS.contains(&program) {
        return None;
    }
    for entry in path?.split(':') {
        if entry.is_empty()
            || !entry.starts_with('/')
            || isolation::inside(Path::new(entry), workdir)
        {
            return Some(if entry.is_empty() {
                "(empty)".to_string()
            } else {
                entry.to_string()
            });
        }
        let candidate = Path::new(entry).join(program);
        if candidate.is_file() {
            return isolation::inside(&candidate, workdir).then(|| entry.to_string());
        }
    }
    None
}

/// `word` quoted for bash.
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

fn is_interpreter(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&base) || INTERPRETERS.contains(&name)
}

fn is_shell(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    matches!(base, "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish")
}

fn looks_like_script(word: &str) -> bool {
    word.contains('/')
        || word
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && SCRIPT_EXTENSIONS.contains(&ext))
}

/// For one command's words: its program when named by a path inside the workdir, or the
/// script an interpreter is given.
fn script_in(
    words: &[String],
    cwd: &Path,
    inside: &dyn Fn(&str, &Path) -> Option<PathBuf>,
    in_workdir: bool,
) -> Option<PathBuf> {
    let program = words.first()?;
    if program.contains('/')
        && let Some(p) = inside(program, cwd)
    {
        return Some(p);
    }
    if !is_interpreter(program) {
        return None;
    }
    // Every operand is looked at, not only the first: an option's value (`python3 -W ignore
    // x.py`, `bash -o pipefail x.sh`) or a launcher's subcommand (`deno run x.ts`, `uv run
    // x.py`) may come before the script.
    let mut rest = words[1..].iter();
    while let Some(w) = rest.next() {
        match w.as_str() {
            // `python -m pkg.mod` runs a module found from the current directory. Outside
            // the workdir, counted only when the module is a file or package of the workdir
            // (otherwise it is a launcher, see `launchers`).
            "-m" => {
                let module = rest.next()?;
                let path = inside(&module.replace('.', "/"), cwd)?;
                if in_workdir {
                    return Some(path);
                }
                let top = inside(module.split('.').next().unwrap_or(module), cwd)?;
                return (top.is_dir() || top.with_extension("py").is_file()).then_some(path);
            }
            // Inline code, not a file.
            "-c" => return None,
            "-e" | "--eval" | "-p" | "--print" | "-r" if !is_shell(program) => return None,
            _ if w.starts_with('-') => continue,
            // A package runner's operand is a package name (`@scope/pkg`, `user/repo`, a
            // URL) unless it is written as a path.
            // (Run in the workdir, `npx @scope/x` finds the workdir's node_modules first.)
            _ if !in_workdir
                && PACKAGE_RUNNERS.contains(&program.rsplit('/').next().unwrap_or(program))
                && !w.starts_with(['.', '/']) =>
            {
                return None;
            }
            _ => {
                if let Some(p) = inside(w, cwd).filter(|p| p.is_file() || looks_like_script(w)) {
                    return Some(p);
                }
            }
        }
    }
    None
}

/// `$CLAUDE_PROJECT_DIR`, `${CLAUDE_PROJECT_DIR}` and `$PWD` written out (hooks and checks run
/// in the workdir with the variable set to it).
fn expand_project_dir(text: &str, workdir: &Path) -> String {
    let w = workdir.to_string_lossy();
    text.replace("${CLAUDE_PROJECT_DIR}", &w)
        .replace("$CLAUDE_PROJECT_DIR", &w)
        .replace("${PWD}", &w)
        .replace("$PWD", &w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_inside_the_workdir_are_found() {
        let d = tempfile::tempdir().unwrap();
        let w = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(w.join("scripts")).unwrap();
        std::fs::write(w.join("scripts/check.sh"), "x").unwrap();
        std::fs::write(w.join("guard.py"), "x").unwrap();
        for cmd in [
            "./scripts/check.sh",
            "scripts/check.sh --fast",
            "bash scripts/check.sh",
            "sh -e ./scripts/check.sh",
            "python3 guard.py",
            "python3 -m scripts.check",
            // Run in the workdir (a verify check), a module or package comes from it.
            "python3 -m pytest",
            "npx @scope/tool",
            "\"$CLAUDE_PROJECT_DIR\"/scripts/check.sh",
            "${CLAUDE_PROJECT_DIR}/scripts/check.sh",
            "cd scripts && ./check.sh",
            "source scripts/check.sh",
            ". ./scripts/check.sh",
            "node tools/new.js",
            "timeout 10 ./scripts/check.sh",
            "bash -c './scripts/check.sh'",
            "bash \"$SCRIPT\"",
            "python3 -W ignore guard.py",
            "bash -o pipefail scripts/check.sh",
            "deno run --allow-all tools/x.ts",
            "uv run guard.py",
            "npx ./scripts/check.sh",
            "bash < scripts/check.sh",
            "cat scripts/check.sh | sh",
            "sh -s < ./scripts/check.sh",
            "env X=1 ./scripts/check.sh",
            "nice -n 5 bash scripts/check.sh",
        ] {
            assert!(workdir_script(cmd, None, &w).is_some(), "{cmd}");
        }
        assert!(workdir_script("./x.sh", Some(&[]), &w).is_some());
        assert!(workdir_script("python3", Some(&["guard.py".into()]), &w).is_some());
        for cmd in [
            "cargo test --quiet",
            "npm test",
            "test -f done.txt && echo present",
            "echo hi",
            "grep -q x README.md",
            "/usr/local/bin/check",
            "python3 -c 'print(1)'",
            "jq -r .tool_name",
            "cat > /tmp/out.json",
        ] {
            assert_eq!(workdir_script(cmd, None, &w), None, "{cmd}");
        }
    }
}
