//! `matrix:` — one template spec expanded into many tasks.
//!
//! ```yaml
//! name: fix-{{crate}}          # or no placeholder: `fix[crate=core]`
//! matrix:
//!   - {crate: core}
//!   - {crate: cli}
//! # or: matrix: {glob: "crates/*"}   (parameters `path` and `basename`)
//! ```
//!
//! `{{param}}` is replaced in `name`, `prompt` (or the text of `prompt_file`, whose path may use
//! parameters too), `workdir` and each verify check's `name` and `run`. In `run` the value is
//! shell-quoted. Each parameter is also exported to the checks as `RUNNER_PARAM_<NAME>`
//! (upper-cased). A `{{x}}` naming no parameter is an error at its file:line:col. Expansion
//! happens at load time, so every expanded task is validated before anything runs.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::load::SpecError;
use super::types::TaskSpec;

/// Most tasks one matrix may expand into.
pub(crate) const MAX_MATRIX_TASKS: usize = 1_000;

/// Expand one template into many tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Matrix {
    /// One task per parameter map, e.g. `[{crate: core}, {crate: cli}]`.
    List(Vec<BTreeMap<String, ParamValue>>),
    /// One task per path matching a glob relative to the spec file (`.gitignore`d and hidden
    /// paths excluded), with parameters `path` (relative to the spec file) and `basename`.
    Glob(GlobMatrix),
}

/// `matrix: {glob: PATTERN}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobMatrix {
    /// Glob relative to the spec file, e.g. `crates/*` (`*` does not cross `/`; `**` does).
    pub glob: String,
}

/// A parameter value: a string, number or boolean (used as text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamValue {
    /// Text.
    String(String),
    /// A whole number.
    Int(i64),
    /// A number.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl ParamValue {
    fn text(&self) -> String {
        match self {
            ParamValue::String(s) => s.clone(),
            ParamValue::Int(i) => i.to_string(),
            ParamValue::Float(f) => f.to_string(),
            ParamValue::Bool(b) => b.to_string(),
        }
    }
}

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

/// Paths matching `pattern` under `spec_dir`, sorted, as `path`/`basename` parameter sets.
fn glob_sets(pattern: &str, spec_dir: &Path) -> Result<Vec<Params>, String> {
    let pattern = pattern.trim_start_matches("./");
    if pattern.is_empty() || pattern.starts_with('/') || pattern.split('/').any(|c| c == "..") {
        return Err(format!(
            "glob {pattern:?} must be a relative pattern inside the spec's directory, e.g. `crates/*`"
        ));
    }
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("invalid glob {pattern:?}: {e}"))?
        .compile_matcher();
    // Walk only below the pattern's literal prefix.
    let literal: Vec<&str> = pattern
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{']))
        .collect();
    let base = spec_dir.join(literal.join("/"));
    let mut found = Vec::new();
    if base.exists() {
        for entry in ignore::WalkBuilder::new(&base)
            .follow_links(false)
            .build()
            .flatten()
        {
            let Ok(rel) = entry.path().strip_prefix(spec_dir) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if !rel.is_empty() && matcher.is_match(&rel) {
                let basename = entry.file_name().to_string_lossy().into_owned();
                found.push(vec![
                    ("basename".to_string(), basename),
                    ("path".to_string(), rel),
                ]);
            }
        }
    }
    if found.is_empty() {
        return Err(format!(
            "glob {pattern:?} matched nothing under {}; expected at least one path",
            spec_dir.display()
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
        Some((line, column)) => SpecError::at_position(path, line, column, message),
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
