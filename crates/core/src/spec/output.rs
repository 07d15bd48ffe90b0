//! `output:`: resolve the structured-output JSON Schema (inline or `schema_file`) and check it
//! at load time, against its meta-schema and by compiling it, so a broken schema is a spec
//! error (exit 2) and never a failure in the middle of a run.

use std::path::Path;

use serde_json::Value;

use super::errors::SpecError;
use super::types::OutputSpec;

/// Most meta-schema errors listed in one spec error.
const MAX_LISTED: usize = 5;

/// The checked schema of `output`, read from `schema_file` (relative to `dir`) when that is
/// how it is given. Errors point at the spec key, or at the schema file's line and column for
/// a file that does not parse.
pub fn resolve(
    spec_path: &Path,
    source: &str,
    dir: &Path,
    output: &OutputSpec,
    read: impl Fn(&Path, &str) -> Result<String, SpecError>,
) -> Result<Value, SpecError> {
    let at = |key: &str, msg: String| SpecError::in_source(spec_path, source, key, msg);
    let (schema, key, shown) = match (&output.schema, &output.schema_file) {
        (Some(_), Some(_)) => {
            return Err(at(
                "output.schema_file",
                "both `output.schema` and `output.schema_file` are set; expected exactly one"
                    .into(),
            ));
        }
        (None, None) => {
            return Err(at(
                "output",
                "`output` needs `schema` (an inline JSON Schema) or `schema_file` (a JSON or \
                 YAML file relative to the spec)"
                    .into(),
            ));
        }
        (Some(s), None) => (s.clone(), "output.schema", None),
        (None, Some(file)) => {
            let full = dir.join(file);
            let shown = format!(
                "output.schema_file {} (resolved to {})",
                file.display(),
                full.display()
            );
            let text = read(&full, &shown).map_err(|e| at("output.schema_file", e.message))?;
            (
                parse_file(&full, &text)?,
                "output.schema_file",
                Some(file.display().to_string()),
            )
        }
    };
    check(&schema).map_err(|(pointer, msg)| match &shown {
        // Inline: point at the offending keyword inside the spec.
        None => at(&key_path(key, &schema, &pointer), msg),
        Some(file) => at(key, format!("schema file {file}: {msg}")),
    })?;
    Ok(schema)
}

/// Parse a schema file: JSON for `*.json`, YAML otherwise.
fn parse_file(path: &Path, text: &str) -> Result<Value, SpecError> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json {
        serde_json::from_str(text).map_err(|e| {
            SpecError::at_position(
                path,
                e.line().max(1),
                e.column().max(1),
                format!("not valid JSON: {e}; expected a JSON Schema"),
            )
            .with_source(text)
        })
    } else {
        yaml_serde::from_str(text).map_err(|e| {
            let (line, column) = e
                .location()
                .map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
            SpecError::at_position(
                path,
                line,
                column,
                format!("not valid YAML: {e}; expected a JSON Schema"),
            )
            .with_source(text)
        })
    }
}

/// Check a schema; on failure the JSON pointer of the offending place and the message.
pub fn check(schema: &Value) -> Result<(), (String, String)> {
    let Some(obj) = schema.as_object() else {
        return Err((
            String::new(),
            "the output schema must be a mapping (a JSON Schema object) with `type: object`".into(),
        ));
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err((
            String::new(),
            "the output schema's root must have `type: object` (the model answers with a tool \
             call whose input is an object); wrap other values in a property, e.g. \
             `{type: object, properties: {answer: …}, required: [answer]}`"
                .into(),
        ));
    }
    let meta = jsonschema::meta::validator_for(schema)
        .map_err(|e| (String::new(), format!("unknown `$schema`: {e}")))?;
    let errors: Vec<(String, String)> = meta
        .iter_errors(schema)
        .map(|e| (e.instance_path().as_str().to_string(), e.to_string()))
        .collect();
    if let Some((first, _)) = errors.first() {
        let mut msg = String::from("the output schema is not a valid JSON Schema: ");
        let listed: Vec<String> = errors
            .iter()
            .take(MAX_LISTED)
            .map(|(p, m)| format!("{}: {m}", if p.is_empty() { "(root)" } else { p }))
            .collect();
        msg.push_str(&listed.join("; "));
        if errors.len() > MAX_LISTED {
            msg.push_str(&format!("; … and {} more", errors.len() - MAX_LISTED));
        }
        return Err((first.clone(), msg));
    }
    jsonschema::validator_for(schema).map_err(|e| {
        (
            e.instance_path().as_str().to_string(),
            format!("the output schema cannot be used: {e}"),
        )
    })?;
    Ok(())
}

/// The spec key path (`output.schema["properties"]["x"]`) of a JSON pointer into `schema`.
fn key_path(base: &str, schema: &Value, pointer: &str) -> String {
    let mut out = base.to_string();
    let mut cur = Some(schema);
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        match cur {
            Some(Value::Array(items)) => {
                let i: usize = seg.parse().unwrap_or(0);
                out.push_str(&format!("[{i}]"));
                cur = items.get(i);
            }
            Some(Value::Object(m)) => {
                out.push_str(&format!("[\"{seg}\"]"));
                cur = m.get(&seg);
            }
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_an_object_schema() {
        assert!(check(&json!({"type": "object", "properties": {"a": {"type": "string"}}})).is_ok());
    }

    #[test]
    fn rejects_non_object_roots_and_bad_keywords() {
        assert!(
            check(&json!({"type": "string"}))
                .unwrap_err()
                .1
                .contains("type: object")
        );
        assert!(check(&json!([1])).is_err());
        let (ptr, msg) =
            check(&json!({"type": "object", "properties": {"a": {"type": "strin"}}})).unwrap_err();
        assert_eq!(ptr, "/properties/a/type");
        assert!(msg.contains("not a valid JSON Schema"), "{msg}");
        let (_, msg) = check(&json!({"type": "object", "required": "a"})).unwrap_err();
        assert!(msg.contains("/required"), "{msg}");
    }

    #[test]
    fn pointer_becomes_key_path() {
        let s = json!({"properties": {"a.b": {"enum": [1, 2]}}});
        assert_eq!(
            key_path("output.schema", &s, "/properties/a.b/enum/1"),
            "output.schema[\"properties\"][\"a.b\"][\"enum\"][1]"
        );
    }
}
