//! A task's output directory under `--transcript-dir` and its transcript file.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Local};

/// `name` as one file name component: characters other than letters, digits, `-`, `_`, `.`,
/// `=`, `,`, `[` and `]` become `_` (a `matrix:` parameter may hold `/`).
pub(super) fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=' | ',' | '[' | ']') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.chars().all(|c| c == '.') {
        s.replace('.', "_")
    } else {
        s
    }
}

/// Make sure the output directory exists and git ignores it.
fn prepare_output_root(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let gi = dir.join(".gitignore");
    if !gi.exists() {
        std::fs::write(gi, "*\n")?;
    }
    Ok(())
}

/// Where one task run writes: its output directory and its transcript.
pub(crate) struct RunPaths {
    /// The task's output directory (canonical).
    pub(crate) dir: PathBuf,
    /// Its transcript.
    pub(crate) transcript: PathBuf,
}

/// A run's own outputs that cannot be made: the task does not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutputError {
    /// The run's output directory.
    #[error("cannot create the output directory {}: {source}", dir.display())]
    Dir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The run's transcript.
    #[error("cannot create the transcript {}: {source}", path.display())]
    Transcript {
        /// The transcript's path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Create the output directory of a run: `TRANSCRIPT_DIR/NAME-TIME-SESSION8/` for a new run;
/// a resumed run appends to its transcript and keeps its directory.
pub(crate) fn create_run_dir(
    transcript_dir: &Path,
    name: &str,
    session_id: &str,
    now: &DateTime<Local>,
    resumed_transcript: Option<&Path>,
) -> Result<RunPaths, OutputError> {
    let dir = match resumed_transcript.and_then(Path::parent) {
        Some(dir) => dir.to_path_buf(),
        None => transcript_dir.join(format!(
            "{}-{}-{}",
            file_safe(name),
            now.format("%Y%m%dT%H%M%S"),
            session_id.get(..8).unwrap_or(session_id)
        )),
    };
    let made = if resumed_transcript.is_some() {
        std::fs::create_dir_all(&dir)
    } else {
        prepare_output_root(transcript_dir).and_then(|_| std::fs::create_dir_all(&dir))
    };
    if let Err(source) = made {
        return Err(OutputError::Dir { dir, source });
    }
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let transcript = match resumed_transcript {
        Some(t) => t.to_path_buf(),
        None => dir.join("transcript.jsonl"),
    };
    Ok(RunPaths { dir, transcript })
}
