//! Snapshots of the scripted run's transcript lines, stream-json frames and JUnit XML.
//! Ids come from the events or from counters and durations/start times are fixed in the
//! script; the transcript's real-clock timestamps are masked with an insta redaction.

use std::sync::Arc;

use runner::report::junit::render_junit;
use runner::report::stream_json::StreamJsonSink;
use runner::transcript::{RecordBuilder, TranscriptSink};

use crate::support::{Buf, counter, feed, read_json_lines};
use runner_test_support::script;

#[test]
fn transcript_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut sink = TranscriptSink::create(&path, Arc::new(script::redactor()))
        .unwrap()
        .with_builder(RecordBuilder::new().with_uuid_source(counter("gen")));
    feed(&mut sink, &script::events());
    // Real clock: mask the timestamps.
    insta::assert_json_snapshot!(read_json_lines(&path), {
        "[].timestamp" => "[timestamp]",
    });
}

#[test]
fn stream_json_frames() {
    let buf = Buf::default();
    let mut sink = StreamJsonSink::new(buf.shared(), Arc::new(script::redactor()))
        .with_uuid_source(counter("gen"));
    feed(&mut sink, &script::events());
    insta::assert_json_snapshot!(buf.lines());
}

#[test]
fn junit_xml() {
    let mut fail = script::result(runner::outcome::Outcome::new(
        runner::outcome::OutcomeKind::ChecksFailed,
        "check `cargo test` exited 101",
    ));
    fail.task_name = "add-test".into();
    fail.errors = vec!["check `cargo test` exited 101:\ntest foo ... FAILED".into()];
    insta::assert_snapshot!(render_junit(&[script::success(), fail], "ci-host"));
}
