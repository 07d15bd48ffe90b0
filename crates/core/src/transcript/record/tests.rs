//! The exact bytes of every record variant, pinned: a change to a record's keys, their order or
//! their values shows here as a snapshot diff.

use crate::contract::fixtures;

use super::RecordBuilder;

fn builder() -> RecordBuilder {
    RecordBuilder::new()
        .with_clock(|| fixtures::TIMESTAMP.to_string())
        .with_uuid_source(fixtures::counter())
}

/// The records of `event` as the JSONL lines they become, or `(no record)`.
fn lines(builder: &mut RecordBuilder, event: &crate::events::RunEvent) -> String {
    let lines: Vec<String> = builder
        .records(event)
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    if lines.is_empty() {
        "(no record)".to_string()
    } else {
        lines.join("\n")
    }
}

#[test]
fn every_record_keeps_its_bytes() {
    let mut b = builder();
    for (name, event) in fixtures::events() {
        insta::assert_snapshot!(name, lines(&mut b, &event));
    }
}

#[test]
fn a_resumed_run_starts_with_runner_resume() {
    let mut b = builder().resuming(Some("a-0007".into()));
    let mut init = fixtures::init();
    init.uuid = "i-0002".into();
    let event = crate::events::RunEvent::Init(Box::new(init));
    insta::assert_snapshot!("resume", lines(&mut b, &event));
    let mut fresh = builder().resuming(None);
    insta::assert_snapshot!("resume_without_chain", lines(&mut fresh, &event));
}

#[test]
fn system_subtypes_are_the_names_the_reader_looks_for() {
    use super::*;
    let mut b = builder();
    let events = fixtures::events();
    let mut subtypes = Vec::new();
    for (_, e) in &events {
        for r in b.records(e) {
            if let RecordBody::System(_) = r.body {
                let v = serde_json::to_value(&r).unwrap();
                subtypes.push(v["subtype"].as_str().unwrap().to_string());
            }
        }
    }
    assert_eq!(
        subtypes,
        [
            SUBTYPE_INIT,
            SUBTYPE_PERMISSION_DENIED,
            SUBTYPE_PERMISSION_DENIED,
            SUBTYPE_API_RETRY,
            SUBTYPE_API_RETRY,
            SUBTYPE_ATTEMPT_ABANDONED,
            SUBTYPE_CHECKS,
            SUBTYPE_CHECKS,
            SUBTYPE_WORKTREE,
            SUBTYPE_TOOL_STARTED,
            SUBTYPE_NETWORK,
            SUBTYPE_NETWORK,
            SUBTYPE_INTEGRITY,
            SUBTYPE_INIT,
            SUBTYPE_INIT,
            SUBTYPE_INSTRUCTIONS,
            SUBTYPE_MODEL_FALLBACK,
            SUBTYPE_TIMING,
            SUBTYPE_COMPACT_BOUNDARY,
            SUBTYPE_RESULT,
            SUBTYPE_RESULT,
            SUBTYPE_RESULT,
        ]
    );
    let mut resumed = builder().resuming(None);
    let init = crate::events::RunEvent::Init(Box::new(fixtures::init()));
    let v = serde_json::to_value(&resumed.records(&init)[0]).unwrap();
    assert_eq!(v["subtype"], SUBTYPE_RESUME);
}

#[test]
fn the_sink_redacts_every_record() {
    use std::sync::Arc;

    use crate::events::Sink;
    use crate::redact::Redactor;
    use crate::transcript::TranscriptSink;

    let dir = tempfile::tempdir().unwrap();
    let written = |name: &str, redactor: Redactor| {
        let path = dir.path().join(name);
        let mut sink = TranscriptSink::create(&path, Arc::new(redactor))
            .unwrap()
            .with_builder(builder());
        for (_, e) in &fixtures::events() {
            sink.emit(e).unwrap();
        }
        std::fs::read_to_string(&path).unwrap()
    };
    let plain = written("plain.jsonl", Redactor::default());
    // In the prompt, paths, tool inputs, answers and the result message.
    let redacted = written(
        "redacted.jsonl",
        Redactor::new(vec![("DOC".into(), "README".into())]),
    );
    assert!(plain.matches("README").count() > 5);
    assert_eq!(redacted, plain.replace("README", "[REDACTED:DOC]"));
}
