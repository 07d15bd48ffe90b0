//! The JSON Schema of a [`ContentBlock`]: its `Serialize` is
//! hand-written (the API's shape, unknown block types kept verbatim), so its schema is too.
//! It follows [`ContentBlock::to_value`](crate::model::ContentBlock::to_value) field by field.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use crate::model::ContentBlock;

/// The `type`s runner models; any other type is a block kept verbatim.
const KNOWN_TYPES: [&str; 5] = [
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
];

impl JsonSchema for ContentBlock {
    fn schema_name() -> Cow<'static, str> {
        "ContentBlock".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "One content block, in the Anthropic Messages API shape.",
            "oneOf": [
                {
                    "description": "Plain text, optionally with citations (kept verbatim).",
                    "type": "object",
                    "properties": {
                        "type": {"const": "text"},
                        "text": {"type": "string"},
                        "citations": {"type": "array"}
                    },
                    "required": ["type", "text"],
                    "additionalProperties": false
                },
                {
                    "description": "Extended thinking with the signature the API attached.",
                    "type": "object",
                    "properties": {
                        "type": {"const": "thinking"},
                        "thinking": {"type": "string"},
                        "signature": {"type": "string"}
                    },
                    "required": ["type", "thinking", "signature"],
                    "additionalProperties": false
                },
                {
                    "description": "Redacted thinking: an opaque payload.",
                    "type": "object",
                    "properties": {
                        "type": {"const": "redacted_thinking"},
                        "data": {"type": "string"}
                    },
                    "required": ["type", "data"],
                    "additionalProperties": false
                },
                {
                    "description": "A tool call made by the model.",
                    "type": "object",
                    "properties": {
                        "type": {"const": "tool_use"},
                        "id": {"type": "string"},
                        "name": {"type": "string"},
                        "input": true
                    },
                    "required": ["type", "id", "name", "input"],
                    "additionalProperties": false
                },
                {
                    "description": "The result of a tool call; `is_error` only when true.",
                    "type": "object",
                    "properties": {
                        "type": {"const": "tool_result"},
                        "tool_use_id": {"type": "string"},
                        "content": {"type": "string"},
                        "is_error": {"const": true}
                    },
                    "required": ["type", "tool_use_id", "content"],
                    "additionalProperties": false
                },
                {
                    "description": "A block type runner does not model (server tools, newer types), kept verbatim.",
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "not": {"enum": KNOWN_TYPES}}
                    },
                    "required": ["type"]
                }
            ]
        })
    }
}
