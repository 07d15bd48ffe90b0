//! JSONL transcripts in Claude Code's on-disk record shape. (Implemented by the transcript work.)
