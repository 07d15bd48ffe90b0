//! The integrity check's errors.

use std::path::{Path, PathBuf};

/// Why the watched files could not be fingerprinted or restored.
#[derive(Debug, thiserror::Error)]
pub enum IntegrityError {
    /// A file system call failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// More to keep than any repository's hooks and configuration hold.
    #[error("the integrity check does not keep this much: {0}")]
    TooLarge(String),
    /// A change could not be undone.
    #[error("{0}")]
    Restore(String),
}

impl IntegrityError {
    pub(super) fn io(path: &Path, source: std::io::Error) -> IntegrityError {
        IntegrityError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
