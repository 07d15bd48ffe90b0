//! Transcript records: Claude Code's on-disk record shape, as typed values.
//!
//! Every line of a transcript is one [`Record`]: the common fields ([`Head`]: `parentUuid`,
//! `isSidechain`, `userType`, `entrypoint`, `cwd`, `sessionId`, `version`, `gitBranch`), then
//! `type` and the fields of that type ([`RecordBody`]), then `uuid` and `timestamp`.
//!
//! - `user` records ([`UserRecord`]) and `assistant` records ([`AssistantRecord`], one per
//!   content block) form the conversation: each links to the one before by `parentUuid`.
//! - `system` records ([`SystemRecord`], tagged by `subtype`) are runner's own (`runner_*`) and
//!   Claude Code's compact boundary. Those that are not part of the conversation (attempt
//!   abandoned, denial, checks, worktree, network, instructions, model fallback, timing,
//!   result, resume) have a null `parentUuid` and point at
//!   the conversation's last record with `logicalParentUuid` ([`OffChain`]), like Claude Code's
//!   compact boundary.
//!
//! [`RecordBuilder`] turns run events into records; the
//! [`TranscriptSink`](crate::transcript::TranscriptSink) writes them, redacted, one per line.
//! [`reader`](crate::transcript::reader) reads them back to resume, as JSON values
//! ([`reader::Record`](crate::transcript::reader::Record)), since it reads Claude Code's own
//! transcripts too; it finds runner's records by the `SUBTYPE_*` names.
//! The message parts shared with stream-json live in [`crate::contract`].

mod builder;
mod shape;
mod system;

pub use builder::{RecordBuilder, now_timestamp};
pub(crate) use shape::ENTRYPOINT;
pub use shape::{
    AssistantRecord, Head, Record, RecordBody, SUBTYPE_API_RETRY, SUBTYPE_ATTEMPT_ABANDONED,
    SUBTYPE_CHECKS, SUBTYPE_COMPACT_BOUNDARY, SUBTYPE_INIT, SUBTYPE_INSTRUCTIONS,
    SUBTYPE_INTEGRITY, SUBTYPE_MODEL_FALLBACK, SUBTYPE_NETWORK, SUBTYPE_PERMISSION_DENIED,
    SUBTYPE_RESULT, SUBTYPE_RESUME, SUBTYPE_TIMING, SUBTYPE_TOOL_STARTED, SUBTYPE_WORKTREE,
    UserRecord,
};
pub use system::{
    AbandonedFields, ApiRetryFields, CompactBoundaryRecord, CompactMetadata, DenialFields,
    InitFields, InitRecord, Level, OffChain, ResultFields, ResumeRecord, SystemRecord,
    ToolStartedFields, WorktreeFields,
};

#[cfg(test)]
mod tests;
