//! Serializers that cannot fail on what they are given, so one odd value never costs a whole
//! record or frame.

use std::path::Path;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};

/// A path written as it displays: a path that is not UTF-8 is written with replacement
/// characters (serde's own `Path` serializer refuses it).
#[derive(Debug, Clone, Copy)]
pub struct DisplayPath<'a>(pub &'a Path);

impl Serialize for DisplayPath<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0.display())
    }
}

impl JsonSchema for DisplayPath<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Path".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string"})
    }
}

/// Serialize `value`, or `null` when it cannot be serialized (e.g. a `PathBuf` inside it is
/// not UTF-8). For `#[serde(serialize_with)]`; the value is first converted to JSON, so use it
/// only for small values.
pub(crate) fn or_null<T: Serialize, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    match serde_json::to_value(value) {
        Ok(v) => v.serialize(s),
        Err(_) => s.serialize_none(),
    }
}
