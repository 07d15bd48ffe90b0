//! `--system-prompt-file FILE` and `--append-system-prompt-file FILE`: the text of
//! `--system-prompt` / `--append-system-prompt` read from a file, as Claude Code takes it.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest system prompt file read (1 MiB): a larger one is refused, not cut.
pub const MAX_PROMPT_FILE: usize = 1 << 20;

/// Why a system prompt file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PromptFileError {
    /// The file could not be opened or read.
    #[error("cannot read the system prompt file {}: {source}", path.display())]
    Io {
        /// The file named on the command line.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// More than [`MAX_PROMPT_FILE`] bytes.
    #[error("the system prompt file {} is larger than {MAX_PROMPT_FILE} bytes", path.display())]
    TooLarge {
        /// The file named on the command line.
        path: PathBuf,
    },
    /// Not UTF-8 text.
    #[error("the system prompt file {} is not UTF-8 text", path.display())]
    NotText {
        /// The file named on the command line.
        path: PathBuf,
    },
    /// Blank: an empty file is more likely a mistake than a wish for no instructions.
    #[error("the system prompt file {} is empty", path.display())]
    Empty {
        /// The file named on the command line.
        path: PathBuf,
    },
}

/// Set `text` to the contents of `file` (trailing newlines dropped) when a file is named;
/// clap already refuses a file given together with the text flag.
pub fn resolve(text: &mut Option<String>, file: Option<&Path>) -> Result<(), PromptFileError> {
    if let Some(path) = file {
        *text = Some(read(path)?);
    }
    Ok(())
}

/// The text of `path`: at most [`MAX_PROMPT_FILE`] bytes of UTF-8, not blank.
pub fn read(path: &Path) -> Result<String, PromptFileError> {
    let io = |source| PromptFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_PROMPT_FILE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_PROMPT_FILE {
        return Err(PromptFileError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let text = String::from_utf8(bytes).map_err(|_| PromptFileError::NotText {
        path: path.to_path_buf(),
    })?;
    if text.trim().is_empty() {
        return Err(PromptFileError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(text.trim_end_matches(['\n', '\r']).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_file_and_refuses_what_cannot_be_a_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("system.md");
        std::fs::write(&f, "You review diffs.\n\n").unwrap();
        let mut text = Some("kept unless a file is named".to_string());
        resolve(&mut text, None).unwrap();
        assert_eq!(text.as_deref(), Some("kept unless a file is named"));
        resolve(&mut text, Some(&f)).unwrap();
        assert_eq!(text.as_deref(), Some("You review diffs."));

        std::fs::write(&f, " \n").unwrap();
        assert!(matches!(read(&f), Err(PromptFileError::Empty { .. })));
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(matches!(read(&f), Err(PromptFileError::NotText { .. })));
        std::fs::write(&f, vec![b'a'; MAX_PROMPT_FILE + 1]).unwrap();
        assert!(matches!(read(&f), Err(PromptFileError::TooLarge { .. })));
        let missing = read(&dir.path().join("missing.md")).unwrap_err();
        assert!(missing.to_string().contains("missing.md"), "{missing}");
    }
}
