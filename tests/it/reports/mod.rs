//! Integration tests of the output sinks: transcript, stream-json, json, text and JUnit.

mod json_text;
mod junit;
mod snapshots;
mod stream_json;
mod transcript;
