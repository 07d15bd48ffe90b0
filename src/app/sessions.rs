//! Finding an earlier run under the transcript directory: the newest one (`--continue`) or the
//! one with a session id (`runner resume SESSION_ID`, also a unique prefix). Runs live in
//! `DIR/NAME-TIMESTAMP-ID8/transcript.jsonl`, `ID8` the session id's first eight characters.

use std::path::{Path, PathBuf};

/// The transcript file name in a run's directory.
const TRANSCRIPT: &str = "transcript.jsonl";

/// Why no single run was found.
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionLookupError {
    /// No run in the directory.
    #[error(
        "no run to continue under {0} (runs write DIR/NAME-TIME-ID/transcript.jsonl; --transcript-dir names DIR)"
    )]
    NoRuns(String),
    /// No run with this id.
    #[error("`{id}` is neither a transcript file nor the session id of a run under {dir}")]
    NotFound {
        /// What was asked for.
        id: String,
        /// Where runs were looked for.
        dir: String,
    },
    /// Several runs share the prefix.
    #[error("session id prefix `{id}` matches {} runs: {}; give more of the id", .matches.len(), .matches.join(", "))]
    Ambiguous {
        /// What was asked for.
        id: String,
        /// The matching run directories.
        matches: Vec<String>,
    },
}

/// Every run's directory and transcript under `dir` (none when `dir` does not exist).
fn runs(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|d| {
            let t = d.join(TRANSCRIPT);
            t.is_file().then_some((d, t))
        })
        .collect()
}

/// The transcript of the newest run under `dir` (by the transcript's modification time).
pub(super) fn newest(dir: &Path) -> Result<PathBuf, SessionLookupError> {
    runs(dir)
        .into_iter()
        .filter_map(|(_, t)| {
            let m = std::fs::metadata(&t).and_then(|m| m.modified()).ok()?;
            Some((m, t))
        })
        .max_by_key(|(m, _)| *m)
        .map(|(_, t)| t)
        .ok_or_else(|| SessionLookupError::NoRuns(dir.display().to_string()))
}

/// Whether `s` looks like a session id or a prefix of one (hex digits and dashes).
pub(super) fn looks_like_session_id(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// The transcript of the run under `dir` whose session id is `id` or starts with it.
pub(super) fn by_session_id(dir: &Path, id: &str) -> Result<PathBuf, SessionLookupError> {
    let id = id.to_ascii_lowercase();
    let matches: Vec<(PathBuf, PathBuf)> = runs(dir)
        .into_iter()
        .filter(|(d, _)| {
            let name = d.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let Some((_, short)) = name.rsplit_once('-') else {
                return false;
            };
            if id.len() <= short.len() {
                short.starts_with(&id)
            } else {
                id.starts_with(short)
            }
        })
        .collect();
    match matches.len() {
        0 => Err(SessionLookupError::NotFound {
            id,
            dir: dir.display().to_string(),
        }),
        1 => Ok(matches
            .into_iter()
            .map(|(_, t)| t)
            .next()
            .unwrap_or_default()),
        _ => Err(SessionLookupError::Ambiguous {
            id,
            matches: matches
                .iter()
                .map(|(d, _)| d.display().to_string())
                .collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_by_prefix_and_refuses_ambiguity() {
        let dir = tempfile::tempdir().unwrap();
        for run in [
            "fix-20260101T000000-949c53ce",
            "fix-20260101T000001-949d0000",
        ] {
            let d = dir.path().join(run);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join(TRANSCRIPT), "").unwrap();
        }
        let t = by_session_id(dir.path(), "949c").unwrap();
        assert!(t.starts_with(dir.path().join("fix-20260101T000000-949c53ce")));
        let full = by_session_id(dir.path(), "949c53ce-1111-2222-3333-444455556666").unwrap();
        assert_eq!(t, full);
        assert!(matches!(
            by_session_id(dir.path(), "949"),
            Err(SessionLookupError::Ambiguous { .. })
        ));
        assert!(matches!(
            by_session_id(dir.path(), "abc"),
            Err(SessionLookupError::NotFound { .. })
        ));
        assert!(newest(dir.path()).is_ok());
        assert!(newest(&dir.path().join("none")).is_err());
        assert!(looks_like_session_id("949c53ce") && !looks_like_session_id("t.jsonl"));
    }
}
