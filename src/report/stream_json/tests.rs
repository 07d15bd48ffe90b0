//! The exact bytes of every frame variant, pinned: a change to a frame's keys, their order or
//! their values shows here as a snapshot diff.

use std::sync::Arc;

use crate::contract::fixtures;
use crate::redact::Redactor;
use crate::report::shared_out;

use super::StreamJsonSink;

#[test]
fn every_frame_keeps_its_bytes() {
    let mut sink = StreamJsonSink::new(shared_out(std::io::sink()), Arc::new(Redactor::default()))
        .with_uuid_source(fixtures::counter());
    for (name, event) in fixtures::events() {
        let line = sink.frame(&event).map_or_else(
            || "(no frame)".to_string(),
            |f| serde_json::to_string(&f).unwrap(),
        );
        insta::assert_snapshot!(name, line);
    }
}
