//! Expanding a `matrix:` spec: its parameter sets (a list, or the paths a glob matches), and
//! `{{param}}` substituted in every field that takes parameters (see [`super::matrix`]).

use std::path::Path;

use super::errors::SpecError;
use super::matrix::{MAX_MATRIX_TASKS, Matrix};
use super::types::TaskSpec;

/// One expansion's parameters, in name order.
pub(crate) type Params = Vec<(String, String)>;

/// The parameter sets of `matrix` for the spec in `spec_dir`.
pub(crate) fn param_sets(
    matrix: &Matrix,
    spec_dir: &Path,
    at: &dyn Fn(&str, String) -> SpecError,
) -> Result<Vec<Params>, SpecError> {
    let sets: Vec<Params> = match matrix {
        Matrix::List(list) => {
            if list.is_empty() {
                return Err(at(
                    "matrix",
                    "`matrix` is an empty list; expected parameter maps such as `- {crate: core}`"
                        .into(),
                ));
            }
            let mut sets = Vec::with_capacity(list.len());
            for (i, m) in list.iter().enumerate() {
                if m.is_empty() {
                    return Err(at(
                        &format!("matrix[{i}]"),
                        "empty parameter map; expected `name: value` pairs".into(),
                    ));
                }
                let mut set = Vec::with_capacity(m.len());
                for (k, v) in m {
                    if !is_param_name(k) {
                        return Err(at(
                            &format!("matrix[{i}]"),
                            format!(
                                "parameter name {k:?} is not valid; expected letters, digits and \
                                 `_`, not starting with a digit"
                            ),
                        ));
                    }
                    let text = v.text();
                    if text.chars().any(char::is_control) {
                        return Err(at(
                            &format!("matrix[{i}]"),
                            format!(
                                "parameter `{k}` holds a control character; expected one line of text"
                            ),
                        ));
                    }
                    set.push((k.clone(), text));
                }
                sets.push(set);
            }
            sets
        }
        Matrix::Glob(g) => glob_sets(&g.glob, spec_dir).map_err(|why| at("matrix.glob", why))?,
    };
    if sets.len() > MAX_MATRIX_TASKS {
        return Err(at(
            "matrix",
            format!(
                "`matrix` expands into {} tasks; the limit is {MAX_MATRIX_TASKS}",
                sets.len()
            ),
        ));
    }
    Ok(sets)
}

fn is_param_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_glob(component: &str) -> bool {
    component.contains(['*', '?', '[', '{'])
}

/// A glob pattern split into how many directories it first goes up (`../`) and the pattern
/// below that point, with `.` and `dir/..` resolved; an error for an absolute pattern or a `..`
/// after a wildcard.
fn split_up(pattern: &str) -> Result<(usize, String), String> {
    if pattern.starts_with('/') {
        return Err("is absolute".into());
    }
    let mut up = 0usize;
    let mut parts: Vec<&str> = Vec::new();
    for c in pattern.split('/') {
        match c {
            "" | "." => {}
            ".." => match parts.last() {
                Some(last) if is_glob(last) => {
                    return Err("has `..` after a wildcard".into());
                }
                Some(_) => {
                    parts.pop();
                }
                None => up += 1,
            },
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return Err("names no path below its directory".into());
    }
    Ok((up, parts.join("/")))
}

/// The directory matrix globs may not leave: the root of the git repository holding the spec,
/// else the spec's own directory.
fn glob_boundary(spec_dir: &Path) -> std::path::PathBuf {
    let canon = std::fs::canonicalize(spec_dir).unwrap_or_else(|_| spec_dir.to_path_buf());
    git2::Repository::discover(&canon)
        .ok()
        .and_then(|r| r.workdir().and_then(|w| std::fs::canonicalize(w).ok()))
        .filter(|root| canon.starts_with(root))
        .unwrap_or(canon)
}

/// Paths matching `pattern` relative to `spec_dir` — anywhere inside the git repository that
/// holds the spec (`../services/*`), never outside it — sorted, as `path` (relative to the spec
/// file) and `basename` parameter sets.
fn glob_sets(pattern: &str, spec_dir: &Path) -> Result<Vec<Params>, String> {
    let (up, below) = split_up(pattern).map_err(|why| {
        format!(
            "glob {pattern:?} {why}; expected a pattern relative to the spec file, e.g. `crates/*` or `../services/*`"
        )
    })?;
    let mut anchor = spec_dir.to_path_buf();
    for _ in 0..up {
        if !anchor.pop() {
            return Err(format!("glob {pattern:?} goes above the file system root"));
        }
    }
    let boundary = glob_boundary(spec_dir);
    let inside = std::fs::canonicalize(&anchor).is_ok_and(|a| a.starts_with(&boundary));
    if !inside {
        return Err(format!(
            "glob {pattern:?} reaches outside {} (the repository holding the spec); expected a \
             pattern inside it",
            boundary.display()
        ));
    }
    let matcher = globset::GlobBuilder::new(&below)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("invalid glob {pattern:?}: {e}"))?
        .compile_matcher();
    // Walk only below the pattern's literal prefix.
    let literal: Vec<&str> = below.split('/').take_while(|c| !is_glob(c)).collect();
    let base = anchor.join(literal.join("/"));
    let prefix = "../".repeat(up);
    let mut found = Vec::new();
    if base.exists() {
        for entry in ignore::WalkBuilder::new(&base)
            .follow_links(false)
            .build()
            .flatten()
        {
            let Ok(rel) = entry.path().strip_prefix(&anchor) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if !rel.is_empty() && matcher.is_match(&rel) {
                let basename = entry.file_name().to_string_lossy().into_owned();
                found.push(vec![
                    ("basename".to_string(), basename),
                    ("path".to_string(), format!("{prefix}{rel}")),
                ]);
            }
        }
    }
    if found.is_empty() {
        let closest = super::closest::closest_existing(&anchor.join(&below))
            .and_then(|p| {
                p.strip_prefix(&anchor)
                    .ok()
                    .map(|r| format!("{prefix}{}", r.to_string_lossy()))
            })
            .map(|p| format!(" (the closest existing path: `{p}`)"))
            .unwrap_or_default();
        return Err(format!(
            "glob {pattern:?} matched nothing under {}; expected at least one path{closest}",
            anchor.display()
        ));
    }
    found.sort_by(|a, b| a[1].1.cmp(&b[1].1));
    Ok(found)
}

/// A `{{x}}` that names no parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UnknownParam {
    /// The placeholder as written, e.g. `{{ crate }}`.
    pub written: String,
    /// The name inside it.
    pub name: String,
}

/// Replace every `{{ name }}` in `text` with its value (shell-quoted when `quote`).
pub(crate) fn substitute(text: &str, params: &Params, quote: bool) -> Result<String, UnknownParam> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        let written = &rest[start..start + 2 + len + 2];
        let name = rest[start + 2..start + 2 + len].trim();
        out.push_str(&rest[..start]);
        match params.iter().find(|(k, _)| k == name) {
            Some((_, v)) if quote => out.push_str(&shell_quote(v)),
            Some((_, v)) => out.push_str(v),
            None => {
                return Err(UnknownParam {
                    written: written.to_string(),
                    name: name.to_string(),
                });
            }
        }
        rest = &rest[start + written.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `text` with every `{{…}}` placeholder replaced by `fill` (to check a template's shape).
pub(crate) fn substitute_any(text: &str, fill: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(fill);
        rest = &rest[start + 2 + len + 2..];
    }
    out.push_str(rest);
    out
}

/// `value` as one shell word: unchanged when only safe characters, else single-quoted.
pub(crate) fn shell_quote(value: &str) -> String {
    if !value.is_empty()
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ',' | ':' | '=' | '+' | '@')
        })
    {
        return value.to_string();
    }
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// The environment variable a parameter is exported to checks as: `RUNNER_PARAM_<NAME>`.
pub(crate) fn env_name(param: &str) -> String {
    format!("RUNNER_PARAM_{}", param.to_ascii_uppercase())
}

/// Where `written` (a placeholder) first appears in `source`: 1-based line and column.
fn position_of(source: &str, written: &str) -> Option<(usize, usize)> {
    let at = source.find(written)?;
    let before = &source[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some((line, column))
}

/// The error for an unknown placeholder in the field `key`: at the placeholder's position in
/// the spec when it is written there, else at `key`.
pub(crate) fn unknown_error(
    path: &Path,
    source: &str,
    key: &str,
    u: &UnknownParam,
    params: &Params,
) -> SpecError {
    let known: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
    let message = format!(
        "`{}` in `{key}` names no matrix parameter; expected one of: {}",
        u.written,
        known.join(", ")
    );
    match position_of(source, &u.written) {
        Some((line, column)) => {
            SpecError::at_position(path, line, column, message).with_source(source)
        }
        None => SpecError::in_source(path, source, key, message),
    }
}

/// The task for one parameter set: `spec` (the template, `matrix` removed) with parameters
/// substituted in name, workdir, `prompt_file` path, inline prompt and checks. The text of a
/// `prompt_file` is substituted after it is read ([`substitute`]).
pub(crate) fn expand_one(
    template: &TaskSpec,
    params: &Params,
    path: &Path,
    source: &str,
) -> Result<TaskSpec, SpecError> {
    let err = |key: &str, u: UnknownParam| unknown_error(path, source, key, &u, params);
    let mut spec = template.clone();
    spec.matrix = None;
    spec.params = params.clone();
    spec.name = if template.name.contains("{{") {
        substitute(&template.name, params, false).map_err(|u| err("name", u))?
    } else {
        let list: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}[{}]", template.name, list.join(","))
    };
    if let Some(p) = &template.prompt {
        spec.prompt = Some(substitute(p, params, false).map_err(|u| err("prompt", u))?);
    }
    if let Some(f) = &template.prompt_file {
        let text =
            substitute(&f.to_string_lossy(), params, false).map_err(|u| err("prompt_file", u))?;
        spec.prompt_file = Some(text.into());
    }
    let workdir = substitute(&template.workdir.to_string_lossy(), params, false)
        .map_err(|u| err("workdir", u))?;
    spec.workdir = workdir.into();
    let perms = &mut spec.permissions;
    for (list, kind) in [
        (&mut perms.allow, "allow"),
        (&mut perms.deny, "deny"),
        (&mut perms.ask, "ask"),
    ] {
        for (i, rule) in list.iter_mut().enumerate() {
            *rule = substitute(rule, params, false)
                .map_err(|u| err(&format!("permissions.{kind}[{i}]"), u))?;
        }
    }
    if let super::git::GitBranch::Named(b) = &mut spec.git.branch {
        *b = substitute(b, params, false).map_err(|u| err("git.branch", u))?;
    }
    for (event, groups) in spec.hooks.iter_mut() {
        for (g, group) in groups.iter_mut().enumerate() {
            let at = format!("hooks.{event}[{g}]");
            if let Some(m) = &mut group.matcher {
                *m = substitute(m, params, false).map_err(|u| err(&format!("{at}.matcher"), u))?;
            }
            for (k, h) in group.hooks.iter_mut().enumerate() {
                let at = format!("{at}.hooks[{k}]");
                let shell = h.args.is_none();
                h.command = substitute(&h.command, params, shell)
                    .map_err(|u| err(&format!("{at}.command"), u))?;
                for a in h.args.iter_mut().flatten() {
                    *a = substitute(a, params, false).map_err(|u| err(&format!("{at}.args"), u))?;
                }
                if let Some(r) = &mut h.if_rule {
                    *r = substitute(r, params, false).map_err(|u| err(&format!("{at}.if"), u))?;
                }
            }
        }
    }
    for (i, check) in spec.verify.iter_mut().enumerate() {
        check.run = substitute(&check.run, params, true)
            .map_err(|u| err(&format!("verify[{i}].run"), u))?;
        if let Some(n) = &check.name {
            check.name = Some(
                substitute(n, params, false).map_err(|u| err(&format!("verify[{i}].name"), u))?,
            );
        }
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_split_into_ups_and_below() {
        assert_eq!(split_up("crates/*").unwrap(), (0, "crates/*".into()));
        assert_eq!(split_up("./crates/*").unwrap(), (0, "crates/*".into()));
        assert_eq!(split_up("../services/*").unwrap(), (1, "services/*".into()));
        assert_eq!(split_up("../../a/../b/*").unwrap(), (2, "b/*".into()));
        assert!(split_up("/etc/*").is_err());
        assert!(split_up("a/*/../b").is_err());
        assert!(split_up("..").is_err());
    }

    /// A repository with `tasks/` (the spec's directory) and `services/{a,b}` beside it.
    fn repo_with_services() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        for d in ["tasks", "services/a", "services/b"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        git2::Repository::init(&root).unwrap();
        tmp
    }

    #[test]
    fn globs_reach_anywhere_in_the_repository() {
        let tmp = repo_with_services();
        let tasks = tmp.path().join("repo/tasks");
        let sets = glob_sets("../services/*", &tasks).unwrap();
        let paths: Vec<&str> = sets.iter().map(|s| s[1].1.as_str()).collect();
        assert_eq!(paths, ["../services/a", "../services/b"]);
        assert_eq!(sets[0][0], ("basename".to_string(), "a".to_string()));
    }

    #[test]
    fn globs_never_leave_the_repository() {
        let tmp = repo_with_services();
        std::fs::create_dir_all(tmp.path().join("outside/x")).unwrap();
        let tasks = tmp.path().join("repo/tasks");
        let e = glob_sets("../../outside/*", &tasks).unwrap_err();
        assert!(e.contains("reaches outside"), "{e}");
        // Outside a repository, the spec's directory is the boundary.
        let plain = tmp.path().join("outside/x");
        let e = glob_sets("../*", &plain).unwrap_err();
        assert!(e.contains("reaches outside"), "{e}");
    }

    fn params(p: &[(&str, &str)]) -> Params {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn substitutes_and_quotes() {
        let p = params(&[("crate", "core"), ("msg", "it's $HOME; rm -rf /")]);
        assert_eq!(
            substitute("fix {{crate}} / {{ crate }}", &p, false).unwrap(),
            "fix core / core"
        );
        let cmd = substitute("echo {{msg}} {{crate}}", &p, true).unwrap();
        assert_eq!(cmd, r#"echo 'it'\''s $HOME; rm -rf /' core"#);
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&cmd)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "it's $HOME; rm -rf / core\n"
        );
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("crates/a-b"), "crates/a-b");
        let e = substitute("a {{nope}}", &p, false).unwrap_err();
        assert_eq!(e.name, "nope");
        // No closing braces: left as written.
        assert_eq!(substitute("a {{b", &p, false).unwrap(), "a {{b");
    }

    #[test]
    fn rules_branch_and_hooks_are_substituted() {
        let yaml = "name: t-{{c}}\nprompt: p\nmatrix:\n  - {c: core}\npermissions:\n  allow: [\"Bash(cargo test -p {{c}}:*)\"]\n  deny: [\"Edit(./{{c}}/**)\"]\ngit:\n  branch: fix/{{c}}\nhooks:\n  Stop:\n    - matcher: \"{{c}}\"\n      hooks:\n        - type: command\n          command: echo {{c}}\n          if: \"Bash({{c}}:*)\"\n";
        let template: TaskSpec = yaml_serde::from_str(yaml).unwrap();
        let p = params(&[("c", "my crate")]);
        let t = expand_one(&template, &p, Path::new("t.yaml"), yaml).unwrap();
        assert_eq!(t.permissions.allow, ["Bash(cargo test -p my crate:*)"]);
        assert_eq!(t.permissions.deny, ["Edit(./my crate/**)"]);
        assert_eq!(
            t.git.branch,
            crate::spec::git::GitBranch::Named("fix/my crate".into())
        );
        let h = &t.hooks["Stop"][0];
        assert_eq!(h.matcher.as_deref(), Some("my crate"));
        assert_eq!(h.hooks[0].command, "echo 'my crate'");
        assert_eq!(h.hooks[0].if_rule.as_deref(), Some("Bash(my crate:*)"));
        let bad: TaskSpec =
            yaml_serde::from_str("name: t\nprompt: p\npermissions:\n  allow: [\"Bash({{x}})\"]\n")
                .unwrap();
        let e = expand_one(&bad, &p, Path::new("t.yaml"), "").unwrap_err();
        assert!(e.to_string().contains("{{x}}"), "{e}");
    }

    #[test]
    fn unknown_placeholder_is_positioned() {
        let source = "name: t\nprompt: |\n  fix {{crate}}\n  and {{ creat }}\n";
        let p = params(&[("crate", "core")]);
        let u = substitute("fix {{crate}}\nand {{ creat }}\n", &p, false).unwrap_err();
        let e = unknown_error(Path::new("t.yaml"), source, "prompt", &u, &p).to_string();
        assert_eq!(
            e,
            "t.yaml:4:7: `{{ creat }}` in `prompt` names no matrix parameter; expected one of: crate"
        );
    }

    #[test]
    fn glob_sets_sorted_relative_paths() {
        let d = tempfile::tempdir().unwrap();
        for c in ["crates/b", "crates/a", "crates/a/nested", "other/x"] {
            std::fs::create_dir_all(d.path().join(c)).unwrap();
        }
        let sets = glob_sets("crates/*", d.path()).unwrap();
        let paths: Vec<&str> = sets.iter().map(|s| s[1].1.as_str()).collect();
        assert_eq!(paths, ["crates/a", "crates/b"]);
        assert_eq!(sets[0][0], ("basename".to_string(), "a".to_string()));
        assert!(
            glob_sets("nothing/*", d.path())
                .unwrap_err()
                .contains("matched nothing")
        );
        assert!(glob_sets("../*", d.path()).is_err());
    }
}
