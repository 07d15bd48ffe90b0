//! `-p -` (and a bare `-p`): the prompt is read from stdin, the way `cat prompt.md | claude -p`
//! and `codex exec -` take it.

use std::io::{IsTerminal, Read};

/// The `-p` value that stands for "read the prompt from stdin".
pub const STDIN_PROMPT: &str = "-";

/// The largest prompt read from stdin (1 MiB): a larger one is refused, not cut.
pub const MAX_STDIN_PROMPT: usize = 1 << 20;

/// Why no prompt could be read from stdin.
#[derive(Debug, thiserror::Error)]
pub enum StdinPromptError {
    /// stdin is a terminal: nothing was piped in.
    #[error(
        "-p - reads the prompt from stdin, but stdin is a terminal; pipe the prompt in (`echo \"Fix the tests\" | runner -p -`) or give it as -p \"TEXT\""
    )]
    Terminal,
    /// stdin ended without any text.
    #[error(
        "-p - reads the prompt from stdin, but stdin was empty; pipe the prompt in or give it as -p \"TEXT\""
    )]
    Empty,
    /// More than [`MAX_STDIN_PROMPT`] bytes.
    #[error(
        "the prompt on stdin is larger than {} bytes; put it in a spec's prompt_file instead",
        MAX_STDIN_PROMPT
    )]
    TooLarge,
    /// Not UTF-8 text.
    #[error("the prompt on stdin is not UTF-8 text")]
    NotText,
    /// Reading failed.
    #[error("cannot read the prompt from stdin: {0}")]
    Io(#[from] std::io::Error),
}

/// Replace a `-` prompt with the text on stdin (trailing newlines dropped); any other prompt
/// is kept as given.
pub fn resolve(prompt: &mut Option<String>) -> Result<(), StdinPromptError> {
    if prompt.as_deref() != Some(STDIN_PROMPT) {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(StdinPromptError::Terminal);
    }
    *prompt = Some(read_prompt(stdin.lock())?);
    Ok(())
}

/// The prompt text in `input`: at most [`MAX_STDIN_PROMPT`] bytes of UTF-8, not blank.
pub fn read_prompt(input: impl Read) -> Result<String, StdinPromptError> {
    let mut bytes = Vec::new();
    input
        .take(MAX_STDIN_PROMPT as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > MAX_STDIN_PROMPT {
        return Err(StdinPromptError::TooLarge);
    }
    let text = String::from_utf8(bytes).map_err(|_| StdinPromptError::NotText)?;
    if text.trim().is_empty() {
        return Err(StdinPromptError::Empty);
    }
    Ok(text.trim_end_matches(['\n', '\r']).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_limits_and_refuses_blank() {
        assert_eq!(read_prompt(&b"Say hello.\n"[..]).unwrap(), "Say hello.");
        assert!(matches!(
            read_prompt(&b" \n"[..]),
            Err(StdinPromptError::Empty)
        ));
        let big = vec![b'a'; MAX_STDIN_PROMPT + 1];
        assert!(matches!(
            read_prompt(&big[..]),
            Err(StdinPromptError::TooLarge)
        ));
        let max = vec![b'a'; MAX_STDIN_PROMPT];
        assert_eq!(read_prompt(&max[..]).unwrap().len(), MAX_STDIN_PROMPT);
        assert!(matches!(
            read_prompt(&[0xff, 0xfe][..]),
            Err(StdinPromptError::NotText)
        ));
    }
}
