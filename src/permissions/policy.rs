//! The decision for one tool call: deny rules, safety checks, mode, allow rules — in that order.
//!
//! With no human to ask, everything that would prompt is a [`Decision::Deny`] whose reason the
//! model can read: what was denied, why, which rule, and how to get it allowed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::bash::{self, Analysis, FileWrite, SimpleCmd};
use super::paths;
use super::readonly;
use super::rule::{Rule, RuleError, Specifier, Tail};
use crate::session::SessionRoots;
use crate::spec::types::PermissionMode;

/// One tool call as the agent loop presents it, after input validation.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// Tool name (`Bash`, `Read`, `mcp__server__tool`, ...).
    pub tool: &'a str,
    /// The tool's input.
    pub input: &'a Value,
    /// Bash's current directory (inside the workdir).
    pub cwd: &'a Path,
}

/// The outcome for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow {
        /// Why (for logs and transcripts).
        reason: String,
    },
    /// Do not run it; `reason` goes to the model as the tool_result.
    Deny {
        /// What was denied and why, which rule, how to get it allowed.
        reason: String,
    },
}

impl Decision {
    /// Whether the call may run.
    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow { .. })
    }

    /// The reason, either way.
    pub fn reason(&self) -> &str {
        match self {
            Decision::Allow { reason } | Decision::Deny { reason } => reason,
        }
    }
}

fn allow(reason: impl Into<String>) -> Decision {
    Decision::Allow {
        reason: reason.into(),
    }
}

fn deny(reason: impl Into<String>) -> Decision {
    Decision::Deny {
        reason: reason.into(),
    }
}

/// Environment variables a leading `NAME=value` may set on an allowed command.
const HARMLESS_ENV: &[&str] = &[
    "CI",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "TERM",
    "LANG",
    "LC_ALL",
    "TZ",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "CARGO_TERM_COLOR",
    "CARGO_INCREMENTAL",
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "GOFLAGS",
    "DEBUG",
    "VERBOSE",
];

/// Tools whose calls only read.
const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep"];
/// Tools whose calls write a file.
const WRITE_TOOLS: &[&str] = &["Edit", "Write", "NotebookEdit"];

/// The permission policy of one task.
#[derive(Debug, Clone)]
pub struct Policy {
    mode: PermissionMode,
    allow: Vec<Rule>,
    deny: Vec<Rule>,
    home: Option<PathBuf>,
}

impl Policy {
    /// Build a policy; the first invalid rule is an error that quotes it.
    pub fn new(
        mode: PermissionMode,
        allow: &[String],
        deny: &[String],
    ) -> Result<Policy, RuleError> {
        let parse = |rules: &[String]| -> Result<Vec<Rule>, RuleError> {
            rules.iter().map(|r| Rule::parse(r)).collect()
        };
        Ok(Policy {
            mode,
            allow: parse(allow)?,
            deny: parse(deny)?,
            home: std::env::var_os("HOME").map(PathBuf::from),
        })
    }

    /// Use `home` for `~/` rules instead of `$HOME`.
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// The permission mode.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// Tools named by bare deny rules: they are not offered to the model at all.
    pub fn removed_tools(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self.deny.iter().filter(|r| r.is_bare()) {
            if !out.contains(&r.tool) {
                out.push(r.tool.clone());
            }
        }
        out
    }

    /// Decide one call.
    pub fn decide(&self, call: &ToolCall<'_>, roots: &SessionRoots) -> Decision {
        let d = self.decide_inner(call, roots);
        tracing::debug!(
            tool = call.tool,
            allowed = d.is_allow(),
            reason = d.reason(),
            "permission decision"
        );
        d
    }

    fn decide_inner(&self, call: &ToolCall<'_>, roots: &SessionRoots) -> Decision {
        let tool = call.tool;
        if let Some(r) = self.deny.iter().find(|r| r.is_bare() && r.names_tool(tool)) {
            return deny(format!(
                "{tool} denied by the deny rule `{}`. Deny rules cannot be overridden; do the task without {tool}.",
                r.raw
            ));
        }
        if tool == "Bash" {
            return match call.input.get("command").and_then(Value::as_str) {
                Some(cmd) => self.decide_bash(cmd, call.cwd, roots),
                None => deny("Bash denied: the input has no `command` string."),
            };
        }
        if READ_TOOLS.contains(&tool) {
            return match read_target(tool, call.input, roots) {
                Some(path) => self.decide_read(tool, &path, roots),
                None => deny(format!("{tool} denied: the input has no usable path.")),
            };
        }
        if WRITE_TOOLS.contains(&tool) {
            let key = if tool == "NotebookEdit" {
                "notebook_path"
            } else {
                "file_path"
            };
            return match call.input.get(key).and_then(Value::as_str) {
                Some(p) => {
                    let path = paths::resolve_in(roots, Path::new(p));
                    self.decide_write(tool, &path, roots, &format!("{tool} of {}", path.display()))
                }
                None => deny(format!("{tool} denied: the input has no `{key}` string.")),
            };
        }
        self.decide_other(tool)
    }

    // ---------------------------------------------------------------- file reads

    fn decide_read(&self, tool: &str, path: &Path, roots: &SessionRoots) -> Decision {
        let shown = path.display();
        let covering = [tool, "Read"];
        let home = self.home.as_deref();
        if let Some(r) = Self::path_rule(&self.deny, &covering, path, roots, home, false) {
            return deny(format!(
                "{tool} of {shown} denied by the deny rule `{}`. Deny rules cannot be overridden.",
                r.raw
            ));
        }
        if roots.is_inside_workspace(path) {
            return allow(format!("{tool} of {shown} allowed: inside the workspace"));
        }
        if self.mode == PermissionMode::BypassPermissions {
            return allow(format!(
                "{tool} of {shown} allowed by permission mode bypassPermissions"
            ));
        }
        if let Some(r) = Self::path_rule(&self.allow, &covering, path, roots, home, true) {
            return allow(format!("{tool} of {shown} allowed by the rule `{}`", r.raw));
        }
        deny(format!(
            "{tool} of {shown} denied: the path is outside the workdir and additional directories, and no allow rule matches (permission mode {}). Add an allow rule such as Read({}) to permit it.",
            self.mode.as_str(),
            rule_path(path, roots)
        ))
    }

    /// Path rules for `tool` (a `Read(...)` rule covers Glob and Grep; an `Edit(...)` rule
    /// covers Write and NotebookEdit). `bare` includes bare rules of the covering tool.
    fn path_rule<'r>(
        rules: &'r [Rule],
        tools: &[&str],
        path: &Path,
        roots: &SessionRoots,
        home: Option<&Path>,
        bare: bool,
    ) -> Option<&'r Rule> {
        rules.iter().find(|r| {
            tools.contains(&r.tool.as_str())
                && match &r.spec {
                    Specifier::Any => bare,
                    Specifier::Path(p) => p.matches(path, roots, home),
                    _ => false,
                }
        })
    }

    // ---------------------------------------------------------------- file writes

    /// Decide a write of `path` (Edit/Write tools and Bash redirections). `what` describes it.
    fn decide_write(&self, tool: &str, path: &Path, roots: &SessionRoots, what: &str) -> Decision {
        let home = self.home.as_deref();
        let covering: &[&str] = if tool == "Edit" {
            &["Edit"]
        } else {
            &[tool, "Edit"]
        };
        if let Some(r) = Self::path_rule(&self.deny, covering, path, roots, home, true)
            .or_else(|| Self::path_rule(&self.deny, &["Read"], path, roots, home, false))
        {
            return deny(format!(
                "{what} denied by the deny rule `{}`. Deny rules cannot be overridden.",
                r.raw
            ));
        }
        if let Some(marker) = paths::protected_marker(path) {
            let named = self.allow.iter().find(|r| {
                covering.contains(&r.tool.as_str())
                    && matches!(&r.spec, Specifier::Path(p)
                        if p.raw.contains(marker.as_str()) && p.matches(path, roots, home))
            });
            if named.is_none() {
                return deny(format!(
                    "{what} denied: `{marker}` is a protected path; runner never writes there in any mode (bypassPermissions included) unless an allow rule names the path, such as Edit({}).",
                    rule_path(path, roots)
                ));
            }
        }
        match self.mode {
            PermissionMode::Plan => {
                return deny(format!(
                    "{what} denied: permission mode plan allows reads and read-only commands only; no edits."
                ));
            }
            PermissionMode::BypassPermissions => {
                return allow(format!(
                    "{what} allowed by permission mode bypassPermissions"
                ));
            }
            PermissionMode::AcceptEdits if paths::inside_workdir(roots, path) => {
                return allow(format!(
                    "{what} allowed: inside the workdir in permission mode acceptEdits"
                ));
            }
            _ => {}
        }
        if let Some(r) = Self::path_rule(&self.allow, covering, path, roots, home, true) {
            return allow(format!("{what} allowed by the rule `{}`", r.raw));
        }
        deny(format!(
            "{what} denied: no allow rule matches (permission mode {}). Add an allow rule such as Edit or Edit({}) to permit it.",
            self.mode.as_str(),
            rule_path(path, roots)
        ))
    }

    // ---------------------------------------------------------------- other tools

    fn decide_other(&self, tool: &str) -> Decision {
        if tool == "AskUserQuestion" {
            return deny(
                "AskUserQuestion denied: runner runs unattended and no human will answer. Decide yourself and continue.",
            );
        }
        // A scoped deny rule for a tool runner does not interpret: fail closed.
        if let Some(r) = self.deny.iter().find(|r| r.names_tool(tool)) {
            return deny(format!(
                "{tool} denied by the deny rule `{}` (runner cannot check its specifier, so it applies to every call).",
                r.raw
            ));
        }
        match self.mode {
            PermissionMode::Plan => {
                return deny(format!(
                    "{tool} denied: permission mode plan allows reads and read-only commands only."
                ));
            }
            PermissionMode::BypassPermissions => {
                return allow(format!(
                    "{tool} allowed by permission mode bypassPermissions"
                ));
            }
            _ => {}
        }
        if let Some(r) = self
            .allow
            .iter()
            .find(|r| r.is_bare() && r.names_tool(tool))
        {
            return allow(format!("{tool} allowed by the rule `{}`", r.raw));
        }
        deny(format!(
            "{tool} denied: no allow rule matches (permission mode {}). Add the allow rule {tool} to permit it.",
            self.mode.as_str()
        ))
    }

    // ---------------------------------------------------------------- Bash

    fn decide_bash(&self, command: &str, cwd: &Path, roots: &SessionRoots) -> Decision {
        let shown = preview(command);
        let analysis = match bash::analyse(command, cwd) {
            Ok(a) => a,
            Err(e) => {
                return deny(format!(
                    "Bash command \"{shown}\" denied: runner could not analyse it safely: {}. Rewrite it as plain commands joined by &&, ||, ;, | (no eval, functions or nested substitutions inside ${{...}}).",
                    e.reason
                ));
            }
        };
        if let Some(d) = self.bash_deny_rules(&shown, &analysis) {
            return d;
        }
        let mut reasons = Vec::new();
        for c in &analysis.commands {
            match self.bash_command(&shown, c, roots) {
                Decision::Allow { reason } => reasons.push(reason),
                d => return d,
            }
        }
        for w in &analysis.writes {
            match self.bash_write(&shown, w, roots) {
                Decision::Allow { reason } => reasons.push(reason),
                d => return d,
            }
        }
        if reasons.is_empty() {
            reasons.push("it runs no commands".into());
        }
        allow(format!(
            "Bash command \"{shown}\" allowed: {}",
            reasons.join("; ")
        ))
    }

    /// Deny rules, checked for every simple command first (past assignments, with and without
    /// wrappers; a dynamic word counts as matching if any expansion could match).
    fn bash_deny_rules(&self, shown: &str, a: &Analysis) -> Option<Decision> {
        for c in &a.commands {
            for text_and_dynamic in deny_texts(c) {
                let (text, dynamic) = text_and_dynamic;
                if text.is_empty() {
                    continue;
                }
                let tail = if dynamic {
                    Tail::SomeContinuation
                } else {
                    Tail::Exact
                };
                if let Some(r) = self.deny.iter().find(|r| {
                    r.tool == "Bash"
                        && matches!(&r.spec, Specifier::Bash(p) if p.matches(&text, tail))
                }) {
                    return Some(deny(format!(
                        "Bash command \"{shown}\" denied: \"{}\" matches the deny rule `{}`. Deny rules cannot be overridden; do this another way or not at all.",
                        c.display(),
                        r.raw
                    )));
                }
            }
        }
        None
    }

    fn bash_command(&self, shown: &str, c: &SimpleCmd, roots: &SessionRoots) -> Decision {
        let display = c.display();
        // Leading assignments: only a known-harmless set with static values.
        if let Some(a) = c
            .assignments
            .iter()
            .find(|a| !a.static_value || !HARMLESS_ENV.contains(&a.name.as_str()))
        {
            return deny(format!(
                "Bash command \"{shown}\" denied: \"{display}\" sets the variable {} (only static values of {} are allowed). Run the command without the assignment.",
                a.name,
                HARMLESS_ENV.join(", ")
            ));
        }
        if c.words.is_empty() {
            return allow(format!("\"{display}\" only sets harmless variables"));
        }
        let read_only = if c.args_from_stdin {
            Err("`xargs` adds arguments runner cannot see".to_string())
        } else {
            readonly::check(c.argv(), &c.cwd, roots)
        };
        if read_only.is_ok() {
            return allow(format!("\"{display}\" is read-only"));
        }
        match self.mode {
            PermissionMode::Plan => {
                return deny(format!(
                    "Bash command \"{shown}\" denied: permission mode plan allows read-only commands only, and \"{display}\" is not read-only ({}).",
                    read_only.err().unwrap_or_default()
                ));
            }
            PermissionMode::BypassPermissions => {
                return allow(format!(
                    "\"{display}\" allowed by permission mode bypassPermissions"
                ));
            }
            _ => {}
        }
        for from in [c.start, 0] {
            let (text, dynamic) = c.match_text(from);
            let tail = if dynamic {
                Tail::AnyContinuation
            } else {
                Tail::Exact
            };
            if let Some(r) = self.allow.iter().find(|r| {
                r.tool == "Bash"
                    && match &r.spec {
                        Specifier::Any => true,
                        Specifier::Bash(p) => p.matches(&text, tail),
                        _ => false,
                    }
            }) {
                return allow(format!("\"{display}\" allowed by the rule `{}`", r.raw));
            }
        }
        let argv: Vec<&str> = c.argv().iter().map(|w| w.raw.as_str()).collect();
        deny(format!(
            "Bash command \"{shown}\" denied: no allow rule matches \"{}\" (permission mode {}). Add an allow rule such as {} to permit it.",
            argv.join(" "),
            self.mode.as_str(),
            suggest(c)
        ))
    }

    fn bash_write(&self, shown: &str, w: &FileWrite, roots: &SessionRoots) -> Decision {
        let what = format!(
            "Bash command \"{shown}\" (its redirection to `{}` writes {})",
            w.target,
            w.path.display()
        );
        for path in std::iter::once(&w.path).chain(w.alt_path.iter()) {
            let d = self.decide_write("Edit", path, roots, &what);
            if !d.is_allow() {
                return d;
            }
        }
        allow(format!(
            "the redirection to `{}` is an allowed file write",
            w.target
        ))
    }
}

/// The path a read tool touches: `file_path` for Read, `path` (default the workdir) plus the
/// literal prefix of a Glob pattern.
fn read_target(tool: &str, input: &Value, roots: &SessionRoots) -> Option<PathBuf> {
    if tool == "Read" {
        let p = input.get("file_path")?.as_str()?;
        return Some(paths::resolve_in(roots, Path::new(p)));
    }
    let base = match input.get("path") {
        None | Some(Value::Null) => roots.workdir.clone(),
        Some(v) => paths::resolve_in(roots, Path::new(v.as_str()?)),
    };
    if tool != "Glob" {
        return Some(base);
    }
    let pattern = input.get("pattern")?.as_str()?;
    // The directory the pattern can reach: its literal leading components. A `..` after a
    // wildcard could climb anywhere, so that counts as the filesystem root.
    let mut literal = PathBuf::new();
    let mut wild = false;
    for comp in pattern.split('/') {
        if comp.contains(['*', '?', '[', '{']) {
            wild = true;
        } else if wild && comp == ".." {
            return Some(PathBuf::from("/"));
        } else if !wild {
            literal.push(if comp.is_empty() { "/" } else { comp });
        }
    }
    Some(paths::resolve(&base, &literal))
}

/// How a path rule for `path` is spelled: `./rel` inside the workdir, `//abs` elsewhere.
fn rule_path(path: &Path, roots: &SessionRoots) -> String {
    match path.strip_prefix(&roots.workdir) {
        Ok(rel) => format!("./{}", rel.display()),
        Err(_) => format!("/{}", path.display()),
    }
}

fn preview(command: &str) -> String {
    let one_line = command.replace('\n', "⏎");
    if one_line.chars().count() > 200 {
        let cut: String = one_line.chars().take(200).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// The texts a deny rule is matched against: with and without wrappers, past a leading `env`
/// and its assignments, and with a path-qualified command name reduced to its file name
/// (`/bin/rm` → `rm`).
fn deny_texts(c: &SimpleCmd) -> Vec<(String, bool)> {
    let mut starts = vec![0, c.start];
    let argv = c.argv();
    if argv.first().is_some_and(|w| w.text == "env") {
        let mut i = 1;
        while let Some(w) = argv.get(i) {
            let t = w.text.as_str();
            if t == "-u" || t == "--unset" {
                i += 2;
            } else if t.starts_with('-') || (t.contains('=') && !w.dynamic) {
                i += 1;
            } else {
                break;
            }
        }
        starts.push(c.start + i);
    }
    let mut out = Vec::new();
    for from in starts {
        if from >= c.words.len() {
            continue;
        }
        let (text, dynamic) = c.match_text(from);
        let name = &c.words[from].text;
        if let Some((_, base)) = name.rsplit_once('/')
            && !base.is_empty()
            && let Some(rest) = text.strip_prefix(name.as_str())
        {
            out.push((format!("{base}{rest}"), dynamic));
        }
        out.push((text, dynamic));
    }
    out
}

/// Programs whose first argument is a subcommand, for two-word rule suggestions.
const SUBCOMMAND_TOOLS: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "go",
    "docker",
    "kubectl",
    "gh",
    "pip",
    "uv",
    "poetry",
    "rustup",
    "dotnet",
    "mvn",
    "gradle",
    "terraform",
    "helm",
    "make",
];

/// A rule that would allow `c`: `Bash(name sub:*)` for subcommand-style tools, else
/// `Bash(name:*)`.
fn suggest(c: &SimpleCmd) -> String {
    let argv = c.argv();
    let name = argv.first().map(|w| w.text.as_str()).unwrap_or_default();
    match argv.get(1) {
        Some(sub)
            if SUBCOMMAND_TOOLS.contains(&name)
                && !sub.dynamic
                && !sub.text.is_empty()
                && !sub.text.starts_with('-')
                && sub
                    .text
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_') =>
        {
            format!("Bash({name} {}:*)", sub.text)
        }
        _ => format!("Bash({name}:*)"),
    }
}
