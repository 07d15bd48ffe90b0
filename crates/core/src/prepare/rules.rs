//! Permission rules that can never match are errors, at `runner validate` and `exec` alike: a
//! tool runner does not know (`bash(touch:*)`, `Bsh(ls)`: "did you mean `Bash`"), an allow
//! rule for a tool runner knows but does not ship, a specifier on a tool that is never
//! decided by rules, a matrix `{{param}}` left unexpanded, a rule that does not parse.
//!
//! Tool names a rule may use: runner's built-in tools, `StructuredOutput`, and `mcp__*` names.
//! Claude Code's other tools (`WebFetch`, `Task`, ...) are accepted in deny and ask rules, so
//! a Claude Code settings file loads unchanged (they deny nothing runner offers), and refused
//! in allow rules, which would never allow anything.

use crate::permissions::rule::{Rule, Specifier};
use crate::spec::{LoadedSpec, SpecError};

/// Claude Code tools runner does not ship.
pub const NOT_SHIPPED: &[&str] = &[
    "WebFetch",
    "WebSearch",
    "NotebookEdit",
    "NotebookRead",
    "Task",
    "Agent",
    "AskUserQuestion",
    "ExitPlanMode",
    "KillShell",
    "KillBash",
    "BashOutput",
    "SlashCommand",
    "Skill",
    "LS",
    "MultiEdit",
    "TodoRead",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
];

/// Tools runner runs without consulting rules: a specifier on them can never match.
const INTERNAL: &[&str] = &[
    "TodoWrite",
    crate::tools::structured_output::STRUCTURED_OUTPUT_TOOL,
];

/// Check every rule of the (settings-merged) spec: the first error of [`errors`].
pub fn check(loaded: &LoadedSpec) -> Result<(), SpecError> {
    match errors(loaded).into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// An error for every rule of the spec that can never match, each with the closest valid rule
/// when there is one.
pub fn errors(loaded: &LoadedSpec) -> Vec<SpecError> {
    let p = &loaded.spec.permissions;
    let mut out = Vec::new();
    for (list, kind) in [(&p.allow, "allow"), (&p.deny, "deny"), (&p.ask, "ask")] {
        for (i, raw) in list.iter().enumerate() {
            if let Err(problem) = check_rule(raw, kind) {
                let e = SpecError::at(
                    loaded,
                    &format!("permissions.{kind}[{i}]"),
                    format!("invalid permission rule `{raw}`: {problem}"),
                );
                out.push(match closest_valid_rule(raw, kind) {
                    Some(fix) => e.with_help(format!("the closest valid rule: `{fix}`")),
                    None => e,
                });
            }
        }
    }
    out
}

/// The valid rule `raw` most likely meant: its parenthesis closed, its tool name the closest
/// known one (`Bsh(ls` → `Bash(ls)`), whichever of these passes [`check_rule`] first.
pub fn closest_valid_rule(raw: &str, kind: &str) -> Option<String> {
    let raw = raw.trim();
    let closed = if raw.matches('(').count() > raw.matches(')').count() {
        format!("{raw})")
    } else {
        raw.to_string()
    };
    let (tool, rest) = closed
        .find('(')
        .map_or((closed.as_str(), ""), |at| closed.split_at(at));
    let builtin = crate::tools::builtin::names();
    let renamed = crate::spec::errors::did_you_mean(tool, builtin.iter().copied())
        .filter(|t| *t != tool)
        .map(|t| format!("{t}{rest}"));
    [Some(closed.clone()), renamed]
        .into_iter()
        .flatten()
        .find(|c| c != raw && check_rule(c, kind).is_ok())
}

/// Why a permission rule can never match; reads as the problem `runner validate` names after
/// `invalid permission rule `...`: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleProblem {
    /// A matrix `{{param}}` placeholder was left unexpanded.
    #[error(
        "it holds a `{{{{...}}}}` placeholder that was not substituted (only a `matrix:` parameter is, and only in a matrix spec)"
    )]
    Placeholder,
    /// The rule does not parse (the parser's message).
    #[error("{0}")]
    Parse(String),
    /// A tool pattern (`Zz*`) that matches no tool.
    #[error("the tool pattern `{0}` matches no tool runner knows")]
    NoToolMatches(String),
    /// An allow rule for a Claude Code tool runner does not ship.
    #[error(
        "runner does not ship the tool `{0}`, so an allow rule for it never matches; remove it"
    )]
    NotShipped(String),
    /// A tool name runner does not know, with the closest known one when there is one.
    #[error(
        "unknown tool `{name}`{}; rules name {known}, or mcp__server__tool",
        did_you_mean(*.suggestion)
    )]
    UnknownTool {
        /// The name as written.
        name: String,
        /// The known tool name closest to it, if it is close.
        suggestion: Option<&'static str>,
        /// The built-in tools' names, comma-separated.
        known: String,
    },
    /// A specifier on a tool that is never decided by rules (`TodoWrite(x)`).
    #[error(
        "`{0}` changes only runner's own state and is never decided by rules, so a specifier on it never matches; write `{0}` alone (a deny rule then removes the tool)"
    )]
    Internal(String),
    /// A Bash rule whose command pattern is empty (`Bash(:*)`).
    #[error("the command pattern is empty, so it never matches a command")]
    EmptyCommand,
}

/// ` (did you mean `NAME`?)`, or nothing.
fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

/// Why the rule `raw` in the `kind` list (`allow`, `deny`, `ask`) can never match.
pub fn check_rule(raw: &str, kind: &str) -> Result<(), RuleProblem> {
    if let Some(start) = raw.find("{{")
        && raw[start..].contains("}}")
    {
        return Err(RuleProblem::Placeholder);
    }
    let rule = Rule::parse(raw).map_err(|e| RuleProblem::Parse(e.problem))?;
    let name = rule.tool.as_str();
    let builtin = crate::tools::builtin::names();
    let known = |n: &str| builtin.contains(&n) || INTERNAL.contains(&n) || n.starts_with("mcp__");
    if name.contains('*') {
        let any = builtin
            .iter()
            .chain(INTERNAL)
            .chain(NOT_SHIPPED)
            .any(|t| rule.names_tool(t))
            || name.starts_with("mcp__")
            || rule.names_tool("mcp__server__tool");
        return if any {
            Ok(())
        } else {
            Err(RuleProblem::NoToolMatches(name.to_string()))
        };
    }
    if !known(name) {
        if NOT_SHIPPED.contains(&name) {
            return if kind == "allow" {
                Err(RuleProblem::NotShipped(name.to_string()))
            } else {
                Ok(())
            };
        }
        return Err(RuleProblem::UnknownTool {
            name: name.to_string(),
            suggestion: suggestion(name, &builtin),
            known: builtin.join(", "),
        });
    }
    if INTERNAL.contains(&name) && !rule.is_bare() {
        return Err(RuleProblem::Internal(name.to_string()));
    }
    if let Specifier::Bash(p) = &rule.spec
        && p.raw
            .trim_end_matches(":*")
            .trim_end_matches(" *")
            .trim()
            .is_empty()
    {
        return Err(RuleProblem::EmptyCommand);
    }
    Ok(())
}

/// The known tool name closest to `name`, if it is close (case ignored, at most two edits).
fn suggestion(name: &str, known: &[&'static str]) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    known
        .iter()
        .chain(INTERNAL)
        .chain(NOT_SHIPPED)
        .map(|k| (strsim::levenshtein(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_valid_rule_is_suggested() {
        assert_eq!(
            closest_valid_rule("Bash(git diff *", "allow").as_deref(),
            Some("Bash(git diff *)")
        );
        assert_eq!(
            closest_valid_rule("Bsh(ls)", "allow").as_deref(),
            Some("Bash(ls)")
        );
        assert_eq!(
            closest_valid_rule("bash(touch:*)", "deny").as_deref(),
            Some("Bash(touch:*)")
        );
        assert_eq!(closest_valid_rule("Zzzzzz", "allow"), None);
    }

    #[test]
    fn rules_that_never_match_are_errors() {
        for (rule, kind, needle) in [
            ("bash(touch:*)", "allow", "did you mean `Bash`"),
            ("Bsh(ls)", "allow", "did you mean `Bash`"),
            ("BASH", "deny", "did you mean `Bash`"),
            ("Raed(./x)", "deny", "did you mean `Read`"),
            ("Edti", "allow", "did you mean `Edit`"),
            ("Frobnicate", "deny", "unknown tool"),
            ("WebFetch", "allow", "does not ship"),
            ("WebFetch(domain:x.com)", "allow", "does not ship"),
            ("Bash({{cmd}}:*)", "allow", "placeholder"),
            ("Edit(./{{ path }}/**)", "deny", "placeholder"),
            ("Bash(", "allow", "end with `)`"),
            ("Bash(:*)", "allow", "empty"),
            ("TodoWrite(x)", "allow", "never decided"),
            ("Zz*", "deny", "matches no tool"),
        ] {
            let e = check_rule(rule, kind).unwrap_err().to_string();
            assert!(e.contains(needle), "{rule}: {e}");
        }
        for (rule, kind) in [
            ("Bash(git diff:*)", "allow"),
            ("Read(./src/**)", "deny"),
            ("mcp__github", "allow"),
            ("mcp__github__*", "deny"),
            ("WebFetch", "deny"),
            ("WebSearch", "ask"),
            ("TodoWrite", "deny"),
            ("StructuredOutput", "allow"),
            ("Bash(*)", "allow"),
            ("Ba*", "deny"),
        ] {
            assert!(
                check_rule(rule, kind).is_ok(),
                "{rule}: {:?}",
                check_rule(rule, kind)
            );
        }
    }
}
