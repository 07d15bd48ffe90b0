//! The committed event schemas (`schema/*.schema.json`), loaded once, and the check every
//! test's stream-json frames and transcript records go through: [`Run::json`](super::Run::json)
//! validates each frame it parses, [`read_json_lines`](super::read_json_lines) each record of a
//! `transcript.jsonl`, so every run of the suite is checked against the published contract.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use jsonschema::Validator;
use serde_json::Value;

/// The validator of `schema/FILE`.
pub fn committed_schema(file: &str) -> Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

static FRAME: LazyLock<Validator> = LazyLock::new(|| committed_schema("stream-json.schema.json"));
static RECORD: LazyLock<Validator> = LazyLock::new(|| committed_schema("transcript.schema.json"));

/// Why `v` is not valid against `schema` (empty when it is).
pub fn schema_errors(schema: &Validator, v: &Value) -> Vec<String> {
    schema
        .iter_errors(v)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Panic unless each stdout line that is a frame (it carries a `session_id`: stream-json
/// frames and `json` result lines) is valid against `stream-json.schema.json`.
pub fn check_frames(lines: &[Value]) {
    for l in lines.iter().filter(|l| l["session_id"].is_string()) {
        let errs = schema_errors(&FRAME, l);
        assert!(
            errs.is_empty(),
            "a frame does not match schema/stream-json.schema.json:\n{l}\n  {}",
            errs.join("\n  ")
        );
    }
}

/// Panic unless each record of `path`, when it is a `transcript.jsonl`, is valid against
/// `transcript.schema.json`.
pub fn check_records(path: &Path, lines: &[Value]) {
    if path.file_name().is_none_or(|n| n != "transcript.jsonl") {
        return;
    }
    for l in lines {
        let errs = schema_errors(&RECORD, l);
        assert!(
            errs.is_empty(),
            "a record of {} does not match schema/transcript.schema.json:\n{l}\n  {}",
            path.display(),
            errs.join("\n  ")
        );
    }
}
