//! The decision for one tool call: deny rules, safety checks, mode, allow rules — in that order.
//!
//! With no human to ask, everything that would prompt is a [`Decision::Deny`] whose reason the
//! model can read: what was denied, why, which rule, and how to get it allowed.

use std::path::{Path, PathBuf};

use super::args::{self, Risk};
use super::bash::{self, Analysis, ArgWord, FileWrite, SimpleCmd};
use super::changes::Change;
use super::mode::PermissionMode;
use super::readonly;
use super::rule::{Rule, RuleError, Specifier, Tail};
use super::variables::{self, HARMLESS_ENV};
use super::{git, globs, matchtext, paths, posix, program, walk, wrappers};
use crate::access::Access;
use crate::roots::SessionRoots;

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

pub use runner_protocol::scope::Scope;

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
        /// The denial refused a file write (an Edit/Write path, a redirection, a command's
        /// output file): the task tried to change a file and could not.
        write: bool,
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
            Decision::Allow { reason, .. } | Decision::Deny { reason, .. } => reason,
        }
    }

    /// What an allowed call may do (read only for a denial: it does nothing).
    pub fn scope(&self) -> Scope {
        match self {
            Decision::Allow { scope, .. } => *scope,
            Decision::Deny { .. } => Scope::ReadOnly,
        }
    }

    /// The same decision, a denial marked as one of a file write.
    fn of_write(self) -> Decision {
        match self {
            Decision::Deny { reason, .. } => Decision::Deny {
                reason,
                write: true,
            },
            allowed => allowed,
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
        write: false,
    }
}

/// The permission policy of one task.
#[derive(Debug, Clone)]
pub struct Policy {
    mode: PermissionMode,
    allow: Vec<Rule>,
    /// Deny rules, then ask rules (tagged), in the order they are checked.
    blockers: Vec<(Rule, Block)>,
    home: Option<PathBuf>,
    /// More protected paths, relative to the workdir (the scripts of trusted hooks and checks).
    protected: Vec<PathBuf>,
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
        let allow = parse(allow)?;
        for r in &allow {
            if let Specifier::Bash(p) = &r.spec
                && let Some(prog) = p.program()
                && wrappers::is_wrapper(prog)
            {
                tracing::warn!(
                    "the allow rule `{}` allows `{prog}` itself, not the commands it runs: each command `{prog}` wraps needs its own rule",
                    r.raw
                );
            }
        }
        Ok(Policy {
            mode,
            allow,
            blockers,
            home: std::env::var_os("HOME").map(PathBuf::from),
            protected: Vec::new(),
        })
    }

    /// Protect `paths` (relative to the workdir) too: no tool call writes them, whatever
    /// allows it (the scripts trusted hooks and checks run).
    pub fn with_protected(mut self, paths: Vec<PathBuf>) -> Self {
        self.protected = paths;
        self
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
    /// directory alone: it analyses cleanly, writes no file by redirection, opens no network
    /// connection, sets no variable that steers later commands, and every simple command is in
    /// the read-only set (with only harmless static assignments, no arguments runner cannot
    /// see, file operands readable without a rule) and none is `cd`/`pushd`/`popd`. The
    /// executor uses this to run such calls concurrently; it does not decide permission.
    pub fn is_read_only_bash(&self, command: &str, cwd: &Path, roots: &SessionRoots) -> bool {
        let Ok(a) = bash::analyse(command, cwd) else {
            return false;
        };
        if !a.writes.is_empty()
            || !a.network.is_empty()
            || self.bash_deny_rules(&preview(command), &a).is_some()
            || !a.loop_variables.iter().all(variables::shell_variable_ok)
        {
            return false;
        }
        let what = "Bash command";
        let commands_ok = a.commands.iter().all(|c| {
            if self.variables(what, c).is_some() {
                return false;
            }
            if c.words.is_empty() {
                return true;
            }
            if c.layers.iter().any(|l| l.needs_rule) || c.foreign_shell.is_some() {
                return false;
            }
            if c.shell_wrapper {
                // A `bash -c` whose own commands are in the analysis.
                return c.wrapper_writes.is_empty();
            }
            if matches!(
                c.argv().first().map(|w| w.text.as_str()),
                Some("cd" | "pushd" | "popd" | "chdir")
            ) {
                return false;
            }
            matches!(self.read_only(what, c, roots, false), Ok(None))
        });
        commands_ok
            && a.reads.iter().all(|r| {
                if r.after_change == Some(Change::Links) {
                    return false;
                }
                let cwds: Vec<&Path> = std::iter::once(r.cwd.as_path())
                    .chain(r.other_cwds.iter().map(PathBuf::as_path))
                    .collect();
                matches!(
                    self.bash_read(what, &r.word, &cwds, roots, false),
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
        if is_kernel_fs(path) {
            return deny(format!(
                "{tool} of {shown} denied: it exposes process and system state (such as runner's own environment); runner never allows that."
            ));
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

    /// The first deny or ask path rule for `tools` that matches `path`, compared without case
    /// (a case-insensitive file system opens `.ENV` for `.env`).
    fn path_blocker(
        &self,
        tools: &[&str],
        path: &Path,
        roots: &SessionRoots,
        bare: bool,
    ) -> Option<(&Rule, Block)> {
        let home = self.home.as_deref();
        self.blocker(|r| {
            tools.contains(&r.tool.as_str())
                && match &r.spec {
                    Specifier::Any => bare,
                    Specifier::Path(p) => p.matches_folded(path, roots, home),
                    _ => false,
                }
        })
    }

    /// Whether a write of `path` is blocked whatever allows it: a deny or ask rule (Edit, the
    /// tool's own, or Read), a protected path no allow rule names, a kernel file system.
    fn write_blocked(
        &self,
        covering: &[&str],
        path: &Path,
        roots: &SessionRoots,
        what: &str,
    ) -> Option<Decision> {
        self.write_blocker(covering, path, roots, what)
            .map(Decision::of_write)
    }

    /// [`Self::write_blocked`], its denial not yet marked as one of a write.
    fn write_blocker(
        &self,
        covering: &[&str],
        path: &Path,
        roots: &SessionRoots,
        what: &str,
    ) -> Option<Decision> {
        let home = self.home.as_deref();
        if let Some((r, b)) = self
            .path_blocker(covering, path, roots, true)
            .or_else(|| self.path_blocker(&["Read"], path, roots, false))
        {
            return Some(deny(format!("{what} denied {}.", b.because(r))));
        }
        if is_kernel_fs(path) {
            return Some(deny(format!(
                "{what} denied: {} is process and system state; runner never writes there.",
                path.display()
            )));
        }
        let folded = paths::fold(&path.to_string_lossy());
        let marker = paths::protected_marker(path, roots).or_else(|| {
            self.protected.iter().find_map(|rel| {
                let p = paths::fold(&roots.workdir.join(rel).to_string_lossy());
                (folded == p || folded.starts_with(&format!("{p}/")))
                    .then(|| rel.display().to_string())
            })
        });
        if let Some(marker) = marker {
            let named = self.allow.iter().find(|r| {
                covering.contains(&r.tool.as_str())
                    && matches!(&r.spec, Specifier::Path(p) if p.names(&marker, path, roots, home))
            });
            if named.is_none() {
                return Some(deny(format!(
                    "{what} denied: `{marker}` is a protected path; runner never writes there in any mode (bypassPermissions included) unless an allow rule names the path, such as Edit({}).",
                    rule_path(path, roots)
                )));
            }
        }
        None
    }

    // ---------------------------------------------------------------- file writes

    /// Decide a write of `path` (Edit/Write tools and Bash redirections). `what` describes it.
    /// A denial is marked as one of a write (`write` of [`Decision::Deny`]).
    fn decide_write(
        &self,
        tool: &str,
        path: &Path,
        roots: &SessionRoots,
        what: &str,
        grant: bool,
    ) -> Decision {
        self.decide_write_path(tool, path, roots, what, grant)
            .of_write()
    }

    fn decide_write_path(
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
        if let Some(d) = self.write_blocked(covering, path, roots, what) {
            return d;
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
        if let Some(own) = roots.in_worktree(path) {
            return deny(format!(
                "{what} denied: {} is in the checkout this task's git worktree was made from; the task works in its own worktree, where that file is {}. Edit {} instead.",
                path.display(),
                own.display(),
                rule_path(path, roots)
            ));
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
        if let Some(target) = analysis.network.first() {
            if !(grant || self.mode == PermissionMode::BypassPermissions) {
                return deny(format!(
                    "Bash command \"{shown}\" denied: the redirection `{target}` opens a network connection (bash's /dev/tcp and /dev/udp are sockets, not files). Use a tool made for the request, with a rule that allows it."
                ));
            }
            reasons.push(format!("`{target}` is a network connection"));
            scope = Scope::Write;
        }
        if let Some(v) = analysis
            .loop_variables
            .iter()
            .find(|v| !variables::shell_variable_ok(v))
        {
            return deny(format!(
                "Bash command \"{shown}\" denied: the loop sets the variable {}, which changes how later commands run (use a lower-case name).",
                v.name
            ));
        }
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
            let cwds: Vec<&Path> = std::iter::once(r.cwd.as_path())
                .chain(r.other_cwds.iter().map(PathBuf::as_path))
                .collect();
            let check = match r.after_change {
                Some(Change::Links) => self.changed_read(&what, &r.word),
                _ => self.bash_read(&what, &r.word, &cwds, roots, grant),
            };
            match check {
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

    /// Deny and ask rules, checked for every simple command first: with and without each
    /// wrapper, past leading options, with aliases spelled out (see [`matchtext`]); a text that
    /// stops at a dynamic word, or before arguments runner cannot see, matches if any
    /// continuation could.
    fn bash_deny_rules(&self, shown: &str, a: &Analysis) -> Option<Decision> {
        for c in &a.commands {
            for (text, dynamic) in matchtext::candidates(c) {
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

    /// Whether a Read deny or ask rule exists (any run-time path might be one it covers).
    fn has_read_blockers(&self) -> bool {
        self.blockers
            .iter()
            .any(|(r, _)| r.tool == "Read" && matches!(r.spec, Specifier::Path(_) | Specifier::Any))
    }

    /// Check one word naming a file a Bash command reads, run in any of `cwds`.
    fn bash_read(
        &self,
        what: &str,
        w: &ArgWord,
        cwds: &[&Path],
        roots: &SessionRoots,
        grant: bool,
    ) -> ReadCheck {
        if w.raw == bash::PROCESS_SUBSTITUTION {
            // `<(...)`: a pipe from commands that are analysed themselves.
            return ReadCheck::Ok;
        }
        if let Some(pattern) = &w.glob {
            let owned: Vec<PathBuf> = cwds.iter().map(|p| p.to_path_buf()).collect();
            if let Some(words) = globs::expand(pattern, &owned) {
                for word in words {
                    match self.bash_read(what, &ArgWord::literal(&word), cwds, roots, grant) {
                        ReadCheck::Ok => {}
                        other => return other,
                    }
                }
                return ReadCheck::Ok;
            }
        }
        let mut candidates: Vec<PathBuf> = Vec::new();
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
            for base in cwds {
                let p = paths::resolve(base, Path::new(dir));
                if is_kernel_fs(&p) {
                    return ReadCheck::Hard(deny(format!(
                        "{what} denied: `{}` reads under {}, which exposes process and system state (such as runner's own environment); runner never allows that.",
                        w.raw,
                        p.display()
                    )));
                }
            }
            if self.has_read_blockers() {
                return ReadCheck::Hard(deny(format!(
                    "{what} denied: runner cannot tell which file `{}` reads, and a Read deny or ask rule may cover it. Name the file in the command.",
                    w.raw
                )));
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
            candidates.extend(cwds.iter().map(|b| paths::resolve(b, Path::new(dir))));
        } else {
            if w.text.is_empty() {
                return ReadCheck::Ok;
            }
            candidates.extend(cwds.iter().map(|b| paths::resolve(b, Path::new(&w.text))));
        }
        for p in candidates {
            if let Some(c) = self.read_path(what, &w.raw, &p, roots, grant) {
                return c;
            }
        }
        ReadCheck::Ok
    }

    /// One resolved path a Bash command reads: kernel file systems and Read deny or ask rules
    /// deny; outside the workspace, without a Read rule or bypass mode, it is not read-only.
    fn read_path(
        &self,
        what: &str,
        raw: &str,
        p: &Path,
        roots: &SessionRoots,
        grant: bool,
    ) -> Option<ReadCheck> {
        if is_kernel_fs(p) {
            return Some(ReadCheck::Hard(deny(format!(
                "{what} denied: `{raw}` reads {}, which exposes process and system state (such as runner's own environment); runner never allows that.",
                p.display()
            ))));
        }
        if let Some((r, b)) = self.path_blocker(&["Read"], p, roots, false) {
            return Some(ReadCheck::Hard(deny(format!(
                "{what} denied: it reads {} {}.",
                p.display(),
                b.because(r)
            ))));
        }
        let ok = roots.is_inside_workspace(p)
            || self.mode == PermissionMode::BypassPermissions
            || grant
            || Self::path_rule(&self.allow, &["Read"], p, roots, self.home.as_deref(), true)
                .is_some();
        (!ok).then(|| {
            ReadCheck::Soft(format!(
                "`{raw}` reads {}, outside the workdir and additional directories",
                p.display()
            ))
        })
    }

    /// A recursive read of the directory `w`: a Read deny or ask rule covering anything inside
    /// denies it, and so does a symlink it follows (`follow`) to a denied or kernel path; a
    /// symlink it follows out of the workspace makes it not read-only.
    fn recursive_read(
        &self,
        what: &str,
        w: &ArgWord,
        follow: bool,
        cwds: &[&Path],
        roots: &SessionRoots,
        grant: bool,
    ) -> ReadCheck {
        if w.dynamic {
            // Handled as an ordinary read (it cannot be confined).
            return ReadCheck::Ok;
        }
        for base in cwds {
            let dir = paths::resolve(base, Path::new(&w.text));
            if !dir.is_dir() {
                continue;
            }
            let overlapping = self.read_blockers_overlap(&dir, roots);
            if !overlapping && !follow {
                continue;
            }
            let found = walk::find(&dir, |e| {
                if overlapping
                    && let Some(c) = self.read_path(what, &w.raw, e.path, roots, grant)
                    && matches!(c, ReadCheck::Hard(_))
                {
                    return Some(c);
                }
                if follow && e.symlink {
                    let target = paths::resolve(Path::new("/"), e.path);
                    if let Some(c) = self.read_path(what, &w.raw, &target, roots, grant) {
                        return Some(match c {
                            ReadCheck::Soft(_) => ReadCheck::Soft(format!(
                                "`{}` follows the symlink {} out of the workspace (to {})",
                                w.raw,
                                e.path.display(),
                                target.display()
                            )),
                            other => other,
                        });
                    }
                    if target.is_dir() && self.read_blockers_overlap(&target, roots) {
                        return Some(ReadCheck::Hard(deny(format!(
                            "{what} denied: `{}` follows the symlink {} into {}, which holds paths a Read deny or ask rule covers.",
                            w.raw,
                            e.path.display(),
                            target.display()
                        ))));
                    }
                }
                None
            });
            match found {
                Ok(Some(c)) => return c,
                Ok(None) => {}
                Err(walk::TooLarge) if overlapping => {
                    return ReadCheck::Hard(deny(format!(
                        "{what} denied: `{}` reads a tree of more than {} entries recursively, too large to check against the Read deny and ask rules. Search a narrower directory.",
                        w.raw,
                        walk::MAX_ENTRIES
                    )));
                }
                Err(walk::TooLarge) => {
                    return ReadCheck::Soft(format!(
                        "`{}` follows symlinks through a tree too large to check",
                        w.raw
                    ));
                }
            }
        }
        ReadCheck::Ok
    }

    /// Whether a Read deny or ask rule may cover something at or below `dir` (or `dir` lies
    /// below what one covers).
    fn read_blockers_overlap(&self, dir: &Path, roots: &SessionRoots) -> bool {
        let home = self.home.as_deref();
        let folded = |p: &Path| paths::fold(&p.to_string_lossy());
        let dir_f = folded(dir);
        self.blockers.iter().any(|(r, _)| {
            r.tool == "Read"
                && match &r.spec {
                    Specifier::Path(p) => p.base(roots, home).is_some_and(|b| {
                        let b = folded(&b);
                        b.starts_with(&dir_f) || dir_f.starts_with(&b)
                    }),
                    _ => false,
                }
        })
    }

    /// The variables a command sets: its own environment (`FOO=1 cmd`, `env FOO=1 cmd`) only
    /// harmless static ones; shell variables (`x=1` alone, `read`, `declare`, `printf -v` ...)
    /// only names that steer nothing.
    fn variables(&self, shown: &str, c: &SimpleCmd) -> Option<Decision> {
        let display = c.display();
        let statement = c.words.is_empty();
        if let Some(a) = c.assignments.iter().find(|a| {
            if statement {
                !variables::shell_variable_ok(a)
            } else {
                !variables::env_ok(a)
            }
        }) {
            return Some(deny(format!(
                "Bash command \"{shown}\" denied: \"{display}\" sets the variable {} (only static values of {} are allowed{}). Run the command without the assignment.",
                a.name,
                HARMLESS_ENV.join(", "),
                if statement {
                    ", or shell variables with lower-case names"
                } else {
                    ""
                }
            )));
        }
        let exports = exports(c);
        if let Some(a) = c.sets.iter().find(|a| {
            if exports {
                !variables::export_ok(a)
            } else {
                !variables::shell_variable_ok(a)
            }
        }) {
            return Some(deny(format!(
                "Bash command \"{shown}\" denied: \"{display}\" sets the variable {}, which changes how later commands run (shell variables may have lower-case names only, or be one of {}).",
                a.name,
                HARMLESS_ENV.join(", ")
            )));
        }
        None
    }

    /// Whether `c` is read-only (no rule needed). `Ok(None)`: it is; `Ok(Some(why))`: it is not
    /// (the reason); `Err`: something in it is denied whatever allows the command.
    fn read_only(
        &self,
        what: &str,
        c: &SimpleCmd,
        roots: &SessionRoots,
        grant: bool,
    ) -> Result<Option<String>, Decision> {
        let cwds: Vec<&Path> = c.cwds().collect();
        let argv = expand_argv(c);
        let mut not: Option<String> = None;
        if c.unseen_args {
            not = Some(format!(
                "`{}` gets arguments runner cannot see",
                c.argv()
                    .first()
                    .map(|w| w.text.as_str())
                    .unwrap_or_default()
            ));
        }
        if c.unseen_args
            && self.has_read_blockers()
            && !argv
                .first()
                .is_some_and(|w| NO_FILE_READS.contains(&w.text.as_str()))
        {
            return Err(deny(format!(
                "{what} denied: `{}` gets arguments runner cannot see (from its input, `xargs` or `find`), which may name a file a Read deny or ask rule covers. Name the files in the command.",
                argv.first().map(|w| w.raw.as_str()).unwrap_or_default()
            )));
        }
        if let Err(why) = readonly::check(&argv, &c.cwd, roots) {
            not.get_or_insert(why.0);
        }
        if c.env_cleared {
            not.get_or_insert(
                "`env -i`/`env -u` removes the environment runner sets for read-only commands (it keeps git from running programs its configuration names)".into(),
            );
        }
        // Files it reads: confinement for the read-only set; hard denials (kernel file
        // systems, Read deny and ask rules) whatever rule allows the command.
        let mut reads = readonly::copy_reads(&argv).unwrap_or_else(|| {
            readonly::reads(&argv).unwrap_or_else(|_| readonly::Reads {
                paths: readonly::lenient_paths(&argv),
                recursive: None,
            })
        });
        // `git grep` searches the tree under its directory.
        if argv.first().is_some_and(|w| w.text == "git")
            && git::globals(&argv[1..])
                .sub
                .is_some_and(|s| argv.get(s + 1).is_some_and(|w| w.text == "grep"))
        {
            reads.paths.push(ArgWord::literal("."));
            reads.recursive = Some(false);
        }
        if let Some(change) = c.after_change {
            self.changed_paths(what, c, change, &reads, &mut not)?;
        }
        for w in &reads.paths {
            match self.bash_read(what, w, &cwds, roots, grant) {
                ReadCheck::Ok => {}
                ReadCheck::Hard(d) => return Err(d),
                ReadCheck::Soft(why) => {
                    not.get_or_insert(why);
                }
            }
            if let Some(follow) = reads.recursive {
                match self.recursive_read(what, w, follow, &cwds, roots, grant) {
                    ReadCheck::Ok => {}
                    ReadCheck::Hard(d) => return Err(d),
                    ReadCheck::Soft(why) => {
                        not.get_or_insert(why);
                    }
                }
            }
        }
        if argv.first().is_some_and(|w| w.text == "git") {
            // A read that names files outside the repository, or a repository whose own
            // configuration runs programs, is not read-only.
            for w in git::outside_candidates(&argv[1..]) {
                match self.bash_read(what, &w, &cwds, roots, grant) {
                    ReadCheck::Ok => {}
                    ReadCheck::Hard(d) => return Err(d),
                    ReadCheck::Soft(why) => {
                        not.get_or_insert(why);
                    }
                }
            }
            self.git_blobs(what, &argv, c, roots)?;
            self.git_contents(what, &argv, c, roots)?;
            // Pathspecs (`git log -p -- .env`, `git diff .env`): the history and changes of a
            // path a Read deny rule covers are its contents.
            let dashdash = argv.iter().position(|w| w.text == "--");
            for (i, w) in argv.iter().enumerate().skip(1) {
                if w.dynamic || w.text.starts_with('-') || w.text.is_empty() {
                    continue;
                }
                let after = dashdash.is_some_and(|d| i > d);
                for cwd in &cwds {
                    let p = paths::resolve(cwd, Path::new(w.text.trim_start_matches(":/")));
                    if !(after || p.exists()) {
                        continue;
                    }
                    if let Some((r, b)) = self.path_blocker(&["Read"], &p, roots, false) {
                        return Err(deny(format!(
                            "{what} denied: `{}` names {} {}.",
                            w.raw,
                            p.display(),
                            b.because(r)
                        )));
                    }
                }
            }
            if not.is_none() {
                let mut ceilings: Vec<&Path> =
                    vec![roots.repo_root.as_deref().unwrap_or(&roots.workdir)];
                ceilings.extend(roots.additional_dirs.iter().map(PathBuf::as_path));
                for cwd in &cwds {
                    if let Some(why) = git::config_risk(cwd, &ceilings) {
                        not = Some(why);
                        break;
                    }
                }
            }
        }
        Ok(not)
    }

    /// A command after an earlier one of the line changed the file system ([`Change`]): its
    /// globs (after new names) or all its paths (after links) are unknown. It is then not
    /// read-only, and with a Read deny or ask rule it is denied.
    fn changed_paths(
        &self,
        what: &str,
        c: &SimpleCmd,
        change: Change,
        reads: &readonly::Reads,
        not: &mut Option<String>,
    ) -> Result<(), Decision> {
        let argv = c.argv();
        let unknown = match change {
            Change::Names => argv[1..].iter().find(|w| w.glob.is_some()),
            Change::Links => argv[1..]
                .iter()
                .find(|w| w.glob.is_some())
                .or(reads.paths.first()),
        };
        let Some(w) = unknown else {
            return Ok(());
        };
        if let ReadCheck::Hard(d) = self.changed_read(what, w) {
            return Err(d);
        }
        not.get_or_insert_with(|| {
            format!(
                "an earlier command of the line creates or moves paths, so runner cannot tell what `{}` is when this command runs",
                w.raw
            )
        });
        Ok(())
    }

    /// A path read after an earlier command of the line may have made links on its way:
    /// unknown (denied outright under a Read deny or ask rule).
    fn changed_read(&self, what: &str, w: &ArgWord) -> ReadCheck {
        if self.has_read_blockers() {
            return ReadCheck::Hard(deny(format!(
                "{what} denied: an earlier command of the line creates links or new names (such as `ln`, `tar -x`, `unzip`, `git apply`, `patch`, `mkdir`, a redirection), so runner cannot tell which file `{}` reads then, and a Read deny or ask rule may cover it. Run the commands as separate calls.",
                w.raw
            )));
        }
        ReadCheck::Soft(format!(
            "an earlier command of the line may have made links, so runner cannot tell which file `{}` reads",
            w.raw
        ))
    }

    /// `git NAME` where NAME is no git command but a shell alias in the repository's or the
    /// user's git configuration (`alias.NAME = !BODY`): git runs BODY with `sh -c` at the top
    /// of the repository, so BODY is decided as a Bash command there; a denial of it denies the
    /// git command. `None`: no such alias, or BODY is allowed (git itself is then decided as
    /// usual).
    fn git_alias(
        &self,
        shown: &str,
        c: &SimpleCmd,
        roots: &SessionRoots,
        grant: bool,
    ) -> Option<Decision> {
        let argv = c.argv();
        if program::system_name(&argv.first()?.text) != Some("git") {
            return None;
        }
        let sub = &argv[1 + git::globals(&argv[1..]).sub?];
        if sub.dynamic || matchtext::GIT_BUILTINS.contains(&sub.text.as_str()) {
            return None;
        }
        let root = roots.repo_root.as_deref().unwrap_or(&roots.workdir);
        let mut files = Vec::new();
        if let Some(h) = &self.home {
            files.push(h.join(".gitconfig"));
            files.push(h.join(".config/git/config"));
        }
        for cwd in c.cwds() {
            if let Some(repo) = git::find_repository(cwd, &[root]) {
                files.push(repo.git_dir.join("config"));
            }
        }
        let value = git::config_alias(&files, &sub.text)?;
        let body = value.strip_prefix('!')?;
        // An alias that runs another configured alias is not followed (it could loop).
        let nested = bash::analyse(body, root).map_or(true, |a| {
            a.commands.iter().any(|c| {
                let argv = c.argv();
                argv.first()
                    .and_then(|w| program::system_name(&w.text))
                    .is_some_and(|n| n == "git")
                    && git::globals(&argv[1..]).sub.is_none_or(|i| {
                        !matchtext::GIT_BUILTINS.contains(&argv[1 + i].text.as_str())
                    })
            })
        });
        let why = match posix::check(body) {
            Err(what) => {
                format!("its body uses {what}, which a POSIX shell reads differently from bash")
            }
            Ok(()) if nested => "its body runs git with a subcommand that may be another alias, which runner does not follow".to_string(),
            Ok(()) => match self.decide_bash(body, root, roots, grant) {
                Decision::Allow { .. } => return None,
                Decision::Deny { reason, .. } => reason,
            },
        };
        Some(deny(format!(
            "Bash command \"{shown}\" denied: `git {}` is the alias `{value}`, which git runs as a shell command: {why}",
            sub.raw
        )))
    }

    /// `git show REV:PATH`, `:N:PATH`, `HEAD^{/msg: x}:PATH` read the blob of PATH: Read deny
    /// rules hold for it. Every text after any colon of a word is taken as a path (a colon
    /// may stand inside the revision).
    fn git_blobs(
        &self,
        what: &str,
        argv: &[ArgWord],
        c: &SimpleCmd,
        roots: &SessionRoots,
    ) -> Result<(), Decision> {
        let root = roots.repo_root.as_deref().unwrap_or(&roots.workdir);
        for w in argv[1..].iter().filter(|w| !w.text.starts_with('-')) {
            for (i, _) in w.text.match_indices(':') {
                let path = &w.text[i + 1..];
                if path.is_empty() {
                    continue;
                }
                let base = if path.starts_with("./") || path.starts_with("../") {
                    c.cwd.as_path()
                } else {
                    root
                };
                let p = paths::resolve(base, Path::new(path.trim_start_matches('/')));
                if let Some((r, b)) = self.path_blocker(&["Read"], &p, roots, false) {
                    return Err(deny(format!(
                        "{what} denied: `{}` reads {} from the repository {}.",
                        w.raw,
                        p.display(),
                        b.because(r)
                    )));
                }
            }
        }
        Ok(())
    }

    /// A git command that prints file contents from the repository or its history (`git show
    /// HEAD`, `git log -p`, `git diff`, `git archive`, `git cat-file`, `git grep`), while a
    /// Read deny or ask rule covers a path in the repository: its output may hold that path's
    /// contents, so it is denied unless its pathspecs (after `--`, or operands that exist)
    /// all name paths no such rule reaches. `git show` of blobs only (`REV:PATH`) is checked
    /// by [`Self::git_blobs`].
    fn git_contents(
        &self,
        what: &str,
        argv: &[ArgWord],
        c: &SimpleCmd,
        roots: &SessionRoots,
    ) -> Result<(), Decision> {
        let root = roots.repo_root.as_deref().unwrap_or(&roots.workdir);
        if !self.read_blockers_overlap(root, roots) {
            return Ok(());
        }
        let Some((sub, from)) = git::content_reader(&argv[1..]) else {
            return Ok(());
        };
        let words = &argv[1 + from..];
        let dashdash = words.iter().position(|w| w.text == "--");
        let before = &words[..dashdash.unwrap_or(words.len())];
        let operands: Vec<&ArgWord> = before
            .iter()
            .filter(|w| !w.text.starts_with('-') || w.dynamic)
            .collect();
        if sub == "show" && !operands.is_empty() && operands.iter().all(|w| w.text.contains(':')) {
            return Ok(());
        }
        let exists = |w: &ArgWord| {
            c.cwds()
                .any(|d| paths::resolve(d, Path::new(&w.text)).exists())
        };
        let mut specs: Vec<&ArgWord> = operands
            .into_iter()
            .filter(|w| !w.dynamic && !w.text.is_empty() && exists(w))
            .collect();
        if let Some(d) = dashdash {
            specs.extend(words[d + 1..].iter());
        }
        let restricted = !specs.is_empty()
            && sub != "cat-file"
            && specs.iter().all(|w| {
                !w.dynamic
                    && !w.text.starts_with(':')
                    && !w.text.contains(['*', '?', '['])
                    && c.cwds().all(|d| {
                        let p = paths::resolve(d, Path::new(&w.text));
                        !self.read_blockers_overlap(&p, roots)
                    })
            });
        if restricted {
            return Ok(());
        }
        Err(deny(format!(
            "{what} denied: `git {sub}` prints file contents from the repository or its history, which may include a path a Read deny or ask rule covers. Name the paths it may show after `--` (such as `git {sub} … -- src`), or ask for names and statistics only (`--stat`)."
        )))
    }

    fn bash_command(
        &self,
        shown: &str,
        c: &SimpleCmd,
        roots: &SessionRoots,
        grant: bool,
    ) -> Decision {
        let display = c.display();
        if let Some(d) = self.variables(shown, c) {
            return d;
        }
        if c.words.is_empty() {
            return allow_read(format!("\"{display}\" only sets harmless variables"));
        }
        if let Some(d) = self.git_alias(shown, c, roots, grant) {
            return d;
        }
        let unrestricted = grant || self.mode == PermissionMode::BypassPermissions;
        // A shell runner does not parse: only a rule that names it.
        if let Some(sh) = &c.foreign_shell {
            return match self.rule_for(c, c.start, true) {
                Some(r) if matches!(&r.spec, Specifier::Bash(p) if p.program() == Some(sh.as_str())) => {
                    allow(format!(
                        "\"{display}\" allowed by the rule `{}`, which names {sh}",
                        r.raw
                    ))
                }
                _ => deny(format!(
                    "Bash command \"{shown}\" denied: `{sh}` runs code runner does not analyse (another shell's language, where zsh glob qualifiers and fish substitutions run code, or commands from a pipe or file). Use `bash -c 'COMMANDS'`, or add an allow rule that names the shell, such as Bash({sh}:*)."
                )),
            };
        }
        // Wrappers that change what the wrapped command may do need a rule of their own.
        for l in c.layers.iter().filter(|l| l.needs_rule) {
            if !unrestricted && self.rule_for(c, l.at, false).is_none() {
                return deny(format!(
                    "Bash command \"{shown}\" denied: `{}` changes what the command it wraps may do, and no allow rule matches \"{}\". Add a rule that names it, such as Bash({}:*); the wrapped command needs its own rule too.",
                    l.name,
                    c.match_text(l.at).0.trim_end(),
                    l.name
                ));
            }
        }
        let mut scope = Scope::ReadOnly;
        for w in &c.wrapper_writes {
            let d = self.modified_files(shown, w, c, roots, grant);
            if !d.is_allow() {
                return d;
            }
            scope = Scope::Write;
        }
        if c.layers.iter().any(|l| l.needs_rule) {
            scope = Scope::Write;
        }
        if c.shell_wrapper {
            return Decision::Allow {
                reason: format!(
                    "\"{display}\" runs a script whose commands are checked one by one"
                ),
                scope,
            };
        }
        let what = format!("Bash command \"{shown}\"");
        let read_only = match self.read_only(&what, c, roots, grant) {
            Ok(r) => r,
            Err(d) => return d,
        };
        let Some(not_ro) = read_only else {
            return Decision::Allow {
                reason: format!("\"{display}\" is read-only"),
                scope,
            };
        };
        if c.unseen_args
            && let Some(risk) = args::unseen_risk(c.argv())
            && let Risk::Exec { flag, .. } = risk
        {
            return deny(format!(
                "Bash command \"{shown}\" denied: \"{display}\" gives `{flag}` arguments runner cannot see (from its input or `find`), and an argument of `{flag}` can write files, protected paths included, or run commands. List the arguments in the command itself."
            ));
        }
        if self.mode == PermissionMode::AcceptEdits
            && let Some(d) = self.accept_edits_file_command(shown, c, roots)
        {
            return d;
        }
        if self.mode == PermissionMode::Plan && !grant {
            return deny(format!(
                "Bash command \"{shown}\" denied: permission mode plan allows read-only commands only, and \"{display}\" is not read-only ({not_ro})."
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
        if let Some(r) = self.rule_for(c, c.start, true) {
            return match self.check_risks(shown, c, Some(r), roots, grant) {
                Some(d) => d,
                None => allow(format!("\"{display}\" allowed by the rule `{}`", r.raw)),
            };
        }
        let argv: Vec<&str> = c.argv().iter().map(|w| w.raw.as_str()).collect();
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

    /// The allow rule that matches `c`'s words from `from` on (the command after its wrappers,
    /// or a wrapper). `harmless_globals`: git's harmless global options (`--no-pager`) may be
    /// skipped for the match.
    fn rule_for(&self, c: &SimpleCmd, from: usize, harmless_globals: bool) -> Option<&Rule> {
        let (text, dynamic) = c.match_text(from);
        let mut texts = vec![(text, dynamic)];
        let words = c.words.get(from..).unwrap_or(&[]);
        if harmless_globals && words.first().is_some_and(|w| w.text == "git") {
            let g = git::globals(&words[1..]);
            if let (Some(sub), true) = (g.sub, g.harmless)
                && sub > 0
            {
                let mut t = String::from("git");
                let mut dynamic = false;
                for w in &words[1 + sub..] {
                    t.push(' ');
                    t.push_str(&w.text);
                    if w.dynamic {
                        dynamic = true;
                        break;
                    }
                }
                if c.unseen_args && !dynamic {
                    t.push(' ');
                    dynamic = true;
                }
                texts.push((t, dynamic));
            }
        }
        self.allow.iter().find(|r| {
            r.tool == "Bash"
                && texts.iter().any(|(text, dynamic)| {
                    let tail = if *dynamic {
                        Tail::AnyContinuation
                    } else {
                        Tail::Exact
                    };
                    match &r.spec {
                        Specifier::Any => true,
                        Specifier::Bash(p) => p.matches(text, tail),
                        _ => false,
                    }
                })
        })
    }

    /// Risky arguments of a command that a rule (`rule`), bypass mode or a hook allows:
    /// file-writing flags are checked as Edits of their targets; code-running flags need a
    /// rule that names the flag (a bare `Bash` rule, bypass mode and hooks allow them); what
    /// the command writes by design keeps protected paths and Edit deny rules; writes runner
    /// cannot see need a rule that names the command.
    fn check_risks(
        &self,
        shown: &str,
        c: &SimpleCmd,
        rule: Option<&Rule>,
        roots: &SessionRoots,
        grant: bool,
    ) -> Option<Decision> {
        let display = c.display();
        let argv = expand_argv(c);
        for risk in args::risks(&argv) {
            if c.after_change == Some(Change::Links) && !matches!(risk, Risk::Exec { .. }) {
                return Some(deny(format!(
                    "Bash command \"{shown}\" denied: \"{display}\" writes files after an earlier command of the line may have created links or moved entries (such as `ln`, `tar -x`, `git apply`), so runner cannot tell where its writes land. Run the commands as separate calls."
                )));
            }
            match risk {
                Risk::Exec { flag, what } => {
                    let Some(r) = rule else { continue };
                    if r.is_bare() || rule_names_flag(r, &flag) {
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
                Risk::Write { flag, target } => {
                    let what = format!("Bash command \"{shown}\" (`{flag}` writes a file)");
                    let Some(t) = target.filter(|t| !t.dynamic && !t.text.is_empty()) else {
                        return Some(deny(format!(
                            "{what} denied: runner cannot tell which file `{flag}` writes."
                        )));
                    };
                    for base in c.cwds() {
                        let path = paths::resolve(base, Path::new(&t.text));
                        let d = self.decide_write("Edit", &path, roots, &what, grant);
                        if !d.is_allow() {
                            return Some(d);
                        }
                    }
                }
                Risk::Modifies { what, target } => {
                    if let Some(d) = self.operand_write(shown, what, &target, c, roots) {
                        return Some(d);
                    }
                }
                Risk::Tree {
                    what,
                    target,
                    dest,
                    only,
                } => {
                    let tree = TreeWrite {
                        what,
                        target: &target,
                        dest: dest.as_ref(),
                        only: &only,
                    };
                    if let Some(d) = self.tree_write(shown, tree, c, roots) {
                        return Some(d);
                    }
                }
                Risk::UnknownWrites { what } => {
                    let named = rule.is_some_and(|r| !r.is_bare());
                    if !named {
                        let by = match (rule, grant) {
                            (Some(r), _) => format!("the rule `{}`", r.raw),
                            (None, true) => "a PreToolUse hook".to_string(),
                            (None, false) => "permission mode bypassPermissions".to_string(),
                        };
                        let name = c
                            .argv()
                            .first()
                            .map(|w| w.text.as_str())
                            .unwrap_or_default();
                        return Some(deny(format!(
                            "Bash command \"{shown}\" denied: \"{display}\" {what}, and any of them may be a protected path (.git, CI configuration), so {by} does not allow it. Add an allow rule that names the command, such as Bash({name}:*), to accept that."
                        )));
                    }
                }
            }
        }
        None
    }

    /// A path a command writes by design (`cp`'s destination, `chmod`'s files): protected
    /// paths, kernel file systems and Edit deny or ask rules hold whatever allows the command.
    /// A target runner cannot see is refused.
    fn operand_write(
        &self,
        shown: &str,
        what: &str,
        target: &ArgWord,
        c: &SimpleCmd,
        roots: &SessionRoots,
    ) -> Option<Decision> {
        let name = c.argv().first().map(|w| w.raw.as_str()).unwrap_or_default();
        let desc = format!(
            "Bash command \"{shown}\" (`{name}` {what} `{}`)",
            target.raw
        );
        let unknown = || {
            Some(deny(format!(
                "{desc} denied: runner cannot tell which file that is (it is only known at run time), and it could be a protected path. Name the file in the command."
            )))
        };
        if target.expands && target.home_rest.is_none() {
            return unknown();
        }
        let Some(paths) = self.operand_paths(target, c) else {
            return unknown();
        };
        for path in paths {
            if let Some(d) = self.write_blocked(&["Edit"], &path, roots, &desc) {
                return Some(d);
            }
        }
        None
    }

    /// Where `target` resolves, for each directory `c` may run in (a glob expanded, with the
    /// name as written; for another dynamic word, the directory its static part names). `None`
    /// when a glob cannot be expanded.
    fn operand_paths(&self, target: &ArgWord, c: &SimpleCmd) -> Option<Vec<PathBuf>> {
        let owned: Vec<PathBuf> = c.cwds().map(Path::to_path_buf).collect();
        let words: Vec<String> = if let Some(rest) = &target.home_rest {
            return Some(
                self.home
                    .iter()
                    .map(|h| paths::resolve(h, Path::new(rest.trim_start_matches('/'))))
                    .collect(),
            );
        } else if let Some(g) = &target.glob {
            let mut w = globs::expand(g, &owned)?;
            // The static part too: a glob that matches nothing is the name written.
            w.push(target.text.clone());
            w
        } else if target.dynamic {
            // Only the static prefix is known: check its directory, which holds the target.
            let dir = match target.text.rfind('/') {
                Some(0) => "/".to_string(),
                Some(i) => target.text[..i].to_string(),
                None => ".".to_string(),
            };
            vec![dir]
        } else {
            vec![target.text.clone()]
        };
        let mut out = Vec::new();
        for w in words {
            for base in c.cwds() {
                out.push(paths::resolve(base, Path::new(&w)));
            }
        }
        Some(out)
    }

    /// Everything under `target` that a command removes, changes or copies into `dest` (a
    /// recursive `rm`, `chmod -R`, `cp -r`): the tree is walked for protected paths and paths
    /// Edit deny rules cover.
    fn tree_write(
        &self,
        shown: &str,
        tree: TreeWrite<'_>,
        c: &SimpleCmd,
        roots: &SessionRoots,
    ) -> Option<Decision> {
        let TreeWrite {
            what,
            target,
            dest,
            only,
        } = tree;
        let name = c.argv().first().map(|w| w.raw.as_str()).unwrap_or_default();
        let filters: Vec<globset::GlobMatcher> = only
            .iter()
            .filter_map(|p| {
                globset::GlobBuilder::new(p)
                    .case_insensitive(true)
                    .build()
                    .ok()
                    .map(|g| g.compile_matcher())
            })
            .collect();
        if filters.len() != only.len() {
            return Some(deny(format!(
                "Bash command \"{shown}\" denied: runner cannot read the name patterns of `{name}`."
            )));
        }
        let selected = |p: &Path| {
            p.file_name()
                .is_some_and(|n| filters.iter().all(|f| f.is_match(n)))
        };
        let desc = format!(
            "Bash command \"{shown}\" (`{name}` {what} `{}`)",
            target.raw
        );
        if target.expands || dest.is_some_and(|d| d.expands) {
            return Some(deny(format!(
                "{desc} denied: runner cannot tell which files it touches (the path is expanded at run time); name the path in the command."
            )));
        }
        let unknown = || {
            Some(deny(format!(
                "{desc} denied: runner cannot expand the path to check what it touches; name the path in the command."
            )))
        };
        let Some(sources) = self.operand_paths(target, c) else {
            return unknown();
        };
        let dests = match dest {
            Some(d) => match self.operand_paths(d, c) {
                Some(p) => p,
                None => return unknown(),
            },
            None => Vec::new(),
        };
        for src in sources {
            // Where the tree lands: under `dest` (into it when it is a directory), or itself.
            let landing: Vec<PathBuf> = if dests.is_empty() {
                vec![src.clone()]
            } else {
                dests
                    .iter()
                    .map(|d| match (d.is_dir(), src.file_name()) {
                        (true, Some(n)) => d.join(n),
                        _ => d.clone(),
                    })
                    .collect()
            };
            for root in landing.iter().filter(|r| only.is_empty() || selected(r)) {
                if let Some(d) = self.write_blocked(&["Edit"], root, roots, &desc) {
                    return Some(d);
                }
            }
            let found = walk::find(&src, |e| {
                let Ok(rel) = e.path.strip_prefix(&src) else {
                    return None;
                };
                if !selected(e.path) {
                    return None;
                }
                landing
                    .iter()
                    .find_map(|root| self.write_blocked(&["Edit"], &root.join(rel), roots, &desc))
            });
            match found {
                Ok(Some(d)) => return Some(d),
                Ok(None) => {}
                Err(walk::TooLarge) => {
                    return Some(deny(format!(
                        "{desc} denied: the tree has more than {} entries, too many to check for protected paths.",
                        walk::MAX_ENTRIES
                    )));
                }
            }
        }
        None
    }

    /// A file a wrapper itself writes (`flock`'s lock file, `script`'s typescript): decided
    /// like a redirection.
    fn modified_files(
        &self,
        shown: &str,
        w: &ArgWord,
        c: &SimpleCmd,
        roots: &SessionRoots,
        grant: bool,
    ) -> Decision {
        if w.dynamic {
            return deny(format!(
                "Bash command \"{shown}\" denied: runner cannot tell which file `{}` names.",
                w.raw
            ));
        }
        let what = format!("Bash command \"{shown}\" (a wrapper writes `{}`)", w.raw);
        for base in c.cwds() {
            let path = paths::resolve(base, Path::new(&w.text));
            let d = self.decide_write("Edit", &path, roots, &what, grant);
            if !d.is_allow() {
                return d;
            }
        }
        allow(format!(
            "the wrapper's file `{}` is an allowed write",
            w.raw
        ))
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
        if c.unseen_args || c.after_change == Some(Change::Links) {
            return None;
        }
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
            for base in c.cwds() {
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
        // The trees `cp -r`/`mv` carry along keep protected paths protected.
        if let Some(d) = self.check_risks(shown, c, None, roots, false) {
            return Some(d);
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
        if w.after_change == Some(Change::Links) {
            return deny(format!(
                "{what} denied: an earlier command of the line may create links or move entries (such as `ln`, `cp`, `mv`, `tar -x`, `git apply`, `patch`), so runner cannot tell where the write lands. Run the commands as separate calls."
            ))
            .of_write();
        }
        for path in std::iter::once(&w.path).chain(w.other_paths.iter()) {
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

/// The command's words (after wrappers) with glob and brace words expanded against the file
/// system (as bash will before the command runs), so that every checked word is one the
/// program will see. A pattern that cannot be expanded stays as it is (dynamic, and checked
/// as unknown).
fn expand_argv(c: &SimpleCmd) -> std::borrow::Cow<'_, [ArgWord]> {
    let argv = c.argv();
    if !argv.iter().skip(1).any(|w| w.glob.is_some()) {
        return std::borrow::Cow::Borrowed(argv);
    }
    let cwds: Vec<PathBuf> = c.cwds().map(Path::to_path_buf).collect();
    let cwds = cwds.as_slice();
    let mut out = Vec::with_capacity(argv.len());
    for (i, w) in argv.iter().enumerate() {
        match (&w.glob, i) {
            (Some(pattern), 1..) => match globs::expand(pattern, cwds) {
                Some(words) => out.extend(words.iter().map(|t| ArgWord {
                    raw: w.raw.clone(),
                    ..ArgWord::literal(t)
                })),
                None => out.push(ArgWord {
                    expands: true,
                    ..w.clone()
                }),
            },
            _ => out.push(w.clone()),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `c` exports the variables it sets (`export`, or `declare`/`typeset`/`local`/
/// `readonly` with `-x`): they reach the environment of every later command.
fn exports(c: &SimpleCmd) -> bool {
    let argv = c.argv();
    match argv.first().map(|w| w.text.as_str()) {
        Some("export") => true,
        Some("declare" | "typeset" | "local" | "readonly") => argv[1..]
            .iter()
            .any(|w| w.text.starts_with('-') && w.text.contains('x')),
        _ => false,
    }
}

/// A tree a command removes, changes or copies ([`Risk::Tree`]).
struct TreeWrite<'a> {
    what: &'a str,
    target: &'a ArgWord,
    dest: Option<&'a ArgWord>,
    only: &'a [String],
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
/// How an allow rule names `path`: relative to the workdir (`./src/lib.rs`) when it lies
/// there — or, in an isolated task, when it is the source checkout's copy of a file in the
/// task's worktree (the rule then names the worktree's file, never the user's checkout) —
/// else absolute (`//etc/x`).
fn rule_path(path: &Path, roots: &SessionRoots) -> String {
    let mapped = roots.in_worktree(path);
    let path = mapped.as_deref().unwrap_or(path);
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

/// Programs that read no file named by their arguments: words runner cannot see given to them
/// reveal nothing a Read deny rule covers.
const NO_FILE_READS: &[&str] = &["echo", "printf", "true", "false", ":", "sleep", "kill"];

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

/// Whether allow rule `r` names `flag` (a risky option, a subcommand such as `config set`, or a
/// sed script): its words, as whole words of the rule's command pattern (quotes removed), the
/// last one also as `NAME=...` or written with its value. `Bash(sed:*)` does not name the sed
/// script `e`, and `Bash(npm test -- --coverage:*)` does not name `-c`.
fn rule_names_flag(r: &Rule, flag: &str) -> bool {
    let Specifier::Bash(p) = &r.spec else {
        return false;
    };
    let unquote = |w: &str| w.trim_matches(|c| c == '\'' || c == '"').to_string();
    let pattern = p.raw.trim_end_matches([':', '*']);
    let rule_words: Vec<String> = pattern.split_whitespace().map(unquote).collect();
    let flag_words: Vec<String> = flag.split_whitespace().map(unquote).collect();
    let Some((last, init)) = flag_words.split_last() else {
        return false;
    };
    let name = last.split('=').next().unwrap_or(last);
    let last_matches = |w: &str| {
        w == last.as_str()
            || w == name
            || w.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('='))
    };
    (0..rule_words.len()).any(|i| {
        let window = &rule_words[i..];
        window.len() > init.len()
            && init.iter().zip(window).all(|(f, w)| f == w)
            && last_matches(&window[init.len()])
    })
}
