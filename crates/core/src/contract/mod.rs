//! The JSON contracts runner writes, as typed values, and the parts they share.
//!
//! Each line of a transcript, of stream-json and of the `json` output is a documented serde
//! type that borrows from the run's [`RunEvent`](crate::events::RunEvent)s and is serialized
//! once, redacted, by
//! [`Redactor::to_redacted_json`](crate::redact::Redactor::to_redacted_json). Where each
//! contract lives:
//!
//! | output | type | built by |
//! |---|---|---|
//! | transcript line (Claude Code's on-disk record) | [`Record`](crate::transcript::record::Record) in [`transcript::record`](crate::transcript::record) | [`RecordBuilder`](crate::transcript::RecordBuilder) |
//! | stream-json line (the Agent SDK's messages) | [`Frame`](crate::report::stream_json::frame::Frame) in [`report::stream_json::frame`](crate::report::stream_json::frame) | [`FrameBuilder`](crate::report::stream_json::FrameBuilder) |
//! | result message (`json` output, stream-json's last frame, the transcript's `runner_result`) | [`result::ResultMessage`] | [`ResultMessage::new`](result::ResultMessage::new) |
//! | user and assistant messages, usage | [`message`] | |
//! | `runner_*` fields both outputs write alike | [`system`] | |
//!
//! The transcript and stream-json differ in their envelopes (the transcript's common fields,
//! camelCase keys, `content`/`level` lines; stream-json's snake_case keys and `session_id`),
//! so each has its own record/frame enum; what they carry alike is built from one type here.
//!
//! Adding an event: a [`RunEvent`](crate::events::RunEvent) variant; a variant of
//! [`SystemRecord`](crate::transcript::record::SystemRecord) (usually an
//! [`OffChain`](crate::transcript::record::OffChain) of the event's fields) and its arm in
//! [`RecordBuilder::records`](crate::transcript::RecordBuilder::records); in
//! [`FrameBuilder::frame`](crate::report::stream_json::FrameBuilder::frame) either `None` or a
//! [`SystemFrame`](crate::report::stream_json::frame::SystemFrame) variant (reusing the
//! fields type from [`system`] when the keys are the same); and the event in the test fixtures,
//! whose snapshots then pin the new bytes. `serde_json::Value` appears only where the content is
//! open: tool inputs and results, structured output, the spec.

use std::borrow::Cow;

/// The version of the event contracts (stream-json frames, transcript records, the result
/// message, `result.json`, the step outputs), semver: a field or record added is a minor
/// version, a field removed or its meaning changed a major one, a fix to the schema's words a
/// patch. Written as `schema_version` in the `system/init` frame, the `runner_init` and
/// `runner_resume` records and `result.json`; each published schema under `schema/` records
/// the version it describes ([`crate::event_schema`]).
pub const SCHEMA_VERSION: &str = "1.0.0";

pub(crate) mod lossy;
pub(crate) mod message;
pub(crate) mod result;
pub(crate) mod system;

#[cfg(test)]
pub(crate) mod fixtures;

/// `uuid`, or a fresh one from `new_uuid` when the event carries none (each output then draws
/// its own: there is no uuid they could agree on).
pub(crate) fn uuid_or<'a>(uuid: &'a str, new_uuid: &mut dyn FnMut() -> String) -> Cow<'a, str> {
    if uuid.is_empty() {
        Cow::Owned(new_uuid())
    } else {
        Cow::Borrowed(uuid)
    }
}
