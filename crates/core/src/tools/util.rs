//! Helpers shared by the tools: input parsing, path rules, mtimes, the read-before-write
//! check, head/tail truncation and structured patches.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::{CallError, ReadRecord, ToolContext};
use crate::roots::normalize_lexically;

/// Parse a tool's input, checking it against the tool's JSON Schema first so that errors name
/// the offending field (serde alone reports type errors without the field name).
pub(crate) fn parse_input<T: DeserializeOwned>(
    schema: &Value,
    input: &Value,
) -> Result<T, CallError> {
    check_schema(schema, input)?;
    serde_json::from_value(input.clone()).map_err(|e| call_error!("invalid input: {e}"))
}

/// A shallow JSON Schema check: `input` is an object, `required` fields are present and every
/// known property has the declared type (or one of the `enum` values). Unknown fields are
/// ignored on purpose: models sometimes add fields.
pub(crate) fn check_schema(schema: &Value, input: &Value) -> Result<(), CallError> {
    let Some(obj) = input.as_object() else {
        return Err("the input must be a JSON object".into());
    };
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for field in required.iter().filter_map(Value::as_str) {
            if obj.get(field).is_none_or(Value::is_null) {
                return Err(call_error!("the required parameter `{field}` is missing"));
            }
        }
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, value) in obj {
        let Some(prop) = props.get(name) else {
            continue;
        };
        if value.is_null() {
            continue;
        }
        if let Some(allowed) = prop.get("enum").and_then(Value::as_array) {
            if !allowed.contains(value) {
                let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
                return Err(call_error!(
                    "the parameter `{name}` must be one of {}, got {value}",
                    list.join(", ")
                ));
            }
            continue;
        }
        let ok = match prop.get("type").and_then(Value::as_str) {
            Some("string") => value.is_string(),
            Some("boolean") => value.is_boolean(),
            Some("number") => value.is_number() || numeric_string(value),
            Some("integer") => {
                value.is_i64() || value.is_u64() || whole_float(value) || numeric_string(value)
            }
            Some("array") => value.is_array(),
            Some("object") => value.is_object(),
            _ => true,
        };
        if !ok {
            let expected = prop.get("type").and_then(Value::as_str).unwrap_or("?");
            return Err(call_error!(
                "the parameter `{name}` type is expected as `{expected}` but provided as `{}`",
                json_type(value)
            ));
        }
    }
    Ok(())
}

fn whole_float(v: &Value) -> bool {
    v.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn numeric_string(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.trim().parse::<f64>().is_ok())
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Deserialize an optional non-negative count from a JSON number (integer or whole float) or a
/// numeric string; negative values become 0.
pub(crate) fn de_opt_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    let n = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(_) => None,
    };
    match n {
        Some(f) if f.is_finite() => Ok(Some(if f < 0.0 { 0 } else { f as u64 })),
        _ => Err(serde::de::Error::custom("expected a number")),
    }
}

/// Deserialize an optional boolean, also accepting the strings `"true"` / `"false"`.
pub(crate) fn de_opt_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(Value::String(s)) if s == "true" => Ok(Some(true)),
        Some(Value::String(s)) if s == "false" => Ok(Some(false)),
        Some(_) => Err(serde::de::Error::custom("expected a boolean")),
    }
}

/// An absolute `file_path`, lexically normalized; relative paths are refused.
pub(crate) fn absolute_path(field: &str, raw: &str) -> Result<PathBuf, CallError> {
    if raw.trim().is_empty() {
        return Err(call_error!("`{field}` must not be empty"));
    }
    let p = Path::new(raw);
    if !p.is_absolute() {
        return Err(call_error!(
            "`{field}` must be an absolute path, not a relative path (got `{raw}`)"
        ));
    }
    Ok(normalize_lexically(p))
}

/// A path that may be absolute or relative to the workdir; `None`, empty, `"undefined"` and
/// `"null"` mean the workdir itself.
pub(crate) fn search_root(ctx: &ToolContext, raw: Option<&str>) -> PathBuf {
    match raw.map(str::trim) {
        None | Some("") | Some("undefined") | Some("null") => ctx.session.roots.workdir.clone(),
        Some(p) => ctx.session.roots.resolve(Path::new(p)),
    }
}

/// The modification time of `path`, if it can be read.
pub(crate) fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Remember that `path` was read (or written) now.
pub(crate) fn record_read(ctx: &ToolContext, path: &Path, full: bool) {
    let record = ReadRecord {
        mtime: mtime(path),
        full,
    };
    let mut state = ctx
        .session
        .read_state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    state.record(path.to_path_buf(), record);
}

/// The read-before-write rule for an existing file: it must have been Read in this task and
/// not changed on disk since. `Err` is the message for the model.
pub(crate) fn check_read_before_write(ctx: &ToolContext, path: &Path) -> Result<(), CallError> {
    let record = {
        let state = ctx
            .session
            .read_state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        state.get(path).cloned()
    };
    let Some(record) = record else {
        return Err(call_error!(
            "File has not been read yet. Read it first before writing to it: {}",
            path.display()
        ));
    };
    if record.mtime != mtime(path) {
        return Err(call_error!(
            "File has been modified since read, either by the user or by a linter. \
             Read it again before attempting to write it: {}",
            path.display()
        ));
    }
    Ok(())
}

/// Whether a text uses CRLF line endings (more `\r\n` than lone `\n`).
pub(crate) fn uses_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count();
    crlf > 0 && crlf * 2 >= lf
}

/// Convert lone `\n` to `\r\n` (existing `\r\n` stay as they are).
pub(crate) fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Lines of context around each hunk of a structured patch (as `diff -u`).
const PATCH_CONTEXT: usize = 3;

/// Claude Code's `structuredPatch`: hunks `{oldStart, oldLines, newStart, newLines, lines}`
/// with 1-based starts and lines prefixed by ` `, `-` or `+` (no line terminators).
pub(crate) fn structured_patch(old: &str, new: &str) -> Value {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(old, new);
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(PATCH_CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let old_end = last.old_range().end;
        let new_start = first.new_range().start;
        let new_end = last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let prefix = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let text = change.to_string_lossy();
                let text = text.strip_suffix('\n').unwrap_or(&text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                lines.push(Value::String(format!("{prefix}{text}")));
            }
        }
        let old_lines = old_end - old_start;
        let new_lines = new_end - new_start;
        // diff -u convention: an empty side starts at the line before the hunk.
        let old_start = if old_lines == 0 {
            old_start
        } else {
            old_start + 1
        };
        let new_start = if new_lines == 0 {
            new_start
        } else {
            new_start + 1
        };
        hunks.push(json!({
            "oldStart": old_start,
            "oldLines": old_lines,
            "newStart": new_start,
            "newLines": new_lines,
            "lines": lines,
        }));
    }
    Value::Array(hunks)
}

/// Run blocking work off the async runtime, logging where the calling task logs; a panicked
/// worker becomes an error message.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, CallError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(crate::log::carried(f))
        .await
        .map_err(|e| call_error!("internal error: the tool's worker failed: {e}"))
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::Arc;

    use tokio_util::sync::CancellationToken;

    use serde_json::Value;

    use crate::process::ChildPolicy;
    use crate::roots::SessionRoots;
    use crate::tools::{DynTool, Erased, Tool, ToolContext, ToolFatal, ToolOutput};

    /// Parse and check `input` for `tool` as the executor does.
    pub(crate) fn validate<T: Tool + Clone>(
        tool: &T,
        input: &Value,
        ctx: &ToolContext,
    ) -> Result<(), crate::tools::CallError> {
        Erased(Arc::new(tool.clone())).parse(input, ctx).map(|_| ())
    }

    /// Run one call of `tool` as the executor does: an input error is an error result.
    pub(crate) async fn call<T: Tool + Clone>(
        tool: &T,
        input: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolFatal> {
        match Erased(Arc::new(tool.clone())).parse(&input, ctx) {
            Ok(c) => c.run(ctx).await,
            Err(e) => Ok(ToolOutput::error(format!("InputValidationError: {e}"))),
        }
    }

    /// A context rooted in a fresh temporary directory (kept alive by the returned guard).
    pub(crate) fn ctx() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let workdir = base.join("work");
        let output_dir = base.join("out");
        std::fs::create_dir_all(&workdir).unwrap();
        std::fs::create_dir_all(&output_dir).unwrap();
        let roots = SessionRoots {
            spec_dir: workdir.clone(),
            repo_root: None,
            workdir,
            additional_dirs: vec![],
            output_dir,
            source_root: None,
        };
        let ctx = ToolContext::new(
            Arc::new(roots),
            ChildPolicy::default(),
            CancellationToken::new(),
        );
        (dir, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_check_names_the_field() {
        let schema = json!({
            "type": "object",
            "properties": {"file_path": {"type": "string"}, "limit": {"type": "number"},
                           "mode": {"type": "string", "enum": ["a", "b"]}},
            "required": ["file_path"]
        });
        let e = check_schema(&schema, &json!({})).unwrap_err();
        assert!(e.contains("`file_path` is missing"), "{e}");
        let e = check_schema(&schema, &json!({"file_path": 3})).unwrap_err();
        assert!(e.contains("`file_path`") && e.contains("string"), "{e}");
        let e = check_schema(&schema, &json!({"file_path": "/x", "mode": "c"})).unwrap_err();
        assert!(e.contains("`mode`"), "{e}");
        check_schema(
            &schema,
            &json!({"file_path": "/x", "extra": 1, "limit": "5"}),
        )
        .unwrap();
    }

    #[test]
    fn absolute_paths_only() {
        assert!(
            absolute_path("file_path", "rel/x")
                .unwrap_err()
                .contains("absolute")
        );
        assert_eq!(
            absolute_path("file_path", "/a/./b/../c").unwrap(),
            PathBuf::from("/a/c")
        );
    }

    #[test]
    fn patch_hunks_are_one_based() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let p = structured_patch(old, new);
        assert_eq!(
            p,
            json!([{"oldStart": 2, "oldLines": 7, "newStart": 2, "newLines": 7,
                    "lines": [" b", " c", " d", "-e", "+E", " f", " g", " h"]}])
        );
        let created = structured_patch("", "x\ny\n");
        assert_eq!(created[0]["oldStart"], 0);
        assert_eq!(created[0]["newStart"], 1);
        assert_eq!(created[0]["lines"], json!(["+x", "+y"]));
    }

    #[test]
    fn every_builtin_schema_is_well_formed() {
        for name in crate::tools::builtin::names() {
            let tool = crate::tools::builtin::make(name).unwrap();
            let spec = tool.spec();
            let schema = spec.input_schema;
            assert_eq!(schema["type"], "object", "{name}");
            assert_eq!(schema["additionalProperties"], false, "{name}");
            let props = schema["properties"].as_object().unwrap();
            for req in schema["required"].as_array().unwrap() {
                assert!(props.contains_key(req.as_str().unwrap()), "{name}: {req}");
            }
            for (field, prop) in props {
                assert!(prop["description"].is_string(), "{name}.{field}");
            }
            assert!(spec.description.len() > 200, "{name}");
            // An empty object fails validation naming the first required field.
            let (_d, ctx) = test_support::ctx();
            let e = tool.parse(&json!({}), &ctx).map(|_| ()).unwrap_err();
            assert!(e.contains("is missing"), "{name}: {e}");
        }
    }

    #[test]
    fn crlf_detection() {
        assert!(uses_crlf("a\r\nb\r\n"));
        assert!(!uses_crlf("a\nb\n"));
        assert_eq!(to_crlf("a\nb\r\nc"), "a\r\nb\r\nc");
    }
}
