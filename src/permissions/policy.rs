//! The decision for one tool call: deny rules, safety checks, mode, allow rules — in that order.
//!
//! With no human to ask, everything that would prompt is a [`Decision::Deny`] whose reason the
//! model can read: what was denied, why, which rule, and how to get it allowed.

use std::path::{Path, PathBuf};

use super::args;
use super::bash::{self, Analysis, ArgWord, FileWrite, SimpleCmd};
use super::mode::PermissionMode;
use super::paths;
use super::readonly;
use super::rule::{Rule, RuleError, Specifier, Tail};
use crate::roots::SessionRoots;
use crate::tools::Access;

/// One tool call as the agent loop presents it, after its input was parsed and checked.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// Tool name (`Bash`, `Read`, `mcp__server__tool`, ...): rules name tools.
    pub tool: &'a str,
    /// What the call touches: the decision is made on this.
    pub access: &'a Access,
    /// The shell's current directory (inside the workdir), where a command runs.
    pub cwd: &'a Path,
}

/// What an allowed call may do when it runs: the sandbox confines a command to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Scope {
    /// Read only: every command it runs was allowed as read-only, by no rule or mode.
    #[default]
    ReadOnly,
    /// Write in the workspace: a rule, the permission mode or a hook allowed it.
    Write,
}

/// The outcome for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow {
        /// Why (for logs and transcripts).
        reason: String,
        /// What it may do when it runs.
        scope: Scope,
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
            Decision::Allow { reason, .. } | Decision::Deny { reason } => reason,
        }
    }

    /// What an allowed call may do (read only for a denial: it does nothing).
    pub fn scope(&self) -> Scope {
        match self {
            Decision::Allow { scope, .. } => *scope,
            Decision::Deny { .. } => Scope::ReadOnly,
        }
    }
}

/// An allowance to write in the workspace (by a rule, the mode or a hook).
fn allow(reason: impl Into<String>) -> Decision {
    Decision::Allow {
        reason: reason.into(),
        scope: Scope::Write,
    }
}

/// An allowance to read only.
fn allow_read(reason: impl Into<String>) -> Decision {
    Decision::Allow {
        reason: reason.into(),
        scope: Scope::ReadOnly,
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

/// The permission policy of one task.
#[derive(Debug, Clone)]
pub struct Policy {
    mode: PermissionMode,
    allow: Vec<Rule>,
    /// Deny rules, then ask rules (tagged), in the order they are checked.
    blockers: Vec<(Rule, Block)>,
    home: Option<PathBuf>,
}

/// Which kind of rule blocks a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Deny,
    Ask,
}

impl Block {
    /// The reason text after "denied" for a call blocked by `rule`.
    fn because(self, rule: &Rule) -> String {
        match self {
            Block::Deny => format!(
                "by the deny rule `{}`. Deny rules cannot be overridden",
                rule.raw
            ),
            Block::Ask => format!(
                "because it would prompt for approval (ask rule `{}`), and runner runs unattended with nobody to ask; ask rules deny in every mode",
                rule.raw
            ),
        }
    }
}

impl Policy {
    /// Build a policy without ask rules; the first invalid rule is an error that quotes it.
    pub fn new(
        mode: PermissionMode,
        allow: &[String],
        deny: &[String],
    ) -> Result<Policy, RuleError> {
        Policy::with_ask(mode, allow, deny, &[])
    }

    /// Build a policy with ask rules (checked after deny rules and before allow rules; with no
    /// human to ask, a call an ask rule matches is denied in every mode).
    pub fn with_ask(
        mode: PermissionMode,
        allow: &[String],
        deny: &[String],
        ask: &[String],
    ) -> Result<Policy, RuleError> {
        let parse = |rules: &[String]| -> Result<Vec<Rule>, RuleError> {
            rules.iter().map(|r| Rule::parse(r)).collect()
        };
        let mut blockers: Vec<(Rule, Block)> =
            parse(deny)?.into_iter().map(|r| (r, Block::Deny)).collect();
        blockers.extend(parse(ask)?.into_iter().map(|r| (r, Block::Ask)));
        Ok(Policy {
            mode,
            allow: parse(allow)?,
            blockers,
            home: std::env::var_os("HOME").map(PathBuf::from),
        })
    }

    /// The first deny or ask rule (deny rules first) for which `pred` holds.
    fn blocker(&self, pred: impl Fn(&Rule) -> bool) -> Option<(&Rule, Block)> {
        self.blockers
            .iter()
            .find(|(r, _)| pred(r))
            .map(|(r, b)| (r, *b))
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
        for (r, _) in self
            .blockers
            .iter()
            .filter(|(r, b)| *b == Block::Deny && r.is_bare())
        {
            if !out.contains(&r.tool) {
                out.push(r.tool.clone());
            }
        }
        out
    }

    /// Decide one call.
    pub fn decide(&self, call: &ToolCall<'_>, roots: &SessionRoots) -> Decision {
        self.decide_logged(call, roots, false)
    }

    /// Decide a call a PreToolUse hook allowed: deny and ask rules, protected paths, `/proc`
    /// reads and unanalysable commands still deny it; what would only need an allow rule (or
    /// another mode) is allowed.
    pub fn decide_hook_allowed(&self, call: &ToolCall<'_>, roots: &SessionRoots) -> Decision {
        self.decide_logged(call, roots, true)
    }

    /// Whether the Bash `command`, run in `cwd`, is entirely read-only and leaves the working
    /// directory alone: it analyses cleanly, writes no file by redirection, and every simple
    /// command is in the read-only set (with only harmless static assignments, no `xargs`
    /// stdin arguments, file operands readable without a rule) and none is `cd`/`pushd`/`popd`.
    /// The executor uses this to run such calls concurrently; it does not decide permission.
    pub fn is_read_only_bash(&self, command: &str, cwd: &Path, roots: &SessionRoots) -> bool {
        let Ok(a) = bash::analyse(command, cwd) else {
            return false;
        };
        if !a.writes.is_empty() || self.bash_deny_rules(&preview(command), &a).is_some() {
            return false;
        }
        let what = "Bash command";
        let commands_ok = a.commands.iter().all(|c| {
            if c.assignments
                .iter()
                .any(|x| !x.static_value || !HARMLESS_ENV.contains(&x.name.as_str()))
            {
                return false;
            }
            if c.words.is_empty() || c.shell_wrapper {
                // Only assignments, or a `bash -c` whose own commands are in the analysis.
                return true;
            }
            if c.args_from_stdin
                || matches!(
                    c.argv().first().map(|w| w.text.as_str()),
                    Some("cd" | "pushd" | "popd")
                )
            {
                return false;
            }
            let reads_ok = readonly::read_paths(c.argv())
                .unwrap_or_default()
                .iter()
                .all(|w| {
                    matches!(
                        self.bash_read(what, w, &c.cwd, c.alt_cwd.as_deref(), roots, false),
                        ReadCheck::Ok
                    )
                });
            reads_ok && readonly::check(c.argv(), &c.cwd, roots).is_ok()
        });
        commands_ok
            && a.reads.iter().all(|r| {
                matches!(
                    self.bash_read(what, &r.word, &r.cwd, r.alt_cwd.as_deref(), roots, false),
                    ReadCheck::Ok
                )
            })
    }

    fn decide_logged(&self, call: &ToolCall<'_>, roots: &SessionRoots, grant: bool) -> Decision {
        let d = self.decide_inner(call, roots, grant);
        tracing::debug!(
            tool = call.tool,
            allowed = d.is_allow(),
            hook_allowed = grant,
            reason = d.reason(),
            "permission decision"
        );
        d
    }

    fn decide_inner(&self, call: &ToolCall<'_>, roots: &SessionRoots, grant: bool) -> Decision {
        let tool = call.tool;
        if let Some((r, b)) = self.blocker(|r| r.is_bare() && r.names_tool(tool)) {
            return deny(format!(
                "{tool} denied {}; do the task without {tool}.",
                b.because(r)
            ));
        }
        match call.access {
            Access::Exec(cmd) => self.decide_bash(cmd, call.cwd, roots, grant),
            Access::Read(paths) => self.all_of(paths, |p| {
                let path = paths::resolve_in(roots, p);
                self.decide_read(tool, &path, roots, grant)
            }),
            Access::Write(paths) => self.all_of(paths, |p| {
                let path = paths::resolve_in(roots, p);
                let what = format!("{tool} of {}", path.display());
                self.decide_write(tool, &path, roots, &what, grant)
            }),
            Access::Other => self.decide_other(tool, grant),
            Access::Internal => allow_read(format!("{tool} changes only runner's own state")),
        }
    }

    /// Allow when `decide` allows every path (the reasons joined), else the first denial. A
    /// call that names no path at all is denied: there is nothing to decide on.
    fn all_of(&self, paths: &[PathBuf], decide: impl Fn(&Path) -> Decision) -> Decision {
        if paths.is_empty() {
            return deny("denied: the call names no path to check.");
        }
        let mut reasons = Vec::new();
        let mut scope = Scope::ReadOnly;
        for p in paths {
            match decide(p) {
                Decision::Allow { reason, scope: s } => {
                    reasons.push(reason);
                    scope = scope.max(s);
                }
                d => return d,
            }
        }
        Decision::Allow {
            reason: reasons.join("; "),
            scope,
        }
    }

    // ---------------------------------------------------------------- file reads

    fn decide_read(&self, tool: &str, path: &Path, roots: &SessionRoots, grant: bool) -> Decision {
        let shown = path.display();
        let covering = [tool, "Read"];
        if let Some((r, b)) = self.path_blocker(&covering, path, roots, false) {
            return deny(format!("{tool} of {shown} denied {}.", b.because(r)));
        }
        if roots.is_inside_workspace(path) {
            return allow_read(format!("{tool} of {shown} allowed: inside the workspace"));
        }
        if self.mode == PermissionMode::BypassPermissions {
            return allow_read(format!(
                "{tool} of {shown} allowed by permission mode bypassPermissions"
            ));
        }
        let home = self.home.as_deref();
        if let Some(r) = Self::path_rule(&self.allow, &covering, path, roots, home, true) {
            return allow_read(format!("{tool} of {shown} allowed by the rule `{}`", r.raw));
        }
        if grant {
            return allow_read(format!("{tool} of {shown} allowed by a PreToolUse hook"));
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
        rules
            .iter()
            .find(|r| Self::path_rule_matches(r, tools, path, roots, home, bare))
    }

    fn path_rule_matches(
        r: &Rule,
        tools: &[&str],
        path: &Path,
        roots: &SessionRoots,
        home: Option<&Path>,
        bare: bool,
    ) -> bool {
        tools.contains(&r.tool.as_str())
            && match &r.spec {
                Specifier::Any => bare,
                Specifier::Path(p) => p.matches(path, roots, home),
                _ => false,
            }
    }

    /// The first deny or ask path rule for `tools` that matches `path`.
    fn path_blocker(
        &self,
        tools: &[&str],
        path: &Path,
        roots: &SessionRoots,
        bare: bool,
    ) -> Option<(&Rule, Block)> {
        let home = self.home.as_deref();
        self.blocker(|r| Self::path_rule_matches(r, tools, path, roots, home, bare))
    }

    // ---------------------------------------------------------------- file writes

    /// Decide a write of `path` (Edit/Write tools and Bash redirections). `what` describes it.
    fn decide_write(
        &self,
        tool: &str,
        path: &Path,
        roots: &SessionRoots,
        what: &str,
        grant: bool,
    ) -> Decision {
        let home = self.home.as_deref();
        let covering: &[&str] = if tool == "Edit" {
            &["Edit"]
        } else {
            &[tool, "Edit"]
        };
        if let Some((r, b)) = self
            .path_blocker(covering, path, roots, true)
            .or_else(|| self.path_blocker(&["Read"], path, roots, false))
        {
            return deny(format!("{what} denied {}.", b.because(r)));
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
        if grant {
            return allow(format!("{what} allowed by a PreToolUse hook"));
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

    fn decide_other(&self, tool: &str, grant: bool) -> Decision {
        if tool == "AskUserQuestion" {
            return deny(
                "AskUserQuestion denied: runner runs unattended and no human will answer. Decide yourself and continue.",
            );
        }
        // A scoped deny/ask rule for a tool runner does not interpret: fail closed.
        if let Some((r, b)) = self.blocker(|r| r.names_tool(tool)) {
            return deny(format!(
                "{tool} denied {} (runner cannot check its specifier, so it applies to every call).",
                b.because(r)
            ));
        }
        if grant {
            return allow(format!("{tool} allowed by a PreToolUse hook"));
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

    fn decide_bash(
        &self,
        command: &str,
        cwd: &Path,
        roots: &SessionRoots,
        grant: bool,
    ) -> Decision {
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
        let mut scope = Scope::ReadOnly;
        for c in &analysis.commands {
            match self.bash_command(&shown, c, roots, grant) {
                Decision::Allow { reason, scope: s } => {
                    reasons.push(reason);
                    scope = scope.max(s);
                }
                d => return d,
            }
        }
        for w in &analysis.writes {
            match self.bash_write(&shown, w, roots, grant) {
                Decision::Allow { reason, .. } => {
                    reasons.push(reason);
                    scope = Scope::Write;
                }
                d => return d,
            }
        }
        for r in &analysis.reads {
            let what = format!(
                "Bash command \"{shown}\" (its input redirection from `{}`)",
                r.word.raw
            );
            match self.bash_read(&what, &r.word, &r.cwd, r.alt_cwd.as_deref(), roots, grant) {
                ReadCheck::Ok => reasons.push(format!("the input `{}` is readable", r.word.raw)),
                ReadCheck::Hard(d) => return d,
                ReadCheck::Soft(why) => {
                    return deny(format!(
                        "{what} denied: {why}. Read files inside the workdir, or add an allow rule such as Read(//path/**)."
                    ));
                }
            }
        }
        if reasons.is_empty() {
            reasons.push("it runs no commands".into());
        }
        Decision::Allow {
            reason: format!("Bash command \"{shown}\" allowed: {}", reasons.join("; ")),
            scope,
        }
    }

    /// Deny and ask rules, checked for every simple command first (past assignments, with and
    /// without wrappers; a dynamic word counts as matching if any expansion could match).
    fn bash_deny_rules(&self, shown: &str, a: &Analysis) -> Option<Decision> {
        for c in &a.commands {
            for (text, dynamic) in deny_texts(c) {
                if text.is_empty() {
                    continue;
                }
                let tail = if dynamic {
                    Tail::SomeContinuation
                } else {
                    Tail::Exact
                };
                if let Some((r, b)) = self.blocker(|r| {
                    r.tool == "Bash"
                        && matches!(&r.spec, Specifier::Bash(p) if p.matches(&text, tail))
                }) {
                    let why = match b {
                        Block::Deny => format!(
                            "matches the deny rule `{}`. Deny rules cannot be overridden; do this another way or not at all",
                            r.raw
                        ),
                        Block::Ask => format!(
                            "matches the ask rule `{}`, which would prompt for approval; runner runs unattended with nobody to ask, so ask rules deny in every mode",
                            r.raw
                        ),
                    };
                    return Some(deny(format!(
                        "Bash command \"{shown}\" denied: \"{}\" {why}.",
                        c.display(),
                    )));
                }
            }
        }
        None
    }

    /// Check one word naming a file a Bash command reads.
    fn bash_read(
        &self,
        what: &str,
        w: &ArgWord,
        cwd: &Path,
        alt_cwd: Option<&Path>,
        roots: &SessionRoots,
        grant: bool,
    ) -> ReadCheck {
        let mut candidates: Vec<PathBuf> = Vec::new();
        if w.raw == bash::PROCESS_SUBSTITUTION {
            // `<(...)`: a pipe from commands that are analysed themselves.
            return ReadCheck::Ok;
        }
        if let Some(rest) = &w.home_rest {
            match &self.home {
                Some(h) => {
                    candidates.push(paths::resolve(h, Path::new(rest.trim_start_matches('/'))))
                }
                None => {
                    return ReadCheck::Soft(format!(
                        "`{}` depends on $HOME, which is not set",
                        w.raw
                    ));
                }
            }
        } else if w.dynamic {
            // Only the static directory prefix is known.
            let dir = match w.text.rfind('/') {
                Some(0) => "/",
                Some(i) => &w.text[..i],
                None => ".",
            };
            for base in std::iter::once(cwd).chain(alt_cwd) {
                let p = paths::resolve(base, Path::new(dir));
                if is_kernel_fs(&p) {
                    return ReadCheck::Hard(deny(format!(
                        "{what} denied: `{}` reads under {}, which exposes process and system state (such as runner's own environment); runner never allows that.",
                        w.raw,
                        p.display()
                    )));
                }
            }
            if w.expands {
                return ReadCheck::Soft(format!(
                    "the path `{}` depends on an expansion, so runner cannot tell which file it reads",
                    w.raw
                ));
            }
            if w.raw.contains("..") {
                return ReadCheck::Soft(format!("the pattern `{}` can climb out with `..`", w.raw));
            }
            candidates.extend(
                std::iter::once(cwd)
                    .chain(alt_cwd)
                    .map(|b| paths::resolve(b, Path::new(dir))),
            );
        } else {
            if w.text.is_empty() {
                return ReadCheck::Ok;
            }
            candidates.extend(
                std::iter::once(cwd)
                    .chain(alt_cwd)
                    .map(|b| paths::resolve(b, Path::new(&w.text))),
            );
        }
        for p in candidates {
            if is_kernel_fs(&p) {
                return ReadCheck::Hard(deny(format!(
                    "{what} denied: `{}` reads {}, which exposes process and system state (such as runner's own environment); runner never allows that.",
                    w.raw,
                    p.display()
                )));
            }
            if let Some((r, b)) = self.path_blocker(&["Read"], &p, roots, false) {
                return ReadCheck::Hard(deny(format!(
                    "{what} denied: it reads {} {}.",
                    p.display(),
                    b.because(r)
                )));
            }
            let ok = roots.is_inside_workspace(&p)
                || self.mode == PermissionMode::BypassPermissions
                || grant
                || Self::path_rule(
                    &self.allow,
                    &["Read"],
                    &p,
                    roots,
                    self.home.as_deref(),
                    true,
                )
                .is_some();
            if !ok {
                return ReadCheck::Soft(format!(
                    "`{}` reads {}, outside the workdir and additional directories",
                    w.raw,
                    p.display()
                ));
            }
        }
        ReadCheck::Ok
    }

    fn bash_command(
        &self,
        shown: &str,
        c: &SimpleCmd,
        roots: &SessionRoots,
        grant: bool,
    ) -> Decision {
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
            return allow_read(format!("\"{display}\" only sets harmless variables"));
        }
        if c.shell_wrapper {
            return allow_read(format!(
                "\"{display}\" runs a script whose commands are checked one by one"
            ));
        }
        // File operands of known readers: confinement for the read-only set, hard denials
        // (kernel filesystems, Read deny/ask rules) whatever rule allows the command.
        let what = format!("Bash command \"{shown}\"");
        let mut outside: Option<String> = None;
        for w in readonly::read_paths(c.argv()).unwrap_or_default() {
            match self.bash_read(&what, &w, &c.cwd, c.alt_cwd.as_deref(), roots, grant) {
                ReadCheck::Ok => {}
                ReadCheck::Hard(d) => return d,
                ReadCheck::Soft(why) => {
                    outside.get_or_insert(why);
                }
            }
        }
        let read_only = if c.args_from_stdin {
            Err("`xargs` adds arguments runner cannot see".to_string())
        } else if let Some(why) = &outside {
            Err(why.clone())
        } else {
            readonly::check(c.argv(), &c.cwd, roots)
        };
        if read_only.is_ok() {
            return allow_read(format!("\"{display}\" is read-only"));
        }
        if self.mode == PermissionMode::AcceptEdits
            && let Some(d) = self.accept_edits_file_command(shown, c, roots)
        {
            return d;
        }
        let unrestricted = grant || self.mode == PermissionMode::BypassPermissions;
        if self.mode == PermissionMode::Plan && !grant {
            return deny(format!(
                "Bash command \"{shown}\" denied: permission mode plan allows read-only commands only, and \"{display}\" is not read-only ({}).",
                read_only.err().unwrap_or_default()
            ));
        }
        if unrestricted {
            let by = if grant {
                "a PreToolUse hook"
            } else {
                "permission mode bypassPermissions"
            };
            return match self.check_risks(shown, c, None, roots, grant) {
                Some(d) => d,
                None => allow(format!("\"{display}\" allowed by {by}")),
            };
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
                return match self.check_risks(shown, c, Some(r), roots, grant) {
                    Some(d) => d,
                    None => allow(format!("\"{display}\" allowed by the rule `{}`", r.raw)),
                };
            }
        }
        let argv: Vec<&str> = c.argv().iter().map(|w| w.raw.as_str()).collect();
        let not_ro = read_only.err().unwrap_or_default();
        let not_ro = if not_ro.contains("is not in the read-only command set") {
            String::new()
        } else {
            format!("; not read-only: {not_ro}")
        };
        deny(format!(
            "Bash command \"{shown}\" denied: no allow rule matches \"{}\" (permission mode {}{not_ro}). Add an allow rule such as {} to permit it.",
            argv.join(" "),
            self.mode.as_str(),
            suggest(c)
        ))
    }

    /// Risky arguments of a command that a rule (`rule`), bypass mode or a hook allows:
    /// file-writing flags are checked as Edits of their targets; code-running flags need a
    /// rule that names the flag (a bare `Bash` rule, bypass mode and hooks allow them).
    fn check_risks(
        &self,
        shown: &str,
        c: &SimpleCmd,
        rule: Option<&Rule>,
        roots: &SessionRoots,
        grant: bool,
    ) -> Option<Decision> {
        let display = c.display();
        for risk in args::risks(c.argv()) {
            match risk {
                args::Risk::Exec { flag, what } => {
                    let Some(r) = rule else { continue };
                    if r.is_bare() || r.raw.contains(flag.as_str()) {
                        continue;
                    }
                    let prefix = match &r.spec {
                        Specifier::Bash(p) => p.raw.trim_end_matches([':', ' ', '*']).to_string(),
                        _ => r.tool.clone(),
                    };
                    let flag_name = flag.split('=').next().unwrap_or(&flag);
                    return Some(deny(format!(
                        "Bash command \"{shown}\" denied: \"{display}\" matches the allow rule `{}`, but `{flag}` {what}, and a prefix rule does not allow that. Leave the option out, or add a rule that names it, such as Bash({prefix} {flag_name}:*).",
                        r.raw
                    )));
                }
                args::Risk::Write { flag, target } => {
                    let what = format!("Bash command \"{shown}\" (`{flag}` writes a file)");
                    let Some(t) = target.filter(|t| !t.dynamic && !t.text.is_empty()) else {
                        return Some(deny(format!(
                            "{what} denied: runner cannot tell which file `{flag}` writes."
                        )));
                    };
                    for base in std::iter::once(c.cwd.as_path()).chain(c.alt_cwd.as_deref()) {
                        let path = paths::resolve(base, Path::new(&t.text));
                        let d = self.decide_write("Edit", &path, roots, &what, grant);
                        if !d.is_allow() {
                            return Some(d);
                        }
                    }
                }
            }
        }
        None
    }

    /// acceptEdits: `mkdir`, `touch`, `mv`, `cp` with static operands that all lie inside the
    /// workdir (and pass the write checks) are allowed without a rule. `None`: not such a command.
    fn accept_edits_file_command(
        &self,
        shown: &str,
        c: &SimpleCmd,
        roots: &SessionRoots,
    ) -> Option<Decision> {
        let argv = c.argv();
        let name = argv.first()?.text.as_str();
        let (short, long): (&str, &[&str]) = match name {
            "mkdir" => ("pv", &["--parents", "--verbose"]),
            "touch" => ("acm", &["--no-create"]),
            "mv" => (
                "fnvTu",
                &[
                    "--force",
                    "--no-clobber",
                    "--verbose",
                    "--update",
                    "--no-target-directory",
                ],
            ),
            "cp" => (
                "rRafnpvTu",
                &[
                    "--recursive",
                    "--archive",
                    "--force",
                    "--no-clobber",
                    "--verbose",
                    "--update",
                    "--no-target-directory",
                ],
            ),
            _ => return None,
        };
        let mut operands = Vec::new();
        let mut end = false;
        for w in &argv[1..] {
            if w.dynamic {
                return None;
            }
            let t = w.text.as_str();
            if !end && t == "--" {
                end = true;
            } else if !end && t.starts_with("--") {
                if !long.contains(&t) {
                    return None;
                }
            } else if !end && t.starts_with('-') && t.len() > 1 {
                if !t[1..].chars().all(|ch| short.contains(ch)) {
                    return None;
                }
            } else {
                operands.push(t);
            }
        }
        if operands.is_empty() {
            return None;
        }
        let what = format!("Bash command \"{shown}\" (`{name}` writes its operands)");
        for op in operands {
            for base in std::iter::once(c.cwd.as_path()).chain(c.alt_cwd.as_deref()) {
                let path = paths::resolve(base, Path::new(op));
                if !paths::inside_workdir(roots, &path) {
                    return None;
                }
                let d = self.decide_write("Edit", &path, roots, &what, false);
                if !d.is_allow() {
                    return Some(d);
                }
            }
        }
        Some(allow(format!(
            "\"{}\" allowed: `{name}` inside the workdir in permission mode acceptEdits",
            c.display()
        )))
    }

    fn bash_write(
        &self,
        shown: &str,
        w: &FileWrite,
        roots: &SessionRoots,
        grant: bool,
    ) -> Decision {
        let what = format!(
            "Bash command \"{shown}\" (its redirection to `{}` writes {})",
            w.target,
            w.path.display()
        );
        for path in std::iter::once(&w.path).chain(w.alt_path.iter()) {
            let d = self.decide_write("Edit", path, roots, &what, grant);
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

/// The outcome of checking one file a Bash command reads.
enum ReadCheck {
    /// Inside the workspace, or allowed by a Read rule / mode / hook.
    Ok,
    /// Not auto-allowed (outside, or unknowable): the command is not read-only.
    Soft(String),
    /// Denied whatever else allows the command.
    Hard(Decision),
}

/// `/proc` and `/sys`: reading there exposes process state (`/proc/PID/environ`).
fn is_kernel_fs(p: &Path) -> bool {
    p.starts_with("/proc") || p.starts_with("/sys")
}

/// The path a read tool touches: `file_path` for Read, `path` (default the workdir) plus the
/// literal prefix of a Glob pattern.
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
