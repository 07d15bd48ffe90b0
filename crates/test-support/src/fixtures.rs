//! The recorded fixtures under the workspace's `tests/fixtures/` (SSE streams, error bodies, transcripts) and
//! a way to feed bytes to a stream parser in pieces.

use std::convert::Infallible;
use std::path::PathBuf;

use bytes::Bytes;

/// `tests/fixtures/REL` of the workspace.
pub fn fixture_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

/// The bytes of `tests/fixtures/REL`.
pub fn fixture_bytes(rel: &str) -> Vec<u8> {
    let p = fixture_path(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// The text of `tests/fixtures/REL`.
pub fn fixture_text(rel: &str) -> String {
    String::from_utf8(fixture_bytes(rel)).unwrap_or_else(|e| panic!("{rel} is not UTF-8: {e}"))
}

/// `bytes` as the items of a body stream, `size` bytes each (0: all in one).
pub fn byte_chunks(bytes: &[u8], size: usize) -> Vec<Result<Bytes, Infallible>> {
    if size == 0 {
        return vec![Ok(Bytes::copy_from_slice(bytes))];
    }
    bytes
        .chunks(size)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect()
}
