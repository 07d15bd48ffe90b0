//! Programs that run code they find for themselves rather than a file they are given: inline
//! code that imports modules (`python -c`, `node -e`), package runners (`npx`, `uvx`,
//! `pnpm dlx`), project runners (`npm run`, `cargo run`, `bundle exec`, `make`). Run in or near
//! the workdir they load what the pull request put there (`json.py`, `node_modules/…`,
//! `package.json` scripts), so for the trust check they are workdir code unless the spec
//! **pins** what they run to something outside the workdir:
//!
//! - Python inline code or modules (`-c`, `-m`): isolated mode, `-I` (no working directory or
//!   script directory on the import path, no `PYTHON*` variables, no user site);
//! - npm-style package runners (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`): every
//!   package given with an exact version (`pkg@1.2.3`, `@scope/pkg@1.2.3`, as the operand or
//!   through `--package`), or as an absolute path outside the workdir; not with `-c`;
//! - Python package runners (`uvx`, `uv tool run`, `pipx run`): the package with an exact
//!   version (`pkg==1.2.3`, `pkg@1.2.3`, as the operand, `--from` or `--spec`);
//! - `go run` / `go install`: a module with an exact version (`example.com/x@v1.2.3`).
//!
//! A pin counts only when the program runs outside the workdir (the default working directory
//! of hooks and MCP servers): inside it the project's own files win. Everything else in the
//! table (inline JavaScript, Ruby or Perl, project runners) cannot be pinned.
//!
//! The table is [`LAUNCHERS`]: a row names the programs, what makes them a launcher (an
//! option, a subcommand, or the program itself) and how a call may be pinned. The first row
//! that matches decides.

use std::path::Path;

/// What makes a program a launcher.
#[derive(Debug, Clone, Copy)]
enum Trigger {
    /// One of these options before the first operand (`python -c`, `node --eval`); short
    /// options may be grouped (`python -Ic`).
    Option(&'static [&'static str]),
    /// The first operand is one of these subcommands (`npm exec`, `cargo run`).
    Sub(&'static [&'static str]),
    /// The program itself (`npx`, `make`).
    Always,
}

/// How a call may be pinned to code outside the workdir.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pin {
    /// It cannot be.
    Never,
    /// Python's isolated mode, `-I`.
    PythonIsolated,
    /// npm packages with exact versions (or absolute paths outside the workdir).
    NpmVersion,
    /// A Python package with an exact version.
    PyVersion,
    /// A Go module with an exact version.
    GoVersion,
}

/// One row of the table.
struct Launcher {
    /// Program names (the base name, without a version suffix: `python3.12` is `python`).
    programs: &'static [&'static str],
    trigger: Trigger,
    pin: Pin,
    /// What it loads, for the refusal.
    loads: &'static str,
}

const fn row(
    programs: &'static [&'static str],
    trigger: Trigger,
    pin: Pin,
    loads: &'static str,
) -> Launcher {
    Launcher {
        programs,
        trigger,
        pin,
        loads,
    }
}

const PY: &str = "imports modules from its working directory and import path";
const NPM_PKG: &str =
    "runs a package the project's node_modules can provide, or the newest one a registry offers";
const PROJECT: &str =
    "runs what the project's own files (package.json, Cargo.toml, Makefile, …) say";

/// The launchers; the first matching row decides.
const LAUNCHERS: &[Launcher] = &[
    row(
        &["python", "pypy"],
        Trigger::Option(&["-c", "-m"]),
        Pin::PythonIsolated,
        PY,
    ),
    row(
        &["node", "nodejs"],
        Trigger::Option(&[
            "-e",
            "--eval",
            "-p",
            "--print",
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
        ]),
        Pin::Never,
        "resolves require() and import from its working directory's node_modules",
    ),
    row(
        &["ruby"],
        Trigger::Option(&["-e", "-r"]),
        Pin::Never,
        "loads libraries from its load path",
    ),
    row(
        &["perl"],
        Trigger::Option(&["-e", "-E", "-M", "-m"]),
        Pin::Never,
        "loads modules from @INC",
    ),
    row(
        &["php"],
        Trigger::Option(&["-r"]),
        Pin::Never,
        "loads its working directory's files",
    ),
    row(
        &["deno"],
        Trigger::Sub(&["eval", "task"]),
        Pin::Never,
        PROJECT,
    ),
    row(
        &["npx", "pnpx", "bunx"],
        Trigger::Always,
        Pin::NpmVersion,
        NPM_PKG,
    ),
    row(
        &["npm"],
        Trigger::Sub(&["exec", "x"]),
        Pin::NpmVersion,
        NPM_PKG,
    ),
    row(
        &["npm"],
        Trigger::Sub(&[
            "run",
            "run-script",
            "rum",
            "urn",
            "test",
            "tst",
            "t",
            "start",
            "stop",
            "restart",
            "install",
            "i",
            "ci",
            "install-test",
            "it",
            "rebuild",
            "explore",
        ]),
        Pin::Never,
        PROJECT,
    ),
    row(&["pnpm"], Trigger::Sub(&["dlx"]), Pin::NpmVersion, NPM_PKG),
    row(&["pnpm"], Trigger::Always, Pin::Never, PROJECT),
    row(&["yarn"], Trigger::Sub(&["dlx"]), Pin::NpmVersion, NPM_PKG),
    row(&["yarn"], Trigger::Always, Pin::Never, PROJECT),
    row(&["bun"], Trigger::Sub(&["x"]), Pin::NpmVersion, NPM_PKG),
    row(&["bun"], Trigger::Always, Pin::Never, PROJECT),
    row(
        &["uvx"],
        Trigger::Always,
        Pin::PyVersion,
        "runs a package its project or a registry provides",
    ),
    row(
        &["uv"],
        Trigger::Sub(&["tool"]),
        Pin::PyVersion,
        "runs a package its project or a registry provides",
    ),
    row(
        &["uv"],
        Trigger::Sub(&["run", "sync", "pip"]),
        Pin::Never,
        PROJECT,
    ),
    row(
        &["pipx"],
        Trigger::Sub(&["run"]),
        Pin::PyVersion,
        "runs a package a registry provides",
    ),
    row(
        &["poetry", "pipenv", "pdm", "hatch", "rye", "tox", "nox"],
        Trigger::Always,
        Pin::Never,
        PROJECT,
    ),
    row(&["bundle", "bundler"], Trigger::Always, Pin::Never, PROJECT),
    row(
        &["go"],
        Trigger::Sub(&["run", "install"]),
        Pin::GoVersion,
        "builds and runs the module of its working directory",
    ),
    row(
        &["go"],
        Trigger::Sub(&["test", "generate", "build", "vet", "tool"]),
        Pin::Never,
        PROJECT,
    ),
    row(
        &["cargo"],
        Trigger::Sub(&[
            "run", "r", "test", "t", "build", "b", "check", "c", "clippy", "bench", "doc", "d",
            "install",
        ]),
        Pin::Never,
        "builds the project of its working directory (build scripts and macros are code)",
    ),
    row(
        &["dotnet"],
        Trigger::Sub(&["run", "test", "build"]),
        Pin::Never,
        PROJECT,
    ),
    row(
        &["make", "gmake", "just", "rake", "gradle", "mvn", "ant"],
        Trigger::Always,
        Pin::Never,
        PROJECT,
    ),
];

/// The base name of `program` without a version suffix (`/usr/bin/python3.12` → `python`).
fn base_name(program: &str) -> &str {
    let base = program.rsplit('/').next().unwrap_or(program);
    base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

/// Options of the launchers that take the next word as their value (so it is not the first
/// operand).
const VALUED: &[&str] = &[
    "-W",
    "-X",
    "--package",
    "-p",
    "--prefix",
    "--from",
    "--spec",
    "--with",
    "--python",
    "--registry",
    "--cache",
    "--userconfig",
    "-C",
    "--directory",
    "--manifest-path",
    "--index-url",
    "-i",
];

/// Whether `argv` (a command's words, its wrappers stripped) runs workdir code as a launcher
/// that is not pinned; the reason when it does. `cwd_inside`: it runs inside the workdir.
pub(crate) fn unpinned(argv: &[String], cwd_inside: bool, workdir: &Path) -> Option<String> {
    let program = argv.first()?;
    let name = base_name(program);
    let rest = &argv[1..];
    let launcher = LAUNCHERS.iter().find(|l| {
        l.programs.contains(&name)
            && match l.trigger {
                Trigger::Always => true,
                Trigger::Sub(subs) => {
                    first_operand(rest).is_some_and(|i| subs.contains(&rest[i].as_str()))
                }
                Trigger::Option(opts) => has_option(rest, opts),
            }
    })?;
    let pinned = !cwd_inside
        && match launcher.pin {
            Pin::Never => false,
            Pin::PythonIsolated => has_option(rest, &["-I"]),
            Pin::NpmVersion => npm_pinned(rest, workdir),
            Pin::PyVersion => py_pinned(rest),
            Pin::GoVersion => go_pinned(rest),
        };
    if pinned {
        return None;
    }
    let how = match launcher.pin {
        Pin::Never => "; it cannot be pinned".to_string(),
        _ if cwd_inside => "; it runs inside the workdir, where no pin holds".to_string(),
        Pin::PythonIsolated => "; pin it with isolated mode (`-I`)".to_string(),
        Pin::NpmVersion => "; pin it with an exact version (`pkg@1.2.3`)".to_string(),
        Pin::PyVersion => "; pin it with an exact version (`pkg==1.2.3`)".to_string(),
        Pin::GoVersion => "; pin it with an exact version (`module@v1.2.3`)".to_string(),
    };
    Some(format!(
        "runs `{}`, which {}{how}",
        argv.iter().take(2).cloned().collect::<Vec<_>>().join(" "),
        launcher.loads
    ))
}

/// Index of the first operand (not an option nor an option's value) in `words`.
fn first_operand(words: &[String]) -> Option<usize> {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if w == "--" {
            return (i + 1 < words.len()).then_some(i + 1);
        }
        if !w.starts_with('-') || w == "-" {
            return Some(i);
        }
        i += if VALUED.contains(&w.as_str()) { 2 } else { 1 };
    }
    None
}

/// Whether one of `opts` is given before the first operand; a single-letter option may be in
/// a group (`-Ic` holds `-I` and `-c`).
fn has_option(words: &[String], opts: &[&str]) -> bool {
    let end = first_operand(words).unwrap_or(words.len());
    words[..end].iter().any(|w| {
        let name = w.split_once('=').map_or(w.as_str(), |(n, _)| n);
        opts.contains(&name)
            || (w.len() > 2
                && w.starts_with('-')
                && !w.starts_with("--")
                && opts
                    .iter()
                    .any(|o| o.len() == 2 && o.starts_with('-') && w[1..].contains(&o[1..])))
    })
}

/// The values of option `name` in `words` (`--package x`, `--package=x`).
fn option_values<'a>(words: &'a [String], names: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut it = words.iter().take_while(|w| *w != "--").peekable();
    while let Some(w) = it.next() {
        if let Some((n, v)) = w.split_once('=')
            && names.contains(&n)
        {
            out.push(v);
        } else if names.contains(&w.as_str())
            && let Some(v) = it.next()
        {
            out.push(v.as_str());
        }
    }
    out
}

/// The package operand: the first operand after the launcher's subcommand words, if any
/// (`npm exec`, `pnpm dlx`, `uv tool run`, `pipx run`).
fn package_operand(words: &[String]) -> Option<&str> {
    let mut i = first_operand(words)?;
    for _ in 0..2 {
        if !matches!(
            words[i].as_str(),
            "exec" | "x" | "dlx" | "run" | "tool" | "install"
        ) {
            break;
        }
        i = i + 1 + first_operand(&words[i + 1..])?;
    }
    words.get(i).map(String::as_str)
}

fn npm_pinned(words: &[String], workdir: &Path) -> bool {
    if has_option(words, &["-c", "--call"]) {
        return false;
    }
    let exact = |spec: &str| -> bool {
        if spec.starts_with('/') {
            return !super::isolation::inside(Path::new(spec), workdir);
        }
        let (name, version) = match spec.strip_prefix('@') {
            Some(scoped) => match scoped.split_once('@') {
                Some((n, v)) => (n, v),
                None => return false,
            },
            None => match spec.split_once('@') {
                Some((n, v)) => (n, v),
                None => return false,
            },
        };
        !name.is_empty() && !name.contains(':') && exact_semver(version)
    };
    let packages = option_values(words, &["--package", "-p"]);
    if !packages.is_empty() {
        return packages.iter().all(|p| exact(p));
    }
    package_operand(words).is_some_and(exact)
}

fn py_pinned(words: &[String]) -> bool {
    let exact = |spec: &str| -> bool {
        let (name, version) = match spec.split_once("==").or_else(|| spec.split_once('@')) {
            Some(x) => x,
            None => return false,
        };
        !name.is_empty()
            && name.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '[' | ']' | ',')
            })
            && !version.is_empty()
            && version.starts_with(|c: char| c.is_ascii_digit())
            && version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!' | '-'))
    };
    let from = option_values(words, &["--from", "--spec"]);
    if !from.is_empty() {
        return from.iter().all(|p| exact(p));
    }
    package_operand(words).is_some_and(exact)
}

fn go_pinned(words: &[String]) -> bool {
    package_operand(words).is_some_and(|spec| {
        spec.split_once('@').is_some_and(|(module, v)| {
            !module.is_empty()
                && !module.starts_with('.')
                && !module.starts_with('/')
                && v.strip_prefix('v').is_some_and(exact_semver)
        })
    })
}

/// `1.2.3`, `1.2.3-rc.1`, `1.2.3+build`: one exact version, no range or tag.
fn exact_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}
