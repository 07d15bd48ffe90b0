//! The task spec's JSON Schema (`runner schema`, `schema/task.schema.json`).

use super::types::TaskSpec;

/// The schema's `$id`: where every release publishes it (under the package's `repository`), so
/// editors can fetch it by this URL.
pub(crate) const SCHEMA_ID: &str = concat!(
    env!("CARGO_PKG_REPOSITORY"),
    "/releases/latest/download/task.schema.json"
);

/// The JSON Schema (draft 2020-12) of a task spec, generated from [`TaskSpec`]; `$schema`,
/// `$id`, `title` and `description` come first.
pub fn task_schema() -> serde_json::Value {
    let generated = schemars::schema_for!(TaskSpec).to_value();
    let serde_json::Value::Object(mut rest) = generated else {
        return generated;
    };
    let mut out = serde_json::Map::new();
    for key in ["$schema", "$id", "title", "description"] {
        let value = match key {
            "$id" => Some(SCHEMA_ID.into()),
            "title" => Some("runner task spec v1".into()),
            _ => None,
        };
        let old = rest.remove(key);
        if let Some(v) = value.or(old) {
            out.insert(key.to_string(), v);
        }
    }
    out.extend(rest);
    serde_json::Value::Object(out)
}

/// [`task_schema`] as pretty JSON with a trailing newline, as committed in
/// `schema/task.schema.json`.
pub fn task_schema_pretty() -> String {
    let mut text = serde_json::to_string_pretty(&task_schema()).unwrap_or_default();
    text.push('\n');
    text
}
