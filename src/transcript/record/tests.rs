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
