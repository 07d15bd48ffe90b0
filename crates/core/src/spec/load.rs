//! Loading task specs from YAML with file:line:col errors.
//!
//! [`load`] reads the file (at most [`MAX_SPEC_BYTES`], UTF-8), checks its shape
//! ([`super::shape`]: nesting depth and number of values), parses it with `yaml_serde`
//! into [`TaskSpec`], runs the checks that only depend on the file
//! ([`super::validate::static_errors`]), resolves paths against the spec's directory, then runs
//! [`LoadedSpec::check`] (the checks the command line can change the answer to).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

pub use super::errors::SpecError;
use super::expand;
pub use super::loaded::LoadedSpec;
use super::locate::locate;
use super::shape;
use super::types::{ProviderKind, TaskSpec};
use super::validate_all::{Deserialized, every_error};

/// Largest spec (and `prompt_file`) runner reads: 1 MiB.
pub const MAX_SPEC_BYTES: u64 = 1024 * 1024;

/// Load one spec file that holds one task: parse, check, and resolve its paths. A spec with a
/// `matrix:` expanding into several tasks is an error here; use [`load_all`].
pub fn load(path: &Path) -> Result<LoadedSpec, SpecError> {
    let mut all = load_all(path)?;
    if all.len() == 1 {
        return Ok(all.remove(0));
    }
    Err(SpecError::file(
        path,
        format!(
            "the spec's `matrix:` expands into {} tasks; expected a single task here",
            all.len()
        ),
    ))
}

/// Load a spec file: one task, or one per parameter set of its `matrix:` (each expanded task
/// checked and resolved like a spec of its own).
pub fn load_all(path: &Path) -> Result<Vec<LoadedSpec>, SpecError> {
    let source = read_text(path, path, "spec file")?;
    let dir = spec_dir(path)?;
    load_text(path, &dir, source)
}

/// Load spec text `source` read from `path`, with relative paths resolved against `dir` (the
/// spec's directory; the current directory for an inline task).
pub(crate) fn load_text(
    path: &Path,
    dir: &Path,
    source: String,
) -> Result<Vec<LoadedSpec>, SpecError> {
    let spec = parse(path, &source)?;
    let Some(m) = spec.matrix.clone() else {
        return Ok(vec![finish(path, dir, source, spec)?]);
    };
    let at = |key: &str, msg: String| SpecError::in_source(path, &source, key, msg);
    // The template's own name must be valid once its placeholders are filled.
    let written = expand::substitute_any(&spec.name, "x");
    if let Some(why) = super::validate::name_problem(&written) {
        return Err(at("name", why));
    }
    let sets = expand::param_sets(&m, dir, &at)?;
    let mut out = Vec::with_capacity(sets.len());
    for params in &sets {
        let expanded = expand::expand_one(&spec, params, path, &source)?;
        out.push(finish(path, dir, source.clone(), expanded)?);
    }
    Ok(out)
}

/// Check and resolve one (possibly expanded) task of the spec file at `path`.
fn finish(
    path: &Path,
    dir: &Path,
    source: String,
    spec: TaskSpec,
) -> Result<LoadedSpec, SpecError> {
    let (loaded, errors) = finish_reporting(path, dir, source, spec);
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    tracing::debug!(spec = %loaded.path.display(), name = %loaded.spec.name, "spec loaded");
    Ok(loaded)
}

/// Check and resolve one task as [`finish`] does, with every error found instead of the first:
/// what cannot be resolved is left at a stand-in (the spec's directory for a missing workdir,
/// no cassette, no output schema) so the other checks still run.
fn finish_reporting(
    path: &Path,
    dir: &Path,
    source: String,
    spec: TaskSpec,
) -> (LoadedSpec, Vec<SpecError>) {
    let mut errors = super::validate::static_errors(path, &source, &spec);

    let dir = dir.to_path_buf();
    let at = |key: &str, msg: String| SpecError::in_source(path, &source, key, msg);

    let prompt = match (&spec.prompt, &spec.prompt_file) {
        (Some(text), _) => text.clone(),
        (None, Some(file)) => prompt_file_text(path, &dir, &spec, file, &at).unwrap_or_else(|e| {
            errors.push(e);
            String::new()
        }),
        // static_errors reports a spec with neither.
        (None, None) => String::new(),
    };

    let workdir = existing_dir(&dir, &spec.workdir).unwrap_or_else(|why| {
        errors.push(at("workdir", format!("workdir {why}")));
        dir.clone()
    });
    let mut additional_directories = Vec::new();
    for (i, d) in spec.additional_directories.iter().enumerate() {
        match existing_dir(&dir, d) {
            Ok(d) => additional_directories.push(d),
            Err(why) => errors.push(at(
                &format!("additional_directories[{i}]"),
                format!("additional directory {why}"),
            )),
        }
    }

    let cassette = match &spec.cassette {
        None => None,
        Some(c) => {
            let full = dir.join(c);
            if full.is_file() {
                Some(full)
            } else {
                errors.push(at(
                    "cassette",
                    format!(
                        "cassette {} (resolved to {}) does not exist or is not a file; \
                         expected a recorded cassette (record one with `runner exec --record FILE`)",
                        c.display(),
                        full.display()
                    ),
                ));
                None
            }
        }
    };
    if spec.provider == ProviderKind::Replay && spec.cassette.is_none() {
        errors.push(at(
            "provider",
            "`provider: replay` needs `cassette: FILE` (relative to the spec file)".into(),
        ));
    }

    let output_schema = match &spec.output {
        None => None,
        Some(o) => super::output::resolve(path, &source, &dir, o, |file, what| {
            read_text(file, path, what)
        })
        .map_err(|e| errors.push(e))
        .ok(),
    };

    let name_line = locate(&source, "name").0;
    let loaded = LoadedSpec {
        path: path.to_path_buf(),
        dir,
        spec,
        prompt,
        workdir,
        additional_directories,
        cassette,
        output_schema,
        name_line,
        source,
    };
    errors.extend(loaded.errors());
    (loaded, errors)
}

/// The text of the spec's `prompt_file` (relative to `dir`), with matrix parameters filled in.
fn prompt_file_text(
    path: &Path,
    dir: &Path,
    spec: &TaskSpec,
    file: &Path,
    at: &dyn Fn(&str, String) -> SpecError,
) -> Result<String, SpecError> {
    let full = dir.join(file);
    let shown = format!(
        "prompt_file {} (resolved to {})",
        file.display(),
        full.display()
    );
    let text = read_text(&full, path, &shown).map_err(|e| at("prompt_file", e.message))?;
    if text.trim().is_empty() {
        return Err(at(
            "prompt_file",
            format!(
                "prompt_file {} is empty; expected the prompt text",
                full.display()
            ),
        ));
    }
    if spec.params.is_empty() {
        return Ok(text);
    }
    expand::substitute(&text, &spec.params, false).map_err(|u| {
        at(
            "prompt_file",
            format!(
                "`{}` in prompt_file {} names no matrix parameter; expected one of: {}",
                u.written,
                full.display(),
                spec.params
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

/// The spec's directory, absolute (not resolving symlinks, so "relative to this file" means
/// relative to where the file is named).
fn spec_dir(path: &Path) -> Result<PathBuf, SpecError> {
    let abs = std::path::absolute(path)
        .map_err(|e| SpecError::file(path, format!("cannot make the path absolute: {e}")))?;
    Ok(abs
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/")))
}

/// `rel` resolved against `base`, canonicalized, and checked to be a directory; on failure
/// the reason, phrased to follow "workdir …".
fn existing_dir(base: &Path, rel: &Path) -> Result<PathBuf, String> {
    let full = base.join(rel);
    let shown = format!("{} (resolved to {})", rel.display(), full.display());
    match fs::canonicalize(&full) {
        Ok(canon) if canon.is_dir() => Ok(canon),
        Ok(_) => Err(format!("{shown} is not a directory; expected a directory")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{shown} does not exist; expected a directory"))
        }
        Err(e) => Err(format!("{shown} cannot be used: {e}")),
    }
}

/// Read `file` as UTF-8 text of at most [`MAX_SPEC_BYTES`]. Errors are reported against
/// `report_as` (the spec file); `what` names the file in messages (e.g. `spec file a.yaml`).
fn read_text(file: &Path, report_as: &Path, what: &str) -> Result<String, SpecError> {
    let io_err = |e: std::io::Error| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => format!("{what} does not exist"),
            std::io::ErrorKind::PermissionDenied => {
                format!("{what} is not readable: permission denied")
            }
            _ => format!("{what} cannot be read: {e}"),
        };
        SpecError::file(report_as, why)
    };
    let meta = fs::metadata(file).map_err(io_err)?;
    if meta.is_dir() {
        return Err(SpecError::file(
            report_as,
            format!("{what} is a directory; expected a file"),
        ));
    }
    let too_big = |n: u64| {
        SpecError::file(
            report_as,
            format!("{what} is {n} bytes; the limit is {MAX_SPEC_BYTES} bytes (1 MiB)"),
        )
    };
    if meta.len() > MAX_SPEC_BYTES {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    fs::File::open(file)
        .and_then(|f| f.take(MAX_SPEC_BYTES + 1).read_to_end(&mut bytes))
        .map_err(io_err)?;
    if bytes.len() as u64 > MAX_SPEC_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = String::from_utf8_lossy(&bytes[..at]);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        SpecError::at_position(
            report_as,
            line,
            column,
            format!(
                "{what} is not valid UTF-8 (byte 0x{:02x}); expected UTF-8 text",
                bytes.get(at).copied().unwrap_or(0)
            ),
        )
    })
}

/// Parse the YAML text into a [`TaskSpec`], with positioned, explained errors.
pub(crate) fn parse(path: &Path, source: &str) -> Result<TaskSpec, SpecError> {
    let (_, aliases) = parse_document(path, source)?;
    yaml_serde::from_str::<TaskSpec>(source).map_err(|e| yaml_error(path, source, &e, aliases))
}

/// Parse the YAML text as [`parse`] does, with every deserialization error instead of the
/// first (see [`super::validate_all`]). A YAML syntax error still stops it.
fn parse_reporting(path: &Path, source: &str) -> Result<Deserialized, SpecError> {
    let (value, aliases) = parse_document(path, source)?;
    let e = match yaml_serde::from_str::<TaskSpec>(source) {
        Ok(spec) => {
            return Ok(Deserialized {
                spec: Some(spec),
                errors: Vec::new(),
                removed: Vec::new(),
            });
        }
        Err(e) => e,
    };
    let first = (yaml_error(path, source, &e, aliases), e.to_string());
    let explain = |text: &str, e: &yaml_serde::Error| yaml_error(path, text, e, aliases);
    let relocate = |key: &str, e: SpecError| {
        let moved = if key.is_empty() {
            SpecError::at_position(path, 1, 1, e.message.clone()).with_source(source)
        } else {
            SpecError::in_source(path, source, key, e.message.clone())
        };
        match e.help() {
            Some(h) => moved.with_help(h),
            None => moved,
        }
    };
    let stem = path
        .file_stem()
        .map_or_else(|| "unnamed".into(), |s| s.to_string_lossy().into_owned());
    Ok(every_error(value, first, &explain, &relocate, &stem))
}

/// Every task of the spec file at `path`, each with every error found in it (the keys that
/// deserialize are checked even when others do not), or the errors that keep the file from
/// loading at all (what `runner validate` reports).
pub fn load_all_reporting(
    path: &Path,
) -> Result<Vec<(LoadedSpec, Vec<SpecError>)>, Vec<SpecError>> {
    let source = read_text(path, path, "spec file").map_err(|e| vec![e])?;
    let dir = spec_dir(path).map_err(|e| vec![e])?;
    let found = parse_reporting(path, &source).map_err(|e| vec![e])?;
    let Some(spec) = found.spec.clone() else {
        return Err(found.errors);
    };
    if spec.matrix.is_some() {
        if !found.errors.is_empty() {
            return Err(found.errors);
        }
        return load_text(path, &dir, source)
            .map(|all| all.into_iter().map(|l| (l, Vec::new())).collect())
            .map_err(|e| vec![e]);
    }
    let (loaded, more) = finish_reporting(path, &dir, source, spec);
    let mut errors = found.errors.clone();
    errors.extend(
        more.into_iter()
            .filter(|e| !e.key().is_some_and(|k| found.covers(k))),
    );
    Ok(vec![(loaded, errors)])
}

/// The YAML text as a document: its shape checked, parsed, and a non-empty mapping; with
/// whether it uses aliases.
fn parse_document(path: &Path, source: &str) -> Result<(yaml_serde::Value, bool), SpecError> {
    // The shape first: deep nesting takes quadratic time to parse, and every value costs
    // memory until the whole document is parsed.
    let shape = shape::scan(source, shape::MAX_DEPTH, shape::MAX_VALUES);
    if let Some((excess, line, column)) = shape.excess {
        let message = match excess {
            shape::Excess::TooDeep => format!(
                "the spec nests more than {} levels deep here; expected mappings and lists \
                 nested at most {} levels",
                shape::MAX_DEPTH,
                shape::MAX_DEPTH
            ),
            shape::Excess::TooMany => format!(
                "the spec holds more than {} values (keys, items and scalars) by here; \
                 expected a task spec, not a data file",
                shape::MAX_VALUES
            ),
        };
        return Err(SpecError::at_position(path, line, column, message).with_source(source));
    }
    let yaml_error = |e: &yaml_serde::Error| yaml_error(path, source, e, shape.aliases);
    // Then as an untyped value: syntax errors, alias bombs and the empty-file case.
    let value: yaml_serde::Value = yaml_serde::from_str(source).map_err(|e| yaml_error(&e))?;
    let empty = || {
        SpecError::at_position(
            path,
            1,
            1,
            "empty spec: expected a mapping with at least `name` and `prompt`",
        )
    };
    match &value {
        yaml_serde::Value::Null => return Err(empty()),
        yaml_serde::Value::Mapping(m) if m.is_empty() => return Err(empty()),
        yaml_serde::Value::Mapping(_) => {}
        other => {
            let kind = match other {
                yaml_serde::Value::Bool(_) => "a boolean",
                yaml_serde::Value::Number(_) => "a number",
                yaml_serde::Value::String(_) => "a string",
                yaml_serde::Value::Sequence(_) => "a list",
                _ => "a tagged value",
            };
            let (line, column) = first_content(source);
            return Err(SpecError::at_position(
                path,
                line,
                column,
                format!(
                    "the spec is {kind}; expected a mapping (`key: value` lines) with at least `name` and `prompt`"
                ),
            )
            .with_source(source));
        }
    }
    Ok((value, shape.aliases))
}

/// Position of the first character that is not blank or a comment.
fn first_content(source: &str) -> (usize, usize) {
    for (i, line) in source.lines().enumerate() {
        let t = line.trim_start();
        if !t.is_empty() && !t.starts_with('#') {
            return (i + 1, line.chars().count() - t.chars().count() + 1);
        }
    }
    (1, 1)
}

/// Turn a yaml_serde error into a [`SpecError`]: position, message without the
/// "at line X column Y" noise, friendlier type names and hints. `aliases`: whether the source
/// uses aliases (`*name`), the only thing that can make an expansion limit trip.
fn yaml_error(path: &Path, source: &str, err: &yaml_serde::Error, aliases: bool) -> SpecError {
    let raw = err.to_string();
    let (mut line, mut column) = err
        .location()
        .map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
    let mut message = friendly(&strip_marks(&raw));

    if let Some((tl, tc)) = tab_indent_before(source, line) {
        // libyaml reports tabs as "found character that cannot start any token" or similar.
        line = tl;
        column = tc;
        message = format!("tab character used for indentation; YAML needs spaces here ({message})");
    } else if (raw.contains("repetition limit exceeded")
        || raw.contains("recursion limit exceeded"))
        && aliases
    {
        message = format!(
            "{message}: the spec's aliases (`*name`) expand too much or nest too deep; \
             expected a plain spec without alias bombs"
        );
    } else if raw.contains("recursion limit exceeded") {
        message = format!(
            "{message}: the spec nests too deep; expected mappings and lists nested at most {} \
             levels",
            shape::MAX_DEPTH
        );
    } else if raw.contains("mapping values are not allowed in this context") {
        message = indentation_message(source, line);
    } else if raw.contains("did not find expected key")
        || raw.contains("did not find expected '-' indicator")
    {
        message = format!(
            "line {line} is not lined up with the keys around it; indent it exactly as far as \
             the other keys of its mapping (or list items `-` of its list)"
        );
    } else if raw.contains("more than one document") {
        message = format!("{message}; expected one spec per file (remove the extra `---`)");
    } else if let Some(key) = duplicate_of(&raw) {
        let at = super::locate::duplicate_key(source, line, column, &key);
        let path = raw.split_once(": duplicate entry").map(|(p, _)| p);
        let (dl, dc) = at.unwrap_or((line, column));
        message = format!(
            "{}duplicate key `{key}` (the mapping starts at line {line}); expected each key once",
            path.map(|p| format!("{p}: ")).unwrap_or_default()
        );
        line = dl;
        column = dc;
    } else if raw.starts_with("missing field `name`") {
        message = format!("{message}: every spec needs `name` (letters, digits, `-`, `_`, `.`)");
    } else if let Some((l, c)) = context_mark(&raw) {
        // A quoted scalar or flow collection left open: libyaml reports where the file ended;
        // the mistake is where the scanner started (the context mark).
        line = l;
        column = c;
        message = if raw.contains("while scanning a quoted scalar") {
            "this quoted string is never closed: the file ends before its closing quote".into()
        } else {
            format!("{message}; it starts here and is never closed")
        };
    } else if let Some(n) = too_large(&raw) {
        let key = raw
            .split_once(": invalid")
            .map(|(k, _)| format!("{k}: "))
            .unwrap_or_default();
        message = format!(
            "{key}the number {n} is too large; expected a whole number of at most {}",
            u64::MAX
        );
    }
    let help = unknown_name(&raw)
        .and_then(|(word, expected)| {
            super::errors::did_you_mean(&word, expected.iter().map(String::as_str))
                .map(|m| format!("did you mean `{m}`?"))
        })
        .or_else(|| type_help(&raw));
    let e = SpecError::at_position(path, line, column, message).with_source(source);
    match help {
        Some(h) => e.with_help(h),
        None => e,
    }
}

/// The fix for a value of the wrong type (`KEY: invalid type: …, expected T`): the type
/// wanted, as an example line.
fn type_help(raw: &str) -> Option<String> {
    let (path, rest) = raw.split_once(": invalid type: ")?;
    let expected = rest.split_once(", expected ")?.1;
    let key = path
        .rsplit(['.', '['])
        .next()
        .unwrap_or(path)
        .trim_end_matches(']');
    let key = if key.is_empty() || key.contains(' ') {
        "key"
    } else {
        key
    };
    let example = if expected.starts_with("u32") || expected.starts_with("u64") {
        format!("a whole number without quotes, e.g. `{key}: 20`")
    } else if expected.starts_with("f64") {
        format!("a number without quotes, e.g. `{key}: 1.5`")
    } else if expected.starts_with("a boolean") {
        format!("`true` or `false`, e.g. `{key}: true`")
    } else if expected.starts_with("a sequence") {
        format!("a list, e.g. `{key}: [a, b]` or one `- item` per line under `{key}:`")
    } else if expected.starts_with("a string") {
        format!("text; quote it when it looks like a number or holds `: `, e.g. `{key}: \"…\"`")
    } else if expected.starts_with("struct") || expected.starts_with("a map") {
        format!("a mapping: its keys on the lines below `{key}:`, indented two spaces")
    } else {
        return None;
    };
    Some(format!("expected {example}"))
}

/// Plain words for libyaml's "mapping values are not allowed in this context" at `line`: a
/// `key: value` where the line above left a plain value, most often a line indented deeper than
/// the key before it (or a value holding `: ` that needs quotes).
fn indentation_message(source: &str, line: usize) -> String {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let lines: Vec<&str> = source.lines().collect();
    let this = lines.get(line.saturating_sub(1)).copied().unwrap_or("");
    let above = lines
        .iter()
        .enumerate()
        .take(line.saturating_sub(1))
        .rev()
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    match above {
        Some((i, a)) if indent(this) > indent(a) && !a.trim_end().ends_with(':') => format!(
            "line {line} is indented more than line {} above it, which already has a value; \
             indent line {line} by {} space(s) like that key, or, if the value itself holds \
             `: `, put it in quotes",
            i + 1,
            indent(a)
        ),
        _ => format!(
            "line {line} has a `key: value` where YAML expected a plain value; check line \
             {line}'s indentation, or put a value holding `: ` in quotes"
        ),
    }
}

/// The context mark of a libyaml error about a scalar or collection left open at the end of
/// the input (`found unexpected end of stream …, while scanning a quoted scalar at line L column
/// C`).
fn context_mark(raw: &str) -> Option<(usize, usize)> {
    if !raw.contains("unexpected end of stream") {
        return None;
    }
    let (_, ctx) = raw.split_once(", while ")?;
    let at = ctx.find(" at line ")?;
    let rest = &ctx[at + " at line ".len()..];
    let (l, rest) = rest.split_once(" column ")?;
    let c: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((l.parse().ok()?, c.parse().ok()?))
}

/// The number of a "number too large" error (`invalid type: integer `N` as u128`, for a
/// number beyond 64 bits), if it is one.
fn too_large(raw: &str) -> Option<String> {
    let at = raw.find(": integer `").map(|i| i + ": integer `".len())?;
    let (n, tail) = raw[at..].split_once('`')?;
    tail.starts_with(" as u128").then(|| n.to_string())
}

/// The word and the accepted names of an "unknown field `x`, expected one of `a`, `b`" or
/// "unknown variant …" error.
fn unknown_name(raw: &str) -> Option<(String, Vec<String>)> {
    let at = raw
        .find("unknown field `")
        .map(|i| i + "unknown field `".len())
        .or_else(|| {
            raw.find("unknown variant `")
                .map(|i| i + "unknown variant `".len())
        })?;
    let rest = &raw[at..];
    let (word, tail) = rest.split_once('`')?;
    let expected = tail
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((word.to_string(), expected))
}

/// The key of a yaml_serde "duplicate entry with key \"K\"" message.
fn duplicate_of(raw: &str) -> Option<String> {
    let rest = raw.split_once("duplicate entry with key ")?.1;
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_string())
}

/// The first line at or before `line` (1-based) whose indentation starts with a tab, as a
/// position of that tab — only for syntax errors, where such a tab is the likely cause.
fn tab_indent_before(source: &str, line: usize) -> Option<(usize, usize)> {
    source
        .lines()
        .take(line)
        .enumerate()
        .filter_map(|(i, l)| {
            let indent: String = l.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
            indent.find('\t').map(|p| (i + 1, p + 1))
        })
        .last()
        .filter(|(l, _)| *l + 1 >= line)
}

/// Remove ` at line N column M` / ` at position N` from a yaml_serde message.
fn strip_marks(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(" at ") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 4..];
        if let Some(len) = mark_len(tail) {
            rest = &tail[len..];
        } else {
            out.push_str(" at ");
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// Length of a leading `line N column M` or `position N` in `s`.
fn mark_len(s: &str) -> Option<usize> {
    let digits = |t: &str| t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if let Some(t) = s.strip_prefix("line ") {
        let n = digits(t);
        let t2 = t[n..].strip_prefix(" column ")?;
        let m = digits(t2);
        (n > 0 && m > 0).then_some(5 + n + 8 + m)
    } else if let Some(t) = s.strip_prefix("position ") {
        let n = digits(t);
        (n > 0).then_some(9 + n)
    } else {
        None
    }
}

/// Replace Rust type names in serde messages with what a spec author understands.
fn friendly(msg: &str) -> String {
    msg.replace(
        "expected u32",
        "expected a whole number from 0 to 4294967295",
    )
    .replace(
        "expected u64",
        "expected a whole number from 0 to 18446744073709551615",
    )
    .replace("expected f64", "expected a number")
    .replace("expected a sequence", "expected a list")
    .replace("expected a map", "expected a mapping")
    .replace("expected struct ", "expected a mapping for ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_marks() {
        assert_eq!(
            strip_marks("found x at line 3 column 7, while scanning at line 2 column 1"),
            "found x, while scanning"
        );
        assert_eq!(strip_marks("bad at position 12"), "bad");
        assert_eq!(strip_marks("look at this"), "look at this");
    }

    #[test]
    fn friendlier_types() {
        assert_eq!(
            friendly("invalid type: string \"lots\", expected u32"),
            "invalid type: string \"lots\", expected a whole number from 0 to 4294967295"
        );
    }
}
