//! The published JSON Schemas of runner's event contracts, generated from the types that
//! write them: stream-json frames, transcript records, the result message, `result.json` and
//! the GitHub step outputs. `schema/*.schema.json` holds them as committed files (kept equal by
//! the `schema_sync` test); each release attaches them.
//!
//! Every schema records the contract version it describes ([`SCHEMA_VERSION`], as
//! `x-schema-version`); [`compat`] tells how much a change to a schema must raise it.

pub mod compat;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

pub use crate::contract::SCHEMA_VERSION;
use crate::contract::result::ResultMessage;
use crate::report::result_file::ResultFile;
use crate::report::step_outputs::StepOutputs;
use crate::report::stream_json::frame::Frame;
use crate::transcript::record::Record;

/// The key under which a schema records the contract version it describes.
pub const VERSION_KEY: &str = "x-schema-version";

/// One published schema.
#[derive(Debug, Clone)]
pub struct EventSchema {
    /// Its file name under `schema/` (and in a release).
    pub file: &'static str,
    /// The schema (draft 2020-12).
    pub schema: Value,
}

impl EventSchema {
    /// The schema as pretty JSON with a trailing newline, as committed.
    pub fn pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.schema).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Every published event schema, in a fixed order.
pub fn event_schemas() -> Vec<EventSchema> {
    vec![
        generate::<Frame<'static>>(
            "stream-json.schema.json",
            "runner stream-json frame",
            "One line of `--output-format stream-json`: a `system`, `user` or `assistant` \
             frame, or the closing `result` message.",
        ),
        generate::<Record<'static>>(
            "transcript.schema.json",
            "runner transcript record",
            "One line of a transcript (`transcript.jsonl`): Claude Code's record shape plus \
             runner's `runner_*` system records.",
        ),
        generate::<ResultMessage<'static>>(
            "result-message.schema.json",
            "runner result message",
            "The line of `--output-format json`, stream-json's last frame and the `result` of \
             the transcript's `runner_result` record.",
        ),
        generate::<ResultFile>(
            "result-file.schema.json",
            "runner result.json",
            "The `result.json` each task leaves in its output directory.",
        ),
        generate::<StepOutputs>(
            "step-outputs.schema.json",
            "runner GitHub step outputs",
            "The step outputs runner writes to `$GITHUB_OUTPUT` (the Action's outputs), as an \
             object of strings.",
        ),
    ]
}

/// The schema of `T` as written (serialize contract), with `$schema`, `$id`, `title`,
/// `description` and the version first.
fn generate<T: JsonSchema>(file: &'static str, title: &str, description: &str) -> EventSchema {
    let generated = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let mut rest = match generated {
        Value::Object(m) => m,
        other => {
            return EventSchema {
                file,
                schema: other,
            };
        }
    };
    let mut out = Map::new();
    if let Some(s) = rest.remove("$schema") {
        out.insert("$schema".into(), s);
    }
    out.insert(
        "$id".into(),
        format!(
            "{}/releases/latest/download/{file}",
            env!("CARGO_PKG_REPOSITORY")
        )
        .into(),
    );
    rest.remove("title");
    rest.remove("description");
    out.insert("title".into(), title.into());
    out.insert("description".into(), description.into());
    out.insert(VERSION_KEY.into(), SCHEMA_VERSION.into());
    out.extend(rest);
    // Every line type is closed: a field runner does not write is an error. A root that is a
    // union of variants (stream-json's frames) gets `unevaluatedProperties`, which sees the
    // fields of the variant that matched.
    if !out.contains_key("additionalProperties") && !out.contains_key("unevaluatedProperties") {
        out.insert("unevaluatedProperties".into(), false.into());
    }
    let mut schema = Value::Object(out);
    plain_descriptions(&mut schema);
    EventSchema { file, schema }
}

/// Descriptions come from doc comments: their intra-doc links (`` [`X`](path) ``, `` [`X`] ``)
/// become plain code spans, which read the same outside rustdoc.
fn plain_descriptions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                match child {
                    Value::String(s) if k == "description" => *s = strip_links(s),
                    _ => plain_descriptions(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(plain_descriptions),
        _ => {}
    }
}

/// `text` with `` [`X`](target) `` and `` [`X`] `` written as `` `X` ``.
fn strip_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        let Some(end) = rest[start..].find("`]").map(|e| start + e) else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&rest[start + 1..end + 1]);
        rest = &rest[end + 2..];
        if rest.starts_with('(')
            && let Some(close) = rest.find(')')
        {
            rest = &rest[close + 1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::strip_links;

    #[test]
    fn intra_doc_links_become_code_spans() {
        assert_eq!(
            strip_links("Always [`Role::User`]; see [`X`](crate::a::X) or [x](y)."),
            "Always `Role::User`; see `X` or [x](y)."
        );
        assert_eq!(strip_links("no [`end"), "no [`end");
    }
}
